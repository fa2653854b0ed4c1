//! Epoch persistency (`docs/model.md`, "Persistency models", epoch column;
//! sbrp-benchmarks.md §3.2): every ordering point flushes the SM's dirty PM
//! lines, waits for every PM write of the SM and drops the L1's PM lines.

use sbrp_trace::check;

use super::super::steps::Step::{self, *};
use super::Table;

/// oFence, dFence: with the fence latency.
pub const FENCE: &[Step] = &[FlushPm, WaitPm, InvPm, FenceDelay];
/// pAcq, pRel of any scope (a load or store: no fence latency).
pub const ACQREL: &[Step] = &[FlushPm, WaitPm, InvPm];
/// `__syncthreads` is an epoch barrier (GPM's too).
pub const BAR: &[Step] = &[FlushPm, FlushVol, WaitPm, InvAll];
/// A non-persistent fence (GPM's and SPB's too).
pub const NPFENCE: &[Step] = &[FlushPm, FlushVol, WaitAll, FenceDelay, InvAll];

pub static EPOCH: Table = Table::uniform(FENCE, ACQREL, NPFENCE, BAR, check::Model::Epoch, false);
