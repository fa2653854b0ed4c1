//! The persist buffer unit `sbrp_pb` (`docs/microarch.md` v2): the ports of
//! §2 and the blocks that implement §3-§4, wired together.
//!
//! | block | spec | state |
//! |---|---|---|
//! | `rst_reg` ([`ResetReg`]) | §7 | `rst_q`: the reset of every other block |
//! | `pipe` ([`ReqPipe`]) | §4.0 | `r1`, `r2`, `rsp`, `ackq`, `doneq`, `drainq`, `ready`, `err` |
//! | `decide` ([`Decide`]) | §4.2 | none (the decision of `r2`) |
//! | `head_ctl` ([`Head`]) | §4.1, drain target, §4.4 pointers | `head`, `tail`, `full`, `last_type`, `drain_*` |
//! | `store` ([`PbStore`]) | §3 memories, §4.0 forwarding | write queue, head staging |
//! | `pb_type`, `pb_line`, `pb_warps` | §3 | the memories (2 synchronous read ports) |
//! | `warps` ([`WarpTables`]) | §3, §4.1-4.2 | `oq`, `wait_*`, `odm` |
//! | `epochs` ([`Epochs`]) | §4.3 | `ectr`, `actr`, `ep_*` |
//! | `fifo` ([`FlushFifo`]) | §2, §4.4 | the flush FIFO |
//! | `inval` ([`Inval`]) | §4.4 | `inv_req`, `inv_cur`, `inv_next` |
//!
//! Every output is a register of one block, or an OR of a few (`stall`,
//! `obs_edm`), or gated by `rst_q` (`req_ready`, 0 in a reset cycle, §7).
//! `rst` enters `rst_reg` only (§7: the reset acts one cycle late, so the
//! port drives one flip-flop and the reset tree hangs off a register). The wiring kernel below is both the rust-hdl
//! simulation and the Verilog; in the Verilog each of its assignments is its
//! own `always @(*)` (see [`split_always`]), so that Verilator orders the
//! combinational paths between blocks signal by signal.

use crate::blocks::{ResetReg, SyncMem, SyncMemMasked};
use crate::decide::Decide;
use crate::epochs::Epochs;
use crate::fifo::FlushFifo;
use crate::head::Head;
use crate::inval::Inval;
use crate::pipe::ReqPipe;
use crate::store::PbStore;
use crate::warps::WarpTables;
use rust_hdl::core::prelude::*;
use sbrp_iface::FlushPolicy;

/// The SBRP persist buffer unit.
///
/// Const parameters: `W` warps, `WB = log2 W`, `IW = log2 entries`,
/// `LW = log2 lines`, `A` ACTR bits. `window` and `policy` are constants of
/// the instance ([`SbrpPb::new`]).
#[derive(LogicBlock)]
pub struct SbrpPb<const W: usize, const WB: usize, const IW: usize, const LW: usize, const A: usize>
{
    // ---- ports (spec §2, in the order of sbrp_iface::ports::PORTS) ----
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    pub req_valid: Signal<In, bool>,
    pub req_op: Signal<In, Bits<3>>,
    pub req_warp: Signal<In, Bits<6>>,
    pub req_line: Signal<In, Bits<LW>>,
    pub req_pbv: Signal<In, bool>,
    pub req_pbidx: Signal<In, Bits<IW>>,
    pub flush_ready: Signal<In, bool>,
    pub ack_count: Signal<In, Bits<3>>,
    pub ack_epoch: Signal<In, Bits<2>>,
    pub inv_done: Signal<In, bool>,
    pub drain_all: Signal<In, bool>,
    pub req_ready: Signal<Out, bool>,
    pub rsp_valid: Signal<Out, bool>,
    pub rsp_warp: Signal<Out, Bits<6>>,
    pub rsp_kind: Signal<Out, Bits<2>>,
    pub rsp_idx: Signal<Out, Bits<IW>>,
    pub flush_valid: Signal<Out, bool>,
    pub flush_line: Signal<Out, Bits<LW>>,
    pub flush_warps: Signal<Out, Bits<W>>,
    pub flush_evict: Signal<Out, bool>,
    pub flush_epoch: Signal<Out, Bits<2>>,
    pub inv_req: Signal<Out, bool>,
    pub stall: Signal<Out, Bits<W>>,
    pub idle: Signal<Out, bool>,
    pub error: Signal<Out, Bits<2>>,
    pub obs_odm: Signal<Out, Bits<W>>,
    pub obs_edm: Signal<Out, Bits<W>>,
    pub obs_fsm: Signal<Out, Bits<W>>,
    pub obs_actr: Signal<Out, Bits<A>>,
    pub obs_head: Signal<Out, Bits<IW>>,
    pub obs_tail: Signal<Out, Bits<IW>>,
    pub obs_full: Signal<Out, bool>,
    pub obs_drain: Signal<Out, bool>,
    pub obs_epoch: Signal<Out, Bits<2>>,

    // ---- constants of the instance (localparams) ----
    /// Flush window K.
    c_window: Constant<Bits<A>>,
    /// Policy is eager (flush whenever ordering allows).
    c_eager: Constant<bool>,
    /// Policy is lazy (flush only when forced).
    c_lazy: Constant<bool>,

    // ---- blocks ----
    /// `rst_q` (§7): `rst` registered; resets every other block.
    pub rst_reg: ResetReg,
    pub pipe: ReqPipe<WB, LW, IW>,
    pub decide: Decide<W, WB, IW, LW>,
    pub head_ctl: Head<W, IW, A>,
    pub store: PbStore<W, IW, LW>,
    pub pb_type: SyncMem<3, IW>,
    pub pb_line: SyncMem<LW, IW>,
    pub pb_warps: SyncMemMasked<W, IW>,
    pub warps: WarpTables<W, WB, IW>,
    pub epochs: Epochs<W, WB, A>,
    pub fifo: FlushFifo<W, LW>,
    pub inval: Inval<W>,
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
        SbrpPb {
            clock: Default::default(),
            rst: Default::default(),
            req_valid: Default::default(),
            req_op: Default::default(),
            req_warp: Default::default(),
            req_line: Default::default(),
            req_pbv: Default::default(),
            req_pbidx: Default::default(),
            flush_ready: Default::default(),
            ack_count: Default::default(),
            ack_epoch: Default::default(),
            inv_done: Default::default(),
            drain_all: Default::default(),
            req_ready: Default::default(),
            rsp_valid: Default::default(),
            rsp_warp: Default::default(),
            rsp_kind: Default::default(),
            rsp_idx: Default::default(),
            flush_valid: Default::default(),
            flush_line: Default::default(),
            flush_warps: Default::default(),
            flush_evict: Default::default(),
            flush_epoch: Default::default(),
            inv_req: Default::default(),
            stall: Default::default(),
            idle: Default::default(),
            error: Default::default(),
            obs_odm: Default::default(),
            obs_edm: Default::default(),
            obs_fsm: Default::default(),
            obs_actr: Default::default(),
            obs_head: Default::default(),
            obs_tail: Default::default(),
            obs_full: Default::default(),
            obs_drain: Default::default(),
            obs_epoch: Default::default(),
            c_window: Constant::new(Bits::from(u64::from(window))),
            c_eager: Constant::new(policy == FlushPolicy::Eager),
            c_lazy: Constant::new(policy == FlushPolicy::Lazy),
            rst_reg: Default::default(),
            pipe: Default::default(),
            decide: Default::default(),
            head_ctl: Default::default(),
            store: Default::default(),
            pb_type: Default::default(),
            pb_line: Default::default(),
            pb_warps: Default::default(),
            warps: Default::default(),
            epochs: Default::default(),
            fifo: Default::default(),
            inval: Default::default(),
        }
    }
}

impl<const W: usize, const WB: usize, const IW: usize, const LW: usize, const A: usize>
    SbrpPb<W, WB, IW, LW, A>
{
    /// The unit with register slices `s` at its boundary (§2.1): stages of
    /// the request pipeline (`pipe.rs`).
    pub fn with_slices(mut self, s: sbrp_iface::slices::Slices) -> Self {
        self.pipe._slices = s;
        self
    }
}

/// The wiring kernel's Verilog (the same text for every instance: widths are
/// in the declarations), built by one fixed instance so that only that one
/// compiles the AST builder; each assignment in its own `always @(*)`.
fn kernel_verilog() -> Verilog {
    SbrpPb::<4, 2, 4, 4, 4>::new(1, FlushPolicy::Window).own_kernel_verilog()
}

/// rust-hdl writes a kernel as one `always @(*)` block. The blocks of the
/// unit have combinational paths between them (head action -> decision ->
/// `head_final`), none of them a loop; one block around all the wiring would
/// make one to Verilator (UNOPTFLAT). Each statement of the wiring kernel
/// becomes its own `always @(*)`.
pub(crate) fn split_always(v: Verilog) -> Verilog {
    match v {
        Verilog::Combinatorial(block) => Verilog::Custom(
            block
                .into_iter()
                .map(|s| rust_hdl::core::verilog_gen::verilog_combinatorial(&vec![s]))
                .collect(),
        ),
        other => other,
    }
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
    /// The kernel's Verilog as this instance builds it, one `always` per
    /// assignment (its `Logic::hdl` returns the one of a fixed instance
    /// instead). For the test that checks that the two are equal; calling it
    /// compiles this instance's builder.
    #[doc(hidden)]
    pub fn own_kernel_verilog(&self) -> Verilog {
        // the inherent `hdl` generated by `#[hdl_gen]` from the kernel
        split_always(SbrpPb::<W, WB, IW, LW, A>::hdl(self))
    }

    #[hdl_gen]
    fn kernel(&mut self) {
        // ---- clocks and resets of the blocks: rst_q resets them (section 7) ----
        self.rst_reg.clock.next = self.clock.val();
        self.rst_reg.d.next = self.rst.val();
        self.pipe.clock.next = self.clock.val();
        self.head_ctl.clock.next = self.clock.val();
        self.store.clock.next = self.clock.val();
        self.pb_type.clock.next = self.clock.val();
        self.pb_line.clock.next = self.clock.val();
        self.pb_warps.clock.next = self.clock.val();
        self.warps.clock.next = self.clock.val();
        self.epochs.clock.next = self.clock.val();
        self.fifo.clock.next = self.clock.val();
        self.inval.clock.next = self.clock.val();
        self.pipe.rst.next = self.rst_reg.q.val();
        self.head_ctl.rst.next = self.rst_reg.q.val();
        self.store.rst.next = self.rst_reg.q.val();
        self.warps.rst.next = self.rst_reg.q.val();
        self.epochs.rst.next = self.rst_reg.q.val();
        self.fifo.rst.next = self.rst_reg.q.val();
        self.inval.rst.next = self.rst_reg.q.val();

        // ---- request pipeline (4.0): every input but flush_ready ----
        self.pipe.req_valid.next = self.req_valid.val();
        self.pipe.req_op.next = self.req_op.val();
        self.pipe.req_warp.next = self.req_warp.val();
        self.pipe.req_line.next = self.req_line.val();
        self.pipe.req_pbv.next = self.req_pbv.val();
        self.pipe.req_pbidx.next = self.req_pbidx.val();
        self.pipe.ack_count.next = self.ack_count.val();
        self.pipe.ack_epoch.next = self.ack_epoch.val();
        self.pipe.inv_done.next = self.inv_done.val();
        self.pipe.drain_all.next = self.drain_all.val();
        self.pipe.d_kind.next = self.decide.d_kind.val();
        self.pipe.d_idx.next = self.decide.d_idx.val();
        self.pipe.err_ack.next = self.epochs.ack_err.val();
        self.pipe.err_warp.next = self.decide.err_warp.val();

        // ---- memories: port 0 the head prefetch, port 1 entry k of r1 ----
        self.pb_type.ra0.next = self.store.pf.val();
        self.pb_line.ra0.next = self.store.pf.val();
        self.pb_warps.ra0.next = self.store.pf.val();
        self.pb_type.ra1.next = self.pipe.r1_pbidx.val();
        self.pb_line.ra1.next = self.pipe.r1_pbidx.val();
        self.pb_warps.ra1.next = self.pipe.r1_pbidx.val();
        self.pb_type.we.next = self.store.m_type_we.val();
        self.pb_type.wa.next = self.store.m_wa.val();
        self.pb_type.wd.next = self.store.m_type_wd.val();
        self.pb_line.we.next = self.store.m_line_we.val();
        self.pb_line.wa.next = self.store.m_wa.val();
        self.pb_line.wd.next = self.store.m_line_wd.val();
        self.pb_warps.we.next = self.store.m_warps_we.val();
        self.pb_warps.wa.next = self.store.m_wa.val();
        self.pb_warps.wd.next = self.store.m_warps_wd.val();
        self.pb_warps.wm.next = self.store.m_warps_wm.val();

        // ---- write queue, forwarding, head staging ----
        self.store.k1.next = self.pipe.r1_pbidx.val();
        self.store.empty.next = self.head_ctl.empty.val();
        self.store.one.next = self.head_ctl.one.val();
        self.store.two.next = self.head_ctl.two.val();
        self.store.eq_kh.next = self.head_ctl.eq_kh.val();
        self.store.eq_kh1.next = self.head_ctl.eq_kh1.val();
        self.store.eq_tk1.next = self.head_ctl.eq_tk1.val();
        self.store.eq_yk1.next = self.head_ctl.eq_yk1.val();
        self.store.eq_kk1.next = self.head_ctl.eq_kk1.val();
        self.store.wr_coal.next = self.decide.wr_coal.val();
        self.store.sp_type.next = self.decide.sp_type.val();
        self.store.sp_line.next = self.decide.sp_line.val();
        self.store.wr_at_tail.next = self.decide.wr_at_tail.val();
        self.store.wr_at_y.next = self.decide.wr_at_y.val();
        self.store.q_line.next = self.pipe.r2_line.val();
        self.store.r1_line.next = self.pipe.r1_line.val();
        self.store.fsm.next = self.epochs.fsm.val();
        self.store.ob.next = self.warps.ob.val();
        self.store.pop_pre.next = self.head_ctl.pop_pre.val();
        self.store.hf_pre.next = self.head_ctl.hf_pre.val();
        self.store.ep_room.next = self.epochs.ep_room.val();
        self.store.not_full.next = self.fifo.not_full.val();
        self.store.ev_pre.next = self.decide.ev_pre.val();
        self.store.fifo_has.next = self.fifo.has_line.val();
        self.store.wr_type_en.next = self.decide.wr_type_en.val();
        self.store.wr_line_en.next = self.decide.wr_line_en.val();
        self.store.wr_warps_en.next = self.decide.wr_warps_en.val();
        self.store.wr_addr.next = self.decide.wr_addr.val();
        self.store.wr_type.next = self.decide.wr_type.val();
        self.store.wr_line.next = self.decide.wr_line.val();
        self.store.wr_warps.next = self.decide.wr_warps.val();
        self.store.rda_type.next = self.pb_type.rd0.val();
        self.store.rda_line.next = self.pb_line.rd0.val();
        self.store.rda_warps.next = self.pb_warps.rd0.val();
        self.store.rdk_type.next = self.pb_type.rd1.val();
        self.store.rdk_line.next = self.pb_line.rd1.val();
        self.store.rdk_warps.next = self.pb_warps.rd1.val();

        // ---- head action (4.1) ----
        self.head_ctl.pol_ok.next = self.epochs.pol_ok.val();
        self.head_ctl.k.next = self.pipe.r2_pbidx.val();
        self.head_ctl.k1.next = self.pipe.r1_pbidx.val();
        self.head_ctl.h_type.next = self.store.h_type.val();
        self.head_ctl.h_warps.next = self.store.h_warps.val();
        self.head_ctl.h_ok.next = self.store.h_ok.val();
        self.store.fsm_wo.next = self.epochs.fsm_wo.val();
        self.store.fsm_rel.next = self.epochs.fsm_rel.val();
        self.store.fsm_join.next = self.epochs.fsm_join.val();
        // can_flush (section 3) and the head flush are made in each block
        // that needs them, from these registers (blocks::head_flush)
        self.head_ctl.ep_room.next = self.epochs.ep_room.val();
        self.head_ctl.not_full.next = self.fifo.not_full.val();
        self.head_ctl.drainq.next = self.pipe.drainq.val();
        self.head_ctl.actr_z_nx.next = self.epochs.actr_z_nx.val();
        self.head_ctl.inv_quiet_nx.next = self.inval.inv_quiet_nx.val();
        self.head_ctl.ev_pre.next = self.decide.ev_pre.val();
        self.head_ctl.k_ev.next = self.store.k_ev.val();
        self.head_ctl.fifo_has.next = self.fifo.has_line.val();
        self.head_ctl.hl_eq.next = self.store.hl_eq.val();
        self.head_ctl.push.next = self.decide.push.val();
        self.head_ctl.push_type.next = self.decide.push_type.val();
        self.head_ctl.tgt.next = self.decide.tgt.val();
        self.head_ctl.tgt_idx.next = self.decide.tgt_idx.val();
        self.head_ctl.tgt_k.next = self.decide.tgt_k.val();
        self.head_ctl.tgt_y.next = self.decide.oq_y.val();

        // ---- request decision (4.2) ----
        self.decide.r2_valid.next = self.pipe.r2_valid.val();
        self.decide.r2_op.next = self.pipe.r2_op.val();
        self.decide.r2_warp.next = self.pipe.r2_warp.val();
        self.decide.r2_line.next = self.pipe.r2_line.val();
        self.decide.r2_pbv.next = self.pipe.r2_pbv.val();
        self.decide.r2_pbidx.next = self.pipe.r2_pbidx.val();
        self.decide.lazy.next = self.c_lazy.val();
        self.decide.w_stall.next = self.warps.w_stall.val();
        self.decide.empty.next = self.head_ctl.empty.val();
        self.decide.one.next = self.head_ctl.one.val();
        self.decide.head.next = self.head_ctl.head.val();
        self.decide.tail.next = self.head_ctl.tail.val();
        self.decide.y.next = self.head_ctl.y.val();
        self.decide.full.next = self.head_ctl.full.val();
        self.decide.live_k.next = self.head_ctl.live_k.val();
        self.decide.last_type.next = self.head_ctl.last_type.val();
        self.decide.ep_room.next = self.epochs.ep_room.val();
        self.decide.not_full.next = self.fifo.not_full.val();
        self.decide.fifo_has.next = self.fifo.has_line.val();
        self.decide.hf_pre.next = self.head_ctl.hf_pre.val();
        self.decide.h_ok.next = self.store.h_ok.val();
        self.decide.h_line.next = self.store.h_line.val();
        self.decide.k_persist.next = self.store.k_persist.val();
        self.decide.k_leq.next = self.store.k_leq.val();
        self.decide.k_fsm.next = self.store.k_fsm.val();
        self.decide.k_older.next = self.store.k_older.val();
        self.decide.yq_valid.next = self.warps.yq_valid.val();
        self.decide.yq_idx.next = self.warps.yq_idx.val();
        self.decide.q_full.next = self.warps.q_full.val();

        // ---- per-warp tables ----
        self.warps.head.next = self.head_ctl.head.val();
        self.warps.q_warp.next = self.decide.warp_idx.val();
        self.warps.k.next = self.pipe.r2_pbidx.val();
        self.warps.retire.next = self.head_ctl.retire.val();
        self.warps.pop_pre.next = self.head_ctl.pop_pre.val();
        self.warps.hf_pre.next = self.head_ctl.hf_pre.val();
        self.warps.h_ok.next = self.store.h_ok.val();
        self.warps.ep_room.next = self.epochs.ep_room.val();
        self.warps.not_full.next = self.fifo.not_full.val();
        self.warps.ev_pre.next = self.decide.ev_pre.val();
        self.warps.k_ev.next = self.store.k_ev.val();
        self.warps.fifo_has.next = self.fifo.has_line.val();
        self.warps.hl_eq.next = self.store.hl_eq.val();
        self.warps.push.next = self.decide.oq_push.val();
        self.warps.push_idx.next = self.decide.oq_idx.val();
        self.warps.wait_set.next = self.decide.wait_set.val();
        self.warps.odm_set.next = self.decide.odm_set.val();
        self.warps.odm_clr.next = self.head_ctl.odm_clr.val();
        self.warps.sel_warp.next = self.pipe.r1_wsel.val();
        self.warps.odm_req.next = self.decide.odm_req.val();
        self.warps.ext_nx.next = self.inval.stall_nx.val();
        self.warps.edm_w.next = self.epochs.edm_w.val();
        self.epochs.sel_warp.next = self.pipe.r1_wsel.val();
        self.warps.k1.next = self.pipe.r1_pbidx.val();
        self.warps.tail.next = self.head_ctl.tail.val();
        self.warps.oq_y.next = self.decide.oq_y.val();

        // ---- epochs (4.3) ----
        self.epochs.hf_pre.next = self.head_ctl.hf_pre.val();
        self.epochs.h_ok.next = self.store.h_ok.val();
        self.epochs.not_full.next = self.fifo.not_full.val();
        self.epochs.ev_pre.next = self.decide.ev_pre.val();
        self.epochs.k_ev.next = self.store.k_ev.val();
        self.epochs.fifo_has.next = self.fifo.has_line.val();
        self.epochs.ack_count.next = self.pipe.ackq_count.val();
        self.epochs.ack_epoch.next = self.pipe.ackq_epoch.val();
        self.epochs.ord_join.next = self.head_ctl.retire.val();
        self.epochs.fsm_add.next = self.head_ctl.fsm_add.val();
        self.epochs.edm_add.next = self.head_ctl.edm_add.val();
        self.epochs.window.next = self.c_window.val();
        self.epochs.eager.next = self.c_eager.val();
        self.epochs.lazy.next = self.c_lazy.val();

        // ---- flush FIFO: the head drain or the eviction ----
        self.fifo.flush_ready.next = self.flush_ready.val();
        self.fifo.hf_pre.next = self.head_ctl.hf_pre.val();
        self.fifo.h_ok.next = self.store.h_ok.val();
        self.fifo.ep_room.next = self.epochs.ep_room.val();
        self.fifo.ev_pre.next = self.decide.ev_pre.val();
        self.fifo.k_ev.next = self.store.k_ev.val();
        self.fifo.hl_eq.next = self.store.hl_eq.val();
        self.fifo.head_line.next = self.store.h_line.val();
        self.fifo.head_warps.next = self.store.h_warps.val();
        self.fifo.ev_warps.next = self.store.k_warps.val();
        self.fifo.push_epoch.next = self.epochs.ep_cur.val();
        self.fifo.q_line.next = self.pipe.r2_line.val();
        self.fifo.r1_line.next = self.pipe.r1_line.val();

        // ---- invalidation ----
        self.inval.doneq.next = self.pipe.doneq.val();
        self.inval.inv_add.next = self.head_ctl.inv_add.val();

        // ---- outputs: registers, or an OR of a few ----
        // 0 in a reset cycle (section 7): no request is taken in it
        self.req_ready.next = self.pipe.req_ready.val() && !self.rst_reg.q.val();
        self.rsp_valid.next = self.pipe.rsp_valid.val();
        self.rsp_warp.next = self.pipe.rsp_warp.val();
        self.rsp_kind.next = self.pipe.rsp_kind.val();
        self.rsp_idx.next = self.pipe.rsp_idx.val();
        self.flush_valid.next = self.fifo.flush_valid.val();
        self.flush_line.next = self.fifo.flush_line.val();
        self.flush_warps.next = self.fifo.flush_warps.val();
        self.flush_evict.next = self.fifo.flush_evict.val();
        self.flush_epoch.next = self.fifo.flush_epoch.val();
        self.inv_req.next = self.inval.inv_req.val();
        self.stall.next = self.warps.odm.val()
            | self.warps.wait_ent.val()
            | self.epochs.edm.val()
            | self.inval.inv_cur.val()
            | self.inval.inv_next.val();
        self.idle.next = self.head_ctl.idle.val();
        self.error.next = self.pipe.error.val();
        self.obs_odm.next = self.warps.odm.val();
        self.obs_edm.next = self.warps.wait_ent.val() | self.epochs.edm.val();
        self.obs_fsm.next = self.epochs.fsm.val();
        self.obs_actr.next = self.epochs.actr.val();
        self.obs_head.next = self.head_ctl.head.val();
        self.obs_tail.next = self.head_ctl.tail.val();
        self.obs_full.next = self.head_ctl.full.val();
        self.obs_drain.next = self.head_ctl.drain_pend.val();
        self.obs_epoch.next = self.epochs.ep_cur.val();
    }
}
