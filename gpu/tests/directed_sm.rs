//! Directed tests of the GPU model's SM (`docs/model.md`, "SM", "L1"):
//! load hit and miss latency, MSHRs, flag polls, and the remaining
//! ordering points (device release, threadfence, dFence and oFence on the
//! L1, evictions under epoch). Expected figures are derived from the
//! configuration, never copied from a run.

mod common;

use common::*;
use sbrp_gpu::mem::Access;
use sbrp_gpu::{Gpu, GpuConfig, RunOpts, RunReport};
use sbrp_trace::program::{Instr, Space};
use sbrp_trace::Scope;

// ---------------------------------------------------------------------------
// SM: load latency
// ---------------------------------------------------------------------------

/// One warp, epoch-near (nothing to drain): a load followed by `compute 1`.
/// A second load of the same line hits and costs exactly `l1.latency`.
/// A miss costs the memory path's unloaded read latency (from a fresh
/// `MemSystem`), which is at least the L1 latency.
#[test]
fn load_hit_costs_l1_latency_and_miss_costs_the_memory_path() {
    for (name, pm, space) in [
        ("epoch-near", true, Space::Pm),
        ("epoch-far", true, Space::Pm),
        ("epoch-near", false, Space::Global),
    ] {
        let c = cfg(name);
        let x = line_addr(&c, if pm { PM } else { VOL }, 3);
        let base = busy(&c, &run(&c, &one_cta(vec![vec![compute(1)]])));
        let one = busy(
            &c,
            &run(&c, &one_cta(vec![vec![ld(&c, space, x), compute(1)]])),
        );
        let r2 = run(
            &c,
            &one_cta(vec![vec![ld(&c, space, x), ld(&c, space, x), compute(1)]]),
        );
        let two = busy(&c, &r2);
        if pm {
            assert_eq!(r2.sm.l1_pm_read_misses, 1);
            assert_eq!(r2.sm.l1_pm_read_hits, 1);
        } else {
            assert_eq!(r2.sm.l1_vol_read_misses, 1);
        }
        let mem = unloaded(&c, Access::Read, pm);
        eprintln!("{name} {space:?}: base {base} one {one} two {two} mem {mem}");
        assert_eq!(two - one, c.l1.latency as u64, "{name}: hit latency");
        assert!(
            one - base >= mem,
            "{name}: miss {} < memory {mem}",
            one - base
        );
        assert!(one - base <= mem + c.l1.latency as u64, "{name}");
    }
}

/// GPGPU-Sim (the artifact's simulator) puts every L1 access, hit or miss,
/// through the L1 latency pipeline before a miss is sent: a miss should cost
/// `l1.latency` + the memory path. The model takes the larger of the two.
#[test]
fn load_miss_costs_l1_latency_plus_memory_path() {
    let c = cfg("epoch-near");
    let x = line_addr(&c, PM, 3);
    let base = busy(&c, &run(&c, &one_cta(vec![vec![compute(1)]])));
    let one = busy(
        &c,
        &run(&c, &one_cta(vec![vec![ld(&c, Space::Pm, x), compute(1)]])),
    );
    let mem = unloaded(&c, Access::Read, true);
    assert_eq!(one - base, mem + c.l1.latency as u64);
}

// ---------------------------------------------------------------------------
// More ordering points and SM limits
// ---------------------------------------------------------------------------

/// `docs/model.md` "SM": "Loads block the warp until the last of their lines
/// arrives". A warp whose last instruction is a missing load should not be
/// done (nor its kernel end) before the data arrives.
#[test]
fn trailing_load_waits_for_its_data() {
    let c = cfg("epoch-near");
    let x = line_addr(&c, PM, 3);
    let r = run(&c, &one_cta(vec![vec![ld(&c, Space::Pm, x)]]));
    let mem = unloaded(&c, Access::Read, true);
    assert!(busy(&c, &r) >= mem, "{} < {mem}", busy(&c, &r));
}

/// SBRP release of each scope after a PM store: a block release is only a
/// request (the warp goes on); a device release halts the warp until the
/// store is durable (its round trip is at least the unloaded ack latency).
#[test]
fn sbrp_device_release_halts_block_release_does_not() {
    let c = cfg("sbrp-near");
    let x = line_addr(&c, PM, 2);
    let ack = unloaded(&c, Access::Write, true);
    let n = 2000u32;
    let t = |scope| {
        let r = run(
            &c,
            &one_cta(vec![vec![
                st(&c, Space::Pm, x),
                prel(scope, Space::Global, FLAG, 1),
                compute(n),
            ]]),
        );
        eprintln!("{scope:?}: {} {:?}", busy(&c, &r), r.stalls);
        (busy(&c, &r), r.stalls["persist_buffer"])
    };
    let (tb, sb) = t(Scope::Block);
    let (td, sd) = t(Scope::Device);
    assert!(tb <= n as u64 + 10, "block release {tb}");
    assert!(sb <= 10);
    assert!(td >= tb + ack - 10, "device release {td} vs {tb} + {ack}");
    assert!(sd >= ack - 10);
    // SBRP-device promotes the block release to device scope.
    let d = cfg("sbrp-near-dev");
    let r = run(
        &d,
        &one_cta(vec![vec![
            st(&d, Space::Pm, x),
            prel(Scope::Block, Space::Global, FLAG, 1),
            compute(n),
            compute(1),
        ]]),
    );
    assert!(busy(&d, &r) >= tb + ack - 10, "{}", busy(&d, &r));
}

/// A non-persistent fence under SBRP: a durable order entry (the warp
/// waits for its PM store), then flush volatile lines, wait, the fence
/// latency, and every clean line dropped: both reloads miss.
#[test]
fn sbrp_threadfence_waits_pays_fence_latency_and_drops_clean_lines() {
    let c = cfg("sbrp-near");
    let (x, y, v) = (
        line_addr(&c, PM, 1),
        line_addr(&c, PM, 2),
        line_addr(&c, VOL, 1),
    );
    let r = run(
        &c,
        &one_cta(vec![vec![
            ld(&c, Space::Pm, x),
            ld(&c, Space::Global, v),
            st(&c, Space::Pm, y),
            Instr::Fence(sbrp_trace::program::FenceScope::Device),
            ld(&c, Space::Pm, x),
            ld(&c, Space::Global, v),
            compute(1),
        ]]),
    );
    assert_eq!(r.sm.fence_delays, 1);
    assert_eq!(r.sm.l1_pm_read_misses, 2);
    assert_eq!(r.sm.l1_vol_read_misses, 2);
    let ack = unloaded(&c, Access::Write, true);
    assert!(
        r.stalls["persist_buffer"] + r.stalls["flush"] >= ack - 10 + c.core.fence_latency as u64
    );
}

/// A load touching more lines than the L1 has MSHRs: `docs/model.md` says
/// such a load "does not issue" while MSHRs are short, but with every MSHR
/// free it can never issue, and the run deadlocks. `validate()` accepts any
/// `l1.mshrs` >= 1, so either validation should refuse fewer MSHRs than a
/// warp's accesses can touch (32 lines) or the load should issue in parts.
#[test]
fn load_wider_than_the_mshrs_finishes() {
    let mut c = cfg("epoch-near");
    c.l1.mshrs = 1;
    // 32 lanes x 8 B at stride 8: 256 bytes, two lines.
    let two_lines = Instr::Ld {
        space: Space::Pm,
        size: 8,
        mask: !0,
        addrs: sbrp_trace::program::Addrs::Strided {
            base: line_addr(&c, PM, 0),
            stride: 8,
        },
    };
    let r = run(&c, &one_cta(vec![vec![two_lines, compute(1)]]));
    assert_eq!(r.sm.l1_pm_read_misses, 2);
}

/// MSHRs limit outstanding misses: with `l1.mshrs` = 1 two single-line
/// loads by two warps serialize (the second waits for the first's data);
/// with the default they overlap.
#[test]
fn mshrs_serialize_misses() {
    let mut c = cfg("epoch-near");
    let mem = unloaded(&c, Access::Read, true);
    let prog = |c: &GpuConfig| {
        one_cta(vec![
            vec![ld(c, Space::Pm, line_addr(c, PM, 0)), compute(1)],
            vec![ld(c, Space::Pm, line_addr(c, PM, 1)), compute(1)],
        ])
    };
    let t_many = busy(&c, &run(&c, &prog(&c)));
    c.l1.mshrs = 1;
    let t_one = busy(&c, &run(&c, &prog(&c)));
    eprintln!("mshrs default {t_many}, one {t_one}, mem {mem}");
    // A miss's data comes back through the L1 pipeline.
    assert!(t_many < mem + c.l1.latency as u64 + 10);
    assert!(t_one >= 2 * mem);
}

/// An acquire that polls a flag another warp releases `d` cycles later
/// polls about every `core.shared_latency` cycles (a shared-memory flag):
/// between d / (latency + 3) and d / latency + 2 polls (each epoch poll is
/// an acquire whose steps take a cycle to start and one to end).
#[test]
fn acquire_polls_at_the_flag_read_latency() {
    for name in ["epoch-near", "sbrp-near"] {
        let c = cfg(name);
        let d = 2000u64;
        let lat = c.core.shared_latency as u64;
        let r = run(
            &c,
            &one_cta(vec![
                vec![
                    compute(d as u32),
                    prel(Scope::Block, Space::Shared, FLAG, 1),
                ],
                vec![pacq(Scope::Block, Space::Shared, FLAG, 1), compute(1)],
            ]),
        );
        eprintln!("{name}: {} polls", r.sm.polls);
        // Epoch: the acquire's steps start the cycle after it issues and the
        // poll reads the flag a cycle after they end (+3). SBRP: the acquire
        // is a request the unit takes first (+6 at most, unloaded).
        let extra = if is_sbrp(&c) { 6 } else { 3 };
        assert!(r.sm.polls >= d / (lat + extra), "{name}: {}", r.sm.polls);
        assert!(r.sm.polls <= d / lat + 2, "{name}: {}", r.sm.polls);
        // Each failed poll waits the flag's read latency (spin).
        let spin = r.stalls["spin"];
        assert!(spin >= (r.sm.polls - 1) * lat, "{name}: {:?}", r.stalls);
        assert!(spin <= (r.sm.polls + 1) * lat, "{name}: {:?}", r.stalls);
    }
}

/// An L1 capacity eviction of a dirty PM line under epoch is a PM
/// write-back and, by `SmStats` ("PM line write-backs (SBRP flushes, epoch
/// flushes, evictions)", `evict_flushes`) and `docs/model.md` "Output"
/// ("flushes (evictions)"), an eviction flush. A 4-line L1 and 5 stores: one
/// eviction during the run, 4 lines drained at kernel end.
#[test]
fn epoch_eviction_counts_as_an_eviction_flush() {
    let mut c = cfg("epoch-near");
    c.l1.size = 4 * c.l1.line;
    c.l1.assoc = 4;
    let mut w: Vec<Instr> = (0..5)
        .map(|i| st(&c, Space::Pm, line_addr(&c, PM, i)))
        .collect();
    w.push(compute(1));
    // `Gpu::with_model_units` refuses this epoch config (see
    // `with_model_units_takes_every_valid_epoch_config`): no unit is needed.
    c.validate().unwrap();
    let mut gpu = Gpu::new(&c, &mut |_| unreachable!("epoch has no unit"));
    let r = gpu.run(&one_cta(vec![w]), RunOpts::default());
    assert!(r.finished);
    assert_eq!(r.sm.pm_flushes, 5);
    assert_eq!(r.mem.pm_write_bytes, 5 * c.l1.line as u64);
    assert_eq!(r.sm.evict_flushes, 1);
}

/// A PM line loaded, another stored, `fence`, then the first line loaded
/// again, on one warp.
fn load_across(c: &GpuConfig, fence: Instr) -> RunReport {
    let (x, y) = (line_addr(c, PM, 1), line_addr(c, PM, 2));
    run(
        c,
        &one_cta(vec![vec![
            ld(c, Space::Pm, x),
            st(c, Space::Pm, y),
            fence,
            ld(c, Space::Pm, x),
            compute(1),
        ]]),
    )
}

/// `artifact.dfence_keeps_l1`: off (default: the paper and the unit), a PM
/// line loaded before a dFence misses after it; on (the artifact), it hits.
#[test]
fn sbrp_dfence_invalidates_switch() {
    for inv in [false, true] {
        let mut c = cfg("sbrp-near");
        c.artifact.dfence_keeps_l1 = !inv;
        let r = load_across(&c, Instr::DFence);
        assert_eq!(
            r.sm.l1_pm_read_misses,
            1 + inv as u64,
            "dFence invalidates: {inv}"
        );
    }
}

/// An oFence under SBRP orders only: a PM line loaded before it still hits
/// after it (no invalidation).
#[test]
fn sbrp_ofence_keeps_clean_pm_lines() {
    let c = cfg("sbrp-near");
    let r = load_across(&c, Instr::OFence);
    assert_eq!(r.sm.l1_pm_read_misses, 1);
    assert_eq!(r.sm.l1_pm_read_hits, 1);
}

/// `docs/model-params.md` "Validation": "Epoch and GPM have no persist buffer
/// and ignore `pb.*`"; the persist buffer unit's limits apply "under `sbrp`
/// and `sbrp-device`" only. A valid epoch configuration with a 4-line L1
/// must therefore build a GPU.
#[test]
fn with_model_units_takes_every_valid_epoch_config() {
    let mut c = cfg("epoch-near");
    c.l1.size = 4 * c.l1.line;
    c.l1.assoc = 4;
    c.validate().expect("valid under epoch");
    assert!(Gpu::with_model_units(&c).is_ok());
}
