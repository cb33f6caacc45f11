#![cfg(not(loom))]
//! Multi-threaded stress tests of `JecSleep`: a small work-stealing pool
//! built directly on it, with std only.
//!
//! The pool: 16 workers, each with a local deque (`Mutex<VecDeque>`; the
//! owner pops the back, thieves the front), one shared injector fed by 4
//! outside threads (`new_injected_jobs`), jobs that spawn children into
//! their worker's deque (`new_internal_jobs`), and "join" jobs whose owner
//! pushes a child and then waits on a `CoreLatch` in the idle loop, running
//! other work or sleeping, until whoever runs the child sets the latch
//! (`set_latch`). Outside threads inject in bursts, then one job at a
//! time with pauses so that workers keep falling asleep. The pool runs with
//! the default policy, an eager one (`IdlePolicy::rounds(2)`), and timed sleeps
//! (`no_work_found_until`); two more tests run it dry and check that every
//! worker ends up asleep, by the counters and by `sleeping_workers()`, and
//! that a single job injected then wakes somebody.
//!
//! Every job gets a unique id; each execution is recorded in a per-id slot
//! (a second execution fails at once) and in count / sum / sum-of-squares
//! totals that must match those of the jobs created. A lost wakeup leaves a
//! job unrun, so the pool never drains and a watchdog fails the test. The
//! watchdogs (`WATCHDOG` from tests/common each) only detect hangs; no test
//! asserts on a duration.

mod common;
use common::WATCHDOG;
use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use eventcount::{CoreLatch, IdlePolicy, JecIdle, JecSleep, SleepProtocol, WaitOutcome};

const WORKERS: usize = 16;
const INJECTORS: usize = 4;
/// Jobs at this depth spawn nothing.
const MAX_DEPTH: u32 = 3;
/// Each job creates at most this many jobs.
const MAX_CHILDREN: u64 = 3;

/// SplitMix64: the job's "random" choices, a function of its id.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Some work, so that jobs overlap: `rounds` rounds of mixing.
fn busy(id: u64, rounds: u32) -> u64 {
    (0..rounds).fold(id, |acc, _| mix(acc))
}

enum Job {
    /// Runs, and below `MAX_DEPTH` spawns 0..=3 children into the local deque.
    Work { id: u64, depth: u32 },
    /// Pushes a `Child`, spawns 0..=2 `Work` children after it, then waits
    /// for the child's latch in the idle loop. A slow join's owner sleeps
    /// through its own half (a woken thief gets a core to take the child)
    /// and its child sleeps too, so that the owner often runs dry and
    /// sleeps on the latch before it is set.
    Join { id: u64, depth: u32, slow: bool },
    /// The other half of a join: runs, then sets its owner's latch.
    Child {
        id: u64,
        latch: Arc<CoreLatch>,
        owner: usize,
        slow: bool,
    },
}

/// Totals over job ids.
#[derive(Default)]
struct Tally {
    count: AtomicU64,
    sum: AtomicU64,
    squares: AtomicU64,
}

impl Tally {
    fn add(&self, id: u64) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum.fetch_add(id, Ordering::Relaxed);
        self.squares
            .fetch_add(id.wrapping_mul(id), Ordering::Relaxed);
    }

    fn get(&self) -> (u64, u64, u64) {
        (
            self.count.load(Ordering::Acquire),
            self.sum.load(Ordering::Acquire),
            self.squares.load(Ordering::Acquire),
        )
    }
}

struct Pool {
    sleep: JecSleep,
    /// If set, every sleep is a timed one (`no_work_found_until`) ending
    /// this long after it starts: timeouts race the wakers.
    sleep_limit: Option<Duration>,
    /// Timed sleeps that ended by their deadline.
    timeouts: AtomicU64,
    injector: Mutex<VecDeque<Job>>,
    locals: Vec<Mutex<VecDeque<Job>>>,
    shutdown: AtomicBool,
    next_id: AtomicU64,
    /// Executions per id: each slot must end at exactly 1.
    runs: Vec<AtomicU8>,
    created: Tally,
    executed: Tally,
    /// Jobs created and not yet finished.
    outstanding: AtomicU64,
    joins: AtomicU64,
    stolen_children: AtomicU64,
    /// `CoreLatch::set` calls that found the owner asleep on the latch.
    latch_wakes: AtomicU64,
    /// The first panic message of a worker or injector thread.
    failure: Mutex<Option<String>>,
}

impl Pool {
    fn new(policy: IdlePolicy, sleep_limit: Option<Duration>, max_jobs: usize) -> Pool {
        Pool {
            sleep: JecSleep::try_new(WORKERS, policy, None).unwrap(),
            sleep_limit,
            timeouts: AtomicU64::new(0),
            injector: Mutex::new(VecDeque::new()),
            locals: (0..WORKERS).map(|_| Mutex::new(VecDeque::new())).collect(),
            shutdown: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
            runs: (0..max_jobs).map(|_| AtomicU8::new(0)).collect(),
            created: Tally::default(),
            executed: Tally::default(),
            outstanding: AtomicU64::new(0),
            joins: AtomicU64::new(0),
            stolen_children: AtomicU64::new(0),
            latch_wakes: AtomicU64::new(0),
            failure: Mutex::new(None),
        }
    }

    /// A fresh id, counted as created and outstanding.
    fn new_id(&self) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        assert!(
            (id as usize) < self.runs.len(),
            "job id {id} beyond the bound {}",
            self.runs.len()
        );
        self.created.add(id);
        self.outstanding.fetch_add(1, Ordering::AcqRel);
        id
    }

    /// A root or spawned job: a join one time in four, else plain work.
    fn new_job(&self, depth: u32) -> Job {
        let id = self.new_id();
        let r = mix(id ^ 0x5EED);
        if r % 4 == 0 {
            let slow = (r >> 8) % 8 == 0;
            Job::Join { id, depth, slow }
        } else {
            Job::Work { id, depth }
        }
    }

    /// The final check's view: injected work, or shutdown.
    fn has_work(&self) -> bool {
        self.shutdown.load(Ordering::Acquire) || !self.injector.lock().unwrap().is_empty()
    }

    /// Push to the injector from outside the pool.
    fn inject(&self, jobs: Vec<Job>) {
        let n = jobs.len();
        let was_empty = {
            let mut injector = self.injector.lock().unwrap();
            let was_empty = injector.is_empty();
            injector.extend(jobs);
            was_empty
        };
        self.sleep.new_injected_jobs(n, was_empty);
    }

    /// Push to worker `me`'s own deque.
    fn push_local(&self, me: usize, jobs: Vec<Job>) {
        if jobs.is_empty() {
            return;
        }
        let n = jobs.len();
        let was_empty = {
            let mut local = self.locals[me].lock().unwrap();
            let was_empty = local.is_empty();
            local.extend(jobs);
            was_empty
        };
        self.sleep.new_internal_jobs(n, was_empty);
    }

    /// Own deque (newest first), then the injector, then steal (oldest first).
    fn find_work(&self, me: usize) -> Option<Job> {
        if let Some(job) = self.locals[me].lock().unwrap().pop_back() {
            return Some(job);
        }
        if let Some(job) = self.injector.lock().unwrap().pop_front() {
            return Some(job);
        }
        for k in 1..WORKERS {
            let victim = (me + k) % WORKERS;
            if let Some(job) = self.locals[victim].lock().unwrap().pop_front() {
                return Some(job);
            }
        }
        None
    }

    fn record_run(&self, id: u64) {
        let before = self.runs[id as usize].fetch_add(1, Ordering::AcqRel);
        assert_eq!(before, 0, "job {id} executed twice");
        self.executed.add(id);
    }

    fn finish(&self) {
        let before = self.outstanding.fetch_sub(1, Ordering::AcqRel);
        assert!(before > 0, "more jobs finished than created");
    }

    fn run(&self, me: usize, job: Job) {
        match job {
            Job::Work { id, depth } => {
                self.record_run(id);
                std::hint::black_box(busy(id, 64));
                if depth < MAX_DEPTH {
                    let children = mix(id) % (MAX_CHILDREN + 1);
                    let jobs = (0..children).map(|_| self.new_job(depth + 1)).collect();
                    self.push_local(me, jobs);
                }
                self.finish();
            }
            Job::Join { id, depth, slow } => {
                self.record_run(id);
                self.joins.fetch_add(1, Ordering::Relaxed);
                let latch = Arc::new(CoreLatch::new());
                let child = Job::Child {
                    id: self.new_id(),
                    latch: latch.clone(),
                    owner: me,
                    slow,
                };
                // The child first: thieves take the front, the owner the back.
                self.push_local(me, vec![child]);
                if depth < MAX_DEPTH {
                    let extra = mix(id) % MAX_CHILDREN;
                    let jobs = (0..extra)
                        .map(|_| Job::Work {
                            id: self.new_id(),
                            depth: depth + 1,
                        })
                        .collect();
                    self.push_local(me, jobs);
                }
                // The owner's half.
                if slow {
                    thread::sleep(Duration::from_micros(50));
                } else {
                    std::hint::black_box(busy(id, 2_000));
                }
                self.wait_for(me, &latch);
                assert!(latch.probe());
                self.finish();
            }
            Job::Child {
                id,
                latch,
                owner,
                slow,
            } => {
                self.record_run(id);
                if owner != me {
                    self.stolen_children.fetch_add(1, Ordering::Relaxed);
                }
                if slow {
                    thread::sleep(Duration::from_micros(200));
                } else if mix(id ^ 0xC41D) % 4 == 0 {
                    std::hint::black_box(busy(id, 20_000));
                } else {
                    std::hint::black_box(busy(id, 64));
                }
                self.finish();
                // Both ways of setting a latch.
                if id % 2 == 0 {
                    self.sleep.set_latch(&latch, owner);
                } else if latch.set() {
                    self.latch_wakes.fetch_add(1, Ordering::Relaxed);
                    self.sleep.notify_worker_latch_is_set(owner);
                }
            }
        }
    }

    /// One empty round of an idle loop, sleeping against `latch`.
    fn idle_round(&self, idle: &mut JecIdle<'_>, latch: &CoreLatch) {
        let has_work = || self.has_work();
        match self.sleep_limit {
            None => {
                let _ = self.sleep.no_work_found(idle, latch, has_work);
            }
            Some(limit) => {
                let deadline = Instant::now() + limit;
                let outcome = self
                    .sleep
                    .no_work_found_until(idle, latch, has_work, deadline);
                if outcome == WaitOutcome::TimedOut {
                    self.timeouts.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Worker `me` waits for `latch`, running other work meanwhile and
    /// sleeping against the latch when there is none.
    fn wait_for(&self, me: usize, latch: &CoreLatch) {
        'search: while !latch.probe() {
            if let Some(job) = self.find_work(me) {
                self.run(me, job);
                continue;
            }
            let mut idle = self.sleep.start_looking(me);
            while !latch.probe() {
                if let Some(job) = self.find_work(me) {
                    self.sleep.work_found(idle);
                    self.run(me, job);
                    continue 'search;
                }
                self.idle_round(&mut idle, latch);
            }
            self.sleep.work_found(idle);
        }
    }

    /// A worker thread's main loop, until shutdown.
    fn worker_loop(&self, me: usize) {
        // Never set: the latch this worker sleeps against when not joining.
        let latch = CoreLatch::new();
        'search: loop {
            if let Some(job) = self.find_work(me) {
                self.run(me, job);
                continue;
            }
            let mut idle = self.sleep.start_looking(me);
            loop {
                if self.shutdown.load(Ordering::Acquire) {
                    self.sleep.work_found(idle);
                    return;
                }
                if let Some(job) = self.find_work(me) {
                    self.sleep.work_found(idle);
                    self.run(me, job);
                    continue 'search;
                }
                self.idle_round(&mut idle, &latch);
            }
        }
    }

    fn fail(&self, who: &str, payload: Box<dyn std::any::Any + Send>) {
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "non-string panic".to_string());
        let mut failure = self.failure.lock().unwrap();
        if failure.is_none() {
            *failure = Some(format!("{who}: {message}"));
        }
    }

    /// Panic with the first thread failure, if any.
    fn check_failure(&self) {
        if let Some(message) = self.failure.lock().unwrap().as_ref() {
            panic!("a pool thread panicked: {message}");
        }
    }

    /// Poll `cond` every millisecond; fail after `WATCHDOG` naming `what`,
    /// or at once if a pool thread panicked.
    fn wait_until(&self, what: &str, mut cond: impl FnMut() -> bool) {
        let start = Instant::now();
        while !cond() {
            self.check_failure();
            if start.elapsed() > WATCHDOG {
                panic!(
                    "watchdog fired: {what} not reached after {WATCHDOG:?} (lost wakeup?); \
                     outstanding {}, counters {:?}, sleeping workers {}",
                    self.outstanding.load(Ordering::Acquire),
                    self.sleep.counters(),
                    self.sleep.num_sleeping()
                );
            }
            thread::sleep(Duration::from_millis(1));
        }
        self.check_failure();
    }

    fn wait_drained(&self, what: &str) {
        self.wait_until(what, || self.outstanding.load(Ordering::Acquire) == 0);
    }

    /// Every worker registered asleep, by both views.
    fn wait_all_asleep(&self, what: &str) {
        let n = WORKERS;
        self.wait_until(what, || self.sleep.counters().sleeping() == n);
        self.wait_until(what, || self.sleep.num_sleeping() == WORKERS);
        let c = self.sleep.counters();
        assert_eq!(c.sleeping(), n, "{what}: {c:?}");
        assert_eq!(
            c.inactive(),
            n,
            "{what}: asleep but not counted inactive: {c:?}"
        );
        assert_eq!(self.sleep.num_sleeping(), WORKERS, "{what}");
        assert!(self.injector.lock().unwrap().is_empty(), "{what}");
        for (w, local) in self.locals.iter().enumerate() {
            assert!(
                local.lock().unwrap().is_empty(),
                "{what}: worker {w} asleep on work"
            );
        }
    }

    /// What ran (seen with `--nocapture`).
    fn report(&self, name: &str) {
        eprintln!(
            "{name}: {} jobs, {} joins, {} join children stolen, \
             {} latch sets (of half the joins) found the owner asleep, \
             {} timed sleeps timed out, {:?}",
            self.executed.get().0,
            self.joins.load(Ordering::Relaxed),
            self.stolen_children.load(Ordering::Relaxed),
            self.latch_wakes.load(Ordering::Relaxed),
            self.timeouts.load(Ordering::Relaxed),
            self.sleep.stats()
        );
    }

    /// Every created job ran exactly once.
    fn check_totals(&self, what: &str) {
        let created = self.created.get();
        let executed = self.executed.get();
        assert_eq!(
            executed, created,
            "{what}: executed vs created (count, sum, squares)"
        );
        let ids = self.next_id.load(Ordering::Acquire) as usize;
        assert_eq!(created.0 as usize, ids, "{what}");
        for (id, runs) in self.runs[..ids].iter().enumerate() {
            assert_eq!(runs.load(Ordering::Acquire), 1, "{what}: job {id}");
        }
    }
}

/// A running pool: its worker threads and their exit reports.
struct Running {
    pool: Arc<Pool>,
    workers: Vec<thread::JoinHandle<()>>,
    exited: mpsc::Receiver<usize>,
}

fn start(policy: IdlePolicy, sleep_limit: Option<Duration>, max_jobs: usize) -> Running {
    let pool = Arc::new(Pool::new(policy, sleep_limit, max_jobs));
    let (exit_tx, exited) = mpsc::channel();
    let workers = (0..WORKERS)
        .map(|me| {
            let (pool, exit_tx) = (pool.clone(), exit_tx.clone());
            thread::Builder::new()
                .name(format!("jec-worker-{me}"))
                .spawn(move || {
                    let result = panic::catch_unwind(AssertUnwindSafe(|| pool.worker_loop(me)));
                    if let Err(payload) = result {
                        pool.fail(&format!("worker {me}"), payload);
                    }
                    let _ = exit_tx.send(me);
                })
                .expect("spawn worker")
        })
        .collect();
    Running {
        pool,
        workers,
        exited,
    }
}

impl Running {
    /// Shut down: flag, wake_all, join every worker (under the watchdog);
    /// then the counters must be back at zero.
    fn shutdown(self, what: &str) {
        let Running {
            pool,
            workers,
            exited,
        } = self;
        pool.shutdown.store(true, Ordering::SeqCst);
        pool.sleep.wake_all();
        let start = Instant::now();
        for _ in 0..WORKERS {
            let left = WATCHDOG.saturating_sub(start.elapsed());
            match exited.recv_timeout(left) {
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => panic!(
                    "{what}: watchdog fired: workers not stopped after {WATCHDOG:?}; counters {:?}",
                    pool.sleep.counters()
                ),
                Err(RecvTimeoutError::Disconnected) => unreachable!(),
            }
        }
        for worker in workers {
            worker.join().expect("worker thread");
        }
        pool.check_failure();
        let c = pool.sleep.counters();
        assert_eq!(c.sleeping(), 0, "{what}: {c:?}");
        assert_eq!(c.inactive(), 0, "{what}: {c:?}");
        assert_eq!(pool.sleep.num_sleeping(), 0, "{what}");
    }
}

/// How an outside thread spaces its injections.
#[derive(Clone, Copy)]
enum Pace {
    /// Batches of 1..=4 back to back, pausing now and then.
    Bursts,
    /// One job at a time with a pause after each, so that workers keep
    /// running dry and falling asleep: many sleeps and wakes.
    Trickle,
}

/// Outside threads injecting `per_injector` root jobs each at `pace`.
fn inject_from_outside(pool: &Arc<Pool>, per_injector: u64, pace: Pace) {
    let injectors: Vec<_> = (0..INJECTORS)
        .map(|t| {
            let pool = pool.clone();
            thread::Builder::new()
                .name(format!("jec-injector-{t}"))
                .spawn(move || {
                    let result = panic::catch_unwind(AssertUnwindSafe(|| {
                        let mut left = per_injector;
                        let mut step = t as u64;
                        while left > 0 {
                            step += 1;
                            let r = mix(step.wrapping_mul(31).wrapping_add(t as u64));
                            let batch = match pace {
                                Pace::Bursts => (r % 4 + 1).min(left),
                                Pace::Trickle => 1,
                            };
                            left -= batch;
                            let jobs = (0..batch).map(|_| pool.new_job(0)).collect();
                            pool.inject(jobs);
                            match (pace, (r >> 8) % 16) {
                                (Pace::Trickle, _) | (Pace::Bursts, 0 | 1) => {
                                    thread::sleep(Duration::from_micros(50 + (r >> 16) % 200))
                                }
                                (Pace::Bursts, 2..=5) => thread::yield_now(),
                                (Pace::Bursts, _) => {}
                            }
                        }
                    }));
                    if let Err(payload) = result {
                        pool.fail(&format!("injector {t}"), payload);
                    }
                })
                .expect("spawn injector")
        })
        .collect();
    for injector in injectors {
        injector.join().expect("injector thread");
    }
    pool.check_failure();
}

/// Upper bound on the jobs `roots` root jobs can create.
fn job_bound(roots: u64) -> usize {
    let per_root: u64 = (0..=MAX_DEPTH).map(|d| MAX_CHILDREN.pow(d)).sum();
    (roots * per_root) as usize
}

fn stress(
    name: &'static str,
    policy: IdlePolicy,
    sleep_limit: Option<Duration>,
    per_injector: u64,
) {
    let roots = (per_injector + TRICKLE) * INJECTORS as u64;
    let running = start(policy, sleep_limit, job_bound(roots));
    let pool = running.pool.clone();
    inject_from_outside(&pool, per_injector, Pace::Bursts);
    inject_from_outside(&pool, TRICKLE, Pace::Trickle);
    pool.wait_drained(&format!("{name}: all jobs finished"));
    pool.check_totals(name);
    let joins = pool.joins.load(Ordering::Relaxed);
    assert!(joins > 0, "{name}: no join job ran");
    running.shutdown(name);
    pool.check_totals(name);
    pool.report(name);
}

/// Root jobs per injector thread in the stress tests: in bursts, then
/// trickling.
const PER_INJECTOR: u64 = 6_000;
const TRICKLE: u64 = 3_000;

#[test]
fn stress_default_policy() {
    stress(
        "stress_default_policy",
        IdlePolicy::default(),
        None,
        PER_INJECTOR,
    );
}

/// rayon's policy: 32 yield rounds, a search after every wake, no cap. The
/// default idles so only where the pool has more workers than the machine
/// has CPUs; this runs it on any machine.
#[test]
fn stress_rayon_policy() {
    stress(
        "stress_rayon_policy",
        IdlePolicy::rayon(),
        None,
        PER_INJECTOR,
    );
}

#[test]
fn stress_eager_policy() {
    stress(
        "stress_eager_policy",
        IdlePolicy::rounds(2),
        None,
        PER_INJECTOR,
    );
}

/// Every sleep timed (`no_work_found_until`, 200 microseconds after it
/// starts): timeouts race posters, work_found and latch setters
/// for the sleep word, and the counts must stay exact.
#[test]
fn stress_timed_sleeps() {
    stress(
        "stress_timed_sleeps",
        IdlePolicy::rounds(2),
        Some(Duration::from_micros(200)),
        PER_INJECTOR,
    );
}

/// Run the pool dry, wait until every worker sleeps, then wake it with
/// single injected jobs (each must wake somebody: nobody is awake to find
/// it), and again with a burst from outside threads.
fn all_asleep_when_idle(name: &'static str, policy: IdlePolicy) {
    const SINGLES: u64 = 20;
    const PER_INJECTOR: u64 = 300;
    let running = start(
        policy,
        None,
        job_bound(SINGLES + PER_INJECTOR * INJECTORS as u64),
    );
    let pool = running.pool.clone();

    // Nothing to do yet: everyone ends up asleep.
    pool.wait_all_asleep(&format!("{name}: all asleep at start"));

    for single in 0..SINGLES {
        // Every other one a slow join: with the whole pool asleep, its
        // owner is likely to sleep on the latch too.
        let job = if single % 2 == 0 {
            Job::Join {
                id: pool.new_id(),
                depth: MAX_DEPTH - 1,
                slow: true,
            }
        } else {
            pool.new_job(0)
        };
        let before = pool.sleep.stats();
        pool.inject(vec![job]);
        pool.wait_drained(&format!("{name}: single job {single} finished"));
        // Everyone was asleep: the job ran only because somebody was woken.
        assert!(
            pool.sleep.stats().wakes > before.wakes,
            "{name}: single job {single} ran without a wake: {before:?}"
        );
        pool.wait_all_asleep(&format!("{name}: all asleep after single job {single}"));
    }
    pool.check_totals(name);

    inject_from_outside(&pool, PER_INJECTOR, Pace::Bursts);
    pool.wait_drained(&format!("{name}: burst finished"));
    pool.wait_all_asleep(&format!("{name}: all asleep after the burst"));
    pool.check_totals(name);

    running.shutdown(name);
    pool.check_totals(name);
    pool.report(name);
}

#[test]
fn counters_reach_all_asleep_when_idle_default_policy() {
    all_asleep_when_idle("all_asleep_default_policy", IdlePolicy::default());
}

#[test]
fn counters_reach_all_asleep_when_idle_rayon_policy() {
    all_asleep_when_idle("all_asleep_rayon_policy", IdlePolicy::rayon());
}

#[test]
fn counters_reach_all_asleep_when_idle_eager_policy() {
    all_asleep_when_idle("all_asleep_eager_policy", IdlePolicy::rounds(2));
}
