//! Port-level interface of the SBRP persist buffer unit (`docs/microarch.md`).
//!
//! Both implementations (the RTL in `hdl`, wrapped by `cosim` or by rust-hdl's
//! simulator, and the reference model in `sim_fast`) implement [`PbUnit`]
//! with these structs, so every test and the lockstep comparator can run
//! either of them. This crate depends on nothing of the project.

use std::fmt;

pub mod contract;
pub mod driver;
pub mod port;
pub mod ports;
pub mod slices;
pub mod stimulus;
pub mod vcd;

pub use ports::{PbIn, PbOut};

/// Request opcodes on `req_op` (3 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Op {
    /// PM store of warp `req_warp` into L1 line `req_line`.
    Store = 0,
    OFence = 1,
    DFence = 2,
    AcqBlock = 3,
    RelBlock = 4,
    AcqDevice = 5,
    RelDevice = 6,
    /// Eviction (replacement) of L1 line `req_line`, caused by warp `req_warp`.
    Evict = 7,
}

impl Op {
    pub const ALL: [Op; 8] = [
        Op::Store,
        Op::OFence,
        Op::DFence,
        Op::AcqBlock,
        Op::RelBlock,
        Op::AcqDevice,
        Op::RelDevice,
        Op::Evict,
    ];
    pub fn from_bits(v: u8) -> Op {
        Op::ALL[(v & 7) as usize]
    }
    /// True for the six ordering operations, which take a PB entry of their own type.
    pub fn is_ordering(self) -> bool {
        !matches!(self, Op::Store | Op::Evict)
    }
    /// Ordering operations that put the issuing warp in ODM.
    pub fn stalls_in_odm(self) -> bool {
        matches!(self, Op::DFence | Op::AcqDevice | Op::RelDevice)
    }
}

/// Result of a request on `rsp_kind` (2 bits, `docs/microarch.md` §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RspKind {
    /// A new entry was allocated, or an eviction or ordering op was done.
    Performed = 0,
    /// The warp's bit was set in an existing entry.
    Coalesced = 1,
    /// No effect: send the request again.
    Replay = 2,
    /// No effect, and the warp waits in EDM: send it again once `stall` is low.
    Wait = 3,
}

impl RspKind {
    pub fn from_bits(v: u8) -> RspKind {
        match v & 3 {
            0 => RspKind::Performed,
            1 => RspKind::Coalesced,
            2 => RspKind::Replay,
            _ => RspKind::Wait,
        }
    }
    /// The request took effect (performed or coalesced).
    pub fn taken(self) -> bool {
        matches!(self, RspKind::Performed | RspKind::Coalesced)
    }
}

/// Fixed constants of the v2 unit (`docs/microarch.md` §1).
pub mod consts {
    /// ACTR epochs.
    pub const EPOCHS: u32 = 4;
    /// Flush FIFO entries.
    pub const FLUSH_FIFO: u32 = 4;
    /// Live ordering entries per warp.
    pub const ORD_QUEUE: u32 = 2;
    /// Acknowledgements per cycle (3-bit `ack_count`).
    pub const ACKS_MAX: u32 = 7;
    /// Cycles from a request being taken to its response (`rsp_valid`).
    pub const RSP_LATENCY: usize = 3;
}

/// PB entry types (3-bit `type` field). An ordering op `o` gets type `o + 1`.
pub mod entry_type {
    pub const HOLE: u8 = 0;
    pub const PERSIST: u8 = 1;
    pub const OFENCE: u8 = 2;
    pub const DFENCE: u8 = 3;
    pub const ACQ_BLOCK: u8 = 4;
    pub const REL_BLOCK: u8 = 5;
    pub const ACQ_DEVICE: u8 = 6;
    pub const REL_DEVICE: u8 = 7;
    pub fn is_ordering(t: u8) -> bool {
        t >= OFENCE
    }
}

/// When a persist at the head of the PB may start its flush (open point 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FlushPolicy {
    /// Flush while ACTR < window.
    Window = 0,
    /// Flush as soon as ordering allows (window = ACTR's maximum).
    Eager = 1,
    /// Flush only when forced.
    Lazy = 2,
}

impl FlushPolicy {
    pub fn name(self) -> &'static str {
        match self {
            FlushPolicy::Window => "window",
            FlushPolicy::Eager => "eager",
            FlushPolicy::Lazy => "lazy",
        }
    }
    pub fn parse(s: &str) -> Result<FlushPolicy, ParamError> {
        match s {
            "window" => Ok(FlushPolicy::Window),
            "eager" => Ok(FlushPolicy::Eager),
            "lazy" => Ok(FlushPolicy::Lazy),
            _ => Err(ParamError {
                param: "policy",
                value: s.to_string(),
                allowed: "one of window, eager, lazy".into(),
            }),
        }
    }
}

impl fmt::Display for FlushPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Allowed warp counts: each is one monomorphization of the RTL generator.
pub const WARP_CHOICES: [u32; 5] = [4, 8, 16, 32, 64];
pub const ENTRIES_MIN: u32 = 16;
pub const ENTRIES_MAX: u32 = 512;
pub const LINES_MAX: u32 = 1024;
pub const ACTR_BITS_CHOICES: [u32; 2] = [4, 8];

/// Parameters of one persist buffer unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PbParams {
    /// PB entries (power of two, 16..=512).
    pub entries: u32,
    /// Resident warps per SM (one of [`WARP_CHOICES`]).
    pub warps: u32,
    /// L1 lines (power of two, entries..=1024).
    pub lines: u32,
    /// ACTR width in bits (one of [`ACTR_BITS_CHOICES`]).
    pub actr_bits: u32,
    /// Flush window: outstanding flushes allowed under the window policy (1..=2^actr_bits-1).
    pub window: u32,
    pub policy: FlushPolicy,
}

impl Default for PbParams {
    fn default() -> Self {
        PbParams {
            entries: 256,
            warps: 32,
            lines: 512,
            actr_bits: 8,
            window: 6,
            policy: FlushPolicy::Window,
        }
    }
}

/// A parameter outside its allowed range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    pub param: &'static str,
    pub value: String,
    pub allowed: String,
}

impl ParamError {
    /// The command-line flag of the parameter (`--entries`, ...): a program
    /// that takes parameters as flags names them so.
    pub fn flag(&self) -> String {
        format!("--{}", self.param)
    }
}

/// Names the parameter as the library knows it (`entries`, `actr-bits`);
/// a command line adds its own flag syntax (see [`ParamError::flag`]).
impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid {} {}: allowed {}",
            self.param, self.value, self.allowed
        )
    }
}

impl std::error::Error for ParamError {}

fn log2(v: u32) -> u32 {
    31 - v.leading_zeros()
}

impl PbParams {
    /// Checks every parameter; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), ParamError> {
        let e = |param, value: u32, allowed: String| ParamError {
            param,
            value: value.to_string(),
            allowed,
        };
        if !self.entries.is_power_of_two()
            || self.entries < ENTRIES_MIN
            || self.entries > ENTRIES_MAX
        {
            return Err(e(
                "entries",
                self.entries,
                format!("a power of two from {ENTRIES_MIN} to {ENTRIES_MAX}"),
            ));
        }
        if !WARP_CHOICES.contains(&self.warps) {
            return Err(e(
                "warps",
                self.warps,
                format!("one of {WARP_CHOICES:?} (at most 64)"),
            ));
        }
        if !self.lines.is_power_of_two() || self.lines < self.entries || self.lines > LINES_MAX {
            return Err(e(
                "lines",
                self.lines,
                format!(
                    "a power of two from entries ({}) to {LINES_MAX}",
                    self.entries
                ),
            ));
        }
        if !ACTR_BITS_CHOICES.contains(&self.actr_bits) {
            return Err(e(
                "actr-bits",
                self.actr_bits,
                format!("one of {ACTR_BITS_CHOICES:?}"),
            ));
        }
        if self.window == 0 || self.window > self.actr_max() {
            return Err(e(
                "window",
                self.window,
                format!("1 to {} (ACTR's maximum)", self.actr_max()),
            ));
        }
        Ok(())
    }
    /// Bits of a PB index.
    pub fn idx_bits(&self) -> u32 {
        log2(self.entries)
    }
    /// Bits of an L1 line index.
    pub fn line_bits(&self) -> u32 {
        log2(self.lines)
    }
    /// Bits of a warp id used inside the unit.
    pub fn warp_bits(&self) -> u32 {
        log2(self.warps)
    }
    pub fn actr_max(&self) -> u32 {
        (1u32 << self.actr_bits) - 1
    }
    pub fn warp_mask(&self) -> u64 {
        if self.warps == 64 {
            u64::MAX
        } else {
            (1u64 << self.warps) - 1
        }
    }
    /// Short tag used for file and cache names.
    pub fn tag(&self) -> String {
        format!(
            "e{}_w{}_l{}_a{}_k{}_{}",
            self.entries, self.warps, self.lines, self.actr_bits, self.window, self.policy
        )
    }
}

/// One row of the storage table (`docs/microarch.md` §8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageRow {
    pub item: &'static str,
    pub bits_each: u32,
    pub count: u32,
    /// Bits the paper's §6 estimate gives this item (None: not counted there).
    pub paper_bits: Option<u32>,
}

impl StorageRow {
    pub fn total(&self) -> u32 {
        self.bits_each * self.count
    }
}

/// Storage bits of the unit per field, beside the paper's estimate (44-bit
/// entries: 3 type + 32 warp mask + 9 line; 1 PM bit + 8 PB-index bits per L1
/// line; 96 mask bits; an 8-bit ACTR).
pub fn storage_table(p: &PbParams) -> Vec<StorageRow> {
    use consts::*;
    let (n, w, l) = (p.entries, p.warps, p.lines);
    let (iw, lw, a) = (p.idx_bits(), p.line_bits(), p.actr_bits);
    let row = |item, bits_each, count, paper_bits| StorageRow {
        item,
        bits_each,
        count,
        paper_bits,
    };
    vec![
        row("PB entry: type", 3, n, Some(3 * n)),
        row("PB entry: warp bitmask", w, n, Some(32 * n)),
        row("PB entry: L1 line index", lw, n, Some(9 * n)),
        // In the L1 tags, not in the unit: 0 bits here, the paper's 9 per line.
        row(
            "L1 hook: PB index + valid (in the L1 tags)",
            0,
            l,
            Some(9 * l),
        ),
        row("per-warp ordering queue", ORD_QUEUE * iw + 2, w, None),
        row("entry wait (valid + index)", 1 + iw, w, None),
        row("ODM", w, 1, Some(32)),
        row("epoch EDM and FSM masks", w, 2 * EPOCHS, Some(64)),
        row(
            "ACTR epochs: counters, total, cur/old/closed",
            EPOCHS * a + a + 5,
            1,
            Some(8),
        ),
        row("invalidation masks and request", 1 + 2 * w, 1, None),
        row("head, tail, full, drain, last_type", 3 * iw + 5, 1, None),
        row(
            "flush FIFO and count",
            FLUSH_FIFO * (lw + w + 3) + 3,
            1,
            None,
        ),
        // r1, r2 (valid, op, warp, line, pbv, pbidx), rsp (valid, warp,
        // kind, idx), ackq, doneq, drainq, ready, err, rst_q.
        row(
            "request pipeline, response, input registers",
            2 * (1 + 3 + 6 + lw + 1 + iw) + (1 + 6 + 2 + iw) + 5 + 1 + 1 + 1 + 2 + 1,
            1,
            None,
        ),
    ]
}

/// Total storage bits of the unit, and the paper's estimate for the same sizes.
pub fn storage_totals(p: &PbParams) -> (u32, u32) {
    let t = storage_table(p);
    (
        t.iter().map(StorageRow::total).sum(),
        t.iter().filter_map(|r| r.paper_bits).sum(),
    )
}

impl PbIn {
    pub fn req(op: Op, warp: u8, line: u32) -> PbIn {
        PbIn {
            req_valid: true,
            req_op: op as u8,
            req_warp: warp,
            req_line: line,
            ..PbIn::default()
        }
    }
    pub fn idle() -> PbIn {
        PbIn::default()
    }
    pub fn reset() -> PbIn {
        PbIn {
            rst: true,
            ..PbIn::default()
        }
    }
    /// The same inputs with an L1 hook for the request.
    pub fn with_hook(mut self, pbidx: u32) -> PbIn {
        self.req_pbv = true;
        self.req_pbidx = pbidx;
        self
    }
    /// The same inputs acknowledging `count` flushes of `epoch`.
    pub fn with_ack(mut self, count: u8, epoch: u8) -> PbIn {
        self.ack_count = count;
        self.ack_epoch = epoch;
        self
    }
    /// The same inputs with the flush FIFO's head taken (`flush_ready`).
    pub fn with_flush_ready(mut self, ready: bool) -> PbIn {
        self.flush_ready = ready;
        self
    }
}

impl PbOut {
    /// PB occupancy.
    pub fn count(&self, p: &PbParams) -> u32 {
        if self.obs_full {
            p.entries
        } else {
            self.obs_tail.wrapping_sub(self.obs_head) & (p.entries - 1)
        }
    }
    /// Every output with its name, in [`ports::PORTS`] order (for comparison and traces).
    pub fn fields(&self) -> [(&'static str, u64); ports::N_OUT] {
        let v = self.values();
        std::array::from_fn(|i| (ports::outputs()[i].name, v[i]))
    }
}

impl PbIn {
    /// Every input with its name, in [`ports::PORTS`] order.
    pub fn fields(&self) -> [(&'static str, u64); ports::N_IN] {
        let v = self.values();
        std::array::from_fn(|i| (ports::inputs()[i].name, v[i]))
    }
}

/// Cycles [`PbUnit::reset_sequence`] steps (§7: `rst`, then the reset cycle).
pub const RESET_CYCLES: u64 = 2;

/// One implementation of the persist buffer unit, stepped one clock cycle at a time.
pub trait PbUnit {
    fn params(&self) -> &PbParams;
    /// Applies `inp` for one cycle: returns this cycle's outputs, then takes the clock edge.
    fn step(&mut self, inp: &PbIn) -> PbOut;
    /// The engine name reports use: "model", "rusthdl", "verilator" (`testbench::Engine`).
    fn name(&self) -> &str;
    /// Resets the unit as §7 defines it: a cycle with `rst`, then the
    /// reset cycle ([`RESET_CYCLES`] steps); the next step shows the reset
    /// state.
    fn reset_sequence(&mut self) {
        self.step(&PbIn::reset());
        self.step(&PbIn::idle());
    }
    /// Internal signals this implementation shows in its waveform beside
    /// the ports (none by default; see [`vcd`]).
    fn probes(&self) -> Vec<Probe> {
        Vec::new()
    }
    /// The probes' values now, i.e. the state at the start of the next
    /// cycle, in [`PbUnit::probes`] order, appended to `out`. Read-only.
    fn probe_values(&self, out: &mut Vec<u64>) {
        let _ = out;
    }
    /// Appends a key of the state that can change while the inputs are
    /// idle (registers; memories change only with requests). A driver that
    /// sees the outputs and this key unchanged over quiet cycles knows the
    /// unit stands still and may stop stepping it until an input changes.
    /// Default: every probe value.
    fn state_key(&self, out: &mut Vec<u64>) {
        self.probe_values(out)
    }
    /// Read-only: true if, from now on, steps whose inputs are `inp` (its
    /// acknowledgement, invalidation and drain ports, and `flush_ready`),
    /// with every request reaching `r2` one that [`PbUnit::refuses`], change
    /// nothing but the request pipeline and the response outputs. A driver
    /// may then skip such cycles if it puts the same requests into the
    /// pipeline before stepping again. Default: never (no skipping).
    fn frozen(&self, inp: &PbIn) -> bool {
        let _ = inp;
        false
    }
    /// Read-only: the outputs the next step will return (its registered
    /// outputs), if the implementation can tell. Default: None.
    fn next_out(&self) -> Option<PbOut> {
        None
    }
    /// Read-only, meaningful while [`PbUnit::frozen`]: the request of `req`
    /// would be answered replay, changing nothing. Default: never.
    fn refuses(&self, req: &PbIn) -> bool {
        let _ = req;
        false
    }
    /// Cycles from a request taken to its response (§2, requirement 7;
    /// longer with register slices, §2.1).
    fn rsp_latency(&self) -> usize {
        consts::RSP_LATENCY
    }
}

/// One internal signal of an implementation, shown in its waveform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// Scope below the top module, dot-separated (e.g. `state` or `state.pb.e005`).
    pub scope: String,
    pub name: String,
    /// Bits, 1..=64.
    pub width: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_params_are_valid() {
        PbParams::default().validate().unwrap();
    }

    #[test]
    fn impossible_params_name_the_parameter() {
        let bad = |f: fn(&mut PbParams)| {
            let mut p = PbParams::default();
            f(&mut p);
            p.validate().unwrap_err().param
        };
        assert_eq!(bad(|p| p.entries = 100), "entries");
        assert_eq!(bad(|p| p.entries = 8), "entries");
        assert_eq!(bad(|p| p.entries = 1024), "entries");
        assert_eq!(bad(|p| p.warps = 65), "warps");
        assert_eq!(bad(|p| p.warps = 128), "warps");
        assert_eq!(bad(|p| p.lines = 128), "lines");
        assert_eq!(bad(|p| p.window = 0), "window");
        assert_eq!(bad(|p| p.window = 256), "window");
        assert_eq!(bad(|p| p.actr_bits = 7), "actr-bits");
    }

    #[test]
    fn storage_matches_spec_table() {
        // docs/microarch.md §8, default parameters.
        // 11264 PB entry bits + 1554 of per-warp state, pointers and pipeline
        // (rst_q included, §7); the paper: 11264 + 4608 in the L1 + 104.
        assert_eq!(storage_totals(&PbParams::default()), (12818, 15976));
    }

    #[test]
    fn occupancy_wraps() {
        let p = PbParams {
            entries: 16,
            lines: 16,
            ..PbParams::default()
        };
        let o = PbOut {
            obs_head: 14,
            obs_tail: 2,
            ..PbOut::default()
        };
        assert_eq!(o.count(&p), 4);
        let f = PbOut {
            obs_full: true,
            ..o
        };
        assert_eq!(f.count(&p), 16);
    }
}
