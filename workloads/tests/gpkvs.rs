//! gpKVS (`../shared/notes/sbrp-benchmarks.md` §2.1): the invariant on the
//! images, the kernels and launch shapes, store values that replay to the
//! images, determinism, size limits and generation speed.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Instant;

use sbrp_trace::program::{Instr, Program, Space};
use sbrp_workloads::gpkvs::Gpkvs;
use sbrp_workloads::{App, Build, PmImage};

/// Applies every PM store of `prog` to `img`: kernels in order, each CTA's
/// warps segment by segment between barriers, warps in order.
fn replay(prog: &dyn Program, img: &PmImage) -> PmImage {
    let mut img = img.clone();
    for (k, info) in prog.kernels().iter().enumerate() {
        replay_ctas(prog, &mut img, k, 0..info.grid);
    }
    img
}

/// Applies the PM stores of CTAs `ctas` of kernel `k`.
fn replay_ctas(prog: &dyn Program, img: &mut PmImage, k: usize, ctas: std::ops::Range<u32>) {
    replay_cut(prog, img, k, ctas, usize::MAX, 0.0);
}

/// Applies the PM stores of CTAs `ctas` of kernel `k` up to the first
/// `frac` of each warp's barrier segment `cut` (earlier segments whole).
fn replay_cut(
    prog: &dyn Program,
    img: &mut PmImage,
    k: usize,
    ctas: std::ops::Range<u32>,
    cut: usize,
    frac: f64,
) {
    for c in ctas {
        let code = prog.cta(k, c);
        let segs: Vec<Vec<&[Instr]>> = code
            .warps
            .iter()
            .map(|w| w.split(|i| *i == Instr::Bar).collect())
            .collect();
        let n = segs
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            .min(cut.saturating_add(1));
        for s in 0..n {
            for w in &segs {
                let seg = w.get(s).copied().unwrap_or(&[]);
                let upto = if s == cut {
                    (seg.len() as f64 * frac) as usize
                } else {
                    seg.len()
                };
                for i in &seg[..upto] {
                    if let Instr::St {
                        space: Space::Pm,
                        mask,
                        addrs,
                        values,
                        ..
                    } = i
                    {
                        let mut r = 0;
                        for lane in 0..32 {
                            if mask & (1 << lane) != 0 {
                                let v = values.get(r).expect("PM store without values");
                                img.set(addrs.lane(lane, r), v);
                                r += 1;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Crashes with every persist durable after each kernel and halfway
/// through each kernel's grid: the invariant holds there and after recovery.
fn check_prefixes(app: &dyn App, prog: &dyn Program) {
    let mut img = app.initial_image();
    for (k, info) in prog.kernels().iter().enumerate() {
        let half = info.grid / 2;
        let mut mid = img.clone();
        replay_ctas(prog, &mut mid, k, 0..half);
        replay_ctas(prog, &mut img, k, 0..info.grid);
        for (what, i) in [("halfway", &mid), ("after", &img)] {
            let name = &info.name;
            app.check(i)
                .unwrap_or_else(|e| panic!("{what} {name}: {e}"));
            let r = app.recover(i);
            app.check(&r)
                .unwrap_or_else(|e| panic!("{what} {name}, recovered: {e}"));
        }
    }
}

fn same(a: &PmImage, b: &PmImage) -> bool {
    a.words
        .keys()
        .chain(b.words.keys())
        .all(|&k| a.get(k) == b.get(k))
}

/// (instructions, hash) of every CTA of every kernel.
fn digest(prog: &dyn Program) -> (usize, u64) {
    let mut h = DefaultHasher::new();
    let mut n = 0;
    for (k, info) in prog.kernels().iter().enumerate() {
        for c in 0..info.grid {
            let code = prog.cta(k, c);
            n += code.instrs();
            format!("{:?}", code.warps).hash(&mut h);
        }
    }
    (n, h.finish())
}

fn shapes(prog: &dyn Program) -> Vec<(String, u32, u32)> {
    prog.kernels()
        .iter()
        .map(|k| (k.name.clone(), k.grid, k.block))
        .collect()
}

fn count(prog: &dyn Program, k: usize, f: impl Fn(&Instr) -> bool) -> usize {
    (0..prog.kernels()[k].grid)
        .map(|c| {
            prog.cta(k, c)
                .warps
                .iter()
                .flatten()
                .filter(|i| f(i))
                .count()
        })
        .sum()
}

#[test]
fn invariant_holds_on_the_images_and_fails_on_corruption() {
    let app = Gpkvs::new(Some(4096)).unwrap();
    let fin = app.final_image();
    let crash = app.crash_image();
    let rec = app.recover(&crash);
    for (what, img) in [
        ("initial", app.initial_image()),
        ("final", fin.clone()),
        ("crash", crash.clone()),
        ("recovered", rec.clone()),
    ] {
        app.check(&img).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(app.check(&app.corrupt(&img)).is_err(), "{what} corrupted");
    }
    // Recovery brings every slot back to its pre-batch (empty) contents.
    let t = app.layout().table;
    assert!(rec.words.range(t..t + (1 << 27)).all(|(_, v)| *v == 0));
    assert!(fin.words.range(t..t + (1 << 27)).any(|(_, v)| *v != 0));
    // Orders the log protects, broken: a new loc whose entry's head is not
    // durable, and a durable head over an entry that is not.
    let log = &app.layout().log;
    let mut bad = crash.clone();
    bad.set(log.head(1), log.start(1));
    assert!(app
        .check(&bad)
        .unwrap_err()
        .contains("no durable log entry"));
    let mut bad = crash.clone();
    bad.set(log.entry_addr(1) + 8, 0);
    assert!(app
        .check(&bad)
        .unwrap_err()
        .contains("not durable before its head"));
    // A durable commit needs every value of the batch, not just one: the
    // commit (partition 0 cleared) with every new loc lost is caught by the
    // signatures that logged slots still hold, mid-clear and at the end.
    let locs_lost = |img: &PmImage| {
        let mut bad = img.clone();
        let t = app.layout().table;
        let locs: Vec<u64> = bad
            .words
            .range(t..t + (1 << 27))
            .filter(|(a, _)| (*a - t) % 32 >= 16)
            .map(|(a, _)| *a)
            .collect();
        for a in locs {
            bad.set(a, 0);
        }
        bad
    };
    let mut committed = crash.clone();
    log.apply_clear(&mut committed, 0);
    app.check(&committed).unwrap();
    for img in [&committed, &fin] {
        assert!(app
            .check(&locs_lost(img))
            .unwrap_err()
            .contains("a value lost"));
    }
    // Recovered, the same image is consistent: its logged slots are empty.
    app.check(&locs_lost(&rec)).unwrap();
}

#[test]
fn stores_replay_to_the_images() {
    let app = Gpkvs::new(Some(4096)).unwrap();
    let init = app.initial_image();
    let fin = replay(&*app.program(Build::Gpu), &init);
    assert!(same(&fin, &app.final_image()));
    let crash = replay(&*app.crash_program(), &init);
    assert!(same(&crash, &app.crash_image()));
    let rec = replay(&*app.recovery(&crash), &crash);
    assert!(same(&rec, &app.recover(&crash)));
    // An inactive log: recovery only clears partition 0.
    let rec0 = app.recovery(&init);
    assert_eq!(count(&*rec0, 1, |i| matches!(i, Instr::St { .. })), 0);
}

#[test]
fn kernels_and_launch_shapes() {
    let app = Gpkvs::new(None).unwrap();
    assert_eq!(app.size(), 65_536);
    let n = |s: &str| s.to_string();
    assert_eq!(
        shapes(&*app.program(Build::Gpu)),
        vec![
            (n("setupPartitions"), 129, 512),
            (n("logDummy"), 1, 1),
            (n("hash_insert_2choice"), 16, 512),
            (n("invalidateLog"), 1, 1),
            (n("clearLogs"), 128, 512),
        ]
    );
    assert_eq!(shapes(&*app.crash_program()).len(), 3);
    let small = Gpkvs::new(Some(2048)).unwrap();
    assert_eq!(
        shapes(&*small.recovery(&small.crash_image())),
        vec![
            (n("checkLogValid"), 1, 1),
            (n("recoverFromLog"), 5, 512),
            (n("invalidateLog"), 1, 1),
        ]
    );
}

#[test]
fn fences_where_the_note_places_them() {
    let app = Gpkvs::new(Some(2048)).unwrap();
    let p = app.program(Build::Gpu);
    // Insert: a warp's 8 keys of a step log together: two oFences (log, head)
    // and a dFence per warp and step (more when a race makes some retry),
    // plus a dFence per warp at exit; at least 5 barriers per block step
    // (one step per block here: 2048 / 16 / 128).
    let warp_steps = 2048 / 8;
    let of = count(&*p, 2, |i| *i == Instr::OFence);
    assert!(of >= 2 * warp_steps && of < 3 * warp_steps, "{of}");
    let df = count(&*p, 2, |i| *i == Instr::DFence);
    assert_eq!(df, of / 2 + 16 * 16);
    let bars_cta0 = p.cta(2, 0).warps[0]
        .iter()
        .filter(|i| **i == Instr::Bar)
        .count();
    assert!(bars_cta0 >= 5, "{bars_cta0} barriers");
    // clearLogs: a clear (oFence, fence.dev) and a dFence per thread's warp.
    assert_eq!(count(&*p, 4, |i| *i == Instr::DFence), 2048 / 32);
    // GPM: a device fence after every oFence and dFence.
    let g = app.program(Build::Gpm);
    let is_fence = |i: &Instr| matches!(i, Instr::Fence(_));
    let persist = |i: &Instr| matches!(i, Instr::OFence | Instr::DFence);
    for k in 0..5 {
        assert_eq!(
            count(&*g, k, is_fence),
            count(&*p, k, is_fence) + count(&*p, k, persist)
        );
    }
}

#[test]
fn deterministic() {
    let a = digest(&*Gpkvs::new(Some(4096)).unwrap().program(Build::Gpu));
    let b = digest(&*Gpkvs::new(Some(4096)).unwrap().program(Build::Gpu));
    assert_eq!(a, b);
    assert!(a.0 > 4096 * 3, "{} instructions", a.0);
}

#[test]
fn sizes_refused_with_the_size() {
    for s in [0, 1000, 2049, 1 << 21] {
        let e = Gpkvs::new(Some(s)).err().expect("refused");
        assert!(e.contains(&s.to_string()), "{e}");
    }
}

#[test]
fn default_size_generates_fast() {
    let t = Instant::now();
    let app = Gpkvs::new(None).unwrap();
    let (n, _) = digest(&*app.program(Build::Gpu));
    let el = t.elapsed();
    eprintln!("{n} instructions generated in {el:?}");
    // About 32 instructions per warp per key step in the insert kernel.
    assert!(n > 250_000 && n < 2_000_000, "{n} instructions");
    assert!(el.as_secs_f64() < 20.0, "{el:?}");
}

#[test]
fn invariant_holds_at_kernel_boundaries_and_halfway() {
    let app = Gpkvs::new(Some(4096)).unwrap();
    check_prefixes(&app, &*app.program(Build::Gpu));
}

/// Crashes inside the insert kernel: every warp of every CTA stopped in the
/// same barrier segment, its stores up to the cut durable.
#[test]
fn invariant_holds_inside_the_insert_kernel() {
    let app = Gpkvs::new(Some(4096)).unwrap();
    let prog = app.program(Build::Gpu);
    let mut before = app.initial_image();
    replay_ctas(&*prog, &mut before, 0, 0..129);
    replay_ctas(&*prog, &mut before, 1, 0..1);
    for cut in 0..14 {
        for frac in [0.3, 0.6, 0.9] {
            let mut img = before.clone();
            replay_cut(&*prog, &mut img, 2, 0..16, cut, frac);
            app.check(&img)
                .unwrap_or_else(|e| panic!("segment {cut} x {frac}: {e}"));
            app.check(&app.recover(&img))
                .unwrap_or_else(|e| panic!("segment {cut} x {frac}, recovered: {e}"));
        }
    }
}

/// The programs pass the program-file checks (values fit their size, one
/// address and value per active lane, ...) and read back unchanged.
#[test]
fn programs_round_trip_through_the_file_form() {
    let app = Gpkvs::new(Some(2048)).unwrap();
    let rec = app.recovery(&app.crash_image());
    for prog in [app.program(Build::Gpm), app.crash_program(), rec] {
        let mut text = vec![];
        sbrp_trace::write_program(&*prog, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        let file = sbrp_trace::parse_program(&text, "gpkvs.prog").unwrap();
        assert_eq!(file.kernels, prog.kernels());
        for (k, info) in prog.kernels().iter().enumerate() {
            for c in 0..info.grid {
                let mut want = prog.cta(k, c);
                // The writer leaves out warps without instructions.
                while want.warps.last().is_some_and(Vec::is_empty) {
                    want.warps.pop();
                }
                let mut got = file.cta(k, c);
                while got.warps.last().is_some_and(Vec::is_empty) {
                    got.warps.pop();
                }
                assert_eq!(got, want, "kernel {k} CTA {c}");
            }
        }
    }
}

#[test]
fn warps_of_an_insert_cta_meet_the_same_barriers() {
    let app = Gpkvs::new(Some(8192)).unwrap();
    let p = app.program(Build::Gpu);
    for c in 0..16 {
        let bars: Vec<usize> = p
            .cta(2, c)
            .warps
            .iter()
            .map(|w| w.iter().filter(|i| **i == Instr::Bar).count())
            .collect();
        assert!(bars.iter().all(|&b| b == bars[0]), "CTA {c}: {bars:?}");
    }
}

/// Two groups racing for one slot in one iteration: the GPU model may land
/// either signature last (the program follows `sim`'s choice), so a
/// committed image holding the other one is consistent; a signature from
/// no racing store is not.
#[test]
fn a_committed_slot_may_hold_either_racing_signature() {
    let app = Gpkvs::new(None).unwrap();
    let b = sbrp_workloads::gpkvs::sim::run(65_536);
    let (&slot, sigs) = b
        .last_sigs
        .iter()
        .filter(|(_, v)| v.len() > 1)
        .min_by_key(|(s, _)| **s)
        .expect("a race at the default size");
    let won = b.post[&slot].0;
    let other = *sigs.iter().find(|&&s| s != won).unwrap();
    let fin = app.final_image();
    app.check(&fin).unwrap();
    let mut img = fin.clone();
    img.set(app.layout().sig_addr(slot), other as u64);
    app.check(&img).unwrap();
    img.set(app.layout().sig_addr(slot), 12345);
    assert!(app.check(&img).unwrap_err().contains("a value lost"));
}
