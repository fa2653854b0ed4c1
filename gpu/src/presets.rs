//! Named presets: the configurations the paper evaluates (`docs/model.md`,
//! "Presets"; tabled with their reasons in `docs/model-params.md`), and
//! [`artifact_mode`], which turns any of them into the artifact's behaviour.
//!
//! Every preset starts from the default (`sbrp-near`, Table 1) and changes
//! only what its figure changes (sbrp-benchmarks.md §1.5). Tags as in
//! `config.rs`; [N] is sbrp-benchmarks.md.

use crate::config::{ConfigError, Durability, GpuConfig, Model, PmPlace};

/// The workload build an app's program comes from under a preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binary {
    /// The `*_gpu` binary (SBRP, epoch).
    Gpu,
    /// The GPM build: a device fence after every persistency op.
    Gpm,
}

/// What a preset changes besides model and PM placement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tweak {
    None,
    /// NVM read and write bandwidth scaled together [Fig. 10b; A: bw scale 8/16 and 2/4].
    Bandwidth(f64),
    /// Persist buffer entries [Fig. 10a]: the paper's sizes (§7.3: 50% =
    /// 256 of 512 lines, and 100%); the artifact's configs are half these [N §6.5].
    PbEntries(u32),
    /// Flush window: outstanding line flushes per SM [Fig. 10c; A `-pm_outstanding_flushes`].
    Window(u32),
}

/// One preset: everything that reads presets reads this row (no code
/// parses preset names).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preset {
    pub name: &'static str,
    /// One line, with the figure it serves.
    pub desc: &'static str,
    pub model: Model,
    /// PM-far: the PCIe link (config `pcie`) in front of the host NVM,
    /// which keeps the NVM's own numbers; the link caps bandwidth at 28
    /// GB/s each way [T1, §3]. The artifact's 28/28 NVM and 900-cycle
    /// latency are `artifact_mode`.
    pub place: PmPlace,
    /// eADR: durable once across PCIe, in the host's cache [§7.2].
    pub durability: Durability,
    /// The apps run their device-scope variant (`App::program_dev`), as
    /// the model promotes block scope [Fig. 7].
    pub promote: bool,
    /// The workload build the apps use (`sbrp bench`, `sweep`, `crash`).
    pub binary: Binary,
    pub tweak: Tweak,
}

/// The default (`sbrp-near`, Table 1); rows change only what differs.
const NEAR: Preset = Preset {
    name: "",
    desc: "",
    model: Model::Sbrp,
    place: PmPlace::Near,
    durability: Durability::Adr,
    promote: false,
    binary: Binary::Gpu,
    tweak: Tweak::None,
};
const FAR: Preset = Preset {
    place: PmPlace::Far,
    ..NEAR
};
const EPOCH: Preset = Preset {
    model: Model::Epoch,
    ..NEAR
};

/// Every preset, in the order the paper's figures use them.
const PRESETS: [Preset; 23] = [
    Preset {
        name: "gpm-far",
        desc: "GPM (epoch + a device fence per persistency op) on PM-far [Fig. 6]",
        // GPM runs on PM-far only: it needs no new hardware [§4; N §6.15].
        model: Model::Gpm,
        binary: Binary::Gpm,
        ..FAR
    },
    Preset {
        name: "epoch-far",
        desc: "epoch persistency on PM-far, Figure 6's baseline [Fig. 6]",
        model: Model::Epoch,
        ..FAR
    },
    Preset {
        name: "epoch-near",
        desc: "epoch persistency on PM-near [Fig. 6, 10, 11]",
        ..EPOCH
    },
    Preset {
        name: "sbrp-far",
        desc: "SBRP on PM-far [Fig. 6]",
        ..FAR
    },
    Preset {
        name: "sbrp-near",
        desc: "SBRP on PM-near: the default, Table 1 [Fig. 6, 10, 11]",
        ..NEAR
    },
    Preset {
        name: "epoch-far-eadr",
        desc: "epoch on PM-far with eADR, Figure 9's baseline [Fig. 9]",
        model: Model::Epoch,
        durability: Durability::Eadr,
        ..FAR
    },
    Preset {
        name: "sbrp-far-eadr",
        desc: "SBRP on PM-far with eADR [Fig. 9]",
        durability: Durability::Eadr,
        ..FAR
    },
    Preset {
        name: "sbrp-far-dev",
        desc: "SBRP on PM-far, block scope promoted to device [Fig. 7]",
        model: Model::SbrpDevice,
        promote: true,
        ..FAR
    },
    Preset {
        name: "sbrp-near-dev",
        desc: "SBRP on PM-near, block scope promoted to device [Fig. 7]",
        model: Model::SbrpDevice,
        promote: true,
        ..NEAR
    },
    Preset {
        name: "epoch-near-bw50",
        desc: "epoch-near at half NVM bandwidth, 42/21 GB/s [Fig. 10b]",
        tweak: Tweak::Bandwidth(0.5),
        ..EPOCH
    },
    Preset {
        name: "sbrp-near-bw50",
        desc: "SBRP-near at half NVM bandwidth, 42/21 GB/s [Fig. 10b]",
        tweak: Tweak::Bandwidth(0.5),
        ..NEAR
    },
    Preset {
        name: "epoch-near-bw200",
        desc: "epoch-near at double NVM bandwidth, 168/84 GB/s [Fig. 10b]",
        tweak: Tweak::Bandwidth(2.0),
        ..EPOCH
    },
    Preset {
        name: "sbrp-near-bw200",
        desc: "SBRP-near at double NVM bandwidth, 168/84 GB/s [Fig. 10b]",
        tweak: Tweak::Bandwidth(2.0),
        ..NEAR
    },
    Preset {
        name: "sbrp-near-pb64",
        desc: "SBRP-near, 64 PB entries (12.5% of L1 lines) [Fig. 10a]",
        tweak: Tweak::PbEntries(64),
        ..NEAR
    },
    Preset {
        name: "sbrp-near-pb128",
        desc: "SBRP-near, 128 PB entries (25% of L1 lines) [Fig. 10a]",
        tweak: Tweak::PbEntries(128),
        ..NEAR
    },
    Preset {
        name: "sbrp-near-pb512",
        desc: "SBRP-near, 512 PB entries (100% of L1 lines) [Fig. 10a]",
        tweak: Tweak::PbEntries(512),
        ..NEAR
    },
    Preset {
        name: "sbrp-near-win2",
        desc: "SBRP-near, flush window 2 [Fig. 10c]",
        tweak: Tweak::Window(2),
        ..NEAR
    },
    Preset {
        name: "sbrp-near-win4",
        desc: "SBRP-near, flush window 4 [Fig. 10c]",
        tweak: Tweak::Window(4),
        ..NEAR
    },
    Preset {
        name: "sbrp-near-win8",
        desc: "SBRP-near, flush window 8 [Fig. 10c]",
        tweak: Tweak::Window(8),
        ..NEAR
    },
    Preset {
        name: "sbrp-near-win10",
        desc: "SBRP-near, flush window 10 [Fig. 10c]",
        tweak: Tweak::Window(10),
        ..NEAR
    },
    Preset {
        name: "sbrp-near-win12",
        desc: "SBRP-near, flush window 12 [Fig. 10c]",
        tweak: Tweak::Window(12),
        ..NEAR
    },
    // Not in the paper: Gope et al.'s scoped persist barriers, the scoped
    // but unbuffered baseline (docs/model.md, "SPB").
    Preset {
        name: "spb-far",
        desc: "scoped persist barriers (Gope et al.), unbuffered, on PM-far [SPB]",
        model: Model::Spb,
        ..FAR
    },
    Preset {
        name: "spb-near",
        desc: "scoped persist barriers (Gope et al.), unbuffered, on PM-near [SPB]",
        model: Model::Spb,
        ..NEAR
    },
];

/// Every preset's row, in a fixed order.
pub fn table() -> &'static [Preset] {
    &PRESETS
}

/// The row of the preset called `name`, or `None`.
pub fn row(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Every preset as (name, one-line description), in a fixed order.
pub fn presets() -> Vec<(&'static str, &'static str)> {
    PRESETS.iter().map(|p| (p.name, p.desc)).collect()
}

impl Preset {
    /// The configuration: the default with the row's changes.
    pub fn config(&self) -> GpuConfig {
        let mut c = GpuConfig {
            model: self.model,
            ..GpuConfig::default()
        };
        c.pm.place = self.place;
        c.pm.durability = self.durability;
        match self.tweak {
            Tweak::None => {}
            Tweak::Bandwidth(f) => {
                c.pm.read_bandwidth *= f;
                c.pm.write_bandwidth *= f;
            }
            Tweak::PbEntries(n) => c.pb.entries = n,
            Tweak::Window(w) => c.pb.window = w,
        }
        c
    }
}

/// The preset called `name`, or `None`.
pub fn preset(name: &str) -> Option<GpuConfig> {
    row(name).map(Preset::config)
}

/// [`preset`], or an error naming the closest preset and listing them all.
pub fn preset_or_err(name: &str) -> Result<GpuConfig, ConfigError> {
    preset(name).ok_or_else(|| {
        let names: Vec<String> = PRESETS.iter().map(|p| p.name.to_string()).collect();
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
