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

/// The apps at the sizes of the GPU-model tests: one wave or less of each
/// app's launch shape.
pub fn small_apps() -> Vec<Box<dyn sbrp_workloads::App>> {
    [
        ("gpkvs", 2048),
        ("hm", 300),
        ("srad", 64),
        ("reduction", 262_144),
        ("mq", 40),
        ("scan", 512 * 60),
    ]
    .iter()
    .map(|(n, s)| sbrp_workloads::app(n, Some(*s)).unwrap())
    .collect()
}
