//! Named presets: the configurations the paper evaluates (`docs/model.md`,
//! "Presets"; tabled with their reasons in `docs/model-params.md`), and
//! [`artifact_mode`], which turns any of them into the artifact's behaviour.
//!
//! Every preset starts from the default (`sbrp-near`, Table 1) and changes
//! only what its figure changes (sbrp-benchmarks.md §1.5). Tags as in
//! `config.rs`; [N] is sbrp-benchmarks.md.

use crate::config::{ConfigError, Durability, GpuConfig, Model, PmPlace};

/// Names and one-line descriptions, in the order the paper's figures use them.
const PRESETS: [(&str, &str); 21] = [
    (
        "gpm-far",
        "GPM (epoch + a device fence per persistency op) on PM-far [Fig. 6]",
    ),
    (
        "epoch-far",
        "epoch persistency on PM-far, Figure 6's baseline [Fig. 6]",
    ),
    (
        "epoch-near",
        "epoch persistency on PM-near [Fig. 6, 10, 11]",
    ),
    ("sbrp-far", "SBRP on PM-far [Fig. 6]"),
    (
        "sbrp-near",
        "SBRP on PM-near: the default, Table 1 [Fig. 6, 10, 11]",
    ),
    (
        "epoch-far-eadr",
        "epoch on PM-far with eADR, Figure 9's baseline [Fig. 9]",
    ),
    ("sbrp-far-eadr", "SBRP on PM-far with eADR [Fig. 9]"),
    (
        "sbrp-far-dev",
        "SBRP on PM-far, block scope promoted to device [Fig. 7]",
    ),
    (
        "sbrp-near-dev",
        "SBRP on PM-near, block scope promoted to device [Fig. 7]",
    ),
    (
        "epoch-near-bw50",
        "epoch-near at half NVM bandwidth, 42/21 GB/s [Fig. 10b]",
    ),
    (
        "sbrp-near-bw50",
        "SBRP-near at half NVM bandwidth, 42/21 GB/s [Fig. 10b]",
    ),
    (
        "epoch-near-bw200",
        "epoch-near at double NVM bandwidth, 168/84 GB/s [Fig. 10b]",
    ),
    (
        "sbrp-near-bw200",
        "SBRP-near at double NVM bandwidth, 168/84 GB/s [Fig. 10b]",
    ),
    (
        "sbrp-near-pb64",
        "SBRP-near, 64 PB entries (12.5% of L1 lines) [Fig. 10a]",
    ),
    (
        "sbrp-near-pb128",
        "SBRP-near, 128 PB entries (25% of L1 lines) [Fig. 10a]",
    ),
    (
        "sbrp-near-pb512",
        "SBRP-near, 512 PB entries (100% of L1 lines) [Fig. 10a]",
    ),
    ("sbrp-near-win2", "SBRP-near, flush window 2 [Fig. 10c]"),
    ("sbrp-near-win4", "SBRP-near, flush window 4 [Fig. 10c]"),
    ("sbrp-near-win8", "SBRP-near, flush window 8 [Fig. 10c]"),
    ("sbrp-near-win10", "SBRP-near, flush window 10 [Fig. 10c]"),
    ("sbrp-near-win12", "SBRP-near, flush window 12 [Fig. 10c]"),
];

/// Every preset as (name, one-line description), in a fixed order.
pub fn presets() -> Vec<(&'static str, &'static str)> {
    PRESETS.to_vec()
}

/// The preset called `name`, or `None`.
pub fn preset(name: &str) -> Option<GpuConfig> {
    let near = |model| GpuConfig {
        model,
        ..GpuConfig::default()
    };
    // PM-far: the PCIe link (config `pcie`) in front of the host NVM, which
    // keeps the NVM's own numbers; the link caps bandwidth at 28 GB/s each
    // way [T1, §3]. The artifact's 28/28 NVM and 900-cycle latency are
    // `artifact_mode`.
    let far = |model| {
        let mut c = near(model);
        c.pm.place = PmPlace::Far;
        c
    };
    // eADR: durable once across PCIe, in the host's cache [§7.2].
    let eadr = |model| {
        let mut c = far(model);
        c.pm.durability = Durability::Eadr;
        c
    };
    // Fig. 10b scales NVM read and write bandwidth together [A: bw scale 8/16 and 2/4].
    let bw = |model, factor: f64| {
        let mut c = near(model);
        c.pm.read_bandwidth *= factor;
        c.pm.write_bandwidth *= factor;
        c
    };
    // Fig. 10a: the paper's sizes (§7.3: 50% = 256 of 512 lines, and 100%;
    // 256 is sbrp-near); the artifact's configs are half these [N §6.5].
    let pb = |entries| {
        let mut c = near(Model::Sbrp);
        c.pb.entries = entries;
        c
    };
    // Fig. 10c: outstanding line flushes per SM [A `-pm_outstanding_flushes`].
    let win = |window| {
        let mut c = near(Model::Sbrp);
        c.pb.window = window;
        c
    };
    Some(match name {
        // GPM runs on PM-far only: it needs no new hardware [§4; N §6.15].
        "gpm-far" => far(Model::Gpm),
        "epoch-far" => far(Model::Epoch),
        "epoch-near" => near(Model::Epoch),
        "sbrp-far" => far(Model::Sbrp),
        "sbrp-near" => near(Model::Sbrp),
        "epoch-far-eadr" => eadr(Model::Epoch),
        "sbrp-far-eadr" => eadr(Model::Sbrp),
        "sbrp-far-dev" => far(Model::SbrpDevice),
        "sbrp-near-dev" => near(Model::SbrpDevice),
        "epoch-near-bw50" => bw(Model::Epoch, 0.5),
        "sbrp-near-bw50" => bw(Model::Sbrp, 0.5),
        "epoch-near-bw200" => bw(Model::Epoch, 2.0),
        "sbrp-near-bw200" => bw(Model::Sbrp, 2.0),
        "sbrp-near-pb64" => pb(64),
        "sbrp-near-pb128" => pb(128),
        "sbrp-near-pb512" => pb(512),
        "sbrp-near-win2" => win(2),
        "sbrp-near-win4" => win(4),
        "sbrp-near-win8" => win(8),
        "sbrp-near-win10" => win(10),
        "sbrp-near-win12" => win(12),
        _ => return None,
    })
}

/// [`preset`], or an error naming the closest preset and listing them all.
pub fn preset_or_err(name: &str) -> Result<GpuConfig, ConfigError> {
    preset(name).ok_or_else(|| {
        let names: Vec<String> = PRESETS.iter().map(|(n, _)| n.to_string()).collect();
        ConfigError::UnknownPreset {
            name: name.to_string(),
            suggestion: crate::config::nearest(name, &names),
            list: names.join(", "),
        }
    })
}

/// PM-far latency in the artifact: NVM 300 + a PCIe round trip 2 x 300, in
/// core cycles at the memory controller [A `-pm_latency 900`; N §1.4].
pub const ARTIFACT_FAR_LATENCY: u32 = 900;
/// The same with eADR: the artifact's only eADR change [A `-pm_latency 600`].
pub const ARTIFACT_FAR_EADR_LATENCY: u32 = 600;
/// PM-far bandwidth each way in the artifact, GB/s: GDDR 336 / scale 12 [A].
pub const ARTIFACT_FAR_BANDWIDTH: f64 = 28.0;

/// Switches `cfg` to the artifact's behaviour (`docs/model-params.md`,
/// "Artifact mode"): every artifact switch that reproduces the artifact, and
/// on PM-far the artifact's PM channel in place of the PCIe link.
pub fn artifact_mode(cfg: &mut GpuConfig) {
    let a = &mut cfg.artifact;
    a.no_kernel_end_drain = true;
    a.ack_at_l2 = true;
    a.l2_write_allocate_read = true;
    a.pcie_per_channel = true;
    // The artifact does not invalidate on dFence.
    a.dfence_keeps_l1 = true;
    if cfg.pm.place == PmPlace::Far {
        // The artifact has no PCIe stage: each PM channel is slowed to 28/12
        // GB/s and carries the whole latency, so the link adds none.
        cfg.pm.latency = match cfg.pm.durability {
            Durability::Eadr => ARTIFACT_FAR_EADR_LATENCY,
            Durability::Adr => ARTIFACT_FAR_LATENCY,
        };
        cfg.pm.read_bandwidth = ARTIFACT_FAR_BANDWIDTH;
        cfg.pm.write_bandwidth = ARTIFACT_FAR_BANDWIDTH;
        cfg.pcie.latency = 0;
    }
}
