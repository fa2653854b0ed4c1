//! The litmus suite (`testbench/litmus/*.trace`, `docs/trace-format.md`)
//! on the reference model through the v2 front end, with the fixed and the
//! hostile persistence domain, and the negative controls that must fail
//! (model faults, `sbrp_sim_fast::Fault`). The testbench runs the same
//! traces in lockstep with the RTL; this runs them with the model alone.

use std::path::PathBuf;

use sbrp_iface::{PbParams, PbUnit};
use sbrp_sim_fast::frontend::{DomainKind, FrontEnd, FrontEndConfig};
use sbrp_sim_fast::{Fault, PbModel};
use sbrp_trace::{evaluate, Trace};

fn litmus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testbench/litmus")
}

fn load(name: &str) -> Trace {
    let p = litmus_dir().join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    sbrp_trace::parse(&text, name).unwrap()
}

/// Runs `t` on default-parameter models; returns the failures (expectations,
/// deadlock, unfinished, check failures) and the front end.
fn run(t: &Trace, fault: Fault, domain: Option<(DomainKind, u64)>) -> (Vec<String>, FrontEnd) {
    let p = PbParams::default();
    let mut cfg = FrontEndConfig::default();
    cfg.apply_trace(t).unwrap();
    if let Some((d, seed)) = domain {
        cfg.domain = d;
        cfg.domain_seed = seed;
    }
    let units: Vec<Box<dyn PbUnit>> = (0..t.sms())
        .map(|_| Box::new(PbModel::new(&p).unwrap().with_fault(fault)) as Box<dyn PbUnit>)
        .collect();
    let mut fe = FrontEnd::new(units, cfg);
    fe.reset();
    fe.load(t).unwrap();
    fe.run(3_000_000, |_| true);
    let mut fails: Vec<String> = fe.summary.check_failures.clone();
    if let Some(d) = &fe.summary.deadlock {
        fails.push(format!("deadlock: {d}"));
    }
    let ex = fe.execution();
    fails.extend(evaluate(&t.expects, &ex).iter().map(|f| f.to_string()));
    (fails, fe)
}

fn traces() -> Vec<(String, Trace)> {
    let mut v: Vec<String> = std::fs::read_dir(litmus_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".trace"))
        .collect();
    v.sort();
    v.into_iter().map(|n| (n.clone(), load(&n))).collect()
}

#[test]
fn every_litmus_trace_passes_on_the_model() {
    let mut bad = vec![];
    for (name, t) in traces() {
        let (fails, fe) = run(&t, Fault::None, None);
        println!("{name}: {} cycles, {:?}", fe.summary.cycles, fails);
        if !fails.is_empty() {
            bad.push(format!("{name}: {fails:?}"));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// Every litmus trace also passes with the hostile domain, except the
/// bounds that assume the fixed latency (`resume ... within`, `early`,
/// `maxactr`, which name cycles): orderings and durability hold for any
/// latency and ack order.
#[test]
fn litmus_orderings_hold_with_the_hostile_domain() {
    use sbrp_trace::Expect;
    let mut bad = vec![];
    for (name, mut t) in traces() {
        t.expects.retain(|e| {
            matches!(
                e.what,
                Expect::Forbid(..) | Expect::AllDurable | Expect::Pmo | Expect::Order(..)
            )
        });
        // `order` depends on timing too when no ordering op separates the lines.
        t.expects.retain(|e| !matches!(e.what, Expect::Order(..)));
        t.expects.push(sbrp_trace::Expectation {
            line: 0,
            what: Expect::Pmo,
        });
        for seed in 0..3 {
            let (fails, _) = run(&t, Fault::None, Some((DomainKind::Hostile, seed)));
            if !fails.is_empty() {
                bad.push(format!("{name} seed {seed}: {fails:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

fn fails_under(name: &str, fault: Fault) -> Vec<String> {
    let (ok, _) = run(&load(name), Fault::None, None);
    assert!(ok.is_empty(), "{name} fails without a fault: {ok:?}");
    run(&load(name), fault, None).0
}

/// Negative control: v1's release rule starves W0 under unrelated traffic.
#[test]
fn starvation_trace_fails_under_the_v1_global_release() {
    let f = fails_under("starvation.trace", Fault::GlobalRelease);
    println!("{f:?}");
    assert!(
        f.iter()
            .any(|m| m.contains("last stall ended") && m.contains("within 1000")),
        "{f:?}"
    );
}

/// Negative control: an eviction that ignores its warps' older fences lets
/// pY become durable before pX.
#[test]
fn eviction_trace_fails_when_evictions_ignore_ordering() {
    let f = fails_under(
        "19_eviction_other_warps_fence.trace",
        Fault::EvictIgnoreOrdering,
    );
    println!("{f:?}");
    assert!(
        f.iter().any(|m| m.contains("forbidden durable state")),
        "{f:?}"
    );
    assert!(
        f.iter().any(|m| m.contains("intra-thread order across oFence")),
        "{f:?}"
    );
}
