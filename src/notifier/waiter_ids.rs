//! [`WaiterIds`]: ids in `0..capacity` for waiters that come and go.
//!
//! A [`Notifier`](crate::Notifier) names each waiter by a slot id. A thread
//! that waits now and then borrows one, never shared, while it waits.
//!
//! | bits of word `w` | meaning |
//! |---|---|
//! | bit `b` | id `64 * w + b` is taken (ids past `capacity` are never free) |

use crate::sync::{AtomicU64, Ordering};

/// A set of ids in `0..capacity`, each held by at most one [`WaiterId`] at a
/// time; taking and giving one back is a CAS on one word of a bitmap.
pub struct WaiterIds {
    words: Box<[AtomicU64]>,
    capacity: usize,
}

/// One id taken from a [`WaiterIds`]; dropping it gives the id back.
#[must_use = "dropping a WaiterId gives its id back at once"]
pub struct WaiterId<'a> {
    ids: &'a WaiterIds,
    id: usize,
}

impl WaiterIds {
    /// Ids `0..capacity`, all free.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0: no id could ever be handed out.
    ///
    /// # Examples
    ///
    /// ```
    /// let ids = eventcount::WaiterIds::new(2);
    /// let (a, b) = (ids.acquire().unwrap(), ids.acquire().unwrap());
    /// assert!(ids.acquire().is_none()); // both taken
    /// drop(a);
    /// assert!(ids.acquire().is_some());
    /// # drop(b);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn new(capacity: usize) -> Self {
        assert!(
            capacity > 0,
            "WaiterIds::new(0): a set of ids needs at least 1, or no waiter could ever take one"
        );
        let words = capacity.div_ceil(64);
        WaiterIds {
            words: (0..words)
                .map(|w| {
                    // The ids of the last word past `capacity` start taken,
                    // so that they are never handed out.
                    let first_past = capacity.saturating_sub(w * 64).min(64);
                    let never_free = if first_past == 64 {
                        0
                    } else {
                        !0u64 << first_past
                    };
                    AtomicU64::new(never_free)
                })
                .collect(),
            capacity,
        }
    }

    /// Take a free id, or `None` if every id is taken; the lowest first, so a
    /// few waiters keep to the first words. Acquire here and Release when
    /// the id is given back: a taker sees what its last holder did with it
    /// (a `Notifier` slot it cancelled or committed on).
    ///
    /// # Examples
    ///
    /// ```
    /// let ids = eventcount::WaiterIds::new(1);
    /// let id = ids.acquire().unwrap();
    /// assert_eq!(id.get(), 0);
    /// assert!(ids.acquire().is_none());
    /// drop(id);
    /// assert!(ids.acquire().is_some());
    /// ```
    pub fn acquire(&self) -> Option<WaiterId<'_>> {
        for (w, word) in self.words.iter().enumerate() {
            let mut bits = word.load(Ordering::Relaxed);
            while bits != !0 {
                let bit = bits.trailing_ones() as usize;
                match word.compare_exchange_weak(
                    bits,
                    bits | 1 << bit,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        return Some(WaiterId {
                            ids: self,
                            id: w * 64 + bit,
                        })
                    }
                    Err(now) => bits = now,
                }
            }
        }
        None
    }

    internal! {
        /// Ids taken right now (a snapshot, for tests and monitoring).
        #[must_use]
        pub fn in_use(&self) -> usize {
            let taken: usize = self
                .words
                .iter()
                .map(|w| w.load(Ordering::Relaxed).count_ones() as usize)
                .sum();
            // The never-free ids past `capacity` are counted as taken.
            taken - (self.words.len() * 64 - self.capacity)
        }
    }
}

impl WaiterId<'_> {
    /// The id, in `0..capacity()` of its [`WaiterIds`].
    ///
    /// # Examples
    ///
    /// ```
    /// let ids = eventcount::WaiterIds::new(8);
    /// assert!(ids.acquire().unwrap().get() < 8);
    /// ```
    #[must_use]
    pub fn get(&self) -> usize {
        self.id
    }
}

impl Drop for WaiterId<'_> {
    fn drop(&mut self) {
        let (word, bit) = (self.id / 64, self.id % 64);
        // Release: the next holder sees what this one did with the id.
        self.ids.words[word].fetch_and(!(1 << bit), Ordering::Release);
    }
}

impl std::fmt::Debug for WaiterIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaiterIds")
            .field("capacity", &self.capacity)
            .field("in_use", &self.in_use())
            .finish()
    }
}

impl std::fmt::Debug for WaiterId<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("WaiterId").field(&self.id).finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_id_once_then_none() {
        for capacity in [1, 63, 64, 65, 130] {
            let ids = WaiterIds::new(capacity);
            let mut held: Vec<_> = (0..capacity).map(|_| ids.acquire().unwrap()).collect();
            let mut got: Vec<usize> = held.iter().map(WaiterId::get).collect();
            got.sort_unstable();
            assert_eq!(
                got,
                (0..capacity).collect::<Vec<_>>(),
                "capacity {capacity}"
            );
            assert!(ids.acquire().is_none(), "capacity {capacity}");
            assert_eq!(ids.in_use(), capacity);
            held.clear();
            assert_eq!(ids.in_use(), 0);
        }
    }

    #[test]
    fn a_given_back_id_is_taken_again() {
        let ids = WaiterIds::new(65);
        let held: Vec<_> = (0..65).map(|_| ids.acquire().unwrap()).collect();
        let freed = held[64].get();
        drop(held);
        let again = ids.acquire().unwrap();
        assert_eq!(again.get(), 0, "the lowest free id comes first");
        assert!(freed < 65);
    }

    #[test]
    fn threads_never_share_an_id() {
        use std::sync::atomic::AtomicBool;
        let ids = WaiterIds::new(3);
        let holding: Vec<AtomicBool> = (0..3).map(|_| AtomicBool::new(false)).collect();
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..2_000 {
                        if let Some(id) = ids.acquire() {
                            let was = holding[id.get()].swap(true, Ordering::Relaxed);
                            assert!(!was, "id {} handed out twice", id.get());
                            holding[id.get()].store(false, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(ids.in_use(), 0);
    }
}
