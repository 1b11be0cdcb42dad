# `letitcrash explore` end to end (docs/explore.md):
#  - the same --seed makes the same search on --jobs 1 and --jobs 2: the two `--format json`
#    objects are equal but for cpu_s;
#  - with --out it exits 1 on the bug, writes explore.json, index.html, corpus/ and
#    reproducer.yaml, and prints the reproducer's `run` line; the reproducer, run as a user runs
#    it, is caught (bug_check.cmake) and fails with the identity explore.json names.
#   cmake -DLIC=<letitcrash> -DFILE=<bug file> -DDIR=<fresh folder> -P explore_check.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
foreach(jobs 1 2)
  execute_process(COMMAND "${LIC}" explore "${FILE}" --runs 60 --seed 3 --jobs ${jobs} --keep-going --shrink-runs 0 --format json
                  WORKING_DIRECTORY "${DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out${jobs} ERROR_VARIABLE err)
  if(NOT rc MATCHES "^[01]$")
    message(FATAL_ERROR "explore --jobs ${jobs} exited ${rc}\n${out${jobs}}\n${err}")
  endif()
  string(JSON runs${jobs} GET "${out${jobs}}" runs)
  string(REGEX REPLACE "\"cpu_s\": [0-9.e+-]+" "" out${jobs} "${out${jobs}}")
endforeach()
if(NOT out1 STREQUAL out2)
  message(FATAL_ERROR "explore --seed 3 differs on 1 and 2 jobs:\n--- jobs 1\n${out1}\n--- jobs 2\n${out2}")
endif()
message(STATUS "jobs 1 and 2: the same ${runs1} runs, the same corpus, coverage and failures")
execute_process(COMMAND "${LIC}" explore "${FILE}" --runs 500 --seed 1 --out "${DIR}/out"
                WORKING_DIRECTORY "${DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "1")
  message(FATAL_ERROR "explore exited ${rc}, not 1: the bug was not found\n${out}\n${err}")
endif()
if(NOT out MATCHES "FAIL at run [0-9]+: [^\n]*\n.*wrote: [^\n]*reproducer.yaml \\(run again: fails the same way\\)\nreproduce: [^ ]+ run [^\n]*reproducer.yaml")
  message(FATAL_ERROR "explore's output lacks the failure, the file or its run line:\n${out}")
endif()
foreach(f explore.json index.html reproducer.yaml corpus/0001.yaml)
  if(NOT EXISTS "${DIR}/out/${f}")
    message(FATAL_ERROR "explore --out wrote no ${f}")
  endif()
endforeach()
file(READ "${DIR}/out/explore.json" state)
string(JSON verified GET "${state}" failure reproducer_verified)
string(JSON kind GET "${state}" failure kind)
if(NOT verified)
  message(FATAL_ERROR "explore.json says the reproducer does not fail the same way:\n${state}")
endif()
# The reproducer, run on its own: the check and kind explore found.
execute_process(COMMAND "${LIC}" run "${DIR}/out/reproducer.yaml" --format json RESULT_VARIABLE rc OUTPUT_VARIABLE run_out ERROR_VARIABLE err)
if(NOT rc STREQUAL "1" OR NOT run_out MATCHES "\"kind\": \"${kind}\"")
  message(FATAL_ERROR "run reproducer.yaml exited ${rc} without kind ${kind}:\n${run_out}\n${err}")
endif()
message(STATUS "${out}")
set(FILE "${DIR}/out/reproducer.yaml")
include(${CMAKE_CURRENT_LIST_DIR}/bug_check.cmake)
