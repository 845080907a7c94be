#!/usr/bin/env python3
"""Run the offload micro-benchmarks and their references in one go.

Measures, on the same machine and transport, in one run:
  * ompdpu: empty target region (sync), nowait region rate, a region with 8
    small maps, host<->device bandwidth (target update, omp_target_memcpy),
    device-to-device omp_target_memcpy between two emulated DPUs;
  * references: ucx_perftest (ucp_am_lat, ucp_am_bw, ucp_put_bw, ucp_get),
    an Open MPI ping-pong, memcpy, and LLVM's in-process host plugin;
  * the empty region layer by layer (ompdpu-launch-layers): our transport
    alone, + the protocol client and session, + the plugin's device logic;
  * the empty and the 8-map region again over TCP loopback (UCX_TLS=tcp,self),
    a round trip as long as a network's, against ucx_perftest over TCP.
The offload measurements come from ompdpu-offload-micro, a Google Benchmark
program (7 repetitions each; we take the medians from its JSON output).
Prints a Markdown table with medians and the ratios of the targets,
each marked met or NOT met in this run, with a line counting them; the bulk
endpoint's lanes (OMPDPU_TRACE=1) show whether bulk data moves zero copy.
Writes micro.json, micro.csv and micro.md into the output directory.

Against real DPUs (--devices, servers already running there; --dpu-host for
ucx_perftest's server side and the MPI ping-pong's second rank on the DPU),
the rows that only make sense on one machine (our transport alone, TCP
loopback) are left out and nothing is pinned on the host.
"""
import argparse
import csv
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(msg):
    print(f"[micro] {msg}", file=sys.stderr, flush=True)


def run_json(cmd, env=None, timeout=900):
    """Run cmd, return the JSON objects it printed, one per line."""
    log(" ".join(cmd))
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    out = []
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out, p.stderr


def run_benchmark(cmd, env):
    """Run the Google Benchmark program; returns its medians as our items.

    Each item: name, unit (us, GB/s or regions/s), median and stddev over
    the repetitions."""
    log(" ".join(cmd))
    p = subprocess.run(cmd + ["--benchmark_format=json"], env=env, capture_output=True,
                       text=True, timeout=900)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    doc = json.loads(p.stdout)
    errors = [b["run_name"] + ": " + b.get("error_message", "") for b in doc["benchmarks"]
              if b.get("error_occurred")]
    if errors:
        raise RuntimeError("benchmark errors: " + "; ".join(errors))

    def value(b):
        name = b["run_name"].split("/")[0]
        if "regions_per_s" in b:
            return name, "regions/s", b["regions_per_s"]
        if name.startswith(("launch_", "small_maps", "layer_")):
            scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
            return name, "us", b["real_time"] * scale
        return name, "GB/s", b["bytes_per_second"] / 1e9

    items = {}
    for b in doc["benchmarks"]:
        kind = b.get("aggregate_name")
        if kind not in ("median", "stddev"):
            continue
        name, unit, v = value(b)
        it = items.setdefault(name, {"name": name, "unit": unit})
        it[kind] = v
        m = re.search(r"_(\d+)$", name)
        it["bytes"] = int(m.group(1)) if m and unit == "GB/s" else 0
    return list(items.values()), p.stderr


def is_local(host):
    return host in ("localhost", "127.0.0.1", "::1")


def perftest(test, size, iters, cores, env=None, peer=None):
    """One ucx_perftest run; returns (latency_us, bandwidth_GBps).

    Without peer: on loopback, the two sides pinned to the two cores. With
    peer (a real DPU's Arm side): its server side started there over ssh
    (here when peer is localhost), this side unpinned, as the offload runs."""
    if peer is None:
        server, client, to = ["taskset", "-c", cores[1]], ["taskset", "-c", cores[0]], "127.0.0.1"
    else:
        server, client, to = ([] if is_local(peer) else ["ssh", peer]), [], peer
    # A busy machine may start the server side late, or its port may be
    # taken: a few tries, each on a fresh port.
    failure = ""
    for attempt in range(3):
        # Below the ephemeral range (32768 on Linux), where no socket of ours holds it.
        port = random.randint(20000, 32000)
        srv = subprocess.Popen(server + ["ucx_perftest", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            time.sleep((0.5 if peer is None or is_local(peer) else 2.0) * (attempt + 1))
            cmd = client + ["ucx_perftest", to, "-p", str(port),
                            "-t", test, "-s", str(size), "-n", str(iters)]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
            m = [l for l in p.stdout.splitlines() if l.startswith("Final:")]
            if p.returncode == 0 and m:
                srv.wait(timeout=30)
                f = m[0].split()
                # Final: iters lat50 lat_avg lat_overall bw_avg bw_overall rate_avg rate_overall
                # Means over the whole run, like ompdpu's loops (a median of single
                # iterations would hide the scheduling noise both sides pay).
                lat = float(f[4])                # one-way latency, us (half a round trip)
                bw = float(f[6]) * 2**20 / 1e9   # MB/s (2^20 bytes) -> GB/s
                return lat, bw
            failure = f"{p.stdout[-500:]} {p.stderr[-500:]}"
            log(f"ucx_perftest {test} failed (try {attempt + 1} of 3)")
        finally:
            if srv.poll() is None:
                srv.kill()
                srv.wait()
    raise RuntimeError(f"ucx_perftest {test} failed three times: {failure}")


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def version_micro(build, major):
    """ompdpu-offload-micro compiled with LLVM `major`'s clang and linked
    against its libomp and libomptarget (14: the build's own). The toolchain
    comes from tests/llvm-versions/run.sh --print-toolchain (15, 16: Debian
    12's packages, unpacked; 19: clang-19 with its libomp unpacked, and the
    rebuilt libomptarget 19 that `ompdpu run` picks)."""
    if major == 14:
        return os.path.join(build, "bin", "ompdpu-offload-micro")
    p = subprocess.run(["bash", os.path.join(ROOT, "tests", "llvm-versions", "run.sh"),
                        "--build", build, "--print-toolchain", str(major)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"run_micro: no LLVM {major} toolchain:\n{p.stderr[-2000:]}")
    tc = p.stdout.strip().splitlines()[-1]
    lib = os.path.join(tc, "lib")
    clangxx = (f"/usr/bin/clang++-{major}" if major >= 19
               else os.path.join(tc, "bin", "clang++"))
    src = os.path.join(ROOT, "benchmarks", "micro", "offload_micro.cpp")
    out = os.path.join(build, "benchmarks", "micro", f"llvm{major}", "ompdpu-offload-micro")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    # RUNPATH (not RPATH): `ompdpu run`'s library path must come first.
    cmd = [clangxx, "-std=c++17", "-O2", "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu",
           "-Wno-unused-command-line-argument", "-I" + os.path.join(lib, "clang", str(major), "include"),
           "-L" + lib, "-Wl,-rpath," + lib, "-Wl,--enable-new-dtags", src, "-o", out,
           "-lbenchmark", "-lpthread"]
    if not os.path.exists(out) or os.path.getmtime(out) < max(
            os.path.getmtime(src), os.path.getmtime(os.path.join(os.path.dirname(src), "micro_common.h"))):
        log(" ".join(cmd))
        c = subprocess.run(cmd, capture_output=True, text=True)
        if c.returncode != 0:
            sys.exit(f"run_micro: cannot build the LLVM {major} benchmark:\n{c.stderr[-3000:]}")
    return out


def per_version(args, majors):
    """The empty region and the 8-map region of each LLVM version, with that
    version's clang and libomptarget: ompdpu (one emulated DPU on its own
    core), the version's own host plugin (in-process) and ucx_perftest's
    ucp_am_lat round trip, in turns (args.reps rounds), so that the
    machine's drift moves all three alike. Medians and per-round ratios."""
    b = args.build
    ompdpu = os.path.join(b, "bin", "ompdpu")
    ncpu = len(os.sched_getaffinity(0))
    cores = ["0", "1"] if ncpu >= 2 else ["0", "0"]
    q = ["--quick"] if args.quick else []
    env = dict(os.environ, OMP_TARGET_OFFLOAD="mandatory")
    env.pop("OMPDPU_DEVICES", None)
    on_dpu = [ompdpu, "run", "--emulate", "1", "--pin", "--"]
    names = ("launch_empty_sync", "small_maps_8x64B")
    both = "--benchmark_filter=" + "|".join(names)
    n_lat = 200000 if args.quick else 1000000
    micros = {m: version_micro(b, m) for m in majors}
    rounds = {m: [] for m in majors}
    for r in range(args.reps):
        for m in majors:
            items, err = run_benchmark(on_dpu + [micros[m], "all", both] + q, env=env)
            got = re.search(r"regions run in process (\d+), host process (\d+)", err)
            if got and got.group(1) == got.group(2):
                sys.exit(f"run_micro: LLVM {m}: regions ran in the host process: ompdpu was not used")
            ours = {it["name"]: it["median"] for it in items}
            items, _ = run_benchmark(["taskset", "-c", cores[0], micros[m], "all", both] + q,
                                     env=env)
            host = {it["name"]: it["median"] for it in items}
            rtt = 2 * perftest("ucp_am_lat", 8, n_lat, cores)[0]
            rounds[m].append({"ompdpu": ours, "host": host, "rtt": rtt})
    res = {}
    lines = ["| LLVM | region | ompdpu (us) | host plugin (us) | ucx_perftest RTT (us) | ompdpu / RTT |",
             "|---|---|---|---|---|---|"]
    for m in majors:
        rs = rounds[m]
        for name, what in (("launch_empty_sync", "empty"), ("small_maps_8x64B", "8 maps")):
            o = median([x["ompdpu"][name] for x in rs])
            h = median([x["host"][name] for x in rs])
            t = median([x["rtt"] for x in rs])
            ratio = median([x["ompdpu"][name] / x["rtt"] for x in rs])
            res[f"llvm{m}_{name}"] = {"ompdpu_us": o, "hostplugin_us": h, "ucx_rtt_us": t,
                                      "ratio_to_rtt": ratio, "rounds": rs}
            lines.append(f"| {m} | {what} | {o:.2f} | {h:.2f} | {t:.2f} | {ratio:.2f} |")
    md = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "micro-llvm.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(args.out, "micro-llvm.md"), "w") as f:
        f.write(md)
    print(md, end="")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "report"))
    ap.add_argument("--quick", action="store_true", help="fewer iterations (CI)")
    ap.add_argument("--reps", type=int, default=7,
                    help="launch pairs (ompdpu and ucx_perftest in turns); bandwidth: reps // 2, at least 3")
    real = ap.add_argument_group("real DPUs (default: emulated DPUs on this machine)")
    real.add_argument("--devices", default="",
                      help="ompdpu-server addresses on real DPUs, host:port,... (the first for "
                           "everything, the first two for device to device)")
    real.add_argument("--dpu-host", default="",
                      help="the first DPU's Arm side, reached by ssh and by UCX: ucx_perftest's "
                           "server side and the MPI ping-pong's second rank run there "
                           "(localhost: here)")
    real.add_argument("--dpu-bin", default="",
                      help="directory on the DPU holding ompdpu-mpi-pingpong built there "
                           "(benchmarks/suite/build-dpu-ranks.sh)")
    ap.add_argument("--llvm", default="",
                    help="only the empty and the 8-map region, for each of these LLVM versions "
                         "(e.g. 14,15,16,19), against that version's host plugin and "
                         "ucx_perftest in turns; writes micro-llvm.md and .json")
    args = ap.parse_args()
    if args.llvm:
        os.makedirs(args.out, exist_ok=True)
        return per_version(args, [int(v) for v in args.llvm.split(",") if v])
    devices = [d for d in args.devices.split(",") if d]
    peer = args.dpu_host or None
    os.makedirs(args.out, exist_ok=True)
    b = args.build
    micro = os.path.join(b, "bin", "ompdpu-offload-micro")
    ompdpu = os.path.join(b, "bin", "ompdpu")
    pingpong = os.path.join(b, "bin", "ompdpu-mpi-pingpong")
    for f in (micro, ompdpu, os.path.join(b, "bin", "ompdpu-launch-layers")):
        if not os.path.exists(f):
            sys.exit(f"run_micro: {f} is missing: build first (cmake --build {b})")
    ncpu = len(os.sched_getaffinity(0))
    cores = ["0", "1"] if ncpu >= 2 else ["0", "0"]
    q = ["--quick"] if args.quick else []
    res = {}

    def put(items, prefix=""):
        for it in items:
            res[prefix + it["name"]] = it

    env = dict(os.environ, OMP_TARGET_OFFLOAD="mandatory")
    env.pop("OMPDPU_DEVICES", None)
    if devices:
        # Real DPUs: servers the user started; nothing pinned on the host.
        on_dpu = [ompdpu, "run", "--devices", devices[0], "--"]
        on_two = [ompdpu, "run", "--devices", ",".join(devices[:2]), "--"] \
            if len(devices) >= 2 else None
        if peer is None:
            log("no --dpu-host: no ucx_perftest reference and no MPI ping-pong (their ratios are "
                "left empty)")
    else:
        # `ompdpu run`: one emulated DPU pinned to one core, the program to the other.
        on_dpu = [ompdpu, "run", "--emulate", "1", "--pin", "--"]
        on_two = [ompdpu, "run", "--emulate", "2", "--"]
    # Where ucx_perftest's server side runs: loopback on the other core, or
    # the real DPU (None then: not measured).
    ucx_peer = peer if devices else None
    have_ucx = not devices or peer is not None
    # 1. ompdpu, one emulated DPU on its own core, the program on the other.
    items, err = run_benchmark(on_dpu + [micro] + q, env=env)
    if "regions run in process" in err:
        m = re.search(r"regions run in process (\d+), host process (\d+)", err)
        if m and m.group(1) == m.group(2):
            sys.exit("run_micro: regions ran in the host process: ompdpu was not used")
    put(items)
    # 2. device to device between two emulated DPUs (two real ones if given).
    if on_two:
        items, _ = run_benchmark(on_two + [micro, "d2d"] + q, env=env)
        put(items)
    else:
        log("one device: no device-to-device rows")
    # 3. LLVM's own host plugin: the in-process floor of launch cost. It
    # needs x86_64 device images: a build for real DPUs (aarch64 images) has
    # none, and these rows are then left out.
    host_env = dict(env)
    host_env.pop("OMPDPU_DEVICES", None)

    def on_host_plugin(what, prefix, environ=host_env, extra=()):
        try:
            items, _ = run_benchmark(["taskset", "-c", cores[0], micro, what, *extra] + q,
                                     env=environ)
            put(items, prefix)
        except RuntimeError as e:
            if not devices:
                raise
            log(f"no '{prefix}{what}' rows: LLVM's host plugin cannot run this build's device "
                f"images ({str(e).splitlines()[-1] if str(e) else e})")

    on_host_plugin("launch", "hostplugin_")
    on_host_plugin("maps", "hostplugin_")
    # Plain memcpy: no region runs on a device (offload not mandatory, so
    # that a build with aarch64 images runs it too).
    items, _ = run_benchmark(["taskset", "-c", cores[0], micro, "memcpy"],
                             env={k: x for k, x in host_env.items() if k != "OMP_TARGET_OFFLOAD"})
    put(items)
    # 3a'. nowait regions with libomp's hidden helper threads off
    # (LIBOMP_USE_HIDDEN_HELPER_TASK=0, as the suite runs): by default LLVM
    # 14 hands each nowait region to one of eight hidden helper threads, and
    # on the program's one core their scheduling sets the rate, with LLVM's
    # own plugin as with ours. Off, a nowait region costs a synchronous one.
    no_helpers = "--benchmark_filter=launch_nowait_rate"
    items, _ = run_benchmark(on_dpu + [micro, "launch", no_helpers] + q,
                             env=dict(env, LIBOMP_USE_HIDDEN_HELPER_TASK="0"))
    put(items, "nohelpers_")
    on_host_plugin("launch", "nohelpers_hostplugin_",
                   dict(host_env, LIBOMP_USE_HIDDEN_HELPER_TASK="0"), [no_helpers])
    # 3a. The maps region without libomptarget's map events
    # (LIBOMPTARGET_MAP_FORCE_ATOMIC=false, LLVM's own switch): what the
    # events, one per new mapping, cost.
    noevents_env = dict(env, LIBOMPTARGET_MAP_FORCE_ATOMIC="false")
    items, _ = run_benchmark(on_dpu + [micro, "maps"] + q, env=noevents_env)
    put(items, "noevents_")
    both = "--benchmark_filter=launch_empty_sync|small_maps"
    # 3b. The same two regions with libomptarget built from llvm-patches/
    # (llvm-patches/apply-and-test.sh --build-only; scripts/bench.sh does it),
    # when that library exists: how much of the maps region the patches save.
    patched = os.path.join(b, "llvm-patches", "patched")
    if os.path.exists(os.path.join(patched, "libomptarget.so")):
        patched_env = dict(env, LD_LIBRARY_PATH=patched)
        items, _ = run_benchmark(on_dpu + [micro, "all", both] + q, env=patched_env)
        put(items, "patched_")
        on_host_plugin("maps", "patched_hostplugin_", dict(host_env, LD_LIBRARY_PATH=patched))
        items, _ = run_benchmark(on_dpu + [micro, "maps"] + q,
                                 env=dict(patched_env, LIBOMPTARGET_MAP_FORCE_ATOMIC="false"))
        put(items, "patched_noevents_")
    else:
        log(f"no {patched}/libomptarget.so: no rows for llvm-patches/ "
            "(llvm-patches/apply-and-test.sh --build-only builds it)")
    # 3c. The same two regions over TCP loopback (UCX_TLS=tcp,self): a round
    # trip as long as a network's, as to a real DPU, against ucx_perftest's
    # round trip on the same transport. libomptarget's bookkeeping for the
    # maps is the same microseconds on either transport; how the maps region
    # compares with the empty one depends on the round trip it is added to.
    # (Emulated DPUs only: a real DPU's round trip is already a network's.)
    if not devices:
        tcp_env = dict(env, UCX_TLS="tcp,self")
        items, _ = run_benchmark(on_dpu + [micro, "all", both] + q, env=tcp_env)
        put(items, "tcp_")
        res["tcp_ucx_am_rtt_8B"] = {
            "name": "tcp_ucx_am_rtt_8B", "unit": "us",
            "median": 2 * perftest("ucp_am_lat", 8, 20000 if args.quick else 100000, cores,
                                   env=dict(os.environ, UCX_TLS="tcp,self"))[0]}
    # 3d. The launch layer by layer: our transport alone (two processes on
    # the two cores, as ucx_perftest; emulated DPUs only), then the protocol
    # client with the session and the plugin's device logic against the DPU.
    layers = os.path.join(b, "bin", "ompdpu-launch-layers")
    if not devices:
        items, _ = run_benchmark([layers, "transport", "--cores", ",".join(cores)] + q, env=env)
        put(items)
    items, _ = run_benchmark(on_dpu + [layers, "device"] + q, env=env)
    put(items)
    # 4. The launch ratio: ompdpu's empty region and ucx_perftest's round trip
    # (same pinning) measured in turns, one ratio per pair, so that the
    # machine's speed drifting during the run moves both sides alike.
    # ucx_perftest runs about as long as ompdpu's side of the pair (7 x 0.3 s,
    # or 7 x 0.05 s quick): with 100,000 round trips (65 ms) its result
    # alone moved by 0.17 us between runs, with 1,000,000 by 0.07 us.
    n_lat = 200000 if args.quick else 1000000
    pairs = []
    for _ in range(args.reps):
        items, _ = run_benchmark(on_dpu + [micro, "launch", "--benchmark_filter=launch_empty_sync"] + q,
                                 env=env)
        ours = next(it["median"] for it in items if it["name"] == "launch_empty_sync")
        rtt = 2 * perftest("ucp_am_lat", 8, n_lat, cores, peer=ucx_peer)[0] if have_ucx else float("nan")
        pairs.append((ours, rtt))
    if have_ucx:
        res["ucx_am_rtt_8B"] = {"name": "ucx_am_rtt_8B", "unit": "us",
                                "median": median([r for _, r in pairs])}
    res["launch_empty_sync_paired"] = {"name": "launch_empty_sync_paired", "unit": "us",
                                       "median": median([o for o, _ in pairs]),
                                       "pairs": pairs,
                                       "ratio": median([o / r for o, r in pairs])}
    sizes = [1 << 20, 16 << 20] + ([] if args.quick else [256 << 20])
    for s in sizes:
        iters = 2000 if s <= (1 << 20) else (100 if s <= (16 << 20) else 10)
        if args.quick:
            iters = max(5, iters // 4)
        for test in ("ucp_am_bw", "ucp_put_bw", "ucp_get") if have_ucx else ():
            bws = [perftest(test, s, iters, cores, peer=ucx_peer)[1]
                   for _ in range(max(3, args.reps // 2))]
            key = f"ucx_{test[4:]}_{s}"
            res[key] = {"name": key, "unit": "GB/s", "median": median(bws), "bytes": s}
    # 5. The bulk path: the lanes of the bulk endpoint, as OMPDPU_TRACE=1
    # prints them, for a 16 MiB transfer each way. Zero copy: a rendezvous
    # whose data moves over cma on one machine (one copy, by the kernel,
    # between the two processes' memory), not through shared-memory FIFOs;
    # over RDMA to a real DPU (rc/dc/ud verbs), by the NIC.
    _, trace = run_benchmark(on_dpu + [micro, "bandwidth",
                                       "--benchmark_filter=(h2d|d2h)_update_16777216"] + q,
                             env=dict(env, OMPDPU_TRACE="1"))
    lane = re.search(r"lane\[\d+\]:\s*\d+:((cma|rc_\w+|dc_\w+|ud_\w+)/\S+).*rma_bw", trace)
    rndv = re.search(r"am_send:.*<rndv>", trace) is not None
    res["bulk_zero_copy"] = {"name": "bulk_zero_copy", "unit": "",
                             "median": float(bool(lane) and rndv),
                             "lane": lane.group(1) if lane else "", "rendezvous": rndv}
    # 6. Open MPI ping-pong over UCX (the pml this machine can use); with a
    # real DPU, between this host and the DPU's Arm side.
    if devices and peer is not None and not is_local(peer):
        if not args.dpu_bin:
            log("no --dpu-bin: no MPI ping-pong with the DPU")
        else:
            items, _ = run_json(["mpirun", "--allow-run-as-root", "--mca", "pml", "ucx",
                                 "-np", "1", "-H", "localhost", pingpong] + q +
                                [":", "-np", "1", "-H", peer,
                                 os.path.join(args.dpu_bin, "ompdpu-mpi-pingpong")] + q)
            put(items)
    elif (not devices or peer is not None) and os.path.exists(pingpong) and shutil.which("mpirun"):
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "core",
               "--cpu-set", ",".join(cores), "--mca", "pml", "ucx", "--mca", "pml_ucx_devices", "any",
               "--mca", "pml_ucx_tls", "any", "-np", "2", pingpong] + q
        try:
            items, _ = run_json(cmd)
            put(items)
        except RuntimeError as e:
            log(f"MPI ping-pong over pml ucx failed, using ob1/vader: {e}")
            cmd = [c for c in cmd if c not in ("ucx", "pml_ucx_devices", "pml_ucx_tls", "any")]
            items, _ = run_json(["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "pml", "ob1",
                                 "--mca", "btl", "self,vader", "-np", "2", pingpong] + q)
            put(items)

    def v(k):
        return res[k]["median"] if k in res else float("nan")

    rows = []

    def row(what, value, unit, ref=None, ref_name="", target="", ratio=None):
        if ratio is None:
            ratio = value / ref if ref else float("nan")
        rows.append({"what": what, "value": value, "unit": unit, "reference": ref_name,
                     "ref_value": ref if ref is not None else float("nan"), "ratio": ratio, "target": target})

    launch = v("launch_empty_sync")
    paired = res["launch_empty_sync_paired"]
    row(f"empty target region, round trip ({len(paired['pairs'])} runs in turns with the reference; "
        "ratio: median of the pairs' ratios)", paired["median"], "us", v("ucx_am_rtt_8B"),
        "ucx_perftest ucp_am_lat round trip", "<= 1.5x", ratio=paired["ratio"])
    row("empty target region, LLVM host plugin (in-process)", v("hostplugin_launch_empty_sync"), "us")
    rtt = v("ucx_am_rtt_8B")
    if "layer_transport" in res:
        row("  by layer: our transport alone (16-byte frame, 24-byte answer)", v("layer_transport"),
            "us", rtt, "ucx_perftest ucp_am_lat round trip")
    row("  by layer: + protocol client and session (a Run through client::Connection)",
        v("layer_client"), "us", rtt, "ucx_perftest ucp_am_lat round trip")
    row("  by layer: + plugin device logic (DpuDevice launch + synchronize)", v("layer_device"), "us",
        rtt, "ucx_perftest ucp_am_lat round trip")
    row("  by layer: + libomptarget (the empty region, same program run as the maps)", launch, "us",
        rtt, "ucx_perftest ucp_am_lat round trip")
    row("nowait regions in flight", v("launch_nowait_rate"), "regions/s",
        v("hostplugin_launch_nowait_rate"), "LLVM host plugin, same loop (libomp's own limit on one core)")
    row("nowait regions, LIBOMP_USE_HIDDEN_HELPER_TASK=0 (no hidden helper threads: "
        "each costs a synchronous region)", v("nohelpers_launch_nowait_rate"), "regions/s",
        v("nohelpers_hostplugin_launch_nowait_rate"), "LLVM host plugin, same loop")
    row("same 8-map region, LLVM host plugin (libomptarget's own bookkeeping)",
        v("hostplugin_small_maps_8x64B"), "us")
    row("region with 8 x 64 B map(to) + map(from) scalar", v("small_maps_8x64B"), "us", launch,
        "empty region", "<= 2x")
    if "small_maps_struct_ptr" in res:
        row("region with a struct and its pointee, map(tofrom: s, s.p[0:8]) (the struct's "
            "retrieve lands before libomptarget restores its host pointer)",
            v("small_maps_struct_ptr"), "us", launch, "empty region")
        row("  same struct region, LLVM host plugin", v("hostplugin_small_maps_struct_ptr"), "us")
    row("  same 8-map region, LIBOMPTARGET_MAP_FORCE_ATOMIC=false (no map events)",
        v("noevents_small_maps_8x64B"), "us", launch, "empty region")
    if "patched_small_maps_8x64B" in res:
        row("  same 8-map region, libomptarget 14 with llvm-patches/ applied",
            v("patched_small_maps_8x64B"), "us", v("patched_launch_empty_sync"),
            "empty region, same libomptarget")
        row("  same 8-map region, LLVM host plugin, libomptarget 14 with llvm-patches/ applied",
            v("patched_hostplugin_small_maps_8x64B"), "us", v("hostplugin_small_maps_8x64B"),
            "LLVM host plugin, stock libomptarget")
        row("  same 8-map region, llvm-patches/ applied and LIBOMPTARGET_MAP_FORCE_ATOMIC=false",
            v("patched_noevents_small_maps_8x64B"), "us", v("patched_launch_empty_sync"),
            "empty region, same libomptarget")
        row("  empty region, libomptarget 14 with llvm-patches/ applied",
            v("patched_launch_empty_sync"), "us", launch, "empty region, stock libomptarget")
    if "tcp_launch_empty_sync" in res:
        row("over TCP loopback (UCX_TLS=tcp,self): empty region", v("tcp_launch_empty_sync"), "us",
            v("tcp_ucx_am_rtt_8B"), "ucx_perftest ucp_am_lat round trip over TCP")
        row("over TCP loopback: region with 8 x 64 B map(to) + map(from) scalar",
            v("tcp_small_maps_8x64B"), "us", v("tcp_launch_empty_sync"), "empty region over TCP")
    row("MPI ping-pong RTT, 8 B", v("mpi_rtt_8B"), "us")
    for s in [4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20]:
        if f"h2d_update_{s}" not in res:
            continue
        big = s >= (1 << 20)
        ref = v(f"ucx_am_bw_{s}") if big else None
        name = f"{s >> 20} MiB" if s >= (1 << 20) else f"{s >> 10} KiB"
        row(f"host->device target update {name}", v(f"h2d_update_{s}"), "GB/s", ref,
            "ucx_perftest ucp_am_bw" if big else "", ">= 0.85x" if big else "")
        row(f"device->host target update {name}", v(f"d2h_update_{s}"), "GB/s", ref,
            "ucx_perftest ucp_am_bw" if big else "", ">= 0.85x" if big else "")
        row(f"host->device omp_target_memcpy {name}", v(f"h2d_memcpy_{s}"), "GB/s")
        row(f"device->host omp_target_memcpy {name}", v(f"d2h_memcpy_{s}"), "GB/s")
        if f"mpi_bw_{s}" in res:
            row(f"  vs Open MPI ping-pong {name}", v(f"h2d_update_{s}"), "GB/s", v(f"mpi_bw_{s}"),
                "MPI ping-pong bandwidth", ">= 1x" if big else "")
        if big:
            row(f"  ucx_perftest ucp_put_bw / ucp_get {name}", v(f"ucx_put_bw_{s}"), "GB/s",
                v(f"ucx_get_{s}"), "ucp_get")
    for s in [64 << 10, 1 << 20, 16 << 20]:
        if f"d2d_memcpy_{s}" in res:
            name = f"{s >> 20} MiB" if s >= (1 << 20) else f"{s >> 10} KiB"
            row(f"device->device omp_target_memcpy {name}", v(f"d2d_memcpy_{s}"), "GB/s")
    row("host memcpy 64 MiB (physical ceiling)", v("host_memcpy_64MiB"), "GB/s")
    zc = res["bulk_zero_copy"]
    row("bulk data zero copy: rendezvous (%s) over a cma or RDMA lane (%s): one copy by the kernel "
        "or the NIC, none in user space" % ("yes" if zc["rendezvous"] else "NO",
                                          zc["lane"] or "NO"),
        "yes" if zc["median"] else "NO", "", target="zero copy")

    def verdict(r):
        """The target cell with whether this run met it."""
        t = r["target"]
        m = re.fullmatch(r"(<=|>=) ([0-9.]+)x", t)
        if m:
            x, bound = r["ratio"], float(m.group(2))
            if x != x:
                return f"{t}: not measured", None
            met = x <= bound if m.group(1) == "<=" else x >= bound
        elif t == "zero copy":
            met = r["value"] == "yes"
        else:
            return t, None
        return f"{t}: {'met' if met else 'NOT met'}", met

    def fmt(x):
        if isinstance(x, str):
            return x
        return "-" if x != x else (f"{x:.2f}" if abs(x) < 1000 else f"{x:.0f}")

    lines = ["| measurement | median | unit | reference | reference median | ratio | target |",
             "|---|---:|---|---|---:|---:|---|"]
    missed = []
    checked = unmeasured = 0
    for r in rows:
        r["target"], met = verdict(r)
        unmeasured += r["target"].endswith("not measured")
        if met is not None:
            checked += 1
            if not met:
                missed.append(f"{r['what']} ({fmt(r['ratio']) if r['ratio'] == r['ratio'] else r['value']})")
        lines.append(f"| {r['what']} | {fmt(r['value'])} | {r['unit']} | {r['reference']} | "
                     f"{fmt(r['ref_value'])} | {fmt(r['ratio'])} | {r['target']} |")
    lines.append("")
    lines.append(f"Targets met in this run: {checked - len(missed)} of {checked}." +
                 (" Not met: " + "; ".join(missed) + "." if missed else "") +
                 (f" Not measured (no reference): {unmeasured}." if unmeasured else ""))
    table = "\n".join(lines)
    print(table)
    where = (f"DPUs at {', '.join(devices)}" if devices
             else "emulated DPUs (ompdpu-server on loopback)")
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": ncpu,
            "machine": os.uname().machine, "quick": args.quick, "devices": where}
    with open(os.path.join(args.out, "micro.json"), "w") as f:
        json.dump({"meta": meta, "measurements": res, "table": rows}, f, indent=1)
    with open(os.path.join(args.out, "micro.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(args.out, "micro.md"), "w") as f:
        f.write(f"Micro-benchmarks, {meta['date']}, {ncpu} CPUs ({meta['machine']}), {where}"
                f"\n\n{table}\n")
    log(f"wrote {args.out}/micro.json, micro.csv, micro.md")


if __name__ == "__main__":
    main()
