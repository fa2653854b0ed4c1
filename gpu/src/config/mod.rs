//! The GPU configuration (`docs/model.md`, "Parameters"): one serde schema
//! read from TOML, whose defaults are the paper's system (Table 1, SBRP on
//! PM-near). Latencies are in core cycles (1365 MHz) unless a name says
//! otherwise; bandwidths in GB/s (10^9 bytes per second).
//!
//! Sources: [T1] the paper's Table 1; [§n] the paper's sections; [A] the
//! artifact's GPGPU-Sim configuration (`../shared/notes/sbrp-benchmarks.md`
//! §1.2); [D] derived, with the arithmetic in `docs/model.md`. Every key,
//! its unit and source are tabled in `docs/model-params.md`.
//!
//! Loading (`load.rs`: [`GpuConfig::from_toml_str`], [`GpuConfig::load`])
//! refuses unknown keys and ill-typed values with file:line;
//! [`GpuConfig::set`] applies one `--set key=value`; `validate.rs`:
//! [`GpuConfig::validate`] refuses impossible combinations, naming the key.

use std::fmt;

use sbrp_iface::{FlushPolicy, PbParams};
use serde::{Deserialize, Serialize};

pub use crate::sm::persist::Model;

/// The persist buffer's flush policy [§6.2], parsed once with the
/// configuration (the unit's `FlushPolicy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// Flush while fewer than `pb.window` flushes are outstanding.
    #[default]
    Window,
    /// Flush as soon as ordering allows.
    Eager,
    /// Flush only when forced.
    Lazy,
}

impl Policy {
    /// The unit's policy.
    pub fn unit(self) -> FlushPolicy {
        match self {
            Policy::Window => FlushPolicy::Window,
            Policy::Eager => FlushPolicy::Eager,
            Policy::Lazy => FlushPolicy::Lazy,
        }
    }
}

/// The persist buffer unit's parameters, checked against the unit's limits
/// once: only [`GpuConfig::unit_params`] makes one, so holding one means
/// the unit accepts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitParams(PbParams);

impl UnitParams {
    pub fn get(&self) -> &PbParams {
        &self.0
    }
}

/// Where the PM sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PmPlace {
    /// On the host, over PCIe [§3, Fig. 1a].
    Far,
    /// On the GPU board behind its memory controllers [§3, Fig. 1b].
    Near,
}

/// The persistence point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    /// A persist is durable once accepted by the PM controller's write queue [§3].
    Adr,
    /// PM-far only: durable once it has crossed PCIe into the host's cache [§7.2].
    Eadr,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CoreConfig {
    /// SMs [T1].
    pub sms: u32,
    /// Core clock, MHz [T1].
    pub clock_mhz: u32,
    /// Resident warps per SM: 1024 threads / 32 [A `-gpgpu_shader_core_pipeline`].
    pub warps_per_sm: u32,
    /// Resident CTAs per SM [A `-gpgpu_shader_cta`].
    pub ctas_per_sm: u32,
    /// Registers per SM [A `-gpgpu_shader_registers`].
    pub regs_per_sm: u32,
    /// Shared memory per SM, bytes [A `-gpgpu_shmem_size`].
    pub smem_per_sm: u32,
    /// Warp schedulers per SM, each issuing one instruction per cycle [A, stock Turing config].
    pub schedulers: u32,
    /// Cycles from a kernel's launch to its first CTA issue [A `-gpgpu_kernel_launch_latency`].
    pub kernel_launch_latency: u32,
    /// Latency of a GPU/system-scope fence, cycles [A: `-ptx_opcode_latency_fence` default].
    pub fence_latency: u32,
    /// Latency of a shared-memory access or an L1-resident flag poll, cycles [A: L1 latency].
    pub shared_latency: u32,
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            sms: 30,
            clock_mhz: 1365,
            warps_per_sm: 32,
            ctas_per_sm: 32,
            regs_per_sm: 65536,
            smem_per_sm: 65536,
            schedulers: 4,
            kernel_launch_latency: 5000,
            fence_latency: 200,
            shared_latency: 20,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct L1Config {
    /// Bytes per SM [T1].
    pub size: u32,
    /// Line bytes [A `-gpgpu_cache:dl1`].
    pub line: u32,
    /// Sector bytes [A].
    pub sector: u32,
    /// Ways (= lines: fully associative) [A].
    pub assoc: u32,
    /// Hit latency, cycles [A `-gpgpu_l1_latency`].
    pub latency: u32,
    /// Outstanding misses per SM [A: MSHR 256 entries].
    pub mshrs: u32,
    /// Outstanding write-backs (flushes, evictions) per SM before the write-back
    /// path refuses more [A: miss queue 16].
    pub miss_queue: u32,
}

impl Default for L1Config {
    fn default() -> Self {
        L1Config {
            size: 65536,
            line: 128,
            sector: 32,
            assoc: 512,
            latency: 20,
            mshrs: 256,
            miss_queue: 16,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IcntConfig {
    /// One-way latency SM <-> L2 slice, cycles [D: GPGPU-Sim local crossbar].
    pub latency: u32,
    /// Bytes per cycle each SM port moves in each direction [A: 40-B flits].
    pub port_bytes: u32,
}

impl Default for IcntConfig {
    fn default() -> Self {
        IcntConfig {
            latency: 8,
            port_bytes: 40,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct L2Config {
    /// Slices (2 per memory channel) [A `-gpgpu_n_sub_partition_per_mchannel`].
    pub slices: u32,
    /// Bytes per slice (3 MB / 24) [T1, A].
    pub slice_size: u32,
    /// Ways [A `-gpgpu_cache:dl2`].
    pub assoc: u32,
    /// Hit latency (ROP), cycles [A `-gpgpu_l2_rop_latency`].
    pub latency: u32,
    /// Hash line addresses over slices (else low bits) [A: hashed index].
    pub hash: bool,
    /// At each kernel end, write dirty volatile lines back to GDDR and
    /// invalidate the L2 [A `-gpgpu_flush_l2_cache 1`].
    pub flush_at_kernel_end: bool,
}

impl Default for L2Config {
    fn default() -> Self {
        L2Config {
            slices: 24,
            slice_size: 131072,
            assoc: 16,
            latency: 160,
            hash: true,
            flush_at_kernel_end: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DramConfig {
    /// GDDR channels [A `-gpgpu_n_mem`].
    pub channels: u32,
    /// Total bandwidth, GB/s [T1].
    pub bandwidth: f64,
    /// Fixed latency at the controller, cycles [A `-dram_latency`; T1 says 100 ns].
    pub latency: u32,
    /// Requests a channel's queue holds [A: FR-FCFS queue 64].
    pub queue: u32,
}

impl Default for DramConfig {
    fn default() -> Self {
        DramConfig {
            channels: 12,
            bandwidth: 336.0,
            latency: 100,
            queue: 64,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PmConfig {
    pub place: PmPlace,
    pub durability: Durability,
    /// PM channels (one beside each GDDR channel) [A].
    pub channels: u32,
    /// Total read bandwidth, GB/s [T1].
    pub read_bandwidth: f64,
    /// Total write bandwidth, GB/s [T1, §3: 1/8 of GDDR].
    pub write_bandwidth: f64,
    /// NVM device latency, cycles [T1: 300 ns; A `-pm_latency 300` near].
    pub latency: u32,
    /// Writes a PM controller's write-pending queue holds (the ADR domain) [A: queue 64].
    pub queue: u32,
    /// PM-far: the host NVM is `channels` independent devices (address-
    /// interleaved, each with its bandwidth share and a queue of `queue`)
    /// behind the host's on-chip fabric: a write reaches its channel's queue
    /// after the ring hops from the PCIe root to the channel and the
    /// channel's ingress (its share of `read_bandwidth`), so one SM's writes
    /// can become durable out of issue order, as on a multi-channel host
    /// [D: `docs/model-memory.md` §6.1]. PM-near's channels already are
    /// independent: no effect there.
    pub reorder: bool,
    /// With `reorder`: cycles per hop of the host's ring between the PCIe
    /// root (at channel 0's stop) and a channel's stop (`channels` stops,
    /// shortest way). One ring clock per hop at 3 GHz: 1365 / 3000 = 0.455
    /// [D: `docs/model-params.md`, `pm.fabric_hop`].
    pub fabric_hop: f64,
}

impl Default for PmConfig {
    fn default() -> Self {
        PmConfig {
            place: PmPlace::Near,
            durability: Durability::Adr,
            channels: 12,
            read_bandwidth: 84.0,
            write_bandwidth: 42.0,
            latency: 300,
            queue: 64,
            reorder: false,
            fabric_hop: 0.455,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PcieConfig {
    /// Bandwidth each way, GB/s [T1, §3: PCIe 4.0].
    pub bandwidth: f64,
    /// One-way latency, cycles [T1: 300 ns].
    pub latency: u32,
}

impl Default for PcieConfig {
    fn default() -> Self {
        PcieConfig {
            bandwidth: 28.0,
            latency: 300,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PbConfig {
    /// Persist buffer entries per SM [§7.3: 50% of 512 L1 lines].
    pub entries: u32,
    /// Flush window: outstanding line flushes per SM [T1].
    pub window: u32,
    /// Flush policy: window, eager or lazy [§6.2].
    pub policy: Policy,
    /// ACTR bits [§6].
    pub actr_bits: u32,
}

impl Default for PbConfig {
    fn default() -> Self {
        PbConfig {
            entries: 256,
            window: 6,
            policy: Policy::Window,
            actr_bits: 8,
        }
    }
}

/// Where the artifact and the paper disagree, the paper is the default and
/// `true` reproduces the artifact (`docs/model.md`, "Artifact switches").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ArtifactConfig {
    /// No drain at kernel end: dirty PM lines are dropped at no cost under
    /// epoch/GPM and stay buffered in SBRP's PB into the next kernel.
    pub no_kernel_end_drain: bool,
    /// A PM write is acknowledged when it leaves the L2 for the controller
    /// (no PCIe or queue time on the ack path).
    pub ack_at_l2: bool,
    /// A PM write missing in the L2 also reads its sector from PM.
    pub l2_write_allocate_read: bool,
    /// A dFence leaves the L1's clean PM lines in place (the artifact); the
    /// paper (§7.2) and the unit (`docs/microarch.md` §4) invalidate them.
    pub dfence_keeps_l1: bool,
    /// PCIe modelled per memory channel (bandwidth / channels each), not one link.
    pub pcie_per_channel: bool,
}

/// The idealised unit of the ladder (`docs/model.md`, "The idealised
/// unit"; `gpu/src/ideal/`): with `unit`, SBRP's SMs host it instead of the
/// v2 unit; each other key puts back one of the v2 unit's realism steps.
/// Defaults: the v2 unit, and the idealised unit at its most ideal.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IdealConfig {
    /// Host the idealised unit instead of the v2 unit.
    pub unit: bool,
    /// Registered ports: requests decided two cycles after they are taken
    /// and answered in the third, acks and `inv_done` a cycle late,
    /// outputs showing the state at the start of the cycle (§4.0).
    pub registered: bool,
    /// A request that cannot be done now is answered replay (and sent
    /// again) instead of being refused at, or held in, the port.
    pub replay: bool,
    /// Ack epochs: 0 unlimited (a warp waits only for the flushes before
    /// it), 1 the paper's single ACTR (FSM reset when ACTR is zero), 4 the
    /// v2 unit's.
    pub epochs: u32,
    /// Live ordering entries per warp: 0 unlimited, 2 the v2 unit's.
    pub ord_queue: u32,
    /// A gated head persist stops every persist behind it (the v2 unit);
    /// off, the oldest ungated persist before the first ordering entry
    /// flushes past it.
    pub strict_head: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GpuConfig {
    pub model: Model,
    pub core: CoreConfig,
    pub l1: L1Config,
    pub icnt: IcntConfig,
    pub l2: L2Config,
    pub dram: DramConfig,
    pub pm: PmConfig,
    pub pcie: PcieConfig,
    pub pb: PbConfig,
    pub artifact: ArtifactConfig,
    pub ideal: IdealConfig,
    /// Cycles a block-scope flag store takes to be seen by another SM (it
    /// orders nothing there; litmus 8) [D].
    pub remote_visibility: u32,
}

impl Default for GpuConfig {
    fn default() -> Self {
        GpuConfig {
            model: Model::Sbrp,
            core: CoreConfig::default(),
            l1: L1Config::default(),
            icnt: IcntConfig::default(),
            l2: L2Config::default(),
            dram: DramConfig::default(),
            pm: PmConfig::default(),
            pcie: PcieConfig::default(),
            pb: PbConfig::default(),
            artifact: ArtifactConfig::default(),
            ideal: IdealConfig::default(),
            remote_visibility: 20,
        }
    }
}

impl GpuConfig {
    /// L1 lines per SM; 0 when `l1.line` is 0 (which `validate` refuses), so
    /// that it never panics.
    pub fn l1_lines(&self) -> u32 {
        self.l1.size.checked_div(self.l1.line).unwrap_or(0)
    }
    /// Sectors per line (0 when `l1.sector` is 0).
    pub fn sectors(&self) -> u32 {
        self.l1.line.checked_div(self.l1.sector).unwrap_or(0)
    }
    /// Bytes a resource of `gbs` GB/s moves per core cycle.
    pub fn bytes_per_cycle(&self, gbs: f64) -> f64 {
        gbs * 1e9 / (self.core.clock_mhz as f64 * 1e6)
    }
}

/// Why a configuration was refused. The message alone says what to fix: the
/// key (for a file, with file:line), the file, or the `--set` argument.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// TOML syntax, an unknown key or an ill-typed value in a file.
    #[error("{file}:{line}: {message}")]
    File {
        file: String,
        /// 1-based; 0 when the parser gave no position.
        line: usize,
        /// The dotted key, when the position shows it.
        key: Option<String>,
        message: String,
    },
    /// `set` named a key the schema lacks.
    #[error("unknown key `{key}`{}", Suggest(suggestion))]
    UnknownKey {
        key: String,
        suggestion: Option<String>,
    },
    /// `set` gave a value that does not fit the key.
    #[error("`{key}` = {value:?}: {message}")]
    BadValue {
        key: String,
        value: String,
        message: String,
    },
    /// `validate`: a value (or combination) the model cannot run.
    #[error("invalid `{key}` = {value}: {reason}")]
    Invalid {
        key: String,
        value: String,
        reason: String,
    },
    /// A `--set` argument without `=`.
    #[error("`{0}`: expected key=value (e.g. pm.write_bandwidth=21)")]
    SetSyntax(String),
    /// No preset has this name.
    #[error("unknown preset `{name}`{}; presets: {list}", Suggest(suggestion))]
    UnknownPreset {
        name: String,
        suggestion: Option<String>,
        list: String,
    },
}

impl ConfigError {
    /// The dotted key the error is about, if it is about one.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::File { key, .. } => key.as_deref(),
            ConfigError::UnknownKey { key, .. }
            | ConfigError::BadValue { key, .. }
            | ConfigError::Invalid { key, .. } => Some(key),
            _ => None,
        }
    }
}

/// Formats an optional "did you mean" tail.
struct Suggest<'a>(&'a Option<String>);

impl fmt::Display for Suggest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(s) => write!(f, " (did you mean `{s}`?)"),
            None => Ok(()),
        }
    }
}

mod load;
mod validate;

pub use load::key_line;
pub(crate) use load::nearest;
