//! Lockstep comparator: one input stream into two implementations of the
//! unit, every output and every observed state element compared each cycle.
//!
//! `Lockstep` is itself a `PbUnit`, so any driver (the SM front end, a
//! directed test) runs both sides without knowing it. The first divergence is
//! kept in a shared slot with the last inputs and both sides' outputs, and the
//! driver stops on it; [`write_mismatch_vcds`] turns those cycles into the
//! two waveforms (no replay needed). Signals and widths come from the port
//! table (`sbrp_iface::ports`, docs/microarch.md §2).

use std::cell::RefCell;
use std::fmt;
use std::io::Write;
use std::path::Path;
use std::rc::Rc;

use sbrp_iface::vcd::{write_cycles, WaveError};
use sbrp_iface::{PbIn, PbOut, PbParams, PbUnit};

/// How many recent cycles the comparator keeps for reports and waveforms.
pub const HISTORY: usize = 64;

/// The first divergence between the two sides.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// The SM whose unit diverged.
    pub sm: u32,
    pub cycle: u64,
    /// (signal, value of side A, value of side B)
    pub diffs: Vec<(&'static str, u64, u64)>,
    pub names: (String, String),
    /// The last cycles before and including the divergence: (cycle, inputs, A's outputs, B's outputs).
    pub recent: Vec<(u64, PbIn, PbOut, PbOut)>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "MISMATCH in SM {} at cycle {}: {} vs {}",
            self.sm, self.cycle, self.names.0, self.names.1
        )?;
        for (n, a, b) in &self.diffs {
            writeln!(
                f,
                "  {n:<12} {}={a:#x}  {}={b:#x}",
                self.names.0, self.names.1
            )?;
        }
        writeln!(f, "  last inputs:")?;
        for (c, i, _, _) in self.recent.iter().rev().take(8).rev() {
            writeln!(
                f,
                "    cycle {c:>8}: rst={} req_valid={} op={} warp={} line={} pbv={} pbidx={} flush_ready={} ack={}@{} inv_done={} drain_all={}",
                i.rst as u8,
                i.req_valid as u8,
                i.req_op,
                i.req_warp,
                i.req_line,
                i.req_pbv as u8,
                i.req_pbidx,
                i.flush_ready as u8,
                i.ack_count,
                i.ack_epoch,
                i.inv_done as u8,
                i.drain_all as u8
            )?;
        }
        Ok(())
    }
}

/// Where divergences are reported; shared by every lockstep pair of a run.
pub type MismatchSlot = Rc<RefCell<Option<Mismatch>>>;

/// Two implementations of the unit in lockstep.
pub struct Lockstep {
    pub a: Box<dyn PbUnit>,
    pub b: Box<dyn PbUnit>,
    sm: u32,
    cycle: u64,
    /// The last [`HISTORY`] cycles, cycle `c` at `c % HISTORY` (a ring
    /// written in place: one copy per cycle, no queue bookkeeping).
    recent: Box<[(u64, PbIn, PbOut, PbOut); HISTORY]>,
    slot: MismatchSlot,
    name: String,
}

impl Lockstep {
    /// `sm` names the pair in reports.
    pub fn new(a: Box<dyn PbUnit>, b: Box<dyn PbUnit>, sm: u32, slot: MismatchSlot) -> Self {
        assert_eq!(
            a.params(),
            b.params(),
            "lockstep sides differ in parameters"
        );
        let name = format!("{}+{}", a.name(), b.name());
        Lockstep {
            a,
            b,
            sm,
            cycle: 0,
            recent: Box::new([(0, PbIn::default(), PbOut::default(), PbOut::default()); HISTORY]),
            slot,
            name,
        }
    }

    pub fn cycles(&self) -> u64 {
        self.cycle
    }

    /// Keeps the first divergence (this cycle's), with the cycles before it.
    #[cold]
    #[inline(never)]
    fn report(&self, oa: &PbOut, ob: &PbOut) {
        if self.slot.borrow().is_some() {
            return;
        }
        let first = (self.cycle + 1).saturating_sub(HISTORY as u64);
        let recent = (first..=self.cycle)
            .map(|c| self.recent[c as usize % HISTORY])
            .collect();
        *self.slot.borrow_mut() = Some(Mismatch {
            sm: self.sm,
            cycle: self.cycle,
            diffs: diff(oa, ob),
            names: (self.a.name().to_string(), self.b.name().to_string()),
            recent,
        });
    }
}

/// Signals that differ between two outputs of the same cycle.
pub fn diff(a: &PbOut, b: &PbOut) -> Vec<(&'static str, u64, u64)> {
    a.fields()
        .iter()
        .zip(b.fields().iter())
        .filter(|(x, y)| x.1 != y.1)
        .map(|(x, y)| (x.0, x.1, y.1))
        .collect()
}

impl PbUnit for Lockstep {
    fn params(&self) -> &PbParams {
        self.a.params()
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn step(&mut self, inp: &PbIn) -> PbOut {
        let oa = self.a.step(inp);
        let ob = self.b.step(inp);
        self.recent[self.cycle as usize % HISTORY] = (self.cycle, *inp, oa, ob);
        if oa != ob {
            self.report(&oa, &ob);
        }
        self.cycle += 1;
        oa
    }
    /// Side B's state (the model's, in every pairing the bench builds):
    /// drivers use it to see when the unit stands still.
    fn probes(&self) -> Vec<sbrp_iface::Probe> {
        self.b.probes()
    }
    fn probe_values(&self, out: &mut Vec<u64>) {
        self.b.probe_values(out)
    }
    fn state_key(&self, out: &mut Vec<u64>) {
        self.b.state_key(out)
    }
    fn rsp_latency(&self) -> usize {
        self.b.rsp_latency()
    }
}

/// Every cycle of one unit: (cycle, inputs, outputs).
pub type History = Rc<RefCell<Vec<(u64, PbIn, PbOut)>>>;

/// Passes through to `inner` and keeps every cycle in a shared history (for a
/// waveform of an implementation that cannot write one itself).
pub struct Recorder {
    pub inner: Box<dyn PbUnit>,
    pub sink: History,
}

impl PbUnit for Recorder {
    fn params(&self) -> &PbParams {
        self.inner.params()
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn rsp_latency(&self) -> usize {
        self.inner.rsp_latency()
    }
    fn step(&mut self, inp: &PbIn) -> PbOut {
        let o = self.inner.step(inp);
        let c = self.sink.borrow().len() as u64;
        self.sink.borrow_mut().push((c, *inp, o));
        o
    }
}

/// Writes both sides of a mismatch from the cycles the comparator kept
/// (up to [`HISTORY`], ending with the divergence): side A's ports to
/// `a_path`, side B's to `b_path`, and the report beside B's file (`.txt`).
/// Same writer, names and instants for both, so they line up in a viewer.
pub fn write_mismatch_vcds(
    m: &Mismatch,
    p: &PbParams,
    a_path: &Path,
    b_path: &Path,
) -> Result<(), WaveError> {
    let side = |b: bool| -> Vec<(u64, PbIn, PbOut)> {
        m.recent
            .iter()
            .map(|(c, i, oa, ob)| (*c, *i, if b { *ob } else { *oa }))
            .collect()
    };
    write_cycles(a_path, p, &side(false))?;
    write_cycles(b_path, p, &side(true))?;
    let txt = b_path.with_extension("txt");
    std::fs::File::create(&txt)
        .and_then(|mut f| write!(f, "{m}"))
        .map_err(|source| {
            let _ = std::fs::remove_file(&txt);
            WaveError { path: txt, source }
        })
}
