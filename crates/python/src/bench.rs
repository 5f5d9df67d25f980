//! `benchmark`: RLScheduler's benchmark protocol
//! (`partalloc_simkit::benchmark`), as `partalloc benchmark` runs it.

use std::path::PathBuf;

use partalloc_schedulers::registry::PolicySpec;
use partalloc_simkit::SlowdownBound;
use partalloc_simkit::benchmark::{
    self as bm, Backfill, BenchTrace, BenchmarkConfig, DEFAULT_HEURISTICS,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{guard, value_error};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(benchmark, m)?)?;
    Ok(())
}

/// Scores heuristics and policies by RLScheduler's protocol; see the
/// Python wrapper's docstring.
#[pyfunction]
#[pyo3(signature = (trace, *, policies=None, backfill="both", schedulers=None, sequences=10, length=256, seed=0, starts=None, slowdown_bound=10.0))]
#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the keyword arguments of the Python API"
)]
fn benchmark<'py>(
    py: Python<'py>,
    trace: PathBuf,
    policies: Option<Vec<String>>,
    backfill: &str,
    schedulers: Option<Vec<String>>,
    sequences: usize,
    length: usize,
    seed: u64,
    starts: Option<Vec<usize>>,
    slowdown_bound: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let bound = SlowdownBound::new(slowdown_bound)
        .map_err(|e| PyValueError::new_err(format!("slowdown_bound: {e}")))?;
    let heuristics = policies.unwrap_or_else(|| DEFAULT_HEURISTICS.map(str::to_owned).to_vec());
    let backfill: Backfill = backfill.parse().map_err(value_error)?;
    let list = bm::policies(&heuristics, backfill, &schedulers.unwrap_or_default())
        .map_err(value_error)?;
    let specs: Vec<PolicySpec> = list.iter().map(|p| p.spec.clone()).collect();
    let config = BenchmarkConfig {
        length,
        sequences,
        seed,
        starts,
        bound,
    };
    let (table, jobs, nodes) = py.allow_threads(|| {
        guard(|| {
            let t = BenchTrace::read(&trace).map_err(value_error)?;
            let table = bm::run(&t, &specs, &config).map_err(value_error)?;
            Ok((table, t.jobs().len(), t.nodes()))
        })
    })?;
    let out = PyDict::new(py);
    out.set_item(
        "policy",
        list.iter().map(|p| p.label.clone()).collect::<Vec<_>>(),
    )?;
    out.set_item(
        "backfill",
        list.iter().map(|p| p.backfill).collect::<Vec<_>>(),
    )?;
    out.set_item(
        "mean",
        table.rows.iter().map(|r| r.mean).collect::<Vec<_>>(),
    )?;
    out.set_item(
        "per_sequence",
        table
            .rows
            .iter()
            .map(|r| r.per_sequence.clone())
            .collect::<Vec<_>>(),
    )?;
    out.set_item("starts", table.starts)?;
    out.set_item("trace_jobs", jobs)?;
    out.set_item("nodes", nodes)?;
    Ok(out)
}
