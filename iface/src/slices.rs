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
}
