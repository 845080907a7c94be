"""Emulated DPUs for Python tools (the benchmark suite, the fault tests):
`ompdpu emulate` started, its one line of JSON read (runtime/README.md, "Running: the details"), and
stopped by closing its stdin."""
import atexit
import json
import os
import shutil
import subprocess
import tempfile


def share_key(ompdpu):
    """One key for every emulation of this process and the clients it starts:
    OMPDPU_KEY if set, else a new one (removed at exit), put in os.environ."""
    if os.environ.get("OMPDPU_KEY"):
        return os.environ["OMPDPU_KEY"]
    d = tempfile.mkdtemp(prefix="ompdpu-key.")
    atexit.register(shutil.rmtree, d, True)
    path = os.path.join(d, "key")
    subprocess.run([ompdpu, "key", "create", path], check=True, stdout=subprocess.DEVNULL)
    os.environ["OMPDPU_KEY"] = path
    return path


class NotStarted(Exception):
    """`ompdpu emulate` ended without describing its DPUs."""


class Emulation:
    """The DPUs of one `ompdpu emulate ARGS...`, for as long as this runs."""

    def __init__(self, ompdpu, args, stderr=None):
        self.command = [ompdpu, "emulate"] + [str(a) for a in args]
        self.key = share_key(ompdpu)
        # Its stdin is our pipe: should this process die, the servers stop too.
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=stderr, text=True)
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            raise NotStarted("exit status %d" % self.proc.returncode)
        d = json.loads(line)
        self.devices, self.server_pids = d["devices"], d["server_pids"]
        self.host_cores, self.dpu_cores, self.shared = d["host_cores"], d["dpu_cores"], d["shared"]

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=15):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
