//! The checker's rules on hand-written records: each rule holds on a record
//! that keeps it and fails, naming the rule and the two persists, on one
//! that breaks it.

use super::*;
use crate::record::{Event, Execution, OpRef, OrderingOp, RunEnd};
use crate::types::{Cell, Scope, WarpId};

fn op(sm: u32, warp: u32, inst: u32, seq: u32) -> OpRef {
    OpRef {
        warp: WarpId { sm, warp },
        seq,
        inst,
    }
}

struct Rec {
    ex: Execution,
    next_flush: u64,
}

impl Rec {
    fn new() -> Rec {
        let mut ex = Execution::new(128);
        ex.end = RunEnd::Finished;
        Rec { ex, next_flush: 0 }
    }
    fn start(&mut self, sm: u32, warp: u32, inst: u32, cta: u32) {
        self.ex.events.push(Event::WarpStart {
            warp: WarpId { sm, warp },
            inst,
            kernel: 0,
            cta,
            cta_warp: warp,
            cycle: 0,
        });
    }
    /// A store at `cycle`, flushed alone at `cycle + 1`, durable at `durable`.
    fn store(&mut self, o: OpRef, addr: u64, cycle: u64, durable: Option<u64>) {
        self.ex.events.push(Event::Persist {
            op: o,
            cell: Cell { addr, value: 1 },
            cycle,
        });
        let id = self.next_flush;
        self.next_flush += 1;
        self.ex.events.push(Event::Flush {
            id,
            sm: o.warp.sm,
            line: addr / 128 * 128,
            cells: vec![Cell { addr, value: 1 }],
            evict: false,
            cycle: cycle + 1,
            read_cycle: cycle + 1,
        });
        if let Some(d) = durable {
            self.ex.events.push(Event::Durable { id, cycle: d });
        }
    }
    fn order(&mut self, o: OpRef, kind: OrderingOp, cycle: u64) {
        self.ex.events.push(Event::Ordering {
            op: o,
            kind,
            flag: None,
            cycle,
        });
    }
    fn retire(&mut self, o: OpRef, cycle: u64) {
        self.ex.events.push(Event::Retire { op: o, cycle });
    }
    fn matched(&mut self, acq: OpRef, acq_scope: Scope, rel: OpRef, rel_scope: Scope, cycle: u64) {
        self.ex.events.push(Event::Match {
            acq,
            acq_scope,
            rel,
            rel_scope,
            cycle,
        });
    }
    fn check(&self, model: Model) -> Report {
        let mut ex = self.ex.clone();
        ex.events.sort_by_key(|e| e.cycle());
        check(&ex, &Options::new(model)).unwrap()
    }
}

#[test]
fn intra_thread_order_across_an_ofence() {
    for (y_durable, ok) in [(30, true), (20, true), (10, false)] {
        let mut r = Rec::new();
        r.store(op(0, 0, 0, 0), 0x40, 1, Some(20));
        r.order(op(0, 0, 0, 1), OrderingOp::OFence, 2);
        r.store(op(0, 0, 0, 2), 0x1000, 3, Some(y_durable));
        let rep = r.check(Model::Sbrp);
        assert_eq!(rep.ok(), ok, "{rep:?}");
        if !ok {
            let v = rep.violations[0];
            assert_eq!(v.cycle, 10);
            assert_eq!(v.earlier.op.seq, 0);
            assert_eq!(v.later.unwrap().op.seq, 2);
            assert!(matches!(
                v.rule,
                Rule::IntraThread {
                    kind: OrderingOp::OFence,
                    ..
                }
            ));
        }
    }
}

#[test]
fn stores_without_a_fence_between_them_are_unordered() {
    let mut r = Rec::new();
    r.store(op(0, 0, 0, 0), 0x40, 1, Some(20));
    r.store(op(0, 0, 0, 1), 0x1000, 3, Some(10));
    assert!(r.check(Model::Sbrp).ok());
}

/// W0 (CTA `cta0`) stores X, releases; W1 (CTA `cta1`) acquires it and
/// stores Y, which becomes durable before X.
fn release_acquire(cta0: u32, cta1: u32, scope: Scope) -> Report {
    let mut r = Rec::new();
    r.start(0, 0, 0, cta0);
    r.start(0, 1, 1, cta1);
    r.store(op(0, 0, 0, 0), 0x40, 1, Some(50));
    r.order(op(0, 0, 0, 1), OrderingOp::PRel(scope), 3);
    r.order(op(0, 1, 1, 0), OrderingOp::PAcq(scope), 4);
    r.matched(op(0, 1, 1, 0), scope, op(0, 0, 0, 1), scope, 5);
    r.store(op(0, 1, 1, 1), 0x1000, 6, Some(20));
    r.check(Model::Sbrp)
}

#[test]
fn inter_thread_order_needs_scopes_that_contain_both_threads() {
    let rep = release_acquire(0, 0, Scope::Block);
    assert_eq!(rep.violations_total, 1);
    assert!(matches!(rep.violations[0].rule, Rule::InterThread { .. }));
    assert!(rep.scope_bugs.is_empty());
    // Device scope orders across CTAs.
    let rep = release_acquire(0, 1, Scope::Device);
    assert_eq!(rep.violations_total, 1);
    assert!(rep.scope_bugs.is_empty());
    // Block scope across CTAs orders nothing: a scoped persistency bug.
    let rep = release_acquire(0, 1, Scope::Block);
    assert!(rep.ok(), "{rep:?}");
    assert_eq!(rep.scope_bugs.len(), 1);
    let b = rep.scope_bugs[0];
    assert_eq!(
        (b.rel.seq, b.acq.seq, b.rel_at.cta, b.acq_at.cta),
        (1, 0, 0, 1)
    );
    assert!(b.to_string().contains("block scope across CTAs"), "{b}");
}

#[test]
fn order_is_transitive_through_a_chain_of_warps() {
    // W0: X; pRel.dev(f). W1: pAcq.dev(f); pRel.dev(g). W2: pAcq.dev(g); Y.
    let mut r = Rec::new();
    for w in 0..3 {
        r.start(w, 0, 0, w);
    }
    r.store(op(0, 0, 0, 0), 0x40, 1, Some(50));
    r.order(op(0, 0, 0, 1), OrderingOp::PRel(Scope::Device), 2);
    r.order(op(1, 0, 0, 0), OrderingOp::PAcq(Scope::Device), 3);
    r.matched(
        op(1, 0, 0, 0),
        Scope::Device,
        op(0, 0, 0, 1),
        Scope::Device,
        3,
    );
    r.order(op(1, 0, 0, 1), OrderingOp::PRel(Scope::Device), 4);
    r.order(op(2, 0, 0, 0), OrderingOp::PAcq(Scope::Device), 5);
    r.matched(
        op(2, 0, 0, 0),
        Scope::Device,
        op(1, 0, 0, 1),
        Scope::Device,
        5,
    );
    r.store(op(2, 0, 0, 1), 0x1000, 6, Some(20));
    let rep = r.check(Model::Sbrp);
    assert_eq!(rep.violations_total, 1, "{rep:?}");
    assert_eq!(rep.violations[0].earlier.op.warp.sm, 0);
    assert_eq!(rep.violations[0].later.unwrap().op.warp.sm, 2);
}

#[test]
fn a_dfence_completes_only_after_the_warps_persists_are_durable() {
    for (retire, ok) in [(30, true), (10, false)] {
        let mut r = Rec::new();
        r.store(op(0, 0, 0, 0), 0x40, 1, Some(20));
        r.order(op(0, 0, 0, 1), OrderingOp::DFence, 2);
        r.retire(op(0, 0, 0, 1), retire);
        let rep = r.check(Model::Sbrp);
        assert_eq!(rep.ok(), ok);
        if !ok {
            assert!(matches!(rep.violations[0].rule, Rule::DFence { .. }));
            assert!(rep.violations[0].later.is_none());
        }
    }
}

#[test]
fn a_device_release_publishes_only_after_durability_a_block_one_may_not() {
    for (scope, ok) in [(Scope::Device, false), (Scope::Block, true)] {
        let mut r = Rec::new();
        r.store(op(0, 0, 0, 0), 0x40, 1, Some(20));
        r.order(op(0, 0, 0, 1), OrderingOp::PRel(scope), 2);
        r.retire(op(0, 0, 0, 1), 10);
        assert_eq!(r.check(Model::Sbrp).ok(), ok, "{scope:?}");
    }
}

#[test]
fn epoch_ordering_points_are_barriers_for_the_whole_sm() {
    // Warp 1 of the same SM stored before warp 0's oFence began: under epoch
    // it must be durable when the oFence completes; under SBRP it need not.
    let mut r = Rec::new();
    r.store(op(0, 1, 0, 0), 0x40, 1, Some(20));
    r.order(op(0, 0, 0, 0), OrderingOp::OFence, 5);
    r.retire(op(0, 0, 0, 0), 10);
    assert!(r.check(Model::Sbrp).ok());
    let rep = r.check(Model::Epoch);
    assert_eq!(rep.violations_total, 1);
    assert!(matches!(rep.violations[0].rule, Rule::EpochBarrier { .. }));
    // A store of another SM is not the barrier's business.
    let mut r = Rec::new();
    r.store(op(1, 1, 0, 0), 0x40, 1, Some(20));
    r.order(op(0, 0, 0, 0), OrderingOp::OFence, 5);
    r.retire(op(0, 0, 0, 0), 10);
    assert!(r.check(Model::Epoch).ok());
}

#[test]
fn a_reused_warp_slot_is_a_new_thread() {
    // Instance 0 stores X and fences; instance 1 of the same slot stores Y,
    // durable first: they are different threads, so nothing is broken.
    let mut r = Rec::new();
    r.store(op(0, 0, 0, 0), 0x40, 1, Some(50));
    r.order(op(0, 0, 0, 1), OrderingOp::OFence, 2);
    r.store(op(0, 0, 1, 2), 0x1000, 6, Some(20));
    assert!(r.check(Model::Sbrp).ok());
}

#[test]
fn a_match_with_an_unknown_release_is_an_inconsistent_record() {
    let mut r = Rec::new();
    r.matched(
        op(0, 1, 0, 0),
        Scope::Block,
        op(0, 0, 0, 1),
        Scope::Block,
        5,
    );
    let mut ex = r.ex.clone();
    ex.events.sort_by_key(|e| e.cycle());
    assert!(matches!(
        check(&ex, &Options::default()),
        Err(CheckError::Inconsistent(_))
    ));
    ex.version = 3;
    assert!(matches!(
        check(&ex, &Options::default()),
        Err(CheckError::Record(_))
    ));
}

/// Two lanes of one store write one address with different values: one
/// lands, and an epoch write-back read in the store's cycle carries both
/// lanes. A lane of another op with a value nobody flushed is not carried.
#[test]
fn racing_lanes_of_one_store_are_carried_by_the_value_that_landed() {
    for (other_op, ok) in [(false, true), (true, false)] {
        let mut r = Rec::new();
        let st = op(0, 0, 0, 0);
        for (k, value) in [1u64, 2].into_iter().enumerate() {
            let o = if other_op && k == 0 {
                op(0, 1, 0, 0)
            } else {
                st
            };
            r.ex.events.push(Event::Persist {
                op: o,
                cell: Cell { addr: 0x40, value },
                cycle: 5,
            });
        }
        r.ex.events.push(Event::Flush {
            id: 0,
            sm: 0,
            line: 0,
            cells: vec![Cell {
                addr: 0x40,
                value: 2,
            }],
            evict: false,
            cycle: 5,
            read_cycle: 5,
        });
        r.ex.events.push(Event::Durable { id: 0, cycle: 9 });
        for w in [0, 1] {
            r.order(op(0, w, 0, 1), OrderingOp::DFence, 6);
            r.retire(op(0, w, 0, 1), 20);
        }
        let rep = r.check(Model::Epoch);
        assert_eq!(rep.ok(), ok, "{:?}", rep.violations);
    }
}
