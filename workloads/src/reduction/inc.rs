//! Reduction's invariant incrementally (`crate::incremental`): one unit per
//! tree of each launch, one per launch's final-tree clause, one per
//! `g_odata` slot; a word is read by its tree and, as a tree's first slot
//! or a `g_odata` slot, by the clauses that read results. Recovery leaves
//! the image as it is.

use super::{Reduction, BLOCKS, THREADS, TREES};
use crate::incremental::{reevaluate, Broken, Incremental};
use crate::PmImage;

pub(super) struct ReductionInc<'a> {
    app: &'a Reduction,
    broken: Broken,
    units: Vec<usize>,
}

#[derive(Clone, Copy)]
enum Unit {
    Tree(u64, u32),
    Final(u64),
    GOdata(u32),
}

impl<'a> ReductionInc<'a> {
    pub(super) fn new(app: &'a Reduction, img: &PmImage) -> ReductionInc<'a> {
        let mut s = ReductionInc {
            app,
            broken: Broken::new(s_units(app)),
            units: vec![],
        };
        for u in 0..s_units(app) {
            s.broken.set(u, ok(app, img, u));
        }
        s
    }
}

fn s_units(app: &Reduction) -> usize {
    (app.launches * TREES + app.launches + TREES) as usize
}

fn index(app: &Reduction, u: Unit) -> usize {
    (match u {
        Unit::Tree(l, t) => l * TREES + t as u64,
        Unit::Final(l) => app.launches * TREES + l,
        Unit::GOdata(i) => app.launches * TREES + app.launches + i as u64,
    }) as usize
}

fn unit(app: &Reduction, k: usize) -> Unit {
    let k = k as u64;
    let trees = app.launches * TREES;
    if k < trees {
        Unit::Tree(k / TREES, (k % TREES) as u32)
    } else if k < trees + app.launches {
        Unit::Final(k - trees)
    } else {
        Unit::GOdata((k - trees - app.launches) as u32)
    }
}

fn ok(app: &Reduction, img: &PmImage, k: usize) -> bool {
    match unit(app, k) {
        Unit::Tree(l, t) => app.check_tree(img, l, t).is_ok(),
        Unit::Final(l) => app.check_final(img, l).is_ok(),
        Unit::GOdata(i) => app.check_g_odata(img, i).is_ok(),
    }
}

impl ReductionInc<'_> {
    /// The units reading the word at `a`.
    fn readers(&mut self, a: u64) {
        let app = self.app;
        let l = &app.lay;
        let region = THREADS as u64 * 4;
        let (l_of, tree) =
            if (l.sdata..l.sdata + app.launches * BLOCKS as u64 * region).contains(&a) {
                let r = (a - l.sdata) / region;
                (r / BLOCKS as u64, (r % BLOCKS as u64) as u32)
            } else if (l.fin..l.fin + app.launches * region).contains(&a) {
                ((a - l.fin) / region, BLOCKS)
            } else if (l.g_odata..l.g_odata + TREES * 8).contains(&a) {
                if (a - l.g_odata).is_multiple_of(8) {
                    let i = ((a - l.g_odata) / 8) as u32;
                    self.units.push(index(app, Unit::GOdata(i)));
                    if i < BLOCKS {
                        for k in 0..app.launches {
                            self.units.push(index(app, Unit::Final(k)));
                        }
                    }
                }
                return;
            } else {
                return;
            };
        self.units.push(index(app, Unit::Tree(l_of, tree)));
        if tree == BLOCKS {
            self.units.push(index(app, Unit::Final(l_of)));
        }
        if a == app.region(l_of, tree) {
            self.units.push(index(app, Unit::GOdata(tree)));
            self.units.push(index(app, Unit::Final(l_of)));
        }
    }
}

impl Incremental for ReductionInc<'_> {
    fn update(&mut self, img: &PmImage, changed: &[u64]) -> bool {
        for &a in changed {
            self.readers(a);
        }
        let app = self.app;
        reevaluate(&mut self.broken, &mut self.units, |k| ok(app, img, k));
        self.broken.none()
    }
}
