//! Directed tests of `pm.reorder` (`docs/model-memory.md` §6.1, "Reordering
//! in the persistence domain"; the switch in `docs/model-params.md`): on
//! PM-far, per-channel host NVM queues let one SM's writes become durable out
//! of issue order, while the default single device never does; PM-near
//! already reorders across its channels and ignores the switch; latencies
//! and bandwidths stay what the configuration says; and the default
//! configuration's results are those of the model before the switch existed.

mod common;

use sbrp_gpu::config::{Durability, GpuConfig, PmPlace};
use sbrp_gpu::mem::{Access, Done, MemReq, MemSystem};
use sbrp_gpu::{Gpu, RunOpts};
use sbrp_trace::program::{CtaCode, FileProgram, Instr, Space};
use sbrp_trace::Event;

const FULL: u8 = 0b1111;

fn req(sm: u32, line: u64, access: Access) -> MemReq {
    MemReq {
        sm,
        line,
        sectors: FULL,
        access,
        pm: true,
    }
}

fn far(reorder: bool) -> GpuConfig {
    let mut c = GpuConfig::default();
    c.pm.place = PmPlace::Far;
    c.pm.reorder = reorder;
    c
}

fn near(reorder: bool) -> GpuConfig {
    let mut c = GpuConfig::default();
    c.pm.reorder = reorder;
    c
}

/// The PM channel of `line` (slice x channels / slices, `docs/model-memory.md` §3).
fn pm_chan(m: &MemSystem, line: u64) -> u32 {
    let c = m.config();
    m.slice_of(line) * c.pm.channels / c.l2.slices
}

/// The first `n` lines from `from` on whose PM channel is `chan`.
fn lines_of(m: &MemSystem, chan: u32, n: usize, from: u64) -> Vec<u64> {
    (from..)
        .filter(|&l| pm_chan(m, l) == chan)
        .take(n)
        .collect()
}

/// Sends `2 x pm.queue` writes to channel 0 from SMs 1.. at cycle 0 (its
/// write-pending queue fills: the link delivers faster than one channel
/// writes), then SM 0's write to channel 0 and SM 0's write to channel 1.
/// Returns SM 0's two `Done`s, in issue order.
fn loaded_then_two(c: &GpuConfig) -> (Done, Done) {
    let mut m = MemSystem::new(c);
    let q = c.pm.queue as usize;
    let busy = lines_of(&m, 0, 2 * q + 1, 0);
    for (i, &l) in busy[..2 * q].iter().enumerate() {
        m.send(0, &req(1 + i as u32 % (c.core.sms - 1), l, Access::Write));
    }
    let to_busy = busy[2 * q];
    let to_idle = lines_of(&m, 1, 1, 0)[0];
    let first = m.send(0, &req(0, to_busy, Access::Write));
    let second = m.send(0, &req(0, to_idle, Access::Write));
    (first, second)
}

#[test]
fn reorder_far_a_write_to_an_idle_channel_overtakes_one_to_a_full_queue() {
    let (first, second) = loaded_then_two(&far(true));
    eprintln!("reorder far: first {first:?}, second {second:?}");
    assert!(
        second.durable < first.durable,
        "the later write to the idle channel is durable first"
    );
    // The ack follows durability (a control packet back over PCIe).
    assert!(second.at < first.at);
    // The gap is the busy channel's queue wait: at least one write service.
    let c = far(true);
    let service =
        c.l1.line as f64 / (c.bytes_per_cycle(c.pm.write_bandwidth) / c.pm.channels as f64);
    assert!((first.durable - second.durable) as f64 >= service);

    // The default: one host device, whose queue (channels x queue) never
    // fills behind a link slower than its write bandwidth: issue order.
    let (first, second) = loaded_then_two(&far(false));
    eprintln!("default far: first {first:?}, second {second:?}");
    assert!(first.durable < second.durable);
    assert!(first.at < second.at);

    // The artifact's per-channel links are independent paths: they reorder
    // too, before any queue (the busy channel's link is backed up).
    let mut c = far(false);
    c.artifact.pcie_per_channel = true;
    let (first, second) = loaded_then_two(&c);
    assert!(second.durable < first.durable);
}

#[test]
fn reorder_far_eadr_stays_in_link_order() {
    // eADR's point is the far end of the one link: ordered with or without
    // per-channel queues behind it.
    for reorder in [false, true] {
        let mut c = far(reorder);
        c.pm.durability = Durability::Eadr;
        let (first, second) = loaded_then_two(&c);
        assert!(first.durable < second.durable, "reorder {reorder}");
    }
}

/// Out-of-issue-order durabilities per SM of a stream: for each SM, the
/// writes that became durable before an earlier write of that SM.
fn overtakes(done: &[(u32, Done)], sms: u32) -> u64 {
    let mut latest = vec![0u64; sms as usize];
    let mut n = 0;
    for &(sm, d) in done {
        let l = &mut latest[sm as usize];
        if d.durable < *l {
            n += 1;
        }
        *l = (*l).max(d.durable);
    }
    n
}

/// A loaded stream: 30 SMs, cycles advancing, reads and writes (full lines
/// and single sectors) over many lines, every other write to channel 0 so
/// that its queue fills. Returns each write's `(sm, Done)` in issue order.
fn stream(c: &GpuConfig, sectors_vary: bool) -> Vec<(u32, Done)> {
    let mut m = MemSystem::new(c);
    let hot = lines_of(&m, 0, 4096, 1 << 20);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rnd = || {
        // xorshift64: deterministic, no dependency.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::new();
    for i in 0..20_000u64 {
        let now = i / 4;
        let r = rnd();
        let sm = (r % c.core.sms as u64) as u32;
        let write = (r >> 8) % 3 != 0;
        let line = if write && (r >> 12) % 2 == 0 {
            hot[(r >> 16) as usize % hot.len()]
        } else {
            (r >> 16) % 100_000
        };
        let sectors = if sectors_vary {
            1u8 << ((r >> 40) % 4)
        } else {
            FULL
        };
        let access = if write { Access::Write } else { Access::Read };
        let d = m.send(
            now,
            &MemReq {
                sm,
                line,
                sectors,
                access,
                pm: true,
            },
        );
        if write {
            out.push((sm, d));
        }
    }
    out
}

#[test]
fn only_reorder_far_makes_a_loaded_stream_durable_out_of_issue_order() {
    let sms = GpuConfig::default().core.sms;
    for sectors_vary in [false, true] {
        let def = overtakes(&stream(&far(false), sectors_vary), sms);
        let re = overtakes(&stream(&far(true), sectors_vary), sms);
        let mut e = far(true);
        e.pm.durability = Durability::Eadr;
        let eadr = overtakes(&stream(&e, sectors_vary), sms);
        eprintln!(
            "overtaking writes (sectors vary: {sectors_vary}): default {def}, reorder {re}, reorder eADR {eadr}"
        );
        assert_eq!(def, 0, "the default far path is in issue order");
        assert_eq!(eadr, 0, "eADR is in link order");
        assert!(re > 100, "reorder: {re} overtaking writes");
    }
}

#[test]
fn near_already_reorders_and_ignores_the_switch() {
    // PM-near's channels are separate devices with their own queues: a
    // write to an idle channel overtakes one waiting for a slot.
    let (first, second) = loaded_then_two(&near(false));
    assert!(second.durable < first.durable);
    let sms = GpuConfig::default().core.sms;
    let def = stream(&near(false), true);
    assert!(overtakes(&def, sms) > 0);
    // The switch changes nothing near.
    assert_eq!(loaded_then_two(&near(true)), (first, second));
    assert_eq!(stream(&near(true), true), def);
}

#[test]
fn reorder_keeps_unloaded_latencies_and_the_pcie_limit() {
    // Unloaded, the per-channel devices have the aggregate's latencies:
    // a read's device latency and service of one line at the channel's
    // share differ, a write's durability and ack do not (§3 table).
    let one = |c: &GpuConfig, access: Access| -> Done {
        let mut m = MemSystem::new(c);
        m.send(1000, &req(0, 42, access))
    };
    assert_eq!(
        one(&far(true), Access::Write),
        one(&far(false), Access::Write)
    );
    // A read: the channel serves at its share of the read bandwidth.
    let c = far(true);
    let lb = c.l1.line as f64;
    let read = one(&c, Access::Read).at - 1000;
    let share = lb / (c.bytes_per_cycle(c.pm.read_bandwidth) / c.pm.channels as f64);
    let whole = lb / c.bytes_per_cycle(c.pm.read_bandwidth);
    let base = (one(&far(false), Access::Read).at - 1000) as f64;
    assert!(
        (read as f64 - (base - whole + share)).abs() <= 1.0,
        "read {read}, aggregate {base}"
    );

    // Writes spread over all channels: still the PCIe rate (the channels'
    // total write bandwidth is above it).
    let n = 2000usize;
    let pcie = c.bytes_per_cycle(c.pcie.bandwidth);
    let mut m = MemSystem::new(&c);
    let per: Vec<Vec<u64>> = (0..c.pm.channels)
        .map(|ch| lines_of(&m, ch, n / c.pm.channels as usize + 1, 0))
        .collect();
    let lines: Vec<u64> = (0..n).map(|i| per[i % per.len()][i / per.len()]).collect();
    let dur: Vec<u64> = lines
        .iter()
        .enumerate()
        .map(|(i, &l)| {
            m.send(0, &req(i as u32 % c.core.sms, l, Access::Write))
                .durable
        })
        .collect();
    let rate = |t: &[u64]| (t.len() - 1) as f64 * lb / (t[t.len() - 1] - t[0]) as f64;
    let r = rate(&dur);
    eprintln!("reorder far, all channels: {r:.3} B/cycle, PCIe {pcie:.3}");
    assert!((r / pcie - 1.0).abs() <= 0.02);
    assert_eq!(m.stats().wpq_stalls, 0);

    // Writes to one channel: once its queue is full, acceptance is paced by
    // the channel's share of the write bandwidth.
    let ch = c.bytes_per_cycle(c.pm.write_bandwidth) / c.pm.channels as f64;
    let mut m = MemSystem::new(&c);
    let lines = lines_of(&m, 4, n, 0);
    let dur: Vec<u64> = lines
        .iter()
        .enumerate()
        .map(|(i, &l)| {
            m.send(0, &req(i as u32 % c.core.sms, l, Access::Write))
                .durable
        })
        .collect();
    let q = c.pm.queue as usize;
    let r = rate(&dur[q..]);
    eprintln!("reorder far, one channel: {r:.3} B/cycle, channel {ch:.3}");
    assert!((r / ch - 1.0).abs() <= 0.02);
    assert!(m.stats().wpq_stalls > 0);
    assert!(m.waits().wpq_max > 0);
}

// ---------------------------------------------------------------- whole programs

/// Each of 8 warps of 60 CTAs stores lines alternately to PM channel 0 and
/// channel 1 (channel 0 takes three of every four), then a dFence.
fn two_channel_program(c: &GpuConfig) -> FileProgram {
    let m = MemSystem::new(c);
    let line = c.l1.line as u64;
    let base = common::PM / line;
    let (ctas, warps, per_warp) = (60u32, 8u32, 8usize);
    let n = (ctas * warps) as usize * per_warp;
    let hot = lines_of(&m, 0, n, base);
    let cold = lines_of(&m, 1, n, base);
    let mut code = Vec::new();
    for cta in 0..ctas {
        let mut ws = Vec::new();
        for w in 0..warps {
            let k = (cta * warps + w) as usize * per_warp;
            let mut p: Vec<Instr> = (0..per_warp)
                .map(|i| {
                    let l = if i % 4 == 3 { cold[k + i] } else { hot[k + i] };
                    common::st(c, Space::Pm, l * line)
                })
                .collect();
            p.push(Instr::DFence);
            ws.push(p);
        }
        code.push(CtaCode { warps: ws });
    }
    common::program(vec![(common::kernel(ctas, warps * 32, 0, 0), code)])
}

/// Flushes durable before an earlier flush of the same SM, from the
/// execution record, and the flushes.
fn record_overtakes(c: &GpuConfig, prog: &FileProgram) -> (u64, u64, u64) {
    let mut gpu = Gpu::with_model_units(c).unwrap();
    let r = gpu.run(
        prog,
        RunOpts {
            record: true,
            ..RunOpts::default()
        },
    );
    assert!(r.finished && r.failures.is_empty(), "{:?}", r.failures);
    let ex = r.execution.expect("record");
    // Flush ids are unique and, within an SM, increase in issue order.
    let mut flushes = Vec::new();
    let mut durable = std::collections::HashMap::new();
    for e in &ex.events {
        match e {
            Event::Flush { id, sm, .. } => flushes.push((*sm, *id)),
            Event::Durable { id, cycle } => {
                durable.insert(*id, *cycle);
            }
            _ => {}
        }
    }
    flushes.sort();
    let mut n = 0;
    let mut latest = (u32::MAX, 0u64);
    for &(sm, id) in &flushes {
        let dur = durable[&id];
        if sm != latest.0 {
            latest = (sm, 0);
        }
        if dur < latest.1 {
            n += 1;
        }
        latest.1 = latest.1.max(dur);
    }
    (n, flushes.len() as u64, r.cycles)
}

#[test]
fn a_program_on_reorder_far_has_flushes_durable_out_of_issue_order() {
    let base = far(false);
    let prog = two_channel_program(&base);
    let (def, flushes, cyc_def) = record_overtakes(&base, &prog);
    let (re, flushes_re, cyc_re) = record_overtakes(&far(true), &prog);
    eprintln!(
        "flushes {flushes}: overtaking default {def} ({cyc_def} cycles), reorder {re} ({cyc_re} cycles)"
    );
    assert_eq!(flushes, flushes_re);
    assert_eq!(def, 0);
    assert!(re > 0);
}

// ---------------------------------------------------------------- the default is unchanged

/// FNV-1a over the `Done`s of a stream.
fn digest(done: &[(u32, Done)]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &(sm, d) in done {
        for v in [sm as u64, d.at, d.durable] {
            for b in v.to_le_bytes() {
                h ^= b as u64;
                h = h.wrapping_mul(0x100_0000_01b3);
            }
        }
    }
    h
}

/// Results of the default configuration (the switch off), measured on the
/// model before `pm.reorder` existed (commit 06e9e25): the memory streams'
/// digests, and the cycles and flushes of a program under three presets.
#[test]
fn default_results_are_those_before_the_switch() {
    let got = [
        digest(&stream(&far(false), false)),
        digest(&stream(&far(false), true)),
        digest(&stream(&near(false), true)),
    ];
    let mut progs = Vec::new();
    for name in ["sbrp-far", "epoch-far", "sbrp-near", "sbrp-far-eadr"] {
        let c = common::cfg(name);
        let prog = two_channel_program(&c);
        let r = if common::is_sbrp(&c) {
            common::run(&c, &prog)
        } else {
            common::run_no_unit(&c, &prog)
        };
        progs.push((name, r.cycles, r.sm.pm_flushes, r.mem.wpq_stalls));
    }
    eprintln!("digests {got:#x?}");
    eprintln!("programs {progs:?}");
    assert_eq!(
        got,
        [
            0x418b_8014_ffd1_fff3,
            0x05a0_c938_5b65_328a,
            0x6e51_05f2_7494_1650
        ]
    );
    assert_eq!(
        progs,
        vec![
            ("sbrp-far", 29_753, 3840, 0),
            ("epoch-far", 30_059, 3840, 0),
            ("sbrp-near", 145_767, 3840, 3602),
            ("sbrp-far-eadr", 29_753, 3840, 0),
        ]
    );
}

// ---------------------------------------------------------------- what FSM gating buys

/// 60 CTAs of 8 warps; each warp stores `pattern.len()` lines with an
/// oFence after each, line `i` on PM channel 0 (busy) or 1 (idle) as
/// `pattern[i]` says. Returns the program and each warp's lines in program
/// order (each line is stored once).
fn fenced_program(c: &GpuConfig, pattern: &[u32]) -> (FileProgram, Vec<Vec<u64>>) {
    let m = MemSystem::new(c);
    let line = c.l1.line as u64;
    let base = common::PM / line;
    let (ctas, warps) = (60u32, 8u32);
    let n = (ctas * warps) as usize * pattern.len();
    let mut pools: Vec<std::vec::IntoIter<u64>> = (0..2)
        .map(|ch| lines_of(&m, ch, n, base).into_iter())
        .collect();
    let mut orders = Vec::new();
    let mut code = Vec::new();
    for _ in 0..ctas {
        let mut ws = Vec::new();
        for _ in 0..warps {
            let lines: Vec<u64> = pattern
                .iter()
                .map(|&ch| pools[ch as usize].next().unwrap())
                .collect();
            let mut p = Vec::new();
            for &l in &lines {
                p.push(common::st(c, Space::Pm, l * line));
                p.push(Instr::OFence);
            }
            orders.push(lines);
            ws.push(p);
        }
        code.push(CtaCode { warps: ws });
    }
    let prog = common::program(vec![(common::kernel(ctas, warps * 32, 0, 0), code)]);
    (prog, orders)
}

/// Runs `prog` with the reference unit carrying `fault`; returns the pairs
/// (store, the next store of its warp, across an oFence) whose second
/// became durable before the first, and the run's cycles.
fn fence_violations(
    c: &GpuConfig,
    prog: &FileProgram,
    orders: &[Vec<u64>],
    fault: sbrp_sim_fast::Fault,
) -> (u64, u64) {
    let p = c.pb_params();
    let mut gpu = Gpu::new(c, &mut |_| {
        Box::new(sbrp_sim_fast::PbModel::new(&p).unwrap().with_fault(fault))
    });
    let r = gpu.run(
        prog,
        RunOpts {
            record: true,
            ..RunOpts::default()
        },
    );
    assert!(r.finished && r.failures.is_empty(), "{:?}", r.failures);
    let ex = r.execution.expect("record");
    let line_bytes = c.l1.line as u64;
    let mut line_of = std::collections::HashMap::new();
    let mut durable = std::collections::HashMap::new();
    for e in &ex.events {
        match e {
            Event::Flush { id, line, .. } => {
                line_of.insert(*id, line / line_bytes);
            }
            Event::Durable { id, cycle } => {
                // The first flush of a line carries its only store.
                let l = line_of[id];
                let d = durable.entry(l).or_insert(*cycle);
                *d = (*d).min(*cycle);
            }
            _ => {}
        }
    }
    let mut bad = 0;
    for lines in orders {
        for w in lines.windows(2) {
            if durable[&w[1]] < durable[&w[0]] {
                bad += 1;
            }
        }
    }
    (bad, r.cycles)
}

#[test]
fn fsm_gating_is_needed_where_the_path_reorders() {
    use sbrp_sim_fast::Fault;
    // Three stores to the busy channel, then one to the idle one.
    let pattern = [0, 0, 0, 1, 0, 0, 0, 1];
    let (prog, orders) = fenced_program(&far(false), &pattern);
    let mut got = Vec::new();
    for reorder in [false, true] {
        for fault in [Fault::None, Fault::IgnoreFsm] {
            let (bad, cycles) = fence_violations(&far(reorder), &prog, &orders, fault);
            eprintln!("reorder {reorder}, {fault:?}: {bad} fenced pairs durable out of order, {cycles} cycles");
            got.push(bad);
        }
    }
    // In-order delivery keeps a warp's fenced stores in order even without
    // the gating; with reordering only the gating does.
    assert_eq!(got[0], 0, "default, correct unit");
    assert_eq!(got[1], 0, "default, no FSM gating: the path orders");
    assert_eq!(got[2], 0, "reorder, correct unit");
    assert!(got[3] > 0, "reorder, no FSM gating: order lost");
    // PM-near reorders across its channels already: the gating is needed.
    let (near_ok, _) = fence_violations(&near(false), &prog, &orders, Fault::None);
    let (near_bad, _) = fence_violations(&near(false), &prog, &orders, Fault::IgnoreFsm);
    eprintln!("near: correct unit {near_ok}, no FSM gating {near_bad}");
    assert_eq!(near_ok, 0);
    assert!(near_bad > 0, "near, no FSM gating: order lost");
}
