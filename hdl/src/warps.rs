//! Per-warp tables (`docs/microarch.md` §3, §4.1, §4.2): the ordering queue
//! `oq_n[w]`, `oq[w][0..D-1]` (D = 2), the entry wait `wait_ent[w]`,
//! `wait_idx[w]`, and ODM.
//!
//! W x IW register files written by hand with loops (a `Bits<{W*IW}>` is not
//! possible in stable Rust), exposing narrow ports: the youngest entry of
//! the request's warp (coalescing check, open points 1-2), the OR over a
//! warp mask of "oldest ordering entry older than k" (eviction check, open
//! point 12), pop at retire, push, and the entry waits.

use crate::blocks::{bv, mask, u, v_older};
use rust_hdl::core::prelude::*;

#[derive(Clone, Debug, Default)]
struct State {
    oq_n: Vec<u64>,
    oq0: Vec<u64>,
    oq1: Vec<u64>,
    wait_ent: u64,
    wait_idx: Vec<u64>,
    odm: u64,
}

impl State {
    fn new(w: usize) -> State {
        State {
            oq_n: vec![0; w],
            oq0: vec![0; w],
            oq1: vec![0; w],
            wait_ent: 0,
            wait_idx: vec![0; w],
            odm: 0,
        }
    }
}

/// Ordering queues, entry waits and ODM of the W warps.
#[derive(Clone, Debug, LogicBlock)]
pub struct WarpTables<const W: usize, const WB: usize, const IW: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    pub head: Signal<In, Bits<IW>>,
    /// The request's warp (the low WB bits of `r2.warp`) and entry `k`.
    pub q_warp: Signal<In, Bits<WB>>,
    pub k: Signal<In, Bits<IW>>,
    /// The warps of entry `k` (eviction check).
    pub ev_mask: Signal<In, Bits<W>>,
    /// An ordering entry retires at the head: warps whose oldest entry it is pop.
    pub retire: Signal<In, bool>,
    /// The head entry leaves: entry waits on it end.
    pub pop: Signal<In, bool>,
    /// Push `push_idx` on the request warp's queue.
    pub push: Signal<In, bool>,
    pub push_idx: Signal<In, Bits<IW>>,
    /// The request's warp waits in EDM for entry `k`.
    pub wait_set: Signal<In, bool>,
    pub odm_set: Signal<In, Bits<W>>,
    pub odm_clr: Signal<In, Bits<W>>,
    pub odm: Signal<Out, Bits<W>>,
    pub wait_ent: Signal<Out, Bits<W>>,
    /// The request's warp has a live ordering entry; the youngest; it has D.
    pub yq_valid: Signal<Out, bool>,
    pub yq_idx: Signal<Out, Bits<IW>>,
    pub q_full: Signal<Out, bool>,
    /// Some warp of `ev_mask` has a live ordering entry older than `k`.
    pub older: Signal<Out, bool>,
    _s: State,
}

impl<const W: usize, const WB: usize, const IW: usize> Default for WarpTables<W, WB, IW> {
    fn default() -> Self {
        WarpTables {
            clock: Default::default(),
            rst: Default::default(),
            head: Default::default(),
            q_warp: Default::default(),
            k: Default::default(),
            ev_mask: Default::default(),
            retire: Default::default(),
            pop: Default::default(),
            push: Default::default(),
            push_idx: Default::default(),
            wait_set: Default::default(),
            odm_set: Default::default(),
            odm_clr: Default::default(),
            odm: Default::default(),
            wait_ent: Default::default(),
            yq_valid: Default::default(),
            yq_idx: Default::default(),
            q_full: Default::default(),
            older: Default::default(),
            _s: State::new(W),
        }
    }
}

impl<const W: usize, const WB: usize, const IW: usize> WarpTables<W, WB, IW> {
    fn next_state(&self) -> State {
        if self.rst.val() {
            return State::new(W);
        }
        let mut s = self._s.clone();
        let head = u(&self.head);
        let w = u(&self.q_warp) as usize;
        for i in 0..W {
            // 4.1: pop at retire (pop first, then the push of this cycle)
            if self.retire.val() && s.oq_n[i] != 0 && s.oq0[i] == head {
                s.oq0[i] = s.oq1[i];
                s.oq_n[i] -= 1;
            }
            if self.push.val() && i == w {
                if s.oq_n[i] == 0 {
                    s.oq0[i] = u(&self.push_idx);
                } else {
                    s.oq1[i] = u(&self.push_idx);
                }
                s.oq_n[i] += 1;
            }
            if self.pop.val() && s.wait_ent >> i & 1 == 1 && s.wait_idx[i] == head {
                s.wait_ent &= !(1 << i);
            }
            if self.wait_set.val() && i == w {
                s.wait_ent |= 1 << i;
                s.wait_idx[i] = u(&self.k);
            }
        }
        s.odm = (s.odm & !u(&self.odm_clr)) | u(&self.odm_set);
        s
    }
}

impl<const W: usize, const WB: usize, const IW: usize> Logic for WarpTables<W, WB, IW> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._s = self.next_state();
        }
        let s = &self._s;
        let im = mask(IW);
        let head = u(&self.head);
        let w = u(&self.q_warp) as usize;
        let age_k = u(&self.k).wrapping_sub(head) & im;
        let m = u(&self.ev_mask);
        self.odm.next = bv(s.odm);
        self.wait_ent.next = bv(s.wait_ent);
        self.yq_valid.next = s.oq_n[w] != 0;
        self.yq_idx.next = bv(if s.oq_n[w] == 2 { s.oq1[w] } else { s.oq0[w] });
        self.q_full.next = s.oq_n[w] == 2;
        self.older.next = (0..W).any(|i| {
            m >> i & 1 == 1 && s.oq_n[i] != 0 && (s.oq0[i].wrapping_sub(head) & im) < age_k
        });
    }
    fn connect(&mut self) {
        self.odm.connect();
        self.wait_ent.connect();
        self.yq_valid.connect();
        self.yq_idx.connect();
        self.q_full.connect();
        self.older.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
reg [1:0] oq_n [0:{wm}];
reg [{im}:0] oq0 [0:{wm}];
reg [{im}:0] oq1 [0:{wm}];
reg [{im}:0] wait_idx [0:{wm}];
wire [{wbm}:0] w = q_warp;
wire [{wm}:0] wsel = {{{{{wm}{{1'b0}}}}, 1'b1}} << w;
wire [{wm}:0] older_v;
wire [{wm}:0] popq;
wire [{wm}:0] wait_end;

genvar g;
generate for (g = 0; g < {w_}; g = g + 1) begin : g_warp
   wire o_older = {o_older};
   // the warp's oldest live ordering entry is older than k
   assign older_v[g] = ev_mask[g] & (oq_n[g] != 2'd0) & o_older;
   // 4.1: the retiring head entry is the warp's oldest
   assign popq[g] = retire & (oq_n[g] != 2'd0) & (oq0[g] == head);
   assign wait_end[g] = pop & wait_ent[g] & (wait_idx[g] == head);
   wire push_g = push & wsel[g];
   wire [1:0] n1 = oq_n[g] - {{1'b0, popq[g]}};
   always @(posedge clock) begin
      if (rst) begin
         oq_n[g] <= 2'd0; oq0[g] <= {iw}'d0; oq1[g] <= {iw}'d0;
         wait_ent[g] <= 1'b0; wait_idx[g] <= {iw}'d0; odm[g] <= 1'b0;
      end else begin
         // pop first, then push
         oq_n[g] <= n1 + {{1'b0, push_g}};
         if (push_g & (n1 == 2'd0)) oq0[g] <= push_idx;
         else if (popq[g]) oq0[g] <= oq1[g];
         if (push_g & (n1 != 2'd0)) oq1[g] <= push_idx;
         if (wait_set & wsel[g]) begin
            wait_ent[g] <= 1'b1;
            wait_idx[g] <= k;
         end else if (wait_end[g]) wait_ent[g] <= 1'b0;
         odm[g] <= (odm[g] & ~odm_clr[g]) | odm_set[g];
      end
   end
end endgenerate

always @(*) yq_valid = oq_n[w] != 2'd0;
always @(*) yq_idx = (oq_n[w] == 2'd2) ? oq1[w] : oq0[w];
always @(*) q_full = oq_n[w] == 2'd2;
always @(*) older = |older_v;
",
            o_older = v_older("oq0[g]", "k", "head"),
            wm = W - 1,
            w_ = W,
            im = IW - 1,
            iw = IW,
            wbm = WB - 1,
        ))
    }
}
