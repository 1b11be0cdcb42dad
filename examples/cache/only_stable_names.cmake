# Fails when a source of the example names a stage namespace of letitcrash (lic::scenarios::,
# lic::reports::, lic::supervision::, lic::properties::, lic::faults::): what a user's project
# needs is in lic:: (docs/library.md, "What is kept stable").
#   cmake -DDIR=<examples/cache> -P only_stable_names.cmake
file(GLOB_RECURSE sources ${DIR}/*.cpp ${DIR}/*.hpp)
set(found "")
foreach(f IN LISTS sources)
  file(STRINGS ${f} lines REGEX "lic::(scenarios|reports|supervision|properties|faults)::")
  foreach(l IN LISTS lines)
    string(APPEND found "\n  ${f}: ${l}")
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "the example reaches past the stable names:${found}")
endif()
list(LENGTH sources n)
message(STATUS "${n} sources, each using only lic:: names")
