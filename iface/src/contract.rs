//! The SM side of the unit's interface contract (`docs/microarch.md` §2,
//! "Interface requirements on the SM", requirements 1, 2, 5, 6, 8 and 9):
//! a monitor that watches one unit's ports cycle by cycle and reports the
//! first breach by whatever drives them (the SM front end, the GPU model's
//! SMs). The formal environment (`constraints/formal/sbrp_pb_formal.sv`)
//! assumes the same rules; this is their check in simulation, so that a
//! driver breaking them is reported instead of silently accepted.
//!
//! With [`ContractMonitor::checking_unit`] it also checks the unit's side of
//! requirement 7: a response exactly [`PbUnit::rsp_latency`] cycles after
//! each request taken, with its warp, and no other.
//!
//! The raw fuzz stimulus ([`crate::stimulus::RawStimulus`]) breaks these
//! rules on purpose (the unit's behaviour is defined for every input): it
//! is the deliberately bad driver of the monitor's tests.

use std::fmt;

#[cfg(doc)]
use crate::PbUnit;
use crate::{consts, Op, PbIn, PbOut, PbParams, RspKind};

/// Which requirement of §2 a driver broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// 1: a request names a line that a request taken 1..3 cycles ago named.
    LineInFlight,
    /// 2: the hook presented is not the one the responses gave the line.
    Hook,
    /// 5: `inv_done` without a pending `inv_req`, or twice for one.
    InvDone,
    /// 6: a warp presents a request while one of its own is in flight.
    WarpInFlight,
    /// 8: an acknowledgement of more flushes of an epoch than were taken
    /// and not yet acknowledged.
    Ack,
    /// 9: a request from a warp the unit does not have (`req_warp >= W`).
    WarpRange,
    /// 7, broken by the unit: a response missing, early, unasked for or of
    /// another warp.
    Latency,
}

impl Rule {
    /// The requirement's number in `docs/microarch.md` §2.
    pub fn number(self) -> u32 {
        match self {
            Rule::LineInFlight => 1,
            Rule::Hook => 2,
            Rule::InvDone => 5,
            Rule::WarpInFlight => 6,
            Rule::Ack => 8,
            Rule::WarpRange => 9,
            Rule::Latency => 7,
        }
    }
}

/// A breach of the contract: the cycle (counted from the monitor's creation
/// or its last [`ContractMonitor::reset`]), the rule and what happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub cycle: u64,
    pub rule: Rule,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = if self.rule == Rule::Latency {
            "the unit"
        } else {
            "the driver"
        };
        write!(
            f,
            "cycle {}: {who} breaks interface requirement {} (docs/microarch.md §2): {}",
            self.cycle,
            self.rule.number(),
            self.detail
        )
    }
}

/// What the monitor knows of a line's hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hook {
    /// Nothing since the last reset: any hook is accepted (a stale hook is
    /// harmless, §3).
    Unknown,
    /// The line was evicted: a new line in the slot has no hook.
    None,
    /// The last performed or coalesced store response gave this index.
    Idx(u32),
}

/// A request taken by the unit: (op, warp, line).
type Taken = (Op, u8, u32);

/// Watches one unit's ports; feed it every cycle's inputs and outputs.
#[derive(Clone, Debug)]
pub struct ContractMonitor {
    warps: u32,
    /// Requests taken 1..=latency cycles ago (index 0: last cycle).
    inflight: Vec<Option<Taken>>,
    /// Check the unit's responses too (requirement 7).
    check_unit: bool,
    hooks: Vec<Hook>,
    /// Flushes taken and not yet acknowledged, per epoch.
    unacked: [u32; consts::EPOCHS as usize],
    /// `inv_done` already answered the `inv_req` now high.
    inv_answered: bool,
    /// The last cycle had `rst`: this one is a reset cycle (§7).
    rst_q: bool,
    cycle: u64,
}

impl ContractMonitor {
    /// A monitor of a unit whose responses come 3 cycles after the request.
    pub fn new(p: &PbParams) -> ContractMonitor {
        ContractMonitor::with_latency(p, consts::RSP_LATENCY)
    }

    /// A monitor of a unit whose responses come `latency` cycles after the
    /// request (3 plus its request and response slices, §2.1).
    pub fn with_latency(p: &PbParams, latency: usize) -> ContractMonitor {
        assert!(latency >= consts::RSP_LATENCY, "latency {latency}");
        ContractMonitor {
            warps: p.warps,
            inflight: vec![None; latency],
            check_unit: false,
            hooks: vec![Hook::Unknown; p.lines as usize],
            unacked: [0; consts::EPOCHS as usize],
            inv_answered: false,
            rst_q: false,
            cycle: 0,
        }
    }

    /// Also checks that the unit answers each request taken, exactly
    /// `latency` cycles later, with its warp (requirement 7).
    pub fn checking_unit(mut self) -> ContractMonitor {
        self.check_unit = true;
        self
    }

    /// Forgets everything, as the unit does in a reset cycle (for drivers
    /// that reset the unit without showing the monitor the reset cycles).
    pub fn reset(&mut self) {
        self.inflight.fill(None);
        self.hooks.fill(Hook::Unknown);
        self.unacked = [0; consts::EPOCHS as usize];
        self.inv_answered = false;
        self.rst_q = false;
    }

    /// One cycle: its inputs `inp` and the unit's outputs `out` in it.
    /// Returns the first breach of the cycle by the driver, if any.
    pub fn observe(&mut self, inp: &PbIn, out: &PbOut) -> Option<Violation> {
        let v = self.check(inp, out);
        self.advance(inp, out);
        self.cycle += 1;
        v
    }

    fn violation(&self, rule: Rule, detail: String) -> Option<Violation> {
        Some(Violation {
            cycle: self.cycle,
            rule,
            detail,
        })
    }

    fn check(&self, inp: &PbIn, out: &PbOut) -> Option<Violation> {
        if inp.req_valid {
            let op = Op::from_bits(inp.req_op);
            let names_line = matches!(op, Op::Store | Op::Evict);
            if u32::from(inp.req_warp) >= self.warps {
                return self.violation(
                    Rule::WarpRange,
                    format!(
                        "{op:?} request from warp {}, the unit has {} warps",
                        inp.req_warp, self.warps
                    ),
                );
            }
            for (ago, t) in self.inflight.iter().enumerate() {
                let Some((top, tw, tl)) = *t else { continue };
                if tw == inp.req_warp {
                    return self.violation(
                        Rule::WarpInFlight,
                        format!(
                            "warp {} presents {op:?} while its {top:?} taken {} cycle(s) ago awaits its response",
                            inp.req_warp,
                            ago + 1
                        ),
                    );
                }
                if names_line && matches!(top, Op::Store | Op::Evict) && tl == inp.req_line {
                    return self.violation(
                        Rule::LineInFlight,
                        format!(
                            "{op:?} of L1 line {} while warp {tw}'s {top:?} of it taken {} cycle(s) ago awaits its response",
                            inp.req_line,
                            ago + 1
                        ),
                    );
                }
            }
            if names_line {
                let hook = self.hooks.get(inp.req_line as usize).copied();
                let bad = match (hook, inp.req_pbv) {
                    (Some(Hook::None), true) => Some("none (the line was evicted)".to_string()),
                    (Some(Hook::Idx(k)), true) if k != inp.req_pbidx => Some(format!("{k}")),
                    _ => None,
                };
                if let Some(expected) = bad {
                    return self.violation(
                        Rule::Hook,
                        format!(
                            "{op:?} of L1 line {} carries hook {}, the responses gave {expected}",
                            inp.req_line, inp.req_pbidx
                        ),
                    );
                }
            }
        }
        if inp.ack_count > 0 {
            let e = usize::from(inp.ack_epoch & 3);
            let open = self.unacked[e];
            if u32::from(inp.ack_count) > open {
                return self.violation(
                    Rule::Ack,
                    format!(
                        "acknowledges {} flush(es) of epoch {e}, {open} of that epoch are taken and unacknowledged",
                        inp.ack_count
                    ),
                );
            }
        }
        if inp.inv_done && (!out.inv_req || self.inv_answered) {
            return self.violation(
                Rule::InvDone,
                if out.inv_req {
                    "a second inv_done for one inv_req".to_string()
                } else {
                    "inv_done while inv_req is low".to_string()
                },
            );
        }
        if self.check_unit {
            let due = self.inflight[self.inflight.len() - 1];
            let lat = self.inflight.len();
            match (due, out.rsp_valid) {
                (Some((op, w, _)), false) => {
                    return self.violation(
                        Rule::Latency,
                        format!("no response to warp {w}'s {op:?} taken {lat} cycles ago"),
                    )
                }
                (None, true) => {
                    return self.violation(
                        Rule::Latency,
                        format!(
                            "a response to warp {} with no request taken {lat} cycles ago",
                            out.rsp_warp
                        ),
                    )
                }
                (Some((op, w, _)), true) if w != out.rsp_warp => {
                    return self.violation(
                        Rule::Latency,
                        format!(
                        "the response to warp {w}'s {op:?} taken {lat} cycles ago names warp {}",
                        out.rsp_warp
                    ),
                    )
                }
                _ => {}
            }
        }
        None
    }

    fn advance(&mut self, inp: &PbIn, out: &PbOut) {
        // The response of this cycle answers the request taken `latency` cycles ago.
        let due = self.inflight[self.inflight.len() - 1];
        if let (true, Some((op, _, line))) = (out.rsp_valid, due) {
            let kind = RspKind::from_bits(out.rsp_kind);
            if let Some(h) = self.hooks.get_mut(line as usize) {
                match op {
                    Op::Store if kind.taken() => *h = Hook::Idx(out.rsp_idx),
                    Op::Evict if kind == RspKind::Performed => *h = Hook::None,
                    _ => {}
                }
            }
        }
        let taken = inp.req_valid && out.req_ready && !inp.rst;
        self.inflight.rotate_right(1);
        self.inflight[0] = taken.then(|| (Op::from_bits(inp.req_op), inp.req_warp, inp.req_line));
        if inp.ack_count > 0 {
            let e = usize::from(inp.ack_epoch & 3);
            self.unacked[e] = self.unacked[e].saturating_sub(u32::from(inp.ack_count));
        }
        if out.flush_valid && inp.flush_ready {
            self.unacked[usize::from(out.flush_epoch & 3)] += 1;
        }
        self.inv_answered = out.inv_req && (self.inv_answered || inp.inv_done);
        // The end of a reset cycle clears the unit's state, and so this.
        let reset_cycle = self.rst_q;
        self.rst_q = inp.rst;
        if reset_cycle {
            self.reset();
            self.rst_q = inp.rst;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> PbParams {
        PbParams {
            entries: 16,
            warps: 4,
            lines: 16,
            ..PbParams::default()
        }
    }

    fn ready() -> PbOut {
        PbOut {
            req_ready: true,
            ..PbOut::default()
        }
    }

    fn rsp(kind: RspKind, warp: u8, idx: u32) -> PbOut {
        PbOut {
            req_ready: true,
            rsp_valid: true,
            rsp_kind: kind as u8,
            rsp_warp: warp,
            rsp_idx: idx,
            ..PbOut::default()
        }
    }

    /// Runs `cycles` through a fresh monitor; the violations with their cycle.
    fn run(cycles: &[(PbIn, PbOut)]) -> Vec<Violation> {
        let mut m = ContractMonitor::new(&params());
        cycles.iter().filter_map(|(i, o)| m.observe(i, o)).collect()
    }

    /// A warp's next request in h+1..h+3 breaks requirement 6; in h+4 (the
    /// cycle after its response) it is legal.
    #[test]
    fn a_second_request_of_a_warp_in_flight_is_reported() {
        for gap in 1..=4u64 {
            let mut c = vec![(PbIn::req(Op::Store, 1, 3), ready())];
            for _ in 1..gap {
                c.push((PbIn::idle(), ready()));
            }
            c.push((PbIn::req(Op::OFence, 1, 0), ready()));
            let v = run(&c);
            if gap < 4 {
                assert_eq!(v.len(), 1, "gap {gap}: {v:?}");
                assert_eq!((v[0].rule, v[0].cycle), (Rule::WarpInFlight, gap));
                assert!(v[0].to_string().contains("requirement 6"), "{}", v[0]);
            } else {
                assert!(v.is_empty(), "gap {gap}: {v:?}");
            }
        }
        // another warp may issue at once; a request not taken (req_ready
        // low) is not in flight
        assert!(run(&[
            (PbIn::req(Op::Store, 1, 3), ready()),
            (PbIn::req(Op::OFence, 2, 0), ready())
        ])
        .is_empty());
        assert!(run(&[
            (PbIn::req(Op::Store, 1, 3), PbOut::default()),
            (PbIn::req(Op::Store, 1, 4), ready())
        ])
        .is_empty());
    }

    #[test]
    fn a_second_request_for_a_line_in_flight_is_reported() {
        let v = run(&[
            (PbIn::req(Op::Store, 1, 3), ready()),
            (PbIn::idle(), ready()),
            (PbIn::req(Op::Evict, 2, 3), ready()),
        ]);
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].rule, v[0].cycle), (Rule::LineInFlight, 2));
        // an ordering op's line field names no line
        assert!(run(&[
            (PbIn::req(Op::OFence, 1, 3), ready()),
            (PbIn::req(Op::Store, 2, 3), ready())
        ])
        .is_empty());
    }

    /// The hook must be the index of the line's last store response; after
    /// the line's eviction none; before any response anything goes.
    #[test]
    fn a_hook_the_responses_did_not_give_is_reported() {
        let hooked = |pbv, idx| PbIn {
            req_pbv: pbv,
            req_pbidx: idx,
            ..PbIn::req(Op::Store, 2, 5)
        };
        let mut c = vec![
            (hooked(true, 9), ready()), // unknown: accepted
            (PbIn::idle(), ready()),
            (PbIn::idle(), ready()),
            (PbIn::idle(), rsp(RspKind::Performed, 2, 7)),
        ];
        let mut good = c.clone();
        good.push((hooked(true, 7), ready()));
        assert!(run(&good).is_empty());
        let mut silent = c.clone();
        silent.push((hooked(false, 0), ready())); // a silent reinstall
        assert!(run(&silent).is_empty());
        c.push((hooked(true, 6), ready()));
        let v = run(&c);
        assert_eq!((v.len(), v[0].rule, v[0].cycle), (1, Rule::Hook, 4));
        // after an eviction of the line, no hook
        let mut e = vec![(PbIn::req(Op::Evict, 2, 5), ready())];
        e.extend([(PbIn::idle(), ready()), (PbIn::idle(), ready())]);
        e.push((PbIn::idle(), rsp(RspKind::Performed, 2, 0)));
        e.push((hooked(true, 7), ready()));
        let v = run(&e);
        assert_eq!((v.len(), v[0].rule), (1, Rule::Hook), "{v:?}");
    }

    #[test]
    fn acks_beyond_the_taken_flushes_are_reported() {
        let flush = PbOut {
            flush_valid: true,
            flush_epoch: 1,
            ..ready()
        };
        let taken = PbIn {
            flush_ready: true,
            ..PbIn::idle()
        };
        let ack = |n, e| PbIn {
            ack_count: n,
            ack_epoch: e,
            ..PbIn::idle()
        };
        // one flush of epoch 1 taken: one ack of epoch 1 is legal, once
        assert!(run(&[(taken, flush), (ack(1, 1), ready())]).is_empty());
        let v = run(&[(taken, flush), (ack(1, 1), ready()), (ack(1, 1), ready())]);
        assert_eq!((v.len(), v[0].rule, v[0].cycle), (1, Rule::Ack, 2));
        // the wrong epoch, or in the cycle the flush is taken
        assert_eq!(
            run(&[(taken, flush), (ack(1, 0), ready())])[0].rule,
            Rule::Ack
        );
        let same = PbIn {
            ack_count: 1,
            ack_epoch: 1,
            ..taken
        };
        assert_eq!(run(&[(same, flush)])[0].rule, Rule::Ack);
        // a flush offered but not taken is not counted
        let v = run(&[(PbIn::idle(), flush), (ack(1, 1), ready())]);
        assert_eq!(v[0].rule, Rule::Ack);
    }

    #[test]
    fn inv_done_answers_one_inv_req() {
        let inv = PbOut {
            inv_req: true,
            ..ready()
        };
        let done = PbIn {
            inv_done: true,
            ..PbIn::idle()
        };
        assert!(run(&[(PbIn::idle(), inv), (done, inv), (PbIn::idle(), ready())]).is_empty());
        let v = run(&[(done, ready())]);
        assert_eq!(v[0].rule, Rule::InvDone);
        let v = run(&[(done, inv), (PbIn::idle(), inv), (done, inv)]);
        assert_eq!((v.len(), v[0].cycle), (1, 2));
    }

    /// With a longer latency (register slices, §2.1) the warp's next request
    /// is legal only after the longer wait; checking the unit, a response
    /// early, late or missing is reported as the unit's breach of rule 7.
    #[test]
    fn the_latency_counts_the_slices_and_the_unit_is_held_to_it() {
        let mut c = vec![(PbIn::req(Op::Store, 1, 3), ready())];
        c.extend((1..5).map(|_| (PbIn::idle(), ready())));
        c.push((PbIn::req(Op::OFence, 1, 0), ready())); // cycle 5 < h + 6
        let mut m = ContractMonitor::with_latency(&params(), 5);
        let v: Vec<_> = c.iter().filter_map(|(i, o)| m.observe(i, o)).collect();
        assert_eq!((v.len(), v[0].rule, v[0].cycle), (1, Rule::WarpInFlight, 5));
        let checked = |lat: usize, rsp_at: usize| {
            let mut m = ContractMonitor::with_latency(&params(), lat).checking_unit();
            let mut c = vec![(PbIn::req(Op::Store, 1, 3), ready())];
            c.extend((1..8).map(|i| {
                let o = if i == rsp_at {
                    rsp(RspKind::Performed, 1, 2)
                } else {
                    ready()
                };
                (PbIn::idle(), o)
            }));
            c.iter()
                .filter_map(|(i, o)| m.observe(i, o))
                .collect::<Vec<_>>()
        };
        assert!(checked(5, 5).is_empty());
        for (lat, at, cycle) in [(5, 4, 4), (5, 6, 5), (3, 4, 3)] {
            let v = checked(lat, at);
            assert_eq!(
                (v[0].rule, v[0].cycle),
                (Rule::Latency, cycle),
                "{lat} {at}: {v:?}"
            );
            assert!(v[0]
                .to_string()
                .contains("the unit breaks interface requirement 7"));
        }
    }

    #[test]
    fn a_warp_beyond_the_unit_is_reported() {
        let v = run(&[(PbIn::req(Op::OFence, 4, 0), ready())]);
        assert_eq!(v[0].rule, Rule::WarpRange);
    }

    /// The reset cycle (the cycle after `rst`) forgets the requests in
    /// flight, with the unit; a request presented with `rst` is not taken.
    #[test]
    fn reset_forgets_requests_in_flight() {
        let rst = PbIn {
            rst: true,
            ..PbIn::idle()
        };
        let v = run(&[
            (PbIn::req(Op::Store, 1, 3), ready()),
            (rst, ready()),
            (PbIn::idle(), PbOut::default()),
            (PbIn::req(Op::Store, 1, 3), ready()),
        ]);
        assert!(v.is_empty(), "{v:?}");
        let with_rst = PbIn {
            rst: true,
            ..PbIn::req(Op::Store, 1, 3)
        };
        assert!(run(&[(with_rst, ready()), (PbIn::req(Op::Store, 1, 3), ready())]).is_empty());
    }

    /// The raw fuzz stimulus is a deliberately bad driver: the monitor
    /// reports it within a few hundred cycles, a breach of requirement 6 or 1
    /// among the first.
    #[test]
    fn the_raw_fuzz_stimulus_breaks_the_contract() {
        use crate::stimulus::RawStimulus;
        let p = params();
        let mut s = RawStimulus::new(&p, 7);
        let mut m = ContractMonitor::new(&p);
        let mut rules = std::collections::HashSet::new();
        for _ in 0..2000 {
            let i = s.next_input();
            if let Some(v) = m.observe(&i, &ready()) {
                rules.insert(v.rule);
            }
        }
        assert!(rules.contains(&Rule::WarpInFlight), "{rules:?}");
        assert!(rules.contains(&Rule::LineInFlight), "{rules:?}");
    }
}
