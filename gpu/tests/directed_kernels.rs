//! Directed tests of the GPU model's kernels and CTAs (`docs/model.md`,
//! "Kernels and CTAs", "SM"): launch latency, kernel reports, occupancy
//! limits, CTA placement, kernel boundaries and single-instruction costs.
//! Expected cycle counts and statistics are derived from the configuration
//! fields (and unloaded latencies of a fresh `MemSystem`), never copied
//! from a run (as in every `directed_*.rs`).

mod common;

use common::*;
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
