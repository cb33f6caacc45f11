//! The edit that puts rayon-core on eventcount, made by code on a scratch
//! copy, and the count of the lines it changes in rayon's files.
//!
//! It is as small as the wiring allows:
//! - `src/sleep/` (rayon's protocol) is replaced by the shim in
//!   `interop/rayon/sleep.rs`, generic over `eventcount::SleepProtocol`;
//! - in `src/latch.rs`, rayon's `CoreLatch` (its four state constants, the
//!   struct and its impl) is removed and `eventcount::CoreLatch` used
//!   instead: the same four states and the same methods; the `terminate`
//!   latch (`OnceLatch`) becomes an idle-loop latch, so that a wait on any
//!   other latch counts as a join;
//! - in `src/registry.rs`, the two calls of `work_found()` hand back the
//!   idle state that `start_looking` returned;
//! - `src/sleep/eigen/` gains the benchmark peer `EigenSleep`, copied from
//!   eventcount-bench (`bench/src/eigen/`), for the `eigen` feature: a
//!   dependency on eventcount-bench would make a cycle, since it depends
//!   on rayon;
//! - `Cargo.toml` gains the `eventcount` dependency (and the Eigen peer's
//!   `atomic-wait`, optional) and the features that choose the
//!   protocol (`jec`, the default, `notifier` or `eigen`) and the policy
//!   (`rayon-policy`, `pr1314-adaptive`,
//!   `pr1314-bounded`), and
//!   `fixed-budget`, which fixes the policy's search budget from the
//!   environment (the oracle sweep of `scripts/rayon-bench --oracle`), and
//!   `policy-tools`, which records the workers' idle gaps
//!   (`scripts/rayon-bench --record`).
//!
//! A copy for a user's project (`export`, [`Wiring::Fixed`]) differs in the
//! shim and the manifest only: the shim names one protocol and one policy,
//! and the manifest gains `eventcount` as the user gave it, with no feature
//! and no Eigen peer, so that nothing in the user's build can change them.
//!
//! Every other file of rayon-core, and all of rayon, stays as published.
//! The edit looks items up by their first line and fails loudly if one is
//! missing or ambiguous, so a different rayon-core cannot be half-patched.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::cmd::{self, Error};
use crate::sources::{self, RAYON_CORE_VERSION, RAYON_VERSION};
use crate::{Policy, Protocol};

/// The shim that becomes rayon-core's `src/sleep/mod.rs`.
pub(crate) const SHIM: &str = include_str!("../rayon/sleep.rs");

/// The lines around the shim's choice of protocol and policy, which a
/// fixed copy replaces.
const CHOICE_BEGIN: &str = "// eventcount-choice: begin";
const CHOICE_END: &str = "// eventcount-choice: end";

/// How a patched rayon-core picks its protocol and policy, and where it
/// finds eventcount.
pub enum Wiring<'a> {
    /// By features, for this repository's suites and benches: eventcount
    /// by path from `root`, eventcount's repository, and the Eigen peer's
    /// files copied from it.
    Features { root: &'a Path },
    /// Fixed in the shim, for a user's project: no feature can change them.
    /// `eventcount` is the body of the dependency's table, such as
    /// `version = "0.1"` or `path = "../eventcount"`.
    Fixed {
        protocol: Protocol,
        policy: Policy,
        eventcount: String,
    },
}

/// A patched workspace: rayon-core on eventcount, and rayon using it.
pub struct Tree {
    /// The scratch workspace (rayon-core and rayon are its members).
    pub root: PathBuf,
    /// What the edit changed.
    pub edit: EditReport,
}

/// Lines removed from and added to one of rayon-core's files.
pub struct FileEdit {
    path: &'static str,
    what: &'static str,
    removed: usize,
    added: usize,
    /// Lines that are eventcount's shim, not an edit of rayon's code.
    shim: bool,
}

/// Every file the edit touched.
pub struct EditReport {
    files: Vec<FileEdit>,
}

impl EditReport {
    /// Lines removed or added in rayon's own files (the shim's lines are
    /// counted apart: they replace rayon's sleep module wholesale).
    pub fn rayon_lines_changed(&self) -> usize {
        self.files
            .iter()
            .map(|f| f.removed + if f.shim { 0 } else { f.added })
            .sum()
    }

    fn outside_sleep(&self) -> (usize, usize) {
        self.files
            .iter()
            .filter(|f| !f.path.starts_with("src/sleep/"))
            .fold((0, 0), |(r, a), f| (r + f.removed, a + f.added))
    }

    fn shim_lines(&self) -> usize {
        // The Eigen peer's files, copied in beside the shim, are not its lines.
        let shim = |f: &&FileEdit| f.path == "src/sleep/mod.rs";
        self.files.iter().filter(shim).map(|f| f.added).sum()
    }
}

impl fmt::Display for EditReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "edit to rayon-core {RAYON_CORE_VERSION} (rayon {RAYON_VERSION} is used as published):"
        )?;
        for file in &self.files {
            writeln!(
                f,
                "  {:<22} -{:<4} +{:<4} {}",
                file.path, file.removed, file.added, file.what
            )?;
        }
        let (removed, added) = self.outside_sleep();
        let sleep_removed: usize = self
            .files
            .iter()
            .filter(|f| f.path.starts_with("src/sleep/"))
            .map(|f| f.removed)
            .sum();
        writeln!(
            f,
            "lines changed in rayon's files: {} ({} outside the sleep module: -{removed} +{added}; \
             the sleep module's {sleep_removed} lines replaced by a {}-line shim)",
            self.rayon_lines_changed(),
            removed + added,
            self.shim_lines(),
        )
    }
}

/// Fetch the sources and build a fresh patched workspace under `scratch`.
/// If the workspace of an earlier run holds exactly the same files, it is
/// kept instead, so that the builds in its target directory stay fresh:
/// repeated runs (scripts/soak) do not rebuild rayon each time.
pub fn prepare(scratch: &Path) -> Result<Tree, Error> {
    let sources = sources::fetch(scratch)?;
    let root = scratch.join("patched");
    let fresh = scratch.join("patched.new");
    cmd::remove_tree(&fresh)?;
    let rayon_core = fresh.join("rayon-core");
    cmd::copy_tree(&sources.rayon_core, &rayon_core)?;
    cmd::copy_tree(&sources.rayon, &fresh.join("rayon"))?;
    let edit = apply(
        &rayon_core,
        &Wiring::Features {
            root: &crate::repo_root(),
        },
    )?;
    cmd::write(
        &fresh.join("Cargo.toml"),
        r#"# Written by eventcount's rayon-interop. rayon-core is the patched copy;
# rayon, unchanged, is pointed at it.
[workspace]
members = ["rayon-core", "rayon"]
resolver = "2"

[patch.crates-io]
rayon-core = { path = "rayon-core" }
"#,
    )?;
    // cargo adds the lock file; nothing else writes to the workspace.
    cmd::keep_if_same(&fresh, &root, &["Cargo.lock"])?;
    Ok(Tree { root, edit })
}

/// Apply the edit to the rayon-core copy at `dir`.
pub fn apply(dir: &Path, wiring: &Wiring) -> Result<EditReport, Error> {
    let mut files = Vec::new();

    // 1. The sleep module: rayon's protocol out, the shim in.
    for (path, what) in [
        (
            "src/sleep/counters.rs",
            "removed (the packed counters are eventcount's)",
        ),
        (
            "src/sleep/README.md",
            "removed (the protocol's doc is eventcount's docs/jec-sleep.md)",
        ),
    ] {
        let file = dir.join(path);
        let removed = line_count(&cmd::read(&file)?);
        std::fs::remove_file(&file).map_err(|err| format!("removing {}: {err}", file.display()))?;
        files.push(FileEdit {
            path,
            what,
            removed,
            added: 0,
            shim: false,
        });
    }
    let module = dir.join("src/sleep/mod.rs");
    let removed = line_count(&cmd::read(&module)?);
    let shim = match wiring {
        Wiring::Features { .. } => SHIM.to_string(),
        Wiring::Fixed {
            protocol, policy, ..
        } => fixed_shim(*protocol, *policy)?,
    };
    cmd::write(&module, &shim)?;
    files.push(FileEdit {
        path: "src/sleep/mod.rs",
        what: "replaced by eventcount's shim (interop/rayon/sleep.rs)",
        removed,
        added: line_count(&shim),
        shim: true,
    });
    if let Wiring::Features { root } = wiring {
        let mut added = 0;
        for file in ["mod.rs", "event_count.rs"] {
            let text = cmd::read(&root.join("bench/src/eigen").join(file))?;
            added += line_count(&text);
            cmd::write(&dir.join("src/sleep/eigen").join(file), &text)?;
        }
        files.push(FileEdit {
            path: "src/sleep/eigen/",
            what: "the Eigen peer, for the `eigen` feature (bench/src/eigen/)",
            removed: 0,
            added,
            shim: true,
        });
    }

    // 2. latch.rs: CoreLatch is eventcount's.
    let latch = dir.join("src/latch.rs");
    let text = cmd::read(&latch)?;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut removed = 0;
    for state in ["UNSET", "SLEEPY", "SLEEPING", "SET"] {
        removed += remove_item(&mut lines, &format!("const {state}: usize = "), false)?.1;
    }
    removed += remove_item(&mut lines, "impl CoreLatch {", true)?.1;
    let (at, n) = remove_item(&mut lines, "pub(super) struct CoreLatch {", true)?;
    removed += n;
    lines.insert(at, String::new());
    lines.insert(at, "pub(super) use eventcount::CoreLatch;".to_string());
    // The terminate latch is the only OnceLatch: its owner's wait is the
    // worker's top-level idle loop.
    replace_in_item(
        &mut lines,
        "impl OnceLatch {",
        "core_latch: CoreLatch::new(),",
        "core_latch: CoreLatch::idle_loop(),",
    )?;
    cmd::write(&latch, &(lines.join("\n") + "\n"))?;
    files.push(FileEdit {
        path: "src/latch.rs",
        what: "rayon's CoreLatch out, `pub(super) use eventcount::CoreLatch;` in; \
               OnceLatch (terminate) made an idle-loop latch",
        removed: removed + 1,
        added: 2,
        shim: false,
    });

    // 3. registry.rs: work_found hands back the idle state.
    let registry = dir.join("src/registry.rs");
    let text = cmd::read(&registry)?;
    let old = "self.registry.sleep.work_found();";
    let found = text.matches(old).count();
    if found != 2 {
        return Err(format!(
            "{}: expected `{old}` twice (in wait_until_cold), found it {found} times",
            registry.display()
        ));
    }
    let text = text.replace(old, "self.registry.sleep.work_found(idle_state);");
    cmd::write(&registry, &text)?;
    files.push(FileEdit {
        path: "src/registry.rs",
        what: "work_found() hands back the idle state (twice)",
        removed: 2,
        added: 2,
        shim: false,
    });

    // 4. Cargo.toml: the dependency, and the protocol and policy features.
    let manifest = dir.join("Cargo.toml");
    let text = cmd::read(&manifest)?;
    let (text, added, what) = match wiring {
        Wiring::Features { root } => {
            let features = "[features]\n";
            if text.matches(features).count() != 1 {
                return Err(format!(
                    "{}: expected one [features] table",
                    manifest.display()
                ));
            }
            let feature_lines =
                "default = [\"jec\"]\njec = []\nnotifier = []\neigen = [\"dep:atomic-wait\"]\n\
                 rayon-policy = []\npr1314-adaptive = []\npr1314-bounded = []\n\
                 fixed-budget = []\npolicy-tools = [\"eventcount/policy-tools\"]\n";
            let path = |dir: &Path| serde_json::Value::String(dir.display().to_string());
            let dependency = format!(
                "\n[dependencies.eventcount]\npath = {}\nfeatures = [\"internals\"]\n\n[dependencies.atomic-wait]\nversion = \"1.1\"\noptional = true\n",
                path(root),
            );
            let text =
                text.replacen(features, &format!("{features}{feature_lines}"), 1) + &dependency;
            let added = line_count(feature_lines) + line_count(&dependency);
            let what =
                "eventcount (and the Eigen peer's atomic-wait) as dependencies; protocol and policy features";
            (text, added, what)
        }
        Wiring::Fixed { eventcount, .. } => {
            let dependency = format!(
                "\n# Added by eventcount's rayon-interop export (see EVENTCOUNT.md): the\n\
                 # shim in src/sleep/mod.rs sleeps on this crate.\n\
                 [dependencies.eventcount]\n{eventcount}\n"
            );
            let added = line_count(&dependency);
            (text + &dependency, added, "eventcount as a dependency")
        }
    };
    cmd::write(&manifest, &text)?;
    files.push(FileEdit {
        path: "Cargo.toml",
        what,
        removed: 0,
        added,
        shim: false,
    });

    Ok(EditReport { files })
}

/// The shim with its choice of protocol and policy fixed: the lines between
/// the choice markers (the features' `cfg`s) become three plain items.
pub fn fixed_shim(protocol: Protocol, policy: Policy) -> Result<String, Error> {
    if protocol == Protocol::Eigen {
        // The peer is a benchmark's, not a protocol a project should run,
        // and a fixed copy does not depend on it.
        return Err("the eigen peer cannot be exported: choose jec or notifier".into());
    }
    let lines: Vec<&str> = SHIM.lines().collect();
    let find = |marker: &str| -> Result<usize, Error> {
        let found: Vec<usize> = (0..lines.len()).filter(|&i| lines[i] == marker).collect();
        match found.as_slice() {
            &[at] => Ok(at),
            _ => Err(format!(
                "interop/rayon/sleep.rs: expected the line `{marker}` once, found it {} times",
                found.len()
            )),
        }
    };
    let (begin, end) = (find(CHOICE_BEGIN)?, find(CHOICE_END)?);
    if begin > end {
        return Err(format!(
            "interop/rayon/sleep.rs: `{CHOICE_END}` comes before `{CHOICE_BEGIN}`"
        ));
    }
    let choice = format!(
        "// Fixed by `rayon-interop export --protocol {} --policy {}`:\n\
         // this copy has no feature that could change them. Export again to\n\
         // choose others.\n\
         type Protocol = {};\n\
         const POLICY: IdlePolicy = {};\n\
         fn policy() -> IdlePolicy {{\n    POLICY\n}}",
        protocol.feature(),
        policy.name(),
        protocol.type_path(),
        policy.expr(),
    );
    let mut out: Vec<&str> = lines[..begin].to_vec();
    out.push(&choice);
    out.extend(&lines[end + 1..]);
    Ok(out.join("\n") + "\n")
}

/// Remove the item whose first line starts with `head` (exactly one must),
/// with the doc comments and attributes right above it and, for a block
/// item, everything down to its closing `}` at the start of a line; one
/// blank line after it goes too. Returns where it was and how many
/// non-blank lines went.
fn remove_item(lines: &mut Vec<String>, head: &str, block: bool) -> Result<(usize, usize), Error> {
    let at = the_line_starting(lines, head)?;
    let mut start = at;
    while start > 0 {
        let above = lines[start - 1].trim_start();
        if above.starts_with("///") || above.starts_with("#[") {
            start -= 1;
        } else {
            break;
        }
    }
    let mut end = at;
    if block {
        end = (at..lines.len())
            .find(|&i| lines[i] == "}")
            .ok_or_else(|| format!("latch.rs: no closing brace for `{head}`"))?;
    }
    if lines.get(end + 1).is_some_and(|l| l.trim().is_empty()) {
        end += 1;
    }
    let removed = lines
        .drain(start..=end)
        .filter(|l| !l.trim().is_empty())
        .count();
    Ok((start, removed))
}

/// In the block item whose first line starts with `head` (exactly one
/// must, as must exactly one line of the block containing `old`), replace
/// `old` with `new` on that line.
fn replace_in_item(lines: &mut [String], head: &str, old: &str, new: &str) -> Result<(), Error> {
    let start = the_line_starting(lines, head)?;
    let end = (start..lines.len())
        .find(|&i| lines[i] == "}")
        .ok_or_else(|| format!("latch.rs: no closing brace for `{head}`"))?;
    let hits: Vec<usize> = (start..=end).filter(|&i| lines[i].contains(old)).collect();
    let &[at] = hits.as_slice() else {
        return Err(format!(
            "latch.rs: expected `{old}` once in `{head}`, found it {} times",
            hits.len()
        ));
    };
    lines[at] = lines[at].replace(old, new);
    Ok(())
}

/// Where the one line starting with `head` is; an error if there is none
/// or more than one.
fn the_line_starting(lines: &[String], head: &str) -> Result<usize, Error> {
    let found: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with(head))
        .collect();
    match found.as_slice() {
        &[at] => Ok(at),
        _ => Err(format!(
            "latch.rs: expected one line starting with `{head}`, found {}",
            found.len()
        )),
    }
}

/// Lines that say something: blank lines are not counted anywhere.
fn line_count(text: &str) -> usize {
    text.lines().filter(|l| !l.trim().is_empty()).count()
}
