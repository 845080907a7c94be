# -*- Python -*-
# Site configuration of LLVM's own libomptarget test suite
# (openmp/libomptarget/test of the installed LLVM's Debian source), run
# against the installed LLVM 14 instead of an LLVM build tree. Loaded by the
# lit.site.cfg that tests/conformance/run.sh writes into each exec directory,
# which sets:
#   config.conformance_mode       "host" (LLVM's own host plugin) or "ompdpu"
#   config.conformance_suite_dir  <unpacked>/openmp/libomptarget/test
#   config.conformance_all_targets  LIBOMPTARGET_ALL_TARGETS of that source
#   config.conformance_exec_root  this exec directory
#   config.conformance_llvm_bin   clang's directory (/usr/lib/llvm-14/bin)
#   config.conformance_llvm_lib   libomp and libomptarget (/usr/lib/llvm-14/lib)
#   config.conformance_tools_dir  FileCheck and not (/usr/lib/llvm-14/bin)
#   config.conformance_ompdpu     <build>/bin/ompdpu (mode "ompdpu")
#   config.conformance_emulate    number of emulated DPUs (mode "ompdpu")
#   config.conformance_timeout    seconds per test
#   config.conformance_probe_dir  run these tests instead of the suite's
#                                 (tests/conformance/probe), same config
#   config.conformance_library_path  LD_LIBRARY_PATH of the programs
#                                 (17, 18: where the host plugin is)
#
# It fills in what the suite's lit.site.cfg.in would get from CMake, then lets
# the suite's own lit.cfg do the real work; with mode "ompdpu" it then puts
# `env OMP_TARGET_OFFLOAD=mandatory ompdpu run --emulate N --` in front of the
# program in the suite's two run substitutions (%libomptarget-run-<target>,
# %libomptarget-run-fail-<target>), which every test uses to start its
# program. The downloaded sources are not modified.
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import lit_limits  # noqa: E402

TARGET = "x86_64-pc-linux-gnu"  # the emulated DPU runs x86_64 device images

llvm_bin = config.conformance_llvm_bin
llvm_lib = config.conformance_llvm_lib
tools = config.conformance_tools_dir
clang = os.path.join(llvm_bin, "clang")
clangxx = os.path.join(llvm_bin, "clang++")


def _clang_version():
    out = subprocess.run([clang, "--version"], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    m = re.search(r"clang version (\d+)\.(\d+)\.(\d+)", out)
    if not m:
        lit_config.fatal("cannot read the version of %s" % clang)
    return m.groups()


_major, _minor, _patch = _clang_version()
_resource_dir = subprocess.run([clang, "-print-resource-dir"], stdout=subprocess.PIPE,
                               universal_newlines=True, check=True).stdout.strip()

# What openmp/libomptarget/test/CMakeLists.txt and openmp/cmake/OpenMPTesting.cmake
# would write into lit.site.cfg for an LLVM built with its x86_64 plugin.
config.test_c_compiler = clang
config.test_cxx_compiler = clangxx
config.test_compiler_features = [
    "clang", "clang-%s" % _major, "clang-%s.%s" % (_major, _minor),
    "clang-%s.%s.%s" % (_major, _minor, _patch)]
config.test_openmp_flags = "-fopenmp -pthread -fno-experimental-isel"
config.test_extra_flags = ""
config.cuda_path = ""
config.cuda_libdir = ""
config.cuda_test_arch = ""
config.libomptarget_obj_root = config.conformance_exec_root
config.library_dir = llvm_lib              # libomptarget.so
# omp.h: clang's own, or that of the libomp unpacked beside an installed clang.
_omp_h = os.path.join(llvm_lib, "clang", _major, "include")
if not os.path.exists(os.path.join(_omp_h, "omp.h")):
    _omp_h = os.path.join(_resource_dir, "include")
config.omp_header_directory = _omp_h
config.omp_host_rtl_directory = llvm_lib   # libomp.so
config.operating_system = "Linux"
config.libomptarget_all_targets = config.conformance_all_targets
config.libomptarget_current_target = TARGET
config.libomptarget_filecheck = os.path.join(tools, "FileCheck")
config.libomptarget_not = os.path.join(tools, "not")
# What later versions' lit.site.cfg.in add (16: llvm_lib_directory; 19: the rest).
config.llvm_lib_directory = llvm_lib
config.llvm_library_dir = llvm_lib
config.llvm_library_intdir = llvm_lib      # libomptarget.devicertl.a
config.bin_llvm_tools_dir = tools
config.test_fortran_compiler = ""         # no flang: the .f90 tests fail both ways
config.amdgpu_test_arch = ""
config.libomptarget_has_libc = False
config.llvm_enabled_projects = ["openmp"]  # 17, 18: no flang (its tests are unsupported)
# OMPT: Debian's libomptarget 19 is built with it (it exports the OMPT hooks).
config.has_libomptarget_ompt = False
try:
    _dyn = subprocess.run(["nm", "-D", "--defined-only", os.path.realpath(
        os.path.join(llvm_lib, "libomptarget.so"))], stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, universal_newlines=True).stdout
    config.has_libomptarget_ompt = "ompt_libomptarget_connect" in _dyn
except OSError:
    pass
# Debian's libomptarget is built without LIBOMPTARGET_ENABLE_DEBUG: it prints
# nothing for LIBOMPTARGET_DEBUG, so the tests that need that are unsupported.
config.libomptarget_debug = False

# 17 and 18's lit.cfg use lit.llvm's llvm_config, which their lit.site.cfg.in
# sets up first.
with open(os.path.join(config.conformance_suite_dir, "lit.site.cfg.in")) as _f:
    if "lit.llvm.initialize" in _f.read():
        import lit.llvm
        lit.llvm.initialize(lit_config, config)

lit_config.load_config(config, os.path.join(config.conformance_suite_dir, "lit.cfg"))

mode = config.conformance_mode
config.name = "libomptarget :: %s" % mode
if getattr(config, "conformance_probe_dir", None):
    config.name += " :: probe"
    config.test_source_root = config.conformance_probe_dir

# A test's RUN lines call llvm-ar and friends by name, as in an LLVM build tree.
config.environment["PATH"] = os.pathsep.join(
    [llvm_bin, tools, config.environment.get("PATH", os.environ.get("PATH", ""))])
# The suite's lit.cfg passes OMP_TARGET_OFFLOAD through from the caller's
# environment; every program here gets a known policy instead.
config.environment.pop("OMP_TARGET_OFFLOAD", None)
for var in ("OMPDPU_DEVICES", "OMPDPU_SERVER_PIDS", "LD_LIBRARY_PATH"):
    config.environment.pop(var, None)

# 17 and 18: Debian's libomptarget links libLLVM-N.so, which dlopens the
# plugins by name with its own search path, not libomptarget's $ORIGIN: on
# Debian 13 the host plugin is found only through LD_LIBRARY_PATH (without it
# there is no device and every region runs on the host). Both modes get it, as
# a user there would, for the tests that run a program directly (not through
# %libomptarget-run); `ompdpu run` puts its plugin's directory first.
_ld = getattr(config, "conformance_library_path", None)
if _ld:
    config.environment["LD_LIBRARY_PATH"] = _ld

# --- limits: a time per test (lit needs psutil), two tests at a time ---------
_guard = lit_limits.time_limit(lit_config, config, "ompdpu-conformance",
                               int(config.conformance_timeout))

# --- how programs run -------------------------------------------------------
if mode == "ompdpu":
    prefix = "%senv OMP_TARGET_OFFLOAD=mandatory %s run --emulate %d --" % (
        _guard, config.conformance_ompdpu, int(config.conformance_emulate))
    config.available_features.add("ompdpu")
elif mode == "host":
    prefix = _guard.strip()
else:
    lit_config.fatal("conformance_mode must be host or ompdpu, not %r" % mode)

_run = "%libomptarget-run-" + TARGET
_run_fail = "%libomptarget-run-fail-" + TARGET
_wrapped = set()
for i, (key, value) in enumerate(config.substitutions):
    if key == _run and value == "%t":
        config.substitutions[i] = (key, ("%s %%t" % prefix).strip())
        _wrapped.add(key)
    elif key == _run_fail and value == "%not --crash %t":
        # `ompdpu run` reports a program killed by a signal as an exit status
        # (128 + signal), so `not --crash` goes inside it, next to the program.
        config.substitutions[i] = (key, ("%s %%not --crash %%t" % prefix).strip())
        _wrapped.add(key)
if _wrapped != {_run, _run_fail}:
    lit_config.fatal("the suite's lit.cfg no longer defines %s as %%t and %s as "
                     "%%not --crash %%t: update tests/conformance/site_config.py"
                     % (_run, _run_fail))
