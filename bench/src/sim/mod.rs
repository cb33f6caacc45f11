//! The idle policy on a virtual clock: eventcount's own policy code (its
//! pure state machine, `eventcount::policy_tools`, with the crate's
//! `policy-tools` feature) driven through traces of idle gaps, on machines
//! described by what a sleep, a wake and a search round cost there
//! (docs/benchmarks.md, "The idle policy on the simulator").
//!
//! - [`traces`]: the gaps, one list per worker: generated families (timer
//!   ticks, bursts, rayon's B7 and tick_bench shapes, Poisson arrivals,
//!   bimodal gaps, join waits) and traces recorded from real runs.
//! - [`run`]: one policy through one trace on one machine, and what it cost
//!   in wasted CPU and in added latency.
//! - [`table`]: every policy of the comparison on every trace and machine,
//!   the default's ratios, and the bounds the CI test asserts.
//! - [`measure`]: this machine's costs; [`calibrate`]: the simulator's
//!   ranking of the fixed budgets against the VM's.
//!
//! Deterministic: the same inputs give the same numbers, so the test
//! asserts numbers, never times.

use eventcount::policy_tools::LATENCY_WEIGHT;

pub mod calibrate;
pub mod measure;
pub mod run;
pub mod table;
pub mod traces;

/// What idling costs on one machine, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Its name in the tables.
    pub name: &'static str,
    /// From a waker's wake call to the woken worker running: the latency a
    /// sleep adds to the work that ends it.
    pub wake_ns: u64,
    /// The CPU the sleeper spends on a sleep and its wake (the system
    /// calls and the context switches).
    pub sleep_cpu_ns: u64,
    /// The CPU the waker spends on the wake call.
    pub waker_cpu_ns: u64,
    /// One search round (a scan of the queues and a `yield_now` that finds
    /// no other thread to run): its wall time and its CPU.
    pub round_ns: u64,
}

impl Machine {
    /// Bare metal with shallow idle states: a wake in a few microseconds.
    pub const BARE_METAL: Machine = Machine {
        name: "bare metal",
        wake_ns: 3_000,
        sleep_cpu_ns: 2_000,
        waker_cpu_ns: 1_000,
        round_ns: 300,
    };

    /// A 2-vCPU VM like the one the crate is developed on, where a wake
    /// across vCPUs takes about 30 µs (docs/benchmarks.md, "The machine").
    pub const VM: Machine = Machine {
        name: "VM",
        wake_ns: 30_000,
        sleep_cpu_ns: 5_000,
        waker_cpu_ns: 2_000,
        round_ns: 1_000,
    };

    /// Bare metal whose idle cores sleep in deep C-states: a wake costs a
    /// core's exit latency.
    pub const DEEP_IDLE: Machine = Machine {
        name: "deep C-states",
        wake_ns: 100_000,
        sleep_cpu_ns: 2_000,
        waker_cpu_ns: 1_000,
        round_ns: 300,
    };

    /// The three wake costs the tables run at.
    pub const ALL: [Machine; 3] = [Machine::BARE_METAL, Machine::VM, Machine::DEEP_IDLE];

    /// What a sleep costs in all on the cost model: the CPU on both sides
    /// and the wake's weighted latency (the break-even of searching against
    /// sleeping).
    pub fn sleep_cost_ns(&self) -> u64 {
        self.sleep_cpu_ns + self.waker_cpu_ns + LATENCY_WEIGHT * self.wake_ns
    }
}

/// How many workers share how many CPUs. With more workers than CPUs a
/// search round's yield hands the CPU to a runnable peer: it takes
/// `peer_round_ns` of wall time but only the round's own CPU, and a woken
/// sleeper waits for a CPU too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool {
    /// Workers in the pool.
    pub workers: usize,
    /// CPUs the pool may run on.
    pub cpus: usize,
    /// The wall time of a yield while a peer is runnable.
    pub peer_round_ns: u64,
}

impl Pool {
    /// A pool that fits its CPUs: two workers on two.
    pub const FITS: Pool = Pool {
        workers: 2,
        cpus: 2,
        peer_round_ns: 0,
    };

    /// Eight workers on two CPUs, a yield lasting a peer's 10 µs of work.
    pub const OVERSIZED: Pool = Pool {
        workers: 8,
        cpus: 2,
        peer_round_ns: 10_000,
    };

    /// Whether it has more workers than CPUs.
    pub fn oversized(&self) -> bool {
        self.workers > self.cpus
    }
}
