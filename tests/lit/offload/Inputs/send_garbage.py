#!/usr/bin/env python3
"""Connect to 127.0.0.1:PORT a few times and send random bytes (and nothing),
as a port scanner or a confused client would; print "sent garbage"."""
import os
import socket
import sys
import time

port = int(sys.argv[1])
for size in (0, 1, 16, 4096, 65536):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        try:
            s.sendall(os.urandom(size))
        except OSError:
            pass  # the server may close first: what it should do
        time.sleep(0.05)
print("sent garbage", flush=True)
