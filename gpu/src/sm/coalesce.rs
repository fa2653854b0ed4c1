//! The coalescer (`docs/model.md`, "Coalescing"): a warp-level memory
//! instruction's active lanes become one access per 128-byte line with the
//! mask of 32-byte sectors it touches, and, when the run is recorded, the
//! words each lane writes.

use sbrp_trace::program::{Addrs, Values};

/// One line an instruction touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineAcc {
    pub line: u64,
    pub sectors: u8,
    /// The lanes' written words: `cells[first..first + count]`.
    pub first: u32,
    pub count: u32,
}

/// Splits an access into lines (in order of first touch) into `out`, and
/// the written words into `cells` when `values` is given.
#[allow(clippy::too_many_arguments)]
pub fn coalesce(
    mask: u32,
    size: u8,
    addrs: &Addrs,
    values: Option<&Values>,
    line_bytes: u64,
    sector_bytes: u64,
    out: &mut Vec<LineAcc>,
    cells: &mut Vec<(u64, u64)>,
) {
    out.clear();
    cells.clear();
    let size = size.max(1) as u64;
    // Lane words grouped by line: collected per lane, then gathered.
    let mut lane_line: [u32; 32] = [0; 32];
    let mut lanes: [(u64, u64); 32] = [(0, 0); 32];
    let mut n = 0usize;
    let mut rank = 0usize;
    let mut m = mask;
    while m != 0 {
        let lane = m.trailing_zeros();
        m &= m - 1;
        let a = addrs.lane(lane, rank);
        let line = a / line_bytes;
        let off = a % line_bytes;
        let last = ((off + size - 1).min(line_bytes - 1)) / sector_bytes;
        let mut sec = 0u8;
        for s in off / sector_bytes..=last {
            sec |= 1 << s;
        }
        let li = match out.iter().position(|l| l.line == line) {
            Some(i) => i,
            None => {
                out.push(LineAcc {
                    line,
                    sectors: 0,
                    first: 0,
                    count: 0,
                });
                out.len() - 1
            }
        };
        out[li].sectors |= sec;
        if let Some(v) = values.and_then(|v| v.get(rank)) {
            lane_line[n] = li as u32;
            lanes[n] = (a, v);
            n += 1;
        }
        rank += 1;
    }
    if n > 0 {
        for (li, acc) in out.iter_mut().enumerate() {
            acc.first = cells.len() as u32;
            for k in 0..n {
                if lane_line[k] as usize == li {
                    cells.push(lanes[k]);
                }
            }
            acc.count = cells.len() as u32 - acc.first;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_words_fill_one_line_and_four_sectors() {
        let (mut out, mut cells) = (vec![], vec![]);
        let a = Addrs::Strided {
            base: 0x1000,
            stride: 4,
        };
        coalesce(!0, 4, &a, None, 128, 32, &mut out, &mut cells);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].line, 0x1000 / 128);
        assert_eq!(out[0].sectors, 0xf);
        assert!(cells.is_empty());
    }

    #[test]
    fn scattered_lanes_touch_one_line_each_with_values() {
        let (mut out, mut cells) = (vec![], vec![]);
        let a = Addrs::Strided {
            base: 0x2000 + 40,
            stride: 256,
        };
        let v = Values::Seq { first: 5, step: 1 };
        coalesce(0b1011, 8, &a, Some(&v), 128, 32, &mut out, &mut cells);
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|l| l.sectors == 0b0010));
        assert_eq!(out[2].line, (0x2000 + 40 + 3 * 256) / 128);
        assert_eq!(cells[out[2].first as usize], (0x2000 + 40 + 768, 7));
    }

    #[test]
    fn broadcast_is_one_sector() {
        let (mut out, mut cells) = (vec![], vec![]);
        let a = Addrs::Strided {
            base: 0x3000 + 100,
            stride: 0,
        };
        coalesce(!0, 4, &a, None, 128, 32, &mut out, &mut cells);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].sectors, 0b1000);
    }
}
