//! SVG plots of figure tables (`plotters`): one panel per table, a line
//! per app and a thick one for the geometric mean, axes labelled, one
//! legend below the panels.

use plotters::prelude::*;

use crate::error::{BenchError, Result};
use crate::suite::Table;

/// One panel: a table and the descriptions of its axes.
pub struct Panel<'a> {
    pub table: &'a Table,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
}

/// The panels side by side as an SVG document.
pub fn panels_svg(panels: &[Panel]) -> Result<String> {
    let err = |e: &dyn std::fmt::Debug| BenchError::Invalid(format!("plot: {e:?}"));
    let mut svg = String::new();
    {
        let w = 460 * panels.len().max(1) as u32;
        let root = SVGBackend::with_string(&mut svg, (w, 450)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (top, strip) = root.split_vertically(420);
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
        let mut x = 70;
        for (i, name) in names.iter().chain(&["gmean"]).enumerate() {
            let (c, wd) = if i < names.len() {
                (Palette99::pick(i).to_rgba(), 2)
            } else {
                (BLACK.to_rgba(), 4)
            };
            strip
                .draw(&PathElement::new(
                    vec![(x, 12), (x + 24, 12)],
                    c.stroke_width(wd),
                ))
                .map_err(|e| err(&e))?;
            strip
                .draw(&Text::new(
                    name.to_string(),
                    (x + 30, 5),
                    ("sans-serif", 15),
                ))
                .map_err(|e| err(&e))?;
            x += 40 + 9 * name.len() as i32;
        }
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
    let all: Vec<f64> = t
        .rows
        .iter()
        .flat_map(|r| r.1.iter().flatten().copied())
        .chain([1.0])
        .collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.08).max(0.02);
    let mut chart = ChartBuilder::on(area)
        .caption(&t.name, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), (lo - pad)..(hi + pad))?;
    let cols = t.columns.clone();
    let label = move |x: &f64| {
        let i = x.round();
        let ok = (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < cols.len();
        if ok {
            cols[i as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .x_labels(n)
        .x_label_formatter(&label)
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
    Ok(())
}
