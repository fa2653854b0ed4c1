//! Configuration of the flow: the library and options of
//! `constraints/synth/synth.conf`, and the scripts and constraints of the
//! repository's `constraints/` folder compiled into the crate (so the flow
//! works from any directory; `constraints/README.md` says which command
//! reads which).

use std::collections::HashMap;
use std::path::PathBuf;

use crate::error::{Result, SiliconError};

pub(crate) const SYNTH_YS: &str = include_str!("../../constraints/synth/synth_area.ys");
pub(crate) const ABC_SCRIPT: &str = include_str!("../../constraints/synth/abc_delay.abc");
pub(crate) const STA_TCL: &str = include_str!("../../constraints/timing/sta_timing.tcl");
pub(crate) const SDC: &str = include_str!("../../constraints/timing/sbrp_pb.sdc");
pub(crate) const ROUTED_SDC: &str = include_str!("../../constraints/timing/sbrp_pb_routed.sdc");
pub(crate) const ROUTE_PREP_YS: &str = include_str!("../../constraints/route/route_prep.ys");
pub(crate) const QROUTER_TCL: &str = include_str!("../../constraints/route/qrouter.tcl");
pub(crate) const RESIZE_TCL: &str = include_str!("../../constraints/route/resize.tcl");
pub(crate) const ROUTE_PROJECT_VARS: &str = include_str!("../../constraints/route/project_vars.sh");
pub(crate) const LATCH_ARRAY_V: &str = include_str!("../../constraints/synth/latch_array.v");
pub(crate) const LATCH_CELLS_V: &str = include_str!("../../constraints/synth/latch_cells.v");
pub(crate) const LATCH_ENV_SV: &str = include_str!("../../constraints/formal/latch_array_env.sv");
pub(crate) const LATCH_CHECK_YS: &str =
    include_str!("../../constraints/formal/latch_array_check.ys");
pub(crate) const SYNTH_CONF: &str = include_str!("../../constraints/synth/synth.conf");
pub(crate) const FORMAL_WRAPPER: &str = include_str!("../../constraints/formal/sbrp_pb_formal.sv");
pub(crate) const PROVE_YS: &str = include_str!("../../constraints/formal/prove.ys");
pub(crate) const INV_ACTR_YS: &str = include_str!("../../constraints/formal/inv_actr.ys");
pub(crate) const INV_LOST_YS: &str = include_str!("../../constraints/formal/inv_lost.ys");
pub(crate) const INV_COAL_YS: &str = include_str!("../../constraints/formal/inv_coal.ys");
pub(crate) const INV_DUR_YS: &str = include_str!("../../constraints/formal/inv_dur.ys");
pub(crate) const INV_PMO_YS: &str = include_str!("../../constraints/formal/inv_pmo.ys");

/// The paper's SM clock (SBRP, Table 1).
pub const PAPER_CLOCK_MHZ: f64 = 1365.0;

/// Library and options of the flow (`constraints/synth/synth.conf`).
#[derive(Clone, Debug)]
pub struct SynthConf {
    pub liberty: PathBuf,
    /// The cells' LEF (optional: zero liberty areas stay 0 without it).
    pub lef: Option<PathBuf>,
    pub liberty_package: String,
    pub library_name: String,
    pub abc_delay_ps: u32,
    pub max_fanout: usize,
    pub buffer_cell: String,
    pub buffer_in: String,
    pub buffer_out: String,
    pub nand2_cell: String,
    pub inverter_cell: String,
    pub inverter_in: String,
    pub inverter_out: String,
    pub fo4_stages: usize,
}

impl SynthConf {
    /// The built-in `constraints/synth/synth.conf`, with `SBRP_LIBERTY` applied.
    pub fn load() -> Result<SynthConf> {
        let mut c = SynthConf::parse(SYNTH_CONF)?;
        if let Some(l) = std::env::var_os("SBRP_LIBERTY") {
            c.liberty = PathBuf::from(l);
        }
        Ok(c)
    }

    /// `key = value` lines; `#` starts a comment.
    pub fn parse(text: &str) -> Result<SynthConf> {
        let bad = SiliconError::Config;
        let mut kv = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| bad(format!("line {}: expected `key = value`", n + 1)))?;
            kv.insert(k.trim().to_string(), v.trim().to_string());
        }
        let get = |k: &str| -> Result<String> {
            kv.get(k)
                .cloned()
                .ok_or_else(|| bad(format!("missing `{k}`")))
        };
        let num =
            |k: &str| -> Result<u64> { get(k)?.parse().map_err(|e| bad(format!("{k}: {e}"))) };
        Ok(SynthConf {
            liberty: PathBuf::from(get("liberty")?),
            lef: kv.get("lef").map(PathBuf::from),
            liberty_package: get("liberty_package")?,
            library_name: get("library_name")?,
            abc_delay_ps: u32::try_from(num("abc_delay_ps")?)
                .map_err(|e| bad(format!("abc_delay_ps: {e}")))?,
            max_fanout: usize::try_from(num("max_fanout")?)
                .map_err(|e| bad(format!("max_fanout: {e}")))?,
            buffer_cell: get("buffer_cell")?,
            buffer_in: get("buffer_in")?,
            buffer_out: get("buffer_out")?,
            nand2_cell: get("nand2_cell")?,
            inverter_cell: get("inverter_cell")?,
            inverter_in: get("inverter_in")?,
            inverter_out: get("inverter_out")?,
            fo4_stages: match usize::try_from(num("fo4_stages")?) {
                Ok(n) if n >= 8 => n,
                _ => return Err(bad("fo4_stages: at least 8".into())),
            },
        })
    }

    /// The liberty file must exist (else an installation hint).
    pub fn require_liberty(&self) -> Result<()> {
        if !self.liberty.is_file() {
            return Err(SiliconError::LibertyMissing {
                path: self.liberty.clone(),
                package: self.liberty_package.clone(),
            });
        }
        Ok(())
    }
}

/// `template` with each `@KEY@` replaced by its value.
pub(crate) fn fill(template: &str, vars: &[(&str, String)]) -> String {
    let mut s = template.to_string();
    for (k, v) in vars {
        s = s.replace(&format!("@{k}@"), v);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_configuration_parses() {
        let c = SynthConf::parse(SYNTH_CONF).unwrap();
        assert_eq!(c.buffer_cell, "BUFX4");
        assert!(c.max_fanout >= 2 && c.abc_delay_ps > 0);
    }

    #[test]
    fn malformed_configuration_is_an_error() {
        let e = SynthConf::parse("liberty /x.lib\n").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
        let e = SynthConf::parse("liberty = /x.lib\n").unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
        let text = SYNTH_CONF.replace("max_fanout = 8", "max_fanout = many");
        let e = SynthConf::parse(&text).unwrap_err();
        assert!(e.to_string().contains("max_fanout"), "{e}");
    }

    #[test]
    fn missing_liberty_names_the_package() {
        let mut c = SynthConf::parse(SYNTH_CONF).unwrap();
        c.liberty = "/nonexistent/cells.lib".into();
        let e = c.require_liberty().unwrap_err();
        assert!(
            e.to_string().contains("apt-get install qflow-tech-osu018"),
            "{e}"
        );
    }

    #[test]
    fn fill_replaces_every_key() {
        assert_eq!(
            fill("a @X@ @Y@ @X@", &[("X", "1".into()), ("Y", "2".into())]),
            "a 1 2 1"
        );
    }
}
