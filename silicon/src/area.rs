//! The area and timing flow of one configuration: Yosys synthesis onto the
//! standard cells (`constraints/synth/synth_area.ys`), fan-out repair, area per block,
//! then OpenSTA (`constraints/timing/sta_timing.tcl`, `constraints/timing/sbrp_pb.sdc`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use sbrp_iface::{storage_totals, PbParams};
use sbrp_tools::{write_atomic, FsError, LogFile};
use serde::{Deserialize, Serialize};

use crate::config::{fill, SynthConf, ABC_SCRIPT, SDC, SYNTH_YS};
use crate::error::{Result, SiliconError};
use crate::fo4::{measure_fo4, Fo4};
use crate::latch::{correct_zero_areas, stored_bits, AreaCorrection, Arrays};
use crate::liberty::Liberty;
use crate::memories::{attach_areas, parse_memories, MemoryPorts};
use crate::netlist::{generic_cells, module_areas, repair_fanout, ModuleArea};
use crate::route::RouteReport;
use crate::sram::SramReport;
use crate::sta::{run_sta, StaFiles, TimingReport};
use crate::tools::{generate, require, sta, yosys};

/// The blocks of the report, in report order: the PB memories (every
/// sub-module whose name starts with `pb_`, at any depth of the hierarchy:
/// `pb_type`, `pb_line`, `pb_warps` of `docs/microarch.md` §3), and
/// everything else (registers, logic, the top module).
pub const BLOCKS: [&str; 2] = ["PB storage", "control"];

/// Name prefix of the RTL's memory blocks.
pub const MEMORY_PREFIX: &str = "pb_";

/// Block of the report that a module (`sbrp_pb$a$pb_x`) or an instance path
/// (`a/pb_x`) belongs to.
pub fn block_of(m: &str) -> &'static str {
    let m = m.trim_start_matches('\\');
    if m.split(['$', '/']).any(|s| s.starts_with(MEMORY_PREFIX)) {
        BLOCKS[0]
    } else {
        BLOCKS[1]
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockArea {
    pub block: String,
    pub cells: u64,
    pub area_um2: f64,
    pub ff_bits: u64,
}

/// Everything `sbrp area` reports for one configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AreaReport {
    #[serde(with = "crate::params_serde::PbParamsDef")]
    pub params: PbParams,
    pub library: String,
    pub cells: u64,
    pub area_um2: f64,
    pub cell_counts: BTreeMap<String, u64>,
    /// One per entry of [`BLOCKS`], in that order.
    pub blocks: Vec<BlockArea>,
    pub modules: Vec<ModuleArea>,
    /// The memory arrays before mapping (Yosys), with their ports.
    pub memories: Vec<MemoryPorts>,
    /// Sequential cells (flip-flops and latches).
    pub ff_bits: u64,
    /// Bits of state as the flip-flop flow counts them (the per-bit
    /// figure's denominator): [`ff_bits`](Self::ff_bits) with flip-flop
    /// arrays; without the latch arrays' write control with latches.
    #[serde(default)]
    pub stored_bits: u64,
    /// How the memories were built (flip-flops in reports from before the
    /// choice).
    #[serde(default = "Arrays::before_the_choice")]
    pub arrays: Arrays,
    /// Cells priced at 0 by the liberty whose LEF area was used instead
    /// (only the cells the netlist uses).
    #[serde(default)]
    pub area_corrections: Vec<AreaCorrection>,
    /// Bits of the spec's storage table (docs/microarch.md §8).
    pub spec_bits: u64,
    /// The paper's estimate of the same storage.
    pub paper_bits: u64,
    pub ff_area_um2: f64,
    /// Buffers added by the fan-out repair (included in cells and area).
    pub fanout_buffers: u64,
    pub generic_cells: u64,
    /// Area over the area of one NAND2 of the library.
    pub nand2_equivalents: f64,
    /// The library's FO4, measured with OpenSTA (with timing only).
    pub fo4: Option<Fo4>,
    pub timing: Option<TimingReport>,
    /// The deep arrays as SRAM macros (only when asked for).
    pub sram: Option<SramReport>,
    /// Placed and routed timing (only when asked for: `--route`).
    #[serde(default)]
    pub route: Option<RouteReport>,
    pub synth_seconds: f64,
}

impl AreaReport {
    /// The per-bit figures' denominator (reports from before
    /// `stored_bits` existed: the flip-flop bits).
    pub fn bits(&self) -> u64 {
        if self.stored_bits > 0 {
            self.stored_bits
        } else {
            self.ff_bits
        }
    }

    /// Area per stored bit (total area over the stored bits), µm².
    pub fn um2_per_bit(&self) -> f64 {
        self.area_um2 / self.bits().max(1) as f64
    }

    /// NAND2 equivalents per stored bit.
    pub fn nand2_per_bit(&self) -> f64 {
        self.nand2_equivalents / self.bits().max(1) as f64
    }

    /// NAND2 equivalents of everything outside the memory arrays (the
    /// "control" block): the logic that would remain beside SRAM macros.
    pub fn logic_outside_memories_nand2(&self) -> f64 {
        let per_um2 = self.nand2_equivalents / self.area_um2.max(1e-9);
        self.blocks
            .iter()
            .filter(|b| b.block != BLOCKS[0])
            .map(|b| b.area_um2 * per_um2)
            .sum()
    }

    /// `ns` in FO4 of the measured library (None without timing).
    pub fn in_fo4(&self, ns: f64) -> Option<f64> {
        self.fo4.as_ref().map(|f| 1000.0 * ns / f.fo4_ps)
    }
}

/// What one area flow leaves for the user in its directory (besides the
/// report and CSV).
pub const FLOW_FILES: [&str; 8] = [
    "sbrp_pb.v",
    "memories.txt",
    "fo4.log",
    "sbrp_pb_netlist.v",
    "yosys.log",
    "sta.log",
    "stat_generic.txt",
    "stat_mapped.txt",
];

fn write(path: &Path, text: &str) -> Result<()> {
    Ok(write_atomic(path, text.as_bytes())?)
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|error| {
        SiliconError::Fs(FsError {
            what: "read",
            path: path.to_path_buf(),
            error,
        })
    })
}

/// Runs synthesis (and OpenSTA when `timing`) for `p` in `dir` (the tools'
/// files stay there), with flip-flop arrays.
pub fn run_area_flow(p: &PbParams, dir: &Path, timing: bool) -> Result<AreaReport> {
    run_area_flow_with(p, dir, timing, Arrays::Flops)
}

/// [`run_area_flow`] with the memories built as `arrays`.
pub fn run_area_flow_with(
    p: &PbParams,
    dir: &Path,
    timing: bool,
    arrays: Arrays,
) -> Result<AreaReport> {
    let verilog = generate(p)?;
    run_area_flow_on(p, &verilog, dir, timing, arrays)
}

/// The flow on a given Verilog text of the unit (top module `sbrp_pb`).
pub fn run_area_flow_on(
    p: &PbParams,
    verilog: &str,
    dir: &Path,
    timing: bool,
    arrays: Arrays,
) -> Result<AreaReport> {
    let conf = SynthConf::load()?;
    let yosys = yosys();
    require(&yosys, "-V")?;
    conf.require_liberty()?;
    let sta = sta();
    if timing {
        require(&sta, "-version")?;
    }
    let t0 = Instant::now();
    let vpath = dir.join("sbrp_pb.v");
    write(&vpath, verilog)?;
    let abc = dir.join("abc_delay.abc");
    write(&abc, ABC_SCRIPT)?;
    let liberty = conf.liberty.display().to_string();
    let (map_arrays, map_latches) =
        arrays.synth_lines(dir, [&conf.buffer_cell, &conf.buffer_in, &conf.buffer_out])?;
    let ys = fill(
        SYNTH_YS,
        &[
            ("VERILOG", vpath.display().to_string()),
            ("OUT", dir.display().to_string()),
            ("LIBERTY", liberty.clone()),
            ("DELAY_PS", conf.abc_delay_ps.to_string()),
            ("ABC_SCRIPT", abc.display().to_string()),
            ("MAP_ARRAYS", map_arrays),
            ("MAP_LATCHES", map_latches),
        ],
    );
    let ys_path = dir.join("synth_area.ys");
    write(&ys_path, &ys)?;
    let log = dir.join("yosys.log");
    let mut cmd = yosys.command();
    cmd.arg("-q").arg("-l").arg(&log).arg("-s").arg(&ys_path);
    yosys.run(&mut cmd, "yosys synthesis", LogFile::ByTool(&log))?;

    let mut lib = Liberty::parse(&read(&conf.liberty)?);
    let corrections = match &conf.lef {
        Some(lef) if lef.is_file() => correct_zero_areas(&mut lib, &read(lef)?),
        _ => Vec::new(),
    };
    let mapped = std::fs::read_to_string(dir.join("sbrp_pb_mapped.v"))
        .map_err(|_| SiliconError::Output("yosys wrote no netlist".into()))?;
    let (repaired, buffers) = repair_fanout(&mapped, &lib, &conf);
    let netlist = dir.join("sbrp_pb_netlist.v");
    write(&netlist, &repaired)?;
    let (modules, counts) = module_areas(&repaired, &lib)?;
    let mut memories = parse_memories(&read(&dir.join("memories.txt"))?, "sbrp_pb")?;
    attach_areas(&mut memories, &modules, "sbrp_pb");
    let generic =
        generic_cells(&std::fs::read_to_string(dir.join("stat_generic.txt")).unwrap_or_default());
    let synth_seconds = t0.elapsed().as_secs_f64();

    let mut blocks: Vec<BlockArea> = BLOCKS
        .iter()
        .map(|b| BlockArea {
            block: b.to_string(),
            cells: 0,
            area_um2: 0.0,
            ff_bits: 0,
        })
        .collect();
    for m in &modules {
        let name = block_of(&m.module);
        if let Some(b) = blocks.iter_mut().find(|b| b.block == name) {
            b.cells += m.cells;
            b.area_um2 += m.area_um2;
            b.ff_bits += m.ff_bits;
        }
    }
    let cells: u64 = modules.iter().map(|m| m.cells).sum();
    let area: f64 = modules.iter().map(|m| m.area_um2).sum();
    let ff_bits: u64 = modules.iter().map(|m| m.ff_bits).sum();
    let stored = match arrays {
        Arrays::Flops => ff_bits,
        Arrays::Latches => stored_bits(&modules, &memories),
    };
    let area_corrections: Vec<AreaCorrection> = corrections
        .into_iter()
        .filter(|c| counts.get(&c.cell).is_some_and(|n| *n > 0))
        .collect();
    let ff_area: f64 = counts
        .iter()
        .filter(|(c, _)| lib.sequential.contains(c))
        .map(|(c, n)| lib.area.get(c).copied().unwrap_or(0.0) * *n as f64)
        .sum();
    let nand2 = *lib.area.get(&conf.nand2_cell).ok_or_else(|| {
        SiliconError::Config(format!("nand2_cell {} not in the liberty", conf.nand2_cell))
    })?;
    let (spec_bits, paper_bits) = storage_totals(p);

    let fo4 = if timing {
        Some(measure_fo4(dir)?)
    } else {
        None
    };
    let timing = if timing {
        let files = StaFiles {
            sdc: ("sbrp_pb.sdc", SDC),
            tcl: "sta_timing.tcl".into(),
            log: "sta.log".into(),
        };
        Some(run_sta(dir, &liberty, &netlist, String::new(), &files)?)
    } else {
        None
    };

    Ok(AreaReport {
        params: *p,
        library: conf.library_name,
        cells,
        area_um2: area,
        cell_counts: counts.into_iter().collect(),
        blocks,
        modules,
        memories,
        ff_bits,
        stored_bits: stored,
        arrays,
        area_corrections,
        spec_bits: u64::from(spec_bits),
        paper_bits: u64::from(paper_bits),
        ff_area_um2: ff_area,
        fanout_buffers: buffers,
        generic_cells: generic,
        nand2_equivalents: area / nand2,
        fo4,
        timing,
        sram: None,
        route: None,
        synth_seconds,
    })
}
