#!/usr/bin/env python3
"""The import graph of src/, and the rules it must keep.

    python3 scripts/layers.py          # check; print the graph by layer
    python3 scripts/layers.py --quiet  # check only

Every file under src/ is a node. An edge runs from a file to every file
whose items it names through `crate::…` or `super::…`, in a `use` or
inline in code (comments and strings are skipped; a `#[cfg(doc)]` import
is still an edge). The rules:

1. `sync`, the ground, names nothing of the crate outside `src/sync/`.
2. Each top-level module sits on a layer (LAYERS below, which lib.rs's
   comment repeats): an edge between two modules may only run to a lower
   layer. Inside one module, any edge is allowed, but:
3. the file graph has no cycle (a module's `mod.rs` declaring its child
   files is not an import and does not count);
4. no file but lib.rs names an item through lib.rs's re-exports
   (`crate::Name` for a name that lib.rs re-exports rather than defines):
   a file imports from the module that defines a name. `test_support` is
   the one exception: tests/common compiles the same files against the
   public API, so they name the crate through their parent module.

Exits 1 with one line per broken rule.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"

# Lowest first. Modules on one layer may not import each other.
LAYERS = [
    ["sync"],
    ["error", "outcome", "round", "stats", "unpark"],
    ["latch"],
    ["idle"],
    ["shell", "protocol"],
    ["notifier", "jec"],
    ["waker"],
    ["lib"],
    ["test_support"],
    ["models", "unit_tests"],
]
LAYER_OF = {m: i for i, layer in enumerate(LAYERS) for m in layer}
# Compiled twice: into the crate's unit tests and, through `#[path]`, into
# tests/common, where its parent is the public API (see its mod.rs).
REEXPORT_USERS = {"test_support"}
# `unit_tests` are the `tests.rs` files beside the code they test: test
# code, above what it tests, whose folder they share.


def strip_comments_and_strings(text):
    """The code of a Rust file without comments and string literals."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == '"' or (c == "r" and re.match(r'r#*"', text[i:])):
            if c == "r":
                hashes = re.match(r"r(#*)\"", text[i:]).group(1)
                end = '"' + hashes
                j = text.find(end, i + 2 + len(hashes))
                i = n if j < 0 else j + len(end)
            else:
                j = i + 1
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                i = j + 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:]):
            i += len(re.match(r"'(\\.|[^\\'])'", text[i:]).group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_path(file):
    """`src/idle/policy.rs` -> ["idle", "policy"]; `src/idle/mod.rs` ->
    ["idle"]; `src/lib.rs` -> []."""
    parts = list(file.relative_to(SRC).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return parts


def file_of(path):
    """The file that defines module `path` (a list), or None."""
    if not path:
        return SRC / "lib.rs"
    base = SRC.joinpath(*path)
    for candidate in (base.with_suffix(".rs"), base / "mod.rs"):
        if candidate.exists():
            return candidate
    return None


def resolve(segments):
    """The file of the longest module prefix of `segments`, and the rest."""
    for cut in range(len(segments), -1, -1):
        target = file_of(segments[:cut])
        if target is not None:
            return target, segments[cut:]
    return None, segments


def top(file):
    """The top-level module of a file; a unit-test file (`tests.rs`) is on
    the tests' layer, whatever folder it sits in."""
    if file.name == "tests.rs":
        return "unit_tests"
    path = module_path(file)
    return path[0] if path else "lib"


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> [a::b, a::c::d, a::c::e] (as lists)."""
    tree = tree.strip()
    m = re.match(r"^(.*?)::\{(.*)\}$", tree, re.S)
    if not m:
        return [tree.split("::")]
    prefix = m.group(1).split("::")
    inner, depth, parts, cur = m.group(2), 0, [], ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for part in parts:
        part = re.sub(r"\s+as\s+\w+$", "", part.strip())
        if part:
            for tail in expand_use(part):
                out.append(prefix + tail)
    return out


def inline_modules(code):
    """(start, end, name) of every inline `mod name { … }` in the code."""
    spans = []
    for m in re.finditer(r"\bmod\s+(\w+)\s*\{", code):
        depth, i = 0, m.end() - 1
        while i < len(code):
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        spans.append((m.start(), i, m.group(1)))
    return spans


def references(file, code):
    """Every path the file names that starts with `crate` or `super`, made
    absolute: (position, path)."""
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", code):
        for path in expand_use(m.group(1)):
            path = [p.strip() for p in path if p.strip()]
            if path and path[0] in ("crate", "super"):
                paths.append((m.start(), path))
    for m in re.finditer(r"\b(crate|super)((?:::\w+)+)", code):
        paths.append((m.start(), [m.group(1)] + m.group(2).split("::")[1:]))
    spans = inline_modules(code)
    absolute = []
    for position, path in paths:
        if path[0] == "crate":
            absolute.append(path[1:])
            continue
        # A file's `super` is its parent module (mod.rs's too, since its
        # module path names the folder); inside an inline module, that
        # module is one more level.
        base = module_path(file) + [n for a, b, n in spans if a < position < b]
        while path and path[0] == "super":
            base = base[:-1]
            path = path[1:]
        absolute.append(base + path)
    return absolute


def main():
    quiet = "--quiet" in sys.argv
    files = sorted(SRC.rglob("*.rs"))
    lib_code = strip_comments_and_strings((SRC / "lib.rs").read_text())
    reexported = set()
    for m in re.finditer(r"\bpub use\s+([^;]+);", lib_code):
        for path in expand_use(m.group(1)):
            reexported.add(path[-1].strip())
    edges = {f: set() for f in files}
    problems = []
    for file in files:
        code = strip_comments_and_strings(file.read_text())
        for path in references(file, code):
            if not path:
                continue
            if file != SRC / "lib.rs" and len(path) == 1 and path[0] in reexported:
                if top(file) not in REEXPORT_USERS and file_of(path) is None:
                    problems.append(
                        f"{file.relative_to(ROOT)}: names `crate::{path[0]}` through "
                        "lib.rs's re-exports; import it from the module that defines it"
                    )
                continue
            target, _ = resolve(path)
            if target is None or target == file:
                continue
            # A module's own children are declared, not imported.
            if target.parent != file.parent or target.name != "mod.rs":
                edges[file].add(target)
    for file, targets in edges.items():
        for target in targets:
            a, b = top(file), top(target)
            if a == "sync" and b != "sync":
                problems.append(
                    f"{file.relative_to(ROOT)} -> {target.relative_to(ROOT)}: "
                    "the sync facade imports nothing of the crate"
                )
            elif a != b and LAYER_OF.get(b, 99) >= LAYER_OF.get(a, 99):
                problems.append(
                    f"{file.relative_to(ROOT)} (layer {LAYER_OF.get(a)}, {a}) -> "
                    f"{target.relative_to(ROOT)} (layer {LAYER_OF.get(b)}, {b}): "
                    "an import up a layer or across one"
                )
    # Cycles, by depth-first search over the file graph.
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):] + [nxt]
                problems.append(
                    "import cycle: " + " -> ".join(str(f.relative_to(SRC)) for f in cycle)
                )
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for file in files:
        if file not in state:
            visit(file)
    unknown = sorted({top(f) for f in files} - set(LAYER_OF))
    for module in unknown:
        problems.append(f"src/{module}: a module on no layer; add it to LAYERS")
    if not quiet:
        for i, layer in enumerate(LAYERS):
            print(f"layer {i}: {', '.join(layer)}")
            for file in files:
                if top(file) in layer:
                    targets = sorted(str(t.relative_to(SRC)) for t in edges[file])
                    print(f"    {file.relative_to(SRC)} -> {', '.join(targets) or '(nothing)'}")
        total = sum(len(t) for t in edges.values())
        print(f"{len(files)} files, {total} imports between them")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s)")
        sys.exit(1)
    print("imports point down: no import up a layer, no cycle, sync imports nothing")


if __name__ == "__main__":
    main()
