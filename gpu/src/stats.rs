//! Counts of a run (`docs/model.md`, "Output"): per SM while running, then
//! summed per kernel and for the whole program.

use serde::Serialize;

/// One SM's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SmStats {
    /// Warp instructions executed (acquire polls count one each).
    pub instrs: u64,
    pub polls: u64,
    pub l1_pm_read_misses: u64,
    pub l1_pm_read_hits: u64,
    pub l1_vol_read_misses: u64,
    /// PM store instructions' lines written into the L1 (SBRP: stores the unit took).
    pub persists: u64,
    /// Stores the unit merged into an existing entry.
    pub coalesced: u64,
    /// PM line write-backs (SBRP flushes, epoch flushes, evictions).
    pub pm_flushes: u64,
    pub evict_flushes: u64,
    /// Eviction flushes whose words had already left with a head flush.
    pub empty_evict_flushes: u64,
    pub replays: u64,
    /// Of those: stores, ordering ops and evictions.
    pub replays_store: u64,
    pub replays_ordering: u64,
    pub replays_evict: u64,
    pub waits: u64,
    pub fence_delays: u64,
    pub unit_steps: u64,
    /// Of those: cycles of replay loops skipped, the unit not stepped
    /// (`docs/model.md`, "Event loop").
    pub unit_steps_skipped: u64,
    /// Cycles the event loop visited the SM (the cost driver: `docs/model.md`,
    /// "Event loop").
    pub visits: u64,
    pub actr_peak: u32,
}

impl SmStats {
    pub fn add(&mut self, o: &SmStats) {
        self.instrs += o.instrs;
        self.polls += o.polls;
        self.l1_pm_read_misses += o.l1_pm_read_misses;
        self.l1_pm_read_hits += o.l1_pm_read_hits;
        self.l1_vol_read_misses += o.l1_vol_read_misses;
        self.persists += o.persists;
        self.coalesced += o.coalesced;
        self.pm_flushes += o.pm_flushes;
        self.evict_flushes += o.evict_flushes;
        self.empty_evict_flushes += o.empty_evict_flushes;
        self.replays += o.replays;
        self.replays_store += o.replays_store;
        self.replays_ordering += o.replays_ordering;
        self.replays_evict += o.replays_evict;
        self.waits += o.waits;
        self.fence_delays += o.fence_delays;
        self.unit_steps += o.unit_steps;
        self.unit_steps_skipped += o.unit_steps_skipped;
        self.visits += o.visits;
        self.actr_peak = self.actr_peak.max(o.actr_peak);
    }
}
