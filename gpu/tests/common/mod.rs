//! Helpers for the directed GPU-model tests: small programs built in Rust,
//! runs that must finish, and unloaded memory latencies taken from a fresh
//! `MemSystem` of the same configuration.

#![allow(dead_code)]

use sbrp_gpu::mem::{Access, MemReq, MemSystem};
use sbrp_gpu::presets::preset;
use sbrp_gpu::{Gpu, GpuConfig, RunOpts, RunReport};
use sbrp_trace::program::{Addrs, CtaCode, FileProgram, Instr, KernelInfo, Space, Values};
use sbrp_trace::Scope;

/// Base of the PM lines the tests use.
pub const PM: u64 = 0xF000_0000;
/// Base of the volatile (GDDR) lines.
pub const VOL: u64 = 0x2000_0000;
/// A flag word.
pub const FLAG: u64 = 0x1000_0000;

/// A preset by name (panics on a typo).
pub fn cfg(name: &str) -> GpuConfig {
    preset(name).unwrap_or_else(|| panic!("no preset {name}"))
}

/// The byte address of line `i` of `base` for `cfg`.
pub fn line_addr(cfg: &GpuConfig, base: u64, i: u64) -> u64 {
    base + i * cfg.l1.line as u64
}

/// A full-line access: 32 lanes of `line / 32` bytes each (4 B with 128-B lines).
fn full(cfg: &GpuConfig, addr: u64) -> (u8, Addrs) {
    let size = (cfg.l1.line / 32) as u8;
    (
        size,
        Addrs::Strided {
            base: addr,
            stride: size as i64,
        },
    )
}

/// Store of the whole line at `addr` in `space`.
pub fn st(cfg: &GpuConfig, space: Space, addr: u64) -> Instr {
    let (size, addrs) = full(cfg, addr);
    Instr::St {
        space,
        size,
        mask: !0,
        addrs,
        values: Values::Seq { first: 1, step: 1 },
    }
}

/// Load of the whole line at `addr` in `space`.
pub fn ld(cfg: &GpuConfig, space: Space, addr: u64) -> Instr {
    let (size, addrs) = full(cfg, addr);
    Instr::Ld {
        space,
        size,
        mask: !0,
        addrs,
    }
}

pub fn compute(cycles: u32) -> Instr {
    Instr::Compute { cycles }
}

pub fn prel(scope: Scope, space: Space, flag: u64, value: u64) -> Instr {
    Instr::PRel {
        scope,
        space,
        flag,
        value,
    }
}

pub fn pacq(scope: Scope, space: Space, flag: u64, want: u64) -> Instr {
    Instr::PAcq {
        scope,
        space,
        flag,
        want,
        mask: !0,
    }
}

/// A kernel of `grid` CTAs of `block` threads.
pub fn kernel(grid: u32, block: u32, regs: u32, smem: u32) -> KernelInfo {
    KernelInfo {
        name: format!("k{grid}x{block}"),
        grid,
        block,
        regs,
        smem,
    }
}

/// A program of kernels, each with its CTAs' code.
pub fn program(kernels: Vec<(KernelInfo, Vec<CtaCode>)>) -> FileProgram {
    let (ks, code): (Vec<KernelInfo>, Vec<Vec<CtaCode>>) = kernels.into_iter().unzip();
    FileProgram {
        name: "directed".into(),
        kernels: ks,
        code: code.into_iter().map(Into::into).collect(),
        ..FileProgram::default()
    }
}

/// One kernel of one CTA whose warps run `warps`.
pub fn one_cta(warps: Vec<Vec<Instr>>) -> FileProgram {
    let block = 32 * warps.len() as u32;
    program(vec![(kernel(1, block, 0, 0), vec![CtaCode { warps }])])
}

/// Runs `prog` on a fresh GPU of `cfg`; the run must finish cleanly.
pub fn run(cfg: &GpuConfig, prog: &FileProgram) -> RunReport {
    cfg.validate().expect("valid config");
    let mut gpu = Gpu::with_model_units(cfg).expect("unit params");
    let r = gpu.run(prog, RunOpts::default());
    assert!(
        r.finished,
        "{:?}: did not finish: {:?} {:?}",
        cfg.model, r.deadlock, r.failures
    );
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    r
}

/// Cycles of the (single) kernel after its launch latency.
pub fn busy(cfg: &GpuConfig, r: &RunReport) -> u64 {
    assert_eq!(r.kernels.len(), 1);
    r.kernels[0].cycles - cfg.core.kernel_launch_latency as u64
}

/// Unloaded completion time (`Done.at - now`) of one full-line access on a
/// fresh memory system of `cfg`.
pub fn unloaded(cfg: &GpuConfig, access: Access, pm: bool) -> u64 {
    let mut m = MemSystem::new(cfg);
    let now = 1000;
    let sectors = ((1u32 << cfg.sectors()) - 1) as u8;
    let d = m.send(
        now,
        &MemReq {
            sm: 0,
            line: PM / cfg.l1.line as u64,
            sectors,
            access,
            pm,
        },
    );
    d.at - now
}

pub fn is_sbrp(cfg: &GpuConfig) -> bool {
    cfg.model.persist().has_unit()
}

/// Runs `prog` under epoch or GPM on a GPU built without units
/// (`Gpu::with_model_units` checks the persist buffer's limits even when
/// there is no persist buffer).
pub fn run_no_unit(cfg: &GpuConfig, prog: &FileProgram) -> RunReport {
    assert!(!is_sbrp(cfg));
    cfg.validate().expect("valid config");
    let mut gpu = Gpu::new(cfg, &mut |_| unreachable!("epoch and GPM have no unit"));
    let r = gpu.run(prog, RunOpts::default());
    assert!(r.finished, "{:?} {:?}", r.deadlock, r.failures);
    r
}
