#!/usr/bin/python3
"""The reference users would pick instead: PyTorch (Debian's python3-torch)
training ompdpu-train's reference CNN (or its small ResNet on Fashion-MNIST
upscaled to 3x32x32) on the same Fashion-MNIST files, with the same
optimizer, schedule, batch, augmentation kinds (light: crop with padding and
flip; heavy: random resized crop, rotation, flip, colour) and thread count.
Prints one line per epoch and writes a JSON report like ompdpu-train's.

  /usr/bin/python3 pytorch_ref.py --threads 1 --epochs 2 --json out.json
  /usr/bin/python3 pytorch_ref.py --model resnet --augment heavy
"""
import argparse
import gzip
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

MEAN, STD = 0.2860, 0.3530


def read_idx(path, magic):
    """The array of an IDX file (gzip), header checked."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    got, = struct.unpack(">I", data[:4])
    if got != magic:
        sys.exit(f"{path}: not an IDX file (magic {got:#x})")
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(data_dir, split, limit, size=0):
    """uint8 images n x c x h x w: grey, or upscaled to 3 x size x size as
    ompdpu-train fits them to the ResNet (bilinear, half-pixel centres)."""
    x = read_idx(f"{data_dir}/{split}-images-idx3-ubyte.gz", 0x803)
    y = read_idx(f"{data_dir}/{split}-labels-idx1-ubyte.gz", 0x801)
    if limit:
        x, y = x[:limit], y[:limit]
    x = torch.from_numpy(x.copy()).unsqueeze(1)
    if size:
        x = F.interpolate(x.float(), size=(size, size), mode="bilinear", align_corners=False)
        x = x.add_(0.5).floor_().clamp_(0, 255).to(torch.uint8).expand(-1, 3, -1, -1).contiguous()
    return x, torch.from_numpy(y.astype(np.int64))


class ReferenceCNN(nn.Module):
    """conv 5x5 1->32 p2, ReLU, pool 2, conv 5x5 32->64 p2, ReLU, pool 2,
    fc 3136->256, ReLU, dropout 0.25, fc 256->10 (as dnnt_reference_cnn)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 32, 5, padding=2)
        self.c2 = nn.Conv2d(32, 64, 5, padding=2)
        self.f1 = nn.Linear(3136, 256)
        self.f2 = nn.Linear(256, 10)
        for m in (self.c1, self.c2, self.f1, self.f2):
            # Kaiming-uniform weights and zero biases, as dnnt_init_params.
            nn.init.kaiming_uniform_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = F.dropout(F.relu(self.f1(x.flatten(1))), 0.25, self.training)
        return self.f2(x)


class SmallResNet(nn.Module):
    """dnnt_small_resnet: conv 3->16, three stages of a residual block
    (conv, ReLU, conv with weights scaled by 0.1, add, ReLU), stride-2 convs
    between them, max pool 2, fc 1024->10."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.blocks = nn.ModuleList()
        self.downs = nn.ModuleList([nn.Conv2d(16, 32, 3, 2, 1), nn.Conv2d(32, 64, 3, 2, 1)])
        for ch in (16, 32, 64):
            self.blocks.append(nn.ModuleList([nn.Conv2d(ch, ch, 3, padding=1),
                                              nn.Conv2d(ch, ch, 3, padding=1)]))
        self.fc = nn.Linear(64 * 4 * 4, 10)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_uniform_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)
        with torch.no_grad():
            for b in self.blocks:
                b[1].weight.mul_(0.1)

    def forward(self, x):
        x = F.relu(self.stem(x))
        for i, (c1, c2) in enumerate(self.blocks):
            x = F.relu(x + c2(F.relu(c1(x))))
            if i < 2:
                x = F.relu(self.downs[i](x))
        return self.fc(F.max_pool2d(x, 2).flatten(1))


def normalise(raw):
    return raw.float().div_(255.0).sub_(MEAN).div_(STD)


def augment(raw, pad, gen):
    """Random crop with zero padding, horizontal flip, normalisation."""
    n, _, h, w = raw.shape
    x = normalise(raw)
    if pad:
        # Zero padding of the raw image is -MEAN/STD after normalisation.
        x = F.pad(x, (pad,) * 4, value=-MEAN / STD)
        ox = torch.randint(0, 2 * pad + 1, (n,), generator=gen)
        oy = torch.randint(0, 2 * pad + 1, (n,), generator=gen)
        x = torch.stack([x[i, :, oy[i]:oy[i] + h, ox[i]:ox[i] + w] for i in range(n)])
    flip = torch.rand(n, generator=gen) < 0.5
    x[flip] = x[flip].flip(3)
    return x.contiguous()


def uniform(n, lo, hi, gen):
    return lo + torch.rand(n, generator=gen, dtype=torch.float64) * (hi - lo)


def augment_heavy(raw, gen):
    """ompdpu-train's --augment heavy with torch ops, batched: the random
    resized crop (scale 0.35-1, aspect 3/4-4/3 log-uniform, clamped), a
    rotation of U(-15, 15) degrees and the flip as one bilinear warp
    (affine_grid + grid_sample, fill 0), then a gain U(0.8, 1.2) per
    channel, contrast U(0.8, 1.2) around the image mean, saturation
    1 + U(-0.4, 0.4), brightness U(-0.2, 0.2) x 255, clamp, normalisation."""
    n, c, h, w = raw.shape
    x = raw.float()
    area = uniform(n, 0.35, 1.0, gen) * h * w
    aspect = torch.exp(uniform(n, math.log(0.75), math.log(4 / 3), gen))
    bh = torch.sqrt(area / aspect).round().clamp(1, h)
    bw = torch.sqrt(area * aspect).round().clamp(1, w)
    by = torch.floor(torch.rand(n, generator=gen, dtype=torch.float64) * (h - bh + 1))
    bx = torch.floor(torch.rand(n, generator=gen, dtype=torch.float64) * (w - bw + 1))
    th = uniform(n, -15.0, 15.0, gen) * math.pi / 180
    flip = torch.where(torch.rand(n, generator=gen) < 0.5, -1.0, 1.0).double()
    cs, sn = torch.cos(th), torch.sin(th)
    # Output (x, y) in [-1, 1]: flip, rotate counter-clockwise (y down),
    # scale into the box around its centre.
    sx, sy = bw / w, bh / h
    cx, cy = (bx + bw / 2) / w * 2 - 1, (by + bh / 2) / h * 2 - 1
    theta = torch.stack([torch.stack([cs * flip * sx, -sn * sx, cx], 1),
                         torch.stack([sn * flip * sy, cs * sy, cy], 1)], 1).float()
    grid = F.affine_grid(theta, (n, c, h, w), align_corners=False)
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    gain = 1 + (torch.rand(n, c, 1, 1, generator=gen) * 2 - 1) * 0.2
    x = x * gain
    mean = raw.float().mean((1, 2, 3), keepdim=True)
    x = (x - mean) * (1 + (torch.rand(n, 1, 1, 1, generator=gen) * 2 - 1) * 0.2) + mean
    if c == 3:
        grey = 0.299 * x[:, 0:1] + 0.587 * x[:, 1:2] + 0.114 * x[:, 2:3]
        x = (x - grey) * (1 + (torch.rand(n, 1, 1, 1, generator=gen) * 2 - 1) * 0.4) + grey
    x = x + (torch.rand(n, 1, 1, 1, generator=gen) * 2 - 1) * 0.2 * 255
    return x.clamp_(0, 255).div_(255.0).sub_(MEAN).div_(STD).contiguous()


def evaluate(model, x, y, batch=100):
    model.eval()
    correct, loss = 0, 0.0
    with torch.no_grad():
        for s in range(0, x.shape[0], batch):
            xb = normalise(x[s:s + batch])
            out = model(xb)
            loss += F.cross_entropy(out, y[s:s + batch], reduction="sum").item()
            correct += (out.argmax(1) == y[s:s + batch]).sum().item()
    model.train()
    return correct / x.shape[0], loss / x.shape[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.environ.get("DNNT_DATA", "/usr/share/datasets/fashion-mnist"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--schedule-epochs", type=int, default=0,
                    help="length of the cosine schedule (default: --epochs)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--train-limit", type=int, default=0)
    ap.add_argument("--test-limit", type=int, default=0)
    ap.add_argument("--pad", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--model", choices=("cnn", "resnet"), default="cnn")
    ap.add_argument("--augment", choices=("light", "heavy"), default="light")
    ap.add_argument("--json")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed)
    size = 32 if a.model == "resnet" else 0
    xtr, ytr = load(a.data, "train", a.train_limit, size)
    xte, yte = load(a.data, "t10k", a.test_limit, size)
    model = SmallResNet() if a.model == "resnet" else ReferenceCNN()
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9, weight_decay=5e-4)
    steps = xtr.shape[0] // a.batch
    total = a.schedule_epochs or a.epochs
    print(f"pytorch {torch.__version__}: {a.threads} thread(s), {xtr.shape[0]} training / "
          f"{xte.shape[0]} test images, {a.model}, {a.augment} augmentation, batch {a.batch}, "
          f"{a.epochs} epochs", flush=True)
    recs, t_start = [], time.monotonic()
    for e in range(a.epochs):
        t0 = time.monotonic()
        perm = torch.randperm(xtr.shape[0], generator=gen)
        loss_sum, correct, t_aug = 0.0, 0, 0.0
        for b in range(steps):
            for g in opt.param_groups:
                g["lr"] = a.lr * 0.5 * (1 + math.cos(math.pi * min((e + b / steps) / total, 1.0)))
            idx = perm[b * a.batch:(b + 1) * a.batch]
            s0 = time.monotonic()
            x = augment_heavy(xtr[idx], gen) if a.augment == "heavy" else augment(xtr[idx], a.pad, gen)
            t_aug += time.monotonic() - s0
            out = model(x)
            loss = F.cross_entropy(out, ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss_sum += loss.item() * a.batch
            correct += (out.argmax(1) == ytr[idx]).sum().item()
        t_train = time.monotonic() - t0
        v0 = time.monotonic()
        acc, tloss = evaluate(model, xte, yte)
        t_val = time.monotonic() - v0
        n = steps * a.batch
        rec = {"epoch": e + 1, "loss": loss_sum / n, "train_acc": correct / n, "test_acc": acc,
               "test_loss": tloss, "time_s": t_train + t_val, "train_s": t_train,
               "images_s": n / (t_train + t_val), "train_images_s": n / t_train,
               "aug_s": t_aug, "val_s": t_val}
        recs.append(rec)
        print(f"epoch {e + 1:2d}/{a.epochs}  loss {rec['loss']:.4f}  train {100 * rec['train_acc']:.2f}%  "
              f"test {100 * acc:.2f}% (loss {tloss:.4f})  time {rec['time_s']:.1f} s  "
              f"{rec['images_s']:.0f} img/s  aug {t_aug:.2f} s  val {t_val:.2f} s", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"way": "pytorch", "torch": torch.__version__, "threads": a.threads,
                       "model": a.model, "augment": a.augment,
                       "batch": a.batch, "epochs": a.epochs, "train_images": int(xtr.shape[0]),
                       "test_images": int(xte.shape[0]), "total_s": time.monotonic() - t_start,
                       "epoch_records": recs}, f, indent=1)


if __name__ == "__main__":
    main()
