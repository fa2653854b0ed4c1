//! The mapped netlist Yosys writes (one pin per line): modules and cell
//! instances, the fan-out repair (buffer trees on nets with many loads),
//! and the cells, area and flip-flops of each module.

use std::collections::{BTreeMap, HashMap};

use crate::config::SynthConf;
use crate::error::{Result, SiliconError};
use crate::liberty::Liberty;

/// One cell instance (pins on their own lines, as Yosys writes them).
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
    /// Index of the line that ends the port list.
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
            let header_end = if line.trim_end().ends_with(';') {
                0
            } else {
                usize::MAX
            };
            cur = Some(NetModule {
                name,
                lines: vec![line.to_string()],
                header_end,
                insts: Vec::new(),
            });
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
            mods.extend(cur.take());
            continue;
        }
        if let Some(i) = inst.as_mut() {
            let t = line.trim();
            if t == ");" {
                m.insts.extend(inst.take());
            } else if let Some(p) = t.strip_prefix('.') {
                if let (Some(a), Some(b)) = (p.find('('), p.rfind(')')) {
                    if a < b {
                        i.pins
                            .push((idx, p[..a].to_string(), p[a + 1..b].trim().to_string()));
                    }
                }
            }
            continue;
        }
        if line.starts_with("  ") && !line.starts_with("   ") && line.trim_end().ends_with('(') {
            let mut it = line.split_whitespace();
            let (Some(cell), Some(_name)) = (it.next(), it.next()) else {
                continue;
            };
            if matches!(
                cell,
                "wire" | "input" | "output" | "inout" | "reg" | "assign"
            ) {
                continue;
            }
            inst = Some(Inst {
                cell: cell.trim_start_matches('\\').to_string(),
                pins: Vec::new(),
            });
        }
    }
    mods
}

/// `line` (a pin line `.PIN(net)`) connected to `net` instead.
fn reconnect(line: &str, net: &str) -> String {
    match (line.find('('), line.rfind(')')) {
        (Some(a), Some(b)) if a < b => format!("{}({net}){}", &line[..a], &line[b + 1..]),
        _ => line.to_string(),
    }
}

/// A load of a net while its buffer tree is built.
enum Sink {
    /// A pin line of the netlist.
    Pin(usize),
    /// The input of a new buffer (index into the buffer inputs).
    Buf(usize),
}

/// Splits every net with more than `max_fanout` loads on library-cell inputs
/// into a tree of buffers. Returns the new netlist and the number of buffers.
pub(crate) fn repair_fanout(text: &str, lib: &Liberty, conf: &SynthConf) -> (String, u64) {
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
        let mut body = Vec::new();
        for (net, pins) in loads {
            if pins.len() <= f {
                continue;
            }
            let mut sinks: Vec<Sink> = pins.into_iter().map(Sink::Pin).collect();
            // Per new buffer: its output net and its input net (set once the
            // level above is built).
            let mut outs: Vec<String> = Vec::new();
            let mut ins: Vec<Option<String>> = Vec::new();
            while sinks.len() > f {
                let mut next = Vec::new();
                for group in sinks.chunks(f) {
                    let n = format!("_sbrp_fo{}_", decls.len());
                    decls.push(format!("  wire {n};"));
                    for s in group {
                        match s {
                            Sink::Pin(l) => m.lines[*l] = reconnect(&m.lines[*l], &n),
                            Sink::Buf(k) => ins[*k] = Some(n.clone()),
                        }
                    }
                    outs.push(n);
                    ins.push(None);
                    next.push(Sink::Buf(ins.len() - 1));
                }
                sinks = next;
            }
            for s in &sinks {
                if let Sink::Buf(k) = s {
                    ins[*k] = Some(net.clone());
                }
            }
            for (out, input) in outs.into_iter().zip(ins) {
                let input = input.unwrap_or_else(|| net.clone());
                body.push(format!(
                    "  {cell} _sbrp_fob{added}_ (\n    .{i}({input} ),\n    .{o}({out})\n  );",
                    cell = conf.buffer_cell,
                    i = conf.buffer_in,
                    o = conf.buffer_out
                ));
                added += 1;
            }
        }
        if !decls.is_empty() {
            let end = m.lines.len() - 1;
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

/// Cells, area and flip-flops of one module of the mapped netlist (own cells
/// only, times the module's instance count from the top).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ModuleArea {
    pub module: String,
    pub cells: u64,
    pub area_um2: f64,
    pub ff_bits: u64,
}

/// The modules of `text` and the count of each library cell.
pub(crate) fn module_areas(
    text: &str,
    lib: &Liberty,
) -> Result<(Vec<ModuleArea>, HashMap<String, u64>)> {
    let mods = parse_netlist(text);
    let mut out = Vec::new();
    let mut cell_counts: HashMap<String, u64> = HashMap::new();
    let names: Vec<String> = mods.iter().map(|m| m.name.clone()).collect();
    // Instance multiplicity of each module from the top (the hierarchy is
    // shallow: a few passes settle it).
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
            let area = lib.area.get(&i.cell).ok_or_else(|| {
                SiliconError::Output(format!(
                    "cell {} of the netlist is not in the liberty",
                    i.cell
                ))
            })?;
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

/// Cells of Yosys's internal gate library after `synth` (`$_AND_`, `$_MUX_`,
/// `$_DFF_...`), summed over the modules of a `stat` report.
pub(crate) fn generic_cells(stat: &str) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lib() -> Liberty {
        let mut l = Liberty::default();
        for (c, a) in [("INVX1", 16.0), ("BUFX4", 32.0), ("DFFPOSX1", 192.0)] {
            l.area.insert(c.into(), a);
            l.outputs.insert(
                c.into(),
                vec![if c == "DFFPOSX1" { "Q" } else { "Y" }.into()],
            );
        }
        l.sequential.push("DFFPOSX1".into());
        l
    }

    /// A module whose net `n` drives `loads` inverters, and one flip-flop.
    fn netlist(loads: usize) -> String {
        let mut s = String::from("module sbrp_pb(clock, n);\n  input clock;\n  input n;\n");
        for i in 0..loads {
            s.push_str(&format!(
                "  INVX1 _{i}_ (\n    .A(n),\n    .Y(o{i})\n  );\n"
            ));
        }
        s.push_str("  DFFPOSX1 _ff_ (\n    .CLK(clock),\n    .D(n),\n    .Q(q)\n  );\nendmodule\n");
        s
    }

    fn conf(max_fanout: usize) -> SynthConf {
        SynthConf {
            liberty: "/x".into(),
            lef: None,
            liberty_package: "p".into(),
            library_name: "l".into(),
            abc_delay_ps: 1,
            max_fanout,
            buffer_cell: "BUFX4".into(),
            buffer_in: "A".into(),
            buffer_out: "Y".into(),
            nand2_cell: "INVX1".into(),
            inverter_cell: "INVX1".into(),
            inverter_in: "A".into(),
            inverter_out: "Y".into(),
            fo4_stages: 12,
        }
    }

    #[test]
    fn high_fanout_nets_get_buffer_trees() {
        // 20 inverters + 1 flip-flop D = 21 loads, at most 4 per net:
        // 6 buffers on the first level, 2 on the second, driven by the net.
        let (out, added) = repair_fanout(&netlist(20), &lib(), &conf(4));
        assert_eq!(added, 8, "{out}");
        let (mods, counts) = module_areas(&out, &lib()).unwrap();
        assert_eq!(counts["BUFX4"], 8);
        assert_eq!(mods[0].cells, 20 + 1 + 8);
        assert_eq!(mods[0].ff_bits, 1);
        // No net has more than 4 loads any more.
        let mut fan: HashMap<String, usize> = HashMap::new();
        for l in out.lines().map(str::trim) {
            if let Some(r) = l.strip_prefix(".A(").or_else(|| l.strip_prefix(".D(")) {
                *fan.entry(r.trim_end_matches([')', ',', ' ']).to_string())
                    .or_default() += 1;
            }
        }
        assert!(fan.values().all(|&n| n <= 4), "{fan:?}");
    }

    #[test]
    fn low_fanout_netlist_is_unchanged() {
        let text = netlist(3);
        let (out, added) = repair_fanout(&text, &lib(), &conf(8));
        assert_eq!(added, 0);
        assert_eq!(out.trim_end(), text.trim_end());
    }

    #[test]
    fn unknown_cell_is_an_error() {
        let text = netlist(1).replace("INVX1", "NOSUCHCELL");
        let e = module_areas(&text, &lib()).unwrap_err();
        assert!(e.to_string().contains("NOSUCHCELL"), "{e}");
    }

    #[test]
    fn generic_cells_sum_before_the_hierarchy() {
        let stat = "=== sbrp_pb ===\n  $_AND_  10\n  $_DFF_P_ 4\n  Number of cells 14\n=== design hierarchy ===\n  $_AND_ 99\n";
        assert_eq!(generic_cells(stat), 14);
    }
}
