//! Cycle-by-cycle checks of the RTL through rust-hdl's simulator
//! (16 entries, 4 warps, 16 lines), against `docs/microarch.md`.
//! Outputs of a step are that cycle's (pre-edge) values.

use sbrp_iface::driver::Driver;
use sbrp_iface::{FlushPolicy, Op, PbIn, PbOut, PbParams};

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

fn unit(policy: FlushPolicy, window: u32) -> Driver {
    let mut u = Driver::new(sbrp_hdl::new_sim(&params(policy, window)).unwrap());
    assert_eq!(u.unit.name(), "rusthdl");
    let o = u.reset();
    assert!(!o.req_ready && !o.flush_valid && !o.inv_pm);
    u
}

fn req(op: Op, warp: u8, line: u32) -> PbIn {
    PbIn::req(op, warp, line)
}

fn no_flush(o: &PbOut) {
    assert!(!o.flush_valid, "{o:?}");
    assert_eq!((o.flush_line, o.flush_warps, o.flush_evict), (0, 0, false));
}

#[test]
fn store_allocates_and_same_warp_store_coalesces() {
    // Lazy: nothing flushes unless forced, so entries stay in the PB.
    let mut u = unit(FlushPolicy::Lazy, 6);
    let o = u.req(Op::Store, 0, 3);
    assert!(o.req_ready && !o.req_wait);
    assert_eq!((o.obs_head, o.obs_tail), (0, 0));
    assert!(o.idle);
    // The store allocated entry 0: tail + 1.
    let o = u.req(Op::Store, 0, 3);
    assert_eq!((o.obs_head, o.obs_tail), (0, 1));
    assert!(!o.idle);
    assert!(o.req_ready && !o.req_wait, "same warp, same line: coalesce");
    no_flush(&o);
    // No new entry.
    let o = u.req(Op::Store, 1, 3);
    assert_eq!(o.obs_tail, 1);
    assert!(o.req_ready, "another warp coalesces too");
    let o = u.req(Op::Store, 0, 4);
    assert_eq!(o.obs_tail, 1);
    assert!(o.req_ready);
    let o = u.idle();
    assert_eq!(o.obs_tail, 2, "a different line allocates");
    no_flush(&o);
    // Kernel end: drain_all forces the head out, one flush per cycle.
    let o = u.drain();
    assert!(o.flush_valid && !o.flush_evict);
    assert_eq!((o.flush_line, o.flush_warps), (3, 0b0011));
    let o = u.drain();
    assert_eq!((o.obs_head, o.obs_actr), (1, 1));
    assert!(o.flush_valid);
    assert_eq!((o.flush_line, o.flush_warps), (4, 0b0001));
    let o = u.ack();
    assert_eq!((o.obs_head, o.obs_tail, o.obs_actr), (2, 2, 2));
    assert!(!o.idle, "empty but ACTR is not zero");
    no_flush(&o);
    let o = u.ack();
    assert_eq!(o.obs_actr, 1);
    let o = u.ack();
    assert_eq!(o.obs_actr, 0);
    assert!(o.idle);
    // An ack at ACTR 0 is ignored.
    let o = u.idle();
    assert_eq!(o.obs_actr, 0);
}

#[test]
fn ofence_coalesces_across_warps_and_gates_with_fsm() {
    let mut u = unit(FlushPolicy::Lazy, 6);
    // c1: a persist of warp 0 (stays: lazy).
    assert!(u.req(Op::Store, 0, 1).req_ready);
    // c2: oFence of warp 0 allocates entry 1; lazy: drain target = entry 1.
    let o = u.req(Op::OFence, 0, 0);
    assert!(o.req_ready && !o.req_wait);
    assert_eq!(o.obs_tail, 1);
    no_flush(&o);
    // c3: the drain target forces the head persist out; the oFence of warp 1
    // coalesces into the youngest entry (an oFence that is not leaving).
    let o = u.req(Op::OFence, 1, 0);
    assert_eq!(o.obs_tail, 2);
    assert!(o.obs_drain);
    assert!(o.req_ready);
    assert!(o.flush_valid && !o.flush_evict);
    assert_eq!((o.flush_line, o.flush_warps), (1, 0b0001));
    // c4: no new entry; the oFence retires at the head: FSM |= {0, 1}.
    let o = u.idle();
    assert_eq!((o.obs_head, o.obs_tail, o.obs_actr), (1, 2, 1));
    assert_eq!(o.obs_fsm, 0);
    no_flush(&o);
    assert!(!o.inv_pm);
    // c5: the PB is empty, FSM holds both warps, the drain target has left.
    let o = u.req(Op::Store, 0, 2);
    assert_eq!((o.obs_head, o.obs_tail), (2, 2));
    assert_eq!(o.obs_fsm, 0b0011);
    assert!(!o.obs_drain);
    assert!(o.req_ready);
    // c6: warp 0's new persist is gated by FSM even when forced.
    let o = u.drain();
    assert_eq!(o.obs_tail, 3);
    no_flush(&o);
    // c7: the ack brings ACTR to 0 at the edge.
    let o = u.cycle(PbIn {
        drain_all: true,
        ack: true,
        ..PbIn::idle()
    });
    no_flush(&o);
    assert_eq!(o.obs_actr, 1);
    // c8: ACTR 0 voids FSM: the persist flushes; FSM clears.
    let o = u.drain();
    assert_eq!((o.obs_actr, o.obs_fsm), (0, 0b0011));
    assert!(o.flush_valid);
    assert_eq!((o.flush_line, o.flush_warps), (2, 0b0001));
    let o = u.idle();
    assert_eq!((o.obs_actr, o.obs_fsm, o.obs_head), (1, 0, 3));
}

#[test]
fn window_limits_flushes_until_acks() {
    let mut u = unit(FlushPolicy::Window, 2);
    let o = u.req(Op::Store, 0, 0);
    assert!(o.req_ready);
    no_flush(&o);
    // c2: head entry 0 flushes (ACTR 0 < 2); the store of line 1 allocates.
    let o = u.req(Op::Store, 0, 1);
    assert!(o.req_ready && o.flush_valid);
    assert_eq!((o.flush_line, o.flush_warps), (0, 1));
    // c3: entry 1 flushes (ACTR 1 < 2).
    let o = u.req(Op::Store, 0, 2);
    assert!(o.req_ready && o.flush_valid);
    assert_eq!(o.flush_line, 1);
    assert_eq!(o.obs_actr, 1);
    // c4, c5: ACTR 2 = window: the head waits.
    let o = u.req(Op::Store, 0, 3);
    assert!(o.req_ready);
    assert_eq!(o.obs_actr, 2);
    no_flush(&o);
    let o = u.idle();
    no_flush(&o);
    // c6: an ack; the flush decision still sees ACTR 2.
    let o = u.ack();
    assert_eq!(o.obs_actr, 2);
    no_flush(&o);
    // c7: ACTR 1: entry 2 flushes.
    let o = u.idle();
    assert_eq!(o.obs_actr, 1);
    assert!(o.flush_valid);
    assert_eq!(o.flush_line, 2);
    // c8: ACTR 2 again: wait; ack.
    let o = u.ack();
    assert_eq!(o.obs_actr, 2);
    no_flush(&o);
    // c9: entry 3 flushes.
    let o = u.idle();
    assert!(o.flush_valid);
    assert_eq!(o.flush_line, 3);
    let o = u.idle();
    assert_eq!((o.obs_head, o.obs_tail, o.obs_actr), (4, 4, 2));
    assert!(!o.idle);
}

#[test]
fn reset_clears_state_and_takes_no_request() {
    let mut u = unit(FlushPolicy::Window, 6);
    assert!(u.req(Op::Store, 0, 5).req_ready);
    // c2: the persist flushes; warp 1's dFence allocates entry 1 and stalls it.
    let o = u.req(Op::DFence, 1, 0);
    assert!(o.req_ready && o.flush_valid);
    // c3: reset with a request and an ack: no decision, obs show the state.
    let o = u.cycle(PbIn {
        rst: true,
        ack: true,
        ..req(Op::Store, 2, 6)
    });
    assert!(!o.req_ready && !o.req_wait && !o.inv_pm);
    no_flush(&o);
    assert_eq!((o.obs_head, o.obs_tail, o.obs_actr), (1, 2, 1));
    assert_eq!((o.obs_odm, o.stall), (0b0010, 0b0010));
    assert!(o.obs_drain && !o.idle);
    // c4: everything is zero.
    let o = u.req(Op::Store, 1, 6);
    assert_eq!((o.obs_head, o.obs_tail, o.obs_actr), (0, 0, 0));
    assert_eq!((o.obs_odm, o.obs_edm, o.obs_fsm, o.stall), (0, 0, 0, 0));
    assert!(!o.obs_drain && !o.obs_full && o.idle);
    // Warp 1 is no longer stalled: its store is taken.
    assert!(o.req_ready);
    let o = u.idle();
    assert_eq!(o.obs_tail, 1);
}

#[test]
fn refused_requests_have_no_effect() {
    let mut u = unit(FlushPolicy::Window, 6);
    // Warp id >= W.
    let o = u.req(Op::Store, 4, 1);
    assert!(!o.req_ready && !o.req_wait);
    let o = u.req(Op::DFence, 2, 0);
    assert_eq!(o.obs_tail, 0);
    assert!(o.req_ready);
    // Warp 2 is in ODM from the next cycle: refused.
    let o = u.req(Op::Store, 2, 1);
    assert_eq!(o.stall, 0b0100);
    assert!(!o.req_ready && !o.req_wait);
    // The dFence retired at the head in that cycle: ODM -> EDM, inv_pm.
    assert!(o.inv_pm);
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
