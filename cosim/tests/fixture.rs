//! The wrapper on the hand-written fixture (tests/fixtures/counter_pb.v):
//! stepping, reset, wide ports, tracing, the cache and its lock, errors.

mod common;

use std::sync::{Arc, Barrier};

use common::{fixture, wide, FixtureModel};
use sbrp_cosim::{BuildOpts, CosimError, RtlSource, VerilatedPb};
use sbrp_iface::stimulus::RawStimulus;
use sbrp_iface::{Op, PbIn, PbParams, PbUnit};

fn build(p: &PbParams, opts: &BuildOpts) -> VerilatedPb {
    VerilatedPb::build(p, RtlSource::File(fixture()), opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Steps the RTL and the fixture's model with the same random inputs.
fn lockstep(rtl: &mut VerilatedPb, cycles: usize, seed: u64) {
    let p = *rtl.params();
    let mut model = FixtureModel::new(p);
    let mut stim = RawStimulus::new(&p, seed);
    rtl.step(&PbIn::reset());
    model.step(&PbIn::reset());
    for c in 0..cycles {
        let i = stim.next_input();
        let (a, b) = (rtl.step(&i), model.step(&i));
        assert_eq!(a, b, "cycle {c}, input {i:?}");
    }
}

#[test]
fn steps_like_the_fixture_model() {
    let p = PbParams::default();
    let mut rtl = build(&p, &BuildOpts::default());
    assert_eq!(rtl.name(), "verilator");
    assert_eq!(rtl.params(), &p);

    // Outputs of a cycle are the registers at its start.
    rtl.step(&PbIn::reset());
    let o = rtl.step(&PbIn::req(Op::Store, 5, 300));
    assert!(!o.req_ready, "not ready in the cycle after reset");
    assert!(o.idle && !o.rsp_valid);
    let o = rtl.step(&PbIn::req(Op::Store, 5, 300).with_hook(17));
    assert_eq!(
        (o.req_ready, o.obs_head, o.obs_tail, o.stall),
        (true, 1, 0, 0)
    );
    let o = rtl.step(&PbIn::req(Op::Evict, 7, 12).with_ack(3, 2));
    assert_eq!(
        (o.rsp_valid, o.rsp_warp, o.rsp_kind, o.rsp_idx),
        (true, 5, 0, 17)
    );
    assert_eq!((o.obs_head, o.obs_tail, o.stall), (2, 1, 1 << 5));
    assert_eq!(o.obs_edm, 300);
    let o = rtl.step(&PbIn::idle());
    assert_eq!((o.rsp_warp, o.rsp_kind, o.rsp_idx), (7, 3, 1));
    assert_eq!(
        (
            o.flush_valid,
            o.flush_line,
            o.flush_warps,
            o.flush_evict,
            o.flush_epoch
        ),
        (true, 12, 1 << 5, true, 2)
    );
    assert_eq!((o.obs_actr, o.obs_epoch), (3, 3));
    // The flush stays until taken.
    let o = rtl.step(&PbIn::idle().with_flush_ready(true));
    assert!(o.flush_valid);
    let o = rtl.step(&PbIn::reset());
    assert!(!o.flush_valid);
    assert_eq!(o.obs_head, 5);
    let o = rtl.step(&PbIn::idle());
    assert_eq!(
        (o.obs_head, o.obs_tail, o.obs_odm, o.obs_actr),
        (0, 0, 0, 0)
    );
    assert!(o.idle);
    assert_eq!(rtl.cycles(), 8);

    lockstep(&mut rtl, 5000, 1);
}

#[test]
fn widest_ports_carry_64_bit_masks() {
    let (p, args) = wide();
    let opts = BuildOpts {
        extra_args: args,
        ..BuildOpts::default()
    };
    let mut rtl = build(&p, &opts);
    rtl.step(&PbIn::reset());
    rtl.step(&PbIn::idle());
    rtl.step(&PbIn::req(Op::Store, 63, 1023));
    rtl.step(&PbIn::req(Op::Store, 0, 1));
    rtl.step(&PbIn::idle().with_ack(1, 3));
    let o = rtl.step(&PbIn::idle());
    assert_eq!(o.flush_warps, (1 << 63) | 1);
    assert_eq!(o.obs_fsm, !((1u64 << 63) | 1));
    assert_eq!(o.obs_edm, 1);
    lockstep(&mut rtl, 3000, 2);
}

/// A profile-guided build (the default) is another cache entry, records its
/// training in key.txt, and steps exactly like the plain build.
#[test]
fn profile_guided_build_steps_like_the_plain_build() {
    let p = PbParams::default();
    let mut pgo = build(&p, &BuildOpts::default());
    let plain_opts = BuildOpts {
        pgo: false,
        ..BuildOpts::default()
    };
    let mut plain = build(&p, &plain_opts);
    let (kp, kg) = (&plain.build_report().key, &pgo.build_report().key);
    assert_ne!(kp, kg);
    let key_txt =
        |r: &VerilatedPb| std::fs::read_to_string(r.build_report().dir.join("key.txt")).unwrap();
    assert!(
        key_txt(&pgo).contains("profile trained with"),
        "{}",
        key_txt(&pgo)
    );
    assert!(
        key_txt(&plain).contains("profile none"),
        "{}",
        key_txt(&plain)
    );
    let mut stim = RawStimulus::new(&p, 9);
    for c in 0..20_000 {
        let i = if c == 0 {
            PbIn::reset()
        } else {
            stim.next_input()
        };
        let (a, b) = (pgo.step(&i), plain.step(&i));
        assert_eq!(a, b, "cycle {c}, input {i:?}");
        stim.observe(&i, &a);
    }
}

#[test]
fn ports_of_other_parameters_are_rejected() {
    // The default-width fixture is not a design for 64 warps.
    let (p, _) = wide();
    let e = VerilatedPb::build(&p, RtlSource::File(fixture()), &BuildOpts::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("flush_warps is output [32], expected output [64]"),
        "{e}"
    );
    assert!(
        e.contains("req_line is input [9], expected input [10]"),
        "{e}"
    );
}

#[test]
fn instances_are_independent_and_send() {
    let p = PbParams::default();
    let mut a = build(&p, &BuildOpts::default());
    let mut b = a.new_instance();
    a.step(&PbIn::reset());
    b.step(&PbIn::reset());
    for _ in 0..10 {
        a.step(&PbIn::idle());
    }
    assert_eq!(a.step(&PbIn::idle()).obs_head, 10);
    assert_eq!(b.step(&PbIn::idle()).obs_head, 0);
    // Move a model to another thread and go on there.
    let h = std::thread::spawn(move || {
        lockstep(&mut a, 1000, 3);
        a.step(&PbIn::idle()).obs_head
    });
    h.join().unwrap();
    drop(b);
}

/// The RTL's waveform is written from the ports the FFI returns
/// (`sbrp_iface::vcd::Traced`): every port, two samples per cycle.
#[test]
fn traced_model_writes_a_vcd_with_the_port_names() {
    use sbrp_iface::vcd::{Traced, WaveStatus};
    let p = PbParams::default();
    let rtl = build(&p, &BuildOpts::default());
    let dir = tempfile::tempdir().unwrap();
    let vcd = dir.path().join("pb.vcd");
    let status = WaveStatus::default();
    let mut t = Traced::new(Box::new(rtl), vcd.clone(), 1, status.clone());
    t.step(&PbIn::reset()); // cycle 0, before the waveform starts
    for k in 0..20u32 {
        t.step(&PbIn::req(Op::Store, (k % 32) as u8, k * 7).with_ack((k % 3) as u8, 1));
    }
    drop(t);
    assert!(status.borrow().is_none(), "{:?}", status.borrow());
    let text = std::fs::read_to_string(&vcd).unwrap();
    for port in std::iter::once("clock").chain(sbrp_iface::ports::PORTS.iter().map(|p| p.name)) {
        let decl = text
            .lines()
            .any(|l| l.starts_with("$var") && l.ends_with(&format!(" {port} $end")));
        assert!(decl, "no $var for {port} in\n{text}");
    }
    // Cycles 1..=20: times 2..=41, then the end marker 42.
    let times: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|t| t.trim().parse().unwrap())
        .collect();
    assert_eq!(times.first(), Some(&2));
    assert_eq!(times.last(), Some(&42));
    assert_eq!(times.len(), 41);
}

/// A verilator that counts its build runs (not `--version`) in `count`.
fn counting_verilator(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let count = dir.join("runs");
    // Only this test sets the variable; the script is read-only in the repo.
    std::env::set_var("SBRP_TEST_VERILATOR_RUNS", &count);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/verilator-counting.sh");
    (script, count)
}

fn runs(count: &std::path::Path) -> usize {
    std::fs::read_to_string(count)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

#[test]
fn cache_hits_and_parallel_builds_run_verilator_once() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let (verilator, count) = counting_verilator(tmp.path());
    let opts = BuildOpts {
        cache_dir: Some(cache.clone()),
        verilator,
        ..BuildOpts::default()
    };
    let p = PbParams::default();
    // Several threads build the same key at once: one builds, the others
    // wait on the lock and then load the finished library.
    const THREADS: usize = 4;
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let (barrier, opts) = (barrier.clone(), opts.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut rtl = build(&p, &opts);
                lockstep(&mut rtl, 200, 4);
                rtl.build_report().clone()
            })
        })
        .collect();
    let reports: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(runs(&count), 1, "{reports:#?}");
    let misses: Vec<_> = reports.iter().filter(|r| !r.cache_hit).collect();
    assert_eq!(misses.len(), 1, "{reports:#?}");
    eprintln!("fixture build: {:.1} s", misses[0].build_time.as_secs_f64());
    let dir = &reports[0].dir;
    assert!(reports.iter().all(|r| &r.dir == dir));
    assert!(dir.starts_with(&cache));
    assert!(reports[0].lib_path.is_file());

    // A later build with the same key: a cache hit, no verilator run.
    let again = build(&p, &opts);
    assert!(again.build_report().cache_hit);
    assert_eq!(again.build_report().dir, *dir);
    assert_eq!(runs(&count), 1);

    // Another key (other verilator arguments) is built.
    let (wp, args) = wide();
    let other = build(
        &wp,
        &BuildOpts {
            extra_args: args,
            ..opts.clone()
        },
    );
    assert!(!other.build_report().cache_hit);
    assert_ne!(other.build_report().dir, *dir);
    assert_eq!(runs(&count), 2);

    // No temporary build directory is left behind: two entries, two locks.
    let mut names: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(
        names.iter().all(|n| n.starts_with("file-counter_pb-")),
        "{names:?}"
    );
    assert_eq!(names.iter().filter(|n| n.ends_with(".lock")).count(), 2);
}

#[test]
fn missing_rtl_file_names_the_path() {
    let e = VerilatedPb::build(
        &PbParams::default(),
        RtlSource::File("/no/such/dir/design.v".into()),
        &BuildOpts::default(),
    )
    .unwrap_err();
    assert!(matches!(e, CosimError::RtlFile { .. }), "{e:?}");
    assert!(e.to_string().contains("/no/such/dir/design.v"), "{e}");
}

#[test]
fn missing_verilator_says_how_to_install_it() {
    let opts = BuildOpts {
        verilator: "/no/such/verilator".into(),
        ..BuildOpts::default()
    };
    let e = VerilatedPb::build(&PbParams::default(), RtlSource::File(fixture()), &opts)
        .unwrap_err()
        .to_string();
    assert!(e.contains("verilator not found"), "{e}");
    assert!(e.contains("apt-get install verilator"), "{e}");
    assert!(e.contains("scripts/run.sh and scripts/test.sh"), "{e}");
}

#[test]
fn verilator_errors_are_reported_with_its_own_lines() {
    let cache = tempfile::tempdir().unwrap();
    let bad = cache.path().join("broken.v");
    let text = std::fs::read_to_string(fixture()).unwrap().replace(
        "assign idle = obs_head == {IW{1'b0}};",
        "assign idle = obs_head == ;",
    );
    std::fs::write(&bad, text).unwrap();
    let opts = BuildOpts {
        cache_dir: Some(cache.path().join("cache")),
        ..BuildOpts::default()
    };
    let e = VerilatedPb::build(&PbParams::default(), RtlSource::File(bad), &opts).unwrap_err();
    let s = e.to_string();
    assert!(matches!(e, CosimError::Tool { .. }), "{e:?}");
    assert!(s.starts_with("verilator failed on "), "{s}");
    assert!(s.contains("%Error: ") && s.contains("broken.v:"), "{s}");
    assert!(s.contains("syntax error"), "{s}");
    eprintln!("{s}");
    // Nothing half-built is left in the cache.
    let leftovers: Vec<_> = std::fs::read_dir(cache.path().join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tmp-") || (n.starts_with("file-") && !n.ends_with(".lock")))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn invalid_parameters_are_an_error_not_a_panic() {
    let p = PbParams {
        warps: 65,
        ..PbParams::default()
    };
    let e = VerilatedPb::build(&p, RtlSource::File(fixture()), &BuildOpts::default())
        .unwrap_err()
        .to_string();
    // The library names the parameter, not a command-line flag.
    assert!(e.contains("invalid warps 65"), "{e}");
    assert!(!e.contains("--"), "{e}");
}
