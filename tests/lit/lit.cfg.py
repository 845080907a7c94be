# -*- Python -*-
# lit configuration for the ompdpu end-to-end (offload/) and fault (fault/)
# tests. Normally loaded from the build's tests/lit/lit.site.cfg.py (CMake
# writes it); when lit is pointed straight at the source tree, the build is
# looked up from --param ompdpu_build=DIR, $OMPDPU_BUILD_DIR, or <source>/build.
#
#   python3 /usr/lib/llvm-14/build/utils/lit/lit.py -sv -j2 build/tests/lit/offload
#   python3 /usr/lib/llvm-14/build/utils/lit/lit.py -sv -j2 tests/lit   # both suites
import os
import shutil
import sys

import lit.formats
import lit.util

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_here))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import lit_limits  # noqa: E402

if not hasattr(config, "ompdpu_bin_dir"):
    _src = os.path.dirname(os.path.dirname(_here))
    _build = (lit_config.params.get("ompdpu_build")
              or os.environ.get("OMPDPU_BUILD_DIR")
              or os.path.join(_src, "build"))
    _site = os.path.join(os.path.abspath(_build), "tests", "lit", "lit.site.cfg.py")
    if os.path.exists(_site):
        _configured_from_site = True
        # The site config sets the paths and loads this file again.
        lit_config.load_config(config, _site)
    else:
        _configured_from_site = False
        lit_config.note("no %s: using default paths under %s" % (_site, _build))
        _build = os.path.abspath(_build)
        config.ompdpu_source_root = _src
        config.ompdpu_bin_dir = os.path.join(_build, "bin")
        config.ompdpu_lib_dir = os.path.join(_build, "lib")
        config.ompdpu_include_dir = os.path.join(_src, "runtime", "include")
        config.ompdpu_llvm_tools_dir = "/usr/lib/llvm-14/bin"
        config.ompdpu_clang = shutil.which("clang-14") or "clang-14"
        config.ompdpu_clangxx = shutil.which("clang++-14") or "clang++-14"
        config.ompdpu_python = "/usr/bin/python3"
        config.ompdpu_lit_exec_root = os.path.join(_build, "tests", "lit")
else:
    _configured_from_site = False

if not _configured_from_site:
    config.name = "ompdpu"
    config.test_format = lit.formats.ShTest(execute_external=False)
    config.suffixes = [".c", ".cpp"]
    config.excludes = ["Inputs", "CMakeLists.txt"]
    config.test_source_root = _here
    config.test_exec_root = config.ompdpu_lit_exec_root

    # --- environment -------------------------------------------------------
    tools = config.ompdpu_llvm_tools_dir
    config.environment["PATH"] = os.pathsep.join(
        [tools, config.environment.get("PATH", os.environ.get("PATH", ""))])
    # lit passes almost nothing through; keep the knobs useful for debugging a
    # failing run (UCX_LOG_LEVEL, LIBOMPTARGET_DEBUG/INFO, OMPDPU_LOG...) but
    # never the device list: every test says which servers it wants.
    for var, val in os.environ.items():
        if var.startswith(("UCX_", "LIBOMPTARGET_")) or var in ("OMPDPU_LOG", "OMPDPU_DEBUG"):
            config.environment[var] = val
        # A sanitizer build's options, and libomp's choice of OpenMP tool (it
        # loads archer under TSan): scripts/sanitizers.sh sets them.
        if var.endswith("SAN_OPTIONS") or var in ("OMP_TOOL", "OMP_TOOL_LIBRARIES"):
            config.environment[var] = val
    for var in ("OMP_TARGET_OFFLOAD", "OMPDPU_DEVICES", "OMPDPU_SERVER_PIDS"):
        config.environment.pop(var, None)

    # MUNGE's daemon and key tool (Debian's munge), for a private munged.
    if shutil.which("munged") and shutil.which("mungekey"):
        config.available_features.add("munge")
    # Tests of the server's account switching need it to start as root.
    if os.geteuid() == 0:
        config.available_features.add("root")
    # and sessions of other accounts that can exec the build's server: not so
    # from a build under a private home (the sanitizer builds in ~/.cache).
    def _others_can_search(path):
        while path != os.path.dirname(path):
            try:
                if not os.stat(path).st_mode & 0o001:
                    return False
            except OSError:
                return False
            path = os.path.dirname(path)
        return True
    if _others_can_search(os.path.realpath(config.ompdpu_bin_dir)):
        config.available_features.add("server-reachable-by-others")

    # Another libomptarget.so in place of the LLVM install's, first on the
    # library path of every program (and of `ompdpu run`, which keeps it):
    # llvm-patches/apply-and-test.sh runs the suite against the patched one.
    #   --param libomptarget_dir=DIR
    _libomptarget_dir = lit_config.params.get("libomptarget_dir")
    if _libomptarget_dir:
        _libomptarget_dir = os.path.abspath(_libomptarget_dir)
        if not os.path.exists(os.path.join(_libomptarget_dir, "libomptarget.so")):
            lit_config.fatal("libomptarget_dir=%s holds no libomptarget.so" % _libomptarget_dir)
        config.environment["LD_LIBRARY_PATH"] = _libomptarget_dir
        config.available_features.add("libomptarget-override")
        config.substitutions.append(("%libomptarget-dir", _libomptarget_dir))

    # --- limits: 120 s per test (--param ompdpu_timeout=S), at most 2 tests at
    # a time (the machines have 2 cores) -------------------------------------
    _run_prefix = lit_limits.time_limit(
        lit_config, config, "ompdpu", int(lit_config.params.get("ompdpu_timeout", 120)))

    # A sanitizer build (CMake presets asan, tsan): the programs, libomp and
    # libomptarget are Debian's uninstrumented ones; the instrumented plugin
    # and libompdpu need the sanitizer's runtime in the program: preloaded
    # (ASan) or linked in without instrumenting the program (TSan).
    _preload = ""
    _program_flags = ""
    if getattr(config, "ompdpu_sanitizer", ""):
        config.available_features.add("sanitizer")
        config.available_features.add("sanitizer-" + config.ompdpu_sanitizer)
        if config.ompdpu_sanitizer_preload:
            _preload = "env LD_PRELOAD=%s " % config.ompdpu_sanitizer_preload
        if config.ompdpu_sanitizer_program_flags:
            _program_flags = " " + config.ompdpu_sanitizer_program_flags
    _program_prefix = _run_prefix + _preload

    # --- substitutions (order matters: longer names first) -----------------
    ompdpu = os.path.join(config.ompdpu_bin_dir, "ompdpu")
    server = os.path.join(config.ompdpu_bin_dir, "ompdpu-server")
    link = "-I%s -L%s -lompdpu -Wl,-rpath,%s" % (
        config.ompdpu_include_dir, config.ompdpu_lib_dir, config.ompdpu_lib_dir)
    offload = "-fopenmp -fopenmp-targets=x86_64-pc-linux-gnu"
    config.substitutions.append(
        ("%clangxx-offload", "%s %s %s%s" % (config.ompdpu_clangxx, offload, link, _program_flags)))
    config.substitutions.append(
        ("%clang-offload", "%s %s %s%s" % (config.ompdpu_clang, offload, link, _program_flags)))
    config.substitutions.append(
        ("%run-dpu2", "%senv OMP_TARGET_OFFLOAD=mandatory %s run --emulate 2 --"
         % (_program_prefix, ompdpu)))
    config.substitutions.append(
        ("%run-dpu", "%senv OMP_TARGET_OFFLOAD=mandatory %s run --emulate 1 --"
         % (_program_prefix, ompdpu)))
    # The fault tests' shared RUN lines (tests/lit-arm runs them too, on the
    # arm64 VM): a harness that gives a run its own server and injects a
    # fault (tests/fault_run.py), its limit, an address nobody listens on, and
    # the device images' ELF machine.
    config.substitutions.append(("%fault-limit", "5"))
    config.substitutions.append(("%fault", "%s%s %s --ompdpu %s" % (
        _preload, config.ompdpu_python, os.path.join(os.path.dirname(_here), "fault_run.py"), ompdpu)))
    config.substitutions.append(
        ("%run-no-server", "%s%s run --devices 127.0.0.1:1 --" % (_program_prefix, ompdpu)))
    config.substitutions.append(("%device-machine", "62"))
    # A plain C compiler: programs without OpenMP (that dlopen one).
    config.substitutions.append(("%host-cc", config.ompdpu_clang + _program_flags))
    # ompdpu-cc's aarch64 device images (a BlueField's), where the build has
    # the aarch64 device libraries to link them with.
    _aarch64_cc = os.path.join(config.ompdpu_bin_dir, "ompdpu-cc")
    if os.path.exists(os.path.join(config.ompdpu_lib_dir, "ompdpu", "device-aarch64",
                                   "libomp.so")) and os.path.exists(_aarch64_cc):
        config.available_features.add("aarch64-images")
        config.substitutions.append(("%ompdpu-cc", _aarch64_cc))
    # The object ompdpu-cc links into programs: the note of a run without DPUs.
    config.substitutions.append(
        ("%no-dpu-notice", os.path.join(config.ompdpu_lib_dir, "ompdpu", "no-dpu-notice.o")))
    config.substitutions.append(("%ompdpu", _program_prefix + ompdpu))
    config.substitutions.append(("%server", _run_prefix + server))
    # Sanitized sessions run without RLIMIT_AS (their shadow memory needs
    # terabytes of address space: runtime/server/session_user.cpp).
    config.substitutions.append(
        ("%address-space-limited", "0" if "sanitizer" in config.available_features else "1"))
    config.substitutions.append(("%python", config.ompdpu_python))
    config.substitutions.append(("%llvm-readelf", os.path.join(tools, "llvm-readelf")))
    config.substitutions.append(("%llvm-objcopy", os.path.join(tools, "llvm-objcopy")))

    for tool in ("ompdpu", "ompdpu-server"):
        if not os.path.exists(os.path.join(config.ompdpu_bin_dir, tool)):
            lit_config.warning("%s not built yet in %s: tests will fail"
                               % (tool, config.ompdpu_bin_dir))
