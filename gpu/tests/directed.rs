//! Directed tests of the GPU model (`docs/model.md`): small programs (one or
//! two CTAs of 1-8 warps, or grids of trivial CTAs) whose expected cycle
//! counts and statistics are derived from the configuration fields (and
//! from unloaded latencies of a fresh `MemSystem`), never copied from a run.
//! Covered: "Kernels and CTAs" (launch latency, kernel reports, occupancy
//! limits, CTA placement, kernel-end write-back and invalidation), "SM"
//! (load hit/miss latency, sectors, MSHRs, schedulers, single-instruction
//! costs), "L1" (replacement, write-back of dirty sectors), "Persistency
//! models" (what epoch, GPM, SBRP and SBRP-device do at each ordering point:
//! flushes, invalidations, fence latency, stalls, polls, remote visibility,
//! coalescing, window), kernel-end drain and "Artifact switches", the
//! persistence points of `docs/model-memory.md` §7 seen from a warp (ADR,
//! eADR, `ack_at_l2`), and the PM write bandwidth reached through the SMs.

mod common;

use common::*;
use sbrp_gpu::config::Model;
use sbrp_gpu::mem::Access;
use sbrp_gpu::{Gpu, GpuConfig, RunOpts};
use sbrp_trace::program::{CtaCode, Instr, KernelInfo, Space};
use sbrp_trace::Scope;

// ---------------------------------------------------------------------------
// Kernels and CTAs: launch latency
// ---------------------------------------------------------------------------

/// One warp: `compute N`, then `compute 1`. Under epoch nothing drains, so
/// the kernel lasts exactly launch latency + N + 1 (a warp's last
/// instruction's latency is waited for before it exits).
#[test]
fn launch_latency_and_compute_add_up_exactly() {
    let c = cfg("epoch-near");
    let l = c.core.kernel_launch_latency as u64;
    for n in [1u32, 7, 1000] {
        let r = run(&c, &one_cta(vec![vec![compute(n), compute(1)]]));
        assert_eq!(r.kernels[0].launch, 0);
        assert_eq!(r.kernels[0].cycles, l + n as u64 + 1, "compute {n}");
        assert_eq!(r.kernels[0].end, r.kernels[0].cycles);
        assert_eq!(r.cycles, r.kernels[0].end);
        assert_eq!(r.kernels[0].instrs, 2);
    }
}

/// Two kernels: the second launches when the first ends, each costs its
/// launch latency, and the reports are consistent (launch + cycles = end).
#[test]
fn two_kernels_add_up_and_reports_are_consistent() {
    let c = cfg("epoch-near");
    let l = c.core.kernel_launch_latency as u64;
    let (n1, n2) = (100u32, 250u32);
    let cta = |n| {
        vec![CtaCode {
            warps: vec![vec![compute(n), compute(1)]],
        }]
    };
    let prog = program(vec![
        (kernel(1, 32, 0, 0), cta(n1)),
        (kernel(1, 32, 0, 0), cta(n2)),
    ]);
    let r = run(&c, &prog);
    let k = &r.kernels;
    assert_eq!(k.len(), 2);
    assert_eq!(k[0].launch, 0);
    assert_eq!(k[0].cycles, l + n1 as u64 + 1);
    assert_eq!(
        k[1].launch, k[0].end,
        "the second kernel launches at the first's end"
    );
    assert_eq!(k[1].cycles, l + n2 as u64 + 1);
    for kr in k {
        assert_eq!(kr.launch + kr.cycles, kr.end);
        assert_eq!(kr.instrs, 2);
    }
    assert_eq!(r.cycles, 2 * l + (n1 + n2) as u64 + 2);
    // The same under SBRP, where the kernel end waits for `drain_all`: an
    // empty unit drains within a few cycles.
    let s = cfg("sbrp-near");
    let r = run(&s, &prog);
    assert!(r.cycles >= 2 * l + (n1 + n2) as u64);
    assert!(r.cycles <= 2 * l + (n1 + n2) as u64 + 2 * 4, "{}", r.cycles);
    assert_eq!(r.kernels[1].launch, r.kernels[0].end);
}

/// `docs/model.md` "SM": "`compute N` costs N cycles". A warp whose *last*
/// instruction is `compute N` must keep its CTA (and the kernel) busy for
/// those N cycles, as it does when another instruction follows.
#[test]
fn trailing_compute_is_not_free() {
    let c = cfg("epoch-near");
    let l = c.core.kernel_launch_latency as u64;
    let n = 1000u32;
    let r = run(&c, &one_cta(vec![vec![compute(n)]]));
    assert!(
        r.kernels[0].cycles >= l + n as u64,
        "{}",
        r.kernels[0].cycles
    );
}

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
// Kernels and CTAs: occupancy
// ---------------------------------------------------------------------------

/// CTAs resident per SM for `k` under `c`, from the configuration fields.
fn ctas_per_sm(c: &GpuConfig, k: &KernelInfo) -> u32 {
    let wpc = k.warps_per_cta();
    let mut lim = c.core.ctas_per_sm;
    lim = lim.min(c.core.warps_per_sm / wpc);
    lim = lim.min(c.core.warps_per_sm * 32 / k.block);
    if k.regs > 0 {
        lim = lim.min(c.core.regs_per_sm / (k.regs * wpc * 32));
    }
    if let Some(by_smem) = c.core.smem_per_sm.checked_div(k.smem) {
        lim = lim.min(by_smem);
    }
    lim
}

/// A grid of `waves` full waves of CTAs whose warps each compute `n`
/// cycles: the kernel lasts `waves` x `n` plus a few cycles per wave (the
/// schedulers issue `schedulers` warps a cycle; a freed slot is refilled in
/// the cycle it frees and the new CTA issues the next cycle).
fn check_waves(mut c: GpuConfig, k: KernelInfo, limit: u32, waves: u32) {
    c.core.sms = 2;
    let per_sm = ctas_per_sm(&c, &k);
    assert_eq!(per_sm, limit, "the limit the test means to exercise");
    let grid = waves * c.core.sms * per_sm;
    let k = KernelInfo { grid, ..k };
    let n = 1000u32;
    let wpc = k.warps_per_cta() as usize;
    let code = vec![
        CtaCode {
            warps: vec![vec![compute(n), compute(1)]; wpc],
        };
        grid as usize
    ];
    let r = run(&c, &program(vec![(k.clone(), code)]));
    let t = busy(&c, &r);
    let issue = (wpc as u32 * per_sm).div_ceil(c.core.schedulers) as u64;
    let measured = t / n as u64;
    eprintln!("{k:?}: {t} cycles, {measured} waves (expected {waves})");
    assert_eq!(measured, waves as u64, "{k:?}: {t} cycles");
    assert!(t <= waves as u64 * (n as u64 + issue + 2), "{k:?}: {t}");
    // One more CTA than fits needs one more wave.
    let k1 = KernelInfo {
        grid: grid + 1,
        ..k.clone()
    };
    let code1 = vec![
        CtaCode {
            warps: vec![vec![compute(n), compute(1)]; wpc],
        };
        grid as usize + 1
    ];
    let t1 = busy(&c, &run(&c, &program(vec![(k1, code1)])));
    assert_eq!(t1 / n as u64, waves as u64 + 1, "{k:?} + 1 CTA: {t1}");
}

#[test]
fn occupancy_limited_by_threads() {
    let c = cfg("epoch-near");
    // 1024 threads: one CTA per SM.
    check_waves(c.clone(), kernel(0, c.core.warps_per_sm * 32, 0, 0), 1, 2);
}

#[test]
fn occupancy_limited_by_warps() {
    let c = cfg("epoch-near");
    // 33 threads = 2 warps: warps_per_sm / 2 CTAs (threads allow more).
    check_waves(c.clone(), kernel(0, 33, 0, 0), c.core.warps_per_sm / 2, 2);
}

#[test]
fn occupancy_limited_by_shared_memory() {
    let c = cfg("epoch-near");
    check_waves(c.clone(), kernel(0, 32, 0, c.core.smem_per_sm / 3), 3, 3);
}

#[test]
fn occupancy_limited_by_registers() {
    let c = cfg("epoch-near");
    // 64 threads x r registers; r chosen so that 5 CTAs fit.
    let r = c.core.regs_per_sm / (64 * 5);
    check_waves(c.clone(), kernel(0, 64, r, 0), 5, 2);
}

#[test]
fn occupancy_limited_by_cta_slots() {
    let mut c = cfg("epoch-near");
    c.core.ctas_per_sm = 4;
    check_waves(c, kernel(0, 32, 0, 0), 4, 3);
}

#[test]
fn occupancy_same_under_sbrp() {
    let c = cfg("sbrp-near");
    check_waves(c.clone(), kernel(0, c.core.warps_per_sm * 32, 0, 0), 1, 2);
}

// ---------------------------------------------------------------------------
// Persistency models: epoch
// ---------------------------------------------------------------------------

/// Warp 0 dirties 5 PM lines and stops; warp 1's oFence (after warp 0's
/// stores) writes all 5 back: the flush is SM-wide. With
/// `no_kernel_end_drain` nothing else writes PM back, so exactly 5 flushes
/// and 5 lines of bytes reach PM; without the fence, none.
#[test]
fn epoch_ofence_writes_back_every_dirty_pm_line_of_the_sm() {
    let mut c = cfg("epoch-near");
    c.artifact.no_kernel_end_drain = true;
    let stores: Vec<Instr> = (0..5)
        .map(|i| st(&c, Space::Pm, line_addr(&c, PM, i)))
        .collect();
    let mut w0 = stores.clone();
    w0.push(compute(1));
    let line = c.l1.line as u64;
    for fence in [true, false] {
        let w1 = if fence {
            vec![compute(20), Instr::OFence, compute(1)]
        } else {
            vec![compute(20), compute(1)]
        };
        let r = run(&c, &one_cta(vec![w0.clone(), w1]));
        let n = if fence { 5 } else { 0 };
        assert_eq!(r.sm.persists, 5);
        assert_eq!(r.sm.pm_flushes, n, "fence {fence}");
        assert_eq!(r.mem.pm_write_bytes, n * line, "fence {fence}");
        assert_eq!(r.sm.fence_delays, fence as u64);
    }
}

/// Kernel-end drain under epoch (paper default): PM lines dirty at the end
/// are written back; with `artifact.no_kernel_end_drain` they are dropped.
#[test]
fn epoch_kernel_end_drain_and_artifact_switch() {
    let mut c = cfg("epoch-near");
    let line = c.l1.line as u64;
    let prog = one_cta(vec![vec![
        st(&c, Space::Pm, line_addr(&c, PM, 0)),
        st(&c, Space::Pm, line_addr(&c, PM, 1)),
        compute(1),
    ]]);
    let r = run(&c, &prog);
    assert_eq!(r.sm.pm_flushes, 2);
    assert_eq!(r.mem.pm_write_bytes, 2 * line);
    // The kernel ends once those writes are acknowledged.
    let ack = unloaded(&c, Access::Write, true);
    assert!(busy(&c, &r) >= ack, "{} < ack {ack}", busy(&c, &r));
    c.artifact.no_kernel_end_drain = true;
    let r = run(&c, &prog);
    assert_eq!(r.sm.pm_flushes, 0);
    assert_eq!(r.mem.pm_write_bytes, 0);
    assert!(busy(&c, &r) < ack);
}

/// SBRP at kernel end: `drain_all` persists the buffer (paper default).
#[test]
fn sbrp_kernel_end_drain_persists_everything() {
    let c = cfg("sbrp-near");
    let line = c.l1.line as u64;
    let prog = one_cta(vec![vec![
        st(&c, Space::Pm, line_addr(&c, PM, 0)),
        st(&c, Space::Pm, line_addr(&c, PM, 1)),
        compute(1),
    ]]);
    let r = run(&c, &prog);
    assert_eq!(r.sm.persists, 2);
    assert_eq!(r.mem.pm_write_bytes, 2 * line);
    assert!(busy(&c, &r) >= unloaded(&c, Access::Write, true));
}

/// A reload of a clean PM line after another warp's epoch oFence misses
/// (clean PM lines dropped); a volatile line survives the epoch oFence but
/// not GPM's (its device fence drops every clean line).
#[test]
fn epoch_ofence_drops_clean_pm_lines_gpm_drops_volatile_too() {
    for (name, fence) in [
        ("epoch-near", false),
        ("epoch-near", true),
        ("epoch-far", true),
        ("gpm-far", true),
    ] {
        let c = cfg(name);
        let x = line_addr(&c, PM, 9);
        let v = line_addr(&c, VOL, 9);
        // The second loads come long after the fence is over.
        let w0 = vec![
            ld(&c, Space::Pm, x),
            ld(&c, Space::Global, v),
            compute(5000),
            ld(&c, Space::Pm, x),
            ld(&c, Space::Global, v),
            compute(1),
        ];
        let w1 = if fence {
            vec![compute(1500), Instr::OFence, compute(1)]
        } else {
            vec![compute(1500), compute(1)]
        };
        let r = run(&c, &one_cta(vec![w0, w1]));
        let gpm = c.model == Model::Gpm;
        assert_eq!(
            r.sm.l1_pm_read_misses,
            1 + fence as u64,
            "{name} fence {fence}: PM reload"
        );
        assert_eq!(
            r.sm.l1_vol_read_misses,
            1 + gpm as u64,
            "{name} fence {fence}: volatile reload"
        );
    }
}

/// An epoch oFence costs the fence latency (after flushing nothing); GPM's
/// oFence adds a device fence: the write-back of the dirty volatile line,
/// its acknowledgement, and a second fence latency.
#[test]
fn fence_latency_epoch_and_gpm_volatile_write_back() {
    let e = cfg("epoch-far");
    let g = cfg("gpm-far");
    let f = e.core.fence_latency as u64;
    let v = line_addr(&e, VOL, 1);
    let with = |c: &GpuConfig| {
        run(
            c,
            &one_cta(vec![vec![
                st(c, Space::Global, v),
                Instr::OFence,
                compute(1),
            ]]),
        )
    };
    let without = |c: &GpuConfig| {
        run(
            c,
            &one_cta(vec![vec![st(c, Space::Global, v), compute(1), compute(1)]]),
        )
    };
    let (re, rg) = (with(&e), with(&g));
    let base = busy(&e, &without(&e));
    assert_eq!(re.sm.fence_delays, 1);
    assert_eq!(rg.sm.fence_delays, 2);
    let te = busy(&e, &re);
    let tg = busy(&g, &rg);
    eprintln!("base {base} epoch {te} gpm {tg}");
    // The fence's steps start the cycle after it issues and end the cycle
    // before the fence retires: at most 3 cycles on top of the latency.
    assert!(
        te >= base + f && te <= base + f + 3,
        "epoch {te} base {base}"
    );
    let vol_ack = unloaded(&g, Access::Write, false);
    assert_eq!(
        tg - te,
        vol_ack + f,
        "GPM: volatile write-back + device fence"
    );
    assert!(rg.stalls["flush"] > re.stalls["flush"]);
}

/// Epoch pAcq / pRel flush PM and drop PM lines but pay no fence latency.
#[test]
fn epoch_acquire_release_pay_no_fence_latency() {
    let c = cfg("epoch-near");
    let f = c.core.fence_latency as u64;
    let r = run(
        &c,
        &one_cta(vec![vec![
            prel(Scope::Block, Space::Global, FLAG, 1),
            pacq(Scope::Block, Space::Global, FLAG, 1),
            prel(Scope::Device, Space::Global, FLAG + 8, 1),
            pacq(Scope::Device, Space::Global, FLAG + 8, 1),
            compute(1),
        ]]),
    );
    assert_eq!(r.sm.fence_delays, 0);
    assert!(busy(&c, &r) < f, "{}", busy(&c, &r));
}

// ---------------------------------------------------------------------------
// Persistency models: SBRP
// ---------------------------------------------------------------------------

/// SBRP: an oFence only orders (the warp goes on at once); a dFence halts
/// the warp until its persist is durable. With a long compute after the
/// fence, the oFence run overlaps the flush with it, the dFence run does not.
#[test]
fn sbrp_ofence_does_not_stall_dfence_waits_for_durability() {
    let c = cfg("sbrp-near");
    let x = line_addr(&c, PM, 2);
    let n = 2000u32;
    let r_of = run(
        &c,
        &one_cta(vec![vec![st(&c, Space::Pm, x), Instr::OFence, compute(n)]]),
    );
    let r_df = run(
        &c,
        &one_cta(vec![vec![st(&c, Space::Pm, x), Instr::DFence, compute(n)]]),
    );
    let ack = unloaded(&c, Access::Write, true);
    let (to, td) = (busy(&c, &r_of), busy(&c, &r_df));
    eprintln!(
        "ofence {to} {:?}\ndfence {td} {:?}\nack {ack}",
        r_of.stalls, r_df.stalls
    );
    // The oFence run: the compute and a few cycles to hand the store over.
    assert!(to >= n as u64 && to <= n as u64 + 10, "oFence {to}");
    assert!(r_of.stalls["persist_buffer"] <= 10);
    // The dFence run: the flush's round trip is added.
    assert!(
        td >= to + ack - 10,
        "dFence {td} vs oFence {to} + ack {ack}"
    );
    assert!(r_df.stalls["persist_buffer"] >= ack - 10);
    assert_eq!(r_df.sm.fence_delays, 0);
    assert_eq!(r_of.sm.pm_flushes, 1);
    assert_eq!(r_df.sm.pm_flushes, 1);
}

/// Block-scope release/acquire between two warps of a CTA: under SBRP the
/// acquire does not touch the L1 (the reload hits); under SBRP-device it is
/// a device acquire whose `inv_req` drops clean PM lines (the reload
/// misses); under epoch the acquire drops PM lines too.
#[test]
fn block_acquire_keeps_l1_sbrp_device_and_epoch_invalidate() {
    for (name, flag_space, reload_misses) in [
        ("sbrp-near", Space::Shared, false),
        ("sbrp-near", Space::Pm, false),
        ("sbrp-near-dev", Space::Shared, true),
        ("sbrp-near-dev", Space::Pm, true),
        ("epoch-near", Space::Shared, true),
    ] {
        let c = cfg(name);
        let x = line_addr(&c, PM, 7);
        let y = line_addr(&c, PM, 8);
        let flag = if flag_space == Space::Pm {
            line_addr(&c, PM, 100)
        } else {
            FLAG
        };
        let w0 = vec![
            compute(100),
            st(&c, Space::Pm, y),
            prel(Scope::Block, flag_space, flag, 1),
        ];
        let w1 = vec![
            ld(&c, Space::Pm, x),
            pacq(Scope::Block, flag_space, flag, 1),
            ld(&c, Space::Pm, x),
            compute(1),
        ];
        let r = run(&c, &one_cta(vec![w0, w1]));
        eprintln!(
            "{name} {flag_space:?}: misses {} hits {} polls {}",
            r.sm.l1_pm_read_misses, r.sm.l1_pm_read_hits, r.sm.polls
        );
        assert_eq!(
            r.sm.l1_pm_read_misses,
            1 + reload_misses as u64,
            "{name} {flag_space:?}"
        );
        assert_eq!(r.sm.l1_pm_read_hits, !reload_misses as u64, "{name}");
    }
}

/// Stores of one line by two warps, or twice by one warp, with no ordering
/// point between them coalesce in the persist buffer; with an oFence
/// between a warp's two stores they do not.
#[test]
fn sbrp_stores_to_one_line_coalesce() {
    let mut c = cfg("sbrp-near");
    // A lazy buffer flushes only when it must, so the first store's entry is
    // still there when the second arrives.
    c.pb.policy = sbrp_gpu::config::Policy::Lazy;
    let x = line_addr(&c, PM, 4);
    let two_warps = run(
        &c,
        &one_cta(vec![
            vec![st(&c, Space::Pm, x), compute(1)],
            vec![st(&c, Space::Pm, x), compute(1)],
        ]),
    );
    let one_warp = run(
        &c,
        &one_cta(vec![vec![
            st(&c, Space::Pm, x),
            st(&c, Space::Pm, x),
            compute(1),
        ]]),
    );
    let fenced = run(
        &c,
        &one_cta(vec![vec![
            st(&c, Space::Pm, x),
            Instr::OFence,
            st(&c, Space::Pm, x),
            compute(1),
        ]]),
    );
    eprintln!(
        "two warps {:?}\none warp {:?}\nfenced {:?}",
        two_warps.sm, one_warp.sm, fenced.sm
    );
    assert_eq!(two_warps.sm.coalesced, 1);
    assert_eq!(two_warps.sm.pm_flushes, 1);
    assert_eq!(one_warp.sm.coalesced, 1);
    assert_eq!(one_warp.sm.pm_flushes, 1);
    assert_eq!(fenced.sm.coalesced, 0);
    assert_eq!(fenced.sm.pm_flushes, 2);
    // The default (window) policy too, for two warps storing in adjacent cycles.
    let d = cfg("sbrp-near");
    let r = run(
        &d,
        &one_cta(vec![
            vec![st(&d, Space::Pm, x), compute(1)],
            vec![st(&d, Space::Pm, x), compute(1)],
        ]),
    );
    eprintln!("window policy: {:?}", r.sm);
    assert!(r.sm.coalesced + r.sm.pm_flushes >= 2);
}

// ---------------------------------------------------------------------------
// Persistence points seen from a warp (docs/model-memory.md §7)
// ---------------------------------------------------------------------------

/// A dFence under sbrp-far, sbrp-far-eadr and sbrp-far with `ack_at_l2`.
/// Unloaded, ADR-far and eADR-far coincide (§7: they differ only when the
/// host write queue is full), so the runs take the same cycles; `ack_at_l2`
/// acknowledges when the write leaves the L2 and saves exactly the
/// difference of the two acknowledgement latencies.
#[test]
fn dfence_adr_eadr_ack_at_l2() {
    let adr = cfg("sbrp-far");
    let eadr = cfg("sbrp-far-eadr");
    let mut l2 = cfg("sbrp-far");
    l2.artifact.ack_at_l2 = true;
    let x = line_addr(&adr, PM, 5);
    let prog = one_cta(vec![vec![
        st(&adr, Space::Pm, x),
        Instr::DFence,
        compute(1),
    ]]);
    let (ta, te, tl) = (
        busy(&adr, &run(&adr, &prog)),
        busy(&eadr, &run(&eadr, &prog)),
        busy(&l2, &run(&l2, &prog)),
    );
    let (aa, ae, al) = (
        unloaded(&adr, Access::Write, true),
        unloaded(&eadr, Access::Write, true),
        unloaded(&l2, Access::Write, true),
    );
    eprintln!("ADR {ta} (ack {aa}) eADR {te} (ack {ae}) ack_at_l2 {tl} (ack {al})");
    assert_eq!(aa, ae);
    assert_eq!(ta, te, "unloaded ADR and eADR far coincide");
    assert!(al < aa);
    assert_eq!(ta - tl, aa - al);
    assert!(ta >= aa);
    // The same under epoch: the dFence waits for the flush's ack.
    let mut ep = cfg("epoch-far");
    let tep = busy(&ep, &run(&ep, &prog));
    ep.artifact.ack_at_l2 = true;
    let tep2 = busy(&ep, &run(&ep, &prog));
    assert_eq!(tep - tep2, aa - al);
}

/// eADR must not be slower than ADR when the host write queue is full
/// (§7: ADR waits for a slot, eADR does not): 4 warps of a CTA write many
/// lines with a dFence each, on a host queue shrunk to a few writes.
#[test]
fn eadr_is_faster_than_adr_under_a_full_host_queue() {
    let mut adr = cfg("sbrp-far");
    adr.pm.queue = 1;
    adr.pm.channels = 1;
    adr.pm.write_bandwidth = 2.0;
    let mut eadr = adr.clone();
    eadr.pm.durability = sbrp_gpu::config::Durability::Eadr;
    let warps: Vec<Vec<Instr>> = (0..4u64)
        .map(|w| {
            let mut v = vec![];
            for i in 0..16u64 {
                v.push(st(&adr, Space::Pm, line_addr(&adr, PM, w * 64 + i)));
            }
            v.push(Instr::DFence);
            v.push(compute(1));
            v
        })
        .collect();
    let prog = one_cta(warps);
    let ra = run(&adr, &prog);
    let re = run(&eadr, &prog);
    eprintln!("ADR {} eADR {}", ra.cycles, re.cycles);
    assert_eq!(ra.mem.pm_write_bytes, re.mem.pm_write_bytes);
    assert!(
        re.cycles < ra.cycles,
        "eADR {} ADR {}",
        re.cycles,
        ra.cycles
    );
}

// ---------------------------------------------------------------------------
// Bandwidth through the SMs
// ---------------------------------------------------------------------------

/// The configured PM write bandwidth and the rate the run reached, both in
/// bytes per cycle. Under ADR a write is durable (and the kernel may end)
/// once its channel's write-pending queue has taken it
/// (`docs/model-memory.md` §7), so up to `pm.queue` lines per channel can
/// still be on their way to the media at the end: they are not counted
/// against the run's time.
/// On PM-far the ceiling is the slower of the PCIe link and the host NVM,
/// whose write-pending queue holds `pm.queue x pm.channels` writes (§6).
fn write_rate(c: &GpuConfig, bytes: u64, t: f64) -> (f64, f64) {
    let queued = (c.pm.queue * c.pm.channels * c.l1.line) as u64;
    let mut bw = c.bytes_per_cycle(c.pm.write_bandwidth);
    if c.pm.place == sbrp_gpu::config::PmPlace::Far {
        bw = bw.min(c.bytes_per_cycle(c.pcie.bandwidth));
    }
    (bw, bytes.saturating_sub(queued) as f64 / t)
}

/// Every SM streams PM stores with an oFence after each batch (epoch-near):
/// the bytes reaching PM per cycle stay at or below the configured PM write
/// bandwidth (2% for the fixed-point rounding) and reach most of it.
#[test]
fn epoch_pm_write_bandwidth_through_the_sms() {
    for name in ["epoch-near", "epoch-far"] {
        epoch_stream(&cfg(name));
    }
}

fn epoch_stream(c: &GpuConfig) {
    let c = c.clone();
    let warps = 4u32;
    let (batches, per_batch) = (4u64, 32u64);
    let mut code = vec![];
    for cta in 0..c.core.sms as u64 {
        let mut ws = vec![];
        for w in 0..warps as u64 {
            let mut v = vec![];
            for b in 0..batches {
                for i in 0..per_batch {
                    let n = ((cta * warps as u64 + w) * batches + b) * per_batch + i;
                    v.push(st(&c, Space::Pm, line_addr(&c, PM, n)));
                }
                v.push(Instr::OFence);
            }
            v.push(compute(1));
            ws.push(v);
        }
        code.push(CtaCode { warps: ws });
    }
    let prog = program(vec![(kernel(c.core.sms, warps * 32, 0, 0), code)]);
    let r = run(&c, &prog);
    let lines = c.core.sms as u64 * warps as u64 * batches * per_batch;
    assert_eq!(r.mem.pm_write_bytes, lines * c.l1.line as u64);
    let t = busy(&c, &r) as f64;
    let (bw, got) = write_rate(&c, r.mem.pm_write_bytes, t);
    eprintln!(
        "{:?} {:?}: {got:.2} B/cycle of {bw:.2} over {t} cycles",
        c.model, c.pm.place
    );
    assert!(got <= bw * 1.02, "{got} > {bw}");
    assert!(got >= bw * 0.6, "{got} << {bw}");
}

/// The same stream under SBRP-near (the persist buffer flushes eagerly
/// within its window): PM write bandwidth is the ceiling here too.
#[test]
fn sbrp_pm_write_bandwidth_is_a_ceiling() {
    let c = cfg("sbrp-near");
    let warps = 4u32;
    let per_warp = 64u64;
    let mut code = vec![];
    for cta in 0..c.core.sms as u64 {
        let mut ws = vec![];
        for w in 0..warps as u64 {
            let mut v: Vec<Instr> = (0..per_warp)
                .map(|i| {
                    let n = (cta * warps as u64 + w) * per_warp + i;
                    st(&c, Space::Pm, line_addr(&c, PM, n))
                })
                .collect();
            v.push(Instr::DFence);
            v.push(compute(1));
            ws.push(v);
        }
        code.push(CtaCode { warps: ws });
    }
    let prog = program(vec![(kernel(c.core.sms, warps * 32, 0, 0), code)]);
    let r = run(&c, &prog);
    let lines = c.core.sms as u64 * warps as u64 * per_warp;
    assert_eq!(r.mem.pm_write_bytes, lines * c.l1.line as u64);
    let t = busy(&c, &r) as f64;
    let (bw, got) = write_rate(&c, r.mem.pm_write_bytes, t);
    eprintln!("SBRP {got:.2} B/cycle of {bw:.2} over {t} cycles");
    assert!(got <= bw * 1.02, "{got} > {bw}");
    assert!(got >= bw * 0.6, "{got} << {bw}");
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

/// `artifact.dfence_keeps_l1`: off (default: the paper and the unit), a PM
/// line loaded before a dFence misses after it; on (the artifact), it hits.
#[test]
fn sbrp_dfence_invalidates_switch() {
    for inv in [false, true] {
        let mut c = cfg("sbrp-near");
        c.artifact.dfence_keeps_l1 = !inv;
        let (x, y) = (line_addr(&c, PM, 1), line_addr(&c, PM, 2));
        let r = run(
            &c,
            &one_cta(vec![vec![
                ld(&c, Space::Pm, x),
                st(&c, Space::Pm, y),
                Instr::DFence,
                ld(&c, Space::Pm, x),
                compute(1),
            ]]),
        );
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
    let (x, y) = (line_addr(&c, PM, 1), line_addr(&c, PM, 2));
    let r = run(
        &c,
        &one_cta(vec![vec![
            ld(&c, Space::Pm, x),
            st(&c, Space::Pm, y),
            Instr::OFence,
            ld(&c, Space::Pm, x),
            compute(1),
        ]]),
    );
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

// ---------------------------------------------------------------------------
// Kernel boundaries, placement, single-instruction costs
// ---------------------------------------------------------------------------

/// `artifact.no_kernel_end_drain` under epoch: "epoch drops dirty PM lines
/// at no cost" (`docs/model.md`, "Artifact switches"). Lines a kernel left
/// dirty must then not be written back by the next kernel's oFence.
#[test]
fn epoch_no_drain_dirty_lines_do_not_leak_into_the_next_kernel() {
    let mut c = cfg("epoch-near");
    c.artifact.no_kernel_end_drain = true;
    let mut w: Vec<Instr> = (0..5)
        .map(|i| st(&c, Space::Pm, line_addr(&c, PM, i)))
        .collect();
    w.push(compute(1));
    let k1 = vec![CtaCode { warps: vec![w] }];
    let k2 = vec![CtaCode {
        warps: vec![vec![Instr::OFence, compute(1)]],
    }];
    let r = run(
        &c,
        &program(vec![(kernel(1, 32, 0, 0), k1), (kernel(1, 32, 0, 0), k2)]),
    );
    assert_eq!(r.sm.pm_flushes, 0);
    assert_eq!(r.mem.pm_write_bytes, 0);
}

/// With a grid no larger than the SM count, CTA `i` runs on SM `i`: CTA `i`
/// loads `i + 1` distinct PM lines, so SM `i` counts `i + 1` misses.
#[test]
fn cta_i_runs_on_sm_i() {
    let c = cfg("sbrp-near");
    let grid = c.core.sms.min(8);
    let code: Vec<CtaCode> = (0..grid as u64)
        .map(|i| {
            let mut w: Vec<Instr> = (0..=i)
                .map(|j| ld(&c, Space::Pm, line_addr(&c, PM, i * 64 + j)))
                .collect();
            w.push(compute(1));
            CtaCode { warps: vec![w] }
        })
        .collect();
    let mut gpu = Gpu::with_model_units(&c).unwrap();
    let r = gpu.run(
        &program(vec![(kernel(grid, 32, 0, 0), code)]),
        RunOpts::default(),
    );
    assert!(r.finished);
    for (i, sm) in gpu.sms.iter().enumerate() {
        let want = if (i as u32) < grid { i as u64 + 1 } else { 0 };
        assert_eq!(sm.stats.l1_pm_read_misses, want, "SM {i}");
    }
}

/// Kernel end: the L1s drop every clean line (a reload in the next kernel
/// misses) and write back volatile dirty lines, which the L2's kernel-end
/// flush takes to GDDR; without `l2.flush_at_kernel_end` they stay in the L2.
#[test]
fn kernel_end_drops_l1_lines_and_writes_volatile_back() {
    for flush_l2 in [true, false] {
        let mut c = cfg("epoch-near");
        c.l2.flush_at_kernel_end = flush_l2;
        let (x, v) = (line_addr(&c, PM, 1), line_addr(&c, VOL, 1));
        let k = |w: Vec<Instr>| (kernel(1, 32, 0, 0), vec![CtaCode { warps: vec![w] }]);
        let r = run(
            &c,
            &program(vec![
                k(vec![
                    ld(&c, Space::Pm, x),
                    st(&c, Space::Global, v),
                    compute(1),
                ]),
                k(vec![ld(&c, Space::Pm, x), compute(1)]),
            ]),
        );
        assert_eq!(r.sm.l1_pm_read_misses, 2);
        let want = if flush_l2 { c.l1.line as u64 } else { 0 };
        assert_eq!(
            r.mem.gddr_write_bytes, want,
            "flush_at_kernel_end {flush_l2}"
        );
    }
}

/// A write-back carries only the dirty sectors: one lane's 4-byte store
/// makes one sector dirty and one sector's bytes reach PM (epoch: kernel-end
/// flush; SBRP: the unit's flush).
#[test]
fn write_back_carries_only_dirty_sectors() {
    for name in ["epoch-near", "sbrp-near", "sbrp-far"] {
        let c = cfg(name);
        let one_lane = Instr::St {
            space: Space::Pm,
            size: 4,
            mask: 1,
            addrs: sbrp_trace::program::Addrs::Strided {
                base: line_addr(&c, PM, 1),
                stride: 4,
            },
            values: sbrp_trace::program::Values::Same(7),
        };
        let r = run(&c, &one_cta(vec![vec![one_lane, compute(1)]]));
        assert_eq!(r.mem.pm_write_bytes, c.l1.sector as u64, "{name}");
    }
}

/// Sectored L1: a load of one sector, then of the whole line, fetches the
/// three missing sectors only (two misses, one line's bytes read from PM).
#[test]
fn sectored_l1_fetches_missing_sectors_only() {
    let c = cfg("epoch-near");
    let x = line_addr(&c, PM, 1);
    let one_lane = Instr::Ld {
        space: Space::Pm,
        size: 4,
        mask: 1,
        addrs: sbrp_trace::program::Addrs::Strided { base: x, stride: 4 },
    };
    let r = run(
        &c,
        &one_cta(vec![vec![one_lane, ld(&c, Space::Pm, x), compute(1)]]),
    );
    assert_eq!(r.sm.l1_pm_read_misses, 2);
    assert_eq!(r.mem.pm_read_bytes, c.l1.line as u64);
}

/// Single instructions, each a warp's only one (epoch-near): an
/// atomic blocks for the memory system's atomic round trip, a shared-memory
/// access for `core.shared_latency`, a volatile store for one cycle.
#[test]
fn single_instruction_costs() {
    let c = cfg("epoch-near");
    let v = line_addr(&c, VOL, 1);
    let cost = |i: Instr| busy(&c, &run(&c, &one_cta(vec![vec![i]])));
    let (size, addrs) = (
        4u8,
        sbrp_trace::program::Addrs::Strided {
            base: line_addr(&c, PM, 0),
            stride: 4,
        },
    );
    let atom = Instr::Atom {
        space: Space::Pm,
        size,
        mask: !0,
        addrs: addrs.clone(),
    };
    assert_eq!(cost(atom), unloaded(&c, Access::Atomic, true));
    let shared = Instr::Ld {
        space: Space::Shared,
        size,
        mask: !0,
        addrs,
    };
    assert_eq!(cost(shared), c.core.shared_latency as u64);
    assert_eq!(cost(st(&c, Space::Global, v)), 1);
    assert_eq!(cost(compute(33)), 33);
}

/// `core.schedulers` warps issue per cycle: 8 warps of two `compute 1` (16
/// instructions) take 16 / schedulers issue cycles; the kernel's busy time
/// ends one cycle after the last issue.
#[test]
fn schedulers_bound_issue() {
    for sched in [1u32, 2] {
        let mut c = cfg("epoch-near");
        c.core.schedulers = sched;
        let r = run(&c, &one_cta(vec![vec![compute(1), compute(1)]; 8]));
        assert_eq!(busy(&c, &r), (16u64).div_ceil(sched as u64), "{sched}");
    }
}

/// Round robin over the warps (`docs/model.md` "SM": "Up to
/// `core.schedulers` warps issue per cycle, round robin"): with 4 schedulers
/// and 2 ready warps, both issue every cycle, so two warps of two
/// `compute 1` are done after 2 issue cycles; 8 such warps after 4.
#[test]
fn round_robin_visits_every_warp() {
    let c = cfg("epoch-near");
    assert!(c.core.schedulers >= 2);
    let two = run(&c, &one_cta(vec![vec![compute(1), compute(1)]; 2]));
    assert_eq!(busy(&c, &two), 2);
    let sched = c.core.schedulers as u64;
    let eight = run(&c, &one_cta(vec![vec![compute(1), compute(1)]; 8]));
    assert_eq!(busy(&c, &eight), 16u64.div_ceil(sched));
}

/// Epoch barrier (`bar`): flush PM and volatile, wait for PM, drop every
/// clean line. Warp 0 dirties 3 PM lines, both warps meet at a barrier:
/// with `no_kernel_end_drain` the barrier's 3 write-backs are the only PM
/// writes; warp 1's PM and volatile reloads after the barrier miss.
#[test]
fn epoch_barrier_flushes_and_drops_clean_lines() {
    let mut c = cfg("epoch-near");
    c.artifact.no_kernel_end_drain = true;
    let (x, v) = (line_addr(&c, PM, 50), line_addr(&c, VOL, 50));
    let mut w0: Vec<Instr> = (0..3)
        .map(|i| st(&c, Space::Pm, line_addr(&c, PM, i)))
        .collect();
    w0.push(Instr::Bar);
    w0.push(compute(1));
    let w1 = vec![
        ld(&c, Space::Pm, x),
        ld(&c, Space::Global, v),
        Instr::Bar,
        ld(&c, Space::Pm, x),
        ld(&c, Space::Global, v),
        compute(1),
    ];
    let r = run(&c, &one_cta(vec![w0, w1]));
    assert_eq!(r.sm.pm_flushes, 3);
    assert_eq!(r.mem.pm_write_bytes, 3 * c.l1.line as u64);
    assert_eq!(r.sm.l1_pm_read_misses, 2);
    assert_eq!(r.sm.l1_vol_read_misses, 2);
    assert_eq!(r.sm.fence_delays, 0);
}

/// A full-line PM store allocates its line without a fetch: a load of it
/// afterwards hits, under every model.
#[test]
fn load_after_full_line_store_hits() {
    for name in ["epoch-near", "sbrp-near", "sbrp-near-dev", "gpm-far"] {
        let c = cfg(name);
        let x = line_addr(&c, PM, 1);
        let r = run(
            &c,
            &one_cta(vec![vec![
                st(&c, Space::Pm, x),
                ld(&c, Space::Pm, x),
                compute(1),
            ]]),
        );
        assert_eq!(r.sm.l1_pm_read_misses, 0, "{name}");
        assert_eq!(r.sm.l1_pm_read_hits, 1, "{name}");
        assert_eq!(r.mem.pm_read_bytes, 0, "{name}");
    }
}

/// CTAs without code (`FileProgram`: "a CTA not listed has no warps' code:
/// its warps exit at once"): a grid of more such CTAs than the GPU holds at
/// once must still finish (each wave is reaped and refilled).
#[test]
fn grid_of_empty_ctas_finishes() {
    for name in ["epoch-near", "sbrp-near"] {
        let mut c = cfg(name);
        c.core.sms = 2;
        c.core.ctas_per_sm = 4;
        let grid = 3 * c.core.sms * c.core.ctas_per_sm;
        let r = run(&c, &program(vec![(kernel(grid, 32, 0, 0), vec![])]));
        assert_eq!(r.kernels[0].instrs, 0, "{name}");
    }
}

/// Same with a grid that fits at once: nothing to refill, it finishes.
#[test]
fn grid_of_empty_ctas_that_fits_finishes() {
    let mut c = cfg("epoch-near");
    c.core.sms = 2;
    c.core.ctas_per_sm = 4;
    let grid = c.core.sms * c.core.ctas_per_sm;
    let r = run(&c, &program(vec![(kernel(grid, 32, 0, 0), vec![])]));
    assert_eq!(r.kernels[0].instrs, 0);
    assert!(busy(&c, &r) <= 2);
}

/// A block-scope release on SM 0 becomes visible on SM 1 only after
/// `remote_visibility` cycles: CTA 1's acquire cannot complete before the
/// release (after `d` cycles of compute) plus that delay.
#[test]
fn block_release_is_visible_on_another_sm_after_remote_visibility() {
    for name in ["epoch-near", "sbrp-near"] {
        let c = cfg(name);
        let d = 300u32;
        let code = vec![
            CtaCode {
                warps: vec![vec![
                    compute(d),
                    prel(Scope::Block, Space::Global, FLAG, 1),
                    compute(1),
                ]],
            },
            CtaCode {
                warps: vec![vec![pacq(Scope::Block, Space::Global, FLAG, 1), compute(1)]],
            },
        ];
        let r = run(&c, &program(vec![(kernel(2, 32, 0, 0), code)]));
        let t = busy(&c, &r);
        eprintln!("{name}: {t} polls {}", r.sm.polls);
        assert!(t >= (d + c.remote_visibility) as u64, "{name}: {t}");
        assert!(r.sm.polls >= (d / (c.l1.latency + 6)) as u64, "{name}");
    }
}

/// Replacement after an invalidation: a 4-line L1 holds a dirty volatile
/// line V and clean PM lines B, C, D; an epoch release drops B, C, D
/// (clean PM lines). A load of a fifth line E then has three invalidated
/// ways to choose from and must not evict V: a reload of V still hits.
#[test]
fn invalidated_ways_are_replaced_before_live_lines() {
    let mut c = cfg("epoch-near");
    c.l1.size = 4 * c.l1.line;
    c.l1.assoc = 4;
    let v = line_addr(&c, VOL, 0);
    let pm = |i| ld(&c, Space::Pm, line_addr(&c, PM, i));
    let r = run_no_unit(
        &c,
        &one_cta(vec![vec![
            st(&c, Space::Global, v),
            pm(1),
            pm(2),
            pm(3),
            prel(Scope::Block, Space::Global, FLAG, 1),
            pm(4),
            ld(&c, Space::Global, v),
            compute(1),
        ]]),
    );
    assert_eq!(r.sm.l1_pm_read_misses, 4);
    assert_eq!(r.sm.l1_vol_read_misses, 0);
}

/// GPM's acquire and release each add a device fence (one fence latency);
/// epoch's none; a `__threadfence` is one fence latency under both.
#[test]
fn fence_delays_per_ordering_point() {
    for (name, acqrel, npfence) in [("epoch-far", 0u64, 1u64), ("gpm-far", 2, 1)] {
        let c = cfg(name);
        let r = run(
            &c,
            &one_cta(vec![vec![
                prel(Scope::Block, Space::Global, FLAG, 1),
                pacq(Scope::Block, Space::Global, FLAG, 1),
                compute(1),
            ]]),
        );
        assert_eq!(r.sm.fence_delays, acqrel, "{name} acquire/release");
        let r = run(
            &c,
            &one_cta(vec![vec![
                Instr::Fence(sbrp_trace::program::FenceScope::System),
                compute(1),
            ]]),
        );
        // (`epoch_threadfence_pays_one_fence_latency`: counted twice.)
        assert!(r.sm.fence_delays >= npfence, "{name} threadfence");
        assert!(busy(&c, &r) >= c.core.fence_latency as u64);
    }
}

/// `bar` waits for every unfinished warp of the CTA: warp 1 arrives at once
/// and waits for warp 0's `d` cycles of compute (barrier stall about `d`).
#[test]
fn barrier_waits_for_the_slowest_warp() {
    for name in ["epoch-near", "sbrp-near", "gpm-far"] {
        let c = cfg(name);
        let d = 500u32;
        let r = run(
            &c,
            &one_cta(vec![
                vec![compute(d), Instr::Bar, compute(1)],
                vec![Instr::Bar, compute(1)],
            ]),
        );
        let b = r.stalls["barrier"];
        eprintln!("{name}: barrier stall {b}, busy {}", busy(&c, &r));
        assert!(b + 10 >= d as u64 && b <= d as u64 + 10, "{name}: {b}");
        assert!(busy(&c, &r) >= d as u64, "{name}");
    }
}

/// SBRP evictions: a 32-line, 2-way L1 with a 16-entry buffer under the
/// lazy policy (nothing flushes before it must); 3 lines of one set stored
/// without a fence: the third store must evict a dirty PM line through the
/// unit (an eviction flush), and every line reaches PM once.
#[test]
fn sbrp_eviction_of_a_dirty_pm_line_is_an_eviction_flush() {
    let mut c = cfg("sbrp-near");
    c.pb.entries = 16;
    c.l1.size = 32 * c.l1.line;
    c.l1.assoc = 2;
    c.pb.policy = sbrp_gpu::config::Policy::Lazy;
    let sets = (c.l1_lines() / c.l1.assoc) as u64;
    assert_eq!((PM / c.l1.line as u64) % sets, 0);
    let mut w: Vec<Instr> = (0..3)
        .map(|i| st(&c, Space::Pm, line_addr(&c, PM, i * sets)))
        .collect();
    w.push(compute(1));
    let r = run(&c, &one_cta(vec![w]));
    eprintln!("{:?} {:?}", r.sm, r.mem);
    assert_eq!(r.sm.evict_flushes, 1);
    assert_eq!(r.sm.persists, 3);
    assert_eq!(r.mem.pm_write_bytes, 3 * c.l1.line as u64);
}

/// A `__threadfence` under epoch (`docs/model.md` table: "flush PM and
/// volatile, wait for all, fence latency, drop clean lines") pays the fence
/// latency once.
#[test]
fn epoch_threadfence_pays_one_fence_latency() {
    for name in ["epoch-near", "gpm-far"] {
        let c = cfg(name);
        let r = run(
            &c,
            &one_cta(vec![vec![
                Instr::Fence(sbrp_trace::program::FenceScope::Device),
                compute(1),
            ]]),
        );
        assert_eq!(r.sm.fence_delays, 1, "{name}");
        assert!(
            busy(&c, &r) <= c.core.fence_latency as u64 + 4,
            "{name}: {}",
            busy(&c, &r)
        );
    }
}

/// Epoch flushes write back one line per cycle (the L1's write-back port,
/// `docs/model.md` "Persistency models") and wait for the last one: with an
/// SM port wide enough not to matter, an oFence over `n` dirty lines ends
/// `n - 1` cycles later than one over a single line. The stores are done by
/// another warp well before the fence, so their issue time is hidden.
#[test]
fn epoch_flush_writes_back_one_line_per_cycle() {
    let mut c = cfg("epoch-near");
    c.icnt.port_bytes = 100 * c.l1.line;
    let t = |n: u64| {
        let mut w0: Vec<Instr> = (0..n)
            .map(|i| st(&c, Space::Pm, line_addr(&c, PM, i)))
            .collect();
        w0.push(compute(1));
        let w1 = vec![compute(100), Instr::OFence, compute(1)];
        let r = run(&c, &one_cta(vec![w0, w1]));
        assert_eq!(r.sm.pm_flushes, n);
        busy(&c, &r)
    };
    let n = 16;
    let (t1, tn) = (t(1), t(n));
    eprintln!("1 line {t1}, {n} lines {tn}");
    assert_eq!(tn - t1, n - 1);
}

/// The persist buffer's window (`pb.window`, "window" policy: flush while
/// ACTR < K, `docs/microarch.md`): 6 lines stored, then a long compute so
/// nothing forces a flush before the buffer has flushed by policy; the
/// outstanding flushes (ACTR) peak at min(K, 6).
#[test]
fn sbrp_window_caps_outstanding_policy_flushes() {
    let n = 6u64;
    for k in [1u32, 2, 4, 6, 8] {
        let mut c = cfg("sbrp-near");
        c.pb.window = k;
        let mut w: Vec<Instr> = (0..n)
            .map(|i| st(&c, Space::Pm, line_addr(&c, PM, i)))
            .collect();
        w.push(compute(5000));
        w.push(compute(1));
        let r = run(&c, &one_cta(vec![w]));
        assert_eq!(r.sm.actr_peak as u64, n.min(k as u64), "window {k}");
        assert_eq!(r.sm.pm_flushes, n);
    }
}

/// With a dFence right after 6 stores, the flushes are forced (a drain):
/// the L1's `miss_queue` (`flush_ready`) still caps them. With a miss queue
/// of 1 every flush waits for the previous acknowledgement: at least 6
/// unloaded round trips.
#[test]
fn sbrp_miss_queue_caps_forced_flushes() {
    let base = cfg("sbrp-near");
    let ack = unloaded(&base, Access::Write, true);
    let n = 6u64;
    let t = |c: &GpuConfig| {
        let mut w: Vec<Instr> = (0..n)
            .map(|i| st(c, Space::Pm, line_addr(c, PM, i)))
            .collect();
        w.push(Instr::DFence);
        w.push(compute(1));
        let r = run(c, &one_cta(vec![w]));
        (busy(c, &r), r.sm.actr_peak)
    };
    let mut mq1 = base.clone();
    mq1.l1.miss_queue = 1;
    let ((t16, _), (t1, _)) = (t(&base), t(&mq1));
    eprintln!(
        "miss_queue {}: {t16}, 1: {t1}; ack {ack}",
        base.l1.miss_queue
    );
    assert!(t16 < 2 * ack, "{t16}");
    assert!(t1 >= n * ack, "{t1}");
}

/// `pb.window` limits eager flushing only: a forced drain (a dFence, a full
/// buffer) flushes past it, as the unit's spec says (`docs/microarch.md`
/// §4.1: the window test is skipped under force) and as the artifact does
/// when its buffer is full. With window 1, a dFence behind 6 stores has
/// more than one flush outstanding.
#[test]
fn sbrp_forced_flushes_pass_the_window() {
    let mut c = cfg("sbrp-near");
    c.pb.window = 1;
    let mut w: Vec<Instr> = (0..6)
        .map(|i| st(&c, Space::Pm, line_addr(&c, PM, i)))
        .collect();
    w.push(Instr::DFence);
    w.push(compute(1));
    let r = run(&c, &one_cta(vec![w]));
    assert!(r.sm.actr_peak > c.pb.window, "peak {}", r.sm.actr_peak);
}
