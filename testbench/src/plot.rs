//! Plots of figure tables (`plotters`, SVG; PNG rasterised from the SVG
//! by `resvg`): line panels (a line per app, a thick one for the geometric
//! mean) for sweeps, grouped bars for the suite's figures; axes labelled;
//! the paper's stated averages ([`crate::paper`]) marked: a triangle where
//! stated, a cross where derived from two stated ratios.

use plotters::prelude::*;

use crate::error::{BenchError, Result};
use crate::paper::{stated_for, Stated};
use crate::suite::Table;

/// One panel: a table and the descriptions of its axes.
pub struct Panel<'a> {
    pub table: &'a Table,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
}

fn plot_err(e: &dyn std::fmt::Debug) -> BenchError {
    BenchError::Invalid(format!("plot: {e:?}"))
}

/// The paper's average at (x, y): a triangle where stated, a cross
/// where derived.
fn mark<DB: DrawingBackend>(x: f64, y: f64, m: &Stated) -> DynElement<'static, DB, (f64, f64)> {
    if m.derived {
        Cross::new((x, y), 6, BLACK.stroke_width(3)).into_dyn()
    } else {
        TriangleMarker::new((x, y), 7, BLACK.filled()).into_dyn()
    }
}

/// The legend's note on the marks, or nothing when the table has none.
fn marks_note(marks: &[Option<Stated>]) -> Option<String> {
    let stated = marks.iter().flatten().any(|m| !m.derived);
    let derived = marks.iter().flatten().any(|m| m.derived);
    match (stated, derived) {
        (false, false) => None,
        (true, false) => Some("triangle: the paper's stated mean".into()),
        (false, true) => Some("cross: a mean derived from two the paper states".into()),
        (true, true) => {
            Some("triangle: the paper's stated mean; cross: derived from two stated ratios".into())
        }
    }
}

/// One panel per table, panel `i` labelled `x[i]` and `y[i]` (a single
/// label serves every panel).
pub fn table_panels_svg(tables: &[Table], x: &[&str], y: &[&str]) -> Result<String> {
    let panels: Vec<Panel> = tables
        .iter()
        .enumerate()
        .map(|(i, table)| Panel {
            table,
            x_desc: x[if x.len() == 1 { 0 } else { i }],
            y_desc: y[if y.len() == 1 { 0 } else { i }],
        })
        .collect();
    panels_svg(&panels)
}

/// The y axis of each figure table of `sbrp suite`.
pub fn y_desc(table: &str) -> &'static str {
    match table {
        "fig6" => "speedup over epoch-far",
        "fig7" => "share of SBRP's speedup due to scopes",
        "fig8" => "L1 PM read misses over epoch-far",
        "fig9" => "speedup over epoch-far with eADR",
        "spb" => "speedup over epoch-far; SBRP over SPB",
        "fig11" | "fig11-campaign" => "recovery cycles over epoch-near",
        _ => "ratio",
    }
}

/// One table as grouped bars: a group per app and one for the geometric
/// mean, a bar per column, the paper's stated means marked on the mean's
/// group.
pub fn bars_svg(t: &Table, y_desc: &str) -> Result<String> {
    let marks = stated_for(&t.name, &t.columns);
    let groups: Vec<(&str, &Vec<Option<f64>>)> = t
        .rows
        .iter()
        .map(|(a, v)| (a.as_str(), v))
        .chain([("gmean", &t.geo_mean)])
        .collect();
    let n = t.columns.len().max(1);
    let all: Vec<f64> = groups
        .iter()
        .flat_map(|g| g.1.iter().flatten().copied())
        .chain(marks.iter().flatten().map(|m| m.value))
        .chain([1.0])
        .collect();
    let hi = all.iter().copied().fold(0.0f64, f64::max);
    // Bars grow from 0; a share (Figure 7) can be negative.
    let lo = all.iter().copied().fold(0.0f64, f64::min);
    let mut svg = String::new();
    {
        let w = (90 * groups.len() as u32 + 160).max(640);
        let root = SVGBackend::with_string(&mut svg, (w, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| plot_err(&e))?;
        let (top, strip) = root.split_vertically(420);
        let mut chart = ChartBuilder::on(&top)
            .caption(&t.title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(35)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5f64..(groups.len() as f64 - 0.5), lo * 1.12..hi * 1.12)
            .map_err(|e| plot_err(&e))?;
        let names: Vec<String> = groups.iter().map(|g| g.0.to_string()).collect();
        let label = move |x: &f64| {
            let i = x.round();
            let ok = (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len();
            if ok {
                names[i as usize].clone()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .x_labels(groups.len())
            .x_label_formatter(&label)
            .y_desc(y_desc)
            .disable_x_mesh()
            .draw()
            .map_err(|e| plot_err(&e))?;
        let bw = 0.8 / n as f64;
        let left = |g: usize, c: usize| g as f64 - 0.4 + c as f64 * bw;
        for (g, (_, v)) in groups.iter().enumerate() {
            for (c, y) in v.iter().enumerate() {
                let Some(y) = y else { continue };
                let color = Palette99::pick(c).to_rgba();
                chart
                    .draw_series([Rectangle::new(
                        [(left(g, c), 0.0), (left(g, c) + bw * 0.92, *y)],
                        color.filled(),
                    )])
                    .map_err(|e| plot_err(&e))?;
            }
        }
        let gm = groups.len() - 1;
        for (c, m) in marks.iter().enumerate() {
            if let Some(m) = m {
                let x = left(gm, c) + bw * 0.46;
                chart
                    .draw_series([mark(x, m.value, m)])
                    .map_err(|e| plot_err(&e))?;
            }
        }
        chart
            .draw_series(LineSeries::new(
                [(-0.5, 1.0), (groups.len() as f64 - 0.5, 1.0)],
                BLACK.mix(0.4),
            ))
            .map_err(|e| plot_err(&e))?;
        let cols: Vec<&str> = t.columns.iter().map(|c| c.as_str()).collect();
        legend(&strip, &cols, Swatch::Bars, marks_note(&marks).as_deref())?;
        root.present().map_err(|e| plot_err(&e))?;
    }
    Ok(svg)
}

/// How the legend draws each name: a square (bars), a line, or lines and
/// the thick black geometric mean.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Swatch {
    Bars,
    Lines,
    LinesAndMean,
}

type Strip<'a, 'b> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// A legend in one row: a swatch per name (bars: squares; lines: a line,
/// and a thick black one for the geometric mean), then the marks' note.
fn legend(strip: &Strip, names: &[&str], swatch: Swatch, note: Option<&str>) -> Result<()> {
    let lines = swatch != Swatch::Bars;
    let with_mean = swatch == Swatch::LinesAndMean;
    let mut x = 70;
    let gm = ["gmean"];
    let all: Vec<&str> = if with_mean {
        names.iter().copied().chain(gm).collect()
    } else {
        names.to_vec()
    };
    for (i, name) in all.iter().enumerate() {
        let mean = with_mean && i == names.len();
        let c = if mean {
            BLACK.to_rgba()
        } else {
            Palette99::pick(i).to_rgba()
        };
        if lines {
            let wd = if mean { 4 } else { 2 };
            strip
                .draw(&PathElement::new(
                    vec![(x, 12), (x + 24, 12)],
                    c.stroke_width(wd),
                ))
                .map_err(|e| plot_err(&e))?;
        } else {
            strip
                .draw(&Rectangle::new([(x + 6, 5), (x + 20, 19)], c.filled()))
                .map_err(|e| plot_err(&e))?;
        }
        strip
            .draw(&Text::new(
                name.to_string(),
                (x + 30, 5),
                ("sans-serif", 15),
            ))
            .map_err(|e| plot_err(&e))?;
        x += 40 + 9 * name.len() as i32;
    }
    if let Some(note) = note {
        strip
            .draw(&Text::new(note.to_string(), (70, 32), ("sans-serif", 13)))
            .map_err(|e| plot_err(&e))?;
    }
    Ok(())
}

/// An SVG of ours rasterised to PNG. Text needs a system font: Debian's
/// `fonts-dejavu-core` (scripts/setup.sh installs it).
pub fn png_of_svg(svg: &str) -> Result<Vec<u8>> {
    let mut opt = resvg::usvg::Options::default();
    {
        let db = opt.fontdb_mut();
        db.load_system_fonts();
        let family = db
            .faces()
            .find(|f| f.families.iter().any(|(n, _)| n == "DejaVu Sans"))
            .or_else(|| db.faces().next())
            .and_then(|f| f.families.first().map(|(n, _)| n.clone()));
        let Some(family) = family else {
            return Err(BenchError::Invalid(
                "PNG plots need a system font and none is installed (Debian: apt install fonts-dejavu-core)"
                    .into(),
            ));
        };
        db.set_sans_serif_family(family);
    }
    let tree = resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| plot_err(&e))?;
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| BenchError::Invalid("plot: an empty image".into()))?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(|e| plot_err(&e))
}

/// The panels side by side as an SVG document.
pub fn panels_svg(panels: &[Panel]) -> Result<String> {
    let err = |e: &dyn std::fmt::Debug| plot_err(e);
    let mut svg = String::new();
    {
        let w = 460 * panels.len().max(1) as u32;
        // Upright labels (many columns) need room below the axis.
        let extra = if panels.iter().any(|p| p.table.columns.len() > 6) {
            80
        } else {
            0
        };
        let root = SVGBackend::with_string(&mut svg, (w, 480 + extra)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (top, strip) = root.split_vertically(420 + extra);
        let areas = top.split_evenly((1, panels.len().max(1)));
        for (area, p) in areas.iter().zip(panels) {
            draw_panel(area, p).map_err(|e| err(&e))?;
        }
        // One legend for all panels, below them (the apps are the first
        // table's rows).
        let names: Vec<&str> = panels
            .first()
            .map(|p| p.table.rows.iter().map(|r| r.0.as_str()).collect())
            .unwrap_or_default();
        let marks: Vec<Option<Stated>> = panels
            .iter()
            .flat_map(|p| stated_for(&p.table.name, &p.table.columns))
            .collect();
        legend(
            &strip,
            &names,
            Swatch::LinesAndMean,
            marks_note(&marks).as_deref(),
        )?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

type Area<'a, 'b> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw_panel(
    area: &Area,
    p: &Panel,
) -> std::result::Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let t = p.table;
    let n = t.columns.len();
    // Many columns (the ladder's steps): labels turned upright.
    let upright = n > 6;
    let all: Vec<f64> = t
        .rows
        .iter()
        .flat_map(|r| r.1.iter().flatten().copied())
        .chain(
            stated_for(&t.name, &t.columns)
                .iter()
                .flatten()
                .map(|m| m.value),
        )
        .chain([1.0])
        .collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.08).max(0.02);
    let mut chart = ChartBuilder::on(area)
        .caption(&t.name, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(if upright { 100 } else { 45 })
        .y_label_area_size(55)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), (lo - pad)..(hi + pad))?;
    let cols = t.columns.clone();
    let label = move |x: &f64| {
        let i = x.round();
        let ok = (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < cols.len();
        if !ok {
            String::new()
        } else if upright {
            // Clear of the tick mark.
            format!("\u{a0}\u{a0}\u{a0}\u{a0}{}", cols[i as usize])
        } else {
            cols[i as usize].clone()
        }
    };
    let x_style = if upright {
        TextStyle::from(
            ("sans-serif", 12)
                .into_font()
                .transform(FontTransform::Rotate90),
        )
        .pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Left,
            plotters::style::text_anchor::VPos::Center,
        ))
    } else {
        TextStyle::from(("sans-serif", 12).into_font())
    };
    chart
        .configure_mesh()
        .x_labels(n)
        .x_label_formatter(&label)
        .x_label_style(x_style)
        .axis_desc_style(("sans-serif", 12))
        .x_desc(p.x_desc)
        .y_desc(p.y_desc)
        .disable_x_mesh()
        .draw()?;
    chart.draw_series(LineSeries::new(
        [(-0.5, 1.0), (n as f64 - 0.5, 1.0)],
        BLACK.mix(0.3),
    ))?;
    let series = |v: &[Option<f64>]| -> Vec<(f64, f64)> {
        v.iter()
            .enumerate()
            .filter_map(|(i, y)| y.map(|y| (i as f64, y)))
            .collect()
    };
    for (i, (_, v)) in t.rows.iter().enumerate() {
        let c = Palette99::pick(i).to_rgba();
        let pts = series(v);
        chart.draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?;
        chart.draw_series(pts.iter().map(|&xy| Circle::new(xy, 3, c.filled())))?;
    }
    chart.draw_series(LineSeries::new(series(&t.geo_mean), BLACK.stroke_width(4)))?;
    for (c, m) in stated_for(&t.name, &t.columns).iter().enumerate() {
        if let Some(m) = m {
            chart.draw_series([mark(c as f64, m.value, m)])?;
        }
    }
    Ok(())
}

/// A panel of named (x, y) series: x on a log2 axis (sizes that double).
pub struct XyPanel {
    pub caption: String,
    pub x_desc: String,
    pub y_desc: String,
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

/// Panels of series side by side (e.g. area and delay against entries),
/// a line and points per series, one legend below.
pub fn xy_panels_svg(panels: &[XyPanel]) -> Result<String> {
    let mut svg = String::new();
    {
        let w = 480 * panels.len().max(1) as u32;
        let root = SVGBackend::with_string(&mut svg, (w, 460)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| plot_err(&e))?;
        let (top, strip) = root.split_vertically(420);
        let areas = top.split_evenly((1, panels.len().max(1)));
        for (area, p) in areas.iter().zip(panels) {
            draw_xy(area, p).map_err(|e| plot_err(&e))?;
        }
        let names: Vec<&str> = panels
            .first()
            .map(|p| p.series.iter().map(|s| s.0.as_str()).collect())
            .unwrap_or_default();
        legend(&strip, &names, Swatch::Lines, None)?;
        root.present().map_err(|e| plot_err(&e))?;
    }
    Ok(svg)
}

fn draw_xy(
    area: &Area,
    p: &XyPanel,
) -> std::result::Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let pts = || p.series.iter().flat_map(|s| s.1.iter().copied());
    let (x0, x1) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (x, _)| {
        (a.min(x), b.max(x))
    });
    let y1 = pts().map(|(_, y)| y).fold(0.0f64, f64::max);
    let (x0, x1) = if x0.is_finite() { (x0, x1) } else { (1.0, 2.0) };
    let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    // log2 of x on a linear axis, labelled with x itself.
    let (l0, l1) = (x0.max(1e-9).log2() - 0.3, x1.max(1e-9).log2() + 0.3);
    let mut chart = ChartBuilder::on(area)
        .caption(&p.caption, ("sans-serif", 17))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(l0..l1, 0.0..y1)?;
    let label = |x: &f64| {
        let v = x.exp2();
        if (x - x.round()).abs() < 1e-6 {
            format!("{}", v.round())
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .x_labels(((l1 - l0).ceil() as usize + 1).max(2))
        .x_label_formatter(&label)
        .x_desc(p.x_desc.as_str())
        .y_desc(p.y_desc.as_str())
        .draw()?;
    for (i, (_, v)) in p.series.iter().enumerate() {
        let c = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = v.iter().map(|&(x, y)| (x.log2(), y)).collect();
        chart.draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?;
        chart.draw_series(pts.iter().map(|&xy| Circle::new(xy, 4, c.filled())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let mut t = Table::new("fig6", "Figure 6", &["epoch-far", "sbrp-far"]);
        t.rows.push(("gpkvs".into(), vec![Some(1.0), Some(0.7)]));
        t.rows.push(("hm".into(), vec![Some(1.0), None]));
        t.means()
    }

    #[test]
    fn bars_mark_the_papers_mean_and_label_every_group() {
        let svg = bars_svg(&table(), y_desc("fig6")).unwrap();
        for s in [
            "gpkvs",
            "hm",
            "gmean",
            "epoch-far",
            "sbrp-far",
            "speedup over epoch-far",
        ] {
            assert!(svg.contains(s), "{s} missing");
        }
        assert!(svg.contains("stated mean"));
        // A table the paper states nothing about has no note.
        let mut t = table();
        t.name = "fig8".into();
        assert!(!bars_svg(&t, "x").unwrap().contains("stated mean"));
    }

    #[test]
    fn png_is_a_png_of_the_svgs_size() {
        let svg = bars_svg(&table(), "y").unwrap();
        let png = png_of_svg(&svg).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR: width and height, big-endian, at bytes 16..24.
        let w = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let h = u32::from_be_bytes(png[20..24].try_into().unwrap());
        assert_eq!((w, h), (640, 480));
    }

    #[test]
    fn xy_panels_label_x_with_the_sizes() {
        let p = XyPanel {
            caption: "area".into(),
            x_desc: "entries".into(),
            y_desc: "mm^2".into(),
            series: vec![("32 warps".into(), vec![(32.0, 1.0), (64.0, 2.0)])],
        };
        let svg = xy_panels_svg(&[p]).unwrap().replace('\n', "");
        assert!(svg.contains(">32<") && svg.contains(">64<"), "x labels");
        assert!(svg.contains("32 warps"));
    }
}
