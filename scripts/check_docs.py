#!/usr/bin/env python3
"""Keep the docs and the code in agreement. Run from the repository root:

    python3 scripts/check_docs.py

It fails (exit 1, one line per problem) when:
- a fence name (WaitFence, SleepFence, ...) that docs/ cites is missing from
  the comments in src/, or one that src/ names is missing from docs/;
- a `fence(...)` call in the protocol code has no comment naming its fence
  in the two lines above it;
- a section that src/ or docs/ cites as  docs/<file>.md, "<section>"  does
  not exist there (as a heading, or as a bold entry opening a line);
- a markdown link to a docs file points to a missing file or #anchor;
- a loom model that src/ defines is not named in docs/, or one that docs/
  or scripts/planted_bugs.py names does not exist;
- a name in `backticks` in docs/ or README.md that looks like Rust (snake_case
  with an underscore, CamelCase, or a path with ::) is found nowhere in the
  repository's code, unless it is listed below as another project's name.
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Names the docs cite from other projects (rayon, Eigen, std, ...), which
# this repository's code need not contain.
EXTERNAL = {
    # rayon-core's sleep module and worker loop
    "wait_until_cold", "wake_any_threads", "wake_specific_thread", "sub_inactive_thread",
    "add_inactive_thread", "sub_sleeping_thread", "try_add_sleeping_thread",
    "increment_jobs_event_counter_if", "announce_sleepy", "is_blocked", "worker_sleep_states",
    "ROUNDS_UNTIL_SLEEPY", "ROUNDS_UNTIL_SLEEPING", "THREADS_MAX", "JobsEventCounter",
    "has_injected_job", "find_work", "take_local_job", "wait_until", "AtomicCounters",
    "max_num_threads", "SpinLatch", "OnceLatch", "CountLatch", "LockLatch", "AbortIfPanic",
    "set_and_tickle_one", "check_repeat_unbounded", "run_with_small_stack", "wake_fully",
    "join_context_second",
    "run_with_large_stack", "stack_overflow_crash", "web_spin_lock", "inject_broadcast",
    "AtomicUsize", "par_iter", "par_sort", "ThreadPoolBuilder", "rayon_core",
    # std, parking_lot, crossbeam, event-listener, tokio
    "Condvar::wait", "wait_timeout", "notify_one", "thread::park", "park_timeout",
    "CachePadded", "Parker", "EventListener", "FUTEX_WAIT", "FUTEX_WAKE",
    "FUTEX_WAIT_BITSET", "FUTEX_PRIVATE_FLAG", "Mutex<bool>", "Ordering::SeqCst",
    # Eigen, Taskflow, Folly
    "NonblockingNotifier", "EventCount", "CommitWait", "CancelWait", "Prewait",
    # operating systems and hardware
    "GenuineIntel", "sched_getcpu", "WaitOnAddress", "__ulock_wait", "_umtx_op",
}

FENCE = re.compile(r"\b([A-Z][a-z]+(?:[A-Z][a-z]+)*Fence)\b")
SECTION = re.compile(r'docs/([\w-]+\.md),?\s+"([^"]+)"')
LINK = re.compile(r"\]\(((?:docs/)?[\w-]+\.md)(?:#([\w-]+))?\)")
BACKTICK = re.compile(r"`([^`\n]+)`")
RUSTISH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?$")

problems = []


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def files(pattern):
    return sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True))


def rel(path):
    return os.path.relpath(path, ROOT)


docs = {rel(p): read(p) for p in files("docs/*.md")}
readme = read(os.path.join(ROOT, "README.md"))
src = {rel(p): read(p) for p in files("src/**/*.rs")}
code_files = [p for pattern in ("src/**/*.rs", "tests/**/*.rs", "examples/**/*.rs",
                                "interop/**/*.rs", "bench/**/*.rs", "pool/**/*.rs",
                                "scripts/*", ".ci/run", "Cargo.toml", "*/Cargo.toml")
              for p in files(pattern)]
code = "\n".join(read(p) for p in code_files if os.path.isfile(p))
docs_text = "\n".join(docs.values())

# 1. Fence names, both ways, and a name at every fence.
src_fences = {m.group(1) for text in src.values() for m in FENCE.finditer(text)}
doc_fences = {m.group(1) for m in FENCE.finditer(docs_text)}
for name in sorted(doc_fences - src_fences):
    problems.append(f"docs cite {name}, which no comment in src/ names")
for name in sorted(src_fences - doc_fences):
    problems.append(f"src/ names {name}, which no doc in docs/ explains")
for path, text in src.items():
    if path.startswith("src/sync/"):
        continue
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if re.search(r"\bfence\(Ordering::SeqCst\)", line) and not line.strip().startswith("//"):
            above = " ".join(lines[max(0, i - 3):i])
            if not FENCE.search(above):
                problems.append(f"{path}:{i + 1}: a fence with no name in the comment above it")


# 2. Cited sections.
def headings(text):
    found = set()
    for line in text.split("\n"):
        m = re.match(r"#+\s+(.*)", line)
        if m:
            found.add(m.group(1).strip())
        m = re.match(r"\s*(?:[-*]|\d+\.)?\s*\*\*([^*]+)\*\*", line)
        if m:
            found.add(m.group(1).strip())
    return found


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


doc_headings = {name: headings(text) for name, text in docs.items()}
for path, text in list(src.items()) + list(docs.items()) + [("README.md", readme)]:
    # A citation may run over a line break of a comment.
    flat = re.sub(r"\s*\n\s*(?://[/!]?)?\s*", " ", text)
    for m in SECTION.finditer(flat):
        doc, section = "docs/" + m.group(1), m.group(2)
        if doc not in docs:
            problems.append(f"{path} cites {doc}, which does not exist")
        elif not any(section.lower() in h.lower() for h in doc_headings[doc]):
            problems.append(f'{path} cites section "{section}" of {doc}, which has no such section')
    for m in LINK.finditer(text):
        target, anchor = m.group(1), m.group(2)
        base = os.path.dirname(path) if path.startswith("docs/") else ""
        doc = os.path.normpath(os.path.join(base, target))
        if doc not in docs and not os.path.isfile(os.path.join(ROOT, doc)):
            problems.append(f"{path} links to {target}, which does not exist")
        elif anchor and doc in docs and anchor not in {slug(h) for h in doc_headings[doc]}:
            problems.append(f"{path} links to {target}#{anchor}, which has no such heading")

# 3. Loom models, both ways.
models = set()
for path, text in src.items():
    if "loom" in path:
        models |= set(re.findall(r"#\[test\]\s*\n\s*fn\s+(\w+)", text))
for name in sorted(models):
    if name not in docs_text:
        problems.append(f"loom model {name} is not named in docs/")
cited = set(re.findall(r"`(\w+(?:_\w+){2,})`", docs_text))
planted = read(os.path.join(ROOT, "scripts/planted_bugs.py"))
cited |= set(re.findall(r'"[\w:]*loom_tests::(\w+)"', planted))
for name in sorted(cited):
    looks_like_model = any(w in name for w in ("_wakes_", "_races_", "_caught_", "_keeps_", "_runs", "_reaches_")) or name in re.findall(r'loom_tests::(\w+)', planted)
    if looks_like_model and name not in models and name not in code:
        problems.append(f"docs or planted_bugs.py name loom model {name}, which does not exist")

# 4. Rust-looking names in backticks.
for path, text in list(docs.items()) + [("README.md", readme)]:
    for m in BACKTICK.finditer(text):
        token = m.group(1).strip()
        if not RUSTISH.match(token):
            continue
        name = token[:-2] if token.endswith("()") else token
        last = name.split("::")[-1]
        shaped = "_" in last.strip("_") or "::" in name or re.match(r"^[A-Z][a-z]+[A-Z]", last)
        if not shaped or name in EXTERNAL or last in EXTERNAL:
            continue
        if re.search(r"\b" + re.escape(last) + r"\b", code) is None:
            problems.append(f"{path}: `{token}` is not in the code")

for p in sorted(set(problems)):
    print(p)
print(f"{len(set(problems))} problem(s)" if problems else "docs and code agree")
sys.exit(1 if problems else 0)
