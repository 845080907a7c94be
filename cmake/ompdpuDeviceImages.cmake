# ompdpu_add_device_images(<target> [EMULATE])
# Builds <target> (an OpenMP program) with DPU device images of its target
# regions: aarch64 for a BlueField's Arm cores, x86_64 with EMULATE (emulated
# DPUs, ompdpu run --emulate). The flags are those of ompdpu-cc (OMPDPU_CC),
# so the wrapper and CMake build the same program; as in clang 14's offload
# model, the compile and the link of <target> get the same flags.
function(ompdpu_add_device_images target)
  cmake_parse_arguments(ARG "EMULATE" "" "" ${ARGN})
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang" AND
     NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "ompdpu_add_device_images(${target}): OpenMP "
            "offloading needs clang (e.g. -DCMAKE_C_COMPILER=clang-14)")
  endif()
  set(mode "")
  if(ARG_EMULATE)
    set(mode --emulate)
  endif()
  foreach(part compile link)
    execute_process(COMMAND ${OMPDPU_CC} ${mode} --showme:${part}
                    OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE
                    COMMAND_ERROR_IS_FATAL ANY)
    separate_arguments(out UNIX_COMMAND "${out}")
    # -Xopenmp-target=T applies to the next argument: keep them as one
    # option, or CMake's de-duplication would tear repeated ones apart.
    set(${part} "")
    set(pending "")
    foreach(arg IN LISTS out)
      if(pending)
        list(APPEND ${part} "SHELL:${pending} ${arg}")
        set(pending "")
      elseif(arg MATCHES "^-Xopenmp-target=")
        set(pending "${arg}")
      else()
        list(APPEND ${part} "${arg}")
      endif()
    endforeach()
  endforeach()
  target_compile_options(${target} PRIVATE
                         "$<$<COMPILE_LANGUAGE:C,CXX>:${compile}>")
  target_link_options(${target} PRIVATE ${link})
endfunction()
