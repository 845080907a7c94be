#!/usr/bin/env python3
"""Start one ompdpu-server on a free loopback port, run a command against it,
stop the server.

usage: with_server.py [--cores LIST] [--memory BYTES] SERVER-CMD... -- CMD...

SERVER-CMD is the server binary (possibly behind a wrapper such as
`timeout`); `--listen 127.0.0.1:PORT` and the --cores/--memory options are
appended to it. In CMD, `{addr}` becomes 127.0.0.1:PORT and `{port}` the
port. The server is considered up once its port is in LISTEN state
(read from /proc/net/tcp, so no stray connection reaches the server).
Exits with CMD's status (128+signal if it died of a signal).
"""
import os
import signal
import socket
import subprocess
import sys
import time


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def listening(port):
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    local, state = fields[1], fields[3]
                    if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


def main():
    args = sys.argv[1:]
    opts = []
    while args and args[0] in ("--cores", "--memory"):
        opts += args[:2]
        args = args[2:]
    if "--" not in args:
        sys.stderr.write(__doc__)
        return 2
    i = args.index("--")
    server_cmd, cmd = args[:i], args[i + 1:]
    port = free_port()
    addr = "127.0.0.1:%d" % port
    server = subprocess.Popen(server_cmd + ["--listen", addr] + opts,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not listening(port):
            if server.poll() is not None:
                sys.stderr.write("with_server: server exited with %d before listening\n"
                                 % server.returncode)
                return 1
            if time.monotonic() > deadline:
                sys.stderr.write("with_server: server not listening on %s after 20 s\n" % addr)
                return 1
            time.sleep(0.02)
        cmd = [a.replace("{addr}", addr).replace("{port}", str(port)) for a in cmd]
        sys.stdout.flush()
        rc = subprocess.call(cmd)
        if rc < 0:
            rc = 128 - rc
        if server.poll() is not None:
            sys.stderr.write("with_server: server died during the run (status %d)\n"
                             % server.returncode)
        return rc
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if server.poll() is not None:
                break
            try:
                os.killpg(server.pid, sig)
            except ProcessLookupError:
                break
            try:
                server.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


if __name__ == "__main__":
    sys.exit(main())
