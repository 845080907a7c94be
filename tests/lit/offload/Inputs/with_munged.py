#!/usr/bin/env python3
"""Run CMD with a private munged (its own key and socket in a temporary
directory), as a cluster's MUNGE would be; OMPDPU_MUNGE_SOCKET names the
socket for CMD and the servers it starts. Exits with CMD's status.

usage: with_munged.py -- CMD..."""
import os
import subprocess
import sys
import tempfile
import time


def main():
    if sys.argv[1:2] != ["--"] or len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    with tempfile.TemporaryDirectory(prefix="with_munged.") as d:
        os.chmod(d, 0o755)  # munged wants its socket's directory searchable
        key, sock = os.path.join(d, "key"), os.path.join(d, "sock")
        subprocess.run(["mungekey", "--create", "--keyfile=" + key], check=True)
        daemon = subprocess.Popen(
            ["munged", "-F", "--force", "--key-file=" + key, "--socket=" + sock,
             "--pid-file=" + os.path.join(d, "pid"), "--log-file=" + os.path.join(d, "log"),
             "--seed-file=" + os.path.join(d, "seed")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while not os.path.exists(sock):
                if daemon.poll() is not None or time.monotonic() > deadline:
                    sys.stderr.write("with_munged: munged did not start\n")
                    return 1
                time.sleep(0.02)
            env = dict(os.environ, OMPDPU_MUNGE_SOCKET=sock)
            rc = subprocess.call(sys.argv[2:], env=env)
            return 128 - rc if rc < 0 else rc
        finally:
            daemon.terminate()
            daemon.wait()


if __name__ == "__main__":
    sys.exit(main())
