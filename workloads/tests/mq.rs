//! MQ (`sbrp_workloads::mq`, `../shared/notes/sbrp-benchmarks.md` §2.5):
//! invariant on the final and recovered crash images and its negative
//! control, kernels and launch shapes, the per-block ordering, determinism,
//! size checks and generation speed.

use std::time::{Duration, Instant};

use sbrp_trace::program::{
    parse_program, write_program, FenceScope, Instr, Program, Space, Values,
};
use sbrp_trace::Scope;
use sbrp_workloads::mq::{self, Mq, Op, NONE};
use sbrp_workloads::{App, Build};

fn small() -> Mq {
    Mq::new(Some(300)).unwrap()
}

fn shapes(p: &dyn Program) -> Vec<(String, u32, u32)> {
    p.kernels()
        .iter()
        .map(|k| (k.name.clone(), k.grid, k.block))
        .collect()
}

#[test]
fn invariant_holds_on_final_and_recovered_crash_images() {
    let app = small();
    app.check(&app.final_image()).unwrap();
    app.check(&app.initial_image()).unwrap();
    let crash = app.crash_image();
    app.check(&crash).unwrap();
    app.check(&app.recover(&crash)).unwrap();
}

#[test]
fn invariant_fails_on_corrupt_images() {
    let app = small();
    for img in [app.final_image(), app.crash_image(), app.initial_image()] {
        let bad = app.corrupt(&img);
        assert_ne!(bad, img);
        let e = app.check(&bad).unwrap_err();
        assert!(e.contains("queue"), "{e}");
    }
}

#[test]
fn partial_batch_after_rollback_is_outside_the_queue() {
    // A crash during an insert: start record durable, half the batch
    // durable, no completion record: recovery rolls back, the half batch is
    // outside the queue.
    let app = small();
    let cmds = app.commands();
    let (i, c) = cmds
        .iter()
        .enumerate()
        .rev()
        .find(|(_, c)| c.op == Op::Insert)
        .unwrap();
    let mut img = app.final_image();
    img.set(app.done_addr(i as u32), NONE);
    for j in mq::BATCH / 2..mq::BATCH {
        img.set(app.slot_addr(c.queue, c.pre.1 + j), 0);
    }
    app.check(&img).unwrap();
    // The same half batch with its completion record durable is caught.
    img.set(app.done_addr(i as u32), mq::pack(c.post.0, c.post.1));
    assert!(app.check(&img).is_err());
}

#[test]
fn crash_during_init_kernel_is_consistent() {
    // Records half written by initKernel (the rest never stored): every
    // queue recovers empty.
    let app = small();
    let mut img = app.initial_image();
    for i in (0..app.commands().len() as u32).step_by(2) {
        img.set(app.start_addr(i), NONE);
    }
    app.check(&img).unwrap();
    assert!(app.check(&app.corrupt(&img)).is_err());
}

#[test]
fn commands_follow_srand_100() {
    let app = Mq::new(None).unwrap();
    assert_eq!(app.size(), 2_000);
    assert_eq!(app.size_unit(), "batches");
    let cmds = app.commands();
    assert_eq!(cmds.len(), 2_120);
    let qs: Vec<u32> = cmds[..5].iter().map(|c| c.queue).collect();
    assert_eq!(qs, [80, 101, 119, 44, 16]);
    // Per queue: insert, remove, insert, ...; then one commit per queue.
    let mut seen = vec![0u32; 120];
    for c in &cmds[..2_000] {
        let k = seen[c.queue as usize];
        assert_eq!(c.seq, k);
        assert_eq!(
            c.op,
            if k.is_multiple_of(2) {
                Op::Insert
            } else {
                Op::Remove
            }
        );
        seen[c.queue as usize] += 1;
    }
    for (q, c) in cmds[2_000..].iter().enumerate() {
        assert_eq!((c.op, c.queue), (Op::Commit, q as u32));
    }
}

#[test]
fn kernels_and_launch_shapes() {
    let app = small();
    let k2 = |a: &str, b: &str| vec![(a.to_string(), 120, 128), (b.to_string(), 120, 128)];
    assert_eq!(
        shapes(app.program(Build::Gpu).as_ref()),
        k2("initKernel", "mainKernel")
    );
    assert_eq!(
        shapes(app.program(Build::Gpm).as_ref()),
        k2("initKernel", "mainKernel")
    );
    assert_eq!(
        shapes(app.crash_program().as_ref()),
        k2("initKernel", "mainKernel")
    );
    let rec = app.recovery(&app.crash_image());
    assert_eq!(
        shapes(rec.as_ref()),
        vec![("recoveryKernel".to_string(), 120, 128)]
    );
    for p in [app.program(Build::Gpu), app.crash_program(), rec] {
        let c = p.cta(0, 0);
        assert_eq!(c.warps.len(), 4);
    }
}

fn is_pm_st8(i: &Instr) -> Option<u64> {
    match i {
        Instr::St {
            space: Space::Pm,
            size: 8,
            mask: 1,
            values: Values::Same(v),
            ..
        } => Some(*v),
        _ => None,
    }
}

#[test]
fn main_kernel_ordering() {
    let app = small();
    let p = app.program(Build::Gpu);
    let q = app.commands()[0].queue;
    let ops = app
        .commands()
        .iter()
        .filter(|c| c.queue == q && c.op != Op::Commit)
        .count();
    let code = p.cta(1, q);
    let w0 = &code.warps[0];
    // Start record, then oFence.
    let first = w0.iter().position(|i| is_pm_st8(i).is_some()).unwrap();
    assert_eq!(w0[first + 1], Instr::OFence);
    // Every warp: 32 PM accesses of one line per op, one block-scope shared
    // release per op; the leader 128 shared acquires per op.
    for (w, v) in code.warps.iter().enumerate() {
        let pm = v
            .iter()
            .filter(|i| {
                matches!(
                    i,
                    Instr::St {
                        space: Space::Pm,
                        size: 4,
                        ..
                    } | Instr::Ld {
                        space: Space::Pm,
                        size: 4,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(pm, 32 * ops, "warp {w}");
        let rel = v
            .iter()
            .filter(|i| {
                matches!(
                    i,
                    Instr::PRel {
                        scope: Scope::Block,
                        space: Space::Shared,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(rel, ops);
        let acq = v
            .iter()
            .filter(|i| {
                matches!(
                    i,
                    Instr::PAcq {
                        scope: Scope::Block,
                        space: Space::Shared,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(acq, if w == 0 { 128 * ops } else { 0 });
        // The walk: one volatile load per command, then the commit's dFence.
        let walk = v
            .iter()
            .filter(|i| {
                matches!(
                    i,
                    Instr::Ld {
                        space: Space::Global,
                        size: 8,
                        mask: u32::MAX,
                        addrs: sbrp_trace::program::Addrs::Strided { stride: 0, .. }
                    }
                )
            })
            .count();
        assert!(walk >= app.commands().len());
        assert_eq!(v.iter().filter(|i| **i == Instr::DFence).count(), 1);
        assert!(!v.iter().any(|i| matches!(i, Instr::Fence(_))));
    }
    // Leader: start and completion record per op; none of the completions
    // in the crash program.
    assert_eq!(
        w0.iter().filter(|i| is_pm_st8(i).is_some()).count(),
        2 * ops
    );
    let crash = app.crash_program().cta(1, q);
    assert_eq!(
        crash.warps[0]
            .iter()
            .filter(|i| is_pm_st8(i).is_some())
            .count(),
        ops
    );
}

#[test]
fn gpm_fences_follow_persistency_ops() {
    let app = small();
    let p = app.program(Build::Gpm);
    for k in 0..2 {
        let code = p.cta(k, app.commands()[0].queue);
        for v in &code.warps {
            for (n, i) in v.iter().enumerate() {
                let pers = matches!(
                    i,
                    Instr::OFence | Instr::DFence | Instr::PAcq { .. } | Instr::PRel { .. }
                );
                if pers {
                    assert_eq!(v[n + 1], Instr::Fence(FenceScope::Device));
                }
            }
        }
    }
}

#[test]
fn init_kernel_writes_every_record() {
    let app = small();
    let p = app.program(Build::Gpu);
    let mut stores = 0;
    for c in 0..120 {
        for v in p.cta(0, c).warps {
            assert_eq!(v.first(), Some(&Instr::DFence));
            assert_eq!(v.last(), Some(&Instr::DFence));
            for i in &v {
                if let Instr::St { mask, values, .. } = i {
                    assert_eq!(*values, Values::Same(NONE));
                    stores += mask.count_ones();
                }
            }
        }
    }
    assert_eq!(stores as usize, 2 * app.commands().len());
}

#[test]
fn recovery_adopts_records() {
    let app = small();
    let img = app.crash_image();
    let p = app.recovery(&img);
    let (mut dfences, mut adopted) = (0, 0);
    for c in 0..120 {
        for v in p.cta(0, c).warps {
            for i in &v {
                match i {
                    Instr::DFence => dfences += 1,
                    Instr::St {
                        space: Space::Global,
                        mask,
                        ..
                    } => adopted += mask.count_ones(),
                    Instr::St { .. } => panic!("recovery stores only volatile data"),
                    _ => {}
                }
            }
        }
    }
    // 120 commit commands in 4 warps (consecutive threads).
    assert!(dfences >= 4);
    assert_eq!(adopted as usize, app.commands().len() - 120);
    assert_eq!(app.recover(&img), img);
}

#[test]
fn program_text_round_trips() {
    let app = Mq::new(Some(40)).unwrap();
    for p in [
        app.program(Build::Gpu),
        app.program(Build::Gpm),
        app.crash_program(),
        app.recovery(&app.final_image()),
    ] {
        let mut out = Vec::new();
        write_program(p.as_ref(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        parse_program(&text, "mq.prog").unwrap();
    }
}

#[test]
fn deterministic() {
    let (a, b) = (small(), small());
    assert_eq!(a.commands(), b.commands());
    assert_eq!(a.final_image(), b.final_image());
    let (pa, pb) = (a.program(Build::Gpu), b.program(Build::Gpu));
    for c in [0, 7, 119] {
        assert_eq!(pa.cta(1, c), pb.cta(1, c));
        assert_eq!(pa.cta(1, c), pa.cta(1, c));
    }
}

#[test]
fn bad_sizes_refused() {
    for s in [0, mq::MAX_BATCHES + 1, u64::MAX] {
        let e = Mq::new(Some(s)).err().unwrap();
        assert!(e.contains(&s.to_string()), "{e}");
    }
    assert!(Mq::new(Some(1)).is_ok());
}

#[test]
fn default_program_generates_fast() {
    let app = Mq::new(None).unwrap();
    let t = Instant::now();
    let mut instrs = 0;
    for p in [app.program(Build::Gpu), app.program(Build::Gpm)] {
        for (k, kernel) in p.kernels().iter().enumerate() {
            for c in 0..kernel.grid {
                instrs += p.cta(k, c).instrs();
            }
        }
    }
    assert!(instrs > 1_000_000);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[test]
fn default_images_check() {
    let app = Mq::new(None).unwrap();
    app.check(&app.final_image()).unwrap();
    app.check(&app.recover(&app.crash_image())).unwrap();
}
