//! Formal proofs of the persist buffer unit (formal/sbrp_pb_formal.sv,
//! `sbrp prove`): each property is proved on the real RTL by Yosys's
//! SAT-based temporal induction, and fails on its deliberately broken variant
//! (a textual mutation of the generated Verilog, hw::PROPERTIES).
//!
//! Configuration: 16 entries, 4 warps, 16 lines, 8-bit ACTR.

use sbrp_iface::PbParams;
use sbrp_testbench::hw;

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
    let prop = hw::property(name).unwrap();
    let dir = tempfile::Builder::new()
        .prefix(&format!("sbrp-prove-{name}-"))
        .tempdir()
        .unwrap();
    let runs = hw::run_proofs(&params(), &[prop], true, dir.path()).expect("yosys runs");
    assert_eq!(runs.len(), 2);
    let (real, broken) = (&runs[0], &runs[1]);
    println!(
        "{name}: real {} in {:.1} s; broken ({}) {} in {:.1} s",
        if real.proved { "proved" } else { "NOT proved" },
        real.seconds,
        prop.mutation.0,
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
        prop.mutation.0
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
    let e = hw::property("nonsense").unwrap_err().to_string();
    assert!(e.contains("flush_order"), "{e}");
}
