//! The measured quantities every command reports, in one table, and their
//! summaries over replications.

use partalloc::simkit::{ConfidenceInterval, Report, Results};
use serde::Serialize;

use crate::error::CliError;

/// A metric of [`Results`] by name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Metric {
    pub(crate) name: &'static str,
    pub(crate) label: &'static str,
    pub(crate) get: fn(&Results) -> f64,
}

/// The deterministic metrics reported by every command, in output order.
pub(crate) const METRICS: &[Metric] = &[
    Metric {
        name: "mean_response",
        label: "mean response time",
        get: |r| r.mean_response,
    },
    Metric {
        name: "mean_wait",
        label: "mean waiting time",
        get: |r| r.mean_wait,
    },
    Metric {
        name: "mean_numerical_delay",
        label: "  numerical delay",
        get: |r| r.mean_numerical_delay,
    },
    Metric {
        name: "mean_topological_delay",
        label: "  topological delay",
        get: |r| r.mean_topological_delay,
    },
    Metric {
        name: "mean_service",
        label: "mean service time",
        get: |r| r.mean_service,
    },
    Metric {
        name: "utilization",
        label: "utilization",
        get: |r| r.utilization,
    },
    Metric {
        name: "useful_utilization",
        label: "useful utilization",
        get: |r| r.useful_utilization,
    },
    Metric {
        name: "miss_rate",
        label: "allocation miss rate",
        get: |r| r.miss_rate,
    },
    Metric {
        name: "mean_internal_fragmentation",
        label: "internal fragmentation",
        get: |r| r.mean_internal_fragmentation,
    },
    Metric {
        name: "mean_queue_length",
        label: "mean queue length",
        get: |r| r.mean_queue_length,
    },
    Metric {
        name: "throughput",
        label: "throughput",
        get: |r| r.throughput,
    },
    Metric {
        name: "completed",
        label: "completed jobs",
        get: |r| r.completed as f64,
    },
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
