//! The persistency checker (`docs/checker.md`): persist memory order (PMO)
//! per the SBRP paper's Box 2, computed from an execution record alone, and
//! checked at every durability event; the epoch and GPM models' own rules;
//! scoped persistency bugs.
//!
//! - `durability.rs`: when each persist became durable.
//! - `rules.rs`: the walk over the record that applies the rules.
//!
//! PMO, with warps as the threads of Box 2 (the trace is warp-level):
//! intra-thread, a store before an oFence, dFence, pAcq or pRel of its warp
//! precedes every store after it; inter-thread, the stores before a pRel
//! precede the stores after a pAcq that observed it when both scopes contain
//! both warps (block: one CTA of one kernel; device: any); transitively.
//! The durable set is downward-closed under PMO at every durability event
//! iff no ordered pair has the later store durable strictly earlier (or the
//! earlier never), which is what is checked, edge by edge: a violation of a
//! transitive pair shows as one of the edges along its path.

mod durability;
mod rules;

use std::fmt;

use serde::Serialize;

use crate::record::{Execution, OpRef, OrderingOp, RecordError};
use crate::types::Scope;

pub use durability::{Durability, NEVER};

/// Which model's rules to check on top of PMO.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Model {
    /// Box 2's PMO, dFence durability, device-scope release durability.
    #[default]
    Sbrp,
    /// PMO plus: every ordering point of a warp makes durable every store
    /// its SM performed before it, by the time the warp goes on.
    Epoch,
    /// As epoch (GPM's fences add volatile effects only).
    Gpm,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::Sbrp => "sbrp",
            Model::Epoch => "epoch",
            Model::Gpm => "gpm",
        }
    }
}

/// How to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub model: Model,
    /// Violations kept in the report (all are counted).
    pub keep: usize,
}

impl Options {
    /// The rules of `model`, keeping the default number of violations.
    pub fn new(model: Model) -> Options {
        Options {
            model,
            ..Options::default()
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            model: Model::Sbrp,
            keep: 20,
        }
    }
}

/// One persist, located in the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PersistAt {
    pub op: OpRef,
    pub addr: u64,
    pub value: u64,
    /// Cycle the store was performed.
    pub cycle: u64,
    /// Cycle it became durable ([`NEVER`] if it did not).
    pub durable: u64,
}

impl fmt::Display for PersistAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "warp {}#{} op {} [{:#x}]={} (durable {})",
            self.op.warp,
            self.op.inst,
            self.op.seq,
            self.addr,
            self.value,
            at(self.durable)
        )
    }
}

fn at(c: u64) -> String {
    if c == NEVER {
        "never".into()
    } else {
        format!("at cycle {c}")
    }
}

/// The rule that ordered two persists (or a persist before an op's end).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Rule {
    /// Intra-thread PMO: both stores of one warp, this op between them.
    IntraThread { op: OpRef, kind: OrderingOp },
    /// Inter-thread PMO: the earlier store before `rel` (or ordered before
    /// it), the later after `acq`, which observed `rel`.
    InterThread {
        rel: OpRef,
        acq: OpRef,
        rel_scope: Scope,
        acq_scope: Scope,
    },
    /// dFence (or a non-persistent fence): the warp's earlier persists are
    /// durable when it completes.
    DFence { op: OpRef },
    /// A device-scope pRel publishes its flag only after the warp's
    /// earlier persists are durable.
    Release { op: OpRef },
    /// Epoch and GPM: an ordering point of a warp completes only when every
    /// store its SM performed before the point began is durable.
    EpochBarrier { op: OpRef },
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::IntraThread { op, kind } => write!(
                f,
                "intra-thread order across {} (warp {}#{} op {})",
                kind_name(*kind),
                op.warp,
                op.inst,
                op.seq
            ),
            Rule::InterThread {
                rel,
                acq,
                rel_scope,
                acq_scope,
            } => write!(
                f,
                "inter-thread order: pRel.{} (warp {}#{} op {}) observed by pAcq.{} (warp {}#{} op {})",
                scope_name(*rel_scope),
                rel.warp,
                rel.inst,
                rel.seq,
                scope_name(*acq_scope),
                acq.warp,
                acq.inst,
                acq.seq
            ),
            Rule::DFence { op } => write!(
                f,
                "dFence durability (warp {}#{} op {} completed)",
                op.warp, op.inst, op.seq
            ),
            Rule::Release { op } => write!(
                f,
                "release durability (pRel.dev warp {}#{} op {} published)",
                op.warp, op.inst, op.seq
            ),
            Rule::EpochBarrier { op } => write!(
                f,
                "epoch barrier (warp {}#{} op {} completed)",
                op.warp, op.inst, op.seq
            ),
        }
    }
}

pub(crate) fn kind_name(k: OrderingOp) -> String {
    match k {
        OrderingOp::OFence => "oFence".into(),
        OrderingOp::DFence => "dFence".into(),
        OrderingOp::PAcq(s) => format!("pAcq.{}", scope_name(s)),
        OrderingOp::PRel(s) => format!("pRel.{}", scope_name(s)),
    }
}

pub(crate) fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::Block => "block",
        Scope::Device => "dev",
    }
}

/// A broken rule: `earlier` must be durable no later than `later` (or, for
/// the durability rules, than `cycle`, when the op completed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub rule: Rule,
    pub earlier: PersistAt,
    /// The store durable too early (none for the durability rules).
    pub later: Option<PersistAt>,
    /// The cycle at which the durable state broke the rule: `later`
    /// durable without `earlier`, or the op completed without it.
    pub cycle: u64,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.later {
            Some(l) => write!(
                f,
                "cycle {}: {l} is durable before {} ({})",
                self.cycle, self.earlier, self.rule
            ),
            None => write!(
                f,
                "cycle {}: {} is not durable when required ({})",
                self.cycle, self.earlier, self.rule
            ),
        }
    }
}

/// Where a warp instance ran: its CTA, for scopes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WarpPlace {
    pub kernel: u32,
    pub cta: u32,
    /// The warp's index within its CTA.
    pub cta_warp: u32,
}

/// A release observed by an acquire whose scopes do not both contain both
/// warps: the order the program asked for is not guaranteed (a scoped
/// persistency bug, SBRP §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ScopeBug {
    pub rel: OpRef,
    pub rel_scope: Scope,
    pub rel_at: WarpPlace,
    pub acq: OpRef,
    pub acq_scope: Scope,
    pub acq_at: WarpPlace,
    pub cycle: u64,
}

impl fmt::Display for ScopeBug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place =
            |p: &WarpPlace| format!("kernel {} CTA {} warp {}", p.kernel, p.cta, p.cta_warp);
        write!(
            f,
            "cycle {}: pAcq.{} at {} instruction {} observed pRel.{} at {} instruction {}: \
             the scopes do not contain both threads (block scope across CTAs)",
            self.cycle,
            scope_name(self.acq_scope),
            place(&self.acq_at),
            self.acq.seq,
            scope_name(self.rel_scope),
            place(&self.rel_at),
            self.rel.seq
        )
    }
}

/// What the checker found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub model: Model,
    pub persists: u64,
    pub flushes: u64,
    /// Distinct cycles at which the durable state changed.
    pub durable_points: u64,
    /// Ordering edges checked (intra-thread gates, matches, durability rules).
    pub checks: u64,
    pub violations_total: u64,
    /// The first violations by cycle (at most `Options::keep`).
    pub violations: Vec<Violation>,
    /// Every distinct scoped persistency bug (release, acquire pair).
    pub scope_bugs: Vec<ScopeBug>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.violations_total == 0
    }
}

/// A record the checker cannot read.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("inconsistent record: {0}")]
    Inconsistent(String),
}

/// Checks `exec` under `opts.model`'s rules.
pub fn check(exec: &Execution, opts: &Options) -> Result<Report, CheckError> {
    exec.validate()?;
    rules::run(exec, opts)
}

/// The `pmo` expectation (`docs/trace-format.md`): the record's persist
/// memory order violations (intra- and inter-thread) as messages, one per
/// warp (its first), or the reason the record cannot be checked.
pub fn check_pmo(exec: &Execution) -> Vec<String> {
    let opts = Options {
        model: Model::Sbrp,
        keep: usize::MAX,
    };
    let r = match rules::run(exec, &opts) {
        Ok(r) => r,
        Err(e) => return vec![e.to_string()],
    };
    let mut seen = std::collections::HashSet::new();
    r.violations
        .iter()
        .filter(|v| matches!(v.rule, Rule::IntraThread { .. } | Rule::InterThread { .. }))
        .filter(|v| seen.insert(v.later.map(|l| (l.op.warp, l.op.inst))))
        .map(|v| v.to_string())
        .collect()
}

#[cfg(test)]
mod tests;
