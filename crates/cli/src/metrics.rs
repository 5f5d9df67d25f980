//! The measured quantities every command reports, in one table, and their
//! summaries over replications.

use partalloc::simkit::{ConfidenceInterval, Report, Results};
use serde::Serialize;

use crate::error::CliError;

/// A metric of [`Results`] by name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Metric {
    /// The column (and JSON) name of the mean.
    pub(crate) name: &'static str,
    /// The column name of the 95% half-width: `name` with `_hw` appended.
    pub(crate) half_width_name: &'static str,
    /// What a table shows.
    pub(crate) label: &'static str,
    /// The value in one replication's results.
    pub(crate) get: fn(&Results) -> f64,
}

/// A [`Metric`] whose half-width column name is derived from its name.
macro_rules! metric {
    ($name:literal, $label:literal, $get:expr) => {
        Metric {
            name: $name,
            half_width_name: concat!($name, "_hw"),
            label: $label,
            get: $get,
        }
    };
}

/// The deterministic metrics reported by every command, in output order:
/// the one list of what is measured, from which tables, JSON and the
/// sweep's CSV columns are all made.
#[rustfmt::skip]
pub(crate) const METRICS: &[Metric] = &[
    metric!("mean_response", "mean response time", |r| r.mean_response),
    metric!("mean_wait", "mean waiting time", |r| r.mean_wait),
    metric!("mean_numerical_delay", "  numerical delay", |r| r.mean_numerical_delay),
    metric!("mean_topological_delay", "  topological delay", |r| r.mean_topological_delay),
    metric!("mean_service", "mean service time", |r| r.mean_service),
    metric!("utilization", "utilization", |r| r.utilization),
    metric!("useful_utilization", "useful utilization", |r| r.useful_utilization),
    metric!("miss_rate", "allocation miss rate", |r| r.miss_rate),
    metric!("mean_internal_fragmentation", "internal fragmentation", |r| r.mean_internal_fragmentation),
    metric!("mean_queue_length", "mean queue length", |r| r.mean_queue_length),
    metric!("throughput", "throughput", |r| r.throughput),
    metric!("completed", "completed jobs", |r| r.completed as f64),
];

/// Looks a metric up by name.
pub(crate) fn metric(name: &str) -> Result<Metric, CliError> {
    METRICS
        .iter()
        .find(|m| m.name == name)
        .copied()
        .ok_or_else(|| {
            CliError::input(format!(
                "unknown metric {name:?}; known metrics: {}",
                METRICS
                    .iter()
                    .map(|m| m.name)
                    .collect::<Vec<_>>()
                    .join(", ")
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
    METRICS
        .iter()
        .map(|m| {
            let xs: Vec<f64> = reports.iter().map(|r| (m.get)(&r.results)).collect();
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
