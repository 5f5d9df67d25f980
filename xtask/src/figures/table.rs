//! A finished figure CSV read back, printed as a table, and the claims
//! checked on it.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use super::{FigError, Panel, line, pm};

/// One row of a figure CSV: its cells by column name.
#[derive(Debug, Clone)]
struct Cells {
    series: String,
    x: f64,
    values: HashMap<String, String>,
}

/// The rows of a finished figure CSV (and its CPU-time CSV, if any).
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    rows: Vec<Cells>,
}

fn read_csv(path: &Path) -> Result<Vec<HashMap<String, String>>, FigError> {
    let err = |source| FigError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let mut r = csv::Reader::from_path(path).map_err(err)?;
    let header = r.headers().map_err(err)?.clone();
    let mut rows = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(err)?;
        rows.push(
            header
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_owned(), v.to_owned()))
                .collect(),
        );
    }
    Ok(rows)
}

impl Table {
    /// Reads `main` and, row by row, merges the columns of `extra`.
    pub(crate) fn read(main: &Path, extra: Option<&Path>) -> Result<Self, FigError> {
        let mut rows = read_csv(main)?;
        if let Some(p) = extra {
            for (row, more) in rows.iter_mut().zip(read_csv(p)?) {
                for (k, v) in more {
                    row.entry(k).or_insert(v);
                }
            }
        }
        Ok(Self {
            rows: rows
                .into_iter()
                .map(|values| Cells {
                    series: values.get("series").cloned().unwrap_or_default(),
                    x: values
                        .get("x")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(f64::NAN),
                    values,
                })
                .collect(),
        })
    }

    /// The series in order of first appearance.
    pub(crate) fn series_names(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for r in &self.rows {
            if !v.contains(&r.series) {
                v.push(r.series.clone());
            }
        }
        v
    }

    /// The x values in order of first appearance.
    pub(crate) fn xs(&self) -> Vec<f64> {
        let mut v: Vec<f64> = Vec::new();
        for r in &self.rows {
            if !v.contains(&r.x) {
                v.push(r.x);
            }
        }
        v
    }

    /// `<col>_mean` and `<col>_ci95` at (series, x).
    pub(crate) fn get(&self, series: &str, x: f64, col: &str) -> Option<(f64, Option<f64>)> {
        let r = self.rows.iter().find(|r| r.series == series && r.x == x)?;
        let mean = r.values.get(&format!("{col}_mean"))?.parse().ok()?;
        let half = r
            .values
            .get(&format!("{col}_ci95"))
            .and_then(|v| v.parse().ok());
        Some((mean, half))
    }

    /// The mean of `<col>` at (series, x).
    pub(crate) fn mean(&self, series: &str, x: f64, col: &str) -> Option<f64> {
        self.get(series, x, col).map(|v| v.0)
    }

    /// The points of one series: (x, mean, half-width).
    pub(crate) fn points(&self, series: &str, col: &str) -> Vec<(f64, f64, Option<f64>)> {
        self.rows
            .iter()
            .filter(|r| r.series == series)
            .filter_map(|r| {
                let (m, h) = self.get(series, r.x, col)?;
                Some((r.x, m, h))
            })
            .collect()
    }

    /// The table printed for a panel: x down, one column per series, the
    /// plotted quantity as mean ± 95% half-width; then the claims.
    pub(crate) fn render(&self, panel: &Panel, col: &str, claims: &[Claim]) -> String {
        let mut s = String::new();
        line(&mut s, "");
        line(&mut s, &format!("## {} — {}", panel.id, panel.title));
        line(&mut s, "");
        let series = self.series_names();
        let mut head = format!("| {} |", panel.x_label);
        let mut rule = "|---|".to_owned();
        for name in &series {
            head.push_str(&format!(" {name} |"));
            rule.push_str("---|");
        }
        line(&mut s, &head);
        line(&mut s, &rule);
        for x in self.xs() {
            let mut row = format!("| {x} |");
            for name in &series {
                let cell = self
                    .get(name, x, col)
                    .map_or_else(|| "—".to_owned(), |(m, h)| pm(m, h));
                row.push_str(&format!(" {cell} |"));
            }
            line(&mut s, &row);
        }
        line(&mut s, "");
        line(
            &mut s,
            &format!("({}: mean ± 95% half-width)", panel.y_label),
        );
        for n in &panel.notes {
            line(&mut s, &format!("- {n}"));
        }
        if !claims.is_empty() {
            line(&mut s, "");
            line(&mut s, "| paper's claim | measured | verdict |");
            line(&mut s, "|---|---|---|");
            for c in claims {
                line(
                    &mut s,
                    &if c.why.is_empty() {
                        format!("| {} | {} | {} |", c.paper, c.measured, c.verdict)
                    } else {
                        format!(
                            "| {} | {} | {}: {} |",
                            c.paper, c.measured, c.verdict, c.why
                        )
                    },
                );
            }
        }
        s
    }
}

/// Whether a measurement bears a claim out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Confirmed,
    Partly,
    NotConfirmed,
    /// The data needed is missing (e.g. a point outside a --quick run).
    Undecided,
}

impl Verdict {
    /// How `wins` out of `n` checked points bear a claim out: all of them
    /// confirm it, at least half partly, fewer do not; no points leave it
    /// undecided.
    pub(crate) fn from_count(wins: usize, n: usize) -> Self {
        if n == 0 {
            Self::Undecided
        } else if wins == n {
            Self::Confirmed
        } else if wins * 2 >= n {
            Self::Partly
        } else {
            Self::NotConfirmed
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Confirmed => "confirmed",
            Self::Partly => "partly",
            Self::NotConfirmed => "not confirmed",
            Self::Undecided => "undecided",
        })
    }
}

/// A claim of the paper next to what the run measured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Claim {
    pub paper: String,
    pub measured: String,
    pub verdict: Verdict,
    /// The rule that gave the verdict, in words (empty: the verdict alone).
    pub why: String,
}

impl Claim {
    /// A claim with a verdict.
    pub(crate) fn new(paper: impl Into<String>, measured: String, verdict: Verdict) -> Self {
        Self {
            paper: paper.into(),
            measured,
            verdict,
            why: String::new(),
        }
    }

    /// The same claim with the reason for its verdict, printed beside it.
    pub(crate) fn because(mut self, why: impl Into<String>) -> Self {
        self.why = why.into();
        self
    }

    /// A claim whose data is missing.
    pub(crate) fn undecided(paper: impl Into<String>) -> Self {
        Self::new(
            paper,
            "not measured in this run".to_owned(),
            Verdict::Undecided,
        )
    }

    /// `Confirmed` if `ok`, else `NotConfirmed`.
    pub(crate) fn check(paper: impl Into<String>, measured: String, ok: bool) -> Self {
        Self::new(
            paper,
            measured,
            if ok {
                Verdict::Confirmed
            } else {
                Verdict::NotConfirmed
            },
        )
    }
}
