//! The external tools of the flow (Yosys, OpenSTA, CaDiCaL) found on `PATH`
//! or through `SBRP_YOSYS` / `SBRP_STA` / `SBRP_CADICAL`, with their installation hints, and the
//! RTL generator.

use sbrp_iface::PbParams;
use sbrp_tools::{LogFile, Tool};

use crate::error::{Result, SiliconError};

fn hint(package: &str, env: &str) -> String {
    format!(
        "install it with `sudo apt-get install {package}` (Debian/Ubuntu; \
         scripts/setup.sh does it), or point {env} at it"
    )
}

/// Yosys (`SBRP_YOSYS`, else `yosys` on `PATH`).
pub fn yosys() -> Tool {
    Tool::from_env("SBRP_YOSYS", "yosys", hint("yosys", "SBRP_YOSYS"))
}

/// OpenSTA (`SBRP_STA`, else `sta` on `PATH`).
pub fn sta() -> Tool {
    Tool::from_env("SBRP_STA", "sta", hint("opensta", "SBRP_STA"))
}

/// CaDiCaL (`SBRP_CADICAL`, else `cadical` on `PATH`), the SAT solver of
/// the inductive step (`kstep`).
pub fn cadical() -> Tool {
    Tool::from_env("SBRP_CADICAL", "cadical", hint("cadical", "SBRP_CADICAL"))
}

/// Checks that `tool` starts (its exit status for `probe` does not matter:
/// some tools exit non-zero on a version query).
pub fn require(tool: &Tool, probe: &str) -> Result<()> {
    let mut cmd = tool.command();
    cmd.arg(probe);
    tool.capture(&mut cmd, probe, LogFile::None)?;
    Ok(())
}

/// The generated Verilog of the unit for `p`.
pub(crate) fn generate(p: &PbParams) -> Result<String> {
    p.validate()?;
    // Validated parameters the generator still refuses have no instance.
    sbrp_hdl::generate_verilog(p).map_err(|e| SiliconError::Generate {
        tag: p.tag(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sbrp_tools::Tool;

    #[test]
    fn missing_tools_say_how_to_install() {
        for (tool, package, env) in [
            ("/nonexistent/yosys", "yosys", "SBRP_YOSYS"),
            ("/nonexistent/sta", "opensta", "SBRP_STA"),
            ("/nonexistent/cadical", "cadical", "SBRP_CADICAL"),
        ] {
            let t = Tool::new(tool, hint(package, env));
            let e = require(&t, "-V").unwrap_err().to_string();
            assert!(e.contains(&format!("apt-get install {package}")), "{e}");
            assert!(e.contains(env) && !e.contains("--"), "{e}");
        }
    }
}
