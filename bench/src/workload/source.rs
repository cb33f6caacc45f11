//! Which build of this repository a report comes from.

use std::process::{Command, Stdio};

/// The commit of this repository the running tool was built from, with
/// `-dirty` if tracked files had changes; None outside a git checkout or
/// without git. Reports carry it so that a plot can say which run it
/// shows (docs/benchmarks.md, "Plots").
pub fn source_commit() -> Option<String> {
    // This crate sits one level below the repository's root, and the tools
    // that call it are built from the same checkout.
    let repo = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let git = |args: &[&str]| {
        Command::new("git")
            .args(["-C", repo])
            .args(args)
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "--short", "HEAD"])?;
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|changes| !changes.is_empty());
    Some(if dirty { format!("{head}-dirty") } else { head })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_commit_is_a_short_hash_perhaps_dirty() {
        // None is right outside a git checkout; inside one it names HEAD.
        if let Some(commit) = super::source_commit() {
            let hash = commit.strip_suffix("-dirty").unwrap_or(&commit);
            assert!(hash.len() >= 7, "{commit}");
            assert!(hash.chars().all(|c| c.is_ascii_hexdigit()), "{commit}");
        }
    }
}
