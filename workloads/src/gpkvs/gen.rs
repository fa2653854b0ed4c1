//! gpKVS's kernels as warp instructions, CTA by CTA
//! (`../shared/notes/sbrp-benchmarks.md` §2.1 "Kernels" and "Per-thread
//! logic of the insert kernel", recovery from §2.1 "Recovery").
//!
//! Decisions:
//! - Thread `i` of a kernel is lane `i % 32` of warp `i / 32` of its CTA;
//!   lanes `4g..4g+4` are key group `g` of the warp (`ELEM_NUM` = 4).
//! - The input element is read as three 4-B volatile loads (sig, hash, loc);
//!   shared-memory counters are 4-B words at shared 0 and 4.
//! - A logged entry is {lane, 0, bucket, old loc}: the empty-slot paths log
//!   signature 0, the value recovery restores. The old loc is always 0 (a
//!   slot gets its loc once, and the table starts empty).
//! - `recoverFromLog` threads at or past the partition count, and threads
//!   whose partition is empty, restore nothing (the artifact would restore
//!   from an uninitialised entry); every thread below the count still dFences.

use crate::layout::kernel as info;
use sbrp_trace::program::{CtaCode, Instr, KernelInfo, Program, Space};

use super::sim::{Act, ELEM, GROUPS, THREADS};
use super::Gpkvs;
use crate::log::{atom_lanes, dfence, ld_lanes, st_lanes, st_lanes_unknown};
use crate::Build;

/// Which kernel a launch is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kern {
    Setup,
    Dummy,
    Insert,
    Invalidate,
    Clear,
    CheckValid,
    Recover,
}

/// What the recovery kernels read from the image: validity, then per
/// partition the entry words if it holds one.
#[derive(Clone, Debug, Default)]
pub struct RecInput {
    pub valid: bool,
    pub entries: Vec<Option<[u64; 4]>>,
}

pub struct KvsProgram<'a> {
    pub app: &'a Gpkvs,
    pub name: String,
    pub kernels: Vec<KernelInfo>,
    pub kinds: Vec<Kern>,
    pub build: Build,
    pub rec: RecInput,
}

impl<'a> KvsProgram<'a> {
    pub fn new(app: &'a Gpkvs, name: &str, kinds: Vec<Kern>, build: Build, rec: RecInput) -> Self {
        let n = app.n;
        let parts = n + 1;
        let kernels = kinds
            .iter()
            .map(|k| match k {
                Kern::Setup => info("setupPartitions", parts.div_ceil(512), 512, 0),
                Kern::Dummy => info("logDummy", 1, 1, 0),
                Kern::Insert => info("hash_insert_2choice", super::sim::BLOCKS, THREADS, 8),
                Kern::Invalidate => info("invalidateLog", 1, 1, 0),
                Kern::Clear => info("clearLogs", n.div_ceil(512), 512, 0),
                Kern::CheckValid => info("checkLogValid", 1, 1, 0),
                Kern::Recover => info("recoverFromLog", parts.div_ceil(512), 512, 0),
            })
            .collect();
        KvsProgram {
            app,
            name: name.to_string(),
            kernels,
            kinds,
            build,
            rec,
        }
    }

    /// Lanes of warp `w` of CTA `cta` (512 threads a CTA) whose thread index
    /// is below `limit`, with those indices.
    fn lanes_below(cta: u32, w: u64, limit: u64) -> (Vec<u32>, Vec<u64>) {
        (0..32u32)
            .map(|l| (l, cta as u64 * 512 + w * 32 + l as u64))
            .filter(|(_, id)| *id < limit)
            .unzip()
    }

    fn warps_of(&self, f: impl Fn(u64, &mut Vec<Instr>)) -> CtaCode {
        let warps = (0..16)
            .map(|w| {
                let mut out = vec![];
                f(w, &mut out);
                out
            })
            .collect();
        CtaCode { warps }
    }

    fn setup(&self, cta: u32) -> CtaCode {
        let log = &self.app.lay.log;
        self.warps_of(|w, out| {
            let (lanes, ids) = Self::lanes_below(cta, w, log.parts);
            if !lanes.is_empty() {
                log.setup_instrs(out, &lanes, &ids);
            }
        })
    }

    fn single(&self, f: impl Fn(&mut Vec<Instr>)) -> CtaCode {
        let mut out = vec![];
        f(&mut out);
        CtaCode { warps: vec![out] }
    }

    fn clear(&self, cta: u32) -> CtaCode {
        let log = &self.app.lay.log;
        self.warps_of(|w, out| {
            let (lanes, ids) = Self::lanes_below(cta, w, self.app.n);
            if !lanes.is_empty() {
                log.clear_instrs(out, &lanes, &ids, self.build);
                dfence(out, self.build);
            }
        })
    }

    fn recover(&self, cta: u32) -> CtaCode {
        let lay = &self.app.lay;
        let log = &lay.log;
        self.warps_of(|w, out| {
            out.push(ld_lanes(Space::Global, 1, &[0], vec![lay.valid]));
            if !self.rec.valid {
                return;
            }
            let (lanes, ids) = Self::lanes_below(cta, w, log.parts);
            if lanes.is_empty() {
                return;
            }
            let has: Vec<bool> = ids
                .iter()
                .map(|&p| self.rec.entries[p as usize].is_some())
                .collect();
            log.read_instrs(out, &lanes, &ids, &has, 4);
            let (mut rl, mut sa, mut la, mut lv) = (vec![], vec![], vec![], vec![]);
            for (&l, &p) in lanes.iter().zip(&ids) {
                if let Some(e) = self.rec.entries[p as usize] {
                    let slot = super::entry_slot(&e);
                    rl.push(l);
                    sa.push(lay.sig_addr(slot));
                    la.push(lay.loc_addr(slot));
                    lv.push(e[3]);
                }
            }
            if !rl.is_empty() {
                let z = vec![0; rl.len()];
                out.push(st_lanes(Space::Pm, 4, &rl, sa, z));
                out.push(st_lanes(Space::Pm, 4, &rl, la, lv));
            }
            dfence(out, self.build);
        })
    }

    /// `hash_insert_2choice`, block `cta`.
    fn insert(&self, cta: u32) -> CtaCode {
        self.warps_of(|w, out| self.insert_warp(cta as usize, w as usize, out))
    }

    fn insert_warp(&self, blk: usize, w: usize, out: &mut Vec<Instr>) {
        let app = self.app;
        let lay = &app.lay;
        let b = &app.batch;
        let per_block = app.n as usize / super::sim::BLOCKS as usize;
        let all: Vec<u32> = (0..32).collect();
        // This block's input pointer and element count.
        out.push(ld_lanes(
            Space::Global,
            8,
            &[0],
            vec![lay.blk_ptrs + 8 * blk as u64],
        ));
        out.push(ld_lanes(
            Space::Global,
            4,
            &[0],
            vec![lay.blk_nums + 4 * blk as u64],
        ));
        for s in 0..b.steps_per_block {
            let step = &b.steps[blk * b.steps_per_block + s];
            // Key index of group `gi` (0..8) of this warp.
            let key = |gi: usize| blk * per_block + s * GROUPS + w * 8 + gi;
            out.push(Instr::Bar);
            if w == 0 {
                out.push(st_lanes_unknown(Space::Shared, 4, &[0], vec![0]));
                out.push(st_lanes_unknown(Space::Shared, 4, &[0], vec![4]));
            }
            out.push(Instr::Bar);
            for off in [0, 4, 8] {
                let a = all
                    .iter()
                    .map(|&l| lay.input + 12 * key(l as usize / 4) as u64 + off)
                    .collect();
                out.push(ld_lanes(Space::Global, 4, &all, a));
            }
            for phase in 0..2 {
                let bucket = |gi: usize| {
                    let e = &b.elems[key(gi)];
                    if phase == 0 {
                        e.bucket as u64
                    } else {
                        e.bucket2() as u64
                    }
                };
                // The "same signature present" ballot: every lane.
                let a = all
                    .iter()
                    .map(|&l| lay.sig_addr(bucket(l as usize / 4) * 4 + (l as u64 % 4)))
                    .collect();
                out.push(ld_lanes(Space::Pm, 4, &all, a));
                let iters = if phase == 0 {
                    &step.first
                } else {
                    &step.second
                };
                for (i, acts) in iters.iter().enumerate() {
                    let acts = &acts[w * 8..w * 8 + 8];
                    let last = i + 1 == iters.len();
                    self.iteration(out, phase, acts, &bucket, &key, last);
                }
            }
        }
        dfence(out, self.build);
    }

    /// One iteration of a placement loop for the warp's 8 groups.
    fn iteration(
        &self,
        out: &mut Vec<Instr>,
        phase: usize,
        acts: &[Act],
        bucket: &dyn Fn(usize) -> u64,
        key: &dyn Fn(usize) -> usize,
        last: bool,
    ) {
        let lay = &self.app.lay;
        let b = &self.app.batch;
        let group_lanes = |gi: usize| (0..ELEM as u32).map(move |j| gi as u32 * 4 + j);
        let active: Vec<usize> = (0..8).filter(|&g| acts[g] != Act::Idle).collect();
        if !active.is_empty() {
            let lanes: Vec<u32> = active.iter().flat_map(|&g| group_lanes(g)).collect();
            let a = lanes
                .iter()
                .map(|&l| lay.sig_addr(bucket(l as usize / 4) * 4 + (l as u64 % 4)))
                .collect();
            out.push(ld_lanes(Space::Pm, 4, &lanes, a));
            let (mut wl, mut wa, mut wv, mut fl) = (vec![], vec![], vec![], vec![]);
            for &g in &active {
                let lane = match acts[g] {
                    Act::Write { lane, .. } => Some(lane),
                    Act::Full { overwrite } => {
                        fl.extend(group_lanes(g));
                        overwrite
                    }
                    Act::Idle => None,
                };
                if let Some(l) = lane {
                    wl.push(g as u32 * 4 + l as u32);
                    wa.push(lay.sig_addr(bucket(g) * 4 + l as u64));
                    wv.push(b.elems[key(g)].sig as u64);
                }
            }
            if !wl.is_empty() {
                out.push(st_lanes(Space::Pm, 4, &wl, wa, wv));
            }
            if !fl.is_empty() {
                out.push(atom_lanes(
                    Space::Shared,
                    &fl,
                    vec![4 * phase as u64; fl.len()],
                ));
            }
        }
        out.push(Instr::Bar);
        let all: Vec<u32> = (0..32).collect();
        out.push(ld_lanes(Space::Shared, 4, &all, vec![4 * phase as u64; 32]));
        if last {
            return;
        }
        // Re-read of the chosen slot by every lane of a writing group.
        let (mut rl, mut ra) = (vec![], vec![]);
        let (mut win, mut wslot) = (vec![], vec![]);
        for (g, act) in acts.iter().enumerate() {
            if let Act::Write { lane, won } = *act {
                let slot = bucket(g) * 4 + lane as u64;
                for l in group_lanes(g) {
                    rl.push(l);
                    ra.push(lay.sig_addr(slot));
                }
                if won {
                    win.push(g);
                    wslot.push(slot);
                }
            }
        }
        if rl.is_empty() {
            return;
        }
        out.push(ld_lanes(Space::Pm, 4, &rl, ra));
        if win.is_empty() {
            return;
        }
        let wl: Vec<u32> = win
            .iter()
            .zip(&wslot)
            .map(|(&g, &slot)| g as u32 * 4 + (slot % 4) as u32)
            .collect();
        let la: Vec<u64> = wslot.iter().map(|&s| lay.loc_addr(s)).collect();
        out.push(ld_lanes(Space::Pm, 4, &wl, la.clone()));
        let parts: Vec<u64> = win.iter().map(|&g| key(g) as u64 + 1).collect();
        let word = |r: usize, k: u64| match k {
            0 => wslot[r] % 4,
            2 => wslot[r] / 4,
            _ => 0,
        };
        lay.log
            .insert_instrs(out, &wl, &parts, 4, &word, self.build);
        let lv = win.iter().map(|&g| b.elems[key(g)].loc as u64).collect();
        out.push(st_lanes(Space::Pm, 4, &wl, la, lv));
        dfence(out, self.build);
        let gl: Vec<u32> = win.iter().flat_map(|&g| group_lanes(g)).collect();
        if phase == 0 {
            out.push(atom_lanes(Space::Shared, &gl, vec![0; gl.len()]));
        }
        out.push(atom_lanes(Space::Shared, &gl, vec![4; gl.len()]));
    }
}

impl Program for KvsProgram<'_> {
    fn name(&self) -> &str {
        &self.name
    }
    fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }
    fn cta(&self, k: usize, cta: u32) -> CtaCode {
        let Some(kind) = self.kinds.get(k) else {
            return CtaCode::default();
        };
        if cta >= self.kernels[k].grid {
            return CtaCode::default();
        }
        let log = &self.app.lay.log;
        match kind {
            Kern::Setup => self.setup(cta),
            Kern::Dummy => self.single(|out| {
                log.insert_instrs(out, &[0], &[0], 4, &|_, _| 0, self.build);
            }),
            Kern::Insert => self.insert(cta),
            Kern::Invalidate => self.single(|out| log.clear_instrs(out, &[0], &[0], self.build)),
            Kern::Clear => self.clear(cta),
            Kern::CheckValid => self.single(|out| {
                log.size_instrs(out, &[0], &[0]);
                out.push(st_lanes_unknown(
                    Space::Global,
                    1,
                    &[0],
                    vec![self.app.lay.valid],
                ));
            }),
            Kern::Recover => self.recover(cta),
        }
    }
}
