//! `sbrp bench` and `sbrp suite` as library calls (`docs/results.md`): the
//! six applications (`sbrp-workloads`) on the GPU model under the paper's
//! configurations, run in parallel, and the paper's figures computed from
//! the runs: Figure 6 (speedup over epoch-far), 7 (share of SBRP's gain due
//! to scopes), 8 (L1 PM read misses over epoch-far), 9 (SBRP-far over
//! epoch-far with eADR) and 11 (recovery cycles over epoch-near).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use sbrp_workloads::{App, Build, PmImage};
use serde::Serialize;

use crate::crash::{check_points, Points, PointsReport};
use crate::error::Result;
use crate::gpu_run::{build_gpu, resolve_config, ConfigSource, Overrides, Shadow};
use crate::lockstep::Mismatch;
use sbrp_gpu::sm::Fault as GpuFault;
use sbrp_sim_fast::Fault as UnitFault;
use sbrp_trace::check;

/// The timed runs of the suite: (bar, preset, binary). The GPM bar is the
/// GPM build (its device fences in the program) on epoch-far, as in the
/// artifact, whose GPM configuration is epoch-far's; the `gpm-far` preset
/// adds those fences in the model for programs without them. The SPB bars
/// (Gope et al.'s scoped persist barriers) are not the paper's: the `spb`
/// table sets SBRP beside a scoped but unbuffered model.
pub const SUITE_RUNS: [(&str, &str, Build); 11] = [
    ("gpm-far", "epoch-far", Build::Gpm),
    ("epoch-far", "epoch-far", Build::Gpu),
    ("sbrp-far", "sbrp-far", Build::Gpu),
    ("epoch-near", "epoch-near", Build::Gpu),
    ("sbrp-near", "sbrp-near", Build::Gpu),
    ("sbrp-far-dev", "sbrp-far-dev", Build::Gpu),
    ("sbrp-near-dev", "sbrp-near-dev", Build::Gpu),
    ("epoch-far-eadr", "epoch-far-eadr", Build::Gpu),
    ("sbrp-far-eadr", "sbrp-far-eadr", Build::Gpu),
    ("spb-far", "spb-far", Build::Gpu),
    ("spb-near", "spb-near", Build::Gpu),
];
/// Recovery is timed under these (Figure 11).
pub const RECOVERY_RUNS: [&str; 2] = ["epoch-near", "sbrp-near"];
/// Apps with inter-thread block-scope ordering: Figure 7's (§7.2).
pub const SCOPED_APPS: [&str; 3] = ["reduction", "mq", "scan"];

/// One run's figures.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRun {
    pub app: String,
    /// The bar of the figures (the preset, or `gpm-far` for the GPM build).
    pub label: String,
    pub preset: String,
    /// The recovery kernels from the crash image, not the timed run.
    pub recovery: bool,
    pub cycles: u64,
    pub instrs: u64,
    pub l1_pm_read_misses: u64,
    /// The run's counts summed over the SMs (persists, flushes, replays).
    pub sm: sbrp_gpu::stats::SmStats,
    /// Warp stall cycles by cause.
    pub stalls: std::collections::BTreeMap<String, u64>,
    pub finished: bool,
    /// Wall-clock seconds of the simulation.
    pub secs: f64,
    pub shadowed: u32,
    #[serde(skip)]
    pub mismatch: Option<Mismatch>,
    pub failures: Vec<String>,
    /// With `check_image`: the invariant on the durable PM image at the end
    /// (Err says what is wrong), and whether it equals the app's final image.
    pub image: Option<std::result::Result<bool, String>>,
    /// With `check_image`: the invariant at every durable point.
    pub points: Option<PointsReport>,
    /// With `check_image`: the persistency checker on the record.
    pub checker: Option<check::Report>,
    /// Seconds of the checker, and of the crash points.
    pub checker_secs: f64,
    pub points_secs: f64,
    /// With `keep_record`: the execution record.
    #[serde(skip)]
    pub execution: Option<sbrp_trace::Execution>,
}

impl BenchRun {
    pub fn ok(&self) -> bool {
        self.finished
            && self.failures.is_empty()
            && self.mismatch.is_none()
            && !matches!(self.image, Some(Err(_)))
            && self.points.as_ref().is_none_or(|p| p.failed == 0)
            && self.checker.as_ref().is_none_or(|c| c.ok())
    }
}

/// How [`run_app`] runs an app.
#[derive(Clone, Debug)]
pub struct AppRunOpts {
    pub build: Build,
    /// The recovery kernels from the crash image, not the timed run.
    pub recovery: bool,
    pub shadow: Shadow,
    /// Record the run; check the app's invariant on the durable image at
    /// every point where it changed, and the persistency model's rules.
    pub check_image: bool,
    /// Keep the execution record in the result.
    pub keep_record: bool,
    /// Threads for checking crash points.
    pub check_threads: usize,
    /// With `check_image`: the durable points at which the app's invariant
    /// is checked (None: the end image only; the checker sees every point).
    pub points: Option<Points>,
    /// A deliberate deviation of the GPU model's persistency actions
    /// (epoch's flush skipped, scopes dropped: negative controls).
    pub gpu_fault: GpuFault,
    /// `--artifact` and `--set key=value` overrides of the preset.
    pub overrides: Overrides,
    /// A deliberate deviation of every SM's unit model (experiments and
    /// negative controls).
    pub unit_fault: UnitFault,
}

impl AppRunOpts {
    pub fn new(build: Build) -> AppRunOpts {
        AppRunOpts {
            build,
            recovery: false,
            shadow: Shadow::None,
            check_image: false,
            keep_record: false,
            check_threads: 1,
            points: None,
            gpu_fault: GpuFault::None,
            overrides: Overrides::default(),
            unit_fault: UnitFault::None,
        }
    }
}

/// Runs `app`'s timed program (or, with `o.recovery`, its recovery kernels
/// for the crash image) under `preset`.
pub fn run_app(app: &dyn App, preset: &str, o: &AppRunOpts) -> Result<BenchRun> {
    let (build, recovery, check_image) = (o.build, o.recovery, o.check_image);
    let cfg = resolve_config(&ConfigSource::Preset(preset.into()), &o.overrides)?;
    let mut b = build_gpu(&cfg, o.shadow, o.unit_fault)?;
    b.gpu.fault = o.gpu_fault;
    let t0 = Instant::now();
    let mut crash = PmImage::default();
    // The preset's row says whether the apps run their device-scope variant.
    let dev = sbrp_gpu::presets::row(preset).is_some_and(|r| r.promote);
    let prog = if recovery {
        crash = app.crash_image();
        app.recovery(&crash)
    } else if dev {
        app.program_dev(build)
    } else {
        app.program(build)
    };
    let r = b.gpu.run(
        prog.as_ref(),
        sbrp_gpu::RunOpts {
            record: check_image || o.keep_record,
            ..Default::default()
        },
    );
    let secs = t0.elapsed().as_secs_f64();
    let init = if recovery {
        crash.clone()
    } else {
        app.initial_image()
    };
    let checked = r.execution.as_ref().filter(|_| check_image);
    let image = checked.map(|ex| {
        let img = PmImage::at_cycle(&init, ex, u64::MAX);
        app.check(&img)
            .map(|()| !recovery && img == app.final_image())
    });
    let t1 = Instant::now();
    let points = checked
        .zip(o.points)
        .map(|(ex, w)| check_points(app, &init, ex, w, o.check_threads));
    let points_secs = t1.elapsed().as_secs_f64();
    let t2 = Instant::now();
    let checker = match checked {
        Some(ex) => Some(
            check::check(ex, &check::Options::new(checker_model(cfg.model)))
                .map_err(|e| crate::error::BenchError::Invalid(e.to_string()))?,
        ),
        None => None,
    };
    let checker_secs = t2.elapsed().as_secs_f64();
    let mismatch = b.slot.borrow_mut().take();
    Ok(BenchRun {
        app: app.name().into(),
        label: preset.into(),
        preset: preset.into(),
        recovery,
        cycles: r.cycles,
        instrs: r.sm.instrs,
        l1_pm_read_misses: r.sm.l1_pm_read_misses,
        sm: r.sm,
        stalls: r.stalls,
        finished: r.finished,
        secs,
        shadowed: b.shadowed,
        mismatch,
        failures: r.failures.into_iter().chain(r.deadlock).collect(),
        image,
        points,
        checker,
        checker_secs,
        points_secs,
        execution: if o.keep_record { r.execution } else { None },
    })
}

/// The checker's rules for a GPU model's persistency model.
pub fn checker_model(m: sbrp_gpu::config::Model) -> check::Model {
    m.persist().checker()
}

/// One job of the suite.
#[derive(Clone, Copy, Debug)]
pub struct Job {
    pub app: usize,
    pub label: &'static str,
    pub preset: &'static str,
    pub build: Build,
    pub recovery: bool,
}

/// Every job of the suite over `n` apps.
pub fn suite_jobs(n: usize) -> Vec<Job> {
    let mut v = vec![];
    for app in 0..n {
        for (label, preset, build) in SUITE_RUNS {
            v.push(Job {
                app,
                label,
                preset,
                build,
                recovery: false,
            });
        }
        for preset in RECOVERY_RUNS {
            v.push(Job {
                app,
                label: preset,
                preset,
                build: Build::Gpu,
                recovery: true,
            });
        }
    }
    v
}

/// What the suite checks in every run.
#[derive(Clone, Copy, Debug, Default)]
pub struct SuiteCheck {
    /// Record every run; the persistency checker at every durable point and
    /// the app's invariant on the end image.
    pub check: bool,
    /// The app's invariant also at these durable points.
    pub points: Option<Points>,
    /// Keep the records of the timed runs under `RECOVERY_RUNS`' presets
    /// (for recovery from crash points of the run, Figure 11's campaign).
    pub keep_recovery_records: bool,
}

/// Runs `jobs` on `threads` threads (each job builds its own GPU; the apps
/// are shared), calling `progress(done, total)` as jobs finish. Results
/// come back in job order.
pub fn run_jobs(
    apps: &[Box<dyn App>],
    jobs: &[Job],
    threads: usize,
    overrides: &Overrides,
    check: &SuiteCheck,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<BenchRun>> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Result<BenchRun>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(j) = jobs.get(i) else { break };
                let o = AppRunOpts {
                    recovery: j.recovery,
                    overrides: overrides.clone(),
                    check_image: check.check,
                    points: check.points,
                    keep_record: check.keep_recovery_records
                        && !j.recovery
                        && j.label == j.preset
                        && RECOVERY_RUNS.contains(&j.preset),
                    ..AppRunOpts::new(j.build)
                };
                let r = run_app(apps[j.app].as_ref(), j.preset, &o).map(|mut r| {
                    r.label = j.label.into();
                    r
                });
                out.lock().unwrap()[i] = Some(r);
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, jobs.len());
            });
        }
    });
    out.into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

/// One figure: a row per app, a column per bar, and the means.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub name: String,
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<(String, Vec<Option<f64>>)>,
    pub arith_mean: Vec<Option<f64>>,
    pub geo_mean: Vec<Option<f64>>,
}

impl Table {
    pub fn new(name: &str, title: &str, columns: &[&str]) -> Table {
        Table {
            name: name.into(),
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: vec![],
            arith_mean: vec![],
            geo_mean: vec![],
        }
    }

    pub fn means(mut self) -> Table {
        let n = self.columns.len();
        for c in 0..n {
            let v: Vec<f64> = self.rows.iter().filter_map(|r| r.1[c]).collect();
            let am = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
            let gm = (!v.is_empty() && v.iter().all(|x| *x > 0.0))
                .then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp());
            self.arith_mean.push(am);
            self.geo_mean.push(gm);
        }
        self
    }

    /// The same table with only the columns `keep` accepts.
    pub fn keep_columns(&self, keep: impl Fn(&str) -> bool) -> Table {
        let k: Vec<bool> = self.columns.iter().map(|c| keep(c)).collect();
        let pick = |v: &[Option<f64>]| -> Vec<Option<f64>> {
            v.iter().zip(&k).filter(|x| *x.1).map(|x| *x.0).collect()
        };
        Table {
            name: self.name.clone(),
            title: self.title.clone(),
            columns: self.columns.iter().filter(|c| keep(c)).cloned().collect(),
            rows: self
                .rows
                .iter()
                .map(|(a, v)| (a.clone(), pick(v)))
                .collect(),
            arith_mean: pick(&self.arith_mean),
            geo_mean: pick(&self.geo_mean),
        }
    }

    pub fn to_csv(&self) -> String {
        let mut s = format!("app,{}\n", self.columns.join(","));
        let cell = |v: &Option<f64>| v.map(|x| format!("{x:.4}")).unwrap_or_default();
        for (app, v) in &self.rows {
            s += &format!(
                "{app},{}\n",
                v.iter().map(cell).collect::<Vec<_>>().join(",")
            );
        }
        for (name, v) in [("amean", &self.arith_mean), ("gmean", &self.geo_mean)] {
            s += &format!(
                "{name},{}\n",
                v.iter().map(cell).collect::<Vec<_>>().join(",")
            );
        }
        s
    }

    pub fn to_text(&self) -> String {
        let mut s = format!("{} ({})\n", self.title, self.name);
        s += &format!("{:<10}", "app");
        for c in &self.columns {
            s += &format!(" {c:>14}");
        }
        s += "\n";
        let cell = |v: &Option<f64>| {
            v.map(|x| format!("{x:>14.3}"))
                .unwrap_or(format!("{:>14}", "-"))
        };
        let rows = self
            .rows
            .iter()
            .map(|(a, v)| (a.as_str(), v))
            .chain([("amean", &self.arith_mean), ("gmean", &self.geo_mean)]);
        for (app, v) in rows {
            s += &format!("{app:<10}");
            for x in v.iter() {
                s += &format!(" {}", cell(x));
            }
            s += "\n";
        }
        s
    }
}

/// The figures from the suite's runs.
pub fn figures(apps: &[String], runs: &[BenchRun]) -> Vec<Table> {
    let get = |app: &str, preset: &str, recovery: bool| {
        runs.iter()
            .find(|r| r.app == app && r.label == preset && r.recovery == recovery && r.ok())
    };
    let cycles = |app: &str, p: &str| get(app, p, false).map(|r| r.cycles as f64);
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let mut f6 = Table::new(
        "fig6",
        "Figure 6: speedup over epoch-far (higher is better)",
        &[
            "gpm-far",
            "epoch-far",
            "epoch-near",
            "sbrp-far",
            "sbrp-near",
        ],
    );
    let mut f7 = Table::new(
        "fig7",
        "Figure 7: share of SBRP's speedup over epoch due to scopes, (S - S_dev) / (S - 1)",
        &["far", "near"],
    );
    let mut f8 = Table::new(
        "fig8",
        "Figure 8: L1 PM read misses over epoch-far (lower is better)",
        &["epoch-far", "sbrp-far", "epoch-near", "sbrp-near"],
    );
    let mut f9 = Table::new(
        "fig9",
        "Figure 9: SBRP-far speedup over epoch-far, both with eADR",
        &["sbrp-far-eadr"],
    );
    let mut spb = Table::new(
        "spb",
        "SPB (scoped persist barriers, unbuffered) beside SBRP: speedup over epoch-far, and SBRP over SPB (what buffering buys)",
        &[
            "spb-far",
            "sbrp-far",
            "spb-near",
            "sbrp-near",
            "sbrp/spb-far",
            "sbrp/spb-near",
        ],
    );
    let mut f11 = Table::new(
        "fig11",
        "Figure 11: recovery cycles over epoch-near (lower is better)",
        &["epoch-near", "sbrp-near"],
    );
    for app in apps {
        let a = app.as_str();
        let base = cycles(a, "epoch-far");
        f6.rows.push((
            app.clone(),
            f6.columns
                .iter()
                .map(|c| ratio(base, cycles(a, c)))
                .collect(),
        ));
        if SCOPED_APPS.contains(&a) {
            let share = |sys: &str| {
                let ep = cycles(a, &format!("epoch-{sys}"));
                let s = ratio(ep, cycles(a, &format!("sbrp-{sys}")))?;
                let sd = ratio(ep, cycles(a, &format!("sbrp-{sys}-dev")))?;
                ((s - 1.0).abs() > 1e-9).then(|| (s - sd) / (s - 1.0))
            };
            f7.rows
                .push((app.clone(), vec![share("far"), share("near")]));
        }
        let misses = |p: &str| get(a, p, false).map(|r| r.l1_pm_read_misses as f64);
        let mb = misses("epoch-far");
        f8.rows.push((
            app.clone(),
            f8.columns.iter().map(|c| ratio(misses(c), mb)).collect(),
        ));
        f9.rows.push((
            app.clone(),
            vec![ratio(
                cycles(a, "epoch-far-eadr"),
                cycles(a, "sbrp-far-eadr"),
            )],
        ));
        spb.rows.push((
            app.clone(),
            vec![
                ratio(base, cycles(a, "spb-far")),
                ratio(base, cycles(a, "sbrp-far")),
                ratio(base, cycles(a, "spb-near")),
                ratio(base, cycles(a, "sbrp-near")),
                ratio(cycles(a, "spb-far"), cycles(a, "sbrp-far")),
                ratio(cycles(a, "spb-near"), cycles(a, "sbrp-near")),
            ],
        ));
        let rec = |p: &str| get(a, p, true).map(|r| r.cycles as f64);
        let rb = rec("epoch-near");
        f11.rows.push((
            app.clone(),
            f11.columns.iter().map(|c| ratio(rec(c), rb)).collect(),
        ));
    }
    vec![
        f6.means(),
        f7.means(),
        f8.means(),
        f9.means(),
        f11.means(),
        spb.means(),
    ]
}
