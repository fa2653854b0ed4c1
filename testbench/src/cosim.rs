//! `sbrp cosim` as one library call: the chosen engine (model, Verilator, or
//! both in lockstep) on a workload (traces with their expectations, chained
//! random traces, or raw fuzz stimulus), returning a report to print.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::error::{BenchError, Result};
pub use sbrp_iface::stimulus::Profile;
use sbrp_trace::Trace;

use crate::engine::Engine;
use crate::lockstep::Mismatch;
use crate::suites::{
    litmus_files, load_trace, rtl_and_model, run_fuzz_with, run_random, run_trace, skip_reason,
    Outcome, RandomOutcome, Rtl, RunOpts,
};

/// What runs.
pub enum Workload {
    /// Named traces (a litmus directory or one file), each with its expectations.
    Traces(Vec<(String, Trace)>),
    /// Chained constrained-random traces.
    Random { seed: u64, cycles: u64 },
    /// Raw per-cycle stimulus straight into the unit (no front end).
    Fuzz {
        seed: u64,
        cycles: u64,
        profile: Profile,
    },
}

impl Workload {
    /// The project's litmus suite (embedded), parsed and checked.
    pub fn litmus() -> Result<Workload> {
        Ok(Workload::Traces(crate::litmus::litmus_traces()?))
    }

    /// Every `*.trace` of `dir`, parsed and checked before anything is built.
    pub fn litmus_dir(dir: &Path) -> Result<Workload> {
        let traces = litmus_files(dir)?
            .into_iter()
            .map(|f| Ok((trace_name(&f), load_trace(&f)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Workload::Traces(traces))
    }

    /// One trace file; it must fit the unit (`p`), else the error names file:line.
    pub fn trace(file: &Path, p: &sbrp_iface::PbParams) -> Result<Workload> {
        let t = load_trace(file)?;
        sbrp_sim_fast::frontend::check_fits(&t, p)?;
        Ok(Workload::Traces(vec![(trace_name(file), t)]))
    }
}

fn trace_name(f: &Path) -> String {
    f.file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "trace".into())
}

/// One trace's result.
pub enum TraceResult {
    /// The trace needs more than the unit has (e.g. more warps).
    Skipped {
        name: String,
        why: String,
    },
    Ran {
        name: String,
        outcome: Box<Outcome>,
    },
}

/// What ran and how it ended.
pub enum CosimResult {
    Traces(Vec<TraceResult>),
    Random(RandomOutcome),
    Fuzz {
        seed: u64,
        cycles: u64,
        mismatch: Option<Mismatch>,
    },
}

/// A whole `cosim` run.
pub struct CosimReport {
    /// The Verilated RTL's source ("generated" or the file) and its build time in seconds.
    pub rtl: Option<(String, f64)>,
    pub result: CosimResult,
    /// Seconds spent running (after the build).
    pub secs: f64,
}

impl CosimReport {
    /// True when every run passed (no mismatch, no failed expectation).
    pub fn passed(&self) -> bool {
        match &self.result {
            CosimResult::Traces(v) => v.iter().all(|t| match t {
                TraceResult::Skipped { .. } => true,
                TraceResult::Ran { outcome, .. } => outcome.ok(),
            }),
            CosimResult::Random(r) => r.fails.is_empty() && r.mismatch.is_none(),
            CosimResult::Fuzz { mismatch, .. } => mismatch.is_none(),
        }
    }
}

/// Builds what `opts.engine` needs and runs `work`.
pub fn cosim(opts: &RunOpts, work: &Workload) -> Result<CosimReport> {
    if let Workload::Fuzz { .. } = work {
        if opts.engine != Engine::Lockstep {
            return Err(BenchError::Invalid(
                "the fuzz suite compares the RTL with the model: it runs on the lockstep engine only".into(),
            ));
        }
    }
    let rtl = if opts.engine.needs_verilator() {
        let t = Instant::now();
        let r = Rtl::build(opts)?;
        let what = opts
            .rtl
            .as_ref()
            .map(|p: &PathBuf| p.display().to_string())
            .unwrap_or_else(|| "generated".into());
        Some((r, what, t.elapsed().as_secs_f64()))
    } else {
        None
    };
    let built = rtl.as_ref().map(|(r, _, _)| r);
    let t0 = Instant::now();
    let result = match work {
        Workload::Random { seed, cycles } => {
            CosimResult::Random(run_random(*seed, *cycles, opts, built)?)
        }
        Workload::Fuzz {
            seed,
            cycles,
            profile,
        } => {
            let r = built.expect("the lockstep engine builds the RTL");
            let (a, b) = rtl_and_model(opts, r)?;
            CosimResult::Fuzz {
                seed: *seed,
                cycles: *cycles,
                mismatch: run_fuzz_with(*seed, *cycles, *profile, a, b),
            }
        }
        Workload::Traces(traces) => {
            let mut v = vec![];
            for (name, t) in traces {
                if let Some(why) = skip_reason(t, &opts.params) {
                    v.push(TraceResult::Skipped {
                        name: name.clone(),
                        why,
                    });
                    continue;
                }
                let outcome = run_trace(t, opts, built, name)?;
                v.push(TraceResult::Ran {
                    name: name.clone(),
                    outcome: Box::new(outcome),
                });
            }
            CosimResult::Traces(v)
        }
    };
    Ok(CosimReport {
        rtl: rtl.map(|(_, what, secs)| (what, secs)),
        result,
        secs: t0.elapsed().as_secs_f64(),
    })
}
