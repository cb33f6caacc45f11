//! Eigen's event count as it has been since 2019 (Eigen's
//! `ThreadPool/EventCount.h`), ported for measurement: anonymous signals
//! on a pre-waiter count, and a stack of committed waiters, in one word.
//!
//! | bits   | field     | meaning                                            |
//! |--------|-----------|----------------------------------------------------|
//! | 0..14  | `top`     | top of the committed-waiter stack; `0x3FFF` = empty |
//! | 14..28 | `waiters` | pre-waiters: prepared, not yet committed or cancelled |
//! | 28..42 | `signals` | signals pending for pre-waiters                      |
//! | 42..64 | `epoch`   | the top waiter's push epoch (ABA guard)              |
//!
//! A notify with nobody waiting is a fence and a load, as in eventcount's
//! `Notifier`. The difference is where a notification goes when somebody
//! waits: a pre-waiter gets an anonymous signal that any pre-waiter's commit
//! may take, and a cancel takes one back when every pre-waiter holds one.
//! eventcount gives that up for personal delivery (docs/notifier.md, "Why
//! not Eigen's signal counts"); this port exists to measure what that
//! costs. It keeps Eigen's two 2019 fixes (a prepare never takes a signal; a
//! cancel takes one only when `waiters == signals`), and it keeps the races
//! eventcount's loom models found in the design: a cancelling pre-waiter
//! can absorb a signal a committed sleeper needed, and a later pre-waiter's
//! commit can take a signal that a `notify_all` meant for an earlier one.

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

use crossbeam_utils::CachePadded;

const STACK_BITS: u32 = 14;
const STACK_MASK: u64 = (1 << STACK_BITS) - 1;
const WAITER_SHIFT: u32 = STACK_BITS;
const WAITER_MASK: u64 = STACK_MASK << WAITER_SHIFT;
const WAITER_INC: u64 = 1 << WAITER_SHIFT;
const SIGNAL_SHIFT: u32 = 2 * STACK_BITS;
const SIGNAL_MASK: u64 = STACK_MASK << SIGNAL_SHIFT;
const SIGNAL_INC: u64 = 1 << SIGNAL_SHIFT;
const EPOCH_SHIFT: u32 = 3 * STACK_BITS;
const EPOCH_MASK: u64 = !0 << EPOCH_SHIFT;
const EPOCH_INC: u64 = 1 << EPOCH_SHIFT;

/// The most waiters: every index must differ from the empty marker, and
/// the pre-waiter count must fit its 14 bits.
pub const MAX_WAITERS: usize = STACK_MASK as usize - 1;

/// A waiter's futex word.
const NOT_SIGNALED: u32 = 0;
const WAITING: u32 = 1;
const SIGNALED: u32 = 2;

struct Waiter {
    /// The stack word below this waiter while it is stacked.
    next: AtomicU64,
    /// This waiter's push epoch, pre-shifted. Only its owner touches it.
    epoch: AtomicU64,
    /// NOT_SIGNALED, WAITING (asleep) or SIGNALED.
    state: AtomicU32,
    /// futex waits and wakes on `state`, for the benchmarks' counts.
    waits: AtomicU64,
    wakes: AtomicU64,
}

/// Eigen's event count over `capacity` waiter slots.
pub struct EventCount {
    state: CachePadded<AtomicU64>,
    waiters: Box<[CachePadded<Waiter>]>,
}

fn waiters(state: u64) -> u64 {
    (state & WAITER_MASK) >> WAITER_SHIFT
}

fn signals(state: u64) -> u64 {
    (state & SIGNAL_MASK) >> SIGNAL_SHIFT
}

impl EventCount {
    /// An event count for `capacity` waiters (ids `0..capacity`).
    ///
    /// # Panics
    ///
    /// If `capacity` exceeds [`MAX_WAITERS`].
    pub fn new(capacity: usize) -> EventCount {
        assert!(
            capacity <= MAX_WAITERS,
            "EventCount: at most {MAX_WAITERS} waiters, but {capacity} were requested"
        );
        EventCount {
            state: CachePadded::new(AtomicU64::new(STACK_MASK)),
            waiters: (0..capacity)
                .map(|_| {
                    CachePadded::new(Waiter {
                        next: AtomicU64::new(STACK_MASK),
                        epoch: AtomicU64::new(0),
                        state: AtomicU32::new(NOT_SIGNALED),
                        waits: AtomicU64::new(0),
                        wakes: AtomicU64::new(0),
                    })
                })
                .collect(),
        }
    }

    /// The number of waiter slots.
    pub fn capacity(&self) -> usize {
        self.waiters.len()
    }

    /// Phase one: count the caller as a pre-waiter, then the waiter half of
    /// the handshake (a SeqCst fence, which pairs with every notify's).
    pub fn prepare_wait(&self) {
        self.state.fetch_add(WAITER_INC, Ordering::AcqRel);
        fence(Ordering::SeqCst);
    }

    /// Phase two, condition still false: take a pending signal and return,
    /// or push waiter `wid` on the stack and sleep until a notify pops it.
    pub fn commit_wait(&self, wid: usize) {
        let w = &self.waiters[wid];
        w.state.store(NOT_SIGNALED, Ordering::Relaxed);
        let me = wid as u64 | w.epoch.load(Ordering::Relaxed);
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            let pushed = signals(state) == 0;
            let new = if pushed {
                w.next
                    .store(state & (STACK_MASK | EPOCH_MASK), Ordering::Relaxed);
                ((state & WAITER_MASK) - WAITER_INC) | me
            } else {
                // Take a signal, whoever it was meant for.
                state - WAITER_INC - SIGNAL_INC
            };
            match self
                .state
                .compare_exchange_weak(state, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) if pushed => {
                    w.epoch.store(
                        w.epoch.load(Ordering::Relaxed).wrapping_add(EPOCH_INC),
                        Ordering::Relaxed,
                    );
                    self.park(w);
                    return;
                }
                Ok(_) => return,
                Err(now) => state = now,
            }
        }
    }

    /// Phase two, condition true: stop being a pre-waiter. If every
    /// pre-waiter holds a signal, this one's is taken back with it.
    pub fn cancel_wait(&self) {
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            let mut new = state - WAITER_INC;
            if waiters(state) == signals(state) {
                new -= SIGNAL_INC;
            }
            match self
                .state
                .compare_exchange_weak(state, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => state = now,
            }
        }
    }

    /// Notify one waiter (`all == false`) or all of them. A pre-waiter gets
    /// an anonymous signal; otherwise the top committed waiter is popped and
    /// woken. Returns true if anyone was notified.
    pub fn notify(&self, all: bool) -> bool {
        // The notifier half of the handshake.
        fence(Ordering::SeqCst);
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            let (waiting, signalled) = (waiters(state), signals(state));
            let empty = state & STACK_MASK == STACK_MASK;
            if empty && waiting == signalled {
                return false;
            }
            let new = if all {
                // Signal every pre-waiter, take the whole stack.
                (state & WAITER_MASK) | (waiting << SIGNAL_SHIFT) | STACK_MASK
            } else if signalled < waiting {
                state + SIGNAL_INC
            } else {
                let top = &self.waiters[(state & STACK_MASK) as usize];
                (state & (WAITER_MASK | SIGNAL_MASK)) | top.next.load(Ordering::Relaxed)
            };
            match self
                .state
                .compare_exchange_weak(state, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    if (!all && signalled < waiting) || empty {
                        return true;
                    }
                    let top = (state & STACK_MASK) as usize;
                    if !all {
                        self.waiters[top].next.store(STACK_MASK, Ordering::Relaxed);
                    }
                    self.unpark(top);
                    return true;
                }
                Err(now) => state = now,
            }
        }
    }

    fn park(&self, w: &Waiter) {
        if w.state
            .compare_exchange(NOT_SIGNALED, WAITING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return; // already signalled
        }
        while w.state.load(Ordering::Acquire) == WAITING {
            w.waits.fetch_add(1, Ordering::Relaxed);
            atomic_wait::wait(&w.state, WAITING);
        }
    }

    /// Wake the chain of waiters starting at `wid`.
    fn unpark(&self, mut wid: usize) {
        loop {
            let w = &self.waiters[wid];
            // Read the link first: a signalled waiter may push itself again.
            let next = w.next.load(Ordering::Relaxed) & STACK_MASK;
            if w.state.swap(SIGNALED, Ordering::AcqRel) == WAITING {
                w.wakes.fetch_add(1, Ordering::Relaxed);
                atomic_wait::wake_one(&w.state);
            }
            if next == STACK_MASK {
                return;
            }
            wid = next as usize;
        }
    }

    /// Committed waiters asleep right now (a snapshot).
    pub fn num_sleeping(&self) -> usize {
        self.waiters
            .iter()
            .filter(|w| w.state.load(Ordering::Relaxed) == WAITING)
            .count()
    }

    /// (futex waits, futex wakes) so far.
    pub fn counts(&self) -> (u64, u64) {
        self.waiters.iter().fold((0, 0), |(a, b), w| {
            (
                a + w.waits.load(Ordering::Relaxed),
                b + w.wakes.load(Ordering::Relaxed),
            )
        })
    }
}

impl std::fmt::Debug for EventCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.load(Ordering::Relaxed);
        f.debug_struct("EventCount")
            .field("top", &(state & STACK_MASK))
            .field("waiters", &waiters(state))
            .field("signals", &signals(state))
            .field("epoch", &(state >> EPOCH_SHIFT))
            .finish()
    }
}
