//! The persist buffer unit (`docs/microarch.md`), one rust-hdl block.
//!
//! The `update()` kernel below is both the rust-hdl simulation and, through
//! `#[hdl_gen]`, the Verilog of the unit. It follows the spec's §4 in order:
//! derived signals (§3), head action (§4.1), request (§4.2), head_final and
//! drain target, next state (§4.3). Every intermediate value is a
//! `Signal<Local, _>` written before it is read (rust-hdl kernels have no
//! `let`), and every literal is a `Constant` so that the Verilog has no
//! 32-bit literals.

use crate::blocks::{Mem1R, Mem2R, Mem4R, Reg, WarpIdx};
use rust_hdl::core::prelude::*;
use sbrp_iface::{entry_type, FlushPolicy};

/// The SBRP persist buffer unit.
///
/// Const parameters: `W` warps, `WB = log2 W`, `IW = log2 entries`,
/// `LW = log2 lines`, `A` ACTR bits. `window` and `policy` are constants of
/// the instance ([`SbrpPb::new`]).
#[derive(LogicBlock)]
pub struct SbrpPb<const W: usize, const WB: usize, const IW: usize, const LW: usize, const A: usize>
{
    // ---- ports (spec §2) ----
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    pub req_valid: Signal<In, bool>,
    pub req_op: Signal<In, Bits<3>>,
    pub req_warp: Signal<In, Bits<6>>,
    pub req_line: Signal<In, Bits<LW>>,
    pub ack: Signal<In, bool>,
    pub drain_all: Signal<In, bool>,
    pub req_ready: Signal<Out, bool>,
    pub req_wait: Signal<Out, bool>,
    pub flush_valid: Signal<Out, bool>,
    pub flush_line: Signal<Out, Bits<LW>>,
    pub flush_warps: Signal<Out, Bits<W>>,
    pub flush_evict: Signal<Out, bool>,
    pub inv_pm: Signal<Out, bool>,
    pub stall: Signal<Out, Bits<W>>,
    pub idle: Signal<Out, bool>,
    pub obs_odm: Signal<Out, Bits<W>>,
    pub obs_edm: Signal<Out, Bits<W>>,
    pub obs_fsm: Signal<Out, Bits<W>>,
    pub obs_actr: Signal<Out, Bits<A>>,
    pub obs_head: Signal<Out, Bits<IW>>,
    pub obs_tail: Signal<Out, Bits<IW>>,
    pub obs_full: Signal<Out, bool>,
    pub obs_drain: Signal<Out, bool>,

    // ---- constants (localparams in the Verilog) ----
    c_zero_w: Constant<Bits<W>>,
    c_one_w: Constant<Bits<W>>,
    c_zero_i: Constant<Bits<IW>>,
    c_one_i: Constant<Bits<IW>>,
    c_zero_l: Constant<Bits<LW>>,
    c_one_a: Constant<Bits<A>>,
    /// Flush window K.
    c_window: Constant<Bits<A>>,
    /// Policy is eager (flush whenever ordering allows).
    c_eager: Constant<bool>,
    /// Policy is lazy (flush only when forced; every ordering op sets a drain target).
    c_lazy: Constant<bool>,
    c_one3: Constant<Bits<3>>,
    c_t_hole: Constant<Bits<3>>,
    c_t_persist: Constant<Bits<3>>,
    c_t_ofence: Constant<Bits<3>>,
    c_t_dfence: Constant<Bits<3>>,
    c_t_acqdev: Constant<Bits<3>>,
    c_t_reldev: Constant<Bits<3>>,

    // ---- registers (spec §3), synchronous reset to 0 ----
    r_head: Reg<Bits<IW>>,
    r_tail: Reg<Bits<IW>>,
    r_full: Reg<bool>,
    r_odm: Reg<Bits<W>>,
    r_edm: Reg<Bits<W>>,
    r_fsm: Reg<Bits<W>>,
    r_actr: Reg<Bits<A>>,
    r_dpend: Reg<bool>,
    r_didx: Reg<Bits<IW>>,
    r_lov: Reg<bool>,
    r_loi: Reg<Bits<IW>>,

    // ---- memories (spec §3); read ports as listed ----
    /// pb_type: rd0 head, rd1 k (line's entry), rd2 j (warp_last_ord[w]), rd3 y (tail-1).
    m_type: Mem4R<Bits<3>, IW>,
    /// pb_warps: rd0 head, rd1 k, rd2 j, rd3 y.
    m_warps: Mem4R<Bits<W>, IW>,
    /// pb_line: rd0 head, rd1 k.
    m_line: Mem2R<Bits<LW>, IW>,
    /// pb_snap, valid field: rd0 k.
    m_snapv: Mem1R<bool, IW>,
    /// pb_snap, index field: rd0 k.
    m_snapi: Mem1R<Bits<IW>, IW>,
    /// l1_pbidx: rd0 req_line.
    m_l1idx: Mem1R<Bits<IW>, LW>,
    /// warp_last_ord: rd0 w.
    m_wlo: Mem1R<Bits<IW>, WB>,
    /// req_warp -> (warp index, warp id < W)
    u_widx: WarpIdx<WB>,

    // ---- combinational intermediates ----
    s_stall: Signal<Local, Bits<W>>,
    used: Signal<Local, Bits<IW>>,
    empty: Signal<Local, bool>,
    actr_zero: Signal<Local, bool>,
    actr_max: Signal<Local, bool>,
    fsm_eff: Signal<Local, Bits<W>>,
    hold: Signal<Local, bool>,
    force_dr: Signal<Local, bool>,
    policy_ok: Signal<Local, bool>,
    ha_pop: Signal<Local, bool>,
    ha_flush: Signal<Local, bool>,
    ha_retire: Signal<Local, bool>,
    ha_any: Signal<Local, bool>,
    w_idx: Signal<Local, Bits<WB>>,
    bit_w: Signal<Local, Bits<W>>,
    req_go: Signal<Local, bool>,
    is_store: Signal<Local, bool>,
    is_evict: Signal<Local, bool>,
    t_req: Signal<Local, Bits<3>>,
    t_stalls: Signal<Local, bool>,
    k: Signal<Local, Bits<IW>>,
    j: Signal<Local, Bits<IW>>,
    y: Signal<Local, Bits<IW>>,
    age_k: Signal<Local, Bits<IW>>,
    age_j: Signal<Local, Bits<IW>>,
    age_s: Signal<Local, Bits<IW>>,
    live_k: Signal<Local, bool>,
    live_j: Signal<Local, bool>,
    buffered: Signal<Local, bool>,
    hit: Signal<Local, bool>,
    younger: Signal<Local, bool>,
    coal: Signal<Local, bool>,
    acc: Signal<Local, bool>,
    wt: Signal<Local, bool>,
    alloc: Signal<Local, bool>,
    edm_w: Signal<Local, bool>,
    odm_w: Signal<Local, bool>,
    tgt: Signal<Local, bool>,
    tgt_idx: Signal<Local, Bits<IW>>,
    ev_flush: Signal<Local, bool>,
    lo_set: Signal<Local, bool>,
    hf_flush: Signal<Local, bool>,
    hf_retire: Signal<Local, bool>,
    hf_any: Signal<Local, bool>,
    ht_edm: Signal<Local, bool>,
    ht_inv: Signal<Local, bool>,
    ht_odmclr: Signal<Local, bool>,
    fsm_set: Signal<Local, Bits<W>>,
    odm_clr: Signal<Local, Bits<W>>,
    edm_set_h: Signal<Local, Bits<W>>,
    lo_clr: Signal<Local, bool>,
    pend_after: Signal<Local, bool>,
    age_e: Signal<Local, Bits<IW>>,
    age_d: Signal<Local, Bits<IW>>,
    tail_inc: Signal<Local, Bits<IW>>,
    flush_any: Signal<Local, bool>,
    ack_dec: Signal<Local, bool>,
    edm_keep: Signal<Local, Bits<W>>,
    odm_keep: Signal<Local, Bits<W>>,
}

fn bits_of<const N: usize>(v: u64) -> Bits<N> {
    Bits::<N>::from(v)
}

impl<const W: usize, const WB: usize, const IW: usize, const LW: usize, const A: usize>
    SbrpPb<W, WB, IW, LW, A>
{
    /// A unit with flush window `window` (1..2^A-1) and flush policy `policy`.
    /// The const parameters must satisfy `W == 1 << WB`, `IW <= LW`, `WB <= 6`.
    pub fn new(window: u32, policy: FlushPolicy) -> Self {
        assert_eq!(W, 1 << WB, "W must be 2^WB");
        assert!(WB <= 6 && IW <= LW && A <= 32);
        assert!(window >= 1 && u64::from(window) < (1u64 << A));
        let t = |v: u8| Constant::new(bits_of::<3>(u64::from(v)));
        SbrpPb {
            clock: Default::default(),
            rst: Default::default(),
            req_valid: Default::default(),
            req_op: Default::default(),
            req_warp: Default::default(),
            req_line: Default::default(),
            ack: Default::default(),
            drain_all: Default::default(),
            req_ready: Default::default(),
            req_wait: Default::default(),
            flush_valid: Default::default(),
            flush_line: Default::default(),
            flush_warps: Default::default(),
            flush_evict: Default::default(),
            inv_pm: Default::default(),
            stall: Default::default(),
            idle: Default::default(),
            obs_odm: Default::default(),
            obs_edm: Default::default(),
            obs_fsm: Default::default(),
            obs_actr: Default::default(),
            obs_head: Default::default(),
            obs_tail: Default::default(),
            obs_full: Default::default(),
            obs_drain: Default::default(),
            c_zero_w: Constant::new(bits_of(0)),
            c_one_w: Constant::new(bits_of(1)),
            c_zero_i: Constant::new(bits_of(0)),
            c_one_i: Constant::new(bits_of(1)),
            c_zero_l: Constant::new(bits_of(0)),
            c_one_a: Constant::new(bits_of(1)),
            c_window: Constant::new(bits_of(u64::from(window))),
            c_eager: Constant::new(policy == FlushPolicy::Eager),
            c_lazy: Constant::new(policy == FlushPolicy::Lazy),
            c_one3: t(1),
            c_t_hole: t(entry_type::HOLE),
            c_t_persist: t(entry_type::PERSIST),
            c_t_ofence: t(entry_type::OFENCE),
            c_t_dfence: t(entry_type::DFENCE),
            c_t_acqdev: t(entry_type::ACQ_DEVICE),
            c_t_reldev: t(entry_type::REL_DEVICE),
            r_head: Default::default(),
            r_tail: Default::default(),
            r_full: Default::default(),
            r_odm: Default::default(),
            r_edm: Default::default(),
            r_fsm: Default::default(),
            r_actr: Default::default(),
            r_dpend: Default::default(),
            r_didx: Default::default(),
            r_lov: Default::default(),
            r_loi: Default::default(),
            m_type: Default::default(),
            m_warps: Default::default(),
            m_line: Default::default(),
            m_snapv: Default::default(),
            m_snapi: Default::default(),
            m_l1idx: Default::default(),
            m_wlo: Default::default(),
            u_widx: Default::default(),
            s_stall: Default::default(),
            used: Default::default(),
            empty: Default::default(),
            actr_zero: Default::default(),
            actr_max: Default::default(),
            fsm_eff: Default::default(),
            hold: Default::default(),
            force_dr: Default::default(),
            policy_ok: Default::default(),
            ha_pop: Default::default(),
            ha_flush: Default::default(),
            ha_retire: Default::default(),
            ha_any: Default::default(),
            w_idx: Default::default(),
            bit_w: Default::default(),
            req_go: Default::default(),
            is_store: Default::default(),
            is_evict: Default::default(),
            t_req: Default::default(),
            t_stalls: Default::default(),
            k: Default::default(),
            j: Default::default(),
            y: Default::default(),
            age_k: Default::default(),
            age_j: Default::default(),
            age_s: Default::default(),
            live_k: Default::default(),
            live_j: Default::default(),
            buffered: Default::default(),
            hit: Default::default(),
            younger: Default::default(),
            coal: Default::default(),
            acc: Default::default(),
            wt: Default::default(),
            alloc: Default::default(),
            edm_w: Default::default(),
            odm_w: Default::default(),
            tgt: Default::default(),
            tgt_idx: Default::default(),
            ev_flush: Default::default(),
            lo_set: Default::default(),
            hf_flush: Default::default(),
            hf_retire: Default::default(),
            hf_any: Default::default(),
            ht_edm: Default::default(),
            ht_inv: Default::default(),
            ht_odmclr: Default::default(),
            fsm_set: Default::default(),
            odm_clr: Default::default(),
            edm_set_h: Default::default(),
            lo_clr: Default::default(),
            pend_after: Default::default(),
            age_e: Default::default(),
            age_d: Default::default(),
            tail_inc: Default::default(),
            flush_any: Default::default(),
            ack_dec: Default::default(),
            edm_keep: Default::default(),
            odm_keep: Default::default(),
        }
    }
}

/// The kernel's Verilog (the same text for every instance).
///
/// `#[hdl_gen]` on the inherent `kernel` below yields the generic `kernel`
/// (simulation), `connect` and `hdl` methods. Only one instance's `hdl` is
/// ever compiled: the kernel's Verilog text does not depend on the
/// parameters (widths live in the declarations, constants in localparams,
/// and the one width-dependent slice is the [`WarpIdx`] block), and building
/// that AST is most of the compile time of an instance.
fn kernel_verilog() -> Verilog {
    SbrpPb::<4, 2, 4, 4, 4>::new(1, FlushPolicy::Window).hdl()
}

impl<const W: usize, const WB: usize, const IW: usize, const LW: usize, const A: usize> Logic
    for SbrpPb<W, WB, IW, LW, A>
{
    fn update(&mut self) {
        self.kernel();
    }
    fn connect(&mut self) {
        // the inherent `connect` generated by `#[hdl_gen]` from the kernel
        SbrpPb::<W, WB, IW, LW, A>::connect(self);
    }
    fn hdl(&self) -> Verilog {
        kernel_verilog()
    }
}

impl<const W: usize, const WB: usize, const IW: usize, const LW: usize, const A: usize>
    SbrpPb<W, WB, IW, LW, A>
{
    /// The kernel's Verilog AST as this instance builds it (its `Logic::hdl`
    /// returns the one of a fixed instance instead). For the test that checks
    /// that the two are equal; calling it compiles this instance's builder.
    #[doc(hidden)]
    pub fn own_kernel_verilog(&self) -> Verilog {
        // the inherent `hdl` generated by `#[hdl_gen]` from the kernel
        SbrpPb::<W, WB, IW, LW, A>::hdl(self)
    }

    #[hdl_gen]
    fn kernel(&mut self) {
        // ---- clocks and resets ----
        self.r_head.clock.next = self.clock.val();
        self.r_tail.clock.next = self.clock.val();
        self.r_full.clock.next = self.clock.val();
        self.r_odm.clock.next = self.clock.val();
        self.r_edm.clock.next = self.clock.val();
        self.r_fsm.clock.next = self.clock.val();
        self.r_actr.clock.next = self.clock.val();
        self.r_dpend.clock.next = self.clock.val();
        self.r_didx.clock.next = self.clock.val();
        self.r_lov.clock.next = self.clock.val();
        self.r_loi.clock.next = self.clock.val();
        self.r_head.rst.next = self.rst.val();
        self.r_tail.rst.next = self.rst.val();
        self.r_full.rst.next = self.rst.val();
        self.r_odm.rst.next = self.rst.val();
        self.r_edm.rst.next = self.rst.val();
        self.r_fsm.rst.next = self.rst.val();
        self.r_actr.rst.next = self.rst.val();
        self.r_dpend.rst.next = self.rst.val();
        self.r_didx.rst.next = self.rst.val();
        self.r_lov.rst.next = self.rst.val();
        self.r_loi.rst.next = self.rst.val();
        self.m_type.clock.next = self.clock.val();
        self.m_warps.clock.next = self.clock.val();
        self.m_line.clock.next = self.clock.val();
        self.m_snapv.clock.next = self.clock.val();
        self.m_snapi.clock.next = self.clock.val();
        self.m_l1idx.clock.next = self.clock.val();
        self.m_wlo.clock.next = self.clock.val();

        // ---- derived signals (§3) ----
        self.s_stall.next = self.r_odm.q.val() | self.r_edm.q.val();
        self.used.next = self.r_tail.q.val() - self.r_head.q.val();
        self.empty.next = (!self.r_full.q.val()) && (self.r_head.q.val() == self.r_tail.q.val());
        self.actr_zero.next = !self.r_actr.q.val().any();
        self.actr_max.next = self.r_actr.q.val().all();
        self.fsm_eff.next = self.r_fsm.q.val();
        if self.actr_zero.val() {
            self.fsm_eff.next = self.c_zero_w.val();
        }
        self.hold.next = self.r_edm.q.val().any() && (!self.r_dpend.q.val());
        self.force_dr.next = self.r_dpend.q.val() || self.r_full.q.val() || self.drain_all.val();
        self.policy_ok.next = self.c_eager.val()
            || ((!self.c_lazy.val()) && (self.r_actr.q.val() < self.c_window.val()));

        // ---- head action (§4.1) ----
        self.m_type.ra0.next = self.r_head.q.val();
        self.m_warps.ra0.next = self.r_head.q.val();
        self.m_line.ra0.next = self.r_head.q.val();
        self.ha_pop.next = false;
        self.ha_flush.next = false;
        self.ha_retire.next = false;
        if (!self.rst.val()) && (!self.empty.val()) && (!self.hold.val()) {
            if !self.m_type.rd0.val().any() {
                self.ha_pop.next = true;
            } else if self.m_type.rd0.val() == self.c_t_persist.val() {
                if (!(self.m_warps.rd0.val() & self.fsm_eff.val()).any())
                    && (!self.actr_max.val())
                    && (self.force_dr.val() || self.policy_ok.val())
                {
                    self.ha_flush.next = true;
                }
            } else {
                self.ha_retire.next = true;
            }
        }
        self.ha_any.next = self.ha_pop.val() || self.ha_flush.val() || self.ha_retire.val();

        // ---- request decode (§4.2) ----
        self.u_widx.warp.next = self.req_warp.val();
        self.w_idx.next = self.u_widx.idx.val();
        self.bit_w.next = self.c_one_w.val() << self.w_idx.val();
        self.req_go.next = self.req_valid.val()
            && (!self.rst.val())
            && self.u_widx.ok.val()
            && (!self.s_stall.val().get_bit(self.w_idx.val().index()));
        self.is_store.next = !self.req_op.val().any();
        self.is_evict.next = self.req_op.val().all();
        self.t_req.next = self.req_op.val() + self.c_one3.val();
        self.t_stalls.next = (self.t_req.val() == self.c_t_dfence.val())
            || (self.t_req.val() == self.c_t_acqdev.val())
            || (self.t_req.val() == self.c_t_reldev.val());

        // ---- lookups: k = l1_pbidx[l], j = warp_last_ord[w], y = tail - 1 ----
        self.m_l1idx.ra0.next = self.req_line.val();
        self.k.next = self.m_l1idx.rd0.val();
        self.m_wlo.ra0.next = self.w_idx.val();
        self.j.next = self.m_wlo.rd0.val();
        self.y.next = self.r_tail.q.val() - self.c_one_i.val();
        self.m_type.ra1.next = self.k.val();
        self.m_type.ra2.next = self.j.val();
        self.m_type.ra3.next = self.y.val();
        self.m_warps.ra1.next = self.k.val();
        self.m_warps.ra2.next = self.j.val();
        self.m_warps.ra3.next = self.y.val();
        self.m_line.ra1.next = self.k.val();
        self.m_snapv.ra0.next = self.k.val();
        self.m_snapi.ra0.next = self.k.val();
        self.age_k.next = self.k.val() - self.r_head.q.val();
        self.age_j.next = self.j.val() - self.r_head.q.val();
        self.age_s.next = self.m_snapi.rd0.val() - self.r_head.q.val();
        self.live_k.next = self.r_full.q.val() || (self.age_k.val() < self.used.val());
        self.live_j.next = self.r_full.q.val() || (self.age_j.val() < self.used.val());
        self.buffered.next = self.live_k.val()
            && (self.m_type.rd1.val() == self.c_t_persist.val())
            && (self.m_line.rd1.val() == self.req_line.val());
        self.hit.next =
            self.buffered.val() && (!(self.ha_any.val() && (self.k.val() == self.r_head.q.val())));
        self.younger.next = self.live_j.val()
            && (self.m_type.rd2.val() >= self.c_t_ofence.val())
            && self.m_warps.rd2.val().get_bit(self.w_idx.val().index())
            && (self.age_j.val() > self.age_k.val());
        self.coal.next = (!self.empty.val())
            && (self.m_type.rd3.val() == self.t_req.val())
            && (!(self.ha_any.val() && (self.y.val() == self.r_head.q.val())));

        // ---- request (§4.2) ----
        self.acc.next = false;
        self.wt.next = false;
        self.alloc.next = false;
        self.edm_w.next = false;
        self.odm_w.next = false;
        self.tgt.next = false;
        self.tgt_idx.next = self.k.val();
        self.ev_flush.next = false;
        self.lo_set.next = false;
        self.m_type.we.next = false;
        self.m_type.wa.next = self.r_tail.q.val();
        self.m_type.wd.next = self.c_t_persist.val();
        self.m_warps.we.next = false;
        self.m_warps.wa.next = self.r_tail.q.val();
        self.m_warps.wd.next = self.bit_w.val();
        self.m_line.we.next = false;
        self.m_line.wa.next = self.r_tail.q.val();
        self.m_line.wd.next = self.req_line.val();
        self.m_snapv.we.next = false;
        self.m_snapv.wa.next = self.r_tail.q.val();
        self.m_snapv.wd.next = self.r_lov.q.val();
        self.m_snapi.we.next = false;
        self.m_snapi.wa.next = self.r_tail.q.val();
        self.m_snapi.wd.next = self.r_loi.q.val();
        self.m_l1idx.we.next = false;
        self.m_l1idx.wa.next = self.req_line.val();
        self.m_l1idx.wd.next = self.r_tail.q.val();
        self.m_wlo.we.next = false;
        self.m_wlo.wa.next = self.w_idx.val();
        self.m_wlo.wd.next = self.r_tail.q.val();
        if self.req_go.val() {
            if self.is_store.val() {
                if self.hit.val() {
                    if self.younger.val() {
                        // refuse, wait; drain target k
                        self.wt.next = true;
                        self.edm_w.next = true;
                        self.tgt.next = true;
                    } else {
                        // coalesce: pb_warps[k] |= bit(w)
                        self.acc.next = true;
                        self.m_warps.we.next = true;
                        self.m_warps.wa.next = self.k.val();
                        self.m_warps.wd.next = self.m_warps.rd1.val() | self.bit_w.val();
                    }
                } else if !self.r_full.q.val() {
                    // allocate {PERSIST, bit(w), l, (lo_valid, lo_idx)}; l1_pbidx[l] = tail
                    self.acc.next = true;
                    self.alloc.next = true;
                    self.m_type.we.next = true;
                    self.m_warps.we.next = true;
                    self.m_line.we.next = true;
                    self.m_snapv.we.next = true;
                    self.m_snapi.we.next = true;
                    self.m_l1idx.we.next = true;
                }
            } else if self.is_evict.val() {
                if !self.buffered.val() {
                    self.acc.next = true;
                } else if self.m_snapv.rd0.val() && (self.age_s.val() < self.age_k.val()) {
                    // an older ordering entry is in the PB: wait, drain target k
                    self.wt.next = true;
                    self.edm_w.next = true;
                    self.tgt.next = true;
                } else if (self.m_warps.rd1.val() & self.fsm_eff.val()).any()
                    || self.actr_max.val()
                    || self.hold.val()
                {
                    self.wt.next = true;
                    self.edm_w.next = true;
                } else {
                    // flush the entry as an eviction; it stays as a hole
                    self.acc.next = true;
                    self.ev_flush.next = true;
                    self.m_type.we.next = true;
                    self.m_type.wa.next = self.k.val();
                    self.m_type.wd.next = self.c_t_hole.val();
                }
            } else {
                if self.coal.val() {
                    self.acc.next = true;
                    self.m_warps.we.next = true;
                    self.m_warps.wa.next = self.y.val();
                    self.m_warps.wd.next = self.m_warps.rd3.val() | self.bit_w.val();
                    self.m_wlo.we.next = true;
                    self.m_wlo.wd.next = self.y.val();
                    self.tgt_idx.next = self.y.val();
                } else if !self.r_full.q.val() {
                    // allocate {t, bit(w), line 0, snap 0}; warp_last_ord[w] = tail
                    self.acc.next = true;
                    self.alloc.next = true;
                    self.lo_set.next = true;
                    self.m_type.we.next = true;
                    self.m_type.wd.next = self.t_req.val();
                    self.m_warps.we.next = true;
                    self.m_line.we.next = true;
                    self.m_line.wd.next = self.c_zero_l.val();
                    self.m_snapv.we.next = true;
                    self.m_snapv.wd.next = false;
                    self.m_snapi.we.next = true;
                    self.m_snapi.wd.next = self.c_zero_i.val();
                    self.m_wlo.we.next = true;
                    self.tgt_idx.next = self.r_tail.q.val();
                }
                if self.acc.val() {
                    if self.t_stalls.val() {
                        self.odm_w.next = true;
                        self.tgt.next = true;
                    } else if self.c_lazy.val() {
                        self.tgt.next = true;
                    }
                }
            }
        }

        // ---- head_final: an eviction flush cancels the head action ----
        self.hf_flush.next = self.ha_flush.val() && (!self.ev_flush.val());
        self.hf_retire.next = self.ha_retire.val() && (!self.ev_flush.val());
        self.hf_any.next = self.ha_any.val() && (!self.ev_flush.val());
        self.ht_edm.next = (self.m_type.rd0.val() == self.c_t_dfence.val())
            || (self.m_type.rd0.val() == self.c_t_reldev.val());
        self.ht_inv.next = (self.m_type.rd0.val() == self.c_t_dfence.val())
            || (self.m_type.rd0.val() == self.c_t_acqdev.val());
        self.ht_odmclr.next = self.ht_edm.val() || (self.m_type.rd0.val() == self.c_t_acqdev.val());
        self.fsm_set.next = self.c_zero_w.val();
        self.odm_clr.next = self.c_zero_w.val();
        self.edm_set_h.next = self.c_zero_w.val();
        self.lo_clr.next = false;
        self.inv_pm.next = false;
        if self.hf_retire.val() {
            self.fsm_set.next = self.m_warps.rd0.val();
            if self.ht_odmclr.val() {
                self.odm_clr.next = self.m_warps.rd0.val();
            }
            if self.ht_edm.val() {
                self.edm_set_h.next = self.m_warps.rd0.val();
            }
            self.inv_pm.next = self.ht_inv.val();
            self.lo_clr.next = self.r_lov.q.val() && (self.r_loi.q.val() == self.r_head.q.val());
        }

        // ---- decision outputs ----
        self.req_ready.next = self.acc.val();
        self.req_wait.next = self.wt.val();
        self.flush_any.next = self.hf_flush.val() || self.ev_flush.val();
        self.flush_valid.next = self.flush_any.val();
        self.flush_evict.next = self.ev_flush.val();
        self.flush_line.next = self.c_zero_l.val();
        self.flush_warps.next = self.c_zero_w.val();
        if self.hf_flush.val() {
            self.flush_line.next = self.m_line.rd0.val();
            self.flush_warps.next = self.m_warps.rd0.val();
        }
        if self.ev_flush.val() {
            self.flush_line.next = self.req_line.val();
            self.flush_warps.next = self.m_warps.rd1.val();
        }

        // ---- drain target (§4.2) ----
        self.pend_after.next = self.r_dpend.q.val()
            && (!(self.hf_any.val() && (self.r_head.q.val() == self.r_didx.q.val())));
        self.age_e.next = self.tgt_idx.val() - self.r_head.q.val();
        self.age_d.next = self.r_didx.q.val() - self.r_head.q.val();
        self.r_dpend.d.next = self.pend_after.val();
        self.r_didx.d.next = self.r_didx.q.val();
        if self.tgt.val() {
            self.r_dpend.d.next = true;
            if (!self.pend_after.val()) || (self.age_e.val() > self.age_d.val()) {
                self.r_didx.d.next = self.tgt_idx.val();
            }
        }

        // ---- next state (§4.3) ----
        self.r_head.d.next = self.r_head.q.val();
        if self.hf_any.val() {
            self.r_head.d.next = self.r_head.q.val() + self.c_one_i.val();
        }
        self.tail_inc.next = self.r_tail.q.val() + self.c_one_i.val();
        self.r_tail.d.next = self.r_tail.q.val();
        if self.alloc.val() {
            self.r_tail.d.next = self.tail_inc.val();
        }
        // full = (count + push - pop == N); push implies !full
        self.r_full.d.next = self.r_full.q.val();
        if self.alloc.val() && (!self.hf_any.val()) {
            self.r_full.d.next = self.tail_inc.val() == self.r_head.q.val();
        } else if self.hf_any.val() && (!self.alloc.val()) {
            self.r_full.d.next = false;
        }
        self.ack_dec.next = self.ack.val() && (!self.actr_zero.val());
        self.r_actr.d.next = self.r_actr.q.val();
        if self.flush_any.val() && (!self.ack_dec.val()) {
            self.r_actr.d.next = self.r_actr.q.val() + self.c_one_a.val();
        } else if self.ack_dec.val() && (!self.flush_any.val()) {
            self.r_actr.d.next = self.r_actr.q.val() - self.c_one_a.val();
        }
        self.r_fsm.d.next = self.r_fsm.q.val() | self.fsm_set.val();
        if self.actr_zero.val() {
            self.r_fsm.d.next = self.c_zero_w.val();
        }
        self.edm_keep.next = self.r_edm.q.val();
        if self.actr_zero.val() && (!self.r_dpend.q.val()) {
            self.edm_keep.next = self.c_zero_w.val();
        }
        self.r_edm.d.next = self.edm_keep.val() | self.edm_set_h.val();
        if self.edm_w.val() {
            self.r_edm.d.next = self.edm_keep.val() | self.edm_set_h.val() | self.bit_w.val();
        }
        self.odm_keep.next = self.r_odm.q.val() & (!self.odm_clr.val());
        self.r_odm.d.next = self.odm_keep.val();
        if self.odm_w.val() {
            self.r_odm.d.next = self.odm_keep.val() | self.bit_w.val();
        }
        self.r_lov.d.next = self.r_lov.q.val();
        self.r_loi.d.next = self.r_loi.q.val();
        if self.lo_set.val() {
            self.r_lov.d.next = true;
            self.r_loi.d.next = self.r_tail.q.val();
        } else if self.lo_clr.val() {
            self.r_lov.d.next = false;
        }

        // ---- registered outputs ----
        self.stall.next = self.s_stall.val();
        self.idle.next = self.empty.val() && self.actr_zero.val();
        self.obs_odm.next = self.r_odm.q.val();
        self.obs_edm.next = self.r_edm.q.val();
        self.obs_fsm.next = self.r_fsm.q.val();
        self.obs_actr.next = self.r_actr.q.val();
        self.obs_head.next = self.r_head.q.val();
        self.obs_tail.next = self.r_tail.q.val();
        self.obs_full.next = self.r_full.q.val();
        self.obs_drain.next = self.r_dpend.q.val();
    }
}
