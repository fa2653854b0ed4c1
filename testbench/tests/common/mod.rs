//! Running the `sbrp` binary from the integration tests.

// Each test binary uses a part of this module.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs `sbrp ARGS` with extra environment variables.
pub fn run_sbrp(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sbrp"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("sbrp runs")
}

/// Exit status (-1 when killed), stdout and stderr of a run.
pub fn outcome(o: Output) -> (i32, String, String) {
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}
