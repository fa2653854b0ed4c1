//! The GPU loop's schedule of SM visits (`docs/model.md`, "Event loop"):
//! each SM has one wake cycle; the loop visits, cycle by cycle, the SMs due
//! in index order. Wakes within `SLOTS` cycles go into a timing wheel of
//! bit sets (one bit per SM, a summary bit per non-empty slot); later ones
//! wait in a heap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Cycles the wheel covers ahead of the last visited cycle (a power of two).
const SLOTS: usize = 1024;

pub struct WakeQueue {
    /// Per slot, `words` words of SM bits: SMs due at the one cycle in
    /// `(cur, cur + SLOTS)` that falls in the slot.
    wheel: Vec<u64>,
    words: usize,
    /// Non-empty slots, one bit each.
    summary: [u64; SLOTS / 64],
    /// The last cycle taken.
    cur: u64,
    /// Wakes beyond the wheel, earliest (then lowest index) first.
    later: BinaryHeap<Reverse<(u64, usize)>>,
}

impl WakeQueue {
    pub fn new(sms: usize) -> WakeQueue {
        let words = sms.div_ceil(64).max(1);
        WakeQueue {
            wheel: vec![0; SLOTS * words],
            words,
            summary: [0; SLOTS / 64],
            cur: 0,
            later: BinaryHeap::new(),
        }
    }

    /// SM `s` wakes at cycle `t` (`u64::MAX`: never), later than the last
    /// cycle taken; at most one wake per SM is queued at a time.
    pub fn push(&mut self, s: usize, t: u64) {
        debug_assert!(
            t > self.cur || self.cur == 0,
            "wake {t} not after {}",
            self.cur
        );
        if t == u64::MAX {
            return;
        }
        if t > self.cur && t - self.cur < SLOTS as u64 {
            let slot = t as usize % SLOTS;
            self.wheel[slot * self.words + s / 64] |= 1 << (s % 64);
            self.summary[slot / 64] |= 1 << (slot % 64);
        } else {
            self.later.push(Reverse((t, s)));
        }
    }

    /// The earliest queued wake (`u64::MAX`: none).
    pub fn next(&self) -> u64 {
        let later = self.later.peek().map_or(u64::MAX, |Reverse((t, _))| *t);
        // The first non-empty slot after `cur`, circularly: slots hold
        // cycles in `(cur, cur + SLOTS)`, so that is the earliest.
        let from = (self.cur as usize + 1) % SLOTS;
        let n = SLOTS / 64;
        for i in 0..=n {
            let wi = (from / 64 + i) % n;
            let mut b = self.summary[wi];
            if i == 0 {
                b &= u64::MAX << (from % 64);
            } else if i == n {
                b &= !(u64::MAX << (from % 64));
            }
            if b != 0 {
                let slot = wi * 64 + b.trailing_zeros() as usize;
                let t = self.cur + 1 + ((slot + SLOTS - from) % SLOTS) as u64;
                return t.min(later);
            }
        }
        later
    }

    /// Takes the SMs due at `t` (the earliest wake) into `out`, in index
    /// order.
    pub fn take(&mut self, t: u64, out: &mut Vec<usize>) {
        out.clear();
        let slot = t as usize % SLOTS;
        let in_wheel = t > self.cur && t - self.cur < SLOTS as u64;
        let row = slot * self.words..(slot + 1) * self.words;
        // Out of the wheel's reach, `t` is the earliest wake: the wheel is
        // empty and the heap gives the SMs in index order.
        while let Some(&Reverse((tw, s))) = self.later.peek() {
            if tw != t {
                break;
            }
            self.later.pop();
            if in_wheel {
                self.wheel[slot * self.words + s / 64] |= 1 << (s % 64);
            } else {
                out.push(s);
            }
        }
        if in_wheel {
            self.summary[slot / 64] &= !(1 << (slot % 64));
            for (i, w) in self.wheel[row].iter_mut().enumerate() {
                let mut b = std::mem::take(w);
                while b != 0 {
                    out.push(i * 64 + b.trailing_zeros() as usize);
                    b &= b - 1;
                }
            }
        }
        self.cur = t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The queue visits the same SMs in the same order as scanning every
    /// SM's wake cycle, over random wakes near and far.
    #[test]
    fn visits_as_a_scan_of_all_wakes_does() {
        let n = 70;
        let mut wake = vec![u64::MAX; n];
        let mut q = WakeQueue::new(n);
        let mut x = 12345u64;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for (s, w) in wake.iter_mut().enumerate() {
            *w = 5 + rnd(4);
            q.push(s, *w);
        }
        let mut out = vec![];
        let mut visits = 0;
        for _ in 0..20_000 {
            let t = wake.iter().copied().min().unwrap();
            assert_eq!(q.next(), t);
            if t == u64::MAX {
                break;
            }
            let scan: Vec<usize> = (0..n).filter(|&s| wake[s] == t).collect();
            q.take(t, &mut out);
            assert_eq!(out, scan, "cycle {t}");
            for &s in &scan {
                wake[s] = match rnd(10) {
                    0..=5 => t + 1,
                    6 => t + 1 + rnd(3000),
                    7..=8 => t + 1 + rnd(40),
                    _ if rnd(50) == 0 => u64::MAX,
                    _ => t + 2,
                };
                q.push(s, wake[s]);
                visits += 1;
            }
        }
        assert!(visits > 5_000, "{visits}");
    }
}
