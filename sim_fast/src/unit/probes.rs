//! Waveform probes of the reference model (`docs/microarch.md` §3): the
//! registers under the spec's names in scope `state`, and every PB slot's
//! `pb_type`, `pb_warps`, `pb_line` and whether it is `live` in scope
//! `state.pb.eNNN`. Kept apart from the cycle rules in `unit.rs`.

use sbrp_iface::Probe;

use super::{PbModel, E};

impl PbModel {
    /// The state of §3 under the spec's names, for waveforms: the registers
    /// in scope `state`, and every PB slot's `pb_type`, `pb_warps`,
    /// `pb_line` and whether it is `live` in scope `state.pb.eNNN`.
    pub(super) fn probe_list(&self) -> Vec<Probe> {
        let (iw, lw, w, a) = (
            self.p.idx_bits(),
            self.p.line_bits(),
            self.p.warps,
            self.p.actr_bits,
        );
        let reg = |name: &str, width| Probe {
            scope: "state".into(),
            name: name.into(),
            width,
        };
        let mut v = vec![
            reg("head", iw),
            reg("tail", iw),
            reg("full", 1),
            reg("last_type", 3),
            reg("odm", w),
            reg("wait_ent", w),
            reg("edm", w),
            reg("fsm", w),
            reg("actr", a),
            reg("ep_cur", 2),
            reg("ep_old", 2),
            reg("ep_closed", 1),
        ];
        for e in 0..E {
            v.push(reg(&format!("ectr{e}"), a));
        }
        v.extend([
            reg("drain_pend", 1),
            reg("drain_idx", iw),
            reg("inv_cur", w),
            reg("inv_next", w),
            reg("fifo_n", 3),
        ]);
        for i in 0..self.p.entries {
            let scope = format!("state.pb.e{i:03}");
            for (name, width) in [
                ("pb_type", 3),
                ("pb_warps", w),
                ("pb_line", lw),
                ("live", 1),
            ] {
                v.push(Probe {
                    scope: scope.clone(),
                    name: name.into(),
                    width,
                });
            }
        }
        v
    }

    /// Read-only: the values of [`PbModel::probe_list`], in that order.
    pub(super) fn probe_fill(&self, out: &mut Vec<u64>) {
        self.register_fill(out);
        for i in 0..self.p.entries {
            let e = self.e(i);
            // A slot that is not live may hold stale words (§3): shown as they are.
            out.extend([e.ty as u64, e.warps, e.line as u64, self.live(i) as u64]);
        }
    }

    /// The registers of [`PbModel::probe_list`] (not the PB slots).
    pub(super) fn register_fill(&self, out: &mut Vec<u64>) {
        out.extend([
            self.head as u64,
            self.tail as u64,
            self.full as u64,
            self.last_type as u64,
            self.odm,
            self.wait_ent,
            self.edm_of_epochs(),
            self.fsm,
            self.actr as u64,
            self.ep_cur as u64,
            self.ep_old as u64,
            self.ep_closed as u64,
        ]);
        out.extend(self.ectr.iter().map(|&c| c as u64));
        out.extend([
            self.drain_pend as u64,
            self.drain_idx as u64,
            self.inv_cur,
            self.inv_next,
            self.fifo_n as u64,
        ]);
    }
}
