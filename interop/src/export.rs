//! `export`: a patched rayon-core for a project of the user's own.
//!
//! The copy is rayon-core as published with the suites' edit (`patch.rs`),
//! except that its shim names one protocol and one policy, its manifest has
//! no feature that could change them and no eigen peer, and it depends on
//! eventcount by the version or the path the user gave. The project points
//! its `[patch.crates-io]` at the copy. The copy's `EVENTCOUNT.md` says
//! what it is, how it was made and how to go back.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::cmd::{self, Error};
use crate::patch::{self, Wiring};
use crate::sources::{self, RAYON_CORE_VERSION, RAYON_VERSION};
use crate::{Policy, Protocol};

/// The file that says what an exported directory is. `--force` replaces
/// only a directory that has it, so that a mistyped `--out` (a project's
/// root, a home directory) is never deleted.
pub const MARKER: &str = "EVENTCOUNT.md";

#[derive(clap::Args)]
pub struct Options {
    /// The directory to write the patched rayon-core to (created: it
    /// becomes the crate's root).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The protocol, fixed in the copy's source.
    #[arg(long, value_enum)]
    protocol: Protocol,
    /// The idle policy, fixed in the copy's source.
    #[arg(long, value_enum, default_value_t = Policy::Default)]
    policy: Policy,
    /// eventcount from crates.io by a version requirement (`0.1`,
    /// `=0.1.0`), from a git repository (`git+` and its URL, such as
    /// `git+https://github.com/eventcount-rs/eventcount`), or from a
    /// checkout by path (any other value with a `/`, such as `./eventcount`
    /// or `/src/eventcount`). A relative path is read from the current
    /// directory and written relative to --out; an absolute one is written
    /// as given.
    #[arg(long, value_name = "VERSION_OR_PATH")]
    eventcount: String,
    /// Replace --out if it holds an earlier export (a directory with an
    /// EVENTCOUNT.md).
    #[arg(long)]
    force: bool,
}

/// Where the copy gets eventcount from.
#[derive(Debug, PartialEq, Eq)]
pub enum Eventcount {
    /// A version requirement, resolved on crates.io.
    Version(String),
    /// A git repository's URL, which cargo clones: no checkout of the
    /// user's own.
    Git(String),
    /// A checkout's directory, as the user wrote it.
    Path(PathBuf),
}

impl Eventcount {
    /// A value that starts with `git+` is a git URL; else one with a path
    /// separator (or `.`, `..`) is a path; anything else must be a version
    /// requirement as cargo reads one.
    pub fn parse(value: &str) -> Result<Eventcount, Error> {
        if let Some(url) = value.strip_prefix("git+") {
            if !url.contains("://") {
                return Err(format!(
                    "--eventcount {value:?}: after `git+` comes a URL with a scheme, such as \
                     git+https://github.com/eventcount-rs/eventcount"
                ));
            }
            return Ok(Eventcount::Git(url.to_string()));
        }
        let is_path = value.contains('/')
            || value.contains(std::path::MAIN_SEPARATOR)
            || value == "."
            || value == "..";
        if is_path {
            return Ok(Eventcount::Path(PathBuf::from(value)));
        }
        match semver::VersionReq::parse(value) {
            Ok(_) => Ok(Eventcount::Version(value.trim().to_string())),
            Err(err) => Err(format!(
                "--eventcount {value:?} is neither a version requirement ({err}; e.g. 0.1 or \
                 =0.1.0) nor a path (a path has a `/`: ./eventcount, /src/eventcount)"
            )),
        }
    }
}

/// What an export wrote, and what the user adds to their project.
pub struct Exported {
    /// The copy's directory, absolute.
    pub dir: PathBuf,
    protocol: Protocol,
    policy: Policy,
    /// The body of the copy's `[dependencies.eventcount]` table.
    dependency: String,
    from_registry: bool,
}

impl Exported {
    /// The lines of a project's Cargo.toml that put its rayon on the copy.
    pub fn project_lines(&self) -> String {
        format!(
            "[dependencies]\nrayon = \"={RAYON_VERSION}\"\n\n[patch.crates-io]\nrayon-core = {{ path = {} }}\n",
            toml_string(&self.dir.display().to_string())
        )
    }

    /// The line the copy's pools print with `EVENTCOUNT_LOG=1`, for a pool
    /// of `threads` threads.
    pub fn log_line(&self, threads: usize) -> String {
        let name = self.protocol.type_path().rsplit("::").next().unwrap_or("?");
        format!(
            "eventcount: rayon-core pool: protocol {name}, policy {:?}, {threads} threads",
            self.policy.value()
        )
    }
}

impl fmt::Display for Exported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "wrote rayon-core {RAYON_CORE_VERSION} on eventcount to {}",
            self.dir.display()
        )?;
        writeln!(
            f,
            "  protocol:   {} ({}), fixed in src/sleep/mod.rs",
            self.protocol.feature(),
            self.protocol.type_path()
        )?;
        writeln!(
            f,
            "  policy:     {} ({})",
            self.policy.name(),
            self.policy.expr()
        )?;
        writeln!(f, "  eventcount: {}", self.dependency)?;
        writeln!(
            f,
            "\nAdd to your project's Cargo.toml (the workspace root's, if it has one):\n"
        )?;
        writeln!(f, "{}", self.project_lines())?;
        writeln!(
            f,
            "rayon must stay at exactly {RAYON_VERSION}: cargo uses the patch only where rayon \
             asks for rayon-core {RAYON_CORE_VERSION}, and warns that it was \"not used\" \
             otherwise."
        )?;
        writeln!(
            f,
            "Check it: EVENTCOUNT_LOG=1 makes every pool print a line such as\n  {}",
            self.log_line(4)
        )?;
        if self.from_registry {
            writeln!(
                f,
                "eventcount comes from crates.io: the version must be a release with the API \
                 of the eventcount this tool was built with (its changelog: \
                 https://docs.rs/eventcount/latest/eventcount/changelog/index.html); until \
                 there is one, export with --eventcount git+URL or --eventcount PATH."
            )?;
        }
        Ok(())
    }
}

/// Run `export` from its command line.
pub fn run(scratch: &Path, options: &Options) -> Result<Exported, Error> {
    let eventcount = Eventcount::parse(&options.eventcount)?;
    export(
        scratch,
        &options.out,
        options.protocol,
        options.policy,
        &eventcount,
        options.force,
    )
}

/// Write the copy to `out`. Every check of the input runs before anything
/// is downloaded or written.
pub fn export(
    scratch: &Path,
    out: &Path,
    protocol: Protocol,
    policy: Policy,
    eventcount: &Eventcount,
    force: bool,
) -> Result<Exported, Error> {
    if protocol == Protocol::Eigen {
        return Err("the eigen peer cannot be exported: choose jec or notifier".into());
    }
    if let Eventcount::Path(path) = eventcount {
        check_eventcount_dir(path)?;
    }
    let replace = check_out(out, force)?;
    let sources = sources::fetch(scratch)?;

    if replace {
        cmd::remove_tree(out)?;
    }
    fs::create_dir_all(out).map_err(|err| format!("creating {}: {err}", out.display()))?;
    let dir = absolute(out)?;
    let dependency = match eventcount {
        Eventcount::Version(req) => format!("version = {}", toml_string(req)),
        Eventcount::Git(url) => format!("git = {}", toml_string(url)),
        Eventcount::Path(path) if path.is_absolute() => {
            format!("path = {}", toml_string(&path.display().to_string()))
        }
        Eventcount::Path(path) => {
            // Relative to the copy, so that the copy and the checkout can
            // move together (say, both inside the user's repository).
            let target = absolute(path)?;
            let written = relative(&dir, &target).unwrap_or(target);
            format!("path = {}", toml_string(&written.display().to_string()))
        }
    };
    let dependency = if policy.needs_internals() {
        format!("{dependency}\nfeatures = [\"internals\"]")
    } else {
        dependency
    };
    let exported = Exported {
        dir,
        protocol,
        policy,
        dependency,
        from_registry: matches!(eventcount, Eventcount::Version(_)),
    };
    // The marker goes first: a copy that fails half-way can be replaced
    // with --force.
    cmd::write(&exported.dir.join(MARKER), &marker(&exported))?;
    cmd::copy_tree(&sources.rayon_core, &exported.dir)?;
    // cargo's mark of a finished unpack in its registry: meaningless here.
    let _ = fs::remove_file(exported.dir.join(".cargo-ok"));
    patch::apply(
        &exported.dir,
        &Wiring::Fixed {
            protocol,
            policy,
            eventcount: exported.dependency.clone(),
        },
    )?;
    Ok(exported)
}

/// The copy's EVENTCOUNT.md.
fn marker(exported: &Exported) -> String {
    format!(
        "# rayon-core {RAYON_CORE_VERSION} on eventcount\n\n\
         This directory is rayon-core {RAYON_CORE_VERSION} as published, with its sleep module\n\
         replaced by eventcount's shim (`src/sleep/mod.rs`) and eventcount added to its\n\
         `Cargo.toml`. It was written by eventcount's `rayon-interop export`\n\
         (\"Use it in your project\" in\n\
         https://docs.rs/eventcount/latest/eventcount/docs/rayon/index.html).\n\n\
         - protocol: `{protocol}` (`{protocol_type}`)\n\
         - idle policy: `{policy}` (`{policy_expr}`)\n\
         - eventcount: `{dependency}`\n\n\
         Both are fixed in `src/sleep/mod.rs`: no feature changes them. Export again\n\
         (with `--force` to replace this directory) to choose others.\n\n\
         Use it from a project's Cargo.toml (the workspace root's):\n\n\
         ```toml\n{lines}```\n\n\
         `EVENTCOUNT_LOG=1` makes every pool print its protocol, policy and thread\n\
         count to stderr when it is built.\n\n\
         To go back to stock rayon, remove the `rayon-core` line from\n\
         `[patch.crates-io]`, run `cargo update -p rayon-core`, and delete this\n\
         directory.\n",
        protocol = exported.protocol.feature(),
        protocol_type = exported.protocol.type_path(),
        policy = exported.policy.name(),
        policy_expr = exported.policy.expr(),
        dependency = exported.dependency,
        lines = exported.project_lines(),
    )
}

/// `path` must be an eventcount checkout: a Cargo.toml naming the package.
fn check_eventcount_dir(path: &Path) -> Result<(), Error> {
    let manifest = path.join("Cargo.toml");
    let text = fs::read_to_string(&manifest).map_err(|err| {
        format!(
            "--eventcount {}: no eventcount checkout there ({}: {err})",
            path.display(),
            manifest.display()
        )
    })?;
    let names_it = text
        .lines()
        .any(|l| l.split_whitespace().collect::<String>() == "name=\"eventcount\"");
    if !names_it {
        return Err(format!(
            "--eventcount {}: {} is not the eventcount package's manifest",
            path.display(),
            manifest.display()
        ));
    }
    Ok(())
}

/// May the export write to `out`? Ok(true) when an earlier export there
/// must be removed first.
fn check_out(out: &Path, force: bool) -> Result<bool, Error> {
    let mut entries = match fs::read_dir(out) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(err) => {
            return Err(format!(
                "--out {}: cannot use it as a directory: {err}",
                out.display()
            ))
        }
    };
    if entries.next().is_none() {
        return Ok(false);
    }
    if !out.join(MARKER).is_file() {
        return Err(format!(
            "--out {}: exists, is not empty and is not an earlier export (it has no {MARKER}); \
             choose another directory{}",
            out.display(),
            if force {
                " (--force replaces only an earlier export)"
            } else {
                ""
            }
        ));
    }
    if !force {
        return Err(format!(
            "--out {}: holds an earlier export; pass --force to replace it",
            out.display()
        ));
    }
    Ok(true)
}

/// `path` made absolute, through the symbolic links, so that two paths can
/// be compared component by component.
fn absolute(path: &Path) -> Result<PathBuf, Error> {
    path.canonicalize()
        .map_err(|err| format!("{}: {err}", path.display()))
}

/// The path from the directory `from` to `to`, both absolute; None if they
/// share no root (two drives).
fn relative(from: &Path, to: &Path) -> Option<PathBuf> {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return None;
    }
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for part in &to[common..] {
        path.push(part);
    }
    if path.as_os_str().is_empty() {
        path.push(".");
    }
    Some(path)
}

/// A TOML basic string: JSON's escapes are valid in one.
fn toml_string(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::{fixed_shim, SHIM};

    #[test]
    fn reads_versions_and_paths() {
        for version in ["0.1", "=0.1.0", "^0.1", "~0.1.2", ">=0.1, <0.3", "*"] {
            assert_eq!(
                Eventcount::parse(version),
                Ok(Eventcount::Version(version.to_string()))
            );
        }
        for path in [
            "./eventcount",
            "../eventcount",
            "/src/eventcount",
            ".",
            "..",
        ] {
            assert_eq!(
                Eventcount::parse(path),
                Ok(Eventcount::Path(PathBuf::from(path)))
            );
        }
        for bad in ["eventcount", "", "0.1.x.y", "latest"] {
            let err = Eventcount::parse(bad).unwrap_err();
            assert!(err.contains("neither a version"), "{bad:?}: {err}");
        }
        for url in [
            "https://github.com/eventcount-rs/eventcount",
            "ssh://git@example.com/eventcount.git",
            "file:///src/eventcount",
        ] {
            assert_eq!(
                Eventcount::parse(&format!("git+{url}")),
                Ok(Eventcount::Git(url.to_string()))
            );
        }
        let err = Eventcount::parse("git+eventcount").unwrap_err();
        assert!(err.contains("a URL with a scheme"), "{err}");
    }

    #[test]
    fn relative_paths() {
        let rel = |a: &str, b: &str| relative(Path::new(a), Path::new(b)).unwrap();
        assert_eq!(
            rel("/p/vendor/rayon-core", "/p/eventcount"),
            Path::new("../../eventcount")
        );
        assert_eq!(rel("/p", "/p/eventcount"), Path::new("eventcount"));
        assert_eq!(rel("/p/q", "/p/q"), Path::new("."));
        assert_eq!(rel("/a/b", "/c"), Path::new("../../c"));
    }

    /// A fresh directory under the system's temporary one.
    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "eventcount-interop-test-{}-{name}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn out_must_be_new_empty_or_an_earlier_export() {
        let root = temp("out");
        assert_eq!(check_out(&root.join("new"), false), Ok(false));
        assert_eq!(check_out(&root, false), Ok(false), "empty");

        fs::write(root.join("Cargo.toml"), "").unwrap();
        let err = check_out(&root, false).unwrap_err();
        assert!(err.contains("not an earlier export"), "{err}");
        let err = check_out(&root, true).unwrap_err();
        assert!(err.contains("--force replaces only"), "{err}");

        fs::write(root.join(MARKER), "").unwrap();
        let err = check_out(&root, false).unwrap_err();
        assert!(err.contains("pass --force"), "{err}");
        assert_eq!(check_out(&root, true), Ok(true));

        let err = check_out(&root.join(MARKER), true).unwrap_err();
        assert!(err.contains("cannot use it as a directory"), "{err}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn eventcount_path_must_hold_the_package() {
        assert_eq!(check_eventcount_dir(&crate::repo_root()), Ok(()));
        let err = check_eventcount_dir(&crate::repo_root().join("interop")).unwrap_err();
        assert!(err.contains("not the eventcount package"), "{err}");
        let err = check_eventcount_dir(Path::new("/nonexistent/eventcount")).unwrap_err();
        assert!(err.contains("no eventcount checkout"), "{err}");
    }

    #[test]
    fn a_fixed_shim_names_one_protocol_and_one_policy() {
        for protocol in Protocol::ALL {
            for policy in Policy::ALL {
                let shim = fixed_shim(protocol, policy).unwrap();
                assert!(shim.contains(&format!("\ntype Protocol = {};\n", protocol.type_path())));
                assert!(shim.contains(&format!(
                    "\nconst POLICY: IdlePolicy = {};\n",
                    policy.expr()
                )));
                assert!(!shim.contains("feature ="), "a feature is left in:\n{shim}");
                assert!(!shim.contains("eventcount-choice"));
                assert_eq!(shim.matches("type Protocol").count(), 1);
                // What the rest of the shim calls, with no environment read.
                assert!(shim.contains("\nfn policy() -> IdlePolicy {\n    POLICY\n}\n"));
                assert!(!shim.contains("EVENTCOUNT_SEARCH_BUDGET_US"));
            }
        }
        assert!(fixed_shim(Protocol::Eigen, Policy::Default).is_err());
    }

    /// The policies this tool names are the ones the shim's features pick.
    #[test]
    fn every_policy_is_the_shims() {
        for policy in Policy::ALL {
            let branch = match policy.feature() {
                Some(feature) => {
                    format!("cfg!(feature = \"{feature}\") {{\n    {}\n", policy.expr())
                }
                None => format!("}} else {{\n    {}\n}};", policy.expr()),
            };
            assert!(SHIM.contains(&branch), "the shim has no `{branch}`");
        }
    }
}
