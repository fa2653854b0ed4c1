//! Scoped persist barriers (SPB), Gope et al., GPGPU'18 (`docs/model.md`,
//! "Persistency models", SPB column; ../shared/papers/
//! scoped-persist-barriers-gpgpu18.txt §5-§6.1): unbuffered, in the
//! paper's "proposed implementation", which persists at the barrier. A
//! `p_barrier_wi` stalls the warp while the L1's NV writes (its NVW-FIFO,
//! shared by every warp of the CU) are written back to PM and acknowledged;
//! `p_barrier_wg` first waits for the whole work group; `p_barrier_kr`
//! waits for the whole kernel, which the programs express as kernel end.
//!
//! The workloads' ops map onto the barriers (the mapping, and why, is in
//! `docs/model.md`): oFence, dFence, pAcq and pRel of either scope are a
//! work-item barrier (Box 2 orders a warp's persists across each of them);
//! `bar` is a work-group barrier; kernel end a kernel barrier. A
//! device-scope pAcq also drops the L1's clean PM lines (scoped
//! synchronization, as under SBRP).

use sbrp_trace::check;

use super::super::steps::Step::{self, *};
use super::epoch::NPFENCE;
use super::Table;

/// `p_barrier_wi`: the L1's dirty PM lines written back, every PM write of
/// the SM acknowledged (durable). No fence latency: a persist barrier is
/// not a `__threadfence`, and no invalidation: nothing becomes stale.
const WI: &[Step] = &[FlushPm, WaitPm];
/// A device-scope acquire: the barrier, then scoped synchronization's L1
/// invalidation.
const ACQ_DEVICE: &[Step] = &[FlushPm, WaitPm, InvPm];

pub static SPB: Table = Table {
    ofence: WI,
    dfence: WI,
    acq_block: WI,
    acq_device: ACQ_DEVICE,
    rel_block: WI,
    rel_device: WI,
    // A `__threadfence` stays what it is under epoch (flush PM too: the
    // record's durable order entry).
    npfence: NPFENCE,
    // `p_barrier_wg`: all warps arrive, then each waits for the L1's NV writes.
    bar: &[],
    after_bar: Some(WI),
    // Box 2's PMO, dFence and device-release durability hold.
    checker: check::Model::Sbrp,
    far_only: false,
};
