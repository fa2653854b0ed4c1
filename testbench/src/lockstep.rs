//! Lockstep comparator: one input stream into two implementations of the
//! unit, every output and every observed state element compared each cycle.
//!
//! `Lockstep` is itself a `PbUnit`, so any driver (the SM front end, a
//! directed test) runs both sides without knowing it. The first divergence is
//! kept in a shared slot with the last inputs, and the driver stops on it.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::io::Write;
use std::path::Path;
use std::rc::Rc;

use sbrp_iface::{PbIn, PbOut, PbParams, PbUnit};

/// How many recent cycles the comparator keeps for reports and the model VCD.
pub const HISTORY: usize = 64;

/// The first divergence between the two sides.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub unit: String,
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
            "MISMATCH in {} at cycle {}: {} vs {}",
            self.unit, self.cycle, self.names.0, self.names.1
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
                "    cycle {c:>8}: rst={} req_valid={} op={} warp={} line={} ack={} drain_all={}",
                i.rst as u8,
                i.req_valid as u8,
                i.req_op,
                i.req_warp,
                i.req_line,
                i.ack as u8,
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
    label: String,
    cycle: u64,
    recent: VecDeque<(u64, PbIn, PbOut, PbOut)>,
    slot: MismatchSlot,
    name: String,
    /// Turn side A's waveform on at this cycle (and off at the divergence).
    trace_plan: Option<(u64, std::path::PathBuf)>,
}

impl Lockstep {
    /// `label` names the pair in reports (e.g. "SM 1").
    pub fn new(a: Box<dyn PbUnit>, b: Box<dyn PbUnit>, label: &str, slot: MismatchSlot) -> Self {
        assert_eq!(
            a.params(),
            b.params(),
            "lockstep sides differ in parameters"
        );
        let name = format!("{}+{}", a.name(), b.name());
        Lockstep {
            a,
            b,
            label: label.into(),
            cycle: 0,
            recent: VecDeque::with_capacity(HISTORY + 1),
            slot,
            name,
            trace_plan: None,
        }
    }
    /// Side A writes a waveform to `path` from cycle `from` on.
    pub fn trace_a_from(mut self, from: u64, path: std::path::PathBuf) -> Self {
        self.trace_plan = Some((from, path));
        self
    }

    pub fn cycles(&self) -> u64 {
        self.cycle
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
        if let Some((from, path)) = &self.trace_plan {
            if *from == self.cycle {
                if let Err(e) = self.a.set_trace(Some(path)) {
                    eprintln!("sbrp: {e}");
                }
            }
        }
        let oa = self.a.step(inp);
        let ob = self.b.step(inp);
        if self.recent.len() == HISTORY {
            self.recent.pop_front();
        }
        self.recent.push_back((self.cycle, *inp, oa, ob));
        if oa != ob && self.slot.borrow().is_none() {
            // The waveform ends with the divergence.
            let _ = self.a.set_trace(None);
            *self.slot.borrow_mut() = Some(Mismatch {
                unit: self.label.clone(),
                cycle: self.cycle,
                diffs: diff(&oa, &ob),
                names: (self.a.name().to_string(), self.b.name().to_string()),
                recent: self.recent.iter().copied().collect(),
            });
        }
        self.cycle += 1;
        oa
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
    fn step(&mut self, inp: &PbIn) -> PbOut {
        let o = self.inner.step(inp);
        let c = self.sink.borrow().len() as u64;
        self.sink.borrow_mut().push((c, *inp, o));
        o
    }
}

/// Port widths of the unit, as the RTL declares them (`docs/microarch.md` §2).
pub fn port_widths(p: &PbParams) -> Vec<(&'static str, u32)> {
    let (lw, iw, w, a) = (p.line_bits(), p.idx_bits(), p.warps, p.actr_bits);
    vec![
        ("rst", 1),
        ("req_valid", 1),
        ("req_op", 3),
        ("req_warp", 6),
        ("req_line", lw),
        ("ack", 1),
        ("drain_all", 1),
        ("req_ready", 1),
        ("req_wait", 1),
        ("flush_valid", 1),
        ("flush_line", lw),
        ("flush_warps", w),
        ("flush_evict", 1),
        ("inv_pm", 1),
        ("stall", w),
        ("idle", 1),
        ("obs_odm", w),
        ("obs_edm", w),
        ("obs_fsm", w),
        ("obs_actr", a),
        ("obs_head", iw),
        ("obs_tail", iw),
        ("obs_full", 1),
        ("obs_drain", 1),
    ]
}

fn values(i: &PbIn, o: &PbOut) -> Vec<u64> {
    let mut v = vec![
        i.rst as u64,
        i.req_valid as u64,
        i.req_op as u64,
        i.req_warp as u64,
        i.req_line as u64,
        i.ack as u64,
        i.drain_all as u64,
    ];
    v.extend(o.fields().iter().map(|f| f.1));
    v
}

/// Writes a VCD of one side's ports over `cycles` (cycle, inputs, outputs),
/// under the RTL's signal names (scope `TOP.sbrp_pb`), one cycle = 2 time
/// units with the rising clock edge at the odd time, as the Verilator shim
/// dumps, so both files line up in GTKWave.
pub fn write_vcd(path: &Path, p: &PbParams, cycles: &[(u64, PbIn, PbOut)]) -> std::io::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut w = vcd::Writer::new(std::io::BufWriter::new(f));
    w.timescale(1, vcd::TimescaleUnit::PS)?;
    w.add_module("TOP")?;
    w.add_module("sbrp_pb")?;
    let clk = w.add_wire(1, "clock")?;
    let ids: Vec<(vcd::IdCode, u32)> = port_widths(p)
        .iter()
        .map(|(n, width)| Ok((w.add_wire(*width, n)?, *width)))
        .collect::<std::io::Result<_>>()?;
    w.upscope()?;
    w.upscope()?;
    w.enddefinitions()?;
    let bits = |v: u64, width: u32| -> Vec<vcd::Value> {
        (0..width)
            .rev()
            .map(|b| {
                if v >> b & 1 == 1 {
                    vcd::Value::V1
                } else {
                    vcd::Value::V0
                }
            })
            .collect()
    };
    for (c, i, o) in cycles {
        w.timestamp(2 * c)?;
        w.change_scalar(clk, vcd::Value::V0)?;
        for ((id, width), v) in ids.iter().zip(values(i, o)) {
            if *width == 1 {
                w.change_scalar(*id, bits(v, 1)[0])?;
            } else {
                w.change_vector(*id, bits(v, *width))?;
            }
        }
        w.timestamp(2 * c + 1)?;
        w.change_scalar(clk, vcd::Value::V1)?;
    }
    if let Some((c, _, _)) = cycles.last() {
        w.timestamp(2 * c + 2)?;
    }
    w.flush()?;
    Ok(())
}

/// Writes the model's side of a mismatch as a VCD (`B` side of the pair).
pub fn write_mismatch_vcd(m: &Mismatch, p: &PbParams, path: &Path) -> std::io::Result<()> {
    let cycles: Vec<(u64, PbIn, PbOut)> =
        m.recent.iter().map(|(c, i, _, b)| (*c, *i, *b)).collect();
    write_vcd(path, p, &cycles)?;
    let mut txt = std::fs::File::create(path.with_extension("txt"))?;
    write!(txt, "{m}")?;
    Ok(())
}
