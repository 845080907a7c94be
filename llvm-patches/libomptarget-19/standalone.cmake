# Included after offload/'s project() (CMAKE_PROJECT_INCLUDE) in a standalone
# build: Debian's patches call a macro its openmp/CMakeLists.txt defines, which
# does nothing outside LLVM's runtimes build.
if(NOT COMMAND add_runtimes_build_depends_if_needed)
  macro(add_runtimes_build_depends_if_needed target)
  endmacro()
endif()
