//! The project's litmus suite (`testbench/litmus/`), embedded in the library
//! so that `sbrp cosim --suite litmus` runs from any directory without
//! reading the workspace. `--litmus-dir DIR` runs another directory.

use sbrp_sim_fast::frontend::FrontEndConfig;
use sbrp_trace::{parse, Trace};

use crate::error::Result;

/// Every trace of `testbench/litmus/`: (name, text), sorted by name.
pub const LITMUS: [(&str, &str); 20] = [
    (
        "01_same_line_after_ofence",
        include_str!("../litmus/01_same_line_after_ofence.trace"),
    ),
    (
        "02_coalescing",
        include_str!("../litmus/02_coalescing.trace"),
    ),
    (
        "03_ofence_coalescing",
        include_str!("../litmus/03_ofence_coalescing.trace"),
    ),
    (
        "04_no_false_ordering",
        include_str!("../litmus/04_no_false_ordering.trace"),
    ),
    (
        "05_fsm_isolation",
        include_str!("../litmus/05_fsm_isolation.trace"),
    ),
    (
        "06_block_release_acquire",
        include_str!("../litmus/06_block_release_acquire.trace"),
    ),
    (
        "07_device_release_acquire",
        include_str!("../litmus/07_device_release_acquire.trace"),
    ),
    (
        "08_scoped_persistency_bug",
        include_str!("../litmus/08_scoped_persistency_bug.trace"),
    ),
    ("09_dfence", include_str!("../litmus/09_dfence.trace")),
    ("10_eviction", include_str!("../litmus/10_eviction.trace")),
    ("11_window", include_str!("../litmus/11_window.trace")),
    (
        "12_gpkvs_transaction",
        include_str!("../litmus/12_gpkvs_transaction.trace"),
    ),
    (
        "13_prefix_sum_sentinel",
        include_str!("../litmus/13_prefix_sum_sentinel.trace"),
    ),
    (
        "14_log_tail_sentinel",
        include_str!("../litmus/14_log_tail_sentinel.trace"),
    ),
    (
        "15_checkpoint_flip",
        include_str!("../litmus/15_checkpoint_flip.trace"),
    ),
    (
        "16_epoch_ordering",
        include_str!("../litmus/16_epoch_ordering.trace"),
    ),
    (
        "17_accidental_ordering",
        include_str!("../litmus/17_accidental_ordering.trace"),
    ),
    (
        "18_lost_update_across_sms",
        include_str!("../litmus/18_lost_update_across_sms.trace"),
    ),
    (
        "19_eviction_other_warps_fence",
        include_str!("../litmus/19_eviction_other_warps_fence.trace"),
    ),
    ("starvation", include_str!("../litmus/starvation.trace")),
];

/// The embedded traces, parsed and their `config` lines checked; errors name
/// `litmus/NAME.trace` and the line.
pub fn litmus_traces() -> Result<Vec<(String, Trace)>> {
    LITMUS
        .iter()
        .map(|(name, text)| {
            let t = parse(text, &format!("litmus/{name}.trace"))?;
            FrontEndConfig::default().apply_trace(&t)?;
            Ok((name.to_string(), t))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_suite_is_the_litmus_directory() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus");
        let files = crate::suites::litmus_files(&dir).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_stem().unwrap().to_string_lossy().to_string())
            .collect();
        let embedded: Vec<&str> = LITMUS.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, embedded, "add the new trace to LITMUS");
        for (f, (_, text)) in files.iter().zip(LITMUS.iter()) {
            assert_eq!(&std::fs::read_to_string(f).unwrap(), text);
        }
        assert_eq!(litmus_traces().unwrap().len(), LITMUS.len());
    }
}
