//! `sbrp prove`: formal proofs of the unit's port contract (`sbrp_silicon`:
//! Yosys to AIGER, yosys-abc PDR / BMC); a failed proof is a failed check (exit 1).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use sbrp_iface::{FlushPolicy, PbParams};

use crate::args::flag_error;
use crate::Verdict;

/// The proofs grow with the state, so their sizes default small and are
/// not the shared unit parameters.
#[derive(Args, Clone, Debug)]
pub struct ProveArgs {
    /// PB entries (small: the proofs grow with the state).
    #[arg(long, value_name = "N", default_value_t = 16)]
    entries: u32,
    /// Resident warps per SM.
    #[arg(long, value_name = "W", default_value_t = 4)]
    warps: u32,
    /// L1 cache lines.
    #[arg(long, value_name = "L", default_value_t = 16)]
    lines: u32,
    /// Prove only this property or cover (actr, handshake, lost, pmo, durable,
    /// coalesce, xblock, release, drain, cover_*), or several separated by
    /// commas; default all.
    #[arg(long, value_name = "NAME")]
    property: Option<String>,
    /// Also run each property's broken variant and require its proof to fail.
    #[arg(long)]
    broken: bool,
    /// Time limit of a PDR run, seconds (0: 600).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pdr_seconds: u32,
    /// Try PDR (a proof for every depth) on each property instead of its
    /// BMC; a property PDR leaves undecided in the time limit is a failed check.
    #[arg(long)]
    pdr: bool,
    /// The deep search: every bounded property's BMC to at least 2N + 10
    /// cycles (42 at 16 entries, where the PB has filled and wrapped), and
    /// the broken variants whose counterexamples lie that deep.
    #[arg(long)]
    deep: bool,
    /// Time limit of one BMC run, seconds (0: none); a run it stops short of
    /// its depth is a failed check (not checked to its depth).
    #[arg(long, value_name = "S", default_value_t = 0)]
    bmc_seconds: u32,
    /// Prove this Verilog file (top module sbrp_pb, the ports of --entries,
    /// --warps, --lines) instead of the generated RTL, as `sbrp cosim --rtl`
    /// simulates one.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["broken", "sabotage"])]
    rtl: Option<PathBuf>,
    /// Prove each property for every depth by k-induction (base case by BMC
    /// to k, then the inductive step; `actr`, `lost`, `coalesce`,
    /// `durable` and `pmo` with their strengthening invariants); a property
    /// not proved so is a failed check.
    #[arg(long)]
    unbounded: bool,
    /// The k of --unbounded (0: each property's own: actr, lost, coalesce,
    /// durable, pmo 2; others 4).
    #[arg(long, value_name = "K", default_value_t = 0)]
    k: u32,
    /// Time limit of an inductive step, seconds (0: each property's own:
    /// lost and durable 1200, coalesce 1500, pmo 3000, others 120; with
    /// CaDiCaL every step takes under a minute at 16 entries and pmo's, the
    /// longest, about 4 minutes at 32).
    #[arg(long, value_name = "S", default_value_t = 0)]
    induction_seconds: u32,
    /// The solver of --unbounded's inductive step: `cadical` (the step as
    /// CNF, CaDiCaL) or `abc` (yosys-abc's `ind`, slower: 1,915 s against
    /// about 45 s for pmo at 16 entries, docs/hardware.md §5).
    #[arg(long, value_name = "cadical|abc", default_value = "cadical")]
    step_solver: sbrp_silicon::StepSolver,
    /// Directory for the Yosys logs; written only when every run behaved as expected.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Test aid: prove each property on its broken variant as if it were
    /// the real RTL, so the proof fails (exit status 1).
    #[arg(long, hide = true)]
    sabotage: bool,
}

pub fn run(a: &ProveArgs) -> Result<Verdict> {
    let p = PbParams {
        entries: a.entries,
        warps: a.warps,
        lines: a.lines,
        actr_bits: 8,
        window: 6,
        policy: FlushPolicy::Window,
    };
    p.validate().map_err(flag_error)?;
    if let Some(n) = &a.property {
        for x in n.split(',') {
            sbrp_silicon::property(x.trim())?;
        }
    }
    if let Some(f) = &a.rtl {
        if !f.is_file() {
            anyhow::bail!("--rtl {}: no such file", f.display());
        }
    }
    println!(
        "sbrp prove: entries {} warps {} lines {} actr_bits {} (yosys-abc){}{}",
        p.entries,
        p.warps,
        p.lines,
        p.actr_bits,
        match &a.rtl {
            Some(f) => format!(", RTL {}", f.display()),
            None => String::new(),
        },
        if a.deep {
            format!(", deep: BMC to {}", sbrp_silicon::deep_depth(p.entries))
        } else if a.unbounded {
            format!(", unbounded: k-induction, step by {}", a.step_solver)
        } else {
            String::new()
        }
    );
    let opts = sbrp_silicon::ProveOptions {
        property: a.property.clone(),
        broken: a.broken,
        out: a.out.clone(),
        sabotage: a.sabotage,
        pdr_seconds: a.pdr_seconds,
        pdr: a.pdr,
        deep: a.deep,
        bmc_seconds: a.bmc_seconds,
        rtl: a.rtl.clone(),
        unbounded: a.unbounded,
        induction_k: a.k,
        induction_seconds: a.induction_seconds,
        step_solver: a.step_solver,
    };
    let r = sbrp_silicon::prove(&p, &opts)?;
    print!("{}", sbrp_silicon::format_proofs(&r));
    if !r.all_as_expected() {
        eprint!(
            "sbrp prove: check failed:\n{}",
            sbrp_silicon::format_proof_failures(&r)
        );
        return Ok(Verdict::Fail);
    }
    if let Some(out) = &a.out {
        println!("wrote the logs in {}", out.display());
    }
    Ok(Verdict::Pass)
}
