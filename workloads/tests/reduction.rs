//! Tests of the Reduction generator (`workloads/src/reduction.rs`), against
//! `../shared/notes/sbrp-benchmarks.md` §2.4: launch shapes, the per-block
//! steps and their ordering, the sums the PM stores carry, the crash image
//! and the invariant.

use std::time::Instant;

use sbrp_trace::program::{FenceScope, Instr, Program, Space};
use sbrp_trace::{parse_program, write_program, Scope};
use sbrp_workloads::reduction::{input, Reduction, BLOCKS, LAST_BLOCK, PER_LAUNCH};
use sbrp_workloads::{App, Build, PmImage};

/// Every PM store and PM release of `p`, applied kernel by kernel, CTA by
/// CTA, warp by warp from the last: warps 1-15 write back the old
/// `g_odata[block]` before warp 0 writes the new one.
fn replay(p: &dyn Program, initial: &PmImage) -> PmImage {
    let mut img = initial.clone();
    for (k, info) in p.kernels().iter().enumerate() {
        for c in 0..info.grid {
            for w in p.cta(k, c).warps.into_iter().rev() {
                for i in w {
                    match i {
                        Instr::St {
                            space: Space::Pm,
                            mask,
                            addrs,
                            values,
                            ..
                        } => {
                            let mut rank = 0;
                            for lane in 0..32 {
                                if mask & (1 << lane) != 0 {
                                    let v = values.get(rank).expect("PM store without value");
                                    img.set(addrs.lane(lane, rank), v);
                                    rank += 1;
                                }
                            }
                        }
                        Instr::PRel {
                            space: Space::Pm,
                            flag,
                            value,
                            ..
                        } => img.set(flag, value),
                        _ => {}
                    }
                }
            }
        }
    }
    img
}

/// Images compared by their first difference (they are too big to print).
fn same(a: &PmImage, b: &PmImage) {
    let d = a.words.iter().zip(b.words.iter()).find(|(x, y)| x != y);
    assert!(
        d.is_none() && a.words.len() == b.words.len(),
        "first difference {d:?}"
    );
}

fn one() -> Reduction {
    Reduction::new(Some(PER_LAUNCH)).unwrap()
}

#[test]
fn kernels_and_launch_shapes_follow_the_note() {
    let app = Reduction::new(None).unwrap();
    assert_eq!(
        (app.name(), app.size(), app.launches()),
        ("reduction", 4_194_304, 16)
    );
    let p = app.program(Build::Gpu);
    assert_eq!(p.kernels().len(), 16);
    for k in p.kernels() {
        assert_eq!(
            (k.name.as_str(), k.grid, k.block),
            ("reduceSinglePass", 60, 512)
        );
    }
    let r = app.recovery(&app.crash_image());
    let k = &r.kernels()[0];
    assert_eq!(
        (k.name.as_str(), k.grid, k.block),
        ("recoveryKernel", 60, 512)
    );
    assert_eq!(r.kernels().len(), 1);
    // It reads sdata[tid] of the first launch's regions: one line per warp.
    for w in r.cta(0, 7).warps {
        assert!(matches!(
            w[..],
            [
                Instr::Ld {
                    space: Space::Pm,
                    ..
                },
                Instr::Compute { .. }
            ]
        ));
    }
}

#[test]
fn bad_sizes_are_refused_naming_the_size() {
    for s in [
        0,
        1000,
        PER_LAUNCH + 1,
        3 * PER_LAUNCH / 2,
        257 * PER_LAUNCH,
    ] {
        let e = Reduction::new(Some(s)).err().expect("refused");
        assert!(e.contains(&s.to_string()), "{e}");
    }
    assert_eq!(Reduction::new(Some(3 * PER_LAUNCH)).unwrap().launches(), 3);
}

#[test]
fn block_steps_follow_the_note() {
    let app = one();
    for build in [Build::Gpu, Build::Gpm] {
        let gpm = build == Build::Gpm;
        let code = app.program(build).cta(0, 0);
        assert_eq!(code.warps.len(), 16);
        let count = |w: &Vec<Instr>, f: &dyn Fn(&Instr) -> bool| w.iter().filter(|i| f(i)).count();
        let relb = |i: &Instr| {
            matches!(
                i,
                Instr::PRel {
                    scope: Scope::Block,
                    space: Space::Shared,
                    ..
                }
            )
        };
        let acqb = |i: &Instr| {
            matches!(
                i,
                Instr::PAcq {
                    scope: Scope::Block,
                    space: Space::Shared,
                    want: 1,
                    ..
                }
            )
        };
        let reld = |i: &Instr| {
            matches!(
                i,
                Instr::PRel {
                    scope: Scope::Device,
                    space: Space::Pm,
                    ..
                }
            )
        };
        // 12 warp-level RELb: warps 4-7, 2-3, 1, then 5 in warp 0.
        let rel: Vec<usize> = code.warps.iter().map(|w| count(w, &relb)).collect();
        assert_eq!(rel, [5, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        let acq: Vec<usize> = code.warps.iter().map(|w| count(w, &acqb)).collect();
        assert_eq!(acq, [8, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        for (w, code) in code.warps.iter().enumerate() {
            // Block 0 does 5 pairs (2 V-LDs each).
            let vld = count(code, &|i| {
                matches!(
                    i,
                    Instr::Ld {
                        space: Space::Global,
                        ..
                    }
                )
            });
            assert_eq!(vld, 10);
            assert_eq!(count(code, &reld), 1, "every warp releases at device scope");
            assert_eq!(count(code, &|i| *i == Instr::Bar), 2);
            assert_eq!(count(code, &|i| *i == Instr::DFence), (w == 0) as usize);
            if gpm {
                for (j, i) in code.iter().enumerate() {
                    if relb(i) || acqb(i) || reld(i) || *i == Instr::DFence {
                        assert_eq!(code[j + 1], Instr::Fence(FenceScope::Device));
                    }
                }
            }
        }
        // Warp 0: shrinking masks inside the warp, dFence, then g_odata.
        let w0 = &code.warps[0];
        let masks: Vec<u32> = w0
            .iter()
            .filter_map(|i| match i {
                Instr::St {
                    space: Space::Pm,
                    mask,
                    size: 4,
                    ..
                } => Some(*mask),
                _ => None,
            })
            .collect();
        assert_eq!(masks, [0xffff_0000, 0xff00, 0xf0, 0xc, 0x2, 0x1]);
        let df = w0.iter().position(|i| *i == Instr::DFence).unwrap();
        let g = w0
            .iter()
            .position(|i| {
                matches!(
                    i,
                    Instr::St {
                        size: 8,
                        mask: 1,
                        ..
                    }
                )
            })
            .unwrap();
        let rd = w0.iter().position(reld).unwrap();
        // The ticket by thread 0, the barrier, then warp 0's release (after
        // warps 1-15 released the old value before the barrier).
        let at = w0
            .iter()
            .position(|i| matches!(i, Instr::Atom { .. }))
            .unwrap();
        let bar = w0.iter().rposition(|i| *i == Instr::Bar).unwrap();
        assert!(df < g && g < at && at < bar && bar < rd);
        for w in &code.warps[1..] {
            let rd = w.iter().position(reld).unwrap();
            assert!(rd < w.iter().rposition(|i| *i == Instr::Bar).unwrap());
        }
        // Warps 8-15 store sdata[256..511] before the first barrier.
        for w in 8..16 {
            assert!(matches!(
                code.warps[w][10],
                Instr::St {
                    space: Space::Pm,
                    ..
                }
            ));
            assert_eq!(code.warps[w][11], Instr::Bar);
        }
    }
}

#[test]
fn step_9_releases_write_back_the_old_and_the_new_result() {
    let app = Reduction::new(Some(2 * PER_LAUNCH)).unwrap();
    let p = app.program(Build::Gpu);
    for (l, old) in [(0, 0), (1, app.block_result(0, 9).unwrap() as u64)] {
        let code = p.cta(l, 9);
        let vals: Vec<u64> = code
            .warps
            .iter()
            .map(|w| {
                w.iter()
                    .find_map(|i| match i {
                        Instr::PRel {
                            scope: Scope::Device,
                            flag,
                            value,
                            ..
                        } => Some((*flag, *value)),
                        _ => None,
                    })
                    .unwrap()
            })
            .map(|(f, v)| {
                assert_eq!(f, app.g_odata(9));
                v
            })
            .collect();
        assert_eq!(vals[0], app.block_result(l as u64, 9).unwrap() as u64);
        assert!(vals[1..].iter().all(|&v| v == old));
    }
}

#[test]
fn the_dev_variant_uses_device_scope_and_fences_the_first_barrier() {
    let app = one();
    let p = app.program_dev(Build::Gpu);
    assert_eq!(p.name(), "reduction_dev");
    assert_eq!(p.kernels(), app.program(Build::Gpu).kernels());
    let code = p.cta(0, 0);
    for w in &code.warps {
        assert!(!w.iter().any(|i| matches!(
            i,
            Instr::PAcq {
                scope: Scope::Block,
                ..
            } | Instr::PRel {
                scope: Scope::Block,
                ..
            }
        )));
        let bar = w.iter().position(|i| *i == Instr::Bar).unwrap();
        assert_eq!(w[bar - 1], Instr::Fence(FenceScope::Device));
    }
    let init = app.initial_image();
    same(&replay(&*p, &init), &app.final_image());
}

#[test]
fn the_last_block_acquires_every_result_then_reduces_them() {
    let app = one();
    let p = app.program(Build::Gpu);
    let last = p.cta(0, LAST_BLOCK);
    let acqd = |w: &Vec<Instr>| {
        w.iter()
            .filter(|i| {
                matches!(
                    i,
                    Instr::PAcq {
                        scope: Scope::Device,
                        space: Space::Pm,
                        ..
                    }
                )
            })
            .count()
    };
    assert_eq!(acqd(&last.warps[0]) + acqd(&last.warps[1]), BLOCKS as usize);
    assert!(last.warps[2..].iter().all(|w| acqd(w) == 0));
    assert!(p.cta(0, 0).warps.iter().all(|w| acqd(w) == 0));
    // Each acquire waits for the block's result.
    let wants: Vec<u64> = last
        .warps
        .iter()
        .flatten()
        .filter_map(|i| match i {
            Instr::PAcq {
                scope: Scope::Device,
                want,
                ..
            } => Some(*want),
            _ => None,
        })
        .collect();
    let results: Vec<u64> = (0..BLOCKS)
        .map(|b| app.block_result(0, b).unwrap() as u64)
        .collect();
    assert_eq!(wants, results);
    assert_eq!(
        last.warps[0]
            .iter()
            .filter(|i| **i == Instr::DFence)
            .count(),
        2
    );
}

#[test]
fn sums_are_right() {
    let app = one();
    // The total of the launch is the sum of its inputs, wrapping as int.
    let sum = (0..PER_LAUNCH).fold(0u32, |a, i| a.wrapping_add(input(i)));
    assert_eq!(app.launch_total(0).unwrap(), sum);
    let fin = app.final_image();
    assert_eq!(fin.get(app.g_odata(BLOCKS)), sum as u64);
    assert_eq!(fin.get(app.region(0, BLOCKS)), sum as u64);
    // Block 20: elements 20*1024 + k*61440 + (0..1024), 4 pairs (blocks
    // 0-15 have a fifth).
    let b20 = (0..4u64)
        .flat_map(|k| (0..1024).map(move |j| 20 * 1024 + k * 61_440 + j))
        .fold(0u32, |a, i| a.wrapping_add(input(i)));
    assert_eq!(app.block_result(0, 20).unwrap(), b20);
}

#[test]
fn replayed_stores_give_the_final_and_crash_images() {
    let app = Reduction::new(Some(2 * PER_LAUNCH)).unwrap();
    let init = app.initial_image();
    let fin = replay(&*app.program(Build::Gpu), &init);
    same(&fin, &app.final_image());
    same(&fin, &replay(&*app.program(Build::Gpm), &init));
    let cp = app.crash_program();
    let k = cp.kernels();
    assert_eq!(k.len(), 1);
    assert_eq!(
        (k[0].name.as_str(), k[0].grid, k[0].block),
        ("reduceSinglePass", 60, 512)
    );
    // Cut mid-tree: no dFence, no device-scope release, no ticket.
    assert!(!cp.cta(0, 8).warps.iter().flatten().any(|i| matches!(
        i,
        Instr::DFence
            | Instr::Atom { .. }
            | Instr::PRel {
                scope: Scope::Device,
                ..
            }
    )));
    let crash = replay(&*cp, &init);
    same(&crash, &app.crash_image());
    // Block b stops after level 1 + b % 9: block 0 after level 1, block 8
    // with slot 0 written; nothing in g_odata.
    assert_eq!(crash.get(app.region(0, 0) + 127 * 4), 0);
    assert_ne!(crash.get(app.region(0, 0) + 128 * 4), 0);
    assert_eq!(
        crash.get(app.region(0, 8)),
        app.block_result(0, 8).unwrap() as u64
    );
    assert_eq!(crash.get(app.g_odata(0)), 0);
}

#[test]
fn invariant_holds_on_final_and_recovered_images_and_fails_on_corrupt() {
    let app = Reduction::new(None).unwrap();
    let fin = app.final_image();
    app.check(&fin).unwrap();
    app.check(&app.initial_image()).unwrap();
    let rec = app.recover(&app.crash_image());
    same(&rec, &app.crash_image());
    app.check(&rec).unwrap();
    for img in [&fin, &rec, &app.initial_image()] {
        assert!(app.check(&app.corrupt(img)).is_err());
    }
    // A partial sum whose input is not durable.
    let mut bad = fin.clone();
    bad.set(app.region(5, 7) + 300 * 4, 0);
    let e = app.check(&bad).unwrap_err();
    assert!(e.contains("launch 5 block 7") && e.contains("empty"), "{e}");
    // A wrong thread sum.
    let mut bad = fin.clone();
    bad.set(app.region(0, 0) + 400 * 4, 12345);
    assert!(app.check(&bad).unwrap_err().contains("slot 400"));
    // A final tree without a block's durable result.
    let mut bad = fin.clone();
    bad.set(app.region(0, 3), 0);
    let e = app.check(&bad).unwrap_err();
    assert!(e.contains("block 3's result"), "{e}");
    // A word that is no int, in an otherwise empty image.
    let mut bad = app.initial_image();
    bad.set(app.region(1, 1) + 8, 1 << 40);
    assert!(app.check(&bad).unwrap_err().contains("not an int"));
    let mut bad = fin.clone();
    bad.set(app.g_odata(2), 99);
    assert!(app.check(&bad).unwrap_err().contains("g_odata[2]"));
}

/// The final tree's slots wait only for the results their warp acquired:
/// warp 1 (slots 32-59) for blocks 32-59, warp 0 (slots 0-31) for all; a
/// result must be durable both in its tree and in `g_odata`.
#[test]
fn final_tree_slots_need_the_results_their_warp_acquired() {
    let app = one();
    let fin = app.final_image();
    let root = app.region(0, BLOCKS);
    // Warp 0's slots not yet durable, block 5 not done at all.
    let mut img = fin.clone();
    for t in 0..32 {
        img.set(root + 4 * t, 0);
    }
    img.set(app.g_odata(BLOCKS), 0);
    img.set(app.region(0, 5), 0);
    img.set(app.g_odata(5), 0);
    app.check(&img).unwrap();
    // Warp 0's slot 20 durable (its inputs 52, 84, ... are): block 5's
    // result is missing.
    let mut bad = img.clone();
    bad.set(root + 80, fin.get(root + 80));
    let e = app.check(&bad).unwrap_err();
    assert!(e.contains("slot 20") && e.contains("block 5's"), "{e}");
    // Block 40's result durable in its tree but not yet in g_odata.
    let mut bad = fin.clone();
    bad.set(app.g_odata(40), 0);
    let e = app.check(&bad).unwrap_err();
    assert!(
        e.contains("g_odata[40]") && e.contains("released before durable"),
        "{e}"
    );
}

#[test]
fn deterministic() {
    let (a, b) = (one(), one());
    assert_eq!(a.final_image(), b.final_image());
    let (pa, pb) = (a.program(Build::Gpm), b.program(Build::Gpm));
    for c in [0, 17, LAST_BLOCK] {
        assert_eq!(pa.cta(0, c), pb.cta(0, c));
    }
}

#[test]
fn program_text_round_trips() {
    let app = one();
    for p in [
        app.program(Build::Gpm),
        app.crash_program(),
        app.recovery(&app.crash_image()),
    ] {
        let mut out = Vec::new();
        write_program(&*p, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let back = parse_program(&text, "reduction.prog").unwrap();
        assert_eq!(back.kernels, p.kernels());
    }
}

#[test]
fn default_program_generates_fast() {
    let app = Reduction::new(None).unwrap();
    let t = Instant::now();
    let p = app.program(Build::Gpm);
    let mut instrs = 0;
    for (k, info) in p.kernels().iter().enumerate() {
        for c in 0..info.grid {
            instrs += p.cta(k, c).instrs();
        }
    }
    assert!(instrs > 16 * 60 * 16 * 10);
    let dt = t.elapsed();
    assert!(dt.as_secs_f64() < 5.0, "{dt:?}");
}

/// The scoped-persistency-bug variant (§5.3): the same program but for the
/// scope of each block's result release, at the place its docs give.
#[test]
fn the_block_final_variant_differs_only_in_the_result_release_scope() {
    let size = Some(2 * PER_LAUNCH);
    let (ok, bad) = (
        Reduction::new(size).unwrap(),
        Reduction::block_final(size).unwrap(),
    );
    let by_name = sbrp_workloads::app("reduction-block-final", size).unwrap();
    assert_eq!(by_name.name(), "reduction-block-final");
    assert!(sbrp_workloads::VARIANTS.contains(&"reduction-block-final"));
    assert!(!sbrp_workloads::APPS.contains(&"reduction-block-final"));
    for build in [Build::Gpu, Build::Gpm] {
        let (p, q) = (ok.program(build), bad.program(build));
        assert_eq!(p.kernels(), q.kernels());
        for (k, info) in p.kernels().iter().enumerate() {
            for c in 0..info.grid {
                let (a, b) = (p.cta(k, c), q.cta(k, c));
                let at = ok.final_release(build, k as u64, c);
                assert_eq!(at, bad.final_release(build, k as u64, c));
                if build == Build::Gpu {
                    // 2p + 34, p the CTA's input pairs per warp (`//!`).
                    assert_eq!(at, if c < 16 { 44 } else { 42 }, "CTA {c}");
                }
                assert_eq!(a.warps.len(), b.warps.len());
                for (w, (x, y)) in a.warps.iter().zip(&b.warps).enumerate() {
                    assert_eq!(x.len(), y.len());
                    for (i, (u, v)) in x.iter().zip(y).enumerate() {
                        if (w, i) != (0, at) {
                            assert_eq!(u, v, "kernel {k} CTA {c} warp {w} instr {i}");
                            continue;
                        }
                        let (
                            Instr::PRel {
                                scope: s,
                                space,
                                flag,
                                value,
                            },
                            Instr::PRel {
                                scope: t,
                                space: space2,
                                flag: flag2,
                                value: value2,
                            },
                        ) = (u, v)
                        else {
                            panic!("{u:?} / {v:?}: no releases")
                        };
                        assert_eq!((*s, *t), (Scope::Device, Scope::Block));
                        assert_eq!((space, flag, value), (space2, flag2, value2));
                        assert_eq!(*flag, ok.g_odata(c));
                    }
                }
            }
        }
    }
}
