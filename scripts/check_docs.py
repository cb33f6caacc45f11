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
  tests/, examples/, bench/ and its members, interop/), the scripts (but
  not scripts/test_*.py, whose cases plant names), CI and the manifests.
  Which names must exist, and how:
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
  count;
- a repository path that a doc names does not exist. The docs here are
  docs/*.md, README.md, CHANGELOG.md, the comments in src/ and the
  comments of every Cargo.toml (the manifests say which file each
  dependency serves, and a path there read from the root). A path is a
  run of name characters with at least one `/` in it (`src/jec/worker.rs`,
  `docs/plots/`, `.ci/run`), in backticks or not, in code blocks too. It is
  a path of this repository, and checked, when
  - its first component is a top-level entry of the repository (what the
    root holds, less `.git` and the names the root .gitignore excludes,
    such as `target`; the walk skips every path it excludes, such as
    `tests/loom-client/target`): it must exist, read from the root;
  - or its first component is the name of a directory somewhere in the
    repository and it ends in a file name with an extension or in `/`
    (`protocol/loom_cap_tests.rs`, relative to src/): some path of the
    repository must end with it.
  Any other path is outside the repository or not a path at all, and is not
  checked: `rayon-core/src/sleep/`, `target/soak/`, `/proc/stat`, a URL,
  `ns/call`, `n/a`;
- a bare file name (no `/`, ending in one of FILE_EXTENSIONS: `counters.rs`,
  `Cargo.toml`) outside fenced code blocks is not the name of some file of
  the repository. (In a code block such a name is mostly a file the command
  writes, `--json-file bench-report.json`.)
  Neither check applies to a path or file name that the doc marks as
  another project's: written right after "<project>'s" (rayon-core's
  `src/registry.rs`) or followed by "of", "in" or "from" and the project
  (`src/sleep/mod.rs` of rayon-core), for a project in THIRD_PARTY; nor to
  one in EXTERNAL_PATHS (rayon-core's files that the edit table of
  scripts/rayon-suite prints under `src/`, which is a top-level name here
  too);
- a relative link in docs/*.md, README.md or CHANGELOG.md points to a file
  or directory that does not exist (links to .md files are checked above);
- a link or image in README.md (inline, a reference definition, or an HTML
  src or href) is relative, or is a URL that is not a docs.rs page, or is
  an anchor that no heading of the README has: the README is the package's
  page on crates.io, where only absolute links work;
- a panic message that docs/*.md or README.md quotes is one that no format
  string in src/ can print. A doc quotes a message in backticks, in one of
  two ways:
  - in the shape of the crate's messages, which start with the call that
    panics: a snake_case name, optionally with its arguments, a colon, a
    space and at least two words (`sub_inactive: … has no awake inactive
    worker`);
  - right after the word "panic", "panics", "panicked", "assertion" or
    "message", optionally followed by "with" or a colon: panic `popped a
    slot in state idle`, assertion `notify_n(1) released 2`.
  In a quote, `…`, `...` and `{...}` stand for parts that vary, and the
  quote may be any part of the message. It matches a string literal of
  src/ (escapes and line continuations resolved, whitespace collapsed, `{{`
  read as a brace) when its literal text appears there, in order: each
  varying part of the quote stands for any stretch of the literal, and each
  format argument `{...}` of the literal for a run of the quote without a
  space (`worker 3`, `no_work_found`). CHANGELOG.md is not checked: it
  quotes messages as they were when it was written.
- a code example that runs as a doctest (a fenced block of docs/*.md,
  README.md or a doc comment in src/) uses an item that is public only
  with the `internals` feature: an item declared inside `internal! { ... }`
  or re-exported by lib.rs under `#[cfg(feature = "internals")]`. The
  doctests build with that feature (the crate's dev-dependency on itself),
  so such an example would pass there and fail for a user. An example in
  the doc comment of such an item is its own business and is not checked.
  A CamelCase name counts as a word; any other name only as a method or a
  path's last segment (`.rounds(`, `::rounds`).
"""

import bisect
import fnmatch
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
    # tokio's multi-thread scheduler (docs/tokio.md), and what the port's
    # line edits (interop/tokio/edits.txt, not Rust) write into it
    "num_searching", "num_unparked", "transition_worker_to_parked",
    "transition_worker_to_searching", "transition_worker_from_searching",
    "notify_if_work_pending", "PARKED_CONDVAR", "PARKED_DRIVER", "NOTIFIED", "before_park",
    "after_unpark", "block_in_place", "park_yield", "steal_work", "epoll_wait",
    "Arc::new_cyclic", "unpark_driver", "loom_multi_thread", "unpark_worker_by_id",
    "pool_multi_spawn", "pool_multi_notify",
    "should_notify_others", "next_wake", "poll_at",
    "rt_common", "rt_metrics", "task_blocking", "time_rt",
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
                                "interop/**/*.rs", "bench/**/*.rs",
                                "scripts/*", ".ci/run", "Cargo.toml", "*/Cargo.toml",
                                "*/*/Cargo.toml")
              for p in files(pattern)
              # not the checker's test, whose cases plant names on purpose
              if not fnmatch.fnmatch(rel(p), "scripts/test_*.py")]
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

# 2b. The README is the package's front page on crates.io, which has no
# repository to resolve a relative path against: every link and image in it
# is a docs.rs URL (the rustdoc pages are built from the docs/ files the
# package ships) or an anchor of one of the README's own headings. Inline
# links, reference definitions and HTML src/href attributes all count.
README_URL = re.compile(r"^https://docs\.rs/")


def readme_targets(text):
    """(line, target) for every link, image and reference definition of
    the README outside fenced code."""
    found = []
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in re.finditer(r"\]\(\s*<?([^)\s>]+)", line):
            found.append((number, m.group(1)))
        m = re.match(r"\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", line)
        if m:
            found.append((number, m.group(1)))
        for m in re.finditer(r"""\b(?:src|href)\s*=\s*["']([^"']+)["']""", line):
            found.append((number, m.group(1)))
        for m in re.finditer(r"<([A-Za-z][A-Za-z0-9+.-]*:[^>\s]+)>", line):
            found.append((number, m.group(1)))
    return found


readme_anchors = {slug(h) for h in headings(readme)}
for number, target in readme_targets(readme):
    if target.startswith("#"):
        if target[1:] not in readme_anchors:
            problems.append(f"README.md:{number}: links to {target}, which no heading of the "
                            "README has")
    elif not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):
        problems.append(f"README.md:{number}: links to {target}, a relative link, which "
                        "crates.io cannot resolve: link the docs.rs page instead")
    elif not README_URL.match(target):
        problems.append(f"README.md:{number}: links to {target}, which is not a docs.rs page")

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


# Every name the Rust code defines (`fn name`, `const NAME`, ...), calls
# (`name(`, `name::<T>(`) or reaches as a method or path segment (`.name`,
# `::name`).
rust_items = set(re.findall(r"\b(?:fn|const|static|struct|enum|trait|type|mod)\s+(\w+)",
                            rust_code))
rust_items |= set(re.findall(r"\b(\w+)\s*(?:::<[^>]*>)?\(", rust_code))
rust_items |= set(re.findall(r"[.:](\w+)", rust_code))


def defined_or_called(name):
    """Is `name` an item, a call or a method in the Rust code?"""
    return name in rust_items


def name_tokens(text):
    """(token, dot, path, called) for every backticked token shaped like a name."""
    for m in BACKTICK.finditer(text):
        token = m.group(1).strip()
        t = NAME_TOKEN.match(token)
        if t:
            yield token, bool(t.group(1)), t.group(2), bool(t.group(3))


doc_sources = list(docs.items()) + [("README.md", readme)]
code_words = set(re.findall(r"\w+", code))  # `name in code_words`: the name is a word of the code
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
            if last not in code_words:
                problems.append(f"{path_}: `{token}` is not in the code")
        elif LOWER_WORD.match(last) and (dot or called or "::" in path or last in known_methods):
            if not defined_or_called(last):
                problems.append(f"{path_}: `{token}` is not defined or called in the code")
        elif "::" in path and last not in code_words:
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
    retired.append((before, re.compile("|".join(forms)), last))
for path_, text in sorted(list(docs.items()) + [("README.md", readme)] + list(src.items())):
    # Every form contains the last segment: look for the patterns only
    # where it occurs.
    candidates = [r for r in retired if r[2] in text]
    if not candidates:
        continue
    for i, line in enumerate(text.split("\n")):
        hits = {}
        for before, pattern, last in candidates:
            m = last in line and pattern.search(line)
            if m:
                hits.setdefault(m.group(0).strip(), before)
        for found, before in hits.items():
            problems.append(f"{path_}:{i + 1}: `{found}` is a name CHANGELOG.md retired (`{before}`)")

# 6. Repository paths that the docs name (see the module docstring).
THIRD_PARTY = ("rayon-core", "rayon", "tokio", "loom", "eigen", "taskflow", "folly",
               "crossbeam", "blitz", "parking_lot", "event-listener", "std")
# Paths of other projects' trees that the docs name under a first component
# that is also ours (`src/`), or bare file names that are theirs: rayon-core
# 1.13.0's files, which scripts/rayon-suite's edit table prints (docs/rayon.md),
# and the file that `eventcount-interop export` writes into its copy. An
# entry that ends in "/" covers every path under it.
EXTERNAL_PATHS = {
    "src/sleep/", "src/registry.rs", "registry.rs",  # rayon-core's
    "src/runtime/",  # tokio's
    "EVENTCOUNT.md",  # written into an exported rayon-core
    "docs.rs",  # the documentation site, named in prose as a site
}
FILE_EXTENSIONS = ("rs", "md", "py", "toml", "svg", "json", "yml", "yaml", "sh", "lock", "txt",
                   "csv")
_COMP = r"\.?[\w-]+(?:\.[\w-]+)*"
PATH_TOKEN = re.compile(r"(?<![\w./:@~$\\-])(" + _COMP + r"(?:/" + _COMP + r")*/(?:" + _COMP
                        + r")?)(?![\w-])")
BARE_FILE = re.compile(r"(?<![\w./:@~$\\-])([\w-]+(?:\.[\w-]+)*\.(?:"
                       + "|".join(FILE_EXTENSIONS) + r"))(?![\w/-])")
THEIRS_BEFORE = re.compile(r"(?i)\b(?:" + "|".join(re.escape(n) for n in THIRD_PARTY)
                           + r")['’]s\s*$")
THEIRS_AFTER = re.compile(r"(?i)^\s+(?:of|in|from)\s+(?:the\s+)?(?:"
                          + "|".join(re.escape(n) for n in THIRD_PARTY) + r")\b")


def ignored_paths():
    """Paths, relative to the root, that the root .gitignore excludes by
    name (`target`, `tests/loom-client/target`): build output, not the repository.
    A nested `target` left by a member's own build must not make `target`
    look like a directory of the repository."""
    names = {".git"}
    path = os.path.join(ROOT, ".gitignore")
    if os.path.isfile(path):
        for line in read(path).split("\n"):
            line = line.strip()
            if line and not line.startswith(("#", "!")) and not re.search(r"[*?\[]", line):
                names.add(line.strip("/"))
    return names


IGNORED = ignored_paths()
TOP_LEVEL = set(os.listdir(ROOT)) - IGNORED
repo_paths = set()  # every file and directory of the repository, relative
for top in TOP_LEVEL:
    repo_paths.add(top)
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
        dirnames[:] = [d for d in dirnames if rel(os.path.join(dirpath, d)) not in IGNORED]
        for name in dirnames + filenames:
            repo_paths.add(rel(os.path.join(dirpath, name)))
repo_dir_names = {os.path.basename(p) for p in repo_paths if os.path.isdir(os.path.join(ROOT, p))}
repo_basenames = {os.path.basename(p) for p in repo_paths}


LEX_NEXT = re.compile(r"//|/\*|(?<!\w)b?r#*\"|\"|'")
LEX_STRING_END = re.compile(r'(?:[^"\\]|\\.)*"', re.S)
LEX_BLOCK = re.compile(r"/\*|\*/")
LEX_CHAR = re.compile(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'")


def rust_lex(text):
    """The comments and string literals of Rust source, in order: yields
    ("comment", text, line) for each comment line and ("string", raw body,
    line) for each string literal (escapes not yet processed)."""
    newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(pos):
        return bisect.bisect_left(newlines, pos) + 1

    i, n = 0, len(text)
    while True:
        m = LEX_NEXT.search(text, i)
        if not m:
            return
        i, token = m.start(), m.group()
        if token == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
            yield "comment", text[i + 2:j], line_of(i)
            i = j
        elif token == "/*":
            depth, j = 1, i + 2
            while depth:
                k = LEX_BLOCK.search(text, j)
                if not k:
                    j = n + 2
                    break
                depth += 1 if k.group() == "/*" else -1
                j = k.end()
            for number, part in enumerate(text[i + 2:j - 2].split("\n")):
                yield "comment", part, line_of(i) + number
            i = j
        elif token == '"':
            k = LEX_STRING_END.match(text, i + 1)
            j = k.end() - 1 if k else n
            yield "string", text[i + 1:j], line_of(i)
            i = j + 1
        elif token.endswith('"'):  # a raw string, r"..." or r#"..."#
            hashes = token.count("#")
            j = text.find('"' + "#" * hashes, m.end())
            j = n if j < 0 else j
            yield "string", text[m.end():j], line_of(i)
            i = j + 1 + hashes
        else:  # a character literal, or the quote of a lifetime
            k = LEX_CHAR.match(text, i)
            i = k.end() if k else i + 1


src_lexed = {}  # file -> list of rust_lex() tokens


def lexed(path):
    if path not in src_lexed:
        src_lexed[path] = list(rust_lex(src[path]))
    return src_lexed[path]


def toml_comment(line):
    """The comment of one line of a TOML file (after a `#` outside a
    string), or None."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            return line[i + 1:]
    return None


def doc_lines():
    """(file, line number, text, in a fenced code block) for every line of
    docs/*.md, README.md and CHANGELOG.md, every comment line in src/, and
    every comment of a Cargo.toml."""
    sources = sorted(docs.items()) + [("README.md", readme), ("CHANGELOG.md", changelog)]
    for path, text in sources:
        fenced = False
        for i, line in enumerate(text.split("\n")):
            if line.strip().startswith("```"):
                fenced = not fenced
                continue
            yield path, i + 1, line, fenced
    for path, text in sorted(src.items()):
        fenced = False
        for kind, body, line in lexed(path):
            if kind != "comment":
                continue
            body = body.lstrip("/!")
            if body.strip().startswith("```"):
                fenced = not fenced
                continue
            yield path, line, body, fenced
    for manifest in files("Cargo.toml") + files("*/Cargo.toml"):
        for i, line in enumerate(read(manifest).split("\n")):
            comment = toml_comment(line)
            if comment is not None:
                yield rel(manifest), i + 1, comment, False


def external(path, line, start, end):
    """Is the path at line[start:end] another project's?"""
    if any(path == e or (e.endswith("/") and path.startswith(e)) for e in EXTERNAL_PATHS):
        return True
    before = line[:start].rstrip("`*( ")
    after = line[end:].lstrip("`*")
    return bool(THEIRS_BEFORE.search(before) or THEIRS_AFTER.match(after))


for path_, number, line, fenced in doc_lines():
    for m in PATH_TOKEN.finditer(line):
        token = m.group(1)
        target = token.rstrip("/")
        parts = target.split("/")
        if parts[0] in TOP_LEVEL:
            ok = target in repo_paths
        elif (parts[0] in repo_dir_names
              and (token.endswith("/") or re.search(r"\.\w+$", parts[-1]))):
            ok = any(p == target or p.endswith("/" + target) for p in repo_paths)
        else:
            continue  # not a path into this repository
        if not ok and not external(token, line, m.start(1), m.end(1)):
            problems.append(f"{path_}:{number}: names {token}, which does not exist")
    if fenced:
        continue
    for m in BARE_FILE.finditer(line):
        name = m.group(1)
        if name not in repo_basenames and not external(name, line, m.start(1), m.end(1)):
            problems.append(f"{path_}:{number}: names {name}, and no file of the repository "
                            "has that name")

# Relative link targets of the markdown files (links to .md files are
# checked above, with their anchors).
for path_, text in sorted(docs.items()) + [("README.md", readme), ("CHANGELOG.md", changelog)]:
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        target = m.group(1).split("#")[0]
        if (not target or re.match(r"[A-Za-z][\w+.-]*:", target) or "::" in target
                or target.endswith(".md")):
            continue
        resolved = os.path.normpath(os.path.join(os.path.dirname(path_), target))
        if not os.path.exists(os.path.join(ROOT, resolved)):
            problems.append(f"{path_} links to {target}, which does not exist")

# 7. Panic messages that the docs quote (see the module docstring).
ANY, VALUE = object(), object()  # the doc's `…` and `{}`; the code's `{...}`


def pattern(text, doc):
    """`text`, whitespace collapsed, as a list of characters and
    placeholders: ANY for a doc's `…`, `...` or `{...}`, VALUE for a format
    argument `{...}` in the code (`{{` and `}}` are braces)."""
    out, i = [], 0
    text = re.sub(r"\s+", " ", text.strip())
    while i < len(text):
        if text.startswith(("{{", "}}"), i):
            out.append(text[i])
            i += 2
        elif text[i] == "{" and "}" in text[i:]:
            out.append(ANY if doc else VALUE)
            i = text.index("}", i) + 1
        elif doc and text.startswith(("…", "..."), i):
            out.append(ANY)
            i += 1 if text[i] == "…" else 3
        else:
            out.append(text[i])
            i += 1
    return out


def unescape(body):
    """A Rust string literal's value, near enough: line continuations
    joined, the common escapes replaced."""
    body = re.sub(r"\\\n\s*", "", body)
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def prints(code, quote):
    """Can the format string `code` print a message that contains `quote`?
    Both are patterns. The quote's literal text must appear in the format
    string in order; its ANY stands for any part of the format string; a
    format argument (VALUE) stands for a run of the quote's text without a
    space (a number, a name, a state: `worker 3`, `no_work_found`)."""
    a, b = [ANY] + quote + [ANY], code
    n, m = len(a), len(b)
    after = [False] * (m + 1)  # row i + 1
    after[m] = True
    for i in range(n, -1, -1):
        row = [False] * (m + 1)
        for j in range(m, -1, -1):
            if i < n and a[i] is ANY:
                row[j] = after[j] or (j < m and row[j + 1])
            elif j < m and b[j] is VALUE:
                row[j] = row[j + 1] or (i < n and a[i] != " " and after[j])
            elif i < n and j < m:
                row[j] = a[i] == b[j] and after[j + 1]
            else:
                row[j] = i == n and j == m
        after = row
    return after[0]


src_strings = []  # (value, pattern) of every string literal in src/
for path_ in sorted(src):
    for kind, body, _ in lexed(path_):
        if kind == "string":
            value = re.sub(r"\s+", " ", unescape(body))
            src_strings.append((value, pattern(value, False)))
MESSAGE_SHAPE = re.compile(r"^[a-z_][a-z0-9_]*(?:\([^()]*\))?: \S+ \S+")
MESSAGE_MARKER = re.compile(r"(?i)\b(?:panic|panics|panicked|assertion|message)(?: with)?:?\s*$")
for path_, text in sorted(docs.items()) + [("README.md", readme)]:
    for number, line in enumerate(text.split("\n"), 1):
        for m in BACKTICK.finditer(line):
            quote = m.group(1).strip()
            if not (MESSAGE_SHAPE.match(quote) or MESSAGE_MARKER.search(line[:m.start()])):
                continue
            wanted = pattern(quote, True)
            # A cheap filter first: a format string that can print the quote
            # shares one of its longer words (unless the quote has none). A
            # quote whose every such word is a format argument's value would
            # be reported wrongly, never passed wrongly.
            words = set(re.findall(r"[A-Za-z]{4,}", re.sub(r"\{[^}]*\}", " ", quote)))
            if not any((not words or any(w in value for w in words)) and prints(pat, wanted)
                       for value, pat in src_strings):
                problems.append(f"{path_}:{number}: quotes the message `{quote}`, which no "
                                "format string in src/ prints")

# 8. Doc examples that use an item public only with `internals`.
def internal_blocks(text):
    """The line ranges (first, last) of each `internal! { ... }` in `text`:
    as rustfmt lays it out, from its opening line to the first line below
    that is its closing brace at the same indent."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"(\s*)internal! \{$", line)
        if m:
            end = next(j for j in range(i + 1, len(lines)) if lines[j] == m.group(1) + "}")
            yield i + 1, end + 1


internal_items, internal_lines = set(), {}  # (owner type or None, name)
public_methods = set()  # method names public without the feature
IMPL = re.compile(r"^impl(?:<[^>]*>)?\s+(?:[\w:<>']+\s+for\s+)?(\w+)", re.M)
ITEM = re.compile(r"\bpub\s+(?:const\s+)?(fn|const|struct|enum|trait|type)\s+(\w+)")
for path_, text in src.items():
    lines = text.split("\n")
    blocks = list(internal_blocks(text))
    internal_lines[path_] = blocks
    for first, last in blocks:
        owners = IMPL.findall("\n".join(lines[:first]))
        block = "\n".join(l for l in lines[first - 1:last] if not l.strip().startswith("//"))
        for kind, name in ITEM.findall(block):
            in_impl = owners and not lines[first - 1].startswith("internal!")
            internal_items.add((owners[-1] if in_impl else None, name))
    inside = {n for first, last in blocks for n in range(first, last + 1)}
    for number, line in enumerate(lines, 1):
        m = re.match(r"\s*pub\s+(?:const\s+)?fn\s+(\w+)", line)
        if m and number not in inside:
            public_methods.add(m.group(1))
public_methods |= set(re.findall(r"(?m)^    fn (\w+)", src["src/protocol.rs"]))
lib_lines = src["src/lib.rs"].split("\n")
for i, line in enumerate(lib_lines[:-1]):
    if line.strip() == '#[cfg(feature = "internals")]':
        use = re.match(r"\s*pub use [\w:]*?(?:\{([^}]*)\}|(\w+));", lib_lines[i + 1])
        if use:
            internal_items |= {(None, n.strip()) for n in (use.group(1) or use.group(2)).split(",")
                               if n.strip()}


def uses_internal(code_line):
    for owner, name in sorted(internal_items, key=str):
        if owner is None and re.search(rf"\b{name}\b", code_line):
            return name
        if owner and (re.search(rf"\b{owner}::{name}\b", code_line) or (
                name not in public_methods and re.search(rf"\.{name}\b", code_line))):
            return f"{owner}::{name}"
    return None


for path_, number, line, fenced in doc_lines():
    if not fenced or path_.endswith("Cargo.toml") or path_ == "CHANGELOG.md":
        continue
    if any(first <= number <= last for first, last in internal_lines.get(path_, [])):
        continue
    name = uses_internal(line)
    if name:
        problems.append(f"{path_}:{number}: a doc example uses {name}, which is public only "
                        "with the internals feature (doctests build with it; a user does not)")

for p in sorted(set(problems)):
    print(p)
print(f"{len(set(problems))} problem(s)" if problems else "docs and code agree")
sys.exit(1 if problems else 0)
