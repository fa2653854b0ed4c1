//! The SM front end driving the reference model over the v2 interfaces
//! (`docs/trace-format.md`, "Front end" and "Persistence domains";
//! `docs/microarch.md` §2): random traces finish without deadlock with the
//! fixed and the hostile domain, every last store becomes durable, per-warp
//! persist order holds (`pmo`), the unit's `error` stays 0, the stress
//! targets (full PB, evictions, waits) are reached, long legal waits are not
//! deadlocks, and a real deadlock names the flag an acquire waits for.

use sbrp_iface::{FlushPolicy, PbParams, PbUnit};
use sbrp_sim_fast::frontend::{DomainKind, DriverFault, FrontEnd, FrontEndConfig};
use sbrp_sim_fast::randgen::{generate, RandSpec};
use sbrp_sim_fast::{Fault, PbModel};
use sbrp_trace::{evaluate, Expect, Expectation, RunEnd, Trace};

fn run(p: PbParams, sms: u32, warps: u32, seed: u64, ordering_percent: u64) -> FrontEnd {
    run_in(p, sms, warps, seed, ordering_percent, DomainKind::Fixed)
}

fn run_in(
    p: PbParams,
    sms: u32,
    warps: u32,
    seed: u64,
    ordering_percent: u64,
    domain: DomainKind,
) -> FrontEnd {
    let (fe, fails) = outcome(p, sms, warps, seed, ordering_percent, domain, Fault::None);
    assert!(fails.is_empty(), "seed {seed}: {fails:?}");
    fe
}

/// Runs a random trace (with `all-durable` and `pmo` expectations) on
/// models with `fault`; returns the front end and every failure: deadlock,
/// check failures, not finished, expectations.
fn outcome(
    p: PbParams,
    sms: u32,
    warps: u32,
    seed: u64,
    ordering_percent: u64,
    domain: DomainKind,
    fault: Fault,
) -> (FrontEnd, Vec<String>) {
    let units: Vec<Box<dyn PbUnit>> = (0..sms)
        .map(|_| Box::new(PbModel::new(&p).unwrap().with_fault(fault)) as Box<dyn PbUnit>)
        .collect();
    let cfg = FrontEndConfig {
        domain,
        domain_seed: seed,
        ..FrontEndConfig::default()
    };
    let mut fe = FrontEnd::new(units, cfg.clone());
    fe.reset();
    let spec = RandSpec {
        sms,
        warps_per_sm: warps,
        ops_per_warp: 150,
        l1_lines: p.lines,
        l1_ways: cfg.l1_ways,
        line_bytes: cfg.line_bytes,
        flag_prefix: String::new(),
        ordering_percent,
    };
    let mut t = generate(&spec, seed);
    for what in [Expect::AllDurable, Expect::Pmo] {
        t.expects.push(Expectation { line: 0, what });
    }
    fe.load(&t).unwrap();
    fe.run(5_000_000, |_| true);
    let mut fails: Vec<String> = fe.summary.check_failures.clone();
    if let Some(d) = &fe.summary.deadlock {
        fails.push(format!("deadlock: {d}"));
    }
    if !fe.summary.finished {
        fails.push("not finished".into());
    }
    fails.extend(
        evaluate(&t.expects, &fe.execution())
            .iter()
            .map(|f| f.to_string()),
    );
    (fe, fails)
}

#[test]
fn random_traces_finish_and_persist_everything() {
    for policy in [FlushPolicy::Window, FlushPolicy::Eager, FlushPolicy::Lazy] {
        for seed in 0..4 {
            let p = PbParams {
                entries: 16,
                warps: 8,
                lines: 64,
                policy,
                ..PbParams::default()
            };
            let fe = run(p, 2, 8, seed, 29);
            let s = &fe.summary;
            assert!(s.persists > 500 && s.flushes > 0);
        }
    }
}

#[test]
fn random_traces_hold_their_orderings_with_the_hostile_domain() {
    let mut evict_flushes = 0;
    for policy in [FlushPolicy::Window, FlushPolicy::Eager, FlushPolicy::Lazy] {
        for seed in 0..3 {
            let p = PbParams {
                entries: 16,
                warps: 8,
                lines: 64,
                policy,
                ..PbParams::default()
            };
            let fe = run_in(p, 2, 8, seed, 29, DomainKind::Hostile);
            let s = &fe.summary;
            assert!(s.persists > 500, "{s:?}");
            evict_flushes += s.evict_flushes;
        }
    }
    assert!(evict_flushes > 0);
}

/// Runs trace `text` on one SM's model with `fault`; returns the failed
/// expectations, check failures and deadlock.
fn text_fails(text: &str, fault: Fault) -> Vec<String> {
    let t = sbrp_trace::parse(text, "skip.trace").unwrap();
    let mut cfg = FrontEndConfig::default();
    cfg.apply_trace(&t).unwrap();
    let unit = PbModel::new(&PbParams::default())
        .unwrap()
        .with_fault(fault);
    let mut fe = FrontEnd::new(vec![Box::new(unit) as Box<dyn PbUnit>], cfg);
    fe.reset();
    fe.load(&t).unwrap();
    fe.run(1_000_000, |_| true);
    let mut fails = fe.summary.check_failures.clone();
    fails.extend(fe.summary.deadlock.clone());
    fails.extend(
        evaluate(&t.expects, &fe.execution())
            .iter()
            .map(|f| f.to_string()),
    );
    fails
}

/// `Fault::SkipGated`, the design alternative to a strict head
/// (`docs/results.md` E10). W0: pA; oFence; pB. W1, later: pC. pB is gated
/// at the head until pA's ack; the spec's strict head holds pC behind it,
/// SkipGated flushes pC first. Both keep W0's order.
#[test]
fn skip_gated_flushes_past_a_gated_head() {
    let trace = |order: &str| {
        format!(
            "config pm_latency=200\n\
             0.0 st.pm 0x1000 1\n0.0 ofence\n0.0 st.pm 0x2000 2\n\
             0.1 delay 12\n0.1 st.pm 0x3000 3\n\
             expect forbid 0x2000=2 without 0x1000=1\nexpect pmo\nexpect alldurable\n\
             expect order {order}\n"
        )
    };
    let (strict, skip) = (trace("0x2000 0x3000"), trace("0x3000 0x2000"));
    assert_eq!(text_fails(&strict, Fault::None), Vec::<String>::new());
    assert_eq!(text_fails(&skip, Fault::SkipGated), Vec::<String>::new());
    // Each order is the other rule's failure: the check can fail.
    assert!(!text_fails(&skip, Fault::None).is_empty());
    assert!(!text_fails(&strict, Fault::SkipGated).is_empty());
}

/// The same alternative on random traces under the hostile domain: per-warp
/// order and durability hold. Negative control: the check catches
/// `IgnoreFsm`.
#[test]
fn skip_gated_keeps_persist_order_on_random_traces() {
    let p = PbParams {
        entries: 16,
        warps: 8,
        lines: 64,
        ..PbParams::default()
    };
    let mut caught = 0;
    for seed in 0..4 {
        let run = |f| outcome(p, 2, 8, seed, 29, DomainKind::Hostile, f).1;
        let fails = run(Fault::SkipGated);
        assert!(fails.is_empty(), "seed {seed}: {fails:?}");
        caught += !run(Fault::IgnoreFsm).is_empty() as u32;
    }
    assert!(caught > 0, "the check does not catch IgnoreFsm");
}

/// Acknowledges one flush of epoch 0 in every cycle, taken or not: a
/// domain that breaks interface requirement 8.
struct Liar;
impl sbrp_sim_fast::frontend::PersistenceDomain for Liar {
    fn flush_ready(&mut self, _: u64) -> bool {
        true
    }
    fn accept(&mut self, _: sbrp_sim_fast::frontend::Taken, _: u64) {}
    fn tick(&mut self, _: u64, t: &mut sbrp_sim_fast::frontend::Tick) {
        t.durable.clear();
        t.ack = (1, 0);
    }
    fn inv_delay(&mut self) -> u64 {
        0
    }
    fn in_flight(&self) -> usize {
        0
    }
    fn violation(&self) -> Option<&str> {
        None
    }
}

/// The model with its `error` output forced to `0b01` from the 5th cycle.
struct Erring(PbModel, u32);
impl PbUnit for Erring {
    fn params(&self) -> &PbParams {
        self.0.params()
    }
    fn step(&mut self, inp: &sbrp_iface::PbIn) -> sbrp_iface::PbOut {
        self.1 += 1;
        let mut o = self.0.step(inp);
        if self.1 > 4 {
            o.error = 1;
        }
        o
    }
    fn name(&self) -> &str {
        "erring"
    }
}

fn one_store(
    units: Vec<Box<dyn PbUnit>>,
    domain: Option<Liar>,
    cfg: FrontEndConfig,
) -> Vec<String> {
    let mut fe = match domain {
        Some(d) => FrontEnd::with_domains(units, vec![Box::new(d)], cfg),
        None => FrontEnd::new(units, cfg),
    };
    fe.reset();
    fe.load(&sbrp_trace::parse("0.0 st.pm 0x40 1\n0.0 ofence\n0.0 st.pm 0x80 2\n", "e").unwrap())
        .unwrap();
    fe.run(1000, |_| true);
    fe.summary.check_failures.clone()
}

/// The unit's `error` output is a check failure that stops the run.
#[test]
fn a_unit_error_is_a_check_failure() {
    let p = PbParams::default();
    let units: Vec<Box<dyn PbUnit>> = vec![Box::new(Erring(PbModel::new(&p).unwrap(), 0))];
    let f = one_store(units, None, FrontEndConfig::default());
    assert!(
        f.len() == 1 && f[0].contains("SM 0: unit error 0b01"),
        "{f:?}"
    );
}

/// The bench asserts the SM side of the interface contract
/// (`sbrp_iface::contract`): a domain acknowledging flushes never taken
/// (requirement 8) and a front end re-sending a warp's request before its
/// response (requirement 6) are reported at once, naming the requirement;
/// the same trace with the honest front end and domain reports nothing.
#[test]
fn a_driver_breaking_the_interface_contract_is_reported() {
    let p = PbParams::default();
    let model = || -> Vec<Box<dyn PbUnit>> { vec![Box::new(PbModel::new(&p).unwrap())] };
    assert!(one_store(model(), None, FrontEndConfig::default()).is_empty());
    let f = one_store(model(), Some(Liar), FrontEndConfig::default());
    assert!(
        f.len() == 1 && f[0].contains("SM 0: cycle 0: the driver breaks interface requirement 8"),
        "{f:?}"
    );
    let cfg = FrontEndConfig {
        driver_fault: DriverFault::EarlyRetry,
        ..FrontEndConfig::default()
    };
    let f = one_store(model(), None, cfg);
    assert!(
        f.len() == 1
            && f[0].contains("requirement 6")
            && f[0].contains("warp 0 presents Store while its Store taken 1 cycle(s) ago"),
        "{f:?}"
    );
}

#[test]
fn stress_reaches_full_buffer_evictions_and_waits() {
    let p = PbParams {
        entries: 16,
        warps: 8,
        lines: 64,
        ..PbParams::default()
    };
    // Frequent ordering: full PB, refused and waiting requests.
    let s = run(p, 1, 8, 3, 29).summary;
    assert_eq!(s.max_occupancy, 16, "{s:?}");
    assert!(s.waits > 0 && s.refused > 0, "{s:?}");
    // Rare ordering: evictions of buffered lines go through (open point 12
    // refuses them while any ordering entry lies before the line's entry).
    let s = run(p, 1, 8, 3, 1).summary;
    assert!(s.evict_flushes > 0, "{s:?}");
}

/// Runs a trace text on one-SM-per-trace-SM models with default parameters.
fn run_text(text: &str) -> FrontEnd {
    let t: Trace = sbrp_trace::parse(text, "t.trace").unwrap();
    let p = PbParams::default();
    let mut cfg = FrontEndConfig::default();
    cfg.apply_trace(&t).unwrap();
    let units: Vec<Box<dyn PbUnit>> = (0..t.sms())
        .map(|_| Box::new(PbModel::new(&p).unwrap()) as Box<dyn PbUnit>)
        .collect();
    let mut fe = FrontEnd::new(units, cfg);
    fe.reset();
    fe.load(&t).unwrap();
    fe.run(5_000_000, |_| true);
    let fails = evaluate(&t.expects, &fe.execution());
    assert!(fails.is_empty(), "{fails:?} {:?}", fe.summary);
    fe
}

#[test]
fn a_long_delay_is_not_a_deadlock() {
    let fe = run_text("0.0 st.pm 0x40 1\n0.0 delay 1000000\n0.0 st.pm 0x80 2\nexpect alldurable\n");
    assert!(fe.summary.deadlock.is_none(), "{:?}", fe.summary.deadlock);
    assert!(fe.summary.finished && fe.summary.cycles > 1_000_000);
}

#[test]
fn a_long_persistence_latency_with_an_ordering_chain_is_not_a_deadlock() {
    let fe = run_text(
        "config pm_latency=100000\n0.0 st.pm 0x40 1\n0.0 prel.dev f\n1.0 pacq.dev f\n\
         1.0 st.pm 0x1000 2\n1.0 dfence\n1.0 st.pm 0x2000 3\nexpect alldurable\n\
         expect forbid 0x1000=2 without 0x40=1\n",
    );
    assert!(fe.summary.deadlock.is_none(), "{:?}", fe.summary.deadlock);
    assert!(fe.summary.finished && fe.summary.cycles > 300_000);
}

#[test]
fn a_deadlock_names_the_flag_the_acquire_waits_for() {
    let t = sbrp_trace::parse("0.0 st.pm 0x40 1\n1.0 ofence\n1.0 pacq.dev F\n", "d").unwrap();
    let p = PbParams::default();
    let units: Vec<Box<dyn PbUnit>> = (0..2)
        .map(|_| Box::new(PbModel::new(&p).unwrap()) as Box<dyn PbUnit>)
        .collect();
    let mut fe = FrontEnd::new(units, FrontEndConfig::default());
    fe.reset();
    fe.load(&t).unwrap();
    fe.run(1_000_000, |_| true);
    let d = fe.summary.deadlock.clone().expect("deadlock");
    assert!(
        d.contains("warp 1.0 at op 1 spins on pacq.dev flag F (never released)"),
        "{d}"
    );
    assert!(!d.contains("Some(") && !d.contains("Ready"), "{d}");
    assert!(matches!(fe.execution().end, RunEnd::Deadlock { .. }));
}

#[test]
fn a_trace_with_more_warps_than_the_unit_is_refused_with_file_and_line() {
    let t = sbrp_trace::parse("0.0 ofence\n\n0.5 ofence\n0.5 dfence\n", "w.trace").unwrap();
    let p = PbParams {
        warps: 4,
        ..PbParams::default()
    };
    let e = sbrp_sim_fast::frontend::check_fits(&t, &p).unwrap_err();
    assert_eq!(
        e.to_string(),
        "w.trace:3: warp 0.5 needs 6 warps, the unit has 4"
    );
}
