//! Directed one-SM litmus scenarios 1-6 and 9-11 (numbered as the traces in
//! `testbench/litmus/`),
//! asserted cycle by cycle against `docs/microarch.md`. Every scenario runs on
//! the reference model and on the RTL through rust-hdl's own simulator; the
//! expected cycles below were derived by hand from the spec's §4 equations.

use sbrp_iface::driver::Driver;
use sbrp_iface::{FlushPolicy, Op, PbParams};
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

fn bench(which: Engine, p: PbParams) -> Driver {
    let mut b = Driver::new(make_unit(which, &p).unwrap());
    b.reset();
    b
}

/// Warp 3 stores lines 8..13; with window 6 and no acks they all flush and
/// the window is then full: later persists stay in the PB. Ends at cycle 8,
/// PB empty, head = tail = 6, ACTR = 6.
fn fill_window(b: &mut Driver) {
    for l in 8..14 {
        assert!(b.store(3, l).req_ready);
    }
    b.idle();
    let o = b.idle();
    assert_eq!((o.obs_actr, o.obs_head, o.obs_tail), (6, 6, 6));
    assert_eq!(b.now(), 9);
}

fn range(a: usize, b: usize) -> Vec<usize> {
    (a..=b).collect()
}

#[test]
fn litmus1_same_line_after_ofence() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        fill_window(&mut b); // cycles 0..=8
        assert!(b.store(0, 1).req_ready); // 9: pX = a -> entry 6
        assert!(b.store(0, 2).req_ready); // 10: pY = b -> entry 7
        assert!(b.req(Op::OFence, 0, 0).req_ready); // 11: oFence -> entry 8
        let o = b.store(0, 1); // 12: pX = c hits entry 6, older than W0's oFence
        assert!(!o.req_ready && o.req_wait, "{which:?}: pX=c must wait");
        let o = b.idle(); // 13: forced drain of entry 6 ignores the full window
        assert!(o.stall & 1 == 1 && o.obs_drain);
        assert_eq!((o.flush_valid, o.flush_line), (true, 1));
        b.idle(); // 14: hold: nothing flushes while W0 waits for ACTR = 0
        b.acks(7); // 15..=21: ACTR 7 -> 0
        b.idle(); // 22: EDM clears at this edge
        assert_eq!(b.stalled_cycles(0), range(13, 22), "{which:?}");
        assert!(b.flushes().iter().all(|f| f.cycle < 14 || f.cycle > 22));
        assert!(b.store(0, 1).req_ready); // 23: retry allocates a new entry 9
        let o = b.at(23);
        assert_eq!((o.flush_valid, o.flush_line), (true, 2)); // pY drains
        b.idle(); // 24: oFence retires, FSM = {W0}
        let o = b.idle(); // 25: pX = c gated by FSM while pY is unacked
        assert_eq!(o.obs_fsm, 1);
        assert!(!o.flush_valid);
        b.ack(); // 26: pY durable
        let o = b.idle(); // 27: ACTR 0: FSM void, pX = c flushes
        assert_eq!((o.flush_valid, o.flush_line, o.obs_actr), (true, 1, 0));
        assert_eq!(
            b.flushed_lines(),
            vec![8, 9, 10, 11, 12, 13, 1, 2, 1],
            "{which:?}"
        );
        // Forbidden: pX = c durable while pY = b is not.
        let dur = b.durable_cycles();
        assert!(dur[8].is_none() && dur[7] == Some(26));
    }
}

#[test]
fn litmus2_coalescing() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Lazy));
        assert!(b.store(0, 1).req_ready);
        assert!(b.store(0, 1).req_ready); // same warp, same line: coalesces
        assert!(b.store(1, 1).req_ready); // another warp: the bitmask grows
        let o = b.idle();
        assert_eq!((o.obs_head, o.obs_tail), (0, 1), "{which:?}: one entry");
        for _ in 0..3 {
            b.cycle(sbrp_iface::PbIn {
                drain_all: true,
                ..Default::default()
            });
        }
        let f = b.flushes();
        assert_eq!(f.len(), 1, "{which:?}: one flush");
        assert_eq!((f[0].line, f[0].warps, f[0].evict), (1, 0b11, false));
    }
}

#[test]
fn litmus3_ofence_coalescing() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        fill_window(&mut b);
        b.store(0, 1); // 9: entry 6 (stays: window full)
        b.req(Op::OFence, 0, 0); // 10: entry 7
        b.req(Op::OFence, 1, 0); // 11: coalesces into entry 7
        let o = b.idle();
        assert_eq!(o.count(&b.params()), 2, "{which:?}");
        b.store(2, 2); // 13: entry 8
        b.req(Op::OFence, 2, 0); // 14: entry 9
        b.store(3, 3); // 15: entry 10, between the fences
        b.req(Op::OFence, 3, 0); // 16: entry 11, no coalescing across a persist
        let o = b.idle();
        assert_eq!(o.count(&b.params()), 6, "{which:?}");
        // Drain everything and check the FSM built by the coalesced entry.
        b.acks(6);
        b.idle_n(3);
        let fsm_seen = b.hist.iter().map(|(_, o)| o.obs_fsm).fold(0, |a, f| a | f);
        assert_eq!(fsm_seen & 0b11, 0b11, "{which:?}: both warps of entry 7");
    }
}

#[test]
fn litmus4_no_false_ordering_across_warps() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        b.store(0, 1); // 1: pX (W0) -> entry 0
        b.req(Op::OFence, 1, 0); // 2: W1 oFence; pX flushes
        b.store(1, 2); // 3: W1 pY; the oFence retires, FSM = {W1}
        let o = b.store(0, 3); // 4: W0 keeps going; pY gated by FSM
        assert!(o.req_ready && !o.flush_valid && o.obs_fsm == 0b10);
        b.ack(); // 5: pX durable
        let o = b.idle(); // 6: pY flushes (one ACTR: it waited for pX's ack)
        assert_eq!((o.flush_valid, o.flush_line), (true, 2), "{which:?}");
        b.idle_n(2);
        assert!(b.stalled_cycles(0).is_empty(), "{which:?}: W0 never stalls");
        assert_eq!(b.flushed_lines(), vec![1, 2, 3]);
    }
}

#[test]
fn litmus5_fsm_isolation() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        b.store(1, 1); // 1: W1 pA
        b.req(Op::OFence, 1, 0); // 2: W1 oFence; pA flushes
        b.store(0, 2); // 3: W0 pB; oFence retires: FSM = {W1}
        let o = b.idle(); // 4: pB's warps do not meet FSM: it flushes at once
        assert_eq!(
            (o.flush_valid, o.flush_line, o.obs_fsm, o.obs_actr),
            (true, 2, 0b10, 1),
            "{which:?}"
        );
    }
}

#[test]
fn litmus6_block_release_acquire() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        b.store(0, 1); // 1: W0 pX
        b.req(Op::RelBlock, 0, 0); // 2: pRel_block; pX flushes
        b.req(Op::AcqBlock, 1, 0); // 3: W1 pAcq_block (flag seen); release retires
        b.store(1, 2); // 4: W1 pY; acquire retires: FSM = {W0, W1}
        let o = b.idle(); // 5: pY gated until pX is durable
        assert!(!o.flush_valid && o.obs_fsm == 0b11, "{which:?}");
        b.ack(); // 6
        let o = b.idle(); // 7
        assert_eq!((o.flush_valid, o.flush_line), (true, 2), "{which:?}");
        assert!(b.stalled_cycles(0).is_empty() && b.stalled_cycles(1).is_empty());
        let dur = b.durable_cycles();
        assert!(
            dur[1].is_none() && dur[0] == Some(6),
            "pY not durable before pX"
        );

        // Variant: after the acquire, W1 stores to a line whose entry is older
        // than the release: it must not coalesce.
        let mut b = bench(which, small(FlushPolicy::Window));
        fill_window(&mut b);
        b.store(0, 1); // 9: entry 6
        b.req(Op::RelBlock, 0, 0); // 10: entry 7
        b.req(Op::AcqBlock, 1, 0); // 11: entry 8
        let o = b.store(1, 1); // 12: entry 6 is older than W1's acquire
        assert!(!o.req_ready && o.req_wait, "{which:?}");
        assert_eq!(b.idle().stall, 0b10);
    }
}

#[test]
fn litmus9_dfence() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        b.store(0, 1); // 1: pA
        b.store(0, 2); // 2: pB; pA flushes
        assert!(b.req(Op::DFence, 0, 0).req_ready); // 3: dFence; pB flushes
        let o = b.store(1, 3); // 4: W1 runs; dFence retires: ODM -> EDM, inv_pm
        assert!(o.req_ready && o.inv_pm && o.stall == 1 && o.obs_odm == 1);
        let o = b.store(1, 4); // 5: W1 runs; hold: nothing flushes
        assert!(o.req_ready && !o.flush_valid && o.obs_edm == 1 && o.obs_odm == 0);
        b.ack(); // 6
        b.ack(); // 7: A and B durable, ACTR 0 after this edge
        b.idle(); // 8: EDM clears at this edge
        let o = b.idle(); // 9: W0 resumes; the drain goes on
        assert_eq!(o.stall, 0, "{which:?}");
        assert_eq!((o.flush_valid, o.flush_line), (true, 3));
        assert_eq!(b.stalled_cycles(0), range(4, 8), "{which:?}");
        assert!(b.stalled_cycles(1).is_empty());
        assert!(b.flushes().iter().all(|f| f.cycle < 5 || f.cycle > 8));
    }
}

#[test]
fn litmus10_eviction_behind_ordering_entry() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        fill_window(&mut b);
        b.store(0, 1); // 9: pX, entry 6
        b.req(Op::OFence, 0, 0); // 10: entry 7
        b.store(0, 2); // 11: pY, entry 8
                       // 12: evicting pX (no older ordering entry) proceeds at once.
        let o = b.req(Op::Evict, 2, 1);
        assert!(o.req_ready && o.flush_valid && o.flush_evict && o.flush_line == 1);
        // 13: evicting pY (behind the oFence): the evicting warp waits, drain starts.
        let o = b.req(Op::Evict, 1, 2);
        assert!(!o.req_ready && o.req_wait, "{which:?}");
        b.idle(); // 14: the hole left by pX pops
        b.idle(); // 15: the oFence retires: FSM = {W0}
        let o = b.idle(); // 16: pY is gated by FSM
        assert!(!o.flush_valid && o.obs_fsm == 1 && o.obs_drain);
        b.acks(7); // 17..=23: ACTR 7 -> 0
        let o = b.idle(); // 24: pY flushes (forced), the drain target leaves
        assert_eq!(
            (o.flush_valid, o.flush_line, o.flush_evict),
            (true, 2, false)
        );
        b.ack(); // 25: hold; ACTR 1 -> 0
        b.idle(); // 26: EDM clears
        let o = b.req(Op::Evict, 1, 2); // 27: retry: pY is no longer buffered
        assert!(o.req_ready && !o.flush_valid, "{which:?}");
        assert_eq!(b.stalled_cycles(1), range(14, 26), "{which:?}");
    }
}

#[test]
fn litmus11_window_and_back_pressure() {
    for which in directed_engines() {
        let p = PbParams {
            lines: 32,
            ..small(FlushPolicy::Window)
        };
        let mut b = bench(which, p);
        // 22 independent persists with no acks: 6 flush, then 16 fill the PB.
        for i in 0..22u32 {
            assert!(b.store(0, i % 22).req_ready, "{which:?} store {i}");
        }
        assert_eq!(b.flushes().len(), 6);
        assert!(b.hist.iter().all(|(_, o)| o.obs_actr <= 6));
        // 23: full. The allocating store is refused without a wait, and the
        // full PB forces the head to flush beyond the window.
        let o = b.store(1, 30);
        assert!(o.obs_full && o.obs_actr == 6, "{which:?}");
        assert!(!o.req_ready && !o.req_wait && o.flush_valid, "{which:?}");
        assert_eq!(o.flush_line, 6);
        let o = b.store(1, 30); // 24: room again
        assert!(o.req_ready && o.obs_actr == 7, "{which:?}");
        assert_eq!(b.stalled_cycles(1), Vec::<usize>::new());
    }
}

#[test]
fn reset_clears_every_register() {
    for which in directed_engines() {
        let mut b = bench(which, small(FlushPolicy::Window));
        b.store(0, 1);
        b.req(Op::DFence, 0, 0);
        b.req(Op::OFence, 1, 0);
        b.idle_n(3);
        let o = b.idle();
        assert!(o.obs_actr > 0 && o.stall != 0);
        b.reset();
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
                o.idle
            ),
            (0, 0, 0, 0, 0, false, false, true),
            "{which:?}"
        );
    }
}
