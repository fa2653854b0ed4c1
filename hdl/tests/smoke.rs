//! Directed cycle-by-cycle checks of the RTL through rust-hdl's simulator
//! (16 entries, 4 warps, 16 lines), against `docs/microarch.md` v2.
//!
//! The driver (`sbrp_iface::driver::Driver`) plays a mini L1: it keeps each
//! line's hook from the responses, takes every flush (`flush_ready`) and
//! acknowledges flushes in order when asked. Outputs of a step are that
//! cycle's (registered) values. Cycle numbers: `rst` is high in the cycle
//! before cycle 0 (not recorded), so cycle 0 is the reset cycle and cycle 1
//! shows the reset state, `req_ready` 0 in both (§7); the first request is
//! taken in cycle 2.
//! Timing of the spec used below (§2, §4.0): a request taken in cycle `h` is
//! decided in `h+2` and answered in `h+3`; a head action decided in cycle `d`
//! shows its flush in `d+1`; an ack presented in cycle `a` changes the
//! counters at the end of `a+1`.

use sbrp_iface::driver::Driver;
use sbrp_iface::{FlushPolicy, Op, PbIn, PbOut, PbParams, RspKind};

fn params(policy: FlushPolicy, window: u32) -> PbParams {
    PbParams {
        entries: 16,
        warps: 4,
        lines: 16,
        actr_bits: 8,
        window,
        policy,
    }
}

/// A unit after its reset cycle (cycle 0) and the cycle after it (cycle 1),
/// `req_ready` 0 in both: the next call runs cycle 2.
fn unit(policy: FlushPolicy, window: u32) -> Driver {
    let u = Driver::after_reset(sbrp_hdl::new_sim(&params(policy, window)).unwrap());
    assert_eq!(u.unit.name(), "rusthdl");
    assert!(!u.at(0).req_ready && !u.at(1).req_ready, "§7");
    let o = u.at(1);
    assert!(o.idle && !o.flush_valid && !o.inv_req && !o.rsp_valid);
    assert_eq!(u.now(), 2);
    u
}

fn no_flush(o: &PbOut) {
    assert!(!o.flush_valid, "{o:?}");
    assert_eq!(
        (o.flush_line, o.flush_warps, o.flush_evict, o.flush_epoch),
        (0, 0, false, 0)
    );
}

#[test]
fn response_three_cycles_after_the_request_and_stores_coalesce() {
    // Lazy: nothing flushes unless forced, so entries stay in the PB.
    let mut u = unit(FlushPolicy::Lazy, 6);
    let o = u.store(0, 3); // c2: taken
    assert!(o.req_ready);
    for c in 3..5 {
        let o = u.idle();
        assert!(!o.rsp_valid, "cycle {c}");
        assert_eq!(o.obs_tail, 0, "decided in cycle 4, visible in 5");
    }
    let o = u.idle(); // c5
    assert!(o.rsp_valid);
    assert_eq!(
        (o.rsp_warp, o.rsp_kind, o.rsp_idx),
        (0, RspKind::Performed as u8, 0)
    );
    assert_eq!((o.obs_head, o.obs_tail), (0, 1));
    assert!(!o.idle);
    let o = u.idle(); // c6: one cycle only
    assert!(!o.rsp_valid);
    assert_eq!((o.rsp_warp, o.rsp_kind, o.rsp_idx), (0, 0, 0));
    // Back to back: another warp on the same line (hook 0) coalesces, a new
    // line allocates entry 1.
    u.store(1, 3); // c7
    u.store(0, 4); // c8
    u.idle_n(2);
    let o = u.idle(); // c11: answer to c8
    assert_eq!(o.obs_tail, 2);
    let r = &u.responses;
    assert_eq!(r.len(), 3);
    assert_eq!(
        (r[1].cycle, r[1].kind, r[1].idx),
        (10, RspKind::Coalesced, 0)
    );
    assert_eq!(
        (r[2].cycle, r[2].kind, r[2].idx),
        (11, RspKind::Performed, 1)
    );
    no_flush(&o);
    // Kernel end: drain_all (registered) forces the head out.
    u.drain(); // c12: drainq in c13
    let o = u.drain(); // c13: head action FLUSH
    no_flush(&o);
    let o = u.idle(); // c14: the flush of entry 0
    assert!(o.flush_valid && !o.flush_evict);
    assert_eq!((o.flush_line, o.flush_warps, o.flush_epoch), (3, 0b0011, 0));
    assert_eq!((o.obs_head, o.obs_actr), (1, 1));
}

#[test]
fn flush_the_cycle_after_the_decision_and_ack_two_cycles_later() {
    let mut u = unit(FlushPolicy::Window, 6);
    u.store(2, 5); // c2, decided in c4: entry 0
    u.idle_n(2);
    let o = u.idle(); // c5: the head action flushes entry 0 (ACTR 0 < K)
    assert_eq!(o.obs_tail, 1);
    no_flush(&o);
    let o = u.idle(); // c6: flush visible, taken (flush_ready), counted in ACTR
    assert!(o.flush_valid);
    assert_eq!((o.flush_line, o.flush_warps, o.flush_epoch), (5, 0b0100, 0));
    assert_eq!((o.obs_head, o.obs_tail, o.obs_actr), (1, 1, 1));
    assert!(!o.idle, "a flush is outstanding");
    let o = u.ack(); // c7: ack presented
    no_flush(&o);
    assert_eq!(o.obs_actr, 1);
    let o = u.idle(); // c8: registered, acts at the end of c8
    assert_eq!(o.obs_actr, 1);
    let o = u.idle(); // c9
    assert_eq!((o.obs_actr, o.error), (0, 0));
    assert!(o.idle);
    // An ack with nothing outstanding in its epoch: error bit 0, sticky.
    u.cycle(PbIn::idle().with_ack(1, 0)); // c10
    let o = u.idle(); // c11
    assert_eq!((o.obs_actr, o.error), (0, 0));
    let o = u.idle(); // c12
    assert_eq!((o.obs_actr, o.error), (0, 1));
    let o = u.idle();
    assert_eq!(o.error, 1);
}

#[test]
fn window_limits_flushes_until_acks() {
    let mut u = unit(FlushPolicy::Window, 2);
    for l in 0..3 {
        u.store(0, l); // c2, c3, c4: entries 0, 1, 2 (decided c4, c5, c6)
    }
    u.idle_n(5); // c5..c9
    assert_eq!(u.flushed_lines(), vec![0, 1], "window 2: two flushes");
    assert_eq!(u.flushes()[0].cycle, 6);
    assert_eq!(u.flushes()[1].cycle, 7);
    let o = u.at(9);
    assert_eq!((o.obs_head, o.obs_tail, o.obs_actr), (2, 3, 2));
    u.ack(); // c10: ACTR 1 at the end of c11
    let o = u.idle(); // c11
    assert_eq!(o.obs_actr, 2);
    no_flush(&o);
    let o = u.idle(); // c12: head action flushes entry 2
    assert_eq!(o.obs_actr, 1);
    no_flush(&o);
    let o = u.idle(); // c13
    assert!(o.flush_valid);
    assert_eq!((o.flush_line, o.obs_actr, o.obs_head), (2, 2, 3));
}

#[test]
fn dfence_stalls_its_warp_until_the_invalidation_is_done() {
    let mut u = unit(FlushPolicy::Window, 6);
    u.req(Op::DFence, 1, 0); // c2, decided c4: entry 0, ODM
    u.idle_n(2);
    let o = u.idle(); // c5: response; the stall bit rises with it
    assert_eq!(u.responses[0].kind, RspKind::Performed);
    assert_eq!(
        (o.obs_odm, o.stall, o.obs_tail, o.obs_drain),
        (0b0010, 0b0010, 1, true)
    );
    // c5: the dFence retires at the head; no flush is outstanding (nowait):
    // no EDM, ODM clears, the warp waits for an invalidation.
    let o = u.idle(); // c6
    assert_eq!(
        (o.obs_odm, o.obs_edm, o.stall, o.obs_head),
        (0, 0, 0b0010, 1)
    );
    assert!(o.inv_req && !o.obs_drain && !o.idle);
    let o = u.cycle(PbIn {
        inv_done: true,
        ..PbIn::idle()
    }); // c7: inv_done, registered
    assert!(o.inv_req);
    let o = u.idle(); // c8: acts at the end of c8
    assert!(o.inv_req);
    assert_eq!(o.stall, 0b0010);
    let o = u.idle(); // c9
    assert!(!o.inv_req && o.idle);
    assert_eq!(o.stall, 0);
}

#[test]
fn ofence_gates_later_persists_until_its_epoch_drains() {
    let mut u = unit(FlushPolicy::Window, 6);
    u.store(0, 1); // c2: entry 0, flushed by the head in c5
    u.req(Op::OFence, 0, 0); // c3: entry 1, retires in c6 behind the flush
    u.store(0, 2); // c4: entry 2, gated by FSM
    u.idle_n(4); // c5..c8
    let o = u.at(7);
    assert_eq!((o.obs_fsm, o.obs_epoch, o.obs_actr), (0b0001, 1, 1));
    assert_eq!(u.flushed_lines(), vec![1]);
    u.idle_n(3);
    assert_eq!(u.flushed_lines(), vec![1], "line 2 waits for the ack");
    u.ack(); // c12: ectr[0] is 0 at the end of c13; epoch 0 is released in c14
    let o = u.idle(); // c13
    assert_eq!((o.obs_fsm, o.obs_actr), (1, 1));
    let o = u.idle(); // c14
    assert_eq!((o.obs_fsm, o.obs_actr), (1, 0));
    let o = u.idle(); // c15: FSM clear, the head flushes entry 2
    assert_eq!(o.obs_fsm, 0);
    no_flush(&o);
    let o = u.idle(); // c16, in epoch 1
    assert!(o.flush_valid);
    assert_eq!((o.flush_line, o.flush_epoch), (2, 1));
}

#[test]
fn reset_clears_state_and_takes_no_request() {
    let mut u = unit(FlushPolicy::Window, 6);
    u.req(Op::DFence, 1, 0); // c2
    u.idle_n(3); // c3..c5
    let o = u.at(5);
    assert_eq!(o.stall, 0b0010);
    // c6: rst with a request: not taken, the outputs show the state.
    let o = u.cycle(PbIn {
        rst: true,
        ..PbIn::req(Op::Store, 2, 6)
    });
    assert!(o.req_ready && o.inv_req);
    // c7, the reset cycle (§7): the outputs still show the state, but
    // req_ready is 0; a request is not taken. (A reset acting one cycle
    // early, at the end of c6, would show zeros here.)
    let o = u.store(2, 7);
    assert!(!o.req_ready && o.inv_req && !o.idle);
    assert_eq!(o.stall, 0b0010);
    // c8: everything is zero (a reset one cycle late would still show the
    // state); req_ready is still 0.
    let o = u.store(2, 8);
    assert!(!o.req_ready && !o.inv_req && o.idle);
    assert_eq!((o.obs_head, o.obs_tail, o.stall, o.obs_odm), (0, 0, 0, 0));
    // c9: taken again; answered in c12.
    let o = u.store(2, 9);
    assert!(o.req_ready);
    u.idle_n(5);
    let r = &u.responses;
    assert_eq!(r.len(), 2, "the dFence and the store of c9: {r:?}");
    assert_eq!(
        (r[1].cycle, r[1].line, r[1].kind),
        (12, 9, RspKind::Performed)
    );
}

#[test]
fn request_from_a_warp_beyond_w_is_replayed_with_an_error() {
    let mut u = unit(FlushPolicy::Window, 6);
    u.store(4, 1); // c2, warp 4 >= W
    u.idle_n(2);
    let o = u.idle(); // c5
    assert_eq!(
        (o.rsp_valid, o.rsp_warp, o.rsp_kind),
        (true, 4, RspKind::Replay as u8)
    );
    assert_eq!((o.error, o.obs_tail), (0b10, 0));
}

#[test]
fn out_of_range_parameters_are_refused_with_their_name() {
    let bad = |f: fn(&mut PbParams)| {
        let mut p = PbParams::default();
        f(&mut p);
        match sbrp_hdl::generate_verilog(&p).unwrap_err() {
            sbrp_hdl::HdlError::Params(e) => e.param,
            e => panic!("{e}"),
        }
    };
    assert_eq!(bad(|p| p.entries = 100), "entries");
    assert_eq!(bad(|p| p.warps = 128), "warps");
    assert_eq!(bad(|p| p.lines = 2048), "lines");
    assert_eq!(bad(|p| p.actr_bits = 5), "actr-bits");
    assert_eq!(bad(|p| p.window = 0), "window");
    let p = PbParams {
        entries: 1024,
        ..PbParams::default()
    };
    assert_eq!(sbrp_hdl::new_sim(&p).err().unwrap().param, "entries");
}
