//! The edit that parks tokio's multi-thread scheduler on eventcount, made
//! by code on a scratch copy, and the count of the lines it changes in
//! tokio's files.
//!
//! - `src/runtime/scheduler/multi_thread/idle.rs` (the searching/unparked
//!   word and the sleeper list) is replaced by the shim `interop/tokio/idle.rs`;
//! - `park.rs` (a worker's park state, its condvar, and the shared driver)
//!   is replaced by `interop/tokio/park.rs`, which keeps the driver;
//! - `worker.rs`, `handle.rs`, `mod.rs` and `counters.rs`, and the timer's
//!   `time/mod.rs` and `time/wheel/mod.rs`, get the line edits of
//!   `interop/tokio/edits.txt`;
//! - `Cargo.toml` gains the `eventcount` dependency and the features that
//!   choose the protocol (`eventcount-notifier`; JecSleep without it) and
//!   the policy (`eventcount-default-policy`; `IdlePolicy::tokio()`
//!   without it).
//!
//! Every copy (stock, stock with the timer's edits alone, and patched) gets
//! the two manifest lines that let tokio's tests build outside tokio's
//! workspace: a `[patch.crates-io]`
//! that points tokio's dev-dependencies (tokio-test, tokio-stream) at the
//! copy itself, and an empty `[workspace]`. The published `Cargo.lock`,
//! which pins a second tokio from the registry for those dev-dependencies,
//! is removed so that cargo resolves them to the copy.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::cmd::{self, Error};
use crate::sources::{self, TOKIO_VERSION};
use crate::Protocol;

/// The shim that becomes the scheduler's `idle.rs`.
const IDLE: &str = include_str!("../tokio/idle.rs");
/// The driver half of tokio's parker, the scheduler's `park.rs`.
const PARK: &str = include_str!("../tokio/park.rs");
/// The line edits of the other files.
const EDITS: &str = include_str!("../tokio/edits.txt");

const SCHEDULER: &str = "src/runtime/scheduler/multi_thread";
/// The timer's files: their edits stand apart from the scheduler's (a
/// timer set while nobody sleeps in the driver writes no wake-up), and a
/// stock copy gets them alone for comparison.
const TIMER: &str = "src/runtime/time/";

/// One build of tokio's tests: stock, stock with the port's timer edit
/// only, or patched on a protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokioBuild {
    /// None for tokio's own scheduler.
    pub protocol: Option<Protocol>,
    /// eventcount's default policy instead of `IdlePolicy::tokio()`.
    default_policy: bool,
    /// Stock tokio with the edit of its timer alone (the files under
    /// [`TIMER`]), which the patched copy has too: it tells that edit's
    /// share of a difference from the protocol's.
    timer_edit_only: bool,
}

impl TokioBuild {
    pub const STOCK: TokioBuild = TokioBuild {
        protocol: None,
        default_policy: false,
        timer_edit_only: false,
    };

    pub const STOCK_TIMER_EDIT: TokioBuild = TokioBuild {
        protocol: None,
        default_policy: false,
        timer_edit_only: true,
    };

    /// tokio on `protocol`, with eventcount's default policy if
    /// `default_policy`, else `IdlePolicy::tokio()`.
    pub fn on(protocol: Protocol, default_policy: bool) -> TokioBuild {
        TokioBuild {
            protocol: Some(protocol),
            default_policy,
            timer_edit_only: false,
        }
    }

    /// How the build is named in reports, logs and target directories.
    pub fn name(self) -> String {
        match (self.protocol, self.default_policy) {
            (None, _) if self.timer_edit_only => "stock-timer-edit".into(),
            (None, _) => "stock".into(),
            (Some(p), false) => p.feature().into(),
            (Some(p), true) => format!("{}-default-policy", p.feature()),
        }
    }

    /// The copy of tokio it builds.
    pub fn tree(self, trees: &Trees) -> &Path {
        match (self.protocol, self.timer_edit_only) {
            (Some(_), _) => &trees.patched,
            (None, true) => &trees.stock_timer_edit,
            (None, false) => &trees.stock,
        }
    }

    /// The `--features` value of the build.
    pub fn features(self) -> String {
        let mut features = vec!["full"];
        if self.protocol == Some(Protocol::Notifier) {
            features.push("eventcount-notifier");
        }
        if self.protocol.is_some() && self.default_policy {
            features.push("eventcount-default-policy");
        }
        features.join(",")
    }

    /// Its target directory under the scratch directory: one per copy, so
    /// that each copy's builds stay fresh from one run to the next (the
    /// protocols' builds differ in features only, and share one).
    pub fn target_dir(self) -> &'static str {
        match (self.protocol, self.timer_edit_only) {
            (Some(_), _) => "target-patched",
            (None, true) => "target-stock-timer-edit",
            (None, false) => "target-stock",
        }
    }
}

/// The copies of tokio: as published, with the timer edit only, and
/// patched.
pub struct Trees {
    pub stock: PathBuf,
    pub stock_timer_edit: PathBuf,
    pub patched: PathBuf,
    pub edit: EditReport,
}

/// Lines removed from and added to one of tokio's files.
struct FileEdit {
    path: String,
    removed: usize,
    added: usize,
    /// The file is replaced whole by one of eventcount's.
    replaced: bool,
}

/// Every file the edit touched.
pub struct EditReport {
    files: Vec<FileEdit>,
}

impl EditReport {
    /// (removed, added) in the files edited line by line.
    fn edited(&self) -> (usize, usize) {
        self.files
            .iter()
            .filter(|f| !f.replaced)
            .fold((0, 0), |(r, a), f| (r + f.removed, a + f.added))
    }

    /// (tokio's lines, eventcount's lines) of the files replaced whole.
    fn replaced(&self) -> (usize, usize) {
        self.files
            .iter()
            .filter(|f| f.replaced)
            .fold((0, 0), |(r, a), f| (r + f.removed, a + f.added))
    }
}

impl fmt::Display for EditReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "edit to tokio {TOKIO_VERSION} (non-blank lines):")?;
        for file in &self.files {
            writeln!(
                f,
                "  {:<48} -{:<4} +{:<4} {}",
                file.path,
                file.removed,
                file.added,
                if file.replaced {
                    "replaced by eventcount's (interop/tokio/)"
                } else {
                    "edited (interop/tokio/edits.txt)"
                }
            )?;
        }
        let (removed, added) = self.edited();
        let (theirs, ours) = self.replaced();
        writeln!(
            f,
            "lines changed in tokio's files: {} (-{removed} +{added}) outside idle.rs and \
             park.rs; those two, {theirs} lines of tokio's idle and park code, replaced by \
             {ours} lines of eventcount's; in all -{} +{}",
            removed + added,
            removed + theirs,
            added + ours,
        )
    }
}

/// Fetch tokio and build the three copies under `scratch`. A copy that an
/// earlier run left with exactly the same files is kept, so that its
/// builds stay fresh.
pub fn prepare(scratch: &Path) -> Result<Trees, Error> {
    let source = sources::fetch_tokio(scratch)?;
    let stock = scratch.join("stock");
    copy(&source, &stock, |_| Ok(()))?;
    let stock_timer_edit = scratch.join("stock-timer-edit");
    copy(&source, &stock_timer_edit, |dir| {
        edit_files(dir, |path| path.starts_with(TIMER)).map(|_| ())
    })?;
    let patched = scratch.join("patched");
    let mut edit = None;
    copy(&source, &patched, |dir| {
        edit = Some(apply(dir, &crate::repo_root())?);
        Ok(())
    })?;
    Ok(Trees {
        stock,
        stock_timer_edit,
        patched,
        edit: edit.expect("the patched copy was written"),
    })
}

/// Write a patched tokio for a user's project into `out` (created; it
/// must not exist or be empty), with eventcount by `eventcount`: a path
/// written into the copy's manifest as given, so a relative one is read
/// from `out`. Unlike the scratch copies, it gets no manifest lines for
/// tokio's own tests.
pub fn export(scratch: &Path, out: &Path, eventcount: &Path) -> Result<EditReport, Error> {
    let not_empty = std::fs::read_dir(out).is_ok_and(|mut entries| entries.next().is_some());
    if not_empty {
        return Err(format!(
            "--out {}: the directory exists and is not empty; give a new one",
            out.display()
        ));
    }
    let source = sources::fetch_tokio(scratch)?;
    cmd::copy_tree(&source, out)?;
    let lock = out.join("Cargo.lock");
    if lock.exists() {
        std::fs::remove_file(&lock).map_err(|err| format!("removing {}: {err}", lock.display()))?;
    }
    apply(out, eventcount)
}

/// Copy tokio to `to`, change it with `change`, and make it build on its
/// own (see the module docs).
fn copy(
    source: &Path,
    to: &Path,
    change: impl FnOnce(&Path) -> Result<(), Error>,
) -> Result<(), Error> {
    let fresh = to.with_extension("new");
    cmd::remove_tree(&fresh)?;
    cmd::copy_tree(source, &fresh)?;
    change(&fresh)?;
    let lock = fresh.join("Cargo.lock");
    if lock.exists() {
        std::fs::remove_file(&lock).map_err(|err| format!("removing {}: {err}", lock.display()))?;
    }
    let manifest = fresh.join("Cargo.toml");
    let text = cmd::read(&manifest)?;
    cmd::write(
        &manifest,
        &(text
            + "\n# Added by eventcount's interop tool: tokio's dev-dependencies use this copy,\n\
               # which builds outside tokio's workspace.\n\
               [patch.crates-io]\ntokio = { path = \".\" }\n\n[workspace]\n"),
    )?;
    cmd::keep_if_same(&fresh, to, &["Cargo.lock"])
}

/// Apply the edit to the tokio copy at `dir`, with eventcount by path from
/// `eventcount` (this repository).
pub fn apply(dir: &Path, eventcount: &Path) -> Result<EditReport, Error> {
    let mut files = Vec::new();
    for (name, ours) in [("idle.rs", IDLE), ("park.rs", PARK)] {
        let path = format!("{SCHEDULER}/{name}");
        let file = dir.join(&path);
        let removed = line_count(&cmd::read(&file)?);
        cmd::write(&file, ours)?;
        files.push(FileEdit {
            path,
            removed,
            added: line_count(ours),
            replaced: true,
        });
    }
    files.extend(edit_files(dir, |_| true)?);
    let manifest = dir.join("Cargo.toml");
    let text = cmd::read(&manifest)?;
    let features = "[features]\ndefault = []\n";
    if text.matches(features).count() != 1 {
        return Err(format!(
            "{}: expected one `[features]` table starting with `default = []`",
            manifest.display()
        ));
    }
    let feature_lines = "eventcount-notifier = []\neventcount-default-policy = []\n";
    let dependency = format!(
        "\n[dependencies.eventcount]\npath = {}\n",
        serde_json::Value::String(eventcount.display().to_string())
    );
    let text =
        text.replacen(features, &format!("{features}{feature_lines}"), 1) + dependency.as_str();
    cmd::write(&manifest, &text)?;
    files.push(FileEdit {
        path: "Cargo.toml".into(),
        removed: 0,
        added: line_count(feature_lines) + line_count(&dependency),
        replaced: false,
    });
    Ok(EditReport { files })
}

/// Make the edits of `edits.txt` to the files whose path `wanted` takes.
fn edit_files(dir: &Path, wanted: impl Fn(&str) -> bool) -> Result<Vec<FileEdit>, Error> {
    let mut files = Vec::new();
    for (path, edits) in parse(EDITS)? {
        if !wanted(&path) {
            continue;
        }
        let file = dir.join(&path);
        let (text, removed, added) =
            edit(&cmd::read(&file)?, &edits).map_err(|err| format!("{path}: {err}"))?;
        cmd::write(&file, &text)?;
        files.push(FileEdit {
            path,
            removed,
            added,
            replaced: false,
        });
    }
    Ok(files)
}

/// One edit of `edits.txt`.
#[derive(Debug, PartialEq)]
struct Edit {
    from: String,
    to: Option<String>,
    with: Vec<String>,
}

/// The edits of `edits.txt`, by file, in order.
fn parse(text: &str) -> Result<Vec<(String, Vec<Edit>)>, Error> {
    let mut files: Vec<(String, Vec<Edit>)> = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        let at = |what: &str| format!("interop/tokio/edits.txt, line {}: {what}", n + 1);
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(path) = line.strip_prefix("@ file ") {
            files.push((path.to_string(), Vec::new()));
            continue;
        }
        if !line.starts_with("@ edit ") {
            return Err(at("expected `@ file` or `@ edit`"));
        }
        let Some((_, file_edits)) = files.last_mut() else {
            return Err(at("an edit before any `@ file`"));
        };
        let from = match lines.next() {
            Some((_, l)) if l.starts_with("@ from ") => l["@ from ".len()..].trim().to_string(),
            _ => return Err(at("an edit must go on with `@ from`")),
        };
        let to = match lines.peek() {
            Some((_, l)) if l.starts_with("@ to ") => {
                let to = l["@ to ".len()..].to_string();
                lines.next();
                Some(to)
            }
            _ => None,
        };
        let mut with = Vec::new();
        while let Some((_, l)) = lines.peek() {
            if l.starts_with('@') {
                break;
            }
            with.push(l.to_string());
            lines.next();
        }
        while with.last().is_some_and(|l| l.trim().is_empty()) {
            with.pop();
        }
        file_edits.push(Edit { from, to, with });
    }
    Ok(files)
}

/// Apply `edits` to `text`, in order. Returns the text and the non-blank
/// lines removed and added.
fn edit(text: &str, edits: &[Edit]) -> Result<(String, usize, usize), Error> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let (mut removed, mut added) = (0, 0);
    for e in edits {
        let found: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].trim() == e.from)
            .collect();
        let &[start] = found.as_slice() else {
            return Err(format!(
                "expected one line `{}`, found {}",
                e.from,
                found.len()
            ));
        };
        let end = match &e.to {
            None => start,
            Some(to) => (start..lines.len())
                .find(|&i| lines[i].trim_end() == to)
                .ok_or_else(|| format!("no line `{to}` after `{}`", e.from))?,
        };
        let mut start = start;
        let mut end = end;
        if e.with.is_empty() {
            // A deleted item takes one of the blank lines around it along:
            // the one below it after a blank line or an opening brace, the
            // one above it before a closing brace.
            let blank = |i: usize| lines.get(i).is_some_and(|l| l.trim().is_empty());
            let before = start.checked_sub(1).map(|i| lines[i].trim_end());
            let after = lines.get(end + 1).map(|l| l.trim());
            if blank(end + 1) && before.is_some_and(|l| l.is_empty() || l.ends_with('{')) {
                end += 1;
            } else if start > 0 && blank(start - 1) && after == Some("}") {
                start -= 1;
            }
        }
        removed += lines
            .drain(start..=end)
            .filter(|l| !l.trim().is_empty())
            .count();
        added += line_count(&e.with.join("\n"));
        for (i, line) in e.with.iter().enumerate() {
            lines.insert(start + i, line.clone());
        }
    }
    Ok((lines.join("\n") + "\n", removed, added))
}

/// Lines that say something: blank lines are not counted anywhere.
fn line_count(text: &str) -> usize {
    text.lines().filter(|l| !l.trim().is_empty()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_replace_spans_and_delete_items_with_a_blank_line() {
        let edits = parse(
            "# a comment\n@ file a.rs\n@ edit rename\n@ from fn a() {\n@ to }\nfn b() {\n}\n\
             @ edit drop c\n@ from fn c() {}\n",
        )
        .unwrap();
        assert_eq!(edits.len(), 1);
        assert_eq!(edits[0].1.len(), 2);
        let text = "fn a() {\n    x\n}\n\nfn c() {}\n\nfn d() {}\n";
        let (out, removed, added) = edit(text, &edits[0].1).unwrap();
        assert_eq!(out, "fn b() {\n}\n\nfn d() {}\n");
        assert_eq!((removed, added), (4, 2));
    }

    #[test]
    fn a_missing_or_repeated_anchor_is_an_error() {
        let edits = parse("@ file a.rs\n@ edit x\n@ from x\n").unwrap();
        assert!(edit("y\n", &edits[0].1).is_err());
        assert!(edit("x\nx\n", &edits[0].1).is_err());
    }

    #[test]
    fn the_shipped_edits_parse() {
        let files = parse(EDITS).unwrap();
        assert!(files.iter().all(|(_, edits)| !edits.is_empty()));
    }
}
