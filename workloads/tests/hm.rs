//! HM (`../shared/notes/sbrp-benchmarks.md` §2.2): the invariant on the
//! images, the kernels and launch shapes, store values that replay to the
//! images, determinism, size limits and generation speed.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Instant;

use sbrp_trace::program::{Instr, Program, Space};
use sbrp_workloads::hm::Hm;
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
    let app = Hm::new(None).unwrap();
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
    // Recovery brings the map back to its words before the batch: the
    // earlier batch's nodes.
    let m = app.layout().map;
    let init = app.initial_image();
    let words = |img: &PmImage, p: u64| [img.get(m + 8 * p), img.get(m + 8 * p + 4)];
    assert!((0..300 * 576).all(|p| words(&rec, p) == words(&init, p)));
    let keys = |img: &PmImage| (0..300 * 576).filter(|&p| img.get(m + 8 * p) != 0).count();
    assert!(keys(&init) > 24_900, "{}", keys(&init));
    assert!(keys(&fin) > 49_800, "{}", keys(&fin));
    // A durable slot change without its log entry is caught mid-transaction.
    let mut bad = crash.clone();
    let q = (0..300 * 576)
        .find(|&q| app.old_words(q) == app.new_words(q))
        .unwrap();
    bad.set(app.layout().node_log.head(q), 8 * q);
    assert!(
        app.check(&bad).is_ok(),
        "slot {q} is unchanged, its entry may be missing"
    );
    let p = (0..300 * 576)
        .find(|&p| app.old_words(p) != app.new_words(p))
        .unwrap();
    bad.set(app.layout().node_log.head(p), 8 * p);
    assert!(app.check(&bad).is_err());
    // A head durable before its entry: the entry's words are not the slot's.
    let mut bad = crash.clone();
    let e = app.layout().node_log.entry_addr(p);
    bad.set(e, crash.get(e) ^ 1);
    assert!(app.check(&bad).is_err());
    // A lost restore: one slot left new after recovery breaks the batch's
    // atomicity.
    let mut bad = rec.clone();
    bad.set(m + 8 * p, app.new_words(p)[0] ^ 1);
    assert!(app.check(&bad).is_err());
}

#[test]
fn stores_replay_to_the_images() {
    let app = Hm::new(Some(3000)).unwrap();
    let init = app.initial_image();
    let fin = replay(&*app.program(Build::Gpu), &init);
    assert!(same(&fin, &app.final_image()));
    let crash = replay(&*app.crash_program(), &init);
    assert!(same(&crash, &app.crash_image()));
    let rec = replay(&*app.recovery(&crash), &crash);
    assert!(same(&rec, &app.recover(&crash)));
    // Nothing logged: getNodeCount alone, nothing changes.
    let r0 = app.recovery(&init);
    assert_eq!(shapes(&*r0), vec![("getNodeCount".to_string(), 1, 1)]);
    assert!(same(&app.recover(&init), &init));
}

#[test]
fn kernels_and_launch_shapes() {
    let app = Hm::new(None).unwrap();
    assert_eq!(app.size(), 25_000);
    let n = |s: &str| s.to_string();
    assert_eq!(
        shapes(&*app.program(Build::Gpu)),
        vec![
            (n("logHashMap"), 1, 1),
            (n("markBuckets"), 32, 1024),
            (n("compactBuckets"), 300, 576),
            (n("cuHashPhase1"), 300, 576),
            (n("cuHashPhase2"), 300, 576),
            (n("clearLog1"), 1, 1),
            (n("clearLog2"), 300, 576),
            (n("findKernel"), 30, 576),
        ]
    );
    assert_eq!(shapes(&*app.crash_program()).len(), 5);
    let r = app.recovery(&app.crash_image());
    assert_eq!(
        shapes(&*r),
        vec![(n("getNodeCount"), 1, 1), (n("recoverFromLog"), 50, 576)]
    );
    // Every bucket, 6 per CTA: per warp an oFence after its restores and
    // one in the partitions' clear.
    let ofences = count(&*r, 1, |i| *i == Instr::OFence);
    assert_eq!(ofences, 300 * 18 * 2);
}

#[test]
fn fences_and_barriers_where_the_note_places_them() {
    let app = Hm::new(None).unwrap();
    let p = app.program(Build::Gpu);
    // compactBuckets: per warp a log insert (2 oFences), a dFence, a barrier.
    assert_eq!(count(&*p, 2, |i| *i == Instr::OFence), 300 * 18 * 2);
    assert_eq!(count(&*p, 2, |i| *i == Instr::DFence), 300 * 18);
    // cuHashPhase2: 1 + 25 x 4 barriers in each warp holding keys (about
    // 167 a bucket: the earlier batch's and this one's).
    let c = p.cta(4, 0);
    let live: Vec<_> = c.warps.iter().filter(|w| w.len() > 2).collect();
    assert_eq!(live.len(), 6);
    for w in live {
        assert_eq!(w.iter().filter(|i| **i == Instr::Bar).count(), 101);
    }
    // Phase 1: no fences; clearLog2: an oFence and a device fence per warp.
    assert_eq!(
        count(&*p, 3, |i| matches!(i, Instr::OFence | Instr::DFence)),
        0
    );
    assert_eq!(count(&*p, 6, |i| *i == Instr::OFence), 300 * 18);
    // GPM: a device fence after every persistency op, and the source's extra
    // one after the dFences of logHashMap, compactBuckets and phase 2.
    let g = app.program(Build::Gpm);
    let fence = |i: &Instr| matches!(i, Instr::Fence(_));
    let persist = |i: &Instr| matches!(i, Instr::OFence | Instr::DFence);
    let df = |i: &Instr| *i == Instr::DFence;
    for k in 0..8 {
        let extra = if [0, 2, 4].contains(&k) {
            count(&*p, k, df)
        } else {
            0
        };
        assert_eq!(
            count(&*g, k, fence),
            count(&*p, k, fence) + count(&*p, k, persist) + extra,
            "kernel {k}"
        );
    }
}

#[test]
fn deterministic() {
    let a = digest(&*Hm::new(Some(3000)).unwrap().program(Build::Gpu));
    let b = digest(&*Hm::new(Some(3000)).unwrap().program(Build::Gpu));
    assert_eq!(a, b);
}

#[test]
fn sizes_refused_with_the_size() {
    for s in [0, 46_350, 1 << 20] {
        let e = Hm::new(Some(s)).err().expect("refused");
        assert!(e.contains(&s.to_string()), "{e}");
    }
    assert!(Hm::new(Some(300)).is_ok());
    assert!(Hm::new(Some(46_349)).is_ok());
    // Below 300 keys, one bucket a key.
    let small = Hm::new(Some(12)).unwrap();
    assert_eq!(small.buckets(), 12);
    let prog = small.program(Build::Gpu);
    assert_eq!(prog.kernels()[2].grid, 12);
}

#[test]
fn default_size_generates_fast() {
    let t = Instant::now();
    let app = Hm::new(None).unwrap();
    let (n, _) = digest(&*app.program(Build::Gpu));
    let el = t.elapsed();
    eprintln!("{n} instructions generated in {el:?}");
    assert!(n > 200_000 && n < 5_000_000, "{n} instructions");
    assert!(el.as_secs_f64() < 20.0, "{el:?}");
}

#[test]
fn invariant_holds_at_kernel_boundaries_and_halfway() {
    let app = Hm::new(Some(3000)).unwrap();
    check_prefixes(&app, &*app.program(Build::Gpu));
}

/// Crashes inside compactBuckets, the two phases and clearLog2: every warp
/// stopped in the same barrier segment, its stores up to the cut durable.
#[test]
fn invariant_holds_inside_kernels() {
    let app = Hm::new(Some(3000)).unwrap();
    let prog = app.program(Build::Gpu);
    let mut before = app.initial_image();
    for k in 0..7 {
        let grid = prog.kernels()[k].grid;
        if [2, 3, 4, 6].contains(&k) {
            for cut in [1, 60] {
                let mut img = before.clone();
                replay_cut(&*prog, &mut img, k, 0..grid, cut, 0.5);
                app.check(&img)
                    .unwrap_or_else(|e| panic!("kernel {k} segment {cut}: {e}"));
                app.check(&app.recover(&img))
                    .unwrap_or_else(|e| panic!("kernel {k} segment {cut}, recovered: {e}"));
            }
        }
        replay_ctas(&*prog, &mut before, k, 0..grid);
    }
}

/// The programs pass the program-file checks (values fit their size, one
/// address and value per active lane, ...) and read back unchanged.
#[test]
fn programs_round_trip_through_the_file_form() {
    let app = Hm::new(Some(300)).unwrap();
    let rec = app.recovery(&app.crash_image());
    for prog in [app.program(Build::Gpm), app.crash_program(), rec] {
        let mut text = vec![];
        sbrp_trace::write_program(&*prog, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        let file = sbrp_trace::parse_program(&text, "hm.prog").unwrap();
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
