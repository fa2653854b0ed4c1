//! PM-far (`docs/model-memory.md` §6, "PCIe and the host NVM"): the PCIe
//! link between the GPU and the host, full duplex (one server per
//! direction, each with the full bandwidth and the one-way latency), and the
//! host NVM behind it. By default the NVM is one PM device with the total PM
//! bandwidths, the device latency and a write-pending queue of
//! `pm.queue * pm.channels`: writes of one SM reach it, and become durable,
//! in the order they crossed the link. With `pm.reorder` (§6.1) it is
//! `pm.channels` devices, address-interleaved as the PM-near channels, each
//! with its share of the bandwidths and its own queue of `pm.queue`, behind
//! the host's on-chip fabric: a ring of `pm.channels` stops (the PCIe root at
//! channel 0's), `pm.fabric_hop` cycles per hop, and each channel
//! controller's ingress, which takes write data at the channel's share of
//! the read bandwidth. A write to a near or idle channel can so become
//! durable before an earlier write to a far or loaded one, with no queue
//! full. With `artifact.pcie_per_channel` the link is split into one link
//! per memory channel of `bandwidth / channels` each way.

use super::channels::PmDevice;
use super::server::{Server, CYCLE};
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
    /// The host fabric in front of the channels (`pm.reorder`).
    pub fabric: Option<Fabric>,
    per_channel: bool,
}

/// The host's on-chip fabric between the PCIe root and the memory channels
/// (`pm.reorder`, `docs/model-memory.md` §6.1).
pub struct Fabric {
    /// Fine time from the root's stop to each channel's stop.
    pub hop: Vec<u64>,
    /// Each channel controller's ingress: write data at the channel's data
    /// rate (its share of the read bandwidth), FCFS.
    pub ingress: Vec<Server>,
}

impl Fabric {
    fn new(cfg: &GpuConfig) -> Fabric {
        let n = cfg.pm.channels.max(1);
        let per_hop = cfg.pm.fabric_hop * CYCLE as f64;
        let rate = cfg.bytes_per_cycle(cfg.pm.read_bandwidth) / n as f64;
        Fabric {
            hop: (0..n)
                .map(|c| (Self::hops(c, n) as f64 * per_hop).round() as u64)
                .collect(),
            ingress: (0..n).map(|_| Server::new(rate, 0)).collect(),
        }
    }

    /// Hops from stop 0 (the PCIe root, with channel 0) to channel `c`'s
    /// stop on a bidirectional ring of `n` stops, the shorter way.
    pub fn hops(c: u32, n: u32) -> u32 {
        c.min(n - c)
    }
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
            fabric: p.reorder.then(|| Fabric::new(cfg)),
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

    /// Fine time across the host fabric between the PCIe root and channel
    /// `chan` (0 without `pm.reorder`).
    #[inline]
    pub fn hop(&self, chan: u32) -> u64 {
        match &self.fabric {
            None => 0,
            Some(f) => f.hop[chan as usize],
        }
    }

    /// A read of `bytes` for memory channel `chan` leaving the GPU at fine
    /// time `t` (nothing arrives before `floor` any more): returns when its
    /// data is back at the GPU side of the link. The request itself is a
    /// control packet (no bandwidth); with the fabric, request and data each
    /// cross it (no serialisation on the way back: the fabric's links are
    /// far wider than PCIe).
    #[inline]
    pub fn read(&mut self, floor: u64, chan: u32, t: u64, bytes: u64) -> u64 {
        let l = self.link(chan);
        let d = self.dev(chan);
        let hop = self.hop(chan);
        let (_, at_host) = self.up[l].serve(t, 0);
        let data = self.nvm[d].read(floor, at_host + hop, bytes) + hop;
        self.down[l].serve_after(floor, data, bytes).1
    }

    /// A write of `bytes` leaving the GPU at fine time `t`.
    #[inline]
    pub fn write(&mut self, floor: u64, chan: u32, t: u64, bytes: u64) -> FarWrite {
        let l = self.link(chan);
        let d = self.dev(chan);
        let (_, crossed) = self.up[l].serve_after(floor, t, bytes);
        // With the fabric: the hops to the channel's stop, then the
        // controller's ingress (the whole write before it enters the queue).
        let at_queue = match &mut self.fabric {
            None => crossed,
            Some(f) => {
                let arrive = crossed + f.hop[d];
                f.ingress[d].serve_after(floor, arrive, bytes).1
            }
        };
        let nvm = &mut self.nvm[d];
        let stalls = nvm.wpq.stalls;
        let accepted = nvm.write(floor, at_queue, bytes);
        FarWrite {
            crossed,
            accepted,
            stalled: nvm.wpq.stalls != stalls,
        }
    }

    /// An acknowledgement sent from the PCIe root at fine time `t` for
    /// channel `chan`: returns when it is back at the GPU (a control packet).
    /// One from a channel's queue (ADR) first crosses the fabric
    /// ([`Self::hop`]).
    #[inline]
    pub fn ack(&mut self, chan: u32, t: u64) -> u64 {
        let l = self.link(chan);
        self.down[l].serve(t, 0).1
    }
}
