#!/usr/bin/env python3
"""Which atomic orderings do the loom models depend on?

Weakens each SeqCst / AcqRel / Acquire / Release argument of an atomic
operation in the protocol code to Relaxed, one at a time, in a scratch copy
of the crate, and runs the loom models that exercise that file. A mutant
that some model kills is "load-bearing"; one that every model survives is
"defensive" (docs/jec-sleep.md and docs/notifier.md, "Every ordering").
Fences are left alone: removing them is scripts/planted_bugs.py's job.

    python3 scripts/weaken_orderings.py            # everything (about 80 min)
    python3 scripts/weaken_orderings.py jec        # JecSleep and the latch
    python3 scripts/weaken_orderings.py notifier   # the Notifier and the latch
    python3 scripts/weaken_orderings.py src/jec/worker.rs src/notifier/slot.rs
                                                   # the futex words only

Prints one line per ordering argument: killed, killed (hang), or SURVIVED,
then the file, line and column.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Under this checkout's own target directory (or $CARGO_TARGET_DIR): several
# checkouts of the crate may run this script at once on one machine.
TARGET = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "weaken")

# file -> the `cargo test --lib` filter whose models exercise it. The latch
# belongs to both protocols, so its mutants run every model.
FILES = {
    "src/jec/counters.rs": "jec",
    "src/jec/worker.rs": "jec",
    "src/latch.rs": "",
    "src/notifier/mod.rs": "notifier",
    "src/notifier/slot.rs": "notifier",
    "src/notifier/sleep.rs": "notifier",
}
GROUPS = {
    "jec": ["src/jec/counters.rs", "src/jec/worker.rs", "src/latch.rs"],
    "notifier": ["src/notifier/mod.rs", "src/notifier/slot.rs",
                 "src/notifier/sleep.rs", "src/latch.rs"],
}

ATOMIC_OP = re.compile(r"\.(load|store|swap|fetch_\w+|compare_exchange(_weak)?)\(")
ORDERING = re.compile(r"\bOrdering::(SeqCst|AcqRel|Acquire|Release)\b")


def in_test_only_fn(lines, i):
    """Is line i inside a function marked #[cfg(test)] (a test hook)?"""
    j = i
    while j > 0 and not re.match(r"\s*(pub(\(crate\))? )?fn ", lines[j]):
        j -= 1
    return any("#[cfg(test)]" in l for l in lines[max(0, j - 3):j])


def sites(path):
    """(line index, column) of every strong ordering argument of an atomic
    op. rustfmt splits long calls, so the op may begin a few lines above."""
    lines = open(os.path.join(ROOT, path)).read().split("\n")
    found = []
    for i, line in enumerate(lines):
        code = line.strip()
        if code.startswith("//") or "debug_assert" in code or "fence(" in code:
            continue
        window = " ".join(l.strip() for l in lines[max(0, i - 4):i + 1])
        if ATOMIC_OP.search(window) and not in_test_only_fn(lines, i):
            found += [(i, m.start()) for m in ORDERING.finditer(line)]
    return found


def run_models(crate, test_filter):
    env = dict(os.environ, RUSTFLAGS="--cfg loom", CARGO_TARGET_DIR=TARGET)
    cmd = ["cargo", "test", "--release", "-q", "--lib"] + ([test_filter] if test_filter else [])
    try:
        r = subprocess.run(cmd, cwd=crate, env=env, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return "killed (hang)"
    if r.returncode == 0:
        return "SURVIVED"
    if "error[E" in r.stderr:
        sys.exit(f"a mutant does not compile:\n{r.stderr[-2000:]}")
    return "killed"


def main():
    files = []
    for wanted in sys.argv[1:] or list(FILES):
        if wanted in GROUPS:
            files += GROUPS[wanted]
        elif wanted in FILES:
            files.append(wanted)
        else:
            sys.exit(f"unknown group or file {wanted!r}: expected one of "
                     f"{sorted(GROUPS)} or {sorted(FILES)}")
    files = list(dict.fromkeys(files))
    scratch = tempfile.mkdtemp(prefix="eventcount-weaken-")
    crate = os.path.join(scratch, "crate")
    shutil.copytree(ROOT, crate, ignore=shutil.ignore_patterns("target", ".git"))
    try:
        if run_models(crate, "") != "SURVIVED":
            sys.exit("the unmutated models fail: fix them first")
        for path in files:
            original = open(os.path.join(crate, path)).read()
            for line, col in sites(path):
                lines = original.split("\n")
                m = ORDERING.match(lines[line], col)
                lines[line] = lines[line][:col] + "Ordering::Relaxed" + lines[line][m.end():]
                open(os.path.join(crate, path), "w").write("\n".join(lines))
                verdict = run_models(crate, FILES[path])
                print(f"{verdict:14} {path}:{line + 1}:{col + 1}: {m.group(0)}", flush=True)
            open(os.path.join(crate, path), "w").write(original)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
