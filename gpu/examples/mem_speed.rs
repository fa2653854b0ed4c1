//! Speed of the memory-system model (`docs/model-memory.md` §8, "Speed"):
//! sends a synthetic mix of requests (30 SMs, reads, writes and atomics,
//! half to PM, a working set larger than the L2) in non-decreasing time and
//! prints requests per second of host time, for PM-near and PM-far, at a
//! light load (one request every 2 cycles: queues mostly short) and a heavy
//! one (4 per cycle: PM saturated, queues of millions of cycles).
//!
//! `cargo run --release -p sbrp-gpu --example mem_speed [requests]`

use sbrp_gpu::config::{GpuConfig, PmPlace};
use sbrp_gpu::mem::{Access, MemReq, MemSystem};
use std::time::Instant;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000_000);
    for (place, per_cycle) in [
        (PmPlace::Near, 0.5),
        (PmPlace::Near, 4.0),
        (PmPlace::Far, 0.5),
        (PmPlace::Far, 4.0),
    ] {
        let mut cfg = GpuConfig::default();
        cfg.pm.place = place;
        let mut m = MemSystem::new(&cfg);
        // xorshift64: a fixed, dependency-free generator.
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut sink = 0u64;
        let t = Instant::now();
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let access = match x & 15 {
                0..=10 => Access::Read,
                11..=14 => Access::Write,
                _ => Access::Atomic,
            };
            let req = MemReq {
                sm: (i % 30) as u32,
                // 2^16 lines = 8 MB working set (the L2 holds 3 MB), with
                // a sequential run every other request.
                line: if x & 16 == 0 {
                    (x >> 20) & 0xFFFF
                } else {
                    i & 0xFFFF
                },
                sectors: if x & 32 == 0 {
                    0xF
                } else {
                    1 << ((x >> 6) & 3)
                },
                access,
                pm: x & 64 != 0,
            };
            let now = (i as f64 / per_cycle) as u64;
            let d = m.send(now, &req);
            sink = sink.wrapping_add(d.at ^ d.durable);
            if i % 1_000_000 == 999_999 {
                m.kernel_end(now);
            }
        }
        let secs = t.elapsed().as_secs_f64();
        let s = m.stats();
        println!(
            "{place:?}, {per_cycle} requests/cycle: {n} requests in {secs:.3} s = {:.1} M requests/s \
             (L2 hits {} misses {}, PM write {} MB, checksum {sink:x})",
            n as f64 / secs / 1e6,
            s.l2_hits,
            s.l2_misses,
            s.pm_write_bytes >> 20,
        );
        println!("  waits: {:?}", m.waits());
    }
}
