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
- a name in `backticks` in docs/ or README.md is not in the code. The
  token may be a bare name, a path (`Type::name`), a method (`.name`), and
  may end in `()` or in arguments (`notify_n(k)`); only the name before the
  arguments counts. "The code" is every Rust file of the workspace (src/,
  tests/, examples/, pool/, bench/, eigen/, interop/), the scripts, CI and
  the manifests. Which names must exist, and how:
  - snake_case with an underscore, CamelCase, ALL_CAPS, or the last segment
    of a path that is one of these: the name must occur as a word anywhere
    in the code;
  - a single lowercase word (`probe`, `set`) written as a call (`probe()`,
    `set(owner)`), a method (`.probe`) or the last segment of a path
    (`CoreLatch::probe`): it must be defined (`fn probe`, `const`, ...) or
    called (`probe(`, `.probe`, `::probe`) in the Rust code, since a bare
    word test passes on any local variable of that name;
  - a bare single lowercase word (`probe`) counts as a name only if the
    docs or README write it in one of the forms above somewhere, and is
    then checked the same way. Other bare words (`jec`, `cap`, `ok`) are
    taken as plain words or feature names and not checked;
  names from other projects are listed in EXTERNAL below;
- a "before" name of a rename table in CHANGELOG.md (a table whose header
  is `| before | after |`) appears in docs/, README.md or src/. The name is
  the first backticked token of the row's "before" cell, without `()` or a
  signature. A name that is also some row's "after" name (the same path)
  is not checked: it still exists, with a new meaning. The qualified form
  (`CapacityError::capacity`) is always searched for. The last segment alone
  is searched for too unless it is still a live name: an "after" name's last
  segment, or an item that src/ defines under that name (`MAX_WORKERS`, a
  private constant). A last segment that is a single lowercase word
  (`size`) is searched for only as a call, a method or a definition
  (`size()`, `.size`, `::size`, `fn size`), so that the plain word does not
  count.
"""

import glob
import fnmatch
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
SECTION = re.compile(r'docs/([\w-]+\.md)(?:\]\([^)]*\))?,?\s+"([^"]+)"')
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
                                "eigen/**/*.rs",
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

# 2b. The README is the package's front page on crates.io: every relative
# link in it must name a file the package ships (Cargo.toml's `include`).
include = re.search(r"^include = \[(.*?)\]", read(os.path.join(ROOT, "Cargo.toml")), re.S | re.M)
patterns = re.findall(r'"/([^"]+)"', include.group(1)) if include else []


def packaged(target):
    target = target.replace("**/", "")
    return any(fnmatch.fnmatch(target, pat.replace("**/", "")) for pat in patterns)


for m in re.finditer(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme):
    target = m.group(1)
    if re.match(r"[a-z]+:", target):
        continue  # an absolute URL
    if not packaged(os.path.normpath(target)):
        problems.append(f"README.md links to {target}, which the package does not ship "
                        "(crates.io would show a broken link)")

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
rust_code = "\n".join(read(p) for p in code_files if p.endswith(".rs") and os.path.isfile(p))
NAME_TOKEN = re.compile(
    r"^(\.)?([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)(\(.*\))?$")
LOWER_WORD = re.compile(r"^[a-z][a-z0-9]*$")


def shaped(last):
    """snake_case with an underscore, CamelCase or ALL_CAPS: a name, not a word."""
    return ("_" in last.strip("_") or re.match(r"^[A-Z][a-z]+[A-Z]", last) is not None
            or re.match(r"^[A-Z][A-Z0-9_]+$", last) is not None)


def defined_or_called(name):
    """Is `name` an item, a call or a method in the Rust code?"""
    n = re.escape(name)
    return re.search(
        r"\b(?:fn|const|static|struct|enum|trait|type|mod)\s+" + n + r"\b"
        r"|\b" + n + r"\s*(?:::<[^>]*>)?\(|[.:]" + n + r"\b", rust_code) is not None


def name_tokens(text):
    """(token, dot, path, called) for every backticked token shaped like a name."""
    for m in BACKTICK.finditer(text):
        token = m.group(1).strip()
        t = NAME_TOKEN.match(token)
        if t:
            yield token, bool(t.group(1)), t.group(2), bool(t.group(3))


doc_sources = list(docs.items()) + [("README.md", readme)]
# Single lowercase words that the docs write as calls, methods or path
# segments somewhere: a bare backticked `word` is then a name too.
known_methods = set()
for _, text in doc_sources:
    for token, dot, path, called in name_tokens(text):
        last = path.split("::")[-1]
        if LOWER_WORD.match(last) and (dot or called or "::" in path):
            known_methods.add(last)

for path_, text in doc_sources:
    for token, dot, path, called in name_tokens(text):
        last = path.split("::")[-1]
        if path in EXTERNAL or last in EXTERNAL or token in EXTERNAL:
            continue
        if shaped(last):
            if re.search(r"\b" + re.escape(last) + r"\b", code) is None:
                problems.append(f"{path_}: `{token}` is not in the code")
        elif LOWER_WORD.match(last) and (dot or called or "::" in path or last in known_methods):
            if not defined_or_called(last):
                problems.append(f"{path_}: `{token}` is not defined or called in the code")
        elif "::" in path and re.search(r"\b" + re.escape(last) + r"\b", code) is None:
            problems.append(f"{path_}: `{token}` is not in the code")

# 5. Names the CHANGELOG's rename tables retired.
changelog = read(os.path.join(ROOT, "CHANGELOG.md"))


def first_name(cell):
    """The name in a rename-table cell: its first backticked token, without
    `()`, arguments or a signature."""
    m = re.search(r"`([^`]+)`", cell)
    if not m:
        return None
    m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)", m.group(1))
    return m.group(1) if m else None


renames = []  # (before, after)
in_table = False
for line in changelog.split("\n"):
    cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
    if cells is None:
        in_table = False
    elif [c.lower() for c in cells[:2]] == ["before", "after"]:
        in_table = True
    elif in_table and not set(line) <= set("|-: "):
        renames.append((first_name(cells[0]), first_name(cells[1]) if len(cells) > 1 else None))
if not renames:
    problems.append("CHANGELOG.md: no rename table (| before | after |) found")
afters = {a for _, a in renames if a}
after_lasts = {a.split("::")[-1] for a in afters}
defined_in_src = set(re.findall(
    r"\b(?:fn|const|static|struct|enum|trait|type|mod)\s+([A-Za-z_][A-Za-z0-9_]*)",
    "\n".join(src.values())))
retired = []  # (name as written in the table, regex)
for before, _ in renames:
    if not before or before in afters:
        continue
    last = before.split("::")[-1]
    forms = []
    if "::" in before:
        forms.append(r"\b" + re.escape(before) + r"\b")
    if last not in after_lasts and last not in defined_in_src:
        n = re.escape(last)
        if LOWER_WORD.match(last):
            forms.append(r"(?:\.|::|\bfn\s+)" + n + r"\b|\b" + n + r"\(\)")
        else:
            forms.append(r"\b" + n + r"\b")
    retired.append((before, re.compile("|".join(forms))))
for path_, text in sorted(list(docs.items()) + [("README.md", readme)] + list(src.items())):
    for i, line in enumerate(text.split("\n")):
        hits = {}
        for before, pattern in retired:
            m = pattern.search(line)
            if m:
                hits.setdefault(m.group(0).strip(), before)
        for found, before in hits.items():
            problems.append(f"{path_}:{i + 1}: `{found}` is a name CHANGELOG.md retired (`{before}`)")

for p in sorted(set(problems)):
    print(p)
print(f"{len(set(problems))} problem(s)" if problems else "docs and code agree")
sys.exit(1 if problems else 0)
