//! The ladder (`sbrp sweep --figure ladder`; `docs/results.md`, "The
//! ladder"): Figure 6's SBRP columns from the idealised unit of the paper's
//! §6 (`gpu/src/ideal/`) up to the v2 unit as built, one realism switch per
//! step, so that a reader sees where SBRP's gain goes. Every step's
//! settings are the previous step's plus one; nothing is tuned.

use crate::error::Result;
use crate::gpu_run::Overrides;
use crate::suite::Table;
use crate::sweep::{Plan, Point, PointResult};

/// One step: its column label, what it adds, and its settings (whole, not
/// the difference).
pub struct Step {
    pub label: &'static str,
    pub what: &'static str,
    pub settings: &'static [(&'static str, &'static str)],
}

const IDEAL: (&str, &str) = ("ideal.unit", "true");
const REG: (&str, &str) = ("ideal.registered", "true");
const REPLAY: (&str, &str) = ("ideal.replay", "true");
const EPOCHS: (&str, &str) = ("ideal.epochs", "4");
const QUEUE: (&str, &str) = ("ideal.ord_queue", "2");
const STRICT: (&str, &str) = ("ideal.strict_head", "true");

/// The steps, left to right: the rungs up to the v2 unit, then the v2 unit
/// with the artifact's ack point (left out under `--artifact`, which has it
/// throughout), and beside the ladder the idealised unit with the paper's
/// single ACTR.
pub const STEPS: &[Step] = &[
    Step {
        label: "ideal",
        what: "the idealised unit: requests decided and answered in the cycle they arrive, refused at the port at no cost, unlimited ack epochs and ordering entries, a persist may flush past a gated head",
        settings: &[IDEAL],
    },
    Step {
        label: "+registered",
        what: "registered ports: decided two cycles after being taken, answered in the third; acks a cycle late; outputs from the start of the cycle",
        settings: &[IDEAL, REG],
    },
    Step {
        label: "+replay",
        what: "a request that cannot be done is answered replay and sent again (not held at the port)",
        settings: &[IDEAL, REG, REPLAY],
    },
    Step {
        label: "+4 epochs",
        what: "four ack epochs: when all are live no flush starts until the oldest drains",
        settings: &[IDEAL, REG, REPLAY, EPOCHS],
    },
    Step {
        label: "+queue 2",
        what: "at most two live ordering entries per warp",
        settings: &[IDEAL, REG, REPLAY, EPOCHS, QUEUE],
    },
    Step {
        label: "+strict head",
        what: "a gated head persist stops every persist behind it",
        settings: &[IDEAL, REG, REPLAY, EPOCHS, QUEUE, STRICT],
    },
    Step {
        label: "v2 unit",
        what: "the v2 unit as built (its reference model, cycle-exact with the RTL)",
        settings: &[],
    },
    Step {
        label: "v2 ack@L2",
        what: "the v2 unit with the artifact's ack point: a PM write acknowledged when it leaves the L2 (every model of the column, E1)",
        settings: &[("artifact.ack_at_l2", "true")],
    },
    Step {
        label: BESIDE,
        what: "beside the ladder: the idealised unit with the paper's single ACTR (FSM and EDM reset when ACTR is zero)",
        settings: &[IDEAL, ("ideal.epochs", "1")],
    },
];

/// The steps a sweep runs: under `--artifact` the ack point is the
/// artifact's throughout, so its own step is left out.
pub fn steps(base: &Overrides) -> Vec<&'static Step> {
    STEPS
        .iter()
        .filter(|s| !(base.artifact && s.label == "v2 ack@L2"))
        .collect()
}

fn owned(s: &[(&str, &str)]) -> Vec<(String, String)> {
    s.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A step's settings for the baselines (epoch presets): its keys that are
/// not the unit's.
fn baseline_settings(s: &Step) -> Vec<(String, String)> {
    owned(s.settings)
        .into_iter()
        .filter(|(k, _)| !k.starts_with("ideal."))
        .collect()
}

/// Per app: epoch-far and epoch-near at each distinct baseline setting,
/// sbrp-far and sbrp-near at each step.
pub fn points(apps: &[String], base: &Overrides) -> Vec<Point> {
    let steps = steps(base);
    let mut baselines: Vec<Vec<(String, String)>> = vec![];
    for s in &steps {
        let b = baseline_settings(s);
        if !baselines.contains(&b) {
            baselines.push(b);
        }
    }
    let mut v = vec![];
    for app in apps {
        let mut add = |preset: &str, settings: Vec<(String, String)>| {
            v.push(Point {
                app: app.clone(),
                preset: preset.into(),
                settings,
            })
        };
        for b in &baselines {
            add("epoch-far", b.clone());
            add("epoch-near", b.clone());
        }
        for s in &steps {
            add("sbrp-far", owned(s.settings));
            add("sbrp-near", owned(s.settings));
        }
    }
    v
}

/// Three tables, a column per step: SBRP-far and SBRP-near over epoch-far
/// (Figure 6's columns), and SBRP-near over epoch-near (the paper's +15%).
pub fn tables(
    apps: &[String],
    plan: &Plan,
    results: &[PointResult],
    base: &Overrides,
) -> Result<Vec<Table>> {
    let cycles =
        |app: &str, preset: &str, s: &[(String, String)]| plan.cycles(results, app, preset, s);
    let steps = steps(base);
    let labels: Vec<&str> = steps.iter().map(|s| s.label).collect();
    let studies = [
        (
            "ladder_far",
            "The ladder: SBRP-far over epoch-far (Figure 6), from the idealised unit to the v2 unit",
            "sbrp-far",
            "epoch-far",
        ),
        (
            "ladder_near",
            "The ladder: SBRP-near over epoch-far (Figure 6), from the idealised unit to the v2 unit",
            "sbrp-near",
            "epoch-far",
        ),
        (
            "ladder_near_near",
            "The ladder: SBRP-near over epoch-near, from the idealised unit to the v2 unit",
            "sbrp-near",
            "epoch-near",
        ),
    ];
    let mut out = vec![];
    for (name, title, preset, baseline) in studies {
        let mut t = Table::new(name, title, &labels);
        for app in apps {
            let row = steps
                .iter()
                .map(|s| {
                    let b = cycles(app, baseline, &baseline_settings(s))?;
                    let x = cycles(app, preset, &owned(s.settings))?;
                    (x > 0.0).then(|| b / x)
                })
                .collect();
            t.rows.push((app.clone(), row));
        }
        out.push(t.means());
    }
    Ok(out)
}

/// The label of the step beside the ladder (not joined to it in the plot).
pub const BESIDE: &str = "ideal 1 ACTR";

/// The three tables as one SVG, a panel each; the rungs only (a line
/// through the step beside the ladder would read as one more rung).
pub fn plot(tables: &[Table]) -> Result<String> {
    let rungs: Vec<Table> = tables
        .iter()
        .map(|t| t.keep_columns(|c| c != BESIDE))
        .collect();
    let y = [
        "SBRP-far speedup over epoch-far",
        "SBRP-near speedup over epoch-far",
        "SBRP-near speedup over epoch-near",
    ];
    crate::plot::table_panels_svg(
        &rungs,
        &["step (each adds one switch to the one before)"],
        &y,
    )
}

/// The steps as text: label and what it adds.
pub fn legend(base: &Overrides) -> String {
    steps(base)
        .iter()
        .map(|s| format!("  {:<13} {}\n", s.label, s.what))
        .collect()
}
