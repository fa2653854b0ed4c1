//! The flush FIFO (`docs/microarch.md` §2 "Flush / ack", §4.4): F = 4
//! queued flushes {line, warps, evict, epoch}.
//!
//! In the Verilog the head entry is a register that drives the `flush_*`
//! outputs directly (zero when empty), refilled from a ring of 3 slots
//! behind it or from the push when the ring is empty; the Rust model below
//! keeps the plain 4-slot FIFO (read and write pointers with a wrap bit),
//! which has the same port behaviour, and from it the values of the head's
//! registers for both outcomes of `flush_ready`. `flush_ready` is the one
//! input used unregistered: it only takes the head. Every register it
//! selects (the head, the ring's read pointer and count, the full flag,
//! `has_line`) is in the child module `hreg` ([`FifoHead`]), whose inputs
//! are the two candidate values, so that synthesis, which maps each module
//! on its own, leaves the input a 2:1 select in front of the flip-flops.
//! `has_line` is the busy check of §4.2 over the queued lines, a register:
//! computed while the request is in `r1`, against the lines queued after
//! that cycle.

use crate::blocks::{bv, ev_local, head_flush, u, v_ev_local, V_HEAD_FLUSH};
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
    /// The Verilog's read pointer of its ring of 3 slots behind the head
    /// (mod 3): it moves when the head is taken with flushes behind it.
    rd3: u64,
}

impl State {
    fn count(&self) -> u64 {
        self.wr.wrapping_sub(self.rd) & 7
    }
    /// The head's registers of the Verilog: (line, warps, the control word
    /// of [`FifoHead`]: valid, evict, epoch, `has_line`, full, ring count,
    /// ring read pointer).
    fn head_regs(&self) -> (u64, u64, u64) {
        let n = self.count();
        let h = (self.rd & 3) as usize;
        if n == 0 {
            return (0, 0, u64::from(self.has) << 4 | self.rd3 << 8);
        }
        let ctl = 1
            | u64::from(self.evict[h]) << 1
            | self.epoch[h] << 2
            | u64::from(self.has) << 4
            | u64::from(n == F as u64) << 5
            | (n - 1) << 6
            | self.rd3 << 8;
        (self.line[h], self.warps[h], ctl)
    }
}

/// Width of [`FifoHead`]'s control word.
const CB: usize = 10;

/// The flush FIFO's registers that `flush_ready` selects (`docs/microarch.md`
/// §2, §4.4): each takes `t_*` when `take`, else `k_*` (both computed by
/// [`FlushFifo`] from registers and the cycle's push). A module of its own,
/// so that synthesis keeps the input a final 2:1 select (it maps each
/// module on its own and would fold the input into the candidates' logic).
/// `l`: the head's line, `w`: its warps, `c`: {rd[1:0], n[1:0], full,
/// has_line, epoch[1:0], evict, valid} (bit 0 first), 0 at reset.
#[derive(Clone, Debug, Default, LogicBlock)]
pub struct FifoHead<const W: usize, const LW: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    pub take: Signal<In, bool>,
    pub k_l: Signal<In, Bits<LW>>,
    pub t_l: Signal<In, Bits<LW>>,
    pub k_w: Signal<In, Bits<W>>,
    pub t_w: Signal<In, Bits<W>>,
    pub k_c: Signal<In, Bits<CB>>,
    pub t_c: Signal<In, Bits<CB>>,
    pub l: Signal<Out, Bits<LW>>,
    pub w: Signal<Out, Bits<W>>,
    pub c: Signal<Out, Bits<CB>>,
    _q: (u64, u64, u64),
}

impl<const W: usize, const LW: usize> Logic for FifoHead<W, LW> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._q = if self.rst.val() {
                (0, 0, 0)
            } else if self.take.val() {
                (u(&self.t_l), u(&self.t_w), u(&self.t_c))
            } else {
                (u(&self.k_l), u(&self.k_w), u(&self.k_c))
            };
        }
        self.l.next = bv(self._q.0);
        self.w.next = bv(self._q.1);
        self.c.next = bv(self._q.2);
    }
    fn connect(&mut self) {
        self.l.connect();
        self.w.connect();
        self.c.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(
            "\
// the registers flush_ready selects: take ? t_* : k_*
always @(posedge clock) begin
   if (rst) begin
      l <= 0; w <= 0; c <= 0;
   end else begin
      l <= take ? t_l : k_l;
      w <= take ? t_w : k_w;
      c <= take ? t_c : k_c;
   end
end
"
            .to_string(),
        )
    }
}

/// Flush FIFO.
#[derive(Clone, Debug, Default, LogicBlock)]
pub struct FlushFifo<const W: usize, const LW: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    pub flush_ready: Signal<In, bool>,
    /// The head action flushes {`head_line`, `head_warps`} (the flush made
    /// here from `hf_pre`, `h_ok`, `ep_room` and this block's `not_full`:
    /// [`crate::blocks::head_flush`]), unless the request's eviction flush
    /// of `q_line` with `ev_warps` takes the cycle; that flush is
    /// recomputed here from its parts ([`crate::blocks::ev_local`], with
    /// this block's `has_line`).
    pub hf_pre: Signal<In, bool>,
    pub h_ok: Signal<In, bool>,
    pub ep_room: Signal<In, bool>,
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
    /// The registers `flush_ready` selects.
    pub hreg: FifoHead<W, LW>,
    _s: State,
}

impl<const W: usize, const LW: usize> FlushFifo<W, LW> {
    /// The state after this cycle, the head taken when `ready`.
    fn next_state(&self, ready: bool) -> State {
        if self.rst.val() {
            return State::default();
        }
        let ha_flush = head_flush(
            self.hf_pre.val(),
            self.h_ok.val(),
            self.ep_room.val(),
            self._s.count() < F as u64,
        );
        let ev = ev_local(
            self.ev_pre.val(),
            self.k_ev.val(),
            self._s.has,
            ha_flush,
            self.hl_eq.val(),
        );
        let mut s = self._s;
        if s.count() > 0 && ready {
            if s.count() > 1 {
                s.rd3 = (s.rd3 + 1) % 3;
            }
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
        // hreg's clock follows this block's one simulator pass later: in
        // the pass of this block's edge its inputs keep the values of the
        // cycle before, which it takes in the next pass
        self.hreg.clock.next = self.clock.val();
        self.hreg.rst.next = self.rst.val();
        self.hreg.take.next = self.flush_ready.val();
        if self.clock.pos_edge() {
            self._s = self.next_state(self.flush_ready.val());
        } else {
            // the head's registers for both outcomes of flush_ready
            let (kl, kw, kc) = self.next_state(false).head_regs();
            let (tl, tw, tc) = self.next_state(true).head_regs();
            self.hreg.k_l.next = bv(kl);
            self.hreg.t_l.next = bv(tl);
            self.hreg.k_w.next = bv(kw);
            self.hreg.t_w.next = bv(tw);
            self.hreg.k_c.next = bv(kc);
            self.hreg.t_c.next = bv(tc);
        }
        let c = self.hreg.c.val().to_u64();
        self.flush_valid.next = c & 1 == 1;
        self.flush_line.next = self.hreg.l.val();
        self.flush_warps.next = self.hreg.w.val();
        self.flush_evict.next = c >> 1 & 1 == 1;
        self.flush_epoch.next = bv(c >> 2);
        self.has_line.next = c >> 4 & 1 == 1;
        self.not_full.next = c >> 5 & 1 == 0;
    }
    fn connect(&mut self) {
        self.flush_valid.connect();
        self.flush_line.connect();
        self.flush_warps.connect();
        self.flush_evict.connect();
        self.flush_epoch.connect();
        self.not_full.connect();
        self.has_line.connect();
        self.hreg.clock.connect();
        self.hreg.rst.connect();
        self.hreg.take.connect();
        self.hreg.k_l.connect();
        self.hreg.t_l.connect();
        self.hreg.k_w.connect();
        self.hreg.t_w.connect();
        self.hreg.k_c.connect();
        self.hreg.t_c.connect();
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
// the registers flush_ready selects are in the child hreg (control word:
// valid, evict, epoch, has_line, full, ring count n, ring read pointer rd)
wire [1:0] rd = hreg$c[9:8];
wire [1:0] n = hreg$c[7:6];
wire full_r = hreg$c[5];
always @(*) flush_valid = hreg$c[0];
always @(*) flush_evict = hreg$c[1];
always @(*) flush_epoch = hreg$c[3:2];
always @(*) has_line = hreg$c[4];
always @(*) flush_line = hreg$l;
always @(*) flush_warps = hreg$w;
// the head flush and the request's eviction flush, made here; the eviction
// flush takes the head's flush
wire ha_flush = {hf};
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
// not_full is a register (its complement full_r, 0 at reset), from the next
// ring count: it starts can_flush, and so the head flush, early in the cycle
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
wire g_t = g0 | g1 | g2 | (push_evict & g_e) | (~push_evict & g_n);
wire g_k = g_t | (flush_valid & (flush_line == r1_line));

// the head's next value when kept (filled by a push when empty) and when
// taken (the ring's oldest, else a push, else empty), and the same for
// every register take selects: hreg makes take the last select
wire v_keep = flush_valid | push;
wire v_take = nz | push;
wire [{lm}:0] l_keep = flush_valid ? flush_line : push ? p_line : {lw}'d0;
wire [{lm}:0] l_take = nz ? b_line[rd] : push ? p_line : {lw}'d0;
wire [{wm}:0] w_keep = flush_valid ? flush_warps : push ? p_warps : {w}'d0;
wire [{wm}:0] w_take = nz ? b_warps[rd] : push ? p_warps : {w}'d0;
wire e_keep = flush_valid ? flush_evict : push & push_evict;
wire e_take = nz ? b_evict[rd] : push & push_evict;
wire [1:0] p_keep = flush_valid ? flush_epoch : push ? push_epoch : 2'd0;
wire [1:0] p_take = nz ? b_epoch[rd] : push ? push_epoch : 2'd0;
// ring count: kept head, a push joins the ring when the head is valid;
// taken head, the ring's oldest moves up and a push joins it when n > 0
wire [1:0] n_keep = n + {{1'b0, push & flush_valid}};
wire [1:0] n_take = nz ? n - {{1'b0, ~push}} : 2'd0;
wire [1:0] rd_take = nz ? rd_inc : rd;
wire fu_keep = n_keep == 2'd3;
wire fu_take = n_take == 2'd3;
always @(*) hreg$clock = clock;
always @(*) hreg$rst = rst;
always @(*) hreg$take = take;
always @(*) hreg$k_l = l_keep;
always @(*) hreg$t_l = l_take;
always @(*) hreg$k_w = w_keep;
always @(*) hreg$t_w = w_take;
always @(*) hreg$k_c = {{rd, n_keep, fu_keep, g_k, p_keep, e_keep, v_keep}};
always @(*) hreg$t_c = {{rd_take, n_take, fu_take, g_t, p_take, e_take, v_take}};

always @(posedge clock) begin
   // a push is written to the ring slot behind the queued ones; when it
   // goes to the head instead, the slot is not counted (n stays 0)
   if (~rst & push) begin
      b_line[wslot] <= p_line;
      b_warps[wslot] <= p_warps;
      b_evict[wslot] <= push_evict;
      b_epoch[wslot] <= push_epoch;
   end
end
",
            lm = LW - 1,
            lw = LW,
            wm = W - 1,
            w = W,
            ev_l = v_ev_local("has_line"),
            hf = V_HEAD_FLUSH,
        ))
    }
}
