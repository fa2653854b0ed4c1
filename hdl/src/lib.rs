//! RTL of the SBRP persist buffer unit (`docs/microarch.md`), written with
//! rust-hdl.
//!
//! * [`generate_verilog`]: Verilog of the unit for one parameter set, top
//!   module `sbrp_pb`.
//! * [`new_sim`]: the same RTL stepped by rust-hdl's own simulator, as a
//!   [`PbUnit`].
//!
//! The unit is [`SbrpPb`] (`pb.rs`: the ports and the wiring of one block
//! per concern: `pipe.rs`, `decide.rs`, `head.rs`, `store.rs`, `warps.rs`,
//! `epochs.rs`, `fifo.rs`, `inval.rs`, and the memories of `blocks.rs`),
//! generic over the const parameters (W, log2 W, log2 entries, log2 lines,
//! ACTR bits). Runtime [`PbParams`] are validated
//! and dispatched to the matching instance by a macro (`dispatch!`) that
//! lists every allowed combination of `sbrp-iface`'s parameter sets; each
//! combination is one monomorphized instance.

mod blocks;
mod decide;
mod epochs;
mod fifo;
mod head;
mod hold;
mod inval;
mod pb;
mod pipe;
mod store;
mod warps;

pub use blocks::{memory_module, SyncMem, SyncMemMasked};
pub use pb::SbrpPb;

use rust_hdl::core::prelude::*;
use sbrp_iface::slices::{FlushHold, Slices};
use sbrp_iface::{ParamError, PbIn, PbOut, PbParams, PbUnit};

/// Name of the top module of the generated Verilog.
pub const TOP_MODULE: &str = "sbrp_pb";

/// Verilator configuration (`.vlt`) that waives the lint warnings rust-hdl's
/// output is known to raise (each one justified in the file). Give it to
/// every Verilator run on the generated Verilog, written as `sbrp_pb.v`.
pub const VERILATOR_WAIVERS: &str = include_str!("../../constraints/lint/verilator_waivers.vlt");

/// Errors of the generator.
#[derive(Debug, thiserror::Error)]
pub enum HdlError {
    /// A parameter outside its allowed range.
    #[error(transparent)]
    Params(#[from] ParamError),
    /// rust-hdl's structural check of the unit failed (a generator bug).
    #[error("rust-hdl check of the unit failed for {tag}: {detail}")]
    Check { tag: String, detail: String },
}

/// Calls `$f::<W, WB, IW, LW, A>($p)` for the instance matching the
/// (validated) parameters `$p`.
macro_rules! dispatch {
    ($f:ident, $p:expr, $s:expr) => {{
        let s: Slices = $s;
        let p: &PbParams = $p;
        match p.warps {
            4 => dispatch!(@iw $f, p, s, 4, 2),
            8 => dispatch!(@iw $f, p, s, 8, 3),
            16 => dispatch!(@iw $f, p, s, 16, 4),
            32 => dispatch!(@iw $f, p, s, 32, 5),
            64 => dispatch!(@iw $f, p, s, 64, 6),
            _ => unreachable!("validated warps"),
        }
    }};
    (@iw $f:ident, $p:ident, $s:ident, $w:literal, $wb:literal) => {
        match $p.idx_bits() {
            4 => dispatch!(@lw $f, $p, $s, $w, $wb, 4, [4, 5, 6, 7, 8, 9, 10]),
            5 => dispatch!(@lw $f, $p, $s, $w, $wb, 5, [5, 6, 7, 8, 9, 10]),
            6 => dispatch!(@lw $f, $p, $s, $w, $wb, 6, [6, 7, 8, 9, 10]),
            7 => dispatch!(@lw $f, $p, $s, $w, $wb, 7, [7, 8, 9, 10]),
            8 => dispatch!(@lw $f, $p, $s, $w, $wb, 8, [8, 9, 10]),
            9 => dispatch!(@lw $f, $p, $s, $w, $wb, 9, [9, 10]),
            _ => unreachable!("validated entries"),
        }
    };
    (@lw $f:ident, $p:ident, $s:ident, $w:literal, $wb:literal, $iw:literal, [$($lw:literal),+]) => {
        match $p.line_bits() {
            $( $lw => dispatch!(@a $f, $p, $s, $w, $wb, $iw, $lw), )+
            _ => unreachable!("validated lines"),
        }
    };
    (@a $f:ident, $p:ident, $s:ident, $w:literal, $wb:literal, $iw:literal, $lw:literal) => {
        match $p.actr_bits {
            4 => $f::<$w, $wb, $iw, $lw, 4>($p, $s),
            8 => $f::<$w, $wb, $iw, $lw, 8>($p, $s),
            _ => unreachable!("validated actr_bits"),
        }
    };
}

fn build<const W: usize, const WB: usize, const IW: usize, const LW: usize, const A: usize>(
    p: &PbParams,
    s: Slices,
) -> SbrpPb<W, WB, IW, LW, A> {
    let mut uut = SbrpPb::<W, WB, IW, LW, A>::new(p.window, p.policy).with_slices(s);
    uut.connect_all();
    uut
}

fn verilog_of<const W: usize, const WB: usize, const IW: usize, const LW: usize, const A: usize>(
    p: &PbParams,
    s: Slices,
) -> Result<String, HdlError> {
    let uut = build::<W, WB, IW, LW, A>(p, s);
    check_all(&uut).map_err(|e| HdlError::Check {
        tag: p.tag(),
        detail: format!("{e:?}"),
    })?;
    let v = rust_hdl::core::prelude::generate_verilog(&uut);
    Ok(if s.rsp > 0 {
        // Response stages: the unit as the core, the flush hold around it.
        let mut core = rename_top(&v, hold::CORE_MODULE);
        core.push_str(&hold::wrapper(TOP_MODULE, p, s));
        core
    } else {
        rename_top(&v, TOP_MODULE)
    })
}

fn sim_of<const W: usize, const WB: usize, const IW: usize, const LW: usize, const A: usize>(
    p: &PbParams,
    s: Slices,
) -> Box<dyn PbUnit> {
    Box::new(RtlSim {
        p: *p,
        latency: s.rsp_latency(),
        uut: Box::new(build::<W, WB, IW, LW, A>(p, s)),
        hold: FlushHold::new(s, p.line_bits()),
        rst_q: false,
    })
}

/// Verilog of the unit with parameters `p`; the top module is `sbrp_pb`, its
/// sub-modules are `sbrp_pb$<field>`.
pub fn generate_verilog(p: &PbParams) -> Result<String, HdlError> {
    generate_verilog_sliced(p, Slices::NONE)
}

/// Verilog of the unit with parameters `p` and register slices `s` at its
/// boundary (`docs/microarch.md` §2.1); the same ports, longer latencies.
pub fn generate_verilog_sliced(p: &PbParams, s: Slices) -> Result<String, HdlError> {
    p.validate()?;
    s.validate()?;
    dispatch!(verilog_of, p, s)
}

/// The RTL with parameters `p`, stepped through rust-hdl's simulator.
pub fn new_sim(p: &PbParams) -> Result<Box<dyn PbUnit>, ParamError> {
    new_sim_sliced(p, Slices::NONE)
}

/// [`new_sim`] with register slices `s` (§2.1).
pub fn new_sim_sliced(p: &PbParams, s: Slices) -> Result<Box<dyn PbUnit>, ParamError> {
    p.validate()?;
    s.validate()?;
    Ok(dispatch!(sim_of, p, s))
}

/// rust-hdl names the top module `top` and each sub-module `top$<path>`:
/// renames the identifier `top` (alone or as the `top$` prefix) to `name`.
fn rename_top(v: &str, name: &str) -> String {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut out = String::with_capacity(v.len() + 1024);
    let mut rest = v;
    let mut prev: Option<char> = None;
    while let Some(pos) = rest.find("top") {
        let before = rest[..pos].chars().last().or(prev);
        let after = rest[pos + 3..].chars().next();
        out.push_str(&rest[..pos]);
        let starts_token = !before.is_some_and(ident);
        let ends_ok = !after.is_some_and(|c| ident(c) && c != '$');
        if starts_token && ends_ok {
            out.push_str(name);
        } else {
            out.push_str("top");
        }
        prev = Some('p');
        rest = &rest[pos + 3..];
    }
    out.push_str(rest);
    out
}

/// Cycles allowed for rust-hdl's simulator to settle a phase.
const SETTLE_ITERS: usize = 1000;

struct RtlSim<const W: usize, const WB: usize, const IW: usize, const LW: usize, const A: usize> {
    p: PbParams,
    /// Response latency with the slices (§2.1).
    latency: usize,
    uut: Box<SbrpPb<W, WB, IW, LW, A>>,
    /// The flush hold of the Verilog's wrapper (response stages, §2.1).
    hold: FlushHold,
    /// `rst` of the last cycle (the hold's reset cycle).
    rst_q: bool,
}

impl<const W: usize, const WB: usize, const IW: usize, const LW: usize, const A: usize>
    RtlSim<W, WB, IW, LW, A>
{
    fn settle(&mut self) {
        assert!(
            simulate(&mut *self.uut, SETTLE_ITERS),
            "rust-hdl simulation of the unit did not settle"
        );
    }
}

impl<const W: usize, const WB: usize, const IW: usize, const LW: usize, const A: usize> PbUnit
    for RtlSim<W, WB, IW, LW, A>
{
    fn params(&self) -> &PbParams {
        &self.p
    }

    fn rsp_latency(&self) -> usize {
        self.latency
    }

    fn step(&mut self, inp: &PbIn) -> PbOut {
        let m = |bits: usize| {
            if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            }
        };
        // The outputs are registers: this cycle's head is known before the inputs.
        let held = self.hold.holds(self.uut.flush_line.val().to_u64() as u32);
        let u = &mut self.uut;
        u.rst.next = inp.rst;
        u.req_valid.next = inp.req_valid;
        u.req_op.next = Bits::from(u64::from(inp.req_op) & 7);
        u.req_warp.next = Bits::from(u64::from(inp.req_warp) & 0x3f);
        u.req_line.next = Bits::from(u64::from(inp.req_line) & m(LW));
        u.req_pbv.next = inp.req_pbv;
        u.req_pbidx.next = Bits::from(u64::from(inp.req_pbidx) & m(IW));
        u.flush_ready.next = inp.flush_ready && !held;
        u.ack_count.next = Bits::from(u64::from(inp.ack_count) & 7);
        u.ack_epoch.next = Bits::from(u64::from(inp.ack_epoch) & 3);
        u.inv_done.next = inp.inv_done;
        u.drain_all.next = inp.drain_all;
        u.clock.next = Clock { clk: false };
        self.settle();
        let u = &self.uut;
        let out = PbOut {
            req_ready: u.req_ready.val(),
            rsp_valid: u.rsp_valid.val(),
            rsp_warp: u.rsp_warp.val().to_u64() as u8,
            rsp_kind: u.rsp_kind.val().to_u64() as u8,
            rsp_idx: u.rsp_idx.val().to_u64() as u32,
            flush_valid: u.flush_valid.val() && !held,
            flush_line: u.flush_line.val().to_u64() as u32,
            flush_warps: u.flush_warps.val().to_u64(),
            flush_evict: u.flush_evict.val(),
            flush_epoch: u.flush_epoch.val().to_u64() as u8,
            inv_req: u.inv_req.val(),
            stall: u.stall.val().to_u64(),
            idle: u.idle.val(),
            error: u.error.val().to_u64() as u8,
            obs_odm: u.obs_odm.val().to_u64(),
            obs_edm: u.obs_edm.val().to_u64(),
            obs_fsm: u.obs_fsm.val().to_u64(),
            obs_actr: u.obs_actr.val().to_u64() as u32,
            obs_head: u.obs_head.val().to_u64() as u32,
            obs_tail: u.obs_tail.val().to_u64() as u32,
            obs_full: u.obs_full.val(),
            obs_drain: u.obs_drain.val(),
            obs_epoch: u.obs_epoch.val().to_u64() as u8,
        };
        self.uut.clock.next = Clock { clk: true };
        self.settle();
        let taken = (inp.req_valid && out.req_ready).then_some((inp.req_op, inp.req_line));
        self.hold.clock(taken, self.rst_q);
        self.rst_q = inp.rst;
        out
    }

    fn name(&self) -> &str {
        "rusthdl"
    }
}
