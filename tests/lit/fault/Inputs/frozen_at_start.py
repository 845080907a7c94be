#!/usr/bin/env python3
"""Two servers that stop answering before a program starts (SIGSTOP): the
program and `ompdpu info` must give up on both after one connect timeout,
not one per server, per plugin copy or per goodbye.

usage: frozen_at_start.py SERVER-CMD... -- OMPDPU-CMD... -- PROGRAM
(each command possibly behind a wrapper such as `timeout`)
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "offload", "Inputs"))
from with_server import make_key, start_server  # noqa: E402

TIMEOUT = 2.0  # OMPDPU_CONNECT_TIMEOUT


def start(server, key):
    extra = ["--root-sessions"] if os.geteuid() == 0 else []
    proc, ready = start_server(server, ["--listen", "127.0.0.1:0", "--key", key] + extra,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    if not ready:
        sys.exit("server did not start")
    return proc, ready.address


def timed(cmd, env):
    t = time.monotonic()
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=120).stdout.decode()
    return time.monotonic() - t, out


def main():
    args = sys.argv[1:]
    i = args.index("--")
    j = args.index("--", i + 1)
    server, ompdpu, program = args[:i], args[i + 1:j], args[j + 1]
    with tempfile.TemporaryDirectory(prefix="frozen.") as tmp:
        key = make_key(tmp)
        servers = [start(server, key) for _ in range(2)]
        try:
            for proc, _ in servers:  # the server and any wrapper
                os.killpg(proc.pid, signal.SIGSTOP)
            devices = ",".join(addr for _, addr in servers)
            env = dict(os.environ, OMPDPU_KEY=key,
                       OMPDPU_CONNECT_TIMEOUT=str(TIMEOUT))
            env.pop("OMP_TARGET_OFFLOAD", None)
            # Both plugin copies are on the path (`ompdpu run --devices`).
            took, out = timed(ompdpu + ["run", "--devices", devices, "--", program], env)
            print(out.replace(devices.split(",")[0], "A").replace(devices.split(",")[1], "B"),
                  end="")
            print("program took %.1f s" % took, file=sys.stderr)
            print("program: gave up within 1.5 connect timeouts: %d" % (took < 1.5 * TIMEOUT + 1.0))
            took, out = timed(ompdpu + ["info", "--devices", devices], env)
            print("info: unreachable devices: %d" % out.count("unreachable: cannot connect"))
            print("info: gave up within 1.5 connect timeouts: %d" % (took < 1.5 * TIMEOUT + 1.0))
        finally:
            for proc, _ in servers:
                os.killpg(proc.pid, signal.SIGCONT)
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
