//! Speed of the memory-system model (`docs/model-memory.md` §8, "Speed"):
//! sends a synthetic mix of requests (30 SMs, reads, writes and atomics,
//! half to PM, a working set larger than the L2) in non-decreasing time and
//! prints requests per second of host time, for PM-near and PM-far, an
//! L2-resident and a larger working set, at one request per cycle (PM
//! channels busy) and 4 per cycle (PM saturated, queues of millions of
//! cycles).
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
    for (place, lines, per_cycle) in [
        (PmPlace::Near, 1 << 12, 1),
        (PmPlace::Near, 1 << 16, 1),
        (PmPlace::Near, 1 << 16, 4),
        (PmPlace::Far, 1 << 12, 1),
        (PmPlace::Far, 1 << 16, 1),
    ] {
        let mask: u64 = lines - 1;
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
                // A working set of `lines` lines (2^12: 512 KB, L2-resident;
                // 2^16: 8 MB, the L2 holds 3 MB), random or sequential.
                line: if x & 16 == 0 {
                    (x >> 20) & mask
                } else {
                    i & mask
                },
                sectors: if x & 32 == 0 {
                    0xF
                } else {
                    1 << ((x >> 6) & 3)
                },
                access,
                pm: x & 64 != 0,
            };
            let now = i / per_cycle;
            let d = m.send(now, &req);
            sink = sink.wrapping_add(d.at ^ d.durable);
            if i % 1_000_000 == 999_999 {
                m.kernel_end(now);
            }
        }
        let secs = t.elapsed().as_secs_f64();
        let s = m.stats();
        println!(
            "{place:?}, {} KB working set, {per_cycle} requests/cycle: {n} requests in {secs:.3} s = {:.1} M requests/s \
             (L2 hits {} misses {}, PM write {} MB, checksum {sink:x})",
            lines * 128 / 1024,
            n as f64 / secs / 1e6,
            s.l2_hits,
            s.l2_misses,
            s.pm_write_bytes >> 20,
        );
        println!("  waits: {:?}", m.waits());
    }
}
