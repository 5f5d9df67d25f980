//! `simulate`: one simulation point, set up as the command line's
//! `partalloc simulate` does, so both give the same numbers.

use std::path::Path;

use partalloc_simkit::observe::GrantLog;
use partalloc_simkit::{
    MAX_RECORDED_JOBS, Replications, Report, ResultValue, Results, SimConfig, Simulation,
    SlowdownBound, Stop, TraceError,
};
use partalloc_topology::Topology as RustTopology;
use partalloc_workload::Job;
use partalloc_workload::ShapeMapping;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::alloc::topology_arg;
use crate::custom::{Callbacks, allocator_spec, policy_spec};
use crate::errors::{guard, value_error};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    Ok(())
}

/// The mapping named as on the command line.
pub(crate) fn mapping_of(name: &str, topology: &RustTopology) -> PyResult<ShapeMapping> {
    name.parse::<partalloc_workload::TraceMapping>()
        .map(|m| m.on(topology))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Reads a whole trace as jobs, with the command line's messages; returns
/// the jobs sorted by arrival (ties in file order) and the skipped count.
pub(crate) fn read_trace(
    path: &Path,
    mapping: ShapeMapping,
    lenient: bool,
) -> PyResult<(Vec<Job>, u64)> {
    match partalloc_simkit::read_trace(path, mapping, lenient) {
        Ok(t) => Ok((t.jobs, t.skipped)),
        Err(e @ TraceError::Io { .. }) => Err(PyOSError::new_err(e.to_string())),
        Err(e) => Err(value_error(e)),
    }
}

/// One replication's results, every field by the one list of them
/// ([`Results::fields`]): counts as ints, the rest as floats.
fn results_dict<'py>(py: Python<'py>, r: &Results) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    // A quantity the run did not measure is None, not 0.
    for (name, value) in r.reported_fields() {
        match value {
            None => d.set_item(name, py.None())?,
            Some(ResultValue::Count(n)) => d.set_item(name, n)?,
            Some(ResultValue::Real(x)) => d.set_item(name, x)?,
        }
    }
    d.set_item("measured", r.measured.to_string())?;
    Ok(d)
}

/// The per-job records of a report as columns: little-endian bytes for
/// the numbers and a list of texts for the partitions.
fn record_columns<'py>(py: Python<'py>, report: &Report) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let n = report.jobs.len();
    let f64s = |f: fn(&partalloc_simkit::JobRecord) -> f64| -> Vec<u8> {
        let mut v = Vec::with_capacity(n * 8);
        for j in &report.jobs {
            v.extend_from_slice(&f(j).to_le_bytes());
        }
        v
    };
    let u64s = |f: fn(&partalloc_simkit::JobRecord) -> u64| -> Vec<u8> {
        let mut v = Vec::with_capacity(n * 8);
        for j in &report.jobs {
            v.extend_from_slice(&f(j).to_le_bytes());
        }
        v
    };
    d.set_item("id", PyBytes::new(py, &u64s(|j| j.id)))?;
    d.set_item("arrival", PyBytes::new(py, &f64s(|j| j.arrival)))?;
    d.set_item("start", PyBytes::new(py, &f64s(|j| j.start)))?;
    d.set_item("end", PyBytes::new(py, &f64s(|j| j.end)))?;
    d.set_item("wait", PyBytes::new(py, &f64s(|j| j.wait)))?;
    d.set_item("response", PyBytes::new(py, &f64s(|j| j.response)))?;
    d.set_item(
        "numerical_delay",
        PyBytes::new(py, &f64s(|j| j.numerical_delay)),
    )?;
    d.set_item(
        "topological_delay",
        PyBytes::new(py, &f64s(|j| j.wait - j.numerical_delay)),
    )?;
    d.set_item(
        "bounded_slowdown",
        PyBytes::new(py, &f64s(|j| j.bounded_slowdown)),
    )?;
    d.set_item("requested", PyBytes::new(py, &u64s(|j| j.requested)))?;
    d.set_item("granted", PyBytes::new(py, &u64s(|j| j.granted)))?;
    // Dispersal, as floats: NaN on a machine without hop distances.
    let dispersal = |f: fn(&partalloc_simkit::GrantDispersal) -> f64| -> Vec<u8> {
        let mut v = Vec::with_capacity(n * 8);
        for j in &report.jobs {
            let x = j.dispersal.as_ref().map_or(f64::NAN, f);
            v.extend_from_slice(&x.to_le_bytes());
        }
        v
    };
    for (name, f) in [
        (
            "distance_sum",
            (|d| d.distance_sum as f64) as fn(&partalloc_simkit::GrantDispersal) -> f64,
        ),
        ("mean_distance", |d| d.mean_distance()),
        ("diameter", |d| f64::from(d.diameter)),
        ("span", |d| d.span_nodes as f64),
        ("pieces", |d| f64::from(d.pieces)),
    ] {
        d.set_item(name, PyBytes::new(py, &dispersal(f)))?;
    }
    let parts: Vec<String> = report
        .jobs
        .iter()
        .map(|j| j.partition.to_string())
        .collect();
    d.set_item("partition", parts)?;
    Ok(d)
}

/// What `simulate` was asked to run, once parsed.
enum Source {
    Trace(Vec<Job>),
    Generated(Box<crate::sim_generated::Generated>),
}

/// Runs one simulation point; returns `(summary, record columns)`.
#[pyfunction]
#[pyo3(signature = (topology, allocator, scheduler, *, trace=None, workload=None, jobs=None, warmup=0, time=None, seeds=1, seed=1, mapping="shapes", lenient=false, records=true, runtime_model=None, slowdown_bound=10.0, measures="auto", trace_format="swf"))]
#[expect(
    clippy::too_many_arguments,
    reason = "mirrors the keyword arguments of the Python API"
)]
fn simulate<'py>(
    py: Python<'py>,
    topology: &Bound<'py, PyAny>,
    allocator: &Bound<'py, PyAny>,
    scheduler: &Bound<'py, PyAny>,
    trace: Option<std::path::PathBuf>,
    workload: Option<&Bound<'py, PyDict>>,
    jobs: Option<u64>,
    warmup: u64,
    time: Option<f64>,
    seeds: u64,
    seed: u64,
    mapping: &str,
    lenient: bool,
    records: bool,
    runtime_model: Option<&str>,
    slowdown_bound: f64,
    measures: &str,
    trace_format: &str,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let topology = topology_arg(topology)?;
    let measures = measures
        .parse::<partalloc_simkit::MeasureSet>()
        .map_err(|e| PyValueError::new_err(format!("measures: {e}")))?
        .resolve(&topology)
        .map_err(|e| PyValueError::new_err(format!("measures: {e}")))?;
    let slowdown_bound = SlowdownBound::new(slowdown_bound)
        .map_err(|e| PyValueError::new_err(format!("slowdown_bound: {e}")))?;
    let model = runtime_model
        .map(str::parse::<partalloc_simkit::RuntimeModel>)
        .transpose()
        .map_err(|e| PyValueError::new_err(format!("runtime_model: {e}")))?;
    if let Some(t) = time
        && !(t.is_finite() && t > 0.0)
    {
        return Err(PyValueError::new_err(format!(
            "time={t}: the stop time must be a finite number above 0 (a run that stops at 0 measures nothing)"
        )));
    }
    let (source, description, seeds) = match (&trace, workload) {
        (Some(_), Some(_)) => {
            return Err(PyValueError::new_err(
                "give either trace= (replay a file) or workload= (generate jobs), not both",
            ));
        }
        (Some(path), None) => {
            if seeds != 1 {
                return Err(PyValueError::new_err(
                    "seeds applies to generated workloads; a trace runs once",
                ));
            }
            let map = mapping_of(mapping, &topology)?;
            let format = trace_format
                .parse::<partalloc_workload::TraceFormat>()
                .map_err(|e| PyValueError::new_err(format!("trace_format: {e}")))?;
            let (mut all, skipped) = if format != partalloc_workload::TraceFormat::Swf {
                partalloc_experiment::trace::read_jobs(path, format, &topology, map, lenient)
                    .map_err(|e| match e {
                        e @ partalloc_experiment::SourceError::File(
                            partalloc_topology::files::FileError::Io { .. },
                        ) => pyo3::exceptions::PyOSError::new_err(e.to_string()),
                        e => PyValueError::new_err(e.to_string()),
                    })?
            } else {
                read_trace(path, map, lenient)?
            };
            if let Some(n) = jobs {
                all.truncate(usize::try_from(n).unwrap_or(usize::MAX));
            }
            let skipped = if skipped > 0 {
                format!(", {skipped} malformed lines skipped")
            } else {
                String::new()
            };
            let text = if format != partalloc_workload::TraceFormat::Swf {
                format!(
                    "trace {} ({} jobs, {format} {}{skipped})",
                    path.display(),
                    all.len(),
                    if format == partalloc_workload::TraceFormat::Sacct {
                        "dump"
                    } else {
                        "pod list"
                    }
                )
            } else {
                format!(
                    "trace {} ({} jobs, {mapping} mapping{skipped})",
                    path.display(),
                    all.len()
                )
            };
            (Source::Trace(all), text, 1)
        }
        (None, w) => {
            // The library's caps, checked before anything is drawn or run.
            Replications::new(seed, seeds).map_err(|e| {
                PyValueError::new_err(format!("seeds={seeds}: {e}; use fewer seeds"))
            })?;
            if records && jobs.unwrap_or(0) > MAX_RECORDED_JOBS {
                return Err(PyValueError::new_err(format!(
                    "jobs={}: at most {MAX_RECORDED_JOBS} jobs are recorded; pass records=False, or fewer jobs",
                    jobs.unwrap_or(0)
                )));
            }
            let g = crate::sim_generated::Generated::parse(w, &topology, jobs, warmup)?;
            let text = g.describe(&topology);
            (Source::Generated(Box::new(g)), text, seeds)
        }
    };
    // Parsed once (a registry name is built once to check it); every
    // replication builds its own instances from these.
    let callbacks = Callbacks::default();
    let allocator = allocator_spec(allocator, &topology, &callbacks)?;
    let scheduler = policy_spec(scheduler, &topology, &callbacks)?;
    // On a capacity machine the first run's grants are logged, as the
    // command line logs them, for the largest pod set per level.
    let grants = measures.contains(partalloc_simkit::Measure::Capacity);
    // The long part runs without the interpreter lock (a Python strategy
    // takes it for each of its calls).
    let runs: PyResult<(Vec<Report>, Option<GrantLog>)> = py.allow_threads(|| {
        guard(|| match source {
            Source::Trace(all) => {
                let config = SimConfig {
                    stop: Stop { jobs: None, time },
                    warmup,
                    record_jobs: records,
                    measure_search_time: true,
                    slowdown_bound,
                    measures,
                };
                let mut sim =
                    Simulation::from_specs(topology.clone(), &allocator, &scheduler, all, config)
                        .map_err(value_error)?;
                if let Some(m) = model {
                    sim = sim
                        .with_runtime_model(m.seeded(seed))
                        .map_err(value_error)?;
                }
                let mut log = grants.then(first_log);
                let r = sim.run_observed(&mut log, None).map_err(value_error)?;
                Ok((vec![r], log))
            }
            Source::Generated(g) => g.run(
                &topology,
                &allocator,
                &scheduler,
                time,
                seeds,
                seed,
                records,
                model,
                (slowdown_bound, measures),
                grants,
            ),
        })
    });
    // An exception a Python strategy raised is raised as itself.
    let (reports, log) = runs.map_err(|e| callbacks.or(e))?;
    let Some(first) = reports.first() else {
        return Err(PyValueError::new_err("no replication ran"));
    };
    let summary = PyDict::new(py);
    summary.set_item("topology", topology.to_string())?;
    summary.set_item("nodes", topology.num_nodes())?;
    summary.set_item("allocator", &first.allocator)?;
    summary.set_item("scheduler", &first.scheduler)?;
    summary.set_item("workload", description)?;
    summary.set_item("seeds", seeds)?;
    summary.set_item("seed", seed)?;
    let metrics = PyList::empty(py);
    // The command line's summary, from the one table of reported metrics.
    for sm in partalloc_simkit::metrics::summarize(&reports).map_err(value_error)? {
        // Only what the run measured, as the command line prints it.
        if !first.results.was_measured(sm.metric) {
            continue;
        }
        let m = PyDict::new(py);
        m.set_item("metric", sm.metric)?;
        m.set_item("mean", sm.mean)?;
        m.set_item("half_width", sm.half_width)?;
        m.set_item("n", sm.n)?;
        metrics.append(m)?;
    }
    summary.set_item("metrics", metrics)?;
    let search = partalloc_simkit::metrics::mean_search_time_us(&reports);
    summary.set_item("search_time_us_per_job", search)?;
    let reps = PyList::empty(py);
    for r in &reports {
        reps.append(results_dict(py, &r.results)?)?;
    }
    summary.set_item("replications", reps)?;
    if let Some(largest) = log
        .as_ref()
        .and_then(|log| partalloc_simkit::capacity::largest_pod_sets(&topology, log))
    {
        let levels = PyList::empty(py);
        for l in &largest.levels {
            let d = PyDict::new(py);
            d.set_item("level", &l.level)?;
            d.set_item("mean_largest_pod_set", l.mean_largest_pod_set)?;
            levels.append(d)?;
        }
        let c = PyDict::new(py);
        c.set_item("levels", levels)?;
        c.set_item("samples", largest.samples)?;
        summary.set_item("capacity_levels", c)?;
    }
    let columns = record_columns(py, first)?;
    Ok((summary, columns))
}

/// The log of the first run's grants the command line keeps on a capacity
/// machine (its first measured jobs only).
pub(crate) fn first_log() -> GrantLog {
    use partalloc_simkit::measure::{MEASURED_IDS, MEASURED_JOBS};
    GrantLog::new(MEASURED_JOBS).with_max_items(MEASURED_IDS)
}
