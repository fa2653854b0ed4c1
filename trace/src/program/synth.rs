//! The synthetic benchmark program (`docs/trace-format.md`, "Programs",
//! "The benchmark program"): a large, parameterised program for speed
//! measurements, generated CTA by CTA from (seed, kernel, CTA, warp) so it is
//! never held whole in memory.

use crate::types::Scope;

use super::{Addrs, CtaCode, Instr, KernelInfo, Program, Space, Values, WARP_LANES};

/// Start of the PM data: warp `g` of the grid (`cta * warps + warp`) owns
/// the 64 KiB (512 lines) at `SYNTH_PM_BASE + g * 64 KiB`, in every kernel.
/// The volatile data and the flag words follow, each region starting at the
/// next 4 GiB boundary ([`SynthProgram::global_base`],
/// [`SynthProgram::flag_base`]), so the regions never overlap and small
/// programs keep small addresses.
pub const SYNTH_PM_BASE: u64 = 1 << 32;
/// Regions start at multiples of this.
const REGION_ALIGN: u64 = 1 << 32;

const LINE: u64 = 128;
const PM_WARP_BYTES: u64 = 64 * 1024;
const GLOBAL_CTA_BYTES: u64 = 256 * 1024;
/// A release/acquire pair at slot 15 of every 32; a barrier at slot 63 of
/// every 64; an oFence after every 8 stores.
const PAIR_EVERY: u32 = 32;
const PAIR_SLOT: u32 = 15;
const BAR_EVERY: u32 = 64;
const STORES_PER_OFENCE: u32 = 8;

const MAX_KERNELS: u32 = 1024;
const MAX_CTAS: u32 = 1 << 20;
const MAX_INSTRS: u32 = 1 << 24;

/// A small, fast generator (64-bit state, splitmix-style output mixing);
/// statistical quality hardly matters, determinism does.
struct Rng(u64);

impl Rng {
    fn new(parts: [u64; 4]) -> Rng {
        let mut r = Rng(0);
        for p in parts {
            r.0 ^= p;
            r.next();
        }
        r
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The synthetic benchmark program. Every warp of every CTA runs
/// `instrs_per_warp` instructions; see the doc section for the mix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SynthProgram {
    kernels: Vec<KernelInfo>,
    ctas: u32,
    warps: u32,
    instrs: u32,
    seed: u64,
    global_base: u64,
    flag_base: u64,
}

impl SynthProgram {
    /// Checks the sizes: 1..=1024 kernels, 1..=2^20 CTAs per kernel, 1..=64
    /// warps per CTA, 1..=2^24 instructions per warp.
    pub fn new(
        kernels: u32,
        ctas_per_kernel: u32,
        warps_per_cta: u32,
        instrs_per_warp: u32,
        seed: u64,
    ) -> Result<SynthProgram, String> {
        let check = |what: &str, v: u32, max: u32| {
            if v == 0 || v > max {
                Err(format!("synthetic program: {what} {v} not in 1..={max}"))
            } else {
                Ok(())
            }
        };
        check("kernels", kernels, MAX_KERNELS)?;
        check("CTAs per kernel", ctas_per_kernel, MAX_CTAS)?;
        check("warps per CTA", warps_per_cta, crate::types::MAX_WARPS)?;
        check("instructions per warp", instrs_per_warp, MAX_INSTRS)?;
        let kernels = (0..kernels)
            .map(|k| KernelInfo {
                name: format!("synth{k}"),
                grid: ctas_per_kernel,
                block: warps_per_cta * WARP_LANES,
                regs: 32,
                smem: 0,
            })
            .collect();
        // At most 2^26 warps x 64 KiB and 2^20 CTAs x 256 KiB: no overflow.
        let pm_end = SYNTH_PM_BASE + ctas_per_kernel as u64 * warps_per_cta as u64 * PM_WARP_BYTES;
        let global_base = pm_end.next_multiple_of(REGION_ALIGN);
        let global_end = global_base + ctas_per_kernel as u64 * GLOBAL_CTA_BYTES;
        Ok(SynthProgram {
            kernels,
            ctas: ctas_per_kernel,
            warps: warps_per_cta,
            instrs: instrs_per_warp,
            seed,
            global_base,
            flag_base: global_end.next_multiple_of(REGION_ALIGN),
        })
    }

    /// Instructions of the whole program (all kernels, CTAs and warps).
    pub fn total_instrs(&self) -> u64 {
        self.kernels.len() as u64 * self.ctas as u64 * self.warps as u64 * self.instrs as u64
    }

    /// Start of the volatile data: CTA `c` owns the 256 KiB at
    /// `global_base() + c * 256 KiB`.
    pub fn global_base(&self) -> u64 {
        self.global_base
    }

    /// Start of the flag words: one word per release, never reused, so an
    /// acquire can never miss the value it waits for.
    pub fn flag_base(&self) -> u64 {
        self.flag_base
    }

    /// The flag word of release number `n` of CTA `cta` of kernel `k`.
    fn flag(&self, k: usize, cta: u32, n: u32) -> u64 {
        let pairs = (self.instrs / PAIR_EVERY + 1) as u64;
        let slot = ((k as u64 * self.ctas as u64) + cta as u64) * pairs + n as u64;
        self.flag_base + 8 * slot
    }

    /// The code of warp `warp` of CTA `cta` of kernel `k` (empty when out of
    /// range).
    pub fn warp_code(&self, k: usize, cta: u32, warp: u32) -> Vec<Instr> {
        if k >= self.kernels.len() || cta >= self.ctas || warp >= self.warps {
            return Vec::new();
        }
        let mut rng = Rng::new([self.seed, k as u64, cta as u64, warp as u64]);
        let g = cta as u64 * self.warps as u64 + warp as u64;
        let pm = SYNTH_PM_BASE + g * PM_WARP_BYTES;
        let vol = self.global_base + cta as u64 * GLOBAL_CTA_BYTES;
        let pm_lines = PM_WARP_BYTES / LINE;
        let mut stores = 0u64;
        let mut ofence_due = false;
        let n = self.instrs;
        let mut code = Vec::with_capacity(n as usize);
        for i in 0..n {
            let pair = self.warps >= 2 && warp < 2 && i % PAIR_EVERY == PAIR_SLOT;
            let instr = if i == n - 1 {
                Instr::DFence
            } else if i % BAR_EVERY == BAR_EVERY - 1 {
                // Every warp has the same slots, so all reach each barrier.
                Instr::Bar
            } else if pair {
                // Warp 0 releases a fresh word with the pair's count; warp 1
                // waits for exactly that count on the same word, at the same
                // slot. Warp 0 never waits on warp 1 except at barriers,
                // which warp 1 reaches only after the acquire: no deadlock.
                let j = i / PAIR_EVERY;
                let flag = self.flag(k, cta, j);
                if warp == 0 {
                    Instr::PRel {
                        scope: Scope::Block,
                        space: Space::Global,
                        flag,
                        value: j as u64 + 1,
                    }
                } else {
                    Instr::PAcq {
                        scope: Scope::Block,
                        space: Space::Global,
                        flag,
                        want: j as u64 + 1,
                        mask: u64::MAX,
                    }
                }
            } else if ofence_due {
                ofence_due = false;
                Instr::OFence
            } else {
                match rng.below(100) {
                    0..=34 => {
                        // Coalesced: 32 lanes x 4 bytes = one line, walking
                        // the warp's ring of lines.
                        let base = pm + (stores % pm_lines) * LINE;
                        // Values fit 4 bytes: (count mod 2^23) * 32 + lane.
                        let first = ((k as u64 * 7919 + stores) & 0x7f_ffff) << 5;
                        stores += 1;
                        ofence_due = stores.is_multiple_of(STORES_PER_OFENCE as u64);
                        Instr::St {
                            space: Space::Pm,
                            size: 4,
                            mask: u32::MAX,
                            addrs: Addrs::Strided { base, stride: 4 },
                            values: Values::Seq { first, step: 1 },
                        }
                    }
                    35..=49 => {
                        // 4 bytes every 8 or 16: two or four lines.
                        let stride = if rng.below(2) == 0 { 8 } else { 16 };
                        let span_lines = (32 * stride as u64).div_ceil(LINE);
                        let base = pm + rng.below(pm_lines - span_lines) * LINE;
                        Instr::Ld {
                            space: Space::Pm,
                            size: 4,
                            mask: u32::MAX,
                            addrs: Addrs::Strided { base, stride },
                        }
                    }
                    50..=69 => {
                        // 32 lanes x 8 bytes: two lines.
                        let lines = GLOBAL_CTA_BYTES / LINE;
                        let base = vol + rng.below(lines - 2) * LINE;
                        Instr::Ld {
                            space: Space::Global,
                            size: 8,
                            mask: u32::MAX,
                            addrs: Addrs::Strided { base, stride: 8 },
                        }
                    }
                    _ => Instr::Compute {
                        cycles: 4 + rng.below(17) as u32,
                    },
                }
            };
            code.push(instr);
        }
        code
    }
}

impl Program for SynthProgram {
    fn name(&self) -> &str {
        "synth"
    }
    fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }
    fn cta(&self, k: usize, cta: u32) -> CtaCode {
        if k >= self.kernels.len() || cta >= self.ctas {
            return CtaCode::default();
        }
        CtaCode {
            warps: (0..self.warps).map(|w| self.warp_code(k, cta, w)).collect(),
        }
    }
}
