# Helpers to build dnnk into OpenMP offloading programs.
#
# Device code cannot come from a prebuilt host library: clang 14 only links
# device images from objects compiled with the same -fopenmp-targets. So
# offloading programs compile dnnk's sources themselves, as an OBJECT library
# whose usage requirements carry the offload flags to the compile and link
# of every consumer.

# Sources of the library, shared by the host and offload builds.
set(DNNK_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/..)
set(DNNK_SOURCES
    ${DNNK_SOURCE_DIR}/src/alloc.c
    ${DNNK_SOURCE_DIR}/src/augment.c
    ${DNNK_SOURCE_DIR}/src/augment_warp.c
    ${DNNK_SOURCE_DIR}/src/conv.c
    ${DNNK_SOURCE_DIR}/src/conv1x1.c
    ${DNNK_SOURCE_DIR}/src/conv_c1.c
    ${DNNK_SOURCE_DIR}/src/conv_c1_wt.c
    ${DNNK_SOURCE_DIR}/src/convblk.c
    ${DNNK_SOURCE_DIR}/src/convgemm.c
    ${DNNK_SOURCE_DIR}/src/convgemm_deep.c
    ${DNNK_SOURCE_DIR}/src/convgemm_dot.c
    ${DNNK_SOURCE_DIR}/src/convgemm_flat.c
    ${DNNK_SOURCE_DIR}/src/convgemm_micro.c
    ${DNNK_SOURCE_DIR}/src/convgemm_pack.c
    ${DNNK_SOURCE_DIR}/src/convgemm_tdeep.c
    ${DNNK_SOURCE_DIR}/src/elementwise.c
    ${DNNK_SOURCE_DIR}/src/fc.c
    ${DNNK_SOURCE_DIR}/src/gemm.c
    ${DNNK_SOURCE_DIR}/src/gemm_micro.c
    ${DNNK_SOURCE_DIR}/src/gemm_pack.c
    ${DNNK_SOURCE_DIR}/src/halo.c
    ${DNNK_SOURCE_DIR}/src/im2col.c
    ${DNNK_SOURCE_DIR}/src/jacobi.c
    ${DNNK_SOURCE_DIR}/src/philox.c
    ${DNNK_SOURCE_DIR}/src/pool.c
    ${DNNK_SOURCE_DIR}/src/softmax.c)

# dnnk_add_offload_library(<name> TARGETS <triple>... [DEVICE_OPTIONS <opt>...])
# Creates OBJECT library <name> with dnnk compiled for the host and for each
# device triple; link it into an executable (target_link_libraries) and that
# executable is compiled and linked with the same -fopenmp-targets. Options
# in DEVICE_OPTIONS go to every device compile and link
# (-Xopenmp-target=<triple>): clang 14 names device bundles after -march /
# -mcpu, so the link must see the same options or it silently drops the
# library's device code.
function(dnnk_add_offload_library name)
  cmake_parse_arguments(ARG "" "" "TARGETS;DEVICE_OPTIONS" ${ARGN})
  if(NOT ARG_TARGETS)
    message(FATAL_ERROR "dnnk_add_offload_library(${name}): TARGETS missing")
  endif()
  list(JOIN ARG_TARGETS "," triples)
  set(flags -fopenmp -fopenmp-targets=${triples})
  foreach(triple IN LISTS ARG_TARGETS)
    foreach(opt IN LISTS ARG_DEVICE_OPTIONS)
      list(APPEND flags "SHELL:-Xopenmp-target=${triple} ${opt}")
    endforeach()
  endforeach()
  add_library(${name} OBJECT ${DNNK_SOURCES})
  target_include_directories(${name} PUBLIC ${DNNK_SOURCE_DIR}/include)
  # No -march here: clang 14 forwards the host -march to same-triple device
  # compiles and names the device bundle after it ("...-native"), and a link
  # or consumer without the same flag then silently loses the device code.
  target_compile_options(${name} PRIVATE -O3)
  target_compile_options(${name} PUBLIC ${flags})
  target_link_options(${name} INTERFACE ${flags})
  target_link_libraries(${name} INTERFACE m)
endfunction()
