//! The memory arrays of the unit as Yosys infers them before mapping them
//! to flip-flops (`$mem_v2` cells, dumped by `constraints/synth/synth_area.ys` into
//! `memories.txt`): words, bits, read and write ports, synchronous or
//! asynchronous reads. Read ports are what a flop array pays for in read
//! multiplexers, and what an SRAM macro must offer.

use serde::{Deserialize, Serialize};

use crate::error::{Result, SiliconError};
use crate::netlist::ModuleArea;

/// One memory array.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryPorts {
    /// Instance path from the top (`m_type`, `stage1/m_x`); the memory's
    /// own name is added when its module holds several or is the top.
    pub name: String,
    /// The Yosys module that holds it (`sbrp_pb$m_type`).
    pub module: String,
    pub words: u64,
    pub bits: u64,
    pub read_ports: u32,
    /// Read ports with a clock (registered reads).
    pub sync_read_ports: u32,
    pub write_ports: u32,
    /// Area of the module holding it and of its sub-modules after mapping,
    /// µm² (read multiplexers, write decoder, flip-flops).
    pub area_um2: f64,
}

impl MemoryPorts {
    pub fn stored_bits(&self) -> u64 {
        self.words * self.bits
    }

    /// `async`, `sync`, or `1 sync + 2 async`.
    pub fn read_kind(&self) -> String {
        let asyn = self.read_ports - self.sync_read_ports;
        match (self.sync_read_ports, asyn) {
            (0, _) => "async".into(),
            (_, 0) => "sync".into(),
            (s, a) => format!("{s} sync + {a} async"),
        }
    }
}

/// A parameter value of the dump: decimal, or `N'bits` (binary).
fn param_value(v: &str) -> Option<u64> {
    match v.split_once('\'') {
        Some((_, b)) => u64::from_str_radix(b, 2).ok(),
        None => v.parse().ok(),
    }
}

/// Reads Yosys's `dump t:$mem_v2` of the design; `top` is the top module.
pub(crate) fn parse_memories(dump: &str, top: &str) -> Result<Vec<MemoryPorts>> {
    struct Raw {
        module: String,
        id: String,
        params: Vec<(String, String)>,
    }
    let mut raws: Vec<Raw> = Vec::new();
    let mut module = String::new();
    let mut in_cell = false;
    for l in dump.lines() {
        let t: Vec<&str> = l.split_whitespace().collect();
        match t[..] {
            ["module", m] => module = m.trim_start_matches('\\').to_string(),
            ["cell", "$mem_v2", id] => {
                in_cell = true;
                raws.push(Raw {
                    module: module.clone(),
                    id: id.trim_start_matches('\\').to_string(),
                    params: Vec::new(),
                });
            }
            ["end"] => in_cell = false,
            ["parameter", k, v, ..] if in_cell => {
                if let Some(r) = raws.last_mut() {
                    r.params
                        .push((k.trim_start_matches('\\').to_string(), v.to_string()));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for r in &raws {
        let get = |k: &str| -> Result<&str> {
            r.params
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
                .ok_or_else(|| {
                    SiliconError::Output(format!(
                        "memory {} of {}: no parameter {k} in Yosys's dump",
                        r.id, r.module
                    ))
                })
        };
        let num = |k: &str| -> Result<u64> {
            let v = get(k)?;
            param_value(v).ok_or_else(|| {
                SiliconError::Output(format!(
                    "memory {} of {}: parameter {k} = {v} is not a number",
                    r.id, r.module
                ))
            })
        };
        let sync = get("RD_CLK_ENABLE")?
            .split_once('\'')
            .map_or(0, |(_, b)| b.chars().filter(|&c| c == '1').count());
        let path = r
            .module
            .strip_prefix(&format!("{top}$"))
            .map(|p| p.replace('$', "/"));
        let shared = raws.iter().filter(|o| o.module == r.module).count() > 1;
        let name = match path {
            Some(p) if !shared => p,
            Some(p) => format!("{p}.{}", r.id),
            None => r.id.clone(),
        };
        out.push(MemoryPorts {
            name,
            module: r.module.clone(),
            words: num("SIZE")?,
            bits: num("WIDTH")?,
            read_ports: u32::try_from(num("RD_PORTS")?).unwrap_or(u32::MAX),
            sync_read_ports: u32::try_from(sync).unwrap_or(u32::MAX),
            write_ports: u32::try_from(num("WR_PORTS")?).unwrap_or(u32::MAX),
            area_um2: 0.0,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Sets each memory's area: its module and the modules below it, when the
/// module holds that memory alone and is not the top `top` (else 0: the
/// area is not its own).
pub(crate) fn attach_areas(mems: &mut [MemoryPorts], modules: &[ModuleArea], top: &str) {
    let counts: Vec<usize> = mems
        .iter()
        .map(|m| mems.iter().filter(|o| o.module == m.module).count())
        .collect();
    for (m, n) in mems.iter_mut().zip(counts) {
        if n != 1 || m.module == top {
            continue;
        }
        let below = format!("{}$", m.module);
        m.area_um2 = modules
            .iter()
            .filter(|a| a.module == m.module || a.module.starts_with(&below))
            .map(|a| a.area_um2)
            .sum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = r#"
autoidx 2391

module \sbrp_pb$m_line
  attribute \src "sbrp_pb.v:713.15-713.18"
  cell $mem_v2 \mem
    parameter \ABITS 4
    parameter \INIT 64'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    parameter \MEMID "\\mem"
    parameter \RD_CLK_ENABLE 2'01
    parameter \RD_PORTS 2
    parameter \SIZE 16
    parameter \WIDTH 32'00000000000000000000000000000100
    parameter \WR_PORTS 1
    connect \RD_ADDR { \ra0 \ra1 }
  end
end

module \sbrp_pb$s1$m_x
  cell $mem_v2 \mem
    parameter \RD_CLK_ENABLE 1'1
    parameter \RD_PORTS 1
    parameter \SIZE 256
    parameter \WIDTH 32
    parameter \WR_PORTS 1
  end
end

module \sbrp_pb
  cell $mem_v2 \lo
    parameter \RD_CLK_ENABLE 1'0
    parameter \RD_PORTS 1
    parameter \SIZE 4
    parameter \WIDTH 2
    parameter \WR_PORTS 2
  end
end
"#;

    #[test]
    fn reads_ports_sizes_and_names() {
        let m = parse_memories(DUMP, "sbrp_pb").unwrap();
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["lo", "m_line", "s1/m_x"]);
        let line = &m[1];
        assert_eq!((line.words, line.bits, line.stored_bits()), (16, 4, 64));
        assert_eq!(
            (line.read_ports, line.sync_read_ports, line.write_ports),
            (2, 1, 1)
        );
        assert_eq!(line.read_kind(), "1 sync + 1 async");
        assert_eq!(m[2].read_kind(), "sync");
        assert_eq!((m[0].read_kind().as_str(), m[0].write_ports), ("async", 2));
    }

    #[test]
    fn a_memory_without_its_size_is_an_error() {
        let e = parse_memories(&DUMP.replace("parameter \\SIZE 256", ""), "sbrp_pb").unwrap_err();
        assert!(e.to_string().contains("no parameter SIZE"), "{e}");
    }

    #[test]
    fn area_covers_the_module_and_its_sub_modules() {
        let mut m = parse_memories(DUMP, "sbrp_pb").unwrap();
        let area = |module: &str, a: f64| ModuleArea {
            module: module.into(),
            area_um2: a,
            ..ModuleArea::default()
        };
        let modules = [
            area("sbrp_pb", 1.0),
            area("sbrp_pb$m_line", 10.0),
            area("sbrp_pb$s1$m_x", 100.0),
            area("sbrp_pb$s1$m_x$r_addr", 5.0),
            area("sbrp_pb$s1$m_xy", 1000.0),
        ];
        attach_areas(&mut m, &modules, "sbrp_pb");
        let a: Vec<f64> = m.iter().map(|m| m.area_um2).collect();
        assert_eq!(a, [0.0, 10.0, 105.0]);
    }
}
