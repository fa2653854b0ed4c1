//! Invariants kept up to date as a durable image changes word by word
//! (`docs/checker.md`, "Crash campaigns"): a crash campaign at every durable
//! point of a long run cannot afford `App::check` over the whole image at
//! each point. An app splits its invariant into parts ("units"), each
//! reading a few words; after a point's flushes only the parts reading a
//! changed word are evaluated again. The verdict only: the message of a
//! failure comes from `App::check` itself, and campaigns compare the two
//! (`sbrp crash --full-check`, tests).

use crate::PmImage;

/// An app's invariant, incrementally.
pub trait Incremental {
    /// `img` differs from the previous image at `changed` (each address
    /// once); true when `App::check` holds on `img` and on
    /// `App::recover(img)`.
    fn update(&mut self, img: &PmImage, changed: &[u64]) -> bool;
}

/// Which units of an invariant are broken, with a count.
#[derive(Clone, Debug, Default)]
pub struct Broken {
    bad: Vec<bool>,
    count: usize,
}

impl Broken {
    pub fn new(units: usize) -> Broken {
        Broken {
            bad: vec![false; units],
            count: 0,
        }
    }
    /// Unit `u` is now `ok` or not.
    pub fn set(&mut self, u: usize, ok: bool) {
        if self.bad[u] == ok {
            self.bad[u] = !ok;
            if ok {
                self.count -= 1;
            } else {
                self.count += 1;
            }
        }
    }
    pub fn none(&self) -> bool {
        self.count == 0
    }
}

/// Evaluates `units` (duplicates removed) into `broken` with `ok`.
pub fn reevaluate(broken: &mut Broken, units: &mut Vec<usize>, mut ok: impl FnMut(usize) -> bool) {
    units.sort_unstable();
    units.dedup();
    for &u in units.iter() {
        broken.set(u, ok(u));
    }
    units.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_counts_units_not_updates() {
        let mut b = Broken::new(4);
        assert!(b.none());
        b.set(1, false);
        b.set(1, false);
        b.set(3, false);
        assert!(!b.none());
        b.set(1, true);
        assert!(!b.none());
        b.set(3, true);
        b.set(3, true);
        assert!(b.none());
    }
}
