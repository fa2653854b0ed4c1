//! Tests of the GPU configuration (`gpu/src/config.rs`, `gpu/src/presets.rs`;
//! `docs/model-params.md`): presets, loading, `--set` and validation.

use sbrp_gpu::config::{ConfigError, Durability, GpuConfig, Model, PmPlace, Policy};
use sbrp_gpu::presets::{artifact_mode, preset, preset_or_err, presets, row, Binary};

const NAMES: [&str; 23] = [
    "gpm-far",
    "epoch-far",
    "epoch-near",
    "sbrp-far",
    "sbrp-near",
    "epoch-far-eadr",
    "sbrp-far-eadr",
    "sbrp-far-dev",
    "sbrp-near-dev",
    "epoch-near-bw50",
    "sbrp-near-bw50",
    "epoch-near-bw200",
    "sbrp-near-bw200",
    "sbrp-near-pb64",
    "sbrp-near-pb128",
    "sbrp-near-pb512",
    "sbrp-near-win2",
    "sbrp-near-win4",
    "sbrp-near-win8",
    "sbrp-near-win10",
    "sbrp-near-win12",
    "spb-far",
    "spb-near",
];

fn get(name: &str) -> GpuConfig {
    preset(name).unwrap_or_else(|| panic!("preset {name} missing"))
}

#[test]
fn presets_have_exactly_the_listed_names_in_order() {
    let listed: Vec<&str> = presets().iter().map(|(n, _)| *n).collect();
    assert_eq!(listed, NAMES);
    let mut sorted = listed.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), listed.len(), "duplicate preset name");
    for (name, desc) in presets() {
        assert!(preset(name).is_some(), "{name} listed but not built");
        assert!(!desc.is_empty() && !desc.contains('\n'), "{name}: {desc:?}");
    }
    assert!(preset("sbrp-near-pb256").is_none());
    assert!(preset("gpm-near").is_none());
}

#[test]
fn every_preset_validates_and_no_two_are_equal() {
    let all: Vec<(&str, GpuConfig)> = NAMES.iter().map(|n| (*n, get(n))).collect();
    for (name, cfg) in &all {
        if let Err(e) = cfg.validate() {
            panic!("{name}: {e}");
        }
    }
    for (i, (a, ca)) in all.iter().enumerate() {
        for (b, cb) in &all[i + 1..] {
            assert_ne!(ca, cb, "{a} and {b} are the same configuration");
        }
    }
}

#[test]
fn default_is_sbrp_near() {
    assert_eq!(get("sbrp-near"), GpuConfig::default());
}

#[test]
fn presets_change_what_their_names_say() {
    let d = GpuConfig::default();
    for name in NAMES {
        let c = get(name);
        let r = row(name).unwrap();
        // The row is what the configuration is built from and what the
        // testbench reads (build, program variant).
        assert_eq!(
            (c.model, c.pm.place, c.pm.durability),
            (r.model, r.place, r.durability),
            "{name}"
        );
        assert_eq!(r.promote, c.model.persist().promotes(), "{name}");
        assert_eq!(r.binary == Binary::Gpm, c.model == Model::Gpm, "{name}");
        // The name says the row: the model's family first, `-dev` for
        // promotion, `-far`, `-eadr`.
        let family = c.model.name().split('-').next().unwrap();
        assert!(name.starts_with(&format!("{family}-")), "{name}");
        assert_eq!(name.ends_with("-dev"), r.promote, "{name}");
        let far = name.contains("-far");
        assert_eq!(c.pm.place == PmPlace::Far, far, "{name}");
        let eadr = name.ends_with("-eadr");
        assert_eq!(c.pm.durability == Durability::Eadr, eadr, "{name}");
        // The paper-faithful far keeps the NVM's near numbers behind PCIe.
        if far {
            assert_eq!(c.pm.latency, d.pm.latency, "{name}");
            assert_eq!(c.pcie, d.pcie, "{name}");
        }
        assert_eq!(c.artifact, d.artifact, "{name}");
    }
    for (name, r, w) in [
        ("epoch-near-bw50", 42.0, 21.0),
        ("sbrp-near-bw50", 42.0, 21.0),
        ("epoch-near-bw200", 168.0, 84.0),
        ("sbrp-near-bw200", 168.0, 84.0),
        ("sbrp-near", 84.0, 42.0),
        ("sbrp-far", 84.0, 42.0),
    ] {
        let c = get(name);
        assert_eq!(
            (c.pm.read_bandwidth, c.pm.write_bandwidth),
            (r, w),
            "{name}"
        );
    }
    for (name, entries) in [
        ("sbrp-near-pb64", 64),
        ("sbrp-near-pb128", 128),
        ("sbrp-near-pb512", 512),
    ] {
        let c = get(name);
        assert_eq!(c.pb.entries, entries, "{name}");
        assert_eq!(c.pb.window, 6, "{name}");
    }
    assert_eq!(get("sbrp-near-pb512").pb.entries, d.l1_lines());
    for w in [2, 4, 8, 10, 12] {
        let c = get(&format!("sbrp-near-win{w}"));
        assert_eq!(c.pb.window, w);
        assert_eq!(c.pb.entries, 256);
    }
}

#[test]
fn unknown_preset_suggests_the_nearest() {
    let msg = preset_or_err("sbrp-nera").unwrap_err().to_string();
    assert!(msg.contains("`sbrp-nera`"), "{msg}");
    assert!(msg.contains("did you mean `sbrp-near`"), "{msg}");
    assert!(msg.contains("epoch-far-eadr"), "{msg}");
    assert_eq!(preset_or_err("epoch-far").unwrap(), get("epoch-far"));
}

#[test]
fn artifact_mode_far_and_near() {
    let mut far = get("sbrp-far");
    artifact_mode(&mut far);
    assert!(far.artifact.no_kernel_end_drain);
    assert!(far.artifact.ack_at_l2);
    assert!(far.artifact.l2_write_allocate_read);
    assert!(far.artifact.pcie_per_channel);
    assert!(far.artifact.dfence_keeps_l1);
    assert_eq!(far.pm.latency, 900);
    assert_eq!(
        (far.pm.read_bandwidth, far.pm.write_bandwidth),
        (28.0, 28.0)
    );
    assert_eq!(far.pcie.latency, 0);
    far.validate().unwrap();

    let mut eadr = get("epoch-far-eadr");
    artifact_mode(&mut eadr);
    assert_eq!(eadr.pm.latency, 600);
    eadr.validate().unwrap();

    let mut near = get("sbrp-near");
    artifact_mode(&mut near);
    assert!(near.artifact.ack_at_l2);
    assert_eq!(near.pm, GpuConfig::default().pm);
    assert_eq!(near.pcie, GpuConfig::default().pcie);
}

#[test]
fn pb_params_follow_the_config() {
    assert_eq!(
        GpuConfig::default().pb_params(),
        sbrp_iface::PbParams::default()
    );
    let mut c = get("sbrp-near-pb128");
    c.core.warps_per_sm = 16;
    c.pb.policy = Policy::Eager;
    let p = c.pb_params();
    assert_eq!((p.entries, p.warps, p.lines), (128, 16, 512));
    assert_eq!(p.policy, sbrp_iface::FlushPolicy::Eager);
}

/// Applies `f` to the default (or `base`) and expects `validate` to name `key`.
fn refused(base: &str, key: &str, f: impl Fn(&mut GpuConfig)) -> String {
    let mut c = get(base);
    f(&mut c);
    let e = match c.validate() {
        Ok(()) => panic!("accepted a bad {key}"),
        Err(e) => e,
    };
    assert_eq!(e.key(), Some(key), "{e}");
    let msg = e.to_string();
    assert!(msg.contains(&format!("`{key}`")), "{msg}");
    msg
}

#[test]
fn impossible_values_are_refused_naming_the_key() {
    let n = "sbrp-near";
    refused(n, "core.sms", |c| c.core.sms = 0);
    refused(n, "core.clock_mhz", |c| c.core.clock_mhz = 0);
    refused(n, "core.schedulers", |c| c.core.schedulers = 0);
    refused(n, "core.warps_per_sm", |c| c.core.warps_per_sm = 0);
    refused("epoch-near", "core.warps_per_sm", |c| {
        c.core.warps_per_sm = 65
    });
    refused(n, "core.ctas_per_sm", |c| c.core.ctas_per_sm = 0);
    for v in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        refused(n, "dram.bandwidth", |c| c.dram.bandwidth = v);
        refused(n, "pm.read_bandwidth", |c| c.pm.read_bandwidth = v);
        refused(n, "pm.write_bandwidth", |c| c.pm.write_bandwidth = v);
        refused("sbrp-far", "pcie.bandwidth", |c| c.pcie.bandwidth = v);
    }
    refused(n, "dram.channels", |c| c.dram.channels = 0);
    refused(n, "pm.channels", |c| c.pm.channels = 0);
    refused(n, "l2.slices", |c| c.l2.slices = 0);
    refused("epoch-near", "pb.window", |c| c.pb.window = 0);
    refused(n, "pb.window", |c| c.pb.window = 256);
    refused(n, "pb.entries", |c| c.pb.entries = 100);
    refused(n, "pb.entries", |c| c.pb.entries = 8);
    refused(n, "pb.actr_bits", |c| c.pb.actr_bits = 5);
    refused(n, "core.warps_per_sm", |c| c.core.warps_per_sm = 48);
    // 128 lines cannot hold 256 PB entries.
    let msg = refused(n, "l1.size", |c| {
        c.l1.size = 16384;
        c.l1.assoc = 128;
    });
    assert!(msg.contains("128 lines"), "{msg}");
    refused(n, "l1.size", |c| c.l1.size = 65536 + 64);
    refused(n, "l1.line", |c| c.l1.line = 100);
    refused(n, "l1.line", |c| c.l1.line = 0);
    refused(n, "l1.sector", |c| c.l1.sector = 8);
    refused(n, "l1.assoc", |c| c.l1.assoc = 3);
    refused(n, "l1.assoc", |c| c.l1.assoc = 0);
    refused(n, "l2.assoc", |c| c.l2.assoc = 3);
    let msg = refused(n, "model", |c| c.model = Model::Gpm);
    assert!(msg.contains("GPM is PM-far only"), "{msg}");
    let msg = refused(n, "pm.durability", |c| c.pm.durability = Durability::Eadr);
    assert!(msg.contains("eADR applies to PM-far"), "{msg}");
}

#[test]
fn pb_limits_apply_only_where_there_is_a_pb() {
    // Epoch has no PB: a warp count the unit does not build is fine there.
    let mut c = get("epoch-near");
    c.core.warps_per_sm = 48;
    c.pb.entries = 100;
    c.validate().unwrap();
    c.model = Model::SbrpDevice;
    assert_eq!(c.validate().unwrap_err().key(), Some("pb.entries"));
}

#[test]
fn partial_toml_overrides_defaults() {
    let text =
        "model = \"epoch\"\n\n[pm]\nwrite_bandwidth = 21 # integer into GB/s\nplace = \"far\"\n";
    let c = GpuConfig::from_toml_str(text, "part.toml").unwrap();
    let mut want = GpuConfig {
        model: Model::Epoch,
        ..GpuConfig::default()
    };
    want.pm.write_bandwidth = 21.0;
    want.pm.place = PmPlace::Far;
    assert_eq!(c, want);
    assert_eq!(
        GpuConfig::from_toml_str("", "empty.toml").unwrap(),
        GpuConfig::default()
    );
}

fn file_err(text: &str) -> (String, Option<String>) {
    match GpuConfig::from_toml_str(text, "cfg/x.toml") {
        Ok(c) => panic!("accepted {text:?} as {c:?}"),
        Err(e) => (e.to_string(), e.key().map(str::to_string)),
    }
}

#[test]
fn unknown_key_in_file_gives_file_line_and_key() {
    let (msg, key) = file_err("model = \"epoch\"\n\n[pm]\nlatency = 3\nwirte_bandwidth = 2\n");
    assert!(msg.starts_with("cfg/x.toml:5: "), "{msg}");
    assert_eq!(key.as_deref(), Some("pm.wirte_bandwidth"));
    assert!(msg.contains("did you mean `pm.write_bandwidth`"), "{msg}");

    let (msg, key) = file_err("remote_visibility = 3\nbogus = 1\n");
    assert!(msg.starts_with("cfg/x.toml:2: "), "{msg}");
    assert_eq!(key.as_deref(), Some("bogus"));

    let (msg, key) = file_err("# comment\npb.windw = 4\n");
    assert!(msg.starts_with("cfg/x.toml:2: "), "{msg}");
    assert_eq!(key.as_deref(), Some("pb.windw"));
    assert!(msg.contains("`pb.window`"), "{msg}");

    let (msg, key) = file_err("[ artifact ]\nack_at_L2 = true\n");
    assert!(msg.starts_with("cfg/x.toml:2: "), "{msg}");
    assert_eq!(key.as_deref(), Some("artifact.ack_at_L2"));

    // An unknown table: the header is the key, not the table above it.
    let (msg, key) = file_err("[core]\nsms = 1\n[pmm]\n");
    assert!(msg.starts_with("cfg/x.toml:3: "), "{msg}");
    assert_eq!(key.as_deref(), Some("pmm"));
    let (_, key) = file_err("[pm]\nlatency = 1\n[pm.extra]\n");
    assert_eq!(key.as_deref(), Some("pm.extra"));
}

#[test]
fn wrong_types_in_file_give_file_line_and_key() {
    let (msg, key) = file_err("[core]\nsms = 30\n\n[pb]\nwindow = \"six\"\n");
    assert!(msg.starts_with("cfg/x.toml:5: "), "{msg}");
    assert_eq!(key.as_deref(), Some("pb.window"));

    let (msg, key) = file_err("model = \"gpu\"\n");
    assert!(msg.starts_with("cfg/x.toml:1: "), "{msg}");
    assert_eq!(key.as_deref(), Some("model"));
    assert!(msg.contains("sbrp-device"), "{msg}");

    let (msg, key) = file_err("\npm = { place = \"far\", latency = -1 }\n");
    assert!(msg.starts_with("cfg/x.toml:2: "), "{msg}");
    assert_eq!(key.as_deref(), Some("pm.latency"));

    let (msg, key) = file_err("[artifact]\nack_at_l2 = 1\n");
    assert!(msg.starts_with("cfg/x.toml:2: "), "{msg}");
    assert_eq!(key.as_deref(), Some("artifact.ack_at_l2"));

    // A syntax error still has a line.
    let (msg, _) = file_err("[pm]\nlatency = \n");
    assert!(msg.starts_with("cfg/x.toml:2: "), "{msg}");
}

#[test]
fn load_reads_a_file_and_names_a_missing_one() {
    let dir = std::env::temp_dir().join(format!("sbrp-gpu-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("near-win8.toml");
    std::fs::write(&path, "[pb]\nwindow = 8\n").unwrap();
    assert_eq!(GpuConfig::load(&path).unwrap(), get("sbrp-near-win8"));
    std::fs::write(&path, "[pb]\nwindow = 8\nsize = 3\n").unwrap();
    let msg = GpuConfig::load(&path).unwrap_err().to_string();
    assert!(msg.starts_with(&format!("{}:3: ", path.display())), "{msg}");
    std::fs::remove_dir_all(&dir).unwrap();
    let e = GpuConfig::load(dir.join("none.toml")).unwrap_err();
    assert!(matches!(e, ConfigError::Read { .. }), "{e:?}");
    assert!(e.to_string().contains("none.toml"), "{e}");
}

#[test]
fn every_preset_round_trips_through_toml() {
    for name in NAMES {
        let c = get(name);
        let text = c.to_toml_string();
        let back = GpuConfig::from_toml_str(&text, name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, c, "{name}");
    }
}

#[test]
fn set_changes_nested_keys() {
    let mut c = GpuConfig::default();
    c.set("pm.write_bandwidth", "21").unwrap();
    c.set("pm.read_bandwidth", "42.5").unwrap();
    c.set("pb.window", "8").unwrap();
    c.set("model", "epoch").unwrap();
    c.set("artifact.ack_at_l2", "true").unwrap();
    c.set("pm.place", "\"far\"").unwrap();
    c.set("pb.policy", "eager").unwrap();
    c.set_arg("core.sms = 16").unwrap();
    c.set_arg("remote_visibility=7").unwrap();
    assert_eq!(c.pm.write_bandwidth, 21.0);
    assert_eq!(c.pm.read_bandwidth, 42.5);
    assert_eq!(c.pb.window, 8);
    assert_eq!(c.model, Model::Epoch);
    assert!(c.artifact.ack_at_l2);
    assert_eq!(c.pm.place, PmPlace::Far);
    assert_eq!(c.pb.policy, Policy::Eager);
    assert_eq!(c.core.sms, 16);
    assert_eq!(c.remote_visibility, 7);
    // Nothing else moved.
    let mut want = GpuConfig {
        model: Model::Epoch,
        remote_visibility: 7,
        ..GpuConfig::default()
    };
    want.pm.write_bandwidth = 21.0;
    want.pm.read_bandwidth = 42.5;
    want.pb.window = 8;
    want.artifact.ack_at_l2 = true;
    want.pm.place = PmPlace::Far;
    want.pb.policy = Policy::Eager;
    want.core.sms = 16;
    assert_eq!(c, want);
}

/// `pm.reorder` (`docs/model-memory.md` §6.1): off by default and in every
/// preset, settable from a file and by `--set`, valid on both places.
#[test]
fn pm_reorder_is_off_by_default_and_settable() {
    for (name, _) in presets() {
        assert!(!get(name).pm.reorder, "{name}");
    }
    let c = GpuConfig::from_toml_str("[pm]\nplace = \"far\"\nreorder = true\n", "r.toml").unwrap();
    assert!(c.pm.reorder);
    c.validate().unwrap();
    let mut c = get("sbrp-far");
    c.set("pm.reorder", "true").unwrap();
    assert!(c.pm.reorder);
    c.validate().unwrap();
    // Near already reorders across its channels: accepted, no effect.
    let mut n = GpuConfig::default();
    n.set_arg("pm.reorder=true").unwrap();
    n.validate().unwrap();
    let e = n.set("pm.reorder", "yes").unwrap_err();
    assert_eq!(e.key(), Some("pm.reorder"));
    assert!(e.to_string().contains("true or false"), "{e}");
    assert!(GpuConfig::from_toml_str("[pm]\nreorder = 1\n", "r.toml").is_err());
    // Its host ring's hop latency: one ring clock at 3 GHz in core cycles,
    // settable, 0 or more and finite.
    let mut c = get("sbrp-far");
    assert_eq!(c.pm.fabric_hop, 0.455);
    c.set_arg("pm.fabric_hop=0").unwrap();
    c.validate().unwrap();
    for bad in ["-0.5", "inf", "nan"] {
        let mut c = get("sbrp-far");
        c.set("pm.fabric_hop", bad).unwrap();
        let e = c.validate().unwrap_err();
        assert_eq!(e.key(), Some("pm.fabric_hop"), "{bad}: {e}");
    }
}

#[test]
fn set_refuses_unknown_keys_with_a_suggestion() {
    let mut c = GpuConfig::default();
    for (key, hint) in [
        ("pb.windw", Some("pb.window")),
        ("window", Some("pb.window")),
        ("pm.write-bandwidth", Some("pm.write_bandwidth")),
        ("zzz.qqq", None),
        ("pm.latency.x", Some("pm.latency")),
        ("", None),
    ] {
        let e = c.set(key, "1").unwrap_err();
        match &e {
            ConfigError::UnknownKey { key: k, suggestion } => {
                assert_eq!(k, key);
                assert_eq!(suggestion.as_deref(), hint, "{key}");
            }
            other => panic!("{key}: {other:?}"),
        }
        assert!(
            e.to_string().contains(&format!("unknown key `{key}`")),
            "{e}"
        );
    }
    assert_eq!(c, GpuConfig::default());
}

#[test]
fn set_refuses_bad_values_naming_key_and_type() {
    let mut c = GpuConfig::default();
    for (key, value, expect) in [
        ("pb.window", "abc", "expected an integer"),
        ("pb.window", "2.5", "expected an integer"),
        ("pb.window", "-1", "u32"),
        ("pm.write_bandwidth", "fast", "expected a number"),
        ("artifact.ack_at_l2", "yes", "expected true or false"),
        ("model", "quantum", "sbrp-device"),
        ("pm.durability", "nvdimm", "eadr"),
        // The policy is an enum: parsed here, once.
        ("pb.policy", "sometimes", "lazy"),
        ("pm", "3", "pm.write_bandwidth"),
    ] {
        let e = c.set(key, value).unwrap_err();
        assert!(matches!(e, ConfigError::BadValue { .. }), "{e:?}");
        assert_eq!(e.key(), Some(key));
        let msg = e.to_string();
        assert!(msg.contains(&format!("`{key}`")), "{msg}");
        assert!(msg.contains(expect), "{key}={value}: {msg}");
    }
    assert_eq!(c, GpuConfig::default());
    assert!(matches!(
        c.set_arg("pb.window"),
        Err(ConfigError::SetSyntax(_))
    ));
}

#[test]
fn docs_table_every_key_and_preset() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/model-params.md");
    let doc = std::fs::read_to_string(path).expect("docs/model-params.md");
    let keys = GpuConfig::keys();
    assert!(keys.len() > 40, "{keys:?}");
    for key in keys {
        assert!(doc.contains(&format!("`{key}`")), "{key} missing in {path}");
    }
    for name in NAMES {
        assert!(
            doc.contains(&format!("`{name}`")),
            "{name} missing in {path}"
        );
    }
}

/// Issue 26: numbers that passed validation and then panicked (or were
/// silently ignored) are refused by the one range table, whether they come
/// from `--set` or from a file; every preset, with and without the
/// artifact's mode, stays inside it.
#[test]
fn every_number_is_range_checked_the_same_way_in_files_and_sets() {
    for name in NAMES {
        let mut c = preset(name).unwrap();
        c.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        artifact_mode(&mut c);
        c.validate()
            .unwrap_or_else(|e| panic!("{name} artifact: {e}"));
    }
    for (key, value, allowed) in [
        (
            "pm.write_bandwidth",
            "1e308",
            "GB/s at core.clock_mhz = 1365",
        ),
        ("pm.write_bandwidth", "5e-324", "GB/s"),
        ("pm.write_bandwidth", "1e-20", "GB/s"),
        ("pm.read_bandwidth", "nan", "GB/s"),
        ("dram.bandwidth", "inf", "GB/s"),
        ("pcie.bandwidth", "-1", "GB/s"),
        ("l2.assoc", "512", "allowed 1..=256"),
        ("l1.line", "8192", "allowed 1..=4096"),
        ("core.sms", "0", "allowed 1..=1024"),
        ("core.warps_per_sm", "65", "allowed 1..=64"),
        ("pm.fabric_hop", "1e300", "0 to 1000000"),
    ] {
        let mut c = GpuConfig::default();
        c.set(key, value).unwrap();
        let e = c.validate().unwrap_err();
        assert_eq!(e.key(), Some(key), "{key}={value}: {e}");
        assert!(e.to_string().contains(allowed), "{key}={value}: {e}");
        // The same value in a file: the same refusal.
        let (table, leaf) = key.split_once('.').unwrap();
        let text = format!("[{table}]\n{leaf} = {value}\n");
        if let Ok(f) = GpuConfig::from_toml_str(&text, "c.toml") {
            let e2 = f.validate().unwrap_err();
            assert_eq!(e2.to_string(), e.to_string(), "{key}={value}");
        }
    }
    // The bounds themselves run.
    let mut c = GpuConfig::default();
    c.set("pm.write_bandwidth", "0.0014").unwrap();
    c.set("l2.assoc", "256").unwrap();
    c.set("l2.slice_size", "262144").unwrap();
    c.validate().unwrap();
    sbrp_gpu::Gpu::with_model_units(&c).unwrap();
}

/// Every key set to edge values: each either refused by `validate` (or
/// `set`) or run by the model on a small program without a panic (issue
/// 26: the one validation path must cover every number the model uses).
#[test]
fn edge_values_of_every_key_are_refused_or_run() {
    use sbrp_trace::program::parse_program;
    let prog = parse_program(
        "program p\nkernel k grid=3 block=64\ncta 0..3\nwarp 0\n  st.pm 0x1000 +4\n  ofence\n  st.global 0x8000 +8\n  prel.dev pm 0x9000 1\n  dfence\nwarp 1\n  pacq.dev pm 0x9000 1\n  ld.pm 0x1000 +4\n  atom.global mask=1 0x8000 +0\n",
        "p.prog",
    )
    .unwrap();
    let values = [
        "0",
        "1",
        "2",
        "3",
        "7",
        "64",
        "65",
        "255",
        "256",
        "257",
        "4096",
        "65536",
        "1000000",
        "4294967295",
        "1e308",
        "5e-324",
        "1e-20",
        "-1",
        "nan",
        "inf",
    ];
    let (mut ran, mut refused) = (0, 0);
    // SBRP: the model that uses the most keys (the persist buffer's too).
    for base in ["sbrp-near"] {
        for key in GpuConfig::keys() {
            for v in values {
                let mut c = preset(base).unwrap();
                if c.set(&key, v).is_err() || c.validate().is_err() {
                    refused += 1;
                    continue;
                }
                if c.core.sms > 64 {
                    c.core.sms = 64; // a smaller GPU of the same kind, for speed
                }
                let run = std::panic::catch_unwind(|| {
                    let mut g = sbrp_gpu::Gpu::with_model_units(&c).unwrap();
                    g.run(
                        &prog,
                        sbrp_gpu::RunOpts {
                            max_cycles: Some(30_000),
                            ..sbrp_gpu::RunOpts::default()
                        },
                    )
                });
                assert!(run.is_ok(), "{base} with {key}={v} panicked");
                ran += 1;
            }
        }
    }
    assert!(ran > 250 && refused > 250, "ran {ran}, refused {refused}");
}
