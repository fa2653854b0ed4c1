//! Text and CSV forms of the area reports: one configuration, the sweep
//! table, and the verdict on how the ordering checks' delay grows.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::area::AreaReport;
use crate::error::{Result, SiliconError};
use crate::sweep::SWEEP_WARPS;

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
    if let Some(f) = &r.fo4 {
        let _ = writeln!(
            s,
            "FO4 of the library (measured: OpenSTA, {} {}-stage chain, fan-out 4): {:.1} ps (rise {:.1}, fall {:.1})",
            f.cell, f.stages, f.fo4_ps, f.rise_ps, f.fall_ps
        );
    }
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

/// One row of `area.csv` / `sweep.csv`: numbers as the text report rounds
/// them; an empty field when there is no timing.
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
    non_storage_share: String,
    generic_cells: u64,
    nand2_eq: String,
    fanout_buffers: u64,
    wns_ns: Option<String>,
    critical_path_ns: Option<String>,
    ordering_delay_ns: Option<String>,
    fmax_mhz: Option<String>,
    pb_storage_um2: String,
    masks_actr_um2: String,
    l1_hooks_um2: String,
    control_um2: String,
}

impl CsvRow {
    fn of(r: &AreaReport) -> CsvRow {
        let t = r.timing.as_ref();
        let ns = |v: Option<f64>| v.map(|v| format!("{v:.3}"));
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
            non_storage_share: format!("{:.4}", r.non_storage_share()),
            generic_cells: r.generic_cells,
            nand2_eq: format!("{:.0}", r.nand2_equivalents),
            fanout_buffers: r.fanout_buffers,
            wns_ns: ns(t.map(|t| t.wns_ns)),
            critical_path_ns: ns(t.map(|t| t.path_arrival_ns)),
            ordering_delay_ns: ns(t.map(|t| t.ordering_delay_ns)),
            fmax_mhz: t.map(|t| format!("{:.0}", t.fmax_mhz)),
            pb_storage_um2: block(0),
            masks_actr_um2: block(1),
            l1_hooks_um2: block(2),
            control_um2: block(3),
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

const CSV_HEADER: &str = "entries,warps,lines,cells,area_um2,ff_bits,spec_bits,paper_bits,non_storage_share,generic_cells,nand2_eq,fanout_buffers,wns_ns,critical_path_ns,ordering_delay_ns,fmax_mhz,pb_storage_um2,masks_actr_um2,l1_hooks_um2,control_um2";

/// How the ordering checks' delay grows with entries, for one warp count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OrderingGrowth {
    pub warps: u32,
    /// Delay added by each doubling of entries, ns.
    pub steps_ns: Vec<f64>,
    /// Least-squares slope, ns per doubling.
    pub slope_ns: f64,
    /// At most logarithmic in entries.
    pub logarithmic: bool,
}

/// Growth of the ordering-check delay with entries, per warp count of the
/// sweep (3 points at least). A delay a + b log2(N) adds the same amount
/// per doubling; the check is that the second half of the doublings adds no
/// more than the first half, plus 0.2 ns of synthesis noise (a delay linear
/// in N would add 4 to 16 times more in the second half).
pub fn ordering_growth(rows: &[AreaReport]) -> Vec<OrderingGrowth> {
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
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        let half = steps.len() / 2;
        let first: f64 = steps[..half].iter().sum();
        let second: f64 = steps[steps.len() - half..].iter().sum();
        out.push(OrderingGrowth {
            warps: w,
            logarithmic: second <= first.max(0.0) + 0.2,
            steps_ns: steps,
            slope_ns: sxy / sxx,
        });
    }
    out
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
    for g in ordering_growth(rows) {
        let st: Vec<String> = g.steps_ns.iter().map(|d| format!("{d:+.3}")).collect();
        let _ = writeln!(
            s,
            "ordering checks, warps {}: delay added per doubling of entries {} ns (fit {:.3} ns per doubling): {}",
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

    fn report(entries: u32, warps: u32, ordering: f64, timing: bool) -> AreaReport {
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
                    cells: 25,
                    area_um2: 500.1,
                    ff_bits: 1,
                })
                .collect(),
            modules: vec![],
            ff_bits: 4,
            spec_bits: 4,
            paper_bits: 5,
            ff_area_um2: 500.0,
            fanout_buffers: 2,
            generic_cells: 50,
            nand2_equivalents: 62.6,
            fo4: timing.then(|| crate::fo4::Fo4 {
                cell: "INVX1".into(),
                stages: 12,
                rise_ps: 105.0,
                fall_ps: 93.0,
                fo4_ps: 99.0,
            }),
            timing: timing.then(|| TimingReport {
                period_ns: 0.733,
                wns_ns: -1.5,
                min_period_ns: 2.0,
                fmax_mhz: 500.0,
                path_start: "a".into(),
                path_end: "b".into(),
                path_arrival_ns: 2.1,
                path_blocks: vec!["x".into()],
                ordering_delay_ns: ordering,
                path_text: String::new(),
            }),
            synth_seconds: 1.0,
        }
    }

    #[test]
    fn csv_has_the_header_and_rounded_fields() {
        let csv = format_csv(&[report(32, 32, 1.25, true), report(64, 32, 1.5, false)]).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(
            lines[1],
            "32,32,512,100,2000,4,4,5,0.7500,50,63,2,-1.500,2.100,1.250,500,500,500,500,500"
        );
        assert_eq!(
            lines[2],
            "64,32,512,100,2000,4,4,5,0.7500,50,63,2,,,,,500,500,500,500"
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
        let g = ordering_growth(&[log, lin].concat());
        assert_eq!(g.len(), 2);
        assert!(
            g[0].logarithmic && (g[0].slope_ns - 0.1).abs() < 1e-9,
            "{g:?}"
        );
        assert!(!g[1].logarithmic, "{g:?}");
        let table = format_sweep(&[]);
        assert!(table.contains("entries") && !table.contains("ordering checks"));
    }

    #[test]
    fn text_report_flags_a_violated_clock_and_a_bit_mismatch() {
        let mut r = report(32, 32, 1.0, true);
        r.ff_bits = 3;
        let t = format_report(&r);
        assert!(t.contains("(VIOLATED)") && t.contains(", DIFFERENT"), "{t}");
        assert!(t.starts_with("sbrp area: entries 32 warps 32 lines 512"));
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
