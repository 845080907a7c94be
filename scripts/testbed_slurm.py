"""Bring up a small Slurm cluster (Debian 12 slurm-wlm 22.05) on one machine
whose nodes are network + UTS namespaces that the caller already created.

    up(state_dir, controller, nodes, enter, log, partitions=None, extra_conf="")
    down(state_dir, log)
    daemons(state_dir) -> [{"kind", "name", "pid", "alive"}]
    env(state_dir) -> {"SLURM_CONF": ...}

Layout under state_dir/slurm/ (all made by up; nothing else in state_dir is touched):
    slurm.conf           the one config every daemon and client reads
    munge/munge.key      1024 random bytes, 0400 (dir 0700)
    run/                 munge socket, pid files (0755: clients need the socket)
    ctld/                StateSaveLocation
    spool/<node>/        SlurmdSpoolDir=.../spool/%n
    tmp/<node>/          TmpFS=.../tmp/%n (1777); mpi/pmix puts its per-step
                         dirs here, they collide if two nodes share one TmpFS
    log/                 munged.log, slurmctld.log, slurmd-<node>.log
    testbed.json         pids and namespace ids that down() uses

One munged serves every namespace: its socket is a path on the shared
filesystem (AuthInfo=socket=...), and a unix socket path is not tied to a
network namespace.  Daemons run as root (SlurmUser=root); jobs run as the
user who submits them.  No cgroups: proctrack/linuxproc, task/none.

Clients (srun, sbatch, salloc, sinfo) must run inside one of the namespaces
(they talk to 10.x addresses and slurmd connects back to srun), e.g.
    enter("ctl") + ["srun", "-N2", "hostname"]  with env(state_dir) added.

log is a callable taking one str.  Run as root (nsenter, root daemons).
The pids recorded are those of the caller's PID namespace: enter() must not
enter a PID namespace.  Knobs: UP_TIMEOUT, DOWN_TIMEOUT.  Standard library only.
"""

import json
import os
import shutil
import signal
import subprocess
import time

UP_TIMEOUT = 30.0      # seconds to wait for every node to be idle in sinfo
DOWN_TIMEOUT = 10.0    # seconds to wait after SIGTERM before SIGKILL
PLUGIN_DIR = "/usr/lib/x86_64-linux-gnu/slurm-wlm"
STATE_FILE = "testbed.json"


def _p(state_dir, *parts):
    # everything lives in state_dir/slurm/, so a state_dir shared with the rest
    # of the testbed (its own log/, run/ ...) is never touched
    return os.path.join(os.path.abspath(state_dir), "slurm", *parts)


def _run(argv, env=None, timeout=30, check=True):
    try:
        cp = subprocess.run(argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=env, timeout=timeout, text=True)
    except FileNotFoundError as e:
        raise RuntimeError("testbed_slurm: cannot run %s: %s" % (argv[0], e))
    except subprocess.TimeoutExpired:
        raise RuntimeError("testbed_slurm: timed out after %ss: %s"
                           % (timeout, " ".join(argv)))
    if check and cp.returncode != 0:
        raise RuntimeError("testbed_slurm: %s exited %d:\n%s"
                           % (" ".join(argv), cp.returncode, cp.stdout.strip()))
    return cp


def _tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            lines = f.readlines()[-n:]
        return "".join("    " + l for l in lines)
    except OSError:
        return "    (no %s)\n" % path


def _read_pid(path, wait=5.0):
    end = time.monotonic() + wait
    while True:
        try:
            with open(path) as f:
                pid = int(f.read().split()[0])
            if os.path.exists("/proc/%d" % pid):
                return pid
        except (OSError, ValueError, IndexError):
            pass
        if time.monotonic() > end:
            return None
        time.sleep(0.1)


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return None


def _netns(pid):
    try:
        return os.readlink("/proc/%d/ns/net" % pid)
    except OSError:
        return None


def _hw_line():
    """CPUs/sockets/cores/threads of this machine, from `slurmd -C`."""
    out = _run(["slurmd", "-C"], check=False).stdout
    keep = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")
    for line in out.splitlines():
        if line.startswith("NodeName="):
            fields = [f for f in line.split() if f.split("=")[0] in keep]
            if fields:
                return " ".join(fields)
    return "CPUs=%d" % (os.cpu_count() or 1)


def _check_traversable(path):
    """munged and non-root job users need o+x on every ancestor."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        st = os.stat(d)
        if not st.st_mode & 0o001:
            raise RuntimeError(
                "testbed_slurm: %s is not searchable by others (mode %o); "
                "munged refuses its socket there and job users could not read "
                "slurm.conf: put state_dir under a 0755 path" % (d, st.st_mode & 0o777))
        if d == "/":
            return
        d = os.path.dirname(d)


def _partition_lines(nodes, partitions):
    """PartitionName lines: partitions is a list of (name, [node names], default);
    None: one default partition `debug` with every node."""
    if partitions is None:
        partitions = [("debug", [n for n, _ in nodes], True)]
    known = {n for n, _ in nodes}
    lines = []
    for name, members, default in partitions:
        bad = [m for m in members if m not in known]
        if bad or not members:
            raise RuntimeError("testbed_slurm: partition %s: %s" % (
                name, "unknown nodes " + ",".join(bad) if bad else "no nodes"))
        lines.append("PartitionName=%s Nodes=%s Default=%s MaxTime=INFINITE State=UP"
                     % (name, ",".join(members), "YES" if default else "NO"))
    if sum(1 for p in partitions if p[2]) > 1:
        raise RuntimeError("testbed_slurm: more than one default partition")
    return "\n".join(lines)


def _write_conf(sd, controller, nodes, mpi, partitions=None, extra_conf=""):
    cname, caddr = controller
    hw = _hw_line()
    node_lines = "\n".join("NodeName=%s NodeAddr=%s %s State=UNKNOWN" % (n, a, hw)
                           for n, a in nodes)
    conf = """\
# written by scripts/testbed_slurm.py
ClusterName=testbed
SlurmctldHost={cname}({caddr})
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sd}/run/munge.sock
StateSaveLocation={sd}/ctld
SlurmdSpoolDir={sd}/spool/%n
TmpFS={sd}/tmp/%n
SlurmctldPidFile={sd}/run/slurmctld.pid
SlurmdPidFile={sd}/run/slurmd-%n.pid
SlurmctldLogFile={sd}/log/slurmctld.log
SlurmdLogFile={sd}/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault={mpi}
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MailProg=/bin/true
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
{extra}{node_lines}
{partition_lines}
""".format(cname=cname, caddr=caddr, sd=sd, mpi=mpi, node_lines=node_lines,
           partition_lines=_partition_lines(nodes, partitions),
           extra=(extra_conf.strip() + "\n") if extra_conf.strip() else "")
    path = os.path.join(sd, "slurm.conf")
    with open(path, "w") as f:
        f.write(conf)
    os.chmod(path, 0o644)
    # slurmd (22.05) always loads a cgroup plugin, even with proctrack/linuxproc and
    # task/none. Autodetected, it fails in a node namespace with its own /sys whose
    # /sys/fs/cgroup is cgroup2 while /proc/self/cgroup lists v1 controllers (a hybrid
    # host): "fatal: Hybrid mode is not supported". cgroup/v1 over an empty private
    # mount point loads and is never used by these plugins.
    with open(os.path.join(sd, "cgroup.conf"), "w") as f:
        f.write("# written by scripts/testbed_slurm.py: no cgroups are used\n"
                "CgroupPlugin=cgroup/v1\nCgroupMountpoint=%s/cgroup\n"
                "CgroupAutomount=no\n" % sd)
    os.chmod(os.path.join(sd, "cgroup.conf"), 0o644)
    return path


def _save(sd, state):
    tmp = os.path.join(sd, STATE_FILE + ".tmp")
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1)
    os.replace(tmp, os.path.join(sd, STATE_FILE))


def env(state_dir):
    """Environment a user adds to run srun/sbatch/salloc/sinfo against the cluster."""
    return {"SLURM_CONF": _p(state_dir, "slurm.conf")}


def up(state_dir, controller, nodes, enter, log, partitions=None, extra_conf=""):
    """controller: (name, addr); nodes: list of (hostname, addr) for slurmd;
    partitions: [(name, [node names], default)] (None: one default `debug` with
    every node); extra_conf: more slurm.conf lines (e.g. "TaskProlog=PATH");
    enter(name) -> argv prefix that runs a command inside that node's
    namespaces (e.g. ["nsenter", "-t", "1234", "--net", "--uts"]).
    Writes slurm.conf etc. under state_dir, starts munged and slurmctld in the
    controller's namespaces and one slurmd per node, waits (UP_TIMEOUT) until
    sinfo shows every node idle.  Raises RuntimeError on failure (daemons
    already started are stopped again)."""
    t0 = time.monotonic()
    sd = _p(state_dir)
    cname, caddr = controller
    nodes = [(str(n), str(a)) for n, a in nodes]
    if not nodes:
        raise RuntimeError("testbed_slurm: no nodes given")
    for tool in ("munged", "slurmctld", "slurmd", "sinfo"):
        if not shutil.which(tool):
            raise RuntimeError("testbed_slurm: %s not found (apt-get install "
                               "slurm-wlm slurm-client munge)" % tool)
    if os.path.exists(os.path.join(sd, STATE_FILE)):
        down(state_dir, log)

    # fresh state every time: old job/node state would only confuse tests
    for sub in ("ctld", "spool", "tmp", "log", "run", "munge", "cgroup"):
        shutil.rmtree(os.path.join(sd, sub), ignore_errors=True)
    os.makedirs(sd, exist_ok=True)
    os.chmod(sd, 0o755)
    _check_traversable(os.path.join(sd, "x"))
    for sub, mode in (("ctld", 0o700), ("log", 0o755), ("run", 0o755),
                      ("munge", 0o700), ("spool", 0o755), ("tmp", 0o755),
                      ("cgroup", 0o755)):
        os.makedirs(os.path.join(sd, sub))
        os.chmod(os.path.join(sd, sub), mode)
    for n, _ in nodes:
        os.makedirs(os.path.join(sd, "spool", n))
        os.makedirs(os.path.join(sd, "tmp", n))
        os.chmod(os.path.join(sd, "tmp", n), 0o1777)

    key = os.path.join(sd, "munge", "munge.key")
    with open(key, "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(key, 0o400)

    mpi = "pmix" if os.path.exists(os.path.join(PLUGIN_DIR, "mpi_pmix.so")) else "none"
    conf = _write_conf(sd, controller, nodes, mpi, partitions, extra_conf)
    senv = dict(os.environ, SLURM_CONF=conf)
    state = {"conf": conf, "controller": [cname, caddr], "nodes": nodes,
             "daemons": []}
    _save(sd, state)

    def started(kind, name, pidfile, argv, logfile):
        pid = _read_pid(pidfile)
        if pid is None:
            raise RuntimeError("testbed_slurm: %s for %s exited at start (no live pid "
                               "in %s); %s:\n%s" % (kind, name, pidfile, logfile,
                                                    _tail(logfile)))
        state["daemons"].append({"kind": kind, "name": name, "pid": pid,
                                 "argv0": os.path.basename(argv[0]),
                                 "marker": sd, "netns": _netns(pid)})
        _save(sd, state)
        log("testbed_slurm: %s %s pid %d" % (kind, name, pid))

    try:
        # the controller's hostname must match SlurmctldHost, or slurmctld
        # exits ("This host ... not a valid controller")
        got = _run(enter(cname) + ["hostname", "-s"]).stdout.strip()
        if got != cname:
            raise RuntimeError("testbed_slurm: hostname inside controller namespace "
                               "is %r, expected %r (needs its own UTS namespace)"
                               % (got, cname))

        # each node must own its address, and the slurm ports must be free
        # (a second cluster in the same namespaces fails with "Unable to bind
        # listen port (6818): Address already in use" only in its log)
        for name, addr, port in ([(cname, caddr, 6817)]
                                 + [(n, a, 6818) for n, a in nodes]):
            out = _run(enter(name) + ["ip", "-o", "-4", "addr", "show"]).stdout
            if (" %s/" % addr) not in out:
                raise RuntimeError("testbed_slurm: %s has no address %s in its "
                                   "namespace:\n%s" % (name, addr, out.strip()))
            out = _run(enter(name) + ["ss", "-Hltn", "sport = :%d" % port]).stdout
            if out.strip():
                raise RuntimeError("testbed_slurm: port %d already in use in the "
                                   "namespace of %s (another slurm daemon there?):\n%s"
                                   % (port, name, out.strip()))

        def daemon(kind, where, argv, env, tag):
            """Start one daemon (it forks) in where's namespaces; tag names
            its pid and log files."""
            log_path = os.path.join(sd, "log", tag + ".log")
            cp = _run(enter(where) + argv, env=env, check=False)
            if cp.returncode != 0:
                raise RuntimeError("testbed_slurm: %s failed (%d): %s\n%s"
                                   % (" ".join([kind] + ([where] if kind == "slurmd" else [])),
                                      cp.returncode, cp.stdout.strip(), _tail(log_path)))
            started(kind, where, os.path.join(sd, "run", tag + ".pid"), argv, log_path)

        daemon("munged", cname, ["munged", "--key-file=" + key,
                                 "--socket=" + os.path.join(sd, "run", "munge.sock"),
                                 "--pid-file=" + os.path.join(sd, "run", "munged.pid"),
                                 "--log-file=" + os.path.join(sd, "log", "munged.log"),
                                 "--seed-file=" + os.path.join(sd, "munge", "munged.seed"),
                                 "--origin=" + caddr], None, "munged")
        daemon("slurmctld", cname, ["slurmctld", "-f", conf], senv, "slurmctld")
        for n, _ in nodes:
            daemon("slurmd", n, ["slurmd", "-f", conf, "-N", n], senv, "slurmd-" + n)

        want = {n for n, _ in nodes}
        end = time.monotonic() + UP_TIMEOUT
        states = {}
        while True:
            cp = _run(enter(cname) + ["sinfo", "-h", "-N", "-o", "%N %T"],
                      env=senv, check=False, timeout=15)
            if cp.returncode == 0:
                states = dict(l.split(None, 1) for l in cp.stdout.splitlines()
                              if len(l.split(None, 1)) == 2)
                if all(states.get(n) == "idle" for n in want):
                    break
            else:
                states = {"sinfo": cp.stdout.strip()}
            for d in state["daemons"]:
                if _cmdline(d["pid"]) is None:
                    logf = ("slurmctld.log" if d["kind"] == "slurmctld" else
                            "munged.log" if d["kind"] == "munged" else
                            "slurmd-%s.log" % d["name"])
                    raise RuntimeError("testbed_slurm: %s %s (pid %d) died:\n%s"
                                       % (d["kind"], d["name"], d["pid"],
                                          _tail(os.path.join(sd, "log", logf))))
            if time.monotonic() > end:
                msg = ("testbed_slurm: nodes not idle after %ss: %s\nslurmctld.log:\n%s"
                       % (UP_TIMEOUT, states, _tail(os.path.join(sd, "log", "slurmctld.log"))))
                for n in sorted(want):
                    if states.get(n) != "idle":
                        msg += "slurmd-%s.log:\n%s" % (n, _tail(os.path.join(
                            sd, "log", "slurmd-%s.log" % n), 6))
                raise RuntimeError(msg)
            time.sleep(0.3)
    except BaseException:
        try:
            down(state_dir, log)
        except Exception as e:  # keep the original error
            log("testbed_slurm: cleanup after failed up: %s" % e)
        raise
    log("testbed_slurm: %d node(s) idle in %.1fs (SLURM_CONF=%s, MpiDefault=%s)"
        % (len(nodes), time.monotonic() - t0, conf, mpi))


def _ours(d):
    """Is pid still the daemon we started (not a reused pid)?"""
    argv = _cmdline(d["pid"])
    if not argv:
        return False
    return (os.path.basename(argv[0]) == d["argv0"]
            and any(d["marker"] in a for a in argv))


def daemons(state_dir):
    """The daemons up() started, each with "alive": still running (not a reused pid).
    Slurm itself notices a dead slurmd only after SlurmdTimeout; this at once."""
    try:
        with open(_p(state_dir, STATE_FILE)) as f:
            state = json.load(f)
    except (OSError, ValueError):
        return []
    return [dict(kind=d["kind"], name=d["name"], pid=d["pid"], alive=_ours(d))
            for d in state.get("daemons", [])]


def _stepd_trees(netns_ids):
    """pids of slurmstepd processes in our nodes' network namespaces, plus
    every descendant of them (the job tasks), children first."""
    parent = {}
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % e) as f:
                s = f.read()
            parent[int(e)] = int(s[s.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            pass
    roots = []
    for pid in parent:
        argv = _cmdline(pid)
        if argv and argv[0].startswith("slurmstepd") and _netns(pid) in netns_ids:
            roots.append(pid)
    out, todo = [], list(roots)
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(c for c, pp in parent.items() if pp == p and c not in out)
    return list(reversed(out))


def _clients(conf):
    """srun/salloc/sbatch/sattach processes whose environment points at our
    slurm.conf: after the daemons are gone they would wait forever."""
    want = ("SLURM_CONF=" + conf).encode()
    me = os.getpid()
    out = []
    for e in os.listdir("/proc"):
        if not e.isdigit() or int(e) == me:
            continue
        argv = _cmdline(int(e))
        if not argv or os.path.basename(argv[0]) not in ("srun", "salloc", "sbatch", "sattach"):
            continue
        try:
            with open("/proc/%s/environ" % e, "rb") as f:
                if want in f.read().split(b"\0"):
                    out.append(int(e))
        except OSError:
            pass
    return out


def _signal(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def down(state_dir, log):
    """Stop every daemon up() started (pids in state_dir/testbed.json), the
    slurmstepd/job processes left in the nodes' network namespaces, and any
    srun/salloc/sbatch/sattach whose environment has this SLURM_CONF (they
    would hang once the daemons are gone).  Idempotent; no-op without state."""
    t0 = time.monotonic()
    sd = _p(state_dir)
    sf = os.path.join(sd, STATE_FILE)
    try:
        with open(sf) as f:
            state = json.load(f)
    except (OSError, ValueError):
        state = None
    if state is None and not os.path.isdir(os.path.join(sd, "run")):
        return
    state = state or {"conf": os.path.join(sd, "slurm.conf")}
    daemons = list(state.get("daemons", []))
    # also the pid files the daemons wrote (covers an up() that died before
    # recording a pid); _ours() still checks each pid's command line
    known = {d["pid"] for d in daemons}
    try:
        pidfiles = os.listdir(os.path.join(sd, "run"))
    except OSError:
        pidfiles = []
    for fn in pidfiles:
        if not fn.endswith(".pid"):
            continue
        kind = fn[:-4].split("-", 1)[0]
        if kind not in ("slurmd", "slurmctld", "munged"):
            continue
        pid = _read_pid(os.path.join(sd, "run", fn), wait=0)
        if pid and pid not in known:
            d = {"kind": kind, "name": fn[:-4], "pid": pid, "argv0": kind,
                 "marker": sd, "netns": _netns(pid)}
            if _ours(d):
                daemons.append(d)
    netns_ids = {d["netns"] for d in daemons if d["kind"] == "slurmd" and d.get("netns")}
    order = ("slurmd", "slurmctld", "munged")
    for kind in order:
        live = [d for d in daemons if d["kind"] == kind and _ours(d)]
        _signal([d["pid"] for d in live], signal.SIGTERM)
        end = time.monotonic() + DOWN_TIMEOUT
        while live and time.monotonic() < end:
            live = [d for d in live if _ours(d)]
            time.sleep(0.1)
        for d in live:
            log("testbed_slurm: %s %s pid %d ignored SIGTERM, SIGKILL"
                % (d["kind"], d["name"], d["pid"]))
        _signal([d["pid"] for d in live], signal.SIGKILL)
        if kind == "slurmd" and netns_ids:
            left = _stepd_trees(netns_ids)
            if left:
                log("testbed_slurm: killing %d leftover step/job process(es)" % len(left))
                _signal(left, signal.SIGKILL)
    left = _clients(state.get("conf", ""))
    if left:
        log("testbed_slurm: killing %d leftover client(s) (srun/salloc/sbatch): %s"
            % (len(left), left))
        _signal(left, signal.SIGKILL)
    for d in daemons:
        if _cmdline(d["pid"]) is not None and _ours(d):
            raise RuntimeError("testbed_slurm: %s pid %d still running"
                               % (d["kind"], d["pid"]))
    try:
        os.remove(sf)
    except OSError:
        pass
    log("testbed_slurm: down in %.1fs" % (time.monotonic() - t0))
