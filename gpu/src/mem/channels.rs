//! The memory channels behind the L2 (`docs/model-memory.md` §5,
//! "Channels"): one GDDR server per channel, and the PM device model used
//! both for the PM-near channels and for the host NVM of PM-far: one data
//! path whose occupancy per byte depends on the direction (read or write
//! bandwidth), the device latency on reads, and a bounded write-pending
//! queue (the ADR domain) in front of it.

use super::server::{cost_per_byte, fine, BoundedQueue, Server};
use crate::config::GpuConfig;

/// A PM device: one shared data path with separate read and write rates, a
/// read latency and a write-pending queue.
///
/// Reads and writes share one timeline (FCFS in booking order), as the
/// artifact's PM model is one DRAM device per channel whose bursts move
/// fewer bytes for PM (the read and write scale factors differ): a write
/// burst delays the reads behind it.
#[derive(Clone, Debug)]
pub struct PmDevice {
    path: Server,
    read_cost: u64,
    write_cost: u64,
    latency: u64,
    /// The write-pending queue: a write occupies a slot from acceptance until
    /// its data is written to the medium (the end of its service).
    pub wpq: BoundedQueue,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

impl PmDevice {
    /// A device of `read_bpc` / `write_bpc` bytes per cycle, `latency`
    /// cycles, `queue` write slots.
    pub fn new(read_bpc: f64, write_bpc: f64, latency: u64, queue: u32) -> PmDevice {
        PmDevice {
            path: Server::new(read_bpc, 0),
            read_cost: cost_per_byte(read_bpc),
            write_cost: cost_per_byte(write_bpc),
            latency: fine(latency),
            wpq: BoundedQueue::new(queue),
            read_bytes: 0,
            write_bytes: 0,
        }
    }

    /// A read of `bytes` arriving at fine time `t` (no request arrives
    /// before `floor` any more): returns when its data leaves the device
    /// (service + device latency).
    #[inline]
    pub fn read(&mut self, floor: u64, t: u64, bytes: u64) -> u64 {
        self.read_bytes += bytes;
        let (_, end) = self.path.book(floor, t, bytes * self.read_cost);
        end + self.latency
    }

    /// A write of `bytes` arriving at fine time `t` (no request arrives
    /// before `floor` any more): returns when it is accepted into the
    /// write-pending queue (the ADR persistence point). Its service on the
    /// data path follows in the background.
    #[inline]
    pub fn write(&mut self, floor: u64, t: u64, bytes: u64) -> u64 {
        self.write_bytes += bytes;
        let accepted = self.wpq.enter(t);
        let (_, end) = self.path.book(floor, accepted, bytes * self.write_cost);
        self.wpq.leave(end);
        accepted
    }

    /// The data path's server (for its wait statistics).
    pub fn path(&self) -> &Server {
        &self.path
    }

    /// One of `pm.channels` address-interleaved channels: its share of the
    /// PM bandwidths, the device latency and a queue of `pm.queue` (the
    /// PM-near channels, and the host channels of PM-far with `pm.reorder`).
    pub fn channel(cfg: &GpuConfig) -> PmDevice {
        let p = &cfg.pm;
        let n = p.channels.max(1) as f64;
        PmDevice::new(
            cfg.bytes_per_cycle(p.read_bandwidth) / n,
            cfg.bytes_per_cycle(p.write_bandwidth) / n,
            p.latency as u64,
            p.queue,
        )
    }
}

/// The GPU's own memory channels: GDDR always, PM-near channels when PM is
/// near (else empty).
pub struct Channels {
    pub gddr: Vec<Server>,
    pub pm: Vec<PmDevice>,
}

impl Channels {
    pub fn new(cfg: &GpuConfig, near: bool) -> Channels {
        let d = &cfg.dram;
        let gddr_bpc = cfg.bytes_per_cycle(d.bandwidth) / d.channels as f64;
        let gddr = (0..d.channels)
            .map(|_| Server::new(gddr_bpc, d.latency as u64))
            .collect();
        let pm = if near {
            (0..cfg.pm.channels)
                .map(|_| PmDevice::channel(cfg))
                .collect()
        } else {
            Vec::new()
        };
        Channels { gddr, pm }
    }
}
