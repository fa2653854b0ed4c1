//! Whole GPU programs (`docs/trace-format.md`, "Programs"): kernels launched
//! in sequence, each a grid of CTAs, each CTA a set of warps, each warp a list
//! of warp-level instructions carrying its active lanes' addresses (compact
//! forms for strided and broadcast accesses) and store values.
//!
//! A [`Program`] hands out one CTA's code when the GPU model launches that
//! CTA, so a generator never materializes the whole program; a program file
//! ([`FileProgram`]) is the same thing held in memory.
//!
//! Submodules: `text` (the file form, parser and writer), `litmus` (litmus
//! traces as programs), `synth` (the synthetic benchmark program).

use std::collections::BTreeMap;

use crate::expect::Expectation;
use crate::types::Scope;

mod litmus;
mod synth;
mod text;

#[cfg(test)]
mod tests;

pub use litmus::{litmus_flag_addr, litmus_flags, litmus_program, LITMUS_FLAG_BASE};
pub use synth::{SynthProgram, SYNTH_PM_BASE};
pub use text::{
    parse_program, program_to_text, write_instr, write_program, InstrKind, ProgramError,
    FLAG_ALIGN, INSTR_MNEMONICS, MAX_BLOCK, SIZES,
};

/// End of the usable address space: every byte an access or a flag word
/// touches lies below it (the top 64 KiB are reserved, so that line and
/// sector arithmetic never passes 2^64).
pub const ADDR_END: u64 = u64::MAX - 0xffff;

/// Lanes of a warp.
pub const WARP_LANES: u32 = 32;
/// Longest `compute` delay (cycles).
pub const MAX_COMPUTE: u32 = 1_000_000;

/// Memory space of an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// Persistent memory (the paper's PM: `gpm_map_file` / `cudaMallocPitch`).
    Pm,
    /// Volatile global memory (GDDR).
    Global,
    /// The CTA's shared memory: no memory-system traffic.
    Shared,
}

/// Addresses of the active lanes of a memory instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Addrs {
    /// Lane `i` accesses `base + i * stride` (stride 0: every lane the same
    /// address, a broadcast). Lanes are numbered 0..32 whether active or not.
    Strided { base: u64, stride: i64 },
    /// One address per active lane, in lane order.
    List(Vec<u64>),
}

impl Addrs {
    /// The address of lane `lane`, whose rank among the active lanes is `rank`.
    pub fn lane(&self, lane: u32, rank: usize) -> u64 {
        match self {
            Addrs::Strided { base, stride } => base.wrapping_add((lane as i64 * stride) as u64),
            Addrs::List(v) => v[rank],
        }
    }
}

/// Values a store writes, per active lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Values {
    /// Not given: the model tracks timing only for this store.
    Unknown,
    /// Every lane writes the same value.
    Same(u64),
    /// Lane of rank `r` writes `first + r * step`.
    Seq { first: u64, step: u64 },
    /// One value per active lane, in lane order.
    List(Vec<u64>),
}

impl Values {
    /// The value of the active lane of rank `rank`, if known.
    pub fn get(&self, rank: usize) -> Option<u64> {
        match self {
            Values::Unknown => None,
            Values::Same(v) => Some(*v),
            Values::Seq { first, step } => Some(first.wrapping_add(step.wrapping_mul(rank as u64))),
            Values::List(v) => v.get(rank).copied(),
        }
    }
}

/// Scope of a non-persistent fence (`__threadfence` / `__threadfence_system`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FenceScope {
    Device,
    System,
}

/// One warp-level instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instr {
    /// Load of `size` bytes per active lane.
    Ld {
        space: Space,
        size: u8,
        mask: u32,
        addrs: Addrs,
    },
    /// Store of `size` bytes per active lane.
    St {
        space: Space,
        size: u8,
        mask: u32,
        addrs: Addrs,
        values: Values,
    },
    /// Atomic read-modify-write per active lane, performed at the L2 (or in
    /// shared memory); the warp waits for the old values.
    Atom {
        space: Space,
        size: u8,
        mask: u32,
        addrs: Addrs,
    },
    /// Intra-thread persist ordering fence.
    OFence,
    /// Durability fence: the warp waits until its earlier persists are durable.
    DFence,
    /// Non-persistent memory fence.
    Fence(FenceScope),
    /// Persist-acquire: poll the word at `flag` (in `space`) until
    /// `value & mask == want`; every poll is one acquire.
    PAcq {
        scope: Scope,
        space: Space,
        flag: u64,
        want: u64,
        mask: u64,
    },
    /// Persist-release, then the store of `value` to the word at `flag`.
    PRel {
        scope: Scope,
        space: Space,
        flag: u64,
        value: u64,
    },
    /// `__syncthreads`: waits for every unfinished warp of the CTA.
    Bar,
    /// Compute (ALU, shared-memory work) for that many cycles.
    Compute { cycles: u32 },
}

/// A kernel launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: String,
    /// CTAs in the grid.
    pub grid: u32,
    /// Threads per CTA.
    pub block: u32,
    /// Registers per thread (0: unknown, occupancy then ignores registers).
    pub regs: u32,
    /// Shared memory per CTA, bytes.
    pub smem: u32,
}

impl KernelInfo {
    pub fn warps_per_cta(&self) -> u32 {
        self.block.div_ceil(WARP_LANES)
    }
}

/// The code of one CTA: one instruction list per warp.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CtaCode {
    pub warps: Vec<Vec<Instr>>,
}

impl CtaCode {
    pub fn instrs(&self) -> usize {
        self.warps.iter().map(Vec::len).sum()
    }
}

/// A whole program, CTA by CTA.
pub trait Program {
    fn name(&self) -> &str;
    fn kernels(&self) -> &[KernelInfo];
    /// The code of CTA `cta` of kernel `k`, built when the CTA is launched.
    fn cta(&self, k: usize, cta: u32) -> CtaCode;
    /// Expectations checked on the run's execution record (litmus traces).
    fn expects(&self) -> &[Expectation] {
        &[]
    }
    /// Extra GPU configuration the program asks for (`config KEY=VALUE` of
    /// a litmus trace), as (key, value, line).
    fn config(&self) -> &[(String, String, usize)] {
        &[]
    }
}

/// The code of a kernel's CTAs as ranges `lo..hi` sharing one code (a
/// `cta A..B` block), so memory follows the file, not the grid. Canonical:
/// ranges disjoint, adjacent ranges with equal code merged, CTAs without code
/// (no warps) left out, so equal kernels compare equal however built.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelCode {
    /// Start of each range -> (end, excluded; code).
    ranges: BTreeMap<u32, (u32, CtaCode)>,
}

impl KernelCode {
    /// The code of CTA `cta`, if it has any.
    pub fn get(&self, cta: u32) -> Option<&CtaCode> {
        let (_, (hi, code)) = self.ranges.range(..=cta).next_back()?;
        (cta < *hi).then_some(code)
    }

    /// The ranges in CTA order: (lo, hi excluded, code).
    pub fn ranges(&self) -> impl Iterator<Item = (u32, u32, &CtaCode)> {
        self.ranges.iter().map(|(lo, (hi, c))| (*lo, *hi, c))
    }

    /// The first CTA of `lo..hi` that already has code.
    pub fn overlap(&self, lo: u32, hi: u32) -> Option<u32> {
        let (l, (h, _)) = self.ranges.range(..hi).next_back()?;
        (*h > lo).then_some(lo.max(*l))
    }

    /// Gives CTAs `lo..hi` (none of them given before: `overlap`) `code`.
    pub fn insert(&mut self, mut lo: u32, mut hi: u32, code: CtaCode) {
        if lo >= hi || code.warps.is_empty() {
            return;
        }
        debug_assert!(self.overlap(lo, hi).is_none());
        if let Some((&l, (h, c))) = self.ranges.range(..lo).next_back() {
            if *h == lo && *c == code {
                lo = l;
            }
        }
        if self.ranges.get(&hi).is_some_and(|(_, c)| *c == code) {
            if let Some((h, _)) = self.ranges.remove(&hi) {
                hi = h;
            }
        }
        self.ranges.insert(lo, (hi, code));
    }
}

impl From<Vec<CtaCode>> for KernelCode {
    /// CTA `i` gets the code at index `i`.
    fn from(v: Vec<CtaCode>) -> KernelCode {
        let mut k = KernelCode::default();
        for (i, c) in v.into_iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX - 1);
            k.insert(i, i + 1, c);
        }
        k
    }
}

/// A program held in memory (a program file, or a litmus trace converted).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileProgram {
    pub name: String,
    pub kernels: Vec<KernelInfo>,
    /// Per kernel, the code of its CTAs (a CTA not given has no warps' code:
    /// its warps exit at once).
    pub code: Vec<KernelCode>,
    pub expects: Vec<Expectation>,
    pub config: Vec<(String, String, usize)>,
}

impl Program for FileProgram {
    fn name(&self) -> &str {
        &self.name
    }
    fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }
    fn cta(&self, k: usize, cta: u32) -> CtaCode {
        // Out of range (kernel or CTA): no code, rather than a panic.
        self.code
            .get(k)
            .and_then(|c| c.get(cta))
            .cloned()
            .unwrap_or_default()
    }
    fn expects(&self) -> &[Expectation] {
        &self.expects
    }
    fn config(&self) -> &[(String, String, usize)] {
        &self.config
    }
}

/// Checks what the GPU model needs of one instruction, whoever built it
/// (the parser refuses the same): active lanes, list lengths, sizes, every
/// byte below [`ADDR_END`], aligned flags, values that fit, a reachable
/// acquire value, bounded compute.
pub fn check_instr(i: &Instr) -> Result<(), String> {
    match i {
        Instr::Ld {
            size, mask, addrs, ..
        }
        | Instr::Atom {
            size, mask, addrs, ..
        }
        | Instr::St {
            size, mask, addrs, ..
        } => {
            if !SIZES.contains(size) {
                return Err(format!("size {size} is not one of 1, 2, 4, 8, 16"));
            }
            if *mask == 0 {
                return Err("mask 0 has no active lane".into());
            }
            let active = mask.count_ones() as usize;
            if let Addrs::List(v) = addrs {
                if v.len() != active {
                    return Err(format!(
                        "address list has {} entries but mask {mask:#x} has {active} active lanes",
                        v.len()
                    ));
                }
            }
            // A strided access whose lowest and highest active lanes lie
            // below the limit without wrapping has every lane there (the
            // lanes' addresses are monotone between them); else find the
            // first lane that does not, in lane order.
            let limit = ADDR_END - *size as u64;
            if let Addrs::Strided { base, stride } = addrs {
                let at = |l: u32| *base as i128 + l as i128 * *stride as i128;
                let (lo, hi) = (mask.trailing_zeros(), 31 - mask.leading_zeros());
                let ok = |a: i128| (0..=limit as i128).contains(&a);
                if ok(at(lo)) && ok(at(hi)) {
                    return check_values(i, *mask, *size, active);
                }
            }
            let lanes = (0..WARP_LANES).filter(|l| mask >> l & 1 == 1);
            for (r, l) in lanes.enumerate() {
                let a = addrs.lane(l, r);
                if a > limit {
                    return Err(format!(
                        "lane {l}'s access at {a:#x} reaches the reserved top of the address space (from {ADDR_END:#x})"
                    ));
                }
            }
            return check_values(i, *mask, *size, active);
        }
        Instr::PAcq { flag, .. } | Instr::PRel { flag, .. } => {
            if flag % FLAG_ALIGN != 0 {
                return Err(format!(
                    "flag address {flag:#x} is not {FLAG_ALIGN}-byte aligned"
                ));
            }
            if *flag > ADDR_END - 8 {
                return Err(format!(
                    "flag word at {flag:#x} reaches the reserved top of the address space (from {ADDR_END:#x})"
                ));
            }
            if let Instr::PAcq { want, mask, .. } = i {
                if want & !mask != 0 {
                    return Err(format!(
                        "wanted value {want:#x} has bits outside mask {mask:#x}: the acquire would spin forever"
                    ));
                }
            }
        }
        Instr::Compute { cycles } if *cycles > MAX_COMPUTE => {
            return Err(format!(
                "compute {cycles} too long (at most {MAX_COMPUTE} cycles)"
            ));
        }
        _ => {}
    }
    Ok(())
}

/// A store's values (`check_instr`): one per active lane, each fitting the size.
fn check_values(i: &Instr, mask: u32, size: u8, active: usize) -> Result<(), String> {
    let Instr::St { values, .. } = i else {
        return Ok(());
    };
    if let Values::List(v) = values {
        if v.len() != active {
            return Err(format!(
                "value list has {} entries but mask {mask:#x} has {active} active lanes",
                v.len()
            ));
        }
    }
    if size < 8 && !matches!(values, Values::Unknown) {
        let limit = 1u64 << (8 * size as u32);
        // A sequence that does not wrap grows: its last value is its largest.
        if let Values::Seq { first, step } = *values {
            let last = first as u128 + (active as u128 - 1) * step as u128;
            if last < limit as u128 {
                return Ok(());
            }
        }
        if let Some((r, v)) = (0..active)
            .filter_map(|r| values.get(r).map(|v| (r, v)))
            .find(|(_, v)| *v >= limit)
        {
            return Err(format!(
                "value {v} of lane rank {r} does not fit size {size}"
            ));
        }
    }
    Ok(())
}
