//! Directed tests of `pm.reorder` (`docs/model-memory.md` §6.1, "Durability
//! order, and `pm.reorder`"; the switches in `docs/model-params.md`): on
//! PM-far, per-channel host NVM queues behind the host fabric (ring hops of
//! `pm.fabric_hop` and each channel's ingress) let one SM's writes become
//! durable out of issue order, with or without a full queue, while the
//! default single device never does; PM-near already reorders across its
//! channels and ignores the switches; latencies and bandwidths are what the
//! configuration says; and the default configuration's results are those
//! of the model before the switch existed.

mod common;

use sbrp_gpu::config::{Durability, GpuConfig, PmPlace};
use sbrp_gpu::mem::{Access, Done, MemReq, MemSystem};
use sbrp_gpu::{Gpu, RunOpts};
use sbrp_trace::program::{Addrs, CtaCode, FileProgram, Instr, Space, Values};
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

/// SM 0's writes at cycle 0, in this order, each of `sectors` to a fresh
/// line of the given channel; returns their `Done`s and the queue stalls.
fn sm0_writes(c: &GpuConfig, chans: &[u32], sectors: u8) -> (Vec<Done>, u64) {
    let mut m = MemSystem::new(c);
    let mut next = vec![0u64; c.pm.channels as usize];
    let done = chans
        .iter()
        .map(|&ch| {
            let line = lines_of(&m, ch, 1, next[ch as usize])[0];
            next[ch as usize] = line + 1;
            m.send(
                0,
                &MemReq {
                    sm: 0,
                    line,
                    sectors,
                    access: Access::Write,
                    pm: true,
                },
            )
        })
        .collect();
    (done, m.stats().wpq_stalls)
}

#[test]
fn reorder_far_a_loaded_channel_delays_its_writes_an_idle_one_does_not() {
    // Four lines to the root's channel, then one to the farthest channel:
    // the link delivers a line every 6.24 cycles, channel 0's ingress takes
    // 25 per line, so the last write, to an idle channel, is durable before
    // the third and fourth, and no queue is anywhere near full.
    let far_ch = far(true).pm.channels / 2;
    let order = [0, 0, 0, 0, far_ch];
    let (d, stalls) = sm0_writes(&far(true), &order, FULL);
    eprintln!("reorder far: {d:?}");
    assert_eq!(stalls, 0);
    assert!(d[4].durable < d[2].durable && d[4].durable < d[3].durable);
    assert!(d[4].at < d[3].at, "its acknowledgement returns first too");
    // The channel's writes keep their own order (FCFS ingress and queue).
    assert!(d[0].durable < d[1].durable && d[1].durable < d[2].durable);
    let (d, _) = sm0_writes(&far(false), &order, FULL);
    assert!(d.windows(2).all(|w| w[0].durable <= w[1].durable));
}

#[test]
fn reorder_far_the_ring_distance_alone_reorders_close_writes() {
    // Two single-sector writes, idle channels: the first to the stop
    // opposite the root, the second to the root's own. They cross the link
    // 32 / 20.5 = 1.6 cycles apart and spend the same 6.2 cycles in their
    // ingress; the first's 6 hops (2.7 cycles) make the second durable
    // first. Without hops (`pm.fabric_hop = 0`) they stay in order.
    let mut c = far(true);
    let order = [c.pm.channels / 2, 0];
    let (d, stalls) = sm0_writes(&c, &order, 1);
    eprintln!("hops {}: {d:?}", c.pm.fabric_hop);
    assert_eq!(stalls, 0);
    assert!(d[1].durable < d[0].durable);
    c.pm.fabric_hop = 0.0;
    let (d, _) = sm0_writes(&c, &order, 1);
    assert!(d[0].durable <= d[1].durable);
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
    // The switches change nothing near (the host fabric is PM-far's).
    let mut n = near(true);
    n.pm.fabric_hop = 5.0;
    assert_eq!(loaded_then_two(&n), (first, second));
    assert_eq!(stream(&n, true), def);
}

/// The host ring's hops from the PCIe root (channel 0's stop) to channel
/// `c`: the shorter way round `pm.channels` stops.
fn hops(c: &GpuConfig, chan: u32) -> u32 {
    chan.min(c.pm.channels - chan)
}

/// Cycles a line's write spends in a channel's ingress (its share of the
/// read bandwidth).
fn ingress(c: &GpuConfig) -> f64 {
    c.l1.line as f64 / (c.bytes_per_cycle(c.pm.read_bandwidth) / c.pm.channels as f64)
}

#[test]
fn reorder_keeps_unloaded_latencies_and_the_pcie_limit() {
    // Unloaded, a write to channel `ch` is durable the ring's hops and its
    // ingress later than on the default path, and acknowledged twice the
    // hops (there and back) and the ingress later; a read pays the hops
    // there and back and one line's service at the channel's share.
    let one = |c: &GpuConfig, line: u64, access: Access| -> Done {
        let mut m = MemSystem::new(c);
        m.send(1000, &req(0, line, access))
    };
    let c = far(true);
    let m = MemSystem::new(&c);
    let lb = c.l1.line as f64;
    let share = lb / (c.bytes_per_cycle(c.pm.read_bandwidth) / c.pm.channels as f64);
    let whole = lb / c.bytes_per_cycle(c.pm.read_bandwidth);
    let near_enough = |got: u64, base: u64, extra: f64, what: &str| {
        let d = got as f64 - (base as f64 + extra);
        assert!(
            d.abs() <= 1.0,
            "{what}: {got}, expected {base} + {extra:.2}"
        );
    };
    for ch in 0..c.pm.channels {
        let line = lines_of(&m, ch, 1, 0)[0];
        let hop = hops(&c, ch) as f64 * c.pm.fabric_hop;
        let (re, def) = (
            one(&c, line, Access::Write),
            one(&far(false), line, Access::Write),
        );
        near_enough(re.durable, def.durable, hop + ingress(&c), "durable");
        near_enough(re.at, def.at, 2.0 * hop + ingress(&c), "ack");
        let (re, def) = (
            one(&c, line, Access::Read),
            one(&far(false), line, Access::Read),
        );
        near_enough(re.at, def.at, 2.0 * hop + share - whole, "read");
    }
    // The ring: 0 hops at the root's stop, pm.channels / 2 opposite.
    assert_eq!(hops(&c, 0), 0);
    assert_eq!(hops(&c, c.pm.channels / 2), c.pm.channels / 2);
    assert_eq!(hops(&c, c.pm.channels - 1), 1);

    // Writes spread over all channels: still the PCIe rate (the channels'
    // total write bandwidth, and their ingresses, are above it).
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
    // The ingress fills the queue at twice the write rate: it is full after
    // about 2 x pm.queue writes.
    let q = c.pm.queue as usize;
    let r = rate(&dur[4 * q..]);
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

/// A store of 8 bytes (two lanes) at `addr` in PM: one sector's flush, as
/// the apps' small records (a key-value pair, a counter).
fn st_small(addr: u64) -> Instr {
    Instr::St {
        space: Space::Pm,
        size: 4,
        mask: 0b11,
        addrs: Addrs::Strided {
            base: addr,
            stride: 4,
        },
        values: Values::Seq { first: 1, step: 1 },
    }
}

/// `warps` lists of `per_warp` lines drawn at random from a 64 K-line
/// table (each line once): a hash table's inserts (gpKVS, HM), hashed over
/// all PM channels.
fn random_lines(c: &GpuConfig, warps: u32, per_warp: usize) -> Vec<Vec<u64>> {
    let base = common::PM / c.l1.line as u64;
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut seen = std::collections::HashSet::new();
    let mut draw = || loop {
        // xorshift64: deterministic, no dependency.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let l = base + (x >> 20) % (1 << 16);
        if seen.insert(l) {
            return l;
        }
    };
    (0..warps)
        .map(|_| (0..per_warp).map(|_| draw()).collect())
        .collect()
}

/// Each of 8 warps of `ctas` CTAs stores 8 bytes to each of `per_warp`
/// random lines (`random_lines`), then a dFence.
fn spread_program(c: &GpuConfig, ctas: u32, per_warp: usize) -> FileProgram {
    let line = c.l1.line as u64;
    let warps = 8u32;
    let mut lines = random_lines(c, ctas * warps, per_warp).into_iter();
    let mut code = Vec::new();
    for _ in 0..ctas {
        let mut ws = Vec::new();
        for _ in 0..warps {
            let mut p: Vec<Instr> = lines
                .next()
                .unwrap()
                .iter()
                .map(|&l| st_small(l * line))
                .collect();
            p.push(Instr::DFence);
            ws.push(p);
        }
        code.push(CtaCode { warps: ws });
    }
    common::program(vec![(common::kernel(ctas, warps * 32, 0, 0), code)])
}

/// Flushes durable before an earlier flush of the same SM, from the
/// execution record, the flushes, the cycles and the write-pending queue
/// stalls.
fn record_overtakes(c: &GpuConfig, prog: &FileProgram) -> (u64, u64, u64, u64) {
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
    (n, flushes.len() as u64, r.cycles, r.mem.wpq_stalls)
}

#[test]
fn a_program_on_reorder_far_has_flushes_durable_out_of_issue_order() {
    let base = far(false);
    let prog = two_channel_program(&base);
    let (def, flushes, cyc_def, _) = record_overtakes(&base, &prog);
    let (re, flushes_re, cyc_re, _) = record_overtakes(&far(true), &prog);
    eprintln!(
        "flushes {flushes}: overtaking default {def} ({cyc_def} cycles), reorder {re} ({cyc_re} cycles)"
    );
    assert_eq!(flushes, flushes_re);
    assert_eq!(def, 0);
    assert!(re > 0);
}

#[test]
fn a_program_spread_over_the_channels_reorders_on_far_with_no_queue_full() {
    // As the apps: small records at random lines, hashed over all
    // channels, no write-pending queue ever full. Four SMs, so the link is not saturated
    // and each SM's flushes cross it in bursts (a line every 6.2 cycles),
    // as in the apps' lighter phases. The default far path keeps each SM's
    // flushes in issue order; behind the host fabric a flush to a near or
    // idle channel overtakes one to a far or busy one. (With the link
    // saturated by 30 SMs, an SM's consecutive flushes cross it about 30
    // lines, 190 cycles, apart, more than a channel's ingress backlog, and
    // none overtakes.)
    let base = far(false);
    let prog = spread_program(&base, 4, 32);
    let (def, flushes, cyc_def, stalls_def) = record_overtakes(&base, &prog);
    let (re, flushes_re, cyc_re, stalls_re) = record_overtakes(&far(true), &prog);
    eprintln!(
        "spread, flushes {flushes}: overtaking default {def} ({cyc_def} cycles), reorder {re} ({cyc_re} cycles), queue stalls {stalls_def} / {stalls_re}"
    );
    assert_eq!(flushes, flushes_re);
    assert_eq!((stalls_def, stalls_re), (0, 0), "no queue is ever full");
    assert_eq!(def, 0);
    assert!(re * 50 > flushes, "reorder: {re} of {flushes} overtake");
    // The same with the ring's hops off: the ingress alone reorders.
    let mut c = far(true);
    c.pm.fabric_hop = 0.0;
    let (re0, _, _, stalls0) = record_overtakes(&c, &prog);
    eprintln!("spread, no hops: {re0} overtake");
    assert_eq!(stalls0, 0);
    assert!(re0 > 0);
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

/// For 8 warps of each of `ctas` CTAs, `pattern.len()` lines, line `i` on
/// PM channel `pattern[i]` (each line once).
fn pattern_lines(c: &GpuConfig, pattern: &[u32], ctas: u32) -> Vec<Vec<u64>> {
    let m = MemSystem::new(c);
    let base = common::PM / c.l1.line as u64;
    let warps = ctas * 8;
    let mut pools: Vec<std::vec::IntoIter<u64>> = (0..c.pm.channels)
        .map(|ch| {
            let used = pattern.iter().filter(|&&p| p == ch).count() * warps as usize;
            lines_of(&m, ch, used, base).into_iter()
        })
        .collect();
    (0..warps)
        .map(|_| {
            pattern
                .iter()
                .map(|&ch| pools[ch as usize].next().unwrap())
                .collect()
        })
        .collect()
}

/// `orders.len() / warps` CTAs of `warps` warps; each warp runs its
/// groups of lines in order, with an oFence after each group: a group of
/// one line is a store of the whole line, a larger group a scattered store
/// of 4 bytes to each of its lines (one lane per line), whose lines the
/// warp first loads (as a hash table's probe before its insert: the
/// stores then hit in the L1 and the flushes of a group leave together).
fn fenced_program(c: &GpuConfig, orders: &[Vec<Vec<u64>>], warps: usize) -> FileProgram {
    let line = c.l1.line as u64;
    let ctas = orders.len() / warps;
    let lanes = |g: &[u64]| (1u64 << g.len()) as u32 - 1;
    let list = |g: &[u64]| Addrs::List(g.iter().map(|l| l * line).collect());
    let mut code = Vec::new();
    for cta in 0..ctas {
        let mut ws = Vec::new();
        for groups in &orders[cta * warps..(cta + 1) * warps] {
            let mut p = Vec::new();
            for g in groups.iter().filter(|g| g.len() > 1) {
                p.push(Instr::Ld {
                    space: Space::Pm,
                    size: 4,
                    mask: lanes(g),
                    addrs: list(g),
                });
            }
            for g in groups {
                p.push(if g.len() == 1 {
                    common::st(c, Space::Pm, g[0] * line)
                } else {
                    Instr::St {
                        space: Space::Pm,
                        size: 4,
                        mask: lanes(g),
                        addrs: list(g),
                        values: Values::Seq { first: 1, step: 1 },
                    }
                });
                p.push(Instr::OFence);
            }
            ws.push(p);
        }
        code.push(CtaCode { warps: ws });
    }
    common::program(vec![(
        common::kernel(ctas as u32, warps as u32 * 32, 0, 0),
        code,
    )])
}

/// Runs `prog` with the reference unit carrying `fault`; returns the pairs
/// (a line of a group, a line of the next group of its warp: across an
/// oFence) whose second became durable before the first, the run's cycles
/// and its write-pending queue stalls.
fn fence_violations(
    c: &GpuConfig,
    prog: &FileProgram,
    orders: &[Vec<Vec<u64>>],
    fault: sbrp_sim_fast::Fault,
) -> (u64, u64, u64) {
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
    for groups in orders {
        for w in groups.windows(2) {
            for a in &w[0] {
                bad += w[1].iter().filter(|b| durable[b] < durable[a]).count() as u64;
            }
        }
    }
    (bad, r.cycles, r.mem.wpq_stalls)
}

#[test]
fn fsm_gating_is_needed_where_the_path_reorders() {
    use sbrp_sim_fast::Fault;
    // Busy: 60 CTAs of 8 warps, whole lines, three stores to channel 0,
    // then one to channel 1 (channel 0's queue fills). Spread: 30 CTAs of
    // one warp, 16 scattered stores of 4 bytes to 8 random lines each (all
    // channels, no queue fills), as the apps' records.
    let c = far(false);
    let one = |l: Vec<u64>| l.into_iter().map(|x| vec![x]).collect::<Vec<_>>();
    let busy: Vec<Vec<Vec<u64>>> = pattern_lines(&c, &[0, 0, 0, 1, 0, 0, 0, 1], 60)
        .into_iter()
        .map(one)
        .collect();
    let spread: Vec<Vec<Vec<u64>>> = random_lines(&c, 30, 16 * 8)
        .into_iter()
        .map(|l| l.chunks(8).map(|g| g.to_vec()).collect())
        .collect();
    for (name, orders, warps) in [("busy", busy, 8), ("spread", spread, 1)] {
        let prog = fenced_program(&c, &orders, warps);
        let mut got = Vec::new();
        for reorder in [false, true] {
            for fault in [Fault::None, Fault::IgnoreFsm] {
                let (bad, cycles, stalls) = fence_violations(&far(reorder), &prog, &orders, fault);
                eprintln!("{name}: reorder {reorder}, {fault:?}: {bad} fenced pairs durable out of order, {cycles} cycles, {stalls} queue stalls");
                got.push(bad);
                if name == "spread" {
                    assert_eq!(stalls, 0, "spread: no queue is ever full");
                }
            }
        }
        // In-order delivery keeps a warp's fenced stores in order even
        // without the gating; with reordering only the gating does.
        assert_eq!(got[0], 0, "{name}: default, correct unit");
        assert_eq!(got[1], 0, "{name}: default, no FSM gating: the path orders");
        assert_eq!(got[2], 0, "{name}: reorder, correct unit");
        assert!(got[3] > 0, "{name}: reorder, no FSM gating: order lost");
        // PM-near reorders across its channels already: the gating is
        // needed.
        let (near_ok, _, _) = fence_violations(&near(false), &prog, &orders, Fault::None);
        let (near_bad, _, _) = fence_violations(&near(false), &prog, &orders, Fault::IgnoreFsm);
        eprintln!("{name}: near: correct unit {near_ok}, no FSM gating {near_bad}");
        assert_eq!(near_ok, 0);
        assert!(near_bad > 0, "{name}: near, no FSM gating: order lost");
    }
}
