//! The flush FIFO (`docs/microarch.md` §2 "Flush / ack", §4.4): F = 4
//! queued flushes {line, warps, evict, epoch}, read and write pointers with a
//! wrap bit (count = wr - rd).
//!
//! `flush_ready` is the one input used unregistered: it only advances the
//! read pointer. The outputs are the slot at the read pointer (zero when
//! empty); `has_line` is the busy check of §4.2 over the queued lines.

use crate::blocks::{bv, u};
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
    /// The head entry {`head_line`, `head_warps`} flushes, or the eviction
    /// of the request's line `q_line` with `ev_warps` (at most one of the two).
    pub push_head: Signal<In, bool>,
    pub push_evict: Signal<In, bool>,
    pub head_line: Signal<In, Bits<LW>>,
    pub head_warps: Signal<In, Bits<W>>,
    pub ev_warps: Signal<In, Bits<W>>,
    /// The epoch both are counted in (`ep_cur`).
    pub push_epoch: Signal<In, Bits<2>>,
    /// Line of the request in `r2` (busy check, eviction flush).
    pub q_line: Signal<In, Bits<LW>>,
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
        let mut s = self._s;
        if s.count() > 0 && self.flush_ready.val() {
            s.rd = (s.rd + 1) & 7;
        }
        let ev = self.push_evict.val();
        if self.push_head.val() || ev {
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
        let l = u(&self.q_line);
        self.has_line.next = (0..n).any(|a| s.line[((s.rd + a) & 3) as usize] == l);
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
        let mut v = format!(
            "\
reg [{lm}:0] f_line [0:3];
reg [{wm}:0] f_warps [0:3];
reg f_evict [0:3];
reg [1:0] f_epoch [0:3];
reg [2:0] rd;
reg [2:0] wr;
wire [2:0] count = wr - rd;
wire valid = count != 3'd0;
wire [1:0] h = rd[1:0];
// slot i holds a queued flush when its distance from the read pointer is below count
",
            lm = LW - 1,
            wm = W - 1,
        );
        for i in 0..F {
            v.push_str(&format!(
                "wire [2:0] dist{i} = {{1'b0, 2'd{i} - h}};\nwire hit{i} = (dist{i} < count) & (f_line[{i}] == q_line);\n"
            ));
        }
        v.push_str(&format!(
            "\
always @(*) flush_valid = valid;
always @(*) flush_line = valid ? f_line[h] : {lw}'d0;
always @(*) flush_warps = valid ? f_warps[h] : {w}'d0;
always @(*) flush_evict = valid & f_evict[h];
always @(*) flush_epoch = valid ? f_epoch[h] : 2'd0;
always @(*) not_full = count != 3'd4;
always @(*) has_line = hit0 | hit1 | hit2 | hit3;

always @(posedge clock) begin
   if (rst) begin
      rd <= 3'd0; wr <= 3'd0;
   end else begin
      // flush_ready only moves the read pointer
      if (valid & flush_ready) rd <= rd + 3'd1;
      if (push_head | push_evict) begin
         f_line[wr[1:0]] <= push_evict ? q_line : head_line;
         f_warps[wr[1:0]] <= push_evict ? ev_warps : head_warps;
         f_evict[wr[1:0]] <= push_evict;
         f_epoch[wr[1:0]] <= push_epoch;
         wr <= wr + 3'd1;
      end
   end
end
",
            lw = LW,
            w = W,
        ));
        Verilog::Custom(v)
    }
}
