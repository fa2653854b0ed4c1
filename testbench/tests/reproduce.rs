//! `sbrp reproduce` as a user runs it: a quick report of a few steps, its
//! `index.html` opened in headless Chromium (Debian's `chromium`, installed
//! by scripts/setup.sh) with every image loaded and every link resolving to
//! a file of the report; a failing step shown as failed with exit 1; bad
//! options refused with exit 2 and nothing written.

mod common;

use std::path::Path;
use std::process::Command;

use common::{outcome, run_sbrp};

fn sbrp(args: &[&str]) -> (i32, String, String) {
    outcome(run_sbrp(args, &[]))
}

/// Values of `attr="..."` in an HTML text, in order.
fn attr_values(html: &str, attr: &str) -> Vec<String> {
    let pat = format!(" {attr}=\"");
    html.match_indices(&pat)
        .map(|(i, _)| {
            let rest = &html[i + pat.len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

/// `%XX` escapes of a link decoded.
fn unescape(h: &str) -> String {
    let b = h.as_bytes();
    let mut v = vec![];
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            v.push(u8::from_str_radix(&h[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            v.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(v).unwrap()
}

/// The page's DOM after Chromium loaded it and its images, or `None`
/// (with the reason printed) when Chromium is not installed outside CI.
fn chromium_dom(page: &Path) -> Option<String> {
    let have = Command::new("chromium").arg("--version").output().is_ok();
    if !have {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is missing: scripts/setup.sh installs it"
        );
        eprintln!("skipped the browser check: no `chromium` (bash scripts/setup.sh installs it)");
        return None;
    }
    let profile = tempfile::tempdir().unwrap();
    let o = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn a_quick_report_opens_in_chromium_with_every_image_and_link() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("report");
    let o = out.to_str().unwrap();
    let (code, stdout, err) = sbrp(&[
        "reproduce",
        "--quick",
        "--steps",
        "verilog,lint,suite",
        "--apps",
        "scan",
        "--jobs",
        "2",
        "--out",
        o,
    ]);
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(stdout.contains("all passed"), "{stdout}");
    let page = out.join("index.html");
    let html = std::fs::read_to_string(&page).unwrap();
    for s in [
        "sbrp verilog --out rtl",
        "verilator --lint-only",
        "sbrp suite --out suite",
    ] {
        assert!(html.contains(s), "{s} missing from the page");
    }
    // Every link resolves to a file of the report.
    let links: Vec<String> = attr_values(&html, "href")
        .into_iter()
        .filter(|h| !h.starts_with('#'))
        .collect();
    for h in &links {
        let f = out.join(unescape(h));
        assert!(f.is_file(), "link {h} resolves to nothing");
    }
    for f in [
        "rtl/sbrp_pb.v",
        "suite/fig6.png",
        "suite/fig6.csv",
        "config/sbrp-near.toml",
        "logs/suite.txt",
    ] {
        assert!(links.iter().any(|l| l == f), "no link to {f}");
    }
    // A configuration of the report loads and runs as its preset does.
    let prog = d.path().join("scan.prog");
    let pg = prog.to_str().unwrap();
    let (code, _, err) = sbrp(&["trace", "--app", "scan", "--size", "1024", "--out", pg]);
    assert_eq!(code, 0, "{err}");
    let cfg = out.join("config/sbrp-near.toml");
    let cycles = |how: &[&str]| {
        let mut a = vec!["run", "--trace", pg];
        a.extend(how);
        let (code, s, err) = sbrp(&a);
        assert_eq!(code, 0, "{s}{err}");
        s.lines()
            .find(|l| l.starts_with("cycles "))
            .unwrap()
            .to_string()
    };
    assert_eq!(
        cycles(&["--config", cfg.to_str().unwrap()]),
        cycles(&["--preset", "sbrp-near"])
    );
    // One image per table of the study (Figures 6-9, 11 and SPB's).
    let tables = std::fs::read_dir(out.join("suite"))
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            let n = n.to_string_lossy();
            n.ends_with(".json") && n != "runs.json"
        })
        .count();
    let imgs = attr_values(&html, "src");
    assert!(tables >= 6, "{tables} tables");
    assert_eq!(imgs.len(), tables, "{imgs:?}");
    let Some(dom) = chromium_dom(&page) else {
        return;
    };
    let loaded = attr_values(&dom, "data-images-loaded");
    let broken = attr_values(&dom, "data-images-broken");
    assert_eq!(loaded, vec![tables.to_string()], "images loaded");
    assert_eq!(broken, vec!["0".to_string()], "images broken");
    // A broken image is seen as broken (the check checks).
    std::fs::remove_file(out.join("suite/fig7.png")).unwrap();
    let dom = chromium_dom(&page).unwrap();
    assert_eq!(
        attr_values(&dom, "data-images-broken"),
        vec!["1".to_string()]
    );
}

#[test]
fn a_failing_step_is_shown_failed_and_exits_1() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("report");
    // The lint without the RTL: Verilator fails.
    let (code, stdout, err) = sbrp(&[
        "reproduce",
        "--steps",
        "lint",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{stdout}{err}");
    assert!(stdout.contains("1 FAILED"), "{stdout}");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("class=\"FAILED\">FAILED") || html.contains("class=\"ERROR\">ERROR"));
    assert!(out.join("logs/lint.txt").is_file());
}

#[test]
fn bad_options_are_refused_with_exit_2_and_nothing_written() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("report");
    let o = out.to_str().unwrap();
    for (args, word) in [
        (vec!["--steps", "verilog,nope"], "nope"),
        (vec!["--apps", "scan,bogus"], "bogus"),
        (vec!["--jobs", "0"], "jobs"),
    ] {
        let mut a = vec!["reproduce", "--out", o];
        a.extend(args);
        let (code, stdout, err) = sbrp(&a);
        assert_eq!(code, 2, "{a:?}: {stdout}{err}");
        assert!(err.contains(word), "{a:?}: {err}");
        assert!(stdout.is_empty(), "{a:?}: {stdout}");
        assert!(!out.exists(), "{a:?} wrote {}", out.display());
    }
    // --list-steps prints the commands and runs nothing.
    let (code, stdout, _) = sbrp(&["reproduce", "--quick", "--list-steps", "--out", o]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("crash-scan")
            && stdout.contains("--shrink 8")
            && stdout.contains("sweep --figure ladder --out ladder"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("area-sweep"),
        "the quick form has no area sweep"
    );
    assert!(!out.exists());
}
