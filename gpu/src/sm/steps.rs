//! The steps of ordering points (`docs/model.md`, "Persistency models"):
//! the actions a warp runs in order when a model's op is a step list (the
//! lists are the models', in `persist/`), and `Sm::run_steps`, which runs
//! them (split from `mod.rs`).

use super::warp::{Cause, Phase, WState, Warp};
use super::{Ctx, Fault, Sm};

/// One step of an ordering point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Write back every dirty PM line of the SM's L1 (SM-wide, as the artifact does).
    FlushPm,
    /// Write back every dirty volatile line.
    FlushVol,
    /// Wait until every PM write of the SM is acknowledged.
    WaitPm,
    /// Wait until every write of the SM (PM and volatile) is acknowledged.
    WaitAll,
    /// The fence latency.
    FenceDelay,
    /// Drop the L1's clean PM lines.
    InvPm,
    /// Drop every clean line of the L1.
    InvAll,
}

/// Whether warp `w` is in `Steps` at a step that waits for PM writes
/// (`WaitPm`), and at one that waits for every write (`WaitAll`): its
/// bits of the wait masks.
pub(super) fn wait_bits(w: &Warp) -> (bool, bool) {
    if w.state() != WState::Steps {
        return (false, false);
    }
    match w.steps.get(w.step_i) {
        Some(Step::WaitPm) => (true, false),
        Some(Step::WaitAll) => (false, true),
        _ => (false, false),
    }
}

impl Sm {
    /// Warps whose current step waits for acknowledgements still
    /// outstanding.
    pub(super) fn steps_blocked(&self) -> u64 {
        self.masks.steps_blocked(self.pm_out > 0, self.vol_out > 0)
    }

    /// Brings `wait_pm` and `wait_all` in step with warp `w`'s current step
    /// (its state is `Steps`).
    pub(super) fn sync_wait(&mut self, w: usize) {
        let b = 1u64 << w;
        let (pm, all) = wait_bits(&self.warps[w]);
        let m = &mut self.masks;
        m.wait_pm = m.wait_pm & !b | (pm as u64) << w;
        m.wait_all = m.wait_all & !b | (all as u64) << w;
    }

    /// When the warp's current step, waiting for acknowledgements, can go
    /// on: at the latest acknowledgement of the writes it waits for (their
    /// count is zero then and not before). None: it does not wait.
    pub(super) fn step_wait(&self, w: &Warp) -> Option<u64> {
        let pm = (self.pm_out > 0).then_some(self.pm_last);
        let vol = (self.vol_out > 0).then_some(self.vol_last);
        match w.steps.get(w.step_i) {
            Some(Step::WaitPm) => pm,
            Some(Step::WaitAll) => pm.max(vol),
            _ => None,
        }
    }

    pub(super) fn start_steps(&mut self, w: usize, steps: &'static [Step], now: u64) {
        let warp = &mut self.warps[w];
        warp.steps = steps;
        warp.step_i = 0;
        self.wait(w, WState::Steps, Cause::Flush, now);
    }

    /// Runs the warp's steps as far as they go this cycle.
    pub(super) fn run_steps(&mut self, cx: &mut Ctx, w: usize) {
        self.steps_go_on(cx, w);
        self.sync_wait(w);
    }

    fn steps_go_on(&mut self, cx: &mut Ctx, w: usize) {
        let now = cx.now;
        loop {
            let warp = &self.warps[w];
            let Some(&step) = warp.steps.get(warp.step_i) else {
                break;
            };
            match step {
                Step::FlushPm if cx.fault == Fault::SkipEpochFlush => {}
                Step::FlushPm | Step::FlushVol => {
                    // The lines dirty when the step began, oldest first,
                    // one per cycle through the L1's write-back port.
                    let pm = step == Step::FlushPm;
                    let mut list = match self.warps[w].flush_list.take() {
                        Some(l) => l,
                        None => {
                            let mut l = self.l1.dirty_slots(pm);
                            l.reverse();
                            l
                        }
                    };
                    while let Some(s) = list.pop() {
                        if self.l1.lines[s].is_dirty() && self.l1.lines[s].pm == pm {
                            self.write_back(cx, s, false);
                            break;
                        }
                    }
                    if !list.is_empty() {
                        self.warps[w].flush_list = Some(list);
                        return;
                    }
                }
                Step::WaitPm if self.pm_out > 0 => return,
                Step::WaitAll if self.pm_out + self.vol_out > 0 => return,
                Step::WaitPm | Step::WaitAll => {}
                Step::FenceDelay => {
                    let t = now + cx.cfg.core.fence_latency as u64;
                    let warp = &mut self.warps[w];
                    warp.step_i += 1;
                    // `issue` resumes the steps when the delay is over.
                    self.set_state(w, WState::Until(t));
                    self.stats.fence_delays += 1;
                    return;
                }
                Step::InvPm => self.l1.invalidate_pm(),
                Step::InvAll => self.l1.invalidate_all(),
            }
            self.warps[w].step_i += 1;
        }
        self.steps_done(w, now);
    }

    /// Steps finished: the instruction goes on.
    pub(super) fn steps_done(&mut self, w: usize, now: u64) {
        let warp = &mut self.warps[w];
        warp.steps = &[];
        warp.step_i = 0;
        self.ready(w, now);
        match self.warps[w].phase {
            Phase::Start => self.warps[w].phase = Phase::Ordered,
            Phase::FenceSteps => self.finish_instr(w, now),
            _ => {}
        }
    }
}
