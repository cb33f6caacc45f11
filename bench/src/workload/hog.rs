//! CPU hogs for B9: load the pool did not choose. A hog is the harness's
//! own program run again with [`HOG_ARG`], in a process of its own, so that
//! its CPU time never counts as the pool's (the readings are per process).
//! It spins until its standard input closes: when the harness drops the
//! [`Hogs`], or when the harness dies, however it dies (the kernel closes
//! the pipe), so no hog outlives the run.
//!
//! A harness calls [`run_if_hog`] first thing in `main`.

use std::hint::black_box;
use std::io::{self, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;

/// The argument that makes a harness a hog.
pub const HOG_ARG: &str = "--eventcount-cpu-hog";

/// Hog processes, running until dropped.
#[derive(Debug)]
pub struct Hogs {
    children: Vec<Child>,
}

impl Hogs {
    /// Start `count` hogs: this program again, with [`HOG_ARG`] (the
    /// file this process runs, even if a rebuild has replaced it since).
    ///
    /// # Errors
    ///
    /// If this program cannot be found or run again; hogs already started
    /// are stopped.
    pub fn start(count: usize) -> io::Result<Hogs> {
        let program = this_program()?;
        let mut hogs = Hogs {
            children: Vec::with_capacity(count),
        };
        for _ in 0..count {
            let child = Command::new(&program)
                .arg(HOG_ARG)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            hogs.children.push(child);
        }
        Ok(hogs)
    }

    /// How many run.
    pub fn count(&self) -> usize {
        self.children.len()
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for child in &mut self.children {
            // Closing stdin alone would end it; the kill makes it prompt.
            drop(child.stdin.take());
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The path that runs this program again. On Linux, `/proc/self/exe`: it
/// names the file this process was started from even after a rebuild
/// replaced it at its path (a `cargo build` while a benchmark runs), where
/// the path would start the new build or, between two steps of the
/// rebuild, nothing.
fn this_program() -> io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        let link = PathBuf::from("/proc/self/exe");
        if link.exists() {
            return Ok(link);
        }
    }
    std::env::current_exe()
}

/// If this process was started as a hog, spin until standard input
/// closes, then exit; otherwise return at once.
pub fn run_if_hog() {
    if std::env::args().nth(1).as_deref() != Some(HOG_ARG) {
        return;
    }
    thread::spawn(|| {
        // Blocks until the harness closes the pipe or dies.
        let _ = io::stdin().read_to_end(&mut Vec::new());
        std::process::exit(0);
    });
    let mut x = 1u64;
    loop {
        black_box(crate::workload::xorshift(&mut x));
    }
}
