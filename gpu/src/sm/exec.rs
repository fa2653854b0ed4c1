//! The SM's issue and execute path (`docs/model.md`, "SM"): each cycle's
//! issue of ready warps round robin over the schedulers, one instruction's
//! execution (memory, barriers, persistency model hooks through
//! [`super::persist`]), completion, and barrier release. Split from
//! `sm/mod.rs`.

use super::*;

impl Sm {
    pub(super) fn release_barriers(&mut self, now: u64) {
        if !std::mem::take(&mut self.bar_arrived) {
            return;
        }
        for c in 0..self.ctas.len() {
            let cta = &mut self.ctas[c];
            if !cta.active || cta.live == 0 || cta.at_barrier != cta.live {
                continue;
            }
            cta.at_barrier = 0;
            // By index: finishing an instruction leaves the CTA's warp list as is.
            let after = self.model.after_barrier();
            for i in 0..self.ctas[c].warps.len() {
                let w = self.ctas[c].warps[i];
                if self.warps[w].state() == WState::Barrier {
                    self.ready(w, now);
                    match after {
                        None => self.finish_instr(w, now),
                        Some(steps) => {
                            self.warps[w].phase = Phase::FenceSteps;
                            self.start_steps(w, steps, now);
                        }
                    }
                }
            }
        }
    }

    /// The warp's instruction is complete: next one.
    pub(super) fn finish_instr(&mut self, w: usize, now: u64) {
        if self.rec.is_some() && ordering_instr(self.warps[w].op()) {
            let op = self.opref(w);
            self.emit(|| Event::Retire { op, cycle: now });
        }
        let warp = &mut self.warps[w];
        warp.instrs += 1;
        self.stats.instrs += 1;
        let done = warp.advance();
        // A ready warp that goes on stays ready: its masks are in step.
        if done || self.warps[w].state() != WState::Ready {
            self.sync(w);
        }
        if done {
            let warp = &self.warps[w];
            // The CTA's barrier may now be complete.
            self.bar_arrived = true;
            self.live_warps -= 1;
            let c = warp.cta;
            self.ctas[c].live -= 1;
            self.cta_done |= self.ctas[c].live == 0;
        }
    }

    /// Up to `schedulers` warps issue, round robin; warps whose timer
    /// fired become ready (or go on with their steps).
    pub(super) fn issue(&mut self, cx: &mut Ctx) {
        let now = cx.now;
        let n = self.warps.len();
        let mut issued = 0;
        let sched = cx.cfg.core.schedulers;
        let m = self.masks;
        let rr = self.rr;
        // A step still waiting for acknowledgements would do nothing; the
        // counters only grow during the loop, so it stays blocked.
        let blocked = self.steps_blocked();
        let mut bits = (m.ready | m.due | (m.steps & !blocked)).rotate_right(rr as u32);
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let w = (rr + k) % 64;
            if w >= n {
                continue;
            }
            if self.masks.due >> w & 1 == 1 {
                self.masks.due &= !(1 << w);
                if let WState::Until(t) = self.warps[w].state() {
                    if t <= now && self.warps[w].exit_at_timer {
                        // The last instruction's latency is over: the warp exits.
                        self.warps[w].exit_at_timer = false;
                        self.ready(w, now);
                        self.finish_instr(w, now);
                        continue;
                    }
                    if t <= now {
                        if !self.warps[w].steps.is_empty() {
                            // A fence delay inside steps is over: the steps go on.
                            self.set_state(w, WState::Steps);
                            self.run_steps(cx, w);
                            continue;
                        }
                        self.ready(w, now);
                    }
                }
            }
            if self.warps[w].state() == WState::Steps {
                self.run_steps(cx, w);
                continue;
            }
            if self.warps[w].state() != WState::Ready || issued >= sched {
                continue;
            }
            if self.exec(cx, w) {
                issued += 1;
                self.rr = next_rr(w, n);
            }
        }
    }

    /// Executes (or starts) warp `w`'s instruction; false if it could not issue.
    pub(super) fn exec(&mut self, cx: &mut Ctx, w: usize) -> bool {
        let now = cx.now;
        let cfg = cx.cfg;
        let model = self.model;
        let code = self.warps[w].code.clone();
        let instr = &code[self.warps[w].pc];
        match *instr {
            Instr::Compute { cycles } => {
                self.complete(w, now + cycles as u64, now);
                true
            }
            Instr::Ld { space, .. } | Instr::St { space, .. } | Instr::Atom { space, .. }
                if space == Space::Shared =>
            {
                self.complete(w, now + cfg.core.shared_latency as u64, now);
                true
            }
            Instr::Ld {
                space,
                mask,
                size,
                ref addrs,
                ..
            } => self.load(cx, w, space == Space::Pm, mask, size, addrs),
            Instr::Atom {
                space,
                mask,
                size,
                ref addrs,
            } => self.atomic(cx, w, space == Space::Pm, mask, size, addrs),
            Instr::St {
                space: Space::Global,
                mask,
                size,
                ref addrs,
                ..
            } => self.store_vol(cx, w, mask, size, addrs),
            Instr::St {
                mask,
                size,
                ref addrs,
                ref values,
                ..
            } => {
                // A PM store.
                if now < self.ldst_free {
                    return false;
                }
                let rec = self.rec.is_some();
                let warp = &mut self.warps[w];
                coalesce(
                    mask,
                    size,
                    addrs,
                    rec.then_some(values),
                    cfg.l1.line as u64,
                    cfg.l1.sector as u64,
                    &mut warp.acc,
                    &mut warp.cells,
                );
                warp.acc_i = 0;
                self.ldst_free = now + warp.acc.len() as u64;
                model.pm_store(self, cx, w)
            }
            Instr::Bar if self.warps[w].phase == Phase::Start => {
                model.barrier(self, cx, w);
                true
            }
            Instr::Bar => {
                self.arrive(w, now);
                true
            }
            Instr::OFence
            | Instr::DFence
            | Instr::PAcq { .. }
            | Instr::PRel { .. }
            | Instr::Fence(_)
                if self.warps[w].phase == Phase::Start =>
            {
                model.ordering(self, cx, w, instr);
                true
            }
            Instr::Fence(_) if self.warps[w].phase == Phase::Ordered && model.fence().is_some() => {
                // The fence's own part, after its ordering part.
                self.warps[w].phase = Phase::FenceSteps;
                self.start_steps(w, model.fence().unwrap_or(&[]), now);
                true
            }
            Instr::Fence(_) | Instr::OFence | Instr::DFence => {
                self.finish_instr(w, now);
                true
            }
            Instr::PAcq {
                scope,
                space,
                flag,
                want,
                mask,
            } => {
                // Ordered: the poll reads the flag.
                let _ = space;
                match cx.flags.read(flag, self.id, now) {
                    (v, rel) if v & mask == want => {
                        let acq = self.opref(w);
                        let acq_scope = self.scope(cx, scope);
                        if let Some((rel, rel_scope)) = rel {
                            self.emit(|| Event::Match {
                                acq,
                                acq_scope,
                                rel,
                                rel_scope,
                                cycle: now,
                            });
                        }
                        self.finish_instr(w, now);
                    }
                    _ => {
                        // Poll again after the flag's read latency.
                        let lat = match (space, scope) {
                            (Space::Shared, _) => cfg.core.shared_latency,
                            (_, Scope::Block) => cfg.l1.latency,
                            _ => 2 * cfg.icnt.latency + cfg.l2.latency,
                        };
                        let warp = &mut self.warps[w];
                        warp.phase = Phase::Start;
                        warp.instrs += 1;
                        self.stats.instrs += 1;
                        self.stats.polls += 1;
                        self.wait(w, WState::Until(now + lat as u64), Cause::Spin, now);
                    }
                }
                true
            }
            Instr::PRel {
                scope,
                space,
                flag,
                value,
            } => {
                // Ordered: the flag store, then the flag is published.
                if space == Space::Pm && !self.warps[w].flag_store {
                    let rec = self.rec.is_some();
                    let warp = &mut self.warps[w];
                    let addrs = sbrp_trace::program::Addrs::Strided {
                        base: flag,
                        stride: 0,
                    };
                    let vals = sbrp_trace::program::Values::Same(value);
                    coalesce(
                        1,
                        8,
                        &addrs,
                        rec.then_some(&vals),
                        cfg.l1.line as u64,
                        cfg.l1.sector as u64,
                        &mut warp.acc,
                        &mut warp.cells,
                    );
                    warp.acc_i = 0;
                    warp.flag_store = true;
                    model.pm_store(self, cx, w);
                    return true;
                }
                let scope = self.scope(cx, scope);
                let remote = match scope {
                    Scope::Block => cfg.remote_visibility as u64,
                    Scope::Device => 0,
                };
                let op = self.opref(w);
                cx.flags
                    .publish(flag, value, self.id, op, scope, now, remote);
                self.finish_instr(w, now);
                true
            }
        }
    }

    /// The scope the program asks of an op, as the record shows it: the
    /// instruction's, promoted under SBRP-device (the device-scope variant
    /// of the program), never changed by a fault (which the checker is to
    /// catch).
    pub(super) fn asked_scope(&self, _cx: &Ctx, s: Scope) -> Scope {
        if self.model.promotes() {
            Scope::Device
        } else {
            s
        }
    }

    /// The scope an op acts with (SBRP-device promotes block scope).
    pub(super) fn scope(&self, cx: &Ctx, s: Scope) -> Scope {
        if cx.fault == Fault::DropScope {
            Scope::Block
        } else if self.model.promotes() {
            Scope::Device
        } else {
            s
        }
    }

    /// Warp `w` arrives at its CTA's barrier and waits there.
    pub(super) fn arrive(&mut self, w: usize, now: u64) {
        let c = self.warps[w].cta;
        self.ctas[c].at_barrier += 1;
        self.wait(w, WState::Barrier, Cause::Barrier, now);
    }

    /// The instruction is done and the warp may go on at `t` (its latency);
    /// a last instruction's latency is waited for before the warp exits.
    pub(super) fn complete(&mut self, w: usize, t: u64, now: u64) {
        let warp = &self.warps[w];
        let cause = match warp.op() {
            Instr::Compute { .. } => Cause::Compute,
            _ => Cause::Memory,
        };
        if t <= now {
            self.finish_instr(w, now);
        } else if warp.pc + 1 >= warp.code.len() {
            self.warps[w].exit_at_timer = true;
            self.wait(w, WState::Until(t), cause, now);
        } else {
            self.finish_instr(w, now);
            self.wait(w, WState::Until(t), cause, now);
        }
    }
}
