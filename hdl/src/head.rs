//! The PB pointers and the head action (`docs/microarch.md` §4.1, the drain
//! target of §4.2, the pointer updates of §4.4): registers `head`, `tail`,
//! `full`, `last_type`, `drain_pend`, `drain_idx`, the request's `live(k)`
//! (registered from `r1`'s `k` and the next pointers), and `busy`, the
//! complement of the `idle` output (§4.4) registered from the next-state
//! values, so that the port is a flip-flop and an inverter, not an AND of
//! register bits (0 at reset, like every register: idle).
//!
//! The head action reads the head entry from the staging register of
//! [`crate::store::PbStore`] (`h_type`, `h_warps`, and `h_ok`: a persist
//! none of whose warps is in FSM; flip-flops) and `can_flush` (registers),
//! so it is ready early in the cycle. Its flush is made by every block that
//! depends on it from the same registers ([`crate::blocks::head_flush`]:
//! this block sends `hf_pre`), not sent on one net; an eviction
//! flush decided by [`crate::decide::Decide`] cancels a head flush only
//! (`head_final`): the retirement needs no input from the decision.

use crate::blocks::{bv, ev_local, head_flush, mask, u, v_ev_local, v_older, V_HEAD_FLUSH};
use rust_hdl::core::prelude::*;
use sbrp_iface::entry_type as ty;

#[derive(Clone, Copy, Debug, Default)]
struct State {
    head: u64,
    tail: u64,
    full: bool,
    last_type: u64,
    drain_pend: bool,
    drain_idx: u64,
    busy: bool,
    live_k: bool,
}

/// Pointers, head action and drain target.
#[derive(Clone, Debug, Default, LogicBlock)]
pub struct Head<const W: usize, const IW: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    /// The flush policy allows a flush (`policy_ok`, registered by [`crate::epochs::Epochs`]).
    pub pol_ok: Signal<In, bool>,
    /// The head entry (`pb_type[head]`, `pb_warps[head]`), from the staging register.
    pub h_type: Signal<In, Bits<3>>,
    pub h_warps: Signal<In, Bits<W>>,
    /// The head entry is a persist and none of its warps is in FSM (`h_warps
    /// & fsm` is 0): a register of [`crate::store::PbStore`].
    pub h_ok: Signal<In, bool>,
    /// `can_flush` (§3): the epochs have room, the flush FIFO is not full.
    pub ep_room: Signal<In, bool>,
    pub not_full: Signal<In, bool>,
    pub drainq: Signal<In, bool>,
    /// After this cycle: `actr == 0` (epochs); `!inv_req && inv_cur == 0` (inval).
    pub actr_z_nx: Signal<In, bool>,
    pub inv_quiet_nx: Signal<In, bool>,
    // this cycle's request decision; the parts of its eviction flush
    // ([`crate::blocks::ev_local`]), which cancels a head flush
    pub ev_pre: Signal<In, bool>,
    pub k_ev: Signal<In, bool>,
    pub fifo_has: Signal<In, bool>,
    pub hl_eq: Signal<In, bool>,
    pub push: Signal<In, bool>,
    pub push_type: Signal<In, Bits<3>>,
    pub tgt: Signal<In, bool>,
    pub tgt_idx: Signal<In, Bits<IW>>,
    /// `tgt_idx` is `k`; else it is `y` when `tgt_y`, else `tail`.
    pub tgt_k: Signal<In, bool>,
    pub tgt_y: Signal<In, bool>,
    /// `k` of the request in `r2` and in `r1`: compared here with the
    /// pointers (see `eq_*`).
    pub k: Signal<In, Bits<IW>>,
    pub k1: Signal<In, Bits<IW>>,
    // registers
    pub head: Signal<Out, Bits<IW>>,
    pub tail: Signal<Out, Bits<IW>>,
    /// `tail - 1` (`y` of §4.2), a register kept beside `tail`.
    pub y: Signal<Out, Bits<IW>>,
    pub full: Signal<Out, bool>,
    /// `live(k)` of the request in `r2` (§4.2: `k` older than `tail`, or
    /// full), registered while it was in `r1` against this cycle's pointers.
    pub live_k: Signal<Out, bool>,
    /// `idle` of §4.4 for the state at the start of the cycle (`~busy`).
    pub idle: Signal<Out, bool>,
    pub last_type: Signal<Out, Bits<3>>,
    pub drain_pend: Signal<Out, bool>,
    /// The register part of the head action's flush (`head_act` FLUSH): the
    /// PB is not empty, and the drain is forced or the policy allows; each
    /// block makes the flush from it ([`crate::blocks::head_flush`]).
    pub hf_pre: Signal<Out, bool>,
    /// The PB is empty; holds one entry; holds two (flip-flops for the first
    /// two, registered from the next-state values).
    pub empty: Signal<Out, bool>,
    pub one: Signal<Out, bool>,
    pub two: Signal<Out, bool>,
    /// Address compares from registers, for the selects of
    /// [`crate::store::PbStore`]: `k == head`, `k == head + 1`, and `r1`'s
    /// `k1` against the three addresses this cycle's write may have
    /// (`tail`, `tail - 1`, `k`). Made in this block so that the synthesis
    /// of `store` cannot fold its late selects in front of the compares.
    pub eq_kh: Signal<Out, bool>,
    pub eq_kh1: Signal<Out, bool>,
    pub eq_tk1: Signal<Out, bool>,
    pub eq_yk1: Signal<Out, bool>,
    pub eq_kk1: Signal<Out, bool>,
    /// The pop when an eviction flush takes the cycle (POP or RETIRE); with
    /// the head flush the blocks that select on the pop recompute it.
    pub pop_pre: Signal<Out, bool>,
    // after the request (`head_final`)
    pub retire: Signal<Out, bool>,
    pub fsm_add: Signal<Out, Bits<W>>,
    pub edm_add: Signal<Out, Bits<W>>,
    pub odm_clr: Signal<Out, Bits<W>>,
    pub inv_add: Signal<Out, Bits<W>>,
    _s: State,
}

/// Head action of the cycle: (pop, flush, retire) before an eviction cancels a flush.
struct Act {
    pop: bool,
    flush: bool,
    retire: bool,
}

impl<const W: usize, const IW: usize, const A: usize> Head<W, IW, A> {
    fn empty(&self) -> bool {
        !self._s.full && self._s.head == self._s.tail
    }

    /// `hf_pre`: the PB is not empty, and the drain is forced or the
    /// policy allows.
    fn hf_pre(&self) -> bool {
        let s = &self._s;
        let force = s.drain_pend || s.full || self.drainq.val();
        !self.empty() && (force || self.pol_ok.val())
    }

    fn act(&self) -> Act {
        let empty = self.empty();
        let ht = u(&self.h_type);
        Act {
            pop: !empty && ht == u64::from(ty::HOLE),
            flush: head_flush(
                self.hf_pre(),
                self.h_ok.val(),
                self.ep_room.val(),
                self.not_full.val(),
            ),
            retire: !empty && ht >= u64::from(ty::OFENCE),
        }
    }

    fn next_state(&self, pop: bool) -> State {
        if self.rst.val() {
            return State::default();
        }
        let s = &self._s;
        let im = mask(IW);
        let push = self.push.val();
        let pend_after = s.drain_pend && !(pop && s.head == s.drain_idx);
        let tgt_idx = u(&self.tgt_idx);
        let age_e = tgt_idx.wrapping_sub(s.head) & im;
        let age_d = s.drain_idx.wrapping_sub(s.head) & im;
        let (drain_pend, drain_idx) = if self.tgt.val() && (!pend_after || age_e > age_d) {
            (true, tgt_idx)
        } else {
            (pend_after, s.drain_idx)
        };
        let full = match (push, pop) {
            (true, false) => (s.tail + 1) & im == s.head,
            (false, true) => false,
            _ => s.full,
        };
        let (head, tail) = (
            (s.head + u64::from(pop)) & im,
            (s.tail + u64::from(push)) & im,
        );
        let age_k1 = u(&self.k1).wrapping_sub(head) & im;
        let live_k = full || age_k1 < (tail.wrapping_sub(head) & im);
        State {
            head,
            tail,
            full,
            last_type: if push {
                u(&self.push_type)
            } else {
                s.last_type
            },
            drain_pend,
            drain_idx,
            busy: full || head != tail || !self.actr_z_nx.val() || !self.inv_quiet_nx.val(),
            live_k,
        }
    }
}

impl<const W: usize, const IW: usize, const A: usize> Logic for Head<W, IW, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let a = self.act();
            let ev = ev_local(
                self.ev_pre.val(),
                self.k_ev.val(),
                self.fifo_has.val(),
                a.flush,
                self.hl_eq.val(),
            );
            self._s = self.next_state(a.pop || a.retire || (a.flush && !ev));
        }
        let s = self._s;
        // outputs from the (possibly new) state
        let a = self.act();
        let retire = a.retire;
        let ht = u(&self.h_type) as u8;
        let hw = u(&self.h_warps);
        let sel = |c: bool| if retire && c { hw } else { 0 };
        self.head.next = bv(s.head);
        self.tail.next = bv(s.tail);
        self.y.next = bv(s.tail.wrapping_sub(1) & mask(IW));
        self.full.next = s.full;
        self.live_k.next = s.live_k;
        self.idle.next = !s.busy;
        self.last_type.next = bv(s.last_type);
        self.drain_pend.next = s.drain_pend;
        self.hf_pre.next = self.hf_pre();
        let im = mask(IW);
        let (k, k1) = (u(&self.k), u(&self.k1));
        let cnt = s.tail.wrapping_sub(s.head) & im;
        self.empty.next = !s.full && cnt == 0;
        self.one.next = !s.full && cnt == 1;
        self.two.next = !s.full && cnt == 2;
        self.eq_kh.next = k == s.head;
        self.eq_kh1.next = k == (s.head + 1) & im;
        self.eq_tk1.next = s.tail == k1;
        self.eq_yk1.next = s.tail.wrapping_sub(1) & im == k1;
        self.eq_kk1.next = k == k1;
        self.pop_pre.next = a.pop || a.retire;
        self.retire.next = retire;
        self.fsm_add.next = bv(sel(true));
        self.edm_add.next = bv(sel(ht == ty::DFENCE || ht == ty::REL_DEVICE));
        self.odm_clr.next = bv(sel(ht == ty::DFENCE
            || ht == ty::REL_DEVICE
            || ht == ty::ACQ_DEVICE));
        self.inv_add.next = bv(sel(ht == ty::DFENCE || ht == ty::ACQ_DEVICE));
    }
    fn connect(&mut self) {
        self.head.connect();
        self.tail.connect();
        self.y.connect();
        self.full.connect();
        self.live_k.connect();
        self.idle.connect();
        self.last_type.connect();
        self.drain_pend.connect();
        self.hf_pre.connect();
        self.empty.connect();
        self.one.connect();
        self.two.connect();
        self.eq_kh.connect();
        self.eq_kh1.connect();
        self.eq_tk1.connect();
        self.eq_yk1.connect();
        self.eq_kk1.connect();
        self.pop_pre.connect();
        self.retire.connect();
        self.fsm_add.connect();
        self.edm_add.connect();
        self.odm_clr.connect();
        self.inv_add.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
reg [{im}:0] drain_idx;
// empty and one entry are flip-flops, registered from the next-state values
// (`ne_r` is the complement of empty, so that every register resets to 0)
reg ne_r, one_r;
wire empty_w = ~ne_r;
wire two_w = ~full & (head + {iw}'d2 == tail);
// head action (4.1), from registers only
wire policy_ok = pol_ok;
wire force_dr = drain_pend | full | drainq;
wire a_pop = ~empty_w & (h_type == 3'd0);
// the flush: h_ok (a persist, none of its warps in FSM) is a register of
// store; hf_pre goes to every block that makes the flush (blocks::head_flush)
always @(*) hf_pre = ne_r & (force_dr | policy_ok);
wire ha_flush = {hf};
wire a_retire = ~empty_w & (h_type >= 3'd2);
// head_final: an eviction flush takes the cycle's flush; pop and retire
// proceed, so the retirement depends on registers only. The eviction flush
// is recomputed here from its parts (as in store, warps, epochs, fifo), so
// that the late decision reaches each block's registers on its own net.
wire ev_l = {ev_l};
wire f_pop = a_pop | a_retire | (ha_flush & ~ev_l);
wire f_retire = a_retire;
wire t_edm = (h_type == 3'd3) | (h_type == 3'd7);
wire t_inv = (h_type == 3'd3) | (h_type == 3'd6);
wire t_odm = t_edm | (h_type == 3'd6);
// drain target (4.2)
// head + 1 and the drain compare are kept as nets: the (late) pop selects
(* keep *) wire [{im}:0] head_inc = head + {iw}'d1;
(* keep *) wire dh = head == drain_idx;
wire pend_after = drain_pend & ~(f_pop & dh);
// the drain compare for the three places the target can be (k, y, tail),
// from registers: the decision only selects
wire d_k = {d_older_k};
wire d_y = {d_older_y};
wire d_t = {d_older_t};
wire e_younger = (tgt_k & d_k) | (~tgt_k & tgt_y & d_y) | (~tgt_k & ~tgt_y & d_t);
wire new_tgt = tgt & (~pend_after | e_younger);
// tail + 1 and its compare with head are kept as nets: the (late) push
// selects, instead of entering the incrementer's carry chain
(* keep *) wire [{im}:0] tail_inc = tail + {iw}'d1;
(* keep *) wire full_p = tail_inc == head;
// live(k) of r1's k next cycle, when it is decided: older than tail now,
// less the head if it pops, plus tail if this cycle allocates there (full
// after the push makes every entry live); the late pop only selects
wire l1 = full | {k1_older_tail};
(* keep *) wire lk_p = l1 & (k1 != head);
(* keep *) wire lk_n = l1;
wire lk_t = push & (tail == k1);
// idle next cycle: empty after this cycle's push and pop (one entry left
// and popped, or empty and nothing pushed), nothing counted, no invalidation
wire empty_nx = ~push & (f_pop ? one_r : empty_w);
// count' == 1: push and pop keep the count, a push onto an empty PB, a pop of two
wire one_nx = push ? (f_pop ? one_r : empty_w) : (f_pop ? two_w : one_r);
reg busy;

always @(*) idle = ~busy;
always @(*) empty = empty_w;
always @(*) one = one_r;
always @(*) two = two_w;
always @(*) eq_kh = k == head;
always @(*) eq_kh1 = k == head + {iw}'d1;
always @(*) eq_tk1 = tail == k1;
always @(*) eq_yk1 = tail - {iw}'d1 == k1;
always @(*) eq_kk1 = k == k1;
always @(*) pop_pre = a_pop | a_retire;
always @(*) retire = f_retire;
always @(*) fsm_add = f_retire ? h_warps : {w}'d0;
always @(*) edm_add = (f_retire & t_edm) ? h_warps : {w}'d0;
always @(*) odm_clr = (f_retire & t_odm) ? h_warps : {w}'d0;
always @(*) inv_add = (f_retire & t_inv) ? h_warps : {w}'d0;

always @(posedge clock) begin
   if (rst) begin
      head <= {iw}'d0; tail <= {iw}'d0; y <= {{{iw}{{1'b1}}}}; full <= 1'b0; last_type <= 3'd0;
      drain_pend <= 1'b0; drain_idx <= {iw}'d0; busy <= 1'b0;
      ne_r <= 1'b0; one_r <= 1'b0; live_k <= 1'b0;
   end else begin
      live_k <= (f_pop ? lk_p : lk_n) | lk_t;
      ne_r <= ~empty_nx; one_r <= one_nx;
      busy <= ~(empty_nx & actr_z_nx & inv_quiet_nx);
      if (f_pop) head <= head_inc;
      if (push) begin
         tail <= tail_inc;
         y <= tail;
         last_type <= push_type;
      end
      // full = (count + push - pop == N); a push implies not full
      if (push & ~f_pop) full <= full_p;
      else if (f_pop & ~push) full <= 1'b0;
      drain_pend <= new_tgt | pend_after;
      if (new_tgt) drain_idx <= tgt_idx;
   end
end
",
            d_older_k = v_older("drain_idx", "k", "head"),
            d_older_y = v_older("drain_idx", "y", "head"),
            d_older_t = v_older("drain_idx", "tail", "head"),
            k1_older_tail = v_older("k1", "tail", "head"),
            ev_l = v_ev_local("fifo_has"),
            hf = V_HEAD_FLUSH,
            im = IW - 1,
            iw = IW,
            w = W,
        ))
    }
}
