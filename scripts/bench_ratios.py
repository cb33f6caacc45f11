#!/usr/bin/env python3
"""Run a criterion bench several times and report, per row, the median over
runs of (row time / floor time in the same run).

    python3 scripts/bench_ratios.py notify_fastpath floor/fence_plus_load 3
"""
import re
import statistics
import subprocess
import sys

bench, floor, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3
UNITS = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
per_row = {}
for run in range(runs):
    out = subprocess.run(
        ["cargo", "bench", "--bench", bench, "--", "--noplot"],
        capture_output=True, text=True, check=True,
    ).stdout
    times = {}
    name = None
    for line in out.splitlines():
        m = re.match(r"^(\S+)\s*$", line) or re.match(r"^(\S+)\s+time:", line)
        if m and "/" in m.group(1):
            name = m.group(1)
        t = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", line)
        if t and name:
            times[name] = float(t.group(1)) * UNITS[t.group(2)]
            name = None
    base = next(v for k, v in times.items() if k.endswith(floor))
    for k, v in times.items():
        per_row.setdefault(k, []).append((v, v / base))
    print(f"run {run + 1}: floor {base:.2f} ns", file=sys.stderr)
print(f"{'row':<50} {'median ns':>10} {'x floor':>8}")
for k, vals in per_row.items():
    ns = statistics.median(v for v, _ in vals)
    ratio = statistics.median(r for _, r in vals)
    print(f"{k:<50} {ns:>10.2f} {ratio:>8.2f}")
