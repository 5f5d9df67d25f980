//! The measured quantities every command reports, in one table, and their
//! summaries over replications.

use partalloc::simkit::Report;

use crate::error::CliError;

pub(crate) use partalloc::simkit::metrics::Metric;

/// The metrics every command reports, in output order: the reported ones
/// of the one table, [`partalloc::simkit::metrics::METRICS`], from which
/// tables, JSON and the sweep's CSV columns are all made.
pub(crate) use partalloc::simkit::metrics::reported;

/// Looks a metric up by name.
pub(crate) fn metric(name: &str) -> Result<Metric, CliError> {
    reported().find(|m| m.name == name).copied().ok_or_else(|| {
        let hint = partalloc::allocators::registry::closest_name(name, reported().map(|m| m.name))
            .map(|c| format!(" (did you mean {c:?}?)"))
            .unwrap_or_default();
        CliError::input(format!(
            "unknown metric {:?}{hint}; the {} metrics are a sweep CSV's columns ({}, …)",
            partalloc::topology::echo(name),
            reported().count(),
            reported()
                .take(3)
                .map(|m| m.name)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// A metric over replications: mean and 95% half-width.
pub(crate) use partalloc::simkit::metrics::Summary;

/// Summarizes every metric over the reports.
pub(crate) fn summarize(reports: &[Report]) -> Result<Vec<Summary>, CliError> {
    Ok(partalloc::simkit::metrics::summarize(reports)?)
}

/// Mean search time per job in microseconds over the reports (wall clock,
/// not deterministic).
pub(crate) use partalloc::simkit::metrics::mean_search_time_us as search_time_us;
