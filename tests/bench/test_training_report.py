#!/usr/bin/env python3
"""The training report's decisions, on synthetic runs: the paired medians
decide the offload targets (one bad repetition does not), the accounting
splits each epoch into the training computation and the rest, the training
thread's CPU shows where it was measured, and different weight hashes fail
the report."""
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks", "training"))
import training_report as tr  # noqa: E402

META = {"date": "2026-01-01 00:00 UTC", "host": "test", "cpus": 2, "cpu_model": "test", "quick": False,
        "epochs": 1, "train_images": 640, "test_images": 100, "reps": 3, "pair_reps": 0, "total_s": 1.0,
        "notes": []}


def a_run(name, rep, epoch, compute, aug=0.0, val=0.0, cpu=None, weights="aa"):
    rec = {"epoch": 1, "loss": 0.5, "train_acc": 0.8, "test_acc": 0.8, "test_loss": 0.5, "lr": 0.01,
           "time_s": epoch, "images_s": 640 / epoch, "compute_s": compute, "aug_s": aug, "val_s": val,
           "allreduce_s": 0.0, "hash": weights}
    if cpu is not None:
        rec["cpu_s"] = cpu
    return {"name": name, "rep": rep, "wall_s": epoch, "foreign_cpu": 0.0, "loadavg": 0.0, "log": f"{name}.log",
            "report": {"train_images": 640, "batch": 64, "total_s": epoch, "epoch_records": [rec]}}


def three_ways(offload_epochs, mpi_epoch=9.6, offload_weights="aa"):
    """Repetitions of host-1t (10 s: 9.5 s training, 0.5 s augmentation and
    validation), offload (9.53 s training) and mpi (9.52 s training)."""
    runs = {"host-1t": [], "offload": [], "mpi": []}
    for rep, o in enumerate(offload_epochs, 1):
        runs["host-1t"].append(a_run("host-1t", rep, 10.0, 9.5, aug=0.1, val=0.4, cpu=10.0))
        runs["offload"].append(a_run("offload", rep, o, o - 0.02, aug=0.01, cpu=o, weights=offload_weights))
        runs["mpi"].append(a_run("mpi", rep, mpi_epoch, mpi_epoch - 0.08, aug=0.05))
    return runs


def report(runs):
    with tempfile.TemporaryDirectory() as out:
        results = [tr.median_run(runs[k]) for k in ("host-1t", "offload", "mpi")]
        failed = tr.write(out, META, results, None, runs)
        with open(os.path.join(out, "training.md")) as f:
            return failed, f.read()


class TrainingReport(unittest.TestCase):
    def test_paired_medians_decide(self):
        cases = [
            # The second repetition's offload run is slow (saved -40%, 1.062x
            # MPI): the medians still meet both targets.
            ([9.55, 10.2, 9.55], "median saved 90% (90%, -40%, 90%): **met**",
             "median 0.995 (0.995, 1.062, 0.995): **met**", False),
            ([9.7, 9.8, 9.55], "median saved 60% (60%, 40%, 90%): **missed**",
             "median 1.010 (1.010, 1.021, 0.995): **missed**", True),
        ]
        for epochs, saved, ratio, explained in cases:
            failed, md = report(three_ways(epochs))
            self.assertFalse(failed)
            self.assertIn(saved, md)
            self.assertIn(ratio, md)
            self.assertEqual("## Where a target is missed" in md, explained)

    def test_accounting(self):
        _, md = report(three_ways([9.55, 9.55, 9.55]))
        self.assertIn("host-only spent 0.500 s per epoch (its augmentation and validation: 0.500 s), "
                      "offload 0.020 s and mpi 0.080 s", md)
        self.assertIn("offload took 96% of the augmentation and validation off the host, mpi 84%", md)
        self.assertIn("1.003x with offload (1.003, 1.003, 1.003)", md)

    def test_training_thread_cpu_where_measured(self):
        _, md = report(three_ways([9.55, 9.55, 9.55]))
        rows = {}
        for line in md.splitlines():  # the first table: one row per run
            if line.startswith("| "):
                rows.setdefault(line.split(" | ")[0], line.split(" | "))
        self.assertEqual(rows["| host-1t"][8], "10.00")
        self.assertEqual(rows["| offload"][8], "9.55")
        self.assertEqual(rows["| mpi"][8], "–")

    def test_different_weights_fail(self):
        failed, md = report(three_ways([9.55, 9.55, 9.55], offload_weights="bb"))
        self.assertTrue(failed)
        self.assertIn("DIFFERENT", md)


if __name__ == "__main__":
    unittest.main()
