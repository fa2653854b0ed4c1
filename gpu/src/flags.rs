//! Flag words of scoped acquire/release (`docs/model.md`, "Flags"): the
//! value a release stores and when each SM sees it. A block-scope release is
//! seen at once on its own SM and `remote_visibility` cycles later elsewhere
//! (it orders nothing there); a device-scope release is seen everywhere when
//! it completes. Before that, the previous value is seen.

use sbrp_trace::{FlagId, OpRef, Scope};

use crate::sm::l1::LineMap;

#[derive(Clone, Copy, Debug)]
struct Store {
    value: u64,
    sm: u32,
    at: u64,
    remote_at: u64,
    op: Option<(OpRef, Scope)>,
}

#[derive(Clone, Copy, Debug)]
struct Flag {
    id: FlagId,
    cur: Store,
    prev: Store,
}

/// Every flag word the program has released or polled.
#[derive(Default)]
pub struct Flags {
    map: LineMap<Flag>,
    /// Flag addresses by id (first use order).
    pub names: Vec<u64>,
}

const ZERO: Store = Store {
    value: 0,
    sm: u32::MAX,
    at: 0,
    remote_at: 0,
    op: None,
};

impl Flags {
    fn get(&mut self, addr: u64) -> &mut Flag {
        let n = self.names.len() as FlagId;
        let names = &mut self.names;
        self.map.entry(addr).or_insert_with(|| {
            names.push(addr);
            Flag {
                id: n,
                cur: ZERO,
                prev: ZERO,
            }
        })
    }

    /// The flag's id in the execution record.
    pub fn id(&mut self, addr: u64) -> FlagId {
        self.get(addr).id
    }

    /// The value SM `sm` sees at `now`, and the release that stored it.
    pub fn read(&mut self, addr: u64, sm: u32, now: u64) -> (u64, Option<(OpRef, Scope)>) {
        let f = self.get(addr);
        let seen = |s: &Store| now >= if s.sm == sm { s.at } else { s.remote_at };
        if seen(&f.cur) {
            (f.cur.value, f.cur.op)
        } else {
            (f.prev.value, f.prev.op)
        }
    }

    /// A release by `op` on SM `sm` stores `value` at `now`.
    #[allow(clippy::too_many_arguments)]
    pub fn publish(
        &mut self,
        addr: u64,
        value: u64,
        sm: u32,
        op: OpRef,
        scope: Scope,
        now: u64,
        remote: u64,
    ) {
        let f = self.get(addr);
        f.prev = f.cur;
        f.cur = Store {
            value,
            sm,
            at: now,
            remote_at: now + remote,
            op: Some((op, scope)),
        };
    }
}
