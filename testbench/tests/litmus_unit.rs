//! Directed scenarios of `docs/microarch.md` (v2) asserted cycle by cycle:
//! request/response timing, the same-line-after-oFence litmus (1), coalescing,
//! the per-warp eviction rule, epoch-bounded dFence waits, the flush FIFO's
//! back-pressure and busy lines, the per-warp ordering queue, sticky
//! protocol errors and reset. Every scenario runs on the reference model and
//! on the RTL through rust-hdl's own simulator; the expected cycles were
//! derived by hand from the spec's §4 rules (request taken at c, decided at
//! c+2, response at c+3; a flush enters the FIFO at the end of its decision
//! cycle and is taken the cycle after; an ack presented at a changes the
//! counters at the end of a+1).

use sbrp_iface::driver::Driver;
use sbrp_iface::{FlushPolicy, Op, PbIn, PbParams, RspKind};
use sbrp_testbench::{directed_engines, make_unit, Engine};

fn small(policy: FlushPolicy) -> PbParams {
    PbParams {
        entries: 16,
        warps: 4,
        lines: 16,
        actr_bits: 8,
        window: 6,
        policy,
    }
}

/// `rst` before cycle 0, so cycle 0 is the reset cycle and cycle 1 the
/// reset state (`req_ready` 0 in both, §7): cycle 2 next.
fn bench(which: Engine, p: PbParams) -> Driver {
    Driver::after_reset(make_unit(which, &p).unwrap())
}

/// Warp 3 stores lines 8..13 from cycle 2; they flush at 5..10 (taken 6..11)
/// and fill the window: ACTR = 6 from cycle 11, later persists stay.
fn fill_window(b: &mut Driver) {
    assert_eq!(b.now(), 2);
    for l in 8..14 {
        b.store(3, l);
    }
    assert_eq!(b.now(), 8);
}

#[test]
fn timing_of_one_store() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        let c = b.now();
        b.store(1, 3);
        b.idle_n(8);
        let r = b.responses[0];
        assert_eq!((r.cycle, r.kind, r.idx), (c + 3, RspKind::Performed, 0));
        let f = b.flushes()[0];
        assert_eq!(
            (f.cycle, f.line, f.warps, f.evict, f.epoch),
            (c + 4, 3, 2, false, 0)
        );
        assert_eq!(b.at(c + 4).obs_actr, 1);
    }
}

#[test]
fn litmus1_same_line_after_ofence() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        fill_window(&mut b);
        b.store(0, 1); // 8: pX = a, decided 10 -> entry 6
        b.store(0, 2); // 9: pY = b -> entry 7
        b.req(Op::OFence, 0, 0); // 10: -> entry 8
        b.idle(); // 11: the response for pX = a arrives (hook 6)
        b.store(0, 1); // 12: pX = c, decided 14: older than W0's oFence -> wait
        b.idle_n(3); // 13..15
        assert_eq!(b.responses[9].kind, RspKind::Wait);
        assert_eq!(b.responses[9].cycle, 15);
        // 15: forced drain of entry 6; the entry leaves, EDM clears at this edge.
        assert_eq!(b.stalled_cycles(0), vec![15]);
        b.store(0, 1); // 16: retry, decided 18: entry 6 gone -> new entry 9
        b.idle_n(3); // 17..19
        let r = b.responses[10];
        assert_eq!((r.cycle, r.kind, r.idx), (19, RspKind::Performed, 9));
        b.acks(8); // 20..27: the first seven flushes and pY (taken at 24)
        b.idle_n(6); // 28..33
        assert_eq!(b.flushed_lines(), vec![8, 9, 10, 11, 12, 13, 1, 2, 1]);
        let fl = b.flushes();
        // Acks at 20 and 21 take effect at the ends of 21 and 22: ACTR 5 at 23.
        assert_eq!(fl[7].cycle, 24, "pY flushes once the window has room");
        let dur = b.durable_cycles();
        assert_eq!(dur[7], Some(27));
        // 24: the oFence retires: FSM {W0} on epoch 0, epoch 1 opens.
        assert_eq!((b.at(25).obs_fsm, b.at(25).obs_epoch), (1, 1));
        // pX = c is gated until epoch 0 (which holds pY) drains: ack at 27,
        // counter 0 at the end of 28, released at the end of 29, flushed at 30.
        assert_eq!(b.at(30).obs_fsm, 0);
        assert_eq!(fl[8].cycle, 31);
    }
}

#[test]
fn eviction_per_warp_rule() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        fill_window(&mut b);
        b.store(3, 2); // 8: A, entry 6, held by the full window
        b.req(Op::OFence, 1, 0); // 9: B, entry 7 (W1's fence)
        b.store(0, 5); // 10: C, entry 8 (W0, no fence)
        b.idle_n(3); // 11..13
        b.req(Op::Evict, 2, 5); // 14: behind W1's fence only: proceeds
        b.req(Op::OFence, 0, 0); // 15: D, entry 9 (W0's fence)
        b.store(0, 6); // 16: E, entry 10, behind W0's own fence
        b.idle_n(3); // 17..19
        b.req(Op::Evict, 2, 6); // 20: refused, W2 waits for entry 10 to leave
        b.idle_n(7); // 21..27
        b.acks(8); // 28..35
        b.idle_n(5); // 36..40
        let ev: Vec<_> = b.responses.iter().filter(|r| r.op == Op::Evict).collect();
        assert_eq!((ev[0].cycle, ev[0].kind), (17, RspKind::Performed));
        assert_eq!((ev[1].cycle, ev[1].kind), (23, RspKind::Wait));
        let fl = b.flushes();
        assert_eq!(
            (fl[6].cycle, fl[6].line, fl[6].warps, fl[6].evict),
            (17, 5, 1, true)
        );
        assert_eq!((fl[7].cycle, fl[7].line), (24, 2)); // forced drain from 23
        assert_eq!((fl[8].cycle, fl[8].line, fl[8].evict), (39, 6, false));
        assert_eq!(b.stalled_cycles(2), (23..=38).collect::<Vec<_>>());
        assert!(b.stalled_cycles(0).is_empty());
    }
}

#[test]
fn dfence_wait_is_bounded_by_its_own_epoch() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        b.store(1, 1); // 2: entry 0, flushed 5 (epoch 0), taken 6
        b.req(Op::DFence, 1, 0); // 3: entry 1; retires 6: epoch 0 closes
        b.store(2, 2); // 4..6: W2's stores flush into epoch 1, never acknowledged
        b.store(2, 3);
        b.store(2, 4);
        b.idle_n(5); // 7..11
        b.cycle(PbIn::idle().with_ack(1, 0).with_flush_ready(true)); // 12
        b.cycle(PbIn {
            inv_done: true,
            ..PbIn::idle()
        }); // 13
        b.idle_n(4); // 14..17
        let ep: Vec<u8> = b.flushes().iter().map(|f| f.epoch).collect();
        assert_eq!(ep, vec![0, 1, 1, 1]);
        assert!(b.at(7).inv_req);
        assert!(!b.at(15).inv_req);
        // ODM from 6, then EDM on epoch 0 and the invalidation; the ack of
        // epoch 0 at 12 releases it at the end of 14 although epoch 1 is busy.
        assert_eq!(b.stalled_cycles(1), (6..=14).collect::<Vec<_>>());
        assert_eq!(b.at(15).obs_actr, 3);
    }
}

#[test]
fn protocol_errors_are_sticky() {
    for which in directed_engines() {
        let mut b = bench(
            which,
            PbParams {
                warps: 4,
                ..small(FlushPolicy::Window)
            },
        );
        b.cycle(PbIn::idle().with_ack(2, 1)); // 2: nothing outstanding in epoch 1
        b.req(Op::Store, 9, 3); // 3: warp 9 of 4
        b.idle_n(4);
        assert_eq!(b.at(3).error, 0);
        assert_eq!(b.at(4).error, 1);
        assert_eq!(b.responses[0].kind, RspKind::Replay);
        assert_eq!(b.at(6).error, 3);
        assert_eq!(b.at(6).obs_actr, 0);
        b.reset();
        assert_eq!(b.idle().error, 3, "the reset cycle shows the state (§7)");
        assert_eq!(b.idle().error, 0);
    }
}

#[test]
fn flush_fifo_back_pressure() {
    for which in directed_engines() {
        let mut b = bench(
            which,
            PbParams {
                policy: FlushPolicy::Eager,
                ..small(FlushPolicy::Eager)
            },
        );
        b.flush_ready = false;
        for l in 0..6 {
            b.store(0, l); // 2..7 -> entries 0..5, flushed 5.. while the FIFO has room
        }
        b.idle_n(6); // 8..13
        let o = b.at(13);
        assert_eq!(
            (o.flush_valid, o.flush_line, o.obs_actr, o.obs_head),
            (true, 0, 4, 4)
        );
        assert!(b.flushes().is_empty());
        b.flush_ready = true;
        b.idle_n(8); // 14..21
        let fl: Vec<(usize, u32)> = b.flushes().iter().map(|f| (f.cycle, f.line)).collect();
        assert_eq!(
            fl,
            vec![(14, 0), (15, 1), (16, 2), (17, 3), (18, 4), (19, 5)]
        );
    }
}

#[test]
fn ordering_queue_holds_two_fences_per_warp() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        fill_window(&mut b);
        b.store(3, 2); // 8: entry 6 holds the head (window full)
        b.req(Op::OFence, 0, 0); // 9: entry 7, W0's first live fence
        b.store(0, 3); // 10: entry 8
        b.req(Op::OFence, 0, 0); // 11: entry 9, W0's second
        b.req(Op::OFence, 0, 0); // 12: coalesces into entry 9, which names W0
        b.store(0, 4); // 13: entry 10
        b.req(Op::OFence, 0, 0); // 14: a third live fence of W0: replay
        b.req(Op::OFence, 1, 0); // 15: W1's first: entry 11
        b.req(Op::OFence, 0, 0); // 16: would coalesce into entry 11: still a third: replay
        b.idle_n(4);
        let kinds: Vec<(usize, u8, RspKind)> = b
            .responses
            .iter()
            .skip(6)
            .map(|r| (r.cycle, r.warp, r.kind))
            .collect();
        use RspKind::*;
        assert_eq!(
            kinds,
            vec![
                (11, 3, Performed),
                (12, 0, Performed),
                (13, 0, Performed),
                (14, 0, Performed),
                (15, 0, Coalesced),
                (16, 0, Performed),
                (17, 0, Replay),
                (18, 1, Performed),
                (19, 0, Replay),
            ]
        );
        assert_eq!(b.at(20).obs_tail, 12);
    }
}

#[test]
fn coalescing_sets_bits_in_one_entry() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        fill_window(&mut b);
        b.store(0, 1); // 8: entry 6; the hook arrives at 11
        b.idle_n(3); // 9..11
        b.store(2, 1); // 12: coalesces into entry 6
        b.idle_n(3); // 13..15
        b.store(0, 1); // 16: and again (W0's bit is already set)
        b.idle_n(3); // 17..19
        b.acks(2); // 20, 21: the first makes ACTR 5 at 22: the entry flushes, taken at 23
        b.idle_n(3);
        let r: Vec<(usize, RspKind, u32)> = b
            .responses
            .iter()
            .skip(6)
            .map(|r| (r.cycle, r.kind, r.idx))
            .collect();
        use RspKind::*;
        assert_eq!(
            r,
            vec![(11, Performed, 6), (15, Coalesced, 6), (19, Coalesced, 6)]
        );
        let f = b.flushes()[6];
        assert_eq!((f.cycle, f.line, f.warps), (23, 1, 0b101));
        assert_eq!(b.flushes().len(), 7);
    }
}

#[test]
fn a_line_in_the_flush_fifo_is_busy() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Eager));
        b.flush_ready = false;
        b.store(0, 1); // 2: entry 0, flushed 5, held in the FIFO
        b.idle_n(3); // 3..5
        b.store(0, 1); // 6: decided 8: the line's data is yet to be read: replay
        b.idle_n(2); // 7, 8
        b.flush_ready = true;
        b.idle(); // 9: the flush is taken
        b.store(0, 1); // 10: entry 0 left: a new entry 1
        b.idle_n(4);
        let r: Vec<(usize, RspKind, u32)> = b
            .responses
            .iter()
            .map(|r| (r.cycle, r.kind, r.idx))
            .collect();
        use RspKind::*;
        assert_eq!(
            r,
            vec![(5, Performed, 0), (9, Replay, 0), (13, Performed, 1)]
        );
        assert_eq!(b.flushes()[0].cycle, 9);
    }
}

#[test]
fn reset_clears_every_register() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        b.store(0, 1);
        b.req(Op::DFence, 0, 0);
        b.req(Op::OFence, 1, 0);
        b.cycle(PbIn::idle().with_ack(3, 2));
        b.idle_n(3);
        let o = b.idle();
        assert!(o.obs_actr > 0 && o.stall != 0 && o.error != 0 && o.inv_req);
        b.reset();
        b.idle(); // the reset cycle (§7)
        let o = b.idle();
        assert_eq!(
            (
                o.obs_actr,
                o.stall,
                o.obs_fsm,
                o.obs_head,
                o.obs_tail,
                o.obs_full,
                o.obs_drain,
                o.idle,
                o.error,
                o.inv_req,
                o.flush_valid,
                o.req_ready,
            ),
            (0, 0, 0, 0, 0, false, false, true, 0, false, false, false),
            "{which:?}"
        );
    }
}

/// §7, the registered reset, cycle by cycle (a negative control for its
/// timing: a reset applied one cycle early or late fails it). `rst` in
/// cycle r: r is an ordinary cycle that takes no request; r+1, the reset
/// cycle, shows the state with `req_ready` 0; r+2 shows the reset state,
/// `req_ready` still 0; r+3 takes a request. Requests presented in r and
/// r+1 are never answered. Then `rst` held for three cycles.
#[test]
fn reset_acts_at_the_end_of_the_cycle_after_rst() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Lazy));
        b.store(0, 1); // 2: entry 0 (lazy: it stays)
        b.req(Op::DFence, 1, 0); // 3: warp 1 in ODM from its response at 6
        b.idle_n(3); // 4..6
        let before = b.at(6);
        assert_eq!((before.obs_tail, before.stall), (2, 0b0010), "{which:?}");
        let r = b.now(); // 7
        let o = b.cycle(PbIn {
            rst: true,
            ..PbIn::req(Op::Store, 2, 5)
        });
        assert!(o.req_ready, "{which:?}: the rst cycle shows the state");
        let o = b.store(3, 6); // r+1: the reset cycle
        assert!(!o.req_ready, "{which:?}: req_ready 0 in the reset cycle");
        assert_eq!(
            (o.obs_tail, o.stall, o.idle),
            (2, 0b0010, false),
            "{which:?}: the reset cycle still shows the state (a reset one cycle early shows zeros)"
        );
        let o = b.store(3, 7); // r+2
        assert!(!o.req_ready, "{which:?}");
        assert_eq!(
            (o.obs_tail, o.stall, o.obs_odm, o.idle, o.rsp_valid),
            (0, 0, 0, true, false),
            "{which:?}: the reset state (a reset one cycle late still shows the state)"
        );
        let o = b.store(3, 8); // r+3: taken
        assert!(o.req_ready, "{which:?}");
        b.idle_n(4);
        let after: Vec<_> = b.responses.iter().filter(|x| x.cycle > r).collect();
        assert_eq!(
            after.len(),
            1,
            "{which:?}: only the store of r+3: {after:?}"
        );
        assert_eq!((after[0].cycle, after[0].line), (r + 6, 8), "{which:?}");
        assert_eq!(b.at(r + 6).obs_tail, 1, "{which:?}: entry 0 again");
        // rst held in cycles h..h+2: reset cycles h+1..h+3, req_ready 0 in
        // h+1..h+4, 1 from h+5.
        let h = b.now();
        for _ in 0..3 {
            b.reset();
        }
        b.idle_n(3);
        let ready: Vec<bool> = (h..h + 6).map(|c| b.at(c).req_ready).collect();
        assert_eq!(ready, [true, false, false, false, false, true], "{which:?}");
        assert_eq!(b.at(h + 1).obs_tail, 1, "{which:?}");
        assert_eq!(b.at(h + 2).obs_tail, 0, "{which:?}");
    }
}

/// §4.1 (v2 timing change, §9): an eviction flush cancels only a head
/// flush. An ordering entry retiring at the head in the same cycle
/// proceeds, so no eviction delays a retirement. With the window full,
/// entries 6 = W0 stores line 1, 7 = W0's oFence, 8 = W1 stores line 5
/// wait; an ack at 14 lets the head flush 6 at 16 and retire 7 at 17. W2
/// evicts line 5 from 15 (line 5's hook arrived at 13) on; the one taken
/// at 15 is decided in the retirement's cycle (the v2 first cut delayed the
/// retirement then), the later ones while entry 8 waits for the window.
#[test]
fn a_retirement_proceeds_beside_an_eviction_flush() {
    for which in directed_engines() {
        // First cycle the head is past the oFence (it retired the cycle
        // before), and the eviction's flush cycle if there was one.
        let run = |evict_at: Option<usize>| {
            let mut b = bench(which, small(FlushPolicy::Window));
            fill_window(&mut b);
            b.store(0, 1); // 8: entry 6
            b.req(Op::OFence, 0, 0); // 9: entry 7
            b.store(1, 5); // 10: entry 8
            while b.now() < 30 {
                if b.now() == 14 {
                    b.ack();
                } else if Some(b.now()) == evict_at {
                    b.req(Op::Evict, 2, 5);
                } else {
                    b.idle();
                }
            }
            let past = (8..30).find(|&c| b.at(c).obs_head >= 8).unwrap();
            let ev = b.flushes().into_iter().find(|f| f.evict).map(|f| f.cycle);
            (past, ev)
        };
        let (base, none) = run(None);
        assert_eq!(none, None);
        let mut together = 0;
        for e in 15..24 {
            let (past, ev) = run(Some(e));
            assert_eq!(
                past, base,
                "{which:?}: eviction at {e} moved the retirement"
            );
            assert!(ev.is_some(), "{which:?}: eviction at {e} refused");
            // The flush is seen the cycle after its decision, as is the
            // head past the retired entry.
            together += usize::from(ev == Some(base));
        }
        assert_eq!(together, 1, "{which:?}: no offset put both in one cycle");
    }
}
