"""Start SERVER with NOTIFY_SOCKET set, as systemd's Type=notify does, and
check that it sends READY=1 once it listens. Usage: notify_check.py SERVER"""
import os
import socket
import subprocess
import sys
import tempfile

path = os.path.join(tempfile.mkdtemp(), "notify")
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
sock.settimeout(20)
server = subprocess.Popen([sys.argv[1], "--listen", "127.0.0.1:0"],
                          env=dict(os.environ, NOTIFY_SOCKET=path))
try:
    msg = sock.recv(4096).decode()
    assert "READY=1" in msg.split("\n"), msg
    print("notify: " + msg.replace("\n", "; "))
finally:
    server.terminate()
    server.wait(10)
