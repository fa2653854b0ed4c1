//! The checker's walk (`docs/checker.md`, "Rules"): one pass over the
//! record in event order, each warp instance carrying the latest durability
//! any later store of it must not precede.
//!
//! Per warp: `cur` is the latest durability among its own stores so far;
//! `gate` the latest among every store PMO-before its next store (its own
//! stores before its last ordering op, and the frontiers of the releases it
//! acquired). A release's frontier is `max(cur, gate)` at the release.
//! Durability is a cycle (`NEVER` the largest), so "latest" is a maximum
//! and transitivity comes with it.

use rustc_hash::FxHashMap as HashMap;

use super::durability::Durability;
use super::{CheckError, Model, Options, PersistAt, Report, Rule, ScopeBug, Violation, WarpPlace};
use crate::record::{Event, Execution, OpRef, OrderingOp};
use crate::types::{Scope, WarpId};

/// The latest durability of a set of stores, and the store that has it.
#[derive(Clone, Copy, Debug)]
struct Latest {
    cycle: u64,
    store: Option<usize>,
}

impl Latest {
    const NONE: Latest = Latest {
        cycle: 0,
        store: None,
    };
    fn max(self, o: Latest) -> Latest {
        if o.store.is_some() && (self.store.is_none() || o.cycle > self.cycle) {
            o
        } else {
            self
        }
    }
}

/// What a later store of the warp must not be durable before, and why.
#[derive(Clone, Copy, Debug)]
struct Gate {
    latest: Latest,
    rule: Option<Rule>,
}

#[derive(Clone, Debug)]
struct WarpState {
    cur: Latest,
    gate: Gate,
    /// Ordering ops begun and not yet retired: seq -> (kind, own stores
    /// before it, the SM's stores performed before it began).
    open: HashMap<u32, (OrderingOp, Latest, Latest)>,
}

impl WarpState {
    fn new() -> WarpState {
        WarpState {
            cur: Latest::NONE,
            gate: Gate {
                latest: Latest::NONE,
                rule: None,
            },
            open: HashMap::default(),
        }
    }

    /// The gate moves up to `l` (ordered by `rule`) if that is later.
    fn raise(&mut self, l: Latest, rule: Rule) {
        if l.store.is_some()
            && (self.gate.latest.store.is_none() || l.cycle > self.gate.latest.cycle)
        {
            self.gate = Gate {
                latest: l,
                rule: Some(rule),
            };
        }
    }
}

/// Stores of one SM performed strictly before a cycle: the latest durability.
#[derive(Clone, Copy, Debug)]
struct SmBefore {
    before: Latest,
    at_cycle: u64,
    at: Latest,
}

impl SmBefore {
    fn add(&mut self, cycle: u64, l: Latest) {
        if cycle > self.at_cycle {
            self.before = self.before.max(self.at);
            self.at_cycle = cycle;
            self.at = l;
        } else {
            self.at = self.at.max(l);
        }
    }
    fn strictly_before(&self, cycle: u64) -> Latest {
        if self.at_cycle < cycle {
            self.before.max(self.at)
        } else {
            self.before
        }
    }
}

/// Violations kept before the rest are only counted.
const COLLECT: usize = 100_000;

struct Walk<'a> {
    opts: &'a Options,
    dur: Durability,
    stores: Vec<PersistAt>,
    warps: HashMap<(WarpId, u32), WarpState>,
    places: HashMap<(WarpId, u32), WarpPlace>,
    /// Per release: (frontier, own stores before it, its scope).
    releases: HashMap<OpRef, (Gate, Latest, Scope)>,
    /// Per acquire: its scope, as its `Ordering` event says.
    acquires: HashMap<OpRef, Scope>,
    sms: HashMap<u32, SmBefore>,
    violations: Vec<Violation>,
    total: u64,
    checks: u64,
    scope_bugs: Vec<ScopeBug>,
}

pub fn run(exec: &Execution, opts: &Options) -> Result<Report, CheckError> {
    let mut w = Walk {
        opts,
        dur: Durability::new(exec),
        stores: vec![],
        warps: HashMap::default(),
        places: HashMap::default(),
        releases: HashMap::default(),
        acquires: HashMap::default(),
        sms: HashMap::default(),
        violations: vec![],
        total: 0,
        checks: 0,
        scope_bugs: vec![],
    };
    for e in &exec.events {
        w.event(e)?;
    }
    w.violations
        .sort_by_key(|v| (v.cycle, v.earlier.op.warp, v.earlier.op.seq));
    w.violations.truncate(opts.keep);
    Ok(Report {
        model: opts.model,
        persists: w.stores.len() as u64,
        flushes: w.dur.flushes as u64,
        durable_points: w.dur.points.len() as u64,
        checks: w.checks,
        violations_total: w.total,
        violations: w.violations,
        scope_bugs: w.scope_bugs,
    })
}

fn key(op: &OpRef) -> (WarpId, u32) {
    (op.warp, op.inst)
}

impl Walk<'_> {
    fn place(&self, op: &OpRef) -> WarpPlace {
        // Unit-level records start no warps: one CTA per SM.
        self.places.get(&key(op)).copied().unwrap_or(WarpPlace {
            kernel: 0,
            cta: op.warp.sm,
            cta_warp: op.warp.warp,
        })
    }

    fn violate(&mut self, rule: Rule, earlier: usize, later: Option<usize>, cycle: u64) {
        self.total += 1;
        if self.violations.len() < COLLECT {
            self.violations.push(Violation {
                rule,
                earlier: self.stores[earlier],
                later: later.map(|i| self.stores[i]),
                cycle,
            });
        }
    }

    fn event(&mut self, e: &Event) -> Result<(), CheckError> {
        match e {
            Event::WarpStart {
                warp,
                inst,
                kernel,
                cta,
                cta_warp,
                ..
            } => {
                self.places.insert(
                    (*warp, *inst),
                    WarpPlace {
                        kernel: *kernel,
                        cta: *cta,
                        cta_warp: *cta_warp,
                    },
                );
            }
            Event::Persist { op, cell, cycle } => {
                let d = self.dur.of_persist(op, cell.addr, cell.value, *cycle);
                let i = self.stores.len();
                self.stores.push(PersistAt {
                    op: *op,
                    addr: cell.addr,
                    value: cell.value,
                    cycle: *cycle,
                    durable: d,
                });
                let me = Latest {
                    cycle: d,
                    store: Some(i),
                };
                let ws = self.warps.entry(key(op)).or_insert_with(WarpState::new);
                ws.cur = ws.cur.max(me);
                let gate = ws.gate;
                if let (Some(s1), Some(rule)) = (gate.latest.store, gate.rule) {
                    self.checks += 1;
                    if d < gate.latest.cycle {
                        self.violate(rule, s1, Some(i), d);
                    }
                }
                self.sms
                    .entry(op.warp.sm)
                    .or_insert(SmBefore {
                        before: Latest::NONE,
                        at_cycle: 0,
                        at: Latest::NONE,
                    })
                    .add(*cycle, me);
            }
            Event::Ordering {
                op, kind, cycle, ..
            } => {
                // Stores come in cycle order: those before `cycle` are all in.
                let sm_before = self
                    .sms
                    .get(&op.warp.sm)
                    .map_or(Latest::NONE, |s| s.strictly_before(*cycle));
                let ws = self.warps.entry(key(op)).or_insert_with(WarpState::new);
                let cur = ws.cur;
                ws.raise(
                    cur,
                    Rule::IntraThread {
                        op: *op,
                        kind: *kind,
                    },
                );
                ws.open.insert(op.seq, (*kind, cur, sm_before));
                match kind {
                    OrderingOp::PRel(scope) => {
                        let frontier = ws.gate;
                        self.releases.insert(*op, (frontier, cur, *scope));
                    }
                    OrderingOp::PAcq(scope) => {
                        self.acquires.insert(*op, *scope);
                    }
                    _ => {}
                }
            }
            Event::Match {
                acq,
                acq_scope,
                rel,
                rel_scope: _,
                cycle,
            } => {
                let Some(&(frontier, _, rel_asked)) = self.releases.get(rel) else {
                    return Err(CheckError::Inconsistent(format!(
                        "cycle {cycle}: acquire of warp {} op {} observed release warp {} op {}, \
                         which the record never shows",
                        acq.warp, acq.seq, rel.warp, rel.seq
                    )));
                };
                // The scopes the ops asked for (their `Ordering` events):
                // a unit that acted with others is what is being checked.
                let rel_scope = &rel_asked;
                let acq_scope = self.acquires.get(acq).unwrap_or(acq_scope);
                let (pa, pr) = (self.place(acq), self.place(rel));
                let same_cta = pa.kernel == pr.kernel && pa.cta == pr.cta;
                let contains = |s: Scope| s == Scope::Device || same_cta;
                if !(contains(*acq_scope) && contains(*rel_scope)) {
                    let bug = ScopeBug {
                        rel: *rel,
                        rel_scope: *rel_scope,
                        rel_at: pr,
                        acq: *acq,
                        acq_scope: *acq_scope,
                        acq_at: pa,
                        cycle: *cycle,
                    };
                    if !self
                        .scope_bugs
                        .iter()
                        .any(|b| b.rel == bug.rel && b.acq == bug.acq)
                    {
                        self.scope_bugs.push(bug);
                    }
                    return Ok(());
                }
                let ws = self.warps.entry(key(acq)).or_insert_with(WarpState::new);
                let rule = Rule::InterThread {
                    rel: *rel,
                    acq: *acq,
                    rel_scope: *rel_scope,
                    acq_scope: *acq_scope,
                };
                // The frontier's own rule names where its store came from;
                // the edge that brought it here is this match.
                ws.raise(frontier.latest, rule);
            }
            Event::Retire { op, cycle } => {
                let model = self.opts.model;
                let Some(ws) = self.warps.get_mut(&key(op)) else {
                    return Ok(());
                };
                let Some((kind, own, sm_before)) = ws.open.remove(&op.seq) else {
                    return Ok(());
                };
                let mut need: Vec<(Latest, Rule)> = vec![];
                match (model, kind) {
                    (_, OrderingOp::DFence) => need.push((own, Rule::DFence { op: *op })),
                    (Model::Sbrp, OrderingOp::PRel(Scope::Device)) => {
                        need.push((own, Rule::Release { op: *op }))
                    }
                    _ => {}
                }
                if model != Model::Sbrp {
                    need.push((sm_before, Rule::EpochBarrier { op: *op }));
                }
                for (l, rule) in need {
                    if let Some(s) = l.store {
                        self.checks += 1;
                        if l.cycle > *cycle {
                            self.violate(rule, s, None, *cycle);
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}
