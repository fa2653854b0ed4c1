//! The optional SRAM-macro view of `sbrp area` (`AreaOptions::sram`): every
//! deep memory array is priced as OpenRAM macros (FreePDK45, analytical
//! model, no SPICE), the rest of the unit stays the flop flow's logic and is
//! reported in NAND2 equivalents. OpenRAM (PyPI `openram`, with `numpy<2`)
//! lives in a project virtual environment made by
//! `scripts/setup.sh --openram`; the default flow never needs it.

use std::path::{Path, PathBuf};

use sbrp_tools::{write_atomic, LogFile, Tool};
use serde::{Deserialize, Serialize};

use crate::area::AreaReport;
use crate::error::{Result, SiliconError};
use crate::memories::MemoryPorts;

/// Arrays with fewer words stay flip-flops: a macro's decoders and sense
/// amplifiers outweigh so few bits.
pub const SRAM_MIN_WORDS: u64 = 32;

/// Technology of the macros.
pub const SRAM_TECH: &str = "freepdk45";

/// One deep array as macros.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SramMacro {
    pub memory: String,
    pub words: u64,
    pub bits: u64,
    /// Read ports of the array.
    pub read_ports: u32,
    /// Copies of a 1RW+1R macro: one per read port (each copy's RW port
    /// takes the write, its R port one read), since OpenRAM has at most
    /// one extra read port.
    pub copies: u32,
    pub width_um: f64,
    pub height_um: f64,
}

impl SramMacro {
    /// Area of all copies, µm².
    pub fn area_um2(&self) -> f64 {
        self.width_um * self.height_um * f64::from(self.copies)
    }
}

/// The SRAM view of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SramReport {
    pub tech: String,
    pub macros: Vec<SramMacro>,
    /// Arrays kept as flip-flops (fewer than [`SRAM_MIN_WORDS`] words).
    pub kept_as_flops: Vec<String>,
    /// Sum of the macros' areas, µm² (in [`SramReport::tech`]).
    pub macro_area_um2: f64,
    /// Everything but the macros (control and the arrays kept as
    /// flip-flops), in NAND2 equivalents of the flop flow's library.
    pub logic_outside_nand2: f64,
}

/// Python of the OpenRAM environment: `SBRP_OPENRAM_PYTHON`, else the
/// workspace's `.venv-openram`.
fn openram_python() -> Tool {
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv-openram/bin/python");
    Tool::new(
        std::env::var_os("SBRP_OPENRAM_PYTHON").map_or(default, PathBuf::from),
        "make the OpenRAM environment with `bash scripts/setup.sh --openram` \
         (PyPI openram and numpy<2 in .venv-openram), or point SBRP_OPENRAM_PYTHON \
         at a Python that has them",
    )
}

/// OpenRAM configuration of one 1RW+1R macro.
pub(crate) fn openram_config(words: u64, bits: u64, name: &str, out: &Path) -> String {
    format!(
        "# OpenRAM configuration written by sbrp area (generated)\n\
         word_size = {bits}\nnum_words = {words}\n\
         num_rw_ports = 1\nnum_r_ports = 1\nnum_w_ports = 0\n\
         tech_name = \"{SRAM_TECH}\"\nnominal_corner_only = True\n\
         analytical_delay = True\nroute_supplies = False\ncheck_lvsdrc = False\n\
         perimeter_pins = False\n\
         output_name = \"{name}\"\noutput_path = \"{}/\"\n",
        out.display()
    )
}

/// `SIZE w BY h ;` of a LEF macro, µm.
pub(crate) fn lef_size(lef: &str) -> Option<(f64, f64)> {
    lef.lines().find_map(size_line)
}

/// `w` and `h` of one LEF line `SIZE w BY h ;`, µm.
pub(crate) fn size_line(l: &str) -> Option<(f64, f64)> {
    let t: Vec<&str> = l.split_whitespace().collect();
    match t[..] {
        ["SIZE", w, "BY", h, ..] => Some((w.parse().ok()?, h.parse().ok()?)),
        _ => None,
    }
}

fn macro_name(words: u64, bits: u64) -> String {
    format!("sbrp_sram_1rw1r_{words}x{bits}")
}

/// Compiles the macros of the deep arrays of `r` in `dir` (one OpenRAM run
/// per distinct size, a minute or two each).
pub(crate) fn run_sram(r: &AreaReport, dir: &Path) -> Result<SramReport> {
    let py = openram_python();
    // The package's directory holds its compiler script.
    let mut cmd = py.command();
    cmd.args([
        "-c",
        "import os, numpy, openram; assert int(numpy.__version__.split('.')[0]) < 2, 'numpy>=2'; \
         print(os.path.dirname(openram.__file__))",
    ]);
    let home = py.run(&mut cmd, "OpenRAM (import)", LogFile::None)?.text;
    let compiler = Path::new(home.lines().last().unwrap_or("").trim()).join("sram_compiler.py");
    let (deep, shallow): (Vec<&MemoryPorts>, Vec<&MemoryPorts>) =
        r.memories.iter().partition(|m| m.words >= SRAM_MIN_WORDS);
    let mut macros = Vec::new();
    for m in &deep {
        let name = macro_name(m.words, m.bits);
        let out = dir.join(&name);
        let lef_path = out.join(format!("{name}.lef"));
        if !lef_path.is_file() {
            std::fs::create_dir_all(&out).map_err(|e| {
                SiliconError::Output(format!("cannot create {}: {e}", out.display()))
            })?;
            let cfg = dir.join(format!("{name}_config.py"));
            write_atomic(
                &cfg,
                openram_config(m.words, m.bits, &name, &out).as_bytes(),
            )?;
            let log = dir.join(format!("{name}.log"));
            let mut cmd = py.command();
            cmd.arg(&compiler).arg(&cfg).current_dir(dir);
            py.run(&mut cmd, &format!("OpenRAM ({name})"), LogFile::Write(&log))?;
        }
        let lef = std::fs::read_to_string(&lef_path).unwrap_or_default();
        let (w, h) = lef_size(&lef).ok_or_else(|| {
            SiliconError::Output(format!(
                "OpenRAM wrote no macro size (LEF SIZE) in {}",
                lef_path.display()
            ))
        })?;
        macros.push(SramMacro {
            memory: m.name.clone(),
            words: m.words,
            bits: m.bits,
            read_ports: m.read_ports,
            copies: m.read_ports.max(1),
            width_um: w,
            height_um: h,
        });
    }
    let per_um2 = r.nand2_equivalents / r.area_um2.max(1e-9);
    let in_macros: f64 = deep.iter().map(|m| m.area_um2).sum();
    Ok(SramReport {
        tech: format!("{SRAM_TECH} (OpenRAM, analytical model)"),
        macro_area_um2: macros.iter().map(SramMacro::area_um2).sum(),
        macros,
        kept_as_flops: shallow.iter().map(|m| m.name.clone()).collect(),
        logic_outside_nand2: (r.area_um2 - in_macros) * per_um2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_names_the_size_ports_and_technology() {
        let c = openram_config(256, 32, "m", Path::new("/tmp/x"));
        for l in [
            "word_size = 32",
            "num_words = 256",
            "num_rw_ports = 1",
            "num_r_ports = 1",
            "tech_name = \"freepdk45\"",
            "analytical_delay = True",
            "output_path = \"/tmp/x/\"",
        ] {
            assert!(c.lines().any(|x| x == l), "{l} missing:\n{c}");
        }
    }

    #[test]
    fn reads_the_macro_size_from_the_lef() {
        let lef = "MACRO m\n   CLASS BLOCK ;\n   SIZE 54.44 BY 65.08 ;\nEND m\n";
        assert_eq!(lef_size(lef), Some((54.44, 65.08)));
        assert_eq!(lef_size("MACRO m\nEND m\n"), None);
        let m = SramMacro {
            memory: "m_x".into(),
            words: 16,
            bits: 4,
            read_ports: 2,
            copies: 2,
            width_um: 10.0,
            height_um: 5.0,
        };
        assert_eq!(m.area_um2(), 100.0);
    }

    #[test]
    fn a_missing_environment_says_how_to_make_it() {
        let t = openram_python();
        let t = Tool::new("/nonexistent/python", t.hint);
        let e = SiliconError::from(
            t.run(&mut t.command(), "OpenRAM", LogFile::None)
                .unwrap_err(),
        );
        let msg = e.to_string();
        assert!(
            msg.contains("scripts/setup.sh --openram") && msg.contains("SBRP_OPENRAM_PYTHON"),
            "{msg}"
        );
    }
}
