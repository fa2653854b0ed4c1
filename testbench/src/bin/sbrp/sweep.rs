//! `sbrp sweep`: apps x presets x a grid of `--set` values (or Figure 10's
//! points) in parallel, each point cached in `--out DIR/points/` so that a
//! rerun resumes; `--point K` runs one point (one array task of a batch
//! job), `--list` shows the points. Writes the sweep as CSV and JSON.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sbrp_testbench::gpu_run::Overrides;
use sbrp_testbench::plot::png_of_svg;
use sbrp_testbench::sweep::{self, fig10, Axis, Common, Plan, PointResult};

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
    /// A paper figure's sweep instead of a grid: 10 (PB size, NVM
    /// bandwidth, flush window; SBRP-near over epoch-near).
    #[arg(long, value_name = "N")]
    figure: Option<u32>,
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
}

fn split(s: &str) -> Vec<String> {
    s.split(',').map(|x| x.trim().to_string()).collect()
}

pub fn run(a: &SweepArgs) -> Result<Verdict> {
    if a.shrink == 0 {
        bail!("--shrink 0: at least 1");
    }
    if let Some(f) = a.figure.filter(|&f| f != 10) {
        bail!("--figure {f}: only 10 (Figures 6-9 and 11 are `sbrp suite`'s)");
    }
    let threads = jobs(a.jobs)?;
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
    let points = if a.figure.is_some() {
        fig10::points(&names, &common.base)?
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
    let baseline = a.baseline.as_deref();
    let rows = sweep::rows(&plan, &out.results, baseline);
    let mut images: Vec<(PathBuf, Vec<u8>)> = vec![];
    let mut files: Vec<(PathBuf, String)> = vec![
        (
            a.out.join("sweep.csv"),
            sweep::to_csv(&plan, &rows, baseline),
        ),
        (
            a.out.join("sweep.json"),
            serde_json::to_string_pretty(&rows)?,
        ),
    ];
    if a.figure.is_some() {
        let tables = fig10::tables(&names, &plan, &out.results, &plan.common.base)?;
        for t in &tables {
            println!("{}", t.to_text());
            files.push((a.out.join(format!("{}.csv", t.name)), t.to_csv()));
            files.push((
                a.out.join(format!("{}.json", t.name)),
                serde_json::to_string_pretty(t)?,
            ));
        }
        let svg = fig10::plot(&tables)?;
        images.push((a.out.join("fig10.png"), png_of_svg(&svg)?));
        files.push((a.out.join("fig10.svg"), svg));
    } else {
        print_rows(&plan, &rows, baseline);
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
    let distinct = out.ran + out.cached;
    println!(
        "{} points ({distinct} distinct configurations): {} run now on {threads} threads, {} from the cache; {secs:.1} s",
        plan.points.len(),
        out.ran,
        out.cached
    );
    write_all_with(&files, &images)?;
    println!(
        "wrote {} files into {}",
        files.len() + images.len(),
        a.out.display()
    );
    Ok(Verdict::of(out.results.iter().all(|r| r.ok)))
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
