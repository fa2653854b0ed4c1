//! The request decision (`docs/microarch.md` §4.2): the request in `r2`
//! against the architectural state at the start of the cycle. Purely
//! combinational; every input is a register of another block, or the
//! forwarded synchronous read of entry `k` ([`crate::store::PbStore`]), or
//! the head action's flush of this cycle, made here from registers
//! ([`crate::blocks::head_flush`]).
//!
//! Outputs: the response (`d_kind`, `d_idx`), the one memory write of the
//! cycle (allocation at `tail`, a bit set at `k` or `y = tail-1`, or the hole
//! at `k` of an eviction), the register part of the eviction flush
//! (`ev_pre`: the blocks it drives recompute the flush, see
//! [`crate::blocks::ev_local`]), and the updates of the per-warp tables, ODM
//! and the drain target.

use crate::blocks::{bv, head_flush, mask, u, v_older, V_HEAD_FLUSH};
use rust_hdl::core::prelude::*;
use sbrp_iface::entry_type as ty;

/// Request decision of one cycle.
#[derive(Clone, Debug, Default, LogicBlock)]
pub struct Decide<const W: usize, const WB: usize, const IW: usize, const LW: usize> {
    // the request in r2
    pub r2_valid: Signal<In, bool>,
    pub r2_op: Signal<In, Bits<3>>,
    pub r2_warp: Signal<In, Bits<6>>,
    pub r2_line: Signal<In, Bits<LW>>,
    pub r2_pbv: Signal<In, bool>,
    pub r2_pbidx: Signal<In, Bits<IW>>,
    /// Policy is lazy: every taken ordering op sets a drain target.
    pub lazy: Signal<In, bool>,
    // state at the start of the cycle
    /// `stall[w]` of the request's warp (selected a cycle early by
    /// [`crate::warps::WarpTables`]).
    pub w_stall: Signal<In, bool>,
    pub head: Signal<In, Bits<IW>>,
    pub tail: Signal<In, Bits<IW>>,
    /// `tail - 1`, a register of [`crate::head::Head`] (no decrement on
    /// the way to the ordering op's `named` check).
    pub y: Signal<In, Bits<IW>>,
    pub full: Signal<In, bool>,
    /// `live(k)`: registered by [`crate::head::Head`] while the request
    /// was in `r1`.
    pub live_k: Signal<In, bool>,
    /// The PB is empty; holds one entry (`y == head`): flip-flops of
    /// [`crate::head::Head`].
    pub empty: Signal<In, bool>,
    pub one: Signal<In, bool>,
    pub last_type: Signal<In, Bits<3>>,
    /// `can_flush` (§3) is `ep_room & not_full` (registers of the epochs
    /// and the flush FIFO).
    pub ep_room: Signal<In, bool>,
    pub not_full: Signal<In, bool>,
    /// Some queued flush has line `r2_line`.
    pub fifo_has: Signal<In, bool>,
    /// The head action's flush of this cycle (before an eviction cancels
    /// it), made here from its register parts: `hf_pre`, `h_ok`, `ep_room`,
    /// `not_full` ([`crate::blocks::head_flush`]).
    pub hf_pre: Signal<In, bool>,
    pub h_ok: Signal<In, bool>,
    pub h_line: Signal<In, Bits<LW>>,
    // entry k (forwarded, [`crate::store::PbStore`]): a persist, of line
    // `r2_line`, one of its warps in FSM, one with an older ordering entry
    pub k_persist: Signal<In, bool>,
    pub k_leq: Signal<In, bool>,
    pub k_fsm: Signal<In, bool>,
    pub k_older: Signal<In, bool>,
    // per-warp tables for r2's warp
    pub yq_valid: Signal<In, bool>,
    pub yq_idx: Signal<In, Bits<IW>>,
    pub q_full: Signal<In, bool>,
    // response
    pub d_kind: Signal<Out, Bits<2>>,
    pub d_idx: Signal<Out, Bits<IW>>,
    pub err_warp: Signal<Out, bool>,
    /// The request's warp inside the unit (low WB bits of `r2_warp`).
    pub warp_idx: Signal<Out, Bits<WB>>,
    // allocation at tail
    pub push: Signal<Out, bool>,
    pub push_type: Signal<Out, Bits<3>>,
    // the memory write of this cycle
    pub wr_type_en: Signal<Out, bool>,
    pub wr_line_en: Signal<Out, bool>,
    pub wr_warps_en: Signal<Out, bool>,
    pub wr_addr: Signal<Out, Bits<IW>>,
    /// `wr_addr` is `tail` (allocation); `tail - 1` (ordering op coalescing).
    pub wr_at_tail: Signal<Out, bool>,
    pub wr_at_y: Signal<Out, bool>,
    /// The write sets the request warp's bit (a coalescing, at `k` or `y`).
    pub wr_coal: Signal<Out, bool>,
    /// The entry an allocation would write (type, line), from the opcode
    /// alone: the head staging takes it when its slot is not live.
    pub sp_type: Signal<Out, Bits<3>>,
    pub sp_line: Signal<Out, Bits<LW>>,
    pub wr_type: Signal<Out, Bits<3>>,
    pub wr_line: Signal<Out, Bits<LW>>,
    /// The request warp's bit; `pb_warps`' write mask is all ones for an
    /// allocation (`wr_at_tail`), else this bit: made by
    /// [`crate::store::PbStore`], so that `push` does not fan out to a
    /// W-bit select here.
    pub wr_warps: Signal<Out, Bits<W>>,
    /// The parts of the eviction flush {r2_line, k_warps, evict 1} known
    /// from registers: a valid evict of a live, hooked `k` that may flush
    /// (`can_flush`); the consuming blocks AND it with the checks of entry
    /// `k` and the busy check ([`crate::blocks::ev_local`]).
    pub ev_pre: Signal<Out, bool>,
    // ODM, drain target, entry wait, ordering queue push
    pub odm_set: Signal<Out, Bits<W>>,
    /// `odm_set` is not zero (the request's warp enters ODM).
    pub odm_req: Signal<Out, bool>,
    pub tgt: Signal<Out, bool>,
    pub tgt_idx: Signal<Out, Bits<IW>>,
    /// The drain target is `k` (a store or evict wait), else `y` when
    /// `oq_y`, else `tail`: the drain compare selects among the three.
    pub tgt_k: Signal<Out, bool>,
    pub wait_set: Signal<Out, bool>,
    pub oq_push: Signal<Out, bool>,
    pub oq_idx: Signal<Out, Bits<IW>>,
    /// `oq_idx` is `y` (a coalescing ordering op), else `tail`.
    pub oq_y: Signal<Out, bool>,
}

/// The outputs of [`Decide`], computed in Rust for rust-hdl's simulator.
#[derive(Default)]
struct Out_ {
    kind: u64,
    idx: u64,
    err_warp: bool,
    push: bool,
    push_type: u64,
    wr_type_en: bool,
    wr_line_en: bool,
    wr_warps_en: bool,
    wr_addr: u64,
    wr_at_y: bool,
    wr_coal: bool,
    sp_type: u64,
    sp_line: u64,
    wr_type: u64,
    wr_line: u64,
    wr_warps: u64,
    ev_pre: bool,
    odm_set: u64,
    tgt: bool,
    tgt_idx: u64,
    wait_set: bool,
    oq_push: bool,
    oq_idx: u64,
    oq_y: bool,
}

impl<const W: usize, const WB: usize, const IW: usize, const LW: usize> Decide<W, WB, IW, LW> {
    fn compute(&self) -> Out_ {
        let im = mask(IW);
        let valid = self.r2_valid.val();
        let warp = u(&self.r2_warp);
        let w = warp & mask(WB);
        let warp_ok = warp >> WB == 0;
        let wbit = 1u64 << w;
        let go = valid && warp_ok && !self.w_stall.val();
        let op = u(&self.r2_op);
        let (is_store, is_evict) = (op == 0, op == 7);
        let is_ord = !is_store && !is_evict;
        let t = (op + 1) & 7;
        let (head, tail, full) = (u(&self.head), u(&self.tail), self.full.val());
        let empty = self.empty.val();
        let k = u(&self.r2_pbidx);
        let line = u(&self.r2_line);
        let age_k = k.wrapping_sub(head) & im;
        let live_k = self.live_k.val();
        let can_flush = self.ep_room.val() && self.not_full.val();
        let ha_flush = head_flush(
            self.hf_pre.val(),
            self.h_ok.val(),
            self.ep_room.val(),
            self.not_full.val(),
        );
        let busy = self.fifo_has.val() || (ha_flush && u(&self.h_line) == line);
        let buffered = self.r2_pbv.val() && live_k && self.k_persist.val() && self.k_leq.val();
        let yq_valid = self.yq_valid.val();
        let yq_idx = u(&self.yq_idx);
        let younger = yq_valid && (yq_idx.wrapping_sub(head) & im) > age_k;
        let st = go && is_store && !busy;
        let st_wait = st && buffered && younger;
        let st_coal = st && buffered && !younger;
        let st_alloc = st && !buffered && !full;
        let ev = go && is_evict && !busy;
        let ev_clean = ev && !buffered;
        let ev_wait = ev && buffered && self.k_older.val();
        let ev_flush = ev && buffered && !self.k_older.val() && !self.k_fsm.val() && can_flush;
        let y = u(&self.y);
        // with one entry, `y` is the head entry and, being an ordering entry
        // of type t, it retires this cycle: §4.2's `pop && y == head` is `one`
        let coal = !empty && u(&self.last_type) == t && !self.one.val();
        let named = coal && yq_valid && yq_idx == y;
        // replay when the warp has D live ordering entries and needs a new one
        let o_ok = go && is_ord && (named || !self.q_full.val());
        let o_coal = o_ok && coal;
        let o_alloc = o_ok && !coal && !full;
        let o_taken = o_coal || o_alloc;
        let e = if o_coal { y } else { tail };
        let stalls_odm = matches!(op, 2 | 5 | 6);
        let push = st_alloc || o_alloc;
        let push_type = if st_alloc { u64::from(ty::PERSIST) } else { t };
        let performed = st_alloc || ev_clean || ev_flush || o_alloc;
        let coalesced = st_coal || o_coal;
        let waits = st_wait || ev_wait;
        Out_ {
            kind: if !valid || performed {
                0
            } else if coalesced {
                1
            } else if waits {
                3
            } else {
                2
            },
            idx: if st_alloc {
                tail
            } else if st_coal {
                k
            } else {
                0
            },
            err_warp: valid && !warp_ok,
            push,
            push_type,
            wr_type_en: push || ev_flush,
            wr_line_en: push,
            wr_warps_en: push || st_coal || o_coal,
            wr_addr: if push {
                tail
            } else if o_coal {
                y
            } else {
                k
            },
            wr_at_y: !push && o_coal,
            wr_coal: st_coal || o_coal,
            sp_type: if is_store { u64::from(ty::PERSIST) } else { t },
            sp_line: if is_store { line } else { 0 },
            wr_type: if ev_flush { 0 } else { push_type },
            wr_line: if st_alloc { line } else { 0 },
            wr_warps: wbit,
            ev_pre: go && is_evict && self.r2_pbv.val() && live_k && can_flush,
            odm_set: if o_taken && stalls_odm { wbit } else { 0 },
            tgt: waits || (o_taken && (stalls_odm || self.lazy.val())),
            tgt_idx: if is_ord { e } else { k },
            wait_set: waits,
            oq_push: (o_coal && !named) || o_alloc,
            oq_idx: e,
            oq_y: o_coal,
        }
    }
}

impl<const W: usize, const WB: usize, const IW: usize, const LW: usize> Logic
    for Decide<W, WB, IW, LW>
{
    fn update(&mut self) {
        let o = self.compute();
        self.d_kind.next = bv(o.kind);
        self.d_idx.next = bv(o.idx);
        self.err_warp.next = o.err_warp;
        self.warp_idx.next = bv(u(&self.r2_warp));
        self.push.next = o.push;
        self.push_type.next = bv(o.push_type);
        self.wr_type_en.next = o.wr_type_en;
        self.wr_line_en.next = o.wr_line_en;
        self.wr_warps_en.next = o.wr_warps_en;
        self.wr_addr.next = bv(o.wr_addr);
        self.wr_at_tail.next = o.push;
        self.wr_at_y.next = o.wr_at_y;
        self.wr_coal.next = o.wr_coal;
        self.sp_type.next = bv(o.sp_type);
        self.sp_line.next = bv(o.sp_line);
        self.wr_type.next = bv(o.wr_type);
        self.wr_line.next = bv(o.wr_line);
        self.wr_warps.next = bv(o.wr_warps);
        self.ev_pre.next = o.ev_pre;
        self.odm_set.next = bv(o.odm_set);
        self.odm_req.next = o.odm_set != 0;
        self.tgt.next = o.tgt;
        self.tgt_idx.next = bv(o.tgt_idx);
        self.tgt_k.next = !(1..=6).contains(&u(&self.r2_op));
        self.wait_set.next = o.wait_set;
        self.oq_push.next = o.oq_push;
        self.oq_idx.next = bv(o.oq_idx);
        self.oq_y.next = o.oq_y;
    }
    fn connect(&mut self) {
        self.d_kind.connect();
        self.d_idx.connect();
        self.err_warp.connect();
        self.warp_idx.connect();
        self.push.connect();
        self.push_type.connect();
        self.wr_type_en.connect();
        self.wr_line_en.connect();
        self.wr_warps_en.connect();
        self.wr_addr.connect();
        self.wr_at_tail.connect();
        self.wr_at_y.connect();
        self.wr_coal.connect();
        self.sp_type.connect();
        self.sp_line.connect();
        self.wr_type.connect();
        self.wr_line.connect();
        self.wr_warps.connect();
        self.ev_pre.connect();
        self.odm_set.connect();
        self.odm_req.connect();
        self.tgt.connect();
        self.tgt_idx.connect();
        self.tgt_k.connect();
        self.wait_set.connect();
        self.oq_push.connect();
        self.oq_idx.connect();
        self.oq_y.connect();
    }
    fn hdl(&self) -> Verilog {
        let warp_ok = if WB == 6 {
            "1'b1".to_string()
        } else {
            format!("~|r2_warp[5:{WB}]")
        };
        Verilog::Custom(format!(
            "\
// request decode
wire [{wbm}:0] w = r2_warp[{wbm}:0];
wire warp_ok = {warp_ok};
wire [{wm}:0] wbit = {{{{{wm}{{1'b0}}}}, 1'b1}} << w;
wire go = r2_valid & warp_ok & ~w_stall;
wire is_store = r2_op == 3'd0;
wire is_evict = r2_op == 3'd7;
wire is_ord = ~is_store & ~is_evict;
wire [2:0] t = r2_op + 3'd1;
wire stalls_odm = (r2_op == 3'd2) | (r2_op == 3'd5) | (r2_op == 3'd6);
// empty and one (y == head) are flip-flops of head_ctl
// live_k (k older than tail, or full) is a register of head_ctl
// the head action's flush and can_flush, made here from registers
wire can_flush = ep_room & not_full;
wire ha_flush = {hf};
wire busy = fifo_has | (ha_flush & (h_line == r2_line));
wire buffered = r2_pbv & live_k & k_persist & k_leq;
// the warp's youngest ordering entry is younger than k
wire k_older_y = {k_older_y};
wire younger = yq_valid & k_older_y;
// store
wire st = go & is_store & ~busy;
wire st_wait = st & buffered & younger;
wire st_coal = st & buffered & ~younger;
// (kept: busy, late with the head flush, is the allocation's last gate)
(* keep *) wire st_alloc_nb = go & is_store & ~buffered & ~full;
wire st_alloc = st_alloc_nb & ~busy;
// evict
wire ev = go & is_evict & ~busy;
wire ev_clean = ev & ~buffered;
wire ev_wait = ev & buffered & k_older;
wire ev_go = ev & buffered & ~k_older & ~k_fsm & can_flush;
// ordering op
// y = tail - 1 is a register of head_ctl
// with one entry, y is the head entry and, being an ordering entry of type
// t, it retires this cycle: the spec's (pop & y == head) is `one`
// (last_type == t as last_type - 1 == r2_op: no adder behind r2_op)
wire [2:0] lt_m1 = last_type - 3'd1;
wire coal = ~empty & (lt_m1 == r2_op) & ~one;
wire named = coal & yq_valid & (yq_idx == y);
wire o_ok = go & is_ord & (named | ~q_full);
wire o_coal = o_ok & coal;
wire o_alloc = o_ok & ~coal & ~full;
wire o_taken = o_coal | o_alloc;
wire [{im}:0] e = o_coal ? y : tail;
wire alloc = st_alloc | o_alloc;
wire [2:0] a_type = st_alloc ? 3'd1 : t;
wire performed = st_alloc | ev_clean | ev_go | o_alloc;
wire coalesced = st_coal | o_coal;
wire waits = st_wait | ev_wait;

always @(*) d_kind = (~r2_valid | performed) ? 2'd0 : coalesced ? 2'd1 : waits ? 2'd3 : 2'd2;
always @(*) d_idx = st_alloc ? tail : st_coal ? r2_pbidx : {iw}'d0;
always @(*) err_warp = r2_valid & ~warp_ok;
always @(*) warp_idx = w;
always @(*) push = alloc;
always @(*) push_type = a_type;
always @(*) wr_type_en = alloc | ev_go;
always @(*) wr_line_en = alloc;
always @(*) wr_warps_en = alloc | st_coal | o_coal;
always @(*) wr_addr = alloc ? tail : o_coal ? y : r2_pbidx;
always @(*) wr_at_tail = alloc;
always @(*) wr_at_y = o_coal;
always @(*) wr_coal = st_coal | o_coal;
always @(*) sp_type = is_store ? 3'd1 : t;
always @(*) sp_line = is_store ? r2_line : {lw}'d0;
always @(*) wr_type = ev_go ? 3'd0 : a_type;
always @(*) wr_line = st_alloc ? r2_line : {lw}'d0;
always @(*) wr_warps = wbit;
always @(*) ev_pre = go & is_evict & r2_pbv & live_k & can_flush;
wire odm_go = o_taken & stalls_odm;
always @(*) odm_set = odm_go ? wbit : {w}'d0;
always @(*) odm_req = odm_go;
always @(*) tgt = waits | (o_taken & (stalls_odm | lazy));
always @(*) tgt_idx = is_ord ? e : r2_pbidx;
always @(*) tgt_k = ~is_ord;
always @(*) wait_set = waits;
always @(*) oq_push = (o_coal & ~named) | o_alloc;
always @(*) oq_idx = e;
always @(*) oq_y = o_coal;
",
            wbm = WB.max(1) - 1,
            wm = W - 1,
            w = W,
            k_older_y = v_older("r2_pbidx", "yq_idx", "head"),
            hf = V_HEAD_FLUSH,
            im = IW - 1,
            iw = IW,
            lw = LW,
        ))
    }
}
