#!/usr/bin/env python3
"""Start one ompdpu-server on a free loopback port, run a command against it,
stop the server.

usage: with_server.py [--cores LIST] [--memory BYTES] [--server-arg ARG]...
                      [--key-owner USER] SERVER-CMD... -- CMD...

SERVER-CMD is the server binary (possibly behind a wrapper such as
`timeout`); `--listen 127.0.0.1:PORT`, the --cores/--memory options and a
fresh key (`--key FILE`, and OMPDPU_KEY=FILE for CMD; --key-owner: the file
given to USER, whom it then stands for) and each --server-arg are appended to
it; run by root, it also gets --root-sessions unless a --server-arg names
--root-user. In CMD, `{addr}` becomes 127.0.0.1:PORT and `{port}` the
port. The server is considered up once its port is in LISTEN state
(read from /proc/net/tcp, so no stray connection reaches the server).
Exits with CMD's status (128+signal if it died of a signal).
"""
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


def make_key(directory):
    """A key file as `ompdpu key create` writes it (PROTOCOL.md)."""
    path = os.path.join(directory, "key")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("ompdpu-key-v1 %s\n" % secrets.token_hex(32))
    return path


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
    opts, extra, owner = [], [], None
    while args and args[0] in ("--cores", "--memory", "--server-arg", "--key-owner"):
        if args[0] == "--server-arg":
            extra.append(args[1])
        elif args[0] == "--key-owner":
            owner = args[1]
        else:
            opts += args[:2]
        args = args[2:]
    if "--" not in args:
        sys.stderr.write(__doc__)
        return 2
    i = args.index("--")
    server_cmd, cmd = args[:i], args[i + 1:]
    port = free_port()
    addr = "127.0.0.1:%d" % port
    keydir = tempfile.TemporaryDirectory(prefix="with_server.")
    key = make_key(keydir.name)
    if owner:
        shutil.chown(key, user=owner)
    os.environ["OMPDPU_KEY"] = key
    # A private server of root's keeps root's sessions as root.
    as_root = os.geteuid() == 0 and "--root-user" not in extra
    opts += ["--key", key] + (["--root-sessions"] if as_root else []) + extra
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
