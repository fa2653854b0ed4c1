//! Storage primitives of the unit, written by hand (`Logic` + `Verilog::Custom`):
//!
//! * [`Reg`]: a flip-flop with synchronous reset to zero and no `initial` block.
//! * [`Mem1R`], [`Mem2R`], [`Mem4R`]: memories of `2^AW` words of type `D`
//!   with one synchronous write port and 1, 2 or 4 asynchronous read ports.
//!   They have no reset and no `initial` block; the simulation model starts
//!   all words at zero (the design never reads a word it has not validated).
//!
//! Each has a Rust `update()` for rust-hdl's simulator that matches its Verilog.

use rust_hdl::core::prelude::*;

/// `2^AW` words of `D`, the storage of the simulation model of a memory.
#[derive(Clone, Debug)]
struct MemStore<D: Synth> {
    words: Vec<D>,
}

impl<D: Synth> MemStore<D> {
    fn new(aw: usize) -> Self {
        MemStore {
            words: vec![D::default(); 1 << aw],
        }
    }
}

/// Zero of width `bits` as a Verilog literal that no linter calls too wide.
fn zero_literal(bits: usize) -> String {
    format!("{{{bits}{{1'b0}}}}")
}

/// Verilog of a [`Reg`] of `bits` bits (not generic: compiled once).
fn reg_verilog(bits: usize) -> Verilog {
    Verilog::Custom(format!(
        "\
always @(posedge clock) begin
   if (rst) q <= {zero};
   else q <= d;
end
",
        zero = zero_literal(bits)
    ))
}

/// Verilog of a memory of `2^aw` words of `bits` bits with one synchronous
/// write port and the asynchronous read ports `ports` (address, data).
fn mem_verilog(bits: usize, aw: usize, ports: &[(&str, &str)]) -> Verilog {
    let mut v = format!(
        "\
reg [{msb}:0] mem [0:{last}];

always @(posedge clock) begin
   if (we) mem[wa] <= wd;
end
",
        msb = bits - 1,
        last = (1usize << aw) - 1
    );
    for (ra, rd) in ports {
        v.push_str(&format!("always @(*) {rd} = mem[{ra}];\n"));
    }
    Verilog::Custom(v)
}

/// Flip-flop of `T` with synchronous, active-high reset to zero:
/// `always @(posedge clock) if (rst) q <= 0; else q <= d;`
#[derive(Clone, Debug, LogicBlock, Default)]
pub struct Reg<T: Synth> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, bool>,
    pub d: Signal<In, T>,
    pub q: Signal<Out, T>,
}

impl<T: Synth> Logic for Reg<T> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self.q.next = if self.rst.val() {
                T::default()
            } else {
                self.d.val()
            };
        }
    }
    fn connect(&mut self) {
        self.q.connect();
    }
    fn hdl(&self) -> Verilog {
        reg_verilog(T::BITS)
    }
}

/// Defines a memory type with one synchronous write port (`we`, `wa`, `wd`)
/// and the listed asynchronous read ports (`raN` -> `rdN`).
macro_rules! memory {
    ($(#[$doc:meta])* $name:ident, $(($ra:ident, $rd:ident)),+) => {
        $(#[$doc])*
        #[derive(Clone, Debug, LogicBlock)]
        pub struct $name<D: Synth, const AW: usize> {
            pub clock: Signal<In, Clock>,
            pub we: Signal<In, bool>,
            pub wa: Signal<In, Bits<AW>>,
            pub wd: Signal<In, D>,
            $(
                pub $ra: Signal<In, Bits<AW>>,
                pub $rd: Signal<Out, D>,
            )+
            _mem: MemStore<D>,
        }

        impl<D: Synth, const AW: usize> Default for $name<D, AW> {
            fn default() -> Self {
                Self {
                    clock: Default::default(),
                    we: Default::default(),
                    wa: Default::default(),
                    wd: Default::default(),
                    $(
                        $ra: Default::default(),
                        $rd: Default::default(),
                    )+
                    _mem: MemStore::new(AW),
                }
            }
        }

        impl<D: Synth, const AW: usize> Logic for $name<D, AW> {
            fn update(&mut self) {
                if self.clock.pos_edge() && self.we.val() {
                    self.mem_write();
                }
                $(
                    self.$rd.next = self._mem.words[self.$ra.val().index()];
                )+
            }
            fn connect(&mut self) {
                $( self.$rd.connect(); )+
            }
            fn hdl(&self) -> Verilog {
                mem_verilog(D::BITS, AW, &[$((stringify!($ra), stringify!($rd))),+])
            }
        }

        impl<D: Synth, const AW: usize> $name<D, AW> {
            fn mem_write(&mut self) {
                let a = self.wa.val().index();
                self._mem.words[a] = self.wd.val();
            }
            /// Words of the memory, for tests and debugging.
            pub fn words(&self) -> &[D] {
                &self._mem.words
            }
        }
    };
}

memory!(
    /// Memory with one write port and one asynchronous read port.
    Mem1R,
    (ra0, rd0)
);
memory!(
    /// Memory with one write port and two asynchronous read ports.
    Mem2R,
    (ra0, rd0),
    (ra1, rd1)
);
memory!(
    /// Memory with one write port and four asynchronous read ports.
    Mem4R,
    (ra0, rd0),
    (ra1, rd1),
    (ra2, rd2),
    (ra3, rd3)
);

/// Splits `req_warp` (6 bits) into the warp index inside the unit (`WB` low
/// bits) and `ok`, true when the warp id is below `2^WB` (no higher bit set).
/// A block of its own so that the unit's kernel has no width-dependent
/// expression.
#[derive(Clone, Debug, LogicBlock, Default)]
pub struct WarpIdx<const WB: usize> {
    pub warp: Signal<In, Bits<6>>,
    pub idx: Signal<Out, Bits<WB>>,
    pub ok: Signal<Out, bool>,
}

impl<const WB: usize> Logic for WarpIdx<WB> {
    fn update(&mut self) {
        let w = self.warp.val();
        self.idx.next = w.get_bits::<WB>(0);
        self.ok.next = (w.to_u64() >> WB) == 0;
    }
    fn connect(&mut self) {
        self.idx.connect();
        self.ok.connect();
    }
    fn hdl(&self) -> Verilog {
        assert!((1..=6).contains(&WB));
        let ok = if WB == 6 {
            "1'b1".to_string()
        } else {
            format!("~|warp[5:{WB}]")
        };
        Verilog::Custom(format!(
            "\
always @(*) idx = warp[{msb}:0];
always @(*) ok = {ok};
",
            msb = WB - 1
        ))
    }
}
