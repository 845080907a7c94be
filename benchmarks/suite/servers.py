"""The DPU servers of a workload: emulated ones (`ompdpu emulate`, which also
plans the cores), servers somebody else runs (real DPUs), and the servers
as one MPI job (the halo's offload-mpi way)."""
import json
import os
import random
import re
import shlex
import signal
import socket
import subprocess
import tempfile
import time

from runs import SuiteError


def cpulist(cs):
    return ",".join(str(x) for x in cs)


class EmulatedServers:
    """`ompdpu emulate N --pin`: one ompdpu-server per DPU on its cores, and
    the cores left to the host side, for as long as this object runs."""

    def __init__(self, build, ndpus, cores_per_dpu=0, verbose=False):
        cmd = [os.path.join(build, "bin", "ompdpu"), "emulate", str(ndpus), "--pin"]
        if cores_per_dpu:
            cmd += ["--cores-per-dpu", str(cores_per_dpu)]
        self.errors = None if verbose else tempfile.TemporaryFile(mode="w+")
        # Its stdin is our pipe: should this process die, the servers stop too.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.errors, text=True)
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            raise SuiteError(f"emulated DPUs did not start: {shlex.join(cmd)}\n{self.error_text()}")
        plan = json.loads(line)
        self.addrs = plan["devices"]
        self.host, self.dpus, self.shared = plan["host_cores"], plan["dpu_cores"], plan["shared"]
        self.roots = [self.proc.pid]

    def error_text(self):
        if not self.errors:
            return ""
        self.errors.seek(0)
        return self.errors.read()[-2000:]

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.errors:
            self.errors.close()
            self.errors = None


class ExternalServers:
    """Servers somebody else runs (real DPUs)."""

    def __init__(self, addrs):
        self.addrs, self.roots = list(addrs), []

    def alive(self):
        return True

    def stop(self):
        pass


def free_port_range(n):
    """A base port with n free consecutive ports on 127.0.0.1."""
    for _ in range(200):
        base = random.randint(20000, 60000 - n)
        ok = True
        for k in range(n):
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", base + k))
            except OSError:
                ok = False
            finally:
                s.close()
            if not ok:
                break
        if ok:
            return base
    raise SuiteError("no free ports")


class MpiServers:
    """The DPU servers as one MPI job (ompdpu-server --mpi): rank r listens
    on base+r and runs kernels in its own process, where they may call MPI."""

    def __init__(self, build, dpu_cores, mpirun_base, log_path):
        k = len(dpu_cores)
        self.base = free_port_range(k)
        exe = os.path.join(build, "bin", "ompdpu-server")
        cmd = list(mpirun_base)
        for r, cores in enumerate(dpu_cores):
            if r:
                cmd.append(":")
            cmd += ["-np", "1", "taskset", "-c", cpulist(cores), exe, "--mpi",
                    "--listen", f"127.0.0.1:{self.base}", "--cores", cpulist(cores)]
            if sum(1 for c in dpu_cores if set(c) & set(cores)) > 1:
                cmd += ["--shared-cores"]  # as `ompdpu emulate` does
        self.log = open(log_path, "w")
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.addrs = [f"127.0.0.1:{self.base + r}" for r in range(k)]
        self.roots = [self.proc.pid]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SuiteError(f"ompdpu-server --mpi exited ({self.proc.returncode}); "
                                 f"see {log_path}")
            with open(log_path) as f:
                if len(re.findall(r"listening on", f.read())) >= k:
                    return
            time.sleep(0.1)
        self.stop()
        raise SuiteError(f"ompdpu-server --mpi did not start; see {log_path}")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            # mpirun forwards SIGTERM to the server ranks.
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
