//! The averages the SBRP paper states in its text for Figures 6-11
//! (../shared/notes/sbrp-benchmarks.md §4), for marking on the plots.
//! Figure 8 has no stated numbers and Figure 11 only a bound ("within
//! 3%"), so neither has a mark.
//! Only what the text states, or follows from two stated ratios by one
//! multiplication (marked `derived`); the figures' bar heights are not in
//! the text and nothing here is fitted to our results.

/// One stated average: a table's column and the value the paper gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stated {
    /// The table's name (`fig6`, ...), as in [`crate::suite::Table::name`].
    pub table: &'static str,
    /// The column's label in that table.
    pub column: &'static str,
    pub value: f64,
    /// Where in the paper, or how it is derived.
    pub source: &'static str,
    /// Computed from two stated ratios rather than stated itself.
    pub derived: bool,
}

const fn s(table: &'static str, column: &'static str, value: f64, source: &'static str) -> Stated {
    Stated {
        table,
        column,
        value,
        source,
        derived: false,
    }
}

const fn d(table: &'static str, column: &'static str, value: f64, source: &'static str) -> Stated {
    Stated {
        table,
        column,
        value,
        source,
        derived: true,
    }
}

/// Every average the paper states for a column of our tables.
pub const STATED: &[Stated] = &[
    // Figure 6 is normalised to epoch-far.
    d(
        "fig6",
        "gpm-far",
        1.0 / 1.06,
        "§7.2: epoch-far +6% over GPM",
    ),
    s(
        "fig6",
        "epoch-near",
        2.16,
        "§7.2: epoch-near +116% over epoch-far",
    ),
    s(
        "fig6",
        "sbrp-far",
        1.14,
        "§7.2: SBRP-far +14% over epoch-far",
    ),
    d(
        "fig6",
        "sbrp-near",
        2.16 * 1.15,
        "§7.2: epoch-near 2.16 x SBRP-near +15% over epoch-near",
    ),
    s("fig7", "far", 0.77, "§7.2: scopes give 77% of the speedup"),
    s("fig7", "near", 0.77, "§7.2: scopes give 77% of the speedup"),
    s("fig9", "sbrp-far-eadr", 1.14, "§7.2: +14% with eADR"),
    s("fig10b", "50%", 1.15, "§7.3: +15% at half the bandwidth"),
    s(
        "fig10b",
        "100%",
        1.15,
        "§7.3: +15% at the default bandwidth",
    ),
    s("fig10b", "200%", 1.12, "§7.3: +12% at twice the bandwidth"),
];

/// The stated averages of one table's columns, in column order.
pub fn stated_for(table: &str, columns: &[String]) -> Vec<Option<Stated>> {
    columns
        .iter()
        .map(|c| {
            STATED
                .iter()
                .find(|x| x.table == table && x.column == c)
                .copied()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stated_value_names_a_column_the_suite_or_the_sweep_prints() {
        let fig6 = [
            "gpm-far",
            "epoch-far",
            "epoch-near",
            "sbrp-far",
            "sbrp-near",
        ];
        for x in STATED {
            let ok = match x.table {
                "fig6" => fig6.contains(&x.column),
                "fig7" => ["far", "near"].contains(&x.column),
                "fig9" => x.column == "sbrp-far-eadr",
                "fig10b" => ["50%", "100%", "200%"].contains(&x.column),
                _ => false,
            };
            assert!(ok, "{x:?} matches no column");
            assert!(x.value > 0.0 && x.value < 4.0, "{x:?}");
        }
        let cols: Vec<String> = fig6.iter().map(|c| c.to_string()).collect();
        let v = stated_for("fig6", &cols);
        assert_eq!(v.iter().filter(|x| x.is_some()).count(), 4);
        assert!((v[3].unwrap().value - 1.14).abs() < 1e-12);
        assert!(v[0].unwrap().derived && !v[3].unwrap().derived);
    }
}
