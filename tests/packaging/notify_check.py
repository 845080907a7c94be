"""Start SERVER with NOTIFY_SOCKET set, as systemd's Type=notify does, and
check that it sends READY=1 once it listens. Usage: notify_check.py SERVER"""
import os
import secrets
import socket
import subprocess
import sys
import tempfile

path = os.path.join(tempfile.mkdtemp(), "notify")
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
sock.settimeout(20)
# A key, as every server needs one (the format `ompdpu key create` writes).
key = os.path.join(os.path.dirname(path), "key")
with os.fdopen(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
    f.write("ompdpu-key-v1 %s\n" % secrets.token_hex(32))
server = subprocess.Popen([sys.argv[1], "--listen", "127.0.0.1:0", "--key", key],
                          env=dict(os.environ, NOTIFY_SOCKET=path))
try:
    msg = sock.recv(4096).decode()
    assert "READY=1" in msg.split("\n"), msg
    print("notify: " + msg.replace("\n", "; "))
finally:
    server.terminate()
    server.wait(10)
