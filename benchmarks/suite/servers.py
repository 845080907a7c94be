"""The DPU servers of a workload: emulated ones (`ompdpu emulate`, which also
plans the cores; as one MPI job for the halo's offload-mpi way), and servers
somebody else runs (real DPUs)."""
import os
import shlex
import sys
import tempfile

from runs import SuiteError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "runtime", "tools"))
from ompdpu_emulate import Emulation, NotStarted  # noqa: E402


def cpulist(cs):
    return ",".join(str(x) for x in cs)


class EmulatedServers:
    """`ompdpu emulate N --pin`: one ompdpu-server per DPU on its cores, and
    the cores left to the host side, for as long as this object runs. With
    mpirun (its command and options), the servers are one MPI job
    (ompdpu-server --mpi: rank r runs kernels in its own process, where they
    may call MPI), its output in log_path."""

    def __init__(self, build, ndpus, cores_per_dpu=0, verbose=False, mpirun=None, log_path=None):
        args = [ndpus, "--pin"] + (["--cores-per-dpu", cores_per_dpu] if cores_per_dpu else [])
        if mpirun:
            args += ["--mpi", "--"] + list(mpirun)
        self.log_path = log_path
        self.errors = (open(log_path, "w+") if log_path else
                       None if verbose else tempfile.TemporaryFile(mode="w+"))
        try:
            em = Emulation(os.path.join(build, "bin", "ompdpu"), args, stderr=self.errors)
        except NotStarted as e:
            raise SuiteError(f"emulated DPUs did not start ({e}): ompdpu emulate {shlex.join(map(str, args))}"
                             f"\n{self.error_text()}")
        self.emulation = em
        self.addrs, self.host, self.dpus, self.shared = em.devices, em.host_cores, em.dpu_cores, em.shared
        self.roots = [em.proc.pid]

    def error_text(self):
        if self.log_path:
            return f"see {self.log_path}"
        if not self.errors:
            return ""
        self.errors.seek(0)
        return self.errors.read()[-2000:]

    def alive(self):
        return self.emulation.alive()

    def stop(self):
        self.emulation.stop()
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
