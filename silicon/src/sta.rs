//! OpenSTA's report (from `flow/sta_timing.tcl`): worst slack, minimum
//! period, the ordering checks' delay, and the critical path with the
//! blocks it crosses.

use serde::{Deserialize, Serialize};

use crate::area::block_of;
use crate::error::{Result, SiliconError};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

/// The value after `key` on a line that starts with it.
fn value(line: &str, key: &str) -> Option<f64> {
    line.strip_prefix(key)?.trim().parse().ok()
}

/// The block a pin of a path line belongs to, from a line
/// `delay time ^|v inst/cell/PIN (TYPE)` or `... port (in|out)`.
fn pin_block(line: &str) -> Option<String> {
    let toks: Vec<&str> = line.split_whitespace().collect();
    if toks.len() < 5 || !(toks[2] == "^" || toks[2] == "v") {
        return None;
    }
    let is_port = toks[4] == "(in)" || toks[4] == "(out)";
    let pin = toks[3];
    if !(pin.contains('/') || is_port) {
        return None;
    }
    let parts: Vec<&str> = pin.split('/').collect();
    Some(if is_port {
        format!("port {pin}")
    } else if parts.len() >= 3 {
        format!("{} [{}]", block_of(parts[0]), parts[0])
    } else {
        format!("{} [sbrp_pb]", block_of("sbrp_pb"))
    })
}

/// Reads the report; `sdc_period` is the period when the report names none.
pub(crate) fn parse_sta(text: &str, sdc_period: f64) -> Result<TimingReport> {
    let mut wns = None;
    let mut minp = None;
    let mut ord: Option<f64> = None;
    let mut period = sdc_period;
    let (mut start, mut end, mut arrival) = (String::new(), String::new(), 0.0);
    let mut blocks: Vec<String> = Vec::new();
    let mut path_text = String::new();
    let mut in_path = false;
    for l in text.lines() {
        if let Some(v) = value(l, "SBRP_WNS") {
            wns = Some(v);
        } else if let Some(v) = value(l, "SBRP_FMAX_PERIOD") {
            minp = Some(v);
        } else if let Some(v) = value(l, "SBRP_ORDERING_DELAY") {
            ord = Some(ord.map_or(v, |o| o.max(v)));
        } else if let Some(v) = value(l, "SBRP_PERIOD") {
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
        if let Some(b) = pin_block(l) {
            if blocks.last() != Some(&b) {
                blocks.push(b);
            }
        }
    }
    let wns = wns.ok_or_else(|| {
        SiliconError::Output(format!(
            "OpenSTA printed no worst slack:\n{}",
            sbrp_tools::error_lines(text)
        ))
    })?;
    let minp =
        minp.ok_or_else(|| SiliconError::Output("OpenSTA printed no minimum period".into()))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "\
SBRP_PERIOD 0.733
Startpoint: r_actr/_5_ (rising edge-triggered flip-flop clocked by clock)
Endpoint: m_warps/_7_ (rising edge-triggered flip-flop clocked by clock)
   0.00    0.00 ^ r_actr/_5_/CLK (DFFPOSX1)
   0.40    0.40 ^ r_actr/_5_/Q (DFFPOSX1)
   0.30    0.70 v _12_/Y (NAND2X1)
   0.20    0.90 v m_warps/_7_/D (DFFPOSX1)
           0.90   data arrival time
SBRP_PATH_END
SBRP_WNS -0.250
SBRP_FMAX_PERIOD 1.000
SBRP_ORDERING_DELAY 0.5
SBRP_ORDERING_DELAY 0.6
";

    #[test]
    fn reads_slack_path_and_blocks() {
        let t = parse_sta(REPORT, 9.9).unwrap();
        assert_eq!(
            (t.period_ns, t.wns_ns, t.min_period_ns),
            (0.733, -0.25, 1.0)
        );
        assert_eq!(t.fmax_mhz, 1000.0);
        assert_eq!(t.ordering_delay_ns, 0.6);
        assert_eq!(t.path_arrival_ns, 0.9);
        assert!(t.path_start.starts_with("r_actr/_5_"));
        assert_eq!(
            t.path_blocks,
            [
                "warp masks and ACTR [r_actr]",
                "ordering checks and control [sbrp_pb]",
                "PB storage [m_warps]"
            ]
        );
    }

    #[test]
    fn a_report_without_slack_is_an_error() {
        let e = parse_sta("Error: cannot read netlist\n", 1.0).unwrap_err();
        assert!(e.to_string().contains("Error: cannot read netlist"), "{e}");
        let e = parse_sta("SBRP_WNS 0.1\n", 1.0).unwrap_err();
        assert!(e.to_string().contains("minimum period"), "{e}");
    }
}
