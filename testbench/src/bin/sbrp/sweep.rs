//! `sbrp sweep`: apps x presets x a grid of `--set` values (or Figure 10's
//! points) in parallel, each point cached in `--out DIR/points/` so that a
//! rerun resumes; `--point K` runs one point (one array task of a batch
//! job), `--list` shows the points, `--slurm` runs the missing points as a
//! Slurm array job and merges them. Writes the sweep as CSV and JSON.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sbrp_testbench::gpu_run::Overrides;
use sbrp_testbench::plot::png_of_svg;
use sbrp_testbench::sweep::{self, fig10, Axis, Common, Plan, PointResult};
use sbrp_testbench::{ladder, slurm};

use crate::apps::{check_dir, write_all_with};
use crate::args::{jobs, parse_sets};
use crate::Verdict;

#[derive(Args)]
pub struct SweepArgs {
    /// The cache (DIR/points/, one file per point) and the tables.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Apps (comma-separated; default all six).
    #[arg(long)]
    apps: Option<String>,
    /// Presets (comma-separated; default sbrp-near).
    #[arg(long, conflicts_with = "figure")]
    presets: Option<String>,
    /// An axis of the grid: `KEY=V1,V2,...`, or keys set together
    /// `K1:K2=A1:B1,A2:B2` (repeatable; the grid is the product).
    #[arg(long = "set", value_name = "KEY=V1,V2,...", conflicts_with = "figure")]
    set: Vec<String>,
    /// A figure's sweep instead of a grid: `10` (PB size, NVM bandwidth,
    /// flush window; SBRP-near over epoch-near) or `ladder` (Figure 6's
    /// SBRP columns from the idealised unit to the v2 unit, one realism
    /// switch per step).
    #[arg(long, value_name = "10|ladder")]
    figure: Option<String>,
    /// Add each point's speedup over the same app and settings under this
    /// preset (which must be among --presets).
    #[arg(long, value_name = "PRESET", conflicts_with = "figure")]
    baseline: Option<String>,
    /// Divide every app's default input size by this (quick runs).
    #[arg(long, default_value_t = 1)]
    shrink: u64,
    /// Parallel runs (default: the cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Run only point K (0-based, as `--list` numbers them) into the cache,
    /// whether cached or not; no tables.
    #[arg(long, value_name = "K", conflicts_with = "list")]
    point: Option<usize>,
    /// List the points (index, key, cached or not) and run nothing.
    #[arg(long)]
    list: bool,
    /// Behave like the paper's artifact in every run (as `sbrp run --artifact`).
    #[arg(long)]
    artifact: bool,
    /// A `KEY=VALUE` applied to every point before its own settings
    /// (repeatable; not a column).
    #[arg(long = "base-set", value_name = "KEY=VALUE")]
    base_set: Vec<String>,
    /// Skip the persistency checker and the apps' invariants (a separate
    /// cache entry from checked runs).
    #[arg(long)]
    no_check: bool,
    /// Run the missing points as a Slurm array job (`sbatch --array`, one
    /// task per point, `--point K` into DIR), wait for it (polling
    /// `squeue`), then write the tables as the local run does. DIR and
    /// this program must be on a file system the nodes share.
    #[arg(long, conflicts_with_all = ["point", "list"])]
    slurm: bool,
    /// The Slurm partition of the array job, or several, comma-separated,
    /// as sbatch takes them (default: the cluster's).
    #[arg(long, value_name = "P", requires = "slurm")]
    partition: Option<String>,
    /// At most N array tasks running at once (`--array ...%N`).
    #[arg(long, value_name = "N", requires = "slurm")]
    array_limit: Option<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Figure {
    Ten,
    Ladder,
}

fn split(s: &str) -> Vec<String> {
    s.split(',').map(|x| x.trim().to_string()).collect()
}

pub fn run(a: &SweepArgs) -> Result<Verdict> {
    if a.shrink == 0 {
        bail!("--shrink 0: at least 1");
    }
    let figure = match a.figure.as_deref() {
        None => None,
        Some("10") => Some(Figure::Ten),
        Some("ladder") => Some(Figure::Ladder),
        Some(f) => bail!("--figure {f}: 10 or ladder (Figures 6-9 and 11 are `sbrp suite`'s)"),
    };
    let threads = jobs(a.jobs)?;
    if a.array_limit == Some(0) {
        bail!("--array-limit 0: at least 1");
    }
    if let Some(p) = a
        .partition
        .as_deref()
        .filter(|p| p.split(',').any(|x| x.trim().is_empty()))
    {
        bail!("--partition `{p}`: a partition name, or names separated by commas");
    }
    let names = match &a.apps {
        Some(s) => split(s),
        None => sbrp_workloads::APPS.iter().map(|s| s.to_string()).collect(),
    };
    let common = Common {
        shrink: a.shrink,
        base: Overrides {
            artifact: a.artifact,
            set: parse_sets(&a.base_set)?,
        },
        check: !a.no_check,
    };
    let presets = match &a.presets {
        Some(s) => split(s),
        None => vec!["sbrp-near".into()],
    };
    for p in &presets {
        if let Err(e) = sbrp_gpu::presets::preset_or_err(p) {
            bail!("--presets {p}: {e}");
        }
    }
    if let Some(b) = &a.baseline {
        if !presets.contains(b) {
            bail!(
                "--baseline {b}: not among --presets ({})",
                presets.join(",")
            );
        }
    }
    let points = if figure == Some(Figure::Ten) {
        fig10::points(&names, &common.base)?
    } else if figure == Some(Figure::Ladder) {
        ladder::points(&names, &common.base)
    } else {
        let axes = a
            .set
            .iter()
            .map(|s| Axis::parse(s))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(anyhow::Error::msg)?;
        sweep::grid(&names, &presets, &axes).map_err(anyhow::Error::msg)?
    };
    // Every configuration is resolved here: a bad key, value, preset or
    // app stops the sweep before anything runs or is written.
    let plan = Plan::new(common, points)?;
    if a.list {
        for (i, (p, k)) in plan.points.iter().zip(&plan.keys).enumerate() {
            let cached = sweep::load_point(&a.out, k).is_some();
            println!(
                "{i:>4} {k} {} {:<10} {:<12} {}",
                if cached { "cached " } else { "missing" },
                p.app,
                p.preset,
                settings_text(&p.settings)
            );
        }
        println!("{} points", plan.points.len());
        return Ok(Verdict::Pass);
    }
    if let Some(k) = a.point {
        if k >= plan.points.len() {
            bail!(
                "--point {k}: the sweep has {} points (0 to {})",
                plan.points.len(),
                plan.points.len().saturating_sub(1)
            );
        }
    }
    if a.slurm {
        // Before anything is written: no Slurm, no output.
        slurm::check_tools().map_err(anyhow::Error::msg)?;
        check_dir(&a.out)?;
        return on_slurm(a, &plan, &names, threads);
    }
    check_dir(&a.out)?;
    let total = match a.point {
        Some(_) => 1,
        None => plan.missing(&a.out).len(),
    };
    let bar = progress_bar(total as u64);
    let t0 = std::time::Instant::now();
    let tick = |r: &PointResult| {
        bar.set_message(format!("{} {}", r.app, r.preset));
        bar.inc(1);
    };
    let out = sweep::run(&plan, &a.out, threads, a.point, &tick);
    bar.finish_and_clear();
    let out = out?;
    let secs = t0.elapsed().as_secs_f64();
    if let Some(k) = a.point {
        let r = &out.results[0];
        println!(
            "point {k} ({}): {} under {} {}: {} cycles, {}; {:.2} s -> {}",
            r.key,
            r.app,
            r.preset,
            settings_text(&plan.points[k].settings),
            r.cycles,
            if r.ok { "ok" } else { "FAILED" },
            r.secs,
            sweep::point_file(&a.out, &r.key).display()
        );
        return Ok(Verdict::of(r.ok));
    }
    let summary = format!(
        "{} run now on {threads} threads, {} from the cache; {secs:.1} s",
        out.ran, out.cached
    );
    let ok = write_tables(a, &plan, &names, &out, &summary)?;
    Ok(Verdict::of(ok))
}

/// Prints the sweep (its rows, or Figure 10's tables), its failed points
/// and a summary line ending in `summary`, then writes its files. True
/// when every point is ok.
fn write_tables(
    a: &SweepArgs,
    plan: &Plan,
    names: &[String],
    out: &sweep::Outcome,
    summary: &str,
) -> Result<bool> {
    let baseline = a.baseline.as_deref();
    let rows = sweep::rows(plan, &out.results, baseline);
    let mut images: Vec<(PathBuf, Vec<u8>)> = vec![];
    let mut files: Vec<(PathBuf, String)> = vec![
        (
            a.out.join("sweep.csv"),
            sweep::to_csv(plan, &rows, baseline),
        ),
        (
            a.out.join("sweep.json"),
            serde_json::to_string_pretty(&rows)?,
        ),
    ];
    if let Some(f) = a.figure.as_deref() {
        let base = &plan.common.base;
        let (tables, svg, stem) = if f == "ladder" {
            print!("{}", ladder::legend(base));
            if base.artifact && plan.common.check {
                println!("note: under --artifact the epoch baselines drop their dirty PM lines at kernel end (artifact.no_kernel_end_drain), which the checks report as failures; --no-check gives the speedups");
            }
            let t = ladder::tables(names, plan, &out.results, base)?;
            let svg = ladder::plot(&t)?;
            (t, svg, "ladder")
        } else {
            let t = fig10::tables(names, plan, &out.results, base)?;
            let svg = fig10::plot(&t)?;
            (t, svg, "fig10")
        };
        for t in &tables {
            println!("{}", t.to_text());
            files.push((a.out.join(format!("{}.csv", t.name)), t.to_csv()));
            files.push((
                a.out.join(format!("{}.json", t.name)),
                serde_json::to_string_pretty(t)?,
            ));
        }
        images.push((a.out.join(format!("{stem}.png")), png_of_svg(&svg)?));
        files.push((a.out.join(format!("{stem}.svg")), svg));
    } else {
        print_rows(plan, &rows, baseline);
    }
    for (p, r) in plan.points.iter().zip(&out.results).filter(|(_, r)| !r.ok) {
        println!(
            "FAILED: {} under {} {}: {}",
            p.app,
            p.preset,
            settings_text(&p.settings),
            r.failures.join("; ")
        );
    }
    println!(
        "{} points ({} distinct configurations): {summary}",
        plan.points.len(),
        out.ran + out.cached,
    );
    write_all_with(&files, &images)?;
    println!(
        "wrote {} files into {}",
        files.len() + images.len(),
        a.out.display()
    );
    Ok(out.results.iter().all(|r| r.ok))
}

/// The arguments of one array task: this program, `sweep` and what decides
/// the points and their keys (`--point K` is added by the batch script).
fn task_argv(a: &SweepArgs, out: &std::path::Path, names: &[String]) -> Result<Vec<String>> {
    let exe = std::env::current_exe().context("--slurm: cannot find this program's path")?;
    let mut v: Vec<String> = vec![
        exe.to_string_lossy().into_owned(),
        "sweep".into(),
        "--out".into(),
        out.to_string_lossy().into_owned(),
        "--apps".into(),
        names.join(","),
        "--shrink".into(),
        a.shrink.to_string(),
        "--jobs".into(),
        "1".into(),
    ];
    if let Some(f) = &a.figure {
        v.extend(["--figure".into(), f.clone()]);
    }
    if let Some(p) = &a.presets {
        v.extend(["--presets".into(), p.clone()]);
    }
    for s in &a.set {
        v.extend(["--set".into(), s.clone()]);
    }
    for s in &a.base_set {
        v.extend(["--base-set".into(), s.clone()]);
    }
    if a.artifact {
        v.push("--artifact".into());
    }
    if a.no_check {
        v.push("--no-check".into());
    }
    Ok(v)
}

/// `--slurm`: the missing points as array jobs (one unless the cluster's
/// MaxArraySize is below the points' indices), waited for, then the
/// tables from the cache, as the local run writes them. A task that failed
/// is listed with its exit code and log; a point it left missing means no
/// tables (rerunning the command submits only the missing points).
fn on_slurm(a: &SweepArgs, plan: &Plan, names: &[String], threads: usize) -> Result<Verdict> {
    let t0 = std::time::Instant::now();
    let out_dir = std::path::absolute(&a.out)
        .with_context(|| format!("--out {}: no absolute path", a.out.display()))?;
    let todo = plan.missing(&out_dir);
    let mut failed = 0usize;
    let mut submitted = None;
    if todo.is_empty() {
        println!("every point is in the cache: nothing to submit");
    } else {
        let run_dir = slurm::new_run_dir(&out_dir.join("slurm")).map_err(anyhow::Error::msg)?;
        let argv = task_argv(a, &out_dir, names)?;
        // Task indices must stay below the cluster's MaxArraySize: a sweep
        // with more points is several array jobs.
        let mut jobs: Vec<(String, usize, Vec<usize>)> = vec![];
        for (base, points) in slurm::chunks(&todo, slurm::max_array_size()) {
            let sub = slurm::Submit {
                points: &points,
                base,
                partition: a.partition.as_deref(),
                array_limit: a.array_limit,
                job_name: "sbrp-sweep",
                chdir: &out_dir,
            };
            match slurm::submit(&sub, &argv, &run_dir) {
                Ok(job) => {
                    println!(
                        "submitted Slurm job {job}: {} array task{} (points {}), logs {}; cancel with `scancel {job}`",
                        points.len(),
                        if points.len() == 1 { "" } else { "s" },
                        slurm::array_spec(&points, None),
                        run_dir.join("point-K.log").display()
                    );
                    jobs.push((job, base, points));
                }
                Err(e) if jobs.is_empty() => {
                    // Nothing was queued: leave no trace of the attempt (the
                    // directories only if empty, so never an earlier run's).
                    let _ = std::fs::remove_dir_all(&run_dir);
                    let _ = std::fs::remove_dir(out_dir.join("slurm"));
                    let _ = std::fs::remove_dir(&out_dir);
                    bail!("--slurm: {e}");
                }
                Err(e) => {
                    // Half a sweep queued: cancel it (points already
                    // stored stay in the cache for the next attempt).
                    let ids: Vec<String> = jobs.iter().map(|j| j.0.clone()).collect();
                    slurm::cancel(&ids);
                    bail!(
                        "--slurm: {e} (array from point {base}); cancelled the jobs submitted before it: {}",
                        ids.join(", ")
                    );
                }
            }
        }
        let bar = progress_bar(todo.len() as u64);
        let mut later: usize = jobs.iter().map(|j| j.2.len()).sum();
        for (job, _, points) in &jobs {
            later -= points.len();
            let waited = slurm::wait(job, std::time::Duration::from_secs(60), &mut |p, r| {
                let left = (p + r).min(points.len()) + later;
                bar.set_position((todo.len() - left) as u64);
                bar.set_message(format!("job {job}: {p} pending, {r} running"));
            });
            if let Err(e) = waited {
                bar.finish_and_clear();
                bail!("--slurm: {e}");
            }
        }
        bar.finish_and_clear();
        for (job, base, points) in &jobs {
            for &k in points {
                let code = slurm::exit_code(&run_dir, k);
                if code == Some(0) {
                    continue;
                }
                failed += 1;
                let p = &plan.points[k];
                let log = slurm::log_file(&run_dir, k);
                let why = match (code, log.exists()) {
                    (Some(c), _) => format!("exit code {c}; log {}", log.display()),
                    (None, true) => format!(
                        "no exit code recorded (killed, cancelled or timed out); log {}",
                        log.display()
                    ),
                    (None, false) => format!(
                        "never started (cancelled, or refused by the node); no log at {}",
                        log.display()
                    ),
                };
                println!(
                    "FAILED point {k}, task {job}_{} ({} under {} {}): {why}",
                    k - base,
                    p.app,
                    p.preset,
                    settings_text(&p.settings),
                );
            }
        }
        let ids: Vec<&str> = jobs.iter().map(|j| j.0.as_str()).collect();
        let job = match ids.len() {
            1 => format!("job {}", ids[0]),
            _ => format!("jobs {}", ids.join(", ")),
        };
        submitted = Some((job, todo.len()));
    }
    let lost = plan.missing(&out_dir);
    if !lost.is_empty() {
        println!(
            "{} of {} points not in the cache: no tables written; the same command submits only those",
            lost.len(),
            plan.points.len()
        );
        return Ok(Verdict::Fail);
    }
    // Every point is cached: this runs none and reads them all.
    let out = sweep::run(plan, &out_dir, threads, None, &|_| {})?;
    let secs = t0.elapsed().as_secs_f64();
    let summary = match submitted {
        Some((job, n)) => format!(
            "{n} run as array tasks of Slurm {job} ({failed} failed), {} from the cache; {secs:.1} s",
            out.cached.saturating_sub(n)
        ),
        None => format!("0 run now, {} from the cache; {secs:.1} s", out.cached),
    };
    let ok = write_tables(a, plan, names, &out, &summary)?;
    Ok(Verdict::of(ok && failed == 0))
}

/// A bar with the time left on stderr, drawn only on a terminal.
fn progress_bar(total: u64) -> ProgressBar {
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let target = if tty {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    if let Ok(style) = ProgressStyle::with_template(
        "{pos}/{len} points, {elapsed} elapsed, about {eta} left; {msg:24} {wide_bar}",
    ) {
        bar.set_style(style);
    }
    if tty {
        // Redraw twice a second, so elapsed and time left move between points.
        bar.enable_steady_tick(std::time::Duration::from_millis(500));
    }
    bar
}

fn settings_text(s: &[(String, String)]) -> String {
    if s.is_empty() {
        return "(preset)".into();
    }
    s.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn print_rows(plan: &Plan, rows: &[sweep::Row], baseline: Option<&str>) {
    for (p, r) in plan.points.iter().zip(rows) {
        let sp = match (baseline, r.speedup) {
            (Some(_), Some(x)) => format!(" speedup {x:.3}"),
            _ => String::new(),
        };
        println!(
            "{:<10} {:<12} {:<40} {:>10} cycles{sp}",
            r.app,
            r.preset,
            settings_text(&p.settings),
            r.result.cycles
        );
    }
}
