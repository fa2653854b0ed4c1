//! The reference model's epochs (`docs/microarch.md` §4.3): the ACTR
//! counters every cycle, and on a join or a release the retirement's masks
//! (4.1) and the epoch pointers. Split from `unit.rs`, whose `cycle` calls it.

use super::{Entry, PbModel, E};

impl PbModel {
    /// 4.3: the counters, without branches (an ack beyond its epoch's
    /// count sets `err` bit 0), then on a join or a release (`ep_rel`, kept
    /// for the current counters and pointers) the retirement of the head
    /// `he` at `h` (when `join`), the masks and the pointers. Returns `inv_add`.
    #[inline(always)]
    pub(super) fn epochs<const FAULTY: bool>(
        &mut self,
        flush_now: bool,
        join: bool,
        he: Entry,
        h: u32,
    ) -> u64 {
        let ack_n = (self.inq.ack_count & 7) as u32;
        let ack_e = self.inq.ack_epoch as usize & (E - 1);
        let cur = self.ep_cur as usize & (E - 1);
        let old = self.ep_old as usize & (E - 1);
        let rel = self.ep_rel;
        debug_assert_eq!(rel, self.ectr[old] == 0 && old != cur);
        let (ectr_cur, ectr_old) = (self.ectr[cur], self.ectr[old]);
        // counters
        let flushed = flush_now as u32;
        let acked = ack_n.min(self.ectr[ack_e]);
        self.err |= (ack_n > self.ectr[ack_e]) as u8;
        self.ectr[cur] += flushed;
        self.ectr[ack_e] -= acked;
        self.actr = self.actr + flushed - acked;
        self.out.obs_actr = self.actr;
        // Masks and epoch pointers: without a join or a release every
        // update below is a no-op (need_adv needs join; a closed epoch
        // reopens only on rel).
        let mut inv_add = 0;
        if join || rel {
            // Without a join, a retirement of no warps: a no-op.
            let warps = if join { he.warps } else { 0 };
            let (fsm_add, edm_add, add) = self.retire::<FAULTY>(Entry { warps, ..he }, h);
            inv_add = add;
            let j = if ectr_cur != 0 {
                cur
            } else {
                (cur + E - 1) % E
            };
            let nowait = (ectr_cur == 0 && cur == old) || (j == old && ectr_old == 0);
            let need_adv = join && !nowait && ectr_cur != 0;
            let room = (cur + 1) % E != old || rel;
            if rel {
                self.ep_fsm[old] = 0;
                self.ep_edm[old] = 0;
                self.ep_old = ((old + 1) % E) as u8;
            }
            if join && !nowait {
                self.ep_fsm[j] |= fsm_add;
                self.ep_edm[j] |= edm_add;
            }
            if self.ep_closed {
                if rel {
                    self.ep_cur = ((cur + 1) % E) as u8;
                    self.ep_closed = false;
                }
            } else if need_adv {
                if room {
                    self.ep_cur = ((cur + 1) % E) as u8;
                } else {
                    self.ep_closed = true;
                }
            }
            self.fsm = self.fsm_of_epochs();
            self.ep_edm_or = self.ep_edm.iter().fold(0, |a, m| a | m);
            self.out.obs_fsm = self.fsm;
            self.out.obs_epoch = self.ep_cur;
        }
        let (cur, old) = (
            self.ep_cur as usize & (E - 1),
            self.ep_old as usize & (E - 1),
        );
        self.ep_rel = self.ectr[old] == 0 && old != cur;
        inv_add
    }
}
