#!/usr/bin/env python3
"""Reads an OMPDPU_TRACE=<file> timeline as a trace viewer would and holds
it to what the traced program says it did (--facts: its output lines
"session pid P", "kernels K", "slow kernel ms T", "mapped bytes B").
Exits 1 naming the first thing wrong."""
import argparse
import json
import re
import sys


def fail(why):
    print("check_trace: " + why)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--facts", required=True)
    a = ap.parse_args()
    facts = {}
    for line in open(a.facts):
        m = re.match(r"(session pid|kernels|slow kernel ms|mapped bytes) (-?\d+)$",
                     line.strip())
        if m:
            facts[m.group(1)] = int(m.group(2))
    try:
        doc = json.load(open(a.trace))
    except (OSError, ValueError) as e:
        fail("cannot read %s as JSON: %s" % (a.trace, e))
    events = doc.get("traceEvents")
    if not isinstance(events, list) or not events:
        fail("no traceEvents list")

    names = {}  # pid -> process name
    spans = []  # (pid, tid, cat, name, start us, end us, args)
    opened = {}
    for e in events:
        ph = e.get("ph")
        if ph not in ("M", "X", "b", "e") or "pid" not in e or "name" not in e:
            fail("event of unknown shape: %r" % e)
        if ph == "M":
            if e["name"] == "process_name":
                names[e["pid"]] = e["args"]["name"]
            continue
        if not isinstance(e.get("ts"), (int, float)):
            fail("event without a time: %r" % e)
        if ph == "X":
            if e.get("dur", -1) < 0:
                fail("complete event without a duration: %r" % e)
            spans.append((e["pid"], e.get("tid"), e["cat"], e["name"], e["ts"],
                          e["ts"] + e["dur"], e.get("args", {})))
        elif ph == "b":
            key = (e["pid"], e["cat"], e["id"])
            if key in opened:
                fail("async id used twice: %r" % (key,))
            opened[key] = e
        else:
            key = (e["pid"], e["cat"], e["id"])
            b = opened.pop(key, None)
            if b is None or b["name"] != e["name"] or e["ts"] < b["ts"]:
                fail("async end without its begin: %r" % e)
            spans.append((b["pid"], b.get("tid"), b["cat"], b["name"], b["ts"],
                          e["ts"], b.get("args", {})))
    if opened:
        fail("%d async events never end" % len(opened))

    hosts = [p for p, n in names.items() if n.startswith("host ")]
    sessions = [p for p, n in names.items() if " session" in n]
    if len(hosts) != 1 or len(sessions) != 1:
        fail("want one host and one session process, have %r" % names)
    host, sess = hosts[0], sessions[0]
    m = re.search(r"session pid (\d+); clock offset known to ([0-9.]+) us",
                  names[sess])
    if not m:
        fail("session process name lacks its pid and clock: %r" % names[sess])
    if int(m.group(1)) != facts["session pid"]:
        fail("trace's session pid %s, the kernels ran in %d"
             % (m.group(1), facts["session pid"]))
    tol = float(m.group(2)) + 0.002  # printed to the ns

    kernels = [s for s in spans if s[2] == "kernel"]
    if any(s[0] != sess for s in kernels):
        fail("kernel events outside the session's process")
    kernel_names = {s[3] for s in kernels}
    # As their user wrote them: "main (trace_timeline.c:31)".
    if len(kernel_names) != facts["kernels"] or not all(
            re.match(r"[A-Za-z_]\w* \([\w.-]+\.c:\d+\)$", n) for n in kernel_names):
        fail("want %d kernels, have %r" % (facts["kernels"], kernel_names))
    slow = max(kernels, key=lambda s: s[5] - s[4])
    slow_ms = (slow[5] - slow[4]) / 1000
    if slow_ms < facts["slow kernel ms"] or slow_ms > 60000:
        fail("slowest kernel took %.3f ms, want at least %d"
             % (slow_ms, facts["slow kernel ms"]))
    # The host waited for it: a wait of the host's was in progress when it
    # ended. (Its start may come late: a preempted host thread starts
    # waiting milliseconds after it sent the launch, seen in the VM.)
    if not any(s[0] == host and s[2] == "wait" and s[4] <= slow[5] + tol and
               s[5] >= slow[5] - tol for s in spans):
        fail("no host wait was in progress when the slow kernel ended "
             "(%.3f-%.3f us)" % (slow[4], slow[5]))

    host_req = {(s[3], s[6].get("request")): s for s in spans
                if s[0] == host and s[2].startswith("device ")}
    sess_req = [s for s in spans if s[0] == sess and s[2] == "session"]
    if not host_req or not sess_req:
        fail("no requests on the host (%d) or in the session (%d)"
             % (len(host_req), len(sess_req)))
    matched = 0
    for s in sess_req:
        h = host_req.get((s[3], s[6].get("request")))
        if h is None:
            fail("session request %s %r has no host request"
                 % (s[3], s[6].get("request")))
        if s[4] < h[4] - tol or s[5] > h[5] + tol:
            fail("session's %s (%.3f-%.3f us) outside the host's (%.3f-%.3f "
                 "us) by more than %.3f us" % (s[3], s[4], s[5], h[4], h[5],
                                                tol))
        matched += 1
    # Every kernel ran inside some session request (Run or Batch).
    for k in kernels:
        if not any(s[3] in ("Run", "Batch") and s[4] <= k[4] + 0.002 and
                   s[5] >= k[5] - 0.002 for s in sess_req):
            fail("kernel %s outside every Run or Batch of the session" % k[3])
    want = facts["mapped bytes"]
    for name in ("Submit", "Retrieve"):
        for side, reqs in (("host", host_req.values()), ("session", sess_req)):
            if not any(s[3] == name and s[6].get("bytes") == want
                       for s in reqs):
                fail("no %s of %d bytes on the %s side" % (name, want, side))
    print("check_trace: %d events, %d kernels, %d session requests matched, "
          "clock within %.3f us, slowest kernel %.1f ms"
          % (len(events), len(kernels), matched, tol, slow_ms))


main()
