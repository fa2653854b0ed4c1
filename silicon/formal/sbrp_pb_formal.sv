// Formal wrapper of the SBRP persist buffer unit (docs/microarch.md), proved
// with Yosys's SAT-based temporal induction (silicon/formal/prove.ys, `sbrp prove`).
//
// The unit `sbrp_pb` is the generated Verilog with extra output ports that
// show its state (silicon/src/instrument.rs): fv_r_<reg> is
// a register, fv_m_<mem> = {we, wa, word[D-1], ..., word[0]} a memory with
// its write port. The wrapper's inputs are free: every request, ack,
// drain_all and reset sequence is considered.
//
// Each property is enabled by a define (one proof per property):
//   CHECK_ACTR         ACTR never underflows or exceeds its bound
//   CHECK_OVERFLOW     the PB never overflows
//   CHECK_FSM_GATE     no persist leaves while gated by FSM with ACTR non-zero
//   CHECK_RELEASE      ODM/EDM warps are released within BOUND quiet cycles
//   CHECK_FLUSH_ORDER  no flushed line has an older ordering entry of its warps
//   CHECK_INV_DRAIN    invariants CHECK_RELEASE needs (proved with it)
//   CHECK_INV_ORDER    invariants CHECK_FLUSH_ORDER needs (proved with it)
module sbrp_pb_formal #(
    parameter N = 16,   // entries
    parameter IW = 4,   // log2 N
    parameter W = 4,    // warps
    parameter L = 16,   // lines
    parameter LW = 4,   // log2 L
    parameter A = 8,    // ACTR bits
    parameter BOUND = 288  // 2N + 2^A
) (
    input clock,
    input rst,
    input req_valid,
    input [2:0] req_op,
    input [5:0] req_warp,
    input [LW-1:0] req_line,
    input ack,
    input drain_all
);
    wire req_ready, req_wait, flush_valid, flush_evict, inv_pm, idle, obs_full, obs_drain;
    wire [LW-1:0] flush_line;
    wire [W-1:0] flush_warps, stall, obs_odm, obs_edm, obs_fsm;
    wire [A-1:0] obs_actr;
    wire [IW-1:0] obs_head, obs_tail;
    wire [3*N+IW:0] fv_m_type;
    wire [W*N+IW:0] fv_m_warps;
    wire [N+IW:0] fv_m_snapv;
    wire [IW*N+IW:0] fv_m_snapi;
    wire [IW-1:0] fv_r_didx, fv_r_loi;
    wire fv_r_lov;

    sbrp_pb dut (
        .clock(clock), .rst(rst), .req_valid(req_valid), .req_op(req_op),
        .req_warp(req_warp), .req_line(req_line), .ack(ack), .drain_all(drain_all),
        .req_ready(req_ready), .req_wait(req_wait), .flush_valid(flush_valid),
        .flush_line(flush_line), .flush_warps(flush_warps), .flush_evict(flush_evict),
        .inv_pm(inv_pm), .stall(stall), .idle(idle), .obs_odm(obs_odm), .obs_edm(obs_edm),
        .obs_fsm(obs_fsm), .obs_actr(obs_actr), .obs_head(obs_head), .obs_tail(obs_tail),
        .obs_full(obs_full), .obs_drain(obs_drain),
        .fv_m_type(fv_m_type), .fv_m_warps(fv_m_warps), .fv_m_snapv(fv_m_snapv),
        .fv_m_snapi(fv_m_snapi), .fv_r_didx(fv_r_didx), .fv_r_loi(fv_r_loi),
        .fv_r_lov(fv_r_lov)
    );

    localparam [A-1:0] ACTR_MAX = {A{1'b1}};

    // ---- derived state (start of the cycle) ----
    wire [IW-1:0] used = obs_tail - obs_head;
    wire [IW+1:0] count = obs_full ? N : {2'b00, used};
    wire type_we = fv_m_type[3*N+IW];
    wire [IW-1:0] type_wa = fv_m_type[3*N +: IW];

    // Per entry i: its age (i - head), live, type, warps.
    wire [IW*N-1:0] age_v;
    wire [N-1:0] live_v, ord_v, stall_v, persist_v;
    genvar g;
    generate for (g = 0; g < N; g = g + 1) begin : entry
        wire [IW-1:0] idx = g;
        wire [2:0] t = fv_m_type[3*g +: 3];
        assign age_v[IW*g +: IW] = idx - obs_head;
        assign live_v[g] = obs_full || (age_v[IW*g +: IW] < used);
        assign ord_v[g] = t >= 3'd2;
        // dFence (3), pAcq device (6), pRel device (7): the types that stall in ODM.
        assign stall_v[g] = (t == 3'd3) || (t == 3'd6) || (t == 3'd7);
        assign persist_v[g] = t == 3'd1;
    end endgenerate
    wire [IW-1:0] age_didx = fv_r_didx - obs_head;
    wire [IW-1:0] age_loi = fv_r_loi - obs_head;
    wire [IW-1:0] age_wa = type_wa - obs_head;
    wire live_didx = obs_full || (age_didx < used);
    wire live_loi = obs_full || (age_loi < used);
    wire live_wa = obs_full || (age_wa < used);
    wire [2:0] type_loi = fv_m_type[3*fv_r_loi +: 3];
    wire [2:0] type_at_wa = fv_m_type[3*type_wa +: 3];

    // ---- the previous cycle ----
    reg p_valid, p_rst, p_flush, p_ack;
    reg [A-1:0] p_actr;
    reg [IW+1:0] p_count;
    always @(posedge clock) begin
        p_valid <= 1'b1;
        p_rst <= rst;
        p_flush <= flush_valid;
        p_ack <= ack;
        p_actr <= obs_actr;
        p_count <= count;
    end

`ifdef CHECK_ACTR
    // No flush starts at ACTR's maximum (open point 14) ...
    wire actr_no_flush_at_max = !(flush_valid && obs_actr == ACTR_MAX);
    // ... and ACTR moves by the flushes and the acks of the last cycle,
    // computed one bit wider: a wrap (overflow or underflow) breaks it.
    wire [A:0] actr_expect = {1'b0, p_actr} + {{A{1'b0}}, p_flush}
                             - {{A{1'b0}}, p_ack && (p_actr != 0)};
    wire actr_moves = !p_valid || (p_rst ? (obs_actr == 0) : ({1'b0, obs_actr} == actr_expect));
    always @* begin
        assert (actr_no_flush_at_max);
        assert (actr_moves);
    end
`endif

`ifdef CHECK_OVERFLOW
    // full means head == tail, and occupancy moves by at most one entry a
    // cycle: an allocation into a full PB would wrap it from N to 1.
    wire full_ptrs = !obs_full || (obs_head == obs_tail);
    wire count_step = !p_valid || (p_rst ? (count == 0) :
        ((count == p_count) || (count == p_count + 1) || (count + 1 == p_count)));
    always @* begin
        assert (full_ptrs);
        assert (count_step);
    end
`endif

`ifdef CHECK_FSM_GATE
    // A flush (head or eviction) of a persist whose warps meet FSM waits for ACTR 0.
    wire fsm_gate = !(flush_valid && obs_actr != 0 && (flush_warps & obs_fsm) != 0);
    always @* assert (fsm_gate);
`endif

`ifdef CHECK_INV_DRAIN
    // I0: full means head == tail.
    wire inv_full = !obs_full || (obs_head == obs_tail);
    // I1: a pending drain target is a live entry.
    wire inv_drain = !obs_drain || live_didx;
    // I2: a warp is in ODM exactly when a live stalling entry names it; no
    // two live stalling entries name the same warp (a warp in ODM issues
    // nothing); such an entry lies at or before the pending drain target.
    reg inv_odm;
    reg [W-1:0] named;
    integer i2;
    always @* begin
        inv_odm = 1'b1;
        named = 0;
        for (i2 = 0; i2 < N; i2 = i2 + 1) begin
            if (live_v[i2] && stall_v[i2]) begin
                if ((named & fv_m_warps[W*i2 +: W]) != 0)
                    inv_odm = 1'b0;
                named = named | fv_m_warps[W*i2 +: W];
                if (!obs_drain || age_v[IW*i2 +: IW] > age_didx)
                    inv_odm = 1'b0;
            end
        end
        if (named != obs_odm)
            inv_odm = 1'b0;
    end
    always @* begin
        assert (inv_full);
        assert (inv_drain);
        assert (inv_odm);
    end
`endif

`ifdef CHECK_INV_ORDER
    wire inv_full_o = !obs_full || (obs_head == obs_tail);
    // I3: lo is the youngest live ordering entry (none when lo_valid is 0).
    reg inv_lo;
    integer i3;
    always @* begin
        inv_lo = 1'b1;
        if (fv_r_lov && !(live_loi && type_loi >= 3'd2))
            inv_lo = 1'b0;
        for (i3 = 0; i3 < N; i3 = i3 + 1) begin
            if (live_v[i3] && ord_v[i3] &&
                (!fv_r_lov || age_v[IW*i3 +: IW] > age_loi))
                inv_lo = 1'b0;
        end
    end
    // I4: every live persist's snapshot (v, s) is older than the persist and
    // at or after every live ordering entry older than it.
    reg inv_snap;
    integer k4, i4;
    reg [IW-1:0] s4;
    always @* begin
        inv_snap = 1'b1;
        s4 = 0;
        for (k4 = 0; k4 < N; k4 = k4 + 1) begin
            s4 = fv_m_snapi[IW*k4 +: IW] - obs_head;  // age of the snapshot
            for (i4 = 0; i4 < N; i4 = i4 + 1) begin
                if (live_v[k4] && persist_v[k4] && live_v[i4] && ord_v[i4] &&
                    age_v[IW*i4 +: IW] < age_v[IW*k4 +: IW] &&
                    !(fv_m_snapv[k4] && age_v[IW*i4 +: IW] <= s4 && s4 < age_v[IW*k4 +: IW]))
                    inv_snap = 1'b0;
            end
        end
    end
    always @* begin
        assert (inv_full_o);
        assert (inv_lo);
        assert (inv_snap);
    end
`endif

`ifdef CHECK_RELEASE
    // Environment of the bound: a cycle is quiet when no request is issued,
    // reset is low and an ack arrives whenever ACTR is non-zero. q counts the
    // quiet cycles before this one (saturating).
    wire quiet = !rst && !req_valid && (obs_actr == 0 || ack);
    reg [15:0] q;
    always @(posedge clock)
        q <= !quiet ? 16'd0 : (q > BOUND ? q : q + 16'd1);
    // Ranking: what is left before the stalled warps are released. With a
    // drain pending, two cycles per entry up to the target plus ACTR; then
    // ACTR acks and one cycle to clear EDM.
    wire [15:0] rank = obs_drain
        ? 16'd2 * ({{(16-IW){1'b0}}, age_didx} + 16'd1) + {{(16-A){1'b0}}, obs_actr} + 16'd1
        : {{(16-A){1'b0}}, obs_actr} + 16'd1;
    wire release_rank = (stall == 0) || (q + rank <= BOUND);
    // The property: after BOUND quiet cycles no warp is in ODM or EDM.
    wire release_bound = (q < BOUND) || (stall == 0);
    always @* begin
        assert (release_rank);
        assert (release_bound);
    end
`endif

`ifdef CHECK_FLUSH_ORDER
    // An eviction flushes entry k (the address of the HOLE written to pb_type
    // this cycle): it is a live persist, and no live entry older than k is an
    // ordering entry naming one of the flushed warps. (A head flush has no
    // older entry at all; its ordering is the FSM gate, CHECK_FSM_GATE.)
    reg flush_order;
    integer i5;
    always @* begin
        flush_order = 1'b1;
        if (flush_valid && flush_evict) begin
            if (!(type_we && type_at_wa == 3'd1 && live_wa))
                flush_order = 1'b0;
            for (i5 = 0; i5 < N; i5 = i5 + 1) begin
                if (live_v[i5] && age_v[IW*i5 +: IW] < age_wa && ord_v[i5] &&
                    (fv_m_warps[W*i5 +: W] & flush_warps) != 0)
                    flush_order = 1'b0;
            end
        end
    end
    always @* assert (flush_order);
`endif
endmodule
