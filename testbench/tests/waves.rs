//! Waveforms of a lockstep run (`--vcd`): the RTL's and the model's files
//! come from the same writer (`sbrp_iface::vcd`) and agree port for port at
//! every instant; a write error (a full disk) ends the run with an error,
//! quickly, and leaves no partial file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sbrp_iface::PbParams;
use sbrp_testbench::suites::{litmus_dir, load_trace, run_trace, Rtl, RunOpts};

/// An empty scratch directory (removed when the guard drops) and its path.
fn tmp(name: &str) -> (tempfile::TempDir, PathBuf) {
    let keep = tempfile::Builder::new()
        .prefix(&format!("sbrp-waves-{name}-"))
        .tempdir()
        .unwrap();
    let d = keep.path().to_path_buf();
    (keep, d)
}

/// Value changes of each signal: name -> [(time, value)].
type Changes = BTreeMap<String, Vec<(u64, String)>>;

/// The signals of one VCD directly under `sbrp_pb` (the ports and clock),
/// and the names of every other declared signal.
fn ports_of(path: &Path) -> (Changes, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let (mut depth, mut ids, mut others) = (0, BTreeMap::new(), Vec::new());
    let mut lines = text.lines();
    for l in lines.by_ref() {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.first().copied() {
            Some("$scope") => depth += 1,
            Some("$upscope") => depth -= 1,
            Some("$var") if depth == 1 => {
                ids.insert(f[3].to_string(), f[4].to_string());
            }
            Some("$var") => others.push(f[4].to_string()),
            Some("$enddefinitions") => break,
            _ => {}
        }
    }
    let mut sig = Changes::new();
    let mut t = 0;
    for l in lines {
        let (val, id) = if let Some(r) = l.strip_prefix('#') {
            t = r.parse().unwrap();
            continue;
        } else if let Some((v, id)) = l.split_once(' ') {
            (v.to_string(), id.to_string())
        } else if l.starts_with(['0', '1']) {
            (l[..1].to_string(), l[1..].to_string())
        } else {
            continue;
        };
        if let Some(name) = ids.get(&id) {
            sig.entry(name.clone()).or_default().push((t, val));
        }
    }
    (sig, others)
}

#[test]
fn rtl_and_model_waveforms_agree_port_for_port() {
    let (_keep, d) = tmp("agree");
    let mut o = RunOpts::new(PbParams::default());
    o.vcd_dir = Some(d.clone());
    let rtl = Rtl::build(&o).unwrap();
    let t = load_trace(&litmus_dir().join("10_eviction.trace")).unwrap();
    let r = run_trace(&t, &o, Some(&rtl), "ev").unwrap();
    assert!(r.ok(), "{:?} {:?}", r.fails, r.mismatch);
    let (rtl_sig, rtl_other) = ports_of(&d.join("ev.rtl.sm0.vcd"));
    let (model_sig, model_other) = ports_of(&d.join("ev.model.sm0.vcd"));
    // Same names under the same scope, same values at the same instants.
    assert_eq!(rtl_sig.len(), 1 + sbrp_iface::ports::PORTS.len());
    assert_eq!(rtl_sig, model_sig);
    // The model shows its state besides (§3 names); the RTL shows only ports.
    assert!(rtl_other.is_empty(), "{rtl_other:?}");
    for n in [
        "odm", "edm", "fsm", "actr", "head", "tail", "pb_type", "pb_warps", "pb_line",
    ] {
        assert!(model_other.iter().any(|o| o == n), "model VCD lacks {n}");
    }
    // A cycle is two instants: the clock rises at odd times only.
    let clk = &rtl_sig["clock"];
    assert!(
        clk.iter().all(|(t, v)| (v == "1") == (t % 2 == 1)),
        "{clk:?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The RTL's waveform path points at /dev/full: `run_trace` returns the
/// write error within seconds and no waveform of the run is left.
#[test]
fn full_disk_ends_the_run_with_an_error() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let (_keep, d) = tmp("full");
    let mut o = RunOpts::new(PbParams::default());
    o.vcd_dir = Some(d.clone());
    let rtl = Rtl::build(&o).unwrap();
    let rtl_vcd = d.join("full.rtl.sm0.vcd");
    std::os::unix::fs::symlink("/dev/full", &rtl_vcd).unwrap();
    let t = load_trace(&litmus_dir().join("10_eviction.trace")).unwrap();
    let t0 = Instant::now();
    let e = run_trace(&t, &o, Some(&rtl), "full").unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    let s = format!("{e:#}");
    assert!(
        s.contains("full.rtl.sm0.vcd") && s.contains("No space"),
        "{s}"
    );
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The same through the command: exit status 2, an error message, no file,
/// and the process ends (the old Verilator writer hung here forever).
#[test]
fn full_disk_cli_exits_2() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let (_keep, d) = tmp("cli");
    let vcd = d.join("vcd");
    std::fs::create_dir_all(&vcd).unwrap();
    let link = vcd.join("10_eviction.rtl.sm0.vcd");
    std::os::unix::fs::symlink("/dev/full", &link).unwrap();
    let trace = litmus_dir().join("10_eviction.trace");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sbrp"))
        .args(["cosim", "--trace", trace.to_str().unwrap(), "--vcd"])
        .arg(&vcd)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Generous: the first run may build the RTL (about 20 s); a hang never ends.
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("sbrp did not exit on a full disk");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write waveform"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&vcd).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&d);
}

fn sbrp_cli(args: &[&str]) -> (i32, String, String) {
    sbrp_cli_env(args, &[])
}

/// `sbrp_cli` with environment variables set.
fn sbrp_cli_env(args: &[&str], env: &[(&str, &Path)]) -> (i32, String, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_sbrp"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `sbrp wavediff`: the RTL's and the model's waveforms of a correct run
/// agree (exit 0); with a fault in the model they first differ where the
/// lockstep run stopped, in the flush port (exit 1); a file that is not a
/// waveform is refused (exit 2).
#[test]
fn wavediff_finds_where_rtl_and_faulty_model_part() {
    let (_keep, d) = tmp("wavediff");
    let trace = litmus_dir().join("01_same_line_after_ofence.trace");
    let t = trace.to_str().unwrap();
    let vcd = d.join("ok");
    let (code, out, err) = sbrp_cli(&["cosim", "--trace", t, "--vcd", vcd.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let f = |dir: &Path, who: &str| {
        dir.join(format!("01_same_line_after_ofence.{who}.sm0.vcd"))
            .to_string_lossy()
            .into_owned()
    };
    let (code, out, err) = sbrp_cli(&["wavediff", &f(&vcd, "rtl"), &f(&vcd, "model")]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("agree at every time"), "{out}");
    let bad = d.join("bad");
    let (code, out, _) = sbrp_cli(&[
        "cosim",
        "--trace",
        t,
        "--fault",
        "ignore-fsm",
        "--vcd",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    let stop = out
        .lines()
        .find_map(|l| {
            l.split_once(" at cycle ")
                .filter(|_| l.starts_with("MISMATCH"))
        })
        .map(|(_, c)| c.split(':').next().unwrap().parse::<u64>().unwrap())
        .expect("the lockstep run reports its mismatch");
    let (code, out, err) = sbrp_cli(&["wavediff", &f(&bad, "rtl"), &f(&bad, "model")]);
    assert_eq!(code, 1, "{out}{err}");
    // The state after cycle c's edge is what cycle c + 1 returns.
    assert!(
        out.contains(&format!("(cycle {}, after its edge)", stop - 1)),
        "lockstep stopped at {stop}: {out}"
    );
    assert!(out.contains("sbrp_pb.flush_valid"), "{out}");
    let junk = d.join("junk.vcd");
    std::fs::write(&junk, "$scope module a $end\n$nonsense\n").unwrap();
    let (code, out, err) = sbrp_cli(&["wavediff", junk.to_str().unwrap(), &f(&vcd, "rtl")]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("junk.vcd"), "{err}");
    assert!(out.is_empty(), "{out}");
}

/// With `--vcd` the RTL also writes every internal signal (Verilator's
/// tracer, `NAME.rtl-all.smS.vcd`): more than the ports, among them the
/// ACTR counter; a full disk under that file ends the run with exit 2 and
/// no file left.
#[test]
fn rtl_waveform_of_every_signal_and_its_full_disk() {
    let (_keep, d) = tmp("all");
    let trace = litmus_dir().join("10_eviction.trace");
    let t = trace.to_str().unwrap();
    let ok = d.join("ok");
    let (code, out, err) = sbrp_cli(&["cosim", "--trace", t, "--vcd", ok.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let all = std::fs::read_to_string(ok.join("10_eviction.rtl-all.sm0.vcd")).unwrap();
    let ports = std::fs::read_to_string(ok.join("10_eviction.rtl.sm0.vcd")).unwrap();
    let vars = |s: &str| {
        s.lines()
            .filter(|l| l.trim_start().starts_with("$var"))
            .count()
    };
    assert!(
        vars(&all) > 10 * vars(&ports),
        "{} vs {}",
        vars(&all),
        vars(&ports)
    );
    assert!(all.contains(" actr "), "no ACTR among the RTL's signals");
    assert!(all.contains("$timescale"));
    if !Path::new("/dev/full").exists() {
        return;
    }
    let full = d.join("full");
    std::fs::create_dir_all(&full).unwrap();
    std::os::unix::fs::symlink("/dev/full", full.join("10_eviction.rtl-all.sm0.vcd")).unwrap();
    let (code, out, err) = sbrp_cli(&["cosim", "--trace", t, "--vcd", full.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("cannot write waveform"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&full).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `--fst`: each waveform also as FST beside its VCD (the RTL's internal
/// signals included, read back by GTKWave's `fst2vcd`); a converter that
/// writes a corrupt FST ends the run with exit 2 and no waveform left.
#[test]
fn fst_waveforms_and_a_broken_converter() {
    let (_keep, d) = tmp("fst");
    let trace = litmus_dir().join("10_eviction.trace");
    let t = trace.to_str().unwrap();
    let ok = d.join("ok");
    let (code, out, err) = sbrp_cli(&[
        "cosim",
        "--trace",
        t,
        "--vcd",
        ok.to_str().unwrap(),
        "--fst",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    for side in ["rtl", "rtl-all", "model"] {
        let f = ok.join(format!("10_eviction.{side}.sm0.fst"));
        assert!(f.is_file(), "{} missing:\n{out}", f.display());
        assert!(out.contains(&f.display().to_string()), "{out}");
    }
    let back = std::process::Command::new("fst2vcd")
        .arg(ok.join("10_eviction.rtl-all.sm0.fst"))
        .output()
        .unwrap();
    assert!(back.status.success());
    let back = String::from_utf8_lossy(&back.stdout);
    assert!(back.contains(" actr "), "no ACTR in the FST's signals");
    assert!(!ok.join("10_eviction.rtl-all.sm0.fst.part").exists());

    // Negative control: the FST is read back before it is kept.
    let bad = d.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    let conv = d.join("vcd2fst-broken");
    std::fs::write(&conv, "#!/bin/sh\nprintf 'not an FST' > \"$2\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&conv, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, _, err) = sbrp_cli_env(
        &[
            "cosim",
            "--trace",
            t,
            "--vcd",
            bad.to_str().unwrap(),
            "--fst",
        ],
        &[("SBRP_VCD2FST", &conv)],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot write waveform"), "{err}");
    assert!(err.contains("fst2vcd"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&bad).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");

    // `--fst` needs `--vcd`: a usage error.
    let (code, _, err) = sbrp_cli(&["cosim", "--trace", t, "--fst"]);
    assert_eq!(code, 2, "{err}");
}
