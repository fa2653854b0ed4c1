//! The flush FIFO (`docs/microarch.md` §2 "Flush / ack", §4.4): F = 4
//! queued flushes {line, warps, evict, epoch}.
//!
//! In the Verilog the head entry is a register that drives the `flush_*`
//! outputs directly (zero when empty), refilled from a ring of 3 slots
//! behind it or from the push when the ring is empty; the Rust model below
//! keeps the plain 4-slot FIFO (read and write pointers with a wrap bit),
//! which has the same port behaviour. `flush_ready` is the one input used
//! unregistered: it only takes the head (a final select). `has_line` is the
//! busy check of §4.2 over the queued lines, a register: computed while
//! the request is in `r1`, against the lines queued after that cycle.

use crate::blocks::{bv, ev_local, u, v_ev_local};
use rust_hdl::core::prelude::*;
use sbrp_iface::consts::FLUSH_FIFO;

const F: usize = FLUSH_FIFO as usize;

#[derive(Clone, Copy, Debug, Default)]
struct State {
    line: [u64; F],
    warps: [u64; F],
    evict: [bool; F],
    epoch: [u64; F],
    rd: u64,
    wr: u64,
    /// Some queued flush has the line of the request decided next.
    has: bool,
}

impl State {
    fn count(&self) -> u64 {
        self.wr.wrapping_sub(self.rd) & 7
    }
}

/// Flush FIFO.
#[derive(Clone, Debug, Default, LogicBlock)]
pub struct FlushFifo<const W: usize, const LW: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    pub flush_ready: Signal<In, bool>,
    /// The head action flushes {`head_line`, `head_warps`} (`ha_flush`),
    /// unless the request's eviction flush of `q_line` with `ev_warps` takes
    /// the cycle; that flush is recomputed here from its parts
    /// ([`crate::blocks::ev_local`], with this block's `has_line`).
    pub ha_flush: Signal<In, bool>,
    pub ev_pre: Signal<In, bool>,
    pub k_ev: Signal<In, bool>,
    pub hl_eq: Signal<In, bool>,
    pub head_line: Signal<In, Bits<LW>>,
    pub head_warps: Signal<In, Bits<W>>,
    pub ev_warps: Signal<In, Bits<W>>,
    /// The epoch both are counted in (`ep_cur`).
    pub push_epoch: Signal<In, Bits<2>>,
    /// Line of the request in `r2` (the eviction flush) and in `r1` (the
    /// busy check, registered for its decision next cycle).
    pub q_line: Signal<In, Bits<LW>>,
    pub r1_line: Signal<In, Bits<LW>>,
    pub flush_valid: Signal<Out, bool>,
    pub flush_line: Signal<Out, Bits<LW>>,
    pub flush_warps: Signal<Out, Bits<W>>,
    pub flush_evict: Signal<Out, bool>,
    pub flush_epoch: Signal<Out, Bits<2>>,
    pub not_full: Signal<Out, bool>,
    pub has_line: Signal<Out, bool>,
    _s: State,
}

impl<const W: usize, const LW: usize> FlushFifo<W, LW> {
    fn next_state(&self) -> State {
        if self.rst.val() {
            return State::default();
        }
        let ha_flush = self.ha_flush.val();
        let ev = ev_local(
            self.ev_pre.val(),
            self.k_ev.val(),
            self._s.has,
            ha_flush,
            self.hl_eq.val(),
        );
        let mut s = self._s;
        if s.count() > 0 && self.flush_ready.val() {
            s.rd = (s.rd + 1) & 7;
        }
        if ha_flush || ev {
            let i = (s.wr & 3) as usize;
            (s.line[i], s.warps[i]) = if ev {
                (u(&self.q_line), u(&self.ev_warps))
            } else {
                (u(&self.head_line), u(&self.head_warps))
            };
            s.evict[i] = ev;
            s.epoch[i] = u(&self.push_epoch);
            s.wr = (s.wr + 1) & 7;
        }
        let l = u(&self.r1_line);
        s.has = (0..s.count()).any(|a| s.line[((s.rd + a) & 3) as usize] == l);
        s
    }
}

impl<const W: usize, const LW: usize> Logic for FlushFifo<W, LW> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._s = self.next_state();
        }
        let s = &self._s;
        let n = s.count();
        let h = (s.rd & 3) as usize;
        let v = n > 0;
        self.flush_valid.next = v;
        self.flush_line.next = bv(if v { s.line[h] } else { 0 });
        self.flush_warps.next = bv(if v { s.warps[h] } else { 0 });
        self.flush_evict.next = v && s.evict[h];
        self.flush_epoch.next = bv(if v { s.epoch[h] } else { 0 });
        self.not_full.next = n < F as u64;
        self.has_line.next = s.has;
    }
    fn connect(&mut self) {
        self.flush_valid.connect();
        self.flush_line.connect();
        self.flush_warps.connect();
        self.flush_evict.connect();
        self.flush_epoch.connect();
        self.not_full.connect();
        self.has_line.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
// The head entry is a register (the flush_* outputs, zero when empty); the
// up to 3 flushes behind it wait in a ring of 3 slots, from rd, n of them.
// So every flush output is a flip-flop (a register-to-output path of no
// logic), and flush_ready only makes the final 2:1 select of the head and
// ring registers (its fan-out is the input's whole path).
reg [{lm}:0] b_line [0:2];
reg [{wm}:0] b_warps [0:2];
reg b_evict [0:2];
reg [1:0] b_epoch [0:2];
reg [1:0] rd;
reg [1:0] n;
// the request's eviction flush, recomputed here; it takes the head's flush
wire push_evict = {ev_l};
wire push = ha_flush | push_evict;
wire [{lm}:0] p_line = push_evict ? q_line : head_line;
wire [{wm}:0] p_warps = push_evict ? ev_warps : head_warps;
// the flush at the head leaves when taken; when not valid n is 0 and both
// choices below are equal, so flush_ready alone selects
wire take = flush_ready;
wire nz = n != 2'd0;
wire [1:0] rd_inc = (rd == 2'd2) ? 2'd0 : rd + 2'd1;
// the ring slot behind the n queued ones: (rd + n) mod 3
wire [2:0] rn = {{1'b0, rd}} + {{1'b0, n}};
wire [1:0] wslot = (rn >= 3'd3) ? rn[1:0] - 2'd3 : rn[1:0];
// slot i is queued when its distance from rd is below n
wire [1:0] d0 = (rd == 2'd0) ? 2'd0 : (rd == 2'd1) ? 2'd2 : 2'd1;
wire [1:0] d1 = (rd == 2'd0) ? 2'd1 : (rd == 2'd1) ? 2'd0 : 2'd2;
wire [1:0] d2 = (rd == 2'd0) ? 2'd2 : (rd == 2'd1) ? 2'd1 : 2'd0;
// not_full is a register (its complement, 0 at reset), from the next ring
// count: it starts can_flush, and so the head flush, early in the cycle
reg full_r;
always @(*) not_full = ~full_r;
// has_line (busy check, 4.2) is registered while the request is in r1: the
// lines queued after this cycle's take and push against r1's line; the
// late eviction flush only selects the pushed line
wire g0 = (d0 < n) & (b_line[0] == r1_line);
wire g1 = (d1 < n) & (b_line[1] == r1_line);
wire g2 = (d2 < n) & (b_line[2] == r1_line);
// (AND-OR, not `?:`, so that synthesis keeps both compares before it)
wire g_e = q_line == r1_line;
wire g_n = ha_flush & (head_line == r1_line);
// for both outcomes of take: the head's line counts when kept
(* keep *) wire g_t = g0 | g1 | g2 | (push_evict & g_e) | (~push_evict & g_n);
(* keep *) wire g_k = g_t | (flush_valid & (flush_line == r1_line));

// the head's next value when kept (filled by a push when empty) and when
// taken (the ring's oldest, else a push, else empty); every register's
// next value is kept as a net for both outcomes of take, so that the input
// is the last select (synthesis would fold it into the selects before)
(* keep *) wire v_keep = flush_valid | push;
(* keep *) wire v_take = nz | push;
(* keep *) wire [{lm}:0] l_keep = flush_valid ? flush_line : push ? p_line : {lw}'d0;
(* keep *) wire [{lm}:0] l_take = nz ? b_line[rd] : push ? p_line : {lw}'d0;
(* keep *) wire [{wm}:0] w_keep = flush_valid ? flush_warps : push ? p_warps : {w}'d0;
(* keep *) wire [{wm}:0] w_take = nz ? b_warps[rd] : push ? p_warps : {w}'d0;
(* keep *) wire e_keep = flush_valid ? flush_evict : push & push_evict;
(* keep *) wire e_take = nz ? b_evict[rd] : push & push_evict;
(* keep *) wire [1:0] p_keep = flush_valid ? flush_epoch : push ? push_epoch : 2'd0;
(* keep *) wire [1:0] p_take = nz ? b_epoch[rd] : push ? push_epoch : 2'd0;
// ring count: kept head, a push joins the ring when the head is valid;
// taken head, the ring's oldest moves up and a push joins it when n > 0
(* keep *) wire [1:0] n_keep = n + {{1'b0, push & flush_valid}};
(* keep *) wire [1:0] n_take = nz ? n - {{1'b0, ~push}} : 2'd0;
(* keep *) wire [1:0] rd_take = nz ? rd_inc : rd;
(* keep *) wire fu_keep = n_keep == 2'd3;
(* keep *) wire fu_take = n_take == 2'd3;

always @(posedge clock) begin
   if (rst) begin
      flush_valid <= 1'b0; flush_line <= {lw}'d0; flush_warps <= {w}'d0;
      flush_evict <= 1'b0; flush_epoch <= 2'd0; rd <= 2'd0; n <= 2'd0;
      has_line <= 1'b0; full_r <= 1'b0;
   end else begin
      full_r <= take ? fu_take : fu_keep;
      has_line <= (take & g_t) | (~take & g_k);
      flush_valid <= take ? v_take : v_keep;
      flush_line <= take ? l_take : l_keep;
      flush_warps <= take ? w_take : w_keep;
      flush_evict <= take ? e_take : e_keep;
      flush_epoch <= take ? p_take : p_keep;
      n <= take ? n_take : n_keep;
      rd <= take ? rd_take : rd;
      // a push is written to the ring slot behind the queued ones; when it
      // goes to the head instead, the slot is not counted (n stays 0)
      if (push) begin
         b_line[wslot] <= p_line;
         b_warps[wslot] <= p_warps;
         b_evict[wslot] <= push_evict;
         b_epoch[wslot] <= push_epoch;
      end
   end
end
",
            lm = LW - 1,
            lw = LW,
            wm = W - 1,
            w = W,
            ev_l = v_ev_local("has_line"),
        ))
    }
}
