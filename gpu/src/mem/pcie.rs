//! PM-far (`docs/model-memory.md` §6, "PCIe and the host NVM"): the PCIe
//! link between the GPU and the host, full duplex (one server per
//! direction, each with the full bandwidth and the one-way latency), and the
//! host NVM behind it. By default the NVM is one PM device with the total PM
//! bandwidths, the device latency and a write-pending queue of
//! `pm.queue * pm.channels`: writes of one SM reach it, and become durable,
//! in the order they crossed the link. With `pm.reorder` (§6.1) it is
//! `pm.channels` devices, address-interleaved as the PM-near channels, each
//! with its share of the bandwidths and its own queue of `pm.queue`, so a
//! write to an idle channel can become durable before an earlier write
//! waiting for a slot at a busy one. With `artifact.pcie_per_channel` the
//! link is split into one link per memory channel of `bandwidth / channels`
//! each way.

use super::channels::PmDevice;
use super::server::Server;
use crate::config::GpuConfig;

/// Where a PM-far write got to.
#[derive(Clone, Copy, Debug)]
pub struct FarWrite {
    /// Fine time its data has crossed PCIe (the host LLC: eADR's point).
    pub crossed: u64,
    /// Fine time the host NVM's write-pending queue accepted it (ADR's point).
    pub accepted: u64,
    /// Whether it had to wait for a write-pending queue slot.
    pub stalled: bool,
}

pub struct Far {
    /// GPU to host, per link.
    pub up: Vec<Server>,
    /// Host to GPU, per link.
    pub down: Vec<Server>,
    /// The host NVM: one aggregate device, or one per channel (`pm.reorder`).
    pub nvm: Vec<PmDevice>,
    per_channel: bool,
}

impl Far {
    pub fn new(cfg: &GpuConfig) -> Far {
        let links = if cfg.artifact.pcie_per_channel {
            cfg.pm.channels.max(1)
        } else {
            1
        };
        let bpc = cfg.bytes_per_cycle(cfg.pcie.bandwidth) / links as f64;
        let lat = cfg.pcie.latency as u64;
        let p = &cfg.pm;
        let nvm = if p.reorder {
            (0..p.channels.max(1))
                .map(|_| PmDevice::channel(cfg))
                .collect()
        } else {
            vec![PmDevice::new(
                cfg.bytes_per_cycle(p.read_bandwidth),
                cfg.bytes_per_cycle(p.write_bandwidth),
                p.latency as u64,
                p.queue.saturating_mul(p.channels).max(1),
            )]
        };
        Far {
            up: (0..links).map(|_| Server::new(bpc, lat)).collect(),
            down: (0..links).map(|_| Server::new(bpc, lat)).collect(),
            nvm,
            per_channel: cfg.artifact.pcie_per_channel,
        }
    }

    #[inline]
    fn link(&self, chan: u32) -> usize {
        if self.per_channel {
            chan as usize % self.up.len()
        } else {
            0
        }
    }

    /// The NVM device of memory channel `chan` (0 when there is one).
    #[inline]
    fn dev(&self, chan: u32) -> usize {
        if self.nvm.len() == 1 {
            0
        } else {
            chan as usize
        }
    }

    /// A read of `bytes` for memory channel `chan` leaving the GPU at fine
    /// time `t` (nothing arrives before `floor` any more): returns when its
    /// data is back at the GPU side of the link. The request itself is a
    /// control packet (no bandwidth).
    #[inline]
    pub fn read(&mut self, floor: u64, chan: u32, t: u64, bytes: u64) -> u64 {
        let l = self.link(chan);
        let d = self.dev(chan);
        let (_, at_host) = self.up[l].serve(t, 0);
        let data = self.nvm[d].read(floor, at_host, bytes);
        self.down[l].serve_after(floor, data, bytes).1
    }

    /// A write of `bytes` leaving the GPU at fine time `t`.
    #[inline]
    pub fn write(&mut self, floor: u64, chan: u32, t: u64, bytes: u64) -> FarWrite {
        let l = self.link(chan);
        let d = self.dev(chan);
        let (_, crossed) = self.up[l].serve_after(floor, t, bytes);
        let nvm = &mut self.nvm[d];
        let stalls = nvm.wpq.stalls;
        let accepted = nvm.write(floor, crossed, bytes);
        FarWrite {
            crossed,
            accepted,
            stalled: nvm.wpq.stalls != stalls,
        }
    }

    /// An acknowledgement sent from the host at fine time `t` for channel
    /// `chan`: returns when it is back at the GPU (a control packet).
    #[inline]
    pub fn ack(&mut self, chan: u32, t: u64) -> u64 {
        let l = self.link(chan);
        self.down[l].serve(t, 0).1
    }
}
