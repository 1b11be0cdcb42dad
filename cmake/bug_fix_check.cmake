# A known bug's fix (docs/scenario-format.md, "Known bugs and their fixes"), on fixed seeds:
#  1. the file declares a `fix:` and, with it applied, passes every seed of 1..200;
#  2. the file shrunk at its own seed (`letitcrash shrink`) still fails, and with the same fix no
#     longer fails that way (the same check, kind and roles): the shrink kept the bug, not a
#     neighbour of it. Most pass outright; a shrunk file may fail otherwise with the fix when the
#     shrink removed what only the fixed system uses (a DLQ's disk), which is said. A shrunk file
#     that still fails the same way with the fix is a slip, and this fails, naming the seed.
#   cmake -DLIC=<letitcrash> -DFILE=scenarios/bugs/x.yaml -DDIR=<fresh folder> -P bug_fix_check.cmake
cmake_minimum_required(VERSION 3.25)
file(READ "${FILE}" text)
if(NOT text MATCHES "\nfix: ")
  message(FATAL_ERROR "${FILE}: no `fix:` line: every file of scenarios/bugs/ declares the change that fixes its bug")
endif()
if(NOT text MATCHES "\nseed: ([0-9]+)")
  message(FATAL_ERROR "${FILE}: no `seed:` line")
endif()
set(seed ${CMAKE_MATCH_1})
execute_process(COMMAND "${LIC}" sweep "${FILE}" --fixed --seeds 1..200 --jobs 2 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "0")
  string(REGEX MATCH "reproduce: [^\n]*" first "${out}")
  message(FATAL_ERROR "${FILE}: its fix does not pass seeds 1..200 (sweep --fixed exited ${rc}); ${first}\n${out}\n${err}")
endif()
message(STATUS "${FILE}: the fix passes seeds 1..200")
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
set(shrunk "${DIR}/shrunk.yaml")
execute_process(COMMAND "${LIC}" shrink "${FILE}" --out "${shrunk}" --max-runs 300 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "${FILE}: shrink at seed ${seed} exited ${rc}\n${out}\n${err}")
endif()
# The shrunk file keeps one check: its identity (name, kind, roles) without and with the fix.
function(identity json out)
  string(JSON n LENGTH "${json}" checks)
  set(id "")
  if(n GREATER 0)
    string(JSON passed GET "${json}" checks 0 passed)
    if(NOT passed)
      string(JSON name GET "${json}" checks 0 name)
      string(JSON kind GET "${json}" checks 0 kind)
      string(JSON roles GET "${json}" checks 0 roles)
      string(REGEX REPLACE "[ \n]" "" roles "${roles}")
      set(id "${name}: ${kind} ${roles}")
    endif()
  endif()
  set(${out} "${id}" PARENT_SCOPE)
endfunction()
execute_process(COMMAND "${LIC}" run "${shrunk}" --format json RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "1")
  message(FATAL_ERROR "${FILE}: the file shrunk at seed ${seed} does not fail (run exited ${rc})\n${out}\n${err}")
endif()
identity("${out}" bug)
execute_process(COMMAND "${LIC}" run "${shrunk}" --fixed --format json RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc STREQUAL "0")
  message(STATUS "${FILE}: shrunk at seed ${seed}, it still fails (${bug}), and passes with its fix: no slip")
  return()
endif()
if(NOT rc STREQUAL "1")
  message(FATAL_ERROR "${FILE}: run --fixed of the shrunk file exited ${rc}\n${out}\n${err}")
endif()
identity("${out}" fixed)
if(fixed STREQUAL bug)
  file(READ "${shrunk}" shrunk_text)
  message(FATAL_ERROR "${FILE}: SLIP at seed ${seed}: the shrunk file still fails the same way with the fix applied (${bug}): "
                      "the shrink kept another failure than the bug\n${out}\n${err}\n${shrunk_text}")
endif()
# With the fix, the bug's failure is gone; what fails now is something the shrink took away that
# only the fixed system uses (the DLQ's disk, say), which is not the bug.
message(STATUS "${FILE}: shrunk at seed ${seed}, it still fails (${bug}); with its fix that failure is gone "
               "(it now fails ${fixed}: the shrink removed what only the fixed system uses): no slip")
