//! Speed of the memory-system model (`docs/model-memory.md` §8, "Speed"):
//! sends a synthetic mix of requests from 30 SMs (11/16 reads, 4/16 writes,
//! 1/16 atomics, half to PM, half random and half sequential lines in a
//! working set) in non-decreasing time and prints requests per second of
//! host time.
//!
//! - Open loop: requests at a fixed rate, for PM-near and PM-far, an
//!   L2-resident (512 KB) and a larger (8 MB) working set, at one request per
//!   cycle and at 4 per cycle (PM saturated, queues of millions of cycles).
//! - Closed loop: each SM keeps 64 requests outstanding and issues the next
//!   one 10 cycles after a response (a binary heap orders the sends; its cost
//!   is included). It also prints the queueing delays, as a check that
//!   lightly loaded resources (the SM ports) show next to none.
//!
//! `cargo run --release -p sbrp-gpu --example mem_speed [requests [case]]`
//! (`case`: run only the case-th line, from 0, e.g. under cachegrind).

use sbrp_gpu::config::{GpuConfig, PmPlace};
use sbrp_gpu::mem::{Access, MemReq, MemSystem};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

const SMS: u32 = 30;

/// The request mix: xorshift64, a fixed dependency-free generator.
struct Mix {
    x: u64,
    mask: u64,
}

impl Mix {
    fn new(lines: u64) -> Mix {
        Mix {
            x: 0x2545_F491_4F6C_DD1D,
            mask: lines - 1,
        }
    }

    #[inline]
    fn next(&mut self, i: u64, sm: u32) -> MemReq {
        let x = &mut self.x;
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        let x = *x;
        MemReq {
            sm,
            line: if x & 16 == 0 {
                (x >> 20) & self.mask
            } else {
                i & self.mask
            },
            sectors: if x & 32 == 0 {
                0xF
            } else {
                1 << ((x >> 6) & 3)
            },
            access: match x & 15 {
                0..=10 => Access::Read,
                11..=14 => Access::Write,
                _ => Access::Atomic,
            },
            pm: x & 64 != 0,
        }
    }
}

fn config(place: PmPlace) -> GpuConfig {
    let mut cfg = GpuConfig::default();
    cfg.pm.place = place;
    cfg
}

/// `1 << rate_log2` requests per cycle (a shift: no division in the loop).
fn open_loop(n: u64, place: PmPlace, lines: u64, rate_log2: u32) {
    let per_cycle = 1u64 << rate_log2;
    let mut m = MemSystem::new(&config(place));
    let mut mix = Mix::new(lines);
    let mut sink = 0u64;
    let t = Instant::now();
    for i in 0..n {
        let now = i >> rate_log2;
        let d = m.send(now, &mix.next(i, (i % SMS as u64) as u32));
        sink = sink.wrapping_add(d.at ^ d.durable);
        if i % 1_000_000 == 999_999 {
            m.kernel_end(now);
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let s = m.stats();
    println!(
        "open   {place:?}, {:>4} KB, {per_cycle} req/cycle: {:.1} M requests/s \
         (L2 hits {:.0}%, checksum {sink:x})",
        lines * 128 / 1024,
        n as f64 / secs / 1e6,
        100.0 * s.l2_hits as f64 / n as f64,
    );
}

fn closed_loop(n: u64, place: PmPlace, lines: u64, outstanding: u32) {
    let mut m = MemSystem::new(&config(place));
    let mut mix = Mix::new(lines);
    let mut heap = BinaryHeap::new();
    for sm in 0..SMS {
        for _ in 0..outstanding {
            heap.push(Reverse((0u64, sm)));
        }
    }
    let mut now = 0;
    let t = Instant::now();
    for i in 0..n {
        let Reverse((at, sm)) = heap.pop().expect("slots");
        now = at;
        let d = m.send(now, &mix.next(i, sm));
        heap.push(Reverse((d.at + 10, sm)));
    }
    let secs = t.elapsed().as_secs_f64();
    let s = m.stats();
    let w = m.waits();
    println!(
        "closed {place:?}, {:>4} KB, {outstanding} outstanding/SM: {:.1} M requests/s \
         ({:.2} requests/cycle simulated, L2 hits {:.0}%)",
        lines * 128 / 1024,
        n as f64 / secs / 1e6,
        n as f64 / now.max(1) as f64,
        100.0 * s.l2_hits as f64 / n as f64,
    );
    println!(
        "       mean waits (cycles): SM port up {:.2}, down {:.2}, GDDR {:.1}, PM {:.0}; \
         max: ports {}/{}, PCIe {}, write queue {}",
        w.icnt_mean,
        w.icnt_down_mean,
        w.gddr_mean,
        w.pm_mean,
        w.icnt_max,
        w.icnt_down_max,
        w.pcie_max,
        w.wpq_max
    );
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000_000);
    let only: Option<usize> = std::env::args().nth(2).and_then(|a| a.parse().ok());
    let run = |case: usize| only.is_none_or(|o| o == case);
    for (case, (place, lines, rate_log2)) in [
        (PmPlace::Near, 1 << 12, 0),
        (PmPlace::Near, 1 << 16, 0),
        (PmPlace::Near, 1 << 16, 2),
        (PmPlace::Far, 1 << 12, 0),
        (PmPlace::Far, 1 << 16, 0),
    ]
    .into_iter()
    .enumerate()
    {
        if run(case) {
            open_loop(n, place, lines, rate_log2);
        }
    }
    for (case, place) in [(5, PmPlace::Near), (6, PmPlace::Far)] {
        if run(case) {
            closed_loop(n / 4, place, 1 << 16, 64);
        }
    }
}
