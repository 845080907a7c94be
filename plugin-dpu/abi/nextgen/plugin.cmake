# ompdpu's plugin inside libomptarget (LLVM 19 and later link plugins in):
# included by llvm-patches/libomptarget-<N>/plugins-nextgen/dpu/CMakeLists.txt
# in LLVM's offload/ tree, with OMPDPU_LLVM_MAJOR set to N and
# llvm-patches/build-libomptarget-<N>.sh passing OMPDPU_SOURCE_DIR (an ompdpu
# clone) and OMPDPU_BUILD_DIR (its build, for the device logic's static
# libraries). It compiles the generic part (dpu_nextgen.cpp), the version's
# file (llvm<N>.cpp) and what every adapter shares (abi/common).
if(NOT OMPDPU_SOURCE_DIR OR NOT OMPDPU_BUILD_DIR OR NOT OMPDPU_LLVM_MAJOR)
  message(FATAL_ERROR "the dpu plugin needs -DOMPDPU_SOURCE_DIR=<ompdpu clone>, "
                      "-DOMPDPU_BUILD_DIR=<its build> and OMPDPU_LLVM_MAJOR")
endif()
set(_abi ${OMPDPU_SOURCE_DIR}/plugin-dpu/abi)
if(NOT EXISTS ${_abi}/nextgen/llvm${OMPDPU_LLVM_MAJOR}.cpp)
  message(FATAL_ERROR "no ${_abi}/nextgen/llvm${OMPDPU_LLVM_MAJOR}.cpp: "
                      "ompdpu does not serve LLVM ${OMPDPU_LLVM_MAJOR} yet")
endif()
find_package(PkgConfig REQUIRED)
pkg_check_modules(OMPDPU_DEPS REQUIRED IMPORTED_TARGET ucx libelf libsodium)
find_library(OMPDPU_MUNGE_LIBRARY munge REQUIRED)

add_target_library(omptarget.rtl.dpu dpu)
target_sources(omptarget.rtl.dpu PRIVATE
  ${_abi}/nextgen/dpu_nextgen.cpp
  ${_abi}/nextgen/llvm${OMPDPU_LLVM_MAJOR}.cpp
  ${_abi}/common/queries.cpp)
target_include_directories(omptarget.rtl.dpu PRIVATE
  ${LIBOMPTARGET_INCLUDE_DIR}
  ${_abi}/nextgen
  ${_abi}/common
  ${OMPDPU_SOURCE_DIR}/plugin-dpu/src
  ${OMPDPU_SOURCE_DIR}/runtime)
# Static and built with -fPIC: libomptarget.so carries the device logic.
foreach(lib plugin_core client auth transport common)
  target_link_libraries(omptarget.rtl.dpu PRIVATE
    ${OMPDPU_BUILD_DIR}/lib/libompdpu_${lib}.a)
endforeach()
target_link_libraries(omptarget.rtl.dpu PRIVATE PkgConfig::OMPDPU_DEPS
  ${OMPDPU_MUNGE_LIBRARY} ${CMAKE_DL_LIBS})
