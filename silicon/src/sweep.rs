//! The area flow as `sbrp area` runs it: one configuration or the sweep
//! over entries x warps, each in its own scratch directory, with the report,
//! the CSV and (for one configuration) the tools' files published into an
//! output directory only when everything succeeded.

use std::path::PathBuf;

use sbrp_iface::{FlushPolicy, PbParams};
use sbrp_tools::{write_atomic, Scratch};
use serde::{Deserialize, Serialize};

use crate::area::{run_area_flow_with, AreaReport, FLOW_FILES};
use crate::error::{Result, SiliconError};
use crate::latch::Arrays;
use crate::report::{format_csv, format_report, format_sweep};
use crate::route::{require_route_tools, run_route_flow, ROUTE_FILES};
use crate::sram::run_sram;

/// Entries and warps of the sweep (lines 512).
pub const SWEEP_ENTRIES: [u32; 5] = [32, 64, 128, 256, 512];
pub const SWEEP_WARPS: [u32; 2] = [32, 64];

/// Options shared by one configuration and the sweep.
#[derive(Clone, Debug, Default)]
pub struct AreaOptions {
    /// Run OpenSTA too.
    pub timing: bool,
    /// Also price the deep arrays as OpenRAM SRAM macros (needs the
    /// environment of `scripts/setup.sh --openram`; minutes per macro).
    pub sram: bool,
    /// Also place and route the netlist and time it with the wires
    /// (qflow, qrouter; one configuration only, needs `timing`).
    pub route: bool,
    /// How the memories of 32 words or more are built.
    pub arrays: Arrays,
    /// Where to write `report.txt`, the CSV (`area.csv` or `sweep.csv`) and,
    /// for one configuration, [`FLOW_FILES`]; nothing is written when the
    /// flow fails.
    pub out: Option<PathBuf>,
}

/// The sweep's configurations and the ones skipped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    pub rows: Vec<AreaReport>,
    /// Configurations the RTL generator has no instance for, with why.
    pub skipped: Vec<(String, String)>,
}

/// Progress of a sweep, for the caller to show.
#[derive(Debug)]
pub enum SweepEvent<'a> {
    Synthesizing(&'a PbParams),
    Skipped(&'a PbParams, &'a SiliconError),
}

/// Parameters of a configuration of `sbrp area` (ACTR 8 bits, window policy).
pub fn area_params(entries: u32, warps: u32, lines: u32, window: u32) -> Result<PbParams> {
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

fn in_context(p: &PbParams, e: SiliconError) -> SiliconError {
    SiliconError::AreaFlow {
        tag: p.tag(),
        error: Box::new(e),
    }
}

/// The area flow of one configuration; with `opts.out`, writes
/// `report.txt`, `area.csv` and [`FLOW_FILES`] there.
pub fn area(p: &PbParams, opts: &AreaOptions) -> Result<AreaReport> {
    if opts.route {
        if !opts.timing {
            return Err(SiliconError::Config(
                "place and route needs timing (--route without --no-timing)".into(),
            ));
        }
        require_route_tools()?;
    }
    let scratch = Scratch::new("area")?;
    let mut r = run_area_flow_with(p, scratch.path(), opts.timing, opts.arrays)
        .map_err(|e| in_context(p, e))?;
    if opts.sram {
        r.sram = Some(run_sram(&r, scratch.path()).map_err(|e| in_context(p, e))?);
    }
    if opts.route {
        let netlist = scratch.path().join("sbrp_pb_netlist.v");
        r.route = Some(run_route_flow(scratch.path(), &netlist).map_err(|e| in_context(p, e))?);
    }
    if let Some(out) = &opts.out {
        let text = format!("{}\n", format_report(&r));
        let csv = format_csv(std::slice::from_ref(&r))?;
        write_atomic(&scratch.path().join("report.txt"), text.as_bytes())?;
        write_atomic(&scratch.path().join("area.csv"), csv.as_bytes())?;
        scratch.publish(
            out,
            &[
                &["report.txt", "area.csv"][..],
                &FLOW_FILES[..],
                &["latch_array.v", "latch_cells.v"][..],
                &ROUTE_FILES[..],
            ]
            .concat(),
        )?;
    }
    Ok(r)
}

/// The sweep: entries [`SWEEP_ENTRIES`] x warps [`SWEEP_WARPS`], lines 512;
/// with `opts.out`, writes `report.txt` (every report and the table) and
/// `sweep.csv` there.
pub fn sweep(
    window: u32,
    opts: &AreaOptions,
    progress: &mut dyn FnMut(SweepEvent<'_>),
) -> Result<SweepReport> {
    let mut configs = Vec::new();
    for w in SWEEP_WARPS {
        for e in SWEEP_ENTRIES {
            configs.push(area_params(e, w, 512, window)?);
        }
    }
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for p in &configs {
        let scratch = Scratch::new("area-run")?;
        progress(SweepEvent::Synthesizing(p));
        match run_area_flow_with(p, scratch.path(), opts.timing, opts.arrays) {
            Ok(mut r) => {
                if opts.sram {
                    r.sram = Some(run_sram(&r, scratch.path()).map_err(|e| in_context(p, e))?);
                }
                rows.push(r)
            }
            Err(e @ SiliconError::Generate { .. }) => {
                progress(SweepEvent::Skipped(p, &e));
                skipped.push((p.tag(), e.to_string()));
            }
            Err(e) => return Err(in_context(p, e)),
        }
    }
    if let Some(out) = &opts.out {
        let mut text: String = rows
            .iter()
            .map(|r| format!("{}\n", format_report(r)))
            .collect();
        text.push_str(&format_sweep(&rows));
        let scratch = Scratch::new("area")?;
        write_atomic(&scratch.path().join("report.txt"), text.as_bytes())?;
        write_atomic(
            &scratch.path().join("sweep.csv"),
            format_csv(&rows)?.as_bytes(),
        )?;
        scratch.publish(out, &["report.txt", "sweep.csv"])?;
    }
    Ok(SweepReport { rows, skipped })
}
