//! ACTR epochs (`docs/microarch.md` §4.3): the epoch counters `ectr[e]`,
//! their sum `actr`, `ep_cur`, `ep_old`, `ep_closed`, and the per-epoch
//! masks `ep_fsm[e]`, `ep_edm[e]` (E = 4).
//!
//! A flush entering the FIFO counts in `ep_cur`; the registered
//! acknowledgement (`ackq`) decrements its epoch; an ordering entry retiring
//! at the head joins its warps to the youngest epoch with unacknowledged
//! flushes (and closes or advances `ep_cur`); the oldest epoch is released
//! when its counter reaches zero.

use crate::blocks::{bv, head_flush, mask, u, V_HEAD_FLUSH};
use rust_hdl::core::prelude::*;
use sbrp_iface::consts::EPOCHS;

const E: usize = EPOCHS as usize;

#[derive(Clone, Copy, Debug, Default)]
struct State {
    ectr: [u64; E],
    actr: u64,
    cur: usize,
    old: usize,
    closed: bool,
    fsm: [u64; E],
    edm: [u64; E],
}

/// Epoch counters and masks.
#[derive(Clone, Debug, Default, LogicBlock)]
pub struct Epochs<const W: usize, const WB: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    /// A flush enters the FIFO this cycle: the head action's flush (made
    /// here from `hf_pre`, `h_ok`, this block's `ep_room` and `not_full`:
    /// [`crate::blocks::head_flush`]), or else the request's eviction
    /// flush, whose parts ([`crate::blocks::ev_local`]) are ANDed here. An
    /// eviction flush takes the head's flush, so a flush enters whenever
    /// the head would flush and the busy check's head term is not needed.
    pub hf_pre: Signal<In, bool>,
    pub h_ok: Signal<In, bool>,
    pub not_full: Signal<In, bool>,
    pub ev_pre: Signal<In, bool>,
    pub k_ev: Signal<In, bool>,
    pub fifo_has: Signal<In, bool>,
    /// The registered acknowledgement (`ackq`).
    pub ack_count: Signal<In, Bits<3>>,
    pub ack_epoch: Signal<In, Bits<2>>,
    /// An ordering entry retires at the head (`join`), with its masks.
    pub ord_join: Signal<In, bool>,
    pub fsm_add: Signal<In, Bits<W>>,
    pub edm_add: Signal<In, Bits<W>>,
    /// Flush window K, eager and lazy policy (constants of the instance).
    pub window: Signal<In, Bits<A>>,
    pub eager: Signal<In, bool>,
    pub lazy: Signal<In, bool>,
    /// OR of the epochs' FSM masks (a register in the Verilog, from the
    /// next-state masks), of their EDM masks.
    pub fsm: Signal<Out, Bits<W>>,
    pub edm: Signal<Out, Bits<W>>,
    /// The parts of `fsm` after this cycle, for the head entry's
    /// registered FSM check in [`crate::store::PbStore`]: the FSM masks but
    /// the oldest epoch's (`fsm_wo`, from registers), the oldest epoch is
    /// released (`fsm_rel`), a retiring ordering entry joins its warps
    /// (`fsm_join`). Next `fsm` = (`fsm_rel` ? `fsm_wo` : `fsm`) | (`fsm_join` ?
    /// `fsm_add` : 0).
    pub fsm_wo: Signal<Out, Bits<W>>,
    pub fsm_rel: Signal<Out, bool>,
    pub fsm_join: Signal<Out, bool>,
    /// The warp of the request in `r1` (`sel_warp`) and its bit of `edm`
    /// next cycle (from registers and the head action only), for its stall
    /// bit selected a cycle early: the masks' bits are selected from
    /// registers, the release and join decisions only gate them.
    pub sel_warp: Signal<In, Bits<WB>>,
    pub edm_w: Signal<Out, bool>,
    pub actr: Signal<Out, Bits<A>>,
    /// `actr` is 0 after this cycle (for the registered `idle`).
    pub actr_z_nx: Signal<Out, bool>,
    pub ep_cur: Signal<Out, Bits<2>>,
    /// `!ep_closed && actr < 2^A - 1`: the epochs let a flush start
    /// (registered from the next-state values).
    pub ep_room: Signal<Out, bool>,
    /// `policy_ok` of §3 (window: `actr < K`, eager, lazy), registered.
    pub pol_ok: Signal<Out, bool>,
    /// The acknowledgement exceeds its epoch's count (error bit 0).
    pub ack_err: Signal<Out, bool>,
    _s: State,
}

impl<const W: usize, const WB: usize, const A: usize> Epochs<W, WB, A> {
    /// `ep_room`: the current epoch is open and ACTR is below its maximum.
    fn ep_room(&self) -> bool {
        !self._s.closed && self._s.actr < mask(A)
    }

    /// (`rel`: the oldest epoch is released, `nowait`: a retiring ordering
    /// entry joins no epoch), from the state at the start of the cycle.
    fn rel_nowait(&self) -> (bool, bool) {
        let s = &self._s;
        let (cur, old) = (s.cur, s.old);
        let rel = s.ectr[old] == 0 && old != cur;
        let j = if s.ectr[cur] != 0 {
            cur
        } else {
            (cur + E - 1) % E
        };
        let nowait = (s.ectr[cur] == 0 && cur == old) || (j == old && s.ectr[old] == 0);
        (rel, nowait)
    }

    fn next_state(&self) -> State {
        if self.rst.val() {
            return State::default();
        }
        let mut s = self._s;
        let (n, ae) = (u(&self.ack_count), u(&self.ack_epoch) as usize);
        let acked = n.min(s.ectr[ae]);
        let (cur, old) = (s.cur, s.old);
        let rel = s.ectr[old] == 0 && old != cur;
        let join = self.ord_join.val();
        let j = if s.ectr[cur] != 0 {
            cur
        } else {
            (cur + E - 1) % E
        };
        let nowait = (s.ectr[cur] == 0 && cur == old) || (j == old && s.ectr[old] == 0);
        let need_adv = join && !nowait && s.ectr[cur] != 0;
        let room = (cur + 1) % E != old || rel;
        let ha_flush = head_flush(
            self.hf_pre.val(),
            self.h_ok.val(),
            self.ep_room(),
            self.not_full.val(),
        );
        let f =
            u64::from(ha_flush || (self.ev_pre.val() && self.k_ev.val() && !self.fifo_has.val()));
        s.ectr[cur] += f;
        s.ectr[ae] -= acked;
        s.actr = s.actr + f - acked;
        if rel {
            s.fsm[old] = 0;
            s.edm[old] = 0;
            s.old = (old + 1) % E;
        }
        if join && !nowait {
            s.fsm[j] |= u(&self.fsm_add);
            s.edm[j] |= u(&self.edm_add);
        }
        if s.closed {
            if rel {
                s.cur = (cur + 1) % E;
                s.closed = false;
            }
        } else if need_adv {
            if room {
                s.cur = (cur + 1) % E;
            } else {
                s.closed = true;
            }
        }
        s
    }
}

impl<const W: usize, const WB: usize, const A: usize> Logic for Epochs<W, WB, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._s = self.next_state();
        }
        let s = &self._s;
        let n = u(&self.ack_count);
        self.fsm.next = bv(s.fsm.iter().fold(0, |a, m| a | m));
        self.edm.next = bv(s.edm.iter().fold(0, |a, m| a | m));
        let (rel, nowait) = self.rel_nowait();
        self.fsm_wo.next = bv((0..E).filter(|&e| e != s.old).fold(0, |a, e| a | s.fsm[e]));
        self.fsm_rel.next = rel;
        self.fsm_join.next = self.ord_join.val() && !nowait;
        let edm_nx = self.next_state().edm.iter().fold(0, |a, m| a | m);
        self.edm_w.next = edm_nx >> u(&self.sel_warp) & 1 == 1;
        self.actr.next = bv(s.actr);
        self.actr_z_nx.next = self.next_state().actr == 0;
        self.ep_cur.next = bv(s.cur as u64);
        self.ep_room.next = self.ep_room();
        self.pol_ok.next = self.eager.val() || (!self.lazy.val() && s.actr < u(&self.window));
        self.ack_err.next = n > s.ectr[u(&self.ack_epoch) as usize];
    }
    fn connect(&mut self) {
        self.fsm.connect();
        self.edm.connect();
        self.fsm_wo.connect();
        self.fsm_rel.connect();
        self.fsm_join.connect();
        self.edm_w.connect();
        self.actr.connect();
        self.actr_z_nx.connect();
        self.ep_cur.connect();
        self.ep_room.connect();
        self.pol_ok.connect();
        self.ack_err.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = format!(
            "\
reg [{am}:0] ectr [0:3];
reg [{wm}:0] ep_fsm [0:3];
reg [{wm}:0] ep_edm [0:3];
reg [1:0] ep_old;
reg ep_closed;
wire ha_flush = {hf};
wire flush_now = ha_flush | (ev_pre & k_ev & ~fifo_has);
wire [{am}:0] ectr_ack = ectr[ack_epoch];
wire [{am}:0] ack_n = {{{{{a3}{{1'b0}}}}, ack_count}};
// each counter less the ack count (and + 1, as less ack_n - 1), and ACTR
// less each counter, subtracted from registers: min(ack_n, ectr[e]) is 0
// or that difference, and the epoch, the min and the flush only select,
// by AND-OR (no `?:` that synthesis could share into one subtractor behind
// the selects)
wire [{am}:0] ack_m1 = ack_n - {a}'d1;
// actr + 1 (a flush), from registers: see actr_f
wire [{am}:0] actr_p1 = actr + {a}'d1;
{ec}wire ack_lt = (sa0 & lt0) | (sa1 & lt1) | (sa2 & lt2) | (sa3 & lt3);
wire [{am}:0] acked = ack_lt ? ectr_ack : ack_n;
wire cur_nz = |ectr[ep_cur];
wire old_z = ~|ectr[ep_old];
wire rel = old_z & (ep_old != ep_cur);
wire [1:0] j = cur_nz ? ep_cur : ep_cur - 2'd1;
wire nowait = (~cur_nz & (ep_cur == ep_old)) | ((j == ep_old) & old_z);
wire need_adv = ord_join & ~nowait & cur_nz;
wire room = (ep_cur + 2'd1 != ep_old) | rel;
// the counters with and without this cycle's flush, computed from
// registers: flush_now (late, it follows the request decision) only selects.
// Both candidates are kept as nets: the synthesis of this block sees
// flush_now as early as any input and would otherwise fold it into the
// subtractors' carry chains.
// acked = min(ack_n, ectr_ack): ACTR less each of the two (kept nets),
// from registers (actr_m: less the ack count as presented; am_e: less the
// epoch's counter, when the ack exceeds it), and the policy and room
// checks made on both before the min selects (actr_k)
(* keep *) wire [{am}:0] actr_m = actr - ack_n;
wire [{am}:0] am_e = ({{{a}{{sa0}}}} & ae0) | ({{{a}{{sa1}}}} & ae1) | ({{{a}{{sa2}}}} & ae2) | ({{{a}{{sa3}}}} & ae3);
(* keep *) wire [{am}:0] actr_k = ack_lt ? am_e : actr_m;
// with the flush: the same subtracted from actr + 1 (actr_p1, from
// registers), so that no incrementer lies behind the ack's selects
(* keep *) wire [{am}:0] actr_m1 = actr_p1 - ack_n;
wire [{am}:0] am_e1 = ({{{a}{{sa0}}}} & af0) | ({{{a}{{sa1}}}} & af1) | ({{{a}{{sa2}}}} & af2) | ({{{a}{{sa3}}}} & af3);
(* keep *) wire [{am}:0] actr_f = ({{{a}{{ack_lt}}}} & am_e1) | ({{{a}{{~ack_lt}}}} & actr_m1);

// fsm, ep_room and policy_ok are registered from the next-state values
// (the late flush of this cycle only selects); `ep_full_r` and `pol_no_r`
// hold their complements so that every register resets to 0, but pol_no_r
// whose reset value is `lazy` (a constant)
{fsm_n}// the parts of the next FSM masks, for store's registered check
always @(*) fsm_wo = {fsm_wo};
always @(*) fsm_rel = rel;
always @(*) fsm_join = ord_join & ~nowait;
wire closed_nx = ep_closed ? ~rel : (need_adv & ~room);
// with a flush, ACTR was below its maximum (ep_room), so actr_k + 1 does
// not wrap: all ones after it is actr_k == max - 1, below the window is
// actr_k < window - 1 (none for window 0)
wire [{am}:0] win_m1 = window - {a}'d1;
// (selected by AND-OR: synthesis turns a `?:` of compares into a compare
// of the selected operand)
wire mx_n = &actr_m;
wire mx_e = &am_e;
wire m1_n = actr_m == {{{{{a1}{{1'b1}}}}, 1'b0}};
wire m1_e = am_e == {{{{{a1}{{1'b1}}}}, 1'b0}};
wire lw_n = (actr_m < window);
wire lw_e = am_e < window;
wire lf_n = actr_m < win_m1;
wire lf_e = am_e < win_m1;
wire rm_f = ~closed_nx & ~((ack_lt & m1_e) | (~ack_lt & m1_n));
wire rm_m = ~closed_nx & ~((ack_lt & mx_e) | (~ack_lt & mx_n));
wire pw_f = eager | (~lazy & (window != {a}'d0) & ((ack_lt & lf_e) | (~ack_lt & lf_n)));
wire pw_m = eager | (~lazy & ((ack_lt & lw_e) | (~ack_lt & lw_n)));
wire room_nx = (flush_now & rm_f) | (~flush_now & rm_m);
wire pol_nx = (flush_now & pw_f) | (~flush_now & pw_m);
reg ep_full_r, pol_no_r;
always @(*) ep_room = ~ep_full_r;
always @(*) pol_ok = ~pol_no_r;
always @(*) edm = ep_edm[0] | ep_edm[1] | ep_edm[2] | ep_edm[3];
// the EDM masks after this cycle (no input from the request decision)
{edm_n}always @(*) edm_w = {edm_w}(ord_join & ~nowait & edm_add[sel_warp]);
// actr + f - acked == 0, both cases of the (late) flush compared early; a
// flush starts only below ACTR's maximum, so actr + 1 does not wrap
wire az_f = (ack_lt & ~|am_e1) | (~ack_lt & ~|actr_m1);
wire az_m = actr == acked;
always @(*) actr_z_nx = (flush_now & az_f) | (~flush_now & az_m);
always @(*) ack_err = ack_n > ectr_ack;

always @(posedge clock) begin
   if (rst) begin
      actr <= {a}'d0; ep_cur <= 2'd0; ep_old <= 2'd0; ep_closed <= 1'b0;
      fsm <= {w}'d0; ep_full_r <= 1'b0; pol_no_r <= lazy;
",
            hf = V_HEAD_FLUSH,
            am = A - 1,
            a = A,
            a3 = A - 3,
            a1 = A - 1,
            wm = W - 1,
            w = W,
            fsm_n = (0..E)
                .map(|e| format!(
                    "wire [{wm}:0] fsm_n{e} = ((rel & (ep_old == 2'd{e})) ? {W}'d0 : ep_fsm[{e}]) | ((ord_join & ~nowait & (j == 2'd{e})) ? fsm_add : {W}'d0);\n",
                    wm = W - 1
                ))
                .collect::<String>(),
            ec = (0..E)
                .map(|e| format!(
                    "\
(* keep *) wire [{am}:0] ed{e} = ectr[{e}] - ack_n;
(* keep *) wire [{am}:0] ed1{e} = ectr[{e}] - ack_m1;
(* keep *) wire [{am}:0] ei{e} = ectr[{e}] + {A}'d1;
(* keep *) wire [{am}:0] ae{e} = actr - ectr[{e}];
(* keep *) wire [{am}:0] af{e} = actr_p1 - ectr[{e}];
wire lt{e} = ack_n > ectr[{e}];
wire sa{e} = ack_epoch == 2'd{e};
wire sc{e} = ep_cur == 2'd{e};
wire [{am}:0] ec_m{e} = ({{{A}{{sa{e} & ~lt{e}}}}} & ed{e}) | ({{{A}{{~sa{e}}}}} & ectr[{e}]);
wire [{am}:0] ec_f{e} = ({{{A}{{sc{e} & sa{e} & ~lt{e}}}}} & ed1{e}) | {{{a1}'d0, sc{e} & sa{e} & lt{e}}} | ({{{A}{{sc{e} & ~sa{e}}}}} & ei{e}) | ({{{A}{{~sc{e}}}}} & ec_m{e});
",
                    am = A - 1,
                    a1 = A - 1
                ))
                .collect::<String>(),
            fsm_wo = (0..E)
                .map(|e| format!("({{{W}{{ep_old != 2'd{e}}}}} & ep_fsm[{e}])"))
                .collect::<Vec<_>>()
                .join(" | "),
            edm_w = (0..E)
                .map(|e| format!("(~(rel & (ep_old == 2'd{e})) & ep_edm[{e}][sel_warp]) | "))
                .collect::<String>(),
            edm_n = (0..E)
                .map(|e| format!(
                    "wire [{wm}:0] edm_n{e} = ((rel & (ep_old == 2'd{e})) ? {W}'d0 : ep_edm[{e}]) | ((ord_join & ~nowait & (j == 2'd{e})) ? edm_add : {W}'d0);\n",
                    wm = W - 1
                ))
                .collect::<String>(),
        );
        for e in 0..E {
            v.push_str(&format!(
                "      ectr[{e}] <= {A}'d0; ep_fsm[{e}] <= {W}'d0; ep_edm[{e}] <= {W}'d0;\n"
            ));
        }
        v.push_str(
            "   end else begin\n      actr <= flush_now ? actr_f : actr_k;\n      \
             fsm <= fsm_n0 | fsm_n1 | fsm_n2 | fsm_n3; ep_full_r <= ~room_nx; pol_no_r <= ~pol_nx;\n",
        );
        for e in 0..E {
            // the epoch's counter: + a flush in ep_cur, - the acks of its tag;
            // its masks: cleared on release, joined by a retiring ordering entry
            v.push_str(&format!(
                "\
      ectr[{e}] <= ({{{A}{{flush_now}}}} & ec_f{e}) | ({{{A}{{~flush_now}}}} & ec_m{e});
      ep_fsm[{e}] <= fsm_n{e};
      ep_edm[{e}] <= edm_n{e};
"
            ));
        }
        v.push_str(
            "\
      if (rel) ep_old <= ep_old + 2'd1;
      // epoch advance, at most one per cycle
      if (ep_closed) begin
         if (rel) begin
            ep_cur <= ep_cur + 2'd1;
            ep_closed <= 1'b0;
         end
      end else if (need_adv) begin
         if (room) ep_cur <= ep_cur + 2'd1;
         else ep_closed <= 1'b1;
      end
   end
end
",
        );
        Verilog::Custom(v)
    }
}
