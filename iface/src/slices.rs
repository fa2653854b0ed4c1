//! Register slices at the unit's boundary (`docs/microarch.md` §2.1): extra
//! flip-flop stages on the request, response and acknowledgement paths, a
//! parameter of the generated top (`sbrp_hdl::generate_verilog_sliced`) and
//! of the model (`sbrp_sim_fast::SlicedModel`), not of the buffer itself:
//! the integrator picks them from the floorplan (wire length between the L1
//! and the unit). They lengthen the contract's latencies, nothing else.

use std::fmt;
use std::str::FromStr;

use crate::consts::RSP_LATENCY;
use crate::ParamError;

/// Most stages on one path.
pub const SLICE_MAX: u8 = 2;

/// Register stages per path (0..=[`SLICE_MAX`] each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Slices {
    /// Between the request ports and `r1`.
    pub req: u8,
    /// Between the response registers and the `rsp_*` ports.
    pub rsp: u8,
    /// Between `ack_count`/`ack_epoch` and `ackq`.
    pub ack: u8,
}

impl Slices {
    pub const NONE: Slices = Slices {
        req: 0,
        rsp: 0,
        ack: 0,
    };

    pub fn is_none(&self) -> bool {
        *self == Slices::NONE
    }

    /// Cycles from a request taken to its response: 3 + req + rsp (§2.1).
    pub fn rsp_latency(&self) -> usize {
        RSP_LATENCY + usize::from(self.req) + usize::from(self.rsp)
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        for (name, v) in [
            ("slice-req", self.req),
            ("slice-rsp", self.rsp),
            ("slice-ack", self.ack),
        ] {
            if v > SLICE_MAX {
                return Err(ParamError {
                    param: name,
                    value: v.to_string(),
                    allowed: format!("0..={SLICE_MAX}"),
                });
            }
        }
        Ok(())
    }
}

/// `REQ,RSP,ACK`, e.g. `1,0,2` (the form of `--slices`).
impl fmt::Display for Slices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.req, self.rsp, self.ack)
    }
}

impl FromStr for Slices {
    type Err = ParamError;
    fn from_str(s: &str) -> Result<Slices, ParamError> {
        let bad = || ParamError {
            param: "slices",
            value: s.to_string(),
            allowed: format!("REQ,RSP,ACK, each 0..={SLICE_MAX}"),
        };
        let v: Vec<u8> = s
            .split(',')
            .map(|x| x.trim().parse::<u8>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let [req, rsp, ack] = v[..] else {
            return Err(bad());
        };
        let sl = Slices { req, rsp, ack };
        sl.validate().map_err(|_| bad())?;
        Ok(sl)
    }
}

/// Cycles a store taken at the ports is remembered by [`FlushHold`]: the
/// longest round trip.
const HOLD_DEPTH: usize = RSP_LATENCY + 2 * SLICE_MAX as usize;

/// The flush hold of a top with response stages (`docs/microarch.md` §2.1):
/// the L1 writes a store's words when its response arrives, so a flush of
/// the store's line is not offered from the cycle after the store's
/// decision through the cycle its response is at the ports. It sees the
/// ports only: the stores taken, each remembered for the round trip, and
/// the flush FIFO head's line. The Rust form, used by the model
/// (`sbrp_sim_fast::SlicedModel`) and rust-hdl's simulation; the Verilog
/// wrapper of `sbrp_hdl::generate_verilog_sliced` builds the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlushHold {
    slices: Slices,
    /// Mask of an L1 line index (the ports' width).
    line_mask: u32,
    /// `taken[k]`: the line of a store taken `k + 1` cycles ago, if any.
    taken: [Option<u32>; HOLD_DEPTH],
}

impl FlushHold {
    pub fn new(slices: Slices, line_bits: u32) -> FlushHold {
        FlushHold {
            slices,
            line_mask: ((1u64 << line_bits) - 1) as u32,
            taken: [None; HOLD_DEPTH],
        }
    }

    /// The stores whose flushes are held: taken `lo..=hi` cycles ago
    /// (`lo` the cycle after the decision, `hi` the response at the ports).
    pub fn window(&self) -> (usize, usize) {
        let lo = RSP_LATENCY + usize::from(self.slices.req);
        (lo, lo + usize::from(self.slices.rsp))
    }

    /// Hold the flush port this cycle, its head being `flush_line`
    /// (always false without response stages).
    pub fn holds(&self, flush_line: u32) -> bool {
        if self.slices.rsp == 0 {
            return false;
        }
        let (lo, hi) = self.window();
        self.taken[lo - 1..hi].contains(&Some(flush_line & self.line_mask))
    }

    /// The clock edge: remembers the store taken this cycle (`req_op`,
    /// `req_line` of a request taken, else `None`); a reset cycle clears
    /// every stage, as it clears the unit's registers.
    pub fn clock(&mut self, taken: Option<(u8, u32)>, reset_cycle: bool) {
        if reset_cycle {
            self.taken = [None; HOLD_DEPTH];
            return;
        }
        self.taken.copy_within(0..HOLD_DEPTH - 1, 1);
        self.taken[0] = match taken {
            Some((op, line)) if op & 7 == 0 => Some(line & self.line_mask),
            _ => None,
        };
    }

    /// The remembered stores, for a state key (`PbUnit::state_key`).
    pub fn state_key(&self, out: &mut Vec<u64>) {
        out.extend(
            self.taken
                .iter()
                .map(|t| t.map_or(0, |l| 1 | u64::from(l) << 1)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_parse_print_and_add_to_the_latency() {
        let s: Slices = "1,2,0".parse().unwrap();
        assert_eq!((s.req, s.rsp, s.ack), (1, 2, 0));
        assert_eq!(s.to_string(), "1,2,0");
        assert_eq!(s.rsp_latency(), 6);
        assert_eq!(Slices::NONE.rsp_latency(), RSP_LATENCY);
        for bad in ["3,0,0", "1,1", "a,0,0", "0,0,0,0"] {
            assert!(bad.parse::<Slices>().is_err(), "{bad}");
        }
    }

    /// The hold covers a store's line from the cycle after its decision
    /// through its response's cycle, for that line only, and never
    /// without response stages; a reset cycle forgets the stores.
    #[test]
    fn the_flush_hold_spans_decision_to_response() {
        let sl: Slices = "1,2,0".parse().unwrap();
        let mut h = FlushHold::new(sl, 4);
        assert_eq!(h.window(), (4, 6));
        h.clock(Some((0, 0x15)), false); // a store of line 5 (masked)
        h.clock(Some((1, 7)), false); // an oFence: not remembered
        let mut held = vec![];
        for _ in 0..8 {
            held.push((h.holds(5), h.holds(7)));
            h.clock(None, false);
        }
        // taken 2..9 cycles ago: held when 4, 5 or 6
        let want: Vec<bool> = (2..10).map(|k| (4..=6).contains(&k)).collect();
        assert_eq!(held.iter().map(|x| x.0).collect::<Vec<_>>(), want);
        assert!(held.iter().all(|x| !x.1));
        let mut none = FlushHold::new("2,0,2".parse().unwrap(), 4);
        for _ in 0..7 {
            none.clock(Some((0, 5)), false);
            assert!(!none.holds(5));
        }
        for _ in 0..4 {
            h.clock(Some((0, 5)), false);
        }
        assert!(h.holds(5));
        h.clock(None, true);
        assert_eq!(h, FlushHold::new(sl, 4));
    }
}
