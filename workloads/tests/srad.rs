//! Tests of the SRAD generator (`workloads/src/srad.rs`), against
//! `../shared/notes/sbrp-benchmarks.md` §2.3: launch shapes, per-warp
//! ordering, the data the PM stores carry, the crash and recovery images
//! and the invariant.

use std::time::Instant;

use sbrp_trace::program::{FenceScope, Instr, Program, Space, Values};
use sbrp_trace::{parse_program, write_program, Scope};
use sbrp_workloads::srad::{Srad, MARK};
use sbrp_workloads::{App, Build, PmImage};

/// Every PM store and PM release of `p`, applied kernel by kernel, CTA by
/// CTA, warp by warp (no two warps of a kernel write one word here).
fn replay(p: &dyn Program, initial: &PmImage) -> PmImage {
    let mut img = initial.clone();
    for (k, info) in p.kernels().iter().enumerate() {
        for c in 0..info.grid {
            for w in p.cta(k, c).warps {
                for i in w {
                    match i {
                        Instr::St {
                            space: Space::Pm,
                            size,
                            mask,
                            addrs,
                            values,
                        } => {
                            let mut rank = 0;
                            for lane in 0..32 {
                                if mask & (1 << lane) != 0 {
                                    let v = values.get(rank).expect("PM store without value");
                                    assert!(size == 8 || v >> (8 * size as u32) == 0);
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

fn small() -> Srad {
    Srad::new(Some(64)).unwrap()
}

#[test]
fn kernels_and_launch_shapes_follow_the_note() {
    let app = Srad::new(None).unwrap();
    assert_eq!((app.name(), app.size()), ("srad", 512));
    let p = app.program(Build::Gpu);
    let shapes: Vec<_> = p
        .kernels()
        .iter()
        .map(|k| (k.name.as_str(), k.grid, k.block))
        .collect();
    assert_eq!(
        shapes,
        [
            ("setMemory", 30, 1024),
            ("setMemory", 30, 1024),
            ("srad_cuda_1", 256, 1024),
            ("srad_cuda_2", 256, 1024),
        ]
    );
    let r = app.recovery(&app.crash_image());
    let k = &r.kernels()[0];
    assert_eq!(
        (k.name.as_str(), k.grid, k.block),
        ("recovery_kernel", 256, 1024)
    );
    assert_eq!(r.kernels().len(), 1);
}

#[test]
fn bad_sizes_are_refused_naming_the_size() {
    for s in [0, 32, 48, 100, 4096] {
        let e = Srad::new(Some(s)).err().expect("refused");
        assert!(e.contains(&s.to_string()), "{e}");
    }
    assert!(Srad::new(Some(96)).is_ok());
}

#[test]
fn k1_and_k2_warps_order_as_the_note() {
    let app = small();
    for build in [Build::Gpu, Build::Gpm] {
        let p = app.program(build);
        let gpm = build == Build::Gpm;
        for cta in [0, 3] {
            let code = p.cta(2, cta);
            assert_eq!(code.warps.len(), 32);
            for w in &code.warps {
                assert!(matches!(
                    w[0],
                    Instr::PAcq {
                        scope: Scope::Device,
                        space: Space::Global,
                        want: 0,
                        ..
                    }
                ));
                assert_eq!(w.iter().filter(|i| **i == Instr::Bar).count(), 3);
                let pm_st: Vec<usize> = (0..w.len())
                    .filter(|&i| {
                        matches!(
                            w[i],
                            Instr::St {
                                space: Space::Pm,
                                ..
                            }
                        )
                    })
                    .collect();
                assert_eq!(pm_st.len(), 5);
                let of = w.iter().position(|i| *i == Instr::OFence).unwrap();
                assert!(pm_st[..4].iter().all(|&i| i < of) && pm_st[4] > of);
                assert_eq!(
                    w[of + 1] == Instr::Fence(FenceScope::Device),
                    gpm,
                    "GPM fence after oFence"
                );
            }
            let code = p.cta(3, cta);
            for w in &code.warps {
                assert_eq!(w.iter().filter(|i| **i == Instr::Bar).count(), 4);
                let n = w.len();
                let (st, df) = if gpm { (n - 3, n - 2) } else { (n - 2, n - 1) };
                assert!(matches!(
                    w[st],
                    Instr::St {
                        space: Space::Pm,
                        ..
                    }
                ));
                assert_eq!(w[df], Instr::DFence);
                if gpm {
                    assert_eq!(w[n - 1], Instr::Fence(FenceScope::Device));
                }
            }
        }
        // setMemory fills with the marker.
        let code = p.cta(0, 0);
        assert!(code.warps.iter().flatten().all(|i| matches!(
            i,
            Instr::St {
                values: Values::Same(MARK),
                ..
            }
        )));
    }
}

#[test]
fn replayed_stores_give_the_final_and_crash_images() {
    let app = small();
    let fin = replay(&*app.program(Build::Gpu), &app.initial_image());
    assert_eq!(fin, app.final_image());
    assert_eq!(fin, replay(&*app.program(Build::Gpm), &app.initial_image()));
    let crash = replay(&*app.crash_program(), &app.initial_image());
    assert_eq!(crash, app.crash_image());
    // The cut leaves part of C persisted and the rest at the marker.
    assert_eq!(
        crash.get(app.c_addr(0, 0)),
        app.coefficient(0, 0).unwrap().to_bits() as u64
    );
    assert_eq!(crash.get(app.c_addr(63, 63)), MARK);
    assert_eq!(crash.get(app.j_out_addr(0, 0)), MARK);
}

#[test]
fn invariant_holds_on_final_and_recovered_images_and_fails_on_corrupt() {
    let app = Srad::new(None).unwrap();
    let fin = app.final_image();
    app.check(&fin).unwrap();
    app.check(&app.initial_image()).unwrap();
    let rec = app.recover(&app.crash_image());
    app.check(&rec).unwrap();
    for img in [&fin, &rec, &app.initial_image()] {
        let e = app.check(&app.corrupt(img)).unwrap_err();
        assert!(e.contains("N["), "{e}");
    }
    // J_out written from a coefficient that is not persisted.
    let mut bad = fin.clone();
    bad.set(app.c_addr(10, 11), MARK);
    assert!(app.check(&bad).unwrap_err().contains("J_out"));
    // A wrong coefficient.
    let mut bad = fin.clone();
    bad.set(app.c_addr(5, 5), 0.25f32.to_bits() as u64 ^ 1);
    assert!(app.check(&bad).is_err());
}

#[test]
fn recovery_reads_c_and_j_out_and_records_the_restart() {
    let app = small();
    let crash = app.crash_image();
    let r = app.recovery(&crash);
    // Block rows 0..1 of the 2x2 grid were computed: no restart there.
    for (cta, restart) in [(0, false), (1, false), (2, true), (3, true)] {
        for w in r.cta(0, cta).warps {
            assert!(matches!(
                w[0],
                Instr::Ld {
                    space: Space::Pm,
                    ..
                }
            ));
            assert!(matches!(
                w[1],
                Instr::Ld {
                    space: Space::Pm,
                    ..
                }
            ));
            // Rows with C computed still have J_out < 0: restart kernel 1.
            assert_eq!(w[2], Instr::Compute { cycles: 2 });
            match &w[3..] {
                [Instr::St {
                    space: Space::Global,
                    values: Values::List(v),
                    ..
                }] => assert!(v.iter().all(|&x| x == if restart { 0 } else { 1 })),
                other => panic!("{other:?}"),
            }
        }
    }
    assert!(app
        .recovery(&app.final_image())
        .cta(0, 0)
        .warps
        .iter()
        .all(|w| w.len() == 3));
    assert_eq!(app.recover(&crash), crash);
}

#[test]
fn crash_program_cuts_srad_cuda_1_after_half_its_ctas() {
    let app = small();
    let p = app.crash_program();
    assert_eq!(p.kernels().len(), 3);
    // The CTAs that ran before the crash: half of the 2x2 grid.
    assert_eq!(p.kernels()[2].grid, 2);
    assert!(!p.cta(2, 1).warps.is_empty());
    assert!(p.cta(2, 2).warps.is_empty());
}

#[test]
fn deterministic() {
    let (a, b) = (small(), small());
    assert_eq!(a.final_image(), b.final_image());
    let (pa, pb) = (a.program(Build::Gpu), b.program(Build::Gpu));
    for k in 0..4 {
        assert_eq!(pa.cta(k, 1), pb.cta(k, 1));
    }
}

#[test]
fn program_text_round_trips() {
    let app = small();
    for p in [
        app.program(Build::Gpm),
        app.crash_program(),
        app.recovery(&app.crash_image()),
    ] {
        let mut out = Vec::new();
        write_program(&*p, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let back = parse_program(&text, "srad.prog").unwrap();
        assert_eq!(back.kernels, p.kernels());
    }
}

#[test]
fn default_program_generates_fast() {
    let app = Srad::new(None).unwrap();
    let t = Instant::now();
    let p = app.program(Build::Gpm);
    let mut instrs = 0;
    for (k, info) in p.kernels().iter().enumerate() {
        for c in 0..info.grid {
            instrs += p.cta(k, c).instrs();
        }
    }
    // 8,192 warps per main kernel (§2.3).
    assert!(instrs > 2 * 8192 * 15);
    let dt = t.elapsed();
    assert!(dt.as_secs_f64() < 5.0, "{dt:?}");
}
