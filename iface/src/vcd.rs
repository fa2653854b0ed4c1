//! Waveforms (VCD) of the unit's ports (`docs/microarch.md` §2), written the
//! same way for every implementation, so that an RTL file and a model file
//! of the same run line up signal for signal in a viewer.
//!
//! Layout: one scope `sbrp_pb` holding `clock` and every port of
//! [`ports::PORTS`] under its own name (vectors as `integer`, which viewers
//! show without a bit range, so a saved view does not depend on the
//! parameters), then the implementation's
//! [`Probe`]s in sub-scopes (the model's state, §3). One cycle `c` is two
//! time units:
//!
//! * `2c`: clock 0, the cycle's inputs and its Mealy outputs (decisions);
//! * `2c+1`: clock 1 (the rising edge); registered outputs (`stall`, `idle`,
//!   `obs_*`) and probes take the values of the state after the edge.
//!
//! The state after cycle `c`'s edge is what cycle `c+1` returns, so the
//! `2c+1` sample is written when cycle `c+1` arrives: the last cycle's edge
//! shows the clock only. Values are written only when they change.
//!
//! The file is written with the `vcd` crate's writer (the bench reads
//! waveforms with its parser, `sbrp wavediff`).
//!
//! [`Traced`] wraps any [`PbUnit`] and writes its waveform while it runs. A
//! write error (e.g. a full disk) stops the waveform, removes the partial
//! file and is kept in a [`WaveStatus`] shared by the run; it never stops or
//! blocks the simulation itself.

use std::cell::RefCell;
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use vcd::{IdCode, SimulationCommand, TimescaleUnit, Value, VarType};

use crate::ports::{self, Dir, N_IN, PORTS};
use crate::{PbIn, PbOut, PbParams, PbUnit, Probe};

/// Name of the top scope of every waveform.
pub const SCOPE: &str = "sbrp_pb";

/// A waveform that could not be written; its partial file has been removed.
#[derive(Debug)]
pub struct WaveError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl fmt::Display for WaveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot write waveform {}: {}",
            self.path.display(),
            self.source
        )
    }
}

impl std::error::Error for WaveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// VCD variable kind of a signal: vectors are `integer`, because viewers
/// name an `integer` without a bit range (GTKWave calls a 9-bit `wire`
/// `flush_line[8:0]`), so a saved view fits every parameter set.
fn kind(width: u32) -> VarType {
    if width == 1 {
        VarType::Wire
    } else {
        VarType::Integer
    }
}

/// VCD identifier of signal `i` (clock, ports, probes: in declaration order).
fn id(i: usize) -> IdCode {
    IdCode::from(i as u64)
}

/// Which signals a dump looks at.
#[derive(Clone, Copy)]
enum Which {
    Clock,
    Edge,
    Cycle,
    All,
}

/// Writes one waveform file, cycle by cycle.
pub struct WaveWriter {
    w: Option<vcd::Writer<BufWriter<File>>>,
    path: PathBuf,
    /// Port widths, in [`PORTS`] order.
    widths: Vec<u32>,
    probe_widths: Vec<u32>,
    /// Width of every signal: clock, ports, probes.
    all_widths: Vec<u32>,
    /// Signals that change at the clock edge (registered outputs, probes),
    /// and the others (clock, inputs, decisions).
    at_edge: Vec<usize>,
    at_cycle: Vec<usize>,
    /// Last written value of every signal.
    last: Vec<u64>,
    /// The last cycle written.
    prev: Option<u64>,
}

impl WaveWriter {
    /// Creates `path` and writes the header: the ports of `p` and `probes`.
    pub fn create(path: &Path, p: &PbParams, probes: &[Probe]) -> Result<WaveWriter, WaveError> {
        let err = |source| WaveError {
            path: path.to_path_buf(),
            source,
        };
        let f = File::create(path).map_err(err)?;
        let widths: Vec<u32> = PORTS.iter().map(|port| port.bits(p)).collect();
        let probe_widths: Vec<u32> = probes.iter().map(|pr| pr.width.clamp(1, 64)).collect();
        let all_widths: Vec<u32> = std::iter::once(1)
            .chain(widths.iter().copied())
            .chain(probe_widths.iter().copied())
            .collect();
        let n = all_widths.len();
        let edge = |i: usize| i > PORTS.len() || (i >= 1 && PORTS[i - 1].registered);
        let mut me = WaveWriter {
            w: Some(vcd::Writer::new(BufWriter::new(f))),
            path: path.to_path_buf(),
            widths,
            probe_widths,
            at_edge: (0..n).filter(|&i| edge(i)).collect(),
            at_cycle: (0..n).filter(|&i| !edge(i)).collect(),
            last: vec![0; n],
            all_widths,
            prev: None,
        };
        let r = me.header(p, probes);
        me.check(r)?;
        Ok(me)
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn out(&mut self) -> std::io::Result<&mut vcd::Writer<BufWriter<File>>> {
        self.w
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the waveform was abandoned after an error"))
    }

    /// On an error: close and remove the file, and name it in the error.
    fn check<T>(&mut self, r: std::io::Result<T>) -> Result<T, WaveError> {
        r.map_err(|source| {
            self.w = None;
            let _ = std::fs::remove_file(&self.path);
            WaveError {
                path: self.path.clone(),
                source,
            }
        })
    }

    fn header(&mut self, p: &PbParams, probes: &[Probe]) -> std::io::Result<()> {
        let widths = self.widths.clone();
        let w = self.out()?;
        w.version(&format!("sbrp-iface waveform ({})", p.tag()))?;
        w.comment("one cycle c = 2 time units: inputs and decisions at 2c, clock edge and registered state at 2c+1")?;
        w.timescale(1, TimescaleUnit::NS)?;
        w.add_module(SCOPE)?;
        w.var_def(VarType::Wire, 1, id(0), ports::CLOCK, None)?;
        for (i, (port, width)) in PORTS.iter().zip(&widths).enumerate() {
            w.var_def(kind(*width), *width, id(1 + i), port.name, None)?;
        }
        let mut open: Vec<&str> = Vec::new();
        for (k, pr) in probes.iter().enumerate() {
            let want: Vec<&str> = pr.scope.split('.').filter(|s| !s.is_empty()).collect();
            let common = open.iter().zip(&want).take_while(|(a, b)| a == b).count();
            for _ in common..open.len() {
                w.upscope()?;
            }
            open.truncate(common);
            for s in &want[common..] {
                w.add_module(s)?;
                open.push(s);
            }
            let width = pr.width.clamp(1, 64);
            w.var_def(kind(width), width, id(1 + PORTS.len() + k), &pr.name, None)?;
        }
        for _ in &open {
            w.upscope()?;
        }
        w.upscope()?;
        w.enddefinitions()
    }

    fn value(w: &mut vcd::Writer<impl Write>, width: u32, v: u64, i: usize) -> std::io::Result<()> {
        if width == 1 {
            w.change_scalar(id(i), v & 1 == 1)
        } else {
            // The bits from the highest set one down (no leading zeros).
            let top = 64 - v.leading_zeros().min(63);
            w.change_vector(id(i), (0..top).rev().map(|b| Value::from(v >> b & 1 == 1)))
        }
    }

    /// Writes signals `which` (indices into clock, ports, probes) whose value
    /// in `now` differs from the last written one (all of them when `all`).
    fn dump(&mut self, now: &[u64], which: Which, all: bool) -> std::io::Result<()> {
        let idx: &[usize] = match which {
            Which::Clock => &[0],
            Which::Edge => &self.at_edge,
            Which::Cycle => &self.at_cycle,
            Which::All => &[],
        };
        let every: Vec<usize>;
        let idx = if matches!(which, Which::All) {
            every = (0..now.len()).collect();
            &every[..]
        } else {
            idx
        };
        let w = self
            .w
            .as_mut()
            .ok_or_else(|| std::io::Error::other("abandoned"))?;
        for &i in idx {
            if all || self.last[i] != now[i] {
                Self::value(w, self.all_widths[i], now[i], i)?;
                self.last[i] = now[i];
            }
        }
        Ok(())
    }

    /// Writes cycle `c`: its inputs and outputs, and `probes` (the state at
    /// the start of the cycle, in the order given to [`WaveWriter::create`]).
    pub fn cycle(
        &mut self,
        c: u64,
        inp: &PbIn,
        out: &PbOut,
        probes: &[u64],
    ) -> Result<(), WaveError> {
        let r = self.cycle_io(c, inp, out, probes);
        self.check(r)
    }

    fn cycle_io(&mut self, c: u64, inp: &PbIn, out: &PbOut, probes: &[u64]) -> std::io::Result<()> {
        if probes.len() != self.probe_widths.len() {
            return Err(std::io::Error::other(format!(
                "{} probe values for {} probes",
                probes.len(),
                self.probe_widths.len()
            )));
        }
        // Signal vector: clock, ports, probes; each masked to its width.
        let mut now = Vec::with_capacity(self.all_widths.len());
        now.push(0);
        now.extend(inp.values());
        now.extend(out.values());
        now.extend_from_slice(probes);
        for (v, &w) in now.iter_mut().zip(&self.all_widths) {
            if w < 64 {
                *v &= (1u64 << w) - 1;
            }
        }
        match self.prev {
            Some(pc) if pc + 1 == c => {
                // The edge of the previous cycle, with the state after it.
                self.out()?.timestamp(2 * c - 1)?;
                now[0] = 1;
                self.dump(&now, Which::Clock, false)?;
                now[0] = 0;
                self.dump(&now, Which::Edge, false)?;
                self.out()?.timestamp(2 * c)?;
                self.dump(&now, Which::Cycle, false)?;
            }
            prev => {
                if let Some(pc) = prev {
                    let w = self.out()?;
                    w.timestamp(2 * pc + 1)?;
                    w.change_scalar(id(0), true)?;
                }
                let w = self.out()?;
                w.timestamp(2 * c)?;
                w.begin(SimulationCommand::Dumpvars)?;
                self.dump(&now, Which::All, true)?;
                self.out()?.end()?;
            }
        }
        self.prev = Some(c);
        Ok(())
    }

    /// Writes the last edge, flushes and closes the file.
    pub fn finish(mut self) -> Result<PathBuf, WaveError> {
        let r = self.finish_io();
        self.check(r)?;
        Ok(self.path.clone())
    }

    fn finish_io(&mut self) -> std::io::Result<()> {
        if let Some(pc) = self.prev {
            let w = self.out()?;
            w.timestamp(2 * pc + 1)?;
            w.change_scalar(id(0), true)?;
            w.timestamp(2 * pc + 2)?;
        }
        let mut w = self
            .w
            .take()
            .ok_or_else(|| std::io::Error::other("abandoned"))?;
        // A write error shows at the flush; no fsync: a waveform need not
        // be durable, and a run may write many.
        w.flush()?;
        Ok(())
    }
}

/// Writes a whole waveform of `cycles` (cycle, inputs, outputs) without
/// probes; on an error nothing is left at `path`.
pub fn write_cycles(
    path: &Path,
    p: &PbParams,
    cycles: &[(u64, PbIn, PbOut)],
) -> Result<PathBuf, WaveError> {
    let mut w = WaveWriter::create(path, p, &[])?;
    for (c, i, o) in cycles {
        w.cycle(*c, i, o, &[])?;
    }
    w.finish()
}

/// The first waveform error of a run, shared by its [`Traced`] units: the
/// driver stops the run when it is set and reports it.
pub type WaveStatus = Rc<RefCell<Option<WaveError>>>;

/// A unit that writes its own waveform (ports and probes) from cycle `from`
/// on, while it runs. The file is complete when the `Traced` is dropped or
/// [`Traced::finish`]ed; errors go to the shared [`WaveStatus`].
pub struct Traced {
    pub inner: Box<dyn PbUnit>,
    from: u64,
    path: PathBuf,
    writer: Option<WaveWriter>,
    cycle: u64,
    probes: Vec<u64>,
    status: WaveStatus,
    done: bool,
}

impl Traced {
    pub fn new(inner: Box<dyn PbUnit>, path: PathBuf, from: u64, status: WaveStatus) -> Traced {
        Traced {
            inner,
            from,
            path,
            writer: None,
            cycle: 0,
            probes: Vec::new(),
            status,
            done: false,
        }
    }

    fn fail(&mut self, e: WaveError) {
        self.writer = None;
        self.done = true;
        let mut s = self.status.borrow_mut();
        if s.is_none() {
            *s = Some(e);
        }
    }

    /// Completes the file (also done on drop).
    pub fn finish(&mut self) {
        if let Some(w) = self.writer.take() {
            if let Err(e) = w.finish() {
                self.fail(e);
            }
        }
        self.done = true;
    }
}

impl PbUnit for Traced {
    fn params(&self) -> &PbParams {
        self.inner.params()
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn step(&mut self, inp: &PbIn) -> PbOut {
        if self.cycle == self.from && !self.done {
            let probes = self.inner.probes();
            match WaveWriter::create(&self.path, self.inner.params(), &probes) {
                Ok(w) => self.writer = Some(w),
                Err(e) => self.fail(e),
            }
        }
        if self.writer.is_none() {
            self.cycle += 1;
            return self.inner.step(inp);
        }
        // The probes before the step: the state at the start of the cycle.
        self.probes.clear();
        self.inner.probe_values(&mut self.probes);
        let out = self.inner.step(inp);
        let probes = std::mem::take(&mut self.probes);
        if let Some(w) = self.writer.as_mut() {
            if let Err(e) = w.cycle(self.cycle, inp, &out, &probes) {
                self.fail(e);
            }
        }
        self.probes = probes;
        self.cycle += 1;
        out
    }
    fn probes(&self) -> Vec<Probe> {
        self.inner.probes()
    }
    fn probe_values(&self, out: &mut Vec<u64>) {
        self.inner.probe_values(out)
    }
    fn rsp_latency(&self) -> usize {
        self.inner.rsp_latency()
    }
}

impl Drop for Traced {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A GTKWave save file showing every port under [`SCOPE`], inputs, then
/// decisions, then registered state: the same view opens an RTL and a model
/// waveform (`gtkwave -a docs/waves/sbrp_pb.gtkw FILE.vcd`).
pub fn gtkwave_view() -> String {
    let mut s = String::from(
        "[*] GTKWave view of the sbrp_pb ports, for RTL and model waveforms alike.\n\
         [*] Generated by sbrp_iface::vcd::gtkwave_view(); a test keeps it equal.\n\
         [*] Open: gtkwave -a docs/waves/sbrp_pb.gtkw out/NAME.rtl.sm0.vcd\n\
         [timestart] 0\n",
    );
    let group = |s: &mut String, title: &str, ports: &mut dyn Iterator<Item = &ports::Port>| {
        let mut ports = ports.peekable();
        if ports.peek().is_none() {
            return;
        }
        s.push_str(&format!("@200\n-{title}\n"));
        for (name, one_bit) in ports.map(|p| (p.name, p.width == ports::Width::Bits(1))) {
            s.push_str(if one_bit { "@28\n" } else { "@22\n" });
            s.push_str(&format!("{SCOPE}.{name}\n"));
        }
    };
    s.push_str(&format!("@28\n{SCOPE}.{}\n", ports::CLOCK));
    group(&mut s, "inputs", &mut PORTS[..N_IN].iter());
    group(
        &mut s,
        "decisions",
        &mut PORTS.iter().filter(|p| p.dir == Dir::Out && !p.registered),
    );
    group(
        &mut s,
        "registered state",
        &mut PORTS.iter().filter(|p| p.registered),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<(u64, PbIn, PbOut)> {
        (0..4u64)
            .map(|c| {
                let i = PbIn {
                    req_valid: c % 2 == 0,
                    req_line: c as u32 * 3,
                    ..PbIn::default()
                };
                let o = PbOut {
                    req_ready: c % 2 == 0,
                    obs_head: c as u32,
                    ..PbOut::default()
                };
                (c + 10, i, o)
            })
            .collect()
    }

    #[test]
    fn header_has_every_port_once_and_times_follow_the_cycle() {
        let dir = std::env::temp_dir().join(format!("sbrp-iface-vcd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.vcd");
        write_cycles(&path, &PbParams::default(), &sample()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        for port in PORTS {
            let n = text
                .lines()
                .filter(|l| l.starts_with("$var") && l.contains(&format!(" {} $end", port.name)))
                .count();
            assert_eq!(n, 1, "{}\n{text}", port.name);
        }
        assert!(text.contains("$var integer 9 "), "req_line is 9 bits");
        assert!(text.contains("$var wire 1 "), "single bits are wires");
        let times: Vec<u64> = text
            .lines()
            .filter_map(|l| l.strip_prefix('#'))
            .map(|t| t.parse().unwrap())
            .collect();
        // Cycles 10..=13: 20, then (edge, cycle) pairs, then the last edge and the end.
        assert_eq!(times, vec![20, 21, 22, 23, 24, 25, 26, 27, 28]);
        // obs_head (registered) changes at the edge, req_valid (an input) at the cycle.
        let head_id = id(1 + PORTS.iter().position(|p| p.name == "obs_head").unwrap());
        let ready_id = id(1 + PORTS.iter().position(|p| p.name == "req_valid").unwrap());
        let block = |t: u64| -> String {
            let after = text.split(&format!("\n#{t}\n")).nth(1).unwrap();
            after.split("\n#").next().unwrap().to_string()
        };
        assert!(
            block(21).contains(&format!("b1 {head_id}")),
            "{}",
            block(21)
        );
        assert!(
            !block(21).contains(&format!("0{ready_id}")),
            "{}",
            block(21)
        );
        assert!(block(22).contains(&format!("0{ready_id}")), "{}", block(22));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn full_disk_is_an_error_and_leaves_no_file() {
        if !Path::new("/dev/full").exists() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("sbrp-iface-full-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("full.vcd");
        std::os::unix::fs::symlink("/dev/full", &path).unwrap();
        let e = write_cycles(&path, &PbParams::default(), &sample()).unwrap_err();
        assert_eq!(e.path, path);
        assert!(e.to_string().contains("full.vcd"), "{e}");
        assert!(
            std::fs::symlink_metadata(&path).is_err(),
            "partial file left"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `SBRP_BLESS=1 cargo test -p sbrp-iface` rewrites the file.
    #[test]
    fn shipped_gtkwave_view_is_current() {
        if std::env::var_os("SBRP_BLESS").is_some() {
            let f = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/waves/sbrp_pb.gtkw");
            std::fs::write(f, gtkwave_view()).unwrap();
            return;
        }
        assert_eq!(
            include_str!("../../docs/waves/sbrp_pb.gtkw"),
            gtkwave_view(),
            "regenerate docs/waves/sbrp_pb.gtkw from sbrp_iface::vcd::gtkwave_view()"
        );
    }
}
