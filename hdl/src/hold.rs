//! The top of a unit with response stages (`docs/microarch.md` §2.1, "The
//! flush hold"): the sliced unit as generated (module `sbrp_pb_core`) and
//! around it the flush hold, which sees the ports only. A store taken at
//! the ports is remembered for the round trip; while one of the flush FIFO
//! head's line is past its decision and its response not yet past the
//! ports, `flush_valid` reads 0 and the core does not see `flush_ready`.
//! The same as `sbrp_iface::slices::FlushHold` (the model's and rust-hdl's
//! simulation's), written from the port table so that the top keeps the
//! spec's ports. Without response stages there is no wrapper: the Verilog
//! is the unsliced unit's, text for text.

use sbrp_iface::ports::{Dir, PORTS};
use sbrp_iface::slices::{FlushHold, Slices};
use sbrp_iface::PbParams;

/// Name of the wrapped unit's module.
pub const CORE_MODULE: &str = "sbrp_pb_core";

/// `[N-1:0] ` for a vector, nothing for one bit.
fn range(bits: u32) -> String {
    if bits > 1 {
        format!("[{}:0] ", bits - 1)
    } else {
        String::new()
    }
}

/// The module `top` (ports of [`PORTS`]) holding the flush port around an
/// instance of [`CORE_MODULE`].
pub fn wrapper(top: &str, p: &PbParams, s: Slices) -> String {
    let lw = p.line_bits();
    let (lo, hi) = FlushHold::new(s, lw).window();
    let names: Vec<&str> = PORTS.iter().map(|q| q.name).collect();
    let mut v = format!(
        "\n// {top}: the unit with register slices {s} (REQ,RSP,ACK; docs/microarch.md\n\
         // section 2.1): the core and the flush hold of its response stages.\n\
         module {top}(clock,{});\n    input wire  clock;\n",
        names.join(",")
    );
    for q in PORTS {
        let dir = match q.dir {
            Dir::In => "input",
            Dir::Out => "output",
        };
        v.push_str(&format!(
            "    {dir} wire  {}{};\n",
            range(q.bits(p)),
            q.name
        ));
    }
    v.push_str(
        "\n    // the stores taken at the ports, st1 the last cycle's (0 at the end of\n    \
         // a reset cycle, as the unit's registers)\n    reg rst_q;\n",
    );
    for k in 1..=hi {
        v.push_str(&format!(
            "    reg st{k}_v;\n    reg {}st{k}_line;\n",
            range(lw)
        ));
    }
    let terms: Vec<String> = (lo..=hi)
        .map(|k| format!("(st{k}_v & (st{k}_line == flush_line))"))
        .collect();
    v.push_str(&format!(
        "    // held: a store of the head's line taken {lo} to {hi} cycles ago (past its\n    \
         // decision, its response not yet past the ports)\n    \
         wire flush_hold = {};\n    wire core_flush_valid;\n    \
         assign flush_valid = core_flush_valid & ~flush_hold;\n",
        terms.join(" | ")
    ));
    v.push_str(
        "    always @(posedge clock) begin\n        rst_q <= rst;\n        if (rst_q) begin\n",
    );
    for k in 1..=hi {
        v.push_str(&format!(
            "            st{k}_v <= 1'b0; st{k}_line <= {lw}'d0;\n"
        ));
    }
    v.push_str("        end else begin\n");
    v.push_str(&format!(
        "            st1_v <= req_valid & req_ready & (req_op == 3'd0);\n            \
         st1_line <= (req_valid & req_ready & (req_op == 3'd0)) ? req_line : {lw}'d0;\n"
    ));
    for k in 2..=hi {
        v.push_str(&format!(
            "            st{k}_v <= st{}_v; st{k}_line <= st{}_line;\n",
            k - 1,
            k - 1
        ));
    }
    v.push_str("        end\n    end\n\n");
    let conns: Vec<String> = std::iter::once(".clock(clock)".to_string())
        .chain(PORTS.iter().map(|q| match q.name {
            "flush_ready" => ".flush_ready(flush_ready & ~flush_hold)".to_string(),
            "flush_valid" => ".flush_valid(core_flush_valid)".to_string(),
            n => format!(".{n}({n})"),
        }))
        .collect();
    v.push_str(&format!(
        "    {CORE_MODULE} core(\n        {}\n    );\nendmodule\n",
        conns.join(",\n        ")
    ));
    v
}
