#!/usr/bin/python3
"""Training benchmark: ompdpu-train on Fashion-MNIST three
ways (host only, augmentation + validation offloaded to an emulated DPU,
an MPI rank on the DPU), host-only with 1 and 2 threads, and PyTorch on the
same model, data and cores; then the heavy configuration (the ResNet on
Fashion-MNIST upscaled to 3x32x32 with --augment heavy) host-only against
offload, paired, for the share of an epoch the DPU can take and what it
saves. Writes training.md, training.csv, training.json and plots into --out.

  /usr/bin/python3 benchmarks/training/run_training.py --build build [--quick]

Cores (2-core machine): the host side on core 0, the emulated DPU (server
or MPI rank) on core 1; host-only and PyTorch with 2 threads use both.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import training_report  # noqa: E402

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
          "--mca", "mpi_yield_when_idle", "1", "--mca", "pml", "ob1", "--mca", "btl", "self,vader"]


def log(msg):
    print(f"[training] {msg}", flush=True)


def ensure_torch():
    """Debian's PyTorch for Debian's python3: installed here, not by the tests."""
    if subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0:
        return None
    log("installing python3-torch (Debian's PyTorch, for the reference run)")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    r = subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "python3-torch"],
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return "python3-torch could not be installed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    return None


class CpuMeter:
    """CPU other processes took during a run: busy time in /proc/stat minus
    the run's own (its children's rusage)."""

    def __enter__(self):
        self.busy0, self.wall0 = self.busy(), time.monotonic()
        self.own0 = self.own()
        return self

    def __exit__(self, *exc):
        wall = time.monotonic() - self.wall0
        foreign = (self.busy() - self.busy0) - (self.own() - self.own0)
        cores = os.cpu_count() or 1
        self.foreign_share = max(0.0, foreign) / max(wall * cores, 1e-9)
        self.load = os.getloadavg()[0]

    @staticmethod
    def busy():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")

    @staticmethod
    def own():
        t = os.times()
        return t.children_user + t.children_system


def run(name, cmd, env, out_dir):
    """Runs one configuration; its JSON report, the outside load and its log."""
    log_path = os.path.join(out_dir, f"{name}.log")
    log(f"{name}: {' '.join(cmd)}")
    t0 = time.monotonic()
    with CpuMeter() as m, open(log_path, "w") as lf:
        p = subprocess.run(cmd, env=env, stdout=lf, stderr=subprocess.STDOUT)
    wall = time.monotonic() - t0
    with open(log_path) as f:
        text = f.read()
    for line in text.splitlines():
        if line.startswith(("epoch", "final")):
            log(f"  {name}: {line}")
    res = {"name": name, "cmd": cmd, "exit": p.returncode, "wall_s": wall,
           "foreign_cpu": m.foreign_share, "loadavg": m.load, "log": os.path.basename(log_path),
           "log_text": text}
    jpath = os.path.join(out_dir, f"{name}.json")
    if p.returncode == 0 and os.path.exists(jpath):
        with open(jpath) as f:
            res["report"] = json.load(f)
    else:
        res["error"] = f"exit status {p.returncode}; last lines: " + " | ".join(text.splitlines()[-4:])
        log(f"  {name}: FAILED ({res['error']})")
    return res


def rotation(units, rep):
    """Repetition rep's order: the units from the rep-th on, each itself
    rotated by rep, so that drift hits every configuration alike."""
    k = rep % len(units)
    order = []
    for u in units[k:] + units[:k]:
        j = rep % len(u)
        order += u[j:] + u[:j]
    return order


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="report/training")
    ap.add_argument("--quick", action="store_true", help="CI: 1 epoch of 1,920 images (about 2 min)")
    ap.add_argument("--epochs", type=int, help="epochs per way (default 2, quick 1)")
    ap.add_argument("--train-limit", type=int, help="training images (default 12,000, quick 1,920)")
    ap.add_argument("--test-limit", type=int, help="test images (default 2,000, quick 320)")
    ap.add_argument("--reps", type=int, default=1,
                    help="interleaved repetitions; the run of median epoch time of each is kept")
    ap.add_argument("--pair-reps", type=int, default=0,
                    help="more repetitions of host-1t, offload and mpi alone (the paired offload targets)")
    ap.add_argument("--heavy-reps", type=int,
                    help="paired repetitions of host-1t and offload in the heavy configuration (ResNet on "
                         "Fashion-MNIST upscaled to 3x32x32, --augment heavy; default 3, quick 1, 0: none)")
    ap.add_argument("--heavy-train-limit", type=int,
                    help="training images of the heavy configuration, 1 epoch (default 3,840, quick 640)")
    ap.add_argument("--no-pytorch", action="store_true")
    ap.add_argument("--full-json", help="JSON of a full ompdpu-train run to include (accuracy target)")
    ap.add_argument("--data", default=os.environ.get("DNNT_DATA", "/usr/share/datasets/fashion-mnist"))
    a = ap.parse_args()
    epochs = a.epochs or (1 if a.quick else 2)
    ntrain = a.train_limit or (1920 if a.quick else 12000)
    ntest = a.test_limit or (320 if a.quick else 2000)
    heavy_reps = a.heavy_reps if a.heavy_reps is not None else (1 if a.quick else 3)
    heavy_train = a.heavy_train_limit or (640 if a.quick else 3840)
    heavy_test = heavy_train // 6
    build = os.path.abspath(a.build)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    train = os.path.join(build, "bin", "ompdpu-train")
    ompdpu = os.path.join(build, "bin", "ompdpu")
    for exe in (train, ompdpu):
        if not os.path.exists(exe):
            sys.exit(f"{exe} is missing: build the ompdpu-train and ompdpu-cli targets first")
    notes = []
    if not a.no_pytorch:
        why = ensure_torch()
        if why:
            notes.append(why)
    cores = os.cpu_count() or 1
    host_cores, dpu_core = ("0", "1") if cores >= 2 else ("0", "0")
    both = f"0-{cores - 1}"
    # Same images, draws, schedule length and test share in every run.
    common = ["--epochs", str(epochs), "--train-limit", str(ntrain), "--test-limit", str(ntest),
              "--quiet", "--data", a.data]
    env = dict(os.environ)
    env.pop("LIBOMP_USE_HIDDEN_HELPER_TASK", None)
    env.pop("OMPDPU_DEVICES", None)
    env["OMP_TARGET_OFFLOAD"] = "mandatory"

    def with_threads(n):
        return dict(env, OMP_NUM_THREADS=str(n))

    def js(name):
        return ["--json", os.path.join(out, f"{name}.json")]

    # The regions' helper threads share the training thread's core: a wait
    # that busy-polls before sleeping (OMPDPU_SPIN_US, 50 us by default)
    # takes it from the training, as MPI's polling would without
    # mpi_yield_when_idle.
    no_spin = ["env", "OMPDPU_SPIN_US=0"]
    plan = [
        ("host-1t", ["taskset", "-c", host_cores, train, "--way", "host"] + common + js("host-1t"), 1),
        ("offload", [ompdpu, "run", "--emulate", "1", "--pin", "--cores-per-dpu", "1", "--"] + no_spin
         + [train, "--way", "offload"] + common + js("offload"), 1),
        ("mpi", MPIRUN + ["-np", "1", "taskset", "-c", host_cores, train, "--way", "mpi"] + common + js("mpi")
         + [":", "-np", "1", "taskset", "-c", dpu_core, train, "--way", "mpi", "--role", "dpu"] + common, 1),
        ("worker", [ompdpu, "run", "--emulate", "1", "--pin", "--cores-per-dpu", "1", "--"] + no_spin
         + [train, "--way", "worker"] + common + js("worker"), 1),
        ("host-2t", ["taskset", "-c", both, train, "--way", "host"] + common + js("host-2t"), 2),
    ]
    if not a.no_pytorch and not notes:
        ref = os.path.join(HERE, "pytorch_ref.py")
        pt = ["--epochs", str(epochs), "--train-limit", str(ntrain), "--test-limit", str(ntest), "--data", a.data]
        plan += [("pytorch-1t", ["taskset", "-c", host_cores, "/usr/bin/python3", ref, "--threads", "1"] + pt
                  + js("pytorch-1t"), 1),
                 ("pytorch-2t", ["taskset", "-c", both, "/usr/bin/python3", ref, "--threads", "2"] + pt
                  + js("pytorch-2t"), 2)]
    # The heavy configuration: one epoch (an offload epoch's time leaves out
    # the wait for its validation, as in the steady state), host-only and
    # offload back to back, each first in turn; PyTorch's once, for its own
    # augmentation share.
    heavy = ["--model", "resnet", "--dataset", "fashion", "--augment", "heavy", "--epochs", "1",
             "--train-limit", str(heavy_train), "--test-limit", str(heavy_test), "--quiet", "--data", a.data]
    heavy_plan = [
        ("heavy-host-1t", ["taskset", "-c", host_cores, train, "--way", "host"] + heavy + js("heavy-host-1t"), 1),
        ("heavy-offload", [ompdpu, "run", "--emulate", "1", "--pin", "--cores-per-dpu", "1", "--"] + no_spin
         + [train, "--way", "offload"] + heavy + js("heavy-offload"), 1),
    ]
    heavy_extra = []
    if heavy_reps and not a.no_pytorch and not notes:
        heavy_extra = [("heavy-pytorch-1t", ["taskset", "-c", host_cores, "/usr/bin/python3", ref, "--threads", "1",
                                             "--model", "resnet", "--augment", "heavy", "--epochs", "1",
                                             "--train-limit", str(heavy_train), "--test-limit", str(heavy_test),
                                             "--data", a.data] + js("heavy-pytorch-1t"), 1)]
    t0 = time.monotonic()
    runs = {name: [] for name, _, _ in plan + heavy_plan + heavy_extra}
    # host-1t, offload and mpi run back to back, each first in turn, so that
    # each repetition compares them minutes of drift closer (the offload
    # targets are decided on these triples).
    triple = plan[:3]
    units = [triple] + [[p] for p in plan[3:]]
    # Then --pair-reps more of the triple alone, rotated the same way.
    schedule = [(rep, rotation(units, rep)) for rep in range(a.reps)]
    schedule += [(rep, rotation([triple], rep)) for rep in range(a.reps, a.reps + a.pair_reps)]
    schedule += [(rep, rotation([heavy_plan], rep) + (heavy_extra if rep == 0 else []))
                 for rep in range(heavy_reps)]
    for rep, order in schedule:
        for name, cmd, n in order:
            r = run(name, cmd, with_threads(n), out)
            r["rep"] = rep + 1
            runs[name].append(r)
    results = [training_report.median_run(runs[name]) for name, _, _ in plan + heavy_plan + heavy_extra
               if runs[name]]
    for r in results:
        # The files of the run kept, not of the last repetition.
        if "report" in r:
            with open(os.path.join(out, f"{r['name']}.json"), "w") as f:
                json.dump(r["report"], f, indent=1)
        with open(os.path.join(out, r["log"]), "w") as f:
            f.write(r.pop("log_text", ""))
    for rs in runs.values():
        for r in rs:
            r.pop("log_text", None)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "host": platform.node(),
            "cpus": cores, "cpu_model": training_report.cpu_model(), "quick": a.quick,
            "epochs": epochs, "train_images": ntrain, "test_images": ntest, "reps": a.reps,
            "pair_reps": a.pair_reps, "heavy_reps": heavy_reps, "heavy_train_images": heavy_train,
            "heavy_test_images": heavy_test,
            "total_s": time.monotonic() - t0, "notes": notes}
    full = None
    if a.full_json and os.path.exists(a.full_json):
        with open(a.full_json) as f:
            full = json.load(f)
    failed = training_report.write(out, meta, results, full, runs)
    log(f"report: {os.path.join(out, 'training.md')} ({meta['total_s']:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
