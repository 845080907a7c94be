#!/usr/bin/env python3
"""Run a command with a wall-clock limit and report how it ended.

usage: limit.py SECONDS COMMAND [ARGS...]

The command's stdout and stderr are merged into this script's stdout (so a
single FileCheck sees both, in order). When it ends, two lines follow:

    limit: within N s            (or: limit: EXCEEDED N s, killed)
    exit-status: S               (128+signal if it died of a signal)

and this script exits with S (124 when the limit was exceeded), so a RUN
line can put `not` in front of it and FileCheck the lines above.
"""
import os
import signal
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    limit = float(sys.argv[1])
    cmd = sys.argv[2:]
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    sys.stdout.flush()
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=sys.stdout.fileno(),
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        status = proc.wait(timeout=limit)
        exceeded = False
    except subprocess.TimeoutExpired:
        exceeded = True
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=5)
                break
            except subprocess.TimeoutExpired:
                continue
        status = 124
    elapsed = time.monotonic() - start
    if status < 0:
        status = 128 - status
    if exceeded:
        print("limit: EXCEEDED %g s, killed" % limit)
    else:
        print("limit: within %g s" % limit)
    print("elapsed: %.2f s" % elapsed)
    print("exit-status: %d" % status)
    sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
