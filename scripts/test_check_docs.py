#!/usr/bin/env python3
"""Check the docs checker: plant one kind of drift at a time in a scratch
copy of the repository and demand that scripts/check_docs.py catches it.

    python3 scripts/test_check_docs.py

Each case copies the repository's files (what git tracks, plus new files it
does not ignore), makes its edits there, and runs the copy's check_docs.py.
A drift case passes when the check fails with a line that contains the
expected text; a clean case passes when the check passes. The first case
is the tree as it is. An edit whose snippet is not found exactly once
fails the case loudly, so a change to the docs cannot quietly turn a case
into a no-op. No cargo, no network: a few seconds in all.
"""

import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, edits, expected): expected is a text one problem line must
# contain, or None when the check must pass. An edit is
# (file, snippet, replacement): the snippet must occur exactly once; a
# snippet of None appends the replacement to the file; ("move", src, dst)
# renames a file, as a reorganization of src/ does; ("mkdir", dir)
# makes a directory, as a build does.
CASES = [
    ("the tree as it is", [], None),
    ("a member's build output (tests/loom-client/target/) makes no `target/...` a repository path",
     [("mkdir", "tests/loom-client/target/debug")], None),

    # Paths a doc names.
    ("a source file moves; the doc still names the old path",
     [("move", "src/models/searcher_cap.rs", "src/models/cap.rs")],
     "names src/models/searcher_cap.rs, which does not exist"),
    ("a doc names a directory that does not exist",
     [("docs/idle-policy.md", "`src/shell/` (the clocks", "`src/shells/` (the clocks")],
     "names src/shells/, which does not exist"),
    ("a doc names a path relative to src/ that does not exist",
     [("docs/idle-policy.md", "`shell/counters.rs`", "`shell/counter.rs`")],
     "names shell/counter.rs, which does not exist"),
    ("a comment in src/ names a doc that does not exist",
     [("src/idle/learner.rs", "([docs/idle-policy.md](crate::docs::idle_policy), \"The rule\")",
       "([docs/idle_policy.md](crate::docs::idle_policy), \"The rule\")")],
     "src/idle/learner.rs:2: names docs/idle_policy.md, which does not exist"),
    ("a Cargo.toml comment names a file that does not exist",
     [("Cargo.toml", "(src/sync/park.rs)", "(src/sync/portable.rs)")],
     "Cargo.toml:55: names src/sync/portable.rs, which does not exist"),
    ("a member's Cargo.toml comment names a script that does not exist",
     [("interop/Cargo.toml", "(scripts/rayon-suite and", "(scripts/rayon-suites and")],
     "interop/Cargo.toml:22: names scripts/rayon-suites, which does not exist"),
    ("a path inside a Cargo.toml string is not a comment",
     [("Cargo.toml", None, '\n[package.metadata.x]\nnote = "# src/nowhere.rs"\n')],
     None),
    ("a doc names a file by a bare name that no file has",
     [("docs/idle-policy.md", "`policy.rs`, `learner.rs`", "`policy.rs`, `learners.rs`")],
     "names learners.rs, and no file of the repository has that name"),
    ("a doc names a plot that does not exist",
     [("docs/benchmarks.md", "`rayon-b7-cpu-latency.svg`", "`rayon-b9-cpu-latency.svg`")],
     "names rayon-b9-cpu-latency.svg, and no file of the repository has that name"),
    ("a relative link points to a directory that does not exist",
     [("docs/benchmarks.md", None, "\nThe harness: [bench/](../benches).\n")],
     "docs/benchmarks.md links to ../benches, which does not exist"),
    ("another project's paths are not this repository's",
     [("docs/rayon.md", None,
       "\nrayon-core's `src/sleep/worker.rs`, `src/job.rs` of rayon-core, rayon's "
       "src/iter/mod.rs, tokio's `runtime/scheduler/multi_thread/worker.rs`, "
       "`rayon-core/src/registry.rs`, `target/soak/`, ns/call and n/a.\n")],
     None),

    # Panic messages a doc quotes.
    ("a doc quotes a panic message that no code prints",
     [("docs/jec-sleep.md", "assertion `not at rest: awake idle workers left`",
       "`work_found: no awake worker … is looking for work`")],
     "quotes the message `work_found: no awake worker … is looking for work`, which no format "
     "string in src/ prints"),
    ("the code changes a panic message that a doc quotes",
     [("src/jec/counters.rs", '"sub_inactive: {old:?} has no awake inactive worker"',
       '"sub_inactive: {old:?} lacks an awake inactive worker"')],
     "quotes the message `sub_inactive: … has no awake inactive worker`"),
    ("a quote after the word 'panic' that the code does not print",
     [("docs/notifier.md", "panic `popped a slot in state idle`",
       "panic `popped the slot in state idle`")],
     "quotes the message `popped the slot in state idle`"),
    ("a quote with a value where the code has a format argument",
     [("docs/notifier.md", None,
       "\nA bad id panics: `prepare_wait: waiter id 9 is out of range for a Notifier with 4 "
       "slots`.\n")],
     None),
    ("a format argument stands for one value, not for several words",
     [("docs/notifier.md", None,
       "\nA bad id panics: `prepare_wait: waiter id 9 and 10 is out of range for a "
       "Notifier`.\n")],
     "quotes the message `prepare_wait: waiter id 9 and 10 is out of range for a Notifier`"),

    # The checks the script had before.
    ("a fence that no doc explains",
     [("src/jec/mod.rs", "// 6. SleepFence: pairs with", "// 6. SnoozeFence: pairs with")],
     "src/ names SnoozeFence, which no doc in docs/ explains"),
    ("a fence with no name above it",
     [("src/jec/mod.rs", "        // PushFence: pairs with the SleepFence in `sleep`.\n", "")],
     "a fence with no name in the comment above it"),
    ("a cited section that is gone",
     [("docs/idle-policy.md", "## Steps, with orderings and why", "## Steps")],
     'cites section "Steps, with orderings and why" of docs/idle-policy.md, which has no such '
     'section'),
    ("a link to an anchor that is gone",
     [("docs/rayon.md", None, "\n[The cap](benchmarks.md#the-searcher-caps).\n")],
     "links to benchmarks.md#the-searcher-caps, which has no such heading"),
    ("a loom model renamed in src/ only",
     [("src/models/jec.rs", "fn shutdown_wakes_everyone()", "fn shutdown_wakes_all()")],
     "name loom model shutdown_wakes_everyone, which does not exist"),
    ("a name in backticks that the code lacks",
     [("docs/idle-policy.md", None, "\nThe policy also calls `rebalance_budgets()`.\n")],
     "docs/idle-policy.md: `rebalance_budgets()` is not in the code"),
    ("a name that CHANGELOG.md's rename table retired",
     [("docs/notifier.md", None, "\nTimed waits: `Notifier::commit_wait_timeout`.\n")],
     "is a name CHANGELOG.md retired (`Notifier::commit_wait_timeout`)"),
    # The README on crates.io: docs.rs pages and its own anchors only.
    ("a relative link in the README, to a file the package ships",
     [("README.md", None, "\n[The guide](docs/guide.md)\n")],
     "links to docs/guide.md, a relative link, which crates.io cannot resolve"),
    ("a relative image in the README",
     [("README.md", None, "\n![The plot](docs/plots/rayon-b7-cpu-latency.svg)\n")],
     "links to docs/plots/rayon-b7-cpu-latency.svg, a relative link"),
    ("a relative reference definition in the README",
     [("README.md", "[guide]: https://docs.rs/eventcount/latest/eventcount/guide/index.html",
       "[guide]: docs/guide.md")],
     "links to docs/guide.md, a relative link"),
    ("an HTML image in the README",
     [("README.md", None, '\n<img src="docs/plots/b2-round-trip.svg">\n')],
     "links to docs/plots/b2-round-trip.svg, a relative link"),
    ("a README link to a page that is not docs.rs",
     [("README.md", None, "\n[The source](https://github.com/eventcount-rs/eventcount)\n")],
     "links to https://github.com/eventcount-rs/eventcount, which is not a docs.rs page"),
    ("a README anchor that no heading has",
     [("README.md", None, "\nSee [the limits](#limit).\n")],
     "links to #limit, which no heading of the README has"),
    ("a README link to a docs.rs page and to its own heading",
     [("README.md", None, "\nSee [the limits](#limits) and [`Notifier`]"
       "(https://docs.rs/eventcount/latest/eventcount/struct.Notifier.html).\n")],
     None),

    # Doc examples, which doctests build with `internals`, use only the default API.
    ("a public doc example reads the counters, public only with internals",
     [("src/protocol.rs", "    /// assert_eq!(sleep.capacity(), 4);",
       "    /// assert_eq!(sleep.counters().inactive(), 0);")],
     "a doc example uses JecSleep::counters, which is public only with the internals feature"),
    ("a guide example names an internals-only type",
     [("docs/guide.md", "let sleep = JecSleep::new(4);",
       "let sleep = JecSleep::new(4);\nlet _: Option<eventcount::JecCounters> = None;")],
     "a doc example uses JecCounters"),
    ("an internals-only method by its path, in the README's example",
     [("README.md", "let sleep = Arc::new(JecSleep::new(1));",
       "let sleep = Arc::new(JecSleep::try_new(1, IdlePolicy::rounds(4), None).unwrap());")],
     "a doc example uses IdlePolicy::rounds"),
]


def repository_files():
    """The repository's files, relative: git's list when git knows this
    tree, else every file but .git/ and target/."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout
        return [f for f in out.splitlines() if f and os.path.isfile(os.path.join(ROOT, f))]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for dirpath, dirnames, filenames in os.walk(ROOT):
            if dirpath == ROOT:
                dirnames[:] = [d for d in dirnames if d not in (".git", "target")]
            found += [os.path.relpath(os.path.join(dirpath, f), ROOT) for f in filenames]
        return found


def apply(scratch, edits):
    for edit in edits:
        if edit[0] == "mkdir":
            os.makedirs(os.path.join(scratch, edit[1]))
            continue
        if edit[0] == "move":
            _, src, dst = edit
            os.makedirs(os.path.dirname(os.path.join(scratch, dst)), exist_ok=True)
            os.rename(os.path.join(scratch, src), os.path.join(scratch, dst))
            continue
        path, snippet, replacement = edit
        full = os.path.join(scratch, path)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        if snippet is None:
            text += replacement
        else:
            count = text.count(snippet)
            if count != 1:
                raise ValueError(f"snippet found {count} times in {path}; update this test: "
                                 f"{snippet!r}")
            text = text.replace(snippet, replacement)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)


def run_case(case, base, scratch_root):
    name, edits, expected = case
    scratch = tempfile.mkdtemp(dir=scratch_root)
    shutil.rmtree(scratch)
    shutil.copytree(base, scratch)
    try:
        apply(scratch, edits)
    except (OSError, ValueError) as err:
        return False, f"STALE: {err}"
    result = subprocess.run([sys.executable, os.path.join(scratch, "scripts", "check_docs.py")],
                            cwd=scratch, capture_output=True, text=True)
    output = (result.stdout + result.stderr).strip()
    if expected is None:
        if result.returncode == 0:
            return True, "passes"
        return False, "the check failed:\n" + output
    lines = [l for l in output.splitlines() if expected in l]
    if result.returncode == 1 and lines:
        return True, "caught: " + lines[0]
    return False, f"NOT CAUGHT (exit {result.returncode}); expected a line with {expected!r}:\n" \
        + output


def main():
    start = time.time()
    scratch_root = tempfile.mkdtemp(prefix="eventcount-check-docs-")
    try:
        base = os.path.join(scratch_root, "base")
        for rel in repository_files():
            dst = os.path.join(base, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, rel), dst)
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda case: run_case(case, base, scratch_root), CASES))
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)
    failures = 0
    for (name, _, _), (ok, detail) in zip(CASES, results):
        failures += not ok
        print(f"[{'ok' if ok else 'FAIL'}] {name}\n       {detail}")
    print(f"{len(CASES) - failures} of {len(CASES)} cases passed in {time.time() - start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
