//! Place and route of the synthesised unit (`sbrp area --route`): the
//! netlist of the area flow flattened (`constraints/route/route_prep.ys`),
//! placed by qflow (graywolf, at the density of
//! `constraints/route/project_vars.sh`), routed by qrouter
//! (`constraints/route/qrouter.tcl`), its RC trees (qrouter's `write_delays`)
//! turned into SPEF, and OpenSTA run with them under
//! `constraints/timing/sbrp_pb_routed.sdc` (5% clock uncertainty, I/O
//! delays a quarter of the period), and once more without them (same
//! constraints, zero wire) to isolate what the wires cost.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use sbrp_tools::{write_atomic, FsError, LogFile, Tool};
use serde::{Deserialize, Serialize};

use crate::config::{
    fill, SynthConf, QROUTER_TCL, RESIZE_TCL, ROUTED_SDC, ROUTE_PREP_YS, ROUTE_PROJECT_VARS,
};
use crate::error::{Result, SiliconError};
use crate::liberty::Liberty;
use crate::sta::{run_sta, PathTiming, StaFiles, TimingReport};
use crate::tools::{require, sta, yosys};

/// Clock uncertainty of the routed SDC, as a fraction of the period.
pub const UNCERTAINTY_FRACTION: f64 = 0.05;
/// Input and output delays of the routed SDC, as a fraction of the period.
pub const IO_FRACTION: f64 = 0.25;
/// The routed target of issue 28 (the SDC's clock).
pub const ROUTED_TARGET_MHZ: f64 = 330.0;

/// What `sbrp area --route` measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RouteReport {
    /// Cells placed: the netlist flattened, cells driving nothing dropped,
    /// tie cells added.
    pub cells: u64,
    /// Placement density asked of qflow (cells over core).
    pub density: f64,
    /// Die size from the routed DEF, µm.
    pub die_width_um: f64,
    pub die_height_um: f64,
    /// Nets with an RC tree from qrouter.
    pub nets_routed: u64,
    /// Total wire capacitance of the RC trees, pF.
    pub wire_cap_pf: f64,
    pub place_seconds: f64,
    pub route_seconds: f64,
    /// OpenSTA with the extracted parasitics, under the routed SDC.
    pub routed: TimingReport,
    /// OpenSTA on the same flat netlist and SDC without parasitics.
    pub unrouted: TimingReport,
    /// Blocks (hierarchy of the area flow's netlist) of the start and end
    /// of the path that sets the routed fmax (None: a port, or unknown).
    pub limit_blocks: (Option<String>, Option<String>),
    /// The gate sizing for the routed loads between the two passes; the
    /// figures above are of the second (sized) pass. None: a report of the
    /// one-pass flow.
    #[serde(default)]
    pub sizing: Option<Sizing>,
}

/// The first pass of `--route` (the netlist as synthesized) and the sizing
/// that OpenSTA did on its wires (`constraints/route/resize.tcl`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sizing {
    /// OpenSTA with the first pass's wires, under the routed SDC.
    pub before: TimingReport,
    /// `(from, to, cells)`, in name order.
    pub resized: Vec<(String, String, u64)>,
    pub cells_resized: u64,
    /// Cell area the sizing added (liberty areas), µm².
    pub area_added_um2: f64,
    /// Worst and total negative slack at the SDC's clock on the first
    /// pass's wires, before and after the sizing (OpenSTA's estimate before
    /// the second placement), ns.
    pub slack_before_ns: (f64, f64),
    pub slack_sized_ns: (f64, f64),
    /// Cell changes tried.
    pub trials: u64,
    pub sizing_seconds: f64,
    pub wire_cap_before_pf: f64,
    pub place_seconds_before: f64,
    pub route_seconds_before: f64,
}

/// The highest clock the timing allows once the SDC's uncertainty and I/O
/// delays scale with the period, and which path kind sets it.
#[derive(Clone, Debug, PartialEq)]
pub struct Fmax {
    pub mhz: f64,
    pub period_ns: f64,
    pub limit: &'static str,
    pub path: PathTiming,
}

/// Shortest period for each path kind present (reg-to-reg; input and output
/// paths lose `IO_FRACTION` of the period to the outside): the logic of
/// the path over what the period leaves it.
pub fn fmax_of(t: &TimingReport) -> Fmax {
    let u = UNCERTAINTY_FRACTION;
    let io = IO_FRACTION;
    let mut cands: Vec<(f64, &'static str, &PathTiming)> = vec![(
        (t.reg_to_reg.arrival_ns + t.reg_to_reg.setup_ns) / (1.0 - u),
        "register to register",
        &t.reg_to_reg,
    )];
    if let Some(p) = &t.in_to_reg {
        // logic_ns excludes the input delay; setup is the flip-flop's
        cands.push((
            (p.logic_ns + p.setup_ns) / (1.0 - u - io),
            "input to register",
            p,
        ));
    }
    if let Some(p) = &t.reg_to_out {
        cands.push((p.arrival_ns / (1.0 - u - io), "register to output", p));
    }
    if let Some(p) = &t.in_to_out {
        cands.push((p.logic_ns / (1.0 - u - 2.0 * io), "input to output", p));
    }
    let (period, limit, path) = cands
        .into_iter()
        .fold(
            None::<(f64, &'static str, &PathTiming)>,
            |best, c| match best {
                Some(b) if b.0 >= c.0 => Some(b),
                _ => Some(c),
            },
        )
        .expect("reg_to_reg is always there");
    Fmax {
        mhz: 1000.0 / period,
        period_ns: period,
        limit,
        path: path.clone(),
    }
}

impl RouteReport {
    pub fn fmax(&self) -> Fmax {
        fmax_of(&self.routed)
    }

    pub fn fmax_unrouted(&self) -> Fmax {
        fmax_of(&self.unrouted)
    }
}

fn hint(package: &str, env: &str) -> String {
    format!(
        "install it with `sudo apt-get install {package}` (Debian/Ubuntu; \
         scripts/setup.sh does it), or point {env} at it"
    )
}

/// qflow (`SBRP_QFLOW`, else `qflow` on `PATH`).
pub fn qflow() -> Tool {
    Tool::from_env("SBRP_QFLOW", "qflow", hint("qflow", "SBRP_QFLOW"))
}

/// qrouter (`SBRP_QROUTER`, else `qrouter` on `PATH`).
pub fn qrouter() -> Tool {
    Tool::from_env("SBRP_QROUTER", "qrouter", hint("qrouter", "SBRP_QROUTER"))
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|error| {
        SiliconError::Fs(FsError {
            what: "read",
            path: path.to_path_buf(),
            error,
        })
    })
}

fn write(path: &Path, text: &str) -> Result<()> {
    Ok(write_atomic(path, text.as_bytes())?)
}

fn mkdir(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path).map_err(|error| {
        SiliconError::Fs(FsError {
            what: "create",
            path: path.to_path_buf(),
            error,
        })
    })
}

fn safe(name: &str) -> bool {
    name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The BLIF of `route_prep.ys` made fit for qflow: tie cells become a BUFX2
/// from the rail (as qflow's synthesis does), the constant tables go, and
/// every internal net gets a plain name (letters, digits, `_`), because
/// qflow rewrites other names in the Verilog it regenerates but not in the
/// DEF, and the SPEF must name both alike. Returns the BLIF, its `.gate`
/// count and the plain name of every renamed net (plain -> original).
pub(crate) fn prepare_blif(blif: &str) -> (String, u64, BTreeMap<String, String>) {
    let mut ports = BTreeSet::new();
    let mut nets = BTreeSet::new();
    for l in blif.lines() {
        let t: Vec<&str> = l.split_whitespace().collect();
        match t.first() {
            Some(&".inputs") | Some(&".outputs") => {
                ports.extend(t[1..].iter().map(|s| s.to_string()))
            }
            Some(&".gate") => nets.extend(
                t[2..]
                    .iter()
                    .filter_map(|c| c.split_once('=').map(|(_, n)| n.to_string())),
            ),
            _ => {}
        }
    }
    let mut used: BTreeSet<String> = nets.iter().filter(|n| safe(n)).cloned().collect();
    used.extend(ports.iter().cloned());
    let mut rename = BTreeMap::new();
    for n in nets.iter().filter(|n| !safe(n) && !ports.contains(*n)) {
        let base: String = n
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let mut plain = base.clone();
        let mut k = 1;
        while used.contains(&plain) {
            plain = format!("{base}_s{k}");
            k += 1;
        }
        used.insert(plain.clone());
        rename.insert(n.clone(), plain);
    }
    let mut out = String::new();
    let mut gates = 0;
    let mut in_names = false;
    for l in blif.lines() {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.first() == Some(&".names") {
            in_names = true;
            continue;
        }
        if in_names && !l.starts_with('.') {
            continue;
        }
        in_names = false;
        if t.first() != Some(&".gate") {
            out.push_str(l);
            out.push('\n');
            continue;
        }
        gates += 1;
        let conns = t[2..].iter().filter_map(|c| c.split_once('='));
        let map = |n: &str| rename.get(n).map_or(n.to_string(), |s: &String| s.clone());
        match t[1] {
            "LOGIC0" | "LOGIC1" => {
                let rail = if t[1] == "LOGIC0" { "gnd" } else { "vdd" };
                let y = conns.map(|(_, n)| map(n)).next().unwrap_or_default();
                let _ = writeln!(out, ".gate BUFX2 A={rail} Y={y}");
            }
            cell => {
                let _ = write!(out, ".gate {cell}");
                for (p, n) in conns {
                    let _ = write!(out, " {p}={}", map(n));
                }
                out.push('\n');
            }
        }
    }
    let back = rename.into_iter().map(|(o, p)| (p, o)).collect();
    (out, gates, back)
}

/// One segment of a qrouter RC tree: resistance (Ω) and capacitance (pF)
/// from its parent's end to its own end, the pin at its end if any, and the
/// segments hanging from that end.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RcSeg {
    pub res: f64,
    pub cap: f64,
    pub pin: Option<String>,
    pub children: Vec<RcSeg>,
}

/// One net of qrouter's `write_delays` file: `net 1 driver N ( R C [pin]
/// [,] child , child ... )` on one line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RcNet {
    pub net: String,
    pub driver: String,
    pub root: RcSeg,
}

fn parse_seg<'a>(tok: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>) -> Option<RcSeg> {
    if tok.next()? != "(" {
        return None;
    }
    let res = tok.next()?.parse().ok()?;
    let cap = tok.next()?.parse().ok()?;
    let mut seg = RcSeg {
        res,
        cap,
        pin: None,
        children: Vec::new(),
    };
    loop {
        match *tok.peek()? {
            ")" => {
                tok.next();
                return Some(seg);
            }
            "," => {
                tok.next();
            }
            "(" => seg.children.push(parse_seg(tok)?),
            "ERROR" => {
                tok.next();
            }
            p => {
                seg.pin = Some(p.to_string());
                tok.next();
            }
        }
    }
}

/// The nets of a `write_delays` file (lines that do not parse are errors).
pub(crate) fn parse_rc(text: &str) -> Result<Vec<RcNet>> {
    let mut nets = Vec::new();
    for (n, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let bad = || SiliconError::Output(format!("qrouter RC file, line {}: {l}", n + 1));
        let mut tok = l.split_whitespace().peekable();
        let net = tok.next().ok_or_else(bad)?.to_string();
        let _one = tok.next().ok_or_else(bad)?;
        let driver = tok.next().ok_or_else(bad)?.to_string();
        let _sinks = tok.next().ok_or_else(bad)?;
        let root = parse_seg(&mut tok).ok_or_else(bad)?;
        nets.push(RcNet { net, driver, root });
    }
    Ok(nets)
}

/// A qrouter node name as a SPEF connection: `PIN/port` -> `port`,
/// `inst/pin` -> `inst:pin`.
fn spef_node(pin: &str) -> (String, bool) {
    match pin.strip_prefix("PIN/") {
        Some(port) => (port.to_string(), true),
        None => match pin.rsplit_once('/') {
            Some((inst, p)) => (format!("{inst}:{p}"), false),
            None => (pin.to_string(), false),
        },
    }
}

fn total_cap(s: &RcSeg) -> f64 {
    s.cap + s.children.iter().map(total_cap).sum::<f64>()
}

/// SPEF of the RC trees: each segment a resistor from its parent's end to
/// its own end with half its capacitance at each end (a pi model); the
/// ends are the pins named there, else internal nodes `net:k`. `inputs` are
/// the design's input ports (a port that drives a net is an input).
pub(crate) fn rc_to_spef(nets: &[RcNet], inputs: &BTreeSet<String>) -> (String, f64) {
    let mut s = String::from(
        "*SPEF \"IEEE 1481-1998\"\n*DESIGN \"sbrp_pb\"\n*DATE \"\"\n*VENDOR \"sbrp\"\n\
         *PROGRAM \"sbrp area --route (qrouter write_delays)\"\n*VERSION \"1\"\n\
         *DESIGN_FLOW \"PIN_CAP NONE\"\n*DIVIDER /\n*DELIMITER :\n*BUS_DELIMITER [ ]\n\
         *T_UNIT 1 NS\n*C_UNIT 1 PF\n*R_UNIT 1 OHM\n*L_UNIT 1 HENRY\n\n",
    );
    let mut wire_cap = 0.0;
    for net in nets {
        let total = total_cap(&net.root);
        wire_cap += total;
        let mut caps: BTreeMap<String, f64> = BTreeMap::new();
        let mut res: Vec<(String, String, f64)> = Vec::new();
        let mut conns: Vec<(String, bool, bool)> = Vec::new();
        let (drv, drv_port) = spef_node(&net.driver);
        conns.push((drv.clone(), drv_port, true));
        let mut k = 0;
        // walk: (segment, node at its start)
        let mut stack = vec![(&net.root, drv.clone())];
        while let Some((seg, start)) = stack.pop() {
            let end = match &seg.pin {
                Some(p) => {
                    let (n, port) = spef_node(p);
                    if n != drv && !conns.iter().any(|c| c.0 == n) {
                        conns.push((n.clone(), port, false));
                    }
                    n
                }
                None => {
                    k += 1;
                    format!("{}:{k}", net.net)
                }
            };
            *caps.entry(start.clone()).or_default() += seg.cap / 2.0;
            *caps.entry(end.clone()).or_default() += seg.cap / 2.0;
            if end != start {
                // OpenSTA wants a resistor to join the nodes; a via-free
                // zero-length step gets a milliohm
                res.push((start, end.clone(), seg.res.max(1e-3)));
            }
            for c in &seg.children {
                stack.push((c, end.clone()));
            }
        }
        let _ = writeln!(s, "*D_NET {} {:.6}\n*CONN", net.net, total);
        for (n, port, driver) in &conns {
            let dir = match (port, driver) {
                (true, _) if inputs.contains(n) => "I",
                (true, _) => "O",
                (false, true) => "O",
                (false, false) => "I",
            };
            let _ = writeln!(s, "{} {n} {dir}", if *port { "*P" } else { "*I" });
        }
        let _ = writeln!(s, "*CAP");
        for (i, (n, c)) in caps.iter().enumerate() {
            let _ = writeln!(s, "{} {n} {c:.6}", i + 1);
        }
        let _ = writeln!(s, "*RES");
        for (i, (a, b, r)) in res.iter().enumerate() {
            let _ = writeln!(s, "{} {a} {b} {r:.4}", i + 1);
        }
        let _ = writeln!(s, "*END\n");
    }
    (s, wire_cap)
}

/// `DIEAREA ( x0 y0 ) ( x1 y1 )` of a DEF, µm (with its `UNITS DISTANCE
/// MICRONS`).
pub(crate) fn def_die(def: &str) -> (f64, f64) {
    let mut units = 100.0;
    let (mut w, mut h) = (0.0, 0.0);
    for l in def.lines() {
        let t: Vec<&str> = l.split_whitespace().collect();
        match t[..] {
            ["UNITS", "DISTANCE", "MICRONS", u, ..] => units = u.parse().unwrap_or(units),
            ["DIEAREA", "(", x0, y0, ")", "(", x1, y1, ")", ..] => {
                let f = |a: &str, b: &str| {
                    (b.parse::<f64>().unwrap_or(0.0) - a.parse::<f64>().unwrap_or(0.0)) / units
                };
                w = f(x0, x1);
                h = f(y0, y1);
            }
            _ => {}
        }
    }
    (w, h)
}

/// The block of a flat instance: the hierarchy prefix (before the first
/// `.`) of the first internal net on its pins, by its original name, from
/// the Verilog qflow regenerated (`CELL INST ( .A(net), ... );` lines).
pub(crate) fn instance_block(
    flat: &str,
    inst: &str,
    names: &BTreeMap<String, String>,
) -> Option<String> {
    let key = format!(" {inst} (");
    let line = flat.lines().find(|l| l.contains(&key))?;
    line.split(".")
        .skip(1)
        .filter_map(|c| {
            c.split_once('(')
                .map(|(_, n)| n.split(')').next().unwrap_or(""))
        })
        .filter_map(|n| names.get(n.trim()))
        .find_map(|orig| orig.split_once('.').map(|(b, _)| b.to_string()))
}

/// Runs OpenSTA's script on the flat netlist, with `spef` when given.
fn sta_run(
    dir: &Path,
    liberty: &str,
    netlist: &Path,
    spef: Option<&Path>,
    tag: &str,
) -> Result<TimingReport> {
    let parasitics = spef.map_or(String::new(), |p| format!("read_spef {}", p.display()));
    let files = StaFiles {
        sdc: ("sbrp_pb_routed.sdc", ROUTED_SDC),
        tcl: format!("sta_{tag}.tcl"),
        log: format!("sta_{tag}.log"),
    };
    run_sta(dir, liberty, netlist, parasitics, &files)
}

/// qflow, qrouter and OpenSTA start (else the `apt-get` line): checked
/// before synthesis, so a missing router costs no minutes.
pub fn require_route_tools() -> Result<()> {
    // neither has a version flag that exits; -h prints the usage and exits
    require(&qflow(), "-h")?;
    require(&qrouter(), "-h")?;
    require(&sta(), "-version")
}

/// What `--route` leaves in the output directory: the final (sized) pass,
/// then the first pass (`_unsized`) and the sizing's OpenSTA log.
pub const ROUTE_FILES: [&str; 13] = [
    "sbrp_pb_routed.def",
    "sbrp_pb_routed.spef",
    "sbrp_pb_flat.v",
    "route_place.log",
    "route_qrouter.log",
    "sta_routed.log",
    "sta_unrouted.log",
    "sbrp_pb_routed_unsized.spef",
    "sbrp_pb_flat_unsized.v",
    "route_place_unsized.log",
    "route_qrouter_unsized.log",
    "sta_routed_unsized.log",
    "route_resize.log",
];

/// One place-and-route pass of a BLIF.
struct Pass {
    die_um: (f64, f64),
    nets_routed: u64,
    wire_cap_pf: f64,
    /// The flat Verilog qflow regenerated (instance names as in the DEF).
    flat: String,
    flat_path: std::path::PathBuf,
    spef_path: std::path::PathBuf,
    place_seconds: f64,
    route_seconds: f64,
}

/// Places `blif` with qflow in the project `proj` and routes it with
/// qrouter; the DEF, flat Verilog, SPEF and logs go to `dir`, their names
/// ending in `suffix`.
fn place_and_route(
    dir: &Path,
    proj: &Path,
    blif: &str,
    netlist: &Path,
    suffix: &str,
) -> Result<Pass> {
    let (qflow, qrouter) = (qflow(), qrouter());
    for d in ["source", "synthesis", "layout"] {
        mkdir(&proj.join(d))?;
    }
    let t0 = Instant::now();
    write(&proj.join("synthesis/sbrp_pb.blif"), blif)?;
    write(
        &proj.join("synthesis/sbrp_pb_powerground"),
        "set vddnet=\"vdd\"\nset gndnet=\"gnd\"\n",
    )?;
    // qflow wants a source file of the module's name; it is not read for
    // placement
    std::fs::copy(netlist, proj.join("source/sbrp_pb.v")).map_err(|error| {
        SiliconError::Fs(FsError {
            what: "copy",
            path: netlist.to_path_buf(),
            error,
        })
    })?;
    write(&proj.join("project_vars.sh"), ROUTE_PROJECT_VARS)?;

    let place_log = dir.join(format!("route_place{suffix}.log"));
    let mut cmd = qflow.command();
    cmd.current_dir(proj)
        .args(["place", "-T", "osu018", "sbrp_pb"]);
    qflow.run(&mut cmd, "qflow place", LogFile::Write(&place_log))?;
    let layout = proj.join("layout");
    let cfg = read(&layout.join("sbrp_pb.cfg")).map_err(|_| {
        SiliconError::Output(format!(
            "qflow place wrote no layout/sbrp_pb.cfg (log: {})",
            place_log.display()
        ))
    })?;
    let place_seconds = t0.elapsed().as_secs_f64();

    // qflow's cfg ends with its own route command and quit
    let mut script: String = cfg
        .lines()
        .filter(|l| !l.starts_with("qrouter::") && l.trim() != "quit")
        .map(|l| format!("{l}\n"))
        .collect();
    script.push_str(&fill(
        QROUTER_TCL,
        &[
            ("DEF", "sbrp_pb_route.def".to_string()),
            ("RC", "sbrp_pb_route.rc".to_string()),
        ],
    ));
    write(&layout.join("sbrp_route.tcl"), &script)?;
    let t1 = Instant::now();
    let rlog = dir.join(format!("route_qrouter{suffix}.log"));
    let mut cmd = qrouter.command();
    cmd.current_dir(&layout)
        .args(["-nog", "-s", "sbrp_route.tcl"]);
    let text = qrouter
        .run(&mut cmd, "qrouter", LogFile::Write(&rlog))?
        .text;
    let route_seconds = t1.elapsed().as_secs_f64();
    let failed: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("SBRP_FAILED "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| {
            SiliconError::Output(format!(
                "qrouter did not finish its script (log: {})",
                rlog.display()
            ))
        })?;
    if failed > 0 {
        return Err(SiliconError::Output(format!(
            "qrouter left {failed} nets unrouted; no timing from a partly routed design \
             (log: {}; lower initial_density in constraints/route/project_vars.sh)",
            rlog.display()
        )));
    }
    let def = read(&layout.join("sbrp_pb_route.def"))?;
    let die_um = def_die(&def);
    write(&dir.join(format!("sbrp_pb_routed{suffix}.def")), &def)?;

    // the Verilog qflow regenerated from the placed BLIF names instances as
    // the DEF does
    let flat = read(&proj.join("synthesis/sbrp_pb.rtlnopwr.v"))?;
    let flat_path = dir.join(format!("sbrp_pb_flat{suffix}.v"));
    write(&flat_path, &flat)?;
    let inputs = verilog_inputs(&flat);
    let nets = parse_rc(&read(&layout.join("sbrp_pb_route.rc"))?)?;
    let (spef, wire_cap_pf) = rc_to_spef(&nets, &inputs);
    let spef_path = dir.join(format!("sbrp_pb_routed{suffix}.spef"));
    write(&spef_path, &spef)?;
    Ok(Pass {
        die_um,
        nets_routed: nets.len() as u64,
        wire_cap_pf,
        flat,
        flat_path,
        spef_path,
        place_seconds,
        route_seconds,
    })
}

/// The input ports of a flat Verilog module, bus bits one by one (`a[3]`).
fn verilog_inputs(flat: &str) -> BTreeSet<String> {
    flat.lines()
        .filter_map(|l| l.trim().strip_prefix("input "))
        .flat_map(|rest| {
            let rest = rest.trim_end_matches(';').trim();
            match rest.rsplit_once(' ') {
                Some((range, name)) => {
                    let (hi, lo) = range
                        .trim_matches(|c| c == '[' || c == ']')
                        .split_once(':')
                        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
                        .unwrap_or((0, 0));
                    (lo.min(hi)..=hi.max(lo))
                        .map(|i| format!("{name}[{i}]"))
                        .collect::<Vec<_>>()
                }
                None => vec![rest.to_string()],
            }
        })
        .collect()
}

/// One cell the sizing changed: instance (first pass), cells before and
/// after, and the net its output `Y` drives.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Resized {
    pub instance: String,
    pub from: String,
    pub to: String,
    pub net: String,
}

/// What `constraints/route/resize.tcl` printed: the changes, and the worst
/// and total negative slack (ns) before and after them on the first pass's
/// wires.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ResizeLog {
    pub changes: Vec<Resized>,
    pub start: (f64, f64),
    pub done: (f64, f64),
    pub trials: u64,
}

pub(crate) fn parse_resize(text: &str) -> Result<ResizeLog> {
    let mut changes = Vec::new();
    let (mut start, mut done, mut trials) = (None, None, 0);
    let pair =
        |a: &str, b: &str| -> Option<(f64, f64)> { Some((a.parse().ok()?, b.parse().ok()?)) };
    for l in text.lines() {
        let t: Vec<&str> = l.split_whitespace().collect();
        match t[..] {
            ["SBRP_START", w, n] => start = pair(w, n),
            ["SBRP_SIZED", i, f, to, net] => changes.push(Resized {
                instance: i.to_string(),
                from: f.to_string(),
                to: to.to_string(),
                net: net.to_string(),
            }),
            ["SBRP_DONE", w, n, _rounds, k] => {
                done = pair(w, n);
                trials = k.parse().unwrap_or(0);
            }
            _ => {}
        }
    }
    match (start, done) {
        (Some(start), Some(done)) => Ok(ResizeLog {
            changes,
            start,
            done,
            trials,
        }),
        _ => Err(SiliconError::Output(
            "the sizing script (resize.tcl) did not finish".into(),
        )),
    }
}

/// The BLIF with each change applied to the `.gate` of cell `from` whose
/// `Y` drives `net` (the flat netlist's nets are the BLIF's names). Every
/// change must find its gate.
pub(crate) fn apply_sizes(blif: &str, changes: &[Resized]) -> Result<String> {
    let mut by_net: BTreeMap<&str, &Resized> =
        changes.iter().map(|c| (c.net.as_str(), c)).collect();
    let mut out = String::with_capacity(blif.len());
    for l in blif.lines() {
        let t: Vec<&str> = l.split_whitespace().collect();
        let hit = match t[..] {
            [".gate", cell, ..] => t[2..]
                .iter()
                .find_map(|c| c.strip_prefix("Y="))
                .and_then(|net| by_net.get(net).filter(|c| c.from == cell).map(|_| net)),
            _ => None,
        };
        match hit.and_then(|net| by_net.remove(net)) {
            Some(c) => {
                let _ = write!(out, ".gate {}", c.to);
                for p in &t[2..] {
                    let _ = write!(out, " {p}");
                }
                out.push('\n');
            }
            None => {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    if let Some(c) = by_net.values().next() {
        return Err(SiliconError::Output(format!(
            "sizing: no {} gate drives net {} in the BLIF ({} of {} changes unmatched)",
            c.from,
            c.net,
            by_net.len(),
            changes.len()
        )));
    }
    Ok(out)
}

/// Paths (worst endpoints) the sizing looks at per round, and its rounds.
const RESIZE_PATHS: u32 = 100;
const RESIZE_ROUNDS: u32 = 8;
/// The sizing's clock over the routed target: a guard band of 5%, so that
/// the paths within about 5% of the worst are improved too before the
/// second placement moves the wires.
pub const SIZING_GUARD: f64 = 1.05;

/// The routed SDC with its clock at `mhz` (the line that sets the period
/// must be there).
pub(crate) fn sdc_at(sdc: &str, mhz: f64) -> Result<String> {
    let line = format!("set ::sbrp_clk_period [expr {{1000.0 / {ROUTED_TARGET_MHZ:.1}}}]");
    if !sdc.lines().any(|l| l.trim() == line) {
        return Err(SiliconError::Config(format!(
            "the routed SDC has no line `{line}`"
        )));
    }
    Ok(sdc.replace(
        &line,
        &format!("set ::sbrp_clk_period [expr {{1000.0 / {mhz:.1}}}]"),
    ))
}

/// Runs `constraints/route/resize.tcl` on a routed pass.
fn resize(dir: &Path, liberty: &str, pass: &Pass) -> Result<ResizeLog> {
    let sdc = dir.join("sbrp_pb_routed.sdc");
    write(&sdc, ROUTED_SDC)?;
    let sizing_sdc = dir.join("sbrp_pb_sizing.sdc");
    write(
        &sizing_sdc,
        &sdc_at(ROUTED_SDC, SIZING_GUARD * ROUTED_TARGET_MHZ)?,
    )?;
    let tcl = fill(
        RESIZE_TCL,
        &[
            ("LIBERTY", liberty.to_string()),
            ("NETLIST", pass.flat_path.display().to_string()),
            ("SDC", sdc.display().to_string()),
            ("SIZING_SDC", sizing_sdc.display().to_string()),
            ("SPEF", pass.spef_path.display().to_string()),
            ("PATHS", RESIZE_PATHS.to_string()),
            ("ROUNDS", RESIZE_ROUNDS.to_string()),
        ],
    );
    let tcl_path = dir.join("route_resize.tcl");
    write(&tcl_path, &tcl)?;
    let log = dir.join("route_resize.log");
    let sta = sta();
    let mut cmd = sta.command();
    cmd.arg("-no_splash").arg("-exit").arg(&tcl_path);
    let text = sta
        .run(&mut cmd, "OpenSTA (sizing)", LogFile::Write(&log))?
        .text;
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("Error")).collect();
    if !errors.is_empty() {
        return Err(SiliconError::Output(format!(
            "OpenSTA (sizing) failed:\n{}",
            errors.join("\n")
        )));
    }
    parse_resize(&text)
}

/// `from -> to` and how many cells, in name order.
fn count_changes(changes: &[Resized]) -> Vec<(String, String, u64)> {
    let mut m: BTreeMap<(String, String), u64> = BTreeMap::new();
    for c in changes {
        *m.entry((c.from.clone(), c.to.clone())).or_default() += 1;
    }
    m.into_iter().map(|((f, t), n)| (f, t, n)).collect()
}

/// Places and routes `netlist` (the area flow's) in `dir/route`, times it
/// with its wires, sizes the gates for those loads
/// (`constraints/route/resize.tcl`), places and routes the sized netlist
/// again, and times that with and without its wires; [`ROUTE_FILES`] end
/// up in `dir`.
pub fn run_route_flow(dir: &Path, netlist: &Path) -> Result<RouteReport> {
    let conf = SynthConf::load()?;
    let liberty = conf.liberty.display().to_string();
    let yosys = yosys();
    require_route_tools()?;
    let work = dir.join("route");
    mkdir(&work)?;

    let ys = fill(
        ROUTE_PREP_YS,
        &[
            ("LIBERTY", liberty.clone()),
            ("NETLIST", netlist.display().to_string()),
            ("OUT", work.display().to_string()),
        ],
    );
    let ys_path = work.join("route_prep.ys");
    write(&ys_path, &ys)?;
    let ylog = work.join("yosys_route.log");
    let mut cmd = yosys.command();
    cmd.arg("-q").arg("-l").arg(&ylog).arg("-s").arg(&ys_path);
    yosys.run(
        &mut cmd,
        "yosys (route preparation)",
        LogFile::ByTool(&ylog),
    )?;
    let (blif, cells, names) = prepare_blif(&read(&work.join("sbrp_pb_flat.blif"))?);

    // first pass: the netlist as synthesized
    let first = place_and_route(dir, &work.join("qflow"), &blif, netlist, "_unsized")?;
    let before = sta_run(
        dir,
        &liberty,
        &first.flat_path,
        Some(&first.spef_path),
        "routed_unsized",
    )?;
    let t2 = Instant::now();
    let log = resize(dir, &liberty, &first)?;
    let sizing_seconds = t2.elapsed().as_secs_f64();
    let lib = Liberty::parse(&read(&conf.liberty)?);
    let area = |c: &str| lib.area.get(c).copied().unwrap_or(0.0);
    let area_added_um2 = log
        .changes
        .iter()
        .map(|c| area(&c.to) - area(&c.from))
        .sum();

    // second pass: the sized netlist (the first again when nothing changed)
    let last = if log.changes.is_empty() {
        for (a, b) in [
            ("sbrp_pb_routed_unsized.def", "sbrp_pb_routed.def"),
            ("sbrp_pb_flat_unsized.v", "sbrp_pb_flat.v"),
            ("sbrp_pb_routed_unsized.spef", "sbrp_pb_routed.spef"),
            ("route_place_unsized.log", "route_place.log"),
            ("route_qrouter_unsized.log", "route_qrouter.log"),
        ] {
            write(&dir.join(b), &read(&dir.join(a))?)?;
        }
        Pass {
            flat_path: dir.join("sbrp_pb_flat.v"),
            spef_path: dir.join("sbrp_pb_routed.spef"),
            flat: first.flat.clone(),
            ..first
        }
    } else {
        let sized = apply_sizes(&blif, &log.changes)?;
        place_and_route(dir, &work.join("qflow_sized"), &sized, netlist, "")?
    };
    let sizing = Sizing {
        before,
        resized: count_changes(&log.changes),
        cells_resized: log.changes.len() as u64,
        area_added_um2,
        slack_before_ns: log.start,
        slack_sized_ns: log.done,
        trials: log.trials,
        sizing_seconds,
        wire_cap_before_pf: first.wire_cap_pf,
        place_seconds_before: first.place_seconds,
        route_seconds_before: first.route_seconds,
    };

    let routed = sta_run(
        dir,
        &liberty,
        &last.flat_path,
        Some(&last.spef_path),
        "routed",
    )?;
    let unrouted = sta_run(dir, &liberty, &last.flat_path, None, "unrouted")?;
    let lim = fmax_of(&routed).path;
    let block = |point: &str| instance_block(&last.flat, first_word(point), &names);
    let limit_blocks = (block(&lim.start), block(&lim.end));
    Ok(RouteReport {
        limit_blocks,
        cells,
        density: project_density(ROUTE_PROJECT_VARS),
        die_width_um: last.die_um.0,
        die_height_um: last.die_um.1,
        nets_routed: last.nets_routed,
        wire_cap_pf: last.wire_cap_pf,
        place_seconds: last.place_seconds,
        route_seconds: last.route_seconds,
        routed,
        unrouted,
        sizing: Some(sizing),
    })
}

/// The instance or port of an OpenSTA start or end point (`DFFPOSX1_4
/// (rising edge-triggered flip-flop clocked by clk)` -> `DFFPOSX1_4`).
pub fn first_word(point: &str) -> &str {
    point.split_whitespace().next().unwrap_or(point)
}

/// `set initial_density = x` of the project variables (0: graywolf's own).
fn project_density(vars: &str) -> f64 {
    vars.lines()
        .filter_map(|l| l.trim().strip_prefix("set initial_density"))
        .filter_map(|r| r.trim().trim_start_matches('=').trim().parse().ok())
        .next()
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blif_gets_plain_names_and_rail_ties() {
        let blif = ".model sbrp_pb\n.inputs clock a[0]\n.outputs y\n.names $false\n\
                    .names $true\n1\n.gate LOGIC0 O=b.c\n.gate NAND2X1 A=a[0] B=b.c Y=b_c\n\
                    .gate INVX1 A=b_c Y=y\n.end\n";
        let (out, gates, names) = prepare_blif(blif);
        assert_eq!(gates, 3);
        assert!(!out.contains(".names") && !out.contains("\n1\n"), "{out}");
        // b.c cannot become b_c: that name is taken
        assert!(out.contains(".gate BUFX2 A=gnd Y=b_c_s1\n"), "{out}");
        assert!(
            out.contains(".gate NAND2X1 A=a[0] B=b_c_s1 Y=b_c\n"),
            "{out}"
        );
        assert_eq!(names.get("b_c_s1").map(String::as_str), Some("b.c"));
    }

    #[test]
    fn rc_trees_become_spef() {
        let rc = "n1 1 INVX1_1/Y 2 ( 0 0.001 , ( 10 0.002 NAND2X1_1/A ) , ( 20 0.004 , ( 5 0.001 PIN/y ) ) ) \n";
        let nets = parse_rc(rc).unwrap();
        assert_eq!(nets.len(), 1);
        assert_eq!(nets[0].root.children.len(), 2);
        let (spef, cap) = rc_to_spef(&nets, &BTreeSet::new());
        assert!((cap - 0.008).abs() < 1e-12, "{cap}");
        assert!(spef.contains("*D_NET n1 0.008000"), "{spef}");
        assert!(spef.contains("*I INVX1_1:Y O"), "{spef}");
        assert!(spef.contains("*I NAND2X1_1:A I"), "{spef}");
        assert!(spef.contains("*P y O"), "{spef}");
        assert!(spef.contains("n1:1 NAND2X1_1:A 10.0000"), "{spef}");
        assert!(spef.contains("INVX1_1:Y n1:1 0.0010"), "{spef}");
        assert!(parse_rc("n1 1 X/Y 1 ( 1 oops )\n").is_err());
    }

    #[test]
    fn fmax_scales_io_and_uncertainty_with_the_period() {
        let p = |arrival: f64, launch: f64, setup: f64| PathTiming {
            start: "a".into(),
            end: "b".into(),
            arrival_ns: arrival,
            launch_ns: launch,
            logic_ns: arrival - launch,
            setup_ns: setup,
            blocks: vec![],
            text: String::new(),
        };
        let t = TimingReport {
            period_ns: 3.0,
            wns_ns: 0.0,
            reg_to_reg: p(2.7, 0.3, 0.15),
            in_to_reg: Some(p(0.75 + 1.0, 0.75, 0.15)),
            reg_to_out: Some(p(0.5, 0.3, 0.0)),
            in_to_out: None,
            data_to_reg: None,
            rst_to_reg: None,
            rst_tree: None,
            min_period_ns: 2.85,
            fmax_mhz: 350.0,
        };
        let f = fmax_of(&t);
        assert_eq!(f.limit, "register to register");
        assert!((f.period_ns - 2.85 / 0.95).abs() < 1e-9, "{f:?}");
        // an input path of 1.15 ns needs 1.15 / 0.7 = 1.64 ns; 2.0 ns would win
        let mut t2 = t.clone();
        t2.in_to_reg = Some(p(0.75 + 2.0, 0.75, 0.15));
        let f = fmax_of(&t2);
        assert_eq!(f.limit, "input to register");
        assert!((f.period_ns - 2.15 / 0.7).abs() < 1e-9, "{f:?}");
    }

    #[test]
    fn sizing_log_parses_and_applies_to_the_blif() {
        let log = "Startup\nSBRP_START -0.077 -1.5\n\
                   SBRP_SIZED INVX1_12 INVX1 INVX4 pipe__224_\n\
                   SBRP_SIZED BUFX4_3 BUFX4 BUFX2 y[3]\n\
                   SBRP_SIZED AND2X1_1 AND2X1 AND2X2 n9\n\
                   SBRP_DONE 0.012 0 3 211\n";
        let r = parse_resize(log).unwrap();
        assert_eq!(r.start, (-0.077, -1.5));
        assert_eq!(r.done, (0.012, 0.0));
        assert_eq!(r.trials, 211);
        assert_eq!(r.changes.len(), 3);
        assert_eq!(r.changes[1].net, "y[3]");
        assert_eq!(
            count_changes(&r.changes),
            vec![
                ("AND2X1".into(), "AND2X2".into(), 1),
                ("BUFX4".into(), "BUFX2".into(), 1),
                ("INVX1".into(), "INVX4".into(), 1)
            ]
        );
        let blif = ".model sbrp_pb\n.gate INVX1 A=a Y=pipe__224_\n\
                    .gate INVX1 A=pipe__224_ Y=n8\n.gate BUFX4 A=n8 Y=y[3]\n\
                    .gate AND2X1 A=a B=n8 Y=n9\n.end\n";
        let out = apply_sizes(blif, &r.changes).unwrap();
        assert_eq!(
            out,
            ".model sbrp_pb\n.gate INVX4 A=a Y=pipe__224_\n\
             .gate INVX1 A=pipe__224_ Y=n8\n.gate BUFX2 A=n8 Y=y[3]\n\
             .gate AND2X2 A=a B=n8 Y=n9\n.end\n"
        );
        // a change whose gate is not there (or is another cell) is an error
        let e = apply_sizes(".gate NAND2X1 A=a B=b Y=n9\n", &r.changes[2..]).unwrap_err();
        assert!(
            e.to_string().contains("no AND2X1 gate drives net n9"),
            "{e}"
        );
        // a script that did not finish is an error
        assert!(parse_resize("SBRP_START -0.1 -1\n").is_err());
    }

    #[test]
    fn the_sizing_sdc_is_the_routed_one_at_a_higher_clock() {
        let s = sdc_at(ROUTED_SDC, SIZING_GUARD * ROUTED_TARGET_MHZ).unwrap();
        assert!(
            s.contains("set ::sbrp_clk_period [expr {1000.0 / 346.5}]"),
            "{s}"
        );
        assert_eq!(s.lines().count(), ROUTED_SDC.lines().count());
        assert!(sdc_at("create_clock -period 3\n", 346.5).is_err());
    }

    #[test]
    fn def_die_and_instance_blocks() {
        let def = "UNITS DISTANCE MICRONS 100 ;\nDIEAREA ( 0 0 ) ( 55200 40100 ) ;\n";
        let (w, h) = def_die(def);
        assert!((w - 552.0).abs() < 1e-9 && (h - 401.0).abs() < 1e-9);
        let names: BTreeMap<String, String> = [("pipe__224_", "pipe._224_")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let flat = "DFFPOSX1 DFFPOSX1_4 ( .CLK(clock), .D(x), .Q(y) );\n\
                    DFFPOSX1 DFFPOSX1_40 ( .CLK(clock), .D(x), .Q(pipe__224_) );\n";
        assert_eq!(
            instance_block(flat, "DFFPOSX1_40", &names).as_deref(),
            Some("pipe")
        );
        assert_eq!(instance_block(flat, "DFFPOSX1_4", &names), None);
        assert_eq!(project_density("set initial_density = 0.6\n"), 0.6);
    }
}
