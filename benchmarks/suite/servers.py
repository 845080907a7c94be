"""The DPU servers of a workload: emulated ones (`ompdpu emulate`, which also
plans the cores; as one MPI job for the halo's offload-mpi way), and servers
somebody else runs (real DPUs)."""
import json
import os
import shlex
import subprocess
import tempfile

from runs import SuiteError


def cpulist(cs):
    return ",".join(str(x) for x in cs)


class EmulatedServers:
    """`ompdpu emulate N --pin`: one ompdpu-server per DPU on its cores, and
    the cores left to the host side, for as long as this object runs. With
    mpirun (its command and options), the servers are one MPI job
    (ompdpu-server --mpi: rank r runs kernels in its own process, where they
    may call MPI), its output in log_path."""

    def __init__(self, build, ndpus, cores_per_dpu=0, verbose=False, mpirun=None, log_path=None):
        cmd = [os.path.join(build, "bin", "ompdpu"), "emulate", str(ndpus), "--pin"]
        if cores_per_dpu:
            cmd += ["--cores-per-dpu", str(cores_per_dpu)]
        if mpirun:
            cmd += ["--mpi", "--"] + list(mpirun)
        self.log_path = log_path
        self.errors = (open(log_path, "w+") if log_path else
                       None if verbose else tempfile.TemporaryFile(mode="w+"))
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
        if self.log_path:
            return f"see {self.log_path}"
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
                self.proc.wait(timeout=15)
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
