//! Running cargo (and the workloads) as child processes, with a watchdog,
//! and copying directory trees.

use std::fs;
use std::io;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// A failure of this tool, with a message that names what failed.
pub type Error = String;

/// Run `command` to completion, capturing its output, and kill it if it
/// runs past `limit` (a hung test suite must fail, not stall the run).
pub fn output_within(command: &mut Command, limit: Duration) -> Result<Output, Error> {
    let shown = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("cannot start {shown}: {err}"))?;
    // Drain both pipes on their own threads, so a chatty child never blocks
    // on a full pipe while we wait for it.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{shown} was still running after {} s: killed (a hang?)",
                    limit.as_secs()
                ));
            }
            Ok(None) => thread::sleep(Duration::from_millis(50)),
            Err(err) => return Err(format!("waiting for {shown}: {err}")),
        }
    };
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

fn drain<R: io::Read + Send + 'static>(pipe: Option<R>) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Run `command`, and fail with its stderr unless it succeeds.
pub fn checked(command: &mut Command, limit: Duration) -> Result<Output, Error> {
    let shown = format!("{command:?}");
    let output = output_within(command, limit)?;
    if !output.status.success() {
        return Err(format!(
            "{shown} failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(output)
}

/// `cargo`, as the one that runs this tool (`$CARGO` when run by cargo).
pub fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    // The scratch workspaces have their own target directories; a caller's
    // CARGO_TARGET_DIR would mix them up.
    command.env_remove("CARGO_TARGET_DIR");
    command
}

/// The code-generation flags of every benchmark binary: each function
/// starts on a 64-byte boundary.
///
/// Without them, where the linker puts a hot function relative to a cache
/// line depends on the build directory (its path feeds the symbol hashes),
/// and that alone moved B5's tree sum, whose recursion is a few cache lines
/// of code, by up to a third: stock rayon built from two directories ran
/// 1.20-1.25x apart, and so did one NotifierSleep source (docs/benchmarks.md,
/// "Code placement"). With every function aligned, the same source built
/// from two directories ran within 1%.
pub const BENCH_RUSTFLAGS: &str = "-C llvm-args=-align-all-functions=6";

/// `cargo`, set up to build a benchmark binary with [`BENCH_RUSTFLAGS`] and
/// nothing else: a caller's flags (a loom cfg, say) would change what is
/// measured, and only for some builds.
pub fn bench_cargo() -> Command {
    let mut command = cargo();
    command
        .env("RUSTFLAGS", BENCH_RUSTFLAGS)
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    command
}

/// Copy the directory tree `from` to `to` (created; must not exist).
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), Error> {
    copy_tree_io(from, to)
        .map_err(|err| format!("copying {} to {}: {err}", from.display(), to.display()))
}

fn copy_tree_io(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree_io(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Do the trees `a` and `b` hold the same files with the same bytes? A
/// file at the top of `b` named in `extra_in_b` may be missing from `a`.
/// A missing `b` is not the same.
pub fn same_files(a: &Path, b: &Path, extra_in_b: &[&str]) -> Result<bool, Error> {
    fn files(root: &Path, dir: &Path, out: &mut Vec<std::path::PathBuf>) -> io::Result<()> {
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                files(root, &entry.path(), out)?;
            } else {
                out.push(
                    entry
                        .path()
                        .strip_prefix(root)
                        .unwrap_or(&entry.path())
                        .to_path_buf(),
                );
            }
        }
        Ok(())
    }
    if !b.is_dir() {
        return Ok(false);
    }
    let listed = |root: &Path| {
        let mut out = Vec::new();
        files(root, root, &mut out).map_err(|err| format!("listing {}: {err}", root.display()))?;
        out.sort();
        Ok::<_, Error>(out)
    };
    let in_a = listed(a)?;
    let mut in_b = listed(b)?;
    in_b.retain(|f| !extra_in_b.iter().any(|extra| f == Path::new(extra)));
    if in_a != in_b {
        return Ok(false);
    }
    for file in &in_a {
        let bytes = |root: &Path| {
            fs::read(root.join(file)).map_err(|err| format!("reading {}: {err}", file.display()))
        };
        if bytes(a)? != bytes(b)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Put the freshly written tree `fresh` at `root`, unless `root` already
/// holds the same files (`same_files`, with `extra_in_root` the files a
/// build adds there): then `fresh` goes and `root` stays, so that the
/// builds made from it stay fresh.
pub fn keep_if_same(fresh: &Path, root: &Path, extra_in_root: &[&str]) -> Result<(), Error> {
    if same_files(fresh, root, extra_in_root)? {
        remove_tree(fresh)
    } else {
        remove_tree(root)?;
        fs::rename(fresh, root)
            .map_err(|err| format!("renaming {} to {}: {err}", fresh.display(), root.display()))
    }
}

/// Remove `dir` if it exists.
pub fn remove_tree(dir: &Path) -> Result<(), Error> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(format!("removing {}: {err}", dir.display())),
    }
}

/// Write `text` to `path`, creating its directory.
pub fn write(path: &Path, text: &str) -> Result<(), Error> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|err| format!("creating {}: {err}", dir.display()))?;
    }
    fs::write(path, text).map_err(|err| format!("writing {}: {err}", path.display()))
}

/// Read `path` as text.
pub fn read(path: &Path) -> Result<String, Error> {
    fs::read_to_string(path).map_err(|err| format!("reading {}: {err}", path.display()))
}
