//! The artifact's expected results (`experiments/analysis/expected_results/
//! analysis_{allo,frag,frag_ratio}_discrete.csv`, shipped in `data/openb/`)
//! and the comparison of reproduced curves with them.

use std::collections::HashMap;
use std::path::Path;

use crate::analysis::PERCENTS;
use crate::error::TraceError;

/// One expected CSV: curves by (workload, policy folder, seed).
#[derive(Debug, Clone, Default)]
pub struct Expected {
    curves: HashMap<(String, String, i64), Vec<Option<f64>>>,
}

/// Which of the three curves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Measure {
    /// GPU allocation, % (`analysis_allo_discrete.csv`).
    Alloc,
    /// Fragmented GPUs, % of all (`analysis_frag_discrete.csv`).
    Frag,
    /// Fragmented share of idle GPUs, % (`analysis_frag_ratio_discrete.csv`).
    FragRatio,
}

impl Measure {
    /// All three.
    pub const ALL: [Measure; 3] = [Measure::Alloc, Measure::Frag, Measure::FragRatio];

    /// The expected file's name.
    #[must_use]
    pub fn file_name(self) -> &'static str {
        match self {
            Measure::Alloc => "analysis_allo_discrete.csv",
            Measure::Frag => "analysis_frag_discrete.csv",
            Measure::FragRatio => "analysis_frag_ratio_discrete.csv",
        }
    }
}

impl Expected {
    /// Reads an expected CSV.
    ///
    /// # Errors
    /// [`TraceError`] naming the file and line of a bad row.
    pub fn read(path: &Path) -> Result<Self, TraceError> {
        let text = std::fs::read_to_string(path).map_err(|e| TraceError::Io {
            file: path.display().to_string(),
            reason: e.to_string().to_lowercase(),
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses an expected CSV; `file` names it in errors.
    ///
    /// # Errors
    /// [`TraceError::Line`] for a header without the percent columns or a
    /// row with a bad seed or value.
    pub fn parse(text: &str, file: &str) -> Result<Self, TraceError> {
        let err = |line: usize, reason: String| TraceError::Line {
            file: file.to_owned(),
            line,
            reason,
        };
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
        let first = header
            .iter()
            .position(|h| *h == "0")
            .ok_or_else(|| err(1, "the header has no column \"0\"".into()))?;
        let mut col = vec![None; header.len()];
        for (i, h) in header.iter().enumerate().skip(first) {
            match h.parse::<usize>() {
                Ok(x) if x < PERCENTS => col[i] = Some(x),
                _ => return Err(err(1, format!("column {h:?} is not a percent 0-130"))),
            }
        }
        let mut curves = HashMap::new();
        for (n, line) in lines.enumerate() {
            let line_no = n + 2;
            let cells: Vec<&str> = line.split(',').collect();
            if cells.len() != header.len() {
                return Err(err(
                    line_no,
                    format!("{} fields, the header has {}", cells.len(), header.len()),
                ));
            }
            let seed = cells[3]
                .parse::<i64>()
                .map_err(|_| err(line_no, format!("seed {:?} is not a number", cells[3])))?;
            let mut v = vec![None; PERCENTS];
            for (i, c) in cells.iter().enumerate().skip(first) {
                if c.is_empty() {
                    continue;
                }
                let x = c
                    .parse::<f64>()
                    .map_err(|_| err(line_no, format!("value {c:?} is not a number")))?;
                if let Some(p) = col[i] {
                    v[p] = Some(x);
                }
            }
            curves.insert((cells[0].to_owned(), cells[1].to_owned(), seed), v);
        }
        Ok(Expected { curves })
    }

    /// The expected curve of a workload, policy folder (`06-FGD`) and seed.
    #[must_use]
    pub fn curve(&self, workload: &str, policy_dir: &str, seed: i64) -> Option<&[Option<f64>]> {
        self.curves
            .get(&(workload.to_owned(), policy_dir.to_owned(), seed))
            .map(Vec::as_slice)
    }

    /// Number of curves.
    #[must_use]
    pub fn len(&self) -> usize {
        self.curves.len()
    }

    /// Whether there is no curve.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.curves.is_empty()
    }
}

/// How many points of a reproduced curve equal the expected one (both
/// present and equal as floats, or both absent), and the first that
/// differs.
#[must_use]
pub fn agreement(got: &[Option<f64>], want: &[Option<f64>]) -> (usize, Option<usize>) {
    let mut same = 0;
    let mut first = None;
    for (x, (g, w)) in got.iter().zip(want).enumerate() {
        if g == w {
            same += 1;
        } else if first.is_none() {
            first = Some(x);
        }
    }
    (same, first)
}
