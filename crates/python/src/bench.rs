//! `benchmark`: RLScheduler's benchmark protocol
//! (`partalloc_simkit::benchmark`), as `partalloc benchmark` runs it.

use std::path::PathBuf;

use partalloc_schedulers::registry::{POLICIES, PolicySpec};
use partalloc_simkit::SlowdownBound;
use partalloc_simkit::benchmark::{self as bm, BenchTrace, BenchmarkConfig, DEFAULT_HEURISTICS};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{guard, value_error};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(benchmark, m)?)?;
    Ok(())
}

/// The heuristics × backfilling settings and the extra policies, with the
/// backfilling setting of each (None for an extra policy).
fn policies_of(
    heuristics: &[String],
    backfill: &str,
    schedulers: &[String],
) -> PyResult<(Vec<PolicySpec>, Vec<(String, Option<bool>)>)> {
    let settings: &[bool] = match backfill {
        "off" => &[false],
        "on" => &[true],
        "both" => &[false, true],
        other => {
            return Err(PyValueError::new_err(format!(
                "backfill {other:?}: use \"off\", \"on\" or \"both\""
            )));
        }
    };
    let mut specs = Vec::new();
    let mut labels = Vec::new();
    for name in heuristics {
        for &b in settings {
            specs.push(bm::heuristic(name.trim(), b).map_err(value_error)?);
            labels.push((name.trim().to_owned(), Some(b)));
        }
    }
    for text in schedulers {
        let spec = POLICIES.spec(text).map_err(value_error)?;
        labels.push((spec.to_string(), None));
        specs.push(spec);
    }
    Ok((specs, labels))
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
    let (specs, labels) = policies_of(&heuristics, backfill, &schedulers.unwrap_or_default())?;
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
        labels.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(),
    )?;
    out.set_item(
        "backfill",
        labels.iter().map(|(_, b)| *b).collect::<Vec<_>>(),
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
