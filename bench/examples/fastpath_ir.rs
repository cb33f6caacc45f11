//! Calls each fast path a million times through a non-inlined wrapper, so
//! `valgrind --tool=callgrind` can count instructions per call (see
//! docs/benchmarks.md, "Instruction counts"):
//!
//! ```sh
//! cargo build --release -p eventcount-bench --example fastpath_ir
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out target/release/examples/fastpath_ir
//! ```
//!
//! Runs in a blink without valgrind too; it prints nothing on its own. It
//! stays self-contained (its own `ir_` wrappers, nothing from the bench
//! library) so that the symbols and their folding stay what the docs
//! describe.

use std::hint::black_box;
use std::sync::atomic::{fence, AtomicU64, Ordering};

use eventcount::{JecSleep, Notifier, NotifierSleep, SleepProtocol};

const CALLS: usize = 1_000_000;

#[inline(never)]
fn ir_floor_fence_plus_load(word: &AtomicU64) -> u64 {
    fence(Ordering::SeqCst);
    word.load(Ordering::Acquire)
}

#[inline(never)]
fn ir_notify_one(n: &Notifier) -> bool {
    n.notify_one()
}

#[inline(never)]
fn ir_notify_n(n: &Notifier) -> usize {
    n.notify_n(4)
}

#[inline(never)]
fn ir_notify_all(n: &Notifier) -> usize {
    n.notify_all()
}

#[inline(never)]
fn ir_jec_new_internal_jobs(s: &JecSleep) {
    s.new_internal_jobs(1, true)
}

#[inline(never)]
fn ir_jec_new_injected_jobs(s: &JecSleep) {
    s.new_injected_jobs(1, true)
}

#[inline(never)]
fn ir_trait_post<S: SleepProtocol>(s: &S) {
    s.new_internal_jobs(1, true)
}

fn main() {
    let word = AtomicU64::new(0);
    let notifier = Notifier::new(8);
    let jec = JecSleep::new(8);
    let notifier_sleep = NotifierSleep::new(8);
    for _ in 0..CALLS {
        black_box(ir_floor_fence_plus_load(black_box(&word)));
        black_box(ir_notify_one(black_box(&notifier)));
        black_box(ir_notify_n(black_box(&notifier)));
        black_box(ir_notify_all(black_box(&notifier)));
        ir_jec_new_internal_jobs(black_box(&jec));
        ir_jec_new_injected_jobs(black_box(&jec));
        ir_trait_post(black_box(&notifier_sleep));
        ir_trait_post(black_box(&jec));
    }
}
