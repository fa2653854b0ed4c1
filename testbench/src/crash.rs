//! Crash campaigns (`docs/checker.md`, "Crash campaigns"): a recorded run of
//! an app, its durable PM image at every cycle where it changed (or a
//! sample of those), the app's invariant on each, the functional recovery
//! and the invariant after it; for some points the recovery kernels run on
//! the GPU model and their image compared with the functional recovery.
//!
//! Images are rebuilt by replaying durable flushes in durability order
//! (the order `PmImage::at_cycle` applies them), each identified by a
//! commutative hash of its words so that identical images are checked once.
//! Points are checked in parallel, each thread replaying the flushes and
//! stopping at its own points.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use sbrp_trace::{Event, Execution};
use sbrp_workloads::{App, PmImage};
use serde::Serialize;

use crate::error::{BenchError, Result};
use crate::gpu_run::{build_gpu, resolve_config, ConfigSource, Overrides, Shadow};

/// Which durable points to try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Points {
    /// Every cycle at which the durable image changed.
    Every,
    /// This many, drawn without replacement with a seed (all if fewer).
    Sample { n: usize, seed: u64 },
    /// The image after this cycle.
    At(u64),
}

/// What went wrong at a crash point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PointFailure {
    /// The crash: every flush durable at or before this cycle survived.
    pub cycle: u64,
    /// `invariant` (on the crash image) or `after recovery`.
    pub stage: String,
    pub message: String,
}

/// The points of one run, their images and the invariant on each.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PointsReport {
    /// Cycles at which the durable image changed.
    pub durable_points: u64,
    pub tried: u64,
    /// Distinct images among those tried (each checked once).
    pub distinct: u64,
    /// Points (not images) whose image breaks the invariant, before or after recovery.
    pub failed: u64,
    /// The earliest failing point.
    pub first: Option<PointFailure>,
    /// Checked with the app's incremental invariant (`App::incremental`).
    pub incremental: bool,
}

/// One durable flush, in replay order.
struct Applied<'a> {
    durable: u64,
    cells: &'a [sbrp_trace::Cell],
}

fn replay_order(ex: &Execution) -> Vec<Applied<'_>> {
    let mut durable: HashMap<u64, u64> = HashMap::new();
    for e in &ex.events {
        if let Event::Durable { id, cycle } = e {
            durable.insert(*id, *cycle);
        }
    }
    let mut v: Vec<(u64, u64, &[sbrp_trace::Cell])> = ex
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Flush { id, cells, .. } => durable.get(id).map(|&d| (d, *id, &cells[..])),
            _ => None,
        })
        .collect();
    v.sort_by_key(|f| (f.0, f.1));
    v.into_iter()
        .map(|(durable, _, cells)| Applied { durable, cells })
        .collect()
}

/// A word's contribution to an image's hash (splitmix64 of both halves).
fn word_hash(addr: u64, value: u64) -> u64 {
    let mut z = addr
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(value)
        .wrapping_add(0x632b_e59b_d9b4_e019);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// An image being replayed, with its hash kept up to date.
struct Replay {
    img: PmImage,
    hash: u64,
}

impl Replay {
    fn new(init: &PmImage) -> Replay {
        let hash = init
            .words
            .iter()
            .fold(0u64, |h, (&a, &v)| h.wrapping_add(word_hash(a, v)));
        Replay {
            img: init.clone(),
            hash,
        }
    }
    fn apply(&mut self, cells: &[sbrp_trace::Cell]) {
        self.apply_noting(cells, &mut vec![]);
    }
    /// Applies `cells`, pushing the address of each word whose value changed.
    fn apply_noting(&mut self, cells: &[sbrp_trace::Cell], changed: &mut Vec<u64>) {
        for c in cells {
            let old = self.img.words.insert(c.addr, c.value);
            if let Some(old) = old {
                self.hash = self.hash.wrapping_sub(word_hash(c.addr, old));
            }
            self.hash = self.hash.wrapping_add(word_hash(c.addr, c.value));
            if old != Some(c.value) {
                changed.push(c.addr);
            }
        }
    }
}

/// The crash points of a run: (cycle, index into the replay order of the
/// first flush not yet durable, image hash), one per cycle at which the
/// image changed.
fn points(init: &PmImage, order: &[Applied]) -> Vec<(u64, usize, u64)> {
    let mut r = Replay::new(init);
    let mut out = vec![];
    let mut i = 0;
    while i < order.len() {
        let c = order[i].durable;
        while i < order.len() && order[i].durable == c {
            r.apply(order[i].cells);
            i += 1;
        }
        out.push((c, i, r.hash));
    }
    out
}

/// Deterministic sample of `n` of `0..len` (sorted), from `seed`.
fn sample(len: usize, n: usize, seed: u64) -> Vec<usize> {
    if n >= len {
        return (0..len).collect();
    }
    let mut s = seed ^ 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        word_hash(s, 0)
    };
    // Partial Fisher-Yates.
    let mut idx: Vec<usize> = (0..len).collect();
    for i in 0..n {
        let j = i + (next() % (len - i) as u64) as usize;
        idx.swap(i, j);
    }
    let mut v = idx[..n].to_vec();
    v.sort_unstable();
    v
}

/// The app's invariant on the crash image, then on its functional recovery.
fn check_image(app: &dyn App, img: &PmImage) -> std::result::Result<(), (String, String)> {
    app.check(img).map_err(|m| ("invariant".to_string(), m))?;
    let rec = app.recover(img);
    app.check(&rec)
        .map_err(|m| ("after recovery".to_string(), m))
}

/// The chosen crash points of `ex` (a run of `app` from `init`), checked on
/// `threads` threads: with the app's incremental invariant where it has
/// one (`App::incremental`), else with `App::check` on each distinct image.
pub fn check_points(
    app: &dyn App,
    init: &PmImage,
    ex: &Execution,
    which: Points,
    threads: usize,
) -> PointsReport {
    check_points_with(app, init, ex, which, threads, false)
}

/// `check_points`, with `full`: `App::check` on every distinct image even
/// where the app has an incremental form (to compare the two).
pub fn check_points_with(
    app: &dyn App,
    init: &PmImage,
    ex: &Execution,
    which: Points,
    threads: usize,
    full: bool,
) -> PointsReport {
    if !full && !matches!(which, Points::At(_)) && app.incremental(init).is_some() {
        return check_incrementally(app, init, ex, which, threads);
    }
    let order = replay_order(ex);
    let mut all = points(init, &order);
    let durable_points = all.len() as u64;
    let chosen: Vec<usize> = match which {
        Points::Every | Points::Sample { .. } => choose(which, all.len()),
        Points::At(c) => {
            let upto = order.partition_point(|f| f.durable <= c);
            all = vec![(c, upto, 0)];
            vec![0]
        }
    };
    // Distinct images among the chosen points: the first point of each is checked.
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut todo: Vec<usize> = vec![];
    let mut rep_of: Vec<usize> = vec![];
    for &p in &chosen {
        let h = all[p].2;
        let r = *seen.entry(h).or_insert_with(|| {
            todo.push(p);
            p
        });
        rep_of.push(r);
    }
    let results: Mutex<HashMap<usize, (String, String)>> = Mutex::new(HashMap::new());
    let threads = threads.clamp(1, todo.len().max(1));
    std::thread::scope(|s| {
        for t in 0..threads {
            let (todo, order, all, results) = (&todo, &order, &all, &results);
            s.spawn(move || {
                let mut r = Replay::new(init);
                let mut applied = 0;
                for &p in todo.iter().skip(t).step_by(threads) {
                    let upto = all[p].1;
                    while applied < upto {
                        r.apply(order[applied].cells);
                        applied += 1;
                    }
                    if let Err(e) = check_image(app, &r.img) {
                        results.lock().unwrap().insert(p, e);
                    }
                }
            });
        }
    });
    let results = results.into_inner().unwrap();
    let mut rep = PointsReport {
        durable_points,
        tried: chosen.len() as u64,
        distinct: todo.len() as u64,
        ..PointsReport::default()
    };
    for (&p, &r) in chosen.iter().zip(&rep_of) {
        if let Some((stage, message)) = results.get(&r) {
            rep.failed += 1;
            if rep.first.is_none() {
                rep.first = Some(PointFailure {
                    cycle: all[p].0,
                    stage: stage.clone(),
                    message: message.clone(),
                });
            }
        }
    }
    rep
}

/// The points chosen by `which` among `n` (not `At`).
fn choose(which: Points, n: usize) -> Vec<usize> {
    match which {
        Points::Sample { n: k, seed } => sample(n, k, seed),
        _ => (0..n).collect(),
    }
}

/// `check_points` with `App::incremental`: each thread takes a contiguous
/// run of the chosen points, evaluates the invariant in full at its first
/// and then only the units the flushes since the previous point touched.
/// The earliest failure's message comes from `App::check`.
fn check_incrementally(
    app: &dyn App,
    init: &PmImage,
    ex: &Execution,
    which: Points,
    threads: usize,
) -> PointsReport {
    let order = replay_order(ex);
    let all = points(init, &order);
    let chosen = choose(which, all.len());
    let distinct = chosen
        .iter()
        .map(|&p| all[p].2)
        .collect::<HashSet<_>>()
        .len();
    let threads = threads.clamp(1, chosen.len().max(1));
    let chunk = chosen.len().div_ceil(threads).max(1);
    let verdicts: Vec<Vec<bool>> = std::thread::scope(|s| {
        let handles: Vec<_> = chosen
            .chunks(chunk)
            .map(|part| {
                let (order, all) = (&order, &all);
                s.spawn(move || {
                    let mut r = Replay::new(init);
                    let mut applied = 0;
                    let mut changed = vec![];
                    let mut inc = None;
                    let mut out = Vec::with_capacity(part.len());
                    for &p in part {
                        while applied < all[p].1 {
                            r.apply_noting(order[applied].cells, &mut changed);
                            applied += 1;
                        }
                        let inc = inc.get_or_insert_with(|| {
                            changed.clear();
                            app.incremental(&r.img)
                                .expect("the app has an incremental form")
                        });
                        changed.sort_unstable();
                        changed.dedup();
                        out.push(inc.update(&r.img, &changed));
                        changed.clear();
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ok: Vec<bool> = verdicts.into_iter().flatten().collect();
    let mut rep = PointsReport {
        durable_points: all.len() as u64,
        tried: chosen.len() as u64,
        distinct: distinct as u64,
        failed: ok.iter().filter(|&&k| !k).count() as u64,
        first: None,
        incremental: true,
    };
    if let Some(k) = ok.iter().position(|&k| !k) {
        let (cycle, upto, _) = all[chosen[k]];
        let mut r = Replay::new(init);
        for f in &order[..upto] {
            r.apply(f.cells);
        }
        let (stage, message) = check_image(app, &r.img).err().unwrap_or_else(|| {
            (
                "incremental".into(),
                format!(
                    "{}'s incremental invariant fails here but its full check passes                      (a bug in the incremental form; compare with --full-check)",
                    app.name()
                ),
            )
        });
        rep.first = Some(PointFailure {
            cycle,
            stage,
            message,
        });
    }
    rep
}

/// The image at each of `cycles` (ascending), for recovery runs.
pub fn images_at(init: &PmImage, ex: &Execution, cycles: &[u64]) -> Vec<PmImage> {
    let order = replay_order(ex);
    let mut r = Replay::new(init);
    let mut i = 0;
    let mut out = vec![];
    for &c in cycles {
        while i < order.len() && order[i].durable <= c {
            r.apply(order[i].cells);
            i += 1;
        }
        out.push(r.img.clone());
    }
    out
}

/// `k` cycles spread evenly over the distinct durable images of `ex`
/// (always including the last), ascending.
pub fn spread_points(init: &PmImage, ex: &Execution, k: usize) -> Vec<u64> {
    let order = replay_order(ex);
    let all = points(init, &order);
    let mut seen = HashSet::new();
    let distinct: Vec<u64> = all
        .iter()
        .filter(|p| seen.insert(p.2))
        .map(|p| p.0)
        .collect();
    if k == 0 || distinct.is_empty() {
        return vec![];
    }
    if k >= distinct.len() {
        return distinct;
    }
    let n = distinct.len();
    let mut v: Vec<u64> = (0..k)
        .map(|i| distinct[(n - 1) - (k - 1 - i) * (n - 1) / (k - 1).max(1)])
        .collect();
    v.dedup();
    v
}

/// Two images equal word by word (absent words read as 0).
pub fn same_image(a: &PmImage, b: &PmImage) -> Option<u64> {
    a.words
        .keys()
        .chain(b.words.keys())
        .find(|&&k| a.get(k) != b.get(k))
        .copied()
}

/// One recovery run on the GPU model.
#[derive(Clone, Debug, Serialize)]
pub struct RecoveryRun {
    /// The crash point (cycle of the run).
    pub crash_cycle: u64,
    /// Cycles of the recovery kernels.
    pub cycles: u64,
    pub finished: bool,
    /// First address where its image differs from the functional recovery.
    pub differs_at: Option<u64>,
}

/// The recovery kernels for the images at `k` crash points of `ex` spread
/// over its distinct images, each run on the GPU model of `preset`, on
/// `threads` threads; in crash-cycle order.
pub fn recovery_runs(
    app: &dyn App,
    preset: &str,
    over: &Overrides,
    init: &PmImage,
    ex: &Execution,
    k: usize,
    threads: usize,
) -> Result<Vec<RecoveryRun>> {
    let at = spread_points(init, ex, k);
    let images = images_at(init, ex, &at);
    let out: Mutex<Vec<Option<Result<RecoveryRun>>>> =
        Mutex::new((0..at.len()).map(|_| None).collect());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, at.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(img) = images.get(i) else { break };
                let r = recover_one(app, preset, over, img, at[i]);
                out.lock().unwrap()[i] = Some(r);
            });
        }
    });
    out.into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every recovery ran"))
        .collect()
}

fn recover_one(
    app: &dyn App,
    preset: &str,
    over: &Overrides,
    img: &PmImage,
    crash_cycle: u64,
) -> Result<RecoveryRun> {
    let cfg = resolve_config(&ConfigSource::Preset(preset.into()), over)?;
    let mut b = build_gpu(&cfg, Shadow::None, sbrp_sim_fast::Fault::None)?;
    let prog = app.recovery(img);
    let r = b.gpu.run(
        prog.as_ref(),
        sbrp_gpu::RunOpts {
            record: true,
            ..Default::default()
        },
    );
    let ex = r
        .execution
        .as_ref()
        .ok_or_else(|| BenchError::Invalid("the recovery run kept no record".into()))?;
    let after = PmImage::at_cycle(img, ex, u64::MAX);
    Ok(RecoveryRun {
        crash_cycle,
        cycles: r.cycles,
        finished: r.finished,
        differs_at: same_image(&after, &app.recover(img)),
    })
}

/// Median and largest of the recovery runs' cycles.
pub fn median_worst(runs: &[RecoveryRun]) -> Option<(u64, u64)> {
    let mut c: Vec<u64> = runs.iter().map(|r| r.cycles).collect();
    c.sort_unstable();
    Some((*c.get((c.len().max(1) - 1) / 2)?, *c.last()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_sorted_distinct_and_deterministic() {
        let a = sample(1000, 50, 7);
        assert_eq!(a.len(), 50);
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(a, sample(1000, 50, 7));
        assert_ne!(a, sample(1000, 50, 8));
        assert_eq!(sample(5, 10, 1), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn the_image_hash_follows_the_words_not_the_order() {
        let mut a = Replay::new(&PmImage::default());
        let mut b = Replay::new(&PmImage::default());
        let c = |addr, value| sbrp_trace::Cell { addr, value };
        a.apply(&[c(8, 1), c(16, 2)]);
        b.apply(&[c(16, 2), c(8, 5)]);
        assert_ne!(a.hash, b.hash);
        b.apply(&[c(8, 1)]);
        assert_eq!(a.hash, b.hash);
        assert_eq!(a.img, b.img);
    }
}
