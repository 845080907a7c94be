#!/bin/sh
# End-to-end checks of ompdpu-train on small runs (a few seconds each):
#   trainer_checks.sh CHECK TRAINER OMPDPU WORKDIR
# offload      the offload way with OMP_TARGET_OFFLOAD=mandatory runs its
#              regions in the emulated DPU's server process
# ways         host, offload and mpi train the same network: identical
#              epoch lines (but times) and final weight hash
# ranks        2 host ranks, data parallel: the host way, the offload way
#              with a DPU per rank and the mpi way with 2 DPU ranks agree;
#              DPU ranks with other options than their host ranks' are
#              refused
# worker       the DPU also trains a share of each batch (chosen from the
#              measured speeds): it gets a share, and after ten steps the
#              weights and momentum are the host way's up to the rounding
#              of the split sum (relative difference at most 1e-5)
# heavy        the heavy augmentation (resized crop, rotation, colour) of
#              Fashion-MNIST upscaled to the ResNet's 3x32x32: host, offload
#              and mpi train the same network; a checkpoint of it refuses to
#              resume with the light augmentation, naming it
# resume       stopping after epoch 1 and --resume gives the uninterrupted
#              run's weights bit for bit, also from a checkpoint whose epoch
#              records do not fit this version's (with a warning) and from
#              a version-1 checkpoint (no settings text); a checkpoint with
#              a byte appended, or a directory, is refused; other settings
#              are refused, naming each that differs
# dpu-killed   the DPU server killed mid-run: a warning naming the device,
#              the run completes with the host way's weights
# data-errors  truncated, corrupt and missing data files, test images of
#              another shape, images of another size than the model's input:
#              exit status 2 and a message naming the file, no crash
# bad-options  option values out of range, not numbers or unknown words,
#              --role dpu without --way mpi, and outputs that cannot be
#              written (also as root: a directory, /proc): exit status 2 and a message
#              naming the option and its value, before any training; a run
#              whose loss diverges stops with an error
set -u
check=$1 train=$2 ompdpu=$3 work=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
data=${DNNT_DATA:-/usr/share/datasets/fashion-mnist}
small="--epochs 2 --train-limit 640 --test-limit 500 --val-chunk 100 --quiet"
mpirun="mpirun --allow-run-as-root --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
unset LIBOMP_USE_HIDDEN_HELPER_TASK

fail() {
  echo "trainer_checks: $check: FAIL: $*"
  for f in *.out; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done
  exit 1
}
# The figures that must not depend on the way: epoch, losses, accuracies
# and weight hash of each epoch line; the final line's accuracy and hash.
figures() {
  sed -n -e 's/^\(epoch *[0-9]*\/[0-9]*  loss [^ ]*  train [^ ]*  test [^ ]* (loss [^)]*)\).* hash \(.*\)$/\1 \2/p' \
    -e 's/^final: \(.*\), [0-9.]* s$/\1/p' "$1"
}
final_hash() { sed -n 's/^final: .*weight hash \([0-9a-f]*\).*/\1/p' "$1"; }

case $check in
offload)
  OMP_TARGET_OFFLOAD=mandatory "$ompdpu" run --emulate 1 -- "$train" --way offload $small >offload.out 2>&1 ||
    fail "exit status $?"
  line=$(grep "regions run in process" offload.out) || fail "no offload line"
  server=$(echo "$line" | sed 's/.*in process \([0-9]*\) .*/\1/')
  self=$(echo "$line" | sed 's/.*this is \([0-9]*\)).*/\1/')
  [ "$server" != "$self" ] || fail "the regions ran in the program's own process"
  grep -q "^final: " offload.out || fail "no final line"
  ;;
ways)
  "$train" --way host $small >host.out 2>&1 || fail "host: exit status $?"
  "$ompdpu" run --emulate 1 -- "$train" --way offload $small >offload.out 2>&1 ||
    fail "offload: exit status $?"
  $mpirun -np 1 "$train" --way mpi $small : -np 1 "$train" --way mpi --role dpu $small \
    >mpi.out 2>&1 || fail "mpi: exit status $?"
  figures host.out >host.fig
  [ "$(wc -l <host.fig)" -eq 3 ] || fail "host: expected 2 epoch lines and a final line"
  for w in offload mpi; do
    figures $w.out >$w.fig
    cmp -s host.fig $w.fig || fail "$w differs from host: $(diff host.fig $w.fig)"
  done
  ;;
heavy)
  heavy="--model resnet --dataset fashion --augment heavy --epochs 1 --train-limit 256 --test-limit 100 --val-chunk 50 --quiet"
  "$train" --way host $heavy --checkpoint heavy.ck >host.out 2>&1 || fail "host: exit status $?"
  grep -q "upscaled to the resnet model's 3x32x32 input" host.out || fail "no upscaling note"
  grep -q "Fashion-MNIST images, heavy augmentation" host.out || fail "not the heavy configuration"
  "$ompdpu" run --emulate 1 -- "$train" --way offload $heavy >offload.out 2>&1 ||
    fail "offload: exit status $?"
  $mpirun -np 1 "$train" --way mpi $heavy : -np 1 "$train" --way mpi --role dpu $heavy \
    >mpi.out 2>&1 || fail "mpi: exit status $?"
  figures host.out >host.fig
  [ "$(wc -l <host.fig)" -eq 2 ] || fail "host: expected an epoch line and a final line"
  for w in offload mpi; do
    figures $w.out >$w.fig
    cmp -s host.fig $w.fig || fail "$w differs from host: $(diff host.fig $w.fig)"
  done
  # The light augmentation trains another network: not a resume of it.
  "$train" --way host $(echo "$heavy" | sed 's/--augment heavy/--augment light/; s/--epochs 1/--epochs 2/') \
    --checkpoint heavy.ck --resume >light.out 2>&1 && fail "light resumed a heavy checkpoint"
  grep -q -- "--augment heavy (this run: light)" light.out || fail "no message naming --augment"
  ;;
ranks)
  tiny="--epochs 1 --train-limit 640 --test-limit 200 --quiet"
  $mpirun -np 2 "$train" --way host $tiny >host.out 2>&1 || fail "host: exit status $?"
  OMPDPU_DEVICE_SHARE=local-rank "$ompdpu" run --emulate 2 -- $mpirun -x OMPDPU_DEVICE_SHARE \
    -np 2 "$train" --way offload $tiny >offload.out 2>&1 || fail "offload: exit status $?"
  [ "$(grep -c 'regions run in process' offload.out)" -eq 1 ] || fail "offload: no DPU line"
  $mpirun -np 2 "$train" --way mpi $tiny : -np 2 "$train" --way mpi --role dpu $tiny \
    >mpi.out 2>&1 || fail "mpi: exit status $?"
  grep -q "2 ranks" host.out || fail "not 2 ranks"
  figures host.out >host.fig
  for w in offload mpi; do
    figures $w.out >$w.fig
    cmp -s host.fig $w.fig || fail "$w differs from host: $(diff host.fig $w.fig)"
  done
  # DPU ranks started with other options: refused before any batch (they
  # would augment other batches, or larger ones than their buffers).
  $mpirun -np 2 "$train" --way mpi $tiny : -np 2 "$train" --way mpi --role dpu $tiny --batch 32 \
    >mismatch.out 2>&1 && fail "mpi: DPU ranks with another --batch ran"
  grep -q "this DPU rank's options differ from those of its host rank (MPI rank [01]): --batch 64 (this run: 32)" \
    mismatch.out || fail "mpi: no message on the DPU ranks' options"
  ! grep -q "^epoch" mismatch.out || fail "mpi: trained with mismatched DPU ranks"
  ;;
worker)
  # Ten steps each; the checkpoints hold the weights and the momentum (the
  # gradients' running sum), compared relative to their size: rounding of
  # the split sum gives about 1e-7, a DPU share computed from other inputs
  # or dropout masks, or lost, 0.1 or more.
  args="--epochs 1 --train-limit 640 --test-limit 100 --val-chunk 100 --quiet"
  "$train" --way host $args --checkpoint host.ck >host.out 2>&1 || fail "host: exit status $?"
  OMP_TARGET_OFFLOAD=mandatory "$ompdpu" run --emulate 1 -- "$train" --way worker $args \
    --checkpoint worker.ck >worker.out 2>&1 || fail "worker: exit status $?"
  grep -q "regions run in process" worker.out || fail "no offload line"
  share=$(sed -n 's/^worker: the DPU trained \([0-9]*\)%.*/\1/p' worker.out | tail -1)
  [ -n "$share" ] && [ "$share" -gt 0 ] || fail "the DPU trained no images"
  /usr/bin/python3 - host.ck worker.ck <<'PY' >compare.out 2>&1 || fail "worker: $(cat compare.out)"
import array, math, struct, sys
def arrays(path):
    b = open(path, "rb").read()
    n = struct.unpack_from("<q", b, 40)[0]  # nparams, after magic, 3 hashes, epoch, step
    at = 8 + 3 * 8 + 4 + 4 + 8 + 8 + 256
    w, m = array.array("f"), array.array("f")
    w.frombytes(b[at:at + 4 * n])
    m.frombytes(b[at + 4 * n:at + 8 * n])
    return w, m
(hw, hm), (ww, wm) = arrays(sys.argv[1]), arrays(sys.argv[2])
for name, a, b in (("weights", hw, ww), ("momentum", hm, wm)):
    diff = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    size = math.sqrt(sum(x * x for x in a))
    print("%s differ by %.2g of their size" % (name, diff / size))
    if not diff <= 1e-5 * size:
        sys.exit(1)
PY
  ;;
resume)
  "$train" --way host $small --checkpoint whole.ck >whole.out 2>&1 || fail "exit status $?"
  "$train" --way host $small --checkpoint part.ck --stop-after 1 >part1.out 2>&1 ||
    fail "first part: exit status $?"
  [ -f part.ck ] || fail "no checkpoint written"
  cp part.ck other.ck
  # A byte more, or a directory, is not a checkpoint.
  cp part.ck longer.ck && printf X >>longer.ck
  "$train" --way host $small --checkpoint longer.ck --resume >longer.out 2>&1
  [ $? -eq 2 ] || fail "resumed from a checkpoint with a byte appended"
  grep -q "error: --resume: longer.ck: unexpected bytes after its checksum" longer.out ||
    fail "no message on the appended byte"
  mkdir dir.ck
  "$train" --way host $small --checkpoint dir.ck --resume >dir.out 2>&1
  grep -q "error: --checkpoint dir.ck: is a directory" dir.out || fail "no message on a directory"
  "$train" --way host $small --lr 0.05 --no-flip --checkpoint part.ck --resume >lr.out 2>&1
  [ $? -eq 2 ] || fail "resumed with another learning rate"
  grep -q "error: --resume: part.ck was written with other settings: flip yes (this run: no), --lr 0.02 (this run: 0.05)$" lr.out ||
    fail "the settings that differ are not named"
  "$train" --way host $small --checkpoint part.ck --resume >part2.out 2>&1 ||
    fail "resumed part: exit status $?"
  # Another version's records: 8 bytes fewer of them, the file hash redone;
  # and part.ck as version 1 wrote it (no settings text).
  cp part.ck v1.ck
  /usr/bin/python3 - other.ck v1.ck <<'PY' || fail "cannot rewrite other.ck"
import struct, sys
fmt = "<8sQQQiIqQ"
def fnv(body):
    h = 0xcbf29ce484222325
    for x in body:
        h = ((h ^ x) * 0x100000001b3) & 0xffffffffffffffff
    return struct.pack("<Q", h)
b = bytearray(open(sys.argv[1], "rb").read())
head = list(struct.unpack_from(fmt, b))
hist = head[7]
body = b[:len(b) - 8 - hist] + b[len(b) - 8 - hist:len(b) - 16]
head[7] = hist - 8
struct.pack_into(fmt, body, 0, *head)
open(sys.argv[1], "wb").write(bytes(body) + fnv(body))
b = bytearray(open(sys.argv[2], "rb").read())
size = struct.calcsize(fmt)
body = b"DNNTCKP1" + b[8:size] + b[size + 256:len(b) - 8]
open(sys.argv[2], "wb").write(body + fnv(body))
PY
  "$train" --way host $small --checkpoint v1.ck --resume >v1.out 2>&1 ||
    fail "resumed from v1.ck: exit status $?"
  [ "$(final_hash whole.out)" = "$(final_hash v1.out)" ] ||
    fail "weights resumed from v1.ck $(final_hash v1.out) != $(final_hash whole.out)"
  "$train" --way host $small --lr 0.05 --checkpoint v1.ck --resume >v1lr.out 2>&1
  [ $? -eq 2 ] || fail "resumed from v1.ck with another learning rate"
  grep -q "error: --resume: v1.ck was written with other settings (seed" v1lr.out ||
    fail "no message for a version-1 checkpoint of other settings"
  "$train" --way host $small --checkpoint other.ck --resume >other.out 2>&1 ||
    fail "resumed from other.ck: exit status $?"
  grep -q "warning: --resume: the epoch records in other.ck are of another" other.out ||
    fail "no warning on another version's records"
  [ "$(final_hash whole.out)" = "$(final_hash other.out)" ] ||
    fail "weights resumed from other.ck $(final_hash other.out) != $(final_hash whole.out)"
  grep -q "resumed from part.ck after epoch 1" part2.out || fail "did not resume"
  [ -n "$(final_hash whole.out)" ] || fail "no final hash"
  [ "$(final_hash whole.out)" = "$(final_hash part2.out)" ] ||
    fail "resumed weights $(final_hash part2.out) != uninterrupted $(final_hash whole.out)"
  figures whole.out | grep "^epoch  2" >a.fig
  figures part2.out | grep "^epoch  2" >b.fig
  cmp -s a.fig b.fig || fail "epoch 2 differs: $(diff a.fig b.fig)"
  ;;
dpu-killed)
  args="--epochs 2 --train-limit 1920 --test-limit 1000 --val-chunk 100 --quiet"
  "$train" --way host $args >host.out 2>&1 || fail "host: exit status $?"
  # Kill the server once the offload way has been training for a while.
  "$ompdpu" run --emulate 1 -- sh -c '
    "$0" --way offload $1 >killed.out 2>&1 & pid=$!
    n=0
    while ! grep -q "^epoch  1" killed.out && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done
    echo "killing $OMPDPU_SERVER_PIDS" >kill.log
    kill -9 $OMPDPU_SERVER_PIDS
    wait $pid; echo "exit-status: $?" >>killed.out' "$train" "$args"
  grep -q "exit-status: 0" killed.out || fail "the run did not complete"
  grep -q "warning: rank 0: DPU lost (OpenMP device 0, 127.0.0.1:[0-9]*)" killed.out ||
    fail "no warning naming the device"
  [ "$(final_hash host.out)" = "$(final_hash killed.out)" ] ||
    fail "weights $(final_hash killed.out) != the host way's $(final_hash host.out)"
  ;;
data-errors)
  # A small valid data set, then broken copies of it.
  mkdir good
  /usr/bin/python3 - <<'PY' || fail "cannot make the data set"
import gzip, struct
def write(name, magic, dims, body):
    with gzip.open(name, "wb") as f:
        f.write(struct.pack(">I" + "I" * len(dims), magic, *dims) + body)
for split, n in (("train", 256), ("t10k", 64)):
    write(f"good/{split}-images-idx3-ubyte.gz", 0x803, (n, 28, 28), bytes(i % 251 for i in range(n * 784)))
    write(f"good/{split}-labels-idx1-ubyte.gz", 0x801, (n,), bytes(i % 10 for i in range(n)))
PY
  "$train" --data good --epochs 1 --quiet >good.out 2>&1 || fail "good data: exit status $?"
  # Test images of another shape (the same bytes each): refused.
  mkdir shape && cp good/* shape/
  /usr/bin/python3 - <<'PY' || fail "cannot make the reshaped set"
import gzip, struct
with gzip.open("shape/t10k-images-idx3-ubyte.gz", "wb") as f:
    f.write(struct.pack(">IIII", 0x803, 64, 14, 56) + bytes(i % 251 for i in range(64 * 784)))
PY
  "$train" --data shape --epochs 1 --quiet >shape.out 2>&1
  [ $? -eq 2 ] || fail "shape: trained on test images of another shape"
  grep -q "error: shape/t10k-images-idx3-ubyte.gz: images of 14x56, the training set's are 28x28" \
    shape.out || fail "no message on the test images' shape"
  # Both sets of another shape than the model's input: refused, not read
  # past their end.
  /usr/bin/python3 - <<'PY' || fail "cannot make the 32x32 set"
import gzip, struct
for split, n in (("train", 256), ("t10k", 64)):
    with gzip.open(f"shape/{split}-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 32, 32) + bytes(i % 251 for i in range(n * 1024)))
PY
  "$train" --data shape --epochs 1 --quiet >shape32.out 2>&1
  [ $? -eq 2 ] || fail "shape32: exit status other than 2"
  grep -q "error: shape/train-images-idx3-ubyte.gz: images of 1 channel of 32x32, the cnn model takes 1 of 28x28" \
    shape32.out || fail "no message on the model's input shape"
  mkdir trunc corrupt missing
  cp good/* trunc/ && cp good/* corrupt/ && cp good/t10k* missing/
  f=trunc/train-images-idx3-ubyte.gz
  head -c $(($(wc -c <good/train-images-idx3-ubyte.gz) / 2)) good/train-images-idx3-ubyte.gz >$f
  /usr/bin/python3 -c "
import sys; p = sys.argv[1]; b = bytearray(open(p, 'rb').read())
for i in range(len(b) // 3, len(b) // 3 + 32): b[i] ^= 0x5a
open(p, 'wb').write(b)" corrupt/train-images-idx3-ubyte.gz
  for d in trunc corrupt missing; do
    "$train" --data $d --epochs 1 --quiet >$d.out 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "$d: exit status $rc, expected 2"
  done
  grep -q "error: trunc/train-images-idx3-ubyte.gz: truncated: the image data needs 200704 bytes" trunc.out ||
    fail "no truncation message"
  grep -q "error: corrupt/train-images-idx3-ubyte.gz: corrupt gzip data" corrupt.out ||
    fail "no corruption message"
  grep -q "error: missing/train-images-idx3-ubyte.gz: cannot open: No such file" missing.out ||
    fail "no missing-file message"
  ;;
bad-options)
  tiny="--epochs 1 --train-limit 128 --test-limit 64 --quiet"
  while IFS='|' read -r args message; do
    # shellcheck disable=SC2086
    "$train" $tiny $args >bad.out 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "$args: exit status $rc, expected 2"
    grep -qF "ompdpu-train: error: $message" bad.out || fail "$args: no '$message'"
    ! grep -q "^epoch\|^final" bad.out || fail "$args: it trained"
  done <<'CASES'
--epochs 2000000000|--epochs 2000000000: not a whole number from 1 to 100000
--epochs 1.5|--epochs 1.5: not a whole number
--batch 3x|--batch 3x: not a whole number
--lr abc|--lr abc: not a number
--lr nan|--lr nan: not a number
--lr -1|--lr -1: not a number
--wd inf|--wd inf: not a number
--seed -1|--seed -1: not a whole number
--pad 100|--pad 100: not a whole number from 0 to 16
--train-limit -1|--train-limit -1: not a whole number
--stop-after 0|--stop-after 0: not a whole number
--model bogus|--model must be one of cnn|resnet, not 'bogus'
--augment medium|--augment must be one of light|heavy, not 'medium'
--dataset mnist|--dataset must be one of fashion|synthetic, not 'mnist'
--schedule bogus|--schedule must be one of cosine|step|constant, not 'bogus'
--warmup 5|--warmup 5: more epochs than the run's 1
--json nowhere/x.json|--json nowhere/x.json: cannot write in nowhere
--checkpoint nowhere/c|--checkpoint nowhere/c: cannot write in nowhere
--checkpoint .|--checkpoint .: is a directory
--json /proc/x.json|--json /proc/x.json: cannot write in /proc
--role dpu|--role dpu is the DPU side of --way mpi
CASES
  "$train" --epochs 1 --train-limit 640 --test-limit 64 --quiet --lr 10 \
    --momentum 0.99 >diverged.out 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "diverging run: exit status $rc, expected 2"
  grep -q "error: epoch 1: the training loss is .*: training diverged" diverged.out ||
    fail "no divergence message"
  ;;
*)
  echo "trainer_checks: unknown check $check" && exit 2
  ;;
esac
echo "trainer_checks: $check: PASS"
