# Installing letitcrash as a package a user's own project finds (docs/library.md):
#   cmake --install build --prefix P
# puts the headers under P/include/letitcrash (with letitcrash.hpp and testing.hpp at its top),
# the static libraries under P/lib, the `letitcrash` executable under P/bin, and
# P/lib/cmake/letitcrash/letitcrashConfig.cmake (+ version file), so that
#   find_package(letitcrash 0.3 REQUIRED)            gives letitcrash::letitcrash
#   find_package(letitcrash 0.3 REQUIRED COMPONENTS testing)   also letitcrash::testing
# Included from the top-level CMakeLists.txt after every folder; no option is needed.

include(CMakePackageConfigHelpers)

set(LIC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/letitcrash)

# The headers a user's code can reach, in their folders (includes are written "sim/time.hpp").
# Test-only headers (Catch2, RapidCheck) and the kernel's private one stay out.
foreach(dir sim supervision properties reports scenarios)
  file(GLOB_RECURSE headers RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.hpp)
  foreach(h IN LISTS headers)
    if(h MATCHES "(test_support|rc_prop|model_gen|kernel|metrics_json)\\.hpp$" OR h MATCHES "^scenarios/testing/")
      continue()
    endif()
    get_filename_component(sub ${h} DIRECTORY)
    install(FILES ${h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/letitcrash/${sub})
  endforeach()
endforeach()
install(FILES tools/letitcrash/cli.hpp tools/letitcrash/letitcrash.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/letitcrash/tools/letitcrash)
# The entry points, as users include them: <letitcrash/letitcrash.hpp>, <letitcrash/testing.hpp>.
install(FILES tools/letitcrash/letitcrash.hpp tools/letitcrash/testing.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/letitcrash)

install(TARGETS lic_sim lic_supervision lic_properties lic_reports lic_scenarios lic_bench lic_cli lic_all
        EXPORT letitcrashTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT letitcrashTargets NAMESPACE letitcrash:: DESTINATION ${LIC_CMAKE_DIR})
if(TARGET lic_testing)
  install(TARGETS lic_testing EXPORT letitcrashTestingTargets)
  install(EXPORT letitcrashTestingTargets NAMESPACE letitcrash:: DESTINATION ${LIC_CMAKE_DIR})
endif()

install(TARGETS letitcrash RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET letitcrash-simgrid-peer)
  install(TARGETS letitcrash-simgrid-peer RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/letitcrashConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/letitcrashConfig.cmake INSTALL_DESTINATION ${LIC_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/letitcrashConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/letitcrashConfig.cmake ${PROJECT_BINARY_DIR}/letitcrashConfigVersion.cmake
        DESTINATION ${LIC_CMAKE_DIR})
