//! SRAD's invariant incrementally (`crate::incremental`): one unit per
//! pixel (its coefficient clause and its J_out clause), plus the words of
//! the six PM arrays that hold no f32. Recovery leaves the image as it is.

use std::collections::HashSet;

use super::{bits, Srad};
use crate::incremental::{reevaluate, Broken, Incremental};
use crate::PmImage;

pub(super) struct SradInc<'a> {
    app: &'a Srad,
    broken: Broken,
    /// Words in the arrays above u32::MAX.
    not_f32: HashSet<u64>,
    units: Vec<usize>,
}

impl<'a> SradInc<'a> {
    pub(super) fn new(app: &'a Srad, img: &PmImage) -> SradInc<'a> {
        let mut s = SradInc {
            app,
            broken: Broken::new(app.pixels() as usize),
            not_f32: HashSet::new(),
            units: vec![],
        };
        for (&a, &v) in img.words.iter() {
            if v > u32::MAX as u64 && s.plane_of(a).is_some() {
                s.not_f32.insert(a);
            }
        }
        for i in 0..app.pixels() as usize {
            s.broken.set(i, pixel_ok(app, img, i));
        }
        s
    }

    /// (array base, is C) of an address in one of the six arrays.
    fn plane_of(&self, a: u64) -> Option<(u64, bool)> {
        let l = &self.app.lay;
        let len = self.app.pixels() * 4;
        [l.c, l.n, l.s, l.e, l.w, l.jout]
            .into_iter()
            .find(|&b| (b..b + len).contains(&a))
            .map(|b| (b, b == l.c))
    }
}

fn f32_at(img: &PmImage, a: u64) -> Option<f32> {
    img.words.get(&a).map(|&v| f32::from_bits(v as u32))
}

/// `App::check`'s clauses for pixel `i`.
fn pixel_ok(app: &Srad, img: &PmImage, i: usize) -> bool {
    let l = &app.lay;
    let (side, last) = (app.side, app.side - 1);
    let (r, cc) = (i as u64 / side, i as u64 % side);
    let persisted = |p: usize| matches!(f32_at(img, l.c + 4 * p as u64), Some(f) if f >= 0.0);
    let word = |base: u64| img.words.get(&(base + 4 * i as u64)).copied();
    if persisted(i) {
        let want = [
            (l.c, app.c[i]),
            (l.n, app.dn[i]),
            (l.s, app.ds[i]),
            (l.e, app.de[i]),
            (l.w, app.dw[i]),
        ];
        if want.iter().any(|&(b, f)| word(b) != Some(bits(f))) {
            return false;
        }
    }
    if let Some(f) = f32_at(img, l.jout + 4 * i as u64).filter(|f| *f >= 0.0) {
        let around = [(r, cc), ((r + 1).min(last), cc), (r, (cc + 1).min(last))];
        if around.iter().any(|&(rr, c2)| !persisted(app.idx(rr, c2))) {
            return false;
        }
        if bits(f) != bits(app.jout[i]) {
            return false;
        }
    }
    true
}

impl Incremental for SradInc<'_> {
    fn update(&mut self, img: &PmImage, changed: &[u64]) -> bool {
        let side = self.app.side;
        for &a in changed {
            let Some((base, is_c)) = self.plane_of(a) else {
                continue;
            };
            if img.get(a) > u32::MAX as u64 {
                self.not_f32.insert(a);
            } else {
                self.not_f32.remove(&a);
            }
            if !(a - base).is_multiple_of(4) {
                continue;
            }
            let i = ((a - base) / 4) as usize;
            self.units.push(i);
            if is_c {
                // Pixels whose J_out clause reads this coefficient.
                let (r, cc) = (i as u64 / side, i as u64 % side);
                if r > 0 {
                    self.units.push(i - side as usize);
                }
                if cc > 0 {
                    self.units.push(i - 1);
                }
            }
        }
        let app = self.app;
        reevaluate(&mut self.broken, &mut self.units, |i| pixel_ok(app, img, i));
        self.broken.none() && self.not_f32.is_empty()
    }
}
