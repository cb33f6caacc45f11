//! The backend of the crate's own unit tests under `--cfg loom`, and of
//! any build under `--cfg eventcount_loom` (a client's loom run): loom's
//! atomics, fences and hints, and a parker that adds no synchronization of
//! its own, so that the models drive the very protocol code that ships and
//! see no more ordering than a futex gives it.
//!
//! A futex wait and wake order nothing: every caller re-loads the word
//! after a wait, with the ordering it chose. loom's blocking primitives
//! (`Notify`, `Mutex`, `Condvar`, `park`, a join) all synchronize the woken
//! thread with its waker: a parker built on one would add a happens-before
//! edge that production lacks, and an ordering only that edge made
//! unnecessary would read as defensive.
//!
//! So the kernel's part, "is the owner queued on this word", is a std flag
//! that loom does not see, and a queued thread sleeps by yielding to loom's
//! scheduler until a wake clears the flag:
//! - `wait` reads the word with a compare-exchange from a value no word
//!   holds, Relaxed. loom gives a read-modify-write the newest value in the
//!   word's modification order, as the kernel's compare does for a waker
//!   that stored before its wake; a failed Relaxed one writes nothing and
//!   synchronizes with nothing. A plain Relaxed load could return a value
//!   the waker had already overwritten and woken for, and sleep for good,
//!   which no futex does. The compare and the queueing are one step: no
//!   loom operation lies between them, so no other thread runs there;
//! - `wake_one` clears the flag and touches nothing loom sees, so a waker
//!   that changes the word but forgets its wake leaves the owner asleep, as
//!   on a futex. It needs no scheduling point of its own: the waker's store
//!   just before it is one, and the only thread that could tell a wake in
//!   that gap from one just after is the owner, asleep either way;
//! - a queued owner calls `loom::thread::yield_now` in a loop. loom runs a
//!   yielding thread again only after another thread has moved, or when no
//!   other thread can, and the loop's re-checks touch nothing loom sees.
//!   A sleeper that nothing will ever wake ends up the only thread left
//!   running, yielding for ever, and loom fails the model with "Model
//!   exceeded maximum number of branches": that message, like "deadlock",
//!   is a lost wakeup;
//! - two sleepers can yield to each other for ever while the thread that
//!   would wake them is ready to run: loom counts the other sleeper's yield
//!   as progress, and would explore such executions without end. So a
//!   sleeper that loom runs again while still queued, right after a yield
//!   by another sleeper that is still queued too, stops the exploration of
//!   the rest of that execution (`loom::skip_branch`): loom passed over the
//!   threads that could run for one that can only yield again, or none can
//!   run and the model is deadlocked. The rest of that execution then runs
//!   on loom's default schedule, which runs a thread that can move before a
//!   sleeper and still ends a deadlock on the branch limit. A yield through
//!   this module's `yield_now` (a search round's) is not a sleeper's, so a
//!   sleeper run after it keeps exploring.
//!
//! No return is spurious, although a futex may return on a signal. Every
//! caller loops over its wait anyway (`Slot::park`, `WorkerSleep::sleep`),
//! and the real-thread tests also run on the `park` backend
//! (`--cfg eventcount_fallback`), whose waits do return spuriously.
//!
//! loom has no clock: a timed wait times out at once unless the word
//! already changed, which drives every timeout path through every
//! interleaving the model explores.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed as KernelOrder};
use std::sync::Arc as KernelArc;
use std::time::Instant;

pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// No futex word in this crate ever holds it, so a compare-exchange from it
/// always fails.
const NEVER: u32 = u32::MAX;

/// "Is the owner queued on this word": the kernel's wait queue for one
/// word, which holds at most its owner. A std atomic, so loom neither
/// schedules on it nor orders anything by it (loom runs every thread of a
/// model on one OS thread, one at a time).
type Queued = KernelArc<AtomicBool>;

thread_local! {
    /// The latest yield of this OS thread's model: `Some(word)` if a sleeper
    /// queued on that word made it, `None` for any other yield through this
    /// module (a search round's `yield_now`).
    static LAST_YIELD: RefCell<Option<Queued>> = const { RefCell::new(None) };
}

/// `loom::thread::yield_now`, remembered as a yield by a thread that is
/// not asleep.
pub(crate) fn yield_now() {
    LAST_YIELD.with(|last| *last.borrow_mut() = None);
    loom::thread::yield_now();
}

pub(crate) struct Parker {
    queued: Queued,
}

impl Parker {
    pub(crate) fn new() -> Self {
        Parker {
            queued: KernelArc::new(AtomicBool::new(false)),
        }
    }

    /// The kernel's compare: the newest value of the word, with no
    /// synchronization (module docs).
    fn current(word: &AtomicU32) -> u32 {
        match word.compare_exchange(NEVER, NEVER, Ordering::Relaxed, Ordering::Relaxed) {
            Err(current) => current,
            Ok(_) => unreachable!("a futex word held {NEVER:#x}"),
        }
    }

    pub(crate) fn wait(&self, word: &AtomicU32, expected: u32) {
        if Self::current(word) != expected {
            return;
        }
        // Nothing loom sees lies between the compare and the queueing, so
        // no thread runs between them: they are one step, as in the kernel.
        let other = self.queued.swap(true, KernelOrder);
        assert!(!other, "two threads asleep on one futex word");
        loop {
            LAST_YIELD.with(|last| *last.borrow_mut() = Some(self.queued.clone()));
            loom::thread::yield_now();
            if !self.queued.load(KernelOrder) {
                return;
            }
            // Still asleep, and loom ran us right after a yield by another
            // sleeper that is still asleep: loom passed over every thread
            // that could move, or none can. Either way, explore no further
            // (module docs: two sleepers yielding to each other).
            let after_other_sleeper = LAST_YIELD.with(|last| {
                last.borrow().as_ref().is_some_and(|other| {
                    !KernelArc::ptr_eq(other, &self.queued) && other.load(KernelOrder)
                })
            });
            if after_other_sleeper {
                loom::skip_branch();
            }
        }
    }

    /// Times out at once: true unless the word already differs. A Relaxed
    /// load, which may be stale: that is a timeout racing a wake, which a
    /// futex allows too, and the caller decides it on the word.
    pub(crate) fn wait_until(&self, word: &AtomicU32, expected: u32, _deadline: Instant) -> bool {
        word.load(Ordering::Relaxed) == expected
    }

    pub(crate) fn wake_one(&self, _word: &AtomicU32) {
        self.queued.store(false, KernelOrder);
    }
}
