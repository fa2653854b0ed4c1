//! The library's fan-out-of-4 inverter delay (FO4), measured by the flow's
//! own OpenSTA: a chain of the library's smallest inverter, each stage
//! loaded by four copies of itself, typical corner, no wire load. Timing is
//! reported in this unit, so that a path can be compared across libraries.

use std::fmt::Write as _;
use std::path::Path;

use sbrp_tools::{write_atomic, LogFile};
use serde::{Deserialize, Serialize};

use crate::config::SynthConf;
use crate::error::{Result, SiliconError};
use crate::tools::{require, sta};

/// Fan-out of each stage (the "4" of FO4).
const FANOUT: usize = 4;
/// Leading stages left out of the average: the input slew settles there.
const SETTLE: usize = 4;

/// The measured FO4 delay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fo4 {
    /// Inverter cell of the chain.
    pub cell: String,
    /// Stages of the chain (the first few are left out of the average).
    pub stages: usize,
    /// Mean delay of the measured stages whose output rises, ps.
    pub rise_ps: f64,
    /// Mean delay of the measured stages whose output falls, ps.
    pub fall_ps: f64,
    /// (rise + fall) / 2, ps.
    pub fo4_ps: f64,
}

/// Structural Verilog of the chain: input `a`, stages `fo4_s<i>`, each
/// output loaded by the next stage and dummy inverters (4 loads in all).
pub(crate) fn chain_verilog(conf: &SynthConf, stages: usize) -> String {
    let (cell, i, o) = (&conf.inverter_cell, &conf.inverter_in, &conf.inverter_out);
    let mut v = String::from("// FO4 chain of the silicon flow (generated)\nmodule fo4_chain(a, y);\n  input a;\n  output y;\n");
    for n in 0..=stages {
        let _ = writeln!(v, "  wire n{n};");
    }
    v.push_str("  assign n0 = a;\n");
    for s in 0..stages {
        let _ = writeln!(v, "  {cell} fo4_s{s} (.{i}(n{s}), .{o}(n{}));", s + 1);
        // The next stage is one load; the last stage has none after it.
        let dummies = if s + 1 < stages { FANOUT - 1 } else { FANOUT };
        for d in 0..dummies {
            let _ = writeln!(v, "  {cell} fo4_l{s}_{d} (.{i}(n{}), .{o}());", s + 1);
        }
    }
    let _ = writeln!(v, "  assign y = n{stages};\nendmodule");
    v
}

/// OpenSTA script: the chain driven by the same inverter, one path per
/// input edge.
fn chain_tcl(conf: &SynthConf, liberty: &str, netlist: &str) -> String {
    format!(
        "read_liberty {liberty}\nread_verilog {netlist}\nlink_design fo4_chain\n\
         set_driving_cell -lib_cell {cell} -pin {o} [get_ports a]\n\
         set_input_delay 0 [get_ports a]\n\
         report_checks -unconstrained -rise_from [get_ports a] -to [get_ports y] -digits 4\n\
         report_checks -unconstrained -fall_from [get_ports a] -to [get_ports y] -digits 4\n",
        cell = conf.inverter_cell,
        o = conf.inverter_out,
    )
}

/// Stage delays from the two path reports: lines
/// `incr time ^|v fo4_s<i>/<out> (<cell>)`.
pub(crate) fn parse_chain(text: &str, conf: &SynthConf, stages: usize) -> Result<Fo4> {
    let (mut rise, mut fall) = (Vec::new(), Vec::new());
    for l in text.lines() {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.len() < 4 {
            continue;
        }
        let Some(stage) = t[3]
            .strip_prefix("fo4_s")
            .and_then(|r| r.split('/').next())
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        let Ok(incr) = t[0].parse::<f64>() else {
            continue;
        };
        if stage < SETTLE {
            continue;
        }
        match t[2] {
            "^" => rise.push(incr),
            "v" => fall.push(incr),
            _ => {}
        }
    }
    // Each measured stage once rising and once falling (two paths).
    let expected = stages.saturating_sub(SETTLE);
    if rise.len() != expected || fall.len() != expected || expected == 0 {
        return Err(SiliconError::Output(format!(
            "FO4 chain: OpenSTA reported {} rising and {} falling stages, expected {expected} each:\n{}",
            rise.len(),
            fall.len(),
            sbrp_tools::error_lines(text)
        )));
    }
    let mean_ps = |v: &[f64]| 1000.0 * v.iter().sum::<f64>() / v.len() as f64;
    let (rise_ps, fall_ps) = (mean_ps(&rise), mean_ps(&fall));
    Ok(Fo4 {
        cell: conf.inverter_cell.clone(),
        stages,
        rise_ps,
        fall_ps,
        fo4_ps: (rise_ps + fall_ps) / 2.0,
    })
}

/// Measures the FO4 of the flow's library with OpenSTA in `dir` (leaves
/// `fo4_chain.v`, `fo4.tcl` and `fo4.log` there). Takes well under a second.
pub fn measure_fo4(dir: &Path) -> Result<Fo4> {
    let conf = SynthConf::load()?;
    conf.require_liberty()?;
    let sta = sta();
    require(&sta, "-version")?;
    let stages = conf.fo4_stages;
    let netlist = dir.join("fo4_chain.v");
    write_atomic(&netlist, chain_verilog(&conf, stages).as_bytes())?;
    let tcl = dir.join("fo4.tcl");
    let script = chain_tcl(
        &conf,
        &conf.liberty.display().to_string(),
        &netlist.display().to_string(),
    );
    write_atomic(&tcl, script.as_bytes())?;
    let log = dir.join("fo4.log");
    let mut cmd = sta.command();
    cmd.arg("-no_splash").arg("-exit").arg(&tcl);
    let text = sta
        .run(&mut cmd, "OpenSTA (FO4 chain)", LogFile::Write(&log))?
        .text;
    parse_chain(&text, &conf, stages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SYNTH_CONF;

    fn conf() -> SynthConf {
        SynthConf::parse(SYNTH_CONF).unwrap()
    }

    #[test]
    fn every_stage_has_four_loads() {
        let v = chain_verilog(&conf(), 6);
        for n in 1..=6 {
            let loads = v.matches(&format!(".A(n{n})")).count();
            assert_eq!(loads, 4, "net n{n}:\n{v}");
        }
        assert_eq!(v.matches(".A(n0)").count(), 1);
    }

    #[test]
    fn stage_delays_average_rise_and_fall() {
        let mut text = String::new();
        for first_rises in [true, false] {
            for s in 0..8 {
                let rises = (s % 2 == 0) == first_rises;
                let (edge, d) = if rises { ("^", 0.105) } else { ("v", 0.093) };
                text.push_str(&format!("   {d}  1.0 {edge} fo4_s{s}/Y (INVX1)\n"));
            }
        }
        let f = parse_chain(&text, &conf(), 8).unwrap();
        assert!((f.rise_ps - 105.0).abs() < 1e-9 && (f.fall_ps - 93.0).abs() < 1e-9);
        assert!((f.fo4_ps - 99.0).abs() < 1e-9, "{f:?}");
        let e = parse_chain("Error: no such cell\n", &conf(), 8).unwrap_err();
        assert!(e.to_string().contains("no such cell"), "{e}");
    }
}
