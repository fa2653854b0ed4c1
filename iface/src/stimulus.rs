//! Seeded per-cycle stimulus of the unit's ports (`docs/microarch.md` §2):
//! one random-number generator and one raw stimulus for every fuzz run,
//! lockstep benchmark and speed example of the workspace.

use crate::{Op, PbIn, PbOut, PbParams, PbUnit};

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

/// Raw per-cycle stimulus: any request in any cycle, random flush
/// back-pressure, acknowledgements, invalidation answers and drains. The
/// spec defines the unit's behaviour for every input sequence (replays,
/// dropped acks with an error), so this explores corners no front end
/// would reach.
///
/// Closed loop: call [`RawStimulus::observe`] with each cycle's inputs and
/// outputs, and the stimulus plays a sloppy L1: it remembers the hooks the
/// responses return (so stores hit their entries and coalesce), acknowledges
/// flushes it saw taken, in random order and bursts, and answers
/// invalidations. Open loop (never observed), hooks and acks are random.
#[derive(Clone, Debug)]
pub struct RawStimulus {
    rng: Rng,
    profile: Profile,
    /// Corners: cycles left in the current phase, and which phase it is.
    phase_left: u32,
    phase: Phase,
    /// Corners: the unit's head (`obs_head`) and whether the last aimed
    /// request was an oFence (the next one is then an eviction).
    head: u32,
    aimed_fence: bool,
    warps: u32,
    lines: u32,
    entries: u32,
    /// Hook per line (valid, index), from observed responses.
    hooks: Vec<(bool, u32)>,
    /// Lines of taken requests awaiting their response (op, line).
    inflight: std::collections::VecDeque<(u8, u32)>,
    /// Unacknowledged taken flushes per epoch.
    pending: [u32; 4],
    observed: bool,
    inv_seen: bool,
    /// The last cycle had `rst`: this one is the unit's reset cycle (§7).
    rst_q: bool,
}

impl RawStimulus {
    pub fn new(p: &PbParams, seed: u64) -> RawStimulus {
        RawStimulus::with_profile(p, seed, Profile::Default)
    }

    /// A stimulus stressing `profile`'s corners.
    pub fn with_profile(p: &PbParams, seed: u64, profile: Profile) -> RawStimulus {
        RawStimulus {
            rng: Rng::new(seed),
            profile,
            phase_left: 0,
            phase: Phase::Normal,
            head: 0,
            aimed_fence: false,
            warps: p.warps,
            lines: p.lines,
            entries: p.entries,
            hooks: vec![(false, 0); p.lines as usize],
            inflight: Default::default(),
            pending: [0; 4],
            observed: false,
            inv_seen: false,
            rst_q: false,
        }
    }

    /// The next cycle's inputs.
    pub fn next_input(&mut self) -> PbIn {
        // Corners: draws of their own, before the default ones, so that the
        // default stream stays what it was.
        let corners = self.profile == Profile::Corners;
        if corners {
            if self.phase_left == 0 {
                self.phase = match self.rng.below(10) {
                    0..=3 => Phase::Starve,
                    4..=5 => Phase::Hold,
                    _ => Phase::Normal,
                };
                self.phase_left = 50 + self.rng.below(950) as u32;
            }
            self.phase_left -= 1;
        }
        let starve = corners && self.phase == Phase::Starve;
        let hold = corners && self.phase == Phase::Hold;
        // Starved of acks, ordering ops would soon wait on them and stop
        // the head: stores and evictions keep the flushes coming.
        let starve_op = starve && self.rng.chance(85);
        // Held: a flush taken now and then, so the PB stays full while
        // evictions still find room in the FIFO.
        let hold_pulse = hold && self.rng.chance(10);
        // Held, half the requests are aimed: an oFence (it coalesces into
        // the youngest entry of a full PB, or retires at the head), then an
        // eviction of the persist one or two entries past the head.
        let aim = if hold && self.observed && self.rng.chance(50) {
            self.aimed_fence = !self.aimed_fence;
            let warp = self.rng.below(self.warps as u64) as u8;
            if self.aimed_fence {
                Some((Op::OFence as u8, warp, None))
            } else {
                let idx = (self.head + 1 + self.rng.below(2) as u32) % self.entries;
                let line = self.hooks.iter().position(|&h| h == (true, idx));
                line.map(|l| (Op::Evict as u8, warp, Some((l as u32, idx))))
            }
        } else {
            None
        };
        let bogus_now = corners && !starve && self.rng.chance(2);
        let r = &mut self.rng;
        // Bias: phases with few acks and a held FIFO fill the PB and saturate ACTR.
        let slow = (r.next_u64() >> 60) < 3;
        let hot_lines = 8.min(self.lines as u64);
        let req_line = if r.chance(60) {
            r.below(hot_lines) as u32
        } else {
            r.below(self.lines as u64) as u32
        };
        let (pbv, pbidx) = if self.observed && r.chance(90) {
            self.hooks[req_line as usize]
        } else {
            (r.chance(50), r.below(self.entries as u64) as u32)
        };
        let (ack_count, ack_epoch) = if starve {
            (0, 0)
        } else if self.observed {
            let e = r.below(4) as usize;
            let n = self.pending[e].min(r.below(4) as u32);
            let bogus = r.below(3000) == 0 || bogus_now;
            if r.chance(if slow { 5 } else { 50 }) && n > 0 {
                self.pending[e] -= n;
                (n as u8, e as u8)
            } else if bogus {
                (1 + r.below(7) as u8, e as u8)
            } else {
                (0, 0)
            }
        } else if r.chance(if slow { 5 } else { 45 }) {
            (1 + r.below(3) as u8, r.below(4) as u8)
        } else {
            (0, 0)
        };
        let inv_done = if self.observed {
            self.inv_seen && r.chance(30)
        } else {
            r.chance(3)
        };
        if inv_done {
            self.inv_seen = false;
        }
        let mut inp = PbIn {
            rst: r.below(20_000) == 0,
            req_valid: r.chance(70),
            req_op: match r.below(100) {
                _ if starve_op => Op::Store as u8,
                _ if starve => Op::Evict as u8,
                0..=49 => Op::Store as u8,
                50..=59 => Op::Evict as u8,
                x => 1 + (x % 6) as u8,
            },
            // Now and then a warp id beyond the unit's warps (an error).
            req_warp: if r.below(2000) == 0 {
                r.below(64) as u8
            } else {
                r.below(self.warps as u64) as u8
            },
            req_line,
            req_pbv: pbv,
            req_pbidx: pbidx,
            flush_ready: (r.chance(if slow { 20 } else { 80 }) || starve) && (!hold || hold_pulse),
            ack_count,
            ack_epoch,
            inv_done,
            drain_all: r.below(500) == 0,
        };
        if let Some((op, warp, evict)) = aim {
            inp.req_valid = true;
            inp.req_op = op;
            inp.req_warp = warp;
            if let Some((line, idx)) = evict {
                (inp.req_line, inp.req_pbv, inp.req_pbidx) = (line, true, idx);
            }
        }
        inp
    }

    /// `n` cycles of closed-loop stimulus driven into `unit`, recorded: a
    /// ring that replays the same run on a fresh instance (benchmarks).
    pub fn record(&mut self, unit: &mut dyn PbUnit, n: usize) -> Vec<PbIn> {
        (0..n)
            .map(|_| {
                let i = self.next_input();
                let o = unit.step(&i);
                self.observe(&i, &o);
                i
            })
            .collect()
    }

    /// Feeds back one cycle (its inputs and the unit's outputs).
    pub fn observe(&mut self, inp: &PbIn, out: &PbOut) {
        self.observed = true;
        self.head = out.obs_head;
        // §7: the outputs of a cycle with rst and of the reset cycle after
        // it belong to the state the reset discards.
        let reset = inp.rst || self.rst_q;
        self.rst_q = inp.rst;
        if reset {
            self.inflight.clear();
            self.pending = [0; 4];
            self.inv_seen = false;
            return;
        }
        if out.rsp_valid {
            if let Some((op, line)) = self.inflight.pop_front() {
                if op == Op::Store as u8 && out.rsp_kind < 2 {
                    self.hooks[line as usize] = (true, out.rsp_idx);
                }
            }
        }
        if inp.req_valid && out.req_ready {
            self.inflight.push_back((inp.req_op, inp.req_line));
        }
        if out.flush_valid && inp.flush_ready {
            self.pending[out.flush_epoch as usize & 3] += 1;
        }
        // A new invalidation request: inv_req seen high after it was answered.
        if out.inv_req && !inp.inv_done {
            self.inv_seen = true;
        } else if !out.inv_req {
            self.inv_seen = false;
        }
    }
}

/// A phase of the corners profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Normal,
    /// No acks, flushes always taken, stores and evictions only: ACTR climbs.
    Starve,
    /// A flush taken in 10% of cycles: the FIFO and then the PB stay full.
    Hold,
}

/// What a raw stimulus stresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Profile {
    /// The stream every fuzz run and benchmark has used (kept bit for bit).
    #[default]
    Default,
    /// Corners the default stream seldom reaches (the mutation campaign's
    /// `corners` check, `docs/hardware.md` §5): phases of 50-1,000 cycles
    /// without acks (stores and evictions only, so that the flushes taken
    /// push ACTR to its maximum) or with few flushes taken (a full PB, half
    /// the requests aimed: an oFence, then an eviction of the entry one or
    /// two past the head), and
    /// bogus acks (more than the epoch has outstanding, an error the spec
    /// defines) in 2% of the other cycles instead of 1 in 3,000.
    Corners,
}

/// Open loop: the stimulus without feedback.
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
        assert!(a.iter().any(|i| i.ack_count > 0));
        assert!(a.iter().all(|i| i.req_line < p.lines));
    }

    /// The corners profile has its phases: 50 cycles in a row without acks
    /// and with every flush taken (ACTR climbs), and 50 with fewer than 15
    /// flushes taken (the PB fills); its stream is not the default one.
    #[test]
    fn corners_profile_starves_acks_and_holds_flushes() {
        let p = PbParams::default();
        let c: Vec<PbIn> = RawStimulus::with_profile(&p, 3, Profile::Corners)
            .take(20_000)
            .collect();
        let d: Vec<PbIn> = RawStimulus::new(&p, 3).take(20_000).collect();
        assert_ne!(c, d);
        let starved = c
            .windows(50)
            .any(|w| w.iter().all(|i| i.ack_count == 0 && i.flush_ready));
        let held = c
            .windows(50)
            .any(|w| w.iter().filter(|i| i.flush_ready).count() < 15);
        assert!(starved && held);
        assert!(!d
            .windows(50)
            .any(|w| w.iter().filter(|i| i.flush_ready).count() < 15));
    }
}
