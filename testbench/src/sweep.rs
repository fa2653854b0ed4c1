//! `sbrp sweep` as library calls: the apps under presets over a grid of
//! `--set` values (or Figure 10's points), each point run once by the
//! suite's `run_app` and cached as one file in the output directory, keyed
//! by a hash of what decides its result, so that an interrupted sweep
//! resumes and separate processes (one per point) can fill one cache.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sbrp_workloads::{App, Build};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{BenchError, Result};
use crate::gpu_run::{resolve_config, ConfigSource, Overrides};
use crate::suite::{run_app, AppRunOpts, Table};

/// The version of what a point's result depends on besides its key's
/// inputs: the GPU model, the unit model and the app generators. Bump it
/// when any of them changes a cycle count; `tests/sweep.rs` pins a few
/// runs' cycles to this value so that a change cannot go unnoticed.
pub const MODEL_VERSION: u32 = 1;

/// The cache's subdirectory of the output directory.
pub const POINTS_DIR: &str = "points";

/// One `--set` axis: keys set together (`a:b=1:2,3:4`) and their values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    pub keys: Vec<String>,
    /// One tuple per value of the axis, as long as `keys`.
    pub values: Vec<Vec<String>>,
}

impl Axis {
    /// Parses `KEY=V1,V2,...` or `K1:K2=A1:B1,A2:B2,...` (keys set
    /// together, e.g. a read and a write bandwidth). Errors quote the
    /// argument.
    pub fn parse(arg: &str) -> std::result::Result<Axis, String> {
        let bad = |why: &str| format!("--set {arg}: {why}");
        let (k, v) = arg
            .split_once('=')
            .ok_or_else(|| bad("expected KEY=V1,V2,... or K1:K2=A1:B1,..."))?;
        let keys: Vec<String> = k.split(':').map(|s| s.trim().to_string()).collect();
        if keys.iter().any(|k| k.is_empty()) {
            return Err(bad("empty key"));
        }
        if keys.iter().collect::<BTreeSet<_>>().len() != keys.len() {
            return Err(bad("a key twice"));
        }
        let mut values = vec![];
        for t in v.split(',') {
            let tuple: Vec<String> = t.split(':').map(|s| s.trim().to_string()).collect();
            if tuple.len() != keys.len() {
                return Err(bad(&format!(
                    "value `{t}` has {} parts for {} keys",
                    tuple.len(),
                    keys.len()
                )));
            }
            if tuple.iter().any(|x| x.is_empty()) {
                return Err(bad("empty value"));
            }
            values.push(tuple);
        }
        Ok(Axis { keys, values })
    }
}

/// One point: an app under a preset with settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    pub app: String,
    pub preset: String,
    /// `--set` pairs on top of the preset (and of the sweep's `--artifact`).
    pub settings: Vec<(String, String)>,
}

/// The points of a grid: app, then preset, then the product of the axes
/// (the first axis varies slowest). Refuses a key on two axes.
pub fn grid(
    apps: &[String],
    presets: &[String],
    axes: &[Axis],
) -> std::result::Result<Vec<Point>, String> {
    let mut seen = BTreeSet::new();
    for k in axes.iter().flat_map(|a| &a.keys) {
        if !seen.insert(k) {
            return Err(format!("--set: key `{k}` on two axes"));
        }
    }
    let mut combos: Vec<Vec<(String, String)>> = vec![vec![]];
    for a in axes {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                a.values.iter().map(move |t| {
                    let mut c = c.clone();
                    c.extend(a.keys.iter().cloned().zip(t.iter().cloned()));
                    c
                })
            })
            .collect();
    }
    let mut v = vec![];
    for app in apps {
        for preset in presets {
            for c in &combos {
                v.push(Point {
                    app: app.clone(),
                    preset: preset.clone(),
                    settings: c.clone(),
                });
            }
        }
    }
    Ok(v)
}

/// What every point of a sweep shares.
#[derive(Clone, Debug, Default)]
pub struct Common {
    /// Every app at its default size divided by this (1: the artifact's).
    pub shrink: u64,
    /// `--artifact` (applied before each point's settings); its `set` is
    /// applied before each point's settings too.
    pub base: Overrides,
    /// Record each run; the persistency checker and the app's invariant.
    pub check: bool,
}

/// The binary of a preset, as its row says (the GPU build for a name that
/// is no preset: running it reports the unknown preset).
pub fn build_of(preset: &str) -> Build {
    match sbrp_gpu::presets::row(preset).map(|r| r.binary) {
        Some(sbrp_gpu::presets::Binary::Gpm) => Build::Gpm,
        _ => Build::Gpu,
    }
}

/// A point's overrides: the sweep's, then the point's settings.
pub fn overrides(c: &Common, p: &Point) -> Overrides {
    let mut o = c.base.clone();
    o.set.extend(p.settings.iter().cloned());
    o
}

/// The text a point's key hashes: the model version, the app and its
/// shrink, the preset (its name picks the program), the build, the check
/// and the whole resolved configuration (so that equal configurations
/// share a file, however they were spelled). Errors name the bad setting.
pub fn key_text(c: &Common, p: &Point) -> Result<String> {
    let cfg = resolve_config(&ConfigSource::Preset(p.preset.clone()), &overrides(c, p))?;
    Ok(format!(
        "sbrp-sweep model {MODEL_VERSION} crate {}\napp {}\nshrink {}\npreset {}\nbuild {:?}\ncheck {}\n{}",
        env!("CARGO_PKG_VERSION"),
        p.app,
        c.shrink.max(1),
        p.preset,
        build_of(&p.preset),
        c.check,
        cfg.to_toml_string()
    ))
}

/// The point's key: the first 16 bytes of the SHA-256 of its key text, in hex.
pub fn key(text: &str) -> String {
    Sha256::digest(text.as_bytes())[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A point's cached result: what the run measured (no wall time in the
/// tables, so that a resumed sweep's tables equal an uninterrupted one's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    pub key: String,
    pub app: String,
    pub size: u64,
    pub preset: String,
    /// The settings of the run that filled the cache.
    pub settings: Vec<(String, String)>,
    pub cycles: u64,
    pub instrs: u64,
    pub l1_pm_read_misses: u64,
    pub persists: u64,
    pub coalesced: u64,
    pub pm_flushes: u64,
    pub evict_flushes: u64,
    pub replays: u64,
    pub replays_store: u64,
    pub replays_ordering: u64,
    pub replays_evict: u64,
    pub waits: u64,
    pub fence_delays: u64,
    /// Warp stall cycles by cause.
    pub stalls: BTreeMap<String, u64>,
    pub finished: bool,
    /// Finished, no failure, and (when checked) every check held.
    pub ok: bool,
    pub checked: bool,
    pub failures: Vec<String>,
    /// Wall-clock seconds of the run (not in the tables).
    pub secs: f64,
}

/// The cache file of a key.
pub fn point_file(out: &Path, key: &str) -> PathBuf {
    out.join(POINTS_DIR).join(format!("{key}.json"))
}

/// A cached result, if its file exists, parses and has this key.
pub fn load_point(out: &Path, key: &str) -> Option<PointResult> {
    let text = std::fs::read_to_string(point_file(out, key)).ok()?;
    serde_json::from_str::<PointResult>(&text)
        .ok()
        .filter(|r| r.key == key)
}

/// Writes a result into the cache: a temporary file beside it, renamed
/// (atomic, so a killed run leaves no half file and concurrent writers of
/// one point leave one whole file).
pub fn store_point(out: &Path, r: &PointResult) -> Result<()> {
    let f = point_file(out, &r.key);
    let dir = f.parent().expect("points dir");
    let io = |e: std::io::Error| BenchError::Invalid(format!("cannot write {}: {e}", f.display()));
    std::fs::create_dir_all(dir).map_err(io)?;
    // Unique per process, thread and instant: array tasks on several
    // hosts may share a directory (and a process id).
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let tmp = dir.join(format!(
        ".{}.{}.{:?}.{nanos}.part",
        r.key,
        std::process::id(),
        std::thread::current().id()
    ));
    let text = serde_json::to_string_pretty(r).map_err(|e| BenchError::Invalid(e.to_string()))?;
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, &f).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

/// Generates an app at the sweep's size.
pub fn make_app(name: &str, shrink: u64) -> Result<Box<dyn App>> {
    let mk = |size| sbrp_workloads::app(name, size).map_err(BenchError::Invalid);
    match shrink {
        0 | 1 => mk(None),
        k => mk(Some(mk(None)?.size() / k)),
    }
}

/// Runs one point (with `app` generated at the sweep's size) and returns
/// its result, not yet stored.
pub fn run_point(app: &dyn App, c: &Common, p: &Point, key: &str) -> Result<PointResult> {
    let o = AppRunOpts {
        overrides: overrides(c, p),
        check_image: c.check,
        ..AppRunOpts::new(build_of(&p.preset))
    };
    let r = run_app(app, &p.preset, &o)?;
    let mut failures = r.failures.clone();
    if let Some(Err(e)) = &r.image {
        failures.push(format!("end image: {e}"));
    }
    if let Some(v) = r.checker.as_ref().and_then(|c| c.violations.first()) {
        failures.push(format!("persist order: {v}"));
    }
    Ok(PointResult {
        key: key.into(),
        app: p.app.clone(),
        size: app.size(),
        preset: p.preset.clone(),
        settings: p.settings.clone(),
        cycles: r.cycles,
        instrs: r.instrs,
        l1_pm_read_misses: r.l1_pm_read_misses,
        persists: r.sm.persists,
        coalesced: r.sm.coalesced,
        pm_flushes: r.sm.pm_flushes,
        evict_flushes: r.sm.evict_flushes,
        replays: r.sm.replays,
        replays_store: r.sm.replays_store,
        replays_ordering: r.sm.replays_ordering,
        replays_evict: r.sm.replays_evict,
        waits: r.sm.waits,
        fence_delays: r.sm.fence_delays,
        stalls: r.stalls.clone(),
        finished: r.finished,
        ok: r.ok(),
        checked: c.check,
        failures,
        secs: r.secs,
    })
}

/// A sweep's points with their keys, checked before anything runs.
#[derive(Clone, Debug)]
pub struct Plan {
    pub common: Common,
    pub points: Vec<Point>,
    pub keys: Vec<String>,
}

impl Plan {
    /// Resolves every point's configuration (a bad key, value or preset
    /// fails here, naming it) and its key.
    pub fn new(common: Common, points: Vec<Point>) -> Result<Plan> {
        // Constructing an app checks its name and size (the data come later).
        for a in points
            .iter()
            .map(|p| p.app.as_str())
            .collect::<BTreeSet<_>>()
        {
            let known = sbrp_workloads::APPS.contains(&a) || sbrp_workloads::VARIANTS.contains(&a);
            let why = |e: BenchError| match (known, common.shrink) {
                (false, _) => BenchError::Invalid(format!("--apps: {e}")),
                (true, k) => BenchError::Invalid(format!("--shrink {k}: {e}")),
            };
            make_app(a, common.shrink).map_err(why)?;
        }
        let keys = points
            .iter()
            .map(|p| key_text(&common, p).map(|t| key(&t)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Plan {
            common,
            points,
            keys,
        })
    }

    /// The cycles of the first ok point of `app` under `preset` with
    /// exactly `settings` (`results` in point order).
    pub fn cycles(
        &self,
        results: &[PointResult],
        app: &str,
        preset: &str,
        settings: &[(String, String)],
    ) -> Option<f64> {
        self.points
            .iter()
            .zip(results)
            .find(|(p, r)| p.app == app && p.preset == preset && p.settings == settings && r.ok)
            .map(|(_, r)| r.cycles as f64)
    }

    /// The distinct keys not in the cache, in point order (index of the
    /// first point with each).
    pub fn missing(&self, out: &Path) -> Vec<usize> {
        let mut seen = BTreeSet::new();
        (0..self.points.len())
            .filter(|&i| seen.insert(&self.keys[i]))
            .filter(|&i| load_point(out, &self.keys[i]).is_none())
            .collect()
    }
}

/// What [`run`] did.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// One result per point of the plan, in its order.
    pub results: Vec<PointResult>,
    /// Points run now (distinct keys), and found in the cache.
    pub ran: usize,
    pub cached: usize,
}

/// Runs the plan's missing points on `threads` threads (or only point
/// `only`, missing or not), storing each as it finishes and calling
/// `progress(result)`, then reads every point back from the cache.
pub fn run(
    plan: &Plan,
    out: &Path,
    threads: usize,
    only: Option<usize>,
    progress: &(dyn Fn(&PointResult) + Sync),
) -> Result<Outcome> {
    let todo = match only {
        Some(k) if k >= plan.points.len() => {
            return Err(BenchError::Invalid(format!(
                "--point {k}: the sweep has {} points (0 to {})",
                plan.points.len(),
                plan.points.len().saturating_sub(1)
            )))
        }
        Some(k) => vec![k],
        None => plan.missing(out),
    };
    let distinct = plan.keys.iter().collect::<BTreeSet<_>>().len();
    // Each app is generated once, by the first point that needs it.
    let names: BTreeSet<&str> = todo.iter().map(|&i| plan.points[i].app.as_str()).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| BenchError::Invalid(format!("--jobs: {e}")))?;
    let apps: BTreeMap<&str, Box<dyn App>> = pool.install(|| {
        names
            .par_iter()
            .map(|&n| make_app(n, plan.common.shrink).map(|a| (n, a)))
            .collect::<Result<_>>()
    })?;
    pool.install(|| {
        todo.par_iter().try_for_each(|&i| {
            let p = &plan.points[i];
            let r = run_point(
                apps[p.app.as_str()].as_ref(),
                &plan.common,
                p,
                &plan.keys[i],
            )?;
            store_point(out, &r)?;
            progress(&r);
            Ok::<(), BenchError>(())
        })
    })?;
    if only.is_some() {
        let r = load_point(out, &plan.keys[todo[0]])
            .ok_or_else(|| BenchError::Invalid(format!("point {} not in the cache", todo[0])))?;
        return Ok(Outcome {
            results: vec![r],
            ran: 1,
            cached: 0,
        });
    }
    let results = plan
        .keys
        .iter()
        .map(|k| {
            load_point(out, k).ok_or_else(|| {
                BenchError::Invalid(format!(
                    "{}: missing after the run",
                    point_file(out, k).display()
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Outcome {
        results,
        ran: todo.len(),
        cached: distinct - todo.len(),
    })
}

/// The setting columns: every key of every point, in order of appearance.
fn setting_keys(points: &[Point]) -> Vec<String> {
    let mut v: Vec<String> = vec![];
    for (k, _) in points.iter().flat_map(|p| &p.settings) {
        if !v.contains(k) {
            v.push(k.clone());
        }
    }
    v
}

/// One row of the sweep's table: the point, its counts, and its speedup
/// over the baseline point (same app and settings under the baseline
/// preset) when one is given.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub app: String,
    pub size: u64,
    pub preset: String,
    pub settings: BTreeMap<String, String>,
    pub speedup: Option<f64>,
    #[serde(flatten)]
    pub result: RowCounts,
}

/// The counts of a row (the cached result without key and wall time).
#[derive(Clone, Debug, Serialize)]
pub struct RowCounts {
    pub cycles: u64,
    pub instrs: u64,
    pub l1_pm_read_misses: u64,
    pub persists: u64,
    pub coalesced: u64,
    pub pm_flushes: u64,
    pub evict_flushes: u64,
    pub replays: u64,
    pub replays_store: u64,
    pub replays_ordering: u64,
    pub replays_evict: u64,
    pub waits: u64,
    pub fence_delays: u64,
    pub stalls: BTreeMap<String, u64>,
    pub ok: bool,
}

/// The rows of a sweep, one per point in the plan's order. With a
/// baseline preset, each point's speedup is the baseline point's cycles
/// over its own (the baseline point must be in the plan).
pub fn rows(plan: &Plan, results: &[PointResult], baseline: Option<&str>) -> Vec<Row> {
    let find = |app: &str, preset: &str, s: &[(String, String)]| {
        plan.points
            .iter()
            .zip(results)
            .find(|(p, r)| p.app == app && p.preset == preset && p.settings == s && r.ok)
            .map(|(_, r)| r.cycles as f64)
    };
    plan.points
        .iter()
        .zip(results)
        .map(|(p, r)| Row {
            app: p.app.clone(),
            size: r.size,
            preset: p.preset.clone(),
            settings: p.settings.iter().cloned().collect(),
            speedup: baseline.and_then(|b| {
                let base = find(&p.app, b, &p.settings)?;
                (r.ok && r.cycles > 0).then(|| base / r.cycles as f64)
            }),
            result: RowCounts {
                cycles: r.cycles,
                instrs: r.instrs,
                l1_pm_read_misses: r.l1_pm_read_misses,
                persists: r.persists,
                coalesced: r.coalesced,
                pm_flushes: r.pm_flushes,
                evict_flushes: r.evict_flushes,
                replays: r.replays,
                replays_store: r.replays_store,
                replays_ordering: r.replays_ordering,
                replays_evict: r.replays_evict,
                waits: r.waits,
                fence_delays: r.fence_delays,
                stalls: r.stalls.clone(),
                ok: r.ok,
            },
        })
        .collect()
}

/// The sweep as CSV: a row per point; the settings as columns (empty where
/// a point does not set the key), the speedup (with a baseline), the
/// counts and stall cycles by cause.
pub fn to_csv(plan: &Plan, rows: &[Row], baseline: Option<&str>) -> String {
    let keys = setting_keys(&plan.points);
    let stall_causes: Vec<String> = rows
        .iter()
        .flat_map(|r| r.result.stalls.keys().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut head: Vec<String> = vec!["app".into(), "size".into(), "preset".into()];
    head.extend(keys.iter().cloned());
    if let Some(b) = baseline {
        head.push(format!("speedup_over_{b}"));
    }
    head.extend(
        [
            "cycles",
            "instrs",
            "l1_pm_read_misses",
            "persists",
            "coalesced",
            "pm_flushes",
            "evict_flushes",
            "replays",
            "replays_store",
            "replays_ordering",
            "replays_evict",
            "waits",
            "fence_delays",
        ]
        .map(String::from),
    );
    head.extend(stall_causes.iter().map(|c| format!("stall_{c}")));
    head.push("ok".into());
    let mut s = head.join(",") + "\n";
    for r in rows {
        let c = &r.result;
        let mut v: Vec<String> = vec![r.app.clone(), r.size.to_string(), r.preset.clone()];
        v.extend(
            keys.iter()
                .map(|k| r.settings.get(k).cloned().unwrap_or_default()),
        );
        if baseline.is_some() {
            v.push(r.speedup.map(|x| format!("{x:.4}")).unwrap_or_default());
        }
        v.extend(
            [
                c.cycles,
                c.instrs,
                c.l1_pm_read_misses,
                c.persists,
                c.coalesced,
                c.pm_flushes,
                c.evict_flushes,
                c.replays,
                c.replays_store,
                c.replays_ordering,
                c.replays_evict,
                c.waits,
                c.fence_delays,
            ]
            .map(|x| x.to_string()),
        );
        v.extend(
            stall_causes
                .iter()
                .map(|k| c.stalls.get(k).copied().unwrap_or(0).to_string()),
        );
        v.push(c.ok.to_string());
        s += &(v.join(",") + "\n");
    }
    s
}

/// Figure 10's studies (the notes §4.5), all SBRP-near over epoch-near.
pub mod fig10 {
    use super::*;

    /// (a): PB entries as a share of the L1's lines, in per mille.
    pub const PB_SHARES: [u32; 4] = [125, 250, 500, 1000];
    /// (b): NVM bandwidth (read and write) in percent of the preset's.
    pub const BW_SHARES: [u32; 3] = [50, 100, 200];
    /// (c): the flush windows of the paper's figure.
    pub const WINDOWS: [u32; 6] = [2, 4, 6, 8, 10, 12];

    /// A study: its table's name and its columns, each (label, settings).
    pub type Study = (&'static str, Vec<(String, Vec<(String, String)>)>);

    /// The studies' columns, from sbrp-near's configuration
    /// (its L1 lines and NVM bandwidths; `base` applied first).
    pub fn studies(base: &Overrides) -> Result<Vec<Study>> {
        let cfg = resolve_config(&ConfigSource::Preset("sbrp-near".into()), base)?;
        let lines = cfg.l1_lines();
        let a = PB_SHARES
            .iter()
            .map(|&pm| {
                (
                    format!("{}%", pm as f64 / 10.0),
                    vec![("pb.entries".to_string(), (lines * pm / 1000).to_string())],
                )
            })
            .collect();
        let b = BW_SHARES
            .iter()
            .map(|&pc| {
                let f = pc as f64 / 100.0;
                (
                    format!("{pc}%"),
                    vec![
                        (
                            "pm.read_bandwidth".to_string(),
                            (cfg.pm.read_bandwidth * f).to_string(),
                        ),
                        (
                            "pm.write_bandwidth".to_string(),
                            (cfg.pm.write_bandwidth * f).to_string(),
                        ),
                    ],
                )
            })
            .collect();
        let c = WINDOWS
            .iter()
            .map(|&w| {
                (
                    w.to_string(),
                    vec![("pb.window".to_string(), w.to_string())],
                )
            })
            .collect();
        Ok(vec![("fig10a", a), ("fig10b", b), ("fig10c", c)])
    }

    /// The points: per app, epoch-near at the defaults and at each
    /// bandwidth (b's baselines), sbrp-near at each setting of each study.
    pub fn points(apps: &[String], base: &Overrides) -> Result<Vec<Point>> {
        let st = studies(base)?;
        let mut v = vec![];
        for app in apps {
            let mut add = |preset: &str, settings: &Vec<(String, String)>| {
                v.push(Point {
                    app: app.clone(),
                    preset: preset.into(),
                    settings: settings.clone(),
                })
            };
            add("epoch-near", &vec![]);
            for (name, cols) in &st {
                for (_, s) in cols {
                    if *name == "fig10b" {
                        add("epoch-near", s);
                    }
                    add("sbrp-near", s);
                }
            }
        }
        Ok(v)
    }

    /// The three tables as one SVG: a panel each, axes labelled.
    pub fn plot(tables: &[Table]) -> Result<String> {
        let x = [
            "PB entries (share of the L1's lines)",
            "NVM bandwidth (share of 84/42 GB/s)",
            "flush window (outstanding flushes per SM)",
        ];
        crate::plot::table_panels_svg(tables, &x, &["SBRP-near speedup over epoch-near"])
    }

    /// The three tables: each app's SBRP-near speedup over epoch-near at
    /// the default configuration (a, c) or at the same bandwidth (b).
    pub fn tables(
        apps: &[String],
        plan: &Plan,
        results: &[PointResult],
        base: &Overrides,
    ) -> Result<Vec<Table>> {
        let cycles =
            |app: &str, preset: &str, s: &[(String, String)]| plan.cycles(results, app, preset, s);
        let titles = [
            "Figure 10a: SBRP-near over epoch-near, PB entries as a share of the L1's lines",
            "Figure 10b: SBRP-near over epoch-near at the same NVM bandwidth (share of 84/42 GB/s)",
            "Figure 10c: SBRP-near over epoch-near, flush window",
        ];
        let mut out = vec![];
        for ((name, cols), title) in studies(base)?.into_iter().zip(titles) {
            let labels: Vec<&str> = cols.iter().map(|(l, _)| l.as_str()).collect();
            let mut t = Table::new(name, title, &labels);
            for app in apps {
                let row = cols
                    .iter()
                    .map(|(_, s)| {
                        let b = if name == "fig10b" {
                            cycles(app, "epoch-near", s)
                        } else {
                            cycles(app, "epoch-near", &[])
                        }?;
                        let x = cycles(app, "sbrp-near", s)?;
                        (x > 0.0).then(|| b / x)
                    })
                    .collect();
                t.rows.push((app.clone(), row));
            }
            out.push(t.means());
        }
        Ok(out)
    }
}
