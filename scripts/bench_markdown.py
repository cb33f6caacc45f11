#!/usr/bin/env python3
"""Render the bench_report JSON as the Markdown tables of docs/benchmarks.md.

    cargo run --release --example bench_report -- --json-file /tmp/report.json
    python3 scripts/bench_markdown.py /tmp/report.json > /tmp/tables.md

One table per benchmark case (medians over rounds; ratio columns are
medians of per-round ratios), then the targets with their verdicts.
"""
import json
import math
import sys


def fmt(v):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    return f"{v:.3f}"


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1]) as f:
        report = json.load(f)
    m = report["machine"]
    print(f'Machine: {m["cpu"]}, {m["vcpus"]} vCPUs, Linux {m["kernel"]}, {m["rustc"]}; '
          f'{report["config"]["rounds"]} rounds.\n')
    benches = []
    for r in report["rows"]:
        if r["bench"] not in benches:
            benches.append(r["bench"])
    for bench in benches:
        rows = [r for r in report["rows"] if r["bench"] == bench]
        cases = []
        for r in rows:
            if r["case"] not in cases:
                cases.append(r["case"])
        print(f"### {bench}\n")
        for case in cases:
            in_case = [r for r in rows if r["case"] == case]
            metrics = []
            for r in in_case:
                for k in r["median"]:
                    if k not in metrics:
                        metrics.append(k)
            print(f"| {case} | " + " | ".join(metrics) + " |")
            print("|---|" + "---:|" * len(metrics))
            for r in in_case:
                print(f'| {r["impl"]} | ' + " | ".join(fmt(r["median"].get(k)) for k in metrics) + " |")
            print()
    if report.get("checks"):
        print("### Targets\n")
        print("| bench | target | verdict | measured |")
        print("|---|---|---|---|")
        for c in report["checks"]:
            print(f'| {c["bench"]} | {c["target"]} | {c["verdict"].upper()} | {c["measured"]} |')
        print()
    load = report.get("foreign_load_percent", {})
    if load:
        print("Other processes' share of the machine while each ran: "
              + ", ".join(f"{k} {v:.1f}%" for k, v in load.items()) + ".\n")
    for note in report.get("notes", []):
        print(f"Note: {note}\n")


if __name__ == "__main__":
    main()
