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
    if values.is_none() && fast(mask, size, addrs, line_bytes, sector_bytes, out) {
        return;
    }
    // Lane words grouped by line: collected per lane, then gathered.
    let mut lane_line: [u32; 32] = [0; 32];
    let mut lanes: [(u64, u64); 32] = [(0, 0); 32];
    let mut n = 0usize;
    let mut rank = 0usize;
    let mut m = mask;
    // The previous lane's line: neighbouring lanes mostly share a line.
    let mut prev = usize::MAX;
    // Power-of-two sizes (the usual geometry): shifts, not divisions.
    let pow2 = line_bytes.is_power_of_two() && sector_bytes.is_power_of_two();
    let (lsh, ssh) = (line_bytes.trailing_zeros(), sector_bytes.trailing_zeros());
    while m != 0 {
        let lane = m.trailing_zeros();
        m &= m - 1;
        let a = addrs.lane(lane, rank);
        let (line, off) = if pow2 {
            (a >> lsh, a & (line_bytes - 1))
        } else {
            (a / line_bytes, a % line_bytes)
        };
        let end = (off + size - 1).min(line_bytes - 1);
        let (first, last) = if pow2 {
            (off >> ssh, end >> ssh)
        } else {
            (off / sector_bytes, end / sector_bytes)
        };
        // Sectors first..=last.
        let sec = ((2u32 << last) - (1u32 << first)) as u8;
        let li = match out.get(prev) {
            Some(l) if l.line == line => prev,
            _ => match out.iter().position(|l| l.line == line) {
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
            },
        };
        prev = li;
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

/// Without values to record: a broadcast, or one contiguous run of active
/// lanes each `size` bytes apart, or aligned lanes at most a sector apart,
/// as one byte range (no lane loop). In the last case every sector the
/// range meets holds a byte some lane touches: lane starts are at most a
/// sector apart, and the last lane ends the range.
fn fast(mask: u32, size: u64, addrs: &Addrs, lb: u64, sb: u64, out: &mut Vec<LineAcc>) -> bool {
    let Addrs::Strided { base, stride } = *addrs else {
        return false;
    };
    if mask == 0 {
        return true;
    }
    let lo = mask.trailing_zeros() as u64;
    let hi = 31 - mask.leading_zeros() as u64;
    // In 64 bits: a full mask's run plus one is 2^32, not 0.
    let contiguous = ((mask >> lo) as u64 + 1).is_power_of_two();
    // A base may lie below 0 (wrapping) when lane 0 is inactive; the
    // active lanes' bytes lie below `ADDR_END` (`check_instr`).
    let (start, end) = match stride {
        0 => (base, base + size),
        s if s == size as i64 && contiguous => (
            base.wrapping_add(lo * size),
            base.wrapping_add((hi + 1) * size),
        ),
        // Aligned lanes never cross a line (the lane loop clips such a
        // lane at its line's end).
        s if s > 0
            && s as u64 <= sb
            && (s as u64).is_multiple_of(size)
            && base.is_multiple_of(size)
            && size.is_power_of_two()
            && lb.is_multiple_of(size)
            && contiguous =>
        {
            (
                base.wrapping_add(lo * s as u64),
                base.wrapping_add(hi * s as u64 + size),
            )
        }
        _ => return false,
    };
    // The last lane stops at its line's end, as in the lane loop (any
    // earlier lane's overflow lands in a sector the next lane touches).
    let end = end.min(((end - size) / lb + 1) * lb);
    // Power-of-two sizes (the usual geometry): shifts, not divisions.
    let pow2 = lb.is_power_of_two() && sb.is_power_of_two();
    let (lsh, ssh) = (lb.trailing_zeros(), sb.trailing_zeros());
    let mut a = start;
    while a < end {
        let line = if pow2 { a >> lsh } else { a / lb };
        let line_end = ((line + 1) * lb).min(end);
        let (off, last_off) = (a - line * lb, line_end - 1 - line * lb);
        let (first, last) = if pow2 {
            (off >> ssh, last_off >> ssh)
        } else {
            (off / sb, last_off / sb)
        };
        // Sectors first..=last.
        let sec = ((2u32 << last) - (1u32 << first)) as u8;
        out.push(LineAcc {
            line,
            sectors: sec,
            first: 0,
            count: 0,
        });
        a = line_end;
    }
    true
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

    /// The fast path gives what the lane loop gives.
    #[test]
    fn fast_path_agrees_with_the_lane_loop() {
        let v = Values::Unknown;
        for (base, stride, size, mask) in [
            (0x1000u64, 4i64, 4u8, !0u32),
            (0x1010, 4, 4, 0x0000_fff0),
            (0x1078, 8, 8, !0),
            (0x2000 + 100, 0, 4, !0),
            (0x3000 + 124, 0, 4, 1),
            (0x4000 + 64, 16, 16, 0x00ff_ff00),
            (0x5000 + 8, 8, 4, !0),
            (0x5000 + 120, 16, 4, !0),
            (0x6000 + 4, 32, 4, 0x0fff_fff0),
            (0x6000 + 28, 32, 8, !0),
            (0x7000, 12, 2, 0x0000_ff00),
            (0x7000 + 60, 64, 4, !0),
            (0x8000 + 3, 3, 4, !0),
            (0x9000, 16, 4, 0x0f0f_0f0f),
        ] {
            let a = Addrs::Strided { base, stride };
            let (mut f, mut slow, mut cells) = (vec![], vec![], vec![]);
            coalesce(mask, size, &a, None, 128, 32, &mut f, &mut cells);
            // With values the fast path is skipped: the lane loop runs.
            coalesce(mask, size, &a, Some(&v), 128, 32, &mut slow, &mut cells);
            let key = |v: &Vec<LineAcc>| v.iter().map(|l| (l.line, l.sectors)).collect::<Vec<_>>();
            assert_eq!(key(&f), key(&slow), "{base:#x} {stride} {size} {mask:#x}");
        }
    }

    /// The same over a grid of bases, strides, sizes and masks.
    #[test]
    fn fast_path_agrees_on_a_grid() {
        let v = Values::Unknown;
        let key = |v: &Vec<LineAcc>| v.iter().map(|l| (l.line, l.sectors)).collect::<Vec<_>>();
        for off in [0u64, 1, 4, 8, 24, 28, 60, 120, 124, 127] {
            for stride in [0i64, 1, 2, 4, 8, 12, 16, 24, 32, 40, 64] {
                for size in [1u8, 2, 4, 8, 16] {
                    for mask in [!0u32, 1, 0x8000_0000, 0x00ff_ff00, 0x0f0f_0f0f, 0x7fff_fffe] {
                        let a = Addrs::Strided {
                            base: 0x10_0000 + off,
                            stride,
                        };
                        let (mut f, mut slow, mut cells) = (vec![], vec![], vec![]);
                        coalesce(mask, size, &a, None, 128, 32, &mut f, &mut cells);
                        coalesce(mask, size, &a, Some(&v), 128, 32, &mut slow, &mut cells);
                        assert_eq!(key(&f), key(&slow), "{off} {stride} {size} {mask:#x}");
                    }
                }
            }
        }
    }

    /// Every lane active is one contiguous run: the fast path takes it.
    #[test]
    fn full_mask_takes_the_fast_path() {
        let mut out = vec![];
        let a = Addrs::Strided {
            base: 0x1000,
            stride: 4,
        };
        assert!(fast(!0, 4, &a, 128, 32, &mut out));
        assert_eq!(out.len(), 1);
    }

    /// Lanes 8 or 16 bytes apart leave no sector out: one byte range.
    #[test]
    fn short_strides_take_the_fast_path() {
        for stride in [8, 16, 32] {
            let mut out = vec![];
            let a = Addrs::Strided {
                base: 0x1000,
                stride,
            };
            assert!(fast(!0, 4, &a, 128, 32, &mut out), "stride {stride}");
            assert_eq!(out.len(), 32 * stride as usize / 128);
            assert!(out.iter().all(|l| l.sectors == 0xf));
        }
        let a = Addrs::Strided {
            base: 0x1000,
            stride: 64,
        };
        assert!(!fast(!0, 4, &a, 128, 32, &mut vec![]));
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
