//! The reference model's read-only queries for drivers that skip steps
//! (`PbUnit::frozen`, `PbUnit::refuses`; `docs/model.md`, "Event loop"):
//! when a step would change nothing but the request pipeline, and which
//! requests it would answer replay. Split from `unit.rs`.

use sbrp_iface::{entry_type as ty, Op, PbIn};

use super::{bits, Fault, PbModel, D, F};

impl PbModel {
    /// Read-only. Walks `step`'s blocks: with no acknowledgement registered
    /// or coming, no invalidation under way, no epoch to release, no FIFO
    /// pop, no head action (for the registered and the coming `drain_all`)
    /// and only refused requests, no block writes anything but `r1`, `r2`,
    /// `inq` and the response registers. Faulty models are never frozen.
    #[inline]
    pub(super) fn frozen_under(&self, inp: &PbIn) -> bool {
        let force = self.drain_pend || self.full;
        let can_flush = !self.ep_closed && self.actr < self.actr_max && self.fifo_n < F;
        let he = *self.e(self.head);
        let head_moves = |drain: bool| {
            if self.empty() {
                false
            } else if he.ty == ty::PERSIST {
                he.warps & self.fsm & self.fsm_gate_mask == 0
                    && can_flush
                    && (force || drain || self.actr < self.policy_limit)
            } else {
                // A hole pops, an ordering entry retires.
                true
            }
        };
        self.fault == Fault::None
            && self.ready
            && !inp.rst
            && !self.rst_q
            && self.inq.ack_count & 7 == 0
            && inp.ack_count & 7 == 0
            && !self.inv_req
            && self.inv_cur == 0
            && !self.ep_rel
            && (self.fifo_n == 0 || !inp.flush_ready)
            && !head_moves(self.inq.drain_all)
            && !head_moves(inp.drain_all)
    }

    /// Read-only: 4.2 for `req` in `r2` with no head action (frozen).
    #[inline]
    pub(super) fn refuses_in_r2(&self, req: &PbIn) -> bool {
        let w = (req.req_warp & 63) as usize;
        if !req.req_valid || w as u32 >= self.warps {
            return false;
        }
        if self.stall >> w & 1 == 1 {
            return true;
        }
        let (l, k) = (req.req_line & self.line_mask, req.req_pbidx & self.n_mask);
        let ek = *self.e(k);
        let buffered = req.req_pbv && self.live(k) && ek.ty == ty::PERSIST && ek.line == l;
        match Op::from_bits(req.req_op) {
            Op::Store => self.fifo_has(l) || !buffered && self.full,
            Op::Evict => {
                // Performed when not buffered; else a wait, or a flush that
                // can go, or a replay.
                let can_flush = !self.ep_closed && self.actr < self.actr_max && self.fifo_n < F;
                let m = ek.warps & self.warp_mask;
                let age_k = self.age(k);
                let older = bits(m).any(|v| self.oq_n[v] > 0 && self.age(self.oq[v][0]) < age_k);
                self.fifo_has(l)
                    || buffered && !older && !(m & self.fsm & self.fsm_gate_mask == 0 && can_flush)
            }
            op => {
                let y = self.tail.wrapping_sub(1) & self.n_mask;
                let coal = !self.empty() && self.last_type == op as u8 + 1;
                let n = self.oq_n[w] as usize;
                let named = coal && n > 0 && self.oq[w][n - 1] == y;
                (!named && n == D) || !coal && self.full
            }
        }
    }
}
