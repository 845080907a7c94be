#!/usr/bin/env python3
"""Compare two lit result files (lit -o) of LLVM's libomptarget suite: the
baseline with LLVM's host plugin and the run against ompdpu.

  compare.py --host host.json --ompdpu ompdpu.json [--probe probe.json]
             --skipped skipped.txt [--suite DIR]

Prints the pass counts and the differences. Exit status 1 when a test that
passes with the host plugin does not pass with ompdpu and is not listed in
the skip file, when a probe test (tests/conformance/probe) did not pass, or
when the skip file is malformed.
"""
import argparse
import json
import os
import re
import sys

OK = {"PASS", "XFAIL", "FLAKYPASS"}
BAD = {"FAIL", "XPASS", "TIMEOUT", "UNRESOLVED"}


def load(path):
    with open(path) as f:
        data = json.load(f)
    results = {}
    for t in data.get("tests", []):
        name = t["name"].split(" :: ")[-1]
        results[name] = t
    return results, data.get("elapsed")


def load_skipped(path, suite):
    """Lines 'TEST: why it cannot apply to a remote device'; # comments."""
    skipped, errors = {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            test, sep, why = line.partition(":")
            test, why = test.strip(), why.strip()
            if not sep or not why:
                errors.append("%s:%d: '%s' gives no reason" % (path, n, line))
                continue
            if suite and not os.path.exists(os.path.join(suite, test)):
                errors.append("%s:%d: no test %s in the suite" % (path, n, test))
            skipped[test] = why
    return skipped, errors


def why_failed(result, lines=3):
    """A few telling lines of a failed test's output."""
    out = result.get("output", "")
    if result["code"] == "TIMEOUT":
        return ["timed out (%s s)" % round(result.get("elapsed") or 0)]
    pick = []
    pattern = re.compile(r"error|fail|abort|assert|segmentation|signal|timeout|"
                         r"expected string|not found|core dumped", re.I)
    for line in out.splitlines():
        s = line.strip()
        if (not s or s.startswith(("$ ", "#", "note:")) or "RUN: at line" in s
                or s.startswith("Command Output")):
            continue
        if pattern.search(s):
            pick.append(s[:160])
        if len(pick) >= lines:
            break
    return pick or ["(no error output; see the log)"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", required=True)
    ap.add_argument("--ompdpu", required=True)
    ap.add_argument("--probe")
    ap.add_argument("--skipped", required=True)
    ap.add_argument("--suite")
    a = ap.parse_args()

    host, host_time = load(a.host)
    dpu, dpu_time = load(a.ompdpu)
    skipped, errors = load_skipped(a.skipped, a.suite)
    status = 0
    for e in errors:
        print("error: " + e)
        status = 1

    def count(res, codes):
        return sum(1 for t in res.values() if t["code"] in codes)

    def line(label, res, elapsed):
        codes = {}
        for t in res.values():
            codes[t["code"]] = codes.get(t["code"], 0) + 1
        detail = ", ".join("%d %s" % (v, k.lower()) for k, v in sorted(codes.items()))
        took = " in %.0f s" % elapsed if elapsed else ""
        print("%-12s %3d pass of %d tests (%s)%s" % (label, count(res, OK), len(res), detail, took))

    print("== libomptarget conformance (target x86_64-pc-linux-gnu) ==")
    line("host plugin:", host, host_time)
    line("ompdpu:", dpu, dpu_time)

    regressions, skipped_seen, stale, gains = [], [], [], []
    for name in sorted(host):
        h = host[name]["code"]
        d = dpu.get(name, {}).get("code", "NOT RUN")
        if name in skipped:
            skipped_seen.append(name)
            if d in OK:
                stale.append(name)
            continue
        if h in OK and d not in OK:
            regressions.append(name)
        elif h in BAD and d in OK:
            gains.append(name)
    for name in sorted(set(dpu) - set(host)):
        if name not in skipped:
            print("note: %s ran with ompdpu only (%s)" % (name, dpu[name]["code"]))

    print("pass with the host plugin, not with ompdpu: %d" % len(regressions))
    for name in regressions:
        r = dpu.get(name)
        code = r["code"] if r else "NOT RUN"
        print("  %-10s %s" % (code, name))
        for w in (why_failed(r) if r else ["missing from the ompdpu results"]):
            print("             | " + w)
    if skipped_seen:
        print("skipped with ompdpu (tests/conformance/%s): %d"
              % (os.path.basename(a.skipped), len(skipped_seen)))
        for name in skipped_seen:
            print("  %-10s %s: %s" % (host[name]["code"].lower() + "/host", name, skipped[name]))
    for name in stale:
        print("note: %s is in %s but passed with ompdpu" % (name, os.path.basename(a.skipped)))
    host_bad = sorted(n for n, t in host.items() if t["code"] in BAD)
    if host_bad:
        print("fail with the host plugin too (not compared): %s" % ", ".join(host_bad))
    if gains:
        print("pass with ompdpu only: %s" % ", ".join(gains))

    if a.probe:
        probe, _ = load(a.probe)
        bad = sorted(n for n, t in probe.items() if t["code"] not in OK)
        if not probe or bad:
            print("error: the ompdpu pass did not prove it offloads (probe tests failed: %s)"
                  % (", ".join(bad) or "none ran"))
            for name in bad:
                for w in why_failed(probe[name]):
                    print("             | " + w)
            status = 1
        else:
            print("probe: %d programs ran their regions in an emulated DPU's server" % len(probe))
    if regressions:
        status = 1
    print("result: %s" % ("FAILED" if status else "ok"))
    return status


if __name__ == "__main__":
    sys.exit(main())
