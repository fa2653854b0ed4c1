//! The workspace's import graph follows the rules its crate READMEs state.
//!
//! Every member's README has a line `Workspace crates it may use: ...` (its
//! normal and build dependencies) and may have `Tests may also use: ...`
//! (extra dev-dependencies), naming crates in backticks or saying `none`.
//! This test reads the real graph from `cargo metadata` and fails on any edge
//! a README does not allow, so a forbidden dependency fails CI.
//!
//! The repository's layout follows the top-level README too: every
//! top-level directory is in its layout table, every input of an external
//! tool (Verilator waivers, Yosys/ABC/OpenSTA scripts, SDC, the formal
//! environment) lives in `constraints/` and is listed in
//! `constraints/README.md` with the command that reads it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const MAY_USE: &str = "Workspace crates it may use:";
const TESTS_MAY_USE: &str = "Tests may also use:";

struct Member {
    name: String,
    dir: PathBuf,
    /// (dependency, kind): kind is "normal", "dev" or "build".
    deps: Vec<(String, String)>,
}

fn workspace_members() -> Vec<Member> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let members: BTreeSet<String> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    let packages = meta["packages"].as_array().unwrap();
    let names: BTreeSet<String> = packages
        .iter()
        .filter(|p| members.contains(p["id"].as_str().unwrap()))
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .filter(|p| members.contains(p["id"].as_str().unwrap()))
        .map(|p| Member {
            name: p["name"].as_str().unwrap().to_string(),
            dir: PathBuf::from(p["manifest_path"].as_str().unwrap())
                .parent()
                .unwrap()
                .to_path_buf(),
            deps: p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| names.contains(d["name"].as_str().unwrap()))
                .map(|d| {
                    (
                        d["name"].as_str().unwrap().to_string(),
                        d["kind"].as_str().unwrap_or("normal").to_string(),
                    )
                })
                .collect(),
        })
        .collect()
}

/// The crates named on the README line starting with `key` (None: no such line).
fn allowed(readme: &str, key: &str) -> Option<BTreeSet<String>> {
    let line = readme.lines().find(|l| l.trim_start().starts_with(key))?;
    let rest = &line.trim_start()[key.len()..];
    Some(
        rest.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect(),
    )
}

/// Edges of `deps` that the README text does not allow, as messages.
fn violations(name: &str, readme: &str, deps: &[(String, String)]) -> Vec<String> {
    let Some(normal) = allowed(readme, MAY_USE) else {
        return vec![format!("{name}: README has no `{MAY_USE}` line")];
    };
    let tests = allowed(readme, TESTS_MAY_USE).unwrap_or_default();
    deps.iter()
        .filter(|(d, kind)| !(normal.contains(d) || (kind == "dev" && tests.contains(d))))
        .map(|(d, kind)| format!("{name} -> {d} ({kind} dependency) is not allowed by its README"))
        .collect()
}

#[test]
fn every_workspace_edge_is_allowed_by_the_crate_readme() {
    let members = workspace_members();
    assert!(members.len() >= 5, "workspace members not found");
    let mut bad = vec![];
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for m in &members {
        let readme = std::fs::read_to_string(m.dir.join("README.md"))
            .unwrap_or_else(|_| panic!("{} has no README.md", m.name));
        bad.extend(violations(&m.name, &readme, &m.deps));
        graph.insert(
            m.name.clone(),
            m.deps
                .iter()
                .filter(|(_, k)| k != "dev")
                .map(|(d, _)| d.clone())
                .collect(),
        );
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // The two implementations of the spec stay independent of each other.
    for (a, b) in [("sbrp-hdl", "sbrp-sim-fast"), ("sbrp-sim-fast", "sbrp-hdl")] {
        assert!(
            !graph.get(a).is_some_and(|d| d.contains(b)),
            "{a} depends on {b}"
        );
    }
}

#[test]
fn a_forbidden_edge_is_reported() {
    // Negative control of the rule reader: an edge the README does not name.
    let readme =
        "# x\n\nWorkspace crates it may use: `sbrp-iface`.\nTests may also use: `sbrp-hdl`.\n";
    let deps = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert!(violations("x", readme, &deps(&[("sbrp-iface", "normal")])).is_empty());
    assert!(violations("x", readme, &deps(&[("sbrp-hdl", "dev")])).is_empty());
    let v = violations("x", readme, &deps(&[("sbrp-hdl", "normal")]));
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].contains("sbrp-hdl"), "{v:?}");
    let v = violations("x", "no rule line", &[]);
    assert!(v[0].contains("no `Workspace crates"), "{v:?}");
    let none = "Workspace crates it may use: none.\n";
    assert_eq!(
        violations("x", none, &deps(&[("sbrp-iface", "normal")])).len(),
        1
    );
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Top-level directories that are not build or tool output (`.gitignore`'s
/// `/target`, `/out`, ...) nor hidden.
fn top_level_dirs(root: &Path) -> Vec<String> {
    let ignored = ["target", "out", ".venv-openram"];
    let mut v: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            !n.starts_with('.') && !n.starts_with("target-") && !ignored.contains(&n.as_str())
        })
        .collect();
    v.sort();
    v
}

/// The directories of `dirs` that the layout table of `readme` (rows whose
/// first cell is a path in backticks) does not mention.
fn missing_from_layout(readme: &str, dirs: &[String]) -> Vec<String> {
    let firsts: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l[3..].split('`').next())
        .collect();
    dirs.iter()
        .filter(|d| !firsts.iter().any(|f| f.starts_with(&format!("{d}/"))))
        .cloned()
        .collect()
}

#[test]
fn every_top_level_directory_is_in_the_readme_layout_table() {
    let root = repo_root();
    let dirs = top_level_dirs(&root);
    assert!(dirs.iter().any(|d| d == "constraints"), "{dirs:?}");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let missing = missing_from_layout(&readme, &dirs);
    assert!(
        missing.is_empty(),
        "not in README.md's layout table: {missing:?}"
    );
    // negative control: a directory the table does not name is reported
    let mut more = dirs.clone();
    more.push("stray".into());
    assert_eq!(
        missing_from_layout(&readme, &more),
        vec!["stray".to_string()]
    );
}

/// Tool inputs by file name: what must live in `constraints/`.
fn is_tool_input(name: &str) -> bool {
    [".ys", ".abc", ".tcl", ".sdc", ".vlt", ".sv", ".conf"]
        .iter()
        .any(|e| name.ends_with(e))
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()) {
        let p = e.path();
        let n = e.file_name().to_string_lossy().into_owned();
        if n.starts_with('.') || n == "target" || n == "out" || n.starts_with("target-") {
            continue;
        }
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn tool_inputs_live_in_constraints_and_its_readme_lists_each() {
    let root = repo_root();
    let mut files = vec![];
    files_under(&root, &mut files);
    let rel = |p: &Path| {
        p.strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    let stray: Vec<String> = files
        .iter()
        .map(|p| rel(p))
        .filter(|r| !r.starts_with("constraints/"))
        .filter(|r| is_tool_input(r))
        .collect();
    assert!(
        stray.is_empty(),
        "tool inputs outside constraints/: {stray:?}"
    );
    let readme = std::fs::read_to_string(root.join("constraints/README.md")).unwrap();
    let listed: Vec<String> = readme
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l[3..].split('`').next().map(str::to_string))
        .collect();
    let present: Vec<String> = files
        .iter()
        .map(|p| rel(p))
        .filter_map(|r| r.strip_prefix("constraints/").map(str::to_string))
        .filter(|r| r != "README.md")
        .collect();
    assert!(present.len() >= 8, "{present:?}");
    for f in &present {
        assert!(
            listed.contains(f),
            "constraints/{f} is not in constraints/README.md"
        );
    }
    for f in &listed {
        assert!(
            present.contains(f),
            "constraints/README.md lists {f}, which does not exist"
        );
    }
    assert!(is_tool_input("x/sbrp_pb.sdc") && !is_tool_input("x/lib.rs"));
}
