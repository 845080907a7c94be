"""The readiness line of `ompdpu-server --ready-fd N`, for scripts: one line of JSON,
{"listening": "HOST:PORT", "pid": PID} (runtime/protocol/PROTOCOL.md). The one parser of it
in Python; the C++ one is protocol::parseReadyLine."""
import json
import os
import select
import subprocess
import time
from typing import NamedTuple, Optional


class Ready(NamedTuple):
    host: str
    port: int
    pid: int

    @property
    def address(self):
        return "%s:%d" % (self.host, self.port)


def parse(line) -> Optional[Ready]:
    """The readiness line's contents, or None if line is not one."""
    try:
        d = json.loads(line)
        host, port = d["listening"].rsplit(":", 1)
        ready = Ready(host, int(port), int(d["pid"]))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return ready if host and 0 < ready.port < 65536 and ready.pid > 0 else None


def find(text) -> Optional[Ready]:
    """The first readiness line among text's lines (a console, a command's output)."""
    for line in text.splitlines():
        start = line.find('{"listening"')
        ready = parse(line[start:]) if start >= 0 else None
        if ready:
            return ready
    return None


def read(fd, timeout, proc=None) -> Optional[Ready]:
    """The readiness line written to fd within timeout s (None at EOF, after the timeout,
    or once proc has exited without writing one). Closes fd."""
    data, deadline = b"", time.monotonic() + timeout
    try:
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if not select.select([fd], [], [], min(left, 0.1))[0]:
                if proc is not None and proc.poll() is not None:
                    break
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return parse(data.decode(errors="replace").split("\n", 1)[0])


def start_server(cmd, args, timeout=20, **popen):
    """cmd + args + `--ready-fd N`: (the process, its Ready, None if it wrote none within
    timeout s)."""
    ready_r, ready_w = os.pipe()
    try:
        server = subprocess.Popen(cmd + args + ["--ready-fd", str(ready_w)],
                                  pass_fds=(ready_w,), **popen)
    finally:
        os.close(ready_w)
    return server, read(ready_r, timeout, server)
