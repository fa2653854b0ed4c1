//! The request pipeline and the registered inputs (`docs/microarch.md` §4.0):
//! `r1`, `r2`, the response registers `rsp`, `ackq`, `doneq`, `drainq`,
//! `ready` and the sticky `err`.
//!
//! A request taken in cycle `h` is in `r1` during `h+1` (its `pbidx` is the
//! read address of the `k` ports of the memories then), in `r2` during `h+2`
//! (decided by [`crate::decide::Decide`]) and its response is in `rsp` during
//! `h+3`. Every input of the unit except `flush_ready` enters here.
//!
//! Register slices (§2.1) are extra stages here: before `r1` on the
//! request path, after the decision on the response path (the port
//! registers are the last stage), before `ackq` on the ack path. With no
//! slices the Verilog is the unsliced unit's, text for text.

use crate::blocks::{bv, u};
use rust_hdl::core::prelude::*;
use sbrp_iface::slices::{Slices, SLICE_MAX};

const S: usize = SLICE_MAX as usize;

/// One request in the pipeline (valid, op, warp, line, pbv, pbidx).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Req {
    valid: bool,
    op: u64,
    warp: u64,
    line: u64,
    pbv: bool,
    pbidx: u64,
}

/// One response (valid, warp, kind, idx).
type Rsp = (bool, u64, u64, u64);

#[derive(Clone, Copy, Debug, Default)]
struct State {
    /// Request slice stages (0 nearest the ports).
    rq: [Req; S],
    /// Response slice stages (0 nearest the decision; the ports follow the last).
    rs: [Rsp; S],
    /// Ack slice stages (count, epoch; 0 nearest the ports).
    ak: [(u64, u64); S],
    r1: Req,
    r2: Req,
    rsp_valid: bool,
    rsp_warp: u64,
    rsp_kind: u64,
    rsp_idx: u64,
    ack_count: u64,
    ack_epoch: u64,
    doneq: bool,
    drainq: bool,
    ready: bool,
    err: u64,
}

/// Request pipeline registers. `d_kind`, `d_idx` are the decision of `r2`
/// this cycle; `err_ack`, `err_warp` set the sticky error bits 0 and 1.
#[derive(Clone, Debug, Default, LogicBlock)]
pub struct ReqPipe<const WB: usize, const LW: usize, const IW: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    pub req_valid: Signal<In, bool>,
    pub req_op: Signal<In, Bits<3>>,
    pub req_warp: Signal<In, Bits<6>>,
    pub req_line: Signal<In, Bits<LW>>,
    pub req_pbv: Signal<In, bool>,
    pub req_pbidx: Signal<In, Bits<IW>>,
    pub ack_count: Signal<In, Bits<3>>,
    pub ack_epoch: Signal<In, Bits<2>>,
    pub inv_done: Signal<In, bool>,
    pub drain_all: Signal<In, bool>,
    pub d_kind: Signal<In, Bits<2>>,
    pub d_idx: Signal<In, Bits<IW>>,
    pub err_ack: Signal<In, bool>,
    pub err_warp: Signal<In, bool>,
    pub req_ready: Signal<Out, bool>,
    pub r1_pbidx: Signal<Out, Bits<IW>>,
    /// `r1`'s line: the busy check of its decision is registered against it.
    pub r1_line: Signal<Out, Bits<LW>>,
    /// `r1`'s warp inside the unit (low WB bits): the per-warp values of
    /// its decision are selected now.
    pub r1_wsel: Signal<Out, Bits<WB>>,
    pub r2_valid: Signal<Out, bool>,
    pub r2_op: Signal<Out, Bits<3>>,
    pub r2_warp: Signal<Out, Bits<6>>,
    pub r2_line: Signal<Out, Bits<LW>>,
    pub r2_pbv: Signal<Out, bool>,
    pub r2_pbidx: Signal<Out, Bits<IW>>,
    pub rsp_valid: Signal<Out, bool>,
    pub rsp_warp: Signal<Out, Bits<6>>,
    pub rsp_kind: Signal<Out, Bits<2>>,
    pub rsp_idx: Signal<Out, Bits<IW>>,
    pub ackq_count: Signal<Out, Bits<3>>,
    pub ackq_epoch: Signal<Out, Bits<2>>,
    pub doneq: Signal<Out, bool>,
    pub drainq: Signal<Out, bool>,
    pub error: Signal<Out, Bits<2>>,
    _s: State,
    /// Stages per path (not a signal: rust-hdl skips `_` fields).
    pub _slices: Slices,
}

/// Shifts `v` into the first `n` stages of `line`.
fn shift<T: Copy>(line: &mut [T; S], n: u8, v: T) {
    let n = usize::from(n);
    if n > 0 {
        line.copy_within(0..n - 1, 1);
        line[0] = v;
    }
}

impl<const WB: usize, const LW: usize, const IW: usize> ReqPipe<WB, LW, IW> {
    fn next_state(&self) -> State {
        let s = &self._s;
        if self.rst.val() {
            return State::default();
        }
        let sl = self._slices;
        let port = Req {
            valid: self.req_valid.val(),
            op: u(&self.req_op),
            warp: u(&self.req_warp),
            line: u(&self.req_line),
            pbv: self.req_pbv.val(),
            pbidx: u(&self.req_pbidx),
        };
        // A stage holds a taken request, or all zero.
        let take = |r: Req| {
            if r.valid && s.ready {
                r
            } else {
                Req::default()
            }
        };
        let mut rq = s.rq;
        let r1 = if sl.req > 0 {
            take(s.rq[usize::from(sl.req) - 1])
        } else {
            take(port)
        };
        shift(&mut rq, sl.req, take(port));
        let decided = (s.r2.valid, s.r2.warp, u(&self.d_kind), u(&self.d_idx));
        let mut rs = s.rs;
        let rsp = if sl.rsp > 0 {
            s.rs[usize::from(sl.rsp) - 1]
        } else {
            decided
        };
        shift(&mut rs, sl.rsp, decided);
        let ack_port = (u(&self.ack_count), u(&self.ack_epoch));
        let mut ak = s.ak;
        let ack = if sl.ack > 0 {
            s.ak[usize::from(sl.ack) - 1]
        } else {
            ack_port
        };
        shift(&mut ak, sl.ack, ack_port);
        State {
            rq,
            rs,
            ak,
            r1,
            r2: s.r1,
            rsp_valid: rsp.0,
            rsp_warp: rsp.1,
            rsp_kind: rsp.2,
            rsp_idx: rsp.3,
            ack_count: ack.0,
            ack_epoch: ack.1,
            doneq: self.inv_done.val(),
            drainq: self.drain_all.val(),
            ready: true,
            err: s.err | u64::from(self.err_ack.val()) | (u64::from(self.err_warp.val()) << 1),
        }
    }
}

impl<const WB: usize, const LW: usize, const IW: usize> Logic for ReqPipe<WB, LW, IW> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._s = self.next_state();
        }
        let s = self._s;
        self.req_ready.next = s.ready;
        self.r1_pbidx.next = bv(s.r1.pbidx);
        self.r1_line.next = bv(s.r1.line);
        self.r1_wsel.next = bv(s.r1.warp);
        self.r2_valid.next = s.r2.valid;
        self.r2_op.next = bv(s.r2.op);
        self.r2_warp.next = bv(s.r2.warp);
        self.r2_line.next = bv(s.r2.line);
        self.r2_pbv.next = s.r2.pbv;
        self.r2_pbidx.next = bv(s.r2.pbidx);
        self.rsp_valid.next = s.rsp_valid;
        self.rsp_warp.next = bv(s.rsp_warp);
        self.rsp_kind.next = bv(s.rsp_kind);
        self.rsp_idx.next = bv(s.rsp_idx);
        self.ackq_count.next = bv(s.ack_count);
        self.ackq_epoch.next = bv(s.ack_epoch);
        self.doneq.next = s.doneq;
        self.drainq.next = s.drainq;
        self.error.next = bv(s.err);
    }
    fn connect(&mut self) {
        self.req_ready.connect();
        self.r1_pbidx.connect();
        self.r1_line.connect();
        self.r1_wsel.connect();
        self.r2_valid.connect();
        self.r2_op.connect();
        self.r2_warp.connect();
        self.r2_line.connect();
        self.r2_pbv.connect();
        self.r2_pbidx.connect();
        self.rsp_valid.connect();
        self.rsp_warp.connect();
        self.rsp_kind.connect();
        self.rsp_idx.connect();
        self.ackq_count.connect();
        self.ackq_epoch.connect();
        self.doneq.connect();
        self.drainq.connect();
        self.error.connect();
    }
    fn hdl(&self) -> Verilog {
        let sl = self._slices;
        let (lw, iw) = (LW, IW);
        // Request stages rq1..rqN (rq1 at the ports); r1 loads from the last.
        let mut decl = String::new();
        let mut clear = String::new();
        let mut load = String::new();
        let fields = [
            ("valid", String::new(), "1'b0".to_string()),
            ("op", "[2:0] ".to_string(), "3'd0".to_string()),
            ("warp", "[5:0] ".to_string(), "6'd0".to_string()),
            ("line", format!("[{}:0] ", lw - 1), format!("{lw}'d0")),
            ("pbv", String::new(), "1'b0".to_string()),
            ("pbidx", format!("[{}:0] ", iw - 1), format!("{iw}'d0")),
        ];
        for i in 1..=sl.req {
            for (f, w, z) in &fields {
                decl.push_str(&format!("reg {w}rq{i}_{f};\n"));
                clear.push_str(&format!("      rq{i}_{f} <= {z};\n"));
                let v = if i == 1 {
                    match *f {
                        "valid" => "req_valid & req_ready".to_string(),
                        "pbv" => "req_valid & req_ready & req_pbv".to_string(),
                        _ => format!("(req_valid & req_ready) ? req_{f} : {z}"),
                    }
                } else {
                    format!("rq{}_{f}", i - 1)
                };
                load.push_str(&format!("      rq{i}_{f} <= {v};\n"));
            }
        }
        let rin = |f: &str| {
            if sl.req > 0 {
                format!("rq{}_{f}", sl.req)
            } else {
                format!("req_{f}")
            }
        };
        // Response stages rs1..rsN (rs1 at the decision); the ports load the last.
        let rfields = [
            ("valid", String::new(), "1'b0".to_string(), "r2_valid"),
            ("warp", "[5:0] ".to_string(), "6'd0".to_string(), "r2_warp"),
            ("kind", "[1:0] ".to_string(), "2'd0".to_string(), "d_kind"),
            (
                "idx",
                format!("[{}:0] ", iw - 1),
                format!("{iw}'d0"),
                "d_idx",
            ),
        ];
        for i in 1..=sl.rsp {
            for (f, w, z, src) in &rfields {
                decl.push_str(&format!("reg {w}rs{i}_{f};\n"));
                clear.push_str(&format!("      rs{i}_{f} <= {z};\n"));
                let v = if i == 1 {
                    src.to_string()
                } else {
                    format!("rs{}_{f}", i - 1)
                };
                load.push_str(&format!("      rs{i}_{f} <= {v};\n"));
            }
        }
        let rout = |f: &str, src: &str| {
            if sl.rsp > 0 {
                format!("rs{}_{f}", sl.rsp)
            } else {
                src.to_string()
            }
        };
        // Ack stages ak1..akN (ak1 at the ports); ackq loads the last.
        for i in 1..=sl.ack {
            decl.push_str(&format!("reg [2:0] ak{i}_count;\nreg [1:0] ak{i}_epoch;\n"));
            clear.push_str(&format!(
                "      ak{i}_count <= 3'd0; ak{i}_epoch <= 2'd0;\n"
            ));
            let (c, e) = if i == 1 {
                ("ack_count".to_string(), "ack_epoch".to_string())
            } else {
                (format!("ak{}_count", i - 1), format!("ak{}_epoch", i - 1))
            };
            load.push_str(&format!("      ak{i}_count <= {c}; ak{i}_epoch <= {e};\n"));
        }
        let (akc, ake) = if sl.ack > 0 {
            (format!("ak{}_count", sl.ack), format!("ak{}_epoch", sl.ack))
        } else {
            ("ack_count".to_string(), "ack_epoch".to_string())
        };
        if !decl.is_empty() {
            decl = format!("// register slices (section 2.1)\n{decl}");
        }
        Verilog::Custom(format!(
            "\
// r1 fields other than pbidx and line (ports: the k read address, the
// line of the registered busy check)
reg r1_valid;
reg [2:0] r1_op;
reg [5:0] r1_warp;
reg r1_pbv;
{decl}wire taken = {rv} & req_ready;
// the warp whose per-warp values are selected for the next decision
always @(*) r1_wsel = r1_warp[{wbm}:0];

always @(posedge clock) begin
   if (rst) begin
{clear}      r1_valid <= 1'b0; r1_op <= 3'd0; r1_warp <= 6'd0; r1_line <= {lw}'d0;
      r1_pbv <= 1'b0; r1_pbidx <= {iw}'d0;
      r2_valid <= 1'b0; r2_op <= 3'd0; r2_warp <= 6'd0; r2_line <= {lw}'d0;
      r2_pbv <= 1'b0; r2_pbidx <= {iw}'d0;
      rsp_valid <= 1'b0; rsp_warp <= 6'd0; rsp_kind <= 2'd0; rsp_idx <= {iw}'d0;
      ackq_count <= 3'd0; ackq_epoch <= 2'd0; doneq <= 1'b0; drainq <= 1'b0;
      req_ready <= 1'b0; error <= 2'd0;
   end else begin
{load}      // 4.0: the request taken now enters r1 (all zero when none is taken)
      r1_valid <= taken;
      r1_op <= taken ? {rop} : 3'd0;
      r1_warp <= taken ? {rwarp} : 6'd0;
      r1_line <= taken ? {rline} : {lw}'d0;
      r1_pbv <= taken & {rpbv};
      r1_pbidx <= taken ? {rpbidx} : {iw}'d0;
      r2_valid <= r1_valid; r2_op <= r1_op; r2_warp <= r1_warp; r2_line <= r1_line;
      r2_pbv <= r1_pbv; r2_pbidx <= r1_pbidx;
      rsp_valid <= {ov}; rsp_warp <= {ow}; rsp_kind <= {ok}; rsp_idx <= {oi};
      ackq_count <= {akc}; ackq_epoch <= {ake}; doneq <= inv_done; drainq <= drain_all;
      req_ready <= 1'b1;
      error <= error | {{err_warp, err_ack}};
   end
end
",
            wbm = WB - 1,
            rv = rin("valid"),
            rop = rin("op"),
            rwarp = rin("warp"),
            rline = rin("line"),
            rpbv = rin("pbv"),
            rpbidx = rin("pbidx"),
            ov = rout("valid", "r2_valid"),
            ow = rout("warp", "r2_warp"),
            ok = rout("kind", "d_kind"),
            oi = rout("idx", "d_idx"),
        ))
    }
}
