//! Directed tests of SPB, Gope et al.'s scoped persist barriers
//! (`docs/model.md`, "SPB"; `gpu/src/sm/persist/spb.rs`): each scope's
//! action seen in the execution record, and a broken barrier (the flush
//! skipped) that the persistency checker catches.

mod common;

use std::collections::HashMap;

use common::*;
use sbrp_gpu::sm::Fault;
use sbrp_gpu::{Gpu, GpuConfig, RunOpts, RunReport};
use sbrp_trace::check;
use sbrp_trace::program::{FileProgram, Instr, Space};
use sbrp_trace::{Event, Execution, Scope};

/// Runs `prog` recorded, with `fault`; the run must finish.
fn run_rec(c: &GpuConfig, prog: &FileProgram, fault: Fault) -> (RunReport, Execution) {
    c.validate().expect("valid config");
    let mut gpu = Gpu::with_model_units(c).expect("params");
    gpu.fault = fault;
    let mut r = gpu.run(
        prog,
        RunOpts {
            record: true,
            ..RunOpts::default()
        },
    );
    assert!(r.finished, "{:?} {:?}", r.deadlock, r.failures);
    let ex = r.execution.take().expect("record");
    (r, ex)
}

/// The first cycle each line (by byte address) was flushed and became durable.
fn flushed_durable(ex: &Execution) -> (HashMap<u64, u64>, HashMap<u64, u64>) {
    let mut line_of = HashMap::new();
    let (mut flushed, mut durable) = (HashMap::new(), HashMap::new());
    for e in &ex.events {
        match e {
            Event::Flush {
                id, line, cycle, ..
            } => {
                line_of.insert(*id, *line);
                flushed.entry(*line).or_insert(*cycle);
            }
            Event::Durable { id, cycle } => {
                let d = durable.entry(line_of[id]).or_insert(*cycle);
                *d = (*d).min(*cycle);
            }
            _ => {}
        }
    }
    (flushed, durable)
}

/// The cycle the first warp started (after the launch latency).
fn start(ex: &Execution) -> u64 {
    ex.events
        .iter()
        .find_map(|e| match e {
            Event::WarpStart { cycle, .. } => Some(*cycle),
            _ => None,
        })
        .expect("a warp")
}

/// Retire cycles of warp slot `w`'s ordering ops, in order.
fn retires(ex: &Execution, w: u32) -> Vec<u64> {
    ex.events
        .iter()
        .filter_map(|e| match e {
            Event::Retire { op, cycle } if op.warp.warp == w => Some(*cycle),
            _ => None,
        })
        .collect()
}

/// Work-item scope (oFence, dFence): the warp waits until the L1's NV
/// writes, another warp's too (the NVW-FIFO is the CU's), are durable; no
/// fence latency; the other warp goes on (only one warp's flush stall).
#[test]
fn spb_work_item_barrier_persists_the_l1_and_stalls_only_its_warp() {
    for fence in [Instr::OFence, Instr::DFence] {
        let c = cfg("spb-near");
        let (x, y, z) = (
            line_addr(&c, PM, 1),
            line_addr(&c, PM, 2),
            line_addr(&c, PM, 3),
        );
        let w0 = vec![
            compute(5),
            st(&c, Space::Pm, x),
            st(&c, Space::Pm, y),
            fence.clone(),
            compute(1),
        ];
        let w1 = vec![st(&c, Space::Pm, z), compute(3000)];
        let (r, ex) = run_rec(&c, &one_cta(vec![w0.clone(), w1.clone()]), Fault::None);
        let (_, durable) = flushed_durable(&ex);
        let done = retires(&ex, 0)[0];
        for l in [x, y, z] {
            assert!(
                durable[&l] <= done,
                "{fence:?}: line {l:#x} durable after the barrier"
            );
        }
        assert_eq!(
            r.sm.fence_delays, 0,
            "{fence:?}: a persist barrier is no fence"
        );
        let began = ex
            .events
            .iter()
            .find_map(|e| match e {
                Event::Ordering { op, cycle, .. } if op.warp.warp == 0 => Some(*cycle),
                _ => None,
            })
            .unwrap();
        let flush_stall = r.stalls["flush"];
        assert!(
            flush_stall > 0 && flush_stall <= done - began + 1,
            "{fence:?}: {flush_stall}"
        );
        // Epoch pays the fence latency on the same program.
        let e = run(&cfg("epoch-near"), &one_cta(vec![w0, w1]));
        assert_eq!(e.sm.fence_delays, 1);
    }
}

/// Work-group scope (`bar`): the flush starts only when the whole CTA has
/// arrived (Gope et al. §6.1, step 1), and no warp passes before every
/// earlier store of the CTA is durable. Epoch flushes at each arrival.
#[test]
fn spb_work_group_barrier_waits_for_the_group_then_persists() {
    let c = cfg("spb-near");
    let (x, y) = (line_addr(&c, PM, 1), line_addr(&c, PM, 2));
    let w0 = vec![st(&c, Space::Pm, x), Instr::Bar, compute(1)];
    let w1 = vec![compute(300), st(&c, Space::Pm, y), Instr::Bar, compute(1)];
    let prog = one_cta(vec![w0, w1]);
    let (_, ex) = run_rec(&c, &prog, Fault::None);
    let t0 = start(&ex);
    let (flushed, durable) = flushed_durable(&ex);
    assert!(
        flushed[&x] >= t0 + 300,
        "x flushed at {} before the group arrived",
        flushed[&x] - t0
    );
    for w in [0, 1] {
        let done = retires(&ex, w)[0];
        assert!(durable[&x] <= done && durable[&y] <= done, "warp {w}");
    }
    let (_, ex) = run_rec(&cfg("epoch-near"), &prog, Fault::None);
    let (flushed, _) = flushed_durable(&ex);
    assert!(flushed[&x] < start(&ex) + 300, "epoch flushes at arrival");
}

/// Kernel scope is the kernel boundary: every SM's stores are durable
/// before the next kernel launches; with the artifact's kernel end (dirty
/// lines dropped) nothing is written at all.
#[test]
fn spb_kernel_barrier_is_the_kernel_end() {
    let mut c = cfg("spb-far");
    let code = |i: u64| sbrp_trace::program::CtaCode {
        warps: vec![vec![st(&c, Space::Pm, line_addr(&c, PM, i)), compute(1)]],
    };
    let k1 = (kernel(2, 32, 0, 0), vec![code(1), code(2)]);
    let k2 = (
        kernel(1, 32, 0, 0),
        vec![sbrp_trace::program::CtaCode {
            warps: vec![vec![compute(1)]],
        }],
    );
    let prog = program(vec![k1.clone(), k2.clone()]);
    let (r, ex) = run_rec(&c, &prog, Fault::None);
    let (_, durable) = flushed_durable(&ex);
    assert_eq!(durable.len(), 2);
    assert!(
        durable.values().all(|&d| d <= r.kernels[1].launch),
        "{durable:?}"
    );
    c.artifact.no_kernel_end_drain = true;
    let (_, ex) = run_rec(&c, &program(vec![k1, k2]), Fault::None);
    assert!(flushed_durable(&ex).0.is_empty());
}

/// Acquires: block scope keeps the L1's PM lines, device scope drops them
/// (the reload misses); both are work-item barriers: the acquirer's own
/// earlier store is durable when its acquire retires (Box 2 orders a
/// warp's persists across its acquire). A release (either scope)
/// publishes only once the releaser's stores are durable.
#[test]
fn spb_acquire_and_release_scopes() {
    for (scope, reload_misses) in [(Scope::Block, false), (Scope::Device, true)] {
        let c = cfg("spb-near");
        let (x, y, z) = (
            line_addr(&c, PM, 7),
            line_addr(&c, PM, 8),
            line_addr(&c, PM, 9),
        );
        let w0 = vec![
            compute(100),
            st(&c, Space::Pm, y),
            prel(scope, Space::Shared, FLAG, 1),
        ];
        let w1 = vec![
            ld(&c, Space::Pm, x),
            st(&c, Space::Pm, z),
            pacq(scope, Space::Shared, FLAG, 1),
            ld(&c, Space::Pm, x),
            compute(1),
        ];
        let (r, ex) = run_rec(&c, &one_cta(vec![w0, w1]), Fault::None);
        assert_eq!(
            r.sm.l1_pm_read_misses,
            1 + reload_misses as u64,
            "{scope:?}"
        );
        let (_, durable) = flushed_durable(&ex);
        assert!(
            durable[&y] <= retires(&ex, 0)[0],
            "{scope:?}: released before durable"
        );
        let acquired = *retires(&ex, 1).last().unwrap();
        assert!(
            durable[&z] <= acquired,
            "{scope:?}: acquired before its own store was durable"
        );
    }
}

/// Negative control: SPB whose barriers do not write the L1 back (the
/// `SkipEpochFlush` fault) breaks dFence and device-release durability,
/// and the checker (SBRP's rules, which SPB is to keep) says so; the
/// correct model passes the same programs.
#[test]
fn spb_barrier_without_its_flush_is_caught() {
    let c = cfg("spb-near");
    let x = line_addr(&c, PM, 1);
    let progs = [
        one_cta(vec![vec![
            st(&c, Space::Pm, x),
            Instr::DFence,
            compute(500),
        ]]),
        one_cta(vec![vec![
            st(&c, Space::Pm, x),
            prel(Scope::Device, Space::Shared, FLAG, 1),
            compute(500),
        ]]),
    ];
    let rules = check::Options::new(c.model.persist().checker());
    assert_eq!(rules.model, check::Model::Sbrp);
    for p in &progs {
        let (_, ex) = run_rec(&c, p, Fault::None);
        let ok = check::check(&ex, &rules).unwrap();
        assert!(ok.ok(), "{:?}", ok.violations.first());
        let (_, ex) = run_rec(&c, p, Fault::SkipEpochFlush);
        let bad = check::check(&ex, &rules).unwrap();
        assert!(
            bad.violations_total > 0,
            "the broken barrier went unnoticed"
        );
    }
}
