//! The directed-test driver: one request per cycle, acks by hand, every
//! cycle's inputs and outputs kept for assertions. The spec's directed tests
//! (`docs/microarch.md` §4) run it on every implementation of [`PbUnit`].

use crate::{Op, PbIn, PbOut, PbParams, PbUnit};

/// One flush seen on the unit's outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flush {
    pub cycle: usize,
    pub line: u32,
    pub warps: u64,
    pub evict: bool,
}

/// Drives one unit and records every cycle. Cycle numbers start at 0.
pub struct Driver {
    pub unit: Box<dyn PbUnit>,
    pub hist: Vec<(PbIn, PbOut)>,
}

impl Driver {
    pub fn new(unit: Box<dyn PbUnit>) -> Driver {
        Driver { unit, hist: vec![] }
    }
    pub fn params(&self) -> PbParams {
        *self.unit.params()
    }
    /// The cycle the next call will run.
    pub fn now(&self) -> usize {
        self.hist.len()
    }
    pub fn cycle(&mut self, inp: PbIn) -> PbOut {
        let out = self.unit.step(&inp);
        self.hist.push((inp, out));
        out
    }
    pub fn reset(&mut self) -> PbOut {
        self.cycle(PbIn::reset())
    }
    pub fn req(&mut self, op: Op, warp: u8, line: u32) -> PbOut {
        self.cycle(PbIn::req(op, warp, line))
    }
    pub fn store(&mut self, warp: u8, line: u32) -> PbOut {
        self.req(Op::Store, warp, line)
    }
    pub fn idle(&mut self) -> PbOut {
        self.cycle(PbIn::idle())
    }
    pub fn idle_n(&mut self, n: usize) {
        for _ in 0..n {
            self.idle();
        }
    }
    pub fn ack(&mut self) -> PbOut {
        self.cycle(PbIn::idle().with_ack(true))
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
    pub fn flushes(&self) -> Vec<Flush> {
        self.hist
            .iter()
            .enumerate()
            .filter(|(_, (_, o))| o.flush_valid)
            .map(|(c, (_, o))| Flush {
                cycle: c,
                line: o.flush_line,
                warps: o.flush_warps,
                evict: o.flush_evict,
            })
            .collect()
    }
    pub fn flushed_lines(&self) -> Vec<u32> {
        self.flushes().iter().map(|f| f.line).collect()
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
    /// Cycle at which each flush became durable, assuming the persistence
    /// domain acknowledges flushes in the order they were sent (what the
    /// directed tests do). `None`: not yet acknowledged.
    pub fn durable_cycles(&self) -> Vec<Option<usize>> {
        let fl = self.flushes();
        let acks: Vec<usize> = self
            .hist
            .iter()
            .enumerate()
            .filter(|(_, (i, o))| i.ack && o.obs_actr > 0)
            .map(|(c, _)| c)
            .collect();
        (0..fl.len()).map(|i| acks.get(i).copied()).collect()
    }
}

impl Driver {
    /// `drain_all` for one cycle (kernel end).
    pub fn drain(&mut self) -> PbOut {
        self.cycle(PbIn {
            drain_all: true,
            ..PbIn::idle()
        })
    }
}
