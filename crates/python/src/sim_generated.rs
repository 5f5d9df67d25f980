//! Generated workloads for `simulate`, described as on the command line.

use partalloc_simkit::Report;
use partalloc_topology::Topology;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A parsed generated workload.
pub(crate) struct Generated;

impl Generated {
    pub(crate) fn parse(
        _w: Option<&Bound<'_, PyDict>>,
        _topology: &Topology,
        _jobs: Option<u64>,
        _warmup: u64,
    ) -> PyResult<Self> {
        Err(PyValueError::new_err(
            "generated workloads are not available yet; pass trace=",
        ))
    }

    pub(crate) fn describe(&self, _topology: &Topology) -> String {
        String::new()
    }

    #[expect(clippy::too_many_arguments, reason = "the run's settings")]
    pub(crate) fn run(
        self,
        _topology: &Topology,
        _allocator: &str,
        _scheduler: &str,
        _time: Option<f64>,
        _seeds: u64,
        _seed: u64,
        _records: bool,
    ) -> PyResult<Vec<Report>> {
        Ok(Vec::new())
    }
}
