//! `sbrp area`: area and timing of the unit through Yosys and OpenSTA
//! (`sbrp_silicon`, results and method in docs/hardware.md).

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use sbrp_silicon::{AreaOptions, SweepEvent};
use sbrp_testbench::plot::{png_of_svg, xy_panels_svg, XyPanel};

use crate::args::{flag_error, ParamArgs};
use crate::Verdict;

#[derive(Args, Clone, Debug)]
pub struct AreaArgs {
    #[command(flatten)]
    params: ParamArgs,
    /// Synthesize entries {32,64,128,256,512} x warps {32,64} (lines 512,
    /// the other parameters as given) and print a table; writes sweep.csv into --out.
    #[arg(long)]
    sweep: bool,
    /// Directory for the reports (report.txt, area.csv or sweep.csv, the
    /// mapped netlist and the tool logs); written only when the flow succeeds.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Skip OpenSTA (area only).
    #[arg(long)]
    no_timing: bool,
    /// Also price arrays of 32 words or more as OpenRAM SRAM macros
    /// (FreePDK45) and report the logic outside them; needs
    /// `bash scripts/setup.sh --openram` once, and minutes per macro.
    #[arg(long)]
    sram: bool,
    /// Also place and route the netlist with qflow (graywolf, qrouter) on
    /// the same cells and time it with the extracted wires, a 5% clock
    /// uncertainty and I/O delays of a quarter period; the gates are then
    /// sized for those wires (OpenSTA) and the sized netlist placed and
    /// routed again (one configuration; minutes for small ones, see
    /// docs/hardware.md for the default's).
    #[arg(long, conflicts_with_all = ["sweep", "no_timing"])]
    route: bool,
    /// How the memories of 32 words or more are built: `latches` (a latch
    /// per bit with gated enables, constraints/synth/latch_array.v; smaller
    /// and faster, docs/hardware.md §2 "Latch arrays") or `flops` (Yosys'
    /// memory mapping, the unit of the earlier figures).
    #[arg(long, value_name = "latches|flops", default_value = "latches")]
    arrays: sbrp_silicon::Arrays,
}

pub fn run(a: &AreaArgs) -> Result<Verdict> {
    let p = a.params.params()?;
    let opts = AreaOptions {
        timing: !a.no_timing,
        sram: a.sram,
        route: a.route,
        arrays: a.arrays,
        out: a.out.clone(),
    };
    let csv_name = if a.sweep {
        for w in sbrp_silicon::SWEEP_WARPS {
            for e in sbrp_silicon::SWEEP_ENTRIES {
                let q = sbrp_iface::PbParams {
                    entries: e,
                    warps: w,
                    lines: 512,
                    ..p
                };
                q.validate().map_err(flag_error)?;
            }
        }
        let r = sbrp_silicon::sweep(p.window, &opts, &mut |ev| match ev {
            SweepEvent::Synthesizing(p) => eprintln!("sbrp area: synthesizing {} ...", p.tag()),
            SweepEvent::Skipped(p, e) => eprintln!("sbrp area: skipped {}: {e}", p.tag()),
        })?;
        print!("{}", sbrp_silicon::format_sweep(&r.rows));
        if let Some(out) = &a.out {
            write_sweep_plot(out, &r.rows)?;
        }
        "sweep.csv"
    } else {
        let r = sbrp_silicon::area(&p, &opts)?;
        print!("{}", sbrp_silicon::format_report(&r));
        "area.csv"
    };
    if let Some(out) = &a.out {
        let plot = if a.sweep {
            ", sweep.svg, sweep.png"
        } else {
            ""
        };
        println!("wrote report.txt, {csv_name}{plot} in {}", out.display());
    }
    Ok(Verdict::Pass)
}

/// Area and critical-stage delay against entries, a line per warp count,
/// as sweep.svg and sweep.png beside sweep.csv.
fn write_sweep_plot(out: &Path, rows: &[sbrp_silicon::AreaReport]) -> Result<()> {
    let mut warps: Vec<u32> = rows.iter().map(|r| r.params.warps).collect();
    warps.dedup();
    let series = |f: &dyn Fn(&sbrp_silicon::AreaReport) -> Option<f64>| {
        warps
            .iter()
            .map(|&w| {
                let pts = rows
                    .iter()
                    .filter(|r| r.params.warps == w)
                    .filter_map(|r| Some((r.params.entries as f64, f(r)?)))
                    .collect();
                (format!("{w} warps"), pts)
            })
            .collect()
    };
    let panels = [
        XyPanel {
            caption: "Area (OSU 0.18 um, Yosys)".into(),
            x_desc: "persist buffer entries".into(),
            y_desc: "area (mm^2)".into(),
            series: series(&|r| Some(r.area_um2 / 1e6)),
        },
        XyPanel {
            caption: "Critical stage (OpenSTA, zero wire load)".into(),
            x_desc: "persist buffer entries".into(),
            y_desc: "logic delay (FO4)".into(),
            series: series(&|r| r.in_fo4(r.timing.as_ref()?.reg_to_reg.logic_ns)),
        },
    ];
    let svg = xy_panels_svg(&panels)?;
    let png = png_of_svg(&svg)?;
    let files = [
        (out.join("sweep.svg"), svg.into_bytes()),
        (out.join("sweep.png"), png),
    ];
    let refs: Vec<(&Path, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_path(), b.as_slice()))
        .collect();
    sbrp_tools::write_all_atomic(&refs)?;
    Ok(())
}
