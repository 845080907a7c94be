#!/usr/bin/env python3
"""Stop a server while a client is connected, so that the server closes
first and its side of the connection sits in TIME-WAIT on the listening
port, then start it again on that port at once, and start another server on
the port while the second one runs.

usage: restart_server.py SERVER-CMD...   (e.g. a path to ompdpu-server)
"""
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from with_server import start_server  # noqa: E402


def start(cmd, port):
    """A server on 127.0.0.1:port: (process, its ompdpu_ready.Ready or None)."""
    return start_server(cmd, ["--insecure", "--listen", "127.0.0.1:%d" % port],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def time_wait_on(port):
    """Whether a connection on this local port is in TIME-WAIT (state 06)."""
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if int(local.split(":")[1], 16) == port and state == "06":
                return True
    return False


def main():
    cmd = sys.argv[1:]
    first, ready = start(cmd, 0)
    if not ready:
        print("first server did not start")
        return 1
    port = ready.port
    client = socket.create_connection(("127.0.0.1", port))
    time.sleep(0.3)
    first.terminate()
    first.wait(timeout=20)
    client.close()
    print("time-wait on the port: %d" % time_wait_on(port))
    second, ready = start(cmd, port)
    print("restarted: %s" % (ready.address.replace(str(port), "PORT") if ready else None))
    third, _ = start(cmd, port)
    out = third.communicate(timeout=20)[0].decode(errors="replace")
    said = [l for l in out.splitlines() if "ompdpu-server error" in l]
    print("a second server on the port: exit %d, %s"
          % (third.returncode, said[0].replace(str(port), "PORT") if said else out))
    second.terminate()
    second.wait(timeout=20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
