# -*- Python -*-
# lit configuration for the Arm testbed: the end-to-end and fault tests of tests/lit/offload
# and tests/lit/fault, run a second time with aarch64 device images
# (scripts/ompdpu-aarch64-cc) against the cross-built aarch64 ompdpu-server in an arm64 VM
# (scripts/ompdpu-vm), plus the tests of tests/lit-arm/arm (proof that regions run on
# aarch64, faults only a VM can have).
#
# Six suites share this file; CMake writes one site config for each:
#   build/tests/lit-arm/offload/lit.site.cfg.py  test sources: tests/lit/offload
#   build/tests/lit-arm/fault/lit.site.cfg.py    test sources: tests/lit/fault
#   build/tests/lit-arm/arm/lit.site.cfg.py      test sources: tests/lit-arm/arm
# and the same over RDMA (config.ompdpu_arm_rdma; the VM started with --rdma): programs
# built for an arm64 host too (ompdpu-aarch64-cc --host-aarch64, the arm64 plugin of
# build-arm64/plugin) run in the guest (ompdpu-vm guest-run) beside its servers, the two
# talking over UCX's verbs transports on soft-RoCE only:
#   build/tests/lit-arm/rdma-offload, rdma-fault  test sources: tests/lit/offload, fault
#   build/tests/lit-arm/rdma                      test sources: tests/lit-arm/rdma
# The VM is started once for the whole run (tests/lit-arm/run-lit-arm.sh, the ctest
# `lit-arm`, does it), not per test; its name comes from --param vm_name=NAME, else
# $OMPDPU_VM_NAME, else "lit-arm". Straight from the source tree (no site config) only
# tests/lit-arm/arm runs, with the build in --param ompdpu_build=DIR or <source>/build.
import glob
import os
import shutil
import subprocess
import sys

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _here)
sys.path.insert(0, os.path.dirname(_here))
sys.dont_write_bytecode = True      # no __pycache__ in the source tree
import armlit  # noqa: E402  (the test format; a module so that lit's workers can load it)
import lit_limits  # noqa: E402

if not hasattr(config, "ompdpu_arm_suite"):
    # No site config: the arm/ tests from the source tree, default paths.
    _src = os.path.dirname(os.path.dirname(_here))
    _build = os.path.abspath(lit_config.params.get("ompdpu_build")
                             or os.environ.get("OMPDPU_BUILD_DIR")
                             or os.path.join(_src, "build"))
    config.ompdpu_source_root = _src
    config.ompdpu_bin_dir = os.path.join(_build, "bin")
    config.ompdpu_lib_dir = os.path.join(_build, "lib")
    config.ompdpu_include_dir = os.path.join(_src, "runtime", "include")
    config.ompdpu_llvm_tools_dir = "/usr/lib/llvm-14/bin"
    config.ompdpu_python = "/usr/bin/python3"
    config.ompdpu_arm_suite = "arm"
    config.ompdpu_arm_source = _here
    config.ompdpu_lit_exec_root = os.path.join(_build, "tests", "lit-arm", "arm")

_src = config.ompdpu_source_root
rdma = getattr(config, "ompdpu_arm_rdma", False)

# Tests of tests/lit/offload that mean nothing on this testbed, with the reason (lit
# reports them UNSUPPORTED). Tests written for it can also say `UNSUPPORTED: arm-vm`.
UNSUPPORTED = {
    "explicit_server.c":
        "starts an x86_64 ompdpu-server on host loopback (Inputs/with_server.py); "
        "tests/lit-arm/arm/explicit_server.c runs the same program against a server "
        "started by hand in the guest",
    "unreachable_device.c":
        "starts an x86_64 ompdpu-server on host loopback (Inputs/with_server.py) beside "
        "an address nobody listens on",
}
# Another LLVM version's toolchain (tests/llvm-versions/run.sh --arm writes these into
# its site configs): config.ompdpu_arm_llvm (major), ompdpu_arm_clang / _clangxx (that
# version's clang, linking its libomp and libomptarget), ompdpu_arm_unsupported (more
# tests that mean nothing with it, file name -> reason). Default: clang-14.
llvm_major = int(getattr(config, "ompdpu_arm_llvm", 14))
UNSUPPORTED.update(getattr(config, "ompdpu_arm_unsupported", {}))


# Over RDMA, also those that need this host to reach the guest's servers (they are on
# verbs only, and this host has no RDMA device) or a host-side tool.
UNSUPPORTED_RDMA = dict(UNSUPPORTED, **{
    "auth_clients.c": "starts servers on host loopback",
    "dlopen_library.c": "its host program is built by %host-cc for this host",
    "zero_copy_bulk.c": "checks for a cma lane; tests/lit-arm/rdma/rdma_bulk_lanes.c "
                        "checks the RDMA lanes instead",
    "tcp_transport.c": "forces UCX_TLS=tcp,self against servers on verbs only "
                       "(rdma_bulk_lanes.c runs one against a TCP server of its own)",
})

config.name = "ompdpu-arm-" + config.ompdpu_arm_suite
_unsupported = {}
if config.ompdpu_arm_suite in ("offload", "rdma-offload", "rdma-fault"):
    _unsupported = UNSUPPORTED_RDMA if rdma else UNSUPPORTED
config.test_format = armlit.ArmShTest(_unsupported, execute_external=False)
config.suffixes = [".c", ".cpp"]
config.excludes = ["Inputs", "CMakeLists.txt"]
config.test_source_root = config.ompdpu_arm_source
config.test_exec_root = config.ompdpu_lit_exec_root
config.available_features.add("arm-vm")
config.available_features.add("aarch64-device")
if rdma:
    config.available_features.add("rdma")
config.available_features.add("llvm%d" % llvm_major)

# --- environment ---------------------------------------------------------------------
tools = config.ompdpu_llvm_tools_dir
config.environment["PATH"] = os.pathsep.join(
    [tools, config.environment.get("PATH", os.environ.get("PATH", ""))])
for var, val in os.environ.items():
    if var.startswith(("UCX_", "LIBOMPTARGET_")) or var in ("OMPDPU_LOG", "OMPDPU_DEBUG"):
        config.environment[var] = val
for var in ("OMP_TARGET_OFFLOAD", "OMPDPU_DEVICES", "OMPDPU_SERVER_PIDS"):
    config.environment.pop(var, None)
# The arm64 sysroot of scripts/ompdpu-aarch64-cc and the build ompdpu-vm uses.
for var in ("OMPDPU_ARM64_SYSROOT", "OMPDPU_ARM64_BUILD", "OMPDPU_VM_CACHE"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment["OMPDPU_BUILD_DIR"] = os.path.dirname(config.ompdpu_bin_dir)
# The guest is emulated (TCG) on the two host cores that also compile and run the
# tests' host programs, and reached over a TAP link: under that load it has fallen
# silent for 10 s (OMPDPU_TIMEOUT's default) with two long tests running at once, and
# answered again afterwards. Silence is not death on this testbed: 30 s unless set.
# The tests of the heartbeat itself (arm/dpu_died.c, arm/kernel_panic.c) set 3 s.
config.environment["OMPDPU_TIMEOUT"] = os.environ.get("OMPDPU_TIMEOUT", "30")
if rdma:
    # Over RDMA the program is emulated too, and its handshake (RDMA-CM falls back to
    # TCP's connection manager, then rc and ud are wired up, both ends under TCG) takes
    # 1-3 s alone and has taken more than the default 5 s with two tests at once.
    config.environment["OMPDPU_CONNECT_TIMEOUT"] = os.environ.get(
        "OMPDPU_CONNECT_TIMEOUT", "30")

# --- limits: 300 s per test (emulated Arm cores; --param ompdpu_timeout=S), at most 2
# tests at a time ------------------------------------------------------------------------
_run_prefix = lit_limits.time_limit(
    lit_config, config, "ompdpu-arm", int(lit_config.params.get("ompdpu_timeout", 300)))

# --- the VM --------------------------------------------------------------------------
vm_name = (lit_config.params.get("vm_name") or os.environ.get("OMPDPU_VM_NAME")
           or ("lit-rdma" if rdma else "lit-arm"))
python = config.ompdpu_python
vm_tool = os.path.join(_src, "scripts", "ompdpu-vm")
vm = "%s %s --name %s" % (python, vm_tool, vm_name)
_st = subprocess.run([python, vm_tool, "--name", vm_name, "status"],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                     env=dict(os.environ, OMPDPU_BUILD_DIR=config.environment["OMPDPU_BUILD_DIR"]))
if _st.returncode != 0:
    lit_config.fatal("the arm64 VM '%s' is not running or not answering:\n%s\n"
                     "Run the suite through tests/lit-arm/run-lit-arm.sh (ctest -L arm), or "
                     "start the VM first: scripts/ompdpu-vm --name %s start%s"
                     % (vm_name, _st.stdout.strip(), vm_name, " --rdma" if rdma else ""))
if rdma != ("RDMA (soft-RoCE" in _st.stdout):
    lit_config.fatal("the VM '%s' is %san RDMA VM, the suite %s one (start --rdma)"
                     % (vm_name, "" if not rdma else "not ", "needs" if rdma else "needs no"))
# The guest address, from the status line "guest 10.A.B.2 (...)".
_guest = [w for line in _st.stdout.splitlines() if line.strip().startswith("guest ")
          for w in line.split()[1:2]]
guest_ip = _guest[0] if _guest else "10.233.0.2"

# --- compilers: aarch64 device images ---------------------------------------------------
# libompdpu is a host library: clang 14 hands -L/-l of the command line to the device link
# too, where the x86_64 libompdpu.so is "incompatible with elf64-littleaarch64". A linker
# script named libompdpu.so, found first by the device link only, gives it nothing.
triple = "aarch64-unknown-linux-gnu"
stub_dir = os.path.join(config.ompdpu_lit_exec_root, "device-stubs")
os.makedirs(stub_dir, exist_ok=True)
with open(os.path.join(stub_dir, "libompdpu.so"), "w") as f:
    f.write("/* libompdpu is host-only: nothing to link into aarch64 device images */\n")
cc = os.path.join(_src, "scripts", "ompdpu-aarch64-cc")
_libs = config.ompdpu_lib_dir
if rdma:
    # libompdpu of the arm64 host build, at the same path in the guest (9p share).
    _arm64_build = os.environ.get("OMPDPU_ARM64_BUILD") or os.path.join(_src, "build-arm64")
    _libs = os.path.join(_arm64_build, "plugin", "lib")
if getattr(config, "ompdpu_arm_clang", None):
    cc = "env OMPDPU_AARCH64_CC=%s OMPDPU_AARCH64_CXX=%s %s" % (
        config.ompdpu_arm_clang, config.ompdpu_arm_clangxx, cc)
# The device image clang links (kept with -save-temps, in the current directory).
aarch64_image = ("a.out-openmp-%s" % triple if llvm_major < 18
                 else "*.aarch64.native.img")
link = "-Xopenmp-target=%s -L%s -I%s -L%s -lompdpu -Wl,-rpath,%s" % (
    triple, stub_dir, config.ompdpu_include_dir, _libs, _libs)
if rdma:
    link = "--host-aarch64 " + link

# --- substitutions (longer names first) ------------------------------------------------
ompdpu = os.path.join(config.ompdpu_bin_dir, "ompdpu")
# 19 links its plugins into libomptarget: `ompdpu run` puts the rebuilt one (with the
# dpu plugin) before the program's own, and keeps the VM's OMPDPU_DEVICES.
run_with = " %s run --" % ompdpu if llvm_major >= 19 else ""
# 18 (tests/llvm-versions/run.sh --arm 18): programs built for the Debian 13 root run in
# it (config.ompdpu_arm_run_in, in the VM's namespace), under `ompdpu run`, which puts
# lib/ompdpu/llvm18 (its libomptarget.rtl.cuda.so serves aarch64 images) on the path.
run_in = getattr(config, "ompdpu_arm_run_in", "")
if run_in:
    run_with = " %s %s run --" % (run_in, ompdpu)
fault = "%s %s --ompdpu-vm %s --name %s" % (
    python, os.path.join(os.path.dirname(_here), "fault_run.py"), vm_tool, vm_name)
run_dpu = "guest-run" if rdma else "run"
if rdma:
    fault += " --in-guest"
subs = [
    ("%clangxx-offload", "%s --cxx %s" % (cc, link)),
    ("%clang-offload", "%s %s" % (cc, link)),
    ("%run-dpu2", "%senv OMP_TARGET_OFFLOAD=mandatory %s %s --devices 2 --%s"
     % (_run_prefix, vm, run_dpu, run_with)),
    ("%run-dpu", "%senv OMP_TARGET_OFFLOAD=mandatory %s %s --%s"
     % (_run_prefix, vm, run_dpu, run_with)),
    ("%aarch64-image", aarch64_image),
    ("%llvm-major", str(llvm_major)),
    # The fault tests' shared RUN lines (as in tests/lit/lit.cfg.py).
    ("%fault-limit", "30"),
    ("%fault", fault),
    ("%run-no-server", "%s%s %s --ports 1 --" % (_run_prefix, vm, run_dpu)),
    ("%device-machine", "183"),
    ("%vm-fault", fault),
    ("%vm", _run_prefix + vm),
    ("%guest", guest_ip),
    ("%no-host", guest_ip.rsplit(".", 1)[0] + ".3"),   # in the guest's subnet, unused
    ("%lit-src", os.path.join(_src, "tests", "lit")),
    # Every dnn-kernels source, as the dnnk library builds them.
    ("%dnnk-sources", " ".join(sorted(
        glob.glob(os.path.join(_src, "dnn-kernels", "src", "*.c"))))),
    ("%src-root", _src),
    ("%ompdpu", _run_prefix + ompdpu),
    # A plain C compiler for the host: programs without OpenMP (that dlopen one).
    ("%host-cc", shutil.which("clang-14") or "clang-14"),
    ("%python", python),
    ("%llvm-readelf", os.path.join(tools, "llvm-readelf")),
    ("%llvm-objcopy", os.path.join(tools, "llvm-objcopy")),
]
config.substitutions.extend(subs)

for tool in ("ompdpu",):
    if not os.path.exists(os.path.join(config.ompdpu_bin_dir, tool)):
        lit_config.warning("%s not built yet in %s: tests will fail"
                           % (tool, config.ompdpu_bin_dir))
if not os.path.exists(os.path.join(config.ompdpu_lib_dir, "ompdpu",
                                   "libomptarget.rtl.aarch64.so")):
    lit_config.warning("no aarch64 plugin in %s/ompdpu: tests will fail" % config.ompdpu_lib_dir)
