// Formal environment of the v2 persist buffer unit (docs/microarch.md): the
// generated `sbrp_pb` with free inputs, constrained only by the interface
// requirements of spec §2 (assumptions: 1, 5, 6, 8 always, 2 where a
// property needs it, else hooks are free; 9, a warp >= W, is left free: the
// unit's answer to it is proved), and monitors with ghost state on its
// ports (assertions). Nothing inside the unit is read (but by the INV_*
// invariants), so the proofs hold for any implementation of the port contract. Used by `sbrp prove`
// (silicon/src/prove.rs), one property group per run, chosen by defines:
//
//   environment            ENV_HOOKS_EXACT  hooks follow the responses (else free)
//                          ENV_FAIR         acks within LACK, flush_ready every R
//                                           cycles, inv_done within LINV, no reset
//                          ENV_DRAIN        drain_all held from the first cycle,
//                                           no new requests (with ENV_FAIR)
//                          ENV_ACK_FREE     acks unconstrained (broken environment)
//   properties             CHECK_ACTR CHECK_HANDSHAKE CHECK_LOST CHECK_PMO
//                          CHECK_DURABLE CHECK_COALESCE CHECK_RELEASE CHECK_DRAIN
//                          CHECK_XBLOCK
//   cover statements       COVER_*
//   invariants             INV_ACTR  strengthening invariants of CHECK_ACTR over
//                                    the unit's registers (k-induction, `sbrp
//                                    prove --unbounded`); x_* wires bound by
//                                    constraints/formal/inv_actr.ys
//                          INV_LOST  strengthening invariants of CHECK_LOST (with
//                                    INV_ACTR): the PB's memories (each word with
//                                    the pending write applied), pointers, head
//                                    staging, read data and forwarding registers
//                                    of the store stage and the request pipeline
//                                    consistent; a store's response names a live
//                                    persist entry of its line; a pending store of
//                                    wl has a live persist entry of wl or a queued
//                                    flush of wl. x_* wires bound by
//                                    constraints/formal/inv_lost.ys (memory words
//                                    per size by `sbrp prove`); proved at k = 2
//                          INV_MON   the monitors' ghost state consistent with
//                                    itself (with INV_ACTR)
//                          INV_COAL  the per-warp ordering queues sound and
//                                    complete, the request's selected queue
//                                    registers, the coalescing monitor (with
//                                    INV_ACTR, INV_MON, INV_LOST; inv_coal.ys);
//                                    coalesce proved at k = 2
//                          INV_DUR   the witness warp's stalling entry and ODM,
//                                    the witness flush's place and epoch, the
//                                    warp's EDM epoch, dead epochs empty (with
//                                    INV_ACTR, INV_MON, INV_LOST; inv_dur.ys);
//                                    durable proved at k = 2
//
// All checks of a run are ANDed into one assertion `ok` (one AIGER property).
module sbrp_pb_formal #(
    parameter N = 16, parameter IW = 4, parameter W = 4, parameter L = 16, parameter LW = 4,
    parameter A = 8,
    parameter LACK = 3,   // fair environment: a taken flush is acked within LACK cycles
    parameter R = 2,      // fair environment: flush_ready at least every R cycles
    parameter LINV = 2,   // fair environment: inv_done within LINV cycles of inv_req
    parameter B = 16,     // release bound (CHECK_RELEASE)
    parameter HM = 16,    // drain: the head stands still at most HM cycles (CHECK_DRAIN)
    parameter HI = 16,    // drain: idle at most HI cycles after the PB is empty
    parameter BD = 340    // drain: idle within BD cycles of drain_all (follows from HM, HI)
) (
    input clock,
    input rst,
    input req_valid, input [2:0] req_op, input [5:0] req_warp, input [LW-1:0] req_line,
    input req_pbv, input [IW-1:0] req_pbidx,
    input flush_ready, input [2:0] ack_count, input [1:0] ack_epoch, input inv_done,
    input drain_all,
    // witness choices: held from the first cycle (pick_*) or free each cycle (choose_*)
    input [LW-1:0] pick_line, input [5:0] pick_warp, input [5:0] pick_warp2,
    input choose_s1, input choose_o, input choose_s2, input choose_ack, input [7:0] choose_acks,
    input choose_q
);
    wire req_ready, rsp_valid, flush_valid, flush_evict, inv_req, idle, obs_full, obs_drain;
    wire [5:0] rsp_warp;
    wire [1:0] rsp_kind, flush_epoch, error, obs_epoch;
    wire [IW-1:0] rsp_idx, obs_head, obs_tail;
    wire [LW-1:0] flush_line;
    wire [W-1:0] flush_warps, stall, obs_odm, obs_edm, obs_fsm;
    wire [A-1:0] obs_actr;

    sbrp_pb dut (
        .clock(clock), .rst(rst), .req_valid(req_valid), .req_op(req_op), .req_warp(req_warp),
        .req_line(req_line), .req_pbv(req_pbv), .req_pbidx(req_pbidx), .flush_ready(flush_ready),
        .ack_count(ack_count), .ack_epoch(ack_epoch), .inv_done(inv_done), .drain_all(drain_all),
        .req_ready(req_ready), .rsp_valid(rsp_valid), .rsp_warp(rsp_warp), .rsp_kind(rsp_kind),
        .rsp_idx(rsp_idx), .flush_valid(flush_valid), .flush_line(flush_line),
        .flush_warps(flush_warps), .flush_evict(flush_evict), .flush_epoch(flush_epoch),
        .inv_req(inv_req), .stall(stall), .idle(idle), .error(error), .obs_odm(obs_odm),
        .obs_edm(obs_edm), .obs_fsm(obs_fsm), .obs_actr(obs_actr), .obs_head(obs_head),
        .obs_tail(obs_tail), .obs_full(obs_full), .obs_drain(obs_drain), .obs_epoch(obs_epoch)
    );

    // ---- common ghost state -------------------------------------------------
    reg started = 1'b0;           // rst is high in the first cycle
    always @(posedge clock) started <= 1'b1;
    always @* if (!started) assume (rst);
    // Spec section 7: rst is registered; the cycle after a cycle with rst is
    // the reset cycle, at whose end the unit's state is 0. The ghost state
    // below is cleared at the same edge (rst_cyc); the cycle with rst itself
    // is an ordinary cycle but for taking no request.
    reg rst_cyc = 1'b0, rst_cyc_p = 1'b0;
    always @(posedge clock) begin
        rst_cyc <= rst || !started;
        rst_cyc_p <= rst_cyc;
    end
    // The unit powers up unknown: its state is defined from the cycle after
    // the first reset cycle (cycle 2); the checks and covers start there.
    reg settled = 1'b0;
    always @(posedge clock) settled <= started;

    reg [LW-1:0] wl;              // witness line and warp, chosen once
    reg [5:0] ww;
    always @(posedge clock) if (!started) begin wl <= pick_line; ww <= pick_warp; end
    always @* if (started) assume (ww < W);

    wire taken = req_valid && req_ready && !rst;
    wire flush_taken = flush_valid && flush_ready;
    wire names_line = (req_op == 3'd0) || (req_op == 3'd7);
    localparam [1:0] PERFORMED = 2'd0, COALESCED = 2'd1, REPLAY = 2'd2, WAIT = 2'd3;

    // Requests taken 1, 2, 3 cycles ago: {op, warp, line}; sv valid bits.
    reg [3:1] sv;
    reg [2:0] sop [1:3];
    reg [5:0] sw [1:3];
    reg [LW-1:0] sl [1:3];
    always @(posedge clock) begin
        sv <= rst_cyc ? 3'b0 : {sv[2:1], taken};
        sop[1] <= req_op; sw[1] <= req_warp; sl[1] <= req_line;
        sop[2] <= sop[1]; sw[2] <= sw[1]; sl[2] <= sl[1];
        sop[3] <= sop[2]; sw[3] <= sw[2]; sl[3] <= sl[2];
    end
    // The response now belongs to the request taken three cycles ago.
    wire rsp_ok = rsp_valid && (rsp_kind == PERFORMED || rsp_kind == COALESCED);
    wire [2:0] rop = sop[3];
    wire [LW-1:0] rline = sl[3];
    wire rsp_store = rsp_ok && rop == 3'd0;
    wire rsp_evict = rsp_ok && rop == 3'd7;
    wire rsp_order = rsp_ok && rop != 3'd0 && rop != 3'd7;
    wire pb_empty = obs_head == obs_tail && !obs_full;

    // ---- environment: interface requirements of spec §2 ----------------------
    // 1. One request per line in flight (taken 1..3 cycles ago, response not yet seen).
    integer s;
    always @* if (started && req_valid && names_line)
        for (s = 1; s <= 3; s = s + 1)
            if (sv[s] && (sop[s] == 3'd0 || sop[s] == 3'd7)) assume (sl[s] != req_line);

    // 6. One request per warp in flight: no request of a warp whose request
    // was taken 1..3 cycles ago (its response not yet seen).
    always @* if (started && req_valid)
        for (s = 1; s <= 3; s = s + 1)
            if (sv[s]) assume (sw[s] != req_warp);

    // 2. Hooks follow the responses (ENV_HOOKS_EXACT), else they are free.
`ifdef ENV_HOOKS_EXACT
    reg [L-1:0] hv;
    reg [IW-1:0] hi [0:L-1];
    always @(posedge clock) begin
        if (rst_cyc) hv <= 0;
        else if (rsp_store) begin hv[rline] <= 1'b1; hi[rline] <= rsp_idx; end
        else if (rsp_evict) hv[rline] <= 1'b0;
    end
    always @* if (started && req_valid && names_line)
        assume (req_pbv == hv[req_line] && (!req_pbv || req_pbidx == hi[req_line]));
`endif

    // 5. inv_done only while inv_req, once per invalidation.
    reg done_seen;
    always @(posedge clock) done_seen <= !rst_cyc && inv_req && (done_seen || inv_done);
    always @* if (started && inv_done) assume (inv_req && !done_seen);

    // Acks: flushes taken and not yet acknowledged, per epoch (un), and the
    // acks the unit has registered but not yet applied (aq, spec §4.0).
    reg [A-1:0] un [0:3];
    reg [2:0] aq;
    integer e;
    // The witness flush wf (PMO, durability): its epoch and whether it is
    // taken and not yet acknowledged; choose_ack says it is among the acked.
    reg wf_out;
    reg [1:0] wf_ep;
    wire wf_acked_now;
    // u01, u23: un[0] + un[1] and un[2] + un[3], counted on their own (the
    // INV_ACTR invariants tie them to un; ACTR is tied to them, not to a
    // four-way sum, which a SAT solver re-associates only slowly)
    reg [A:0] u01, u23;
    always @(posedge clock) begin
        for (e = 0; e < 4; e = e + 1)
            un[e] <= rst_cyc ? 0 : un[e] + (flush_taken && flush_epoch == e)
                               - (ack_epoch == e ? ack_count : 3'd0);
        aq <= rst_cyc ? 3'd0 : ack_count;
        u01 <= rst_cyc ? 0 : u01 + (flush_taken && !flush_epoch[1])
                               - (!ack_epoch[1] ? ack_count : 3'd0);
        u23 <= rst_cyc ? 0 : u23 + (flush_taken && flush_epoch[1])
                               - (ack_epoch[1] ? ack_count : 3'd0);
    end
`ifdef ENV_FAIR
    // Delay line of taken flushes {valid, epoch}: slot i holds a flush taken
    // i + 1 cycles ago; choose_acks selects the slots acked this cycle, all
    // of one epoch; the oldest slot must be acked.
    reg [LACK-1:0] dv;
    reg [1:0] de [0:LACK-1];
    reg [3:0] nsel;
    integer d;
    always @* begin
        nsel = 0;
        for (d = 0; d < LACK; d = d + 1) if (choose_acks[d]) nsel = nsel + 1;
        if (started) begin
            assume (ack_count == nsel);
            for (d = 0; d < LACK; d = d + 1)
                if (choose_acks[d]) assume (dv[d] && de[d] == ack_epoch);
            assume (!dv[LACK-1] || choose_acks[LACK-1]);
            assume (choose_acks[7:LACK] == 0);
        end
    end
    always @(posedge clock) begin
        dv[0] <= flush_taken; de[0] <= flush_epoch;
        for (d = 1; d < LACK; d = d + 1) begin
            dv[d] <= rst_cyc ? 1'b0 : dv[d-1] && !choose_acks[d-1];
            de[d] <= de[d-1];
        end
        if (rst_cyc) dv[0] <= 1'b0;
    end
    // flush_ready at least every R cycles, inv_done within LINV cycles, no reset.
    reg [7:0] nr, ni;
    always @(posedge clock) begin
        nr <= flush_ready ? 8'd0 : nr + 8'd1;
        ni <= (inv_req && !done_seen && !inv_done) ? ni + 8'd1 : 8'd0;
    end
    always @* if (started) begin
        assume (!rst);
        if (nr >= R - 1) assume (flush_ready);
        if (ni >= LINV - 1 && inv_req && !done_seen) assume (inv_done);
    end
`elsif ENV_ACK_FREE
`else
    // Legal acks: only flushes taken and not yet acknowledged, with their epoch.
    always @* if (started && ack_count != 0)
        assume (ack_count <= un[ack_epoch] - (wf_out && ack_epoch == wf_ep && !choose_ack));
    always @* if (started && choose_ack) assume (wf_out && ack_epoch == wf_ep && ack_count != 0);
`endif
`ifdef ENV_FAIR
    assign wf_acked_now = 1'b0;
`else
    assign wf_acked_now = choose_ack && ack_count != 0;
`endif

`ifdef ENV_DRAIN
    // Kernel end: once drain_all rises it stays high and no request is presented.
    reg draining;
    always @(posedge clock) draining <= started && (draining || drain_all);
    always @* if (started && draining) begin
        assume (drain_all);
        assume (!req_valid);
    end
`endif

    reg ok;   // the conjunction of this run's checks
    // (summed in pairs, the shape of the INV_ACTR ghost sums u01, u23 below:
    // the same value, and an inductive step need not re-associate an adder tree)
    wire [A:0] un01 = {1'b0, un[0]} + {1'b0, un[1]};
    wire [A:0] un23 = {1'b0, un[2]} + {1'b0, un[3]};
    wire [A+2:0] actr_sum = {2'b0, un01} + {2'b0, un23} + {{A{1'b0}}, aq};
    wire [A+2:0] actr_q = obs_actr - actr_sum;

    // ---- witness: store S1 of ww to wl, a later ordering op O of ww, a later
    // store S2 of ww; the flush carrying S1 and its ack (PMO, durability, coalescing).
    // ph: 0 before S1, 1 S1 seen, 2 O seen, 3 S2 seen
    reg [1:0] ph;
    reg [IW-1:0] s1_idx;
    reg [LW-1:0] s2_line;
    reg wf_seen;                 // the flush carrying S1 was taken
    reg o_stalls;                // O is a dFence or device pRel
    wire s1_now = ph == 2'd0 && rsp_store && rsp_warp == ww && rline == wl && choose_s1;
    wire o_now = ph == 2'd1 && rsp_order && rsp_warp == ww && choose_o;
    wire s2_now = ph == 2'd2 && rsp_store && rsp_warp == ww && choose_s2;
    // The first flush of wl taken after S1's response carries S1 (spec §2 req. 3).
    wire wf_take = ph != 2'd0 && !wf_seen && flush_taken && flush_line == wl;
    always @(posedge clock) begin
        if (rst_cyc) begin
            ph <= 0; wf_seen <= 0; wf_out <= 0;
        end else begin
            if (s1_now) begin ph <= 2'd1; s1_idx <= rsp_idx; end
            if (o_now) begin ph <= 2'd2; o_stalls <= rop == 3'd2 || rop == 3'd6; end
            if (s2_now) begin ph <= 2'd3; s2_line <= rline; end
            if (wf_take) begin wf_seen <= 1'b1; wf_out <= 1'b1; wf_ep <= flush_epoch; end
            if (wf_acked_now) wf_out <= 1'b0;
        end
    end
    wire s1_acked = wf_seen && !wf_out;

    // ---- cross-warp block scope (CHECK_XBLOCK): after S1 (above) of ww, a
    // pRel block R of ww, then a pAcq block Q of another warp wb taken after
    // R's response (it saw R's flag), then a store S2 of wb.
    // xp: 0 before R, 1 R seen, 2 Q seen, 3 S2 seen
    reg [5:0] wb;
    always @(posedge clock) if (!started) wb <= pick_warp2;
    always @* if (started) assume (wb < W && wb != ww);
    reg [1:0] xp;
    reg [LW-1:0] x2_line;
    reg [3:1] sq;                // request taken 1..3 cycles ago: after R's response
    always @(posedge clock) sq <= {sq[2:1], xp != 2'd0};
    wire xr_now = ph != 2'd0 && xp == 2'd0 && rsp_order && rop == 3'd4 && rsp_warp == ww && choose_o;
    wire xq_now = xp == 2'd1 && rsp_order && rop == 3'd3 && rsp_warp == wb && sq[3] && choose_q;
    wire x2_now = xp == 2'd2 && rsp_store && rsp_warp == wb && choose_s2;
    always @(posedge clock) begin
        if (rst_cyc) xp <= 0;
        else begin
            if (xr_now) xp <= 2'd1;
            if (xq_now) xp <= 2'd2;
            if (x2_now) begin xp <= 2'd3; x2_line <= rline; end
        end
    end

    always @* begin
        ok = 1'b1;
`ifdef CHECK_ACTR
        // ACTR = flushes queued + taken and not acked + acks registered; the
        // flushes queued are 0 exactly when flush_valid is 0, and at most F = 4.
        // With legal acks the unit never flags an ack error.
        if (obs_actr < actr_sum || actr_q > 4 || flush_valid != (actr_q != 0)) ok = 1'b0;
        if (error[0]) ok = 1'b0;
`endif
`ifdef CHECK_HANDSHAKE
        // exactly one response per taken request, three cycles later, with its
        // warp; rsp_idx 0 unless a store or an eviction... (spec: every other response)
        if (rsp_valid != sv[3]) ok = 1'b0;
        if (rsp_valid && rsp_warp != sw[3]) ok = 1'b0;
        if (!rsp_valid && (rsp_warp != 0 || rsp_kind != 0 || rsp_idx != 0)) ok = 1'b0;
        if (rsp_valid && !(rsp_store) && rsp_idx != 0) ok = 1'b0;
        if (rsp_valid && sw[3] >= W && rsp_kind != REPLAY) ok = 1'b0;
        // the flush at the FIFO head holds still until taken
        if (hs_hold && !(flush_valid && flush_line == p_line && flush_warps == p_warps
                         && flush_evict == p_evict && flush_epoch == p_epoch)) ok = 1'b0;
        if (!flush_valid && (flush_line != 0 || flush_warps != 0 || flush_evict || flush_epoch != 0))
            ok = 1'b0;
        // req_ready is 0 in a reset cycle and the cycle after it, else 1
        if (req_ready != !(rst_cyc || rst_cyc_p)) ok = 1'b0;
`endif
`ifdef CHECK_LOST
        // a store to wl performed or coalesced is flushed before idle; sooner,
        // once the PB and the flush FIFO are both empty no flush of wl can
        // follow (the store's entry is in the PB from its response on, and
        // its flush in the FIFO until taken)
        if (lost_pend && (idle || (pb_empty && !flush_valid))) ok = 1'b0;
`endif
`ifdef CHECK_PMO
        // no flush carrying S2's line with ww's bit offered before S1's flush is acked
        if (ph == 2'd3 && flush_valid && flush_line == s2_line && flush_warps[ww] && !s1_acked)
            ok = 1'b0;
`endif
`ifdef CHECK_DURABLE
        // ww's stall falls after its dFence / device pRel: S1 was flushed and acked
        if (o_now && o_stalls_now && !stall[ww]) ok = 1'b0;
        if (dur_armed && !stall[ww] && !s1_acked) ok = 1'b0;
`endif
`ifdef CHECK_COALESCE
        // after O, no store of ww coalesces into S1's entry until the slot is reallocated
        if (coal_armed && rsp_valid && rsp_kind == COALESCED && rop == 3'd0 && rsp_warp == ww
            && rsp_idx == s1_idx) ok = 1'b0;
`endif
`ifdef CHECK_RELEASE
        if (rc > B) ok = 1'b0;
`endif
`ifdef CHECK_XBLOCK
        // no flush carrying S2's line with wb's bit offered before S1's flush is acked
        if (xp == 2'd3 && flush_valid && flush_line == x2_line && flush_warps[wb] && !s1_acked)
            ok = 1'b0;
`endif
`ifdef CHECK_DRAIN
        // kernel end (drain_all held, no new requests, fair environment): the
        // head never stands still more than HM cycles while the PB holds
        // entries, the unit is idle at most HI cycles after the PB is empty,
        // and so idle within BD cycles of drain_all
        if (hc > HM || ec > HI || (dc > BD && !idle)) ok = 1'b0;
`endif
    end

`ifdef INV_ACTR
    // ---- strengthening invariants of CHECK_ACTR (k-induction): the unit's
    // registers, bound after flattening by inv_actr.ys (connect -set). FIFO:
    // ring pointer and count sane; each epoch counter = the flushes of that
    // epoch taken and not acked (un) + its registered ack + those queued in
    // the FIFO (head and ring); ACTR = the sum; ep_room's register follows
    // ACTR and ep_closed; the unit's registered reset is the ghost's.
    wire [A-1:0] x_ectr0, x_ectr1, x_ectr2, x_ectr3;
    wire [9:0] x_fc;
    wire [1:0] x_bep0, x_bep1, x_bep2;
    wire [2:0] x_ackq_count;
    wire [1:0] x_ackq_epoch;
    wire x_rstq, x_ep_full, x_ep_closed;
    wire [1:0] x_rd = x_fc[9:8], x_nr = x_fc[7:6];
    wire x_fv = x_fc[0];
    wire [1:0] x_fep = x_fc[3:2];
    wire [1:0] x_s1 = (x_rd == 2'd2) ? 2'd0 : x_rd + 2'd1;
    wire [1:0] x_s2 = (x_rd == 2'd0) ? 2'd2 : x_rd - 2'd1;
    wire [1:0] x_b0 = x_rd == 2'd0 ? x_bep0 : x_rd == 2'd1 ? x_bep1 : x_bep2;
    wire [1:0] x_b1 = x_s1 == 2'd0 ? x_bep0 : x_s1 == 2'd1 ? x_bep1 : x_bep2;
    wire [1:0] x_b2 = x_s2 == 2'd0 ? x_bep0 : x_s2 == 2'd1 ? x_bep1 : x_bep2;
    wire [A+3:0] x_exp [0:3];
    genvar ge;
    generate for (ge = 0; ge < 4; ge = ge + 1) begin : xq
        assign x_exp[ge] = un[ge] + (x_ackq_epoch == ge ? x_ackq_count : 3'd0)
            + (x_fv && x_fep == ge) + (x_nr > 0 && x_b0 == ge)
            + (x_nr > 1 && x_b1 == ge) + (x_nr > 2 && x_b2 == ge);
    end endgenerate
`ifdef INV_LOST
    // ---- strengthening invariants of CHECK_LOST (with INV_ACTR): the PB's
    // memories and the store stage's shadow registers, bound by
    // inv_lost.ys (the memory words by `sbrp prove`, one per entry).
    // Architectural entry i = the memory word with the pending write (wq1,
    // the m_* registers) applied: the memories lag the decisions by a cycle.
    wire [3*N-1:0] x_memt;
    wire [LW*N-1:0] x_meml;
    wire [W*N-1:0] x_memw;
    wire x_mte, x_mle, x_mwe, x_ne, x_one, x_popped;
    wire [IW-1:0] x_mwa, x_y, x_pf, x_pf1, x_h1;
    wire [2:0] x_mtd, x_ht, x_s1t;
    wire [LW-1:0] x_mld, x_hl, x_s1l, x_bl0, x_bl1, x_bl2;
    wire [W-1:0] x_mwd, x_mwm, x_hw, x_s1w;
    wire x_r1v, x_r2v;
    // registers recomputed every cycle from others (facts 9-15, below)
    wire x_hok, x_hleq, x_livek, x_mk1, x_mk2, x_m1f, x_m2f, x_m2te, x_m2le, x_m2we;
    wire [IW-1:0] x_m2a, x_r2k;
    wire [2:0] x_m2t, x_rdkt, x_rdat;
    wire [LW-1:0] x_m2l, x_rdkl, x_rdal;
    wire [W-1:0] x_m2w, x_m2m, x_rdkw, x_rdaw;
    wire [2:0] x_r1op, x_r2op;
    wire [5:0] x_r1w, x_r2w;
    wire [LW-1:0] x_r1l, x_r2l;
    // (flat vectors, not arrays of wires: Yosys makes those memories)
    wire [3*N-1:0] atv;
    wire [LW*N-1:0] alv;
    wire [W*N-1:0] awv;
    wire [N-1:0] alive, awl;
    wire [IW-1:0] x_cnt = obs_tail - obs_head;
    genvar gi;
    generate for (gi = 0; gi < N; gi = gi + 1) begin : xa
        wire wa = x_mwa == gi;
        wire [2:0] at = (x_mte && wa) ? x_mtd : x_memt[3*gi +: 3];
        wire [LW-1:0] al = (x_mle && wa) ? x_mld : x_meml[LW*gi +: LW];
        wire [W-1:0] aw = (x_mwe && wa) ? ((x_memw[W*gi +: W] & ~x_mwm) | (x_mwd & x_mwm))
                                       : x_memw[W*gi +: W];
        assign atv[3*gi +: 3] = at;
        assign alv[LW*gi +: LW] = al;
        assign awv[W*gi +: W] = aw;
        wire [IW-1:0] age = gi - obs_head;
        assign alive[gi] = obs_full || age < x_cnt;
        assign awl[gi] = alive[gi] && at == 3'd1 && al == wl;
    end endgenerate
    // the flush FIFO holds a flush of wl: its head register or a ring slot
    // within the count (slot i's distance from the read pointer below it)
    wire [1:0] x_d0 = x_rd == 2'd0 ? 2'd0 : x_rd == 2'd1 ? 2'd2 : 2'd1;
    wire [1:0] x_d1 = x_rd == 2'd0 ? 2'd1 : x_rd == 2'd1 ? 2'd0 : 2'd2;
    wire [1:0] x_d2 = x_rd == 2'd0 ? 2'd2 : x_rd == 2'd1 ? 2'd1 : 2'd0;
    wire x_fifo_wl = (flush_valid && flush_line == wl) || (x_d0 < x_nr && x_bl0 == wl)
        || (x_d1 < x_nr && x_bl1 == wl) || (x_d2 < x_nr && x_bl2 == wl);
    wire [IW-1:0] x_hd1 = obs_head + 1'b1;
`endif
    reg inv_ok;
    always @* begin
        inv_ok = 1'b1;
        if (x_rd > 2 || x_fc[5] != (x_nr == 3) || (x_nr != 0 && !x_fv)) inv_ok = 1'b0;
        if (aq != x_ackq_count) inv_ok = 1'b0;
        if (x_ectr0 != x_exp[0] || x_ectr1 != x_exp[1] || x_ectr2 != x_exp[2]
            || x_ectr3 != x_exp[3]) inv_ok = 1'b0;
        // ACTR = the flushes taken and unacknowledged (u01 + u23) + the
        // registered ack + the flushes queued; u01, u23 equal their pairs of un.
        // (ACTR = the sum of the epoch counters follows, but is not stated:
        // its step is a four-way adder identity that stalls the SAT solver.)
        if ({3'b0, obs_actr} != {2'b0, u01} + {2'b0, u23} + aq + x_fv + x_nr) inv_ok = 1'b0;
        if (u01 != un01 || u23 != un23) inv_ok = 1'b0;
        if (wf_out && un[wf_ep] == 0) inv_ok = 1'b0;
        if (!started || x_rstq != rst_cyc) inv_ok = 1'b0;
        if (x_ep_full != (x_ep_closed || &obs_actr)) inv_ok = 1'b0;
`ifdef INV_MON
        // the monitors' ghost state is consistent with itself (with INV_ACTR):
        // S1's flush is outstanding only once taken, taken only after S1;
        // the durability and coalescing monitors arm only at O
        if ((wf_out && !wf_seen) || (wf_seen && ph == 2'd0)) inv_ok = 1'b0;
        if ((coal_armed && ph < 2'd2) || (dur_armed && !(ph >= 2'd2 && o_stalls))) inv_ok = 1'b0;
`endif
`ifdef INV_LOST
        if (!(&x_lost_ok)) inv_ok = 1'b0;
`endif
`ifdef INV_COAL
        if (!(&x_coal_ok)) inv_ok = 1'b0;
`endif
`ifdef INV_DUR
        if (!(&x_dur_ok)) inv_ok = 1'b0;
`endif
`ifdef INV_PMO
        if (!(&x_pmo_ok)) inv_ok = 1'b0;
`endif
    end
    // Before the checks start (the cycle after the first), the ghost and the
    // unit are both in their reset cycle: else the inductive step could start
    // from a garbage state whose first checked cycle follows no reset.
    wire inv_pre = rst_cyc && x_rstq;
`else
    wire inv_ok = 1'b1;
    wire inv_pre = 1'b1;
`endif
    // the assertion as a net (to read a counterexample to induction, Yosys
    // `sat -seq`: chk set in the first k steps, proved in the last)
    (* keep *) wire chk = !started || (settled ? ok && inv_ok : inv_pre);
    always @* if (started) assert (settled ? ok && inv_ok : inv_pre);

    // ---- monitors of the checks ----------------------------------------------
    reg hs_hold, p_evict;
    reg [LW-1:0] p_line;
    reg [W-1:0] p_warps;
    reg [1:0] p_epoch;
    always @(posedge clock) begin
        hs_hold <= !rst_cyc && flush_valid && !flush_ready;
        p_line <= flush_line; p_warps <= flush_warps; p_evict <= flush_evict; p_epoch <= flush_epoch;
    end

    // lost persist: set by a store response to wl, cleared by a flush of wl
    // taken in a later cycle
    reg lost_pend;
    always @(posedge clock)
        lost_pend <= !rst_cyc && ((rsp_store && rline == wl) || (lost_pend && !(flush_taken && flush_line == wl)));

    // durability: armed when ww's stall falls after O (a dFence / device pRel)
    wire o_stalls_now = rop == 3'd2 || rop == 3'd6;
    reg dur_armed;
    always @(posedge clock) dur_armed <= !rst_cyc && (dur_armed || (o_now && o_stalls_now));
    // coalescing: after O until a store is performed into S1's slot
    reg coal_armed;
    always @(posedge clock)
        coal_armed <= !rst_cyc && (coal_armed || o_now)
                      && !(rsp_valid && rsp_kind == PERFORMED && rop == 3'd0 && rsp_idx == s1_idx);

    // release: cycles ww has spent in EDM since it entered it from ODM (its
    // dFence / device pRel retired at the head: an epoch wait)
    reg p_odm;
    reg [9:0] rc;
    always @(posedge clock) begin
        p_odm <= obs_odm[ww];
        if (rst_cyc || !obs_edm[ww]) rc <= 0;
        else if (rc != 0 || (p_odm && !obs_odm[ww])) rc <= rc + (rc <= B);
    end
    // drain (drain_all held once it rose, no requests after it): cycles
    // since drain_all rose (dc); consecutive cycles the head has stood still
    // with entries in the PB (hc); consecutive cycles the PB has been empty
    // and the unit not idle (ec). Saturating.
    reg [15:0] dc;
    reg [4:0] hc, ec;
    reg [IW-1:0] p_head;
    always @(posedge clock) begin
        dc <= (rst_cyc || !drain_all) ? 16'd0 : dc + (dc <= BD);
        p_head <= obs_head;
        hc <= (rst_cyc || !drain_all || pb_empty || obs_head != p_head) ? 5'd0 : hc + (hc <= HM);
        ec <= (rst_cyc || !drain_all || !pb_empty || idle) ? 5'd0 : ec + (ec <= HI);
    end
    // cover: a drain that took a flush (so waited for its ack) reaches idle
    reg dr_had;
    always @(posedge clock) dr_had <= !rst_cyc && drain_all && (dr_had || flush_taken);

    // Covers against vacuity: each is asserted false, so BMC's
    // counterexample is the witness trace that reaches it.
    always @* if (settled) begin
`ifdef COVER_COALESCE
        assert (!(rsp_store && rsp_kind == COALESCED));
`endif
`ifdef COVER_FULL
        assert (!obs_full);
`endif
`ifdef COVER_EVICT_FENCE
        assert (!(flush_valid && flush_evict && (obs_odm & ~flush_warps) != 0));
`endif
`ifdef COVER_EPOCH
        assert (obs_epoch != 2'd3);
`endif
`ifdef COVER_PMO
        assert (!(s1_acked && ph == 2'd3));
`endif
`ifdef COVER_EDM
        assert (!(p_odm && !obs_odm[ww] && obs_edm[ww]));
`endif
`ifdef COVER_DRAIN
        assert (!(dr_had && idle));
`endif
`ifdef COVER_XBLOCK
        assert (!(s1_acked && xp == 2'd3));
`endif
    end
`ifdef INV_LOST
    // The INV_LOST facts, one bit each (named, so that a counterexample shows
    // which one breaks):
    wire [15:0] x_lost_ok;
    // 0-1: PB pointers and their shadows: full only with head = tail; not
    // empty, one entry, y = tail - 1; the head port's read address
    // pf = head + 2, pf1 = head + 3, h1 = head + 1
    assign x_lost_ok[0] = (!obs_full || obs_head == obs_tail) && x_ne == !pb_empty
                          && x_one == (!obs_full && x_cnt == 1) && x_y == obs_tail - 1'b1;
    assign x_lost_ok[1] = x_pf == obs_head + 2'd2 && x_pf1 == obs_head + 2'd3 && x_h1 == x_hd1;
    // 2-3: head staging: st0 (h_*) is the head entry when the PB is not
    // empty, st1 the next one when it is live and no pop was made last
    // cycle (after a pop st1 is read from the memory this cycle)
    assign x_lost_ok[2] = pb_empty || (x_ht == atv[3*obs_head +: 3]
        && x_hl == alv[LW*obs_head +: LW] && x_hw == awv[W*obs_head +: W]);
    assign x_lost_ok[3] = x_popped || !alive[x_hd1] || (x_s1t == atv[3*x_hd1 +: 3]
        && x_s1l == alv[LW*x_hd1 +: LW] && x_s1w == awv[W*x_hd1 +: W]);
    // 4-6: the request pipeline is the ghost's requests in flight (r1 but in
    // a reset cycle: the unit takes a request in a cycle with rst, which
    // the ghost does not count, and the reset then drops it)
    assign x_lost_ok[4] = (rst_cyc || x_r1v == sv[1])
        && (!sv[1] || (x_r1op == sop[1] && x_r1w == sw[1] && x_r1l == sl[1]));
    assign x_lost_ok[5] = x_r2v == sv[2]
        && (!sv[2] || (x_r2op == sop[2] && x_r2w == sw[2] && x_r2l == sl[2]));
    assign x_lost_ok[6] = rsp_valid == sv[3];
    // 7: a store's response (performed or coalesced): its entry is live, a
    // persist of its line
    assign x_lost_ok[7] = !(rsp_ok && rop == 3'd0)
        || (alive[rsp_idx] && atv[3*rsp_idx +: 3] == 3'd1 && alv[LW*rsp_idx +: LW] == rline);
    // 8: a pending store of wl: a live persist entry of wl, or a queued flush of wl
    assign x_lost_ok[8] = !lost_pend || awl != 0 || x_fifo_wl;
    // 9-15: the registers the unit recomputes every cycle from others
    // (without them the step needs k = 3: they settle one cycle into it).
    // h_ok only for a persist at the head (its FSM half is not needed: a
    // flush held back loses nothing); hl_eq: the head line is r2's; live_k:
    // r2's k is live; has_line: the FIFO holds r2's line; mk1, mk2: the
    // pending write (m_*) and the one before (m2_*) are at r2's k; m1_full,
    // m2_full: those writes were allocations (whole word).
    wire [W-1:0] x_ones = {W{1'b1}};
    wire x_fifo_r2 = (flush_valid && flush_line == x_r2l) || (x_d0 < x_nr && x_bl0 == x_r2l)
        || (x_d1 < x_nr && x_bl1 == x_r2l) || (x_d2 < x_nr && x_bl2 == x_r2l);
    assign x_lost_ok[9] = pb_empty || !x_hok || x_ht == 3'd1;
    assign x_lost_ok[10] = !x_r2v || (x_hleq == (x_hl == x_r2l) && x_mk1 == (x_mwa == x_r2k)
        && x_mk2 == (x_m2a == x_r2k));
    assign x_lost_ok[11] = x_livek == alive[x_r2k] && x_fc[4] == x_fifo_r2;
    assign x_lost_ok[12] = x_m1f == (x_mwm == x_ones) && x_m2f == (x_m2m == x_ones);
    // 13-14: the read ports' registered data: entry r2.k (port 1) and, after
    // a pop, entry h1 (port 0; pf of last cycle), as the memory was before
    // the write that landed last cycle (m2_*): every field that write did
    // not touch equals the memory word now
    wire x_m2k = x_m2a == x_r2k, x_m2h = x_m2a == x_h1;
    assign x_lost_ok[13] = !x_r2v || (((x_m2te && x_m2k) || x_rdkt == x_memt[3*x_r2k +: 3])
        && ((x_m2le && x_m2k) || x_rdkl == x_meml[LW*x_r2k +: LW])
        && ((x_rdkw & ~(x_m2we && x_m2k ? x_m2m : {W{1'b0}})) ==
            (x_memw[W*x_r2k +: W] & ~(x_m2we && x_m2k ? x_m2m : {W{1'b0}}))));
    assign x_lost_ok[14] = !x_popped || (((x_m2te && x_m2h) || x_rdat == x_memt[3*x_h1 +: 3])
        && ((x_m2le && x_m2h) || x_rdal == x_meml[LW*x_h1 +: LW])
        && ((x_rdaw & ~(x_m2we && x_m2h ? x_m2m : {W{1'b0}})) ==
            (x_memw[W*x_h1 +: W] & ~(x_m2we && x_m2h ? x_m2m : {W{1'b0}}))));
    // 15: the write that landed last cycle (m2_*) is in the memory word
    assign x_lost_ok[15] = (!x_m2te || x_memt[3*x_m2a +: 3] == x_m2t)
        && (!x_m2le || x_meml[LW*x_m2a +: LW] == x_m2l)
        && (!x_m2we || (x_memw[W*x_m2a +: W] & x_m2m) == (x_m2w & x_m2m));
`endif
`ifdef INV_COAL
    // ---- strengthening invariants of CHECK_COALESCE (with INV_ACTR, INV_MON,
    // INV_LOST): the per-warp ordering queues (oq_n on two bit planes, the
    // entries q0, q1 on IW bit planes each, W bits a plane), bound by
    // inv_coal.ys (the planes by `sbrp prove`, one line per plane).
    wire [W-1:0] x_nlo, x_nhi;
    wire [W*IW-1:0] x_q0p, x_q1p;
    wire x_yqv, x_qfull;
    wire [IW-1:0] x_yqi;
    wire [2:0] x_last;
    // per warp, flat: its count, oldest and youngest entry; qs: sound and
    // complete
    wire [2*W-1:0] qn;
    wire [IW*W-1:0] qyv;
    wire [W-1:0] qs;
    // a live ordering entry (types 2..7)
    wire [N-1:0] aord;
    generate for (gi = 0; gi < N; gi = gi + 1) begin : xo
        assign aord[gi] = alive[gi] && atv[3*gi +: 3] >= 3'd2;
    end endgenerate
    genvar gw, gj;
    generate for (gw = 0; gw < W; gw = gw + 1) begin : xw
        wire [IW-1:0] q0, q1;
        for (gj = 0; gj < IW; gj = gj + 1) begin : xb
            assign q0[gj] = x_q0p[W*gj + gw];
            assign q1[gj] = x_q1p[W*gj + gw];
        end
        wire [1:0] n = {x_nhi[gw], x_nlo[gw]};
        wire [IW-1:0] yg = n == 2'd2 ? q1 : q0;
        assign qn[2*gw +: 2] = n;
        assign qyv[IW*gw +: IW] = yg;
        wire [IW-1:0] a0 = q0 - obs_head, a1 = q1 - obs_head;
        // sound: at most D = 2 entries, each a live ordering entry naming the
        // warp, q0 older than q1
        wire s0 = n == 2'd0 || (aord[q0] && awv[W*q0 + gw]);
        wire s1 = n != 2'd2 || (aord[q1] && awv[W*q1 + gw] && a0 < a1);
        // complete: every live ordering entry naming the warp is in its queue
        wire [N-1:0] cm;
        for (gj = 0; gj < N; gj = gj + 1) begin : xc
            assign cm[gj] = !(aord[gj] && awv[W*gj + gw])
                || (n != 2'd0 && q0 == gj) || (n == 2'd2 && q1 == gj);
        end
        assign qs[gw] = n != 2'd3 && s0 && s1 && &cm;
    end endgenerate
    wire [IW-1:0] x_y1 = obs_tail - 1'b1;
    wire [5:0] x_w2 = sw[2];
    wire [1:0] x_n2 = qn[2*x_w2 +: 2];
    wire [1:0] x_nw = qn[2*ww +: 2];
    wire [IW-1:0] x_yw = qyv[IW*ww +: IW];
    wire [1:0] x_nrs = qn[2*rsp_warp +: 2];
    wire [IW-1:0] x_yr = qyv[IW*rsp_warp +: IW];
    // the coalescing monitor's slot holds a live persist entry (S1, or a
    // store allocated there before O's decision), and no store performed
    // there is answered this cycle (it disarms the monitor)
    wire x_s1p = coal_armed && alive[s1_idx] && atv[3*s1_idx +: 3] == 3'd1
        && !(rsp_valid && rsp_kind == PERFORMED && rop == 3'd0 && rsp_idx == s1_idx);
    wire [IW-1:0] x_as1 = s1_idx - obs_head, x_ayw = x_yw - obs_head;
    wire [7:0] x_coal_ok;
    // 0: every warp's ordering queue sound and complete
    assign x_coal_ok[0] = &qs;
    // 1: the request in r2 (a warp below W): the selected queue registers are
    // its queue's at the start of the decision cycle (non-empty, youngest, full)
    assign x_coal_ok[1] = !(x_r2v && x_w2 < W)
        || (x_yqv == (x_n2 != 2'd0) && x_qfull == (x_n2 == 2'd2)
            && (!x_yqv || x_yqi == qyv[IW*x_w2 +: IW]));
    // 2: the youngest entry's type is last_type (an ordering type; a store's
    // entry may have become a hole)
    assign x_coal_ok[2] = pb_empty || x_last < 3'd2 || atv[3*x_y1 +: 3] == x_last;
    // 3: an ordering op's response (performed or coalesced): its entry, the
    // youngest of the PB, is its warp's youngest
    assign x_coal_ok[3] = !(rsp_order && rsp_warp < W)
        || (!pb_empty && x_nrs != 2'd0 && x_yr == x_y1);
    // 4: the requests in flight are of distinct warps (requirement 6)
    assign x_coal_ok[4] = !(sv[1] && sv[2] && sw[1] == sw[2]) && !(sv[1] && sv[3] && sw[1] == sw[3])
        && !(sv[2] && sv[3] && sw[2] == sw[3]);
    // 5: armed, with S1's slot a live persist entry: ww's youngest ordering
    // entry is younger than it
    assign x_coal_ok[5] = !x_s1p || (x_nw != 2'd0 && x_ayw > x_as1);
    assign x_coal_ok[7:6] = 2'b11;
`endif
`ifdef INV_DUR
    // ---- strengthening invariants of CHECK_DURABLE (with INV_ACTR, INV_MON,
    // INV_LOST): ww's stalling entry and ODM, the witness flush's place
    // (S1's entry, the FIFO, taken) and epoch, and ww's EDM epoch, bound by
    // inv_dur.ys.
    wire [W-1:0] x_dodm = obs_odm;
    wire [W-1:0] x_edm0, x_edm1, x_edm2, x_edm3, x_fsm0, x_fsm1, x_fsm2, x_fsm3;
    wire [1:0] x_epold;
    wire x_wst;
    wire [2:0] x_dlast;
    wire [1:0] x_epc = obs_epoch;
    // ww's stalling entries (dFence, pAcq device, pRel device): a live entry
    // of type 3, 6 or 7 whose warps include ww
    wire [N-1:0] stl;
    generate for (gi = 0; gi < N; gi = gi + 1) begin : xd
        wire [2:0] t = atv[3*gi +: 3];
        assign stl[gi] = alive[gi] && (t == 3'd3 || t == 3'd6 || t == 3'd7) && awv[W*gi + ww];
    end endgenerate
    // S1's witness flush not yet taken; S1's entry a live persist of wl
    wire d_p = ph != 2'd0 && !wf_seen;
    wire d_s1 = alive[s1_idx] && atv[3*s1_idx +: 3] == 3'd1 && alv[LW*s1_idx +: LW] == wl;
    wire [IW-1:0] d_as1 = s1_idx - obs_head;
    // the oldest queued flush of wl: its epoch (FIFO head register, then the
    // ring slots by distance from the read pointer)
    wire [LW-1:0] x_l0 = x_rd == 2'd0 ? x_bl0 : x_rd == 2'd1 ? x_bl1 : x_bl2;
    wire [LW-1:0] x_l1 = x_s1 == 2'd0 ? x_bl0 : x_s1 == 2'd1 ? x_bl1 : x_bl2;
    wire [1:0] d_fep = (flush_valid && flush_line == wl) ? flush_epoch
        : (x_nr > 0 && x_l0 == wl) ? x_b0 : (x_nr > 1 && x_l1 == wl) ? x_b1 : x_b2;
    // the witness flush's epoch: queued, or taken and not acked
    wire [1:0] d_ew = d_p ? d_fep : wf_ep;
    wire [1:0] d_aw = d_ew - x_epold, d_acur = x_epc - x_epold;
    wire [4*W-1:0] x_edmf = {x_edm3, x_edm2, x_edm1, x_edm0};
    // ww in the EDM mask of a live epoch j no older than the witness flush's
    wire [3:0] d_j;
    wire [3:0] d_dead;
    genvar ge2;
    generate for (ge2 = 0; ge2 < 4; ge2 = ge2 + 1) begin : xe
        wire [1:0] aj = ge2 - x_epold;
        assign d_dead[ge2] = aj > d_acur;
        assign d_j[ge2] = !d_dead[ge2] && x_edmf[W*ge2 + ww] && d_aw <= aj;
    end endgenerate
    wire d_armed = dur_armed && !s1_acked;
    wire [7:0] x_dur_ok;
    // 0: ww has at most one stalling entry, and is in ODM exactly when it has one
    assign x_dur_ok[0] = (stl & (stl - 1'b1)) == 0 && x_dodm[ww] == (stl != 0);
    // 1: a request of ww in r2: its registered stall bit is ww's stall
    assign x_dur_ok[1] = !(x_r2v && sw[2] == ww) || x_wst == stall[ww];
    // 2: the youngest entry's type is last_type (an ordering type)
    // (the index a wire of IW bits: `tail - 1` inside the index would be
    // computed at 32 bits and wrap to no entry at tail 0)
    wire [IW-1:0] d_y = obs_tail - 1'b1;
    assign x_dur_ok[2] = pb_empty || x_dlast < 3'd2 || atv[3*d_y +: 3] == x_dlast;
    // 3: a stalling ordering op's response for ww: its entry, the youngest
    // of the PB, of its type, names ww
    assign x_dur_ok[3] = !(rsp_order && rsp_warp == ww && (rop == 3'd2 || rop == 3'd5 || rop == 3'd6))
        || (!pb_empty && atv[3*d_y +: 3] == rop + 3'd1 && awv[W*d_y + ww]);
    // 4: S1's witness flush not taken: S1's entry is a live persist of wl,
    // or a flush of wl is queued
    assign x_dur_ok[4] = !d_p || d_s1 || x_fifo_wl;
    // 5: armed, ww in ODM: its stalling entry is a dFence or device pRel,
    // younger than S1's entry while that is live
    wire [N-1:0] d_o;
    generate for (gi = 0; gi < N; gi = gi + 1) begin : xo5
        wire [2:0] t = atv[3*gi +: 3];
        wire [IW-1:0] a = gi - obs_head;
        assign d_o[gi] = !stl[gi] || ((t == 3'd3 || t == 3'd7) && (!(d_p && d_s1) || d_as1 < a));
    end endgenerate
    assign x_dur_ok[5] = !(d_armed && x_dodm[ww]) || &d_o;
    // 6: armed, ww out of ODM: S1 has left the PB, and ww waits in EDM for
    // an epoch no older than the witness flush's
    assign x_dur_ok[6] = !(d_armed && !x_dodm[ww]) || ((!d_p || (x_fifo_wl && !d_s1)) && d_j != 0);
    // 7: dead epochs (after ep_cur, before ep_old): no count, no warps
    assign x_dur_ok[7] = !(d_dead[0] && (x_ectr0 != 0 || x_edm0 != 0 || x_fsm0 != 0))
        && !(d_dead[1] && (x_ectr1 != 0 || x_edm1 != 0 || x_fsm1 != 0))
        && !(d_dead[2] && (x_ectr2 != 0 || x_edm2 != 0 || x_fsm2 != 0))
        && !(d_dead[3] && (x_ectr3 != 0 || x_edm3 != 0 || x_fsm3 != 0));
`endif
`ifdef INV_PMO
    // ---- strengthening invariants of CHECK_PMO (with INV_ACTR, INV_MON,
    // INV_LOST, INV_COAL, INV_DUR; exact hooks): O's entry (a ghost index
    // taken at O's response), S2's line tied to it, ww's FSM epoch, and the
    // exact hooks naming every live persist entry; bound by inv_pmo.ys.
    wire [W-1:0] x_bw0, x_bw1, x_bw2;
    wire x_r1pbv, x_r2pbv;
    wire [IW-1:0] x_r1pbi, x_r2pbi;
    // O's entry: tail - 1 at O's response; live until the head passes it
    // (the head moves one entry a cycle at most)
    reg [IW-1:0] o_idx, hprev;
    reg o_reg;
    wire o_live = o_reg && !(hprev == o_idx && obs_head != o_idx);
    always @(posedge clock) begin
        hprev <= rst_cyc ? {IW{1'b0}} : obs_head;
        o_reg <= !rst_cyc && (o_now || o_live);
        if (o_now) o_idx <= obs_tail - 1'b1;
    end
    wire [IW-1:0] p_ao = o_idx - obs_head;
    wire p_q = ph >= 2'd2 && !s1_acked;
    // the FIFO's ring slots, line and warps, by distance from the read pointer
    wire [LW-1:0] x_l2 = x_s2 == 2'd0 ? x_bl0 : x_s2 == 2'd1 ? x_bl1 : x_bl2;
    wire [W-1:0] x_rw0 = x_rd == 2'd0 ? x_bw0 : x_rd == 2'd1 ? x_bw1 : x_bw2;
    wire [W-1:0] x_rw1 = x_s1 == 2'd0 ? x_bw0 : x_s1 == 2'd1 ? x_bw1 : x_bw2;
    wire [W-1:0] x_rw2 = x_s2 == 2'd0 ? x_bw0 : x_s2 == 2'd1 ? x_bw1 : x_bw2;
    wire p_fifo_s2 = (flush_valid && flush_line == s2_line && flush_warps[ww])
        || (x_nr > 0 && x_l0 == s2_line && x_rw0[ww]) || (x_nr > 1 && x_l1 == s2_line && x_rw1[ww])
        || (x_nr > 2 && x_l2 == s2_line && x_rw2[ww]);
    wire [4*W-1:0] x_fsmf = {x_fsm3, x_fsm2, x_fsm1, x_fsm0};
    wire [3:0] p_j;
    generate for (ge2 = 0; ge2 < 4; ge2 = ge2 + 1) begin : xpe
        wire [1:0] aj = ge2 - x_epold;
        assign p_j[ge2] = !d_dead[ge2] && x_fsmf[W*ge2 + ww] && d_aw <= aj;
    end endgenerate
    // per entry: a live persist of S2's line with ww's bit older than O; the
    // exact hook of its line names it (but the entry of a store of the line
    // answered now is that store's: its hook is written at the end of this
    // cycle)
    wire [N-1:0] p_old2, p_hook;
    generate for (gi = 0; gi < N; gi = gi + 1) begin : xp
        wire [LW-1:0] l = alv[LW*gi +: LW];
        wire [IW-1:0] a = gi - obs_head;
        wire pers = alive[gi] && atv[3*gi +: 3] == 3'd1;
        assign p_old2[gi] = pers && l == s2_line && awv[W*gi + ww] && a < p_ao;
        assign p_hook[gi] = !pers || ((rsp_store && rline == l) ? rsp_idx == gi : hv[l] && hi[l] == gi);
    end endgenerate
    // the registered eviction compare ob (warp g's oldest ordering entry is
    // older than r2's k), for a live k
    wire [W-1:0] x_ob;
    wire [W-1:0] p_ob;
    wire [IW-1:0] p_ak = x_r2k - obs_head;
    genvar gp, gq;
    generate for (gp = 0; gp < W; gp = gp + 1) begin : xob
        wire [IW-1:0] q0;
        for (gq = 0; gq < IW; gq = gq + 1) begin : xb
            assign q0[gq] = x_q0p[W*gq + gp];
        end
        wire [IW-1:0] a0 = q0 - obs_head;
        assign p_ob[gp] = qn[2*gp +: 2] != 2'd0 && a0 < p_ak;
    end endgenerate
    wire [W-1:0] x_fsmr;
    wire [14:0] x_pmo_ok;
    // 14: a store answered now: a performed one's entry is the youngest of
    // the PB; its entry is younger than its warp's live ordering entries
    wire [IW-1:0] p_ari = rsp_idx - obs_head, p_ayr = x_yr - obs_head;
    assign x_pmo_ok[14] = !(rsp_store && rsp_warp < W)
        || ((rsp_kind != PERFORMED || rsp_idx == d_y) && (x_nrs == 2'd0 || p_ayr < p_ari));
    // 13: a store answered now (performed or coalesced): no flush of its
    // line is queued (it was not busy at its decision, and the head did not
    // flush the line then)
    wire p_fifo_rl = (flush_valid && flush_line == rline) || (x_nr > 0 && x_l0 == rline)
        || (x_nr > 1 && x_l1 == rline) || (x_nr > 2 && x_l2 == rline);
    assign x_pmo_ok[13] = !(rsp_store && p_fifo_rl);
    // 12: the response is its request's (warp), and a performed eviction's
    // line has no live persist entry (its hook is cleared at the end of the
    // cycle); an eviction is never coalesced
    wire [N-1:0] p_pl;
    generate for (gi = 0; gi < N; gi = gi + 1) begin : xpl
        assign p_pl[gi] = alive[gi] && atv[3*gi +: 3] == 3'd1 && alv[LW*gi +: LW] == rline;
    end endgenerate
    assign x_pmo_ok[12] = (!rsp_valid || rsp_warp == sw[3])
        && !(rsp_valid && rop == 3'd7 && rsp_kind == COALESCED) && !(rsp_evict && p_pl != 0);
    // 11: a masked write of pb_warps (pending or landed) is an allocation
    // (whole word) or a coalescing (sets exactly its bits: data = mask): the
    // forwarding ORs the data in
    assign x_pmo_ok[11] = (!x_mwe || x_mwm == x_ones || x_mwd == x_mwm)
        && (!x_m2we || x_m2m == x_ones || x_m2w == x_m2m);
    // 9: the FSM register is the OR of the epochs' FSM masks
    assign x_pmo_ok[9] = x_fsmr == (x_fsm0 | x_fsm1 | x_fsm2 | x_fsm3);
    // 10: h_ok: the head entry is a persist none of whose warps is in FSM
    assign x_pmo_ok[10] = pb_empty || x_hok == (x_ht == 3'd1 && (x_hw & x_fsmr) == 0);
    // 8: with r2 valid and its k live: ob as the queues say
    assign x_pmo_ok[8] = !(x_r2v && alive[x_r2k]) || x_ob == p_ob;
    // 0: O's entry, while live, is a live ordering entry naming ww, after O
    assign x_pmo_ok[0] = !o_live || (ph >= 2'd2 && aord[o_idx] && awv[W*o_idx + ww]);
    // 1: the head moved at most one entry since the last cycle (a reset
    // cycle zeroes both)
    assign x_pmo_ok[1] = obs_head == hprev || obs_head == hprev + 1'b1;
    // 2: armed, O live: S1's entry, while live, is older than O's
    assign x_pmo_ok[2] = !(p_q && o_live && d_p && d_s1) || d_as1 < p_ao;
    // 3: armed, O retired: S1 has left the PB, and ww is gated by the FSM of
    // an epoch no older than the witness flush's
    assign x_pmo_ok[3] = !(p_q && !o_live) || ((!d_p || (x_fifo_wl && !d_s1)) && p_j != 0);
    // 4: S2 seen, S1 not acked: no queued flush of S2's line carries ww
    assign x_pmo_ok[4] = !(ph == 2'd3 && !s1_acked) || !p_fifo_s2;
    // 5: S2 seen, S1 not acked, O live: no live persist of S2's line with
    // ww's bit is older than O
    assign x_pmo_ok[5] = !(ph == 2'd3 && !s1_acked && o_live) || p_old2 == 0;
    // 6: exact hooks: every live persist entry is named by its line's hook;
    // the requests in r1 and r2 carry their line's hook (none answered since)
    assign x_pmo_ok[6] = &p_hook;
    // (and the requests in flight that name a line name distinct lines:
    // requirement 1, assumed only when a request is taken)
    wire r1_names = sop[1] == 3'd0 || sop[1] == 3'd7, r2_names = sop[2] == 3'd0 || sop[2] == 3'd7;
    wire r3_names = sop[3] == 3'd0 || sop[3] == 3'd7;
    wire p_n1 = sv[1] && r1_names, p_n2 = sv[2] && r2_names, p_n3 = sv[3] && r3_names;
    assign x_pmo_ok[7] = rst_cyc
        || ((!p_n1 || (x_r1pbv == hv[sl[1]] && (!x_r1pbv || x_r1pbi == hi[sl[1]])))
        && (!p_n2 || (x_r2pbv == hv[sl[2]] && (!x_r2pbv || x_r2pbi == hi[sl[2]])))
        && !(p_n1 && p_n2 && sl[1] == sl[2]) && !(p_n1 && p_n3 && sl[1] == sl[3])
        && !(p_n2 && p_n3 && sl[2] == sl[3]));
`endif
endmodule
