// A program linked with ompdpu-cc's no-DPU notice (as ompdpu-cc links every
// program) says once on stderr when its target regions run on the host:
// run alone (./app: no plugin loaded, or, where libomptarget has the plugin
// inside, no DPU configured), never when it has a DPU, nor after `ompdpu
// run`'s own warning, nor with OMPDPU_NOTICE=0 or OMP_TARGET_OFFLOAD=disabled.
// With every LLVM version's clang (the llvm-versions suites run this too).
// UNSUPPORTED: arm-vm
// The notice object is built for programs' own links, not in sanitizer
// builds (an instrumented object would need the sanitizer's runtime linked in).
// UNSUPPORTED: sanitizer
// RUN: %clang-offload %S/Inputs/on_server.c %no-dpu-notice -o %t
// RUN: rm -rf %t.xdg && mkdir -p %t.xdg
// RUN: env -u OMPDPU_DEVICES XDG_CONFIG_HOME=%t.xdg %t > %t.alone 2>&1
// RUN: FileCheck %s --check-prefix=ALONE -DPROG=%t < %t.alone
// RUN: grep -c 'ompdpu note' %t.alone | FileCheck %s --check-prefix=ONCE
// ONCE: {{^1$}}
// ALONE: ompdpu note: [[PROG]] runs its target regions on the host, not a DPU: {{ompdpu's plugin is not loaded \(run it as `ompdpu run -- .+`|no DPU is configured \(`ompdpu info` says where it looked}}; OMPDPU_NOTICE=0: no such note)
// ALONE: on-server: 0
// RUN: env -u OMPDPU_DEVICES XDG_CONFIG_HOME=%t.xdg OMPDPU_NOTICE=0 %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=QUIET --implicit-check-not='ompdpu note'
// RUN: env -u OMPDPU_DEVICES XDG_CONFIG_HOME=%t.xdg OMP_TARGET_OFFLOAD=disabled %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=QUIET --implicit-check-not='ompdpu note'
// QUIET: on-server: 0
// RUN: %run-dpu %t 2>&1 | FileCheck %s --check-prefix=ONDPU --implicit-check-not='ompdpu note'
// ONDPU: on-server: 1
// RUN: env OMPDPU_DEVICES= %ompdpu run -- %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NODPU --implicit-check-not='ompdpu note'
// NODPU: ompdpu warning: no DPUs: OMPDPU_DEVICES is empty
// NODPU: on-server: 0
