//! The loom model of [`WaiterIds`]: an id is never held twice at once.

use loom::sync::atomic::AtomicBool;
use loom::sync::Arc;

use super::support::{check, join_all, spawn_with};
use crate::notifier::WaiterIds;
use crate::sync::Ordering;

/// Two threads take and give back ids from a set of one: they never
/// hold the same id at once, and the set ends empty.
#[test]
fn waiter_ids_are_never_shared() {
    check(3, || {
        let ids = Arc::new(WaiterIds::new(1));
        let holding = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                spawn_with!(ids, holding => {
                    if let Some(id) = ids.acquire() {
                        assert_eq!(id.get(), 0);
                        assert!(!holding.swap(true, Ordering::Relaxed), "id 0 held twice");
                        holding.store(false, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        join_all(threads);
        assert_eq!(ids.in_use(), 0);
    });
}
