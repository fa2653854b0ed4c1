//! Release flags and their visibility (`docs/trace-format.md`, "Scopes and
//! flag visibility"): flag names interned to small ids at load time, each
//! release with the cycle from which each SM sees it.

use std::collections::HashMap;

use sbrp_trace::{FlagId, OpRef, Scope};

/// One release of a flag.
#[derive(Clone, Debug)]
pub struct Release {
    pub op: OpRef,
    pub scope: Scope,
    /// Per SM: first cycle the flag is visible there.
    pub visible: Vec<u64>,
}

/// Flag names and their releases.
#[derive(Clone, Debug, Default)]
pub struct Flags {
    names: Vec<String>,
    index: HashMap<String, FlagId>,
    releases: Vec<Vec<Release>>,
}

impl Flags {
    /// The id of `name`, new if unseen.
    pub fn intern(&mut self, name: &str) -> FlagId {
        if let Some(&id) = self.index.get(name) {
            return id;
        }
        let id = self.names.len() as FlagId;
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), id);
        self.releases.push(vec![]);
        id
    }

    pub fn name(&self, id: FlagId) -> &str {
        &self.names[id as usize]
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Forgets every flag and release (a new trace).
    pub fn clear(&mut self) {
        self.names.clear();
        self.index.clear();
        self.releases.clear();
    }

    /// The latest release of `flag` visible on `sm` at `now`.
    pub fn visible(&self, flag: FlagId, sm: u32, now: u64) -> Option<&Release> {
        self.releases[flag as usize]
            .iter()
            .rev()
            .find(|r| r.visible[sm as usize] <= now)
    }

    /// Whether `flag` was released at all.
    pub fn released(&self, flag: FlagId) -> bool {
        !self.releases[flag as usize].is_empty()
    }

    /// Some release not yet visible on some SM (progress still to come).
    pub fn pending(&self, now: u64) -> bool {
        self.releases
            .iter()
            .flatten()
            .any(|r| r.visible.iter().any(|&v| v > now))
    }

    /// Publishes a release: at once on its own SM (and everywhere for device
    /// scope), `remote` cycles later on the other SMs.
    pub fn publish(
        &mut self,
        flag: FlagId,
        op: OpRef,
        scope: Scope,
        sms: usize,
        now: u64,
        remote: u64,
    ) {
        let visible = (0..sms)
            .map(|s| {
                if scope == Scope::Device || s as u32 == op.warp.sm {
                    now
                } else {
                    now + remote
                }
            })
            .collect();
        self.releases[flag as usize].push(Release { op, scope, visible });
    }
}
