//! Directed tests of the memory system (`docs/model-memory.md` §9, "Tests"):
//! unloaded latencies and saturation bandwidths derived from the
//! configuration, L2 slice hashing, persistence points and write-pending
//! queue back-pressure, write-through versus write-back, the artifact's
//! write-allocate read, and refusal of out-of-order requests.

use sbrp_gpu::config::{Durability, GpuConfig, PmPlace};
use sbrp_gpu::mem::{Access, Done, MemReq, MemSystem};

const FULL: u8 = 0b1111;

fn req(sm: u32, line: u64, access: Access, pm: bool) -> MemReq {
    MemReq {
        sm,
        line,
        sectors: FULL,
        access,
        pm,
    }
}

fn near() -> GpuConfig {
    GpuConfig::default()
}

fn far() -> GpuConfig {
    let mut c = GpuConfig::default();
    c.pm.place = PmPlace::Far;
    c
}

/// Bytes per cycle of `gbs` GB/s.
fn bpc(c: &GpuConfig, gbs: f64) -> f64 {
    c.bytes_per_cycle(gbs)
}

fn line_bytes(c: &GpuConfig) -> f64 {
    c.l1.line as f64
}

/// Asserts `got` is within one cycle of `want` (fixed-point rounding and the
/// round-up to whole cycles).
fn near_cycle(got: u64, want: f64, what: &str) {
    assert!(
        (got as f64 - want).abs() <= 1.0,
        "{what}: got {got}, want {want:.2}"
    );
}

/// The first `n` lines (from `from` on) whose slice maps to memory channel `chan`.
fn lines_of_channel(m: &MemSystem, chan: u32, n: usize, from: u64) -> Vec<u64> {
    let c = m.config();
    let per = c.l2.slices / c.dram.channels;
    (from..)
        .filter(|&l| m.slice_of(l) / per == chan)
        .take(n)
        .collect()
}

/// `n` lines per channel, interleaved over channels.
fn lines_all_channels(m: &MemSystem, n: usize) -> Vec<u64> {
    let chans = m.config().dram.channels;
    let per: Vec<Vec<u64>> = (0..chans).map(|ch| lines_of_channel(m, ch, n, 0)).collect();
    (0..n).flat_map(|i| per.iter().map(move |v| v[i])).collect()
}

// ---------------------------------------------------------------- latencies

#[test]
fn unloaded_gddr_read_miss_and_l2_hit() {
    let c = near();
    let mut m = MemSystem::new(&c);
    let lb = line_bytes(&c);
    let icnt = c.icnt.latency as f64;
    let port = lb / c.icnt.port_bytes as f64;
    let gddr_ch = bpc(&c, c.dram.bandwidth) / c.dram.channels as f64;
    // Request (control packet) over the icnt, ROP, GDDR service + latency,
    // data back over the SM's port.
    let miss = icnt + c.l2.latency as f64 + lb / gddr_ch + c.dram.latency as f64 + port + icnt;
    let d = m.send(1000, &req(0, 77, Access::Read, false));
    near_cycle(d.at, 1000.0 + miss, "GDDR read miss");
    assert_eq!(d.durable, d.at);
    let hit = icnt + c.l2.latency as f64 + port + icnt;
    let d = m.send(5000, &req(0, 77, Access::Read, false));
    near_cycle(d.at, 5000.0 + hit, "L2 hit");
    assert_eq!(m.stats().l2_hits, 1);
    assert_eq!(m.stats().l2_misses, 1);
    assert_eq!(m.stats().gddr_read_bytes, c.l1.line as u64);
}

#[test]
fn unloaded_pm_near_read_miss() {
    let c = near();
    let mut m = MemSystem::new(&c);
    let lb = line_bytes(&c);
    let pm_ch = bpc(&c, c.pm.read_bandwidth) / c.pm.channels as f64;
    let want = c.icnt.latency as f64
        + c.l2.latency as f64
        + lb / pm_ch
        + c.pm.latency as f64
        + lb / c.icnt.port_bytes as f64
        + c.icnt.latency as f64;
    let d = m.send(10, &req(3, 12345, Access::Read, true));
    near_cycle(d.at, 10.0 + want, "PM-near read miss");
    assert_eq!(m.stats().pm_read_bytes, c.l1.line as u64);
}

#[test]
fn unloaded_pm_far_read_miss() {
    let c = far();
    let mut m = MemSystem::new(&c);
    let lb = line_bytes(&c);
    let nvm = bpc(&c, c.pm.read_bandwidth);
    let pcie = bpc(&c, c.pcie.bandwidth);
    let want = c.icnt.latency as f64
        + c.l2.latency as f64
        + c.pcie.latency as f64 // request to the host
        + lb / nvm
        + c.pm.latency as f64
        + lb / pcie
        + c.pcie.latency as f64 // data back
        + lb / c.icnt.port_bytes as f64
        + c.icnt.latency as f64;
    let d = m.send(0, &req(0, 999, Access::Read, true));
    near_cycle(d.at, want, "PM-far read miss");
    assert_eq!(m.stats().pcie_to_gpu_bytes, c.l1.line as u64);
    assert_eq!(m.stats().pcie_to_host_bytes, 0);
}

#[test]
fn hit_under_miss_waits_for_the_fill_and_early_hit_is_not_queued_behind() {
    let c = near();
    let mut m = MemSystem::new(&c);
    m.send(0, &req(0, 1, Access::Read, false));
    let warm = 10_000;
    let miss = m.send(warm, &req(0, 2, Access::Read, false));
    // Same line again one cycle later: an L2 hit on a line still in flight
    // gets its data with the fill (MSHR merge), not earlier.
    let merged = m.send(warm + 1, &req(1, 2, Access::Read, false));
    assert!(merged.at + 1 >= miss.at, "{merged:?} vs {miss:?}");
    // A hit on a resident line from the same SM returns long before the
    // earlier miss's data, although its response is booked after it.
    let hit = m.send(warm + 2, &req(0, 1, Access::Read, false));
    assert!(hit.at + 100 < miss.at, "{hit:?} vs {miss:?}");
}

#[test]
fn responses_far_ahead_do_not_delay_early_ones_on_the_sm_port() {
    // 200 PM-far reads from SM 0 queue on PCIe, so their data reaches the
    // SM's port at 200 different times over ~1300 cycles; L2 hits from the
    // same SM sent meanwhile still return in the unloaded hit time.
    let c = far();
    let mut m = MemSystem::new(&c);
    for k in 0..32 {
        m.send(0, &req(1, 1_000_000 + k, Access::Read, false));
    }
    let t = 5_000;
    for k in 0..200 {
        m.send(t, &req(0, k, Access::Read, true));
    }
    let hit = c.icnt.latency as f64
        + c.l2.latency as f64
        + line_bytes(&c) / c.icnt.port_bytes as f64
        + c.icnt.latency as f64;
    for k in 0..32 {
        let now = t + 1 + 10 * k;
        let d = m.send(now, &req(0, 1_000_000 + k, Access::Read, false));
        near_cycle(d.at, now as f64 + hit, "hit behind queued PM-far reads");
    }
    assert_eq!(m.waits().icnt_down_beyond, 0);
}

// ---------------------------------------------------------------- bandwidth

/// Achieved bytes per cycle of `n` requests of `bytes` each, between the
/// first and last completion.
fn rate(times: &[u64], bytes: f64) -> f64 {
    let first = *times.iter().min().unwrap();
    let last = *times.iter().max().unwrap();
    (times.len() - 1) as f64 * bytes / (last - first) as f64
}

fn within(got: f64, want: f64, tol: f64, what: &str) {
    eprintln!("{what}: achieved {got:.3} B/cycle, configured {want:.3}");
    assert!(
        (got / want - 1.0).abs() <= tol,
        "{what}: achieved {got:.3} B/cycle, configured {want:.3} B/cycle"
    );
}

const TOL: f64 = 0.02;
const N: usize = 2000;

fn burst(m: &mut MemSystem, lines: &[u64], access: Access, pm: bool) -> Vec<Done> {
    let sms = m.config().core.sms;
    lines
        .iter()
        .enumerate()
        .map(|(i, &l)| m.send(0, &req(i as u32 % sms, l, access, pm)))
        .collect()
}

#[test]
fn gddr_read_bandwidth_one_and_all_channels() {
    let c = near();
    let ch_bpc = bpc(&c, c.dram.bandwidth) / c.dram.channels as f64;
    let mut m = MemSystem::new(&c);
    let lines = lines_of_channel(&m, 0, N, 0);
    let d = burst(&mut m, &lines, Access::Read, false);
    let at: Vec<u64> = d.iter().map(|d| d.at).collect();
    within(rate(&at, line_bytes(&c)), ch_bpc, TOL, "GDDR one channel");

    let mut m = MemSystem::new(&c);
    let lines = lines_all_channels(&m, N / 4);
    let d = burst(&mut m, &lines, Access::Read, false);
    let at: Vec<u64> = d.iter().map(|d| d.at).collect();
    within(
        rate(&at, line_bytes(&c)),
        bpc(&c, c.dram.bandwidth),
        TOL,
        "GDDR all channels",
    );
}

#[test]
fn gddr_write_back_bandwidth_through_kernel_end_flush() {
    // Dirty volatile lines flushed at kernel end occupy the GDDR channels:
    // a read sent right after the flush of one channel's lines waits for them.
    let c = near();
    let mut m = MemSystem::new(&c);
    let lines = lines_of_channel(&m, 0, 512, 0);
    burst(&mut m, &lines, Access::Write, false);
    m.kernel_end(100);
    let flushed = 512 * c.l1.line as u64;
    assert_eq!(m.stats().l2_flush_bytes, flushed);
    assert_eq!(m.stats().gddr_write_bytes, flushed);
    let probe = lines_of_channel(&m, 0, 1, 1 << 30)[0];
    let d = m.send(100, &req(0, probe, Access::Read, false));
    let ch_bpc = bpc(&c, c.dram.bandwidth) / c.dram.channels as f64;
    let drain = flushed as f64 / ch_bpc;
    assert!(
        d.at as f64 >= 100.0 + drain,
        "read at {} should wait for the {drain:.0}-cycle flush",
        d.at
    );
}

#[test]
fn pm_near_read_bandwidth() {
    let c = near();
    let ch = bpc(&c, c.pm.read_bandwidth) / c.pm.channels as f64;
    let mut m = MemSystem::new(&c);
    let lines = lines_of_channel(&m, 5, N, 0);
    let d = burst(&mut m, &lines, Access::Read, true);
    let at: Vec<u64> = d.iter().map(|d| d.at).collect();
    within(
        rate(&at, line_bytes(&c)),
        ch,
        TOL,
        "PM-near read one channel",
    );

    let mut m = MemSystem::new(&c);
    let lines = lines_all_channels(&m, N / 4);
    let d = burst(&mut m, &lines, Access::Read, true);
    let at: Vec<u64> = d.iter().map(|d| d.at).collect();
    within(
        rate(&at, line_bytes(&c)),
        bpc(&c, c.pm.read_bandwidth),
        TOL,
        "PM-near read all channels",
    );
}

#[test]
fn pm_near_write_bandwidth() {
    // Once the write-pending queue is full, acceptance (durability) is paced
    // by the channel's write bandwidth.
    let c = near();
    let q = c.pm.queue as usize;
    let ch = bpc(&c, c.pm.write_bandwidth) / c.pm.channels as f64;
    let mut m = MemSystem::new(&c);
    let lines = lines_of_channel(&m, 0, N, 0);
    let d = burst(&mut m, &lines, Access::Write, true);
    let dur: Vec<u64> = d[q..].iter().map(|d| d.durable).collect();
    within(
        rate(&dur, line_bytes(&c)),
        ch,
        TOL,
        "PM-near write one channel",
    );
    assert_eq!(m.stats().pm_write_bytes, N as u64 * c.l1.line as u64);

    let mut m = MemSystem::new(&c);
    let per = N / 4;
    let lines = lines_all_channels(&m, per);
    let d = burst(&mut m, &lines, Access::Write, true);
    // Skip the first queue-full of every channel.
    let skip = q * c.pm.channels as usize;
    let dur: Vec<u64> = d[skip..].iter().map(|d| d.durable).collect();
    within(
        rate(&dur, line_bytes(&c)),
        bpc(&c, c.pm.write_bandwidth),
        TOL,
        "PM-near write all channels",
    );
}

#[test]
fn pm_far_bandwidth_is_pcie_limited() {
    let c = far();
    let pcie = bpc(&c, c.pcie.bandwidth);
    assert!(pcie < bpc(&c, c.pm.read_bandwidth) && pcie < bpc(&c, c.pm.write_bandwidth));
    let mut m = MemSystem::new(&c);
    let lines: Vec<u64> = (0..N as u64).collect();
    let d = burst(&mut m, &lines, Access::Read, true);
    let at: Vec<u64> = d.iter().map(|d| d.at).collect();
    within(rate(&at, line_bytes(&c)), pcie, TOL, "PM-far read");

    let mut m = MemSystem::new(&c);
    let d = burst(&mut m, &lines, Access::Write, true);
    let dur: Vec<u64> = d.iter().map(|d| d.durable).collect();
    within(rate(&dur, line_bytes(&c)), pcie, TOL, "PM-far write");
    assert_eq!(m.stats().pcie_to_host_bytes, N as u64 * c.l1.line as u64);

    // The artifact's split link: one channel gets bandwidth / channels.
    let mut c = far();
    c.artifact.pcie_per_channel = true;
    let mut m = MemSystem::new(&c);
    let lines = lines_of_channel(&m, 3, N / 4, 0);
    let d = burst(&mut m, &lines, Access::Read, true);
    let at: Vec<u64> = d.iter().map(|d| d.at).collect();
    within(
        rate(&at, line_bytes(&c)),
        pcie / c.pm.channels as f64,
        TOL,
        "PM-far read, per-channel PCIe",
    );
}

// ---------------------------------------------------------------- L2 mapping

fn slice_spread(c: &GpuConfig, stride: u64, n: u64) -> (u64, u64) {
    let m = MemSystem::new(c);
    let mut count = vec![0u64; c.l2.slices as usize];
    for i in 0..n {
        count[m.slice_of(i * stride) as usize] += 1;
    }
    (*count.iter().max().unwrap(), *count.iter().min().unwrap())
}

#[test]
fn l2_hash_spreads_strided_streams() {
    let mut c = near();
    let n = 24_000;
    for stride in [1, 2, 24, 32, 64, 1024] {
        let (max, min) = slice_spread(&c, stride, n);
        eprintln!("hashed, stride {stride}: max {max} min {min}");
        assert!(
            min > 0 && max as f64 / min as f64 <= 1.25,
            "hashed, stride {stride}: max {max} min {min}"
        );
    }
    // Without hashing, a stride of `slices` lines hits one slice only.
    c.l2.hash = false;
    let (max, min) = slice_spread(&c, c.l2.slices as u64, n);
    assert_eq!((max, min), (n, 0));
    let (max, min) = slice_spread(&c, 1, n);
    assert_eq!(max, min);
}

// ---------------------------------------------------------------- persistence

#[test]
fn persistence_points_adr_eadr_ack_at_l2() {
    let lb = 128.0;
    let write = |c: &GpuConfig| -> Done {
        let mut m = MemSystem::new(c);
        m.send(0, &req(0, 42, Access::Write, true))
    };
    let base = far();
    let icnt = base.icnt.latency as f64;
    let leave_l2 = icnt + lb / base.icnt.port_bytes as f64 + base.l2.latency as f64;
    let crossed = leave_l2 + lb / bpc(&base, base.pcie.bandwidth) + base.pcie.latency as f64;

    // Artifact: durable on leaving the L2, acked over the icnt only.
    let mut c = far();
    c.artifact.ack_at_l2 = true;
    let a = write(&c);
    near_cycle(a.durable, leave_l2, "ack_at_l2 durable");
    near_cycle(a.at, leave_l2 + icnt, "ack_at_l2 ack");

    // eADR: durable once across PCIe; the ack crosses back.
    let mut c = far();
    c.pm.durability = Durability::Eadr;
    let e = write(&c);
    near_cycle(e.durable, crossed, "eADR durable");
    near_cycle(
        e.at,
        crossed + c.pcie.latency as f64 + icnt,
        "eADR ack (PCIe and icnt back)",
    );

    // ADR far, unloaded: accepted by the host NVM queue on arrival, so the
    // same as eADR; pm.latency is on neither path.
    let f = write(&far());
    assert_eq!(f, e);

    // ADR near: durable on entering the channel's write-pending queue.
    let n = write(&near());
    near_cycle(n.durable, leave_l2, "ADR near durable");
    near_cycle(n.at, leave_l2 + icnt, "ADR near ack");

    assert!(a.durable < e.durable && a.at < e.at);

    // Loaded: with an NVM slower than PCIe and a small host queue, ADR waits
    // for queue slots while eADR does not.
    let burst_of = |c: &GpuConfig| -> Vec<Done> {
        let mut m = MemSystem::new(c);
        (0..64u64)
            .map(|i| m.send(0, &req(i as u32 % 30, i, Access::Write, true)))
            .collect()
    };
    let mut slow = far();
    slow.pm.write_bandwidth = 7.0;
    slow.pm.queue = 1; // 12 slots at the host
    let adr = burst_of(&slow);
    slow.pm.durability = Durability::Eadr;
    let eadr = burst_of(&slow);
    assert_eq!(adr[..12], eadr[..12]);
    let last = 63;
    assert!(
        adr[last].durable > eadr[last].durable + 500,
        "ADR {:?} eADR {:?}",
        adr[last],
        eadr[last]
    );
    // eADR still puts the writes on the NVM (background).
}

#[test]
fn write_pending_queue_back_pressure() {
    let mut c = near();
    let q = 4usize;
    c.pm.queue = q as u32;
    let mut m = MemSystem::new(&c);
    let lines = lines_of_channel(&m, 2, q + 1, 0);
    // One write per SM, all at cycle 0: equal arrival times at the channel.
    let d: Vec<Done> = lines
        .iter()
        .enumerate()
        .map(|(i, &l)| m.send(0, &req(i as u32, l, Access::Write, true)))
        .collect();
    for w in &d[1..q] {
        assert_eq!(w.durable, d[0].durable);
    }
    let service = line_bytes(&c) / (bpc(&c, c.pm.write_bandwidth) / c.pm.channels as f64);
    // The (Q+1)-th waits for the first write's service to free a slot.
    near_cycle(
        d[q].durable,
        d[0].durable as f64 + service,
        "write Q+1 durable",
    );
    assert!(d[q].at > d[q - 1].at);
    assert_eq!(m.stats().wpq_stalls, 1);
    assert!(m.waits().wpq_max as f64 >= service - 1.0);
}

// ---------------------------------------------------------------- write policies

#[test]
fn pm_writes_write_through_volatile_writes_stay_in_l2() {
    let c = near();
    let lb = c.l1.line as u64;
    let mut m = MemSystem::new(&c);
    for i in 0..10 {
        m.send(i, &req(0, 100 + i, Access::Write, true));
        m.send(i, &req(0, 200 + i, Access::Write, false));
    }
    let s = *m.stats();
    assert_eq!(s.pm_write_bytes, 10 * lb);
    assert_eq!(s.gddr_write_bytes, 0);
    assert_eq!(s.pm_read_bytes + s.gddr_read_bytes, 0);
    // A PM read of a written line hits in the L2.
    m.send(20, &req(1, 100, Access::Read, true));
    assert_eq!(m.stats().l2_hits, 1);
    assert_eq!(m.stats().pm_read_bytes, 0);
    m.kernel_end(30);
    assert_eq!(m.stats().gddr_write_bytes, 10 * lb);
    assert_eq!(m.stats().l2_flush_bytes, 10 * lb);
    // Invalidated: the same read now misses.
    m.send(40, &req(1, 100, Access::Read, true));
    assert_eq!(m.stats().pm_read_bytes, lb);

    // Without the flush, nothing is written back or invalidated.
    let mut c2 = near();
    c2.l2.flush_at_kernel_end = false;
    let mut m = MemSystem::new(&c2);
    m.send(0, &req(0, 5, Access::Write, false));
    m.kernel_end(10);
    assert_eq!(m.stats().gddr_write_bytes, 0);
}

#[test]
fn dirty_victims_are_written_back() {
    let mut c = near();
    c.l2.hash = false;
    let sets = c.l2.slice_size / c.l1.line / c.l2.assoc;
    let same_set = (c.l2.slices * sets) as u64;
    let mut m = MemSystem::new(&c);
    for k in 0..=c.l2.assoc as u64 {
        m.send(k, &req(0, k * same_set, Access::Write, false));
    }
    assert_eq!(m.stats().l2_writebacks, 1);
    assert_eq!(m.stats().gddr_write_bytes, c.l1.line as u64);
    // Partial lines write back their dirty sectors only.
    let mut m = MemSystem::new(&c);
    for k in 0..=c.l2.assoc as u64 {
        let mut r = req(0, k * same_set, Access::Write, false);
        r.sectors = 0b0010;
        m.send(k, &r);
    }
    assert_eq!(m.stats().gddr_write_bytes, c.l1.sector as u64);
}

#[test]
fn write_allocate_read_only_when_set() {
    for place in [PmPlace::Near, PmPlace::Far] {
        for flag in [false, true] {
            let mut c = near();
            c.pm.place = place;
            c.artifact.l2_write_allocate_read = flag;
            let mut m = MemSystem::new(&c);
            let mut r = req(0, 9, Access::Write, true);
            r.sectors = 0b0001;
            m.send(0, &r);
            // A second write to the now-valid sector does not fetch again.
            m.send(1, &r);
            let want = if flag { c.l1.sector as u64 } else { 0 };
            assert_eq!(m.stats().pm_read_bytes, want, "{place:?} flag {flag}");
            assert_eq!(m.stats().pm_write_allocate_read_bytes, want);
            assert_eq!(m.stats().pm_write_bytes, 2 * c.l1.sector as u64);
        }
    }
}

#[test]
fn atomics_execute_at_the_l2() {
    let c = near();
    let mut m = MemSystem::new(&c);
    let a = m.send(0, &req(0, 7, Access::Atomic, false));
    let r = MemSystem::new(&c).send(0, &req(0, 7, Access::Read, false));
    // A missing atomic fetches its line first: same timing as a read miss
    // apart from carrying its operands up the port.
    assert!(a.at >= r.at);
    assert_eq!(m.stats().gddr_read_bytes, c.l1.line as u64);
    m.kernel_end(a.at);
    assert_eq!(m.stats().l2_flush_bytes, c.l1.line as u64);
    // A PM atomic also writes through and reports when it is durable.
    let p = m.send(a.at, &req(0, 8, Access::Atomic, true));
    assert_eq!(m.stats().pm_write_bytes, c.l1.line as u64);
    assert!(p.durable <= p.at);
}

// ---------------------------------------------------------------- ordering

#[test]
fn out_of_order_requests_are_refused() {
    let mut m = MemSystem::new(&near());
    m.send(100, &req(0, 1, Access::Read, false));
    let before = *m.stats();
    let e = m.try_send(99, &req(0, 2, Access::Read, false)).unwrap_err();
    assert_eq!((e.now, e.last), (99, 100));
    assert_eq!(*m.stats(), before);
    assert!(m.try_send(100, &req(0, 2, Access::Read, false)).is_ok());
}

#[test]
#[should_panic(expected = "sent after")]
fn out_of_order_send_panics() {
    let mut m = MemSystem::new(&near());
    m.send(100, &req(0, 1, Access::Read, false));
    m.send(50, &req(0, 2, Access::Read, false));
}
