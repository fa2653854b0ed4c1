//! The directed-test driver: it plays a minimal L1 around one unit (keeps
//! each line's hook from the responses, takes every flush unless told not
//! to, acknowledges flushes in order when asked) and keeps every cycle's
//! inputs and outputs for assertions. The spec's directed tests
//! (`docs/microarch.md` §4) run it on every implementation of [`PbUnit`].

use std::collections::{HashMap, VecDeque};

use crate::consts::RSP_LATENCY;
use crate::{Op, PbIn, PbOut, PbParams, PbUnit, RspKind};

/// One flush taken from the unit's FIFO (`flush_valid` and `flush_ready`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flush {
    pub cycle: usize,
    pub line: u32,
    pub warps: u64,
    pub evict: bool,
    pub epoch: u8,
}

/// One response, with the request it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    /// Cycle the response was visible.
    pub cycle: usize,
    pub op: Op,
    pub warp: u8,
    pub line: u32,
    pub kind: RspKind,
    pub idx: u32,
}

/// Drives one unit and records every cycle. Cycle numbers start at 0.
pub struct Driver {
    pub unit: Box<dyn PbUnit>,
    pub hist: Vec<(PbIn, PbOut)>,
    /// `flush_ready` in every cycle (true unless a test holds the FIFO).
    pub flush_ready: bool,
    /// Responses in the order they arrived.
    pub responses: Vec<Response>,
    hooks: HashMap<u32, u32>,
    inflight: VecDeque<(Op, u8, u32)>,
    flushes: Vec<Flush>,
    /// Indices into `flushes` not yet acknowledged, oldest first.
    unacked: VecDeque<usize>,
    /// Cycle each flush's acknowledgement was presented.
    acked_at: Vec<Option<usize>>,
    /// The last cycle had `rst`: this one is the unit's reset cycle (§7).
    rst_q: bool,
}

impl Driver {
    pub fn new(unit: Box<dyn PbUnit>) -> Driver {
        Driver {
            unit,
            hist: vec![],
            flush_ready: true,
            responses: vec![],
            hooks: HashMap::new(),
            inflight: VecDeque::new(),
            flushes: vec![],
            unacked: VecDeque::new(),
            acked_at: vec![],
            rst_q: false,
        }
    }
    /// A driver of `unit` after its power-up reset (§7): `rst` in the cycle
    /// before cycle 0 (not recorded), so cycle 0 is the reset cycle and
    /// cycle 1 shows the reset state (`req_ready` 0 in both); the next
    /// call runs cycle 2, the first that can take a request.
    pub fn after_reset(mut unit: Box<dyn PbUnit>) -> Driver {
        unit.step(&PbIn::reset());
        let mut d = Driver::new(unit);
        d.rst_q = true;
        d.idle();
        d.idle();
        d
    }
    pub fn params(&self) -> PbParams {
        *self.unit.params()
    }
    /// The cycle the next call will run.
    pub fn now(&self) -> usize {
        self.hist.len()
    }
    /// One cycle with these inputs (`flush_ready` is or-ed with the
    /// driver's); records handshakes, responses and hooks.
    pub fn cycle(&mut self, mut inp: PbIn) -> PbOut {
        inp.flush_ready |= self.flush_ready;
        let c = self.now();
        let out = self.unit.step(&inp);
        self.hist.push((inp, out));
        // §7: in a cycle with rst and in the reset cycle after it, the
        // outputs belong to the state the reset discards.
        let reset = inp.rst || self.rst_q;
        self.rst_q = inp.rst;
        if reset {
            self.inflight.clear();
            return out;
        }
        if out.rsp_valid {
            if let Some((op, warp, line)) = self.inflight.pop_front() {
                let kind = RspKind::from_bits(out.rsp_kind);
                if op == Op::Store && kind.taken() {
                    self.hooks.insert(line, out.rsp_idx);
                }
                self.responses.push(Response {
                    cycle: c,
                    op,
                    warp,
                    line,
                    kind,
                    idx: out.rsp_idx,
                });
            }
        }
        if inp.req_valid && out.req_ready {
            self.inflight
                .push_back((Op::from_bits(inp.req_op), inp.req_warp, inp.req_line));
        }
        if out.flush_valid && inp.flush_ready {
            self.unacked.push_back(self.flushes.len());
            self.acked_at.push(None);
            self.flushes.push(Flush {
                cycle: c,
                line: out.flush_line,
                warps: out.flush_warps,
                evict: out.flush_evict,
                epoch: out.flush_epoch,
            });
        }
        out
    }
    pub fn reset(&mut self) -> PbOut {
        self.cycle(PbIn::reset())
    }
    /// Presents a request with the line's hook (if a store response set one).
    pub fn req(&mut self, op: Op, warp: u8, line: u32) -> PbOut {
        let mut inp = PbIn::req(op, warp, line);
        if let Some(&k) = self.hooks.get(&line) {
            inp = inp.with_hook(k);
        }
        self.cycle(inp)
    }
    pub fn store(&mut self, warp: u8, line: u32) -> PbOut {
        self.req(Op::Store, warp, line)
    }
    /// Presents a request and runs until its response; returns it.
    pub fn call(&mut self, op: Op, warp: u8, line: u32) -> Response {
        let n = self.responses.len() + self.inflight.len();
        self.req(op, warp, line);
        for _ in 0..RSP_LATENCY + 2 {
            if self.responses.len() > n {
                break;
            }
            self.idle();
        }
        self.responses[n]
    }
    /// Forgets the L1 hook of a line (the L1 installed another line there).
    pub fn forget_hook(&mut self, line: u32) {
        self.hooks.remove(&line);
    }
    pub fn idle(&mut self) -> PbOut {
        self.cycle(PbIn::idle())
    }
    pub fn idle_n(&mut self, n: usize) {
        for _ in 0..n {
            self.idle();
        }
    }
    /// Acknowledges the oldest unacknowledged flush (one this cycle).
    pub fn ack(&mut self) -> PbOut {
        match self.unacked.pop_front() {
            Some(i) => {
                self.acked_at[i] = Some(self.now());
                let e = self.flushes[i].epoch;
                self.cycle(PbIn::idle().with_ack(1, e))
            }
            None => self.idle(),
        }
    }
    pub fn acks(&mut self, n: usize) {
        for _ in 0..n {
            self.ack();
        }
    }
    /// Outputs of cycle `c`.
    pub fn at(&self, c: usize) -> PbOut {
        self.hist[c].1
    }
    /// Flushes taken so far, in order.
    pub fn flushes(&self) -> Vec<Flush> {
        self.flushes.clone()
    }
    pub fn flushed_lines(&self) -> Vec<u32> {
        self.flushes.iter().map(|f| f.line).collect()
    }
    /// Flushes taken and not yet acknowledged.
    pub fn unacked(&self) -> usize {
        self.unacked.len()
    }
    /// Cycles in which warp `w`'s stall bit is set, as a list.
    pub fn stalled_cycles(&self, w: u8) -> Vec<usize> {
        (0..self.hist.len())
            .filter(|&c| self.at(c).stall >> w & 1 == 1)
            .collect()
    }
    /// Occupancy at the start of cycle `c`.
    pub fn count_at(&self, c: usize) -> u32 {
        self.at(c).count(self.unit.params())
    }
    /// Cycle at which each flush's acknowledgement was presented (`None`:
    /// not yet acknowledged).
    pub fn durable_cycles(&self) -> Vec<Option<usize>> {
        self.acked_at.clone()
    }
    /// `drain_all` for one cycle (kernel end).
    pub fn drain(&mut self) -> PbOut {
        self.cycle(PbIn {
            drain_all: true,
            ..PbIn::idle()
        })
    }
}
