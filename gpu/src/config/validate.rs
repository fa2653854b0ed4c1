//! Validation of the GPU configuration (`docs/model-params.md`,
//! "Validation"): every number's range, one table for files and `--set`,
//! the combinations the model cannot run, and the persist buffer unit's
//! limits, parsed once into [`UnitParams`] (split from `config/mod.rs`).

use std::fmt;

use sbrp_iface::{ParamError, PbParams};

use super::{ConfigError, Durability, GpuConfig, PmPlace, UnitParams};

impl GpuConfig {
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
            // Epoch ids are 8 bits wide in the idealised unit.
            ("ideal.epochs", self.ideal.epochs, 0, 255),
            ("ideal.ord_queue", self.ideal.ord_queue, 0, 64),
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
        // A realism switch without the idealised unit would change nothing.
        let ideal = &self.ideal;
        if !ideal.unit && *ideal != super::IdealConfig::default() {
            let (key, v) = [
                ("ideal.registered", ideal.registered.to_string()),
                ("ideal.replay", ideal.replay.to_string()),
                ("ideal.epochs", ideal.epochs.to_string()),
                ("ideal.ord_queue", ideal.ord_queue.to_string()),
                ("ideal.strict_head", ideal.strict_head.to_string()),
            ]
            .into_iter()
            .find(|(_, v)| v != "false" && v != "0")
            .expect("a key differs from its default");
            return Err(invalid(
                key,
                v,
                "applies to the idealised unit only (set ideal.unit = true)",
            ));
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

/// A number as a message shows it: `1e308`, not 309 digits.
fn short(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-3..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}
