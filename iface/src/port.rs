//! The SM's side of the persist buffer unit's interface, written once for
//! every driver (`docs/microarch.md` §2, interface requirements 1-6): the
//! GPU model's SMs (`sbrp-gpu`, `sm/unit_port.rs`) and the unit-level front
//! end (`sbrp-sim-fast`, `frontend/sm.rs`) both run a unit through it.
//!
//! A cycle is [`UnitPort::inputs`] (the acknowledgement, the `inv_done`
//! pulse, `flush_ready`, `drain_all` and at most one request), the unit's
//! step, then [`after_step`], which handles the outputs in a fixed order:
//! the unit's error, the flush handshake, the request taken (its L1 line
//! pinned), the response to the oldest request in flight (the line
//! unpinned after it), the invalidation handshake, and warps resuming on
//! `stall`. What each of these does to the L1, the warps and the memory is
//! the driver's, behind [`SmSide`].

use std::collections::VecDeque;

use crate::consts::ACKS_MAX;
use crate::{Op, PbIn, PbOut, RspKind};

/// The L1's side of the invalidation handshake (interface requirement 5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Inv {
    /// No request seen.
    #[default]
    Idle,
    /// `inv_req` seen: the clean PM lines go at this cycle, `inv_done` the next.
    Due(u64),
    /// `inv_done` pulsed: waiting to see `inv_req` low before serving another.
    WaitFall,
}

/// A request to present this cycle. `warp` is the driver's index of the
/// warp, `unit_warp` the `req_warp` it sends; `tag` is the driver's own.
#[derive(Clone, Copy, Debug)]
pub struct Request<T> {
    pub warp: usize,
    pub unit_warp: u8,
    pub op: Op,
    /// L1 slot of a store or eviction (`req_line`).
    pub slot: usize,
    /// A store miss installs its line in `slot` when the request is taken.
    pub install: Option<u64>,
    /// The line's hook (interface requirement 2), if it has one.
    pub hook: Option<u32>,
    pub tag: T,
}

/// A request taken by the unit, awaiting its response (in order).
#[derive(Clone, Copy, Debug)]
pub struct Pending<T> {
    pub warp: usize,
    pub unit_warp: u8,
    pub op: Op,
    pub slot: usize,
    pub tag: T,
}

impl<T> Pending<T> {
    /// A store or eviction: its L1 line is pinned while it is in flight.
    pub fn pins(&self) -> bool {
        matches!(self.op, Op::Store | Op::Evict)
    }
}

/// Acknowledgements waiting to be presented, as (epoch, count), oldest
/// first; at most `ACKS_MAX` of one epoch per cycle.
#[derive(Clone, Debug, Default)]
pub struct AckQueue {
    q: VecDeque<(u8, u32)>,
}

impl AckQueue {
    /// One flush of `epoch` acknowledged.
    #[inline]
    pub fn push(&mut self, epoch: u8) {
        match self.q.back_mut() {
            Some((e, c)) if *e == epoch => *c += 1,
            _ => self.q.push_back((epoch, 1)),
        }
    }
    /// This cycle's `(ack_count, ack_epoch)`; (0, 0) when none waits.
    #[inline]
    pub fn present(&mut self) -> (u8, u8) {
        let Some((e, c)) = self.q.front_mut() else {
            return (0, 0);
        };
        let n = (*c).min(ACKS_MAX);
        let e = *e;
        *c -= n;
        if *c == 0 {
            self.q.pop_front();
        }
        (n as u8, e)
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    pub fn len(&self) -> usize {
        self.q.len()
    }
}

/// The protocol's state on the SM side.
#[derive(Clone, Debug)]
pub struct UnitPort<T> {
    /// Requests taken, oldest first.
    pub pending: VecDeque<Pending<T>>,
    pub inv: Inv,
    /// `inv_done` to present next cycle.
    pub inv_pulse: bool,
    /// `stall` as last seen.
    pub stall: u64,
    /// The largest `obs_actr` seen.
    pub actr_peak: u32,
    /// The unit's `error` was reported (once per run).
    pub error_seen: bool,
}

impl<T> Default for UnitPort<T> {
    fn default() -> Self {
        UnitPort {
            pending: VecDeque::new(),
            inv: Inv::Idle,
            inv_pulse: false,
            stall: 0,
            actr_peak: 0,
            error_seen: false,
        }
    }
}

impl<T: Copy> UnitPort<T> {
    /// This cycle's inputs: `ack` as (count, epoch), the pending `inv_done`
    /// pulse, `flush_ready`, `drain_all` and the request, if any.
    #[inline]
    pub fn inputs(
        &mut self,
        ack: (u8, u8),
        flush_ready: bool,
        drain_all: bool,
        req: Option<&Request<T>>,
    ) -> PbIn {
        let mut inp = PbIn {
            ack_count: ack.0,
            ack_epoch: ack.1,
            flush_ready,
            drain_all,
            inv_done: std::mem::take(&mut self.inv_pulse),
            ..PbIn::idle()
        };
        if let Some(r) = req {
            request_fields(&mut inp, r);
        }
        inp
    }

    /// A reset of the unit (§7): it drops the requests in flight and every
    /// handshake starts again.
    pub fn reset(&mut self) {
        self.pending.clear();
        self.inv = Inv::Idle;
        self.inv_pulse = false;
        self.stall = 0;
    }

    /// Nothing of the protocol under way: no request in flight, no
    /// invalidation being served.
    #[inline]
    pub fn quiet(&self) -> bool {
        self.pending.is_empty() && self.inv == Inv::Idle && !self.inv_pulse
    }

    /// The invalidation handshake's state, for deadlock reports.
    pub fn describe_inv(&self) -> String {
        match self.inv {
            Inv::Idle => "none".to_string(),
            Inv::Due(t) => format!("due at cycle {t}"),
            Inv::WaitFall => "waiting for the request to fall".to_string(),
        }
    }
}

/// Request `r`'s fields of the unit's inputs.
#[inline]
pub fn request_fields<T>(inp: &mut PbIn, r: &Request<T>) {
    inp.req_valid = true;
    inp.req_op = r.op as u8;
    inp.req_warp = r.unit_warp;
    inp.req_line = r.slot as u32;
    inp.req_pbv = r.hook.is_some();
    inp.req_pbidx = r.hook.unwrap_or(0);
}

/// What the driver does at each step of the protocol.
pub trait SmSide {
    /// The driver's data carried with a request to its response.
    type Tag: Copy;
    fn port(&mut self) -> &mut UnitPort<Self::Tag>;
    /// A breach of the interface by either side; `msg` names the cycle.
    fn fail(&mut self, msg: String);
    /// The flush of `out` was taken: its line's words go to memory.
    fn flush(&mut self, out: &PbOut);
    fn line_pinned(&self, slot: usize) -> bool;
    fn set_line_pinned(&mut self, slot: usize, pinned: bool);
    /// The unit took `r` (a store miss installs its line here); the warp
    /// waits for the response.
    fn taken(&mut self, r: &Request<Self::Tag>);
    /// The response to `p` (interface requirement 3: its line is still
    /// pinned; the port unpins it after this).
    fn respond(&mut self, p: &Pending<Self::Tag>, kind: RspKind, out: &PbOut);
    /// Cycles from seeing `inv_req` to dropping the clean PM lines.
    fn inv_delay(&mut self) -> u64;
    /// Interface requirement 5: the clean PM lines go.
    fn invalidate(&mut self);
    /// Warps waiting on the unit may resume: their `stall` bit is low.
    fn resume(&mut self, stall: u64);
}

/// The outputs of one step, handled in the protocol's order (module doc).
/// `inp` are the inputs of that step and `req` the request among them.
#[inline]
pub fn after_step<S: SmSide>(
    side: &mut S,
    inp: &PbIn,
    out: &PbOut,
    req: Option<Request<S::Tag>>,
    now: u64,
) {
    let port = side.port();
    port.actr_peak = port.actr_peak.max(out.obs_actr);
    if out.error != 0 && !port.error_seen {
        port.error_seen = true;
        side.fail(format!(
            "unit error {:#04b} at cycle {now} (bit 0: an ack beyond its epoch's count, bit 1: a warp >= W)",
            out.error
        ));
    }
    // The flush reads the line as it is at the start of the cycle, before
    // this cycle's store response writes it.
    if out.flush_valid && inp.flush_ready {
        side.flush(out);
    }
    if let Some(r) = req {
        if out.req_ready {
            taken(side, r, now);
        }
    }
    if out.rsp_valid {
        respond(side, out, now);
    }
    invalidation(side, out.inv_req, now);
    side.port().stall = out.stall;
    side.resume(out.stall);
}

#[inline]
fn taken<S: SmSide>(side: &mut S, r: Request<S::Tag>, now: u64) {
    let pins = matches!(r.op, Op::Store | Op::Evict);
    if pins && side.line_pinned(r.slot) {
        // The driver never sends this: interface requirement 1.
        side.fail(format!(
            "cycle {now}: a second request for L1 line {} is in flight (interface requirement 1)",
            r.slot
        ));
        return;
    }
    side.taken(&r);
    if pins {
        side.set_line_pinned(r.slot, true);
    }
    side.port().pending.push_back(Pending {
        warp: r.warp,
        unit_warp: r.unit_warp,
        op: r.op,
        slot: r.slot,
        tag: r.tag,
    });
}

#[inline]
fn respond<S: SmSide>(side: &mut S, out: &PbOut, now: u64) {
    let Some(p) = side.port().pending.pop_front() else {
        side.fail(format!("cycle {now}: a response with no request in flight"));
        return;
    };
    if out.rsp_warp != p.unit_warp {
        side.fail(format!(
            "cycle {now}: response for warp {}, the oldest request in flight is warp {}'s",
            out.rsp_warp, p.unit_warp
        ));
        return;
    }
    side.respond(&p, RspKind::from_bits(out.rsp_kind), out);
    if p.pins() {
        side.set_line_pinned(p.slot, false);
    }
}

/// Interface requirement 5: on `inv_req`, drop the clean PM lines after the
/// driver's delay, pulse `inv_done` once, then wait for `inv_req` to fall.
#[inline]
fn invalidation<S: SmSide>(side: &mut S, inv_req: bool, now: u64) {
    if side.port().inv == Inv::Idle && inv_req {
        let t = now + side.inv_delay();
        side.port().inv = Inv::Due(t);
    }
    match side.port().inv {
        Inv::Due(t) if t <= now => {
            side.invalidate();
            let port = side.port();
            port.inv_pulse = true;
            port.inv = Inv::WaitFall;
        }
        Inv::WaitFall if !inv_req => side.port().inv = Inv::Idle,
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A side that logs what the port asks of it.
    #[derive(Default)]
    struct Log {
        port: UnitPort<u32>,
        pinned: Vec<bool>,
        calls: Vec<String>,
    }

    impl SmSide for Log {
        type Tag = u32;
        fn port(&mut self) -> &mut UnitPort<u32> {
            &mut self.port
        }
        fn fail(&mut self, msg: String) {
            self.calls.push(format!("fail {msg}"));
        }
        fn flush(&mut self, out: &PbOut) {
            self.calls.push(format!("flush {}", out.flush_line));
        }
        fn line_pinned(&self, slot: usize) -> bool {
            self.pinned[slot]
        }
        fn set_line_pinned(&mut self, slot: usize, pinned: bool) {
            self.pinned[slot] = pinned;
            self.calls.push(format!("pin {slot} {pinned}"));
        }
        fn taken(&mut self, r: &Request<u32>) {
            self.calls.push(format!("taken {} tag {}", r.warp, r.tag));
        }
        fn respond(&mut self, p: &Pending<u32>, kind: RspKind, _: &PbOut) {
            let pinned = self.pinned[p.slot];
            self.calls
                .push(format!("respond {} {kind:?} pinned {pinned}", p.warp));
        }
        fn inv_delay(&mut self) -> u64 {
            2
        }
        fn invalidate(&mut self) {
            self.calls.push("invalidate".into());
        }
        fn resume(&mut self, stall: u64) {
            if stall != 0 {
                self.calls.push(format!("stall {stall:#x}"));
            }
        }
    }

    fn store(warp: usize, slot: usize) -> Request<u32> {
        Request {
            warp,
            unit_warp: warp as u8,
            op: Op::Store,
            slot,
            install: None,
            hook: Some(5),
            tag: 7,
        }
    }

    fn side() -> Log {
        Log {
            pinned: vec![false; 4],
            ..Log::default()
        }
    }

    #[test]
    fn a_store_is_pinned_from_taken_to_after_its_response() {
        let mut s = side();
        let r = store(1, 2);
        let inp = s.port.inputs((0, 0), true, false, Some(&r));
        assert!(inp.req_valid && inp.req_pbv && inp.req_pbidx == 5 && inp.req_line == 2);
        let out = PbOut {
            req_ready: true,
            ..PbOut::default()
        };
        after_step(&mut s, &inp, &out, Some(r), 10);
        let rsp = PbOut {
            rsp_valid: true,
            rsp_warp: 1,
            rsp_kind: RspKind::Performed as u8,
            ..PbOut::default()
        };
        after_step(&mut s, &PbIn::idle(), &rsp, None, 13);
        assert_eq!(
            s.calls,
            [
                "taken 1 tag 7",
                "pin 2 true",
                "respond 1 Performed pinned true",
                "pin 2 false"
            ]
        );
        assert!(s.port.quiet());
    }

    #[test]
    fn breaches_are_reported_not_acted_on() {
        let mut s = side();
        let rsp = PbOut {
            rsp_valid: true,
            rsp_warp: 3,
            ..PbOut::default()
        };
        after_step(&mut s, &PbIn::idle(), &rsp, None, 4);
        s.pinned[2] = true;
        let inp = s.port.inputs((0, 0), true, false, Some(&store(0, 2)));
        let out = PbOut {
            req_ready: true,
            error: 2,
            ..PbOut::default()
        };
        after_step(&mut s, &inp, &out, Some(store(0, 2)), 5);
        after_step(&mut s, &inp, &out, None, 6);
        assert_eq!(
            s.calls,
            [
                "fail cycle 4: a response with no request in flight",
                "fail unit error 0b10 at cycle 5 (bit 0: an ack beyond its epoch's count, bit 1: a warp >= W)",
                "fail cycle 5: a second request for L1 line 2 is in flight (interface requirement 1)",
            ]
        );
        assert!(s.port.pending.is_empty());
    }

    #[test]
    fn invalidation_waits_its_delay_pulses_once_and_waits_for_the_fall() {
        let mut s = side();
        let req = PbOut {
            inv_req: true,
            ..PbOut::default()
        };
        let mut pulses = vec![];
        for now in 0..8 {
            let inp = s.port.inputs((0, 0), true, false, None);
            pulses.push(inp.inv_done);
            let out = if now < 6 { req } else { PbOut::default() };
            after_step(&mut s, &inp, &out, None, now);
        }
        // Seen at 0, lines dropped at 2, inv_done at 3 only; served once
        // although inv_req stays high until 5.
        assert_eq!(
            pulses,
            [false, false, false, true, false, false, false, false]
        );
        assert_eq!(s.calls, ["invalidate"]);
        assert_eq!(s.port.inv, Inv::Idle);
    }

    #[test]
    fn acks_of_one_epoch_are_presented_at_most_seven_a_cycle() {
        let mut q = AckQueue::default();
        for _ in 0..9 {
            q.push(1);
        }
        q.push(2);
        assert_eq!(q.present(), (7, 1));
        assert_eq!(q.present(), (2, 1));
        assert_eq!(q.present(), (1, 2));
        assert_eq!(q.present(), (0, 0));
        assert!(q.is_empty());
    }
}
