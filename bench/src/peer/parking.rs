//! The per-thread parking peers: [`StdPark`] and [`CrossbeamParker`], one
//! `Peer` implementation over any park/unpark primitive.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::thread::{self, Thread};

use crossbeam_utils::sync::{Parker, Unparker};

use super::Peer;

/// A primitive that parks the calling thread until another unparks it.
pub trait ParkThread: Send + Sync + 'static {
    /// What wakes one particular thread.
    type Unparker: Send + Sync;

    /// The calling thread's unparker.
    fn unparker() -> Self::Unparker;

    /// Park the calling thread until unparked (or spuriously).
    fn park();

    /// Wake the thread, or make its next park return at once.
    fn unpark(unparker: &Self::Unparker);
}

/// std's `thread::park` and `Thread::unpark`.
pub type StdPark = Parking<StdThread>;

/// crossbeam-utils' `Parker` and `Unparker`.
pub type CrossbeamParker = Parking<CrossbeamThread>;

/// Gives each [`Parking`] peer its own id (an address could be reused).
static NEXT_ID: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// The peer (by id) and slot this thread registered with last: a waker
    /// does not unpark itself.
    static REGISTERED_AS: Cell<(usize, usize)> = const { Cell::new((0, usize::MAX)) };
}

/// The peer over a [`ParkThread`]: each sleeper parks its own thread.
///
/// A parking primitive keeps no queue of sleepers, so a wake cannot pick
/// one: `wake_one` unparks every registered thread but the waker (in the
/// ping-pong, exactly the partner) and `wake_all` every registered thread.
#[derive(Debug)]
pub struct Parking<T: ParkThread> {
    id: usize,
    /// One unparker per slot, set by the thread that sleeps there.
    sleepers: Vec<OnceLock<T::Unparker>>,
    primitive: PhantomData<T>,
}

impl<T: ParkThread> Parking<T> {
    fn unpark_all_but(&self, skip: usize) {
        for (slot, sleeper) in self.sleepers.iter().enumerate() {
            if let Some(sleeper) = sleeper.get().filter(|_| slot != skip) {
                T::unpark(sleeper);
            }
        }
    }
}

impl<T: ParkThread> Peer for Parking<T> {
    fn new(slots: usize) -> Self {
        Parking {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            sleepers: (0..slots).map(|_| OnceLock::new()).collect(),
            primitive: PhantomData,
        }
    }

    fn register(&self, slot: usize) {
        if self.sleepers[slot].set(T::unparker()).is_err() {
            panic!("Parking::register: slot {slot} registered twice");
        }
        REGISTERED_AS.set((self.id, slot));
    }

    fn wait_until(&self, _slot: usize, _signal: &AtomicU32, ready: impl Fn() -> bool) {
        while !ready() {
            T::park();
        }
    }

    fn wake_one(&self, _signal: &AtomicU32) {
        let (peer, own_slot) = REGISTERED_AS.get();
        self.unpark_all_but(if peer == self.id {
            own_slot
        } else {
            usize::MAX
        });
    }

    fn wake_all(&self, _signal: &AtomicU32) {
        self.unpark_all_but(usize::MAX);
    }
}

/// std's thread parking.
#[derive(Debug)]
pub struct StdThread;

impl ParkThread for StdThread {
    type Unparker = Thread;

    fn unparker() -> Thread {
        thread::current()
    }

    fn park() {
        thread::park();
    }

    fn unpark(unparker: &Thread) {
        unparker.unpark();
    }
}

thread_local! {
    /// A `Parker` belongs to one thread (it is not `Sync`): each sleeper
    /// parks on its own.
    static PARKER: Parker = Parker::new();
}

/// crossbeam's `Parker`, one per thread.
#[derive(Debug)]
pub struct CrossbeamThread;

impl ParkThread for CrossbeamThread {
    type Unparker = Unparker;

    fn unparker() -> Unparker {
        PARKER.with(|parker| parker.unparker().clone())
    }

    fn park() {
        PARKER.with(Parker::park);
    }

    fn unpark(unparker: &Unparker) {
        unparker.unpark();
    }
}
