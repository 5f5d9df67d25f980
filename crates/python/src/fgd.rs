//! `fgd_experiment`: one experiment of the FGD artifact (Weng et al., ATC
//! 2023) on the OpenB trace, as `partalloc-gpushare` reproduces it: the
//! three curves its analysis reports, point for point those of the
//! artifact's expected results for the deterministic policies.

use partalloc_gpushare::policy::Policy;
use partalloc_gpushare::reproduce::{Job, OpenB, run_jobs};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::guard;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fgd_experiment, m)?)
}

/// The curves of workload `workload` (a pod list's file name without
/// `.csv`) of the OpenB data in `openb` under `policy` with tune seed
/// `seed`: `{"alloc", "frag", "frag_ratio"}`, 131 values each (percent of
/// arrived workload 0–130; `None` where the analysis leaves a gap).
#[pyfunction]
#[pyo3(signature = (openb, *, workload="openb_pod_list_default", policy="FGD", seed=42))]
fn fgd_experiment<'py>(
    py: Python<'py>,
    openb: std::path::PathBuf,
    workload: &str,
    policy: &str,
    seed: i64,
) -> PyResult<Bound<'py, PyDict>> {
    let policy: Policy = policy
        .parse()
        .map_err(|e| PyValueError::new_err(format!("policy: {e}")))?;
    let data = OpenB::read(&openb, &[workload]).map_err(|e| {
        let text = e.to_string();
        if matches!(e, partalloc_gpushare::TraceError::Io { .. }) {
            PyOSError::new_err(text)
        } else {
            PyValueError::new_err(text)
        }
    })?;
    let job = Job {
        workload: 0,
        policy,
        seed,
    };
    let curves = py.allow_threads(|| guard(|| Ok(run_jobs(&data, &[job], 1))))?;
    let c = curves
        .into_iter()
        .next()
        .ok_or_else(|| PyValueError::new_err("the experiment ran no pod"))?;
    let d = PyDict::new(py);
    d.set_item("alloc", c.alloc)?;
    d.set_item("frag", c.frag)?;
    d.set_item("frag_ratio", c.frag_ratio)?;
    Ok(d)
}
