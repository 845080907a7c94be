// A key file that is not one gets advice that works as given: the command the
// error suggests, run as written, replaces it, and the program then runs on
// the DPU with it. `ompdpu key create` on an existing file says how to
// replace it (--force) and keeps the file; an option is never a file name.
// UNSUPPORTED: arm-vm
// RUN: %clang-offload %S/Inputs/on_server.c -o %t
// RUN: rm -f %t.key && printf 'garbage\n' > %t.key && chmod 600 %t.key
// RUN: not env OMPDPU_KEY=%t.key OMP_TARGET_OFFLOAD=mandatory %ompdpu run --emulate 1 -- %t \
// RUN:   > %t.garbage 2>&1
// RUN: FileCheck %s --check-prefix=GARBAGE -DKEY=%t.key < %t.garbage
// GARBAGE: ompdpu error: OMPDPU_KEY: [[KEY]] is not an ompdpu key file (replace it with a new key: `ompdpu key create --force [[KEY]]`)
// The suggestion, run as written (its `ompdpu` this build's):
// RUN: sed -n 's|.*`ompdpu \(key create [^`]*\)`.*|\1|p' %t.garbage > %t.suggested
// RUN: sh -c "%ompdpu $(cat %t.suggested)" | FileCheck %s --check-prefix=FORCED -DKEY=%t.key
// FORCED: wrote key file [[KEY]]
// RUN: env OMPDPU_KEY=%t.key OMP_TARGET_OFFLOAD=mandatory %ompdpu run --emulate 1 -- %t \
// RUN:   | FileCheck %s --check-prefix=RUNS
// RUNS: on-server: 1
// RUN: cp %t.key %t.key.before
// RUN: not %ompdpu key create %t.key 2>&1 | FileCheck %s --check-prefix=EXISTS -DKEY=%t.key
// EXISTS: ompdpu error: cannot create key file [[KEY]]: it exists (replace it with `ompdpu key create --force [[KEY]]`; servers holding the old key need the new one)
// RUN: cmp %t.key %t.key.before
// RUN: not %ompdpu key create --help 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: usage: ompdpu key create [--force] FILE
