//! Scan (`sbrp_workloads::scan`, `../shared/notes/sbrp-benchmarks.md`
//! §2.6): invariant on the final and recovered crash images and its negative
//! control, the scan's values, kernels and launch shapes, the per-warp
//! ordering, determinism, size checks and generation speed.

use std::time::{Duration, Instant};

use sbrp_trace::program::{
    parse_program, write_program, FenceScope, Instr, Program, Space, Values,
};
use sbrp_trace::Scope;
use sbrp_workloads::scan::{self, Scan, CONSUMED};
use sbrp_workloads::{App, Build};

fn small() -> Scan {
    Scan::new(Some(8 * 512)).unwrap()
}

#[test]
fn invariant_holds_on_final_and_recovered_crash_images() {
    for seed in [None, Some(7)] {
        let make = || match seed {
            None => small(),
            Some(s) => small().with_seed(s),
        };
        let app = make();
        app.check(&app.initial_image()).unwrap();
        app.check(&app.final_image()).unwrap();
        let crash = app.crash_image();
        app.check(&crash).unwrap();
        app.check(&app.recover(&crash)).unwrap();
        // Every crash point; the last equals the crash-free image.
        for k in 0..=scan::ITERS {
            let a = make().with_crash_iters(k).unwrap();
            let img = a.recover(&a.crash_image());
            app.check(&img).unwrap_or_else(|e| panic!("{k}: {e}"));
            if k == scan::ITERS {
                assert_eq!(a.crash_image(), app.final_image());
            }
        }
    }
}

#[test]
fn invariant_fails_on_corrupt_images() {
    let app = small().with_seed(3);
    for img in [app.final_image(), app.crash_image(), app.initial_image()] {
        let bad = app.corrupt(&img);
        assert_ne!(bad, img);
        assert!(app.check(&bad).is_err());
    }
    // A flag ahead of its value: level 5 claimed in copy 1 of the crash
    // image (4 iterations: copy 1 holds level 3).
    let mut img = app.crash_image();
    img.set(app.flag_addr(2, 1, 3), 6);
    let e = app.check(&img).unwrap_err();
    assert!(e.contains("level 5"), "{e}");
    // The level's parity must match the copy.
    let mut img = app.crash_image();
    img.set(app.flag_addr(0, 0, 0), 4);
    assert!(app.check(&img).is_err());
}

#[test]
fn values_are_the_scan() {
    let app = small().with_seed(11);
    for b in [0, 5] {
        let out = app.output(b);
        let mut s = 0u32;
        for (i, &o) in out.iter().enumerate() {
            assert_eq!(o, s);
            s = s.wrapping_add(app.input(b as u64 * 512 + i as u64));
        }
    }
    let ones = Scan::new(None).unwrap();
    let out = ones.output(239);
    assert_eq!(out, (0..512).collect::<Vec<u32>>());
    // Final image: copy 1 holds level 7 (inclusive sums of 4 per thread),
    // its flag 8; copy 0 level 6, consumed where another warp read it.
    let img = ones.final_image();
    for w in 0..4 {
        for l in 0..32 {
            let t = (w * 32 + l) as u64;
            assert_eq!(img.get(ones.data_addr(0, 1, w) + 4 * l as u64), 4 * (t + 1));
        }
        assert_eq!(img.get(ones.flag_addr(0, 1, w)), 8);
        let c0 = if w < 2 { CONSUMED | 7 } else { 7 };
        assert_eq!(img.get(ones.flag_addr(0, 0, w)), c0);
    }
}

#[test]
fn kernels_and_launch_shapes() {
    let app = Scan::new(None).unwrap();
    assert_eq!(
        (app.size(), app.size_unit(), app.blocks()),
        (122_880, "elements", 240)
    );
    let shape = |p: &dyn Program| {
        p.kernels()
            .iter()
            .map(|k| (k.name.clone(), k.grid, k.block))
            .collect::<Vec<_>>()
    };
    let one = |n: &str| vec![(n.to_string(), 240, 128)];
    assert_eq!(shape(app.program(Build::Gpu).as_ref()), one("scanKernel"));
    assert_eq!(shape(app.program(Build::Gpm).as_ref()), one("scanKernel"));
    assert_eq!(shape(app.crash_program().as_ref()), one("scanKernel"));
    let rec = app.recovery(&app.crash_image());
    assert_eq!(shape(rec.as_ref()), one("recoveryKernel"));
    assert_eq!(rec.cta(0, 0).warps.len(), 4);
}

fn count(v: &[Instr], f: impl Fn(&Instr) -> bool) -> usize {
    v.iter().filter(|i| f(i)).count()
}

#[test]
fn per_warp_ordering() {
    let app = small();
    let p = app.program(Build::Gpu);
    let code = p.cta(0, 3);
    for (w, v) in code.warps.iter().enumerate() {
        // Level 0 store, its release; 7 iterations each with a PM store and
        // a release of the next level; the dFence before the output.
        let pm_st = count(v, |i| {
            matches!(
                i,
                Instr::St {
                    space: Space::Pm,
                    ..
                }
            )
        });
        assert_eq!(pm_st, 8);
        let own = count(
            v,
            |i| matches!(i, Instr::PRel { scope: Scope::Block, space: Space::Pm, value, .. } if *value & CONSUMED == 0),
        );
        assert_eq!(own, 8);
        assert!(matches!(
            v[..4],
            [
                Instr::Ld {
                    space: Space::Global,
                    size: 16,
                    ..
                },
                Instr::Compute { .. },
                Instr::St {
                    space: Space::Pm,
                    ..
                },
                Instr::PRel { value: 1, .. }
            ]
        ));
        let df = v.iter().position(|i| *i == Instr::DFence).unwrap();
        assert!(matches!(
            v[df + 1],
            Instr::Ld {
                space: Space::Pm,
                ..
            }
        ));
        assert!(matches!(
            v.last(),
            Some(Instr::St {
                space: Space::Global,
                size: 16,
                ..
            })
        ));
        // Every acquire is block scope on PM; consumer marks pair with
        // acquires of a level.
        assert!(v.iter().all(|i| !matches!(
            i,
            Instr::PAcq {
                scope: Scope::Device,
                ..
            } | Instr::PAcq {
                space: Space::Global | Space::Shared,
                ..
            }
        )));
        let marks = count(
            v,
            |i| matches!(i, Instr::PRel { value, .. } if *value & CONSUMED != 0),
        );
        let level_waits = count(v, |i| matches!(i, Instr::PAcq { mask: 0x7f, .. }));
        assert_eq!(marks, level_waits);
        // Warp 0 never reads another warp; warp 3 is never read by one.
        if w == 0 {
            assert_eq!(marks, 0);
        }
        if w == 3 {
            assert_eq!(
                count(v, |i| matches!(i, Instr::PAcq { mask: u64::MAX, .. })),
                0
            );
        }
        // Each PM store carries its values.
        for i in v {
            if let Instr::St {
                space: Space::Pm,
                values,
                ..
            } = i
            {
                assert!(matches!(values, Values::List(l) if l.len() == 32));
            }
        }
    }
    // Crash program: 4 iterations, no dFence and no output.
    let crash = app.crash_program().cta(0, 3);
    for v in &crash.warps {
        assert_eq!(
            count(v, |i| matches!(
                i,
                Instr::St {
                    space: Space::Pm,
                    ..
                }
            )),
            5
        );
        assert_eq!(count(v, |i| *i == Instr::DFence), 0);
        assert_eq!(
            count(v, |i| matches!(
                i,
                Instr::St {
                    space: Space::Global,
                    ..
                }
            )),
            0
        );
    }
}

#[test]
fn gpm_fences_follow_persistency_ops() {
    let app = small();
    let gpu = app.program(Build::Gpu).cta(0, 1);
    let gpm = app.program(Build::Gpm).cta(0, 1);
    for (a, b) in gpu.warps.iter().zip(&gpm.warps) {
        assert!(!a.iter().any(|i| matches!(i, Instr::Fence(_))));
        let pers = count(a, |i| {
            matches!(i, Instr::DFence | Instr::PAcq { .. } | Instr::PRel { .. })
        });
        assert_eq!(b.len(), a.len() + pers);
        for (n, i) in b.iter().enumerate() {
            if matches!(i, Instr::DFence | Instr::PAcq { .. } | Instr::PRel { .. }) {
                assert_eq!(b[n + 1], Instr::Fence(FenceScope::Device));
            }
        }
    }
}

#[test]
fn recovery_reads_flags_rewrites_values_and_fences() {
    let app = small().with_seed(5);
    let img = app.crash_image();
    let code = app.recovery(&img).cta(0, 2);
    for (w, v) in code.warps.iter().enumerate() {
        assert_eq!(v.len(), 6);
        assert!(matches!(
            v[0],
            Instr::Ld {
                space: Space::Pm,
                size: 8,
                ..
            }
        ));
        assert!(matches!(
            v[1],
            Instr::Ld {
                space: Space::Pm,
                size: 8,
                ..
            }
        ));
        assert_eq!(v[5], Instr::DFence);
        // The crash image's later level is 4, in copy 0.
        let a = app.data_addr(2, 0, w as u32);
        match &v[4] {
            Instr::St {
                space: Space::Pm,
                values: Values::List(l),
                ..
            } => {
                assert_eq!(l[0], img.get(a));
            }
            i => panic!("{i:?}"),
        }
    }
    assert_eq!(app.recover(&img), img);
}

#[test]
fn program_text_round_trips() {
    let app = Scan::new(Some(2 * 512)).unwrap().with_seed(1);
    for p in [
        app.program(Build::Gpu),
        app.program(Build::Gpm),
        app.crash_program(),
        app.recovery(&app.final_image()),
    ] {
        let mut out = Vec::new();
        write_program(p.as_ref(), &mut out).unwrap();
        parse_program(&String::from_utf8(out).unwrap(), "scan.prog").unwrap();
    }
}

#[test]
fn deterministic() {
    let (a, b) = (small().with_seed(9), small().with_seed(9));
    assert_eq!(a.final_image(), b.final_image());
    assert_eq!(a.crash_image(), b.crash_image());
    for c in [0, 7] {
        assert_eq!(
            a.program(Build::Gpu).cta(0, c),
            b.program(Build::Gpu).cta(0, c)
        );
    }
}

#[test]
fn bad_sizes_refused() {
    for s in [0, 511, 513, 122_881, 512 * (scan::MAX_BLOCKS + 1)] {
        let e = Scan::new(Some(s)).err().unwrap();
        assert!(e.contains(&s.to_string()), "{e}");
    }
    assert!(small().with_crash_iters(8).is_err());
    assert!(Scan::new(Some(512)).is_ok());
}

#[test]
fn default_program_generates_fast() {
    let app = Scan::new(None).unwrap();
    let t = Instant::now();
    let mut instrs = 0;
    for p in [
        app.program(Build::Gpu),
        app.program(Build::Gpm),
        app.crash_program(),
    ] {
        for c in 0..p.kernels()[0].grid {
            instrs += p.cta(0, c).instrs();
        }
    }
    assert!(instrs > 50_000);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    app.check(&app.final_image()).unwrap();
    app.check(&app.recover(&app.crash_image())).unwrap();
}
