//! Argument groups shared by the subcommands: the unit's parameters
//! (`docs/microarch.md` §1), flattened into every command that builds a unit;
//! the model's deliberate faults (`--fault`, `--unit-fault`); `--set` pairs.

use anyhow::{anyhow, bail, Result};
use clap::{Args, ValueEnum};
use sbrp_iface::{FlushPolicy, ParamError, PbParams};
use sbrp_sim_fast::Fault;

/// `--policy` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PolicyArg {
    /// Flush while ACTR < window.
    Window,
    /// Flush as soon as ordering allows.
    Eager,
    /// Flush only when forced.
    Lazy,
}

impl From<PolicyArg> for FlushPolicy {
    fn from(p: PolicyArg) -> FlushPolicy {
        match p {
            PolicyArg::Window => FlushPolicy::Window,
            PolicyArg::Eager => FlushPolicy::Eager,
            PolicyArg::Lazy => FlushPolicy::Lazy,
        }
    }
}

/// `--fault` values: a fault injected into the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FaultArg {
    None,
    IgnoreCoalesceOrdering,
    IgnoreFsm,
    WindowOffByOne,
    DfenceNoWait,
    GlobalRelease,
    EvictIgnoreOrdering,
    SkipGated,
}

impl From<FaultArg> for Fault {
    fn from(f: FaultArg) -> Fault {
        match f {
            FaultArg::None => Fault::None,
            FaultArg::IgnoreCoalesceOrdering => Fault::IgnoreCoalesceOrdering,
            FaultArg::IgnoreFsm => Fault::IgnoreFsm,
            FaultArg::WindowOffByOne => Fault::WindowOffByOne,
            FaultArg::DfenceNoWait => Fault::DFenceNoWait,
            FaultArg::GlobalRelease => Fault::GlobalRelease,
            FaultArg::EvictIgnoreOrdering => Fault::EvictIgnoreOrdering,
            FaultArg::SkipGated => Fault::SkipGated,
        }
    }
}

/// A deliberate deviation of the GPU model's persistency actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GpuFaultArg {
    None,
    /// Epoch and GPM ordering points do not flush the PM lines.
    SkipEpochFlush,
    /// SBRP treats device-scope acquires and releases as block scope.
    DropScope,
}

impl From<GpuFaultArg> for sbrp_gpu::sm::Fault {
    fn from(f: GpuFaultArg) -> sbrp_gpu::sm::Fault {
        use sbrp_gpu::sm::Fault;
        match f {
            GpuFaultArg::None => Fault::None,
            GpuFaultArg::SkipEpochFlush => Fault::SkipEpochFlush,
            GpuFaultArg::DropScope => Fault::DropScope,
        }
    }
}

/// `--jobs N`: at least 1, at most 256; default the cores.
pub fn jobs(j: Option<usize>) -> Result<usize> {
    match j {
        None => Ok(std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)),
        Some(n @ 1..=256) => Ok(n),
        Some(n) => bail!("--jobs {n}: allowed 1 to 256"),
    }
}

/// `--set KEY=VALUE` arguments (GPU configuration overrides) as pairs (the values are checked when applied).
pub fn parse_sets(set: &[String]) -> Result<Vec<(String, String)>> {
    set.iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => Ok((k.trim().to_string(), v.trim().to_string())),
            None => bail!("--set {kv}: expected KEY=VALUE"),
        })
        .collect()
}

/// Unit parameters shared by the subcommands.
#[derive(Args, Clone, Debug)]
pub struct ParamArgs {
    /// PB entries: a power of two from 16 to 512.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub entries: u32,
    /// Resident warps per SM: 4, 8, 16, 32 or 64.
    #[arg(long, value_name = "W", default_value_t = 32)]
    pub warps: u32,
    /// L1 cache lines: a power of two from --entries to 1024.
    #[arg(long, value_name = "L", default_value_t = 512)]
    pub lines: u32,
    /// Flush window: outstanding flushes allowed under the window policy (1 to 2^actr_bits - 1).
    #[arg(long, value_name = "K", default_value_t = 6)]
    pub window: u32,
    /// ACTR width in bits: 4 or 8.
    #[arg(long, value_name = "A", default_value_t = 8)]
    pub actr_bits: u32,
    /// Flush policy.
    #[arg(long, value_enum, value_name = "P", default_value = "window")]
    pub policy: PolicyArg,
}

impl ParamArgs {
    /// The validated parameters; an error names the flag and the allowed range.
    pub fn params(&self) -> Result<PbParams> {
        let p = PbParams {
            entries: self.entries,
            warps: self.warps,
            lines: self.lines,
            actr_bits: self.actr_bits,
            window: self.window,
            policy: self.policy.into(),
        };
        p.validate().map_err(flag_error)?;
        Ok(p)
    }
}

/// A parameter error phrased for the command line (`--entries` for `entries`).
pub fn flag_error(e: ParamError) -> anyhow::Error {
    anyhow!("invalid {} {}: allowed {}", e.flag(), e.value, e.allowed)
}

pub fn print_params(p: &PbParams) {
    println!(
        "parameters: entries {} warps {} lines {} actr_bits {} window {} policy {}",
        p.entries, p.warps, p.lines, p.actr_bits, p.window, p.policy
    );
}
