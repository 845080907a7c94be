// `ompdpu` and `ompdpu-server` refuse malformed options with a message naming the option and
// the value, exit status 2, and starts nothing.
// UNSUPPORTED: arm-vm
// RUN: not %ompdpu run --emulate 2.9 -- true 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: ompdpu error: --emulate needs a whole number from 1 to 64, not '2.9'
// RUN: not %ompdpu run --emulate 1x -- true 2>&1 | FileCheck %s --check-prefix=JUNK
// JUNK: ompdpu error: --emulate needs a whole number from 1 to 64, not '1x'
// RUN: not %ompdpu run --emulate 1 --pin --cores-per-dpu 99999999999 -- true 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CORES
// CORES: ompdpu error: --cores-per-dpu needs a whole number from 1 to 4096, not '99999999999'
// RUN: not %ompdpu run --emulate 1 --memory '' -- true 2>&1 | FileCheck %s --check-prefix=MEM
// MEM: ompdpu error: --memory needs a size
// RUN: not %ompdpu run --emulate 1 --memory 0 -- true 2>&1 | FileCheck %s --check-prefix=MEM0
// MEM0: ompdpu error: --memory: bad size '0' (examples: 4096, 512M, 8G)
// RUN: not env OMPDPU_PLUGIN_DIR=%S %ompdpu run --emulate 1 -- true 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PLUGINDIR
// PLUGINDIR: ompdpu error: OMPDPU_PLUGIN_DIR={{.*}} holds no ompdpu plugin (libomptarget.rtl.*.so in it or in its emulated/ directory): target regions would not reach a DPU
// RUN: not %ompdpu info --devices 2>&1 | FileCheck %s --check-prefix=INFO
// INFO: ompdpu error: --devices needs HOST:PORT
// RUN: not %ompdpu emulate 1 --bogus 2>&1 | FileCheck %s --check-prefix=EMU
// EMU: ompdpu error: emulate: unknown option '--bogus'
// RUN: %ompdpu run --help | FileCheck %s --check-prefix=HELP
// HELP: usage: ompdpu run [options] -- PROGRAM
// RUN: not %server --listen 127.0.0.1:0 --insecure --ready-fd 99 2>&1 \
// RUN:   | FileCheck %s --check-prefix=READY
// READY: ompdpu-server error: fd 99 (--ready-fd or --control-fd) is not open
// RUN: not %server --listen 127.0.0.1:0 --insecure --address-space 1M 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SPACE
// SPACE: ompdpu-server error: --address-space 1M: a session needs at least 256M
// RUN: not %server --listen 127.0.0.1:0 --insecure --cores 0,4000 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CORES2
// CORES2: ompdpu-server error: --cores: core 4000 is not one this server may run on (it may use {{[0-9][0-9,-]*}})
// A server told to use MUNGE says at once when munged is not there.
// RUN: %python %S/Inputs/with_server.py --server-arg --munge --server-arg --munge-socket \
// RUN:   --server-arg %t.no-munge.sock %server -- true 2>&1 | FileCheck %s --check-prefix=MUNGE
// MUNGE: ompdpu-server warning: --munge: no munged socket at {{.*}}no-munge.sock (yet): MUNGE clients are refused until munged listens there
// RUN: not %ompdpu run -- %S 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: ompdpu error: cannot run '{{.*}}': it is a directory
// As a shell: 126 for a program that cannot run, 127 for none.
// RUN: sh -c '%ompdpu run -- %S 2>/dev/null; test $? -eq 126'
// RUN: sh -c '%ompdpu run -- %t.nonexistent 2>/dev/null; test $? -eq 127'
// Accepted, with a word on what it does here.
// RUN: env OMPDPU_DEVICES= %ompdpu run -- true 2>&1 | FileCheck %s --check-prefix=NODPU
// NODPU: ompdpu warning: no DPUs: OMPDPU_DEVICES is empty: target regions run on the host; give --emulate N or --devices HOST:PORT[,...]
// RUN: %ompdpu run --emulate 1 --cores-per-dpu 1 -- true 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOPIN
// NOPIN: ompdpu warning: --cores-per-dpu takes effect with --pin only
// RUN: %ompdpu run --emulate 1 --pin --cores-per-dpu 4096 -- true 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FEWER
// FEWER: ompdpu warning: --cores-per-dpu 4096: this machine gives each DPU {{[0-9]+}} of its {{[0-9]+}} cores
int main(void) { return 0; }
