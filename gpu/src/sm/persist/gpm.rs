//! GPM (`docs/model.md`, "Persistency models", GPM column; paper §4, §7):
//! epoch's action, then the device fence the GPM build adds (flush volatile
//! lines, wait for every write, fence latency, drop every clean line).
//! PM-far only: GPM needs no new hardware [§4; sbrp-benchmarks.md §6.15].

use sbrp_trace::check;

use super::super::steps::Step::{self, *};
use super::epoch::{BAR, NPFENCE};
use super::Table;

const FENCE: &[Step] = &[
    FlushPm, WaitPm, InvPm, FenceDelay, FlushVol, WaitAll, FenceDelay, InvAll,
];
const ACQREL: &[Step] = &[
    FlushPm, WaitPm, InvPm, FlushVol, WaitAll, FenceDelay, InvAll,
];

/// PM-far only (`far_only`).
pub static GPM: Table = Table::uniform(FENCE, ACQREL, NPFENCE, BAR, check::Model::Gpm, true);
