//! Silicon area, timing and formal proofs of the persist buffer unit.
//!
//! * [`cmd_area`] (`sbrp area`): emits the Verilog, synthesizes it with Yosys
//!   against a standard-cell library (`constraints/synth.conf`,
//!   `scripts/synth_area.ys`, `scripts/abc_delay.abc`), splits nets of high
//!   fan-out into buffer trees, runs OpenSTA (`scripts/sta_timing.tcl`,
//!   `constraints/sbrp_pb.sdc`) and reports cells, area per block, flip-flop
//!   bits against the spec's storage table, worst slack, the critical path and
//!   the highest clock. `--sweep` repeats it over entries x warps.
//! * [`cmd_prove`] (`sbrp prove`): the formal wrapper `formal/sbrp_pb_formal.sv`
//!   around the unit, proved by Yosys's SAT-based temporal induction
//!   (`formal/prove.ys`), on the real RTL and on deliberately broken variants.
//!
//! The scripts are compiled into the binary (`include_str!`), so the command
//! works from any directory; the tools are found on `PATH` (or through
//! `SBRP_YOSYS`, `SBRP_STA`; the liberty through `SBRP_LIBERTY`).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use sbrp_iface::{storage_totals, FlushPolicy, PbParams};

const SYNTH_YS: &str = include_str!("../../scripts/synth_area.ys");
const ABC_SCRIPT: &str = include_str!("../../scripts/abc_delay.abc");
const STA_TCL: &str = include_str!("../../scripts/sta_timing.tcl");
const SDC: &str = include_str!("../../constraints/sbrp_pb.sdc");
const SYNTH_CONF: &str = include_str!("../../constraints/synth.conf");
const FORMAL_WRAPPER: &str = include_str!("../../formal/sbrp_pb_formal.sv");
const PROVE_YS: &str = include_str!("../../formal/prove.ys");

/// The paper's SM clock (SBRP, Table 1).
pub const PAPER_CLOCK_MHZ: f64 = 1365.0;

/// Entries and warps of `sbrp area --sweep`.
pub const SWEEP_ENTRIES: [u32; 5] = [32, 64, 128, 256, 512];
pub const SWEEP_WARPS: [u32; 2] = [32, 64];

// ---------------------------------------------------------------------------
// Command-line arguments
// ---------------------------------------------------------------------------

/// Arguments of `sbrp area`.
#[derive(Args, Clone, Debug)]
pub struct AreaArgs {
    /// PB entries: a power of two from 16 to 512.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub entries: u32,
    /// Resident warps per SM: 4, 8, 16, 32 or 64.
    #[arg(long, value_name = "W", default_value_t = 32)]
    pub warps: u32,
    /// L1 cache lines: a power of two from --entries to 1024.
    #[arg(long, value_name = "L", default_value_t = 512)]
    pub lines: u32,
    /// Flush window (1 to 2^8 - 1).
    #[arg(long, value_name = "K", default_value_t = 6)]
    pub window: u32,
    /// Synthesize entries {32,64,128,256,512} x warps {32,64} (lines 512) and
    /// print a table; writes sweep.csv into --out.
    #[arg(long)]
    pub sweep: bool,
    /// Directory for the reports (report.txt, area.csv or sweep.csv, the
    /// mapped netlist and the tool logs); written only when the flow succeeds.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Skip OpenSTA (area only).
    #[arg(long)]
    pub no_timing: bool,
}

/// Arguments of `sbrp prove`.
#[derive(Args, Clone, Debug)]
pub struct ProveArgs {
    /// PB entries (small: the proofs grow with N^2).
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub entries: u32,
    /// Resident warps per SM.
    #[arg(long, value_name = "W", default_value_t = 4)]
    pub warps: u32,
    /// L1 cache lines.
    #[arg(long, value_name = "L", default_value_t = 16)]
    pub lines: u32,
    /// Prove only this property (actr, overflow, fsm_gate, release, flush_order); default all.
    #[arg(long, value_name = "NAME")]
    pub property: Option<String>,
    /// Also run each property's broken variant and require its proof to fail.
    #[arg(long)]
    pub broken: bool,
    /// Directory for the Yosys logs; written only when every run behaved as expected.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

// ---------------------------------------------------------------------------
// Configuration, tools, scratch directories
// ---------------------------------------------------------------------------

/// Library and options of the flow (`constraints/synth.conf`).
#[derive(Clone, Debug)]
pub struct SynthConf {
    pub liberty: PathBuf,
    pub liberty_package: String,
    pub library_name: String,
    pub abc_delay_ps: u32,
    pub max_fanout: usize,
    pub buffer_cell: String,
    pub buffer_in: String,
    pub buffer_out: String,
    pub nand2_cell: String,
}

impl SynthConf {
    /// The built-in `constraints/synth.conf`, with `SBRP_LIBERTY` applied.
    pub fn load() -> Result<SynthConf> {
        let mut c = SynthConf::parse(SYNTH_CONF)?;
        if let Some(l) = std::env::var_os("SBRP_LIBERTY") {
            c.liberty = PathBuf::from(l);
        }
        Ok(c)
    }

    pub fn parse(text: &str) -> Result<SynthConf> {
        let mut kv = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| anyhow!("synth.conf line {}: expected `key = value`", n + 1))?;
            kv.insert(k.trim().to_string(), v.trim().to_string());
        }
        let get = |k: &str| -> Result<String> {
            kv.get(k)
                .cloned()
                .ok_or_else(|| anyhow!("synth.conf: missing `{k}`"))
        };
        Ok(SynthConf {
            liberty: PathBuf::from(get("liberty")?),
            liberty_package: get("liberty_package")?,
            library_name: get("library_name")?,
            abc_delay_ps: get("abc_delay_ps")?
                .parse()
                .context("synth.conf: abc_delay_ps")?,
            max_fanout: get("max_fanout")?
                .parse()
                .context("synth.conf: max_fanout")?,
            buffer_cell: get("buffer_cell")?,
            buffer_in: get("buffer_in")?,
            buffer_out: get("buffer_out")?,
            nand2_cell: get("nand2_cell")?,
        })
    }
}

fn tool_path(env: &str, default: &str) -> String {
    std::env::var(env).unwrap_or_else(|_| default.to_string())
}

/// Checks that `tool` runs; a missing tool gets an installation hint.
pub fn require_tool(tool: &str, probe: &[&str], package: &str) -> Result<()> {
    match Command::new(tool).args(probe).output() {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "`{tool}` not found: install it with `sudo apt-get install {package}` \
             (Debian/Ubuntu; scripts/setup.sh does it), or point {} at it",
            if package == "opensta" {
                "SBRP_STA"
            } else {
                "SBRP_YOSYS"
            }
        ),
        Err(e) => bail!("cannot run `{tool}`: {e}"),
    }
}

pub fn require_liberty(conf: &SynthConf) -> Result<()> {
    if !conf.liberty.is_file() {
        bail!(
            "standard-cell library {} not found: install it with `sudo apt-get install {}` \
             (Debian/Ubuntu; scripts/setup.sh does it), or set SBRP_LIBERTY to a liberty file",
            conf.liberty.display(),
            conf.liberty_package
        );
    }
    Ok(())
}

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Result<Scratch> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("sbrp-{what}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Scratch(dir))
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The tool's own error lines (and a little context) from its output.
fn error_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut keep = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if t.starts_with("ERROR") || t.starts_with("Error") || t.contains("error:") {
            let from = i.saturating_sub(2);
            for (j, line) in lines.iter().enumerate().take(i + 1).skip(from) {
                if !keep.iter().any(|(k, _)| *k == j) {
                    keep.push((j, *line));
                }
            }
        }
    }
    if keep.is_empty() {
        // No tagged line: the last lines of the output.
        let from = lines.len().saturating_sub(12);
        return lines[from..].join("\n");
    }
    keep.iter()
        .take(40)
        .map(|(_, l)| *l)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs a tool; on failure the error carries the tool's own error lines.
fn run_tool(cmd: &mut Command, what: &str, log: &Path) -> Result<String> {
    let out = cmd.output().with_context(|| format!("cannot run {what}"))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if let Ok(l) = std::fs::read_to_string(log) {
        if !l.is_empty() {
            text = l + &text;
        }
    } else {
        let _ = std::fs::write(log, &text);
    }
    if !out.status.success() {
        bail!("{what} failed ({}):\n{}", out.status, error_lines(&text));
    }
    Ok(text)
}

fn fill(template: &str, vars: &[(&str, String)]) -> String {
    let mut s = template.to_string();
    for (k, v) in vars {
        s = s.replace(&format!("@{k}@"), v);
    }
    s
}

/// Copies the files of `from` into `to` (created), through a temporary
/// directory renamed into place file by file, so a failure leaves nothing half written.
fn publish(from: &Path, to: &Path, files: &[&str]) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for f in files {
        let src = from.join(f);
        if !src.exists() {
            continue;
        }
        let tmp = to.join(format!(".{f}.tmp"));
        std::fs::copy(&src, &tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, to.join(f))
            .with_context(|| format!("cannot write {}", to.join(f).display()))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Liberty and netlist
// ---------------------------------------------------------------------------

/// What the flow needs of a liberty file: area, pin directions, sequential cells.
#[derive(Clone, Debug, Default)]
pub struct Liberty {
    pub area: HashMap<String, f64>,
    pub outputs: HashMap<String, Vec<String>>,
    pub sequential: Vec<String>,
}

impl Liberty {
    pub fn parse(text: &str) -> Liberty {
        let mut lib = Liberty::default();
        let mut cell: Option<String> = None;
        let mut pin: Option<String> = None;
        let group_name = |l: &str, kw: &str| -> Option<String> {
            let rest = l.strip_prefix(kw)?.trim_start();
            let rest = rest.strip_prefix('(')?;
            let end = rest.find(')')?;
            Some(rest[..end].trim().trim_matches('"').to_string())
        };
        for raw in text.lines() {
            let l = raw.trim();
            if let Some(c) = group_name(l, "cell") {
                cell = Some(c);
                pin = None;
            } else if let Some(p) = group_name(l, "pin") {
                pin = Some(p);
            } else if let Some(c) = &cell {
                if let Some(v) = l.strip_prefix("area") {
                    let v = v
                        .trim_start_matches([' ', ':'])
                        .trim_end_matches(';')
                        .trim();
                    if let Ok(a) = v.parse::<f64>() {
                        lib.area.insert(c.clone(), a);
                    }
                } else if l.starts_with("direction") && l.contains("output") {
                    if let Some(p) = &pin {
                        lib.outputs.entry(c.clone()).or_default().push(p.clone());
                    }
                } else if (l.starts_with("ff ") || l.starts_with("ff(") || l.starts_with("latch"))
                    && !lib.sequential.contains(c)
                {
                    lib.sequential.push(c.clone());
                }
            }
        }
        lib
    }
    fn is_output(&self, cell: &str, pin: &str) -> bool {
        self.outputs
            .get(cell)
            .is_some_and(|o| o.iter().any(|p| p == pin))
    }
}

/// One cell instance of a mapped netlist (pins on their own lines, as Yosys writes them).
#[derive(Clone, Debug)]
struct Inst {
    cell: String,
    /// (line index, pin, connection)
    pins: Vec<(usize, String, String)>,
}

#[derive(Clone, Debug)]
struct NetModule {
    name: String,
    lines: Vec<String>,
    header_end: usize,
    insts: Vec<Inst>,
}

fn parse_netlist(text: &str) -> Vec<NetModule> {
    let mut mods = Vec::new();
    let mut cur: Option<NetModule> = None;
    let mut inst: Option<Inst> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("module ") {
            let name: String = rest
                .trim_start_matches('\\')
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '(')
                .collect();
            cur = Some(NetModule {
                name,
                lines: vec![line.to_string()],
                header_end: usize::MAX,
                insts: Vec::new(),
            });
            if line.trim_end().ends_with(';') {
                cur.as_mut().unwrap().header_end = 0;
            }
            continue;
        }
        let Some(m) = cur.as_mut() else { continue };
        let idx = m.lines.len();
        m.lines.push(line.to_string());
        if m.header_end == usize::MAX {
            if line.trim_end().ends_with(';') {
                m.header_end = idx;
            }
            continue;
        }
        if line.trim() == "endmodule" {
            mods.push(cur.take().unwrap());
            continue;
        }
        if let Some(i) = inst.as_mut() {
            let t = line.trim();
            if t == ");" {
                m.insts.push(inst.take().unwrap());
            } else if let Some(p) = t.strip_prefix('.') {
                if let (Some(a), Some(b)) = (p.find('('), p.rfind(')')) {
                    i.pins
                        .push((idx, p[..a].to_string(), p[a + 1..b].trim().to_string()));
                }
            }
            continue;
        }
        if line.starts_with("  ") && !line.starts_with("   ") && line.trim_end().ends_with('(') {
            let mut it = line.split_whitespace();
            let (Some(cell), Some(name)) = (it.next(), it.next()) else {
                continue;
            };
            if matches!(
                cell,
                "wire" | "input" | "output" | "inout" | "reg" | "assign"
            ) {
                continue;
            }
            let _ = name;
            inst = Some(Inst {
                cell: cell.trim_start_matches('\\').to_string(),
                pins: Vec::new(),
            });
        }
    }
    mods
}

/// Splits every net with more than `max_fanout` loads on library-cell inputs
/// into a tree of buffers. Returns the new netlist and the number of buffers.
fn repair_fanout(text: &str, lib: &Liberty, conf: &SynthConf) -> (String, u64) {
    let mut mods = parse_netlist(text);
    let mut added = 0u64;
    let f = conf.max_fanout.max(2);
    for m in &mut mods {
        let mut loads: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for inst in &m.insts {
            if !lib.area.contains_key(&inst.cell) {
                continue; // a sub-module instance: its pins are not rewired
            }
            for (line, pin, conn) in &inst.pins {
                let constant = conn.starts_with(|c: char| c.is_ascii_digit());
                if lib.is_output(&inst.cell, pin) || constant || conn == "clock" {
                    continue;
                }
                loads.entry(conn.clone()).or_default().push(*line);
            }
        }
        let mut decls = Vec::new();
        // (new net, index into buf_inputs) while a tree is built, then the
        // buffer's instance text.
        let mut bufs: Vec<(String, usize)> = Vec::new();
        for (net, pins) in loads {
            if pins.len() <= f {
                continue;
            }
            // Sinks: existing pin lines or inputs of new buffers.
            enum Sink {
                Pin(usize),
                Buf(usize),
            }
            let mut sinks: Vec<Sink> = pins.into_iter().map(Sink::Pin).collect();
            let mut buf_inputs: Vec<Option<String>> = Vec::new();
            let base = bufs.len();
            while sinks.len() > f {
                let mut next = Vec::new();
                for group in sinks.chunks(f) {
                    let n = format!("_sbrp_fo{}_", decls.len());
                    decls.push(format!("  wire {n};"));
                    for s in group {
                        match s {
                            Sink::Pin(l) => {
                                let line = &m.lines[*l];
                                let a = line.find('(').unwrap();
                                let b = line.rfind(')').unwrap();
                                m.lines[*l] = format!("{}({n}){}", &line[..a], &line[b + 1..]);
                            }
                            Sink::Buf(k) => buf_inputs[*k] = Some(n.clone()),
                        }
                    }
                    buf_inputs.push(None);
                    bufs.push((n, buf_inputs.len() - 1));
                    next.push(Sink::Buf(buf_inputs.len() - 1));
                }
                sinks = next;
            }
            for s in &sinks {
                match s {
                    Sink::Pin(_) => {}
                    Sink::Buf(k) => buf_inputs[*k] = Some(net.clone()),
                }
            }
            // Emit this net's buffers.
            let mine: Vec<(String, usize)> = bufs.drain(base..).collect();
            for (out, k) in mine {
                let input = buf_inputs[k].clone().unwrap_or_else(|| net.clone());
                bufs.push((
                    format!(
                        "  {cell} _sbrp_fob{}_ (\n    .{i}({input} ),\n    .{o}({out})\n  );",
                        added,
                        cell = conf.buffer_cell,
                        i = conf.buffer_in,
                        o = conf.buffer_out
                    ),
                    usize::MAX,
                ));
                added += 1;
            }
        }
        if !decls.is_empty() {
            let end = m.lines.len() - 1;
            let body: Vec<String> = bufs.into_iter().map(|(b, _)| b).collect();
            m.lines.splice(end..end, body);
            let h = m.header_end + 1;
            m.lines.splice(h..h, decls);
        }
    }
    let mut out = String::new();
    for m in mods {
        for l in m.lines {
            out.push_str(&l);
            out.push('\n');
        }
        out.push('\n');
    }
    (out, added)
}

/// Cells, area and flip-flops of one module of the mapped netlist (own cells only).
#[derive(Clone, Debug, Default)]
pub struct ModuleArea {
    pub module: String,
    pub cells: u64,
    pub area_um2: f64,
    pub ff_bits: u64,
}

fn module_areas(text: &str, lib: &Liberty) -> Result<(Vec<ModuleArea>, HashMap<String, u64>)> {
    let mods = parse_netlist(text);
    let mut out = Vec::new();
    let mut cell_counts: HashMap<String, u64> = HashMap::new();
    let names: Vec<String> = mods.iter().map(|m| m.name.clone()).collect();
    // Instance multiplicity of each module from the top.
    let mut mult: HashMap<String, u64> = HashMap::new();
    mult.insert("sbrp_pb".into(), 1);
    for _ in 0..8 {
        for m in &mods {
            let k = *mult.get(&m.name).unwrap_or(&0);
            for i in &m.insts {
                if names.contains(&i.cell) {
                    let e = mult.entry(i.cell.clone()).or_insert(0);
                    *e = (*e).max(k);
                }
            }
        }
    }
    for m in &mods {
        let k = *mult.get(&m.name).unwrap_or(&0);
        let mut a = ModuleArea {
            module: m.name.clone(),
            ..ModuleArea::default()
        };
        for i in &m.insts {
            if names.contains(&i.cell) {
                continue;
            }
            let area = lib
                .area
                .get(&i.cell)
                .ok_or_else(|| anyhow!("cell {} of the netlist is not in the liberty", i.cell))?;
            a.cells += k;
            a.area_um2 += area * k as f64;
            if lib.sequential.contains(&i.cell) {
                a.ff_bits += k;
            }
            *cell_counts.entry(i.cell.clone()).or_insert(0) += k;
        }
        out.push(a);
    }
    Ok((out, cell_counts))
}

/// Block of the report that module (or instance) `m` belongs to.
pub fn block_of(m: &str) -> &'static str {
    let m = m.strip_prefix("sbrp_pb$").unwrap_or(m);
    match m {
        "m_type" | "m_warps" | "m_line" | "m_snapv" | "m_snapi" => "PB storage",
        "r_odm" | "r_edm" | "r_fsm" | "r_actr" => "warp masks and ACTR",
        "m_l1idx" => "L1 hooks",
        _ => "ordering checks and control",
    }
}

const BLOCKS: [&str; 4] = [
    "PB storage",
    "warp masks and ACTR",
    "L1 hooks",
    "ordering checks and control",
];

/// Cells of Yosys's internal gate library after `synth` (`$_AND_`, `$_MUX_`,
/// `$_DFF_...`), summed over the modules of the hierarchy.
fn generic_cells(stat: &str) -> u64 {
    let mut total = 0;
    let mut in_hier = false;
    for l in stat.lines() {
        let t = l.trim();
        if t.starts_with("=== design hierarchy") {
            in_hier = true;
        }
        if in_hier {
            continue;
        }
        let mut it = t.split_whitespace();
        if let (Some(name), Some(n), None) = (it.next(), it.next(), it.next()) {
            if name.starts_with("$_") {
                total += n.parse::<u64>().unwrap_or(0);
            }
        }
    }
    total
}

// ---------------------------------------------------------------------------
// The area and timing flow
// ---------------------------------------------------------------------------

#[derive(Clone, Debug)]
pub struct BlockArea {
    pub block: &'static str,
    pub cells: u64,
    pub area_um2: f64,
    pub ff_bits: u64,
}

#[derive(Clone, Debug)]
pub struct TimingReport {
    /// Clock period of the check (the paper's clock), ns.
    pub period_ns: f64,
    /// Worst setup slack at that clock, ns.
    pub wns_ns: f64,
    /// Shortest period that the design meets (same relative I/O delays), ns.
    pub min_period_ns: f64,
    pub fmax_mhz: f64,
    pub path_start: String,
    pub path_end: String,
    /// Arrival time at the end of the critical path, ns.
    pub path_arrival_ns: f64,
    /// Blocks the critical path crosses, in order (instance names in brackets).
    pub path_blocks: Vec<String>,
    /// Worst delay from the inputs to req_ready/req_wait (the ordering checks), ns.
    pub ordering_delay_ns: f64,
    /// The critical path as OpenSTA printed it.
    pub path_text: String,
}

#[derive(Clone, Debug)]
pub struct AreaReport {
    pub params: PbParams,
    pub library: String,
    pub cells: u64,
    pub area_um2: f64,
    pub cell_counts: BTreeMap<String, u64>,
    pub blocks: Vec<BlockArea>,
    pub modules: Vec<ModuleArea>,
    pub ff_bits: u64,
    pub spec_bits: u64,
    pub paper_bits: u64,
    pub ff_area_um2: f64,
    /// Buffers added by the fan-out repair (included in cells and area).
    pub fanout_buffers: u64,
    pub generic_cells: u64,
    /// Area over the area of one NAND2 of the library.
    pub nand2_equivalents: f64,
    pub timing: Option<TimingReport>,
    pub synth_seconds: f64,
}

impl AreaReport {
    /// Share of the area that is not flip-flops.
    pub fn non_storage_share(&self) -> f64 {
        if self.area_um2 > 0.0 {
            1.0 - self.ff_area_um2 / self.area_um2
        } else {
            0.0
        }
    }
}

fn parse_f(line: &str, key: &str) -> Option<f64> {
    line.strip_prefix(key)?.trim().parse().ok()
}

fn parse_sta(text: &str, sdc_period: f64) -> Result<TimingReport> {
    let mut wns = None;
    let mut minp = None;
    let mut ord = None;
    let mut period = sdc_period;
    let (mut start, mut end, mut arrival) = (String::new(), String::new(), 0.0);
    let mut blocks: Vec<String> = Vec::new();
    let mut path_text = String::new();
    let mut in_path = false;
    for l in text.lines() {
        if let Some(v) = parse_f(l, "SBRP_WNS") {
            wns = Some(v);
        } else if let Some(v) = parse_f(l, "SBRP_FMAX_PERIOD") {
            minp = Some(v);
        } else if let Some(v) = parse_f(l, "SBRP_ORDERING_DELAY") {
            ord = Some(ord.map_or(v, |o: f64| o.max(v)));
        } else if let Some(v) = parse_f(l, "SBRP_PERIOD") {
            period = v;
        }
        if let Some(sp) = l.strip_prefix("Startpoint:") {
            in_path = true;
            start = sp.trim().to_string();
        }
        if l.starts_with("SBRP_PATH_END") {
            in_path = false;
        }
        if !in_path {
            continue;
        }
        path_text.push_str(l);
        path_text.push('\n');
        if let Some(e) = l.strip_prefix("Endpoint:") {
            end = e.trim().to_string();
        }
        if l.trim_end().ends_with("data arrival time") && arrival == 0.0 {
            if let Some(v) = l.split_whitespace().next().and_then(|v| v.parse().ok()) {
                arrival = v;
            }
        }
        // Pin lines: "  delay  time ^ inst/cell/PIN (TYPE)" or "... port (in)".
        let toks: Vec<&str> = l.split_whitespace().collect();
        let is_port = toks.len() >= 5 && (toks[4] == "(in)" || toks[4] == "(out)");
        if toks.len() >= 5
            && (toks[2] == "^" || toks[2] == "v")
            && (toks[3].contains('/') || is_port)
        {
            let pin = toks[3];
            let parts: Vec<&str> = pin.split('/').collect();
            let b = if toks[4] == "(in)" || toks[4] == "(out)" {
                format!("port {pin}")
            } else if parts.len() >= 3 {
                format!("{} [{}]", block_of(parts[0]), parts[0])
            } else {
                format!("{} [sbrp_pb]", block_of("sbrp_pb"))
            };
            if blocks.last() != Some(&b) {
                blocks.push(b);
            }
        }
    }
    let wns =
        wns.ok_or_else(|| anyhow!("OpenSTA printed no worst slack:\n{}", error_lines(text)))?;
    let minp = minp.ok_or_else(|| anyhow!("OpenSTA printed no minimum period"))?;
    Ok(TimingReport {
        period_ns: period,
        wns_ns: wns,
        min_period_ns: minp,
        fmax_mhz: 1000.0 / minp,
        path_start: start,
        path_end: end,
        path_arrival_ns: arrival,
        path_blocks: blocks,
        ordering_delay_ns: ord.unwrap_or(f64::NAN),
        path_text,
    })
}

/// Runs synthesis (and OpenSTA when `timing`) for `p` in `dir`.
pub fn run_area_flow(p: &PbParams, dir: &Path, timing: bool) -> Result<AreaReport> {
    let verilog = generate(p)?;
    run_area_flow_on(p, &verilog, dir, timing)
}

/// The flow on a given Verilog text of the unit (top module `sbrp_pb`).
pub fn run_area_flow_on(
    p: &PbParams,
    verilog: &str,
    dir: &Path,
    timing: bool,
) -> Result<AreaReport> {
    let conf = SynthConf::load()?;
    let yosys = tool_path("SBRP_YOSYS", "yosys");
    require_tool(&yosys, &["-V"], "yosys")?;
    require_liberty(&conf)?;
    let sta = tool_path("SBRP_STA", "sta");
    if timing {
        require_tool(&sta, &["-version"], "opensta")?;
    }
    let t0 = Instant::now();
    let vpath = dir.join("sbrp_pb.v");
    write(&vpath, verilog)?;
    let abc = dir.join("abc_delay.abc");
    write(&abc, ABC_SCRIPT)?;
    let liberty = conf.liberty.display().to_string();
    let ys = fill(
        SYNTH_YS,
        &[
            ("VERILOG", vpath.display().to_string()),
            ("OUT", dir.display().to_string()),
            ("LIBERTY", liberty.clone()),
            ("DELAY_PS", conf.abc_delay_ps.to_string()),
            ("ABC_SCRIPT", abc.display().to_string()),
        ],
    );
    let ys_path = dir.join("synth_area.ys");
    write(&ys_path, &ys)?;
    let log = dir.join("yosys.log");
    run_tool(
        Command::new(&yosys)
            .arg("-q")
            .arg("-l")
            .arg(&log)
            .arg("-s")
            .arg(&ys_path),
        "yosys synthesis",
        &log,
    )?;
    let lib_text = std::fs::read_to_string(&conf.liberty)
        .with_context(|| format!("cannot read {}", conf.liberty.display()))?;
    let lib = Liberty::parse(&lib_text);
    let mapped =
        std::fs::read_to_string(dir.join("sbrp_pb_mapped.v")).context("yosys wrote no netlist")?;
    let (repaired, buffers) = repair_fanout(&mapped, &lib, &conf);
    let netlist = dir.join("sbrp_pb_netlist.v");
    write(&netlist, &repaired)?;
    let (modules, counts) = module_areas(&repaired, &lib)?;
    let generic =
        generic_cells(&std::fs::read_to_string(dir.join("stat_generic.txt")).unwrap_or_default());
    let synth_seconds = t0.elapsed().as_secs_f64();

    let mut blocks: Vec<BlockArea> = BLOCKS
        .iter()
        .map(|b| BlockArea {
            block: b,
            cells: 0,
            area_um2: 0.0,
            ff_bits: 0,
        })
        .collect();
    for m in &modules {
        let b = blocks
            .iter_mut()
            .find(|b| b.block == block_of(&m.module))
            .unwrap();
        b.cells += m.cells;
        b.area_um2 += m.area_um2;
        b.ff_bits += m.ff_bits;
    }
    let cells: u64 = modules.iter().map(|m| m.cells).sum();
    let area: f64 = modules.iter().map(|m| m.area_um2).sum();
    let ff_bits: u64 = modules.iter().map(|m| m.ff_bits).sum();
    let ff_area: f64 = counts
        .iter()
        .filter(|(c, _)| lib.sequential.contains(c))
        .map(|(c, n)| lib.area[c] * *n as f64)
        .sum();
    let nand2 = *lib
        .area
        .get(&conf.nand2_cell)
        .ok_or_else(|| anyhow!("nand2_cell {} not in the liberty", conf.nand2_cell))?;
    let (spec_bits, paper_bits) = storage_totals(p);

    let timing = if timing {
        let sdc = dir.join("sbrp_pb.sdc");
        write(&sdc, SDC)?;
        let tcl = fill(
            STA_TCL,
            &[
                ("LIBERTY", liberty),
                ("NETLIST", netlist.display().to_string()),
                ("SDC", sdc.display().to_string()),
            ],
        );
        let tcl_path = dir.join("sta_timing.tcl");
        write(&tcl_path, &tcl)?;
        let log = dir.join("sta.log");
        let text = run_tool(
            Command::new(&sta)
                .arg("-no_splash")
                .arg("-exit")
                .arg(&tcl_path),
            "OpenSTA",
            &log,
        )?;
        let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("Error")).collect();
        if !errors.is_empty() {
            bail!("OpenSTA failed:\n{}", errors.join("\n"));
        }
        write(&log, &text)?;
        Some(parse_sta(&text, 1000.0 / PAPER_CLOCK_MHZ)?)
    } else {
        None
    };

    Ok(AreaReport {
        params: *p,
        library: conf.library_name,
        cells,
        area_um2: area,
        cell_counts: counts.into_iter().collect(),
        blocks,
        modules,
        ff_bits,
        spec_bits: u64::from(spec_bits),
        paper_bits: u64::from(paper_bits),
        ff_area_um2: ff_area,
        fanout_buffers: buffers,
        generic_cells: generic,
        nand2_equivalents: area / nand2,
        timing,
        synth_seconds,
    })
}

/// The generated Verilog; a generator without an instance for `p` (it
/// panics) becomes an error.
pub fn generate(p: &PbParams) -> Result<String> {
    let p = *p;
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(move || sbrp_hdl::generate_verilog(&p));
    std::panic::set_hook(prev);
    match r {
        Ok(v) => Ok(v?),
        Err(_) => bail!(
            "the RTL generator (sbrp-hdl) has no instance for {}",
            p.tag()
        ),
    }
}

fn params_of(entries: u32, warps: u32, lines: u32, window: u32) -> Result<PbParams> {
    let p = PbParams {
        entries,
        warps,
        lines,
        actr_bits: 8,
        window,
        policy: FlushPolicy::Window,
    };
    p.validate()?;
    Ok(p)
}

/// The text report of one configuration.
pub fn format_report(r: &AreaReport) -> String {
    let p = &r.params;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "sbrp area: entries {} warps {} lines {} actr_bits {} window {} policy {}",
        p.entries, p.warps, p.lines, p.actr_bits, p.window, p.policy
    );
    let _ = writeln!(s, "library: {}", r.library);
    let _ = writeln!(
        s,
        "cells: {}   area: {:.0} um^2 ({:.4} mm^2)   fan-out buffers: {}",
        r.cells,
        r.area_um2,
        r.area_um2 / 1e6,
        r.fanout_buffers
    );
    let _ = writeln!(s, "by block:");
    let _ = writeln!(
        s,
        "  {:<30} {:>9} {:>14} {:>7} {:>9}",
        "block", "cells", "area um^2", "share", "FF bits"
    );
    for b in &r.blocks {
        let _ = writeln!(
            s,
            "  {:<30} {:>9} {:>14.0} {:>6.1}% {:>9}",
            b.block,
            b.cells,
            b.area_um2,
            100.0 * b.area_um2 / r.area_um2.max(1e-9),
            b.ff_bits
        );
    }
    let _ = writeln!(
        s,
        "flip-flop bits: {} (spec storage table {}{}; paper's estimate {})",
        r.ff_bits,
        r.spec_bits,
        if r.ff_bits == r.spec_bits {
            ", equal"
        } else {
            ", DIFFERENT"
        },
        r.paper_bits
    );
    let _ = writeln!(
        s,
        "storage (flip-flop) area: {:.0} um^2; area that is not storage: {:.1}%",
        r.ff_area_um2,
        100.0 * r.non_storage_share()
    );
    let _ = writeln!(
        s,
        "technology-independent: {} generic gates (Yosys internal cells after synth), {:.0} NAND2 equivalents",
        r.generic_cells, r.nand2_equivalents
    );
    if let Some(t) = &r.timing {
        let _ = writeln!(
            s,
            "timing at {:.0} MHz (period {:.3} ns): worst slack {:.3} ns{}",
            1000.0 / t.period_ns,
            t.period_ns,
            t.wns_ns,
            if t.wns_ns >= 0.0 {
                " (met)"
            } else {
                " (VIOLATED)"
            }
        );
        let _ = writeln!(
            s,
            "critical path: {} -> {} (arrival {:.3} ns)",
            t.path_start, t.path_end, t.path_arrival_ns
        );
        let _ = writeln!(s, "  crosses: {}", t.path_blocks.join(" -> "));
        let _ = writeln!(
            s,
            "ordering checks (inputs -> req_ready/req_wait): {:.3} ns",
            t.ordering_delay_ns
        );
        let _ = writeln!(
            s,
            "highest clock in this library: {:.0} MHz (period {:.3} ns)",
            t.fmax_mhz, t.min_period_ns
        );
    }
    s
}

fn csv_header() -> &'static str {
    "entries,warps,lines,cells,area_um2,ff_bits,spec_bits,paper_bits,non_storage_share,generic_cells,nand2_eq,fanout_buffers,wns_ns,critical_path_ns,ordering_delay_ns,fmax_mhz,pb_storage_um2,masks_actr_um2,l1_hooks_um2,control_um2"
}

fn csv_row(r: &AreaReport) -> String {
    let t = r.timing.as_ref();
    let f = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
    format!(
        "{},{},{},{},{:.0},{},{},{},{:.4},{},{:.0},{},{},{},{},{},{:.0},{:.0},{:.0},{:.0}",
        r.params.entries,
        r.params.warps,
        r.params.lines,
        r.cells,
        r.area_um2,
        r.ff_bits,
        r.spec_bits,
        r.paper_bits,
        r.non_storage_share(),
        r.generic_cells,
        r.nand2_equivalents,
        r.fanout_buffers,
        f(t.map(|t| t.wns_ns)),
        f(t.map(|t| t.path_arrival_ns)),
        f(t.map(|t| t.ordering_delay_ns)),
        t.map(|t| format!("{:.0}", t.fmax_mhz)).unwrap_or_default(),
        r.blocks[0].area_um2,
        r.blocks[1].area_um2,
        r.blocks[2].area_um2,
        r.blocks[3].area_um2,
    )
}

/// Growth of the ordering-check delay with entries, per warp count: the
/// delay added by each doubling of entries, the least-squares slope in ns
/// per doubling, and whether the growth is at most logarithmic. A delay
/// a + b log2(N) adds the same amount per doubling; the check is that the
/// second half of the doublings adds no more than the first half, plus
/// 0.2 ns of synthesis noise (a delay linear in N would add 4 to 16 times
/// more in the second half).
pub fn ordering_growth(rows: &[AreaReport]) -> Vec<(u32, Vec<f64>, f64, bool)> {
    let mut out = Vec::new();
    for w in SWEEP_WARPS {
        let mut pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.params.warps == w)
            .filter_map(|r| {
                r.timing
                    .as_ref()
                    .map(|t| (f64::from(r.params.entries).log2(), t.ordering_delay_ns))
            })
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        if pts.len() < 3 {
            continue;
        }
        let steps: Vec<f64> = pts.windows(2).map(|a| a[1].1 - a[0].1).collect();
        let n = pts.len() as f64;
        let (mx, my) = (
            pts.iter().map(|p| p.0).sum::<f64>() / n,
            pts.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        let slope = sxy / sxx;
        let half = steps.len() / 2;
        let first: f64 = steps[..half].iter().sum();
        let second: f64 = steps[steps.len() - half..].iter().sum();
        let ok = second <= first.max(0.0) + 0.2;
        out.push((w, steps, slope, ok));
    }
    out
}

/// What one area flow leaves for the user (besides the report and CSV).
const FLOW_FILES: [&str; 6] = [
    "sbrp_pb.v",
    "sbrp_pb_netlist.v",
    "yosys.log",
    "sta.log",
    "stat_generic.txt",
    "stat_mapped.txt",
];

/// `sbrp area`.
pub fn cmd_area(args: &AreaArgs) -> Result<()> {
    let configs: Vec<PbParams> = if args.sweep {
        let mut v = Vec::new();
        for w in SWEEP_WARPS {
            for e in SWEEP_ENTRIES {
                v.push(params_of(e, w, 512, args.window)?);
            }
        }
        v
    } else {
        vec![params_of(
            args.entries,
            args.warps,
            args.lines,
            args.window,
        )?]
    };
    let keep = Scratch::new("area")?;
    let mut rows = Vec::new();
    let mut text = String::new();
    for p in &configs {
        let scratch = Scratch::new("area-run")?;
        if args.sweep {
            eprintln!("sbrp area: synthesizing {} ...", p.tag());
        }
        let r = match run_area_flow(p, scratch.path(), !args.no_timing) {
            Ok(r) => r,
            Err(e) if args.sweep && e.to_string().contains("has no instance") => {
                eprintln!("sbrp area: skipped {}: {e}", p.tag());
                continue;
            }
            Err(e) => return Err(e.context(format!("area flow for {}", p.tag()))),
        };
        let rep = format_report(&r);
        if !args.sweep {
            print!("{rep}");
            for f in FLOW_FILES {
                let src = scratch.path().join(f);
                if src.exists() {
                    std::fs::copy(&src, keep.path().join(f))
                        .with_context(|| format!("cannot copy {f}"))?;
                }
            }
        }
        text.push_str(&rep);
        text.push('\n');
        rows.push(r);
    }
    let mut csv = String::from(csv_header());
    csv.push('\n');
    for r in &rows {
        csv.push_str(&csv_row(r));
        csv.push('\n');
    }
    if args.sweep {
        let t = format_sweep(&rows);
        print!("{t}");
        text.push_str(&t);
    }
    write(&keep.path().join("report.txt"), &text)?;
    let csv_name = if args.sweep { "sweep.csv" } else { "area.csv" };
    write(&keep.path().join(csv_name), &csv)?;
    if let Some(out) = &args.out {
        publish(
            keep.path(),
            out,
            &[&["report.txt", csv_name][..], &FLOW_FILES[..]].concat(),
        )?;
        println!("wrote report.txt and {csv_name} in {}", out.display());
    }
    Ok(())
}

/// The sweep table and the verdict on the ordering checks' growth.
pub fn format_sweep(rows: &[AreaReport]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n{:>7} {:>5} {:>8} {:>10} {:>8} {:>9} {:>9} {:>9} {:>7}",
        "entries",
        "warps",
        "cells",
        "area mm^2",
        "FF bits",
        "slack ns",
        "crit ns",
        "order ns",
        "fmax"
    );
    for r in rows {
        let t = r.timing.as_ref();
        let g = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            s,
            "{:>7} {:>5} {:>8} {:>10.4} {:>8} {:>9} {:>9} {:>9} {:>7}",
            r.params.entries,
            r.params.warps,
            r.cells,
            r.area_um2 / 1e6,
            r.ff_bits,
            g(t.map(|t| t.wns_ns)),
            g(t.map(|t| t.path_arrival_ns)),
            g(t.map(|t| t.ordering_delay_ns)),
            t.map(|t| format!("{:.0}", t.fmax_mhz))
                .unwrap_or_else(|| "-".into())
        );
    }
    for (w, steps, slope, ok) in ordering_growth(rows) {
        let st: Vec<String> = steps.iter().map(|d| format!("{d:+.3}")).collect();
        let _ = writeln!(
            s,
            "ordering checks, warps {w}: delay added per doubling of entries {} ns (fit {slope:.3} ns per doubling): {}",
            st.join(", "),
            if ok {
                "no worse than logarithmic"
            } else {
                "GROWS FASTER THAN LOGARITHMIC"
            }
        );
    }
    s
}

// ---------------------------------------------------------------------------
// Formal proofs
// ---------------------------------------------------------------------------

/// One property of the formal wrapper and its deliberately broken variant.
#[derive(Clone, Copy, Debug)]
pub struct Property {
    pub name: &'static str,
    /// `define`s of formal/sbrp_pb_formal.sv that enable its assertions.
    pub defines: &'static [&'static str],
    pub what: &'static str,
    /// The broken variant: (what it breaks, text in the generated Verilog, replacement).
    pub mutation: (&'static str, &'static str, &'static str),
}

/// The proved properties (formal/sbrp_pb_formal.sv).
pub const PROPERTIES: [Property; 5] = [
    Property {
        name: "actr",
        defines: &["CHECK_ACTR"],
        what: "ACTR never underflows or exceeds 2^A-1: no flush starts at the maximum, and every cycle ACTR' = ACTR + flush - (ack && ACTR != 0) without wrapping",
        mutation: (
            "head flush without the ACTR-maximum guard",
            "&& (~actr_max) && (force_dr || policy_ok)",
            "&& (force_dr || policy_ok)",
        ),
    },
    Property {
        name: "overflow",
        defines: &["CHECK_OVERFLOW"],
        what: "the PB never overflows: full implies head == tail, and occupancy changes by at most one entry per cycle (no wrap from N to 0)",
        mutation: (
            "store allocation without the full guard",
            "else if (~r_full$q) begin",
            "else if (1'b1) begin",
        ),
    },
    Property {
        name: "fsm_gate",
        defines: &["CHECK_FSM_GATE"],
        what: "no persist is flushed (from the head or by eviction) while one of its warps is in FSM and ACTR is non-zero",
        mutation: (
            "head flush without the FSM gate",
            "if ((~|(m_warps$rd0 & fsm_eff)) && (~actr_max)",
            "if ((~actr_max)",
        ),
    },
    Property {
        name: "release",
        defines: &["CHECK_INV_DRAIN", "CHECK_RELEASE"],
        what: "a warp in ODM or EDM is released within 2N + 2^A cycles once acknowledgements keep arriving (ack whenever ACTR != 0) and no new request is issued; with the invariants: a pending drain target is a live entry, and a warp is in ODM exactly when a live dFence/device pAcq/device pRel entry names it, at or before the drain target",
        mutation: (
            "EDM never cleared",
            "if (actr_zero && (~r_dpend$q)) begin",
            "if (1'b0) begin",
        ),
    },
    Property {
        name: "flush_order",
        defines: &["CHECK_INV_ORDER", "CHECK_FLUSH_ORDER"],
        what: "every flushed line had no older ordering entry of its warps in the PB (head flushes trivially; evictions through the snapshot check); with the invariants: lo is the youngest live ordering entry, and every live persist's snapshot is at or after every older live ordering entry",
        mutation: (
            "eviction without the snapshot check",
            "else if (m_snapv$rd0 && (age_s < age_k)) begin",
            "else if (1'b0) begin",
        ),
    },
];

/// Outcome of one proof run.
#[derive(Clone, Debug)]
pub struct ProofRun {
    pub property: &'static str,
    pub broken: bool,
    pub proved: bool,
    /// The base case failed: a real counterexample trace from reset (not
    /// only a failed induction step).
    pub counterexample: bool,
    pub seconds: f64,
    /// Yosys's summary lines (induction result, failed assertion, base case / step).
    pub summary: String,
    pub log: String,
}

/// The Verilog of the unit with the memory contents and the state registers
/// brought out as extra output ports `fv_<instance>` of `sbrp_pb`, for the
/// formal wrapper. The behaviour is unchanged (outputs only).
pub fn instrument_for_formal(v: &str) -> Result<String> {
    let mut out = v.to_string();
    let mut top_ports: Vec<(String, usize, String)> = Vec::new(); // (port, width, source)
                                                                  // Memories: every module with `reg [..] mem [..];` gets an output
                                                                  // `fv_dump` = {we, wa, mem[D-1], ..., mem[0]}.
    let mut mem_modules = Vec::new();
    for (pos, _) in v.match_indices("\nmodule sbrp_pb$m_") {
        let rest = &v[pos + 8..];
        let name: String = rest.chars().take_while(|c| *c != '(').collect();
        mem_modules.push(name);
    }
    for m in &mem_modules {
        let start = out
            .find(&format!("module {m}("))
            .ok_or_else(|| anyhow!("module {m} not found"))?;
        let end = start
            + out[start..]
                .find("endmodule")
                .ok_or_else(|| anyhow!("end of module {m} not found"))?;
        let body = out[start..end].to_string();
        let Some(mline) = body
            .lines()
            .find(|l| l.trim_start().starts_with("reg [") && l.contains(" mem ["))
        else {
            continue;
        };
        let nums: Vec<usize> = mline
            .split(|c: char| !c.is_ascii_digit())
            .filter(|t| !t.is_empty())
            .filter_map(|t| t.parse().ok())
            .collect();
        if nums.len() < 4 {
            bail!("cannot read the memory declaration of {m}: {mline}");
        }
        let (bits, words) = (nums[0] + 1, nums[3] + 1);
        let aw = words.trailing_zeros() as usize;
        let width = bits * words + aw + 1;
        let mut nb = body.replacen("(clock,", "(fv_dump,clock,", 1);
        let decl = format!(
            "{mline}\n    output wire [{hi}:0] fv_dump;\n    genvar fv_g;\n    generate for (fv_g = 0; fv_g < {words}; fv_g = fv_g + 1) begin : fv_words\n        assign fv_dump[fv_g*{bits} +: {bits}] = mem[fv_g];\n    end endgenerate\n    assign fv_dump[{wa_lo} +: {aw}] = wa;\n    assign fv_dump[{we_bit}] = we;\n",
            hi = width - 1,
            wa_lo = bits * words,
            we_bit = bits * words + aw,
        );
        nb = nb.replacen(&format!("{mline}\n"), &decl, 1);
        out.replace_range(start..end, &nb);
        let inst = m.trim_start_matches("sbrp_pb$").to_string();
        top_ports.push((format!("fv_{inst}"), width, String::new()));
        let pat = format!("{m} {inst}(\n");
        let p = out
            .find(&pat)
            .ok_or_else(|| anyhow!("instance {inst} of {m} not found in sbrp_pb"))?;
        out.insert_str(p + pat.len(), &format!("        .fv_dump(fv_{inst}),\n"));
    }
    // Registers: `r_<name>$q` nets of the top module.
    let top_end = out
        .find("endmodule // sbrp_pb\n")
        .ok_or_else(|| anyhow!("end of sbrp_pb not found"))?;
    let top = out[..top_end].to_string();
    for l in top.lines() {
        let t = l.trim();
        if let Some(rest) = t.strip_prefix("wire ") {
            let rest = rest.trim();
            let (width, name) = if rest.starts_with('[') {
                let close = rest.find(']').unwrap_or(0);
                let hi: usize = rest[1..close]
                    .split(':')
                    .next()
                    .and_then(|x| x.trim().parse().ok())
                    .unwrap_or(0);
                (
                    hi + 1,
                    rest[close + 1..].trim().trim_end_matches(';').to_string(),
                )
            } else {
                (1, rest.trim_end_matches(';').to_string())
            };
            if name.starts_with("r_") && name.ends_with("$q") {
                let port = format!("fv_{}", name.trim_end_matches("$q"));
                top_ports.push((port, width, name));
            }
        }
    }
    // Top ports: header, declarations, assigns.
    let hdr_start = out
        .find("module sbrp_pb(")
        .ok_or_else(|| anyhow!("module sbrp_pb not found"))?;
    let hdr_end = hdr_start + out[hdr_start..].find(");").unwrap();
    let names: Vec<String> = top_ports.iter().map(|p| p.0.clone()).collect();
    out.insert_str(hdr_end, &format!(",{}", names.join(",")));
    let after = hdr_start + out[hdr_start..].find(");\n").unwrap() + 3;
    let mut decls = String::new();
    for (port, width, src) in &top_ports {
        let _ = writeln!(decls, "    output wire [{}:0] {port};", width - 1);
        if !src.is_empty() {
            let _ = writeln!(decls, "    assign {port} = {src};");
        }
    }
    out.insert_str(after, &decls);
    Ok(out)
}

fn prove_one(
    p: &PbParams,
    prop: &Property,
    broken: bool,
    dir: &Path,
    yosys: &str,
) -> Result<ProofRun> {
    let mut v = generate(p)?;
    if broken {
        let (what, from, to) = prop.mutation;
        if !v.contains(from) {
            bail!(
                "broken variant of {} ({what}): the text `{from}` is not in the generated Verilog any more; update PROPERTIES in testbench/src/hw.rs",
                prop.name
            );
        }
        v = v.replacen(from, to, 1);
    }
    let inst = instrument_for_formal(&v)?;
    let tag = format!("{}{}", prop.name, if broken { "_broken" } else { "" });
    let rtl = dir.join(format!("{tag}_rtl.v"));
    write(&rtl, &inst)?;
    let wrapper = dir.join("sbrp_pb_formal.sv");
    write(&wrapper, FORMAL_WRAPPER)?;
    let defines: String = prop.defines.iter().map(|d| format!(" -D{d}")).collect();
    let bound = 2 * p.entries + (1 << p.actr_bits);
    let ys = fill(
        PROVE_YS,
        &[
            ("RTL", rtl.display().to_string()),
            ("WRAPPER", wrapper.display().to_string()),
            ("DEFINES", defines),
            ("N", p.entries.to_string()),
            ("IW", p.idx_bits().to_string()),
            ("W", p.warps.to_string()),
            ("L", p.lines.to_string()),
            ("LW", p.line_bits().to_string()),
            ("A", p.actr_bits.to_string()),
            ("BOUND", bound.to_string()),
            ("MAXSTEPS", if broken { "12" } else { "24" }.to_string()),
        ],
    );
    let ys_path = dir.join(format!("{tag}.ys"));
    write(&ys_path, &ys)?;
    let log = dir.join(format!("{tag}.log"));
    let t0 = Instant::now();
    let out = Command::new(yosys)
        .arg("-q")
        .arg("-l")
        .arg(&log)
        .arg("-s")
        .arg(&ys_path)
        .output()
        .with_context(|| format!("cannot run {yosys}"))?;
    let seconds = t0.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&log).unwrap_or_else(|_| {
        let mut t = String::from_utf8_lossy(&out.stdout).into_owned();
        t.push_str(&String::from_utf8_lossy(&out.stderr));
        t
    });
    let proof_failed = text.contains("proof did fail");
    let proved =
        out.status.success() && !proof_failed && text.contains("Induction step proven: SUCCESS!");
    let summary: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.contains("Induction step")
                || l.contains("failed")
                || l.contains("SUCCESS")
                || l.contains("FAIL")
                || l.contains("Trying induction")
                || l.contains("Reached maximum")
                || l.contains("ERROR")
        })
        .collect();
    let summary = summary
        .iter()
        .rev()
        .take(6)
        .rev()
        .cloned()
        .collect::<Vec<_>>()
        .join("\n");
    // A failure that is not a proof failure (syntax error, missing signal) is an error.
    if !out.status.success() && !proof_failed {
        bail!(
            "yosys failed on the {} proof{}:\n{}",
            prop.name,
            if broken { " (broken variant)" } else { "" },
            error_lines(&text)
        );
    }
    Ok(ProofRun {
        property: prop.name,
        broken,
        proved,
        counterexample: text.contains("model found for base case: FAIL"),
        seconds,
        summary,
        log: text,
    })
}

/// Runs the proofs of `props` (and their broken variants when `broken`).
pub fn run_proofs(
    p: &PbParams,
    props: &[&Property],
    broken: bool,
    dir: &Path,
) -> Result<Vec<ProofRun>> {
    let yosys = tool_path("SBRP_YOSYS", "yosys");
    require_tool(&yosys, &["-V"], "yosys")?;
    let mut runs = Vec::new();
    for prop in props {
        runs.push(prove_one(p, prop, false, dir, &yosys)?);
        if broken {
            runs.push(prove_one(p, prop, true, dir, &yosys)?);
        }
    }
    Ok(runs)
}

/// Looks a property up by name.
pub fn property(name: &str) -> Result<&'static Property> {
    PROPERTIES.iter().find(|p| p.name == name).ok_or_else(|| {
        anyhow!(
            "unknown property {name}: one of {}",
            PROPERTIES
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// `sbrp prove`.
pub fn cmd_prove(args: &ProveArgs) -> Result<()> {
    let p = PbParams {
        entries: args.entries,
        warps: args.warps,
        lines: args.lines,
        actr_bits: 8,
        window: 6,
        policy: FlushPolicy::Window,
    };
    p.validate()?;
    let props: Vec<&Property> = match &args.property {
        Some(n) => vec![property(n)?],
        None => PROPERTIES.iter().collect(),
    };
    let scratch = Scratch::new("prove")?;
    println!(
        "sbrp prove: entries {} warps {} lines {} actr_bits {} (yosys sat -tempinduct)",
        p.entries, p.warps, p.lines, p.actr_bits
    );
    let runs = run_proofs(&p, &props, args.broken, scratch.path())?;
    let mut bad = Vec::new();
    for r in &runs {
        let expect = !r.broken;
        let ok = r.proved == expect;
        println!(
            "  {:<12} {:<8} {:<10} {:>7.1} s  {}{}",
            r.property,
            if r.broken { "broken" } else { "real" },
            if r.proved { "PROVED" } else { "NOT PROVED" },
            r.seconds,
            if ok { "as expected" } else { "UNEXPECTED" },
            if r.counterexample {
                " (counterexample from reset)"
            } else if !r.proved {
                " (induction step fails)"
            } else {
                ""
            }
        );
        if !ok {
            bad.push(r);
        }
    }
    if !bad.is_empty() {
        let mut msg = String::new();
        for r in bad {
            let _ = writeln!(
                msg,
                "{} ({}): {}\n{}",
                r.property,
                if r.broken {
                    "broken variant proved"
                } else {
                    "proof failed"
                },
                if r.broken { "" } else { "Yosys:" },
                r.summary
            );
        }
        bail!("{msg}");
    }
    if let Some(out) = &args.out {
        let files: Vec<String> = std::fs::read_dir(scratch.path())?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let refs: Vec<&str> = files.iter().map(|s| s.as_str()).collect();
        publish(scratch.path(), out, &refs)?;
        println!("wrote the logs in {}", out.display());
    }
    Ok(())
}
