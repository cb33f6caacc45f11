//! rayon's published sources, obtained through cargo at run time.
//!
//! A throwaway crate depends on exactly `rayon-core =1.13.0` and
//! `rayon =1.12.0`; `cargo metadata` resolves it, downloads both packages
//! into cargo's own registry cache, and says where their manifests are.
//! Nothing of rayon is committed to this repository.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cmd::{self, Error};

pub const RAYON_CORE_VERSION: &str = "1.13.0";
pub const RAYON_VERSION: &str = "1.12.0";

/// Where cargo unpacked the two published packages (read-only: copy first).
pub struct Sources {
    pub rayon_core: PathBuf,
    pub rayon: PathBuf,
}

/// Resolve and download the pinned rayon packages.
pub fn fetch(scratch: &Path) -> Result<Sources, Error> {
    let dir = scratch.join("fetch");
    cmd::write(
        &dir.join("Cargo.toml"),
        &format!(
            r#"# Written by eventcount's rayon-interop: only here to make cargo download
# the published rayon sources.
[package]
name = "fetch-rayon-sources"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
rayon-core = "={RAYON_CORE_VERSION}"
rayon = "={RAYON_VERSION}"

[workspace]
"#
        ),
    )?;
    cmd::write(&dir.join("src").join("lib.rs"), "")?;
    let output = cmd::checked(
        cmd::cargo()
            .args(["metadata", "--format-version", "1", "--manifest-path"])
            .arg(dir.join("Cargo.toml")),
        Duration::from_secs(600),
    )?;
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|err| format!("cargo metadata printed something that is not JSON: {err}"))?;
    let find = |name: &str, version: &str| -> Result<PathBuf, Error> {
        metadata["packages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == name && p["version"] == version)
            .and_then(|p| p["manifest_path"].as_str())
            .and_then(|manifest| Path::new(manifest).parent())
            .map(Path::to_path_buf)
            .ok_or_else(|| format!("cargo metadata did not resolve {name} {version}"))
    };
    Ok(Sources {
        rayon_core: find("rayon-core", RAYON_CORE_VERSION)?,
        rayon: find("rayon", RAYON_VERSION)?,
    })
}
