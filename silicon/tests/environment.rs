//! A missing tool or liberty stops the area flow with an installation
//! hint. Its own test binary: it sets the process-wide environment
//! variables the flow reads (`SBRP_YOSYS`, `SBRP_STA`, `SBRP_LIBERTY`).

mod common;

use common::{scratch, small};
use sbrp_silicon as silicon;

/// One test: the variables are process-wide.
#[test]
fn missing_tools_and_library_say_how_to_install() {
    let dir = scratch("missing");
    let check = |var: &str, value: &str, timing: bool, expect: &str| {
        std::env::set_var(var, value);
        let e = silicon::run_area_flow(&small(), dir.path(), timing).unwrap_err();
        std::env::remove_var(var);
        assert!(!e.is_usage(), "{e}");
        let msg = e.to_string();
        assert!(msg.contains(expect), "{msg}");
        assert!(
            !msg.contains("--"),
            "a library message names a CLI flag: {msg}"
        );
    };
    check(
        "SBRP_YOSYS",
        "/nonexistent/yosys",
        false,
        "apt-get install yosys",
    );
    check(
        "SBRP_STA",
        "/nonexistent/sta",
        true,
        "apt-get install opensta",
    );
    check(
        "SBRP_LIBERTY",
        "/nonexistent/cells.lib",
        false,
        "apt-get install qflow-tech-osu018",
    );
}
