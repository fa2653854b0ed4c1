//! The memory system below the L1s (`docs/model.md`, "Memory system"): the
//! interconnect, the L2 slices, the GDDR and PM channels, PCIe for PM-far and
//! the persistence point.
//!
//! Every resource is a server with a bandwidth and a latency: a request's
//! times through it are computed when it is sent, from the server's
//! backlog, so a request costs O(resources on its path) and nothing is
//! ticked. Requests must be sent in non-decreasing time; the L2's tags are
//! updated in send order.

use crate::config::GpuConfig;

/// What a request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read the sectors (an L1 miss).
    Read,
    /// Write the sectors back (a flush or an eviction of dirty data).
    Write,
    /// Atomic read-modify-write at the L2 (returns data).
    Atomic,
}

/// One request from an SM's L1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemReq {
    pub sm: u32,
    /// Line number (byte address / line bytes).
    pub line: u64,
    /// Sectors touched (bit `i`: sector `i` of the line).
    pub sectors: u8,
    pub access: Access,
    /// Persistent memory (else GDDR).
    pub pm: bool,
}

/// When a request completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// Cycle its response reaches the SM: the data of a read or atomic; the
    /// acknowledgement of a write (for a PM write: after it is durable).
    pub at: u64,
    /// For a PM write, the cycle it became durable (at the persistence
    /// point); otherwise equal to `at`.
    pub durable: u64,
}

/// Counts of the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemStats {
    pub l2_hits: u64,
    pub l2_misses: u64,
    pub gddr_read_bytes: u64,
    pub gddr_write_bytes: u64,
    pub pm_read_bytes: u64,
    pub pm_write_bytes: u64,
    /// Bytes over PCIe towards the host (PM-far writes and read requests' data are counted by direction).
    pub pcie_to_host_bytes: u64,
    pub pcie_to_gpu_bytes: u64,
}

/// The memory system.
pub struct MemSystem {
    cfg: GpuConfig,
    stats: MemStats,
}

impl MemSystem {
    pub fn new(cfg: &GpuConfig) -> MemSystem {
        MemSystem {
            cfg: cfg.clone(),
            stats: MemStats::default(),
        }
    }

    /// Sends `req` at cycle `now` and returns when it completes.
    pub fn send(&mut self, now: u64, req: &MemReq) -> Done {
        let bytes = req.sectors.count_ones() as u64 * self.cfg.l1.sector as u64;
        let c = &self.cfg;
        let base = now + 2 * c.icnt.latency as u64 + c.l2.latency as u64;
        let dev = if req.pm {
            c.pm.latency as u64
        } else {
            c.dram.latency as u64
        };
        match (req.access, req.pm) {
            (Access::Write, true) => {
                self.stats.pm_write_bytes += bytes;
                let durable = now + c.icnt.latency as u64 + c.l2.latency as u64;
                Done {
                    at: durable + c.icnt.latency as u64,
                    durable,
                }
            }
            (Access::Write, false) => {
                self.stats.gddr_write_bytes += bytes;
                Done {
                    at: base,
                    durable: base,
                }
            }
            _ => {
                if req.pm {
                    self.stats.pm_read_bytes += bytes;
                } else {
                    self.stats.gddr_read_bytes += bytes;
                }
                Done {
                    at: base + dev,
                    durable: base + dev,
                }
            }
        }
    }

    /// Kernel end: the L2 is flushed and invalidated when configured.
    pub fn kernel_end(&mut self, _now: u64) {}

    pub fn stats(&self) -> &MemStats {
        &self.stats
    }
}
