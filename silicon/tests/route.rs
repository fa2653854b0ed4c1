//! Place and route (`sbrp area --route`) of the smallest unit (16 entries,
//! 4 warps, 16 lines): qflow's graywolf and qrouter, the RC trees as SPEF
//! into OpenSTA, the gates sized for those wires by OpenSTA, and a second
//! place and route of the sized netlist.
//!
//! Two passes of place and route: 7-9 minutes on the shared 2-core machine
//! at load 1-4 (each placement and routing 100-140 s); about 30 at load
//! 9-10 (an estimate: one pass took 16 there; docs/hardware.md), too slow
//! for CI, so `#[ignore]`d:
//! `cargo test --release -p sbrp-silicon --test route -- --ignored --nocapture`.

mod common;

use common::small;
use sbrp_silicon as silicon;

#[test]
#[ignore = "slow: two passes of place and route, 7-30 minutes"]
fn routed_timing_of_the_smallest_unit() {
    let out = common::scratch("route");
    let opts = silicon::AreaOptions {
        timing: true,
        sram: false,
        route: true,
        arrays: silicon::Arrays::Flops,
        out: Some(out.path().join("area")),
    };
    let r = silicon::area(&small(), &opts).expect("routed flow");
    let text = silicon::format_report(&r);
    print!("{text}");
    let rt = r.route.as_ref().expect("route report");
    let zero = r.timing.as_ref().expect("zero-wire timing");

    // Every cell of the netlist was placed (dead cells dropped, ties added:
    // within a few percent), on a die larger than the cells (density < 1).
    let placed = rt.cells as f64 / r.cells as f64;
    assert!(
        (0.95..1.05).contains(&placed),
        "{} placed of {}",
        rt.cells,
        r.cells
    );
    let die = rt.die_width_um * rt.die_height_um;
    assert!(die > r.area_um2 && die < 3.0 * r.area_um2, "die {die} um^2");
    // Routed: nearly every net has an RC tree with wire on it.
    assert!(
        rt.nets_routed as f64 > 0.9 * rt.cells as f64,
        "{} nets",
        rt.nets_routed
    );
    // about 1-10 fF of wire a net on a die of half a millimetre
    let per_net = 1000.0 * rt.wire_cap_pf / rt.nets_routed as f64;
    assert!((1.0..10.0).contains(&per_net), "{per_net} fF a net");

    // Wires only slow things: the same netlist and constraints without them
    // is faster, and the ideal zero-wire figure faster still.
    let (f, u) = (rt.fmax(), rt.fmax_unrouted());
    assert!(f.mhz < u.mhz, "routed {} vs zero wire {}", f.mhz, u.mhz);
    assert!(
        u.mhz <= zero.fmax_mhz + 1e-9,
        "{} vs {}",
        u.mhz,
        zero.fmax_mhz
    );
    // Sane: 0.18 um, tens of FO4 a stage (100-500 MHz), and the wires
    // cost less than half of the stage.
    assert!((100.0..500.0).contains(&f.mhz), "{f:?}");
    assert!(f.mhz > 0.5 * u.mhz, "{f:?} vs {u:?}");
    // OpenSTA's own slack at the SDC's 330 MHz agrees in sign with the
    // derived fmax.
    assert_eq!(
        rt.routed.wns_ns >= 0.0,
        f.mhz >= silicon::ROUTED_TARGET_MHZ,
        "wns {} at 330 MHz, fmax {}",
        rt.routed.wns_ns,
        f.mhz
    );

    // The sizing between the passes: OpenSTA keeps a change only when the
    // slack on the first pass's wires improves, and it adds little area
    // (a few inverters and buffers one size up).
    let z = rt.sizing.as_ref().expect("sizing report");
    assert!(
        z.slack_sized_ns.0 >= z.slack_before_ns.0,
        "{:?} -> {:?}",
        z.slack_before_ns,
        z.slack_sized_ns
    );
    assert_eq!(z.resized.iter().map(|c| c.2).sum::<u64>(), z.cells_resized);
    assert!(
        z.area_added_um2.abs() < 0.02 * r.area_um2,
        "{} um^2",
        z.area_added_um2
    );
    assert!(text.contains("sized for the routed loads"), "{text}");
    assert!(text.contains("before sizing (first pass"), "{text}");

    assert!(text.contains("highest clock after routing:"), "{text}");
    assert!(
        text.contains("zero wire load, same netlist and constraints"),
        "{text}"
    );
    let dir = out.path().join("area");
    for f in silicon::ROUTE_FILES {
        assert!(dir.join(f).is_file(), "{f} not published");
    }
    let spef = std::fs::read_to_string(dir.join("sbrp_pb_routed.spef")).unwrap();
    assert_eq!(spef.matches("*D_NET").count() as u64, rt.nets_routed);
}
