//! rayon's and tokio's published sources, obtained through cargo at run
//! time.
//!
//! A throwaway crate depends on exactly the pinned versions (for rayon,
//! `rayon-core =1.13.0` and `rayon =1.12.0`; for tokio, `tokio =1.54.1`);
//! `cargo metadata` resolves it, downloads the packages into cargo's own
//! registry cache, and says where their manifests are. Nothing of rayon or
//! tokio is committed to this repository.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cmd::{self, Error};

pub const RAYON_CORE_VERSION: &str = "1.13.0";
pub const RAYON_VERSION: &str = "1.12.0";
pub const TOKIO_VERSION: &str = "1.54.1";

/// Where cargo unpacked the two published packages (read-only: copy first).
pub struct Sources {
    pub rayon_core: PathBuf,
    pub rayon: PathBuf,
}

/// Resolve and download the pinned rayon packages.
pub fn fetch(scratch: &Path) -> Result<Sources, Error> {
    let [rayon_core, rayon] = resolve(
        &scratch.join("fetch"),
        "rayon",
        [("rayon-core", RAYON_CORE_VERSION), ("rayon", RAYON_VERSION)],
    )?;
    Ok(Sources { rayon_core, rayon })
}

/// Resolve and download the pinned tokio package: where cargo unpacked it
/// (read-only: copy first).
pub fn fetch_tokio(scratch: &Path) -> Result<PathBuf, Error> {
    let [tokio] = resolve(&scratch.join("fetch"), "tokio", [("tokio", TOKIO_VERSION)])?;
    Ok(tokio)
}

/// Make cargo download exactly `packages` (name, version) through a
/// throwaway crate in `dir`, and say where each one was unpacked.
fn resolve<const N: usize>(
    dir: &Path,
    what: &str,
    packages: [(&str, &str); N],
) -> Result<[PathBuf; N], Error> {
    let dependencies: String = packages
        .iter()
        .map(|(name, version)| format!("{name} = \"={version}\"\n"))
        .collect();
    cmd::write(
        &dir.join("Cargo.toml"),
        &format!(
            r#"# Written by eventcount's interop tool: only here to make cargo download
# the published {what} sources.
[package]
name = "fetch-{what}-sources"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
{dependencies}
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
    let find = |(name, version): &(&str, &str)| -> Result<PathBuf, Error> {
        metadata["packages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == *name && p["version"] == *version)
            .and_then(|p| p["manifest_path"].as_str())
            .and_then(|manifest| Path::new(manifest).parent())
            .map(Path::to_path_buf)
            .ok_or_else(|| format!("cargo metadata did not resolve {name} {version}"))
    };
    let found = packages.iter().map(find).collect::<Result<Vec<_>, _>>()?;
    Ok(found.try_into().expect("one path per package"))
}
