//! Scan: a block-local exclusive scan of 512-element arrays whose
//! intra-block Hillis-Steele steps go through a persistent double buffer
//! (`s_Data`) with persistent flags instead of `__syncthreads`. Follows
//! `../shared/notes/sbrp-benchmarks.md` §2.6 (data, per-thread sequence,
//! recovery), §2.0 (what is timed, crash emulation), §2.7 (sizes) and §6
//! items 14 (all kernels timed), 16 (8 blocks per SM: thread-limited, so
//! `regs` is left unknown) and 19 (inputs).
//!
//! Each thread holds 4 elements; their sum is level 0 of a 7-step scan over
//! the block's 128 sums (offsets 1, 2, ..., 64). Level `L` lives in copy
//! `L % 2` of the block's `s_Data`; level 7 (copy 1) minus the thread's own
//! sum is its exclusive base.
//!
//! Decisions where the note leaves room:
//! - Flags are per warp, not per thread: a `prel` is one warp instruction
//!   storing one 8-byte word, so the 32 lanes' flag bytes of a warp become
//!   one word, placed at the offset of its first lane's byte (warp `w` of
//!   copy `c` at `locks + 256 b + 128 c + 32 w`), so the flag lines are the
//!   artifact's (one line per copy per block, shared by the 4 warps).
//!   Lanes reading a neighbour in their own warp need no flag; a warp waits
//!   only on the one other warp it reads (`w - max(1, offset / 32)`), marks
//!   that warp's word consumed, and waits for its own word to be consumed
//!   only when another warp reads it.
//! - Flag values are the level plus one (the artifact's `ctr` plus one) and
//!   bit 7 marks "consumed": the zeroed locks then mean "nothing written"
//!   (in the artifact the initial release of 0 cannot be told from the
//!   zeroed locks). Waits for a level compare the low 7 bits only.
//! - Inputs are all 1 as in the artifact, or 32-bit values drawn from a seed
//!   (`with_seed`); sums wrap as `uint` does.
//! - `crash_program` (Scan_rec): the scan kernel cut after its first
//!   `CRASH_ITERS` = 4 of 7 iterations, with neither the final dFence nor the
//!   output: a crash mid-scan, where the flags matter (the note does not say
//!   where the artifact's crash falls; `with_crash_iters` moves it).
//! - `recovery`: per warp, loads of both flag words, a dummy read-modify-write
//!   of the warp's values in the copy of the later level (rewriting the value
//!   read), then a dFence; the redo is not implemented (§2.6).
//! - The invariant (§2.6: flag k means level k is durable and computed from
//!   durable level k-1) is checked on the copy whose flag names the later
//!   level, the last completed iteration recovery looks for; the other copy
//!   may hold level L or, mid-overwrite, level L + 2 per value (a warp that
//!   no other warp reads overwrites it without waiting, as the artifact's
//!   threads without a reader do). Crash images cut from model runs at any
//!   cycle pass this check; the stricter reading (both copies) fails them.
//!   Orderings it relies on: a warp's flag word for level L is released (a
//!   PM store, block scope) after its store of the level-L values, and a
//!   warp reads another warp's level L-1 only after acquiring that warp's
//!   flag, so the values it stores were computed from durable inputs.
//! - Sizes: a positive multiple of 512 elements, at most 16,384 arrays (the
//!   images stay small).

use sbrp_trace::program::{CtaCode, FenceScope, Instr, KernelInfo, Program, Space, Values};
use sbrp_trace::Scope;

use crate::incremental::{reevaluate, Broken, Incremental};
use crate::layout::{self, Alloc};
use crate::{App, Build, PmImage};

pub const THREADS: u32 = 128;
pub const WARPS: u32 = THREADS / 32;
/// Elements per array (one array per block).
pub const ARRAY: u32 = 512;
/// Hillis-Steele steps over 128 sums.
pub const ITERS: u32 = 7;
pub const DEFAULT_ELEMS: u64 = 122_880;
pub const MAX_BLOCKS: u64 = 16_384;
/// Iterations the crash program completes.
pub const CRASH_ITERS: u32 = 4;
/// Bit of a flag word: the value was read by its other-warp consumer.
pub const CONSUMED: u64 = 0x80;
const LEVEL_MASK: u64 = 0x7f;
/// `s_Data` as the host initialises it (all-ones bytes).
const SDATA_INIT: u64 = 0xffff_ffff;

pub struct Scan {
    elems: u64,
    blocks: u32,
    seed: Option<u64>,
    crash_iters: u32,
    input: u64,
    output: u64,
    sdata: u64,
    locks: u64,
}

/// Offset of iteration `ctr` and the warp distance of its other-warp reads.
fn step(ctr: u32) -> (u32, u32) {
    let o = 1 << ctr;
    (o, (o / 32).max(1))
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Scan {
    pub fn new(size: Option<u64>) -> Result<Self, String> {
        let elems = size.unwrap_or(DEFAULT_ELEMS);
        if elems == 0 || !elems.is_multiple_of(ARRAY as u64) {
            return Err(format!(
                "scan: size {elems} elements is not a positive multiple of the array length {ARRAY}"
            ));
        }
        let blocks = elems / ARRAY as u64;
        if blocks > MAX_BLOCKS {
            return Err(format!(
                "scan: size {elems} elements needs {blocks} arrays, more than {MAX_BLOCKS}"
            ));
        }
        let mut a = Alloc::default();
        let sdata = a.pm(blocks * 2 * THREADS as u64 * 4);
        let locks = a.pm(blocks * 2 * THREADS as u64);
        let input = a.global(elems * 4);
        let output = a.global(elems * 4);
        Ok(Scan {
            elems,
            blocks: blocks as u32,
            seed: None,
            crash_iters: CRASH_ITERS,
            input,
            output,
            sdata,
            locks,
        })
    }

    /// Inputs drawn from `seed` instead of all 1.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The crash program completes `iters` of the 7 iterations.
    pub fn with_crash_iters(mut self, iters: u32) -> Result<Self, String> {
        if iters > ITERS {
            return Err(format!("scan: crash after {iters} iterations, of {ITERS}"));
        }
        self.crash_iters = iters;
        Ok(self)
    }

    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    pub fn input(&self, i: u64) -> u32 {
        match self.seed {
            None => 1,
            Some(s) => splitmix(s ^ splitmix(i)) as u32,
        }
    }

    /// The values of levels 0..=7 of block `b`, per thread.
    pub fn levels(&self, b: u32) -> Vec<[u32; THREADS as usize]> {
        let mut lv = Vec::with_capacity(ITERS as usize + 1);
        let mut cur = [0u32; THREADS as usize];
        for (t, v) in cur.iter_mut().enumerate() {
            let base = b as u64 * ARRAY as u64 + 4 * t as u64;
            *v = (0..4).fold(0u32, |s, j| s.wrapping_add(self.input(base + j)));
        }
        lv.push(cur);
        for ctr in 0..ITERS {
            let (o, _) = step(ctr);
            let prev = cur;
            for t in o as usize..THREADS as usize {
                cur[t] = prev[t].wrapping_add(prev[t - o as usize]);
            }
            lv.push(cur);
        }
        lv
    }

    /// The exclusive scan of array `b` (the kernel's volatile output).
    pub fn output(&self, b: u32) -> Vec<u32> {
        let lv = self.levels(b);
        let mut out = Vec::with_capacity(ARRAY as usize);
        let (last, sums) = (&lv[ITERS as usize], &lv[0]);
        for (t, (&incl, &own)) in last.iter().zip(sums).enumerate() {
            let mut s = incl.wrapping_sub(own);
            for j in 0..4 {
                out.push(s);
                s = s.wrapping_add(self.input(b as u64 * ARRAY as u64 + 4 * t as u64 + j));
            }
        }
        out
    }

    /// `s_Data` of warp `w` (lane 0) in copy `c` of block `b`.
    pub fn data_addr(&self, b: u32, c: u32, w: u32) -> u64 {
        self.sdata + b as u64 * 1024 + c as u64 * 512 + w as u64 * 128
    }
    /// The flag word of warp `w` in copy `c` of block `b`.
    pub fn flag_addr(&self, b: u32, c: u32, w: u32) -> u64 {
        self.locks + b as u64 * 256 + c as u64 * 128 + w as u64 * 32
    }
    fn io_addr(base: u64, b: u32, w: u32) -> u64 {
        base + b as u64 * ARRAY as u64 * 4 + w as u64 * 512
    }

    /// Flag words of block `b` after `iters` iterations, `[copy][warp]`.
    fn flags(iters: u32) -> [[u64; WARPS as usize]; 2] {
        let mut f = [[0u64; WARPS as usize]; 2];
        for w in f[0].iter_mut() {
            *w = 1;
        }
        for ctr in 0..iters {
            let (_, d) = step(ctr);
            let (cur, nxt) = ((ctr % 2) as usize, (1 - ctr % 2) as usize);
            for w in 0..WARPS {
                if w + d < WARPS {
                    f[cur][w as usize] = CONSUMED | (ctr as u64 + 1);
                }
                f[nxt][w as usize] = ctr as u64 + 2;
            }
        }
        f
    }

    fn image(&self, iters: u32) -> PmImage {
        let mut img = self.initial_image();
        let f = Self::flags(iters);
        for b in 0..self.blocks {
            let lv = self.levels(b);
            // The latest level written to each copy.
            for l in 0..=iters {
                let c = l % 2;
                for w in 0..WARPS {
                    for lane in 0..32 {
                        let v = lv[l as usize][(w * 32 + lane) as usize];
                        img.set(self.data_addr(b, c, w) + 4 * lane as u64, v as u64);
                    }
                }
            }
            for c in 0..2 {
                for w in 0..WARPS {
                    img.set(self.flag_addr(b, c, w), f[c as usize][w as usize]);
                }
            }
        }
        img
    }

    /// The scan kernel's code for block `b`, running `iters` iterations and,
    /// when `full`, the final dFence and output.
    fn scan_cta(&self, build: Build, b: u32, iters: u32, full: bool) -> CtaCode {
        let lv = self.levels(b);
        let all = u32::MAX;
        let mut warps = Vec::with_capacity(WARPS as usize);
        for w in 0..WARPS {
            let vals = |l: u32| {
                let s = (w * 32) as usize;
                Values::List(
                    lv[l as usize][s..s + 32]
                        .iter()
                        .map(|&v| v as u64)
                        .collect(),
                )
            };
            let mut v = Vec::new();
            // uint4 input, the 4-element scan, level 0 into copy 0.
            let inp = Self::io_addr(self.input, b, w);
            v.push(layout::ld(Space::Global, 16, all, inp, 16));
            v.push(Instr::Compute { cycles: 4 });
            v.push(layout::st(
                Space::Pm,
                4,
                all,
                self.data_addr(b, 0, w),
                4,
                vals(0),
            ));
            let f0 = self.flag_addr(b, 0, w);
            push(&mut v, build, layout::prel(Scope::Block, Space::Pm, f0, 1));
            for ctr in 0..iters {
                let (o, d) = step(ctr);
                let (cur, nxt) = (ctr % 2, 1 - ctr % 2);
                let lvl = ctr as u64 + 1;
                let own = self.data_addr(b, cur, w);
                v.push(layout::ld(Space::Pm, 4, all, own, 4));
                // Lanes with a left neighbour at distance `o`.
                let first = o.saturating_sub(w * 32);
                if first < 32 {
                    let m = all << first;
                    let producer = w.checked_sub(d);
                    if let Some(p) = producer {
                        let fp = self.flag_addr(b, cur, p);
                        let acq = Instr::PAcq {
                            scope: Scope::Block,
                            space: Space::Pm,
                            flag: fp,
                            want: lvl,
                            mask: LEVEL_MASK,
                        };
                        push(&mut v, build, acq);
                    }
                    let nb = own - 4 * o as u64;
                    v.push(layout::ld(Space::Pm, 4, m, nb, 4));
                    if let Some(p) = producer {
                        let fp = self.flag_addr(b, cur, p);
                        let rel = layout::prel(Scope::Block, Space::Pm, fp, CONSUMED | lvl);
                        push(&mut v, build, rel);
                    }
                }
                // Another warp reads this one: wait until it has.
                if w + d < WARPS {
                    let fo = self.flag_addr(b, cur, w);
                    let acq = layout::pacq(Scope::Block, Space::Pm, fo, CONSUMED | lvl);
                    push(&mut v, build, acq);
                }
                let dst = self.data_addr(b, nxt, w);
                v.push(layout::st(Space::Pm, 4, all, dst, 4, vals(ctr + 1)));
                let fn_ = self.flag_addr(b, nxt, w);
                push(
                    &mut v,
                    build,
                    layout::prel(Scope::Block, Space::Pm, fn_, lvl + 1),
                );
            }
            if full {
                push(&mut v, build, Instr::DFence);
                v.push(layout::ld(Space::Pm, 4, all, self.data_addr(b, 1, w), 4));
                v.push(Instr::Compute { cycles: 4 });
                let out = Self::io_addr(self.output, b, w);
                v.push(layout::st(Space::Global, 16, all, out, 16, Values::Unknown));
            }
            warps.push(v);
        }
        CtaCode { warps }
    }

    /// The copy recovery reads and rewrites: the one holding the later level.
    fn recovery_copy(&self, img: &PmImage, b: u32, w: u32) -> u32 {
        let l0 = img.get(self.flag_addr(b, 0, w)) & LEVEL_MASK;
        let l1 = img.get(self.flag_addr(b, 1, w)) & LEVEL_MASK;
        u32::from(l1 > l0)
    }

    fn recovery_cta(&self, img: &PmImage, b: u32) -> CtaCode {
        let all = u32::MAX;
        let mut warps = Vec::with_capacity(WARPS as usize);
        for w in 0..WARPS {
            let mut v = Vec::new();
            for c in 0..2 {
                v.push(layout::ld(Space::Pm, 8, all, self.flag_addr(b, c, w), 0));
            }
            v.push(Instr::Compute { cycles: 4 });
            let a = self.data_addr(b, self.recovery_copy(img, b, w), w);
            v.push(layout::ld(Space::Pm, 4, all, a, 4));
            let vals = (0..32).map(|l| img.get(a + 4 * l)).collect();
            v.push(layout::st(Space::Pm, 4, all, a, 4, Values::List(vals)));
            v.push(Instr::DFence);
            warps.push(v);
        }
        CtaCode { warps }
    }

    fn kernel(&self, name: &str) -> KernelInfo {
        KernelInfo {
            name: name.into(),
            grid: self.blocks,
            block: THREADS,
            regs: 0,
            smem: 0,
        }
    }
}

/// Pushes `i`; the GPM build follows every persistency op with a
/// `__threadfence` (§2.0).
fn push(v: &mut Vec<Instr>, build: Build, i: Instr) {
    let persistency = matches!(
        i,
        Instr::OFence | Instr::DFence | Instr::PAcq { .. } | Instr::PRel { .. }
    );
    v.push(i);
    if persistency && build == Build::Gpm {
        v.push(Instr::Fence(FenceScope::Device));
    }
}

enum Kind {
    Run {
        build: Build,
        iters: u32,
        full: bool,
    },
    Recovery(PmImage),
}

struct ScanProgram<'a> {
    app: &'a Scan,
    name: String,
    kernels: Vec<KernelInfo>,
    kind: Kind,
}

impl Program for ScanProgram<'_> {
    fn name(&self) -> &str {
        &self.name
    }
    fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }
    fn cta(&self, k: usize, cta: u32) -> CtaCode {
        if k >= self.kernels.len() || cta >= self.app.blocks {
            return CtaCode::default();
        }
        match &self.kind {
            Kind::Run { build, iters, full } => self.app.scan_cta(*build, cta, *iters, *full),
            Kind::Recovery(img) => self.app.recovery_cta(img, cta),
        }
    }
}

impl Scan {
    /// The invariant for warp `w` of block `b` (`lv`: the block's levels,
    /// computed on first use).
    fn check_warp(
        &self,
        image: &PmImage,
        b: u32,
        w: u32,
        lv: &mut Option<Vec<[u32; THREADS as usize]>>,
    ) -> Result<(), String> {
        let mut lvls = [0u64; 2];
        for c in 0..2u32 {
            let f = image.get(self.flag_addr(b, c, w));
            let lvl = f & LEVEL_MASK;
            if f & !(LEVEL_MASK | CONSUMED) != 0 || lvl > ITERS as u64 + 1 || (lvl == 0 && f != 0) {
                return Err(format!(
                    "block {b} warp {w}: flag of copy {c} holds {f:#x}, no level"
                ));
            }
            if lvl != 0 && (lvl - 1) % 2 != c as u64 {
                return Err(format!(
                    "block {b} warp {w}: flag of copy {c} says level {}, which lives in copy {}",
                    lvl - 1,
                    (lvl - 1) % 2
                ));
            }
            lvls[c as usize] = lvl;
        }
        let top = usize::from(lvls[1] > lvls[0]);
        for (c, &lvl) in lvls.iter().enumerate() {
            if lvl == 0 {
                continue;
            }
            let l = (lvl - 1) as usize;
            let lv = lv.get_or_insert_with(|| self.levels(b));
            for lane in 0..32 {
                let t = (w * 32 + lane) as usize;
                let got = image.get(self.data_addr(b, c as u32, w) + 4 * lane as u64);
                let want = lv[l][t] as u64;
                let next = lv.get(l + 2).map(|v| v[t] as u64);
                if got != want && (c == top || Some(got) != next) {
                    return Err(format!(
                        "block {b} warp {w} lane {lane}: flag of copy {c} says level {l} but the value is {got:#x}, not {want:#x}"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Scan's invariant incrementally (`crate::incremental`): one unit per warp
/// of each block (its two flags and two copies). Recovery rewrites words
/// with their own values, so the invariant after it is the same.
struct ScanInc<'a> {
    app: &'a Scan,
    broken: Broken,
    units: Vec<usize>,
}

impl ScanInc<'_> {
    fn ok(app: &Scan, img: &PmImage, u: usize) -> bool {
        let (b, w) = ((u / WARPS as usize) as u32, (u % WARPS as usize) as u32);
        app.check_warp(img, b, w, &mut None).is_ok()
    }
}

impl Incremental for ScanInc<'_> {
    fn update(&mut self, img: &PmImage, changed: &[u64]) -> bool {
        let app = self.app;
        let nb = app.blocks as u64;
        for &a in changed {
            let u = if (app.sdata..app.sdata + nb * 1024).contains(&a) {
                let off = a - app.sdata;
                off / 1024 * WARPS as u64 + off % 512 / 128
            } else if (app.locks..app.locks + nb * 256).contains(&a) {
                let off = a - app.locks;
                off / 256 * WARPS as u64 + off % 128 / 32
            } else {
                continue;
            };
            self.units.push(u as usize);
        }
        reevaluate(&mut self.broken, &mut self.units, |u| Self::ok(app, img, u));
        self.broken.none()
    }
}

impl App for Scan {
    fn incremental(&self, img: &PmImage) -> Option<Box<dyn Incremental + '_>> {
        let n = (self.blocks * WARPS) as usize;
        let mut broken = Broken::new(n);
        for u in 0..n {
            broken.set(u, ScanInc::ok(self, img, u));
        }
        Some(Box::new(ScanInc {
            app: self,
            broken,
            units: vec![],
        }))
    }
    fn name(&self) -> &'static str {
        "scan"
    }
    fn size(&self) -> u64 {
        self.elems
    }
    fn size_unit(&self) -> &'static str {
        "elements"
    }
    /// `s_Data` all-ones, flags zero (host `memset`s).
    fn initial_image(&self) -> PmImage {
        let mut img = PmImage::default();
        for b in 0..self.blocks {
            for c in 0..2 {
                for w in 0..WARPS {
                    for l in 0..32 {
                        img.set(self.data_addr(b, c, w) + 4 * l, SDATA_INIT);
                    }
                    img.set(self.flag_addr(b, c, w), 0);
                }
            }
        }
        img
    }
    fn program(&self, build: Build) -> Box<dyn Program + '_> {
        let name = match build {
            Build::Gpu => "scan",
            Build::Gpm => "scan-gpm",
        };
        Box::new(ScanProgram {
            app: self,
            name: name.into(),
            kernels: vec![self.kernel("scanKernel")],
            kind: Kind::Run {
                build,
                iters: ITERS,
                full: true,
            },
        })
    }
    fn final_image(&self) -> PmImage {
        self.image(ITERS)
    }
    fn crash_program(&self) -> Box<dyn Program + '_> {
        Box::new(ScanProgram {
            app: self,
            name: "scan-rec".into(),
            kernels: vec![self.kernel("scanKernel")],
            kind: Kind::Run {
                build: Build::Gpu,
                iters: self.crash_iters,
                full: false,
            },
        })
    }
    fn crash_image(&self) -> PmImage {
        self.image(self.crash_iters)
    }
    fn recovery(&self, image: &PmImage) -> Box<dyn Program + '_> {
        Box::new(ScanProgram {
            app: self,
            name: "scan-recovery".into(),
            kernels: vec![self.kernel("recoveryKernel")],
            kind: Kind::Recovery(image.clone()),
        })
    }
    /// The dummy read-modify-write rewrites the values it reads.
    fn recover(&self, image: &PmImage) -> PmImage {
        let mut img = image.clone();
        for b in 0..self.blocks {
            for w in 0..WARPS {
                let a = self.data_addr(b, self.recovery_copy(image, b, w), w);
                for l in 0..32 {
                    img.set(a + 4 * l, image.get(a + 4 * l));
                }
            }
        }
        img
    }
    /// A flag saying level `L` (value `L + 1`) in copy `c` means `L % 2 ==
    /// c`. Of a warp's two copies, the one whose flag names the later level
    /// holds exactly that level's 32 values, computed from the inputs (so
    /// from a correct level `L - 1`): that is the last completed iteration
    /// recovery looks for. The other copy is being overwritten with level
    /// `L + 2` once the later level is published (the owner waits only for
    /// readers in other warps, as the artifact's threads without a reader do
    /// not wait), so each of its values is level `L`'s or level `L + 2`'s.
    fn check(&self, image: &PmImage) -> Result<(), String> {
        for b in 0..self.blocks {
            let mut lv = None;
            for w in 0..WARPS {
                self.check_warp(image, b, w, &mut lv)?;
            }
        }
        Ok(())
    }
    /// A flag ahead of its value: one value under the later flag is changed
    /// (or, with no flag set, a flag set over a wrong value).
    fn corrupt(&self, image: &PmImage) -> PmImage {
        let mut img = image.clone();
        for b in 0..self.blocks {
            for w in 0..WARPS {
                let l0 = image.get(self.flag_addr(b, 0, w)) & LEVEL_MASK;
                let l1 = image.get(self.flag_addr(b, 1, w)) & LEVEL_MASK;
                if l0 | l1 != 0 {
                    let a = self.data_addr(b, u32::from(l1 > l0), w);
                    img.set(a, (image.get(a) + 1) & 0xffff_ffff);
                    return img;
                }
            }
        }
        let want = self.levels(0)[0][0] as u64;
        img.set(self.flag_addr(0, 0, 0), 1);
        img.set(self.data_addr(0, 0, 0), (want + 1) & 0xffff_ffff);
        img
    }
}
