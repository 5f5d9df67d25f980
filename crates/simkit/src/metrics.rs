//! The measured quantities of a run, in one table: each metric's name,
//! what it means and how it is read from a run's [`Results`]. Every output
//! that reports metrics (the command-line tool's tables, JSON and sweep
//! CSVs, Python's results, the reproduction figures' CSVs, whose own
//! column layout lives with the figures in `xtask`) is made from
//! [`METRICS`] rather than from a copy of it.
//!
//! ```
//! use partalloc_simkit::Results;
//! use partalloc_simkit::metrics::{self, METRICS};
//! let r = Results { completed: 4, attempts: 6, mean_wait: 2.5, ..Results::default() };
//! let wait = metrics::by_name("mean_wait").expect("a known metric");
//! assert_eq!((wait.value)(&r), 2.5);
//! assert_eq!(wait.half_width_name, "mean_wait_hw");
//! let per_job = metrics::by_name("attempts_per_job").expect("a known metric");
//! assert_eq!((per_job.value)(&r), 1.5);
//! assert!(!per_job.reported);
//! assert_eq!(METRICS.iter().filter(|m| m.reported).count(), 27);
//! ```

use crate::{ConfidenceInterval, Report, Results, StatsError};

/// One measured quantity.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// Its name: the column (and JSON) name of its mean in the
    /// command-line tool's outputs.
    pub name: &'static str,
    /// The column name of its 95% half-width there: `name` with `_hw`
    /// appended.
    pub half_width_name: &'static str,
    /// What it is, as a table row label shows it (the parts of the waiting
    /// time are indented under it).
    pub description: &'static str,
    /// Its value in one replication's results.
    pub value: fn(&Results) -> f64,
    /// Whether the command-line tool reports it (every metric except the
    /// figures' attempts per job).
    pub reported: bool,
}

/// A reported metric.
macro_rules! metric {
    ($name:literal, $description:literal, $value:expr) => {
        Metric {
            name: $name,
            half_width_name: concat!($name, "_hw"),
            description: $description,
            value: $value,
            reported: true,
        }
    };
}

/// Attempts per completed job (0 without completed jobs).
fn attempts_per_job(r: &Results) -> f64 {
    if r.completed == 0 {
        0.0
    } else {
        r.attempts as f64 / r.completed as f64
    }
}

/// Every metric, in the order the command-line tool reports them (the
/// figures-only ones last).
#[rustfmt::skip]
pub const METRICS: &[Metric] = &[
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
    metric!("mean_pairwise_distance", "mean pairwise distance", |r| r.mean_pairwise_distance),
    metric!("mean_distance_sum", "  pairwise distance sum", |r| r.mean_distance_sum),
    metric!("mean_diameter", "  diameter", |r| r.mean_diameter),
    metric!("mean_span", "  bounding box nodes", |r| r.mean_span),
    metric!("mean_pieces", "  contiguous pieces", |r| r.mean_pieces),
    // Added last so the sweep CSVs' earlier columns keep their places.
    metric!("mean_bounded_slowdown", "mean bounded slowdown", |r| r.mean_bounded_slowdown),
    metric!("mean_racks_per_job", "racks per job", |r| r.mean_racks_per_job),
    metric!("mean_stranded_gpus", "stranded GPUs", |r| r.mean_stranded_gpus),
    metric!("mean_stranded_nodes", "stranded nodes", |r| r.mean_stranded_nodes),
    metric!("mean_split_segments", "split segments per job", |r| r.mean_split_segments),
    metric!("lowest_level_share", "jobs at the lowest level", |r| r.lowest_level_share),
    metric!("mean_largest_placeable", "largest placeable slice", |r| r.mean_largest_placeable),
    metric!("mean_gpu_allocation", "GPU allocation", |r| r.mean_gpu_allocation),
    metric!("mean_frag_gpus", "fragmented GPUs", |r| r.mean_frag_gpus),
    metric!("mean_frag_ratio", "idle GPUs fragmented", |r| r.mean_frag_ratio),
    Metric {
        reported: false,
        ..metric!("attempts_per_job", "allocation attempts per job", attempts_per_job)
    },
];

/// The metrics the command-line tool, the sweeps and the Python package
/// report, in their order.
pub fn reported() -> impl Iterator<Item = &'static Metric> {
    METRICS.iter().filter(|m| m.reported)
}

/// A reported metric over the replications of one point: the mean and the
/// half-width of its 95% Student-t confidence interval (none for a single
/// replication). The one summary that the tool's tables, JSON and sweep
/// CSVs and the Python package's results are made from.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Summary {
    /// The metric's name.
    pub metric: &'static str,
    /// The mean over the replications.
    pub mean: f64,
    /// The 95% half-width.
    pub half_width: Option<f64>,
    /// Replications.
    pub n: u64,
}

/// Every [`reported`] metric of `reports` (one per replication), in order.
///
/// ```
/// use partalloc_allocators::registry::ALLOCATORS;
/// use partalloc_schedulers::registry::POLICIES;
/// use partalloc_simkit::metrics::summarize;
/// use partalloc_simkit::{SimConfig, Simulation};
/// use partalloc_workload::{Job, JobShape};
/// let mesh: partalloc_topology::Topology = "mesh:4x4".parse()?;
/// let (paging, fcfs) = (ALLOCATORS.spec("paging")?, POLICIES.spec("fcfs")?);
/// let run = |service: f64| {
///     let jobs = (0..3).map(move |i| Job::new(i, 0.0, JobShape::Nodes { count: 4 }, service));
///     Simulation::from_specs(mesh.clone(), &paging, &fcfs, jobs, SimConfig::default())?.run()
/// };
/// let s = summarize(&[run(1.0)?, run(3.0)?])?;
/// let service = s.iter().find(|m| m.metric == "mean_service").expect("reported");
/// assert_eq!((service.mean, service.n), (2.0, 2));
/// assert!(service.half_width.is_some_and(|h| h > 0.0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A [`StatsError`] if a value is not finite.
pub fn summarize(reports: &[Report]) -> Result<Vec<Summary>, StatsError> {
    summarize_metrics(reports, reported())
}

/// `metrics` of `reports` (one per replication), in the order given: the
/// command-line tool's and the Python package's [`reported`] ones, or all
/// of [`METRICS`] for the figures.
///
/// # Errors
/// A [`StatsError`] if a value is not finite.
pub fn summarize_metrics<'m>(
    reports: &[Report],
    metrics: impl IntoIterator<Item = &'m Metric>,
) -> Result<Vec<Summary>, StatsError> {
    metrics
        .into_iter()
        .map(|m| summary_of(m.name, reports.iter().map(|r| (m.value)(&r.results))))
        .collect()
}

/// One quantity over replications, named `metric`: the mean and the 95%
/// Student-t half-width of `values` (one per replication; no half-width for
/// one). The one place a summary over replications is computed.
///
/// ```
/// use partalloc_simkit::metrics::summary_of;
/// let s = summary_of("search_us", [1.0, 2.0, 3.0])?;
/// assert_eq!((s.metric, s.mean, s.n), ("search_us", 2.0, 3));
/// assert!(s.half_width.is_some_and(|h| (h - 2.484).abs() < 1e-3));
/// assert_eq!(summary_of("x", [4.0])?.half_width, None);
/// # Ok::<(), partalloc_simkit::StatsError>(())
/// ```
///
/// # Errors
/// A [`StatsError`] if a value is not finite or there is none.
pub fn summary_of(
    metric: &'static str,
    values: impl IntoIterator<Item = f64>,
) -> Result<Summary, StatsError> {
    let xs: Vec<f64> = values.into_iter().collect();
    let ci = ConfidenceInterval::from_samples(&xs, 0.95)?;
    Ok(Summary {
        metric,
        mean: ci.mean,
        half_width: ci.half_width,
        n: ci.n,
    })
}

/// The mean wall-clock search time per job in microseconds over `reports`
/// (not deterministic: never part of [`Results`]); 0 for none.
#[must_use]
pub fn mean_search_time_us(reports: &[Report]) -> f64 {
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

/// The metric named `name`, if any.
#[must_use]
pub fn by_name(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        for (i, m) in METRICS.iter().enumerate() {
            assert!(
                METRICS[i + 1..].iter().all(|o| o.name != m.name),
                "{} twice",
                m.name
            );
            assert_eq!(m.half_width_name, format!("{}_hw", m.name));
        }
    }

    #[test]
    fn values_read_their_own_field() {
        let r = Results {
            completed: 8,
            attempts: 10,
            mean_response: 1.0,
            mean_wait: 2.0,
            mean_numerical_delay: 3.0,
            mean_topological_delay: 4.0,
            mean_service: 5.0,
            mean_bounded_slowdown: 5.5,
            utilization: 6.0,
            useful_utilization: 7.0,
            miss_rate: 8.5,
            mean_internal_fragmentation: 9.0,
            mean_queue_length: 10.0,
            throughput: 11.0,
            mean_pairwise_distance: 12.0,
            mean_distance_sum: 13.0,
            mean_diameter: 14.0,
            mean_span: 15.0,
            mean_pieces: 16.0,
            mean_racks_per_job: 17.0,
            mean_stranded_gpus: 18.0,
            mean_stranded_nodes: 19.0,
            mean_split_segments: 20.0,
            lowest_level_share: 0.5,
            mean_largest_placeable: 21.0,
            mean_gpu_allocation: 22.0,
            mean_frag_gpus: 23.0,
            mean_frag_ratio: 24.0,
            ..Results::default()
        };
        let got: Vec<f64> = METRICS.iter().map(|m| (m.value)(&r)).collect();
        assert_eq!(
            got,
            [
                1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.5, 9.0, 10.0, 11.0, 8.0, 12.0, 13.0, 14.0,
                15.0, 16.0, 5.5, 17.0, 18.0, 19.0, 20.0, 0.5, 21.0, 22.0, 23.0, 24.0, 1.25
            ]
        );
        let empty = Results::default();
        assert_eq!(
            by_name("attempts_per_job").map(|m| (m.value)(&empty)),
            Some(0.0)
        );
    }
}
