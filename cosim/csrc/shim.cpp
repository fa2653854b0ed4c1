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
// Waveforms of the ports are written in Rust from what this returns. A
// model built with --trace (VM_TRACE) can also dump every internal signal
// (sbrp_pb_trace_open), through a file object whose failed write marks the
// trace failed and drops the rest: Verilator's own file would abort the
// process or retry forever on a full disk.

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "Vsbrp_pb.h"
#include "verilated.h"
#include "sbrp_ports.h"
#if VM_TRACE
#include "verilated_vcd_c.h"

class SbrpVcdFile : public VerilatedVcdFile {
  public:
    int fd = -1;
    std::string failure;  // empty while every write succeeded
    bool open(const std::string& name) override {
        fd = ::open(name.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) failure = std::strerror(errno);
        return fd >= 0;
    }
    void close() override {
        if (fd >= 0 && ::close(fd) != 0 && failure.empty()) failure = std::strerror(errno);
        fd = -1;
    }
    ssize_t write(const char* bufp, ssize_t len) override {
        ssize_t done = 0;
        while (failure.empty() && fd >= 0 && done < len) {
            ssize_t got = ::write(fd, bufp + done, len - done);
            if (got > 0) {
                done += got;
            } else if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
                continue;
            } else {
                failure = got < 0 ? std::strerror(errno) : "no space left (write returned 0)";
            }
        }
        return len;  // a failed trace drops its data; the simulation goes on
    }
};
#endif

#define SBRP_EXPORT extern "C" __attribute__((visibility("default")))

// Bump together with SHIM_ABI in cosim/src/ffi.rs when a signature changes.
static const uint32_t SHIM_ABI = 3;

struct SbrpPb {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<Vsbrp_pb> top;
    uint64_t time = 0;  // half cycles simulated
#if VM_TRACE
    std::unique_ptr<SbrpVcdFile> file;
    std::unique_ptr<VerilatedVcdC> vcd;
#endif
};

static void dump(SbrpPb* m) {
#if VM_TRACE
    if (m->vcd) m->vcd->dump(m->time);
#else
    (void)m;
#endif
}

// Starts a waveform of every signal into `path`. 0: started; 1: this model
// was built without --trace; 2: the file could not be opened (`err`).
SBRP_EXPORT uint32_t sbrp_pb_trace_open(SbrpPb* m, const char* path, char* err, size_t n) {
#if VM_TRACE
    m->ctx->traceEverOn(true);
    m->file.reset(new SbrpVcdFile);
    m->vcd.reset(new VerilatedVcdC(m->file.get()));
    m->top->trace(m->vcd.get(), 99);
    m->vcd->open(path);
    if (!m->file->failure.empty() || !m->vcd->isOpen()) {
        std::snprintf(err, n, "%s", m->file->failure.empty() ? "cannot open" : m->file->failure.c_str());
        m->vcd.reset();
        m->file.reset();
        return 2;
    }
    return 0;
#else
    (void)m;
    (void)path;
    std::snprintf(err, n, "the model was built without --trace");
    return 1;
#endif
}

// Ends the waveform. 0: complete; 1: a write failed (`err`).
SBRP_EXPORT uint32_t sbrp_pb_trace_close(SbrpPb* m, char* err, size_t n) {
#if VM_TRACE
    if (!m->vcd) return 0;
    m->vcd->close();
    std::string e = m->file->failure;
    m->vcd.reset();
    m->file.reset();
    if (!e.empty()) {
        std::snprintf(err, n, "%s", e.c_str());
        return 1;
    }
#else
    (void)m;
    (void)err;
    (void)n;
#endif
    return 0;
}

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
#if VM_TRACE
    if (m->vcd) m->vcd->close();
    m->vcd.reset();
    m->file.reset();
#endif
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
    dump(m);  // time 2c: the cycle's inputs and combinational outputs
    m->time++;
    sbrp_get_outputs(t, out);

    // Rising edge: the state advances.
    t->clock = 1;
    t->eval();
    dump(m);  // time 2c+1: the state after the edge
    m->time++;
    m->ctx->time(m->time);
}

// Half cycles simulated so far.
SBRP_EXPORT uint64_t sbrp_pb_time(const SbrpPb* m) { return m->time; }
