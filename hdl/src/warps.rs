//! Per-warp tables (`docs/microarch.md` §3, §4.1, §4.2): the ordering queue
//! `oq_n[w]`, `oq[w][0..D-1]` (D = 2), the entry wait `wait_ent[w]`,
//! `wait_idx[w]`, and ODM.
//!
//! W x IW register files written by hand (a `Bits<{W*IW}>` is not possible
//! in stable Rust), stored in the Verilog as bit planes (plane j: bit j of
//! every warp's value, one W-bit register), so that each update and compare
//! is a W-bit vector expression for all warps at once (Verilator: a few word
//! operations instead of a per-warp `generate` block; synthesis: the same
//! per-warp logic). They expose narrow ports: the youngest entry of
//! the request's warp (coalescing check, open points 1-2), the OR over a
//! warp mask of "oldest ordering entry older than k" (eviction check, open
//! point 12), pop at retire, push, and the entry waits.
//!
//! The request's per-warp values (its stall bit, youngest ordering entry,
//! queue count) are selected one stage early: while the request is in `r1`
//! its warp is a register, so the W:1 selects read registers only, and this
//! cycle's updates of that warp (the pop at retire, the push, ODM, the entry
//! wait, the epoch and invalidation masks) are applied to the selected value
//! on its way into the `sel_*` registers. In the decision cycle they hold
//! the architectural values of §4.2 at the start of the cycle; no W:1 select
//! lies between the request's warp and the decision (§4.0: "this is the
//! RTL's business"). The eviction check is prepared the same way: `r1`'s
//! `k` is a register, so each warp's "oldest live ordering entry older than
//! k" is registered (`ob`) against the next cycle's queues and head; `store`
//! ANDs it with the warps of entry `k` and ORs the result (`k_older`).

use crate::blocks::{bv, ev_local, head_flush, mask, u, v_ev_local, v_older, V_HEAD_FLUSH};
use rust_hdl::core::prelude::*;

#[derive(Clone, Debug, Default)]
struct State {
    oq_n: Vec<u64>,
    oq0: Vec<u64>,
    oq1: Vec<u64>,
    wait_ent: u64,
    wait_idx: Vec<u64>,
    odm: u64,
    /// The next request's warp: stall bit, youngest entry, queue count.
    sel_stall: bool,
    sel_yq_valid: bool,
    sel_yq_idx: u64,
    sel_q_full: bool,
    /// Per warp: its oldest live ordering entry is older than `r1`'s k.
    ob: u64,
}

impl State {
    fn new(w: usize) -> State {
        State {
            oq_n: vec![0; w],
            oq0: vec![0; w],
            oq1: vec![0; w],
            wait_ent: 0,
            wait_idx: vec![0; w],
            odm: 0,
            sel_stall: false,
            sel_yq_valid: false,
            sel_yq_idx: 0,
            sel_q_full: false,
            ob: 0,
        }
    }
}

/// Ordering queues, entry waits and ODM of the W warps.
#[derive(Clone, Debug, LogicBlock)]
pub struct WarpTables<const W: usize, const WB: usize, const IW: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    pub head: Signal<In, Bits<IW>>,
    /// The request's warp (the low WB bits of `r2.warp`) and entry `k`.
    pub q_warp: Signal<In, Bits<WB>>,
    pub k: Signal<In, Bits<IW>>,
    /// An ordering entry retires at the head: warps whose oldest entry it is pop.
    pub retire: Signal<In, bool>,
    /// The head entry leaves (entry waits on it end): the head action's pop
    /// without (`pop_pre`) and with its flush (made here from `hf_pre`,
    /// `h_ok`, `ep_room`, `not_full`: [`crate::blocks::head_flush`]), which
    /// the request's eviction flush cancels, recomputed here from its parts
    /// ([`crate::blocks::ev_local`]).
    pub pop_pre: Signal<In, bool>,
    pub hf_pre: Signal<In, bool>,
    pub h_ok: Signal<In, bool>,
    pub ep_room: Signal<In, bool>,
    pub not_full: Signal<In, bool>,
    pub ev_pre: Signal<In, bool>,
    pub k_ev: Signal<In, bool>,
    pub fifo_has: Signal<In, bool>,
    pub hl_eq: Signal<In, bool>,
    /// Push `push_idx` on the request warp's queue.
    pub push: Signal<In, bool>,
    pub push_idx: Signal<In, Bits<IW>>,
    /// The request's warp waits in EDM for entry `k`.
    pub wait_set: Signal<In, bool>,
    pub odm_set: Signal<In, Bits<W>>,
    pub odm_clr: Signal<In, Bits<W>>,
    /// The warp of the request in `r1` (decided next cycle).
    pub sel_warp: Signal<In, Bits<WB>>,
    /// The request's warp enters ODM this cycle (`odm_set` as one bit).
    pub odm_req: Signal<In, bool>,
    /// Next-cycle invalidation masks, and the next-cycle EDM bit of
    /// `sel_warp` (epochs): the rest of `stall'`.
    pub ext_nx: Signal<In, Bits<W>>,
    pub edm_w: Signal<In, bool>,
    /// `r1`'s entry k (the eviction check's k next cycle), `tail`, and
    /// whether this cycle's push names `y = tail - 1` (else `tail`).
    pub k1: Signal<In, Bits<IW>>,
    pub tail: Signal<In, Bits<IW>>,
    pub oq_y: Signal<In, bool>,
    pub odm: Signal<Out, Bits<W>>,
    pub wait_ent: Signal<Out, Bits<W>>,
    /// The request's warp (`r2`), registered while it was in `r1`: its
    /// stall bit; it has a live ordering entry; the youngest; it has D.
    pub w_stall: Signal<Out, bool>,
    pub yq_valid: Signal<Out, bool>,
    pub yq_idx: Signal<Out, Bits<IW>>,
    pub q_full: Signal<Out, bool>,
    /// Per warp: its oldest live ordering entry is older than `k` (the
    /// eviction check ANDs it with the warps of entry `k`, in `store`).
    pub ob: Signal<Out, Bits<W>>,
    _s: State,
}

impl<const W: usize, const WB: usize, const IW: usize> Default for WarpTables<W, WB, IW> {
    fn default() -> Self {
        WarpTables {
            clock: Default::default(),
            rst: Default::default(),
            head: Default::default(),
            q_warp: Default::default(),
            k: Default::default(),
            retire: Default::default(),
            pop_pre: Default::default(),
            hf_pre: Default::default(),
            h_ok: Default::default(),
            ep_room: Default::default(),
            not_full: Default::default(),
            ev_pre: Default::default(),
            k_ev: Default::default(),
            fifo_has: Default::default(),
            hl_eq: Default::default(),
            push: Default::default(),
            push_idx: Default::default(),
            wait_set: Default::default(),
            odm_set: Default::default(),
            odm_clr: Default::default(),
            sel_warp: Default::default(),
            odm_req: Default::default(),
            ext_nx: Default::default(),
            edm_w: Default::default(),
            k1: Default::default(),
            tail: Default::default(),
            oq_y: Default::default(),
            odm: Default::default(),
            wait_ent: Default::default(),
            w_stall: Default::default(),
            yq_valid: Default::default(),
            yq_idx: Default::default(),
            q_full: Default::default(),
            ob: Default::default(),
            _s: State::new(W),
        }
    }
}

impl<const W: usize, const WB: usize, const IW: usize> WarpTables<W, WB, IW> {
    /// The head entry leaves this cycle (`head_final != NONE`).
    fn pop(&self) -> bool {
        let ha_flush = head_flush(
            self.hf_pre.val(),
            self.h_ok.val(),
            self.ep_room.val(),
            self.not_full.val(),
        );
        let ev = ev_local(
            self.ev_pre.val(),
            self.k_ev.val(),
            self.fifo_has.val(),
            ha_flush,
            self.hl_eq.val(),
        );
        self.pop_pre.val() || (ha_flush && !ev)
    }

    fn next_state(&self) -> State {
        if self.rst.val() {
            return State::new(W);
        }
        let mut s = self._s.clone();
        let head = u(&self.head);
        let w = u(&self.q_warp) as usize;
        self.select(&mut s);
        for i in 0..W {
            // 4.1: pop at retire (pop first, then the push of this cycle)
            if self.retire.val() && s.oq_n[i] != 0 && s.oq0[i] == head {
                s.oq0[i] = s.oq1[i];
                s.oq_n[i] -= 1;
            }
            if self.push.val() && i == w {
                if s.oq_n[i] == 0 {
                    s.oq0[i] = u(&self.push_idx);
                } else {
                    s.oq1[i] = u(&self.push_idx);
                }
                s.oq_n[i] += 1;
            }
            if self.pop() && s.wait_ent >> i & 1 == 1 && s.wait_idx[i] == head {
                s.wait_ent &= !(1 << i);
            }
            if self.wait_set.val() && i == w {
                s.wait_ent |= 1 << i;
                s.wait_idx[i] = u(&self.k);
            }
        }
        s.odm = (s.odm & !u(&self.odm_clr)) | u(&self.odm_set);
        // eviction check of r1's k against the queues and head of next cycle
        let im = mask(IW);
        let head_n = (head + u64::from(self.pop())) & im;
        let age_k = u(&self.k1).wrapping_sub(head_n) & im;
        s.ob = (0..W)
            .filter(|&i| s.oq_n[i] != 0 && (s.oq0[i].wrapping_sub(head_n) & im) < age_k)
            .fold(0, |a, i| a | 1 << i);
        s
    }

    /// The `sel_*` registers' next values: `r1`'s warp after this cycle's
    /// updates, computed from its start-of-cycle registers as the Verilog
    /// does (select first, then apply the pop, the push and the stall
    /// changes of this cycle). `s` holds the start-of-cycle state.
    fn select(&self, s: &mut State) {
        let head = u(&self.head);
        let w1 = u(&self.sel_warp) as usize;
        let same = w1 == u(&self.q_warp) as usize;
        let (n, q0, q1) = (s.oq_n[w1], s.oq0[w1], s.oq1[w1]);
        let popq = self.retire.val() && n != 0 && q0 == head;
        let n1 = n - u64::from(popq);
        let ya = if n1 == 2 || popq { q1 } else { q0 };
        let push = self.push.val() && same;
        let weq = s.wait_idx[w1] == head;
        let bit = |m: u64| m >> w1 & 1 == 1;
        let wait_ent = bit(s.wait_ent);
        let stay = (bit(s.odm) && !bit(u(&self.odm_clr)))
            || bit(u(&self.ext_nx))
            || self.edm_w.val()
            || (wait_ent && !weq);
        s.sel_stall = stay
            || (wait_ent && weq && !self.pop())
            || (same && (self.odm_req.val() || self.wait_set.val()));
        s.sel_yq_valid = push || n1 != 0;
        s.sel_yq_idx = if push { u(&self.push_idx) } else { ya };
        s.sel_q_full = n1 == 2 || (push && n1 == 1);
    }
}

impl<const W: usize, const WB: usize, const IW: usize> Logic for WarpTables<W, WB, IW> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._s = self.next_state();
        }
        let s = &self._s;
        self.odm.next = bv(s.odm);
        self.wait_ent.next = bv(s.wait_ent);
        self.w_stall.next = s.sel_stall;
        self.yq_valid.next = s.sel_yq_valid;
        self.yq_idx.next = bv(s.sel_yq_idx);
        self.q_full.next = s.sel_q_full;
        self.ob.next = bv(s.ob);
    }
    fn connect(&mut self) {
        self.odm.connect();
        self.wait_ent.connect();
        self.w_stall.connect();
        self.yq_valid.connect();
        self.yq_idx.connect();
        self.q_full.connect();
        self.ob.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(verilog(W, WB, IW))
    }
}

/// `{n}0 .. {n}{iw-1}`, each W bits: the bit planes of a per-warp value.
fn planes(n: &str, iw: usize) -> Vec<String> {
    (0..iw).map(|j| format!("{n}{j}")).collect()
}

/// Verilog of a per-warp compare of the value held in planes `x` with the
/// scalar whose bit j is broadcast in `c[j]`: `lt` names the W-bit mask
/// "x < c" (and `eq`, if given, "x == c"). A parallel-prefix tree over the
/// bits (log depth, as the adder tree Yosys gives an `<`), each node one
/// W-bit operation for all warps.
fn v_cmp(out: &mut String, x: &[String], c: &[String], lt: &str, eq: Option<&str>) {
    fn node(
        out: &mut String,
        x: &[String],
        c: &[String],
        lo: usize,
        hi: usize,
        eq: bool,
        p: &str,
    ) -> (String, Option<String>) {
        let (l, e) = (format!("{p}_l{lo}_{hi}"), format!("{p}_e{lo}_{hi}"));
        if lo == hi {
            out.push_str(&format!("wire [WM:0] {l} = ~{} & {};\n", x[lo], c[lo]));
            if eq {
                out.push_str(&format!("wire [WM:0] {e} = ~({} ^ {});\n", x[lo], c[lo]));
            }
        } else {
            let mid = (lo + hi) / 2;
            let (hl, he) = node(out, x, c, mid + 1, hi, true, p);
            let (ll, le) = node(out, x, c, lo, mid, eq, p);
            let he = he.expect("high half's equality");
            out.push_str(&format!("wire [WM:0] {l} = {hl} | ({he} & {ll});\n"));
            if eq {
                let le = le.expect("low half's equality");
                out.push_str(&format!("wire [WM:0] {e} = {he} & {le};\n"));
            }
        }
        (l, eq.then_some(e))
    }
    let (l, e) = node(out, x, c, 0, x.len() - 1, eq.is_some(), lt);
    out.push_str(&format!("wire [WM:0] {lt} = {l};\n"));
    if let (Some(eq), Some(e)) = (eq, e) {
        out.push_str(&format!("wire [WM:0] {eq} = {e};\n"));
    }
}

/// The block's Verilog. Per-warp values are stored as bit planes (plane j:
/// bit j of every warp, W bits), so every update and compare is a W-bit
/// vector expression: Verilator compiles each to a few word operations for
/// all warps (a per-warp `generate` costs one assembled bit and one
/// delayed-assignment flag per warp and signal), and synthesis sees the
/// same per-warp logic.
fn verilog(w: usize, wb: usize, iw: usize) -> String {
    let (q0, q1, wi) = (planes("q0_", iw), planes("q1_", iw), planes("wi_", iw));
    let (hb, kb) = (planes("hb_", iw), planes("kb_", iw));
    let mut v = String::new();
    let decl = |v: &mut String, ps: &[String]| {
        v.push_str(&format!("reg [WM:0] {};\n", ps.join(", ")));
    };
    v.push_str("// oq_n (two planes), oq0, oq1, wait_idx: bit planes, W bits each\n");
    v.push_str("reg [WM:0] n_lo, n_hi;\n");
    decl(&mut v, &q0);
    decl(&mut v, &q1);
    decl(&mut v, &wi);
    v.push_str(&format!(
        "\
wire [WBM:0] w = q_warp;
// the pop of this cycle, with the head flush and the request's eviction
// flush made here
wire ha_flush = {hf};
wire ev_l = {ev_l};
wire pop = pop_pre | (ha_flush & ~ev_l);
wire [WM:0] wsel = {{{{WM{{1'b0}}}}, 1'b1}} << w;
// ob[g]: warp g's oldest live ordering entry is older than r1's k at the
// start of next cycle, when r1's request is decided (eviction check, 4.2)
// against head' = head + pop: the entry at the old head becomes the
// youngest; compares use head, and the late pop only selects
wire hk = k1 == head;
wire [IM:0] yy = tail - {iw}'d1;
wire py0 = {py0};
wire pt0 = {pt0};
wire py1 = (yy != head) & (hk | py0);
wire pt1 = (tail != head) & (hk | pt0);
// the push of this cycle (y or tail), when it becomes the warp's oldest
wire pe0 = oq_y ? py0 : pt0;
wire pe1 = oq_y ? py1 : pt1;
// head, k1 (older compares) and k, push_idx (writes), bit j to all warps
",
        ev_l = v_ev_local("fifo_has"),
        hf = V_HEAD_FLUSH,
        py0 = v_older("yy", "k1", "head"),
        pt0 = v_older("tail", "k1", "head"),
    ));
    for j in 0..iw {
        v.push_str(&format!(
            "wire [WM:0] hb_{j} = {{W{{head[{j}]}}}};\n\
             wire [WM:0] kb_{j} = {{W{{k1[{j}]}}}};\n"
        ));
    }
    v.push_str(
        "\
// v_older(oq, k1, head) per warp: ((oq >= head) == (k1 >= head)) ? oq < k1 : oq >= head
wire hk_ge = k1 >= head;
",
    );
    v_cmp(&mut v, &q0, &hb, "q0_lth", Some("e0"));
    v_cmp(&mut v, &q0, &kb, "q0_ltk", None);
    v_cmp(&mut v, &q1, &hb, "q1_lth", None);
    v_cmp(&mut v, &q1, &kb, "q1_ltk", None);
    let weq: Vec<String> = (0..iw)
        .map(|j| format!("~({} ^ {})", wi[j], hb[j]))
        .collect();
    v.push_str(&format!(
        "\
wire [WM:0] c0 = hk_ge ? (~q0_lth & q0_ltk) : (~q0_lth | q0_ltk);
wire [WM:0] c1 = hk_ge ? (~q1_lth & q1_ltk) : (~q1_lth | q1_ltk);
// e0: the warp's oldest entry is the head entry; weq: its entry wait is on it
wire [WM:0] weq = {weq};
wire [WM:0] nz = n_lo | n_hi;
// 4.1: the retiring head entry is the warp's oldest
wire [WM:0] popq = {{W{{retire}}}} & nz & e0;
wire [WM:0] wset = {{W{{wait_set}}}} & wsel;
// the entry wait after this cycle, with and without the (late) pop
(* keep *) wire [WM:0] we_p = wset | (wait_ent & ~weq);
(* keep *) wire [WM:0] we_n = wset | wait_ent;
// stall' of each warp without the request's own ODM/wait and without the
// pop (late: an eviction flush cancels a head flush): kept, or ended by pop
wire [WM:0] st_keep = (odm & ~odm_clr) | ext_nx | (wait_ent & ~weq);
wire [WM:0] st_endp = wait_ent & weq;
wire [WM:0] push_g = {{W{{push}}}} & wsel;
// n1 = oq_n - popq, per warp on the two planes (borrow into n_hi)
wire [WM:0] n1_lo = n_lo ^ popq;
wire [WM:0] n1_hi = n_hi ^ (popq & ~n_lo);
wire [WM:0] n1_nz = n1_lo | n1_hi;
// the oldest after the pop (oq1 when popped: it is not the head entry)
wire [WM:0] b0 = popq & c1 | ~popq & c0;
wire [WM:0] b1 = popq & ({{W{{hk}}}} | c1) | ~popq & ~e0 & ({{W{{hk}}}} | c0);
wire [WM:0] push_first = push_g & ~n1_nz;
wire [WM:0] push_next = push_g & n1_nz;
// both outcomes of the (late) pop, kept as nets: the pop only selects
(* keep *) wire [WM:0] ob1 = push_first & {{W{{pe1}}}} | ~push_first & n1_nz & b1;
(* keep *) wire [WM:0] ob0 = push_first & {{W{{pe0}}}} | ~push_first & n1_nz & b0;
always @(posedge clock) begin
   if (rst) begin
      n_lo <= {{W{{1'b0}}}}; n_hi <= {{W{{1'b0}}}}; ob <= {{W{{1'b0}}}};
      wait_ent <= {{W{{1'b0}}}}; odm <= {{W{{1'b0}}}};
",
        weq = weq.join(" & "),
    ));
    for p in q0.iter().chain(&q1).chain(&wi) {
        v.push_str(&format!("      {p} <= {{W{{1'b0}}}};\n"));
    }
    v.push_str(
        "   end else begin
      // pop first, then push: n' = n1 + push_g (carry into n_hi)
      n_lo <= n1_lo ^ push_g;
      n_hi <= n1_hi ^ (n1_lo & push_g);
",
    );
    for j in 0..iw {
        let (a, b, c) = (&q0[j], &q1[j], &wi[j]);
        let pi = format!("{{W{{push_idx[{j}]}}}}");
        v.push_str(&format!(
            "      {a} <= push_first & {pi} | ~push_first & (popq & {b} | ~popq & {a});\n"
        ));
        v.push_str(&format!(
            "      {b} <= push_next & {pi} | ~push_next & {b};\n"
        ));
        v.push_str(&format!(
            "      {c} <= wset & {{W{{k[{j}]}}}} | ~wset & {c};\n"
        ));
    }
    let bit = |ps: &[String]| -> String {
        let b: Vec<String> = ps.iter().rev().map(|p| format!("{p}[w1]")).collect();
        format!("{{{}}}", b.join(", "))
    };
    v.push_str(&format!(
        "      ob <= pop ? ob1 : ob0;
      wait_ent <= pop ? we_p : we_n;
      odm <= (odm & ~odm_clr) | odm_set;
   end
end

// r1's warp, selected from registers one cycle before its decision; this
// cycle's updates of that warp are applied after the select (pop first,
// then push, as in the tables), so the registers hold its state at the
// start of the decision cycle
wire [WBM:0] w1 = sel_warp;
wire same = w1 == w;
wire [1:0] s_n = {{n_hi[w1], n_lo[w1]}};
wire [IM:0] s_q0 = {sq0};
wire [IM:0] s_q1 = {sq1};
// popq[w1] from the selected values: head reaches yq_idx through one
// compare, not through W compares and a W:1 select
wire s_pop = retire & (s_n != 2'd0) & (s_q0 == head);
wire [1:0] s_n1 = s_n - {{1'b0, s_pop}};
wire [IM:0] s_ya = ((s_n1 == 2'd2) | s_pop) ? s_q1 : s_q0;
wire s_push = push & same;
// its stall bit after this cycle, with and without the (late) pop
(* keep *) wire ws_p = st_keep[w1] | edm_w | (same & (odm_req | wait_set));
(* keep *) wire ws_n = ws_p | st_endp[w1];
always @(posedge clock) begin
   if (rst) begin
      w_stall <= 1'b0; yq_valid <= 1'b0; yq_idx <= {iw}'d0; q_full <= 1'b0;
   end else begin
      w_stall <= pop ? ws_p : ws_n;
      yq_valid <= s_push | (s_n1 != 2'd0);
      yq_idx <= s_push ? push_idx : s_ya;
      q_full <= (s_n1 == 2'd2) | (s_push & (s_n1 == 2'd1));
   end
end
",
        sq0 = bit(&q0),
        sq1 = bit(&q1),
    ));
    v.replace("WBM", &(wb - 1).to_string())
        .replace("WM", &(w - 1).to_string())
        .replace("IM", &(iw - 1).to_string())
        .replace("{W{", &format!("{{{w}{{"))
}
