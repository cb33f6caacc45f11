//! [`AnyPool`]: the example pool on either protocol, or rayon's pool, behind
//! one type, so that each measurement is written once for all three.

use std::fmt;
use std::thread;
use std::time::{Duration, Instant};

use eventcount::{IdlePolicy, JecSleep, NotifierSleep, SleepProtocol, SleepStats};
use eventcount_eigen::EigenSleep;

use crate::procstat::live_threads;
use crate::workload::{burst, fib, tree};
use crate::{burst_tree, fib, tree_sum, Pool, Workload};

/// Which pool to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolKind {
    /// The example pool on `JecSleep`.
    Jec,
    /// The example pool on `JecSleep` with the searcher cap (half the pool).
    JecCap,
    /// The example pool on `NotifierSleep`.
    Notifier,
    /// The example pool on `NotifierSleep` with the searcher cap.
    NotifierCap,
    /// The example pool on the Eigen-style benchmark peer (`EigenSleep`).
    Eigen,
    /// A rayon `ThreadPool`: the reference.
    Rayon,
}

impl PoolKind {
    /// The crate's two protocols and rayon, the reference last.
    pub const ALL: [PoolKind; 3] = [PoolKind::Jec, PoolKind::Notifier, PoolKind::Rayon];

    /// Every pool: each protocol with and without the searcher cap, the
    /// Eigen peer, and rayon last.
    pub const WITH_CAP_AND_EIGEN: [PoolKind; 6] = [
        PoolKind::Jec,
        PoolKind::JecCap,
        PoolKind::Notifier,
        PoolKind::NotifierCap,
        PoolKind::Eigen,
        PoolKind::Rayon,
    ];

    /// The name in tables: the protocol's own for ours, `-cap` with the cap.
    pub fn name(self) -> &'static str {
        match self {
            PoolKind::Jec => "jec",
            PoolKind::JecCap => "jec-cap",
            PoolKind::Notifier => "notifier",
            PoolKind::NotifierCap => "notifier-cap",
            PoolKind::Eigen => "eigen",
            PoolKind::Rayon => "rayon",
        }
    }
}

/// A pool of any [`PoolKind`], built for one measurement.
pub struct AnyPool {
    kind: PoolKind,
    pool: Inner,
    /// The process's thread count before the pool started: `shutdown`
    /// waits until it is back there.
    threads_before: usize,
}

enum Inner {
    Jec(Pool<JecSleep>),
    Notifier(Pool<NotifierSleep>),
    Eigen(Pool<EigenSleep>),
    Rayon(rayon::ThreadPool),
}

impl AnyPool {
    /// Start a pool of `kind` with `threads` workers; ours idle with
    /// `policy` (rayon's always spins down its own way, which `policy`'s
    /// default copies); the `-cap` kinds add the searcher cap to it.
    pub fn new(kind: PoolKind, threads: usize, policy: IdlePolicy) -> AnyPool {
        let threads_before = live_threads();
        let capped = policy.max_searching_half();
        let pool = match kind {
            PoolKind::Jec => Inner::Jec(Pool::new(threads, JecSleep::with_policy(threads, policy))),
            PoolKind::JecCap => {
                Inner::Jec(Pool::new(threads, JecSleep::with_policy(threads, capped)))
            }
            PoolKind::Notifier => Inner::Notifier(Pool::new(
                threads,
                NotifierSleep::with_policy(threads, policy),
            )),
            PoolKind::NotifierCap => Inner::Notifier(Pool::new(
                threads,
                NotifierSleep::with_policy(threads, capped),
            )),
            PoolKind::Eigen => Inner::Eigen(Pool::new(
                threads,
                EigenSleep::try_with_policy(threads, policy)
                    .expect("AnyPool::new: too many workers for the Eigen peer"),
            )),
            PoolKind::Rayon => Inner::Rayon(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .expect("AnyPool::new: could not build the rayon pool"),
            ),
        };
        AnyPool {
            kind,
            pool,
            threads_before,
        }
    }

    /// Which pool this is.
    pub fn kind(&self) -> PoolKind {
        self.kind
    }

    /// Run `work` on a worker and wait for its result.
    pub fn run(&self, work: &Workload) -> u64 {
        match &self.pool {
            Inner::Jec(pool) => run_on_ours(pool, work),
            Inner::Notifier(pool) => run_on_ours(pool, work),
            Inner::Eigen(pool) => run_on_ours(pool, work),
            Inner::Rayon(pool) => pool.install(|| match work {
                Workload::Fib { n, cutoff } => fib::rayon_fib(*n, *cutoff),
                Workload::TreeSum { tree, depth } => tree::rayon_tree(tree, 0, *depth),
                Workload::Burst { seed, jobs, iters } => burst::rayon_burst(*seed, *jobs, *iters),
            }),
        }
    }

    /// The protocol's futex counts so far (ours only).
    pub fn stats(&self) -> Option<SleepStats> {
        match &self.pool {
            Inner::Jec(pool) => Some(pool.sleep().stats()),
            Inner::Notifier(pool) => Some(pool.sleep().stats()),
            Inner::Eigen(pool) => Some(pool.sleep().stats()),
            Inner::Rayon(_) => None,
        }
    }

    /// Workers asleep right now (ours only).
    pub fn num_sleeping(&self) -> Option<usize> {
        match &self.pool {
            Inner::Jec(pool) => Some(pool.sleep().num_sleeping()),
            Inner::Notifier(pool) => Some(pool.sleep().num_sleeping()),
            Inner::Eigen(pool) => Some(pool.sleep().num_sleeping()),
            Inner::Rayon(_) => None,
        }
    }

    /// Shut down, and wait (at most 2 s) until every worker thread is gone,
    /// so that the next measurement's process CPU is its own. rayon's
    /// threads exit asynchronously after its pool is dropped.
    pub fn shutdown(self) {
        match self.pool {
            Inner::Jec(pool) => pool.shutdown(),
            Inner::Notifier(pool) => pool.shutdown(),
            Inner::Eigen(pool) => pool.shutdown(),
            Inner::Rayon(pool) => drop(pool),
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        while live_threads() > self.threads_before && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
    }
}

impl fmt::Debug for AnyPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyPool")
            .field("kind", &self.kind())
            .finish_non_exhaustive()
    }
}

fn run_on_ours<S: SleepProtocol + 'static>(pool: &Pool<S>, work: &Workload) -> u64 {
    match work.clone() {
        Workload::Fib { n, cutoff } => pool.install(move |ctx| fib(ctx, n, cutoff)),
        Workload::TreeSum { tree, depth } => {
            pool.install(move |ctx| tree_sum(ctx, &tree, 0, depth))
        }
        Workload::Burst { seed, jobs, iters } => {
            pool.install(move |ctx| burst_tree(ctx, seed, jobs, iters))
        }
    }
}
