#!/usr/bin/env bash
# scripts/lib/stages.sh, as bench.sh and test.sh use it: the expected duration
# from the built-in estimates, then from the last run's record; a line per
# stage with elapsed and left; a failing stage ends the script with its status
# and keeps the last good record; a stage's own output passes through.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ompdpu-stages.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { printf 'FAIL: stages: %s\n' "$*"; exit 1; }
cat >"$WORK/script.sh" <<SH
set -euo pipefail
source "$REPO/scripts/lib/stages.sh"
two() { sleep 1; echo "two's own output"; [[ -z \${FAIL_TWO:-} ]] || return 3; }
stages_begin demo demo one=90 two=30 three=3600
stage one true
stage two two
stage three true
stages_end
SH
run() { XDG_CACHE_HOME=$WORK/cache bash "$WORK/script.sh" 2>&1; }
out=$(run) || fail "first run failed: $out"
grep -qx 'demo: expected duration about 1h02m in 3 stages (one two three), from a built-in estimate' <<<"$out" ||
  fail "first run's expectation: $out"
grep -qxE 'demo: \[2/3\] two \(about 30s\): [0-9]+s elapsed, about 1h00m left' <<<"$out" ||
  fail "first run's stage line: $out"
grep -qx "two's own output" <<<"$out" || fail "a stage's output is lost: $out"
record=$WORK/cache/ompdpu/stage-times/demo
[[ $(cut -d' ' -f1 "$record" | tr '\n' ' ') == "one two three " ]] || fail "record: $(cat "$record")"
out=$(run) || fail "second run failed: $out"
grep -q 'demo: expected duration about [0-9]s in 3 stages (one two three), from the last run on this machine' <<<"$out" ||
  fail "second run does not use the record: $out"
before=$(grep '^two ' "$record")
rc=0
out=$(FAIL_TWO=1 run) || rc=$?
((rc == 3)) || fail "a stage failing with 3 ended the script with $rc: $out"
grep -q '\[3/3\]' <<<"$out" && fail "the script went on after a failing stage: $out"
[[ $(grep '^two ' "$record") == "$before" ]] || fail "a failed stage replaced its record: $(cat "$record")"
echo "PASS: stages: estimates, then the last run's times; stage lines; a failing stage's status"
