//! B1: the cost of a notify with nobody waiting, against its floor: a bare
//! `fence(SeqCst)` plus one load, measured in the same run.
//!
//! Run with `cargo bench --bench notify_fastpath`. The ratio of each row to
//! `floor/fence_plus_load` is the number that matters; absolute times move
//! with the machine.

use std::hint::black_box;
use std::sync::atomic::{fence, AtomicU64, Ordering};

use criterion::{criterion_group, criterion_main, Criterion};
use eventcount::Notifier;

fn fast_paths(c: &mut Criterion) {
    let mut group = c.benchmark_group("notify_nobody_waiting");

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
    group.finish();
}

criterion_group!(benches, fast_paths);
criterion_main!(benches);
