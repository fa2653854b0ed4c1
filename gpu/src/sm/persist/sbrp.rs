//! SBRP (`docs/model.md`, "Persistency models", SBRP column; paper §5-§6):
//! PM stores and ordering ops are requests to the SM's persist buffer unit
//! (`unit_port.rs` is the SM's side of its interfaces); the device-scope
//! variant promotes every block-scope op [§7.2, Fig. 7].

use sbrp_trace::check;
use sbrp_trace::program::Instr;

use super::super::steps::Step::{self, *};
use super::super::warp::{Cause, Phase, WState};
use super::super::{Ctx, Sm};
use super::Persist;

/// After a non-persistent fence's durable order entry, its own part.
const NPFENCE: &[Step] = &[FlushVol, WaitAll, FenceDelay, InvAll];

pub struct Sbrp {
    promote: bool,
}

pub static SBRP: Sbrp = Sbrp { promote: false };
pub static SBRP_DEVICE: Sbrp = Sbrp { promote: true };

impl Persist for Sbrp {
    fn has_unit(&self) -> bool {
        true
    }

    fn promotes(&self) -> bool {
        self.promote
    }

    fn checker(&self) -> check::Model {
        check::Model::Sbrp
    }

    fn pm_store(&self, sm: &mut Sm, cx: &mut Ctx, w: usize) -> bool {
        // One request per line, sent by `unit_cycle`.
        sm.warps[w].phase = Phase::Lines;
        sm.wait(w, WState::UnitReq, Cause::PersistBuffer, cx.now);
        true
    }

    fn ordering(&self, sm: &mut Sm, cx: &mut Ctx, w: usize, _i: &Instr) {
        // A non-persistent fence sends a durable order entry first.
        sm.unit_request(w, cx.now);
    }

    fn fence(&self) -> Option<&'static [Step]> {
        Some(NPFENCE)
    }

    fn barrier(&self, sm: &mut Sm, cx: &mut Ctx, w: usize) {
        // Each arriving warp adds an order entry (the artifact's barrier).
        sm.unit_request(w, cx.now);
    }

    fn cycle(&self, sm: &mut Sm, cx: &mut Ctx) {
        sm.unit_cycle(cx);
    }

    fn kernel_end(&self, _sm: &mut Sm, _cx: &mut Ctx) {
        // The unit drained (`drain_all`) before the kernel ended, or, with
        // `artifact.no_kernel_end_drain`, keeps its entries.
    }

    fn drained(&self, sm: &Sm) -> bool {
        sm.unit_state.idle()
    }
}
