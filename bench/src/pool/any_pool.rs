//! [`AnyPool`]: the example pool on either protocol, or rayon's pool, behind
//! one type, so that each measurement is written once for all three.

use std::fmt;
use std::thread;
use std::time::{Duration, Instant};

use crate::eigen::EigenSleep;
use crate::workload::procstat::live_threads;
use crate::workload::{RayonWorker, Runner, Workload};
use eventcount::{IdlePolicy, JecSleep, NotifierSleep, SleepProtocol, SleepStats};

use crate::pool::Pool;

/// Which pool to build: the example pool on a protocol and an idle policy,
/// or rayon's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolKind {
    /// The example pool on `JecSleep`, with the policy given to
    /// [`AnyPool::new`] (the default: learned budgets, half the pool
    /// searching).
    Jec,
    /// The example pool on `NotifierSleep`, with the policy given.
    Notifier,
    /// `JecSleep` with rayon's fixed policy, `IdlePolicy::rayon()`.
    JecRayon,
    /// `JecSleep` with rayon PR #1314's default:
    /// `IdlePolicy::rayon().sleep_after_empty_wake(true)`.
    Pr1314Adaptive,
    /// `JecSleep` with rayon PR #1314's bounded searchers:
    /// `IdlePolicy::rayon().max_searching_busy()`.
    Pr1314Bounded,
    /// The example pool on the Eigen-style benchmark peer (`EigenSleep`).
    Eigen,
    /// A rayon `ThreadPool`: the reference.
    Rayon,
}

impl PoolKind {
    /// The crate's two protocols on the given policy, and rayon, the
    /// reference, last.
    pub const ALL: [PoolKind; 3] = [PoolKind::Jec, PoolKind::Notifier, PoolKind::Rayon];

    /// Every pool: each protocol as given, rayon's policy and rayon PR
    /// #1314's two on `JecSleep`, the Eigen peer, and rayon last.
    pub const EVERY: [PoolKind; 7] = [
        PoolKind::Jec,
        PoolKind::Notifier,
        PoolKind::JecRayon,
        PoolKind::Pr1314Adaptive,
        PoolKind::Pr1314Bounded,
        PoolKind::Eigen,
        PoolKind::Rayon,
    ];

    /// The name in tables.
    pub fn name(self) -> &'static str {
        match self {
            PoolKind::Jec => "jec",
            PoolKind::Notifier => "notifier",
            PoolKind::JecRayon => "jec-rayon",
            PoolKind::Pr1314Adaptive => "pr1314-adaptive",
            PoolKind::Pr1314Bounded => "pr1314-bounded",
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
    /// Start a pool of `kind` with `threads` workers. `Jec` and `Notifier`
    /// idle with `policy`; the others carry their own policy (rayon's, or rayon
    /// PR #1314's, or rayon's pool itself).
    pub fn new(kind: PoolKind, threads: usize, policy: IdlePolicy) -> AnyPool {
        let threads_before = live_threads();
        let jec = |policy| {
            Inner::Jec(Pool::new(
                threads,
                JecSleep::try_new(threads, policy, None).unwrap(),
            ))
        };
        let notifier = |policy| {
            Inner::Notifier(Pool::new(
                threads,
                NotifierSleep::try_new(threads, policy, None).unwrap(),
            ))
        };
        let pool = match kind {
            PoolKind::Jec => jec(policy),
            PoolKind::Notifier => notifier(policy),
            PoolKind::JecRayon => jec(IdlePolicy::rayon()),
            PoolKind::Pr1314Adaptive => jec(IdlePolicy::rayon().sleep_after_empty_wake(true)),
            PoolKind::Pr1314Bounded => jec(IdlePolicy::rayon().max_searching_busy()),
            PoolKind::Eigen => Inner::Eigen(Pool::new(
                threads,
                EigenSleep::try_new(threads, IdlePolicy::rayon(), None)
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
            Inner::Rayon(pool) => pool.install(|| work.run_on(&RayonWorker)),
        }
    }

    /// The protocol's futex counts so far (ours only).
    pub fn stats(&self) -> Option<SleepStats> {
        self.counters().map(Counters::stats)
    }

    /// Workers asleep right now (ours only).
    pub fn num_sleeping(&self) -> Option<usize> {
        self.counters().map(Counters::num_sleeping)
    }

    /// What our pools' protocols count; rayon's pool counts nothing.
    fn counters(&self) -> Option<&dyn Counters> {
        match &self.pool {
            Inner::Jec(pool) => Some(pool.sleep()),
            Inner::Notifier(pool) => Some(pool.sleep()),
            Inner::Eigen(pool) => Some(pool.sleep()),
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

impl Runner for AnyPool {
    fn run(&self, work: &Workload) -> u64 {
        AnyPool::run(self, work)
    }
}

impl fmt::Debug for AnyPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyPool")
            .field("kind", &self.kind())
            .finish_non_exhaustive()
    }
}

/// The counters of a `SleepProtocol`, behind one `dyn` type whichever
/// protocol it is: the protocol trait itself is `Sized`, so it has none.
trait Counters {
    fn stats(&self) -> SleepStats;
    fn num_sleeping(&self) -> usize;
}

impl<S: SleepProtocol> Counters for S {
    fn stats(&self) -> SleepStats {
        SleepProtocol::stats(self)
    }

    fn num_sleeping(&self) -> usize {
        SleepProtocol::num_sleeping(self)
    }
}

/// `work` on one of our pools: its `install` takes only a job that owns
/// what it uses, so the job gets a copy (a tree is shared, not copied).
fn run_on_ours<S: SleepProtocol + 'static>(pool: &Pool<S>, work: &Workload) -> u64 {
    let work = work.clone();
    pool.install(move |ctx| work.run_on(ctx))
}
