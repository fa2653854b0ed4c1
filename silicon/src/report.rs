//! Text and CSV forms of the area reports: one configuration, the sweep
//! table, and the verdict on how the critical stage's delay grows.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::area::AreaReport;
use crate::error::{Result, SiliconError};
use crate::latch::Arrays;
use crate::route::{
    first_word, fmax_of, RouteReport, Sizing, IO_FRACTION, ROUTED_TARGET_MHZ, UNCERTAINTY_FRACTION,
};
use crate::sram::SRAM_TECH;
use crate::sta::{PathTiming, TimingReport};
use crate::sweep::SWEEP_WARPS;

/// A start or end point without OpenSTA's description of it.
fn short(point: &str) -> &str {
    point.split(" (").next().unwrap_or(point)
}

/// `ns` and its FO4 count, e.g. `4.456 ns = 44.9 FO4`.
fn ns_fo4(r: &AreaReport, ns: f64) -> String {
    match r.in_fo4(ns) {
        Some(f) => format!("{ns:.3} ns = {f:.1} FO4"),
        None => format!("{ns:.3} ns"),
    }
}

fn path_line(s: &mut String, r: &AreaReport, what: &str, p: Option<&PathTiming>, note: &str) {
    match p {
        Some(p) => {
            let _ = writeln!(
                s,
                "  {what:<20} {} {note}: {} -> {}",
                ns_fo4(r, p.logic_ns),
                short(&p.start),
                short(&p.end)
            );
        }
        None => {
            let _ = writeln!(s, "  {what:<20} none");
        }
    }
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
    if r.arrays == Arrays::Latches {
        let _ = writeln!(
            s,
            "arrays: latches (memories of 32 words or more: a latch per bit, word selects and bit \
             enables held by latches while the clock is high, write data registered; \
             constraints/synth/latch_array.v)"
        );
    }
    for c in &r.area_corrections {
        let _ = writeln!(
            s,
            "area of {}: {:.0} um^2 from the LEF (the liberty gives {:.0})",
            c.cell, c.lef_um2, c.liberty_um2
        );
    }
    let _ = writeln!(
        s,
        "cells: {}   area: {:.0} um^2 ({:.4} mm^2)   fan-out buffers: {}",
        r.cells,
        r.area_um2,
        r.area_um2 / 1e6,
        r.fanout_buffers
    );
    let over = if r.arrays == Arrays::Flops {
        format!("{} flip-flop bits", r.ff_bits)
    } else {
        format!(
            "{} stored bits (as the flip-flop flow counts them; {} latches and flip-flops with the \
             arrays' write control)",
            r.bits(),
            r.ff_bits
        )
    };
    let _ = writeln!(
        s,
        "area per stored bit: {:.1} um^2/bit over {over}; {:.0} NAND2 equivalents, {:.2} per bit",
        r.um2_per_bit(),
        r.nand2_equivalents,
        r.nand2_per_bit()
    );
    let _ = writeln!(s, "by block (PB storage: the pb_* sub-modules):");
    let _ = writeln!(
        s,
        "  {:<30} {:>9} {:>14} {:>7} {:>9} {:>10}",
        "block", "cells", "area um^2", "share", "FF bits", "um^2/bit"
    );
    for b in &r.blocks {
        let per_bit = if b.ff_bits > 0 {
            format!("{:.1}", b.area_um2 / b.ff_bits as f64)
        } else {
            "-".into()
        };
        let _ = writeln!(
            s,
            "  {:<30} {:>9} {:>14.0} {:>6.1}% {:>9} {:>10}",
            b.block,
            b.cells,
            b.area_um2,
            100.0 * b.area_um2 / r.area_um2.max(1e-9),
            b.ff_bits,
            per_bit
        );
    }
    if !r.memories.is_empty() {
        let _ = writeln!(
            s,
            "memories (Yosys, before mapping to flip-flops; area of the memory's module):"
        );
        let _ = writeln!(
            s,
            "  {:<24} {:>13} {:>10} {:>11} {:<18} {:>12} {:>9}",
            "memory", "words x bits", "read ports", "write ports", "reads", "area um^2", "um^2/bit"
        );
        for m in &r.memories {
            let (area, per_bit) = if m.area_um2 > 0.0 {
                (
                    format!("{:.0}", m.area_um2),
                    format!("{:.1}", m.area_um2 / m.stored_bits().max(1) as f64),
                )
            } else {
                ("-".into(), "-".into())
            };
            let _ = writeln!(
                s,
                "  {:<24} {:>13} {:>10} {:>11} {:<18} {:>12} {:>9}",
                m.name,
                format!("{} x {}", m.words, m.bits),
                m.read_ports,
                m.write_ports,
                m.read_kind(),
                area,
                per_bit
            );
        }
    }
    let _ = writeln!(
        s,
        "flip-flop bits: {} (spec storage table {}{}; paper's estimate {}); flip-flop area {:.0} um^2",
        r.ff_bits,
        r.spec_bits,
        if r.ff_bits == r.spec_bits {
            ", equal"
        } else {
            ", DIFFERENT"
        },
        r.paper_bits,
        r.ff_area_um2
    );
    let _ = writeln!(
        s,
        "logic outside the memory arrays: {:.0} NAND2 equivalents (what would remain beside SRAM macros)",
        r.logic_outside_memories_nand2()
    );
    let _ = writeln!(
        s,
        "technology-independent: {} generic gates (Yosys internal cells after synth)",
        r.generic_cells
    );
    if let Some(m) = &r.sram {
        let _ = writeln!(
            s,
            "SRAM view: deep arrays as {} macros, 1RW+1R, one copy per read port:",
            m.tech
        );
        let _ = writeln!(
            s,
            "  {:<24} {:>13} {:>10} {:>7} {:>18} {:>12}",
            "memory", "words x bits", "read ports", "copies", "macro um", "area um^2"
        );
        for x in &m.macros {
            let _ = writeln!(
                s,
                "  {:<24} {:>13} {:>10} {:>7} {:>18} {:>12.0}",
                x.memory,
                format!("{} x {}", x.words, x.bits),
                x.read_ports,
                x.copies,
                format!("{:.1} x {:.1}", x.width_um, x.height_um),
                x.area_um2()
            );
        }
        let _ = writeln!(
            s,
            "  macros: {:.0} um^2 ({}); logic outside the macros: {:.0} NAND2 equivalents ({}; kept as flip-flops: {})",
            m.macro_area_um2,
            SRAM_TECH,
            m.logic_outside_nand2,
            r.library,
            if m.kept_as_flops.is_empty() {
                "none".to_string()
            } else {
                m.kept_as_flops.join(", ")
            }
        );
    }
    if let Some(f) = &r.fo4 {
        let _ = writeln!(
            s,
            "FO4 of the library (measured: OpenSTA, {} {}-stage chain, fan-out 4): {:.1} ps (rise {:.1}, fall {:.1})",
            f.cell, f.stages, f.fo4_ps, f.rise_ps, f.fall_ps
        );
    }
    if let Some(t) = &r.timing {
        let st = &t.reg_to_reg;
        let _ = writeln!(
            s,
            "timing (ideal clock; registered I/O: input and output delays 0):"
        );
        path_line(
            &mut s,
            r,
            "register to register",
            Some(st),
            &format!(
                "of logic (clock-to-Q {:.3} and setup {:.3} ns excluded)",
                st.launch_ns, st.setup_ns
            ),
        );
        let _ = writeln!(s, "    crosses: {}", st.blocks.join(" -> "));
        path_line(
            &mut s,
            r,
            "input to register",
            t.in_to_reg.as_ref(),
            "(from the port with its driver, setup excluded)",
        );
        if let Some(d) = &t.data_to_reg {
            path_line(&mut s, r, "  without rst", Some(d), "(data inputs only)");
        }
        if let Some(d) = &t.rst_to_reg {
            path_line(
                &mut s,
                r,
                "  rst",
                Some(d),
                "(the port into the reset register rst_q, spec section 7)",
            );
        }
        if let Some(d) = &t.rst_tree {
            path_line(
                &mut s,
                r,
                "  reset tree",
                Some(d),
                "(rst_q to every register: register to register, clock-to-Q excluded)",
            );
        }
        path_line(
            &mut s,
            r,
            "register to output",
            t.reg_to_out.as_ref(),
            "(clock-to-Q excluded)",
        );
        path_line(
            &mut s,
            r,
            "input to output",
            t.in_to_out.as_ref(),
            "(combinational)",
        );
        let _ = writeln!(
            s,
            "highest clock in this library: {:.0} MHz (period {:.3} ns = clock-to-Q + stage logic + setup of the register-to-register path)",
            t.fmax_mhz, t.min_period_ns
        );
        let _ = writeln!(
            s,
            "secondary: worst slack at the paper's {:.0} MHz (period {:.3} ns): {:.3} ns{}",
            1000.0 / t.period_ns,
            t.period_ns,
            t.wns_ns,
            if t.wns_ns >= 0.0 {
                " (met)"
            } else {
                " (VIOLATED)"
            }
        );
    }
    if let (Some(rt), Some(t)) = (&r.route, &r.timing) {
        route_lines(&mut s, rt, t, r.area_um2);
    }
    s
}

/// The `--route` part of the report: the routed fmax first, the zero-wire
/// figures after it, labelled.
fn route_lines(s: &mut String, rt: &RouteReport, zero: &TimingReport, area_um2: f64) {
    let f = rt.fmax();
    let u = rt.fmax_unrouted();
    let _ = writeln!(
        s,
        "placed and routed (qflow 1.3: graywolf at density {:.0}%, qrouter; wires from qrouter's RC trees as SPEF into OpenSTA):",
        100.0 * rt.density
    );
    let _ = writeln!(
        s,
        "  {} cells on a {:.0} x {:.0} um die; {} nets routed (the clock left ideal), {:.1} pF of wire; place {:.0} s, route {:.0} s",
        rt.cells,
        rt.die_width_um,
        rt.die_height_um,
        rt.nets_routed,
        rt.wire_cap_pf,
        rt.place_seconds,
        rt.route_seconds
    );
    let _ = writeln!(
        s,
        "  constraints: ideal clock (no clock tree) with {:.0}% uncertainty; input and output delays {:.0}% of the period each",
        100.0 * UNCERTAINTY_FRACTION,
        100.0 * IO_FRACTION
    );
    let gap = if f.mhz >= ROUTED_TARGET_MHZ {
        format!("target {ROUTED_TARGET_MHZ:.0} MHz met")
    } else {
        format!(
            "target {ROUTED_TARGET_MHZ:.0} MHz MISSED by {:.1} MHz",
            ROUTED_TARGET_MHZ - f.mhz
        )
    };
    let point = |p: &str, b: &Option<String>| match b {
        Some(b) => format!("{} [{b}]", first_word(p)),
        None => first_word(p).to_string(),
    };
    let _ = writeln!(
        s,
        "highest clock after routing: {:.1} MHz (period {:.3} ns, set by the {} path {} -> {}: {:.3} ns to its endpoint, {:.3} ns of it logic and wire); {gap}",
        f.mhz,
        f.period_ns,
        f.limit,
        point(&f.path.start, &rt.limit_blocks.0),
        point(&f.path.end, &rt.limit_blocks.1),
        f.path.arrival_ns,
        f.path.logic_ns
    );
    let _ = writeln!(
        s,
        "  zero wire load, same netlist and constraints: {:.0} MHz ({} path {} -> {})",
        u.mhz,
        u.limit,
        first_word(&u.path.start),
        first_word(&u.path.end)
    );
    let _ = writeln!(
        s,
        "  zero wire load, ideal clock, no uncertainty, I/O delays 0 (the figure above): {:.0} MHz",
        zero.fmax_mhz
    );
    let _ = writeln!(
        s,
        "  worst slack at {:.0} MHz after routing (OpenSTA, uncertainty and I/O delays included): {:.3} ns",
        1000.0 / rt.routed.period_ns,
        rt.routed.wns_ns
    );
    if let Some(z) = &rt.sizing {
        sizing_lines(s, z, area_um2);
    }
}

/// The sizing between the two passes of `--route`, and the first pass.
fn sizing_lines(s: &mut String, z: &Sizing, area_um2: f64) {
    let b = fmax_of(&z.before);
    let list = if z.resized.is_empty() {
        "none: the first pass is the figure above".to_string()
    } else {
        z.resized
            .iter()
            .map(|(f, t, n)| format!("{f} -> {t} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        s,
        "sized for the routed loads (OpenSTA on the first pass's wires, then placed and routed again): {} cells ({list}), {:+.0} um^2 ({:+.2}% of the cell area); {} changes tried in {:.0} s",
        z.cells_resized,
        z.area_added_um2,
        100.0 * z.area_added_um2 / area_um2.max(1e-9),
        z.trials,
        z.sizing_seconds
    );
    let _ = writeln!(
        s,
        "  on the first pass's wires: worst slack {:.3} -> {:.3} ns, total negative slack {:.3} -> {:.3} ns (at {:.0} MHz)",
        z.slack_before_ns.0,
        z.slack_sized_ns.0,
        z.slack_before_ns.1,
        z.slack_sized_ns.1,
        1000.0 / z.before.period_ns
    );
    let _ = writeln!(
        s,
        "  before sizing (first pass, the netlist as synthesized): {:.1} MHz ({} path {} -> {}: {:.3} ns to its endpoint); {:.1} pF of wire; place {:.0} s, route {:.0} s",
        b.mhz,
        b.limit,
        first_word(&b.path.start),
        first_word(&b.path.end),
        b.path.arrival_ns,
        z.wire_cap_before_pf,
        z.place_seconds_before,
        z.route_seconds_before
    );
}

/// One row of `area.csv` / `sweep.csv`: numbers as the text report rounds
/// them; an empty field when there is no timing (or no such path).
#[derive(Serialize)]
struct CsvRow {
    entries: u32,
    warps: u32,
    lines: u32,
    cells: u64,
    area_um2: String,
    ff_bits: u64,
    spec_bits: u64,
    paper_bits: u64,
    um2_per_bit: String,
    nand2_eq: String,
    nand2_eq_per_bit: String,
    generic_cells: u64,
    fanout_buffers: u64,
    fo4_ps: Option<String>,
    stage_logic_ns: Option<String>,
    stage_fo4: Option<String>,
    in_to_reg_fo4: Option<String>,
    reg_to_out_fo4: Option<String>,
    in_to_out_fo4: Option<String>,
    min_period_ns: Option<String>,
    fmax_mhz: Option<String>,
    wns_paper_clock_ns: Option<String>,
    pb_storage_um2: String,
    control_um2: String,
}

impl CsvRow {
    fn of(r: &AreaReport) -> CsvRow {
        let t = r.timing.as_ref();
        let ns = |v: Option<f64>| v.map(|v| format!("{v:.3}"));
        let fo4 = |p: Option<&PathTiming>| {
            p.and_then(|p| r.in_fo4(p.logic_ns))
                .map(|f| format!("{f:.1}"))
        };
        let block = |i: usize| {
            r.blocks
                .get(i)
                .map(|b| format!("{:.0}", b.area_um2))
                .unwrap_or_default()
        };
        CsvRow {
            entries: r.params.entries,
            warps: r.params.warps,
            lines: r.params.lines,
            cells: r.cells,
            area_um2: format!("{:.0}", r.area_um2),
            ff_bits: r.ff_bits,
            spec_bits: r.spec_bits,
            paper_bits: r.paper_bits,
            um2_per_bit: format!("{:.1}", r.um2_per_bit()),
            nand2_eq: format!("{:.0}", r.nand2_equivalents),
            nand2_eq_per_bit: format!("{:.2}", r.nand2_per_bit()),
            generic_cells: r.generic_cells,
            fanout_buffers: r.fanout_buffers,
            fo4_ps: r.fo4.as_ref().map(|f| format!("{:.1}", f.fo4_ps)),
            stage_logic_ns: ns(t.map(|t| t.reg_to_reg.logic_ns)),
            stage_fo4: fo4(t.map(|t| &t.reg_to_reg)),
            in_to_reg_fo4: fo4(t.and_then(|t| t.in_to_reg.as_ref())),
            reg_to_out_fo4: fo4(t.and_then(|t| t.reg_to_out.as_ref())),
            in_to_out_fo4: fo4(t.and_then(|t| t.in_to_out.as_ref())),
            min_period_ns: ns(t.map(|t| t.min_period_ns)),
            fmax_mhz: t.map(|t| format!("{:.0}", t.fmax_mhz)),
            wns_paper_clock_ns: ns(t.map(|t| t.wns_ns)),
            pb_storage_um2: block(0),
            control_um2: block(1),
        }
    }
}

/// The CSV of `rows` (header, one line per configuration).
pub fn format_csv(rows: &[AreaReport]) -> Result<String> {
    let csv_err = |e: &dyn std::fmt::Display| SiliconError::Output(format!("CSV: {e}"));
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    if rows.is_empty() {
        // serde writes the header with the first row: an empty table still
        // gets it.
        w.write_record(CSV_HEADER.split(','))
            .map_err(|e| csv_err(&e))?;
    }
    for r in rows {
        w.serialize(CsvRow::of(r)).map_err(|e| csv_err(&e))?;
    }
    let bytes = w.into_inner().map_err(|e| csv_err(&e))?;
    String::from_utf8(bytes).map_err(|e| csv_err(&e))
}

const CSV_HEADER: &str = "entries,warps,lines,cells,area_um2,ff_bits,spec_bits,paper_bits,um2_per_bit,nand2_eq,nand2_eq_per_bit,generic_cells,fanout_buffers,fo4_ps,stage_logic_ns,stage_fo4,in_to_reg_fo4,reg_to_out_fo4,in_to_out_fo4,min_period_ns,fmax_mhz,wns_paper_clock_ns,pb_storage_um2,control_um2";

/// How the critical stage's logic delay grows with entries, for one warp
/// count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageGrowth {
    pub warps: u32,
    /// Delay added by each doubling of entries, ns.
    pub steps_ns: Vec<f64>,
    /// Least-squares slope, ns per doubling.
    pub slope_ns: f64,
    /// At most logarithmic in entries.
    pub logarithmic: bool,
}

/// Growth of the register-to-register logic delay with entries, per warp
/// count of the sweep (3 points at least). A delay a + b log2(N) adds the
/// same amount per doubling; the check is that the second half of the
/// doublings adds no more than the first half, plus 0.2 ns of synthesis
/// noise (a delay linear in N would add 4 to 16 times more in the second
/// half).
pub fn stage_growth(rows: &[AreaReport]) -> Vec<StageGrowth> {
    let mut out = Vec::new();
    for w in SWEEP_WARPS {
        let mut pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.params.warps == w)
            .filter_map(|r| {
                r.timing
                    .as_ref()
                    .map(|t| (f64::from(r.params.entries).log2(), t.reg_to_reg.logic_ns))
            })
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        if pts.len() < 3 {
            continue;
        }
        let steps: Vec<f64> = pts.windows(2).map(|a| a[1].1 - a[0].1).collect();
        let n = pts.len() as f64;
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        let half = steps.len() / 2;
        let first: f64 = steps[..half].iter().sum();
        let second: f64 = steps[steps.len() - half..].iter().sum();
        out.push(StageGrowth {
            warps: w,
            logarithmic: second <= first.max(0.0) + 0.2,
            steps_ns: steps,
            slope_ns: sxy / sxx,
        });
    }
    out
}

/// The sweep table and the verdict on the critical stage's growth.
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
        "um^2/bit",
        "stage ns",
        "stage FO4",
        "fmax"
    );
    for r in rows {
        let t = r.timing.as_ref();
        let dash = || "-".to_string();
        let _ = writeln!(
            s,
            "{:>7} {:>5} {:>8} {:>10.4} {:>8} {:>9.1} {:>9} {:>9} {:>7}",
            r.params.entries,
            r.params.warps,
            r.cells,
            r.area_um2 / 1e6,
            r.ff_bits,
            r.um2_per_bit(),
            t.map(|t| format!("{:.3}", t.reg_to_reg.logic_ns))
                .unwrap_or_else(dash),
            t.and_then(|t| r.in_fo4(t.reg_to_reg.logic_ns))
                .map(|f| format!("{f:.1}"))
                .unwrap_or_else(dash),
            t.map(|t| format!("{:.0}", t.fmax_mhz)).unwrap_or_else(dash)
        );
    }
    for g in stage_growth(rows) {
        let st: Vec<String> = g.steps_ns.iter().map(|d| format!("{d:+.3}")).collect();
        let _ = writeln!(
            s,
            "critical stage, warps {}: logic delay added per doubling of entries {} ns (fit {:.3} ns per doubling): {}",
            g.warps,
            st.join(", "),
            g.slope_ns,
            if g.logarithmic {
                "no worse than logarithmic"
            } else {
                "GROWS FASTER THAN LOGARITHMIC"
            }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::area::{BlockArea, BLOCKS};
    use crate::sta::TimingReport;
    use sbrp_iface::PbParams;

    fn path(launch: f64, logic: f64, setup: f64) -> PathTiming {
        PathTiming {
            start: "a".into(),
            end: "b".into(),
            arrival_ns: launch + logic,
            launch_ns: launch,
            logic_ns: logic,
            setup_ns: setup,
            blocks: vec!["x".into()],
            text: String::new(),
        }
    }

    /// A report whose critical stage has `stage` ns of logic.
    fn report(entries: u32, warps: u32, stage: f64, timing: bool) -> AreaReport {
        AreaReport {
            params: PbParams {
                entries,
                warps,
                lines: 512,
                ..PbParams::default()
            },
            library: "lib".into(),
            cells: 100,
            area_um2: 2000.4,
            cell_counts: Default::default(),
            blocks: BLOCKS
                .iter()
                .map(|b| BlockArea {
                    block: b.to_string(),
                    cells: 50,
                    area_um2: 1000.2,
                    ff_bits: 2,
                })
                .collect(),
            modules: vec![],
            memories: vec![crate::memories::MemoryPorts {
                name: "m_type".into(),
                module: "sbrp_pb$m_type".into(),
                words: 256,
                bits: 3,
                read_ports: 4,
                sync_read_ports: 0,
                write_ports: 1,
                area_um2: 76800.0,
            }],
            ff_bits: 4,
            stored_bits: 0,
            arrays: Arrays::Flops,
            area_corrections: vec![],
            spec_bits: 4,
            paper_bits: 5,
            ff_area_um2: 500.0,
            fanout_buffers: 2,
            generic_cells: 50,
            nand2_equivalents: 62.8,
            fo4: timing.then(|| crate::fo4::Fo4 {
                cell: "INVX1".into(),
                stages: 12,
                rise_ps: 105.0,
                fall_ps: 93.0,
                fo4_ps: 99.0,
            }),
            timing: timing.then(|| {
                let st = path(0.1, stage, 0.2);
                TimingReport {
                    period_ns: 0.733,
                    wns_ns: -1.5,
                    min_period_ns: st.min_period_ns(),
                    fmax_mhz: 1000.0 / st.min_period_ns(),
                    reg_to_reg: st,
                    in_to_reg: Some(path(0.0, 0.495, 0.2)),
                    reg_to_out: None,
                    in_to_out: None,
                    data_to_reg: None,
                    rst_to_reg: None,
                    rst_tree: None,
                }
            }),
            sram: None,
            route: None,
            synth_seconds: 1.0,
        }
    }

    #[test]
    fn csv_has_the_header_and_rounded_fields() {
        let csv = format_csv(&[report(32, 32, 1.98, true), report(64, 32, 1.5, false)]).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(
            lines[1],
            "32,32,512,100,2000,4,4,5,500.1,63,15.70,50,2,99.0,1.980,20.0,5.0,,,2.280,439,-1.500,1000,1000"
        );
        assert_eq!(
            lines[2],
            "64,32,512,100,2000,4,4,5,500.1,63,15.70,50,2,,,,,,,,,,1000,1000"
        );
        assert!(!csv.contains('\r'));
        assert_eq!(format_csv(&[]).unwrap(), format!("{CSV_HEADER}\n"));
    }

    #[test]
    fn logarithmic_growth_passes_and_linear_growth_fails() {
        let entries = [32, 64, 128, 256, 512];
        let log: Vec<_> = entries
            .iter()
            .enumerate()
            .map(|(i, &e)| report(e, 32, 1.0 + 0.1 * i as f64, true))
            .collect();
        let lin: Vec<_> = entries
            .iter()
            .map(|&e| report(e, 64, 0.01 * f64::from(e), true))
            .collect();
        let g = stage_growth(&[log, lin].concat());
        assert_eq!(g.len(), 2);
        assert!(
            g[0].logarithmic && (g[0].slope_ns - 0.1).abs() < 1e-9,
            "{g:?}"
        );
        assert!(!g[1].logarithmic, "{g:?}");
        let table = format_sweep(&[]);
        assert!(table.contains("entries") && !table.contains("critical stage"));
    }

    #[test]
    fn text_report_gives_stage_fo4_fmax_and_per_bit_figures() {
        let mut r = report(32, 32, 1.98, true);
        r.ff_bits = 3;
        let t = format_report(&r);
        assert!(t.starts_with("sbrp area: entries 32 warps 32 lines 512"));
        assert!(t.contains("(VIOLATED)") && t.contains(", DIFFERENT"), "{t}");
        assert!(t.contains("99.0 ps (rise 105.0, fall 93.0)"), "{t}");
        assert!(t.contains("1.980 ns = 20.0 FO4 of logic"), "{t}");
        assert!(t.contains("input to register    0.495 ns = 5.0 FO4"), "{t}");
        assert!(t.contains("register to output   none"), "{t}");
        assert!(t.contains("highest clock in this library: 439 MHz"), "{t}");
        assert!(t.contains("666.8 um^2/bit over 3 flip-flop bits"), "{t}");
        assert!(!t.contains("not storage"), "{t}");
        // Control is half of 2000.4 um^2; 62.8 NAND2-eq in all.
        assert!(
            t.contains("logic outside the memory arrays: 31 NAND2"),
            "{t}"
        );
        assert!(
            t.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["m_type", "256", "x", "3", "4", "1", "async", "76800", "100.0"]),
            "{t}"
        );
    }

    #[test]
    fn route_lines_give_the_sized_pass_then_the_zero_wire_and_the_first_pass() {
        let mut r = report(16, 4, 2.262, true);
        let zero = r.timing.clone().unwrap();
        // routed: 0.3 + 2.45 + 0.15 = 2.9 ns / 0.95 -> 327.6 MHz
        let timing = |logic: f64| TimingReport {
            period_ns: 1000.0 / 330.0,
            wns_ns: -0.02,
            reg_to_reg: path(0.3, logic, 0.15),
            in_to_reg: None,
            reg_to_out: None,
            in_to_out: None,
            data_to_reg: None,
            rst_to_reg: None,
            rst_tree: None,
            min_period_ns: 0.45 + logic,
            fmax_mhz: 1000.0 / (0.45 + logic),
        };
        r.route = Some(RouteReport {
            cells: 5581,
            density: 0.6,
            die_width_um: 731.0,
            die_height_um: 516.0,
            nets_routed: 5608,
            wire_cap_pf: 20.7,
            place_seconds: 81.0,
            route_seconds: 78.0,
            routed: timing(2.45),
            unrouted: timing(2.2),
            limit_blocks: (Some("pipe".into()), None),
            sizing: Some(Sizing {
                before: timing(2.5),
                resized: vec![
                    ("BUFX4".into(), "BUFX2".into(), 1),
                    ("INVX1".into(), "INVX2".into(), 2),
                ],
                cells_resized: 3,
                area_added_um2: 20.0,
                slack_before_ns: (-0.077, -0.365),
                slack_sized_ns: (0.027, 0.0),
                trials: 255,
                sizing_seconds: 4.0,
                wire_cap_before_pf: 20.7,
                place_seconds_before: 90.0,
                route_seconds_before: 80.0,
            }),
        });
        let t = format_report(&r);
        let at = |needle: &str| t.find(needle).unwrap_or_else(|| panic!("{needle}: {t}"));
        assert!(t.contains("highest clock after routing: 327.6 MHz"), "{t}");
        assert!(t.contains("a [pipe] -> b:"), "{t}");
        assert!(t.contains("target 330 MHz MISSED by 2.4 MHz"), "{t}");
        assert!(
            t.contains(
                "3 cells (BUFX4 -> BUFX2 1, INVX1 -> INVX2 2), +20 um^2 (+1.00% of the cell area)"
            ),
            "{t}"
        );
        assert!(t.contains("worst slack -0.077 -> 0.027 ns"), "{t}");
        // 0.3 + 2.5 + 0.15 = 2.95 ns / 0.95 -> 322.0 MHz
        assert!(
            t.contains("before sizing (first pass, the netlist as synthesized): 322.0 MHz"),
            "{t}"
        );
        // the routed line, then the zero-wire lines, then the sizing
        assert!(at("highest clock after routing") < at("zero wire load, same netlist"));
        assert!(at("zero wire load, same netlist") < at("zero wire load, ideal clock"));
        assert!(at("zero wire load, ideal clock") < at("sized for the routed loads"));
        assert!(t.contains(&format!("(the figure above): {:.0} MHz", zero.fmax_mhz)));
        // a report of the one-pass flow (no sizing) still reads back
        let mut json: serde_json::Value = serde_json::to_value(r.route.as_ref().unwrap()).unwrap();
        json.as_object_mut().unwrap().remove("sizing");
        let back: RouteReport = serde_json::from_value(json).unwrap();
        assert_eq!(back.sizing, None);
    }

    #[test]
    fn reports_round_trip_through_serde() {
        let r = report(32, 32, 1.0, true);
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"policy\":\"window\""), "{json}");
        let back: AreaReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}
