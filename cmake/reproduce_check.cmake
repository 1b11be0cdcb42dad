# The reproduce line a failing run prints works as printed: run it through a shell, from the same
# folder, and it fails the same way with the same trace hash.
#   cmake -DLIC=<letitcrash> -DFILE=<scenario> -DSEED=N -P reproduce_check.cmake
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND "${LIC}" run "${FILE}" --seed "${SEED}" RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc STREQUAL "1")
  message(FATAL_ERROR "expected the run to fail (exit 1), got ${rc}\n${out}")
endif()
if(NOT out MATCHES "reproduce: ([^\n]+)\n")
  message(FATAL_ERROR "no reproduce line in:\n${out}")
endif()
set(line "${CMAKE_MATCH_1}")
string(REGEX MATCH "trace_hash [0-9a-f]+" hash "${out}")
execute_process(COMMAND sh -c "${line}" RESULT_VARIABLE rc2 OUTPUT_VARIABLE out2)
string(REGEX MATCH "trace_hash [0-9a-f]+" hash2 "${out2}")
if(NOT rc2 STREQUAL "1" OR NOT hash STREQUAL hash2 OR hash STREQUAL "")
  message(FATAL_ERROR "the reproduce line `${line}` exited ${rc2} with '${hash2}' (the run: 1 with '${hash}')\n${out2}")
endif()
message(STATUS "`${line}` reproduces the run: exit 1, ${hash}")
