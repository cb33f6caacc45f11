//! B1: the cost of posting work with nobody waiting, against its floor: a
//! bare `fence(SeqCst)` plus one load, measured in the same run.
//!
//! Run with `cargo bench -p eventcount-bench --bench notify_fastpath`. The
//! ratio of each row to `floor/fence_plus_load` is the number that matters;
//! absolute times move with the machine. Instruction counts for the same
//! paths come from `valgrind --tool=callgrind` on `examples/fastpath_ir.rs`
//! of this package (docs/benchmarks.md, "Instruction counts").

use std::hint::black_box;
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use eventcount::{JecSleep, Notifier, NotifierSleep, SleepProtocol};

/// Post one job through the trait: what a generic scheduler compiles to.
#[inline(never)]
fn post_generic<S: SleepProtocol>(sleep: &S) {
    sleep.new_internal_jobs(1, true);
}

fn fast_paths(c: &mut Criterion) {
    let mut group = c.benchmark_group("nobody_waiting");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));

    let word = AtomicU64::new(0);
    group.bench_function("floor/fence_plus_load", |b| {
        b.iter(|| {
            fence(Ordering::SeqCst);
            black_box(word.load(Ordering::Acquire))
        })
    });

    let notifier = Notifier::new(8);
    group.bench_function("notifier/notify_one", |b| {
        b.iter(|| black_box(&notifier).notify_one())
    });
    group.bench_function("notifier/notify_n(4)", |b| {
        b.iter(|| black_box(&notifier).notify_n(black_box(4)))
    });
    group.bench_function("notifier/notify_all", |b| {
        b.iter(|| black_box(&notifier).notify_all())
    });

    let jec = JecSleep::new(8);
    group.bench_function("jec/new_internal_jobs", |b| {
        b.iter(|| black_box(&jec).new_internal_jobs(1, black_box(true)))
    });
    group.bench_function("jec/new_injected_jobs", |b| {
        b.iter(|| black_box(&jec).new_injected_jobs(1, black_box(true)))
    });

    // Through the trait, generic: must cost the same as the direct calls.
    let notifier_sleep = NotifierSleep::new(8);
    group.bench_function("trait/notifier_sleep.new_internal_jobs", |b| {
        b.iter(|| post_generic(black_box(&notifier_sleep)))
    });
    group.bench_function("trait/jec.new_internal_jobs", |b| {
        b.iter(|| post_generic(black_box(&jec)))
    });
    group.finish();
}

criterion_group!(benches, fast_paths);
criterion_main!(benches);
