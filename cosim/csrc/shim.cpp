// C ABI around the Verilated `sbrp_pb` model, loaded by `sbrp-cosim` with
// libloading. One FFI call per clock cycle (`sbrp_pb_step`).
//
// Ports cross the ABI as two uint64_t arrays in the order of the port table
// (sbrp_iface::ports::PORTS, docs/microarch.md §2). The per-port copy code,
// the port count and the names come from sbrp_ports.h, which sbrp-cosim
// generates from that table for every build (cosim/src/builder.rs,
// ports_header); the Rust side checks count and names at load. Inputs arrive
// already masked to their port widths (the Rust side knows the parameters),
// so no upper bit of a Verilator port variable is ever dirty.
//
// No VCD here: waveforms are written in Rust from the ports this returns.

#include <cstdint>
#include <memory>

#include "Vsbrp_pb.h"
#include "verilated.h"
#include "sbrp_ports.h"

#define SBRP_EXPORT extern "C" __attribute__((visibility("default")))

// Bump together with SHIM_ABI in cosim/src/ffi.rs when a signature changes.
static const uint32_t SHIM_ABI = 2;

struct SbrpPb {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<Vsbrp_pb> top;
    uint64_t time = 0;  // half cycles simulated
};

SBRP_EXPORT uint32_t sbrp_pb_abi(uint32_t* n_in, uint32_t* n_out) {
    *n_in = SBRP_N_IN;
    *n_out = SBRP_N_OUT;
    return SHIM_ABI;
}

SBRP_EXPORT const char* sbrp_pb_port_names() { return SBRP_PORT_NAMES; }

SBRP_EXPORT SbrpPb* sbrp_pb_create() {
    SbrpPb* m = new SbrpPb;
    m->ctx.reset(new VerilatedContext);
    m->ctx->fatalOnError(false);
    m->top.reset(new Vsbrp_pb{m->ctx.get(), "sbrp_pb"});
    m->top->clock = 0;
    return m;
}

SBRP_EXPORT void sbrp_pb_destroy(SbrpPb* m) {
    if (!m) return;
    m->top->final();
    m->top.reset();
    m->ctx.reset();
    delete m;
}

SBRP_EXPORT void sbrp_pb_step(SbrpPb* m, const uint64_t* in, uint64_t* out) {
    Vsbrp_pb* t = m->top.get();
    sbrp_set_inputs(t, in);

    // Clock low: the combinational outputs settle on this cycle's inputs.
    t->clock = 0;
    t->eval();
    m->time++;
    sbrp_get_outputs(t, out);

    // Rising edge: the state advances.
    t->clock = 1;
    t->eval();
    m->time++;
    m->ctx->time(m->time);
}

// Half cycles simulated so far.
SBRP_EXPORT uint64_t sbrp_pb_time(const SbrpPb* m) { return m->time; }
