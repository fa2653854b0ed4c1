//! OpenSTA's run (`run_sta`, shared by the area flow and the routed flow)
//! and its report (from `constraints/timing/sta_timing.tcl`): the worst
//! register-to-register, input-to-register, register-to-output and
//! input-to-output paths, each split into launch (clock-to-Q), logic and
//! capture (setup), the highest clock the register-to-register path allows,
//! and the worst slack at the SDC's clock.

use std::path::Path;

use sbrp_tools::{write_atomic, LogFile};
use serde::{Deserialize, Serialize};

use crate::area::block_of;
use crate::config::{fill, STA_TCL};
use crate::error::{Result, SiliconError};
use crate::tools::sta;

/// The kinds of path the script reports, in its order.
pub const PATH_KINDS: [&str; 7] = [
    "reg_to_reg",
    "in_to_reg",
    "reg_to_out",
    "in_to_out",
    "data_to_reg",
    "rst_to_reg",
    "rst_tree",
];

/// The kinds a script may leave out (later additions).
const OPTIONAL_KINDS: [&str; 3] = ["data_to_reg", "rst_to_reg", "rst_tree"];

/// One worst path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathTiming {
    pub start: String,
    pub end: String,
    /// Arrival at the endpoint (launch + logic), ns.
    pub arrival_ns: f64,
    /// Clock-to-Q of the launching flip-flop, or the input delay of a port
    /// (0 in the flow's SDC), ns.
    pub launch_ns: f64,
    /// Gates and buffers from the flip-flop's Q (or the input port, with its
    /// driving cell) to the flip-flop's D (or the output port), ns.
    pub logic_ns: f64,
    /// Setup time of the capturing flip-flop, or the output delay of a port
    /// (0 in the flow's SDC), ns.
    pub setup_ns: f64,
    /// Blocks the path crosses, in order (instance names in brackets).
    pub blocks: Vec<String>,
    /// The path as OpenSTA printed it.
    pub text: String,
}

impl PathTiming {
    /// Shortest clock period this path allows (ideal clock): launch + logic
    /// + setup.
    pub fn min_period_ns(&self) -> f64 {
        self.arrival_ns + self.setup_ns
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimingReport {
    /// Clock period of the SDC (the paper's clock), ns.
    pub period_ns: f64,
    /// Worst setup slack at that clock, ns (a secondary figure).
    pub wns_ns: f64,
    /// Worst register-to-register path: the critical pipeline stage.
    pub reg_to_reg: PathTiming,
    /// Worst path from an input port to a flip-flop (None: no such path).
    pub in_to_reg: Option<PathTiming>,
    /// Worst path from a flip-flop to an output port.
    pub reg_to_out: Option<PathTiming>,
    /// Worst combinational path from an input port to an output port.
    pub in_to_out: Option<PathTiming>,
    /// Worst path from an input other than `rst` to a flip-flop: the data
    /// inputs without the reset tree (None: not reported by the script).
    #[serde(default)]
    pub data_to_reg: Option<PathTiming>,
    /// Worst path from `rst` to a flip-flop: the port to `rst_q` (spec §7).
    #[serde(default)]
    pub rst_to_reg: Option<PathTiming>,
    /// Worst path from the reset register `rst_q` to a flip-flop: the reset
    /// tree, register to register (spec §7).
    #[serde(default)]
    pub rst_tree: Option<PathTiming>,
    /// Shortest period of the register-to-register path, ns.
    pub min_period_ns: f64,
    /// 1000 / `min_period_ns`.
    pub fmax_mhz: f64,
}

/// The value after `key` on a line that starts with it.
fn value(line: &str, key: &str) -> Option<f64> {
    line.strip_prefix(key)?.trim().parse().ok()
}

/// A point of a path: `delay time ^|v pin (CELL|in|out)`.
struct Point<'a> {
    time: f64,
    pin: &'a str,
    kind: &'a str,
}

fn point(line: &str) -> Option<Point<'_>> {
    let t: Vec<&str> = line.split_whitespace().collect();
    if t.len() < 5 || !(t[2] == "^" || t[2] == "v") || !t[4].starts_with('(') {
        return None;
    }
    Some(Point {
        time: t[1].parse().ok()?,
        pin: t[3],
        kind: t[4],
    })
}

/// The block a point belongs to: a port, or the block of the instance path
/// of its cell (`a/b/_12_/Y` -> `a/b`; a cell of the top module -> `sbrp_pb`).
fn point_block(p: &Point<'_>) -> String {
    if p.kind == "(in)" || p.kind == "(out)" {
        return format!("port {}", p.pin);
    }
    let parts: Vec<&str> = p.pin.split('/').collect();
    let inst = if parts.len() >= 3 {
        parts[..parts.len() - 2].join("/")
    } else {
        "sbrp_pb".to_string()
    };
    format!("{} [{inst}]", block_of(&inst))
}

/// `(delay, time)` of a line of the report that ends with `label`.
fn labelled(line: &str, label: &str) -> Option<(f64, f64)> {
    let rest = line.trim_end().strip_suffix(label)?;
    let n: Vec<f64> = rest
        .split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect();
    match n[..] {
        [d, t] => Some((d, t)),
        [t] => Some((0.0, t)),
        _ => None,
    }
}

/// One path of `report_checks` (full format); None for "No paths found.".
pub(crate) fn parse_path(text: &str) -> Result<Option<PathTiming>> {
    if text.contains("No paths found") {
        return Ok(None);
    }
    let bad = |what: &str| {
        SiliconError::Output(format!(
            "OpenSTA path report without {what}:\n{}",
            sbrp_tools::error_lines(text)
        ))
    };
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
    };
    let start = field("Startpoint:").ok_or_else(|| bad("a startpoint"))?;
    let end = field("Endpoint:").ok_or_else(|| bad("an endpoint"))?;
    let mut arrival = None;
    let mut launch = None;
    let mut setup = 0.0;
    let mut points = Vec::new();
    let mut blocks: Vec<String> = Vec::new();
    for l in text.lines() {
        if arrival.is_none() {
            if let Some((_, t)) = labelled(l, "input external delay") {
                launch = Some(t);
            }
            if let Some((_, t)) = labelled(l, "data arrival time") {
                arrival = Some(t);
                continue;
            }
            if let Some(p) = point(l) {
                let b = point_block(&p);
                if blocks.last() != Some(&b) {
                    blocks.push(b);
                }
                points.push(p);
            }
        } else if let Some((d, _)) = labelled(l, "library setup time") {
            setup = -d;
        } else if let Some((d, _)) = labelled(l, "output external delay") {
            setup = d;
        }
    }
    let arrival = arrival.ok_or_else(|| bad("a data arrival time"))?;
    // A flip-flop start: its clock pin, then its output after clock-to-Q.
    let launch = match (launch, &points[..]) {
        (Some(t), _) => t,
        (None, [ck, q, ..]) => q.time - ck.time,
        _ => return Err(bad("a launching flip-flop")),
    };
    Ok(Some(PathTiming {
        start,
        end,
        arrival_ns: arrival,
        launch_ns: launch,
        logic_ns: arrival - launch,
        setup_ns: setup,
        blocks,
        text: text.to_string(),
    }))
}

/// Reads the script's output.
pub(crate) fn parse_sta(text: &str) -> Result<TimingReport> {
    let mut wns = None;
    let mut period = None;
    let mut sections: Vec<(String, String)> = Vec::new();
    for l in text.lines() {
        if let Some(v) = value(l, "SBRP_WNS") {
            wns = Some(v);
        } else if let Some(v) = value(l, "SBRP_PERIOD") {
            period = Some(v);
        } else if let Some(k) = l.strip_prefix("SBRP_PATH ") {
            sections.push((k.trim().to_string(), String::new()));
        } else if l.starts_with("SBRP_END") {
            break;
        } else if let Some((_, s)) = sections.last_mut() {
            s.push_str(l);
            s.push('\n');
        }
    }
    let missing = |what: &str| {
        SiliconError::Output(format!(
            "OpenSTA printed no {what}:\n{}",
            sbrp_tools::error_lines(text)
        ))
    };
    let wns = wns.ok_or_else(|| missing("worst slack"))?;
    let period = period.ok_or_else(|| missing("clock period"))?;
    let mut paths = Vec::new();
    for kind in PATH_KINDS {
        match sections.iter().find(|(k, _)| k == kind) {
            Some((_, s)) => paths.push(parse_path(s)?),
            // the rst-less input paths are an addition; the others are required
            None if OPTIONAL_KINDS.contains(&kind) => paths.push(None),
            None => return Err(missing(&format!("{kind} path"))),
        }
    }
    let mut paths = paths.into_iter();
    let reg_to_reg = paths
        .next()
        .flatten()
        .ok_or_else(|| missing("register-to-register path"))?;
    let min_period = reg_to_reg.min_period_ns();
    Ok(TimingReport {
        period_ns: period,
        wns_ns: wns,
        in_to_reg: paths.next().flatten(),
        reg_to_out: paths.next().flatten(),
        in_to_out: paths.next().flatten(),
        data_to_reg: paths.next().flatten(),
        rst_to_reg: paths.next().flatten(),
        rst_tree: paths.next().flatten(),
        reg_to_reg,
        min_period_ns: min_period,
        fmax_mhz: 1000.0 / min_period,
    })
}

/// The files of one OpenSTA run in its directory: the constraints (name
/// and text), the script and the log.
pub(crate) struct StaFiles<'a> {
    pub sdc: (&'a str, &'a str),
    pub tcl: String,
    pub log: String,
}

/// Runs OpenSTA's script in `dir` on `netlist` with the constraints of
/// `files` and the `parasitics` command (empty: none).
pub(crate) fn run_sta(
    dir: &Path,
    liberty: &str,
    netlist: &Path,
    parasitics: String,
    files: &StaFiles<'_>,
) -> Result<TimingReport> {
    let sdc_path = dir.join(files.sdc.0);
    write_atomic(&sdc_path, files.sdc.1.as_bytes())?;
    let tcl = fill(
        STA_TCL,
        &[
            ("LIBERTY", liberty.to_string()),
            ("NETLIST", netlist.display().to_string()),
            ("SDC", sdc_path.display().to_string()),
            ("PARASITICS", parasitics),
        ],
    );
    let tcl_path = dir.join(&files.tcl);
    write_atomic(&tcl_path, tcl.as_bytes())?;
    let log = dir.join(&files.log);
    let sta = sta();
    let mut cmd = sta.command();
    cmd.arg("-no_splash").arg("-exit").arg(&tcl_path);
    let text = sta.run(&mut cmd, "OpenSTA", LogFile::Write(&log))?.text;
    // OpenSTA reports errors of a script and still exits 0.
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("Error")).collect();
    if !errors.is_empty() {
        return Err(SiliconError::Output(format!(
            "OpenSTA failed:\n{}",
            errors.join("\n")
        )));
    }
    parse_sta(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REG_TO_REG: &str = "\
Startpoint: r_actr/_5_ (rising edge-triggered flip-flop clocked by clk)
Endpoint: pb_warps/_7_ (rising edge-triggered flip-flop clocked by clk)
   0.000    0.000   clock clk (rise edge)
   0.000    0.000   clock network delay (ideal)
   0.000    0.000 ^ r_actr/_5_/CLK (DFFPOSX1)
   0.400    0.400 ^ r_actr/_5_/Q (DFFPOSX1)
   0.000    0.400 ^ _12_/A (NAND2X1)
   0.300    0.700 v _12_/Y (NAND2X1)
   0.200    0.900 v pb_warps/_7_/D (DFFPOSX1)
            0.900   data arrival time

   0.733    0.733   clock clk (rise edge)
   0.000    0.733   clock network delay (ideal)
            0.733 ^ pb_warps/_7_/CLK (DFFPOSX1)
  -0.189    0.544   library setup time
            0.544   data required time
           -0.356   slack (VIOLATED)
";

    const IN_TO_OUT: &str = "\
Startpoint: req_line[0] (input port clocked by clk)
Endpoint: flush_line[0] (output port clocked by clk)
   0.000    0.000   clock clk (rise edge)
   0.000    0.000   clock network delay (ideal)
   0.000    0.000 ^ input external delay
   0.084    0.084 ^ req_line[0] (in)
   0.176    0.259 ^ s1/pb_line/_13_/Y (BUFX4)
   0.100    0.359 ^ flush_line[0] (out)
            0.359   data arrival time

   0.733    0.733   clock clk (rise edge)
   0.000    0.733   output external delay
            0.733   data required time
";

    fn script_output(in_to_out: &str) -> String {
        format!(
            "SBRP_PERIOD 0.733\nSBRP_WNS -0.356\nSBRP_PATH reg_to_reg\n{REG_TO_REG}\
             SBRP_PATH in_to_reg\nNo paths found.\nSBRP_PATH reg_to_out\nNo paths found.\n\
             SBRP_PATH in_to_out\n{in_to_out}SBRP_END\n"
        )
    }

    #[test]
    fn splits_the_stage_into_clock_to_q_logic_and_setup() {
        let t = parse_sta(&script_output(IN_TO_OUT)).unwrap();
        assert_eq!((t.period_ns, t.wns_ns), (0.733, -0.356));
        let r = &t.reg_to_reg;
        assert!(r.start.starts_with("r_actr/_5_") && r.end.starts_with("pb_warps/_7_"));
        assert_eq!((r.arrival_ns, r.launch_ns, r.setup_ns), (0.9, 0.4, 0.189));
        assert!((r.logic_ns - 0.5).abs() < 1e-12);
        assert!((t.min_period_ns - 1.089).abs() < 1e-12);
        assert!((t.fmax_mhz - 1000.0 / 1.089).abs() < 1e-9);
        assert_eq!(
            r.blocks,
            [
                "control [r_actr]",
                "control [sbrp_pb]",
                "PB storage [pb_warps]"
            ]
        );
        assert!(t.in_to_reg.is_none() && t.reg_to_out.is_none());
        let io = t.in_to_out.as_ref().unwrap();
        assert_eq!((io.launch_ns, io.setup_ns, io.logic_ns), (0.0, 0.0, 0.359));
        assert_eq!(
            io.blocks,
            [
                "port req_line[0]",
                "PB storage [s1/pb_line]",
                "port flush_line[0]"
            ]
        );
    }

    #[test]
    fn a_report_without_slack_or_stage_is_an_error() {
        let e = parse_sta("Error: cannot read netlist\n").unwrap_err();
        assert!(e.to_string().contains("Error: cannot read netlist"), "{e}");
        let no_stage = script_output(IN_TO_OUT).replace(REG_TO_REG, "No paths found.\n");
        let e = parse_sta(&no_stage).unwrap_err();
        assert!(e.to_string().contains("register-to-register"), "{e}");
    }
}
