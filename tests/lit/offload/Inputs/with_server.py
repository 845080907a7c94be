#!/usr/bin/env python3
"""Start one ompdpu-server on a free loopback port, run a command against it,
stop the server.

usage: with_server.py [--cores LIST] [--memory BYTES] [--server-arg ARG]...
                      [--key-owner USER] SERVER-CMD... -- CMD...

SERVER-CMD is the server binary (possibly behind a wrapper such as
`timeout`); `--listen 127.0.0.1:0 --ready-fd N`, the --cores/--memory options and a
fresh key (`--key FILE`, and OMPDPU_KEY=FILE for CMD; --key-owner: the file
given to USER, whom it then stands for) and each --server-arg are appended to
it; run by root, it also gets --root-sessions unless a --server-arg names
--root-user. In CMD, `{addr}` becomes 127.0.0.1:PORT, `{port}` the port
and `{pid}` the server's pid. The server binds a free port itself and is up
once it writes its readiness line (runtime/tools/ompdpu_ready.py) to fd N:
no other process can take the port in between, and no stray connection
reaches the server.
Exits with CMD's status (128+signal if it died of a signal).
"""
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "runtime", "tools"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from ompdpu_ready import start_server  # noqa: E402,F401 (also for restart_server.py)


def make_key(directory):
    """A key file as `ompdpu key create` writes it (PROTOCOL.md)."""
    path = os.path.join(directory, "key")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("ompdpu-key-v1 %s\n" % secrets.token_hex(32))
    return path


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
    keydir = tempfile.TemporaryDirectory(prefix="with_server.")
    key = make_key(keydir.name)
    if owner:
        shutil.chown(key, user=owner)
    os.environ["OMPDPU_KEY"] = key
    # A private server of root's keeps root's sessions as root.
    as_root = os.geteuid() == 0 and "--root-user" not in extra
    opts += ["--key", key] + (["--root-sessions"] if as_root else []) + extra
    # Port 0: the server binds a free port itself and says which on --ready-fd,
    # so no other process can take the port between its choice and the bind.
    server, ready = start_server(server_cmd, ["--listen", "127.0.0.1:0"] + opts,
                                 start_new_session=True)
    try:
        if not ready:
            server.poll()
            sys.stderr.write("with_server: server %s before listening\n"
                             % ("not ready after 20 s" if server.returncode is None
                                else "exited with %d" % server.returncode))
            return 1
        port = ready.port
        addr = "127.0.0.1:%d" % port
        cmd = [a.replace("{addr}", addr).replace("{port}", str(port))
               .replace("{pid}", str(ready.pid)) for a in cmd]
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
