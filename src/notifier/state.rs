//! The Notifier's packed state word.
//!
//! | bits    | field        | meaning                                                        |
//! |---------|--------------|----------------------------------------------------------------|
//! | 0..14   | `top`        | slot index on top of the committed-waiter stack; `0x3FFF` = empty |
//! | 14..28  | `pre_waiters`| waiters between `prepare_wait` and their commit or cancel      |
//! | 28..42  | `signals`    | notifications handed to pre-waiters, not yet consumed (≤ `pre_waiters`) |
//! | 42..64  | `epoch`      | push count of the `top` slot at the time it was pushed (ABA guard) |
//!
//! `top` and `epoch` together form the *stack word*: the value a pushing slot
//! saves as its `next` link and a pop restores. The epoch sits in the high
//! bits so that bumping it wraps off the top of the `u64` and never carries
//! into the counters. See docs/notifier.md for why the widths are 14/14/14/22.

use static_assertions::const_assert;

/// Width of the stack index, the pre-waiter count and the signal count.
pub(crate) const INDEX_BITS: u32 = 14;

const TOP_SHIFT: u32 = 0;
const PRE_WAITER_SHIFT: u32 = INDEX_BITS;
const SIGNAL_SHIFT: u32 = 2 * INDEX_BITS;
const EPOCH_SHIFT: u32 = 3 * INDEX_BITS;

/// Width of the ABA epoch: whatever the three counters leave.
pub(crate) const EPOCH_BITS: u32 = u64::BITS - EPOCH_SHIFT;

const FIELD_MASK: u64 = (1 << INDEX_BITS) - 1;
/// Mask of the `top` field; its all-ones value means "stack empty".
pub(crate) const TOP_MASK: u64 = FIELD_MASK << TOP_SHIFT;
const PRE_WAITER_MASK: u64 = FIELD_MASK << PRE_WAITER_SHIFT;
const SIGNAL_MASK: u64 = FIELD_MASK << SIGNAL_SHIFT;
/// Mask of the epoch field.
pub(crate) const EPOCH_MASK: u64 = !0 << EPOCH_SHIFT;
/// The stack word: `top` plus `epoch`.
pub(crate) const STACK_WORD_MASK: u64 = TOP_MASK | EPOCH_MASK;

/// One pre-waiter.
pub(crate) const ONE_PRE_WAITER: u64 = 1 << PRE_WAITER_SHIFT;
/// One signal.
pub(crate) const ONE_SIGNAL: u64 = 1 << SIGNAL_SHIFT;
/// One epoch step, added (wrapping) to a slot's epoch after each push.
pub(crate) const ONE_EPOCH: u64 = 1 << EPOCH_SHIFT;

/// The `top` value that marks an empty stack.
pub(crate) const EMPTY_TOP: u64 = TOP_MASK;

/// The most waiter slots the layout allows: indices `0..MAX_SLOTS` must all
/// differ from [`EMPTY_TOP`], and a count of `MAX_SLOTS` pre-waiters must fit
/// its field.
pub(crate) const MAX_SLOTS: usize = EMPTY_TOP as usize;

// The four fields tile the word exactly, without overlap.
const_assert!(TOP_MASK & PRE_WAITER_MASK == 0);
const_assert!(PRE_WAITER_MASK & SIGNAL_MASK == 0);
const_assert!(SIGNAL_MASK & EPOCH_MASK == 0);
const_assert!(TOP_MASK | PRE_WAITER_MASK | SIGNAL_MASK | EPOCH_MASK == u64::MAX);
// Enough epoch to make ABA need millions of re-pushes of one slot inside a
// single notifier's load-to-CAS window (docs/notifier.md, "Epoch").
const_assert!(EPOCH_BITS >= 20);
// Counts up to MAX_SLOTS must fit their fields (signals never exceed pre-waiters).
const_assert!(MAX_SLOTS as u64 <= FIELD_MASK);

/// A snapshot of the state word with typed accessors.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct State(pub(crate) u64);

impl State {
    /// The state of a notifier nobody is waiting on.
    pub(crate) const IDLE: State = State(EMPTY_TOP);

    #[inline]
    pub(crate) fn top(self) -> u64 {
        (self.0 & TOP_MASK) >> TOP_SHIFT
    }

    #[inline]
    pub(crate) fn stack_is_empty(self) -> bool {
        self.top() == EMPTY_TOP
    }

    #[inline]
    pub(crate) fn pre_waiters(self) -> u64 {
        (self.0 & PRE_WAITER_MASK) >> PRE_WAITER_SHIFT
    }

    #[inline]
    pub(crate) fn signals(self) -> u64 {
        (self.0 & SIGNAL_MASK) >> SIGNAL_SHIFT
    }

    #[inline]
    pub(crate) fn epoch(self) -> u64 {
        (self.0 & EPOCH_MASK) >> EPOCH_SHIFT
    }

    /// Pre-waiters no notification has reached yet.
    #[inline]
    pub(crate) fn unsignalled(self) -> u64 {
        self.pre_waiters() - self.signals()
    }

    /// True when a notify has nothing to do: nobody committed, and every
    /// pre-waiter (if any) already holds a signal.
    #[inline]
    pub(crate) fn nobody_to_wake(self) -> bool {
        // One comparison covers both: the stack is empty and signals == pre_waiters.
        // (signals <= pre_waiters always, so equality means "all signalled").
        self.stack_is_empty() && self.signals() == self.pre_waiters()
    }

    /// The stack word (top and epoch) that a push saves as its link.
    #[inline]
    pub(crate) fn stack_word(self) -> u64 {
        self.0 & STACK_WORD_MASK
    }

    /// The same counters with a different stack word.
    #[inline]
    pub(crate) fn with_stack_word(self, stack_word: u64) -> State {
        debug_assert_eq!(stack_word & !STACK_WORD_MASK, 0);
        State((self.0 & !STACK_WORD_MASK) | stack_word)
    }

    /// Check the invariants every reachable state satisfies.
    #[inline]
    pub(crate) fn debug_check(self, slots: usize) {
        debug_assert!(
            self.signals() <= self.pre_waiters(),
            "notifier state corrupt: {self:?} has more signals than pre-waiters"
        );
        debug_assert!(
            self.pre_waiters() <= slots as u64,
            "notifier state corrupt: {self:?} counts more pre-waiters than the {slots} slots"
        );
        debug_assert!(
            self.stack_is_empty() || self.top() < slots as u64,
            "notifier state corrupt: {self:?} has a top slot outside the {slots} slots"
        );
    }
}

/// Build a stack word for `slot` pushed at `epoch_bits` (already shifted).
#[inline]
pub(crate) fn stack_word(slot: usize, epoch_bits: u64) -> u64 {
    debug_assert!((slot as u64) < EMPTY_TOP);
    debug_assert_eq!(epoch_bits & !EPOCH_MASK, 0);
    ((slot as u64) << TOP_SHIFT) | epoch_bits
}

/// The slot index in a stack word, or `None` for the empty stack.
#[inline]
pub(crate) fn stack_word_top(word: u64) -> Option<usize> {
    let top = (word & TOP_MASK) >> TOP_SHIFT;
    (top != EMPTY_TOP).then_some(top as usize)
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("State");
        if self.stack_is_empty() {
            s.field("top", &format_args!("empty"));
        } else {
            s.field("top", &self.top());
        }
        s.field("pre_waiters", &self.pre_waiters())
            .field("signals", &self.signals())
            .field("epoch", &self.epoch())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let s = State(stack_word(5, 7 * ONE_EPOCH) | (3 * ONE_PRE_WAITER) | (2 * ONE_SIGNAL));
        assert_eq!(s.top(), 5);
        assert_eq!(s.pre_waiters(), 3);
        assert_eq!(s.signals(), 2);
        assert_eq!(s.epoch(), 7);
        assert_eq!(s.unsignalled(), 1);
        assert!(!s.nobody_to_wake());
        assert_eq!(
            format!("{s:?}"),
            "State { top: 5, pre_waiters: 3, signals: 2, epoch: 7 }"
        );
    }

    #[test]
    fn idle_state_decodes() {
        assert!(State::IDLE.stack_is_empty());
        assert!(State::IDLE.nobody_to_wake());
        assert_eq!(
            format!("{:?}", State::IDLE),
            "State { top: empty, pre_waiters: 0, signals: 0, epoch: 0 }"
        );
    }

    #[test]
    fn epoch_wraps_without_touching_counters() {
        let top_epoch = EPOCH_MASK; // the largest epoch
        let word = stack_word(1, top_epoch).wrapping_add(ONE_EPOCH);
        assert_eq!(State(word).epoch(), 0);
        assert_eq!(State(word).top(), 1);
        assert_eq!(State(word).pre_waiters(), 0);
    }

    #[test]
    fn capacity_is_sixteen_thousand() {
        assert_eq!(MAX_SLOTS, 16_383);
        assert_eq!(EPOCH_BITS, 22);
    }
}
