//! The measured quantities every command reports, in one table, and their
//! summaries over replications.

use partalloc::simkit::{ConfidenceInterval, Report};
use serde::Serialize;

use crate::error::CliError;

pub(crate) use partalloc::simkit::metrics::Metric;

/// The metrics every command reports, in output order: the reported ones
/// of the one table, [`partalloc::simkit::metrics::METRICS`], from which
/// tables, JSON and the sweep's CSV columns are all made.
pub(crate) fn reported() -> impl Iterator<Item = &'static Metric> {
    partalloc::simkit::metrics::METRICS
        .iter()
        .filter(|m| m.reported)
}

/// Looks a metric up by name.
pub(crate) fn metric(name: &str) -> Result<Metric, CliError> {
    reported().find(|m| m.name == name).copied().ok_or_else(|| {
        CliError::input(format!(
            "unknown metric {name:?}; known metrics: {}",
            reported().map(|m| m.name).collect::<Vec<_>>().join(", ")
        ))
    })
}

/// A metric over replications: mean and 95% half-width.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Summary {
    pub(crate) metric: &'static str,
    pub(crate) mean: f64,
    pub(crate) half_width: Option<f64>,
    pub(crate) n: u64,
}

/// Summarizes every metric over the reports.
pub(crate) fn summarize(reports: &[Report]) -> Result<Vec<Summary>, CliError> {
    reported()
        .map(|m| {
            let xs: Vec<f64> = reports.iter().map(|r| (m.value)(&r.results)).collect();
            let ci = ConfidenceInterval::from_samples(&xs, 0.95)?;
            Ok(Summary {
                metric: m.name,
                mean: ci.mean,
                half_width: ci.half_width,
                n: ci.n,
            })
        })
        .collect()
}

/// Mean search time per job in microseconds over the reports (wall clock,
/// not deterministic).
pub(crate) fn search_time_us(reports: &[Report]) -> f64 {
    if reports.is_empty() {
        return 0.0;
    }
    let n = reports.len() as f64;
    reports
        .iter()
        .map(|r| r.search_time.mean_seconds_per_job)
        .sum::<f64>()
        / n
        * 1e6
}
