//! Seeded per-cycle stimulus of the unit's ports (`docs/microarch.md` §2):
//! one random-number generator and one raw stimulus for every fuzz run,
//! lockstep benchmark and speed example of the workspace.

use crate::{Op, PbIn, PbParams};

/// A small seeded generator (SplitMix64): reproducible across platforms and
/// versions, which a crate's generator need not be.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        (((self.next_u64() >> 11) as u128 * n as u128) >> 53) as u64
    }
    /// True with probability `p_percent`/100.
    pub fn chance(&mut self, p_percent: u64) -> bool {
        self.below(100) < p_percent
    }
}

/// Raw per-cycle stimulus: any request in any cycle, random acks and drains.
/// The spec defines the unit's behaviour for every input sequence (refusals,
/// ignored acks), so this explores corners no front end would reach.
#[derive(Clone, Debug)]
pub struct RawStimulus {
    rng: Rng,
    warps: u32,
    lines: u32,
}

impl RawStimulus {
    pub fn new(p: &PbParams, seed: u64) -> RawStimulus {
        RawStimulus {
            rng: Rng::new(seed),
            warps: p.warps,
            lines: p.lines,
        }
    }

    /// The next cycle's inputs.
    pub fn next_input(&mut self) -> PbIn {
        let r = &mut self.rng;
        // Bias: phases with few acks fill the PB and saturate ACTR.
        let ack_pct = if (r.next_u64() >> 60) < 3 { 5 } else { 45 };
        let hot_lines = 8.min(self.lines as u64);
        PbIn {
            rst: r.below(20_000) == 0,
            req_valid: r.chance(70),
            req_op: match r.below(100) {
                0..=49 => Op::Store as u8,
                50..=59 => Op::Evict as u8,
                x => 1 + (x % 6) as u8,
            },
            // Now and then a warp id beyond the unit's warps (refused).
            req_warp: if r.below(200) == 0 {
                r.below(64) as u8
            } else {
                r.below(self.warps as u64) as u8
            },
            req_line: if r.chance(60) {
                r.below(hot_lines) as u32
            } else {
                r.below(self.lines as u64) as u32
            },
            ack: r.chance(ack_pct),
            drain_all: r.below(500) == 0,
        }
    }
}

impl Iterator for RawStimulus {
    type Item = PbIn;
    fn next(&mut self) -> Option<PbIn> {
        Some(self.next_input())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_other_seed_other_stream() {
        let p = PbParams::default();
        let a: Vec<PbIn> = RawStimulus::new(&p, 3).take(500).collect();
        let b: Vec<PbIn> = RawStimulus::new(&p, 3).take(500).collect();
        let c: Vec<PbIn> = RawStimulus::new(&p, 4).take(500).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.iter().any(|i| i.req_valid && i.req_op == Op::Evict as u8));
        assert!(a.iter().any(|i| i.ack));
        assert!(a.iter().all(|i| i.req_line < p.lines));
    }
}
