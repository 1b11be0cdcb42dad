# Warnings in one place, strict; -Werror in CI (LETITCRASH_WERROR=ON).
add_library(lic_warnings INTERFACE)
target_compile_options(lic_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                              -Wold-style-cast -Wcast-align -Woverloaded-virtual)
if(LETITCRASH_WERROR)
  target_compile_options(lic_warnings INTERFACE -Werror)
endif()
if(LETITCRASH_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "LETITCRASH_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  # Every library is instrumented for the fuzzer's coverage; only the fuzz executables link
  # libFuzzer's main (tools/fuzz/). The sanitizers make a memory error a finding.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(LETITCRASH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC's own documentation: -Wmaybe-uninitialized is unreliable under sanitizers. With
    # -fsanitize=address, g++ 12 reports it inside libstdc++'s <regex> (used by lic-tidy).
    target_compile_options(lic_warnings INTERFACE -Wno-maybe-uninitialized)
    # g++ 12 also reports a false -Wrestrict in std::string's assignment of a short literal
    # (GCC bug 105651, fixed in 13) when the sanitizers change inlining.
    target_compile_options(lic_warnings INTERFACE -Wno-restrict)
  endif()
endif()
