//! Storage primitives and helpers of the unit (`docs/microarch.md` §3,
//! "Memories"), written by hand (`Logic` + `Verilog::Custom`):
//!
//! * [`SyncMem`]: `2^AW` words of `B` bits, one write port and two
//!   synchronous read ports (`rdN <= mem[raN]` at the clock edge, read
//!   before write). `pb_type` and `pb_line` are one each.
//! * [`SyncMemMasked`]: the same with a per-bit write mask (`pb_warps`:
//!   coalescing sets one bit without reading the word).
//! * [`ResetReg`]: the reset register `rst_q <= rst` at the unit's boundary
//!   (§7): the port drives one flip-flop, the reset tree starts at its output.
//!
//! Memories have no reset and no `initial` block; the simulation model starts
//! all words at zero (the unit never uses a word it has not validated).
//! Each block has a Rust `update()` for rust-hdl's simulator that matches its
//! Verilog; the other blocks of the unit (`pipe`, `head`, ...) follow the same
//! pattern: state in plain Rust fields, updated once per rising edge.

use rust_hdl::core::prelude::*;

/// Mask of the low `bits` bits.
pub(crate) const fn mask(bits: usize) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `v` truncated to `N` bits.
pub(crate) fn bv<const N: usize>(v: u64) -> Bits<N> {
    Bits::from(v & mask(N))
}

/// The value of a `Bits` signal.
pub(crate) fn u<const N: usize>(s: &Signal<In, Bits<N>>) -> u64 {
    s.val().to_u64()
}

/// Verilog of a memory: `masked` adds the per-bit write mask `wm`.
fn mem_verilog(bits: usize, aw: usize, masked: bool) -> Verilog {
    let write = if masked {
        // One write port with a bit enable per bit: the loop is unrolled into
        // bit-select writes of the same word (no read of the word).
        format!(
            "   for (i = 0; i < {bits}; i = i + 1)\n      if (we && wm[i]) mem[wa][i] <= wd[i];\n"
        )
    } else {
        "   if (we) mem[wa] <= wd;\n".to_string()
    };
    Verilog::Custom(format!(
        "\
reg [{msb}:0] mem [0:{last}];
{int}
// Synchronous reads (registered read data, read before write), one write port.
always @(posedge clock) begin
   rd0 <= mem[ra0];
   rd1 <= mem[ra1];
{write}end
",
        msb = bits - 1,
        last = (1usize << aw) - 1,
        int = if masked { "integer i;" } else { "" },
    ))
}

/// A stand-alone Verilog module `name` with the body of [`SyncMem`]
/// (`masked`: [`SyncMemMasked`]) at `bits` x `2^aw`: the RTL memory the
/// area flow's latch arrays are checked against (`sbrp_silicon`,
/// `docs/hardware.md` §2).
pub fn memory_module(name: &str, bits: usize, aw: usize, masked: bool) -> String {
    let body = match mem_verilog(bits, aw, masked) {
        Verilog::Custom(b) => b,
        _ => unreachable!("mem_verilog writes custom Verilog"),
    };
    let (b, a) = (bits - 1, aw - 1);
    let wm = if masked {
        format!("input wire [{b}:0] wm,\n  ")
    } else {
        String::new()
    };
    format!(
        "module {name}(input wire clock, input wire we, input wire [{a}:0] wa,\n  \
         input wire [{b}:0] wd, {wm}input wire [{a}:0] ra0, output reg [{b}:0] rd0,\n  \
         input wire [{a}:0] ra1, output reg [{b}:0] rd1);\n{body}endmodule\n"
    )
}

/// Defines a memory type with one write port and two synchronous read ports.
macro_rules! memory {
    ($(#[$doc:meta])* $name:ident, masked: $masked:literal $(, $wm:ident)?) => {
        $(#[$doc])*
        #[derive(Clone, Debug, LogicBlock)]
        pub struct $name<const B: usize, const AW: usize> {
            pub clock: Signal<In, Clock>,
            pub we: Signal<In, bool>,
            pub wa: Signal<In, Bits<AW>>,
            pub wd: Signal<In, Bits<B>>,
            $( pub $wm: Signal<In, Bits<B>>, )?
            pub ra0: Signal<In, Bits<AW>>,
            pub rd0: Signal<Out, Bits<B>>,
            pub ra1: Signal<In, Bits<AW>>,
            pub rd1: Signal<Out, Bits<B>>,
            _mem: Vec<u64>,
        }

        impl<const B: usize, const AW: usize> Default for $name<B, AW> {
            fn default() -> Self {
                Self {
                    clock: Default::default(),
                    we: Default::default(),
                    wa: Default::default(),
                    wd: Default::default(),
                    $( $wm: Default::default(), )?
                    ra0: Default::default(),
                    rd0: Default::default(),
                    ra1: Default::default(),
                    rd1: Default::default(),
                    _mem: vec![0; 1 << AW],
                }
            }
        }

        impl<const B: usize, const AW: usize> Logic for $name<B, AW> {
            fn update(&mut self) {
                if self.clock.pos_edge() {
                    // read before write, as the Verilog's nonblocking assignments
                    self.rd0.next = bv(self._mem[self.ra0.val().index()]);
                    self.rd1.next = bv(self._mem[self.ra1.val().index()]);
                    if self.we.val() {
                        let a = self.wa.val().index();
                        let wm = mask(B) $( & self.$wm.val().to_u64() )?;
                        self._mem[a] = (self._mem[a] & !wm) | (self.wd.val().to_u64() & wm);
                    }
                }
            }
            fn connect(&mut self) {
                self.rd0.connect();
                self.rd1.connect();
            }
            fn hdl(&self) -> Verilog {
                mem_verilog(B, AW, $masked)
            }
        }

        impl<const B: usize, const AW: usize> $name<B, AW> {
            /// Words of the memory, for tests and debugging.
            pub fn words(&self) -> &[u64] {
                &self._mem
            }
        }
    };
}

memory!(
    /// Memory with one write port (`we`, `wa`, `wd`) and two synchronous read
    /// ports (`ra0` -> `rd0`, `ra1` -> `rd1`).
    SyncMem,
    masked: false
);
memory!(
    /// [`SyncMem`] with a per-bit write mask `wm`: bit `i` of word `wa` is
    /// written when `we && wm[i]`.
    SyncMemMasked,
    masked: true,
    wm
);

/// The reset register (§7): `q` is `d` of the last cycle. It has no reset
/// of its own (it is the reset); its output resets every other register, so
/// the reset tree is a register-to-register path and `rst` reaches one
/// flip-flop only.
#[derive(Clone, Debug, Default, LogicBlock)]
pub struct ResetReg {
    pub clock: Signal<In, Clock>,
    pub d: Signal<In, bool>,
    pub q: Signal<Out, bool>,
    _q: bool,
}

impl Logic for ResetReg {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self._q = self.d.val();
        }
        self.q.next = self._q;
    }
    fn connect(&mut self) {
        self.q.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom("always @(posedge clock) q <= d;\n".to_string())
    }
}

/// Verilog text: PB index `x` is older than `y` (nearer `head`), i.e.
/// `age(x) < age(y)` with ages counted from the head, compared without
/// subtracting the head: both or neither wrap (`>= head`) and `x < y`, or
/// only `y` wraps. One comparator deep instead of a subtractor and a
/// comparator on the request's path.
pub fn v_older(x: &str, y: &str, head: &str) -> String {
    format!("((({x} >= {head}) == ({y} >= {head})) ? ({x} < {y}) : ({x} >= {head}))")
}

/// The head action's flush (§4.1 FLUSH), as each block that depends on it
/// makes it from registers: `hf_pre` (the PB is not empty, and the drain is
/// forced or the policy allows: [`crate::head::Head`]), `h_ok` (the head
/// entry is a persist none of whose warps is in FSM: a register of
/// [`crate::store::PbStore`]), `ep_room` (epochs) and `not_full` (the flush
/// FIFO): `can_flush`. Made per block so that no single net carries it to
/// the registers of every block.
pub(crate) fn head_flush(hf_pre: bool, h_ok: bool, ep_room: bool, not_full: bool) -> bool {
    hf_pre && h_ok && ep_room && not_full
}

/// Verilog text of [`head_flush`] (the parts named as the block's ports or
/// nets).
pub(crate) const V_HEAD_FLUSH: &str = "hf_pre & h_ok & ep_room & not_full";

/// The eviction flush of the request in `r2` (§4.2 Evict, "performed"), as
/// each block that depends on it recomputes it from the parts: `ev_pre` (the
/// request is a valid evict of a live, hooked `k` and a flush can start:
/// registers), `k_ev` (entry `k` is a persist of the line, none of its warps
/// in FSM or with an older ordering entry), and `busy(l)` (a queued flush of
/// the line, or the head flushing it). Recomputed per block so that no
/// single net carries the late decision to every register it selects.
pub(crate) fn ev_local(
    ev_pre: bool,
    k_ev: bool,
    fifo_has: bool,
    ha_flush: bool,
    hl_eq: bool,
) -> bool {
    ev_pre && k_ev && !fifo_has && !(ha_flush && hl_eq)
}

/// Verilog text of [`ev_local`] (`ev_pre`, `k_ev`, `fifo_has`, `ha_flush`,
/// `hl_eq` named as the block's ports or nets).
pub(crate) fn v_ev_local(fifo_has: &str) -> String {
    format!("ev_pre & k_ev & ~{fifo_has} & ~(ha_flush & hl_eq)")
}
