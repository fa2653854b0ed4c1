//! What each persistency model does at each ordering point (`docs/model.md`,
//! "Persistency models"), as short step lists the warp runs in order.
//! SBRP's ordering ops go to the persist buffer unit instead; its steps
//! here are the non-persistent parts (a `__threadfence`'s volatile flush).

use sbrp_trace::program::Instr;

use crate::config::Model;

/// One step of an ordering point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Write back every dirty PM line of the SM's L1 (SM-wide, as the artifact does).
    FlushPm,
    /// Write back every dirty volatile line.
    FlushVol,
    /// Wait until every PM write of the SM is acknowledged.
    WaitPm,
    /// Wait until every write of the SM (PM and volatile) is acknowledged.
    WaitAll,
    /// The fence latency.
    FenceDelay,
    /// Drop the L1's clean PM lines.
    InvPm,
    /// Drop every clean line of the L1.
    InvAll,
}

use Step::*;

/// Epoch: oFence, dFence [notes §3.2].
const EPOCH_FENCE: &[Step] = &[FlushPm, WaitPm, InvPm, FenceDelay];
/// Epoch: pAcq, pRel of any scope (a load or store: no fence latency).
const EPOCH_ACQREL: &[Step] = &[FlushPm, WaitPm, InvPm];
/// Epoch and GPM: `__syncthreads` is an epoch barrier.
const EPOCH_BAR: &[Step] = &[FlushPm, FlushVol, WaitPm, InvAll];
/// Epoch and GPM: a non-persistent fence.
const EPOCH_NPFENCE: &[Step] = &[FlushPm, FlushVol, WaitAll, FenceDelay, InvAll];
/// GPM: the epoch action, then the device fence the GPM build adds.
const GPM_FENCE: &[Step] = &[
    FlushPm, WaitPm, InvPm, FenceDelay, FlushVol, WaitAll, FenceDelay, InvAll,
];
const GPM_ACQREL: &[Step] = &[
    FlushPm, WaitPm, InvPm, FlushVol, WaitAll, FenceDelay, InvAll,
];
/// SBRP: after a non-persistent fence's durable order entry, its own part.
pub const SBRP_NPFENCE: &[Step] = &[FlushVol, WaitAll, FenceDelay, InvAll];

/// The steps of ordering op `i` under epoch or GPM (None: not an ordering point).
pub fn epoch_steps(model: Model, i: &Instr) -> Option<&'static [Step]> {
    let gpm = model == Model::Gpm;
    Some(match i {
        Instr::OFence | Instr::DFence if gpm => GPM_FENCE,
        Instr::OFence | Instr::DFence => EPOCH_FENCE,
        Instr::PAcq { .. } | Instr::PRel { .. } if gpm => GPM_ACQREL,
        Instr::PAcq { .. } | Instr::PRel { .. } => EPOCH_ACQREL,
        Instr::Bar => EPOCH_BAR,
        Instr::Fence(_) => EPOCH_NPFENCE,
        _ => return None,
    })
}
