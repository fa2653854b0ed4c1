//! The port table of the unit (`docs/microarch.md` §2): the one place that
//! lists every port with its direction, width and meaning.
//!
//! [`port_table!`] turns the table into [`PbIn`] and [`PbOut`] (one field per
//! port, same names and order), their value arrays, and [`PORTS`]. Everything
//! else that lists ports derives from [`PORTS`]: the Verilator wrapper's port
//! check and its generated C copy code (`sbrp-cosim`), the lockstep
//! comparator's widths and the waveform writer ([`crate::vcd`]). Adding a port
//! is one line here plus the two implementations (`hdl`, `sim_fast`).

use crate::PbParams;

/// Direction of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    In,
    Out,
}

/// Width of a port, as a function of the parameters (§2's width column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// A fixed number of bits.
    Bits(u32),
    /// `LW = log2 L`: an L1 line index.
    LineBits,
    /// `IW = log2 N`: a PB index.
    IdxBits,
    /// `W`: a warp mask.
    Warps,
    /// `A`: ACTR.
    ActrBits,
}

impl Width {
    /// Bits of the port for parameters `p`.
    pub fn bits(self, p: &PbParams) -> u32 {
        match self {
            Width::Bits(b) => b,
            Width::LineBits => p.line_bits(),
            Width::IdxBits => p.idx_bits(),
            Width::Warps => p.warps,
            Width::ActrBits => p.actr_bits,
        }
    }
    /// The width as §2's table writes it ("1", "LW", "W", ...).
    pub fn symbol(self) -> String {
        match self {
            Width::Bits(b) => b.to_string(),
            Width::LineBits => "LW".into(),
            Width::IdxBits => "IW".into(),
            Width::Warps => "W".into(),
            Width::ActrBits => "A".into(),
        }
    }
}

/// One port of the top module `sbrp_pb`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Port {
    pub name: &'static str,
    pub dir: Dir,
    pub width: Width,
    /// An output that is a function of the registered state only (it
    /// changes at the clock edge, not with the inputs).
    pub registered: bool,
    /// One line: what the port means.
    pub desc: &'static str,
}

impl Port {
    pub fn bits(&self, p: &PbParams) -> u32 {
        self.width.bits(p)
    }
    /// Mask of the port's bits for `p`.
    pub fn mask(&self, p: &PbParams) -> u64 {
        let b = self.bits(p);
        if b >= 64 {
            u64::MAX
        } else {
            (1u64 << b) - 1
        }
    }
}

/// The clock input (rising edge). Not in [`PORTS`]: no `PbIn` field, every
/// implementation steps it itself.
pub const CLOCK: &str = "clock";

/// A Rust type that carries one port's value.
pub trait PortValue: Copy {
    /// Bits the type holds (a port may not be wider).
    const BITS: u32;
    fn to_u64(self) -> u64;
    /// Truncates to the type.
    fn from_u64(v: u64) -> Self;
}

impl PortValue for bool {
    const BITS: u32 = 1;
    fn to_u64(self) -> u64 {
        self as u64
    }
    fn from_u64(v: u64) -> Self {
        v & 1 != 0
    }
}

macro_rules! port_value_int {
    ($($t:ty),*) => {$(
        impl PortValue for $t {
            const BITS: u32 = <$t>::BITS;
            fn to_u64(self) -> u64 {
                self as u64
            }
            fn from_u64(v: u64) -> Self {
                v as $t
            }
        }
    )*};
}
port_value_int!(u8, u32, u64);

/// Defines [`PbIn`], [`PbOut`] and [`PORTS`] from one list of ports.
macro_rules! port_table {
    (
        inputs { $( $(#[$ia:meta])* $iname:ident : $ity:ty, $iw:expr, $idesc:literal; )* }
        outputs { $( $(#[$oa:meta])* $oname:ident : $oty:ty, $ow:expr, $oreg:literal, $odesc:literal; )* }
    ) => {
        /// Inputs of the unit for one cycle (one field per input port, §2).
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct PbIn {
            $( #[doc = $idesc] $(#[$ia])* pub $iname: $ity, )*
        }

        /// Outputs of the unit during one cycle (one field per output port,
        /// §2): decisions taken this cycle (from the state at the start of
        /// the cycle and this cycle's inputs) and the registered state at the
        /// start of the cycle (the `obs` fields and `stall`, `idle`).
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct PbOut {
            $( #[doc = $odesc] $(#[$oa])* pub $oname: $oty, )*
        }

        /// Every port but the clock, inputs first, in the order of the
        /// fields of [`PbIn`] and [`PbOut`].
        pub const PORTS: &[Port] = &[
            $( Port { name: stringify!($iname), dir: Dir::In, width: $iw, registered: false, desc: $idesc }, )*
            $( Port { name: stringify!($oname), dir: Dir::Out, width: $ow, registered: $oreg, desc: $odesc }, )*
        ];

        /// Bits of the Rust type of each port, in [`PORTS`] order.
        #[cfg(test)]
        pub(crate) const TYPE_BITS: &[u32] = &[
            $( <$ity as PortValue>::BITS, )*
            $( <$oty as PortValue>::BITS, )*
        ];

        impl PbIn {
            /// Each input's value, in [`PORTS`] order.
            pub fn values(&self) -> [u64; N_IN] {
                [ $( PortValue::to_u64(self.$iname), )* ]
            }
            /// The inputs from values in [`PORTS`] order (each truncated to its field).
            pub fn from_values(v: &[u64; N_IN]) -> PbIn {
                let mut it = v.iter();
                PbIn { $( $iname: PortValue::from_u64(*it.next().unwrap_or(&0)), )* }
            }
        }

        impl PbOut {
            /// Each output's value, in [`PORTS`] order.
            pub fn values(&self) -> [u64; N_OUT] {
                [ $( PortValue::to_u64(self.$oname), )* ]
            }
            /// The outputs from values in [`PORTS`] order (each truncated to its field).
            pub fn from_values(v: &[u64; N_OUT]) -> PbOut {
                let mut it = v.iter();
                PbOut { $( $oname: PortValue::from_u64(*it.next().unwrap_or(&0)), )* }
            }
        }
    };
}

use Width::*;

port_table! {
    inputs {
        rst: bool, Bits(1), "Reset, registered at the boundary (`rst_q`): the next cycle is a reset cycle (§7).";
        req_valid: bool, Bits(1), "A warp request this cycle.";
        req_op: u8, Bits(3), "Opcode (`Op`): 0 store, 1 oFence, 2 dFence, 3/4 pAcq/pRel block, 5/6 pAcq/pRel device, 7 evict.";
        req_warp: u8, Bits(6), "Issuing warp (the warp causing an eviction).";
        req_line: u32, LineBits, "L1 line of a store or an eviction.";
        req_pbv: bool, Bits(1), "L1 hook: the line's PB index has been written since the line was installed.";
        req_pbidx: u32, IdxBits, "L1 hook: the PB index last returned for this line (kept in the L1 tags).";
        flush_ready: bool, Bits(1), "The L1 write-back path takes the flush at the FIFO head this cycle.";
        ack_count: u8, Bits(3), "Flushes of epoch `ack_epoch` acknowledged this cycle (0..7).";
        ack_epoch: u8, Bits(2), "The epoch tag those flushes carried.";
        inv_done: bool, Bits(1), "The L1 finished the invalidation requested by `inv_req` (one-cycle pulse).";
        drain_all: bool, Bits(1), "Kernel end: drain everything (level).";
    }
    outputs {
        req_ready: bool, Bits(1), true, "A request presented this cycle is taken (1 except right after reset).";
        rsp_valid: bool, Bits(1), true, "The result of a request taken three cycles earlier.";
        rsp_warp: u8, Bits(6), true, "Its warp.";
        rsp_kind: u8, Bits(2), true, "0 performed, 1 coalesced, 2 replay, 3 wait (`RspKind`).";
        rsp_idx: u32, IdxBits, true, "PB index a performed or coalesced store wrote (the line's new L1 hook).";
        flush_valid: bool, Bits(1), true, "The flush FIFO is not empty: a PM line is to be written back.";
        flush_line: u32, LineBits, true, "Its L1 line (0 when `flush_valid` is 0).";
        flush_warps: u64, Warps, true, "The warp bitmask of its entry (0 when not valid).";
        flush_evict: bool, Bits(1), true, "The flush is an eviction from the middle of the PB, not a head drain.";
        flush_epoch: u8, Bits(2), true, "The ACTR epoch the flush is counted in; its acknowledgement carries it back.";
        inv_req: bool, Bits(1), true, "Invalidate the clean PM lines of the L1, then pulse `inv_done`.";
        stall: u64, Warps, true, "Warps that must not issue: ODM, EDM or waiting for an invalidation.";
        idle: bool, Bits(1), true, "PB empty, nothing outstanding, no invalidation pending (kernel may complete).";
        error: u8, Bits(2), true, "Sticky protocol errors: bit 0 an ack beyond its epoch's count, bit 1 a request from a warp >= W.";
        obs_odm: u64, Warps, true, "ODM: warps delayed by ordering.";
        obs_edm: u64, Warps, true, "EDM: warps waiting for an entry to leave or an epoch to drain.";
        obs_fsm: u64, Warps, true, "FSM: warps whose later persists are gated until an epoch drains.";
        obs_actr: u32, ActrBits, true, "ACTR: flushes counted and not acknowledged, all epochs.";
        obs_head: u32, IdxBits, true, "PB head (oldest entry).";
        obs_tail: u32, IdxBits, true, "PB tail (next free slot).";
        obs_full: bool, Bits(1), true, "PB full.";
        obs_drain: bool, Bits(1), true, "A forced drain target is pending.";
        obs_epoch: u8, Bits(2), true, "The current ACTR epoch.";
    }
}

/// Number of input ports (fields of [`PbIn`]).
pub const N_IN: usize = count(Dir::In);
/// Number of output ports (fields of [`PbOut`]).
pub const N_OUT: usize = count(Dir::Out);

const fn count(d: Dir) -> usize {
    let mut i = 0;
    let mut n = 0;
    while i < PORTS.len() {
        if matches!((PORTS[i].dir, d), (Dir::In, Dir::In) | (Dir::Out, Dir::Out)) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The input ports, in order.
pub fn inputs() -> &'static [Port] {
    &PORTS[..N_IN]
}

/// The output ports, in order.
pub fn outputs() -> &'static [Port] {
    &PORTS[N_IN..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ACTR_BITS_CHOICES, ENTRIES_MAX, LINES_MAX, WARP_CHOICES};

    #[test]
    fn inputs_come_first_and_names_are_unique() {
        assert!(inputs().iter().all(|p| p.dir == Dir::In));
        assert!(outputs().iter().all(|p| p.dir == Dir::Out));
        assert_eq!(N_IN + N_OUT, PORTS.len());
        let mut names: Vec<&str> = PORTS.iter().map(|p| p.name).collect();
        names.push(CLOCK);
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate port name");
        assert!(inputs().iter().all(|p| !p.registered));
    }

    #[test]
    fn widest_ports_fit_their_rust_types_and_64_bits() {
        for &warps in &WARP_CHOICES {
            for &actr_bits in &ACTR_BITS_CHOICES {
                let p = PbParams {
                    entries: ENTRIES_MAX,
                    lines: LINES_MAX,
                    warps,
                    actr_bits,
                    ..PbParams::default()
                };
                for (port, bits) in PORTS.iter().zip(TYPE_BITS) {
                    assert!(port.bits(&p) >= 1, "{}", port.name);
                    assert!(port.bits(&p) <= *bits, "{} wider than its field", port.name);
                    assert!(port.bits(&p) <= 64, "{}", port.name);
                }
            }
        }
    }

    #[test]
    fn values_round_trip_in_table_order() {
        let i = PbIn {
            rst: true,
            req_op: 5,
            req_line: 300,
            ack_count: 7,
            drain_all: true,
            ..PbIn::default()
        };
        let v = i.values();
        assert_eq!(
            v[inputs().iter().position(|p| p.name == "req_op").unwrap()],
            5
        );
        assert_eq!(PbIn::from_values(&v), i);
        let o = PbOut {
            flush_warps: 1 << 63,
            obs_tail: 7,
            obs_drain: true,
            ..PbOut::default()
        };
        let v = o.values();
        assert_eq!(
            v[outputs().iter().position(|p| p.name == "obs_tail").unwrap()],
            7
        );
        assert_eq!(PbOut::from_values(&v), o);
        assert_eq!(
            o.fields().map(|f| f.0).to_vec(),
            outputs().iter().map(|p| p.name).collect::<Vec<_>>()
        );
    }

    /// §2's table in docs/microarch.md lists the same ports, directions and
    /// widths (the document is read by this test only).
    #[test]
    fn spec_table_agrees() {
        let doc = include_str!("../../docs/microarch.md");
        let sec = doc
            .split("## 2. Ports")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .expect("§2 in docs/microarch.md");
        let mut rows = Vec::new();
        for line in sec.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            for name in cells[1].split(',') {
                rows.push((
                    name.trim().trim_matches('`').to_string(),
                    cells[2].to_string(),
                    cells[3].to_string(),
                ));
            }
        }
        let want: Vec<(String, String, String)> = PORTS
            .iter()
            .map(|p| {
                let d = if p.dir == Dir::In { "in" } else { "out" };
                (p.name.to_string(), d.to_string(), p.width.symbol())
            })
            .collect();
        assert_eq!(rows, want);
    }
}
