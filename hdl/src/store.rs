//! Access to the PB memories `pb_type`, `pb_line`, `pb_warps`
//! (`docs/microarch.md` §3 "Memories", §4.0 "the RTL's synchronous reads lag
//! by up to two writes; it forwards them").
//!
//! * Writes: the decision's write of cycle `c` is registered (`wq1`) and
//!   lands in the memories at the end of `c+1`; `wq2` keeps it one more cycle
//!   for forwarding. No write address comes from read data.
//! * Request port (`rd1`): the read address is `r1.pbidx` (a register) while
//!   the request is in `r1`; the registered read data misses the writes of
//!   the two previous decisions (`wq2`, `wq1`), which are forwarded into it:
//!   `k_*` is the architectural entry `k` in the decision cycle.
//! * Head port (`rd0`): a 2-entry staging register holds the head entry
//!   (`st0`, which the head action reads) and the next one (`st1`), kept
//!   coherent with every write. The read address `pf` is a register equal to
//!   `head + 2`: after a pop, the read data (forwarded) is the new `st1`.
//!   A second register holds `pf + 1`, so that the pop (late: an eviction
//!   flush of the request cancels a head flush) only selects between two
//!   registers instead of entering an incrementer's carry chain.
//!
//! At most one memory read lies on any register-to-register path.

use crate::blocks::{bv, ev_local, head_flush, mask, u, v_ev_local, V_HEAD_FLUSH};
use rust_hdl::core::prelude::*;

/// One PB entry's words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Ent {
    ty: u64,
    line: u64,
    warps: u64,
}

/// One memory write: enables per memory, address, data, `pb_warps` mask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Wr {
    te: bool,
    le: bool,
    we: bool,
    addr: u64,
    ty: u64,
    line: u64,
    warps: u64,
    mask: u64,
}

impl Wr {
    /// `e` (the entry at `addr`) after this write.
    fn apply(&self, e: Ent, addr: u64) -> Ent {
        if self.addr != addr {
            return e;
        }
        Ent {
            ty: if self.te { self.ty } else { e.ty },
            line: if self.le { self.line } else { e.line },
            warps: if self.we {
                (e.warps & !self.mask) | (self.warps & self.mask)
            } else {
                e.warps
            },
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct State {
    wq1: Wr,
    wq2: Wr,
    st0: Ent,
    st1: Ent,
    popped: bool,
    pf: u64,
    /// `r2`'s k (`k1` of the previous cycle, as the request pipeline).
    k: u64,
    /// The head entry's line is `r2`'s (registered from `r1`'s).
    hl_eq: bool,
}

/// Memory write queue, forwarding and head staging.
#[derive(Clone, Debug, Default, LogicBlock)]
pub struct PbStore<const W: usize, const IW: usize, const LW: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    /// `k` of the request in `r1` (decided next cycle): the forwarding's
    /// address compares are made one cycle early.
    pub k1: Signal<In, Bits<IW>>,
    /// From [`crate::head::Head`]: the PB is empty, holds one, two entries;
    /// `r2`'s k is the head, head + 1; `k1` is `tail`, `tail - 1`, `k`.
    pub empty: Signal<In, bool>,
    pub one: Signal<In, bool>,
    pub two: Signal<In, bool>,
    pub eq_kh: Signal<In, bool>,
    pub eq_kh1: Signal<In, bool>,
    pub eq_tk1: Signal<In, bool>,
    pub eq_yk1: Signal<In, bool>,
    pub eq_kk1: Signal<In, bool>,
    /// The request's line (`r2.line`), the FSM and, per warp, "oldest live
    /// ordering entry older than k" (`warps`' `ob`): entry k's checks.
    pub q_line: Signal<In, Bits<LW>>,
    /// `r1`'s line: `hl_eq` is registered against it.
    pub r1_line: Signal<In, Bits<LW>>,
    pub fsm: Signal<In, Bits<W>>,
    pub ob: Signal<In, Bits<W>>,
    /// The head entry leaves this cycle: the head action's pop without
    /// (`pop_pre`) and with its flush (made here from `hf_pre`, this block's
    /// `h_ok`, `ep_room`, `not_full`: [`crate::blocks::head_flush`]), which
    /// the request's eviction flush cancels; that flush is recomputed here
    /// from its parts ([`crate::blocks::ev_local`]: `ev_pre`, `fifo_has`,
    /// and this block's `k_ev`, `hl_eq`), so that the pop is a net of this
    /// block.
    pub pop_pre: Signal<In, bool>,
    pub hf_pre: Signal<In, bool>,
    pub ep_room: Signal<In, bool>,
    pub not_full: Signal<In, bool>,
    pub ev_pre: Signal<In, bool>,
    pub fifo_has: Signal<In, bool>,
    // this cycle's write (from the decision)
    pub wr_type_en: Signal<In, bool>,
    pub wr_line_en: Signal<In, bool>,
    pub wr_warps_en: Signal<In, bool>,
    pub wr_addr: Signal<In, Bits<IW>>,
    /// `wr_addr` is `tail` (an allocation), `tail - 1` (an ordering op
    /// coalescing), else `k`: the compares with it are made on the three
    /// candidates, from registers, and the decision only selects.
    pub wr_at_tail: Signal<In, bool>,
    pub wr_at_y: Signal<In, bool>,
    /// The write is a coalescing (sets the warp's bit at `k` or `y`); an
    /// eviction's hole at `k`; an allocation's type and line (from the
    /// opcode, whether or not it allocates).
    pub wr_coal: Signal<In, bool>,
    pub sp_type: Signal<In, Bits<3>>,
    pub sp_line: Signal<In, Bits<LW>>,
    pub wr_type: Signal<In, Bits<3>>,
    pub wr_line: Signal<In, Bits<LW>>,
    /// The request warp's bit (`pb_warps`' write mask: all ones for an
    /// allocation, `wr_at_tail`, else this bit).
    pub wr_warps: Signal<In, Bits<W>>,
    // registered read data of the memories: port 0 (pf), port 1 (r1.pbidx)
    pub rda_type: Signal<In, Bits<3>>,
    pub rda_line: Signal<In, Bits<LW>>,
    pub rda_warps: Signal<In, Bits<W>>,
    pub rdk_type: Signal<In, Bits<3>>,
    pub rdk_line: Signal<In, Bits<LW>>,
    pub rdk_warps: Signal<In, Bits<W>>,
    /// Read address of port 0 (`head + 2`).
    pub pf: Signal<Out, Bits<IW>>,
    // the memories' write port (`wq1`)
    pub m_type_we: Signal<Out, bool>,
    pub m_line_we: Signal<Out, bool>,
    pub m_warps_we: Signal<Out, bool>,
    pub m_wa: Signal<Out, Bits<IW>>,
    pub m_type_wd: Signal<Out, Bits<3>>,
    pub m_line_wd: Signal<Out, Bits<LW>>,
    pub m_warps_wd: Signal<Out, Bits<W>>,
    pub m_warps_wm: Signal<Out, Bits<W>>,
    /// Entry `k`, architectural: it is a persist; of the request's line;
    /// its warps (the eviction flush's), of which one is in FSM, one has an
    /// older live ordering entry (§4.2 `older_ord`).
    pub k_persist: Signal<Out, bool>,
    pub k_leq: Signal<Out, bool>,
    pub k_warps: Signal<Out, Bits<W>>,
    pub k_fsm: Signal<Out, bool>,
    pub k_older: Signal<Out, bool>,
    /// Entry `k` may be flushed by an eviction: a persist of the line, none
    /// of its warps in FSM or with an older ordering entry.
    pub k_ev: Signal<Out, bool>,
    /// The head entry's line is the request's (`h_line == q_line`),
    /// registered while the request was in `r1`.
    pub hl_eq: Signal<Out, bool>,
    /// The head entry (`st0`).
    pub h_type: Signal<Out, Bits<3>>,
    pub h_line: Signal<Out, Bits<LW>>,
    pub h_warps: Signal<Out, Bits<W>>,
    /// The parts of the FSM masks after this cycle (from
    /// [`crate::epochs::Epochs`]: the masks but the oldest epoch's, the
    /// oldest is released, the retiring head entry's warps join), and the
    /// head entry is a persist none of whose warps is in FSM (`h_ok`: type
    /// 1 and `h_warps & fsm` 0): a register from the next-state values, so
    /// the head flush's checks of its entry are ready at the start of the
    /// cycle.
    pub fsm_wo: Signal<In, Bits<W>>,
    pub fsm_rel: Signal<In, bool>,
    pub fsm_join: Signal<In, bool>,
    pub h_ok: Signal<Out, bool>,
    _s: State,
}

impl<const W: usize, const IW: usize, const LW: usize> PbStore<W, IW, LW> {
    /// Read data made architectural: the two writes not yet in the memory.
    fn fwd(&self, e: Ent, addr: u64) -> Ent {
        let s = &self._s;
        s.wq1.apply(s.wq2.apply(e, addr), addr)
    }
    fn rda(&self) -> Ent {
        Ent {
            ty: u(&self.rda_type),
            line: u(&self.rda_line),
            warps: u(&self.rda_warps),
        }
    }
    fn rdk(&self) -> Ent {
        Ent {
            ty: u(&self.rdk_type),
            line: u(&self.rdk_line),
            warps: u(&self.rdk_warps),
        }
    }
    /// Entry `k`'s checks for the decision: (persist, of the line, warps,
    /// one in FSM, one with an older ordering entry).
    fn k_checks(&self) -> (bool, bool, u64, bool, bool) {
        let k = self.fwd(self.rdk(), self._s.k);
        (
            k.ty == u64::from(sbrp_iface::entry_type::PERSIST),
            k.line == u(&self.q_line),
            k.warps,
            k.warps & u(&self.fsm) != 0,
            k.warps & u(&self.ob) != 0,
        )
    }
    /// `h_ok`: the head entry is a persist, none of its warps in FSM.
    fn h_ok_now(&self) -> bool {
        let st0 = &self._s.st0;
        st0.ty == u64::from(sbrp_iface::entry_type::PERSIST) && st0.warps & u(&self.fsm) == 0
    }
    /// (`k_ev`, `hl_eq`)
    fn ev_parts(&self) -> (bool, bool) {
        let (persist, leq, _, fsm, older) = self.k_checks();
        (persist && leq && !fsm && !older, self._s.hl_eq)
    }
    fn next_state(&self) -> State {
        if self.rst.val() {
            return State {
                pf: 2,
                ..State::default()
            };
        }
        let s = &self._s;
        let im = mask(IW);
        // pf is head + 2 (the head pointer itself is not an input)
        let head = s.pf.wrapping_sub(2) & im;
        let h1 = (head + 1) & im;
        let st1_eff = if s.popped {
            self.fwd(self.rda(), h1)
        } else {
            s.st1
        };
        let w = Wr {
            te: self.wr_type_en.val(),
            le: self.wr_line_en.val(),
            we: self.wr_warps_en.val(),
            addr: u(&self.wr_addr),
            ty: u(&self.wr_type),
            line: u(&self.wr_line),
            warps: u(&self.wr_warps),
            mask: if self.wr_at_tail.val() {
                mask(W)
            } else {
                u(&self.wr_warps)
            },
        };
        let (k_ev, hl_eq) = self.ev_parts();
        let ha_flush = head_flush(
            self.hf_pre.val(),
            self.h_ok_now(),
            self.ep_room.val(),
            self.not_full.val(),
        );
        let ev = ev_local(
            self.ev_pre.val(),
            k_ev,
            self.fifo_has.val(),
            ha_flush,
            hl_eq,
        );
        let pop = self.pop_pre.val() || (ha_flush && !ev);
        let st0 = if pop {
            w.apply(st1_eff, h1)
        } else {
            w.apply(s.st0, head)
        };
        State {
            wq1: w,
            wq2: s.wq1,
            st0,
            st1: w.apply(st1_eff, h1),
            popped: pop,
            pf: (s.pf + u64::from(pop)) & im,
            k: u(&self.k1),
            hl_eq: st0.line == u(&self.r1_line),
        }
    }
}

impl<const W: usize, const IW: usize, const LW: usize> Logic for PbStore<W, IW, LW> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._s = self.next_state();
        }
        let s = self._s;
        let (persist, leq, warps, fsm, older) = self.k_checks();
        let (k_ev, hl_eq) = self.ev_parts();
        self.pf.next = bv(s.pf);
        self.m_type_we.next = s.wq1.te;
        self.m_line_we.next = s.wq1.le;
        self.m_warps_we.next = s.wq1.we;
        self.m_wa.next = bv(s.wq1.addr);
        self.m_type_wd.next = bv(s.wq1.ty);
        self.m_line_wd.next = bv(s.wq1.line);
        self.m_warps_wd.next = bv(s.wq1.warps);
        self.m_warps_wm.next = bv(s.wq1.mask);
        self.k_persist.next = persist;
        self.k_leq.next = leq;
        self.k_warps.next = bv(warps);
        self.k_fsm.next = fsm;
        self.k_older.next = older;
        self.k_ev.next = k_ev;
        self.hl_eq.next = hl_eq;
        self.h_type.next = bv(s.st0.ty);
        self.h_line.next = bv(s.st0.line);
        self.h_warps.next = bv(s.st0.warps);
        self.h_ok.next = self.h_ok_now();
    }
    fn connect(&mut self) {
        self.pf.connect();
        self.m_type_we.connect();
        self.m_line_we.connect();
        self.m_warps_we.connect();
        self.m_wa.connect();
        self.m_type_wd.connect();
        self.m_line_wd.connect();
        self.m_warps_wd.connect();
        self.m_warps_wm.connect();
        self.k_persist.connect();
        self.k_leq.connect();
        self.k_warps.connect();
        self.k_fsm.connect();
        self.k_older.connect();
        self.k_ev.connect();
        self.hl_eq.connect();
        self.h_type.connect();
        self.h_line.connect();
        self.h_warps.connect();
        self.h_ok.connect();
    }
    fn hdl(&self) -> Verilog {
        // `fwd(P, A)`: read data P at address A with wq2, then wq1, applied.
        let fwd = |p: &str, m2: &str, m1: &str| {
            format!(
                "\
wire m2_{p} = {m2};
wire m1_{p} = {m1};
wire [2:0] {p}_t2 = (m2_te & m2_{p}) ? m2_type : rd{p}_type;
wire [{lm}:0] {p}_l2 = (m2_le & m2_{p}) ? m2_line : rd{p}_line;
wire [{wm}:0] {p}_w2 = (m2_we & m2_{p}) ? ((rd{p}_warps & ~m2_mask) | (m2_warps & m2_mask)) : rd{p}_warps;
wire [2:0] {p}_t = (m_type_we & m1_{p}) ? m_type_wd : {p}_t2;
wire [{lm}:0] {p}_l = (m_line_we & m1_{p}) ? m_line_wd : {p}_l2;
wire [{wm}:0] {p}_w = (m_warps_we & m1_{p}) ? ((({p}_w2 & ~m_warps_wm) | (m_warps_wd & m_warps_wm))) : {p}_w2;
",
                lm = LW - 1,
                wm = W - 1,
            )
        };
        let mut v = format!(
            "\
// wq2: the write before wq1 (the memories' write port is wq1, the outputs m_*)
reg m2_te, m2_le, m2_we;
reg [{im}:0] m2_addr;
reg [2:0] m2_type;
reg [{lm}:0] m2_line;
reg [{wm}:0] m2_warps, m2_mask;
// head staging: st0 = entry head (the outputs h_*), st1 = entry head+1
reg [2:0] st1_t;
reg [{lm}:0] st1_l;
reg [{wm}:0] st1_w;
reg popped;
reg [{im}:0] pf1;
// head + 1 is a register too: after a pop it is the old pf (head + 2)
reg [{im}:0] h1;
(* keep *) wire [{im}:0] pf2 = pf + {iw}'d2;
// entry k's forwarding next cycle: k1 against this cycle's write (wq2
// then) and the decision's write (wq1 then), compared from registers
reg mk1, mk2;
// the write was an allocation (whole word), for wq1 and wq2
reg m1_full, m2_full;
wire mk1_n = wr_at_tail ? eq_tk1 : wr_at_y ? eq_yk1 : eq_kk1;
wire [2:0] st0_t = h_type;
wire [{lm}:0] st0_l = h_line;
wire [{wm}:0] st0_w = h_warps;
",
            im = IW - 1,
            iw = IW,
            lm = LW - 1,
            wm = W - 1,
        );
        // entry k: port 1 forwarded. Each check of the decision is made on
        // the read data and on the two writes in parallel, then selected by
        // the registered address matches: no compare or word select lies
        // before the checks. A pb_warps write is either an allocation (the
        // whole word becomes bit(w)) or a coalescing (bit(w) is set).
        v.push_str(&format!(
            "\
wire h1t = m_type_we & mk1;
wire h2t = m2_te & mk2;
wire h1l = m_line_we & mk1;
wire h2l = m2_le & mk2;
wire kf1 = m_warps_we & mk1;
wire kf2 = m2_we & mk2 & ~(kf1 & m1_full);
wire kfb = ~(m2_we & mk2 & m2_full) & ~(kf1 & m1_full);
// each check is made on the three sources and selected by AND-OR: a `?:`
// of compares is turned by synthesis (opt_share) into a compare of the
// selected word, behind the select
wire kl0 = rdk_line == q_line;
wire kl1 = m_line_wd == q_line;
wire kl2 = m2_line == q_line;
wire s1t = h1t;
wire s2t = ~h1t & h2t;
wire s0t = ~h1t & ~h2t;
wire s1l = h1l;
wire s2l = ~h1l & h2l;
wire s0l = ~h1l & ~h2l;
(* keep *) wire kf0_fsm = |(rdk_warps & fsm);
(* keep *) wire kf1_fsm = |(m_warps_wd & fsm);
(* keep *) wire kf2_fsm = |(m2_warps & fsm);
(* keep *) wire kf0_ob = |(rdk_warps & ob);
(* keep *) wire kf1_ob = |(m_warps_wd & ob);
(* keep *) wire kf2_ob = |(m2_warps & ob);
always @(*) k_persist = (s1t & (m_type_wd == 3'd1)) | (s2t & (m2_type == 3'd1)) | (s0t & (rdk_type == 3'd1));
always @(*) k_leq = (s1l & kl1) | (s2l & kl2) | (s0l & kl0);
always @(*) k_warps = ({{{w}{{kfb}}}} & rdk_warps) | ({{{w}{{kf2}}}} & m2_warps) | ({{{w}{{kf1}}}} & m_warps_wd);
always @(*) k_fsm = (kfb & kf0_fsm) | (kf2 & kf2_fsm) | (kf1 & kf1_fsm);
always @(*) k_older = (kfb & kf0_ob) | (kf2 & kf2_ob) | (kf1 & kf1_ob);
always @(*) k_ev = k_persist & k_leq & ~k_older & ~k_fsm;
// the pop of this cycle, with the head flush and the request's eviction
// flush made here
wire ha_flush = {hf};
wire ev_l = {ev_l};
wire pop = pop_pre | (ha_flush & ~ev_l);
",
            w = W,
            hf = V_HEAD_FLUSH,
            ev_l = v_ev_local("fifo_has"),
        ));
        // entry head+1 after a pop: port 0 forwarded
        v.push_str(&fwd("a", "m2_addr == h1", "m_wa == h1"));
        v.push_str(&format!(
            "\
wire [2:0] s1_t = popped ? a_t : st1_t;
wire [{lm}:0] s1_l = popped ? a_l : st1_l;
wire [{wm}:0] s1_w = popped ? a_w : st1_w;
",
            lm = LW - 1,
            wm = W - 1,
        ));
        // Staging coherent with this cycle's write. An allocation at tail
        // lands in st0 when the PB is empty and in st1 when it holds one
        // entry; those slots are not live then (nothing reads them), so they
        // take the allocation's data whether or not it happens. Only the bit
        // set of a coalescing (at k or y) and the hole of an eviction (at k)
        // depend on the decision, and only as the last gates.
        v.push_str(&format!(
            "\
wire ch0 = wr_coal & (wr_at_y ? one : eq_kh);
wire ch1 = wr_coal & (wr_at_y ? two : eq_kh1);
// the staging's next values for both outcomes of the (late) pop are kept
// as nets, so that synthesis leaves the pop a final select
(* keep *) wire [2:0] n0_t = (ev_l & eq_kh) ? 3'd0 : empty ? sp_type : st0_t;
(* keep *) wire [{lm}:0] n0_l = empty ? sp_line : st0_l;
(* keep *) wire [{wm}:0] n0_w = (empty ? wr_warps : st0_w) | ({{{w}{{ch0}}}} & wr_warps);
(* keep *) wire [2:0] n1_t = (ev_l & eq_kh1) ? 3'd0 : one ? sp_type : s1_t;
(* keep *) wire [{lm}:0] n1_l = one ? sp_line : s1_l;
(* keep *) wire [{wm}:0] n1_w = (one ? wr_warps : s1_w) | ({{{w}{{ch1}}}} & wr_warps);
// hl_eq (the busy check's head term, 4.2) for r1's request, decided next
// cycle: the next head line against r1's line, for both outcomes of the pop
// (AND-OR select: see the checks of k)
wire hq0 = n0_l == r1_line;
wire hq1 = n1_l == r1_line;
// h_ok: the next head entry is a persist and its warps are not in the next
// FSM masks, for both outcomes of the pop; a coalescing's bit (late) only
// ORs in the warp's FSM bit. The
// next masks are `fsm` (less the oldest epoch's when released) plus the
// retiring head entry's warps when they join: each word is checked against
// the three registers, and the release and join bits only select.
{hf}wire hf0_n = hf0 | (ch0 & hfw);
wire hf1_n = hf1 | (ch1 & hfw);
// (after a pop, without)
wire [1:0] hok = {{n1_t == 3'd1, n0_t == 3'd1}} & ~{{hf1_n, hf0_n}};
",
            lm = LW - 1,
            wm = W - 1,
            w = W,
            hf = [
                ("hf0", "(empty ? wr_warps : st0_w)"),
                ("hf1", "(one ? wr_warps : s1_w)"),
                ("hfw", "wr_warps"),
            ]
            .iter()
            .map(|(n, x)| format!(
                "\
(* keep *) wire {n}_a = |({x} & fsm);
(* keep *) wire {n}_o = |({x} & fsm_wo);
(* keep *) wire {n}_j = |({x} & st0_w);
wire {n} = (fsm_rel & {n}_o) | (~fsm_rel & {n}_a) | (fsm_join & {n}_j);
"
            ))
            .collect::<String>(),
        ));
        v.push_str(&format!(
            "\
always @(posedge clock) begin
   if (rst) begin
      m_type_we <= 1'b0; m_line_we <= 1'b0; m_warps_we <= 1'b0; m_wa <= {iw}'d0;
      m_type_wd <= 3'd0; m_line_wd <= {lw}'d0; m_warps_wd <= {w}'d0; m_warps_wm <= {w}'d0;
      m2_te <= 1'b0; m2_le <= 1'b0; m2_we <= 1'b0; m2_addr <= {iw}'d0;
      m2_type <= 3'd0; m2_line <= {lw}'d0; m2_warps <= {w}'d0; m2_mask <= {w}'d0;
      h_type <= 3'd0; h_line <= {lw}'d0; h_warps <= {w}'d0;
      st1_t <= 3'd0; st1_l <= {lw}'d0; st1_w <= {w}'d0;
      popped <= 1'b0; pf <= {iw}'d2; pf1 <= {iw}'d3; h1 <= {iw}'d1; mk1 <= 1'b0; mk2 <= 1'b0;
      hl_eq <= 1'b0; h_ok <= 1'b0;
      m1_full <= 1'b0; m2_full <= 1'b0;
   end else begin
      mk1 <= mk1_n; mk2 <= m_wa == k1; m1_full <= wr_at_tail; m2_full <= m1_full;
      // the decision's write: to the memories next cycle
      m_type_we <= wr_type_en; m_line_we <= wr_line_en; m_warps_we <= wr_warps_en;
      m_wa <= wr_addr; m_type_wd <= wr_type; m_line_wd <= wr_line;
      m_warps_wd <= wr_warps; m_warps_wm <= wr_at_tail ? {{{w}{{1'b1}}}} : wr_warps;
      m2_te <= m_type_we; m2_le <= m_line_we; m2_we <= m_warps_we; m2_addr <= m_wa;
      m2_type <= m_type_wd; m2_line <= m_line_wd; m2_warps <= m_warps_wd; m2_mask <= m_warps_wm;
      // staging, coherent with this cycle's write
      if (pop) begin
         h_type <= n1_t; h_line <= n1_l; h_warps <= n1_w;
      end else begin
         h_type <= n0_t; h_line <= n0_l; h_warps <= n0_w;
      end
      st1_t <= n1_t; st1_l <= n1_l; st1_w <= n1_w;
      popped <= pop;
      hl_eq <= (pop & hq1) | (~pop & hq0);
      h_ok <= (pop & hok[1]) | (~pop & hok[0]);
      if (pop) begin
         h1 <= pf;
         pf <= pf1;
         pf1 <= pf2;
      end
   end
end
",
            iw = IW,
            lw = LW,
            w = W,
        ));
        Verilog::Custom(v)
    }
}
