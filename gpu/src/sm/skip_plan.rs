//! What a skipped replay loop sends (`docs/model.md`, "Event loop"; used by
//! `skip.rs`): each warp's request as `request_of` (`unit_port.rs`) would
//! build it, as numbered inputs. A store that misses in the L1 evicts the
//! first way not pinned in LRU order, and pins change as requests go in and
//! out of flight, so such a warp has several candidate inputs.

use sbrp_iface::{Op, PbIn};

use super::l1::Lookup;
use super::warp::Phase;
use super::{Ctx, Sm};

/// No input.
pub(super) const NONE: u8 = 0xff;

/// Candidate victims kept for a store that misses: at most three requests
/// are in flight, so the first way not pinned is among the first four.
const MISS_WAYS: usize = 4;

/// A replay loop's inputs by id (below [`NONE`]).
pub(super) struct Plan {
    pub inputs: Vec<PbIn>,
    /// The input is a request the unit refuses, which the SM sends again
    /// as it is; any other ends the skip before it is sent.
    pub good: Vec<bool>,
    /// By warp (senders and requests in flight only): its first input and
    /// how many (more than one: a store's eviction, the first way not
    /// pinned of its candidates).
    pub first: [u8; 64],
    pub count: [u8; 64],
    /// The requests in flight, oldest first.
    pub pending: [u8; 4],
    pub np: usize,
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            inputs: Vec::new(),
            good: Vec::new(),
            first: [0; 64],
            count: [0; 64],
            pending: [NONE; 4],
            np: 0,
        }
    }
}

impl Plan {
    /// The input holds an L1 slot while in flight (`taken`, `respond`).
    pub fn slotted(&self, id: u8) -> bool {
        !Op::from_bits(self.inputs[id as usize].req_op).is_ordering()
    }

    /// Input `id`'s slot is held by one of `pending` (in flight).
    pub fn pinned(&self, id: u8, pending: &[u8]) -> bool {
        self.slotted(id)
            && pending.iter().any(|&p| {
                self.slotted(p)
                    && self.inputs[p as usize].req_line == self.inputs[id as usize].req_line
            })
    }

    fn push(&mut self, r: PbIn, good: bool) {
        self.inputs.push(r);
        self.good.push(good);
    }
}

impl Sm {
    /// Warp `w`'s request `op` of L1 slot `v`, as `unit_cycle` sends it.
    fn input(&self, cx: &Ctx, w: usize, op: Op, v: usize) -> PbIn {
        self.request_input(cx, &mut Sm::request(w, op, v, None))
    }

    /// The inputs of the requests in flight (as the unit took them) and
    /// what each warp that can send, or will once answered, sends into
    /// `plan`. A warp whose request is none a loop can hold has no input
    /// (`count` 0): the skip ends before its turn. False if the requests in
    /// flight are not those of the pipeline's inputs.
    pub(super) fn plan_replays(&mut self, cx: &Ctx, senders: u64, plan: &mut Plan) -> bool {
        plan.inputs.clear();
        plan.good.clear();
        // The pipeline's valid inputs, oldest first, are the requests in
        // flight.
        let ring = self.unit_state.ring;
        let mut valid = ring.iter().rev().filter(|r| r.req_valid);
        plan.np = 0;
        for i in 0..self.unit_state.port.pending.len() {
            let p = self.unit_state.port.pending[i];
            match valid.next() {
                // Never picked: what its warp sends once answered is its
                // plan below (`try_skip` checked these are refused).
                Some(r) if r.req_warp as usize == p.warp => plan.push(*r, false),
                _ => return false,
            }
            plan.pending[plan.np] = (plan.inputs.len() - 1) as u8;
            plan.np += 1;
        }
        if valid.next().is_some() {
            return false;
        }
        let mut b = senders;
        for i in 0..plan.np {
            let w = plan.inputs[plan.pending[i] as usize].req_warp;
            b |= 1 << w;
        }
        while b != 0 {
            let w = b.trailing_zeros() as usize;
            b &= b - 1;
            if !self.plan_warp(cx, w, plan) {
                plan.count[w] = 0;
            }
        }
        true
    }

    /// Warp `w`'s candidate inputs into `plan`; false if its request is
    /// none a replay loop can hold (a store's eviction of a volatile line
    /// writes it back, a store into a clean way installs its line, a
    /// stale copy of the line is revived: each changes the L1).
    fn plan_warp(&mut self, cx: &Ctx, w: usize, plan: &mut Plan) -> bool {
        let first = plan.inputs.len();
        if first + MISS_WAYS >= NONE as usize {
            return false;
        }
        let unit = self.unit.as_ref().unwrap();
        let warp = &self.warps[w];
        if let Some(v) = warp.evict {
            // A cleaned victim sets the warp going again.
            if !self.l1.victim_dirty(v) || !self.l1.lines[v].pm {
                return false;
            }
            let r = self.input(cx, w, Op::Evict, v);
            plan.push(r, unit.refuses(&r));
        } else if warp.phase == Phase::Lines {
            let line = warp.acc[warp.acc_i].line;
            match self.l1.lookup(line) {
                Lookup::Hit(s) => {
                    let r = self.input(cx, w, Op::Store, s);
                    plan.push(r, unit.refuses(&r));
                }
                Lookup::Miss => {
                    if self.l1.slot_of(line).is_some() {
                        return false;
                    }
                    for v in self.l1.lru_ways(line).take(MISS_WAYS) {
                        let r = self.input(cx, w, Op::Evict, v);
                        let good =
                            self.l1.victim_dirty(v) && self.l1.lines[v].pm && unit.refuses(&r);
                        plan.push(r, good);
                    }
                }
            }
        } else {
            let op = self.order_op(cx, w);
            let r = self.input(cx, w, op, 0);
            let good = self.unit.as_ref().unwrap().refuses(&r);
            plan.push(r, good);
        }
        plan.first[w] = first as u8;
        plan.count[w] = (plan.inputs.len() - first) as u8;
        plan.count[w] > 0
    }
}
