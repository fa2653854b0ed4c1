//! Formal proofs of the persist buffer unit (silicon/formal/sbrp_pb_formal.sv,
//! `sbrp prove`): each property is proved on the real RTL by Yosys's
//! SAT-based temporal induction, and fails on its deliberately broken variant
//! (a `VerilogPatch` of the generated Verilog, `PROPERTIES`).
//!
//! Configuration: 16 entries, 4 warps, 16 lines, 8-bit ACTR.

use sbrp_iface::PbParams;
use sbrp_silicon as silicon;

fn params() -> PbParams {
    PbParams {
        entries: 16,
        warps: 4,
        lines: 16,
        ..PbParams::default()
    }
}

/// `trace`: the broken variant must fail with a counterexample trace from
/// reset (its bug shows within the 12 steps of the base case), not only by a
/// failed induction step.
fn check(name: &str, trace: bool) {
    let prop = silicon::property(name).unwrap();
    let dir = tempfile::Builder::new()
        .prefix(&format!("sbrp-prove-{name}-"))
        .tempdir()
        .unwrap();
    let runs = silicon::run_proofs(&params(), &[prop], true, dir.path()).expect("yosys runs");
    assert_eq!(runs.len(), 2);
    let (real, broken) = (&runs[0], &runs[1]);
    println!(
        "{name}: real {} in {:.1} s; broken ({}) {} in {:.1} s",
        if real.proved { "proved" } else { "NOT proved" },
        real.seconds,
        prop.broken.what,
        if broken.proved {
            "proved"
        } else {
            "not proved"
        },
        broken.seconds
    );
    assert!(
        real.proved,
        "{name} not proved on the real RTL:\n{}",
        real.summary
    );
    assert!(
        !broken.proved,
        "{name}: the broken variant ({}) was proved too",
        prop.broken.what
    );
    if trace {
        assert!(
            broken.counterexample,
            "{name}: expected a counterexample from reset:\n{}",
            broken.summary
        );
    }
}

#[test]
fn actr_never_underflows_or_overflows() {
    check("actr", false);
}

#[test]
fn pb_never_overflows() {
    check("overflow", false);
}

#[test]
fn no_flush_while_gated_by_fsm() {
    check("fsm_gate", true);
}

#[test]
fn flushes_have_no_older_ordering_entry_of_their_warps() {
    check("flush_order", true);
}

/// Bounded release of ODM/EDM warps (the slowest proof, about 100 s).
#[test]
fn stalled_warps_are_released_within_the_bound() {
    check("release", false);
}

#[test]
fn an_unknown_property_is_refused() {
    let e = silicon::property("nonsense").unwrap_err().to_string();
    assert!(e.contains("flush_order"), "{e}");
}

/// Every broken variant's patch applies to the generated Verilog exactly
/// where it should (once), so no negative control tests the unbroken RTL.
#[test]
fn every_broken_variant_applies() {
    let v = sbrp_hdl::generate_verilog(&params()).unwrap();
    for prop in &silicon::PROPERTIES {
        let b = prop.break_rtl(&v).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(b, v, "{}", prop.name);
    }
}

/// A sabotaged run (the broken variant proved as if it were the real RTL)
/// is a failed check in the report, not an error, and publishes nothing.
#[test]
fn a_failed_proof_is_a_result_not_an_error() {
    let out = tempfile::tempdir().unwrap();
    let opts = silicon::ProveOptions {
        property: Some("fsm_gate".into()),
        broken: false,
        out: Some(out.path().join("logs")),
        sabotage: true,
    };
    let r = silicon::prove(&params(), &opts).expect("yosys runs");
    assert_eq!(r.runs.len(), 1);
    assert!(!r.runs[0].proved && !r.runs[0].broken);
    assert!(!r.all_as_expected());
    assert!(silicon::format_proofs(&r).contains("UNEXPECTED"));
    assert!(silicon::format_proof_failures(&r).contains("fsm_gate (proof failed)"));
    assert!(
        !out.path().join("logs").exists(),
        "logs of a failed check published"
    );
}
