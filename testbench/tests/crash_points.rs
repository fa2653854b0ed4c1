//! Crash points: each application's invariant (`App::check`) on the durable
//! PM image at every point of a recorded GPU-model run where that image
//! changes, and on its recovery (`App::recover`). Correct runs under
//! sbrp-near and epoch-near must pass at every point; for each app some
//! deliberate fault (a unit fault of the persist buffer, or the GPU model's
//! epoch or scope fault) must break the invariant at a point before the
//! run's end, so that the invariants can fail. Images are replayed flush by
//! flush (`sbrp_workloads::Durable`), not rebuilt per point.
//!
//! `cargo test --release -p sbrp-testbench --test crash_points` runs the
//! reduced sizes. The app x fault table, every fault at every point:
//! `... --test crash_points fault_table -- --ignored --nocapture` (reduced
//! sizes); at the artifact's sizes, with at most 2,000 points a run
//! (`SBRP_CRASH_MAX_POINTS=N` for another bound), evenly spaced:
//! `... --test crash_points artifact_fault_table -- --ignored --nocapture`.

use std::fmt::Write as _;
use std::time::Instant;

use sbrp_gpu::sm::Fault as GpuFault;
use sbrp_gpu::RunOpts;
use sbrp_sim_fast::Fault as UnitFault;
use sbrp_testbench::gpu_run::{build_gpu, resolve_config, ConfigSource, Overrides, Shadow};
use sbrp_workloads::{app, App, Build, Durable, PmImage};

/// The reduced sizes: for correct runs, and for faults (a few apps need a
/// larger run for a fault to show), and the fault the CI test tries first
/// (the others follow in `faults()` order until one breaks the invariant).
const SMALL: &[(&str, u64, u64, Fault)] = &[
    ("gpkvs", 2048, 2048, Fault::Unit(UnitFault::IgnoreFsm)),
    ("hm", 6, 12, Fault::Gpu(GpuFault::SkipEpochFlush)),
    ("srad", 64, 128, Fault::Unit(UnitFault::IgnoreFsm)),
    (
        "reduction",
        262_144,
        262_144,
        Fault::Unit(UnitFault::IgnoreFsm),
    ),
    ("mq", 10, 40, Fault::Gpu(GpuFault::SkipEpochFlush)),
    (
        "scan",
        512 * 16,
        512 * 16,
        Fault::Unit(UnitFault::IgnoreCoalesceOrdering),
    ),
];

/// A deliberate deviation: of every SM's persist-buffer unit (under
/// sbrp-near) or of the GPU model (the epoch fault under epoch-near, the
/// scope fault under sbrp-near).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    Unit(UnitFault),
    Gpu(GpuFault),
}

/// A run: preset and fault.
#[derive(Clone, Copy, Debug)]
struct Setup {
    preset: &'static str,
    fault: Fault,
}

impl Setup {
    fn name(&self) -> String {
        match self.fault {
            Fault::None => format!("{} (correct)", self.preset),
            Fault::Unit(u) => format!("{} {u:?}", self.preset),
            Fault::Gpu(g) => format!("{} {g:?}", self.preset),
        }
    }
}

/// Every fault, with the preset it acts in.
fn faults() -> Vec<Setup> {
    use UnitFault::*;
    let mut v: Vec<Setup> = [
        IgnoreFsm,
        IgnoreCoalesceOrdering,
        DFenceNoWait,
        EvictIgnoreOrdering,
        WindowOffByOne,
        GlobalRelease,
        SkipGated,
    ]
    .into_iter()
    .map(|u| Setup {
        preset: "sbrp-near",
        fault: Fault::Unit(u),
    })
    .collect();
    v.push(Setup {
        preset: "sbrp-near",
        fault: Fault::Gpu(GpuFault::DropScope),
    });
    v.push(Setup {
        preset: "epoch-near",
        fault: Fault::Gpu(GpuFault::SkipEpochFlush),
    });
    v
}

fn preset_of(f: Fault) -> &'static str {
    match f {
        Fault::Gpu(GpuFault::SkipEpochFlush) => "epoch-near",
        _ => "sbrp-near",
    }
}

/// How points are tried.
#[derive(Clone, Copy, Debug)]
struct Sweep {
    /// At most this many points, evenly spaced (the last one included).
    max_points: Option<usize>,
    /// Stop at the first failure.
    stop_at_first: bool,
}

const EVERY: Sweep = Sweep {
    max_points: None,
    stop_at_first: false,
};

/// What one run's points gave.
#[derive(Debug, Default)]
struct Tally {
    /// Points of the run (distinct durable images, the initial included).
    points: usize,
    /// Points whose image was checked.
    tried: usize,
    /// Of those, images that fail the invariant, and images that pass but
    /// whose recovery fails.
    broken: usize,
    broken_recovered: usize,
    /// The first failure: point index, cycle, after recovery, message.
    first: Option<(usize, u64, bool, String)>,
    finished: bool,
    cycles: u64,
    /// Seconds running the model, and checking.
    run_s: f64,
    check_s: f64,
}

impl Tally {
    fn failed(&self) -> bool {
        self.broken + self.broken_recovered > 0
    }
    /// The first failure lies before the run's last image.
    fn mid_run(&self) -> bool {
        self.first.as_ref().is_some_and(|f| f.0 + 1 < self.points)
    }
}

/// The invariant on `img` and on its recovery (when recovery changes it):
/// None, or (after recovery, message).
fn verdict(a: &dyn App, img: &PmImage) -> Option<(bool, String)> {
    if let Err(e) = a.check(img) {
        return Some((false, e));
    }
    let r = a.recover(img);
    if r == *img {
        return None;
    }
    a.check(&r).err().map(|e| (true, e))
}

/// Runs `a`'s timed program under `s` with a record, then checks its
/// durable points as `how` says.
fn sweep(a: &dyn App, s: Setup, how: Sweep) -> Tally {
    let t0 = Instant::now();
    let cfg = resolve_config(
        &ConfigSource::Preset(s.preset.into()),
        &Overrides::default(),
    )
    .expect("preset");
    let unit = match s.fault {
        Fault::Unit(u) => u,
        _ => UnitFault::None,
    };
    let mut b = build_gpu(&cfg, Shadow::None, unit).expect("gpu");
    if let Fault::Gpu(g) = s.fault {
        b.gpu.fault = g;
    }
    let prog = a.program(Build::Gpu);
    let r = b.gpu.run(
        prog.as_ref(),
        RunOpts {
            record: true,
            ..Default::default()
        },
    );
    let ex = r.execution.expect("recorded");
    let init = a.initial_image();
    let mut t = Tally {
        finished: r.finished,
        cycles: r.cycles,
        run_s: t0.elapsed().as_secs_f64(),
        ..Tally::default()
    };
    let mut count = Durable::new(&init, &ex);
    t.points = 1 + std::iter::from_fn(|| count.next_point()).count();
    let stride = how
        .max_points
        .map_or(1, |m| t.points.div_ceil(m.max(1)).max(1));
    let mut d = Durable::new(&init, &ex);
    let (mut i, mut cycle) = (0, 0);
    loop {
        if i % stride == 0 || i + 1 == t.points {
            t.tried += 1;
            if let Some((rec, e)) = verdict(a, d.image()) {
                if rec {
                    t.broken_recovered += 1;
                } else {
                    t.broken += 1;
                }
                if t.first.is_none() {
                    t.first = Some((i, cycle, rec, e));
                }
                if how.stop_at_first {
                    break;
                }
            }
        }
        match d.next_point() {
            Some(c) => (i, cycle) = (i + 1, c),
            None => break,
        }
    }
    t.check_s = t0.elapsed().as_secs_f64() - t.run_s;
    t
}

const HEADER: &str =
    "app                    run                               points   tried  broken rec-brk   cycles  run-s check-s";

fn row(name: &str, s: &Setup, t: &Tally) -> String {
    let first = t.first.as_ref().map_or(String::new(), |(i, c, rec, e)| {
        let what = if *rec { "recovered: " } else { "" };
        format!("  first: point {i}, cycle {c}: {what}{e}")
    });
    format!(
        "{:<22} {:<32} {:>7} {:>7} {:>7} {:>7} {:>8} {:>6.1} {:>7.1}{}",
        name,
        s.name(),
        t.points,
        t.tried,
        t.broken,
        t.broken_recovered,
        t.cycles,
        t.run_s,
        t.check_s,
        first
    )
}

/// The reduced apps (`faulty`: at the fault sizes) with their first fault;
/// a comma-separated list in `SBRP_CRASH_APPS` narrows them.
fn small_apps(faulty: bool) -> Vec<(Box<dyn App>, Fault)> {
    let only = std::env::var("SBRP_CRASH_APPS").unwrap_or_default();
    SMALL
        .iter()
        .filter(|(n, ..)| only.is_empty() || only.split(',').any(|o| o == *n))
        .map(|&(n, ok, bad, f)| (app(n, Some(if faulty { bad } else { ok })).unwrap(), f))
        .collect()
}

/// Correct runs under `preset` keep every invariant at every point.
fn correct_runs(preset: &'static str) {
    let t0 = Instant::now();
    let mut out = String::new();
    let mut bad = vec![];
    for (a, _) in small_apps(false) {
        let s = Setup {
            preset,
            fault: Fault::None,
        };
        let t = sweep(a.as_ref(), s, EVERY);
        let line = row(a.name(), &s, &t);
        writeln!(out, "{line}").unwrap();
        assert!(t.finished, "{} under {preset} did not finish", a.name());
        assert!(t.tried > 200, "{line}");
        if t.failed() {
            bad.push(line);
        }
    }
    eprintln!("{HEADER}\n{out}({:.1} s)", t0.elapsed().as_secs_f64());
    assert!(
        bad.is_empty(),
        "correct runs broke an invariant:\n{}",
        bad.join("\n")
    );
}

#[test]
fn correct_sbrp_runs_keep_every_invariant_at_every_durable_point() {
    correct_runs("sbrp-near");
}

#[test]
fn correct_epoch_runs_keep_every_invariant_at_every_durable_point() {
    correct_runs("epoch-near");
}

#[test]
fn a_fault_breaks_every_invariant_before_the_end() {
    let t0 = Instant::now();
    let mut out = String::new();
    let mut missed = vec![];
    for (a, first) in small_apps(true) {
        let mut order = vec![Setup {
            preset: preset_of(first),
            fault: first,
        }];
        order.extend(faults().into_iter().filter(|s| s.fault != first));
        let caught = order.into_iter().any(|s| {
            let how = Sweep {
                max_points: None,
                stop_at_first: true,
            };
            let t = sweep(a.as_ref(), s, how);
            writeln!(out, "{}", row(a.name(), &s, &t)).unwrap();
            t.mid_run()
        });
        if !caught {
            missed.push(a.name());
        }
    }
    eprintln!("{HEADER}\n{out}({:.1} s)", t0.elapsed().as_secs_f64());
    assert!(
        missed.is_empty(),
        "no fault breaks {missed:?} before the end"
    );
}

/// Every fault on every app (and the correct runs, and Reduction's
/// scoped-persistency-bug variant under the correct model), as a table.
fn table(apps: Vec<Box<dyn App>>, how: Sweep) {
    let t0 = Instant::now();
    eprintln!("{HEADER}");
    let mut correct = vec![
        Setup {
            preset: "sbrp-near",
            fault: Fault::None,
        },
        Setup {
            preset: "epoch-near",
            fault: Fault::None,
        },
    ];
    correct.extend(faults());
    let mut bad = vec![];
    for a in &apps {
        for s in &correct {
            let t = sweep(a.as_ref(), *s, how);
            let line = row(a.name(), s, &t);
            eprintln!("{line}");
            // The variant is a program bug: its correct runs may fail.
            if s.fault == Fault::None && t.failed() && !a.name().contains("block-final") {
                bad.push(line);
            }
        }
    }
    eprintln!("({:.1} s)", t0.elapsed().as_secs_f64());
    assert!(
        bad.is_empty(),
        "correct runs broke an invariant:\n{}",
        bad.join("\n")
    );
}

#[test]
#[ignore = "minutes: every fault on every app at every point (reduced sizes)"]
fn fault_table() {
    let mut apps: Vec<Box<dyn App>> = small_apps(true).into_iter().map(|x| x.0).collect();
    apps.push(app("reduction-block-final", Some(262_144)).unwrap());
    table(apps, EVERY);
}

#[test]
#[ignore = "an hour or more: every fault on every app at the artifact's sizes"]
fn artifact_fault_table() {
    let mut names: Vec<&str> = sbrp_workloads::APPS.to_vec();
    names.extend(sbrp_workloads::VARIANTS);
    let apps = names.iter().map(|n| app(n, None).unwrap()).collect();
    // SBRP_CRASH_MAX_POINTS overrides the 2,000 points a run.
    let max = std::env::var("SBRP_CRASH_MAX_POINTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    table(
        apps,
        Sweep {
            max_points: Some(max),
            stop_at_first: false,
        },
    );
}
