//! Front-end configuration (`docs/trace-format.md`, "Front end" and
//! "Persistence domains"): typed, validated values, and the one function
//! that applies a trace's `config` lines, naming file:line on a bad value.

use sbrp_trace::{ConfigItem, Trace};

/// Which persistence domain sits behind each SM (`domain.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DomainKind {
    /// Ack after `pm_latency`, in take order, always ready.
    #[default]
    Fixed,
    /// Random latency, out-of-order bursts, back-pressure, seeded by `domain_seed`.
    Hostile,
}

impl DomainKind {
    pub fn name(self) -> &'static str {
        match self {
            DomainKind::Fixed => "fixed",
            DomainKind::Hostile => "hostile",
        }
    }
}

/// A deliberate breach of the interface contract by the front end: the
/// negative control of the contract monitor (`sbrp_iface::contract`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DriverFault {
    /// The front end keeps the contract.
    #[default]
    None,
    /// In a cycle without a request of its own, the front end presents the
    /// youngest request in flight again, before its response (requirement 6).
    EarlyRetry,
}

/// Front-end parameters (not part of the unit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontEndConfig {
    /// Cycles from a flush to its acknowledgement. Test default; the paper's
    /// NVM latency (300 ns at 1365 MHz) would be about 410.
    pub pm_latency: u32,
    /// L1 associativity (the L1 has the unit's `lines` lines).
    pub l1_ways: u32,
    /// Bytes per L1 line (128 in the paper's GPU).
    pub line_bytes: u64,
    /// Cycles until a block-scope release's flag is seen by other SMs.
    pub remote_visibility: u32,
    /// Cycles without any progress after which the run is declared deadlocked.
    pub deadlock_cycles: u64,
    /// The persistence domain of every SM.
    pub domain: DomainKind,
    /// Seed of the hostile domain (SM `s` uses `domain_seed + s`).
    pub domain_seed: u64,
    /// A deliberate contract breach (tests only).
    pub driver_fault: DriverFault,
}

impl Default for FrontEndConfig {
    fn default() -> Self {
        FrontEndConfig {
            pm_latency: 40,
            l1_ways: 4,
            line_bytes: 128,
            remote_visibility: 20,
            deadlock_cycles: 100_000,
            domain: DomainKind::Fixed,
            domain_seed: 1,
            driver_fault: DriverFault::None,
        }
    }
}

/// A configuration value that is not allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigProblem {
    #[error("config {key}: expected a number, found `{value}`")]
    NotANumber { key: String, value: String },
    #[error("config {key}={value}: allowed {allowed}")]
    OutOfRange {
        key: &'static str,
        value: u64,
        allowed: &'static str,
    },
    #[error("config domain={0}: expected fixed or hostile")]
    BadDomain(String),
    #[error("unknown config key `{0}`: expected pm_latency, l1_ways, remote_visibility, domain or domain_seed")]
    UnknownKey(String),
}

/// A bad `config` line of a trace.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {problem}")]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub problem: ConfigProblem,
}

impl FrontEndConfig {
    /// Sets the persistence latency (1..100000 cycles).
    pub fn set_pm_latency(&mut self, v: u64) -> Result<(), ConfigProblem> {
        self.set_number("pm_latency", v)
    }

    fn set_number(&mut self, key: &str, v: u64) -> Result<(), ConfigProblem> {
        let bad = |key, allowed| ConfigProblem::OutOfRange {
            key,
            value: v,
            allowed,
        };
        match key {
            "pm_latency" if (1..=100_000).contains(&v) => self.pm_latency = v as u32,
            "pm_latency" => return Err(bad("pm_latency", "1..100000")),
            "l1_ways" if [1, 2, 4, 8, 16].contains(&v) => self.l1_ways = v as u32,
            "l1_ways" => return Err(bad("l1_ways", "1, 2, 4, 8, 16")),
            "remote_visibility" if v <= 100_000 => self.remote_visibility = v as u32,
            "remote_visibility" => return Err(bad("remote_visibility", "0..100000")),
            "domain_seed" => self.domain_seed = v,
            _ => return Err(ConfigProblem::UnknownKey(key.to_string())),
        }
        Ok(())
    }

    /// Applies the trace's `config KEY=VALUE` lines, in order.
    pub fn apply_trace(&mut self, t: &Trace) -> Result<(), ConfigError> {
        let items: Vec<(String, String, usize)> = t
            .config
            .iter()
            .map(|c| (c.key.clone(), c.value.clone(), c.line))
            .collect();
        self.apply_items(&t.file, &items)
    }

    /// Applies `config` items (key, value, line) of `file`, in order (a
    /// program file's `config` lines: the same keys and ranges).
    pub fn apply_items(
        &mut self,
        file: &str,
        items: &[(String, String, usize)],
    ) -> Result<(), ConfigError> {
        for (key, value, line) in items {
            let err = |problem| ConfigError {
                file: file.to_string(),
                line: *line,
                problem,
            };
            if key == "domain" {
                self.domain = match value.as_str() {
                    "fixed" => DomainKind::Fixed,
                    "hostile" => DomainKind::Hostile,
                    v => return Err(err(ConfigProblem::BadDomain(v.to_string()))),
                };
                continue;
            }
            let v = sbrp_trace::parse_num(value).ok_or_else(|| {
                err(ConfigProblem::NotANumber {
                    key: key.clone(),
                    value: value.clone(),
                })
            })?;
            self.set_number(key, v).map_err(err)?;
        }
        Ok(())
    }

    /// The trace's last `config pm_latency=` item, if any.
    pub fn trace_pm_latency(t: &Trace) -> Option<&ConfigItem> {
        t.config.iter().rev().find(|c| c.key == "pm_latency")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_config_lines_name_file_and_line() {
        let t = sbrp_trace::parse("0.0 ofence\nconfig l1_ways=3\n", "c.trace").unwrap();
        let e = FrontEndConfig::default().apply_trace(&t).unwrap_err();
        assert_eq!(
            e.to_string(),
            "c.trace:2: config l1_ways=3: allowed 1, 2, 4, 8, 16"
        );
        let t = sbrp_trace::parse("config pm_latency=x\n", "c.trace").unwrap();
        let e = FrontEndConfig::default().apply_trace(&t).unwrap_err();
        assert!(e
            .to_string()
            .contains("c.trace:1: config pm_latency: expected a number"));
        let t = sbrp_trace::parse("config colour=2\n", "c.trace").unwrap();
        assert!(FrontEndConfig::default().apply_trace(&t).is_err());
        let t = sbrp_trace::parse("config pm_latency=100000 remote_visibility=0\n", "c").unwrap();
        let mut c = FrontEndConfig::default();
        c.apply_trace(&t).unwrap();
        assert_eq!((c.pm_latency, c.remote_visibility), (100_000, 0));
        let t = sbrp_trace::parse("config domain=hostile domain_seed=0x10\n", "c").unwrap();
        c.apply_trace(&t).unwrap();
        assert_eq!((c.domain, c.domain_seed), (DomainKind::Hostile, 16));
        let t = sbrp_trace::parse("\nconfig domain=random\n", "d.trace").unwrap();
        let e = FrontEndConfig::default().apply_trace(&t).unwrap_err();
        assert_eq!(
            e.to_string(),
            "d.trace:2: config domain=random: expected fixed or hostile"
        );
    }
}
