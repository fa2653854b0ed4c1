//! The memory system below the L1s (`docs/model-memory.md`, following
//! `docs/model.md`, "Memory system"): the interconnect, the L2 slices, the
//! GDDR and PM channels, PCIe for PM-far and the persistence point.
//!
//! Every resource is a server with a bandwidth and a latency
//! ([`server::Server`], or [`server::Calendar`] for the SM ports' response
//! direction): a request's times through it are computed when it
//! is sent, from the server's backlog, so a request costs O(resources on its
//! path) and nothing is ticked. Requests must be sent in non-decreasing time
//! ([`MemSystem::try_send`] refuses others); the L2's tags are updated in
//! send order. The path of each access is in `docs/model-memory.md` §3.

mod channels;
mod l2;
mod pcie;
pub mod server;

use crate::config::{Durability, GpuConfig, PmPlace};
use channels::Channels;
use l2::L2;
use pcie::Far;
use server::{cycles_ceil, fine, Calendar, Server};

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
    /// Requests whose sectors were all valid in the L2.
    pub l2_hits: u64,
    /// Requests that had to fetch (or, for writes, allocate) sectors.
    pub l2_misses: u64,
    pub gddr_read_bytes: u64,
    /// GDDR write bytes: dirty L2 victims and kernel-end write-backs.
    pub gddr_write_bytes: u64,
    /// PM read bytes, including write-allocate reads.
    pub pm_read_bytes: u64,
    pub pm_write_bytes: u64,
    /// Bytes over PCIe towards the host (PM-far write data; read requests
    /// are control packets and count 0).
    pub pcie_to_host_bytes: u64,
    /// Bytes over PCIe towards the GPU (PM-far read data).
    pub pcie_to_gpu_bytes: u64,
    /// Dirty volatile lines evicted from the L2 (each a GDDR write).
    pub l2_writebacks: u64,
    /// Bytes written back by kernel-end L2 flushes (part of `gddr_write_bytes`).
    pub l2_flush_bytes: u64,
    /// PM write bytes fetched by `artifact.l2_write_allocate_read` (part of
    /// `pm_read_bytes`).
    pub pm_write_allocate_read_bytes: u64,
    /// PM writes that found their write-pending queue full.
    pub wpq_stalls: u64,
}

/// Queueing delays, whole cycles: the largest wait for service at each kind
/// of server, and the mean.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct MemWaits {
    /// SM ports, towards the L2.
    pub icnt_max: u64,
    pub icnt_mean: f64,
    /// SM ports, towards the SMs (delay beyond the bare serialisation).
    pub icnt_down_max: u64,
    pub icnt_down_mean: f64,
    /// Responses that arrived beyond the response calendar's horizon.
    pub icnt_down_beyond: u64,
    pub gddr_max: u64,
    pub gddr_mean: f64,
    pub pm_max: u64,
    pub pm_mean: f64,
    pub pcie_max: u64,
    /// Largest wait for a write-pending queue slot.
    pub wpq_max: u64,
}

/// A request sent earlier in time than the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("memory request at cycle {now} sent after one at cycle {last}")]
pub struct OutOfOrder {
    pub now: u64,
    pub last: u64,
}

/// The memory system.
pub struct MemSystem {
    cfg: GpuConfig,
    stats: MemStats,
    /// SM ports into the interconnect, towards the L2.
    up: Vec<Server>,
    /// SM ports out of the interconnect, towards the SMs.
    down: Vec<Calendar>,
    l2: L2,
    chans: Channels,
    far: Option<Far>,
    last_now: u64,
    /// Fine time of the request being sent: no server sees an earlier
    /// arrival any more.
    floor: u64,
    sector: u64,
    l2_latency: u64,
    /// GDDR channel of each slice (slices are split evenly over channels).
    gddr_chan: Vec<u32>,
    /// PM channel of each slice: near, the channel; far, the host NVM
    /// channel (`pm.reorder`) and the PCIe link (`pcie_per_channel`).
    pm_chan: Vec<u32>,
}

impl MemSystem {
    pub fn new(cfg: &GpuConfig) -> MemSystem {
        let sms = cfg.core.sms.max(1);
        let port = |_| Server::new(cfg.icnt.port_bytes as f64, cfg.icnt.latency as u64);
        let near = cfg.pm.place == PmPlace::Near;
        MemSystem {
            cfg: cfg.clone(),
            stats: MemStats::default(),
            up: (0..sms).map(port).collect(),
            down: (0..sms)
                .map(|_| Calendar::new(cfg.icnt.port_bytes as f64, cfg.icnt.latency as u64))
                .collect(),
            l2: L2::new(cfg),
            chans: Channels::new(cfg, near),
            far: (!near).then(|| Far::new(cfg)),
            last_now: 0,
            floor: 0,
            sector: cfg.l1.sector as u64,
            l2_latency: fine(cfg.l2.latency as u64),
            gddr_chan: (0..cfg.l2.slices)
                .map(|s| s * cfg.dram.channels / cfg.l2.slices)
                .collect(),
            pm_chan: (0..cfg.l2.slices)
                .map(|s| s * cfg.pm.channels / cfg.l2.slices)
                .collect(),
        }
    }

    /// Sends `req` at cycle `now` and returns when it completes.
    ///
    /// # Panics
    /// If `now` is earlier than the previous request's (see [`Self::try_send`]).
    #[inline]
    pub fn send(&mut self, now: u64, req: &MemReq) -> Done {
        match self.try_send(now, req) {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        }
    }

    /// Sends `req` at cycle `now`, or refuses it (changing nothing) if `now`
    /// is earlier than the last request's or kernel end's.
    #[inline]
    pub fn try_send(&mut self, now: u64, req: &MemReq) -> Result<Done, OutOfOrder> {
        if now < self.last_now {
            return Err(OutOfOrder {
                now,
                last: self.last_now,
            });
        }
        self.last_now = now;
        Ok(self.route(now, req))
    }

    #[inline]
    fn route(&mut self, now: u64, req: &MemReq) -> Done {
        let bytes = req.sectors.count_ones() as u64 * self.sector;
        let sm = req.sm as usize;
        let carries_data = req.access != Access::Read;
        // No request reaches any server before `t0` any more.
        let t0 = fine(now);
        self.floor = t0;
        let at_l2 = self.up[sm]
            .serve_after(t0, t0, if carries_data { bytes } else { 0 })
            .1;
        // The ROP latency is paid by every access before its tag outcome is
        // known; a miss leaves for memory after it.
        let t_l2 = at_l2 + self.l2_latency;
        let l = self.l2.access(req.line, req.sectors);
        if l.hit {
            self.stats.l2_hits += 1;
        } else {
            self.stats.l2_misses += 1;
        }
        let chan = self.gddr_chan[l.slice as usize];
        if l.victim_dirty != 0 {
            let b = l.victim_dirty.count_ones() as u64 * self.sector;
            self.chans.gddr[chan as usize].serve_after(t0, t_l2, b);
            self.stats.gddr_write_bytes += b;
            self.stats.l2_writebacks += 1;
        }
        let pm_chan = self.pm_chan[l.slice as usize];
        match req.access {
            Access::Read | Access::Atomic => {
                let mut data = t_l2.max(l.ready);
                if !l.hit {
                    let mb = l.missing.count_ones() as u64 * self.sector;
                    let fetched = if req.pm {
                        self.pm_read(pm_chan, t_l2, mb)
                    } else {
                        self.stats.gddr_read_bytes += mb;
                        self.chans.gddr[chan as usize].serve_after(t0, t_l2, mb).1
                    };
                    self.l2.fill(&l, l.missing, fetched);
                    data = data.max(fetched);
                }
                let mut durable = None;
                if req.access == Access::Atomic {
                    // Executed at the slice once the data is there.
                    if req.pm {
                        durable = Some(self.persist(pm_chan, data, bytes).0);
                    } else {
                        self.l2.dirty(&l, req.sectors);
                    }
                }
                let at = cycles_ceil(self.down[sm].serve_after(t0, data, bytes).1);
                Done {
                    at,
                    durable: durable.map_or(at, cycles_ceil),
                }
            }
            Access::Write if !req.pm => {
                // Write-back, write-allocate without fetch.
                self.l2.fill(&l, req.sectors, t_l2);
                self.l2.dirty(&l, req.sectors);
                let at = cycles_ceil(self.down[sm].serve_after(t0, t_l2, 0).1);
                Done { at, durable: at }
            }
            Access::Write => {
                if !l.hit && self.cfg.artifact.l2_write_allocate_read {
                    let mb = l.missing.count_ones() as u64 * self.sector;
                    self.stats.pm_write_allocate_read_bytes += mb;
                    self.pm_read(pm_chan, t_l2, mb);
                }
                // Write through, and keep the data for later reads.
                self.l2.fill(&l, req.sectors, t_l2);
                let (durable, back) = self.persist(pm_chan, t_l2, bytes);
                let at = self.down[sm].serve_after(t0, back, 0).1;
                Done {
                    at: cycles_ceil(at),
                    durable: cycles_ceil(durable),
                }
            }
        }
    }

    /// A PM read of `bytes` leaving slice-side channel `chan` at fine `t`:
    /// returns when its data is back at the slice.
    #[inline]
    fn pm_read(&mut self, chan: u32, t: u64, bytes: u64) -> u64 {
        self.stats.pm_read_bytes += bytes;
        match &mut self.far {
            None => self.chans.pm[chan as usize].read(self.floor, t, bytes),
            Some(far) => {
                self.stats.pcie_to_gpu_bytes += bytes;
                far.read(self.floor, chan, t, bytes)
            }
        }
    }

    /// A PM write of `bytes` leaving the L2 for channel `chan` at fine `t`:
    /// returns `(durable, ack back at the slice)`.
    #[inline]
    fn persist(&mut self, chan: u32, t: u64, bytes: u64) -> (u64, u64) {
        self.stats.pm_write_bytes += bytes;
        let at_l2 = self.cfg.artifact.ack_at_l2;
        let (durable, back) = match &mut self.far {
            None => {
                let dev = &mut self.chans.pm[chan as usize];
                let stalls = dev.wpq.stalls;
                let accepted = dev.write(self.floor, t, bytes);
                self.stats.wpq_stalls += dev.wpq.stalls - stalls;
                // ADR (and eADR, which means nothing more near): durable on
                // acceptance into the controller's write-pending queue. Each
                // channel's queue is its own, so writes to different channels
                // can become durable out of issue order (`pm.reorder` is moot).
                (accepted, accepted)
            }
            Some(far) => {
                self.stats.pcie_to_host_bytes += bytes;
                let w = far.write(self.floor, chan, t, bytes);
                self.stats.wpq_stalls += w.stalled as u64;
                // eADR's point is the link's far end, reached in link order
                // (one link); ADR's is the NVM queue, per channel under
                // `pm.reorder`.
                let durable = match self.cfg.pm.durability {
                    Durability::Adr => w.accepted,
                    Durability::Eadr => w.crossed,
                };
                // ADR's answer leaves the channel and crosses the fabric
                // back to the PCIe root (nothing without `pm.reorder`).
                let from = match self.cfg.pm.durability {
                    Durability::Adr => durable + far.hop(chan),
                    Durability::Eadr => durable,
                };
                let back = if at_l2 { t } else { far.ack(chan, from) };
                (durable, back)
            }
        };
        if at_l2 {
            // The artifact: acknowledged as durable when it leaves the L2.
            (t, t)
        } else {
            (durable, back)
        }
    }

    /// Kernel end at cycle `now`: with `l2.flush_at_kernel_end`, dirty
    /// volatile lines are written back through the GDDR servers at `now`
    /// (bytes and bandwidth counted, no time returned: the next kernel starts
    /// after the launch latency) and the L2 is invalidated.
    ///
    /// # Panics
    /// If `now` is earlier than the last request's.
    pub fn kernel_end(&mut self, now: u64) {
        assert!(
            now >= self.last_now,
            "kernel end at cycle {now} after a request at cycle {}",
            self.last_now
        );
        self.last_now = now;
        if !self.cfg.l2.flush_at_kernel_end {
            return;
        }
        let t = fine(now);
        let sector = self.sector;
        let gddr = &mut self.chans.gddr;
        let chan = &self.gddr_chan;
        let stats = &mut self.stats;
        self.l2.flush(|slice, dirty| {
            let b = dirty.count_ones() as u64 * sector;
            gddr[chan[slice as usize] as usize].serve_after(t, t, b);
            stats.gddr_write_bytes += b;
            stats.l2_flush_bytes += b;
        });
    }

    pub fn stats(&self) -> &MemStats {
        &self.stats
    }

    /// Queueing delays so far (computed on demand).
    pub fn waits(&self) -> MemWaits {
        let max = |s: &[&Server]| cycles_ceil(s.iter().map(|s| s.wait_max).max().unwrap_or(0));
        let mean = |s: &[&Server]| {
            let n: u64 = s.iter().map(|s| s.served).sum();
            let w: u64 = s.iter().map(|s| s.wait_total).sum();
            if n == 0 {
                0.0
            } else {
                w as f64 / n as f64 / server::CYCLE as f64
            }
        };
        let icnt: Vec<&Server> = self.up.iter().collect();
        let gddr: Vec<&Server> = self.chans.gddr.iter().collect();
        let (pm, pcie, wpq): (Vec<&Server>, Vec<&Server>, u64) = match &self.far {
            None => (
                self.chans.pm.iter().map(|d| d.path()).collect(),
                Vec::new(),
                self.chans
                    .pm
                    .iter()
                    .map(|d| d.wpq.wait_max)
                    .max()
                    .unwrap_or(0),
            ),
            Some(f) => (
                f.nvm.iter().map(|d| d.path()).collect(),
                f.up.iter().chain(&f.down).collect(),
                f.nvm.iter().map(|d| d.wpq.wait_max).max().unwrap_or(0),
            ),
        };
        let down_max = self.down.iter().map(|c| c.wait_max).max().unwrap_or(0);
        let down_n: u64 = self.down.iter().map(|c| c.served).sum();
        let down_w: u64 = self.down.iter().map(|c| c.wait_total).sum();
        MemWaits {
            icnt_max: max(&icnt),
            icnt_mean: mean(&icnt),
            icnt_down_max: cycles_ceil(down_max),
            icnt_down_mean: if down_n == 0 {
                0.0
            } else {
                down_w as f64 / down_n as f64 / server::CYCLE as f64
            },
            icnt_down_beyond: self.down.iter().map(|c| c.beyond).sum(),
            gddr_max: max(&gddr),
            gddr_mean: mean(&gddr),
            pm_max: max(&pm),
            pm_mean: mean(&pm),
            pcie_max: max(&pcie),
            wpq_max: cycles_ceil(wpq),
        }
    }

    /// With `pm.reorder` on PM-far, the host fabric's channel ingresses
    /// (`docs/model-memory.md` §6.1): the largest and the mean wait of a
    /// write for its channel's ingress, cycles, and the writes; `None`
    /// without the fabric.
    pub fn fabric_waits(&self) -> Option<(u64, f64, u64)> {
        let f = self.far.as_ref()?.fabric.as_ref()?;
        let n: u64 = f.ingress.iter().map(|s| s.served).sum();
        let w: u64 = f.ingress.iter().map(|s| s.wait_total).sum();
        let max = f.ingress.iter().map(|s| s.wait_max).max().unwrap_or(0);
        let mean = if n == 0 {
            0.0
        } else {
            w as f64 / n as f64 / server::CYCLE as f64
        };
        Some((cycles_ceil(max), mean, n))
    }

    /// The L2 slice `line` maps to.
    pub fn slice_of(&self, line: u64) -> u32 {
        self.l2.map(line).0
    }

    /// L2 lookups per slice so far.
    pub fn slice_accesses(&self) -> &[u64] {
        &self.l2.slice_accesses
    }

    /// The configuration this system was built from.
    pub fn config(&self) -> &GpuConfig {
        &self.cfg
    }
}
