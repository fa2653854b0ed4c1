//! Helpers shared by the silicon integration tests.

use sbrp_iface::PbParams;

/// The small unit the tests synthesize and prove (16 entries, 4 warps, 16 lines).
pub fn small() -> PbParams {
    PbParams {
        entries: 16,
        warps: 4,
        lines: 16,
        ..PbParams::default()
    }
}

/// A scratch directory removed when dropped.
pub fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("sbrp-silicon-{name}-"))
        .tempdir()
        .unwrap()
}
