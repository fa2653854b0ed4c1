//! Reduction's programs (`../shared/notes/sbrp-benchmarks.md` §2.4): one
//! CTA of reduceSinglePass (the pairs, the tree with its block-scope flags,
//! the device-scope final step, the last block's second tree), the run cut
//! at the crash point and recoveryKernel. The decisions are in `mod.rs`.

use sbrp_trace::program::{CtaCode, FenceScope, Instr, KernelInfo, Program, Space, Values};
use sbrp_trace::Scope;

use super::{
    stride, tree, Reduction, BLOCKS, LAST_BLOCK, LEVELS, PER_LAUNCH, SMEM, THREADS, WARPS,
};
use crate::layout::{atom, lanes, ld, pacq, prel, st};
use crate::Build;

/// Which binary: the build, the device-scope variant of Figure 7, and the
/// scoped-persistency-bug variant (block results released at block scope).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Gen {
    pub(super) build: Build,
    pub(super) dev: bool,
    pub(super) block_final: bool,
}

impl Gen {
    /// The scope of the tree's flag operations.
    fn scope(self) -> Scope {
        if self.dev {
            Scope::Device
        } else {
            Scope::Block
        }
    }
    /// The scope of the release that publishes a block's result.
    fn result_scope(self) -> Scope {
        if self.block_final {
            Scope::Block
        } else {
            Scope::Device
        }
    }
}

impl Reduction {
    fn kinfo(name: &str) -> KernelInfo {
        KernelInfo {
            name: name.into(),
            grid: BLOCKS,
            block: THREADS,
            regs: 0,
            smem: SMEM,
        }
    }

    fn push(v: &mut Vec<Instr>, i: Instr, g: Gen) {
        v.push(i);
        if g.build == Build::Gpm {
            v.push(Instr::Fence(FenceScope::Device));
        }
    }

    /// Steps 2-7 of §2.4 for tree `tree` of launch `l`, appended to the
    /// warps: the whole tree with warp 0's dFence, or (`cut`) levels
    /// `1..=cut` only.
    fn tree_code(&self, warps: &mut [Vec<Instr>], l: u64, tree: u32, cut: Option<u32>, g: Gen) {
        let own = self.own(l, tree);
        let slot = self::tree(&own);
        let base = self.region(l, tree);
        let vals = |first: usize, mask: u32| {
            let v: Vec<u64> = (0..32)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| slot[first + i] as u64)
                .collect();
            Values::List(v)
        };
        for (w, v) in warps.iter_mut().enumerate() {
            let w = w as u32;
            let t0 = w * 32;
            // Step 2: the upper half stores its own sums, then the barrier.
            if t0 >= 256 {
                let a = base + t0 as u64 * 4;
                v.push(st(
                    Space::Pm,
                    4,
                    u32::MAX,
                    a,
                    4,
                    vals(t0 as usize, u32::MAX),
                ));
            }
            if g.dev && tree < BLOCKS {
                v.push(Instr::Fence(FenceScope::Device));
            }
            v.push(Instr::Bar);
            for lvl in 1..=cut.unwrap_or(LEVELS) {
                let s = stride(lvl);
                if t0 >= s {
                    break;
                }
                // Reading lanes: t < s.
                let rmask = lanes(s - t0);
                if lvl > 1 {
                    // The slots t + s were released as one warp's chunk.
                    let f = self.flag(l, tree, t0 + s);
                    Self::push(v, pacq(g.scope(), Space::Shared, f, 1), g);
                }
                let a = base + (t0 + s) as u64 * 4;
                v.push(ld(Space::Pm, 4, rmask, a, 4));
                // Storing lanes: s/2 <= t < s; at stride 1, lane 0 stores slot 0.
                let lo = s / 2;
                let smask = if s == 1 {
                    1
                } else {
                    rmask & !lanes(lo.saturating_sub(t0))
                };
                if smask != 0 {
                    let a = base + t0 as u64 * 4;
                    v.push(st(Space::Pm, 4, smask, a, 4, vals(t0 as usize, smask)));
                    if s > 1 {
                        let f = self.flag(l, tree, t0.max(lo));
                        Self::push(v, prel(g.scope(), Space::Shared, f, 1), g);
                    }
                }
            }
            if w == 0 && cut.is_none() {
                Self::push(v, Instr::DFence, g);
            }
        }
    }

    /// One CTA of launch `l`'s reduceSinglePass.
    pub(super) fn cta_code(&self, l: u64, b: u32, cut: Option<u32>, g: Gen) -> CtaCode {
        let mut warps: Vec<Vec<Instr>> = vec![Vec::new(); WARPS as usize];
        // Step 1: each thread sums its pairs (two lines per warp per pair).
        for (w, v) in warps.iter_mut().enumerate() {
            for i in Self::pairs(b, w as u32) {
                let a = self.lay.input + (l * PER_LAUNCH + i) * 4;
                v.push(ld(Space::Global, 4, u32::MAX, a, 4));
                v.push(ld(Space::Global, 4, u32::MAX, a + THREADS as u64 * 4, 4));
            }
        }
        self.tree_code(&mut warps, l, b, cut, g);
        if cut.is_some() {
            return CtaCode { warps };
        }
        let res = self.result(l, b) as u64;
        let stale = l.checked_sub(1).map_or(0, |p| self.result(p, b) as u64);
        let slot = self.g_odata(b);
        // Step 8: thread 0 writes the block's result.
        warps[0].push(st(Space::Pm, 8, 1, slot, 0, Values::Same(res)));
        for (w, v) in warps.iter_mut().enumerate() {
            // Step 9: every warp reads the slot and releases what it read at
            // device scope: warps 1-15 the old value, before the barrier;
            // warp 0 the new one, after it (see `//!`).
            if w == 0 {
                // Step 10: thread 0 takes a ticket, then the barrier.
                v.push(atom(Space::Global, 4, 1, self.lay.count, 0));
                v.push(Instr::Bar);
                v.push(ld(Space::Pm, 8, u32::MAX, slot, 0));
                // The release the last block acquires (`//!`, variants).
                Self::push(v, prel(g.result_scope(), Space::Pm, slot, res), g);
            } else {
                v.push(ld(Space::Pm, 8, u32::MAX, slot, 0));
                Self::push(v, prel(Scope::Device, Space::Pm, slot, stale), g);
                v.push(Instr::Bar);
            }
        }
        if b != LAST_BLOCK {
            return CtaCode { warps };
        }
        // Step 11: warps 0-1 acquire the 60 results (thread t: result t).
        for (w, v) in warps.iter_mut().enumerate().take(2) {
            for j in (w as u32 * 32..(w as u32 + 1) * 32).filter(|&j| j < BLOCKS) {
                let want = self.result(l, j) as u64;
                Self::push(v, pacq(Scope::Device, Space::Pm, self.g_odata(j), want), g);
            }
        }
        self.tree_code(&mut warps, l, BLOCKS, None, g);
        let total = self.total(l) as u64;
        warps[0].push(st(
            Space::Pm,
            8,
            1,
            self.g_odata(BLOCKS),
            0,
            Values::Same(total),
        ));
        // The sample resets the retirement counter for the next launch.
        warps[0].push(st(Space::Global, 4, 1, self.lay.count, 0, Values::Same(0)));
        CtaCode { warps }
    }

    pub(super) fn run_program(&self, gen: Gen) -> Box<dyn Program + '_> {
        Box::new(RedProgram {
            app: self,
            gen,
            name: match (gen.dev, gen.block_final) {
                (false, false) => "reduction",
                (true, false) => "reduction_dev",
                (false, true) => "reduction_block_final",
                (true, true) => "reduction_block_final_dev",
            },
            kernels: (0..self.launches)
                .map(|_| Self::kinfo("reduceSinglePass"))
                .collect(),
            kind: Kind::Run,
        })
    }

    /// The device-scope variant of Figure 7 (`reduction_dev_gpu`, §2.4):
    /// every flag operation at device scope and a `fence.dev` before the
    /// first barrier. Without that fence, under the model's promotion of
    /// block scope to device scope, a level-1 sum could be durable before
    /// a step-2 input stored by another warp before the barrier.
    pub fn program_dev(&self, build: Build) -> Box<dyn Program + '_> {
        self.run_program(Gen {
            build,
            dev: true,
            block_final: self.block_final,
        })
    }

    pub(super) fn crash_prog(&self) -> Box<dyn Program + '_> {
        Box::new(RedProgram {
            app: self,
            gen: Gen {
                build: Build::Gpu,
                dev: false,
                block_final: self.block_final,
            },
            name: "reduction_rec",
            kernels: vec![Self::kinfo("reduceSinglePass")],
            kind: Kind::Crash,
        })
    }

    pub(super) fn rec_prog(&self) -> Box<dyn Program + '_> {
        let mut k = Self::kinfo("recoveryKernel");
        k.smem = 0;
        Box::new(RedProgram {
            app: self,
            gen: Gen {
                build: Build::Gpu,
                dev: false,
                block_final: self.block_final,
            },
            name: "reduction_recovery",
            kernels: vec![k],
            kind: Kind::Rec,
        })
    }
}

/// The programs of this app.
struct RedProgram<'a> {
    app: &'a Reduction,
    gen: Gen,
    name: &'static str,
    kernels: Vec<KernelInfo>,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Run,
    Crash,
    Rec,
}

impl Program for RedProgram<'_> {
    fn name(&self) -> &str {
        self.name
    }
    fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }
    fn cta(&self, k: usize, cta: u32) -> CtaCode {
        if k >= self.kernels.len() || cta >= BLOCKS {
            return CtaCode::default();
        }
        let app = self.app;
        match self.kind {
            Kind::Run => app.cta_code(k as u64, cta, None, self.gen),
            Kind::Crash => app.cta_code(0, cta, Some(Reduction::crash_level(cta)), self.gen),
            Kind::Rec => CtaCode {
                warps: (0..WARPS)
                    .map(|w| {
                        let a = app.region(0, cta) + w as u64 * 32 * 4;
                        // The test against EMPTY waits for the data.
                        vec![
                            ld(Space::Pm, 4, u32::MAX, a, 4),
                            Instr::Compute { cycles: 2 },
                        ]
                    })
                    .collect(),
            },
        }
    }
}
