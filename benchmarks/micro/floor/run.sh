#!/usr/bin/env bash
# libomptarget's own cost per region, without any device: the empty region and
# the 8-small-maps region of the micro-benchmarks (regions.c) with a minimal
# in-process plugin (minimal_plugin.c: malloc, memcpy, kernels not called).
# Medians of 5 rounds of 200,000 regions each, pinned to core 0.
#
#   benchmarks/micro/floor/run.sh [--libomptarget DIR]... [--llvm16]
#
# Always measures the installed libomptarget 14. --libomptarget DIR: also the
# libomptarget.so in DIR (e.g. build/llvm-patches/patched). --llvm16: also
# libomptarget 16, with clang-16 (clang-16 and clang-tools-16 are installed if
# missing, only when apt would remove nothing); libomp-16-dev cannot be
# installed beside libomp-14-dev, so it is downloaded and unpacked privately.
# Environment: OMPDPU_BUILD (default build): results in <build>/floor.
set -euo pipefail
cd "$(dirname "$0")/../../.."
HERE=benchmarks/micro/floor
OUT=$(realpath -m "${OMPDPU_BUILD:-build}")/floor
LIBS=()
LLVM16=0
while (($#)); do
  case $1 in
  --libomptarget) LIBS+=("$(realpath "${2:?--libomptarget needs a directory}")"); shift 2 ;;
  --llvm16) LLVM16=1; shift ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "floor: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
die() { echo "floor: error: $*" >&2; exit 1; }
mkdir -p "$OUT/plugin14" "$OUT/plugin16"
for d in "${LIBS[@]}"; do
  [[ -e $d/libomptarget.so ]] || die "$d holds no libomptarget.so"
done

# libomptarget 14: the plugin under the host plugin's name, first on the path.
clang-14 -O2 -shared -fPIC -Iplugin-dpu/abi/llvm14 -Iruntime "$HERE/minimal_plugin.c" \
  -o "$OUT/plugin14/libomptarget.rtl.x86_64.so"
clang-14 -O2 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu "$HERE/regions.c" -o "$OUT/regions14"

if ((LLVM16)); then
  need=()
  for p in clang-16 clang-tools-16; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
  done
  if ((${#need[@]})); then
    apt-get install -s --no-install-recommends "${need[@]}" | grep -q '^Remv' &&
      die "installing ${need[*]} would remove packages; install them yourself"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  ROOT16=$OUT/llvm16/root
  if [[ ! -e $ROOT16/usr/lib/llvm-16/lib/libomptarget.so ]]; then
    mkdir -p "$OUT/llvm16/debs"
    (cd "$OUT/llvm16/debs" && apt-get download -qq libomp-16-dev libomp5-16) \
      >"$OUT/llvm16/download.log" 2>&1 ||
      die "cannot download libomp-16-dev and libomp5-16 (log: $OUT/llvm16/download.log)"
    for deb in "$OUT"/llvm16/debs/*.deb; do dpkg -x "$deb" "$ROOT16"; done
  fi
  clang-16 -O2 -shared -fPIC -DLIBOMPTARGET_16 -Iplugin-dpu/abi/llvm14 -Iruntime "$HERE/minimal_plugin.c" \
    -o "$OUT/plugin16/libomptarget.rtl.x86_64.so"
  # 16 tries a plugin's .nextgen.so before its .so.
  cp "$OUT/plugin16/libomptarget.rtl.x86_64.so" "$OUT/plugin16/libomptarget.rtl.x86_64.nextgen.so"
  PATH=/usr/lib/llvm-16/bin:$PATH clang-16 -O2 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu \
    -I"$ROOT16/usr/lib/llvm-16/lib/clang/16/include" -L"$ROOT16/usr/lib/llvm-16/lib" \
    "$HERE/regions.c" -o "$OUT/regions16"
fi

# Median of the rounds' lines "empty_us E maps_us M".
measure() { # <label> <library path> <program>
  LD_LIBRARY_PATH=$2 OMP_TARGET_OFFLOAD=mandatory taskset -c 0 "$3" 200000 5 >"$OUT/run.txt" ||
    die "$1: the program failed"
  python3 - "$1" "$OUT/run.txt" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[2]) if l.startswith("empty_us")]
if not rows:
    sys.exit(f"floor: {sys.argv[1]}: no measurement")
e = statistics.median(float(r[1]) for r in rows)
m = statistics.median(float(r[3]) for r in rows)
print(f"| {sys.argv[1]} | {e:.3f} | {m:.3f} | {m / e:.1f} |")
EOF
}
echo "| libomptarget, minimal in-process plugin | empty region [us] | 8-small-maps region [us] | maps / empty |"
echo "|---|---:|---:|---:|"
measure "14 (installed)" "$OUT/plugin14" "$OUT/regions14"
for d in "${LIBS[@]}"; do
  measure "14, $d" "$OUT/plugin14:$d" "$OUT/regions14"
done
if ((LLVM16)); then
  measure "16 (Debian 12's 16.0.6, unpacked privately)" \
    "$OUT/plugin16:$ROOT16/usr/lib/llvm-16/lib" "$OUT/regions16"
fi
