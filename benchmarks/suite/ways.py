"""The ways of each workload as commands (host, offload, mpi, offload-mpi),
and a workload's runs: every way x repetitions, interleaved."""
import os
import shlex
import subprocess
import sys
import time

import runs
from runs import SuiteError, log, run
from servers import EmulatedServers, ExternalServers, cpulist

class Suite:
    def __init__(self, args):
        self.a = args
        self.build = os.path.abspath(args.build)
        self.bin = os.path.join(self.build, "bin")
        self.records = []
        self.failures = []
        self.notes = []
        self.meta = {}
        self.retried = 0
        pml = (["--mca", "pml", "ucx", "--mca", "pml_ucx_devices", "any", "--mca", "pml_ucx_tls", "any"]
               if args.mpi_pml == "ucx" else ["--mca", "pml", "ob1", "--mca", "btl", "self,vader"])
        self.mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                       "--mca", "mpi_yield_when_idle", "1"] + pml
        self.lib_path = ":".join([os.path.join(self.build, "lib", "ompdpu", "emulated"),
                                  os.path.join(self.build, "lib", "ompdpu"),
                                  os.path.join(self.build, "lib")])
        # Real DPUs: the aarch64-named plugin only (see README, "On a real BlueField-2").
        self.real_lib_path = ":".join([os.path.join(self.build, "lib", "ompdpu"), os.path.join(self.build, "lib")])

    def exe(self, name):
        path = os.path.join(self.bin, name)
        if not os.path.exists(path):
            raise SuiteError(f"{path} is missing: build the 'suite' target first")
        return path

    def base_env(self, threads):
        env = dict(os.environ)
        env["OMP_NUM_THREADS"] = str(threads)
        env.pop("OMPDPU_DEVICES", None)
        return env

    def offload_env(self, threads, addrs):
        env = self.base_env(threads)
        env["LD_LIBRARY_PATH"] = (self.real_lib_path if self.a.devices else self.lib_path) + ":" + \
            env.get("LD_LIBRARY_PATH", "")
        env["OMPDPU_DEVICES"] = ",".join(addrs)
        env["OMP_TARGET_OFFLOAD"] = "mandatory"
        # target nowait as an ordinary task of the program's team, not on a
        # hidden helper thread (see augment.c: on a one-core host a thread
        # waiting for a hidden helper task spins without yielding).
        env["LIBOMP_USE_HIDDEN_HELPER_TASK"] = "0"
        return env

    def pinned(self, cores, prog, args, threads):
        pin = ["taskset", "-c", cpulist(cores)] if cores else []
        return pin + ["env", f"OMP_NUM_THREADS={threads}", prog] + args

    # -- the ways of each workload, as commands --------------------------

    def commands(self, wl, args, host, dpus, servers, mpi_servers):
        """{way: (cmd, env)} for workload wl with program arguments args."""
        a = self.a
        real = bool(a.devices)
        nh = a.host_threads or len(host)
        nd = a.dpu_threads or len(dpus[0])

        def on_host(prog, pargs):
            """The host side of a non-MPI way (pinned to the host's cores)."""
            return ([] if real else ["taskset", "-c", cpulist(host)]) + [self.exe(prog)] + pargs

        def host_ranks(n, prog, pargs):
            """An MPI app context of n host ranks."""
            where = ["-H", f"{a.host_name}:{n}"] if real else []
            return ["-np", str(n)] + where + self.pinned(None if real else host, self.exe(prog), pargs, nh)

        def dpu_rank(r, prog, pargs):
            """The app context of the MPI rank on DPU r."""
            if real:
                return ["-np", "1", "-H", a.dpu_hosts[r % len(a.dpu_hosts)], "env", f"OMP_NUM_THREADS={nd}",
                        os.path.join(a.dpu_bin, prog)] + pargs
            return ["-np", "1"] + self.pinned(dpus[r], self.exe(prog), pargs, nd)

        prog = {"augment": "suite-augment", "conv": "suite-conv"}
        cmds = {}
        if wl in ("augment", "conv"):
            p = prog[wl]
            cmds["host"] = (on_host(p, ["--mode", "host"] + args), self.base_env(nh))
            # The augmentation's carrier thread shares the core with the
            # training loop, which waits for each region: it sleeps at once
            # rather than polling the core away, and its wake-ups preempt the
            # training (benchmarks/suite/README.md, "Reading the results").
            carrier = ["env", "OMPDPU_SPIN_US=0", "OMPDPU_WAKE_SLICE_US=100"] if wl == "augment" else []
            cmds["offload"] = (carrier + on_host(p, ["--mode", "offload"] + args),
                               self.offload_env(nh, servers.addrs[:1]))
            cmds["mpi"] = (self.mpirun + host_ranks(1, p + "-mpi-host", args) + [":"] +
                           dpu_rank(0, p + "-mpi-dpu", args), self.base_env(nh))
        elif wl == "halo":
            k = len(dpus)
            cmds["host"] = (self.mpirun + host_ranks(k, "suite-halo-mpi-host", args + ["--way", "host"]),
                            self.base_env(nh))
            cmds["offload"] = (on_host("suite-halo-offload", args), self.offload_env(nh, servers.addrs))
            mpi = self.mpirun + host_ranks(k, "suite-halo-mpi-host", args + ["--way", "dpu"])
            for r in range(k):
                mpi += [":"] + dpu_rank(r, "suite-halo-mpi-dpu", args)
            cmds["mpi"] = (mpi, self.base_env(nh))
            if mpi_servers is not None:
                # Host process r talks to server rank r: the plugin takes
                # its local rank's share of the devices.
                env = self.offload_env(nh, mpi_servers.addrs)
                env["OMPDPU_DEVICE_SHARE"] = "local-rank"
                if not real and k > len(host):
                    # k host processes share the host's cores: waiting ones
                    # yield, as the MPI baseline's ranks do
                    # (mpi_yield_when_idle; halo 2048^2: 1.04-1.08x -> 1.00-1.02x).
                    env["OMPDPU_YIELD"] = "1"
                cmds["offload-mpi"] = (self.mpirun + ["-np", str(k)] +
                                       (["-H", f"{a.host_name}:{k}"] if real else ["taskset", "-c", cpulist(host)]) +
                                       [self.exe("suite-halo-offload-mpi")] + args, env)
        return cmds

    # -- a workload: all ways x reps, interleaved ------------------------

    def workload(self, name, wl, args, ndpus, reps, progress):
        if self.a.devices:
            return self.workload_real(name, wl, args, ndpus, reps, progress)
        servers = EmulatedServers(self.build, ndpus, self.a.cores_per_dpu, verbose=self.a.verbose)
        host, dpus = servers.host, servers.dpus
        plan = {"host_cores": cpulist(host), "dpu_cores": [cpulist(d) for d in dpus],
                "dpus_share_cores": servers.shared}
        self.meta.setdefault("core_plans", {})[name] = plan
        log(f"{name}: host cores {plan['host_cores']}, DPU cores {plan['dpu_cores']}"
            + (" (the DPUs share them: too few cores)" if servers.shared and ndpus > 1 else ""))
        mpi_servers = None
        try:
            if wl == "halo" and not self.a.no_mpi_servers:  # offload-mpi way
                mpi_servers = self.try_mpi_servers(ndpus)
            self.run_ways(name, wl, args, reps, progress, host, dpus, servers, mpi_servers)
        finally:
            servers.stop()
            if mpi_servers:
                mpi_servers.stop()

    def workload_real(self, name, wl, args, ndpus, reps, progress):
        """Real DPUs: servers the user started (--devices, and for the halo
        offload-mpi way --mpi-server-devices); no pinning on the host."""
        if len(self.a.devices) < ndpus:
            raise SuiteError(f"{name}: {ndpus} DPU(s) needed, --devices gives {len(self.a.devices)}")
        servers = ExternalServers(self.a.devices[:ndpus])
        mpi_servers = ExternalServers(self.a.mpi_server_devices[:ndpus]) \
            if wl == "halo" and len(self.a.mpi_server_devices) >= ndpus else None
        self.meta.setdefault("core_plans", {})[name] = {"host_cores": "all", "dpu_cores": ["DPU"] * ndpus,
                                                      "dpus_share_cores": False}
        self.run_ways(name, wl, args, reps, progress, [], [[]] * ndpus, servers, mpi_servers)

    def run_ways(self, name, wl, args, reps, progress, host, dpus, servers, mpi_servers):
        cmds = self.commands(wl, args, host, dpus, servers, mpi_servers)
        ways = list(cmds)
        self.meta.setdefault("commands", {})[name] = {w: shlex.join(c) for w, (c, _) in cmds.items()}
        for rep in range(reps):
            order = ways[rep % len(ways):] + ways[:rep % len(ways)]
            for way in order:
                progress[0] += 1
                cmd, env = cmds[way]
                what = f"{name} {way} (rep {rep + 1}/{reps})"
                if not servers.alive() or (mpi_servers and not mpi_servers.alive()):
                    raise SuiteError(f"{what}: an emulated DPU died")
                roots = servers.roots + (mpi_servers.roots if mpi_servers else [])
                best = None
                try:
                    for attempt in range(1 + self.a.retries):
                        res, wall, foreign = run(cmd, env, self.a.timeout, what, roots)
                        if best is None or foreign < best[2]:
                            best = (res, wall, foreign)
                        if foreign <= self.a.max_foreign:
                            break
                        if time.monotonic() - runs.T_START > self.a.retry_budget:
                            break
                        self.retried += 1
                        log(f"    {what}: {100 * foreign:.0f}% of the CPU went to other processes: "
                            f"{'again' if attempt < self.a.retries else 'keeping the least disturbed'}")
                        if attempt < self.a.retries:
                            time.sleep(min(4.0, 0.5 * 2 ** attempt))
                except SuiteError as e:
                    self.failures.append(str(e))
                    log(f"[{progress[0]}/{progress[1]}] {what}: FAILED")
                    print(str(e), file=sys.stderr)
                    continue
                res, wall, foreign = best
                for r in res:
                    r.update({"name": name, "rep": rep + 1, "process_s": round(wall, 3),
                              "foreign_cpu_pct": round(100 * foreign, 1)})
                    r["way"] = way
                    self.records.append(r)
                log(f"[{progress[0]}/{progress[1]}] {what}: {headline(name, res[-1])} ({wall:.1f} s"
                    + (f", {100 * foreign:.0f}% outside load" if foreign > 0.02 else "") + ")")

    def try_mpi_servers(self, ndpus):
        """The servers as one MPI job if this build supports it, else None."""
        if not os.path.exists(os.path.join(self.bin, "suite-halo-offload-mpi")):
            return None
        h = subprocess.run([os.path.join(self.bin, "ompdpu-server"), "--help"],
                           capture_output=True, text=True)
        if "--mpi" not in h.stdout:
            self.notes.append("halo offload-mpi skipped: this ompdpu-server has no --mpi mode")
            return None
        try:
            return EmulatedServers(self.build, ndpus, self.a.cores_per_dpu, mpirun=self.mpirun,
                                   log_path=os.path.join(self.a.out, "mpi-servers.log"))
        except SuiteError as e:
            self.notes.append(f"halo offload-mpi skipped: {e}")
            log(f"halo offload-mpi skipped: {e}")
            return None


def headline(name, r):
    if r["workload"] == "augment":
        return f"{r['batches_per_s']:.0f} batches/s, stall {r['stall_ms_per_batch']:.2f} ms/batch"
    if r["workload"] == "halo":
        return f"{r['ms_per_iter']:.3f} ms/iter, overlap {100 * r['overlap']:.0f}%"
    return f"{r['ms_per_step']:.2f} ms/step"

