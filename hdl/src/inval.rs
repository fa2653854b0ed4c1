//! L1 invalidation handshake (`docs/microarch.md` §4.4 "Invalidation"):
//! `inv_req`, `inv_cur` (warps the pending invalidation releases),
//! `inv_next` (warps that need the next one).
//!
//! `doneq` is the registered `inv_done`; `inv_add` are the warps of a
//! dFence or device pAcq retiring at the head this cycle.

use crate::blocks::{bv, u};
use rust_hdl::core::prelude::*;

#[derive(Clone, Copy, Debug, Default)]
struct State {
    req: bool,
    cur: u64,
    next: u64,
}

/// Invalidation request and the warps waiting for it.
#[derive(Clone, Debug, Default, LogicBlock)]
pub struct Inval<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    pub doneq: Signal<In, bool>,
    pub inv_add: Signal<In, Bits<W>>,
    pub inv_req: Signal<Out, bool>,
    pub inv_cur: Signal<Out, Bits<W>>,
    pub inv_next: Signal<Out, Bits<W>>,
    /// `inv_cur | inv_next` of the next cycle, for the request warp's stall
    /// bit selected a cycle early.
    pub stall_nx: Signal<Out, Bits<W>>,
    /// `!inv_req && inv_cur == 0` after this cycle (for the registered `idle`).
    pub inv_quiet_nx: Signal<Out, bool>,
    _s: State,
}

impl<const W: usize> Inval<W> {
    fn next_state(&self) -> State {
        let s = self._s;
        let add = u(&self.inv_add);
        if self.rst.val() {
            State::default()
        } else if self.doneq.val() && s.req {
            // done: inv_cur's warps are released
            State {
                req: false,
                cur: s.next | add,
                next: 0,
            }
        } else if s.req {
            State {
                next: s.next | add,
                ..s
            }
        } else {
            let cur = s.cur | add;
            State {
                req: cur != 0,
                cur,
                next: 0,
            }
        }
    }
}

impl<const W: usize> Logic for Inval<W> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._s = self.next_state();
        }
        self.inv_req.next = self._s.req;
        self.inv_cur.next = bv(self._s.cur);
        self.inv_next.next = bv(self._s.next);
        let nx = self.next_state();
        self.stall_nx.next = bv(nx.cur | nx.next);
        self.inv_quiet_nx.next = !nx.req && nx.cur == 0;
    }
    fn connect(&mut self) {
        self.inv_req.connect();
        self.inv_cur.connect();
        self.inv_next.connect();
        self.stall_nx.connect();
        self.inv_quiet_nx.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
wire [{wm}:0] cur_add = inv_cur | inv_add;
// inv_cur | inv_next after this cycle
always @(*) inv_quiet_nx = inv_req ? (doneq & ~|(inv_next | inv_add)) : ~|cur_add;
always @(*) stall_nx = inv_req ? ((doneq ? {w}'d0 : inv_cur) | inv_next | inv_add) : cur_add;
always @(posedge clock) begin
   if (rst) begin
      inv_req <= 1'b0; inv_cur <= {w}'d0; inv_next <= {w}'d0;
   end else if (doneq & inv_req) begin
      inv_req <= 1'b0; inv_cur <= inv_next | inv_add; inv_next <= {w}'d0;
   end else if (inv_req) begin
      inv_next <= inv_next | inv_add;
   end else begin
      inv_cur <= cur_add; inv_next <= {w}'d0; inv_req <= |cur_add;
   end
end
",
            wm = W - 1,
            w = W,
        ))
    }
}
