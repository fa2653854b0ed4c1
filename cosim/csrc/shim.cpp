// C ABI around the Verilated `sbrp_pb` model, loaded by `sbrp-cosim` with
// libloading. One FFI call per clock cycle (`sbrp_pb_step`).
//
// The structs below mirror `PbInC` / `PbOutC` in cosim/src/ffi.rs field for
// field; `sbrp_pb_abi` lets the Rust side check sizes and the ABI version
// before using anything else. Inputs arrive already masked to their port
// widths (the Rust side knows the parameters), so no upper bit of a Verilator
// port variable is ever dirty.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "Vsbrp_pb.h"
#include "verilated.h"
#include "verilated_vcd_c.h"

#define SBRP_EXPORT extern "C" __attribute__((visibility("default")))

// Bump together with SHIM_ABI in cosim/src/ffi.rs when a struct or a
// signature changes.
static const uint32_t SHIM_ABI = 1;

struct PbInC {
    uint32_t req_line;
    uint8_t rst;
    uint8_t req_valid;
    uint8_t req_op;
    uint8_t req_warp;
    uint8_t ack;
    uint8_t drain_all;
    uint8_t _pad[2];
};

struct PbOutC {
    uint64_t flush_warps;
    uint64_t stall;
    uint64_t obs_odm;
    uint64_t obs_edm;
    uint64_t obs_fsm;
    uint32_t flush_line;
    uint32_t obs_actr;
    uint32_t obs_head;
    uint32_t obs_tail;
    uint8_t req_ready;
    uint8_t req_wait;
    uint8_t flush_valid;
    uint8_t flush_evict;
    uint8_t inv_pm;
    uint8_t idle;
    uint8_t obs_full;
    uint8_t obs_drain;
};

struct SbrpPb {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<Vsbrp_pb> top;
    std::unique_ptr<VerilatedVcdC> vcd;  // non-null while a trace is open
    uint64_t time = 0;                   // half cycles simulated
};

SBRP_EXPORT uint32_t sbrp_pb_abi(uint32_t* in_size, uint32_t* out_size) {
    *in_size = sizeof(PbInC);
    *out_size = sizeof(PbOutC);
    return SHIM_ABI;
}

SBRP_EXPORT SbrpPb* sbrp_pb_create() {
    SbrpPb* m = new SbrpPb;
    m->ctx.reset(new VerilatedContext);
    // Must precede the model's construction; costs nothing while no trace is open.
    m->ctx->traceEverOn(true);
    m->ctx->fatalOnError(false);
    m->top.reset(new Vsbrp_pb{m->ctx.get(), "sbrp_pb"});
    m->top->clock = 0;
    return m;
}

SBRP_EXPORT void sbrp_pb_destroy(SbrpPb* m) {
    if (!m) return;
    if (m->vcd) m->vcd->close();
    m->vcd.reset();  // before the model it refers to
    m->top->final();
    m->top.reset();
    m->ctx.reset();
    delete m;
}

SBRP_EXPORT void sbrp_pb_step(SbrpPb* m, const PbInC* in, PbOutC* out) {
    Vsbrp_pb* t = m->top.get();
    t->rst = in->rst;
    t->req_valid = in->req_valid;
    t->req_op = in->req_op;
    t->req_warp = in->req_warp;
    t->req_line = in->req_line;
    t->ack = in->ack;
    t->drain_all = in->drain_all;

    // Clock low: the combinational outputs settle on this cycle's inputs.
    t->clock = 0;
    t->eval();
    if (m->vcd) m->vcd->dump(m->time);
    m->time++;

    out->req_ready = t->req_ready;
    out->req_wait = t->req_wait;
    out->flush_valid = t->flush_valid;
    out->flush_line = t->flush_line;
    out->flush_warps = t->flush_warps;
    out->flush_evict = t->flush_evict;
    out->inv_pm = t->inv_pm;
    out->stall = t->stall;
    out->idle = t->idle;
    out->obs_odm = t->obs_odm;
    out->obs_edm = t->obs_edm;
    out->obs_fsm = t->obs_fsm;
    out->obs_actr = t->obs_actr;
    out->obs_head = t->obs_head;
    out->obs_tail = t->obs_tail;
    out->obs_full = t->obs_full;
    out->obs_drain = t->obs_drain;

    // Rising edge: the state advances.
    t->clock = 1;
    t->eval();
    if (m->vcd) m->vcd->dump(m->time);
    m->time++;
    m->ctx->time(m->time);
}

// Opens a VCD file (closing any open one first). Returns 0 on success, -1 if
// the file could not be opened.
SBRP_EXPORT int sbrp_pb_trace_open(SbrpPb* m, const char* path) {
    if (m->vcd) {
        m->vcd->close();
        m->vcd.reset();
    }
    std::unique_ptr<VerilatedVcdC> vcd{new VerilatedVcdC};
    m->top->trace(vcd.get(), 99);
    vcd->open(path);
    if (!vcd->isOpen()) return -1;
    m->vcd = std::move(vcd);
    return 0;
}

SBRP_EXPORT void sbrp_pb_trace_close(SbrpPb* m) {
    if (!m->vcd) return;
    m->vcd->close();
    m->vcd.reset();
}

// Half cycles simulated so far (the VCD time unit).
SBRP_EXPORT uint64_t sbrp_pb_time(const SbrpPb* m) { return m->time; }
