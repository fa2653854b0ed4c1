//! `sbrp mutate`: the mutation campaign (`sbrp_testbench::mutate`; issue 28
//! item 1, results in `docs/hardware.md` §5): single-site mutants of the
//! generated Verilog through the litmus suite, a short random and fuzz run
//! in lockstep, a fuzz run stressing corners and the proofs; kill counts per
//! check; survivors classified by an equivalence check when asked. Exit 1 when a survivor is a proven gap (its
//! outputs differ from the original's and no check saw it).

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use sbrp_iface::{FlushPolicy, PbParams};
use sbrp_testbench::mutate::{run_campaign, summarize, CampaignOptions, Check, Survivor};

use crate::args::flag_error;
use crate::Verdict;

#[derive(Args, Clone, Debug)]
pub struct MutateArgs {
    /// PB entries (small: the proofs run on every mutant).
    #[arg(long, value_name = "N", default_value_t = 16)]
    entries: u32,
    /// Resident warps per SM.
    #[arg(long, value_name = "W", default_value_t = 4)]
    warps: u32,
    /// L1 cache lines.
    #[arg(long, value_name = "L", default_value_t = 16)]
    lines: u32,
    /// Mutants, spread evenly over the emitted Verilog's sites.
    #[arg(long, value_name = "K", default_value_t = 100)]
    count: usize,
    /// Run only these mutants of the sample, comma-separated ids (e.g.
    /// 27,35 or m027,m035); default all.
    #[arg(long, value_name = "LIST")]
    only: Option<String>,
    /// Offset of the sample and seed of the random and fuzz runs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Cycles of each mutant's random run (through the SM front end).
    #[arg(long, value_name = "C", default_value_t = 20_000)]
    random_cycles: u64,
    /// Cycles of each mutant's fuzz and corners runs (2 M: 20,000 left 10
    /// killable mutants alive, 1 M one, docs/hardware.md §5).
    #[arg(long, value_name = "C", default_value_t = 2_000_000)]
    fuzz_cycles: u64,
    /// Checks to run, comma-separated: litmus, random, fuzz, corners (the
    /// fuzz run stressing ACTR's maximum and bogus acks), proofs (the
    /// bounded proofs at their default depths, as `sbrp prove --rtl`),
    /// unbounded (handshake, actr, lost, coalesce, durable and pmo by
    /// k-induction, as `sbrp prove --unbounded --rtl`; a base-case failure
    /// or a counterexample to induction kills, a step time limit of 300 s
    /// does not).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "litmus,random,fuzz,corners,proofs"
    )]
    checks: String,
    /// Time limit of each survivor's equivalence check, seconds (0: none,
    /// the default: on the 2026-11-29 survivors it gave no answer in 120 s).
    #[arg(long, value_name = "S", default_value_t = 0)]
    equiv_seconds: u32,
    /// Working directory: each mutant's Verilog, waveforms of divergences, logs.
    #[arg(long, value_name = "DIR", default_value = "out/mutate")]
    out: PathBuf,
}

pub fn run(a: &MutateArgs) -> Result<Verdict> {
    let p = PbParams {
        entries: a.entries,
        warps: a.warps,
        lines: a.lines,
        actr_bits: 8,
        window: 6,
        policy: FlushPolicy::Window,
    };
    p.validate().map_err(flag_error)?;
    if a.count == 0 {
        bail!("--count 0: at least one mutant");
    }
    let mut checks = vec![];
    for c in a.checks.split(',').map(str::trim) {
        match Check::ALL.iter().find(|k| k.name() == c) {
            Some(&k) => checks.push(k),
            None => bail!(
                "--checks: unknown check {c:?}: litmus, random, fuzz, corners, proofs, unbounded"
            ),
        }
    }
    let mut only = vec![];
    for t in a.only.iter().flat_map(|l| l.split(',')).map(str::trim) {
        match t.trim_start_matches('m').parse::<usize>() {
            Ok(i) if i < a.count => only.push(i),
            _ => bail!("--only: {t:?} is not a mutant id below --count {}", a.count),
        }
    }
    let o = CampaignOptions {
        params: p,
        count: a.count,
        only,
        seed: a.seed,
        random_cycles: a.random_cycles,
        fuzz_cycles: a.fuzz_cycles,
        checks,
        equiv_seconds: a.equiv_seconds,
        dir: a.out.clone(),
    };
    println!(
        "sbrp mutate: entries {} warps {} lines {}, {} mutants, checks {}",
        p.entries, p.warps, p.lines, a.count, a.checks
    );
    let excluded = |x: &std::collections::BTreeSet<String>| {
        println!(
            "original: every check passes{}",
            if x.is_empty() {
                String::new()
            } else {
                format!(
                    " but litmus traces {} (left out of the litmus kill criterion)",
                    x.iter().cloned().collect::<Vec<_>>().join(", ")
                )
            }
        )
    };
    let results = run_campaign(&o, excluded, |r| {
        let kills: Vec<&str> = r
            .kills
            .iter()
            .filter(|(_, k)| *k)
            .map(|(c, _)| c.name())
            .collect();
        let verdict = match (&r.stillborn, r.survivor) {
            (Some(e), _) => format!("stillborn ({e})"),
            (None, Some(Survivor::Equivalent)) => "SURVIVED: equivalent".into(),
            (None, Some(Survivor::Gap(f))) => {
                format!("SURVIVED: GAP (outputs differ at cycle {f})")
            }
            (None, Some(Survivor::Unclassified)) => "SURVIVED: unclassified".into(),
            (None, None) => {
                // the traces and properties that failed (a run's own name aside)
                let what: Vec<&str> = r
                    .failures
                    .iter()
                    .map(String::as_str)
                    .filter(|f| !Check::ALL.iter().any(|c| c.name() == *f))
                    .collect();
                match what.is_empty() {
                    true => format!("killed by {}", kills.join(", ")),
                    false => format!("killed by {} ({})", kills.join(", "), what.join(", ")),
                }
            }
        };
        println!(
            "m{:03} {:>6.1} s  {}  {}",
            r.id, r.seconds, r.mutation, verdict
        );
    })?;
    let s = summarize(&results);
    println!(
        "{} mutants: {} killed ({} stillborn), {} survived: {} equivalent, {} gaps, {} unclassified",
        s.mutants,
        s.killed,
        s.stillborn,
        s.mutants - s.killed,
        s.equivalent,
        s.gaps,
        s.unclassified
    );
    for (c, ran, killed) in &s.by_check {
        println!("  {:<7} killed {killed} of {ran}", c.name());
    }
    Ok(Verdict::of(s.gaps == 0))
}
