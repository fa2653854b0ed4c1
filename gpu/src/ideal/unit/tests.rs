//! Port-level tests of the idealised unit: answer latency, refusal and
//! replay, FSM gating, epochs against the single ACTR, the ordering queue.

use super::*;

fn unit(sw: IdealConfig) -> IdealUnit {
    let p = PbParams {
        entries: 16,
        warps: 4,
        lines: 16,
        ..PbParams::default()
    };
    let mut u = IdealUnit::new(&p, &IdealConfig { unit: true, ..sw });
    u.reset_sequence();
    u
}

/// Steps until a response comes (at most 8 cycles); the cycles taken.
fn answer(u: &mut IdealUnit, r: PbIn) -> (usize, PbOut) {
    let mut inp = r;
    for c in 0..8 {
        let o = u.step(&inp);
        if o.rsp_valid {
            return (c, o);
        }
        inp = PbIn::idle();
    }
    panic!("no response");
}

#[test]
fn answers_in_the_cycle_or_three_later_with_registered_ports() {
    let mut u = unit(IdealConfig::default());
    let (c, o) = answer(&mut u, PbIn::req(Op::Store, 1, 3));
    assert_eq!(
        (c, RspKind::from_bits(o.rsp_kind), o.rsp_warp),
        (0, RspKind::Performed, 1)
    );
    let mut u = unit(IdealConfig {
        registered: true,
        ..IdealConfig::default()
    });
    let (c, o) = answer(&mut u, PbIn::req(Op::Store, 1, 3));
    assert_eq!((c, RspKind::from_bits(o.rsp_kind)), (3, RspKind::Performed));
}

/// A store to a line whose flush waits in the FIFO is refused at the
/// port, or answered replay with replays on.
#[test]
fn a_busy_line_refuses_at_the_port_or_replays() {
    for replay in [false, true] {
        let mut u = unit(IdealConfig {
            replay,
            ..IdealConfig::default()
        });
        u.step(&PbIn::req(Op::Store, 0, 1));
        let o = u.step(&PbIn::idle());
        assert_eq!((o.flush_valid, o.flush_line), (true, 1));
        let o = u.step(&PbIn::req(Op::Store, 1, 1));
        if replay {
            assert!(o.req_ready && o.rsp_valid);
            assert_eq!(RspKind::from_bits(o.rsp_kind), RspKind::Replay);
        } else {
            assert!(!o.req_ready && !o.rsp_valid);
        }
    }
}

/// A warp that retired an oFence behind an unacknowledged flush is in
/// FSM until that flush's epoch drains; its next persist waits at the head.
fn fenced(u: &mut IdealUnit) -> PbOut {
    u.step(&PbIn::req(Op::Store, 0, 1));
    let mut o = u.step(&PbIn::req(Op::OFence, 0, 0));
    for _ in 0..4 {
        o = u.step(&PbIn::idle());
    }
    u.step(&PbIn::req(Op::Store, 0, 2));
    for _ in 0..4 {
        o = u.step(&PbIn::idle());
    }
    o
}

#[test]
fn fsm_gates_until_the_epoch_is_acknowledged() {
    let mut u = unit(IdealConfig::default());
    let o = fenced(&mut u);
    // Line 1's flush is out (not taken: flush_ready low), line 2 gated.
    assert_eq!((o.obs_actr, o.obs_fsm & 1, o.flush_line), (1, 1, 1));
    let e = o.flush_epoch;
    let o = u.step(&PbIn {
        flush_ready: true,
        ..PbIn::idle()
    });
    assert!(o.flush_valid);
    let o = u.step(&PbIn {
        ack_count: 1,
        ack_epoch: e,
        ..PbIn::idle()
    });
    // Acknowledged: FSM clear, line 2 flushes in the same cycle.
    assert_eq!((o.obs_fsm, o.flush_line, o.obs_actr), (0, 2, 1));
    // Without FSM gating line 2 would have gone at once.
    let mut bad = unit(IdealConfig::default())
        .with_fault(Fault::IgnoreFsm)
        .unwrap();
    assert_eq!(fenced(&mut bad).obs_actr, 2);
}

/// The paper's single ACTR: a later flush keeps a gated warp waiting
/// until ACTR reaches zero; epochs release it when its own drain.
#[test]
fn one_actr_waits_for_every_flush_epochs_for_the_earlier_ones() {
    for (epochs, released) in [(0, true), (4, true), (1, false)] {
        let mut u = unit(IdealConfig {
            epochs,
            ..IdealConfig::default()
        });
        let o = fenced(&mut u);
        let e0 = o.flush_epoch;
        // Warp 1's store flushes after warp 0's fence retired.
        u.step(&PbIn {
            flush_ready: true,
            ..PbIn::req(Op::Store, 1, 5)
        });
        let mut o = u.step(&PbIn::idle());
        for _ in 0..3 {
            o = u.step(&PbIn::idle());
        }
        assert_eq!(o.obs_actr, 2, "epochs {epochs}");
        let o = u.step(&PbIn {
            ack_count: 1,
            ack_epoch: e0,
            flush_ready: true,
            ..PbIn::idle()
        });
        assert_eq!(o.obs_fsm & 1 == 0, released, "epochs {epochs}");
    }
}

#[test]
fn ordering_queue_bounds_live_ordering_entries() {
    for (d, refused) in [(0, false), (2, true)] {
        let mut u = unit(IdealConfig {
            ord_queue: d,
            ..IdealConfig::default()
        });
        // Warp 0's gated persist holds the head: nothing behind retires.
        fenced(&mut u);
        u.step(&PbIn::req(Op::OFence, 2, 0));
        u.step(&PbIn::req(Op::RelBlock, 2, 0));
        let o = u.step(&PbIn::req(Op::OFence, 2, 0));
        assert_eq!(!o.req_ready, refused, "ord_queue {d}");
    }
}
