//! Unbuffered persistency models given as step lists (`docs/model.md`,
//! "Persistency models"): each ordering op runs its list (`steps.rs`), PM
//! stores dirty the L1, and kernel end flushes the dirty PM lines. Epoch,
//! GPM and SPB are each one [`Table`].

use sbrp_trace::check;
use sbrp_trace::program::Instr;
use sbrp_trace::Scope;

use super::super::steps::Step;
use super::super::warp::Phase;
use super::super::{Ctx, Sm};
use super::Persist;

/// An unbuffered model: the steps of each op.
pub struct Table {
    pub ofence: &'static [Step],
    pub dfence: &'static [Step],
    /// pAcq and pRel at block and at device scope.
    pub acq_block: &'static [Step],
    pub acq_device: &'static [Step],
    pub rel_block: &'static [Step],
    pub rel_device: &'static [Step],
    /// A non-persistent fence.
    pub npfence: &'static [Step],
    /// `bar`: before the warp waits at the barrier, and after it is released.
    pub bar: &'static [Step],
    pub after_bar: Option<&'static [Step]>,
    pub checker: check::Model,
    pub far_only: bool,
}

impl Table {
    /// A model whose fences share one action and whose acquires and
    /// releases, of either scope, share another (epoch, GPM).
    pub const fn uniform(
        fence: &'static [Step],
        acqrel: &'static [Step],
        npfence: &'static [Step],
        bar: &'static [Step],
        checker: check::Model,
        far_only: bool,
    ) -> Table {
        Table {
            ofence: fence,
            dfence: fence,
            acq_block: acqrel,
            acq_device: acqrel,
            rel_block: acqrel,
            rel_device: acqrel,
            npfence,
            bar,
            after_bar: None,
            checker,
            far_only,
        }
    }

    fn steps(&self, i: &Instr) -> &'static [Step] {
        match i {
            Instr::OFence => self.ofence,
            Instr::DFence => self.dfence,
            Instr::PAcq { scope, .. } if *scope == Scope::Device => self.acq_device,
            Instr::PAcq { .. } => self.acq_block,
            Instr::PRel { scope, .. } if *scope == Scope::Device => self.rel_device,
            Instr::PRel { .. } => self.rel_block,
            Instr::Fence(_) => self.npfence,
            _ => unreachable!("not an ordering instruction"),
        }
    }
}

impl Persist for Table {
    fn far_only(&self) -> bool {
        self.far_only
    }

    fn checker(&self) -> check::Model {
        self.checker
    }

    fn pm_store(&self, sm: &mut Sm, cx: &mut Ctx, w: usize) -> bool {
        sm.store_pm_direct(cx, w)
    }

    fn ordering(&self, sm: &mut Sm, cx: &mut Ctx, w: usize, i: &Instr) {
        sm.record_ordering(cx, w, cx.now);
        let steps = self.steps(i);
        if steps.is_empty() {
            // Nothing to wait for: ordered at once (the warp stays ready).
            sm.warps[w].phase = Phase::Ordered;
        } else {
            sm.start_steps(w, steps, cx.now);
        }
    }

    fn barrier(&self, sm: &mut Sm, cx: &mut Ctx, w: usize) {
        sm.record_ordering(cx, w, cx.now);
        if self.bar.is_empty() {
            sm.arrive(w, cx.now);
        } else {
            sm.start_steps(w, self.bar, cx.now);
        }
    }

    fn after_barrier(&self) -> Option<&'static [Step]> {
        self.after_bar
    }

    fn cycle(&self, sm: &mut Sm, cx: &mut Ctx) {
        // Kernel end: the dirty PM lines are written back.
        if sm.draining && sm.live_warps == 0 {
            if cx.cfg.artifact.no_kernel_end_drain {
                // The artifact: dirty PM lines are dropped at no cost.
                sm.drop_dirty_pm();
            } else {
                sm.flush_dirty(cx, true);
            }
        }
    }

    fn kernel_end(&self, sm: &mut Sm, cx: &mut Ctx) {
        if cx.cfg.artifact.no_kernel_end_drain {
            // The artifact: epoch's dirty PM lines are dropped at no cost.
            sm.drop_dirty_pm();
        }
    }

    fn drained(&self, sm: &Sm) -> bool {
        !sm.l1.has_dirty(true)
    }
}
