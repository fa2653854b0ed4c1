//! `sbrp crash`: a crash campaign (`docs/checker.md`, "Crash campaigns") on
//! one app under one preset: the run's durable image at every cycle where it
//! changed (or a sample), the app's invariant before and after functional
//! recovery, the persistency checker on the run's record, and for some
//! points the recovery kernels on the GPU model.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use sbrp_testbench::crash::{check_points_with, recovery_runs, Points, RecoveryRun};
use sbrp_testbench::gpu_run::Overrides;
use sbrp_testbench::gpu_run::{resolve_config, ConfigSource};
use sbrp_testbench::suite::{checker_model, run_app, AppRunOpts};
use sbrp_trace::check;
use serde::Serialize;

use crate::args::{jobs, parse_sets, FaultArg, GpuFaultArg};
use crate::Verdict;

#[derive(Args)]
pub struct CrashArgs {
    /// gpkvs, hm, srad, reduction, mq or scan (or a variant, e.g. reduction-block-final).
    #[arg(long)]
    app: String,
    /// A preset (`sbrp run --list-presets`).
    #[arg(long, default_value = "sbrp-near")]
    preset: String,
    /// Input size in the app's unit (default: the artifact's).
    #[arg(long)]
    size: Option<u64>,
    /// Every SM's persist buffer model with a deliberate deviation (negative controls).
    #[arg(long, value_enum, default_value = "none")]
    unit_fault: FaultArg,
    /// A deliberate deviation of the GPU model's persistency actions.
    #[arg(long, value_enum, default_value = "none")]
    gpu_fault: GpuFaultArg,
    /// Crash points drawn at random (with --seed) among the durable points.
    #[arg(long, conflicts_with_all = ["every", "at"])]
    points: Option<usize>,
    /// Every cycle at which the durable image changed (the default).
    #[arg(long)]
    every: bool,
    /// One crash point: the durable image after this cycle.
    #[arg(long, value_name = "CYCLE", conflicts_with = "every")]
    at: Option<u64>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run the recovery kernels on the GPU model for K crash points spread
    /// over the run, and compare their image with the functional recovery.
    #[arg(long, value_name = "K", default_value_t = 3)]
    recover_sim: usize,
    /// Use this saved execution record of the same app, size and preset
    /// (`sbrp bench --record`) instead of running it.
    #[arg(long, value_name = "RECORD")]
    from_record: Option<PathBuf>,
    /// Write the campaign's report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Override one configuration value, e.g. `--set pm.reorder=true` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Behave like the paper's artifact (as `sbrp run --artifact`).
    #[arg(long)]
    artifact: bool,
    /// Threads (default: the cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Check each distinct image with the app's whole invariant and
    /// recovery, even where it has an incremental form (slower; to compare).
    #[arg(long)]
    full_check: bool,
}

/// What `sbrp crash --json` writes.
#[derive(Clone, Debug, Serialize)]
pub struct CrashReport {
    pub app: String,
    pub size: u64,
    pub preset: String,
    pub unit_fault: String,
    pub gpu_fault: String,
    pub run_cycles: u64,
    pub points: sbrp_testbench::crash::PointsReport,
    pub checker: check::Report,
    pub recovery: Vec<RecoveryRun>,
    pub recovery_worst: Option<u64>,
    pub recovery_median: Option<u64>,
    /// Wall time of the run (or of reading the record), of the crash
    /// points, of the checker (beside the points and the recovery runs)
    /// and of the recovery runs.
    pub run_secs: f64,
    pub points_secs: f64,
    pub checker_secs: f64,
    pub recovery_secs: f64,
    /// Whether the points were checked incrementally (`App::incremental`).
    pub incremental: bool,
    pub secs: f64,
    pub ok: bool,
}

pub fn run(a: &CrashArgs) -> Result<Verdict> {
    let threads = jobs(a.jobs)?;
    if a.points == Some(0) {
        bail!("--points 0: at least 1 (or --every)");
    }
    if let Some(j) = &a.json {
        crate::run::check_output("--json", j)?;
    }
    let app = sbrp_workloads::app(&a.app, a.size).map_err(|e| anyhow::anyhow!("--app: {e}"))?;
    let over = Overrides {
        artifact: a.artifact,
        set: parse_sets(&a.set)?,
    };
    let cfg = resolve_config(&ConfigSource::Preset(a.preset.clone()), &over)?;
    let build = sbrp_testbench::sweep::build_of(&a.preset);
    let t0 = std::time::Instant::now();
    let (ex, run_cycles) = match &a.from_record {
        Some(f) => {
            let ex = crate::check::read_record(f)?;
            let c = ex.cycles;
            (ex, c)
        }
        None => {
            let o = AppRunOpts {
                keep_record: true,
                overrides: over.clone(),
                unit_fault: a.unit_fault.into(),
                gpu_fault: a.gpu_fault.into(),
                ..AppRunOpts::new(build)
            };
            let r = run_app(app.as_ref(), &a.preset, &o)?;
            if !r.finished {
                bail!(
                    "{} under {}: the run did not finish: {}",
                    app.name(),
                    a.preset,
                    r.failures.join("; ")
                );
            }
            let c = r.cycles;
            (r.execution.context("the run kept no record")?, c)
        }
    };
    if let Some(c) = a.at {
        if c >= ex.cycles {
            bail!(
                "--at {c}: beyond the run, which ended at cycle {}",
                ex.cycles
            );
        }
    }
    let init = app.initial_image();
    let which = match (a.points, a.at) {
        (_, Some(c)) => Points::At(c),
        (Some(n), _) => Points::Sample { n, seed: a.seed },
        (None, None) => Points::Every,
    };
    let run_secs = t0.elapsed().as_secs_f64();
    // The checker runs beside the points and the recovery runs.
    let (checker, points, points_secs, recovery) = std::thread::scope(|s| {
        let checker = s.spawn(|| {
            let t = std::time::Instant::now();
            let c = check::check(&ex, &check::Options::new(checker_model(cfg.model)));
            (c, t.elapsed().as_secs_f64())
        });
        let t = std::time::Instant::now();
        let points = check_points_with(app.as_ref(), &init, &ex, which, threads, a.full_check);
        let points_secs = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let recovery = recovery_runs(
            app.as_ref(),
            &a.preset,
            &over,
            &init,
            &ex,
            a.recover_sim,
            threads,
        )
        .map(|r| (r, t.elapsed().as_secs_f64()));
        (checker.join().unwrap(), points, points_secs, recovery)
    });
    let (checker, checker_secs) = checker;
    let checker = checker.map_err(|e| anyhow::anyhow!("{e}"))?;
    let (recovery, recovery_secs) = recovery?;
    let incremental = points.incremental;
    let mut cycles: Vec<u64> = recovery.iter().map(|r| r.cycles).collect();
    cycles.sort_unstable();
    let recovery_ok = recovery
        .iter()
        .all(|r| r.finished && r.differs_at.is_none());
    let ok = points.failed == 0 && checker.ok() && recovery_ok;
    let report = CrashReport {
        app: app.name().into(),
        size: app.size(),
        preset: a.preset.clone(),
        unit_fault: format!("{:?}", a.unit_fault).to_lowercase(),
        gpu_fault: format!("{:?}", a.gpu_fault).to_lowercase(),
        run_cycles,
        recovery_worst: cycles.last().copied(),
        recovery_median: (!cycles.is_empty()).then(|| cycles[(cycles.len() - 1) / 2]),
        points,
        checker,
        recovery,
        run_secs,
        points_secs,
        checker_secs,
        recovery_secs,
        incremental,
        secs: t0.elapsed().as_secs_f64(),
        ok,
    };
    if let Some(j) = &a.json {
        crate::run::write_files(&[(j, serde_json::to_string_pretty(&report)?)])?;
    }
    print(&report, app.size_unit());
    Ok(Verdict::of(ok))
}

fn print(r: &CrashReport, unit: &str) {
    let faults = [("unit fault", &r.unit_fault), ("GPU fault", &r.gpu_fault)]
        .iter()
        .filter(|(_, f)| f.as_str() != "none")
        .map(|(k, f)| format!(" with {k} {f}"))
        .collect::<String>();
    println!(
        "{} ({} {unit}) under {}{faults}: {} cycles, {} durable points",
        r.app, r.size, r.preset, r.run_cycles, r.points.durable_points
    );
    let p = &r.points;
    println!(
        "crash points: {} tried, {} distinct images, {} broken ({:.1} s, {})",
        p.tried,
        p.distinct,
        p.failed,
        r.points_secs,
        if r.incremental {
            "incremental invariant"
        } else {
            "whole invariant per image"
        }
    );
    if let Some(f) = &p.first {
        println!(
            "  first broken at cycle {} ({}): {}",
            f.cycle, f.stage, f.message
        );
    }
    crate::check::print_report(&r.checker, 3, None);
    if !r.recovery.is_empty() {
        let same = r.recovery.iter().filter(|x| x.differs_at.is_none()).count();
        println!(
            "recovery on the GPU model: {} crash points, cycles median {} worst {}; {same} of {} images equal to the functional recovery",
            r.recovery.len(),
            r.recovery_median.unwrap_or(0),
            r.recovery_worst.unwrap_or(0),
            r.recovery.len()
        );
        for x in r
            .recovery
            .iter()
            .filter(|x| x.differs_at.is_some() || !x.finished)
        {
            match x.differs_at {
                Some(a) => println!(
                    "  FAILED: crash at cycle {}: the recovery kernels' image differs at {a:#x}",
                    x.crash_cycle
                ),
                None => println!(
                    "  FAILED: crash at cycle {}: recovery did not finish",
                    x.crash_cycle
                ),
            }
        }
    }
    println!(
        "{} in {:.1} s",
        if r.ok {
            "crash consistent"
        } else {
            "NOT CRASH CONSISTENT"
        },
        r.secs
    );
}
