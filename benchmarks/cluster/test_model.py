#!/usr/bin/env python3
"""Self-test of model.py (stdlib only):
  python3 benchmarks/cluster/test_model.py   or   python3 -m unittest test_model  (in this folder)"""
import argparse
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402

TRUE = {"c_img": 7.0e-4, "c_step": 2.0e-3, "a_img": 3.0e-5, "v_img": 2.0e-4,
        "o_offload": 1.5e-4, "o_mpi": 4.0e-4, "overlap": 0.6}


def fit_args(**kw):
    a = dict(allreduce=[], overlap=None, fit_link_gbps=25.0, fit_latency_us=1.0, fit_dpu_speed=1.0,
             params_count=None, calls=None, c_step=None, a_img=None, v_img=None,
             fit_c_step=True, ranks_share_cores=False)
    a.update(kw)
    return argparse.Namespace(**a)


def synthetic_run(way, ranks, batch, n_train=3840, n_test=1000, epochs=2, full_step=0.02):
    """A trainer --json report made from TRUE, as the trainer would write it."""
    steps = n_train // batch
    local = batch / ranks
    compute = steps * (TRUE["c_step"] + local * TRUE["c_img"])
    ar = steps * (1 - TRUE["overlap"]) * full_step if ranks > 1 else 0.0
    aug = steps * local * TRUE["a_img"]
    val = n_test / ranks * TRUE["v_img"]
    if way == "host":
        rec = dict(compute_s=compute, aug_s=aug, val_s=val, allreduce_s=ar, time_s=compute + aug + val + ar)
    else:  # the DPU (speed 1) keeps up: the host pays its per-step cost only
        o = steps * TRUE["o_" + way]
        rec = dict(compute_s=compute, aug_s=o, val_s=0.0, allreduce_s=ar, time_s=compute + ar + o)
    return {"way": way, "model": "cnn", "ranks": ranks, "threads": "1", "batch": batch,
            "epochs": epochs, "seed": 1, "train_images": n_train, "test_images": n_test,
            "total_s": epochs * rec["time_s"], "final_hash": "0",
            "epoch_records": [dict(rec, epoch=i + 1) for i in range(epochs)]}


class Model(unittest.TestCase):
    def test_fit_recovers_parameters(self):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for way in model.WAYS:
                for ranks, batch in ((1, 64), (2, 64), (4, 256), (2, 32)):
                    path = os.path.join(d, f"{way}-{ranks}-{batch}.json")
                    with open(path, "w") as f:
                        json.dump(synthetic_run(way, ranks, batch), f)
                    paths.append(path)
            for ranks in (2, 4):
                path = os.path.join(d, f"ar{ranks}.json")
                with open(path, "w") as f:
                    json.dump({"kind": "allreduce", "ranks": ranks, "calls": 4, "bytes": 3430952,
                               "step_s": 0.02, "latency_s": 1e-6}, f)
                paths.append(path)
            runs, ars = model.load(paths)
            self.assertEqual(len(runs), 12)
            prm = model.fit(runs, ars, fit_args())
            for k, v in TRUE.items():
                self.assertAlmostEqual(prm[k], v, delta=1e-9 + 1e-9 * abs(v), msg=k)
            for r in runs:
                meas = sum(e["time_s"] for e in r["epochs"]) / len(r["epochs"])
                self.assertLess(abs(model.predict_run(prm, r) - meas) / meas, 1e-9, r["file"])
            # the command prints the errors
            out = io.StringIO()
            with redirect_stdout(out):
                model.main(["fit", "--fit-c-step"] + paths)
            self.assertIn("median 0.0%, max 0.0%", out.getvalue())

    def test_nodes_and_way_fields_win(self):
        with tempfile.TemporaryDirectory() as d:
            j = synthetic_run("host", 1, 64)
            j["nodes"] = 3
            path = os.path.join(d, "r.json")
            with open(path, "w") as f:
                json.dump(j, f)
            runs, _ = model.load([path])
            self.assertEqual(runs[0]["nodes"], 3)

    def test_ring_allreduce(self):
        self.assertEqual(model.ring_allreduce_s(1, 4e6, 100, 2.0, calls=4), 0.0)
        # p = 2: each node sends and receives W/2 twice, 2 latencies per call
        w, gbps, lat = 3430952, 100.0, 2.0
        want = w / (gbps * 1e9 / 8) + 2 * 4 * lat * 1e-6
        self.assertAlmostEqual(model.ring_allreduce_s(2, w, gbps, lat, calls=4), want, delta=1e-15)
        # large p: bandwidth term tends to 2 W / BW
        self.assertAlmostEqual(model.ring_allreduce_s(10**6, w, gbps, 0.0), 2 * w / (gbps * 1e9 / 8), delta=1e-9)

    def prm(self, **kw):
        p = dict(TRUE, grad_bytes=3430952.0, calls=4, link_gbps=100.0, latency_us=2.0, dpu_speed=0.25)
        p.update(kw)
        return p

    def args(self, **kw):
        a = dict(batch=64, global_batch=4096, train_images=60000, test_images=10000)
        a.update(kw)
        return argparse.Namespace(**a)

    def test_no_aug_no_saving(self):
        a = self.args()
        for p in (1, 8, 256):
            for kind in ("weak", "strong"):
                q = model.with_aug_share(self.prm(o_offload=0.0), 0.0, a.train_images, a.test_images, a.batch)
                self.assertEqual(model.saving(q, "offload", p, kind, a), 0.0)
                q = model.with_aug_share(self.prm(), 0.0, a.train_images, a.test_images, a.batch)
                self.assertLess(model.saving(q, "offload", p, kind, a), 0.0)  # only the overhead

    def test_aug_share_and_jain_bound(self):
        a = self.args()
        q = model.with_aug_share(self.prm(), 0.2, a.train_images, a.test_images, a.batch)
        t = model.epoch_time(q, "host", 1, 60000 / 64, 64, 60000, 10000)
        self.assertAlmostEqual(t["augval_host"] / t["time"], 0.2, places=12)
        # with no overhead and the DPU keeping up, the saving is the share
        q0 = self.prm(o_offload=0.0, dpu_speed=1.0)
        share, _ = model.share_for(q0, 0.15, 1, "weak", a)
        self.assertAlmostEqual(share, 0.15, places=6)
        # and it can never pass d / (1 + d)
        self.assertIsNone(model.share_for(self.prm(o_offload=0.0, dpu_speed=0.1), 0.15, 1, "weak", a)[0])

    def test_break_even(self):
        prm = self.prm()
        steps, b = model.steps_and_batch(8, "weak", 64, 4096, 60000)
        host = model.epoch_time(prm, "host", 8, steps, b, 60000, 10000)
        be = model.break_even(prm, 8, steps, b, 60000, 10000)
        self.assertAlmostEqual(be, host["augval_host"] / (host["compute"] + host["allreduce"]), places=15)
        # per step: DPU's aug+val = host's compute + exposed allreduce
        per_step_dpu = host["augval_host"] / be / steps
        self.assertAlmostEqual(per_step_dpu, (host["compute"] + host["allreduce"]) / steps, places=12)
        at = model.epoch_time(prm, "offload", 8, steps, b, 60000, 10000, dpu_speed=be)
        self.assertAlmostEqual(at["augval_exposed"], 0.0, places=12)
        below = model.epoch_time(prm, "offload", 8, steps, b, 60000, 10000, dpu_speed=0.9 * be)
        self.assertGreater(below["augval_exposed"], 0.0)
        # analytic: with A = 0.1 C and no allreduce (1 node) the break-even is 0.1
        q = model.with_aug_share(prm, 0.1 / 1.1, 60000, 10000, 64)
        self.assertAlmostEqual(model.break_even(q, 1, 60000 / 64, 64, 60000, 10000), 0.1, places=12)


if __name__ == "__main__":
    unittest.main()
