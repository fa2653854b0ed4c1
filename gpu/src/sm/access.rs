//! The SM's memory accesses (`docs/model.md`, "SM", "L1"): making room in
//! the L1, write-backs and flushes, loads, atomics, volatile stores, PM
//! stores that bypass the L1, and what a completed PM store releases. Part
//! of [`Sm`]; the issue loop and the persistency steps are in `mod.rs`.

use sbrp_trace::{Cell, Event};

use super::coalesce::{self, coalesce};
use super::events::{EV_ACK_PM, EV_ACK_VOL, EV_MSHR};
use super::l1::Lookup;
use super::{Ctx, Phase, Sm};
use crate::config::GpuConfig;
use crate::mem::{Access, MemReq};

impl Sm {
    /// Makes room for `line` in the L1: the slot to use, or None if it cannot
    /// be done now (every way pinned; or, under SBRP, a dirty PM victim whose
    /// eviction request was started for the warp).
    pub(super) fn room(&mut self, cx: &mut Ctx, w: usize, line: u64, pm: bool) -> Option<usize> {
        if let Lookup::Hit(s) = self.l1.lookup(line) {
            return Some(s);
        }
        if let Some(s) = self.l1.slot_of(line) {
            if !self.l1.lines[s].pinned {
                self.l1.revive(s);
                return Some(s);
            }
            return None;
        }
        let v = self.l1.victim(line)?;
        if self.l1.victim_dirty(v) {
            let vpm = self.l1.lines[v].pm;
            if vpm && self.unit.is_some() {
                self.evict_request(w, v, cx.now);
                return None;
            }
            self.write_back(cx, v, true);
        }
        self.l1.install(v, line, pm);
        Some(v)
    }

    /// Writes a dirty line back (epoch flush, eviction, volatile write-back).
    pub(super) fn write_back(&mut self, cx: &mut Ctx, slot: usize, _evict: bool) {
        let now = cx.now;
        let (tag, pm) = (self.l1.lines[slot].tag, self.l1.lines[slot].pm);
        let (sectors, words) = self.l1.clean(slot);
        let d = cx.mem.send(
            now,
            &MemReq {
                sm: self.id,
                line: tag,
                sectors,
                access: Access::Write,
                pm,
            },
        );
        if pm {
            self.pm_out += 1;
            self.pm_last = self.pm_last.max(d.at);
            self.push_event(d.at, EV_ACK_PM, 0);
            self.stats.pm_flushes += 1;
            self.stats.evict_flushes += _evict as u64;
            let id = self.next_flush;
            self.next_flush += 1;
            if self.rec.is_some() {
                let line = tag * cx.cfg.l1.line as u64;
                let cells = words
                    .iter()
                    .map(|&(addr, value)| Cell { addr, value })
                    .collect();
                let sm = self.id;
                self.emit(|| Event::Flush {
                    id,
                    sm,
                    line,
                    cells,
                    evict: _evict,
                    cycle: now,
                    read_cycle: now,
                });
                self.emit(|| Event::Durable {
                    id,
                    cycle: d.durable,
                });
            }
        } else {
            self.vol_out += 1;
            self.vol_last = self.vol_last.max(d.at);
            self.push_event(d.at, EV_ACK_VOL, 0);
        }
    }

    /// Writes back every dirty line of one space.
    pub(super) fn flush_dirty(&mut self, cx: &mut Ctx, pm: bool) {
        for s in self.l1.dirty_slots(pm) {
            self.write_back(cx, s, false);
        }
    }

    pub(super) fn load(
        &mut self,
        cx: &mut Ctx,
        w: usize,
        pm: bool,
        mask: u32,
        size: u8,
        addrs: &sbrp_trace::program::Addrs,
    ) -> bool {
        let now = cx.now;
        let cfg = cx.cfg;
        if now < self.ldst_free {
            return false;
        }
        // A load that waits for MSHRs keeps its lines (it retries each
        // cycle), and their miss count while the L1 does not change.
        let pc1 = self.warps[w].pc + 1;
        let kept = self.warps[w].acc_for == pc1;
        let mut acc = if kept {
            self.warps[w].acc_for = 0;
            std::mem::take(&mut self.warps[w].acc)
        } else {
            self.lines_of(cfg, mask, size, addrs)
        };
        // Misses need MSHRs; the instruction waits until there are enough.
        let misses = if kept && self.warps[w].misses_at == self.l1.version {
            self.warps[w].misses
        } else {
            acc.iter()
                .filter(|a| match self.l1.lookup(a.line) {
                    Lookup::Hit(s) => self.l1.lines[s].sectors & a.sectors != a.sectors,
                    Lookup::Miss => true,
                })
                .count() as u32
        };
        // An access wider than all the MSHRs issues once they are all free.
        if self.mshr + misses > cfg.l1.mshrs && self.mshr > 0 {
            let version = self.l1.version;
            let warp = &mut self.warps[w];
            std::mem::swap(&mut warp.acc, &mut acc);
            warp.acc_for = pc1;
            warp.misses = misses;
            warp.misses_at = version;
            self.scratch = acc;
            return false;
        }
        let mut done = now + cfg.l1.latency as u64;
        let mut ok = true;
        for a in &acc {
            let Some(s) = self.room(cx, w, a.line, pm) else {
                ok = false;
                break;
            };
            let l = &self.l1.lines[s];
            let missing = a.sectors & !l.sectors;
            if missing != 0 {
                let d = cx.mem.send(
                    now,
                    &MemReq {
                        sm: self.id,
                        line: a.line,
                        sectors: missing,
                        access: Access::Read,
                        pm,
                    },
                );
                // The data comes back through the L1's pipeline.
                self.l1.fill(s, missing, d.at + cfg.l1.latency as u64);
                self.mshr += 1;
                self.push_event(d.at, EV_MSHR, 0);
                if pm {
                    self.stats.l1_pm_read_misses += 1;
                } else {
                    self.stats.l1_vol_read_misses += 1;
                }
            } else if pm {
                self.stats.l1_pm_read_hits += 1;
            }
            done = done.max(self.l1.lines[s].fill_at);
            self.l1.touch(s);
            if self.rec.is_some() && pm {
                let op = self.opref(w);
                let addr = a.line * cfg.l1.line as u64;
                let hit = missing == 0;
                self.emit(|| Event::Load {
                    op,
                    addr,
                    hit,
                    cycle: now,
                });
            }
        }
        self.scratch = acc;
        if !ok {
            // An eviction through the unit was started (or every way is
            // pinned): the load issues again afterwards.
            return true;
        }
        self.ldst_free = now + self.scratch.len() as u64;
        self.complete(w, done, now);
        true
    }

    /// The lines an access touches (no values: loads, atomics, volatile
    /// stores), in the SM's scratch vector; hand it back in `self.scratch`.
    pub(super) fn lines_of(
        &mut self,
        cfg: &GpuConfig,
        mask: u32,
        size: u8,
        addrs: &sbrp_trace::program::Addrs,
    ) -> Vec<coalesce::LineAcc> {
        let mut acc = std::mem::take(&mut self.scratch);
        coalesce(
            mask,
            size,
            addrs,
            None,
            cfg.l1.line as u64,
            cfg.l1.sector as u64,
            &mut acc,
            &mut self.scratch_cells,
        );
        acc
    }

    pub(super) fn atomic(
        &mut self,
        cx: &mut Ctx,
        w: usize,
        pm: bool,
        mask: u32,
        size: u8,
        addrs: &sbrp_trace::program::Addrs,
    ) -> bool {
        let now = cx.now;
        let cfg = cx.cfg;
        if now < self.ldst_free {
            return false;
        }
        let acc = self.lines_of(cfg, mask, size, addrs);
        let mut done = now;
        for a in &acc {
            let d = cx.mem.send(
                now,
                &MemReq {
                    sm: self.id,
                    line: a.line,
                    sectors: a.sectors,
                    access: Access::Atomic,
                    pm,
                },
            );
            done = done.max(d.at);
        }
        self.ldst_free = now + acc.len() as u64;
        self.scratch = acc;
        self.complete(w, done, now);
        true
    }

    pub(super) fn store_vol(
        &mut self,
        cx: &mut Ctx,
        w: usize,
        mask: u32,
        size: u8,
        addrs: &sbrp_trace::program::Addrs,
    ) -> bool {
        let now = cx.now;
        let cfg = cx.cfg;
        if now < self.ldst_free {
            return false;
        }
        let acc = self.lines_of(cfg, mask, size, addrs);
        let mut ok = true;
        for a in &acc {
            let Some(s) = self.room(cx, w, a.line, false) else {
                ok = false;
                break;
            };
            self.l1.write(s, a.sectors, &[]);
        }
        let n = acc.len() as u64;
        self.scratch = acc;
        if !ok {
            return true;
        }
        self.ldst_free = now + n;
        self.complete(w, now + 1, now);
        true
    }

    /// A PM store without a persist buffer (epoch, GPM): the L1 lines become
    /// dirty; they are written back at the next ordering point.
    pub(super) fn store_pm_direct(&mut self, cx: &mut Ctx, w: usize) -> bool {
        let now = cx.now;
        let n = self.warps[w].acc.len();
        let i0 = self.warps[w].acc_i;
        for i in i0..n {
            let a = self.warps[w].acc[i];
            let Some(s) = self.room(cx, w, a.line, true) else {
                // Every way pinned cannot happen without a unit; retry.
                self.warps[w].acc_i = i;
                return true;
            };
            self.l1.set_pm(s);
            let cells: Vec<(u64, u64)> =
                self.warps[w].cells[a.first as usize..(a.first + a.count) as usize].to_vec();
            self.l1.write(s, a.sectors, &cells);
            self.persisted(w, &cells, now);
        }
        self.after_pm_store(cx, w);
        true
    }

    /// Persist events of a store's words.
    pub(super) fn persisted(&mut self, w: usize, cells: &[(u64, u64)], now: u64) {
        self.stats.persists += 1;
        if self.rec.is_some() {
            let op = self.opref(w);
            for &(addr, value) in cells {
                self.emit(|| Event::Persist {
                    op,
                    cell: Cell { addr, value },
                    cycle: now,
                });
            }
        }
    }

    /// A PM store's lines are all written: a release's flag store publishes.
    pub(super) fn after_pm_store(&mut self, cx: &mut Ctx, w: usize) {
        let now = cx.now;
        if self.warps[w].flag_store {
            // Back to the release: it publishes next.
            self.warps[w].phase = Phase::Ordered;
            self.warps[w].acc.clear();
            self.ready(w, now);
            return;
        }
        self.ready(w, now);
        self.complete(w, now + 1, now);
    }
}
