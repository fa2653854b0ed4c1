//! `sbrp trace`, `sbrp bench` and `sbrp suite`: the paper's six applications
//! (`sbrp-workloads`) as program files, one run on the GPU model, or the
//! whole study with its figures (`docs/results.md`).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use sbrp_testbench::crash::{median_worst, recovery_runs, Points, PointsReport};
use sbrp_testbench::gpu_run::{resolve_config, ConfigSource, Overrides, Shadow};
use sbrp_testbench::plot;
use sbrp_testbench::suite::{
    figures, run_app, run_jobs, suite_jobs, AppRunOpts, BenchRun, SuiteCheck, Table, RECOVERY_RUNS,
    SUITE_RUNS,
};
use sbrp_workloads::{App, Build};

use crate::args::{jobs as jobs_arg, parse_sets, FaultArg, GpuFaultArg};
use crate::Verdict;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BuildArg {
    /// The binary run under SBRP and epoch.
    Gpu,
    /// The GPM build (a device fence after every persistency op).
    Gpm,
}

impl BuildArg {
    fn build(self) -> Build {
        match self {
            BuildArg::Gpu => Build::Gpu,
            BuildArg::Gpm => Build::Gpm,
        }
    }
}

fn make_app(name: &str, size: Option<u64>) -> Result<Box<dyn App>> {
    sbrp_workloads::app(name, size).map_err(|e| anyhow!("{e}"))
}

#[derive(Args)]
pub struct TraceArgs {
    /// gpkvs, hm, srad, reduction, mq or scan.
    #[arg(long)]
    app: String,
    /// Input size in the app's unit (default: the artifact's).
    #[arg(long)]
    size: Option<u64>,
    #[arg(long, value_enum, default_value_t = BuildArg::Gpu)]
    build: BuildArg,
    /// Write the recovery program for the crash image instead of the timed run.
    #[arg(long)]
    recovery: bool,
    /// The program file to write (`.prog`; docs/trace-format.md, "Programs").
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

pub fn trace(a: &TraceArgs) -> Result<Verdict> {
    let app = make_app(&a.app, a.size)?;
    let crash;
    let prog = if a.recovery {
        crash = app.crash_image();
        app.recovery(&crash)
    } else {
        app.program(a.build.build())
    };
    crate::run::check_output("--out", &a.out)?;
    // In memory first (a `.gz` name is compressed), then one atomic write.
    let mut text = Vec::new();
    sbrp_trace::program::write_program(prog.as_ref(), &mut text)?;
    let text = String::from_utf8(text).context("program text is not UTF-8")?;
    crate::run::write_files(&[(&a.out, text)])?;
    println!(
        "{}: {} kernels written to {}",
        app.name(),
        prog.kernels().len(),
        a.out.display()
    );
    Ok(Verdict::Pass)
}

#[derive(Args)]
pub struct BenchArgs {
    /// gpkvs, hm, srad, reduction, mq or scan.
    #[arg(long)]
    app: String,
    /// A preset (`sbrp run --list-presets`).
    #[arg(long, default_value = "sbrp-near")]
    preset: String,
    #[arg(long)]
    size: Option<u64>,
    /// The binary (default: gpm for gpm-far, else gpu).
    #[arg(long, value_enum)]
    build: Option<BuildArg>,
    /// Run the recovery kernels for the crash image instead of the timed run.
    #[arg(long)]
    recovery: bool,
    /// Shadow SMs' persist buffers with the Verilated RTL in lockstep.
    #[arg(long)]
    cosim: bool,
    /// With `--cosim`: a number of SMs or `all`.
    #[arg(long, default_value = "all", requires = "cosim")]
    sms: String,
    /// Record the run; check the app's invariant on the durable PM image at
    /// every cycle where it changed (and after recovery), the persistency
    /// model's rules on the record (`sbrp check`), and whether the end
    /// image equals the crash-free final image.
    #[arg(long)]
    check: bool,
    /// Write the execution record as JSON to FILE (for `sbrp check`).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// With `--check`: the app's invariant at this many durable points drawn
    /// at random (with --seed) instead of at every one.
    #[arg(long, requires = "check")]
    points: Option<usize>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads for `--check`'s crash points (default: the cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Override one configuration value, e.g. `--set pb.window=12` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Behave like the paper's artifact where it departs from the paper
    /// (as `sbrp run --artifact`). Applied before `--set`.
    #[arg(long)]
    artifact: bool,
    /// Run every SM's persist buffer model with a deliberate deviation
    /// (experiments and negative controls; not a correct SBRP).
    #[arg(long, value_enum, default_value = "none")]
    unit_fault: FaultArg,
    /// A deliberate deviation of the GPU model's persistency actions
    /// (negative controls: `skip-epoch-flush`, `drop-scope`).
    #[arg(long, value_enum, default_value = "none")]
    gpu_fault: GpuFaultArg,
}

pub fn bench(a: &BenchArgs) -> Result<Verdict> {
    let app = make_app(&a.app, a.size)?;
    let build = match a.build {
        Some(b) => b.build(),
        None => sbrp_testbench::sweep::build_of(&a.preset),
    };
    let shadow = match (a.cosim, a.sms.as_str()) {
        (false, _) => Shadow::None,
        (true, "all") => Shadow::All,
        (true, k) => Shadow::First(
            k.parse()
                .ok()
                .filter(|&k: &u32| k > 0)
                .with_context(|| format!("--sms {k}: a number of SMs (at least 1) or `all`"))?,
        ),
    };
    if let Some(f) = &a.record {
        crate::run::check_output("--record", f)?;
    }
    let points = match a.points {
        Some(0) => bail!("--points 0: at least 1"),
        Some(n) => Points::Sample { n, seed: a.seed },
        None => Points::Every,
    };
    let o = AppRunOpts {
        recovery: a.recovery,
        shadow,
        check_image: a.check,
        keep_record: a.record.is_some(),
        check_threads: jobs_arg(a.jobs)?,
        points: a.check.then_some(points),
        gpu_fault: a.gpu_fault.into(),
        overrides: Overrides {
            artifact: a.artifact,
            set: parse_sets(&a.set)?,
        },
        unit_fault: a.unit_fault.into(),
        ..AppRunOpts::new(build)
    };
    let r = run_app(app.as_ref(), &a.preset, &o)?;
    if let (Some(f), Some(ex)) = (&a.record, &r.execution) {
        crate::run::write_files(&[(f, serde_json::to_string(ex)?)])?;
    }
    println!(
        "{} ({} {}) under {}: {} cycles, {} warp instructions, {} L1 PM read misses; {:.2} s, {:.2} M warp-instr/s",
        r.app,
        app.size(),
        app.size_unit(),
        r.preset,
        r.cycles,
        r.instrs,
        r.l1_pm_read_misses,
        r.secs,
        r.instrs as f64 / r.secs.max(1e-9) / 1e6
    );
    if r.shadowed > 0 {
        println!(
            "RTL shadowed {} SM(s): {}",
            r.shadowed,
            if r.mismatch.is_none() {
                "0 mismatches"
            } else {
                "MISMATCH"
            }
        );
    }
    if let Some(m) = &r.mismatch {
        println!("{m}");
    }
    match &r.image {
        Some(Ok(same)) => println!(
            "durable PM image: invariant holds{}",
            match (a.recovery, same) {
                (true, _) => "",
                (false, true) => ", equal to the crash-free final image",
                (false, false) => {
                    "; it differs from the generator's final image (racing stores \
                     may end in another order than the generator's)"
                }
            }
        ),
        Some(Err(e)) => println!("durable PM image: INVARIANT BROKEN: {e}"),
        None => {}
    }
    if let Some(p) = &r.points {
        print_points(p, r.points_secs);
    }
    if let Some(c) = &r.checker {
        crate::check::print_report(c, 3, Some(r.checker_secs));
    }
    for f in &r.failures {
        println!("FAILED: {f}");
    }
    Ok(Verdict::of(r.ok()))
}

#[derive(Args)]
pub struct SuiteArgs {
    /// Write each figure as CSV and JSON, and every run, into DIR.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Parallel jobs (default: the cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Only these apps (comma-separated; default all six).
    #[arg(long)]
    apps: Option<String>,
    /// Divide every app's default input size by this (quick runs).
    #[arg(long, default_value_t = 1)]
    shrink: u64,
    /// Override one configuration value in every run, e.g. `--set
    /// artifact.ack_at_l2=true` (repeatable; for experiments).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Behave like the paper's artifact where it departs from the paper
    /// in every run (as `sbrp run --artifact`). Applied before `--set`.
    #[arg(long)]
    artifact: bool,
    /// Skip the crash-consistency checks (every run is otherwise recorded
    /// and checked by the persistency checker at every durable point, and
    /// its end image by the app's invariant).
    #[arg(long)]
    no_check: bool,
    /// Also check the app's invariant at this many durable points of every
    /// run (drawn with a fixed seed), or at every one (`every`).
    #[arg(long, value_name = "N|every", conflicts_with = "no_check")]
    crash_points: Option<String>,
    /// Figure 11's campaign: the recovery kernels from K crash points spread
    /// over each app's timed run under epoch-near and SBRP-near (median and
    /// worst recovery cycles beside the artifact's crash point).
    #[arg(long, value_name = "K", default_value_t = 0)]
    recovery_points: usize,
}

pub fn suite(a: &SuiteArgs) -> Result<Verdict> {
    let names: Vec<String> = match &a.apps {
        Some(s) => s.split(',').map(|x| x.trim().to_string()).collect(),
        None => sbrp_workloads::APPS.iter().map(|s| s.to_string()).collect(),
    };
    // An app named twice would count twice in the means.
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            bail!(
                "--apps {}: `{n}` given twice",
                a.apps.as_deref().unwrap_or("")
            );
        }
    }
    if a.shrink == 0 {
        bail!("--shrink 0: at least 1");
    }
    let over = Overrides {
        artifact: a.artifact,
        set: parse_sets(&a.set)?,
    };
    // Bad keys or values fail here, before any run or output.
    for (_, preset, _) in SUITE_RUNS {
        resolve_config(&ConfigSource::Preset(preset.into()), &over)?;
    }
    if let Some(d) = &a.out {
        check_dir(d)?;
    }
    let t0 = std::time::Instant::now();
    let apps = names
        .iter()
        .map(|n| {
            let size = match a.shrink {
                1 => None,
                k => Some(make_app(n, None)?.size() / k),
            };
            make_app(n, size)
        })
        .collect::<Result<Vec<_>>>()?;
    let gen = t0.elapsed().as_secs_f64();
    let jobs = suite_jobs(apps.len());
    let threads = jobs_arg(a.jobs)?;
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let progress = |done: usize, total: usize| {
        if tty {
            eprint!("\r{done}/{total} runs");
        }
    };
    let points = match a.crash_points.as_deref() {
        None => None,
        Some("every") => Some(Points::Every),
        Some(n) => match n.parse::<usize>() {
            Ok(0) => bail!("--crash-points 0: at least 1 (or `every`)"),
            Ok(n) => Some(Points::Sample { n, seed: 1 }),
            Err(_) => bail!("--crash-points {n}: a number of points or `every`"),
        },
    };
    let check = SuiteCheck {
        check: !a.no_check,
        points,
        keep_recovery_records: a.recovery_points > 0,
    };
    let mut runs = run_jobs(&apps, &jobs, threads, &over, &check, &progress)?;
    let mut recovery_fails = vec![];
    let campaign = if a.recovery_points > 0 {
        Some(recovery_campaign(
            &apps,
            &mut runs,
            &over,
            a.recovery_points,
            threads,
            &mut recovery_fails,
        )?)
    } else {
        None
    };
    if tty {
        eprint!("\r{:20}\r", "");
    }
    let secs = t0.elapsed().as_secs_f64();
    let mut tables = figures(&names, &runs);
    tables.extend(campaign);
    if over != Overrides::default() {
        println!("every run with {}\n", over.flags());
    }
    for t in &tables {
        println!("{}", t.to_text());
    }
    println!("per app (all its runs):");
    for n in &names {
        let rs: Vec<&BenchRun> = runs.iter().filter(|r| &r.app == n).collect();
        let instrs: u64 = rs.iter().map(|r| r.instrs).sum();
        let s: f64 = rs.iter().map(|r| r.secs).sum();
        println!(
            "  {n:<10} {} runs, {instrs} warp instructions in {s:.2} s of simulation: {:.2} M warp-instr/s",
            rs.len(),
            instrs as f64 / s.max(1e-9) / 1e6
        );
    }
    if check.check {
        let persists: u64 = runs
            .iter()
            .filter_map(|r| r.checker.as_ref())
            .map(|c| c.persists)
            .sum();
        let dpoints: u64 = runs
            .iter()
            .filter_map(|r| r.checker.as_ref())
            .map(|c| c.durable_points)
            .sum();
        let tried: u64 = runs
            .iter()
            .filter_map(|r| r.points.as_ref())
            .map(|p| p.tried)
            .sum();
        let broken = runs
            .iter()
            .filter(|r| {
                r.checker.as_ref().is_some_and(|c| !c.ok())
                    || r.points.as_ref().is_some_and(|p| p.failed > 0)
                    || matches!(r.image, Some(Err(_)))
            })
            .count();
        println!(
            "crash consistency: {} runs, {persists} persists checked at {dpoints} durable points (persistency checker), app invariants on {} end images{}: {}",
            runs.len(),
            runs.len(),
            if tried > 0 {
                format!(" and {tried} crash points")
            } else {
                String::new()
            },
            if broken == 0 {
                "all hold".to_string()
            } else {
                format!("{broken} runs BROKEN")
            }
        );
    }
    let bad: Vec<&BenchRun> = runs.iter().filter(|r| !r.ok()).collect();
    for r in &bad {
        let mut why = r.failures.clone();
        if let Some(Err(e)) = &r.image {
            why.push(format!("end image: {e}"));
        }
        if let Some(f) = r.points.as_ref().and_then(|p| p.first.as_ref()) {
            why.push(format!("crash point at cycle {}: {}", f.cycle, f.message));
        }
        if let Some(v) = r.checker.as_ref().and_then(|c| c.violations.first()) {
            why.push(format!("persist order: {v}"));
        }
        println!(
            "FAILED: {} under {}{}: {}",
            r.app,
            r.preset,
            if r.recovery { " (recovery)" } else { "" },
            why.join("; ")
        );
    }
    for f in &recovery_fails {
        println!("FAILED: {f}");
    }
    println!(
        "{} runs on {threads} threads in {secs:.1} s (generating the apps: {gen:.1} s)",
        runs.len()
    );
    if let Some(d) = &a.out {
        let mut files: Vec<(PathBuf, String)> = vec![];
        for t in &tables {
            files.push((d.join(format!("{}.csv", t.name)), t.to_csv()));
            files.push((
                d.join(format!("{}.json", t.name)),
                serde_json::to_string_pretty(t)?,
            ));
        }
        files.push((d.join("runs.json"), serde_json::to_string_pretty(&runs)?));
        let images = plots(&tables, |t| plot::bars_svg(t, plot::y_desc(&t.name)))?;
        let images: Vec<(PathBuf, Vec<u8>)> = images
            .into_iter()
            .map(|(name, b)| (d.join(name), b))
            .collect();
        write_all_with(&files, &images)?;
        println!(
            "wrote {} files into {}",
            files.len() + images.len(),
            d.display()
        );
    }
    Ok(Verdict::of(bad.is_empty() && recovery_fails.is_empty()))
}

/// Figure 11's campaign: for each app, the recovery kernels from `k` crash
/// points of its timed runs under epoch-near and SBRP-near (their records
/// kept by `run_jobs`), each image compared with the functional recovery;
/// median and worst recovery cycles over epoch-near's recovery at the
/// artifact's crash point.
fn recovery_campaign(
    apps: &[Box<dyn App>],
    runs: &mut [BenchRun],
    over: &Overrides,
    k: usize,
    threads: usize,
    fails: &mut Vec<String>,
) -> Result<Table> {
    let mut t = Table::new(
        "fig11-campaign",
        &format!(
            "Figure 11, campaign: recovery cycles from {k} crash points of the timed run (median, worst) over epoch-near at the artifact's crash point"
        ),
        &[
            "epoch-near-med",
            "epoch-near-worst",
            "sbrp-near-med",
            "sbrp-near-worst",
        ],
    );
    for app in apps {
        let base = runs
            .iter()
            .find(|r| r.app == app.name() && r.recovery && r.label == "epoch-near" && r.ok())
            .map(|r| r.cycles as f64);
        let mut row = vec![];
        for preset in RECOVERY_RUNS {
            let ex = runs
                .iter_mut()
                .find(|r| r.app == app.name() && !r.recovery && r.label == preset)
                .and_then(|r| r.execution.take());
            let mw = match ex {
                Some(ex) => {
                    let rr = recovery_runs(
                        app.as_ref(),
                        preset,
                        over,
                        &app.initial_image(),
                        &ex,
                        k,
                        threads,
                    )?;
                    for x in rr.iter().filter(|x| !x.finished || x.differs_at.is_some()) {
                        fails.push(format!(
                            "{} under {preset}: recovery from the crash at cycle {} {}",
                            app.name(),
                            x.crash_cycle,
                            match x.differs_at {
                                Some(a) =>
                                    format!("differs from the functional recovery at {a:#x}"),
                                None => "did not finish".into(),
                            }
                        ));
                    }
                    median_worst(&rr)
                }
                None => None,
            };
            let rel = |c: u64| base.filter(|b| *b > 0.0).map(|b| c as f64 / b);
            row.push(mw.and_then(|m| rel(m.0)));
            row.push(mw.and_then(|m| rel(m.1)));
        }
        t.rows.push((app.name().to_string(), row));
    }
    Ok(t.means())
}

/// The output directory exists (or can be made) and is writable.
pub(crate) fn check_dir(d: &Path) -> Result<()> {
    std::fs::create_dir_all(d).with_context(|| format!("--out {}: cannot create", d.display()))?;
    let probe = d.join(".sbrp-write-test");
    std::fs::write(&probe, b"")
        .with_context(|| format!("--out {}: cannot write there", d.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// Text files (gzip when named `.gz`) and binary ones (images), all or
/// none (`sbrp_tools::write_all_atomic`).
pub(crate) fn write_all_with(
    files: &[(PathBuf, String)],
    bin: &[(PathBuf, Vec<u8>)],
) -> Result<()> {
    let mut bytes = files
        .iter()
        .map(|(f, t)| Ok((f.as_path(), crate::run::output_bytes(f, t)?)))
        .collect::<Result<Vec<_>>>()?;
    bytes.extend(bin.iter().map(|(f, b)| (f.as_path(), b.clone())));
    let refs: Vec<(&Path, &[u8])> = bytes.iter().map(|(f, b)| (*f, b.as_slice())).collect();
    sbrp_tools::write_all_atomic(&refs)?;
    Ok(())
}

/// Each table's plot as `NAME.svg` and `NAME.png`.
pub(crate) fn plots(
    tables: &[Table],
    svg: impl Fn(&Table) -> sbrp_testbench::error::Result<String>,
) -> Result<Vec<(String, Vec<u8>)>> {
    let mut v = vec![];
    for t in tables {
        let s = svg(t)?;
        v.push((format!("{}.png", t.name), plot::png_of_svg(&s)?));
        v.push((format!("{}.svg", t.name), s.into_bytes()));
    }
    Ok(v)
}

/// The invariant at every durable point, one line (and the first failure).
pub fn print_points(p: &PointsReport, secs: f64) {
    println!(
        "crash points: {} durable points, {} tried, {} distinct images, {} broken; {secs:.2} s",
        p.durable_points, p.tried, p.distinct, p.failed
    );
    if let Some(f) = &p.first {
        println!(
            "  first broken at cycle {} ({}): {}",
            f.cycle, f.stage, f.message
        );
    }
}
