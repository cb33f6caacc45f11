//! The Notifier's packed state word: the top of the waiter stack.
//!
//! | bits   | field   | meaning                                                    |
//! |--------|---------|------------------------------------------------------------|
//! | 0..16  | `top`   | slot index on top of the waiter stack; `0xFFFF` = empty    |
//! | 16..64 | `epoch` | the `top` slot's push count when it was pushed (ABA guard) |
//!
//! Every prepared waiter is on the stack until a notify pops it or it
//! cancels from the top. The whole word is the *stack word* a push saves as
//! its `next` link; the epoch sits in the high bits so that bumping it
//! wraps off the `u64` and never carries into `top`
//! ([docs/notifier.md](crate::docs::notifier), "The state word").

use static_assertions::const_assert;

/// Width of the stack index.
const INDEX_BITS: u32 = 16;

const TOP_SHIFT: u32 = 0;
const EPOCH_SHIFT: u32 = INDEX_BITS;

/// Width of the ABA epoch: whatever the index leaves.
pub(crate) const EPOCH_BITS: u32 = u64::BITS - EPOCH_SHIFT;

/// Mask of the `top` field; its all-ones value means "stack empty".
const TOP_MASK: u64 = ((1 << INDEX_BITS) - 1) << TOP_SHIFT;
/// Mask of the epoch field.
pub(crate) const EPOCH_MASK: u64 = !0 << EPOCH_SHIFT;

/// One epoch step, added (wrapping) to a slot's epoch after each push.
pub(crate) const ONE_EPOCH: u64 = 1 << EPOCH_SHIFT;

/// The `top` value that marks an empty stack.
const EMPTY_TOP: u64 = TOP_MASK;

/// The most waiter slots the layout allows: indices `0..MAX_SLOTS` must all
/// differ from the empty marker.
pub(crate) const MAX_SLOTS: usize = EMPTY_TOP as usize;

// The two fields tile the word exactly, without overlap.
const_assert!(TOP_MASK & EPOCH_MASK == 0);
const_assert!(TOP_MASK | EPOCH_MASK == u64::MAX);
// ABA would need 2^48 re-pushes of one slot inside a single notifier's
// load-to-CAS window (docs/notifier.md, "Epoch").
const_assert!(EPOCH_BITS >= 48);

/// A snapshot of the state word with typed accessors.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct State(pub(crate) u64);

impl State {
    /// The empty stack. Its epoch is always 0: a push onto it saves this
    /// word as the link, and popping the last slot restores it.
    pub(crate) const EMPTY: State = State(EMPTY_TOP);

    #[inline]
    pub(crate) fn top(self) -> Option<usize> {
        stack_word_top(self.0)
    }

    #[inline]
    pub(crate) fn is_empty(self) -> bool {
        self == State::EMPTY
    }

    #[inline]
    pub(crate) fn epoch(self) -> u64 {
        (self.0 & EPOCH_MASK) >> EPOCH_SHIFT
    }

    /// Check the invariants every reachable state satisfies.
    #[inline]
    pub(crate) fn debug_check(self, slots: usize) {
        debug_assert!(
            self.top().is_none_or(|top| top < slots),
            "notifier state corrupt: {self:?} has a top slot outside the {slots} slots"
        );
        debug_assert!(
            self.top().is_some() || self.epoch() == 0,
            "notifier state corrupt: {self:?} has an epoch on an empty stack"
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
        match self.top() {
            Some(top) => s.field("top", &top),
            None => s.field("top", &format_args!("empty")),
        };
        s.field("epoch", &self.epoch()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let s = State(stack_word(5, 7 * ONE_EPOCH));
        assert_eq!(s.top(), Some(5));
        assert_eq!(s.epoch(), 7);
        assert!(!s.is_empty());
        assert_eq!(format!("{s:?}"), "State { top: 5, epoch: 7 }");
    }

    #[test]
    fn empty_state_decodes() {
        assert_eq!(State::EMPTY.top(), None);
        assert!(State::EMPTY.is_empty());
        assert_eq!(
            format!("{:?}", State::EMPTY),
            "State { top: empty, epoch: 0 }"
        );
    }

    #[test]
    fn epoch_wraps_without_touching_top() {
        let word = stack_word(1, EPOCH_MASK).wrapping_add(ONE_EPOCH);
        assert_eq!(State(word).epoch(), 0);
        assert_eq!(State(word).top(), Some(1));
    }

    #[test]
    fn capacity_and_epoch_width() {
        assert_eq!(MAX_SLOTS, 65_535);
        assert_eq!(EPOCH_BITS, 48);
    }
}
