//! Line charts with confidence-interval error bars, written as SVG.
//!
//! The SVG backend of `plotters` needs no system fonts or C libraries, so
//! figures render the same on any machine.
//!
//! ```
//! use partalloc_simkit::plot::{render_svg, Chart, Series};
//! let chart = Chart {
//!     title: "Mean response time".into(),
//!     x_label: "System utilization".into(),
//!     y_label: "Mean response time".into(),
//!     series: vec![Series {
//!         label: "Isomorphic".into(),
//!         points: vec![(0.1, 1.05, 0.02), (0.5, 1.6, 0.05), (0.9, 4.2, 0.4)],
//!     }],
//!     y_max: None,
//! };
//! let svg = render_svg(&chart)?;
//! assert!(svg.starts_with("<svg") && svg.contains("Isomorphic"));
//! # Ok::<(), partalloc_simkit::plot::PlotError>(())
//! ```

use std::path::Path;

use plotters::prelude::*;
use thiserror::Error;

/// One line of a chart: points `(x, mean, half-width)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Points in x order: x, mean and confidence half-width (0 for none).
    pub points: Vec<(f64, f64, f64)>,
}

/// A chart in the style of the papers' figures: one line per strategy,
/// error bars, labelled axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Title above the plot.
    pub title: String,
    /// X-axis label.
    pub x_label: String,
    /// Y-axis label.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// Upper limit of the y axis; points above are clipped (saturated
    /// curves would otherwise flatten the rest). `None`: fit the data.
    pub y_max: Option<f64>,
}

/// Why a chart could not be drawn or written.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PlotError {
    /// The chart has no finite point.
    #[error("chart {title:?} has no finite data point to plot")]
    Empty {
        /// The chart's title.
        title: String,
    },
    /// Drawing failed.
    #[error("drawing chart {title:?} failed: {message}")]
    Draw {
        /// The chart's title.
        title: String,
        /// The backend's message.
        message: String,
    },
    /// Writing the file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
];

fn bounds(chart: &Chart) -> Option<(f64, f64, f64, f64)> {
    let pts = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|p| p.0.is_finite() && p.1.is_finite());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY);
    let mut any = false;
    for &(x, y, h) in pts {
        any = true;
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y + if h.is_finite() { h } else { 0.0 });
    }
    if !any {
        return None;
    }
    if let Some(m) = chart.y_max {
        y1 = y1.min(m);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let pad = (x1 - x0) * 0.04;
    let y1 = if y1 > 0.0 { y1 * 1.08 } else { 1.0 };
    Some((x0 - pad, x1 + pad, 0.0, y1))
}

/// Renders the chart as an SVG document.
///
/// # Errors
/// [`PlotError::Empty`] without finite points, [`PlotError::Draw`] if the
/// backend fails.
pub fn render_svg(chart: &Chart) -> Result<String, PlotError> {
    let (x0, x1, y0, y1) = bounds(chart).ok_or_else(|| PlotError::Empty {
        title: chart.title.clone(),
    })?;
    let draw_err = |e: &dyn std::fmt::Display| PlotError::Draw {
        title: chart.title.clone(),
        message: e.to_string(),
    };
    // A point cut by `y_max` is still shown: a triangle on the top edge,
    // labelled with its value, and a note says what was cut.
    let cut: Vec<(f64, f64, RGBColor)> = chart
        .series
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            let color = PALETTE[i % PALETTE.len()];
            s.points
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite() && p.1 > y1)
                .map(move |p| (p.0, p.1, color))
        })
        .collect();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (720, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_err(&e))?;
        let mut ctx = ChartBuilder::on(&root)
            .caption(&chart.title, ("sans-serif", 18))
            .margin(12)
            // Room above the title for the note on cut points.
            .margin_top(if cut.is_empty() { 12 } else { 30 })
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| draw_err(&e))?;
        ctx.configure_mesh()
            .x_desc(chart.x_label.as_str())
            .y_desc(chart.y_label.as_str())
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|e| draw_err(&e))?;
        let clip = |y: f64| y.min(y1);
        for (i, s) in chart.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let pts: Vec<(f64, f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .collect();
            ctx.draw_series(LineSeries::new(
                pts.iter().map(|&(x, y, _)| (x, clip(y))),
                color.stroke_width(2),
            ))
            .map_err(|e| draw_err(&e))?
            .label(s.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
            ctx.draw_series(
                pts.iter()
                    .map(|&(x, y, _)| Circle::new((x, clip(y)), 3, color.filled())),
            )
            .map_err(|e| draw_err(&e))?;
            ctx.draw_series(pts.iter().filter(|p| p.2.is_finite() && p.2 > 0.0).map(
                |&(x, y, h)| {
                    ErrorBar::new_vertical(
                        x,
                        clip((y - h).max(0.0)),
                        clip(y),
                        clip(y + h),
                        color,
                        6,
                    )
                },
            ))
            .map_err(|e| draw_err(&e))?;
        }
        for (k, &(x, y, color)) in cut.iter().enumerate() {
            // The labels of points cut at the same x stand one under another.
            let above = cut[..k]
                .iter()
                .filter(|c| c.0.to_bits() == x.to_bits())
                .count();
            let row = 10 + 12 * i32::try_from(above).unwrap_or(i32::MAX / 24);
            let font = ("sans-serif", 11).into_font().color(&color);
            ctx.draw_series(std::iter::once(
                EmptyElement::at((x, y1))
                    + TriangleMarker::new((0, 0), 5, color.filled())
                    + Text::new(short_value(y), (-10, row), font),
            ))
            .map_err(|e| draw_err(&e))?;
        }
        if !cut.is_empty() {
            let note = format!(
                "{} point{} above {} {CUT_NOTE}",
                cut.len(),
                if cut.len() == 1 { "" } else { "s" },
                short_value(y1)
            );
            let font = ("sans-serif", 12).into_font().color(&BLACK);
            root.draw(&Text::new(note, (90, 8), font))
                .map_err(|e| draw_err(&e))?;
        }
        ctx.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .border_style(BLACK)
            .background_style(WHITE.mix(0.9))
            .draw()
            .map_err(|e| draw_err(&e))?;
        root.present().map_err(|e| draw_err(&e))?;
    }
    Ok(out)
}

/// The words a chart prints when `y_max` cuts some of its points (after
/// "N points above Y"); each cut point is a triangle on the top edge
/// labelled with its value.
pub const CUT_NOTE: &str = "drawn on the top edge (\u{25b2}, value printed)";

/// A value printed in three significant figures at most (`34.1`, `127`).
fn short_value(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Renders the chart and writes it to `path`.
///
/// # Errors
/// As [`render_svg`], or [`PlotError::Io`].
pub fn write_svg(chart: &Chart, path: &Path) -> Result<(), PlotError> {
    let svg = render_svg(chart)?;
    crate::atomic::write_atomic(path, svg).map_err(|source| PlotError::Io {
        path: path.display().to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_chart_is_an_error() {
        let c = Chart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series {
                label: "s".into(),
                points: vec![(f64::NAN, 1.0, 0.0)],
            }],
            y_max: None,
        };
        assert!(matches!(render_svg(&c), Err(PlotError::Empty { .. })));
    }

    #[test]
    fn points_above_the_limit_are_clipped_not_dropped() {
        let c = Chart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series {
                label: "saturating".into(),
                points: vec![(0.1, 1.0, 0.1), (0.9, 1.0e6, 0.0)],
            }],
            y_max: Some(10.0),
        };
        let svg = render_svg(&c).unwrap();
        assert!(svg.contains("saturating"));
        // One filled marker per point; the clipped one sits at the top edge.
        let markers = svg
            .lines()
            .filter(|l| l.starts_with("<circle") && l.contains("fill=\"#1F77B4\""))
            .count();
        assert_eq!(markers, 2, "{svg}");
        // The cut point is marked, its value printed, and the note says so.
        assert!(svg.contains("1000000"), "{svg}");
        assert!(
            svg.contains(&format!("1 point above 10.8 {CUT_NOTE}")),
            "{svg}"
        );
    }

    #[test]
    fn a_chart_whose_points_fit_its_limit_has_no_cut_note() {
        let c = Chart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series {
                label: "s".into(),
                points: vec![(0.1, 1.0, 0.1), (0.9, 9.0, 0.5)],
            }],
            y_max: Some(10.0),
        };
        assert!(!render_svg(&c).unwrap().contains(CUT_NOTE));
    }
}
