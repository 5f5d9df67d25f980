//! The measured quantities every command reports, in one table, and their
//! summaries over replications.

use partalloc::simkit::{Report, Results};
use serde::Serialize;

use crate::error::CliError;

pub(crate) use partalloc::simkit::metrics::Metric;

/// The metrics every command reports, in output order: the reported ones
/// of the one table, [`partalloc::simkit::metrics::METRICS`], from which
/// tables, JSON and the sweep's CSV columns are all made.
pub(crate) use partalloc::simkit::metrics::reported;

/// Looks a metric up by name.
pub(crate) fn metric(name: &str) -> Result<Metric, CliError> {
    reported().find(|m| m.name == name).copied().ok_or_else(|| {
        // Most metrics are means: `stranded_nodes` is `mean_stranded_nodes`.
        let mean = format!("mean_{name}");
        let hint = reported()
            .map(|m| m.name)
            .find(|&m| m == mean)
            .or_else(|| {
                partalloc::allocators::registry::closest_name(name, reported().map(|m| m.name))
            })
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

/// One run's results as every JSON report shows them (a `simulate`
/// replication, a `replay` run), in the order
/// of [`Results::fields`]: every quantity, null when its measure was not
/// taken, then the measures taken.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Replication(pub(crate) Results);

impl Serialize for Replication {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use partalloc::simkit::ResultValue;
        use serde::ser::SerializeMap;
        let fields = self.0.reported_fields();
        let mut map = serializer.serialize_map(Some(fields.len() + 1))?;
        for (name, v) in fields {
            match v {
                None => map.serialize_entry(name, &None::<f64>)?,
                Some(ResultValue::Count(n)) => map.serialize_entry(name, &n)?,
                Some(ResultValue::Real(x)) => map.serialize_entry(name, &x)?,
            }
        }
        map.serialize_entry("measured", &self.0.measured.to_string())?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_unknown_metric_suggests_its_mean() {
        let e = super::metric("stranded_nodes").unwrap_err().to_string();
        assert!(e.contains("did you mean \"mean_stranded_nodes\"?"), "{e}");
        let e = super::metric("mean_wiat").unwrap_err().to_string();
        assert!(e.contains("did you mean \"mean_wait\"?"), "{e}");
    }
}
