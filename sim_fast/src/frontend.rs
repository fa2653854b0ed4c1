//! SM front end: turns warp traces into the unit's per-cycle request stream.
//!
//! Per SM: round-robin warp scheduling (one warp acts per cycle), an L1 tag
//! model (set-associative, LRU, write-back PM lines) that supplies hits,
//! misses and victims, warps held while the unit stalls them, acquires that
//! spin until the matching release is visible in their scope, and a
//! persistence domain that acknowledges each flush after a latency, in order.
//! The unit of each SM is any [`PbUnit`], so the same front end drives the
//! model, the RTL, or both in lockstep. It is also the base of the later
//! full-GPU model (many SMs, L2, NVM and PCIe queues).

use std::collections::{BTreeMap, HashMap, VecDeque};

use sbrp_iface::{Op, PbIn, PbOut, PbUnit};

use crate::trace::{Cell, Expect, Scope, Trace, WarpId, WarpOp};

/// Front-end parameters (not part of the unit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontEndConfig {
    /// Cycles from a flush to its acknowledgement. Test default; the paper's
    /// NVM latency (300 ns at 1365 MHz) would be about 410.
    pub pm_latency: u32,
    /// L1 associativity (the L1 has the unit's `lines` lines).
    pub l1_ways: u32,
    /// Bytes per L1 line (128 in the paper's GPU).
    pub line_bytes: u64,
    /// Cycles until a block-scope release's flag is seen by other SMs.
    pub remote_visibility: u32,
    /// Cycles without any progress after which the run is declared deadlocked.
    pub deadlock_cycles: u64,
}

impl Default for FrontEndConfig {
    fn default() -> Self {
        FrontEndConfig {
            pm_latency: 40,
            l1_ways: 4,
            line_bytes: 128,
            remote_visibility: 20,
            deadlock_cycles: 100_000,
        }
    }
}

impl FrontEndConfig {
    /// Applies one `config KEY=VALUE` line of a trace.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let v: u64 = value
            .parse()
            .map_err(|_| format!("config {key}: expected a number, found `{value}`"))?;
        match key {
            "pm_latency" if (1..=100_000).contains(&v) => self.pm_latency = v as u32,
            "l1_ways" if [1, 2, 4, 8, 16].contains(&v) => self.l1_ways = v as u32,
            "remote_visibility" if v <= 100_000 => self.remote_visibility = v as u32,
            "pm_latency" => return Err("config pm_latency: allowed 1..100000".into()),
            "l1_ways" => return Err("config l1_ways: allowed 1, 2, 4, 8, 16".into()),
            "remote_visibility" => return Err("config remote_visibility: allowed 0..100000".into()),
            _ => {
                return Err(format!(
                    "unknown config key `{key}`: expected pm_latency, l1_ways or remote_visibility"
                ))
            }
        }
        Ok(())
    }
}

/// What the execution record holds (read by a later persistency checker).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Event {
    /// A PM store performed (the unit accepted it). `seq` is the op's index in
    /// its warp's program.
    Persist {
        sm: u32,
        warp: u32,
        seq: u32,
        addr: u64,
        value: u64,
        cycle: u64,
    },
    /// An ordering operation accepted by the unit.
    Ordering {
        sm: u32,
        warp: u32,
        seq: u32,
        op: String,
        flag: Option<String>,
        cycle: u64,
    },
    /// An acquire observed this release (release warp and seq).
    Match {
        acq_sm: u32,
        acq_warp: u32,
        acq_seq: u32,
        rel_sm: u32,
        rel_warp: u32,
        rel_seq: u32,
    },
    /// A flush left the SM with the line's words.
    Flush {
        id: u64,
        sm: u32,
        cells: Vec<(u64, u64)>,
        evict: bool,
        cycle: u64,
    },
    /// Flush `id` reached the persistence domain.
    Durable { id: u64, cycle: u64 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum WState {
    Ready,
    DelayUntil(u64),
    /// Waiting for the unit's stall bit to fall (seen after cycle `since`);
    /// then publish a device-scope flag, if any.
    WaitUnit {
        since: u64,
        publish: Option<(String, u32)>,
        /// The op was refused: retry it (else it was performed: move on).
        retry: bool,
    },
    Barrier(u32),
    Done,
}

struct Warp {
    id: WarpId,
    prog: Vec<WarpOp>,
    pc: usize,
    state: WState,
    barriers: u32,
    stalled_ever: bool,
    stall_intervals: Vec<(u64, u64)>,
    last_load_miss: HashMap<u64, bool>,
}

#[derive(Clone, Default)]
struct Line {
    valid: bool,
    tag: u64,
    dirty: bool,
    lru: u64,
    words: BTreeMap<u64, u64>,
}

/// Words of one line: (address, value).
type Cells = Vec<(u64, u64)>;

/// A flush on its way to the persistence domain: (due cycle, flush id, words).
type InFlight = (u64, u64, Cells);

struct Sm {
    unit: Box<dyn PbUnit>,
    l1: Vec<Line>,
    sets: u32,
    warps: Vec<Warp>,
    rr: usize,
    inflight: VecDeque<InFlight>,
    drained: bool,
}

/// A release of a flag and when each SM sees it.
struct Release {
    rel: WarpId,
    seq: u32,
    visible: Vec<u64>,
}

/// Result of a run.
#[derive(Clone, Debug, Default)]
pub struct RunSummary {
    pub cycles: u64,
    pub finished: bool,
    pub deadlock: Option<String>,
    pub stopped: bool,
    pub persists: u64,
    pub flushes: u64,
    pub evict_flushes: u64,
    pub requests: u64,
    pub refused: u64,
    pub waits: u64,
    pub max_occupancy: u32,
}

/// The multi-SM front end.
pub struct FrontEnd {
    pub cfg: FrontEndConfig,
    sms: Vec<Sm>,
    flags: HashMap<String, Vec<Release>>,
    pub durable: HashMap<u64, u64>,
    pub record: Vec<Event>,
    /// Keep the execution record (off for long random runs).
    pub recording: bool,
    pub now: u64,
    next_flush: u64,
    /// First flush cycle and flush count of each line address (line-aligned).
    first_flush: HashMap<u64, u64>,
    flush_count: HashMap<u64, u32>,
    /// Largest ACTR seen on any SM.
    pub max_actr: u32,
    durable_at: HashMap<(u64, u64), u64>,
    watch: Vec<(Cell, Cell)>,
    pub watch_hits: Vec<Option<u64>>,
    pub summary: RunSummary,
    last_progress: u64,
}

fn op_name(op: &WarpOp) -> &'static str {
    match op {
        WarpOp::OFence => "ofence",
        WarpOp::DFence => "dfence",
        WarpOp::PAcq {
            scope: Scope::Block,
            ..
        } => "pacq.block",
        WarpOp::PAcq { .. } => "pacq.dev",
        WarpOp::PRel {
            scope: Scope::Block,
            ..
        } => "prel.block",
        WarpOp::PRel { .. } => "prel.dev",
        _ => "",
    }
}

impl FrontEnd {
    /// One front end over `units` (one per SM). Every SM's unit must have the
    /// same parameters.
    pub fn new(units: Vec<Box<dyn PbUnit>>, cfg: FrontEndConfig) -> FrontEnd {
        let sms = units
            .into_iter()
            .map(|unit| {
                let lines = unit.params().lines;
                let ways = cfg.l1_ways.min(lines);
                Sm {
                    l1: vec![Line::default(); lines as usize],
                    sets: lines / ways,
                    unit,
                    warps: vec![],
                    rr: 0,
                    inflight: VecDeque::new(),
                    drained: true,
                }
            })
            .collect();
        FrontEnd {
            cfg,
            sms,
            flags: HashMap::new(),
            durable: HashMap::new(),
            record: vec![],
            recording: true,
            now: 0,
            next_flush: 0,
            first_flush: HashMap::new(),
            flush_count: HashMap::new(),
            max_actr: 0,
            durable_at: HashMap::new(),
            watch: vec![],
            watch_hits: vec![],
            summary: RunSummary::default(),
            last_progress: 0,
        }
    }

    pub fn sms(&self) -> usize {
        self.sms.len()
    }

    /// Resets every unit (one cycle of `rst`).
    pub fn reset(&mut self) {
        for sm in &mut self.sms {
            sm.unit.step(&PbIn::reset());
        }
        self.now += 1;
    }

    /// Loads the programs of a trace (replacing finished ones). Units, L1s and
    /// in-flight flushes carry over, so traces can be chained.
    pub fn load(&mut self, t: &Trace) -> Result<(), String> {
        if t.sms() as usize > self.sms.len() {
            return Err(format!(
                "the trace uses {} SMs, the front end has {}",
                t.sms(),
                self.sms.len()
            ));
        }
        for sm in &mut self.sms {
            let w = sm.unit.params().warps;
            if t.programs.keys().any(|id| id.warp >= w) {
                return Err(format!(
                    "the trace uses warp {} but the unit has {} warps",
                    t.programs.keys().map(|i| i.warp).max().unwrap_or(0),
                    w
                ));
            }
            sm.warps.clear();
            sm.drained = false;
        }
        for (id, prog) in &t.programs {
            self.sms[id.sm as usize].warps.push(Warp {
                id: *id,
                prog: prog.clone(),
                pc: 0,
                state: WState::Ready,
                barriers: 0,
                stalled_ever: false,
                stall_intervals: vec![],
                last_load_miss: HashMap::new(),
            });
        }
        for s in 0..self.sms.len() {
            self.finish_warps(s);
        }
        self.flags.clear();
        self.watch = t
            .expects
            .iter()
            .filter_map(|e| match e.what {
                Expect::Forbid(a, b) | Expect::Occurs(a, b) => Some((a, b)),
                _ => None,
            })
            .collect();
        self.watch_hits = vec![None; self.watch.len()];
        self.last_progress = self.now;
        Ok(())
    }

    fn line_of(&self, addr: u64) -> u64 {
        addr / self.cfg.line_bytes
    }

    /// True when every warp is done, every unit idle and no flush in flight.
    pub fn finished(&self) -> bool {
        self.sms.iter().all(|s| s.drained)
    }

    fn flag_visible(&self, flag: &str, sm: u32) -> Option<(WarpId, u32)> {
        self.flags.get(flag).and_then(|rs| {
            rs.iter()
                .rev()
                .find(|r| r.visible[sm as usize] <= self.now)
                .map(|r| (r.rel, r.seq))
        })
    }

    fn publish(&mut self, flag: String, rel: WarpId, seq: u32, scope: Scope) {
        let n = self.sms.len();
        let visible = (0..n)
            .map(|s| {
                if scope == Scope::Device || s as u32 == rel.sm {
                    self.now
                } else {
                    self.now + self.cfg.remote_visibility as u64
                }
            })
            .collect();
        self.flags
            .entry(flag)
            .or_default()
            .push(Release { rel, seq, visible });
    }

    /// Runs one cycle of every SM.
    pub fn cycle(&mut self) {
        let now = self.now;
        let mut changed_durable = false;
        for s in 0..self.sms.len() {
            changed_durable |= self.cycle_sm(s, now);
        }
        if changed_durable {
            self.check_watch();
        }
        self.now += 1;
        self.summary.cycles = self.now;
    }

    fn check_watch(&mut self) {
        for (i, (a, b)) in self.watch.iter().enumerate() {
            if self.watch_hits[i].is_none()
                && self.durable.get(&a.addr) == Some(&a.value)
                && self.durable.get(&b.addr) != Some(&b.value)
            {
                self.watch_hits[i] = Some(self.now);
            }
        }
    }

    /// Picks the warp that acts this cycle: round robin over runnable warps.
    fn pick(&self, s: usize) -> Option<usize> {
        let sm = &self.sms[s];
        let n = sm.warps.len();
        (0..n).map(|k| (sm.rr + k) % n).find(|&i| {
            let w = &sm.warps[i];
            match &w.state {
                WState::Ready => match &w.prog[w.pc] {
                    WarpOp::PAcq { flag, .. } => self.flag_visible(flag, w.id.sm).is_some(),
                    _ => true,
                },
                WState::DelayUntil(t) => *t <= self.now,
                _ => false,
            }
        })
    }

    /// L1 slot of `line` if present.
    fn lookup(&self, s: usize, line: u64) -> Option<usize> {
        let sm = &self.sms[s];
        let ways = (sm.l1.len() as u32 / sm.sets) as usize;
        let set = (line % sm.sets as u64) as usize;
        (set * ways..set * ways + ways).find(|&i| sm.l1[i].valid && sm.l1[i].tag == line)
    }

    /// Victim slot for `line`: an invalid way, else the least recently used.
    fn victim(&self, s: usize, line: u64) -> usize {
        let sm = &self.sms[s];
        let ways = (sm.l1.len() as u32 / sm.sets) as usize;
        let set = (line % sm.sets as u64) as usize;
        (set * ways..set * ways + ways)
            .min_by_key(|&i| (sm.l1[i].valid, sm.l1[i].lru))
            .unwrap()
    }

    fn cycle_sm(&mut self, s: usize, now: u64) -> bool {
        // Acknowledgement due this cycle (one per cycle, in flush order).
        let mut inp = PbIn::idle();
        let mut durable_changed = false;
        if let Some(&(due, id, _)) = self.sms[s].inflight.front() {
            if due <= now {
                inp.ack = true;
                let (_, _, cells) = self.sms[s].inflight.pop_front().unwrap();
                for (a, v) in cells {
                    self.durable.insert(a, v);
                    self.durable_at.entry((a, v)).or_insert(now);
                }
                if self.recording {
                    self.record.push(Event::Durable { id, cycle: now });
                }
                durable_changed = true;
            }
        }
        // Kernel end: every warp of every SM has finished.
        let all_done = self
            .sms
            .iter()
            .all(|sm| sm.warps.iter().all(|w| w.state == WState::Done));
        inp.drain_all = all_done;

        // Barrier release: every unfinished warp of the SM has arrived.
        let live: Vec<&Warp> = self.sms[s]
            .warps
            .iter()
            .filter(|w| w.state != WState::Done)
            .collect();
        if !live.is_empty() && live.iter().all(|w| matches!(w.state, WState::Barrier(_))) {
            for w in &mut self.sms[s].warps {
                if let WState::Barrier(_) = w.state {
                    w.state = WState::Ready;
                    w.pc += 1;
                    self.last_progress = now;
                }
            }
            self.finish_warps(s);
        }

        // The acting warp and its request, if it needs the unit.
        let picked = self.pick(s);
        let mut plan: Option<(usize, Op, u32, Option<usize>)> = None; // warp, op, line slot, slot to install
        if let Some(wi) = picked {
            self.sms[s].rr = (wi + 1) % self.sms[s].warps.len();
            if let WState::DelayUntil(_) = self.sms[s].warps[wi].state {
                self.sms[s].warps[wi].state = WState::Ready;
                self.advance(s, wi);
            } else {
                let w = &self.sms[s].warps[wi];
                let op = w.prog[w.pc].clone();
                match op {
                    WarpOp::StPm { addr, .. } | WarpOp::LdPm { addr } => {
                        let line = self.line_of(addr);
                        let is_store = matches!(op, WarpOp::StPm { .. });
                        match self.lookup(s, line) {
                            Some(slot) => {
                                if is_store {
                                    plan = Some((wi, Op::Store, slot as u32, None));
                                } else {
                                    self.touch(s, slot);
                                    self.sms[s].warps[wi].last_load_miss.insert(addr, false);
                                    self.advance(s, wi);
                                }
                            }
                            None => {
                                let v = self.victim(s, line);
                                if self.sms[s].l1[v].valid && self.sms[s].l1[v].dirty {
                                    plan = Some((wi, Op::Evict, v as u32, None));
                                } else if is_store {
                                    plan = Some((wi, Op::Store, v as u32, Some(v)));
                                } else {
                                    self.install(s, v, line);
                                    self.sms[s].warps[wi].last_load_miss.insert(addr, true);
                                    self.advance(s, wi);
                                }
                            }
                        }
                    }
                    WarpOp::StVol { .. } | WarpOp::LdVol { .. } => self.advance(s, wi),
                    WarpOp::Delay { cycles } => {
                        self.sms[s].warps[wi].state = WState::DelayUntil(now + cycles as u64);
                    }
                    WarpOp::Barrier => {
                        let w = &mut self.sms[s].warps[wi];
                        w.barriers += 1;
                        w.state = WState::Barrier(w.barriers);
                    }
                    WarpOp::OFence => plan = Some((wi, Op::OFence, 0, None)),
                    WarpOp::DFence => plan = Some((wi, Op::DFence, 0, None)),
                    WarpOp::PAcq { scope, .. } => {
                        let o = if scope == Scope::Block {
                            Op::AcqBlock
                        } else {
                            Op::AcqDevice
                        };
                        plan = Some((wi, o, 0, None));
                    }
                    WarpOp::PRel { scope, .. } => {
                        let o = if scope == Scope::Block {
                            Op::RelBlock
                        } else {
                            Op::RelDevice
                        };
                        plan = Some((wi, o, 0, None));
                    }
                }
            }
        }
        if let Some((wi, op, slot, _)) = plan {
            inp.req_valid = true;
            inp.req_op = op as u8;
            inp.req_warp = self.sms[s].warps[wi].id.warp as u8;
            inp.req_line = slot;
            self.summary.requests += 1;
        }

        let out = self.sms[s].unit.step(&inp);
        self.max_actr = self.max_actr.max(out.obs_actr);
        self.summary.max_occupancy = self
            .summary
            .max_occupancy
            .max(out.count(self.sms[s].unit.params()));

        // Flush first: it carries the line's data as it is before this cycle's store.
        if out.flush_valid {
            self.flush(s, out.flush_line as usize, out.flush_evict, now);
        }
        if let Some((wi, op, slot, install)) = plan {
            self.respond(s, wi, op, slot as usize, install, &out, now);
        }
        // After this cycle's store: a line it dirtied is not invalidated.
        if out.inv_pm {
            for l in &mut self.sms[s].l1 {
                if l.valid && !l.dirty {
                    l.valid = false;
                }
            }
        }
        // Warps waiting on the unit resume once their stall bit is seen low.
        for wi in 0..self.sms[s].warps.len() {
            let bit = out.stall >> self.sms[s].warps[wi].id.warp & 1 == 1;
            if let WState::WaitUnit {
                since,
                publish,
                retry,
            } = self.sms[s].warps[wi].state.clone()
            {
                if now > since && !bit {
                    let w = &mut self.sms[s].warps[wi];
                    w.state = WState::Ready;
                    w.stall_intervals.push((since, now));
                    if let Some((flag, seq)) = publish {
                        let rel = w.id;
                        self.publish(flag, rel, seq, Scope::Device);
                    }
                    if retry {
                        self.last_progress = now;
                    } else {
                        self.advance(s, wi);
                    }
                }
            }
        }
        if all_done && out.idle && self.sms[s].inflight.is_empty() {
            self.sms[s].drained = true;
        }
        if now - self.last_progress > self.cfg.deadlock_cycles && self.summary.deadlock.is_none() {
            let waiting: Vec<String> = self
                .sms
                .iter()
                .flat_map(|sm| sm.warps.iter())
                .filter(|w| w.state != WState::Done)
                .map(|w| format!("{} at op {} ({:?})", w.id, w.pc, w.state))
                .collect();
            self.summary.deadlock = Some(format!(
                "no progress for {} cycles; waiting warps: {}",
                self.cfg.deadlock_cycles,
                waiting.join(", ")
            ));
        }
        durable_changed
    }

    fn touch(&mut self, s: usize, slot: usize) {
        self.sms[s].l1[slot].lru = self.now;
    }

    fn install(&mut self, s: usize, slot: usize, line: u64) {
        let now = self.now;
        let l = &mut self.sms[s].l1[slot];
        *l = Line {
            valid: true,
            tag: line,
            dirty: false,
            lru: now,
            words: BTreeMap::new(),
        };
    }

    fn flush(&mut self, s: usize, slot: usize, evict: bool, now: u64) {
        let id = self.next_flush;
        self.next_flush += 1;
        let lb = self.cfg.line_bytes;
        let l = &mut self.sms[s].l1[slot];
        let cells: Vec<(u64, u64)> = l.words.iter().map(|(a, v)| (*a, *v)).collect();
        l.dirty = false;
        if evict {
            l.valid = false;
        }
        let line_addr = l.tag * lb;
        self.first_flush.entry(line_addr).or_insert(now);
        *self.flush_count.entry(line_addr).or_insert(0) += 1;
        self.summary.flushes += 1;
        self.summary.evict_flushes += evict as u64;
        if self.recording {
            self.record.push(Event::Flush {
                id,
                sm: s as u32,
                cells: cells.clone(),
                evict,
                cycle: now,
            });
        }
        let due = now + self.cfg.pm_latency as u64;
        self.sms[s].inflight.push_back((due, id, cells));
        self.last_progress = now;
    }

    #[allow(clippy::too_many_arguments)]
    fn respond(
        &mut self,
        s: usize,
        wi: usize,
        op: Op,
        slot: usize,
        install: Option<usize>,
        out: &PbOut,
        now: u64,
    ) {
        if out.req_wait {
            let w = &mut self.sms[s].warps[wi];
            w.state = WState::WaitUnit {
                since: now,
                publish: None,
                retry: true,
            };
            w.stalled_ever = true;
            self.summary.waits += 1;
            return;
        }
        if !out.req_ready {
            self.summary.refused += 1;
            return;
        }
        self.last_progress = now;
        let wid = self.sms[s].warps[wi].id;
        let seq = self.sms[s].warps[wi].pc as u32;
        let wop = self.sms[s].warps[wi].prog[self.sms[s].warps[wi].pc].clone();
        match op {
            Op::Evict => {
                // The victim is gone (flushed by this request, or clean); the
                // warp's access retries next time it is picked.
                self.sms[s].l1[slot].valid = false;
            }
            Op::Store => {
                if let WarpOp::StPm { addr, value } = wop {
                    if let Some(v) = install {
                        let line = self.line_of(addr);
                        self.install(s, v, line);
                    }
                    self.touch(s, slot);
                    let l = &mut self.sms[s].l1[slot];
                    l.words.insert(addr, value);
                    l.dirty = true;
                    self.summary.persists += 1;
                    if self.recording {
                        self.record.push(Event::Persist {
                            sm: wid.sm,
                            warp: wid.warp,
                            seq,
                            addr,
                            value,
                            cycle: now,
                        });
                    }
                    self.advance(s, wi);
                }
            }
            _ => {
                let flag = match &wop {
                    WarpOp::PAcq { flag, .. } | WarpOp::PRel { flag, .. } => Some(flag.clone()),
                    _ => None,
                };
                if self.recording {
                    self.record.push(Event::Ordering {
                        sm: wid.sm,
                        warp: wid.warp,
                        seq,
                        op: op_name(&wop).to_string(),
                        flag: flag.clone(),
                        cycle: now,
                    });
                }
                if let WarpOp::PAcq { flag, .. } = &wop {
                    if let Some((rel, rseq)) = self.flag_visible(flag, wid.sm) {
                        if self.recording {
                            self.record.push(Event::Match {
                                acq_sm: wid.sm,
                                acq_warp: wid.warp,
                                acq_seq: seq,
                                rel_sm: rel.sm,
                                rel_warp: rel.warp,
                                rel_seq: rseq,
                            });
                        }
                    }
                }
                let publish_now = matches!(
                    &wop,
                    WarpOp::PRel {
                        scope: Scope::Block,
                        ..
                    }
                );
                if publish_now {
                    self.publish(flag.clone().unwrap(), wid, seq, Scope::Block);
                }
                if op.stalls_in_odm() {
                    let publish = match &wop {
                        WarpOp::PRel {
                            scope: Scope::Device,
                            flag,
                        } => Some((flag.clone(), seq)),
                        _ => None,
                    };
                    let w = &mut self.sms[s].warps[wi];
                    w.state = WState::WaitUnit {
                        since: now,
                        publish,
                        retry: false,
                    };
                    w.stalled_ever = true;
                } else {
                    self.advance(s, wi);
                }
            }
        }
    }

    fn advance(&mut self, s: usize, wi: usize) {
        let w = &mut self.sms[s].warps[wi];
        w.pc += 1;
        if w.state == WState::Ready && w.pc >= w.prog.len() {
            w.state = WState::Done;
        }
        self.last_progress = self.now;
        self.finish_warps(s);
    }

    fn finish_warps(&mut self, s: usize) {
        for w in &mut self.sms[s].warps {
            if w.state == WState::Ready && w.pc >= w.prog.len() {
                w.state = WState::Done;
            }
        }
    }

    /// Runs until the trace is finished, `max_cycles` have passed, a deadlock is
    /// found, or `keep_going` returns false.
    pub fn run(&mut self, max_cycles: u64, mut keep_going: impl FnMut(&FrontEnd) -> bool) {
        let end = self.now + max_cycles;
        while self.now < end {
            if self.finished() {
                self.summary.finished = true;
                return;
            }
            if self.summary.deadlock.is_some() {
                return;
            }
            self.cycle();
            if !keep_going(self) {
                self.summary.stopped = true;
                return;
            }
        }
        self.summary.finished = self.finished();
    }

    /// Checks the trace's expectations against this run; one message per failure.
    pub fn check(&self, t: &Trace) -> Vec<String> {
        let mut fails = vec![];
        let warp = |id: &WarpId| {
            self.sms
                .get(id.sm as usize)
                .and_then(|sm| sm.warps.iter().find(|w| w.id == *id))
        };
        let mut watch_i = 0;
        for e in &t.expects {
            let at = format!("line {}", e.line);
            match &e.what {
                Expect::Stall(id) => match warp(id) {
                    Some(w) if w.stalled_ever => {}
                    Some(_) => fails.push(format!("{at}: warp {id} never stalled")),
                    None => fails.push(format!("{at}: no warp {id} in the trace")),
                },
                Expect::NoStall(id) => match warp(id) {
                    Some(w) if !w.stalled_ever => {}
                    Some(w) => fails.push(format!(
                        "{at}: warp {id} stalled (cycles {:?})",
                        w.stall_intervals
                    )),
                    None => fails.push(format!("{at}: no warp {id} in the trace")),
                },
                Expect::Order(a, b) => {
                    let la = self.line_of(*a) * self.cfg.line_bytes;
                    let lb = self.line_of(*b) * self.cfg.line_bytes;
                    match (self.first_flush.get(&la), self.first_flush.get(&lb)) {
                        (Some(x), Some(y)) if x < y => {}
                        (x, y) => fails.push(format!(
                            "{at}: first flush of {a:#x} at {x:?}, of {b:#x} at {y:?}: expected the first before the second"
                        )),
                    }
                }
                Expect::Forbid(a, b) => {
                    if let Some(c) = self.watch_hits[watch_i] {
                        fails.push(format!(
                            "{at}: forbidden durable state at cycle {c}: {a} durable while {b} is not"
                        ));
                    }
                    watch_i += 1;
                }
                Expect::Occurs(a, b) => {
                    if self.watch_hits[watch_i].is_none() {
                        fails.push(format!(
                            "{at}: the state {a} durable while {b} is not never occurred"
                        ));
                    }
                    watch_i += 1;
                }
                Expect::Resume(id, cell, within) => {
                    let d = self.durable_at.get(&(cell.addr, cell.value));
                    match (warp(id).and_then(|w| w.stall_intervals.last()), d) {
                        (Some(&(_, end)), Some(&d)) if end > d && end <= d + *within as u64 => {}
                        (iv, d) => fails.push(format!(
                            "{at}: warp {id} last stall {iv:?}, {cell} durable at {d:?}: expected the stall to end within {within} cycles after"
                        )),
                    }
                }
                Expect::LoadMiss(id, addr) => {
                    match warp(id).and_then(|w| w.last_load_miss.get(addr)) {
                        Some(true) => {}
                        other => fails.push(format!(
                            "{at}: last PM load of {addr:#x} by {id}: expected a miss, got {}",
                            match other {
                                Some(false) => "a hit",
                                _ => "no load",
                            }
                        )),
                    }
                }
                Expect::Flushes(a, n) => {
                    let la = self.line_of(*a) * self.cfg.line_bytes;
                    let got = self.flush_count.get(&la).copied().unwrap_or(0);
                    if got != *n {
                        fails.push(format!(
                            "{at}: line of {a:#x} flushed {got} times, expected {n}"
                        ));
                    }
                }
                Expect::MaxActr(n) => {
                    if self.max_actr > *n {
                        fails.push(format!(
                            "{at}: ACTR reached {}, expected at most {n}",
                            self.max_actr
                        ));
                    }
                }
                Expect::Early(a, cell) => {
                    let la = self.line_of(*a) * self.cfg.line_bytes;
                    let f = self.first_flush.get(&la);
                    let d = self.durable_at.get(&(cell.addr, cell.value));
                    match (f, d) {
                        (Some(f), Some(d)) if f < d => {}
                        (f, d) => fails.push(format!(
                            "{at}: first flush of {a:#x} at {f:?}, {cell} durable at {d:?}: expected the flush first"
                        )),
                    }
                }
                Expect::AllDurable => {
                    if !self.finished() {
                        fails.push(format!("{at}: the run did not finish"));
                    }
                    // L1s are not coherent: per SM, the last value each address
                    // was given must have reached the persistence domain.
                    let mut last: HashMap<(u32, u64), u64> = HashMap::new();
                    let mut flushed: HashMap<u64, (u32, &Cells)> = HashMap::new();
                    let mut durable: std::collections::HashSet<(u32, u64, u64)> =
                        std::collections::HashSet::new();
                    for ev in &self.record {
                        match ev {
                            Event::Persist {
                                sm, addr, value, ..
                            } => {
                                last.insert((*sm, *addr), *value);
                            }
                            Event::Flush { id, sm, cells, .. } => {
                                flushed.insert(*id, (*sm, cells));
                            }
                            Event::Durable { id, .. } => {
                                if let Some((sm, cells)) = flushed.get(id) {
                                    durable.extend(cells.iter().map(|(a, v)| (*sm, *a, *v)));
                                }
                            }
                            _ => {}
                        }
                    }
                    let mut missing: Vec<_> = last
                        .iter()
                        .filter(|((sm, a), v)| !durable.contains(&(*sm, *a, **v)))
                        .collect();
                    missing.sort();
                    if let Some(((sm, a), v)) = missing.first() {
                        fails.push(format!(
                            "{at}: {} last stores never became durable, first: SM {sm} {a:#x}={v}",
                            missing.len()
                        ));
                    }
                }
            }
        }
        fails
    }

    /// Access to SM `s`'s unit (for observation by testbenches).
    pub fn unit(&self, s: usize) -> &dyn PbUnit {
        self.sms[s].unit.as_ref()
    }
}
