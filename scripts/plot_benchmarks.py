#!/usr/bin/env python3
"""Draw the plots of docs/benchmarks.md from the bench_report JSON.

    cargo run --release --example bench_report -- --json > /tmp/report.json
    python3 scripts/plot_benchmarks.py /tmp/report.json docs/

Writes docs/bench_b2_pingpong.png (B2 round trip per implementation, one
panel per thread placement) and docs/bench_b7_ticks.png (B7 pool CPU per
tick against the useful work, per gap and thread count). Needs matplotlib
(`pip install matplotlib`).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(report, bench):
    return [r for r in report["rows"] if r["bench"] == bench]


def cases(rs):
    seen = []
    for r in rs:
        if r["case"] not in seen:
            seen.append(r["case"])
    return seen


def spread(r, metric):
    """(median, low, high) over the rounds of one metric."""
    vals = sorted(v for v in r["rounds"].get(metric, []) if v is not None)
    med = r["median"].get(metric)
    if not vals or med is None:
        return None
    return med, vals[0], vals[-1]


def subtitle(report):
    m = report["machine"]
    return (f'{m["cpu"]}, {m["vcpus"]} vCPUs, Linux {m["kernel"]}; '
            f'medians of {report["config"]["rounds"]} alternating rounds, bars span min-max')


def plot_b2(report, out):
    rs = rows(report, "B2")
    if not rs:
        return False
    cs = cases(rs)
    fig, axes = plt.subplots(1, len(cs), figsize=(5.2 * len(cs), 4.6), squeeze=False)
    for ax, case in zip(axes[0], cs):
        in_case = [r for r in rs if r["case"] == case]
        names, meds, lo, hi, colors = [], [], [], [], []
        for r in in_case:
            s = spread(r, "p50 us/trip")
            if s is None:
                continue
            names.append(r["impl"])
            meds.append(s[0])
            lo.append(s[0] - s[1])
            hi.append(s[2] - s[0])
            colors.append({"notifier": "tab:red", "raw_futex": "tab:gray"}.get(r["impl"], "tab:blue"))
        ax.bar(range(len(names)), meds, yerr=[lo, hi], color=colors, capsize=3)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=40, ha="right", fontsize=8)
        ax.set_ylabel("round trip, p50 (us)")
        ax.set_title(f"B2 ping-pong: {case}", fontsize=10)
        for i, r in enumerate(r for r in in_case if spread(r, "p50 us/trip")):
            ratio = r["median"].get("x raw_futex")
            if ratio is not None:
                ax.annotate(f"{ratio:.2f}x", (i, meds[i]), textcoords="offset points",
                            xytext=(0, 3), ha="center", fontsize=7)
    fig.suptitle("B2: one round trip (A wakes B, B wakes A); labels: ratio to raw futex in the same round\n"
                 + subtitle(report), fontsize=9)
    fig.tight_layout()
    fig.savefig(f"{out}/bench_b2_pingpong.png", dpi=110)
    plt.close(fig)
    return True


def plot_b7(report, out):
    rs = [r for r in rows(report, "B7") if "cpu us/tick" in r["median"]]
    if not rs:
        return False
    useful = next((r["median"]["us/tick"] for r in rows(report, "B7") if r["case"] == "useful work"), None)
    cs = cases(rs)
    impls = []
    for r in rs:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    fig, ax = plt.subplots(figsize=(10, 4.8))
    width = 0.8 / len(impls)
    palette = {"pool+jec": "tab:orange", "pool+notifier": "tab:red", "rayon": "tab:blue"}
    for k, imp in enumerate(impls):
        xs, meds, lo, hi = [], [], [], []
        for i, case in enumerate(cs):
            r = next((r for r in rs if r["case"] == case and r["impl"] == imp), None)
            s = r and spread(r, "cpu us/tick")
            if not s:
                continue
            xs.append(i + (k - (len(impls) - 1) / 2) * width)
            meds.append(s[0])
            lo.append(s[0] - s[1])
            hi.append(s[2] - s[0])
        ax.bar(xs, meds, width, yerr=[lo, hi], capsize=2, label=imp, color=palette.get(imp))
    if useful:
        ax.axhline(useful, color="black", linestyle="--", linewidth=1,
                   label=f"useful work ({useful:.0f} us: 8 jobs on one thread)")
    ax.set_xticks(range(len(cs)))
    ax.set_xticklabels([c.replace(", gap", "\ngap") for c in cs], fontsize=8)
    ax.set_ylabel("pool CPU per tick (us)")
    ax.legend(fontsize=8)
    ax.set_title("B7: ticks of 8 jobs x ~5 us; pool CPU per tick (all worker threads)\n"
                 + subtitle(report), fontsize=9)
    fig.tight_layout()
    fig.savefig(f"{out}/bench_b7_ticks.png", dpi=110)
    plt.close(fig)
    return True


def main():
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1]) as f:
        report = json.load(f)
    made = [name for name, ok in (("B2", plot_b2(report, sys.argv[2])),
                                  ("B7", plot_b7(report, sys.argv[2]))) if ok]
    if not made:
        print("plot_benchmarks: the report has no B2 or B7 rows", file=sys.stderr)
        sys.exit(1)
    print("plot_benchmarks: wrote " + ", ".join(made), file=sys.stderr)


if __name__ == "__main__":
    main()
