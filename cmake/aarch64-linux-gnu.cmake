# CMake toolchain file: cross-build for the BlueField-2 DPU (aarch64 Linux) on an x86_64
# Debian 12 host with clang-14 + lld.
#
#   scripts/arm64-sysroot.sh                      # once: cross toolchain + private sysroot
#   cmake -S . -B build-arm64/server -G Ninja \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DOMPDPU_SERVER_ONLY=ON
#
# (scripts/cross-build-aarch64.sh does all of it.)
#
# Two sources of arm64 files:
#  - libc, libgcc, libstdc++ and the crt files come from Debian's cross packages
#    (gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu, libc6-dev-arm64-cross, under
#    /usr/aarch64-linux-gnu and /usr/lib/gcc-cross), which clang finds by itself from
#    --target=aarch64-linux-gnu --gcc-toolchain=/usr;
#  - UCX, libffi, libelf, zlib and libomp come from the private sysroot built by
#    scripts/arm64-sysroot.sh: OMPDPU_ARM64_SYSROOT (cache or environment variable),
#    default <repo>/build-arm64/sysroot. pkg-config is pointed at it below
#    (PKG_CONFIG_SYSROOT_DIR/PKG_CONFIG_LIBDIR, as in <sysroot>/pkgconfig.env), and
#    find_package(OpenMP) is given the arm64 libomp.so from it.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(OMPDPU_CROSS_TRIPLE aarch64-linux-gnu)

if(NOT OMPDPU_ARM64_SYSROOT)
  if(DEFINED ENV{OMPDPU_ARM64_SYSROOT} AND NOT "$ENV{OMPDPU_ARM64_SYSROOT}" STREQUAL "")
    set(OMPDPU_ARM64_SYSROOT "$ENV{OMPDPU_ARM64_SYSROOT}")
  else()
    get_filename_component(OMPDPU_ARM64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../build-arm64/sysroot" ABSOLUTE)
  endif()
endif()
set(OMPDPU_ARM64_SYSROOT "${OMPDPU_ARM64_SYSROOT}" CACHE PATH "Private arm64 sysroot (scripts/arm64-sysroot.sh)")
set(_ompdpu_libdir "${OMPDPU_ARM64_SYSROOT}/usr/lib/${OMPDPU_CROSS_TRIPLE}")
if(NOT EXISTS "${_ompdpu_libdir}/libomp.so")
  message(FATAL_ERROR "aarch64 toolchain: no arm64 sysroot at ${OMPDPU_ARM64_SYSROOT} "
                      "(missing ${_ompdpu_libdir}/libomp.so); run scripts/arm64-sysroot.sh first "
                      "or set OMPDPU_ARM64_SYSROOT.")
endif()
if(NOT EXISTS "/usr/lib/gcc-cross/${OMPDPU_CROSS_TRIPLE}")
  message(FATAL_ERROR "aarch64 toolchain: Debian cross packages missing "
                      "(apt-get install gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross, "
                      "or run scripts/arm64-sysroot.sh)")
endif()
# try_compile projects re-read this file: hand them the same sysroot.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES OMPDPU_ARM64_SYSROOT)

# ---- compilers ---------------------------------------------------------------------------
find_program(OMPDPU_CLANG   NAMES clang-14 clang REQUIRED)
find_program(OMPDPU_CLANGXX NAMES clang++-14 clang++ REQUIRED)
set(CMAKE_C_COMPILER   "${OMPDPU_CLANG}")
set(CMAKE_CXX_COMPILER "${OMPDPU_CLANGXX}")
set(CMAKE_C_COMPILER_TARGET   ${OMPDPU_CROSS_TRIPLE})
set(CMAKE_CXX_COMPILER_TARGET ${OMPDPU_CROSS_TRIPLE})
set(CMAKE_C_COMPILER_EXTERNAL_TOOLCHAIN   /usr)   # --gcc-toolchain=/usr: /usr/lib/gcc-cross
set(CMAKE_CXX_COMPILER_EXTERNAL_TOOLCHAIN /usr)
set(CMAKE_LIBRARY_ARCHITECTURE ${OMPDPU_CROSS_TRIPLE})
foreach(_tool AR RANLIB NM OBJCOPY OBJDUMP STRIP READELF)
  string(TOLOWER "${_tool}" _t)
  find_program(CMAKE_${_tool} NAMES llvm-${_t}-14 llvm-${_t} ${OMPDPU_CROSS_TRIPLE}-${_t})
endforeach()

# Headers of the sysroot go *after* the system (cross libc/libstdc++) directories, so
# nothing in it can shadow them; the triple directory holds e.g. ffi.h.
set(_ompdpu_inc "-idirafter ${OMPDPU_ARM64_SYSROOT}/usr/include/${OMPDPU_CROSS_TRIPLE} -idirafter ${OMPDPU_ARM64_SYSROOT}/usr/include")
set(CMAKE_C_FLAGS_INIT   "${_ompdpu_inc}")
set(CMAKE_CXX_FLAGS_INIT "${_ompdpu_inc}")
set(_ompdpu_ld "-fuse-ld=lld -L${_ompdpu_libdir} -Wl,-rpath-link,${_ompdpu_libdir}")
set(CMAKE_EXE_LINKER_FLAGS_INIT    "${_ompdpu_ld}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_ompdpu_ld}")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "${_ompdpu_ld}")

# ---- where find_* look ---------------------------------------------------------------------
set(CMAKE_FIND_ROOT_PATH "${OMPDPU_ARM64_SYSROOT};/usr/${OMPDPU_CROSS_TRIPLE}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # host tools (pkg-config, python, ...)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ---- pkg-config (UCX, libffi, libelf) --------------------------------------------------------
# The .pc files in the sysroot say prefix=/usr: PKG_CONFIG_SYSROOT_DIR re-roots their -I/-L,
# PKG_CONFIG_LIBDIR replaces (not extends) the search path so no host .pc file is seen.
# pkgconf drops "system" -I/-L paths (/usr/include, /usr/lib/...) before re-rooting them:
# its system-path lists are pointed elsewhere so nothing is dropped.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${OMPDPU_ARM64_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR} "${_ompdpu_libdir}/pkgconfig:${OMPDPU_ARM64_SYSROOT}/usr/lib/pkgconfig:${OMPDPU_ARM64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSTEM_INCLUDE_PATH} "/nonexistent-ompdpu")
set(ENV{PKG_CONFIG_SYSTEM_LIBRARY_PATH} "/nonexistent-ompdpu")
set(PKG_CONFIG_USE_CMAKE_PREFIX_PATH OFF)

# ---- find_package(OpenMP): clang's -fopenmp with the arm64 libomp of the sysroot ------------
foreach(_lang C CXX)
  set(OpenMP_${_lang}_FLAGS "-fopenmp=libomp" CACHE STRING "OpenMP flags (aarch64 cross)")
  set(OpenMP_${_lang}_LIB_NAMES "omp" CACHE STRING "OpenMP libraries (aarch64 cross)")
endforeach()
set(OpenMP_omp_LIBRARY "${_ompdpu_libdir}/libomp.so" CACHE FILEPATH "arm64 libomp (aarch64 cross)")
