//! The reference model with register slices at its boundary
//! (`docs/microarch.md` §2.1): the unmodified [`PbModel`] inside delay
//! lines on the request, response and acknowledgement paths, cycle-exact
//! with the RTL's slices (`hdl/src/pipe.rs`) and flush hold
//! (`hdl/src/hold.rs`). Kept outside `PbModel` so that
//! the unsliced model's step is untouched.
//!
//! With response stages the flush port is held while a store of the flush
//! FIFO head's line is decided and its response, which the L1 needs to write
//! the store's words, is still on its way ([`FlushHold`], §2.1):
//! `flush_valid` reads 0 and the core does not see `flush_ready`.

use sbrp_iface::slices::{FlushHold, Slices, SLICE_MAX};
use sbrp_iface::{PbIn, PbOut, PbParams, PbUnit, Probe};

use crate::PbModel;

const S: usize = SLICE_MAX as usize;

/// One request stage: a taken request, all fields 0 when none was taken.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Req {
    valid: bool,
    op: u8,
    warp: u8,
    line: u32,
    pbv: bool,
    pbidx: u32,
}

/// One response stage (the `rsp_*` outputs).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Rsp {
    valid: bool,
    warp: u8,
    kind: u8,
    idx: u32,
}

/// [`PbModel`] behind [`Slices`]; a [`PbUnit`] like it.
pub struct SlicedModel {
    core: PbModel,
    slices: Slices,
    /// Stage 0 is nearest the ports on the request and ack paths, nearest
    /// the core on the response path; the last stage used is `slices.x - 1`.
    req: [Req; S],
    rsp: [Rsp; S],
    ack: [(u8, u8); S],
    /// The stores taken at the ports, for the flush hold.
    hold: FlushHold,
    /// `rst` of the last cycle: this is a reset cycle (§7), which clears
    /// the slices with every other register.
    rst_q: bool,
}

impl SlicedModel {
    pub fn new(core: PbModel, slices: Slices) -> Result<SlicedModel, sbrp_iface::ParamError> {
        slices.validate()?;
        let hold = FlushHold::new(slices, core.params().line_bits());
        Ok(SlicedModel {
            core,
            slices,
            req: [Req::default(); S],
            rsp: [Rsp::default(); S],
            ack: [(0, 0); S],
            hold,
            rst_q: false,
        })
    }

    /// The core's view of the outputs: the response from the last slice,
    /// the flush port held by [`FlushHold`].
    fn port_out(&self, mut o: PbOut) -> PbOut {
        o.flush_valid &= !self.hold.holds(o.flush_line);
        if self.slices.rsp > 0 {
            let r = self.rsp[usize::from(self.slices.rsp) - 1];
            o.rsp_valid = r.valid;
            o.rsp_warp = r.warp;
            o.rsp_kind = r.kind;
            o.rsp_idx = r.idx;
        }
        o
    }
}

/// Shifts `v` into the first `n` stages of `line`.
fn shift<T: Copy>(line: &mut [T; S], n: u8, v: T) {
    let n = usize::from(n);
    if n > 0 {
        line.copy_within(0..n - 1, 1);
        line[0] = v;
    }
}

impl PbUnit for SlicedModel {
    fn params(&self) -> &PbParams {
        self.core.params()
    }

    fn name(&self) -> &str {
        self.core.name()
    }

    fn step(&mut self, inp: &PbIn) -> PbOut {
        let sl = self.slices;
        // The core's inputs: the last request and ack stages.
        let mut inner = *inp;
        if sl.req > 0 {
            let r = self.req[usize::from(sl.req) - 1];
            inner.req_valid = r.valid;
            inner.req_op = r.op;
            inner.req_warp = r.warp;
            inner.req_line = r.line;
            inner.req_pbv = r.pbv;
            inner.req_pbidx = r.pbidx;
        }
        if sl.ack > 0 {
            (inner.ack_count, inner.ack_epoch) = self.ack[usize::from(sl.ack) - 1];
        }
        // The core's outputs are registers: known before it steps.
        let hold = sl.rsp > 0
            && self
                .core
                .next_out()
                .is_some_and(|o| self.hold.holds(o.flush_line));
        inner.flush_ready &= !hold;
        let core_out = self.core.step(&inner);
        let out = self.port_out(core_out);
        if self.rst_q {
            self.req = [Req::default(); S];
            self.rsp = [Rsp::default(); S];
            self.ack = [(0, 0); S];
        } else {
            // Taken as `r1` takes it (4.0): valid and ready; fields 0 otherwise.
            let taken = inp.req_valid && core_out.req_ready;
            let r = if taken {
                Req {
                    valid: true,
                    op: inp.req_op,
                    warp: inp.req_warp,
                    line: inp.req_line,
                    pbv: inp.req_pbv,
                    pbidx: inp.req_pbidx,
                }
            } else {
                Req::default()
            };
            shift(&mut self.req, sl.req, r);
            let c = Rsp {
                valid: core_out.rsp_valid,
                warp: core_out.rsp_warp,
                kind: core_out.rsp_kind,
                idx: core_out.rsp_idx,
            };
            shift(&mut self.rsp, sl.rsp, c);
            shift(&mut self.ack, sl.ack, (inp.ack_count, inp.ack_epoch));
        }
        // Taken at the ports (the core's `req_ready` is the unit's).
        let taken = (inp.req_valid && core_out.req_ready).then_some((inp.req_op, inp.req_line));
        self.hold.clock(taken, self.rst_q);
        self.rst_q = inp.rst;
        out
    }

    fn probes(&self) -> Vec<Probe> {
        self.core.probes()
    }

    fn probe_values(&self, out: &mut Vec<u64>) {
        self.core.probe_values(out)
    }

    /// The core's registers and every slice stage.
    fn state_key(&self, out: &mut Vec<u64>) {
        self.core.state_key(out);
        for r in &self.req {
            out.push(u64::from(r.valid) | u64::from(r.op) << 1 | u64::from(r.warp) << 4);
            out.push(u64::from(r.line) | u64::from(r.pbv) << 32);
            out.push(u64::from(r.pbidx));
        }
        for r in &self.rsp {
            out.push(u64::from(r.valid) | u64::from(r.warp) << 1 | u64::from(r.kind) << 8);
            out.push(u64::from(r.idx));
        }
        for (c, e) in &self.ack {
            out.push(u64::from(*c) | u64::from(*e) << 8);
        }
        self.hold.state_key(out);
        out.push(u64::from(self.rst_q));
    }

    fn next_out(&self) -> Option<PbOut> {
        self.core.next_out().map(|o| self.port_out(o))
    }

    fn rsp_latency(&self) -> usize {
        self.slices.rsp_latency()
    }
}
