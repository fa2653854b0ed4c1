//! Latch arrays (`sbrp area --arrays latches`, docs/hardware.md §2 "Latch
//! arrays"): the PB memories mapped onto level-sensitive latches by
//! `constraints/synth/latch_array.v` instead of Yosys' flip-flops, the
//! library's latch area taken from its LEF where the liberty gives 0, the
//! stored bits counted as in the flip-flop flow, and the check that the
//! mapping keeps the RTL memory's cycle behaviour.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::time::Instant;

use sbrp_tools::{write_atomic, LogFile};
use serde::{Deserialize, Serialize};

use crate::area::block_of;
use crate::config::{LATCH_ARRAY_V, LATCH_CELLS_V, LATCH_CHECK_YS, LATCH_ENV_SV};
use crate::equiv::Equivalence;
use crate::error::{Result, SiliconError};
use crate::liberty::Liberty;
use crate::memories::MemoryPorts;
use crate::netlist::ModuleArea;
use crate::prove::{asserted_frame, yosys_abc};
use crate::sram::size_line;
use crate::tools::{require, yosys};

/// How the memories of 32 words or more are built (docs/hardware.md §2,
/// "Latch arrays": latches, the default, by measurement).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Arrays {
    /// Yosys' memory mapping: a flip-flop per bit with its write-enable mux.
    Flops,
    /// `constraints/synth/latch_array.v`: a latch per bit, gated enables.
    #[default]
    Latches,
}

impl fmt::Display for Arrays {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Arrays::Flops => "flops",
            Arrays::Latches => "latches",
        })
    }
}

impl FromStr for Arrays {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "flops" => Ok(Arrays::Flops),
            "latches" => Ok(Arrays::Latches),
            _ => Err(format!("arrays: `{s}` is not one of flops, latches")),
        }
    }
}

impl Arrays {
    /// What a report written before the choice existed used.
    pub(crate) fn before_the_choice() -> Arrays {
        Arrays::Flops
    }

    /// The lines `synth_area.ys` gets at `@MAP_ARRAYS@` (after the memories
    /// are inferred) and `@MAP_LATCHES@` (after the flip-flops are mapped),
    /// with the map files written into `dir`; `buf` is the buffer cell and
    /// its input and output pins (`synth.conf`).
    pub(crate) fn synth_lines(self, dir: &Path, buf: [&str; 3]) -> Result<(String, String)> {
        match self {
            Arrays::Flops => Ok((
                "# arrays: flip-flops (memory_map)".into(),
                "# no latches".into(),
            )),
            Arrays::Latches => {
                let arrays = dir.join("latch_array.v");
                let cells = dir.join("latch_cells.v");
                write_atomic(&arrays, LATCH_ARRAY_V.as_bytes())?;
                write_atomic(&cells, LATCH_CELLS_V.as_bytes())?;
                Ok((
                    format!("techmap {} -map {}", buffer_defines(buf), arrays.display()),
                    format!("techmap -map {}", cells.display()),
                ))
            }
        }
    }
}

/// The `-D` options naming the address buffer of `latch_array.v`.
fn buffer_defines([cell, input, output]: [&str; 3]) -> String {
    format!("-D SBRP_BUF={cell} -D SBRP_BUF_IN={input} -D SBRP_BUF_OUT={output}")
}

/// A cell whose liberty area is 0, with the area of its LEF footprint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AreaCorrection {
    pub cell: String,
    pub liberty_um2: f64,
    pub lef_um2: f64,
}

/// `MACRO name` ... `SIZE w BY h ;` of a LEF: the area of each macro, µm².
pub(crate) fn lef_areas(lef: &str) -> HashMap<String, f64> {
    let mut out = HashMap::new();
    let mut cur: Option<String> = None;
    for l in lef.lines() {
        if let (Some(c), Some((w, h))) = (&cur, size_line(l)) {
            out.insert(c.clone(), w * h);
            continue;
        }
        let t: Vec<&str> = l.split_whitespace().collect();
        match t.as_slice() {
            ["MACRO", name, ..] => cur = Some((*name).to_string()),
            ["END", name] if cur.as_deref() == Some(*name) => cur = None,
            _ => {}
        }
    }
    out
}

/// Gives every cell the liberty prices at 0 its LEF area (OSU 0.18 µm's
/// `LATCH`); returns the corrections, by cell name.
pub(crate) fn correct_zero_areas(lib: &mut Liberty, lef: &str) -> Vec<AreaCorrection> {
    let lef = lef_areas(lef);
    let mut out: Vec<AreaCorrection> = lib
        .area
        .iter()
        .filter(|(_, a)| **a == 0.0)
        .filter_map(|(c, a)| {
            let l = *lef.get(c)?;
            (l > 0.0).then(|| AreaCorrection {
                cell: c.clone(),
                liberty_um2: *a,
                lef_um2: l,
            })
        })
        .collect();
    out.sort_by(|a, b| a.cell.cmp(&b.cell));
    for c in &out {
        lib.area.insert(c.cell.clone(), c.lef_um2);
    }
    out
}

/// The bits of state the flip-flop flow counts (the per-bit figure's
/// denominator): outside the PB memories the sequential cells as they are;
/// for each memory of the PB, its words x bits and one register per read
/// port and bit, whatever cells store them. The latch arrays' word selects,
/// bit enables and write-data registers are control, not storage.
pub(crate) fn stored_bits(modules: &[ModuleArea], memories: &[MemoryPorts]) -> u64 {
    let outside: u64 = modules
        .iter()
        .filter(|m| block_of(&m.module) != crate::area::BLOCKS[0])
        .map(|m| m.ff_bits)
        .sum();
    let arrays: u64 = memories
        .iter()
        .filter(|m| block_of(&m.module) == crate::area::BLOCKS[0])
        .map(|m| m.words * m.bits + u64::from(m.sync_read_ports) * m.bits)
        .sum();
    outside + arrays
}

/// Words and bits of the memory the latch-array check runs on (32 words,
/// the smallest that is mapped to latches; 4 bits with a per-bit mask).
pub const CHECK_ADDR_BITS: usize = 5;
pub const CHECK_DATA_BITS: usize = 4;

/// Proves that `map` (the text of a latch-array techmap, normally
/// `constraints/synth/latch_array.v`) gives the RTL's masked memory
/// ([`sbrp_hdl::memory_module`]) the same read data at every step, under
/// `latch_array_env.sv`'s clock and input timing: yosys-abc `pdr`, limited
/// to `seconds`. Files go to `dir`; also returns the seconds spent.
pub fn check_latch_array(map: &str, seconds: u32, dir: &Path) -> Result<(Equivalence, f64)> {
    let (ys, abc) = (yosys(), yosys_abc());
    require(&ys, "-V")?;
    require(&abc, "-h")?;
    let mem = dir.join("mem.v");
    let map_path = dir.join("latch_array.v");
    let env = dir.join("latch_array_env.sv");
    let aig = dir.join("latch_check.aig");
    write_atomic(
        &mem,
        sbrp_hdl::memory_module("mem", CHECK_DATA_BITS, CHECK_ADDR_BITS, true).as_bytes(),
    )?;
    write_atomic(&map_path, map.as_bytes())?;
    let env_text = LATCH_ENV_SV
        .replace("@AW@", &CHECK_ADDR_BITS.to_string())
        .replace("@B@", &CHECK_DATA_BITS.to_string());
    write_atomic(&env, env_text.as_bytes())?;
    let script = crate::config::fill(
        LATCH_CHECK_YS,
        &[
            ("MEM", mem.display().to_string()),
            ("MAP", map_path.display().to_string()),
            ("BUF", buffer_defines(["latch_check_buf", "A", "Y"])),
            ("ENV", env.display().to_string()),
            ("AIG", aig.display().to_string()),
        ],
    );
    let ys_path = dir.join("latch_check.ys");
    write_atomic(&ys_path, script.as_bytes())?;
    let log = dir.join("latch_check.log");
    let mut cmd = ys.command();
    cmd.arg("-q").arg("-l").arg(&log).arg("-s").arg(&ys_path);
    ys.run(&mut cmd, "yosys (latch-array check)", LogFile::ByTool(&log))?;
    let t0 = Instant::now();
    let mut cmd = abc.command();
    cmd.arg("-c").arg(format!(
        "read_aiger {}; fold; pdr -T {seconds}",
        aig.display()
    ));
    let out = abc.capture(&mut cmd, "yosys-abc (latch-array check)", LogFile::None)?;
    let secs = t0.elapsed().as_secs_f64();
    let text = out.text;
    let r = if let Some(step) = asserted_frame(&text) {
        Equivalence::Differs(step)
    } else if text.contains("Property proved") {
        Equivalence::Equivalent
    } else if text.to_lowercase().contains("timeout") {
        Equivalence::Undecided
    } else {
        return Err(SiliconError::Output(format!(
            "yosys-abc gave no verdict on the latch-array check:\n{text}"
        )));
    };
    Ok((r, secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lef_areas_and_the_zero_area_correction() {
        let lef = "MACRO LATCH\n  CLASS CORE ;\n  SIZE 5.6 BY 10.0 ;\nEND LATCH\n\
                   MACRO NAND2X1\n  SIZE 2.4 BY 10 ;\nEND NAND2X1\n";
        let a = lef_areas(lef);
        assert!((a["LATCH"] - 56.0).abs() < 1e-9 && (a["NAND2X1"] - 24.0).abs() < 1e-9);
        let mut lib = Liberty::default();
        lib.area.insert("LATCH".into(), 0.0);
        lib.area.insert("NAND2X1".into(), 24.0);
        lib.area.insert("GHOST".into(), 0.0);
        let c = correct_zero_areas(&mut lib, lef);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].cell.as_str(), c[0].lef_um2), ("LATCH", 56.0));
        assert!((lib.area["LATCH"] - 56.0).abs() < 1e-9);
        assert_eq!(lib.area["GHOST"], 0.0, "no LEF macro: left as it is");
    }

    #[test]
    fn arrays_parse_and_print() {
        for a in [Arrays::Flops, Arrays::Latches] {
            assert_eq!(a.to_string().parse::<Arrays>(), Ok(a));
        }
        assert!("sram"
            .parse::<Arrays>()
            .unwrap_err()
            .contains("flops, latches"));
    }
}
