//! Directed tests of the GPU model's persistency models (`docs/model.md`,
//! "Persistency models", "Artifact switches"): what epoch, GPM, SBRP and
//! SBRP-device do at each ordering point (flushes, invalidations, fence
//! latency, stalls, coalescing, window), kernel-end drains, the persistence
//! points of `docs/model-memory.md` §7 seen from a warp (ADR, eADR,
//! `ack_at_l2`), and the PM write bandwidth reached through the SMs.
//! Expected figures are derived from the configuration, never copied from
//! a run. Kernels and CTAs: `directed_kernels.rs`; SM loads, MSHRs and
//! polls: `directed_sm.rs`.

mod common;

use common::*;
use sbrp_gpu::config::Model;
use sbrp_gpu::mem::Access;
use sbrp_gpu::GpuConfig;
use sbrp_trace::program::{CtaCode, Instr, Space};
use sbrp_trace::Scope;

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
