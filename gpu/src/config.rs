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
//! Loading ([`GpuConfig::from_toml_str`], [`GpuConfig::load`]) refuses
//! unknown keys and ill-typed values with file:line; [`GpuConfig::set`]
//! applies one `--set key=value`; [`GpuConfig::validate`] refuses
//! impossible combinations, naming the key.

use std::fmt;
use std::path::Path;

use sbrp_iface::{FlushPolicy, ParamError, PbParams};
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

impl GpuConfig {
    /// Parses a TOML text; absent keys keep their defaults. `file_name` only
    /// labels errors. Does not call [`validate`](Self::validate): `--set`
    /// may still change the result.
    pub fn from_toml_str(text: &str, file_name: &str) -> Result<GpuConfig, ConfigError> {
        toml::from_str(text).map_err(|e| file_error(text, file_name, &e))
    }

    /// Reads and parses a TOML file (see [`from_toml_str`](Self::from_toml_str)).
    pub fn load(path: impl AsRef<Path>) -> Result<GpuConfig, ConfigError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: name.clone(),
            source,
        })?;
        Self::from_toml_str(&text, &name)
    }

    /// The whole configuration as TOML (loads back to an equal config).
    pub fn to_toml_string(&self) -> String {
        // The schema has only tables, numbers, booleans and strings, which
        // TOML always represents; the fallback is never expected.
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot serialize: {e}\n"))
    }

    /// Every leaf key, dotted (`pm.write_bandwidth`), in sorted order.
    pub fn keys() -> Vec<String> {
        let mut out = Vec::new();
        if let Ok(toml::Value::Table(t)) = toml::Value::try_from(GpuConfig::default()) {
            collect_keys(&t, "", &mut out);
        }
        out
    }

    /// Applies one `key=value` argument (see [`set`](Self::set)).
    pub fn set_arg(&mut self, arg: &str) -> Result<(), ConfigError> {
        match arg.split_once('=') {
            Some((k, v)) => self.set(k.trim(), v.trim()),
            None => Err(ConfigError::SetSyntax(arg.to_string())),
        }
    }

    /// Sets one dotted key (`pb.window`, `model`, `artifact.ack_at_l2`) from
    /// text, parsed as the type the key already has: integers and numbers
    /// in TOML syntax, `true`/`false`, and names (`epoch`, `far`) without
    /// quotes. Leaves `self` unchanged on error. Does not validate.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let bad = |message: String| ConfigError::BadValue {
            key: key.to_string(),
            value: value.to_string(),
            message,
        };
        let mut root = toml::Value::try_from(&*self)
            .map_err(|e| bad(format!("cannot serialize the configuration: {e}")))?;
        let unknown = || ConfigError::UnknownKey {
            key: key.to_string(),
            suggestion: nearest(key, &GpuConfig::keys()),
        };
        let mut slot = &mut root;
        for seg in key.split('.') {
            slot = match slot {
                toml::Value::Table(t) => t.get_mut(seg).ok_or_else(unknown)?,
                _ => return Err(unknown()),
            };
        }
        let new = match slot {
            toml::Value::Integer(_) => {
                let v = value.replace('_', "");
                v.parse::<i64>()
                    .map(toml::Value::Integer)
                    .map_err(|_| bad("expected an integer".into()))?
            }
            toml::Value::Float(_) => {
                let v = value.replace('_', "");
                v.parse::<f64>()
                    .map(toml::Value::Float)
                    .map_err(|_| bad("expected a number".into()))?
            }
            toml::Value::Boolean(_) => match value {
                "true" => toml::Value::Boolean(true),
                "false" => toml::Value::Boolean(false),
                _ => return Err(bad("expected true or false".into())),
            },
            toml::Value::String(_) => toml::Value::String(unquote(value).to_string()),
            toml::Value::Table(t) => {
                let mut sub = Vec::new();
                collect_keys(t, &format!("{key}."), &mut sub);
                return Err(bad(format!(
                    "`{key}` is a table; set one of its keys: {}",
                    sub.join(", ")
                )));
            }
            other => return Err(bad(format!("cannot set a {}", other.type_str()))),
        };
        *slot = new;
        // Only `key` changed, so any error is about it (an enum name or an
        // integer out of range).
        let cfg: GpuConfig = root
            .try_into()
            .map_err(|e: toml::de::Error| bad(e.message().trim().replace('\n', "; ")))?;
        *self = cfg;
        Ok(())
    }

    /// The persist buffer unit's parameters.
    pub fn pb_params(&self) -> PbParams {
        PbParams {
            entries: self.pb.entries,
            warps: self.core.warps_per_sm,
            lines: self.l1_lines(),
            actr_bits: self.pb.actr_bits,
            window: self.pb.window,
            policy: self.pb.policy.unit(),
        }
    }

    /// The unit's parameters, validated (errors name the TOML key).
    pub fn unit_params(&self) -> Result<UnitParams, ConfigError> {
        let p = self.pb_params();
        p.validate().map_err(|e| self.pb_error(&e))?;
        Ok(UnitParams(p))
    }

    /// Refuses values the model cannot run, naming the first bad key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        fn invalid(key: &str, value: impl fmt::Display, reason: &str) -> ConfigError {
            ConfigError::Invalid {
                key: key.to_string(),
                value: value.to_string(),
                reason: reason.to_string(),
            }
        }
        // Every number's range, one table for files and `--set` alike:
        // (key, value, least, most). The bounds keep the model's integer
        // arithmetic (fixed-point times, line and sector masks, L2 ways)
        // exact; docs/model-params.md lists them.
        const M: u32 = 1_000_000;
        let ints = [
            ("core.sms", self.core.sms, 1, 1024),
            ("core.clock_mhz", self.core.clock_mhz, 1, 100_000),
            // The PB's warp bitmask and the artifact's `WARPS_PER_SM`: 64 wide.
            ("core.warps_per_sm", self.core.warps_per_sm, 1, 64),
            ("core.ctas_per_sm", self.core.ctas_per_sm, 1, 64),
            ("core.regs_per_sm", self.core.regs_per_sm, 1, 1 << 24),
            ("core.smem_per_sm", self.core.smem_per_sm, 0, 1 << 24),
            ("core.schedulers", self.core.schedulers, 1, 64),
            (
                "core.kernel_launch_latency",
                self.core.kernel_launch_latency,
                0,
                100 * M,
            ),
            ("core.fence_latency", self.core.fence_latency, 0, M),
            ("core.shared_latency", self.core.shared_latency, 0, M),
            ("l1.size", self.l1.size, 1, 1 << 24),
            ("l1.line", self.l1.line, 1, 4096),
            ("l1.sector", self.l1.sector, 1, 4096),
            ("l1.assoc", self.l1.assoc, 1, 1 << 24),
            ("l1.latency", self.l1.latency, 0, M),
            ("l1.mshrs", self.l1.mshrs, 1, 1 << 16),
            ("l1.miss_queue", self.l1.miss_queue, 1, 1 << 16),
            ("icnt.latency", self.icnt.latency, 0, M),
            ("icnt.port_bytes", self.icnt.port_bytes, 1, 1 << 16),
            ("l2.slices", self.l2.slices, 1, 1024),
            ("l2.slice_size", self.l2.slice_size, 1, 1 << 30),
            ("l2.assoc", self.l2.assoc, 1, 256),
            ("l2.latency", self.l2.latency, 0, M),
            ("dram.channels", self.dram.channels, 1, 1024),
            ("dram.latency", self.dram.latency, 0, M),
            ("dram.queue", self.dram.queue, 1, 1 << 16),
            ("pm.channels", self.pm.channels, 1, 1024),
            ("pm.latency", self.pm.latency, 0, M),
            ("pm.queue", self.pm.queue, 1, 1 << 16),
            ("pcie.latency", self.pcie.latency, 0, M),
            ("pb.entries", self.pb.entries, 1, 1 << 16),
            ("pb.window", self.pb.window, 1, 1 << 16),
            ("pb.actr_bits", self.pb.actr_bits, 1, 32),
            ("remote_visibility", self.remote_visibility, 0, M),
        ];
        for (key, v, lo, hi) in ints {
            if !(lo..=hi).contains(&v) {
                return Err(invalid(key, v, &format!("allowed {lo}..={hi}")));
            }
        }
        // Bandwidths: finite, and between 1/1024 and 4096 bytes per core
        // cycle at `core.clock_mhz` (a server's cost per byte is a whole
        // number of 2^-20 cycles).
        let (lo, hi) = (1.0 / 1024.0, 4096.0);
        let gbs = |bpc: f64| bpc * self.core.clock_mhz as f64 / 1000.0;
        for (key, v) in [
            ("dram.bandwidth", self.dram.bandwidth),
            ("pm.read_bandwidth", self.pm.read_bandwidth),
            ("pm.write_bandwidth", self.pm.write_bandwidth),
            ("pcie.bandwidth", self.pcie.bandwidth),
        ] {
            let bpc = self.bytes_per_cycle(v);
            if !(v.is_finite() && (lo..=hi).contains(&bpc)) {
                return Err(invalid(
                    key,
                    short(v),
                    &format!(
                        "allowed {:.6}..={:.1} GB/s at core.clock_mhz = {} (1/1024 to 4096 bytes per cycle)",
                        gbs(lo),
                        gbs(hi),
                        self.core.clock_mhz
                    ),
                ));
            }
        }
        let hop = self.pm.fabric_hop;
        if !(hop.is_finite() && (0.0..=1e6).contains(&hop)) {
            return Err(invalid(
                "pm.fabric_hop",
                short(hop),
                "must be a finite number of cycles, 0 to 1000000",
            ));
        }
        let l1 = &self.l1;
        // The line first: size and sectors are counted in lines.
        if !l1.line.is_multiple_of(l1.sector) {
            return Err(invalid(
                "l1.line",
                l1.line,
                &format!("must be a multiple of l1.sector ({})", l1.sector),
            ));
        }
        if !l1.size.is_multiple_of(l1.line) {
            return Err(invalid(
                "l1.size",
                l1.size,
                &format!("must be a multiple of l1.line ({})", l1.line),
            ));
        }
        // A line's sector mask is 8 bits wide.
        if self.sectors() > 8 {
            return Err(invalid(
                "l1.sector",
                l1.sector,
                &format!(
                    "gives {} sectors per {}-B line; at most 8",
                    self.sectors(),
                    l1.line
                ),
            ));
        }
        if !self.l1_lines().is_multiple_of(l1.assoc) {
            return Err(invalid(
                "l1.assoc",
                l1.assoc,
                &format!("must divide the L1's {} lines", self.l1_lines()),
            ));
        }
        // The L2 uses the L1's line size [A: 128 B in both].
        if !self.l2.slice_size.is_multiple_of(l1.line) {
            return Err(invalid(
                "l2.slice_size",
                self.l2.slice_size,
                &format!("must be a multiple of the line ({} B)", l1.line),
            ));
        }
        let l2_lines = self.l2.slice_size / l1.line;
        if !l2_lines.is_multiple_of(self.l2.assoc) {
            return Err(invalid(
                "l2.assoc",
                self.l2.assoc,
                &format!("must divide a slice's {l2_lines} lines"),
            ));
        }
        if self.model.persist().far_only() && self.pm.place == PmPlace::Near {
            return Err(invalid(
                "model",
                format!("{:?}", self.model.name()),
                &format!(
                    "{} is PM-far only (set pm.place = \"far\"; sbrp-benchmarks.md §6.15)",
                    self.model.name().to_uppercase()
                ),
            ));
        }
        if self.pm.durability == Durability::Eadr && self.pm.place == PmPlace::Near {
            return Err(invalid(
                "pm.durability",
                "\"eadr\"",
                "eADR applies to PM-far (set pm.place = \"far\"; paper §7.2)",
            ));
        }
        // The PB exists only under SBRP; other models ignore `pb.*`.
        if self.model.persist().has_unit() {
            self.unit_params()?;
        }
        Ok(())
    }

    /// Names a persist buffer parameter error by its TOML key.
    fn pb_error(&self, e: &ParamError) -> ConfigError {
        let (key, value) = match e.param {
            "entries" => ("pb.entries".to_string(), e.value.clone()),
            "warps" => ("core.warps_per_sm".to_string(), e.value.clone()),
            "lines" => (
                "l1.size".to_string(),
                format!("{} ({} lines of {} B)", self.l1.size, e.value, self.l1.line),
            ),
            "actr-bits" => ("pb.actr_bits".to_string(), e.value.clone()),
            "window" => ("pb.window".to_string(), e.value.clone()),
            "policy" => ("pb.policy".to_string(), e.value.clone()),
            other => (format!("pb.{}", other.replace('-', "_")), e.value.clone()),
        };
        let what = if e.param == "lines" { "L1 lines: " } else { "" };
        ConfigError::Invalid {
            key,
            value,
            reason: format!("the persist buffer unit allows {what}{}", e.allowed),
        }
    }
}

/// The 1-based line of a TOML text that sets dotted `key` (`pm.latency`:
/// `latency = ..` under `[pm]`, or `pm.latency = ..`), if one does.
pub fn key_line(text: &str, key: &str) -> Option<usize> {
    let mut table = String::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if let Some(h) = l.strip_prefix('[') {
            table = norm_key(h.split(']').next().unwrap_or("").trim());
            continue;
        }
        let Some((k, _)) = l.split_once('=') else {
            continue;
        };
        let k = norm_key(k.trim());
        let full = if table.is_empty() {
            k
        } else {
            format!("{table}.{k}")
        };
        if full == key {
            return Some(i + 1);
        }
    }
    None
}

/// A number as a message shows it: `1e308`, not 309 digits.
fn short(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-3..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

fn collect_keys(t: &toml::Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in t {
        match v {
            toml::Value::Table(sub) => collect_keys(sub, &format!("{prefix}{k}."), out),
            _ => out.push(format!("{prefix}{k}")),
        }
    }
}

fn unquote(v: &str) -> &str {
    let v = v.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// The candidate closest to `key`, if close enough to be a likely typo: a
/// key whose last part is `key` (`window` -> `pb.window`), else the one at
/// the smallest edit distance, within a third of the key's length (min 2).
pub(crate) fn nearest(key: &str, candidates: &[String]) -> Option<String> {
    let tail: Vec<&String> = candidates
        .iter()
        .filter(|c| c.rsplit('.').next() == Some(key))
        .collect();
    if tail.len() == 1 {
        return Some(tail[0].clone());
    }
    let best = candidates
        .iter()
        .map(|c| (edit_distance(key, c), c))
        .min_by_key(|(d, _)| *d)?;
    (best.0 <= (key.len() / 3).max(2)).then(|| best.1.clone())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Turns a toml error into file:line with the dotted key where the text at
/// the error's position shows it.
fn file_error(text: &str, file: &str, e: &toml::de::Error) -> ConfigError {
    let msg = e.message().trim().replace('\n', "; ");
    let Some(span) = e.span() else {
        return ConfigError::File {
            file: file.to_string(),
            line: 0,
            key: None,
            message: msg,
        };
    };
    let start = span.start.min(text.len());
    let end = span.end.clamp(start, text.len());
    let line = text[..start].matches('\n').count() + 1;
    // serde's message for an unknown key points at the key itself.
    let is_key = msg.starts_with("unknown field");
    let key = key_at(text, start, &text[start..end], is_key);
    let message = match (&key, is_key) {
        (Some(k), true) => {
            let known = GpuConfig::keys();
            format!("unknown key `{k}`{}", Suggest(&nearest(k, &known)))
        }
        (Some(k), false) => format!("`{k}`: {msg}"),
        (None, _) => msg,
    };
    ConfigError::File {
        file: file.to_string(),
        line,
        key,
        message,
    }
}

/// Rebuilds the dotted key at byte `at` of `text` lexically: the last
/// `[table]` header above plus the key (and any inline tables) on the line.
/// Only as exact as the schema needs (no arrays of tables or multi-line
/// values exist in it).
fn key_at(text: &str, at: usize, span_text: &str, is_key: bool) -> Option<String> {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    // The error is in a `[table]` header: the header is the key.
    let before = text[line_start..at].trim_start();
    if let Some(h) = before.strip_prefix('[') {
        let k = if is_key {
            norm_key(&format!("{h}{span_text}"))
        } else {
            let line = text[line_start..].lines().next().unwrap_or("");
            norm_key(line.trim().trim_start_matches('[').split(']').next()?)
        };
        return (!k.is_empty()).then_some(k);
    }
    let header = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .and_then(|l| l.trim_start_matches('[').split(']').next())
        .map(norm_key)
        .unwrap_or_default();
    let (mut stack, mut cur, mut last) = (Vec::new(), String::new(), None);
    let (mut after_eq, mut quote) = (false, None);
    for c in text[line_start..at].chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            if !after_eq {
                cur.push(c);
            }
            continue;
        }
        match c {
            '"' | '\'' => {
                quote = Some(c);
                if !after_eq {
                    cur.push(c);
                }
            }
            '=' => {
                last = Some(norm_key(&cur));
                cur.clear();
                after_eq = true;
            }
            '{' => {
                if let (true, Some(k)) = (after_eq, last.take()) {
                    stack.push(k);
                }
                after_eq = false;
                cur.clear();
            }
            '}' | ',' => {
                if c == '}' {
                    stack.pop();
                }
                after_eq = false;
                cur.clear();
                last = None;
            }
            _ if !after_eq => cur.push(c),
            _ => {}
        }
    }
    let leaf = if is_key {
        norm_key(&format!("{cur}{span_text}"))
    } else {
        last?
    };
    let mut parts: Vec<String> = Vec::new();
    if !header.is_empty() {
        parts.push(header);
    }
    parts.extend(stack);
    if leaf.is_empty() {
        return None;
    }
    parts.push(leaf);
    Some(parts.join("."))
}

/// `pm . "latency"` -> `pm.latency`.
fn norm_key(k: &str) -> String {
    k.split('.').map(unquote).collect::<Vec<_>>().join(".")
}
