//! The mutation campaign (issue 28 item 1; `sbrp mutate`; results in
//! `docs/hardware.md` §5, "Mutation campaign"): automatic single-site
//! mutants of the generated Verilog (`sbrp_tools::sample_mutations`), each
//! run through the checks of the bench as a design given to
//! `sbrp cosim --rtl` and `sbrp prove --rtl` would be: the litmus suite
//! and a short random run in lockstep through the SM front end, fuzz runs
//! in lockstep (the default stimulus and the corners profile), the
//! bounded formal properties at their default depths, and the properties
//! proved for every depth (`unbounded`: k-induction with the invariants)
//! (`docs/microarch.md` is the spec the model and the properties follow).
//! Every check first runs on the unmutated RTL: random, fuzz and the proofs
//! must pass there (else the campaign is refused: such a check cannot tell
//! a mutant from the original), and litmus traces that fail there (their
//! expectations assume the default L1, e.g. `10_eviction` at 16 lines) are
//! excluded from the litmus kill criterion, which is then a lockstep
//! divergence or a failure of a trace that passes on the original.
//! Each check's kills are counted on its own; a mutant no check kills is
//! classified, when asked, by a sequential equivalence check against the
//! original (`sbrp_silicon::equivalence`): equivalent (nothing could kill it), a
//! gap (its outputs differ from the original's in some run, and no check
//! saw it), or undecided.

use std::path::{Path, PathBuf};
use std::time::Instant;

use sbrp_iface::PbParams;
use sbrp_silicon::{Equivalence, ProveOptions};
use sbrp_tools::{sample_mutations, write_atomic, Mutation};

use std::collections::BTreeSet;

use crate::cosim::{cosim, CosimResult, Profile, TraceResult, Workload};
use crate::error::BenchError;
use crate::suites::RunOpts;

/// The checks of the campaign, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Check {
    Litmus,
    Random,
    Fuzz,
    /// The fuzz run with the stimulus of `Profile::Corners` (ACTR at its
    /// maximum, bogus acks).
    Corners,
    Proofs,
    /// The k-induction proofs (`sbrp_silicon::UNBOUNDED`, `sbrp prove
    /// --unbounded`, the step by CaDiCaL): killed when a base case fails or
    /// a step has a counterexample to induction (a step stopped by its
    /// time limit is no kill).
    Unbounded,
}

/// Step time limit of the `unbounded` check, seconds (the original's
/// steps take under a minute at 16 entries).
pub const UNBOUNDED_STEP_SECONDS: u32 = 300;

impl Check {
    pub const ALL: [Check; 6] = [
        Check::Litmus,
        Check::Random,
        Check::Fuzz,
        Check::Corners,
        Check::Proofs,
        Check::Unbounded,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Check::Litmus => "litmus",
            Check::Random => "random",
            Check::Fuzz => "fuzz",
            Check::Corners => "corners",
            Check::Proofs => "proofs",
            Check::Unbounded => "unbounded",
        }
    }
}

/// What `sbrp mutate` runs.
#[derive(Clone, Debug)]
pub struct CampaignOptions {
    pub params: PbParams,
    /// Mutants, spread over the file.
    pub count: usize,
    /// Run only these mutants of the sample (ids; empty: all).
    pub only: Vec<usize>,
    pub seed: u64,
    /// Cycles of the random and fuzz runs of each mutant.
    pub random_cycles: u64,
    pub fuzz_cycles: u64,
    /// The checks to run (the others are reported as not run).
    pub checks: Vec<Check>,
    /// Time limit of a survivor's equivalence check, seconds (0: none run).
    pub equiv_seconds: u32,
    /// Working directory (mutant files, mismatch waveforms, proof logs).
    pub dir: PathBuf,
}

/// A survivor's class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Survivor {
    /// Proved equal to the original at the ports in every cycle.
    Equivalent,
    /// Differs from the original at the ports by this cycle; no check saw it.
    Gap(u32),
    /// The equivalence check gave no answer in its time limit (or was not run).
    Unclassified,
}

/// One mutant's outcome.
#[derive(Clone, Debug)]
pub struct MutantResult {
    pub id: usize,
    pub mutation: Mutation,
    /// Per check that ran: whether it killed the mutant.
    pub kills: Vec<(Check, bool)>,
    /// What failed in the checks that killed it (litmus traces, properties).
    pub failures: Vec<String>,
    /// The mutant could not be built or read (a kill by the tools, counted apart).
    pub stillborn: Option<String>,
    /// For a survivor: its class.
    pub survivor: Option<Survivor>,
    pub seconds: f64,
}

impl MutantResult {
    pub fn killed(&self) -> bool {
        self.stillborn.is_some() || self.kills.iter().any(|(_, k)| *k)
    }
}

/// Kill counts of a campaign.
#[derive(Clone, Debug, Default)]
pub struct CampaignSummary {
    pub mutants: usize,
    pub stillborn: usize,
    /// (check, mutants run through it, killed by it).
    pub by_check: Vec<(Check, usize, usize)>,
    pub killed: usize,
    pub equivalent: usize,
    pub gaps: usize,
    pub unclassified: usize,
}

pub fn summarize(results: &[MutantResult]) -> CampaignSummary {
    let mut s = CampaignSummary {
        mutants: results.len(),
        ..Default::default()
    };
    for c in Check::ALL {
        let ran = results
            .iter()
            .filter(|r| r.kills.iter().any(|(k, _)| *k == c))
            .count();
        let killed = results
            .iter()
            .filter(|r| r.kills.contains(&(c, true)))
            .count();
        if ran > 0 {
            s.by_check.push((c, ran, killed));
        }
    }
    for r in results {
        s.stillborn += r.stillborn.is_some() as usize;
        s.killed += r.killed() as usize;
        match r.survivor {
            Some(Survivor::Equivalent) => s.equivalent += 1,
            Some(Survivor::Gap(_)) => s.gaps += 1,
            Some(Survivor::Unclassified) => s.unclassified += 1,
            None => {}
        }
    }
    s
}

/// The mutants of the campaign: the generated Verilog of `p` and the sample.
pub fn campaign_mutants(
    p: &PbParams,
    count: usize,
    seed: u64,
) -> Result<(String, Vec<Mutation>), BenchError> {
    let v = sbrp_hdl::generate_verilog(p)?;
    let m = sample_mutations(&v, count, seed);
    Ok((v, m))
}

/// The failures of one check's run: for the litmus suite, the traces that
/// failed (a divergence is a failure of its trace); for the others, one
/// entry when the run failed.
fn run_check(
    c: Check,
    o: &CampaignOptions,
    file: &Path,
    dir: &Path,
) -> Result<BTreeSet<String>, String> {
    let failed = |bad: bool| -> BTreeSet<String> {
        if bad {
            BTreeSet::from([c.name().to_string()])
        } else {
            BTreeSet::new()
        }
    };
    let mut ro = RunOpts::new(o.params);
    ro.rtl = Some(file.to_path_buf());
    ro.mismatch_dir = dir.join("mismatch");
    let work = match c {
        Check::Litmus => Workload::litmus().map_err(|e| e.to_string())?,
        Check::Random => Workload::Random {
            seed: o.seed,
            cycles: o.random_cycles,
        },
        Check::Fuzz => Workload::Fuzz {
            seed: o.seed,
            cycles: o.fuzz_cycles,
            profile: Profile::Default,
        },
        Check::Corners => Workload::Fuzz {
            seed: o.seed,
            cycles: o.fuzz_cycles,
            profile: Profile::Corners,
        },
        Check::Proofs => {
            let opts = ProveOptions {
                rtl: Some(file.to_path_buf()),
                ..Default::default()
            };
            let r = sbrp_silicon::prove(&o.params, &opts).map_err(|e| e.to_string())?;
            return Ok(r.unexpected().iter().map(|x| x.property.clone()).collect());
        }
        Check::Unbounded => {
            let opts = ProveOptions {
                property: Some(sbrp_silicon::UNBOUNDED.join(",")),
                rtl: Some(file.to_path_buf()),
                unbounded: true,
                induction_seconds: UNBOUNDED_STEP_SECONDS,
                ..Default::default()
            };
            let r = sbrp_silicon::prove(&o.params, &opts).map_err(|e| e.to_string())?;
            return Ok(unbounded_rejections(&r.runs));
        }
    };
    let r = cosim(&ro, &work).map_err(|e| e.to_string())?;
    Ok(match &r.result {
        CosimResult::Traces(v) => v
            .iter()
            .filter_map(|t| match t {
                TraceResult::Ran { name, outcome } if !outcome.ok() => Some(name.clone()),
                _ => None,
            })
            .collect(),
        _ => failed(!r.passed()),
    })
}

/// The k-induction runs that reject a mutant: a base-case counterexample
/// (the property's name) or a counterexample to induction ("NAME (step)");
/// a step stopped by its time limit rejects nothing.
fn unbounded_rejections(runs: &[sbrp_silicon::ProofRun]) -> BTreeSet<String> {
    runs.iter()
        .filter_map(|run| match run.verdict {
            sbrp_silicon::Verdict::Failed(_) => Some(run.property.clone()),
            _ if run.counterexample_to_induction() => Some(format!("{} (step)", run.property)),
            _ => None,
        })
        .collect()
}

/// The checks on the unmutated RTL: the litmus traces to leave out of the
/// litmus kill criterion (they fail on the original); an error when
/// another check fails there.
fn baseline(o: &CampaignOptions, orig: &str) -> Result<BTreeSet<String>, BenchError> {
    let dir = o.dir.join("original");
    std::fs::create_dir_all(&dir).map_err(|e| BenchError::Io {
        what: format!("create {}", dir.display()),
        source: e,
    })?;
    let file = dir.join("sbrp_pb.v");
    write_atomic(&file, orig.as_bytes())?;
    let mut excluded = BTreeSet::new();
    for &c in &o.checks {
        let f = run_check(c, o, &file, &dir).map_err(BenchError::Invalid)?;
        match (c, f.is_empty()) {
            (_, true) => {}
            (Check::Litmus, false) => excluded = f,
            (_, false) => {
                return Err(BenchError::Invalid(format!(
                    "the {} check fails on the unmutated RTL ({}): it cannot tell a mutant from the original",
                    c.name(),
                    f.into_iter().collect::<Vec<_>>().join(", ")
                )))
            }
        }
    }
    Ok(excluded)
}

/// Runs the campaign: the checks on the original first ([`baseline`]:
/// `excluded` sees the litmus traces left out), then `each` sees every
/// mutant's result as it ends.
pub fn run_campaign(
    o: &CampaignOptions,
    excluded: impl FnOnce(&BTreeSet<String>),
    mut each: impl FnMut(&MutantResult),
) -> Result<Vec<MutantResult>, BenchError> {
    let (orig, muts) = campaign_mutants(&o.params, o.count, o.seed)?;
    std::fs::create_dir_all(&o.dir).map_err(|e| BenchError::Io {
        what: format!("create {}", o.dir.display()),
        source: e,
    })?;
    let skip = baseline(o, &orig)?;
    excluded(&skip);
    let mut out = vec![];
    for (id, m) in muts.into_iter().enumerate() {
        if !o.only.is_empty() && !o.only.contains(&id) {
            continue;
        }
        let t0 = Instant::now();
        let dir = o.dir.join(format!("m{id:03}"));
        std::fs::create_dir_all(&dir).map_err(|e| BenchError::Io {
            what: format!("create {}", dir.display()),
            source: e,
        })?;
        let text = m.apply(&orig).expect("a site of the text it was found in");
        let file = dir.join("sbrp_pb.v");
        write_atomic(&file, text.as_bytes())?;
        let mut r = MutantResult {
            id,
            mutation: m,
            kills: vec![],
            failures: vec![],
            stillborn: None,
            survivor: None,
            seconds: 0.0,
        };
        for &c in &o.checks {
            match run_check(c, o, &file, &dir) {
                Ok(f) => {
                    let kept: Vec<String> = f.into_iter().filter(|t| !skip.contains(t)).collect();
                    r.kills.push((c, !kept.is_empty()));
                    r.failures.extend(kept);
                }
                Err(e) => {
                    // Verilator or Yosys refused the mutant: no check can run it.
                    r.stillborn = Some(e.lines().next().unwrap_or("").to_string());
                    break;
                }
            }
        }
        if !r.killed() {
            r.survivor = Some(match o.equiv_seconds {
                0 => Survivor::Unclassified,
                t => match sbrp_silicon::equivalence(&orig, &text, t, &dir) {
                    Ok((Equivalence::Equivalent, _)) => Survivor::Equivalent,
                    Ok((Equivalence::Differs(f), _)) => Survivor::Gap(f),
                    Ok((Equivalence::Undecided, _)) => Survivor::Unclassified,
                    Err(e) => return Err(BenchError::Invalid(format!("equivalence check: {e}"))),
                },
            });
        }
        r.seconds = t0.elapsed().as_secs_f64();
        each(&r);
        out.push(r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The campaign's default sample: 100 distinct single-site mutants of
    /// the 16-entry, 4-warp RTL, of every kind, each changing the text.
    #[test]
    fn a_hundred_distinct_mutants_of_every_kind() {
        let p = sbrp_silicon::prove_params(16, 4, 16, 8).unwrap();
        let (v, m) = campaign_mutants(&p, 100, 1).unwrap();
        assert_eq!(m.len(), 100);
        let mut sites: Vec<_> = m.iter().map(|x| (x.line, x.col, x.to.clone())).collect();
        sites.sort();
        sites.dedup();
        assert_eq!(sites.len(), 100);
        for k in [
            sbrp_tools::MutationKind::Operator,
            sbrp_tools::MutationKind::Constant,
            sbrp_tools::MutationKind::Negation,
            sbrp_tools::MutationKind::Condition,
        ] {
            assert!(m.iter().any(|x| x.kind == k), "no {k:?} mutant");
        }
        for x in &m {
            assert_ne!(x.apply(&v).unwrap(), v, "{x}");
        }
    }

    /// The `unbounded` check kills on a base-case counterexample or a
    /// counterexample to induction, not on a step's time limit nor a proof.
    #[test]
    fn unbounded_kills_on_counterexamples_only() {
        let run = |name: &str, verdict, summary: &str| sbrp_silicon::ProofRun {
            property: name.into(),
            broken: false,
            cover: false,
            variant: None,
            engine: "cadical k=2".into(),
            verdict,
            seconds: 1.0,
            summary: summary.into(),
            log: String::new(),
        };
        use sbrp_silicon::Verdict::*;
        let step = |what: &str| {
            format!("Inductive step (CaDiCaL, 2 frames, 9 variables, 9 clauses): {what}")
        };
        let runs = [
            run(
                "handshake",
                Failed(3),
                "Output 0 of miter was asserted in frame 3.",
            ),
            run(
                "actr",
                NotInductive(2),
                &step("SATISFIABLE: a counterexample to induction"),
            ),
            run(
                "lost",
                NotInductive(2),
                &step("UNKNOWN: the 300 s limit reached"),
            ),
            run("pmo", Inductive(2), &step("UNSATISFIABLE: inductive")),
        ];
        let got: Vec<String> = unbounded_rejections(&runs).into_iter().collect();
        assert_eq!(got, ["actr (step)", "handshake"]);
    }

    /// The equivalence check's controls: the campaign's m000 (`warp_ok`
    /// inverted, killed by every suite; the first miter called it
    /// equivalent) differs from the original after the reset; the original
    /// is equivalent to itself.
    #[test]
    fn equivalence_knows_a_killed_mutant() {
        let p = sbrp_silicon::prove_params(16, 4, 16, 8).unwrap();
        let (v, m) = campaign_mutants(&p, 100, 1).unwrap();
        assert!(m[0].context.contains("warp_ok"), "{}", m[0]);
        let dir = tempfile::tempdir().unwrap();
        let bad = m[0].apply(&v).unwrap();
        let (r, _) = sbrp_silicon::equivalence(&v, &bad, 60, dir.path()).unwrap();
        assert!(matches!(r, Equivalence::Differs(f) if f > 1), "{r:?}");
        let (r, _) = sbrp_silicon::equivalence(&v, &v, 60, dir.path()).unwrap();
        assert_eq!(r, Equivalence::Equivalent);
    }
}
