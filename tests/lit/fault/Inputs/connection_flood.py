#!/usr/bin/env python3
"""Connections that never authenticate cannot keep clients out (--max-startups).

usage: connection_flood.py SERVER-CMD... -- OMPDPU-CMD... -- PROGRAM

Starts a keyed server, then twice holds a flood against it while PROGRAM runs under
`ompdpu run` with offloading mandatory: 5,000 idle connections and 100 that send a
byte a second, first from one address (127.0.0.2: the per-address cap), then from
100 addresses (127.0.0.2-101: the cap in all). Prints whether the program ran on the
server and took at most 2 s longer than without a flood, how many flood connections the server closed, the
server's memory and its log lines about the closes. Bounded: at most 5,100
connections per flood, 40 s in all.
"""
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "offload", "Inputs"))
from with_server import make_key, start_server  # noqa: E402

IDLE, SLOW = 5000, 100


def connect_all(port, sources, count):
    socks = []
    for i in range(count):
        s = socket.socket()
        s.bind((sources[i % len(sources)], 0))
        s.settimeout(2)
        s.connect(("127.0.0.1", port))
        s.setblocking(False)
        socks.append(s)
    return socks


def closed_by_server(socks):
    n = 0
    for s in socks:
        try:
            n += s.recv(1) == b""
        except BlockingIOError:
            pass
        except OSError:
            n += 1
    return n


def flood(name, port, sources, run, alone):
    socks = connect_all(port, sources, IDLE + SLOW)
    t = time.monotonic()
    out = run()
    took = time.monotonic() - t
    print("%s: %s" % (name, out.strip().splitlines()[-1] if out.strip() else "(no output)"))
    # Within 2 s of the same program without a flood (this machine may be busy).
    print("%s: started within 2 s: %d" % (name, took < alone + 2.0))
    print("%s: program took %.2f s (%.2f s alone), said:\n%s" % (name, took, alone, out),
          file=sys.stderr)
    # The slow ones send a byte a second until the handshake timeout (4 s) is past.
    for _ in range(6):
        for s in socks[IDLE:]:
            try:
                s.send(b"\0")
            except OSError:
                pass
        time.sleep(1)
    closed = closed_by_server(socks)
    print("%s: closed by the server: all %d: %d" % (name, len(socks), closed == len(socks)))
    for s in socks:
        s.close()


def main():
    args = sys.argv[1:]
    i = args.index("--")
    j = args.index("--", i + 1)
    server, ompdpu, program = args[:i], args[i + 1:j], args[j + 1]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < IDLE + SLOW + 200:
        print("connection_flood: needs %d descriptors, the hard limit is %d"
              % (IDLE + SLOW + 200, hard))
        return 1
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with tempfile.TemporaryDirectory(prefix="flood.") as tmp:
        key = make_key(tmp)
        log = open(os.path.join(tmp, "server.log"), "w+")
        extra = ["--root-sessions"] if os.geteuid() == 0 else []
        proc, ready = start_server(server, ["--listen", "127.0.0.1:0", "--key", key,
                                            "--handshake-timeout", "4"] + extra,
                                   stdout=log, stderr=log, start_new_session=True)
        if not ready:
            print("server did not start")
            return 1
        env = dict(os.environ, OMPDPU_KEY=key, OMP_TARGET_OFFLOAD="mandatory",
                   OMPDPU_CONNECT_TIMEOUT="5")

        def run():
            return subprocess.run(ompdpu + ["run", "--devices", ready.address, "--", program],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=30, text=True).stdout
        def rss_kib():
            with open("/proc/%d/status" % ready.pid) as f:
                return [int(ln.split()[1]) for ln in f if ln.startswith("VmRSS:")][0]
        try:
            t = time.monotonic()
            run()
            alone = time.monotonic() - t
            before = rss_kib()  # after one client: sanitizer builds start far larger
            flood("one address", ready.port, ["127.0.0.2"], run, alone)
            flood("100 addresses", ready.port,
                  ["127.0.0.%d" % k for k in range(2, 102)], run, alone)
            grew = rss_kib() - before
            print("server memory grew by %d KiB" % grew, file=sys.stderr)
            print("server memory grew by under 32 MiB: %d" % (grew < 32 * 1024))
            print("server alive: %d" % (proc.poll() is None))
        finally:
            # The whole group: the server may be behind a wrapper (`timeout`).
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        log.seek(0)
        for line in log:
            if "connection request" in line:
                print("log: " + line.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
