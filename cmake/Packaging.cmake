# What `cmake --install` and the Debian packages (scripts/package.sh) ship:
# the CMake package of the host side, and CPack's DEB generator with two
# components: host (package ompdpu) and server (package ompdpu-server).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(NOT OMPDPU_SERVER_ONLY)
  # Installed: <prefix>/lib/cmake/ompdpu, relocatable (paths relative to it).
  set(_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/ompdpu)
  install(EXPORT ompdpuTargets NAMESPACE ompdpu:: DESTINATION ${_cmakedir}
          COMPONENT host)
  configure_package_config_file(cmake/ompdpuConfig.cmake.in
    ${CMAKE_BINARY_DIR}/cmake/install/ompdpuConfig.cmake
    INSTALL_DESTINATION ${_cmakedir} PATH_VARS CMAKE_INSTALL_BINDIR)
  write_basic_package_version_file(
    ${CMAKE_BINARY_DIR}/cmake/ompdpuConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES ${CMAKE_BINARY_DIR}/cmake/install/ompdpuConfig.cmake
                ${CMAKE_BINARY_DIR}/cmake/ompdpuConfigVersion.cmake
                cmake/ompdpuDeviceImages.cmake
          DESTINATION ${_cmakedir} COMPONENT host)
  # The build tree as a package too (-Dompdpu_DIR=<build>/cmake or
  # CMAKE_PREFIX_PATH=<build>): the same config, its prefix the build tree
  # (bin/ompdpu-cc, include/, lib/ are laid out there as installed), and
  # targets exported with their build-tree paths.
  export(EXPORT ompdpuTargets NAMESPACE ompdpu::
         FILE ${CMAKE_BINARY_DIR}/cmake/ompdpuTargets.cmake)
  configure_package_config_file(cmake/ompdpuConfig.cmake.in
    ${CMAKE_BINARY_DIR}/cmake/ompdpuConfig.cmake
    INSTALL_DESTINATION cmake INSTALL_PREFIX ${CMAKE_BINARY_DIR}
    PATH_VARS CMAKE_INSTALL_BINDIR)
  configure_file(cmake/ompdpuDeviceImages.cmake
                 ${CMAKE_BINARY_DIR}/cmake/ompdpuDeviceImages.cmake COPYONLY)
endif()

# Debian's files every package carries: copyright and changelog.
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/packaging)
execute_process(COMMAND gzip -9nc ${CMAKE_SOURCE_DIR}/packaging/changelog
                OUTPUT_FILE ${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz)
foreach(comp host server)
  set(_pkg ompdpu)
  if(comp STREQUAL server)
    set(_pkg ompdpu-server)
  endif()
  install(FILES packaging/copyright
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_pkg} COMPONENT ${comp})
  install(FILES ${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${_pkg} COMPONENT ${comp})
  install(FILES packaging/${comp}/lintian-overrides RENAME ${_pkg}
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides
          COMPONENT ${comp})
endforeach()
include(packaging/CPackConfig.cmake)
