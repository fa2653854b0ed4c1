//! The SM's events and wake cycle (`docs/model.md`, "Event loop"): memory
//! acknowledgements, MSHR releases and warp timers in two heaps (the
//! counters' decrements apart, as they wake the SM only when read), and
//! the earliest cycle at which the SM has something to do. Split from
//! `mod.rs`.

use std::cmp::Reverse;

use super::warp::WState;
use super::Sm;

/// Event kinds in the SM's queue.
pub(super) const EV_MSHR: u8 = 0;
pub(super) const EV_ACK_PM: u8 = 1;
pub(super) const EV_ACK_VOL: u8 = 2;
/// An SBRP flush's acknowledgement; data = its ACTR epoch.
pub(super) const EV_ACK_FLUSH: u8 = 3;
/// A warp's `Until` timer; data = the warp.
pub(super) const EV_TIMER: u8 = 4;

/// An event's heap key: ordered as the tuple `(t, kind, data)` (cycles stay
/// below 2^48).
pub(super) fn ev_key(t: u64, kind: u8, data: u8) -> u64 {
    debug_assert!(t < 1 << 48, "event cycle {t}");
    t << 16 | (kind as u64) << 8 | data as u64
}

impl Sm {
    /// The earliest cycle after `now` at which this SM has something to do.
    pub fn next_wake(&self, now: u64) -> u64 {
        // After a skip of the unit's replay loop (`skip.rs`), as seen
        // from its last cycle.
        let now = now.max(self.unit_state.skip_to.saturating_sub(1));
        if self.unit_state.busy {
            return now + 1;
        }
        if self.draining_busy() {
            return now + 1;
        }
        debug_assert_eq!(
            self.masks.read_bits(),
            self.masks_of_states(),
            "SM {} warp masks",
            self.id
        );
        let m = &self.masks;
        if m.ready | m.unitreq | m.due != 0 || self.cta_done {
            return now + 1;
        }
        // A step waiting for acknowledgements wakes at the last one
        // (`ev_wake`).
        if m.steps & !self.steps_blocked() != 0 {
            return now + 1;
        }
        self.ev_wake().max(now + 1)
    }

    /// The earliest event that must wake the SM (`u64::MAX`: none). The
    /// counters the `counters` events decrement are read by a step waiting
    /// for acknowledgements (epoch and GPM fences), which can go on only
    /// when its count is zero, at the latest acknowledgement
    /// (`pm_last`, `vol_last`), and by the kernel-end check (`drained`),
    /// which wakes at every decrement. A warp waiting for MSHRs is ready,
    /// and a ready warp wakes the SM every cycle. A decrement nobody reads
    /// meanwhile waits for the next visit: decrements commute with every
    /// other event's effect.
    pub(super) fn ev_wake(&self) -> u64 {
        let t = self.ev_next;
        if self.live_warps == 0 || self.draining {
            return t.min(self.cnt_next);
        }
        let steps = self.steps_wake();
        debug_assert_eq!(
            steps,
            (0..self.warps.len())
                .filter(|w| self.masks.steps >> w & 1 == 1)
                .filter_map(|w| self.step_wait(&self.warps[w]))
                .min()
                .unwrap_or(u64::MAX),
            "SM {} wait masks",
            self.id
        );
        t.min(steps)
    }

    /// The earliest `step_wait` of the warps in `steps`, from the wait
    /// masks: every warp of one kind waits for the same acknowledgement.
    fn steps_wake(&self) -> u64 {
        let m = self.masks.read_bits();
        if m.wait_pm | m.wait_all == 0 {
            return u64::MAX;
        }
        let pm = (self.pm_out > 0).then_some(self.pm_last);
        let vol = (self.vol_out > 0).then_some(self.vol_last);
        let mut t = u64::MAX;
        if m.wait_pm != 0 {
            t = t.min(pm.unwrap_or(u64::MAX));
        }
        if m.wait_all != 0 {
            t = t.min(pm.max(vol).unwrap_or(u64::MAX));
        }
        t
    }

    /// Queues an event of `kind` at cycle `t`.
    pub(super) fn push_event(&mut self, t: u64, kind: u8, data: u8) {
        if kind <= EV_ACK_VOL {
            self.counters.push(Reverse(ev_key(t, kind, data)));
            self.cnt_next = self.cnt_next.min(t);
        } else {
            self.events.push(Reverse(ev_key(t, kind, data)));
            self.ev_next = self.ev_next.min(t);
        }
    }

    pub(super) fn events_due(&mut self, now: u64) {
        if self.cnt_next <= now {
            while let Some(&Reverse(e)) = self.counters.peek() {
                if e >> 16 > now {
                    break;
                }
                self.counters.pop();
                match (e >> 8) as u8 {
                    EV_MSHR => self.mshr -= 1,
                    EV_ACK_PM => self.pm_out -= 1,
                    _ => self.vol_out -= 1,
                }
            }
            self.cnt_next = self.counters.peek().map_or(u64::MAX, |&Reverse(e)| e >> 16);
        }
        if self.ev_next > now {
            return;
        }
        while let Some(&Reverse(e)) = self.events.peek() {
            let (t, kind, data) = (e >> 16, (e >> 8) as u8, e as u8);
            if t > now {
                break;
            }
            self.events.pop();
            match kind {
                EV_ACK_FLUSH => {
                    self.pm_out -= 1;
                    self.unit_state.ack(data);
                }
                EV_TIMER => {
                    let w = data as usize;
                    if matches!(self.warps[w].state(), WState::Until(u) if u <= now) {
                        self.masks.due |= 1 << w;
                    }
                }
                _ => unreachable!(),
            }
        }
        self.ev_next = self.events.peek().map_or(u64::MAX, |&Reverse(e)| e >> 16);
    }
}
