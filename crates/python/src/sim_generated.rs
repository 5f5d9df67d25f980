//! Generated workloads for `simulate` and the environments, described by
//! the command line's workload options in their texts
//! (`partalloc_workload::spec`); `simulate` runs them as an experiment's
//! source, as `partalloc simulate` does.

use partalloc_topology::Topology;
use partalloc_workload::spec::SpecError;
use partalloc_workload::{
    CubeDimLaw, DemandDist, DemandLaw, Dependence, ShapeDist, ShapeKind, SideLaw, Sides, Workload,
    WorkloadError, WorkloadOptions,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// The workload options `simulate(workload=…)` accepts, as the tool's flags
/// (those of [`WorkloadOptions`], jobs and warm-up aside, and the load).
const KEYS: &[&str] = &[
    "load",
    "shapes",
    "sides",
    "max_sides",
    "cube_dims",
    "shape_weights",
    "residence",
    "dependence",
    "allow_saturation",
];

/// A parsed generated workload.
#[derive(Debug)]
pub(crate) struct Generated {
    load: f64,
    options: WorkloadOptions,
    workload: Workload<ShapeDist, DemandDist>,
}

/// The tool's message for a workload that cannot be built.
pub(crate) fn workload_error(e: SpecError) -> PyErr {
    match e {
        SpecError::Workload(WorkloadError::Saturated { load }) => PyValueError::new_err(format!(
            "offered load {load} is at least 1: no strategy can keep up and the queue grows without bound; use a load below 1, or pass allow_saturation=True for a saturation study"
        )),
        other => PyValueError::new_err(format!("workload: {other}")),
    }
}

fn text<T: std::str::FromStr>(d: &Bound<'_, PyDict>, key: &str, default: &str) -> PyResult<T>
where
    T::Err: std::fmt::Display,
{
    let s: String = match d.get_item(key)? {
        Some(v) => v.str()?.to_string(),
        None => default.to_owned(),
    };
    s.parse::<T>()
        .map_err(|e| PyValueError::new_err(format!("workload[{key:?}] {s:?}: {e}")))
}

/// Catalogue weights: a sequence of numbers, or their text as the tool's
/// `--shape-weights` flag takes it (`"4,2,1,1"`).
fn weights(v: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    if v.is_instance_of::<PyString>() {
        let s = v.str()?.to_string();
        return s
            .split(',')
            .map(|x| {
                x.trim().parse::<f64>().map_err(|e| {
                    PyValueError::new_err(format!("workload[\"shape_weights\"] {s:?}: {x:?}: {e}"))
                })
            })
            .collect();
    }
    v.extract::<Vec<f64>>().map_err(|_| {
        PyValueError::new_err(
            "workload[\"shape_weights\"] must be a list of numbers, smallest catalogue shape first, or their text such as \"4,2,1,1\"",
        )
    })
}

impl Generated {
    pub(crate) fn parse(
        w: Option<&Bound<'_, PyDict>>,
        topology: &Topology,
        jobs: Option<u64>,
        warmup: u64,
    ) -> PyResult<Self> {
        let Some(w) = w else {
            return Err(PyValueError::new_err(
                "give trace= (a Standard Workload Format file) or workload= (a dict of workload options such as {\"load\": 0.5})",
            ));
        };
        for key in w.keys() {
            let k: String = key.str()?.to_string();
            if !KEYS.contains(&k.as_str()) {
                return Err(PyValueError::new_err(format!(
                    "unknown workload option {k:?}; known options: {}",
                    KEYS.join(", ")
                )));
            }
        }
        let load: f64 = match w.get_item("load")? {
            Some(v) => v.extract().map_err(|_| {
                PyValueError::new_err("workload[\"load\"] must be a number, such as 0.5")
            })?,
            None => 0.5,
        };
        let allow_saturation: bool = match w.get_item("allow_saturation")? {
            Some(v) => v.is_truthy()?,
            None => false,
        };
        let max_sides = match w.get_item("max_sides")? {
            Some(v) if !v.is_none() => {
                let s = v.str()?.to_string();
                Some(s.parse::<Sides>().map_err(|e| {
                    PyValueError::new_err(format!("workload[\"max_sides\"] {s:?}: {e}"))
                })?)
            }
            _ => None,
        };
        let shape_weights = match w.get_item("shape_weights")? {
            Some(v) if !v.is_none() => Some(weights(&v)?),
            _ => None,
        };
        let jobs = jobs.unwrap_or(1000);
        if jobs == 0 {
            return Err(PyValueError::new_err("jobs must be at least 1"));
        }
        let options = WorkloadOptions {
            shapes: text::<ShapeKind>(w, "shapes", "auto")?,
            sides: text::<SideLaw>(w, "sides", "uniform")?,
            max_sides,
            cube_dims: text::<CubeDimLaw>(w, "cube_dims", "uniform")?,
            residence: text::<DemandLaw>(w, "residence", "exp:1")?,
            shape_weights,
            dependence: text::<Dependence>(w, "dependence", "dependent")?,
            jobs,
            warmup,
            allow_saturation,
        };
        let workload = options.build(topology, load).map_err(workload_error)?;
        Ok(Self {
            load,
            options,
            workload,
        })
    }

    /// The workload as an experiment's source: the options and the load.
    pub(crate) fn source(&self) -> partalloc_experiment::WorkloadSource {
        partalloc_experiment::WorkloadSource::Generated {
            options: self.options.clone(),
            load: self.load,
        }
    }

    /// The generator.
    pub(crate) fn workload(&self) -> &Workload<ShapeDist, DemandDist> {
        &self.workload
    }
}
