//! The workloads of `tokio-bench`: one program, built once against stock
//! tokio and once per patched build, run as `workload CASE WORKERS`. It
//! prints one JSON object: the case's metrics.
//!
//! - The spawn cases are in the shape of tokio's `benches/rt_multi_threaded.rs`
//!   (written here anew): `spawn_many_local`, `spawn_many_remote_idle`,
//!   `spawn_many_remote_busy1`, `spawn_many_remote_busy2`, `yield_many`,
//!   `ping_pong`, `chained_spawn`. Each reports `us`, the median time of one
//!   run over `RUNS` runs on one runtime.
//! - `echo`: a loopback TCP echo server on the runtime, and a blocking
//!   client thread that sends `REQUESTS` requests of 64 bytes one after
//!   another: the p50 and p99 latency, and the workers' CPU per request.
//! - `ticker`: a mostly idle server, a 1 ms interval with about 5 us of
//!   work per tick, for `TICKS` ticks: the workers' CPU per tick.
//!
//! CPU is the runtime's worker threads' own, from each thread's
//! `/proc/self/task/TID/schedstat` (nanoseconds on a CPU).

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const RUNS: usize = 21;
const NUM_SPAWN: usize = 10_000;
const NUM_YIELD: usize = 1_000;
const TASKS_PER_CPU: usize = 50;
const NUM_PINGS: usize = 1_000;
const CHAIN: usize = 1_000;
const REQUESTS: usize = 2_000;
const TICKS: usize = 1_000;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (case, workers) = match args.as_slice() {
        [case, workers] => (case.as_str(), workers.parse().expect("WORKERS is a number")),
        _ => panic!("usage: workload CASE WORKERS"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("bench-worker")
        .enable_all()
        .build()
        .expect("a runtime");
    let report = match case {
        "echo" => echo(&rt),
        "ticker" => ticker(&rt),
        _ => {
            let run: fn(&tokio::runtime::Runtime, usize) = match case {
                "spawn_many_local" => spawn_many_local,
                "spawn_many_remote_idle" => spawn_many_remote_idle,
                "spawn_many_remote_busy1" => |rt, w| spawn_many_remote_busy(rt, w, 1),
                "spawn_many_remote_busy2" => |rt, w| spawn_many_remote_busy(rt, w, 2),
                "yield_many" => yield_many,
                "ping_pong" => ping_pong,
                "chained_spawn" => chained_spawn,
                other => panic!("unknown case {other:?}"),
            };
            let mut times: Vec<f64> = (0..RUNS)
                .map(|_| {
                    let start = Instant::now();
                    run(&rt, workers);
                    start.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            times.sort_by(f64::total_cmp);
            serde_json::json!({ "us": times[RUNS / 2] })
        }
    };
    println!("{report}");
}

/// Spawn from a task on the runtime, and wait for every spawned task.
fn spawn_many_local(rt: &tokio::runtime::Runtime, _workers: usize) {
    let (tx, rx) = mpsc::sync_channel(1);
    let rem = Arc::new(AtomicUsize::new(NUM_SPAWN));
    rt.spawn(async move {
        for _ in 0..NUM_SPAWN {
            let (rem, tx) = (rem.clone(), tx.clone());
            tokio::spawn(async move {
                if rem.fetch_sub(1, Ordering::Relaxed) == 1 {
                    tx.send(()).unwrap();
                }
            });
        }
    });
    rx.recv().unwrap();
}

/// Spawn from outside the runtime onto idle workers.
fn spawn_many_remote_idle(rt: &tokio::runtime::Runtime, _workers: usize) {
    let handles: Vec<_> = (0..NUM_SPAWN).map(|_| rt.spawn(async {})).collect();
    rt.block_on(async {
        for handle in handles {
            handle.await.unwrap();
        }
    });
}

/// Spawn from outside while `busy` tasks keep yielding on the workers.
fn spawn_many_remote_busy(rt: &tokio::runtime::Runtime, _workers: usize, busy: usize) {
    let stop = Arc::new(AtomicBool::new(false));
    for _ in 0..busy {
        let stop = stop.clone();
        rt.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                tokio::task::yield_now().await;
            }
        });
    }
    spawn_many_remote_idle(rt, 0);
    stop.store(true, Ordering::Relaxed);
}

/// Tasks that yield many times each.
fn yield_many(rt: &tokio::runtime::Runtime, workers: usize) {
    let tasks = TASKS_PER_CPU * workers;
    let (tx, rx) = mpsc::sync_channel(tasks);
    for _ in 0..tasks {
        let tx = tx.clone();
        rt.spawn(async move {
            for _ in 0..NUM_YIELD {
                tokio::task::yield_now().await;
            }
            tx.send(()).unwrap();
        });
    }
    for _ in 0..tasks {
        rx.recv().unwrap();
    }
}

/// Pairs of tasks that hand a oneshot back and forth.
fn ping_pong(rt: &tokio::runtime::Runtime, _workers: usize) {
    let (done_tx, done_rx) = mpsc::sync_channel(1);
    let rem = Arc::new(AtomicUsize::new(0));
    rt.spawn(async move {
        for _ in 0..NUM_PINGS {
            let (rem, done_tx) = (rem.clone(), done_tx.clone());
            rem.fetch_add(1, Ordering::Relaxed);
            tokio::spawn(async move {
                let (tx1, rx1) = tokio::sync::oneshot::channel();
                let (tx2, rx2) = tokio::sync::oneshot::channel();
                tokio::spawn(async move {
                    rx1.await.unwrap();
                    tx2.send(()).unwrap();
                });
                tx1.send(()).unwrap();
                rx2.await.unwrap();
                if rem.fetch_sub(1, Ordering::Relaxed) == 1 {
                    done_tx.send(()).unwrap();
                }
            });
        }
    });
    done_rx.recv().unwrap();
}

/// A chain of tasks, each spawning the next.
fn chained_spawn(rt: &tokio::runtime::Runtime, _workers: usize) {
    fn link(n: usize, done: mpsc::SyncSender<()>) {
        if n == 0 {
            done.send(()).unwrap();
        } else {
            tokio::spawn(async move { link(n - 1, done) });
        }
    }
    let (tx, rx) = mpsc::sync_channel(1);
    rt.spawn(async move { link(CHAIN, tx) });
    rx.recv().unwrap();
}

/// The worker threads' CPU so far, in nanoseconds.
fn workers_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.starts_with("bench-worker"))
        })
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// A loopback echo: latency percentiles and the workers' CPU per request.
fn echo(rt: &tokio::runtime::Runtime) -> serde_json::Value {
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("a loopback listener");
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 64];
        while socket.read_exact(&mut buf).await.is_ok() {
            if socket.write_all(&buf).await.is_err() {
                break;
            }
        }
    });
    let mut client = std::net::TcpStream::connect(addr).expect("connect");
    client.set_nodelay(true).unwrap();
    let mut buf = [7u8; 64];
    // A warm-up that is not measured: the connection, the first wakes.
    for _ in 0..100 {
        client.write_all(&buf).unwrap();
        client.read_exact(&mut buf).unwrap();
    }
    let cpu = workers_cpu_ns();
    let mut latencies: Vec<f64> = (0..REQUESTS)
        .map(|_| {
            let start = Instant::now();
            client.write_all(&buf).unwrap();
            client.read_exact(&mut buf).unwrap();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    let cpu_us = (workers_cpu_ns() - cpu) as f64 / 1e3 / REQUESTS as f64;
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies[((REQUESTS as f64 * q) as usize).min(REQUESTS - 1)];
    serde_json::json!({ "p50_us": at(0.50), "p99_us": at(0.99), "cpu_us": cpu_us })
}

/// A 1 ms ticker with a little work per tick: the workers' CPU per tick.
fn ticker(rt: &tokio::runtime::Runtime) -> serde_json::Value {
    let cpu = workers_cpu_ns();
    rt.block_on(async {
        tokio::spawn(async {
            let mut interval = tokio::time::interval(Duration::from_millis(1));
            let mut x = 1u64;
            for _ in 0..TICKS {
                interval.tick().await;
                let start = Instant::now();
                while start.elapsed() < Duration::from_micros(5) {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                }
            }
            std::hint::black_box(x);
        })
        .await
        .unwrap();
    });
    let cpu_us = (workers_cpu_ns() - cpu) as f64 / 1e3 / TICKS as f64;
    serde_json::json!({ "cpu_us": cpu_us })
}
