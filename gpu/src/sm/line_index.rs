//! The L1's tag lookup (`docs/model.md`, "L1"): which slot holds a line.
//! The L1 is fully associative (512 ways), so a lookup cannot scan a set;
//! this is an open-addressing table (linear probing, at most half full,
//! deletion by backward shift), a few instructions per lookup where a
//! general hash map costs several times that on the SM's hottest path.

/// No line: line numbers are addresses over the line size, never this.
const EMPTY: u64 = u64::MAX;

#[derive(Clone, Copy)]
struct Cell {
    line: u64,
    slot: u32,
}

/// Line number -> slot, for at most `lines` lines at once.
pub struct LineIndex {
    cells: Vec<Cell>,
    mask: usize,
    shift: u32,
}

impl LineIndex {
    pub fn new(lines: usize) -> LineIndex {
        let cap = (2 * lines.max(1)).next_power_of_two().max(4);
        LineIndex {
            cells: vec![
                Cell {
                    line: EMPTY,
                    slot: 0
                };
                cap
            ],
            mask: cap - 1,
            shift: 64 - cap.trailing_zeros(),
        }
    }

    /// Home cell of a line (Fibonacci hashing: neighbouring lines spread).
    #[inline]
    fn home(&self, line: u64) -> usize {
        (line.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The cell holding `line`, if any.
    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        let mut i = self.home(line);
        loop {
            let c = self.cells[i].line;
            if c == line {
                return Some(i);
            }
            if c == EMPTY {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    #[inline]
    pub fn get(&self, line: u64) -> Option<u32> {
        self.find(line).map(|i| self.cells[i].slot)
    }

    /// Maps `line` to `slot` (replacing an earlier slot of the line).
    pub fn insert(&mut self, line: u64, slot: u32) {
        debug_assert_ne!(line, EMPTY);
        let mut i = self.home(line);
        loop {
            let c = self.cells[i].line;
            if c == line || c == EMPTY {
                self.cells[i] = Cell { line, slot };
                return;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Unmaps `line`; the cells after it in its run move back so that no
    /// lookup stops early at the hole.
    pub fn remove(&mut self, line: u64) {
        let Some(mut hole) = self.find(line) else {
            return;
        };
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let c = self.cells[j];
            if c.line == EMPTY {
                break;
            }
            // `c` may fill the hole if its home is not in (hole, j].
            let h = self.home(c.line);
            let stays = if hole < j {
                hole < h && h <= j
            } else {
                hole < h || h <= j
            };
            if !stays {
                self.cells[hole] = c;
                hole = j;
            }
        }
        self.cells[hole].line = EMPTY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Random inserts and removes agree with a HashMap, with the table
    /// kept at its fill limit so runs wrap and collide.
    #[test]
    fn agrees_with_a_hash_map() {
        let mut ix = LineIndex::new(64);
        let mut map: HashMap<u64, u32> = HashMap::new();
        let mut x = 7u64;
        let mut rnd = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        for step in 0..200_000u32 {
            // Lines from a small range (neighbours) or far apart.
            let line = if rnd(2) == 0 {
                rnd(200)
            } else {
                rnd(1 << 40) << 7
            };
            if rnd(2) == 0 && map.len() < 64 {
                ix.insert(line, step);
                map.insert(line, step);
            } else {
                ix.remove(line);
                map.remove(&line);
                if let Some(&k) = map.keys().next() {
                    if rnd(4) == 0 {
                        ix.remove(k);
                        map.remove(&k);
                    }
                }
            }
            assert_eq!(ix.get(line), map.get(&line).copied(), "step {step}");
        }
        for (&k, &v) in &map {
            assert_eq!(ix.get(k), Some(v));
        }
        assert_eq!(
            ix.cells.iter().filter(|c| c.line != EMPTY).count(),
            map.len()
        );
    }
}
