//! Generated workloads for `simulate`, described by the command line's
//! workload options in their texts (`partalloc_workload::spec`), drawn and
//! run as `partalloc simulate` does.

use partalloc_allocators::registry::AllocatorSpec;
use partalloc_schedulers::registry::PolicySpec;
use partalloc_simkit::{Replications, Report, SimConfig, Stop};
use partalloc_topology::Topology;
use partalloc_workload::spec::{self, Arrivals, ShapeLaw, SpecError};
use partalloc_workload::{
    CubeDimLaw, DemandDist, DemandLaw, Dependence, ShapeDist, ShapeKind, SideLaw, Sides, Workload,
    WorkloadError,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::value_error;

/// The workload options `simulate(workload=…)` accepts, as the tool's flags.
const KEYS: &[&str] = &[
    "load",
    "shapes",
    "sides",
    "max_sides",
    "cube_dims",
    "residence",
    "dependence",
    "allow_saturation",
];

/// A parsed generated workload.
#[derive(Debug)]
pub(crate) struct Generated {
    load: f64,
    shapes: ShapeKind,
    sides: SideLaw,
    max_sides: Option<Sides>,
    cube_dims: CubeDimLaw,
    residence: DemandLaw,
    dependence: Dependence,
    jobs: u64,
    warmup: u64,
    workload: Workload<ShapeDist, DemandDist>,
}

/// The tool's message for a workload that cannot be built.
fn workload_error(e: SpecError) -> PyErr {
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
        .map_err(|e| PyValueError::new_err(format!("--{} {s:?}: {e}", key.replace('_', "-"))))
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
            Some(v) => v
                .extract()
                .map_err(|_| PyValueError::new_err("--load must be a number"))?,
            None => 0.5,
        };
        let allow_saturation: bool = match w.get_item("allow_saturation")? {
            Some(v) => v.is_truthy()?,
            None => false,
        };
        let max_sides = match w.get_item("max_sides")? {
            Some(v) if !v.is_none() => {
                let s = v.str()?.to_string();
                Some(
                    s.parse::<Sides>()
                        .map_err(|e| PyValueError::new_err(format!("--max-sides {s:?}: {e}")))?,
                )
            }
            _ => None,
        };
        let jobs = jobs.unwrap_or(1000);
        if jobs == 0 {
            return Err(PyValueError::new_err("--jobs must be at least 1"));
        }
        let shapes: ShapeKind = text(w, "shapes", "auto")?;
        let sides: SideLaw = text(w, "sides", "uniform")?;
        let cube_dims: CubeDimLaw = text(w, "cube_dims", "uniform")?;
        let residence: DemandLaw = text(w, "residence", "exp:1")?;
        let dependence: Dependence = text(w, "dependence", "dependent")?;
        let law = ShapeLaw::of_kind(shapes, topology, sides, &cube_dims, max_sides.map(|m| m.0));
        let workload = spec::WorkloadSpec {
            arrivals: Arrivals::Load(load),
            shapes: law,
            demand: residence,
            dependence,
            allow_saturation,
        }
        .build(topology)
        .map_err(workload_error)?;
        let g = Self {
            load,
            shapes,
            sides,
            max_sides,
            cube_dims,
            residence,
            dependence,
            jobs,
            warmup,
            workload,
        };
        Ok(g)
    }

    /// The generator.
    pub(crate) fn workload(&self) -> &Workload<ShapeDist, DemandDist> {
        &self.workload
    }

    /// The tool's one-line description of the workload.
    pub(crate) fn describe(&self, topology: &Topology) -> String {
        let law = ShapeLaw::of_kind(
            self.shapes,
            topology,
            self.sides,
            &self.cube_dims,
            self.max_sides.map(|m| m.0),
        );
        spec::WorkloadSpec {
            arrivals: Arrivals::Load(self.load),
            shapes: law,
            demand: self.residence,
            dependence: self.dependence,
            allow_saturation: false,
        }
        .describe(self.max_sides.as_ref(), self.jobs, self.warmup)
    }

    /// The replications, in replication order.
    #[expect(clippy::too_many_arguments, reason = "the run's settings")]
    pub(crate) fn run(
        self,
        topology: &Topology,
        allocator: &AllocatorSpec,
        scheduler: &PolicySpec,
        time: Option<f64>,
        seeds: u64,
        seed: u64,
        records: bool,
    ) -> PyResult<Vec<Report>> {
        let reps = Replications::new(seed, seeds)
            .map_err(|e| PyValueError::new_err(format!("--seeds: {e}")))?;
        let config = SimConfig {
            stop: Stop {
                jobs: Some(self.jobs),
                time,
            },
            warmup: self.warmup,
            record_jobs: records,
            measure_search_time: true,
        };
        reps.simulate_specs(
            topology,
            allocator,
            scheduler,
            &self.workload,
            config,
            &|| {},
        )
        .map_err(value_error)
    }
}
