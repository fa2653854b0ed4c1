//! HM's kernels as warp instructions, CTA by CTA
//! (`../shared/notes/sbrp-benchmarks.md` §2.2 kernel table and "Recovery").
//!
//! Decisions:
//! - Thread `i` is lane `i % 32` of warp `i / 32` of its CTA; grid-stride
//!   loops (`markBuckets`, `findKernel`) emit one pass per stride.
//! - `compactBuckets`: after its barrier each thread whose node is not
//!   empty takes a position (`atomicAdd` on the bucket's offset) and stores
//!   the node there as two 4-B words, with no fence (the kernel's end orders
//!   it before phase 1). Its log copy reads its source from the slot just
//!   loaded; those reads are left to that one 8-B load.
//! - The shared cuckoo table is 3 x 192 entries of 8 B at shared address 0;
//!   a thread's re-read of the entry it holds is emitted at its own entry's
//!   address (shared addresses do not change timing in the model).
//! - In `recoverFromLog` the restore stores follow the read's unlock (the
//!   artifact copies inside the lock); an oFence follows them, before the
//!   partition's clear (not in the artifact, see `mod.rs`).
//! - The GPM build adds the source's own `__threadfence` after the dFences
//!   of `logHashMap`, `compactBuckets` and `cuHashPhase2`, on top of the one
//!   every persistency op gets (§2.0).

use crate::layout::kernel as info;
use sbrp_trace::program::{CtaCode, FenceScope, Instr, KernelInfo, Program, Space};

use super::sim::{SLOTS, SUB, SUBTABLES};
use super::Hm;
use crate::log::{atom_lanes, dfence, ld_lanes, ofence, st_lanes, st_lanes_unknown};
use crate::Build;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kern {
    LogHashMap,
    MarkBuckets,
    Compact,
    Phase1,
    Phase2,
    ClearLog1,
    ClearLog2,
    Find,
    GetNodeCount,
    Recover,
}

/// What recovery reads from the image: whether the metadata log holds the
/// node count, and per node-log partition its entry if whole.
#[derive(Clone, Debug, Default)]
pub struct RecInput {
    pub active: bool,
    pub entries: Vec<Option<[u64; 2]>>,
}

pub struct HmProgram<'a> {
    pub app: &'a Hm,
    pub name: String,
    pub kernels: Vec<KernelInfo>,
    pub kinds: Vec<Kern>,
    pub build: Build,
    pub rec: RecInput,
}

const ALL: [u32; 32] = {
    let mut a = [0; 32];
    let mut i = 0;
    while i < 32 {
        a[i] = i as u32;
        i += 1;
    }
    a
};

/// `recoverFromLog`'s CTAs (§2.2 Recovery), each looping over buckets.
const REC_CTAS: u64 = 50;

fn lanes_of(mask: u32) -> Vec<u32> {
    (0..32).filter(|l| mask & (1 << l) != 0).collect()
}

impl<'a> HmProgram<'a> {
    pub fn new(app: &'a Hm, name: &str, kinds: Vec<Kern>, build: Build, rec: RecInput) -> Self {
        let nb = app.nb;
        let kernels = kinds
            .iter()
            .map(|k| match k {
                Kern::LogHashMap => info("logHashMap", 1, 1, 0),
                Kern::MarkBuckets => info("markBuckets", 32, 1024, 0),
                Kern::Compact => info("compactBuckets", nb, SLOTS, 0),
                Kern::Phase1 => info("cuHashPhase1", nb, SLOTS, 0),
                Kern::Phase2 => info("cuHashPhase2", nb, SLOTS, SUBTABLES * SUB * 8),
                Kern::ClearLog1 => info("clearLog1", 1, 1, 0),
                Kern::ClearLog2 => info("clearLog2", nb, SLOTS, 0),
                Kern::Find => info("findKernel", 30, SLOTS, 0),
                Kern::GetNodeCount => info("getNodeCount", 1, 1, 0),
                Kern::Recover => info("recoverFromLog", REC_CTAS.min(nb), SLOTS, 0),
            })
            .collect();
        HmProgram {
            app,
            name: name.to_string(),
            kernels,
            kinds,
            build,
            rec,
        }
    }

    fn warps(&self, n: u64, f: impl Fn(u64, &mut Vec<Instr>)) -> CtaCode {
        let warps = (0..n.div_ceil(32))
            .map(|w| {
                let mut out = vec![];
                f(w, &mut out);
                out
            })
            .collect();
        CtaCode { warps }
    }

    /// dFence, plus under GPM the source's extra `__threadfence`.
    fn dfence_gpm(&self, out: &mut Vec<Instr>) {
        dfence(out, self.build);
        if self.build == Build::Gpm {
            out.push(Instr::Fence(FenceScope::Device));
        }
    }

    /// Lanes (and their indices) of warp `w` whose thread `base + w*32 + l`
    /// is below `limit`.
    fn below(base: u64, w: u64, limit: u64) -> (Vec<u32>, Vec<u64>) {
        ALL.iter()
            .map(|&l| (l, base + w * 32 + l as u64))
            .filter(|(_, i)| *i < limit)
            .unzip()
    }

    fn mark(&self, cta: u32) -> CtaCode {
        let lay = &self.app.lay;
        let n = self.app.n;
        self.warps(1024, |w, out| {
            let mut base = cta as u64 * 1024;
            while base < n {
                let (l, ids) = Self::below(base, w, n);
                if l.is_empty() {
                    break;
                }
                let ka = ids.iter().map(|&i| lay.keys + 4 * i).collect();
                out.push(ld_lanes(Space::Global, 4, &l, ka));
                let ba = ids
                    .iter()
                    .map(|&i| {
                        lay.modified + 4 * (self.app.ins.keys[i as usize] as u64 % self.app.nb)
                    })
                    .collect();
                out.push(st_lanes_unknown(Space::Global, 4, &l, ba));
                base += 32 * 1024;
            }
        })
    }

    fn compact(&self, cta: u32) -> CtaCode {
        let app = self.app;
        let lay = &app.lay;
        let b = cta as u64;
        // Position of each kept node (by its slot in the bucket).
        let mut dest = vec![None; SLOTS as usize];
        for (r, &(t, _)) in app.ins.resident[cta as usize].iter().enumerate() {
            dest[t as usize] = Some(b * SLOTS + r as u64);
        }
        self.warps(SLOTS, |w, out| {
            out.push(ld_lanes(Space::Global, 4, &[0], vec![lay.modified + 4 * b]));
            let ps: Vec<u64> = ALL.iter().map(|&l| b * SLOTS + w * 32 + l as u64).collect();
            let sa: Vec<u64> = ps.iter().map(|&p| lay.slot(p)).collect();
            out.push(ld_lanes(Space::Pm, 8, &ALL, sa.clone()));
            // The logged node: the slot's words before the batch.
            let word = |r: usize, k: u64| app.old_words(ps[r])[k as usize];
            lay.node_log
                .insert_instrs(out, &ALL, &ps, 2, &word, self.build);
            self.dfence_gpm(out);
            out.push(st_lanes(Space::Pm, 8, &ALL, sa, vec![0; 32]));
            out.push(Instr::Bar);
            // The kept nodes move to the front of the bucket.
            let (mut ml, mut ma, mut mk, mut mv) = (vec![], vec![], vec![], vec![]);
            for (&l, &p) in ALL.iter().zip(&ps) {
                if let Some(d) = dest[(p - b * SLOTS) as usize] {
                    let [k, v] = app.old_words(p);
                    ml.push(l);
                    ma.push(lay.slot(d));
                    mk.push(k);
                    mv.push(v);
                }
            }
            if !ml.is_empty() {
                out.push(atom_lanes(
                    Space::Global,
                    &ml,
                    vec![lay.offsets + 4 * b; ml.len()],
                ));
                out.push(st_lanes(Space::Pm, 4, &ml, ma.clone(), mk));
                let ma4 = ma.iter().map(|a| a + 4).collect();
                out.push(st_lanes(Space::Pm, 4, &ml, ma4, mv));
            }
        })
    }

    fn phase1(&self, cta: u32) -> CtaCode {
        let lay = &self.app.lay;
        let ins = &self.app.ins;
        self.warps(SLOTS, |w, out| {
            let (l, ids) = Self::below(cta as u64 * SLOTS, w, self.app.n);
            if l.is_empty() {
                return;
            }
            let ka = ids.iter().map(|&i| lay.keys + 4 * i).collect();
            out.push(ld_lanes(Space::Global, 4, &l, ka));
            let oa = ids
                .iter()
                .map(|&i| lay.offsets + 4 * (ins.keys[i as usize] as u64 % self.app.nb))
                .collect();
            out.push(atom_lanes(Space::Global, &l, oa));
            let sa: Vec<u64> = ids
                .iter()
                .map(|&i| lay.slot(ins.phase1_slot[i as usize]))
                .collect();
            let kv = ids.iter().map(|&i| ins.keys[i as usize] as u64).collect();
            out.push(st_lanes(Space::Pm, 4, &l, sa.clone(), kv));
            let va = ids.iter().map(|&i| lay.values + 4 * i).collect();
            out.push(ld_lanes(Space::Global, 4, &l, va));
            let vv = ids.iter().map(|&i| ins.values[i as usize] as u64).collect();
            let sa4 = sa.iter().map(|a| a + 4).collect();
            out.push(st_lanes(Space::Pm, 4, &l, sa4, vv));
        })
    }

    fn phase2(&self, cta: u32) -> CtaCode {
        let lay = &self.app.lay;
        let ins = &self.app.ins;
        let b = cta as u64;
        let bk = &ins.buckets[cta as usize];
        let members = &ins.members[cta as usize];
        self.warps(SLOTS, |w, out| {
            out.push(ld_lanes(Space::Global, 4, &[0], vec![lay.offsets + 4 * b]));
            out.push(ld_lanes(Space::Global, 4, &[0], vec![lay.modified + 4 * b]));
            let (l, ts) = Self::below(0, w, bk.count as u64);
            if l.is_empty() {
                return;
            }
            let key = |t: u64| members[t as usize].0;
            let sh = |j: u64, o: u64| (j * SUB + o) * 8;
            // This thread's own entry of the shared table, zeroed.
            let za = ts.iter().map(|&t| t * 8).collect();
            out.push(st_lanes_unknown(Space::Shared, 4, &l, za));
            out.push(Instr::Bar);
            let sa: Vec<u64> = ts.iter().map(|&t| lay.slot(b * SLOTS + t)).collect();
            out.push(ld_lanes(Space::Pm, 8, &l, sa.clone()));
            out.push(st_lanes(Space::Pm, 4, &l, sa, vec![0; l.len()]));
            let wi = w as usize;
            for (s, masks) in bk.steps.iter().enumerate() {
                let j = s as u64 % SUBTABLES;
                let m = masks[wi];
                // Lanes holding a location re-read their entry; the others
                // store into subtable `j`.
                let loc = lanes_of(m.located);
                if !loc.is_empty() {
                    let a = loc.iter().map(|&x| (w * 32 + x as u64) * 8).collect();
                    out.push(ld_lanes(Space::Shared, 4, &loc, a));
                }
                let wr = lanes_of(m.writers);
                if !wr.is_empty() {
                    let a = wr
                        .iter()
                        .map(|&x| sh(j, super::sim::offset(j, key(w * 32 + x as u64))))
                        .collect();
                    out.push(st_lanes_unknown(Space::Shared, 8, &wr, a));
                }
                out.push(Instr::Bar);
                let a = ts
                    .iter()
                    .map(|&t| sh(j, super::sim::offset(j, key(t))))
                    .collect();
                out.push(ld_lanes(Space::Shared, 4, &l, a));
                if j + 1 == SUBTABLES {
                    out.push(Instr::Bar);
                }
            }
            let loc = lanes_of(bk.located[wi]);
            if !loc.is_empty() {
                let a = loc.iter().map(|&x| (w * 32 + x as u64) * 8).collect();
                out.push(ld_lanes(Space::Shared, 4, &loc, a));
            }
            let (mut pl, mut pa, mut pk, mut pv, mut fl) = (vec![], vec![], vec![], vec![], vec![]);
            for (&x, &t) in l.iter().zip(&ts) {
                match bk.placed[t as usize] {
                    Some(e) => {
                        let (k, v) = members[t as usize];
                        pl.push(x);
                        pa.push(lay.slot(b * SLOTS + e));
                        pk.push(k as u64);
                        pv.push(v as u64);
                    }
                    None => fl.push(x),
                }
            }
            if !fl.is_empty() {
                out.push(st_lanes_unknown(
                    Space::Global,
                    4,
                    &fl,
                    vec![lay.successful; fl.len()],
                ));
            }
            if !pl.is_empty() {
                out.push(st_lanes(Space::Pm, 4, &pl, pa.clone(), pk));
                let pa4 = pa.iter().map(|a| a + 4).collect();
                out.push(st_lanes(Space::Pm, 4, &pl, pa4, pv));
                self.dfence_gpm(out);
            }
        })
    }

    fn clear2(&self, cta: u32) -> CtaCode {
        let log = &self.app.lay.node_log;
        self.warps(SLOTS, |w, out| {
            let ps: Vec<u64> = ALL
                .iter()
                .map(|&l| cta as u64 * SLOTS + w * 32 + l as u64)
                .collect();
            log.clear_instrs(out, &ALL, &ps, self.build);
        })
    }

    fn find(&self, cta: u32) -> CtaCode {
        let lay = &self.app.lay;
        let ins = &self.app.ins;
        let n = self.app.n;
        self.warps(SLOTS, |w, out| {
            let mut base = cta as u64 * SLOTS;
            while base < n {
                let (l, ids) = Self::below(base, w, n);
                if l.is_empty() {
                    break;
                }
                let ka = ids.iter().map(|&i| lay.keys + 4 * i).collect();
                out.push(ld_lanes(Space::Global, 4, &l, ka));
                let mut search: Vec<(u32, u64)> = l.iter().copied().zip(ids).collect();
                for j in 0..SUBTABLES {
                    if search.is_empty() {
                        break;
                    }
                    let slot = |i: u64| {
                        let k = ins.keys[i as usize];
                        (k as u64 % self.app.nb) * SLOTS + j * SUB + super::sim::offset(j, k)
                    };
                    let sl: Vec<u32> = search.iter().map(|s| s.0).collect();
                    let a = search.iter().map(|s| lay.slot(slot(s.1))).collect();
                    out.push(ld_lanes(Space::Pm, 4, &sl, a));
                    let (hit, rest): (Vec<_>, Vec<_>) = search
                        .into_iter()
                        .partition(|s| self.app.post_key(slot(s.1)) == ins.keys[s.1 as usize]);
                    if !hit.is_empty() {
                        let hl: Vec<u32> = hit.iter().map(|s| s.0).collect();
                        let va = hit.iter().map(|s| lay.slot(slot(s.1)) + 4).collect();
                        out.push(ld_lanes(Space::Pm, 4, &hl, va));
                        let oa = hit.iter().map(|s| lay.found + 4 * s.1).collect();
                        out.push(st_lanes_unknown(Space::Global, 4, &hl, oa));
                    }
                    search = rest;
                }
                base += 30 * SLOTS;
            }
        })
    }

    fn recover(&self, cta: u32) -> CtaCode {
        let lay = &self.app.lay;
        let log = &lay.node_log;
        let nb = self.app.nb;
        let grid = REC_CTAS.min(nb);
        self.warps(SLOTS, |w, out| {
            let mut bucket = cta as u64;
            while bucket < nb {
                let ps: Vec<u64> = ALL
                    .iter()
                    .map(|&l| bucket * SLOTS + w * 32 + l as u64)
                    .collect();
                log.size_instrs(out, &ALL, &ps);
                let (mut rl, mut rp, mut rk) = (vec![], vec![], vec![]);
                for (&l, &p) in ALL.iter().zip(&ps) {
                    if let Some(e) = self.rec.entries[p as usize] {
                        rl.push(l);
                        rp.push(p);
                        rk.push(e);
                    }
                }
                if !rl.is_empty() {
                    log.read_instrs(out, &rl, &rp, &vec![true; rl.len()], 2);
                    let sa: Vec<u64> = rp.iter().map(|&p| lay.slot(p)).collect();
                    let kv = rk.iter().map(|e| e[0]).collect();
                    out.push(st_lanes(Space::Pm, 4, &rl, sa.clone(), kv));
                    let vv = rk.iter().map(|e| e[1]).collect();
                    let sa4 = sa.iter().map(|a| a + 4).collect();
                    out.push(st_lanes(Space::Pm, 4, &rl, sa4, vv));
                    out.push(ld_lanes(Space::Pm, 4, &rl, sa));
                    let nz: Vec<u32> = rl
                        .iter()
                        .zip(&rk)
                        .filter(|(_, e)| e[0] != 0)
                        .map(|(l, _)| *l)
                        .collect();
                    if !nz.is_empty() {
                        let oa = vec![lay.offsets + 4 * bucket; nz.len()];
                        out.push(atom_lanes(Space::Global, &nz, oa));
                    }
                    // The restores persist before the partitions clear.
                    ofence(out, self.build);
                }
                log.clear_instrs(out, &ALL, &ps, self.build);
                bucket += grid;
            }
            dfence(out, self.build);
        })
    }

    fn single(&self, f: impl Fn(&mut Vec<Instr>)) -> CtaCode {
        let mut out = vec![];
        f(&mut out);
        CtaCode { warps: vec![out] }
    }
}

impl Program for HmProgram<'_> {
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
        let lay = &self.app.lay;
        match kind {
            Kern::LogHashMap => self.single(|out| {
                lay.md_log
                    .insert_instrs(out, &[0], &[0], 1, &|_, _| 0, self.build);
                self.dfence_gpm(out);
            }),
            Kern::MarkBuckets => self.mark(cta),
            Kern::Compact => self.compact(cta),
            Kern::Phase1 => self.phase1(cta),
            Kern::Phase2 => self.phase2(cta),
            Kern::ClearLog1 => self.single(|out| {
                lay.md_log.clear_instrs(out, &[0], &[0], self.build);
                dfence(out, self.build);
            }),
            Kern::ClearLog2 => self.clear2(cta),
            Kern::Find => self.find(cta),
            Kern::GetNodeCount => self.single(|out| {
                out.push(st_lanes_unknown(Space::Global, 1, &[0], vec![lay.abort]));
                lay.md_log.size_instrs(out, &[0], &[0]);
                if self.rec.active {
                    lay.md_log.read_instrs(out, &[0], &[0], &[true], 1);
                    out.push(st_lanes_unknown(Space::Global, 4, &[0], vec![lay.count]));
                } else {
                    out.push(st_lanes_unknown(Space::Global, 1, &[0], vec![lay.abort]));
                }
            }),
            Kern::Recover => self.recover(cta),
        }
    }
}
