# `letitcrash shrink` end to end: it exits EXPECT (0: it wrote the shrunk file; 1: the seed
# passes, and no file may be written). A written file must start with its comment header and be
# caught the way a file of scenarios/bugs/ is (bug_check.cmake: `letitcrash run` exits 1 and the
# check its `expect: {fail: [...]}` names fails).
#   cmake -DLIC=<letitcrash> -DFILE=<scenario> -DDIR=<fresh folder> -DEXPECT=0|1 [-DARGS="--max-runs;100"] -P shrink_check.cmake
# Without --out in ARGS the file is <stem>.shrunk.yaml in DIR, the command's working directory.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
get_filename_component(stem "${FILE}" NAME_WE)
set(out "${DIR}/${stem}.shrunk.yaml")
execute_process(COMMAND "${LIC}" shrink "${FILE}" ${ARGS} WORKING_DIRECTORY "${DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT rc STREQUAL "${EXPECT}")
  message(FATAL_ERROR "letitcrash shrink exited ${rc}, not ${EXPECT}\n${stdout}\n${stderr}")
endif()
file(GLOB written "${DIR}/*")
if(EXPECT STREQUAL "1")
  if(written)
    message(FATAL_ERROR "a seed that passes wrote ${written}")
  endif()
  if(NOT stdout MATCHES "passes every check.*no file written")
    message(FATAL_ERROR "no plain message that the seed passes:\n${stdout}")
  endif()
  return()
endif()
if(NOT EXISTS "${out}")
  message(FATAL_ERROR "no ${out} (written: ${written})\n${stdout}")
endif()
if(NOT stdout MATCHES "before +after.*faults.*events.*virtual time.*wrote: .*reproduce: [^ ]* run ")
  message(FATAL_ERROR "the output lacks the sizes or the reproduce line:\n${stdout}")
endif()
file(READ "${out}" text)
if(NOT text MATCHES "^# Shrunk by `letitcrash shrink` from [^\n]*, seed [0-9]+.*\n# It fails .*# Reproduce: ")
  message(FATAL_ERROR "${out} lacks its comment header:\n${text}")
endif()
message(STATUS "${stdout}")
set(FILE "${out}")
include(${CMAKE_CURRENT_LIST_DIR}/bug_check.cmake)
