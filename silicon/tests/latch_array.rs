//! Latch arrays (`sbrp area --arrays latches`, docs/hardware.md §2 "Latch
//! arrays"): the mapping keeps the RTL memory's cycle behaviour (proved for
//! every depth, with two broken mappings it must reject), and on a unit of
//! 32 entries it stores the same bits in less area than flip-flops, with
//! the latch's area taken from the LEF.

mod common;

use common::{scratch, small};
use sbrp_iface::PbParams;
use sbrp_silicon as silicon;
use silicon::{Arrays, Equivalence};

const MAP: &str = include_str!("../../constraints/synth/latch_array.v");

fn check(map: &str, what: &str) -> Equivalence {
    let dir = scratch(what);
    let (r, secs) = silicon::check_latch_array(map, 300, dir.path()).expect("latch-array check");
    println!("{what}: {r:?} in {secs:.1} s");
    r
}

#[test]
fn latch_array_reads_as_the_rtl_memory_and_broken_ones_do_not() {
    assert_eq!(check(MAP, "latch-array"), Equivalence::Equivalent);
    // The word select open while the clock is high: the next cycle's
    // address steers the write.
    let sel_open_high = MAP.replace("\\$_DLATCH_N_ sel_latch", "\\$_DLATCH_P_ sel_latch");
    assert_ne!(sel_open_high, MAP);
    assert!(matches!(
        check(&sel_open_high, "sel-open-high"),
        Equivalence::Differs(_)
    ));
    // No write-data register: the latch takes the next cycle's data.
    let unregistered = MAP.replace(".D(wd_q[b])", ".D(WR_DATA[b])");
    assert_ne!(unregistered, MAP);
    assert!(matches!(
        check(&unregistered, "unregistered-data"),
        Equivalence::Differs(_)
    ));
}

#[test]
fn latch_arrays_store_the_same_bits_in_less_area() {
    // The smallest unit whose memories are latch arrays (32 words).
    let p = PbParams {
        entries: 32,
        lines: 32,
        ..small()
    };
    let flops = silicon::run_area_flow_with(&p, scratch("flops").path(), false, Arrays::Flops)
        .expect("flip-flop flow");
    let dir = scratch("latches");
    let latches =
        silicon::run_area_flow_with(&p, dir.path(), true, Arrays::Latches).expect("latch flow");
    print!("{}", silicon::format_report(&latches));

    // Every bit of the three PB memories is a latch; their selects and
    // enables are latches too, but not stored bits.
    let array_bits: u64 = latches
        .memories
        .iter()
        .filter(|m| m.words >= 32)
        .map(|m| m.words * m.bits)
        .sum();
    assert_eq!(array_bits, 32 * (3 + 5 + 4), "pb_type, pb_line, pb_warps");
    let n_latch = latches.cell_counts.get("LATCH").copied().unwrap_or(0);
    assert!(
        n_latch > array_bits,
        "{n_latch} latches for {array_bits} bits"
    );
    assert!(!flops.cell_counts.contains_key("LATCH"));
    assert_eq!(
        latches.stored_bits, flops.ff_bits,
        "the same bits are stored"
    );
    assert!(latches.ff_bits > latches.stored_bits);

    // The latch is priced from the LEF (the liberty says 0).
    let c = &latches.area_corrections;
    assert!(
        c.len() == 1 && c[0].cell == "LATCH" && c[0].liberty_um2 == 0.0 && c[0].lef_um2 > 0.0,
        "{c:?}"
    );
    let text = silicon::format_report(&latches);
    assert!(
        text.contains("arrays: latches") && text.contains("area of LATCH"),
        "{text}"
    );

    // Smaller storage, same control outside it.
    let pb = |r: &silicon::AreaReport| r.blocks[0].area_um2;
    assert!(
        pb(&latches) < 0.8 * pb(&flops),
        "PB storage {:.0} (latches) vs {:.0} (flip-flops) um^2",
        pb(&latches),
        pb(&flops)
    );
    assert!(latches.area_um2 < flops.area_um2);
    // OpenSTA times the latch netlist.
    let t = latches.timing.as_ref().expect("timing");
    assert!(t.fmax_mhz > 50.0, "{t:?}");
}
