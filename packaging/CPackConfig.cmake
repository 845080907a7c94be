# CPack's DEB generator: one package per install component (host: ompdpu,
# server: ompdpu-server), Depends from dpkg-shlibdeps. Used by
# scripts/package.sh; included from cmake/Packaging.cmake.
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_PACKAGE_NAME ompdpu)
set(CPACK_PACKAGE_VENDOR ompdpu)
set(CPACK_PACKAGE_CONTACT "ompdpu developers <ompdpu@example.org>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE https://github.com/ompdpu/ompdpu)

set(CPACK_DEBIAN_HOST_PACKAGE_NAME ompdpu)
set(CPACK_DEBIAN_HOST_PACKAGE_SECTION devel)
set(CPACK_COMPONENT_HOST_DESCRIPTION "OpenMP offloading to NVIDIA BlueField DPUs (host side)
A plugin for the stock libomptarget of LLVM 14 to 18 that runs OpenMP target
regions on the Arm cores of BlueField DPUs, over UCX, in ompdpu-server.

This package has the plugin under the names each libomptarget loads,
libompdpu and its header, the ompdpu command (run programs against DPUs or
emulated DPUs), the compiler wrappers ompdpu-cc and ompdpu-c++, and the CMake
package (find_package(ompdpu)).")
# Compiling offload programs: clang, its offload tools (clang-offload-bundler,
# llvm-objcopy) and libomp; aarch64 device images also need lld and Debian's arm64 libc.
string(CONCAT CPACK_DEBIAN_HOST_PACKAGE_RECOMMENDS
       "clang-14, clang-tools-14, llvm-14, libomp-14-dev, lld-14, "
       "libc6-dev-arm64-cross, libgcc-12-dev-arm64-cross")

set(CPACK_DEBIAN_SERVER_PACKAGE_NAME ompdpu-server)
set(CPACK_DEBIAN_SERVER_PACKAGE_SECTION net)
set(CPACK_COMPONENT_SERVER_DESCRIPTION "OpenMP offloading to NVIDIA BlueField DPUs (DPU side)
The server that runs OpenMP target regions sent by hosts' programs (through
the ompdpu plugin of libomptarget) on the Arm cores of a BlueField DPU, each
client in its own confined session process.

This package has ompdpu-server, its systemd unit and its configuration file
/etc/ompdpu/server.conf.")
# postinst: the --root-user account (adduser).
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_LIST_DIR}/server/conffiles
    ${CMAKE_CURRENT_LIST_DIR}/server/postinst)
# libompdpu: a shlibs file, and ldconfig run by a trigger.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_HOST_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/host/triggers)

if(CMAKE_SYSTEM_PROCESSOR STREQUAL aarch64)
  # A cross build: dpkg-shlibdeps cannot see arm64 packages; scripts/package.sh
  # passes the Depends it derived (OMPDPU_SERVER_DEPENDS).
  set(CPACK_COMPONENTS_ALL server)
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "${OMPDPU_SERVER_DEPENDS}, adduser")
else()
  set(CPACK_COMPONENTS_ALL host server)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON) # merged with what is set here
  set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS adduser)
endif()
include(CPack)
