//! `simulate`: one simulation point, set up as the command line's
//! `partalloc simulate` does, so both give the same numbers.

use std::path::Path;

use partalloc_experiment::MachineSource;
use partalloc_experiment::experiment::{
    Experiment, ExperimentError, LublinSource, Prepared, RunLength, TraceSource, WorkloadSource,
};
use partalloc_simkit::observe::GrantLog;
use partalloc_simkit::{
    MAX_RECORDED_JOBS, Report, ResultValue, Results, SlowdownBound, TraceError,
};
use partalloc_topology::Topology as RustTopology;
use partalloc_workload::Job;
use partalloc_workload::ShapeMapping;
use partalloc_workload::lublin::LublinSpec;
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

/// Reads the trace of an experiment whole, with the command line's
/// messages: its first `jobs` jobs and the line describing them.
fn read_source(
    t: &TraceSource,
    prepared: &Prepared,
    jobs: Option<u64>,
) -> PyResult<(Vec<Job>, String)> {
    let topology = prepared.topology();
    let map = t.mapping.on(topology);
    let format = t.format;
    let path = &t.path;
    let (mut all, skipped) = if format != partalloc_workload::TraceFormat::Swf {
        partalloc_experiment::trace::read_jobs(path, format, topology, map, t.lenient).map_err(
            |e| match e {
                e @ partalloc_experiment::SourceError::File(
                    partalloc_topology::files::FileError::Io { .. },
                ) => PyOSError::new_err(e.to_string()),
                e => PyValueError::new_err(e.to_string()),
            },
        )?
    } else {
        read_trace(path, map, t.lenient)?
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
            "trace {} ({} jobs, {} mapping{skipped})",
            path.display(),
            all.len(),
            t.mapping
        )
    };
    Ok((all, text))
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

/// An experiment's refusal in the words of `simulate`'s arguments.
fn refusal(e: ExperimentError, seeds: u64) -> PyErr {
    match e {
        ExperimentError::Replications(e) => {
            PyValueError::new_err(format!("seeds={seeds}: {e}; use fewer seeds"))
        }
        ExperimentError::TraceRunsOnce(_) => {
            PyValueError::new_err("seeds applies to generated workloads; a trace runs once")
        }
        ExperimentError::RecordedJobs { jobs, max } => PyValueError::new_err(format!(
            "jobs={jobs}: at most {max} jobs are recorded; pass records=False, or fewer jobs"
        )),
        ExperimentError::StopTime(t) => PyValueError::new_err(format!(
            "time={t}: the stop time must be a finite number above 0 (a run that stops at 0 measures nothing)"
        )),
        ExperimentError::Measure(e) => PyValueError::new_err(format!("measures: {e}")),
        ExperimentError::Workload(e) => crate::sim_generated::workload_error(e),
        ExperimentError::NoJobs => PyValueError::new_err("jobs must be at least 1"),
        ExperimentError::TooManyJobs { jobs, max } => PyValueError::new_err(format!(
            "jobs={jobs}: at most {max} jobs are drawn from a model; use fewer"
        )),
        ExperimentError::Lublin(e) => value_error(format!("model: {e}")),
        ExperimentError::LublinJob(e) => value_error(format!("model: {e}")),
        ExperimentError::Source(
            e @ partalloc_experiment::SourceError::File(partalloc_topology::files::FileError::Io {
                ..
            }),
        ) => PyOSError::new_err(e.to_string()),
        e => value_error(e),
    }
}

/// Runs one simulation point; returns `(summary, record columns)`.
#[pyfunction]
#[pyo3(signature = (topology, allocator, scheduler, *, trace=None, workload=None, jobs=None, warmup=0, time=None, seeds=1, seed=1, mapping="shapes", lenient=false, records=true, runtime_model=None, slowdown_bound=10.0, measures="auto", trace_format="swf", model=None))]
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
    model: Option<&str>,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let topology = topology_arg(topology)?;
    let measures = measures
        .parse::<partalloc_simkit::MeasureSet>()
        .map_err(|e| PyValueError::new_err(format!("measures: {e}")))?;
    let slowdown_bound = SlowdownBound::new(slowdown_bound)
        .map_err(|e| PyValueError::new_err(format!("slowdown_bound: {e}")))?;
    let runtime = runtime_model
        .map(str::parse::<partalloc_simkit::RuntimeModel>)
        .transpose()
        .map_err(|e| PyValueError::new_err(format!("runtime_model: {e}")))?;
    let trace_mapping = || {
        mapping
            .parse::<partalloc_workload::TraceMapping>()
            .map_err(|e| PyValueError::new_err(e.to_string()))
    };
    let source = match (&trace, workload, model) {
        (Some(_), Some(_), _) => {
            return Err(PyValueError::new_err(
                "give either trace= (replay a file) or workload= (generate jobs), not both",
            ));
        }
        (Some(_), None, Some(_)) | (None, Some(_), Some(_)) => {
            return Err(PyValueError::new_err(
                "give one of trace= (replay a file), workload= (generate jobs) and model= (draw them from a model), not two",
            ));
        }
        (Some(path), None, None) => WorkloadSource::Trace(TraceSource {
            path: path.clone(),
            format: trace_format
                .parse::<partalloc_workload::TraceFormat>()
                .map_err(|e| PyValueError::new_err(format!("trace_format: {e}")))?,
            mapping: trace_mapping()?,
            lenient,
        }),
        (None, None, Some(text)) => {
            let spec: LublinSpec = text
                .parse()
                .map_err(|e| value_error(format!("model: {e}")))?;
            let mut source = LublinSource::new(spec);
            source.mapping = trace_mapping()?;
            WorkloadSource::Lublin(source)
        }
        (None, w, None) => {
            if records && jobs.unwrap_or(0) > MAX_RECORDED_JOBS {
                return Err(refusal(
                    ExperimentError::RecordedJobs {
                        jobs: jobs.unwrap_or(0),
                        max: MAX_RECORDED_JOBS,
                    },
                    seeds,
                ));
            }
            crate::sim_generated::Generated::parse(w, &topology, jobs, warmup)?.source()
        }
    };
    // Parsed once (a registry name is built once to check it); every
    // replication builds its own instances from these.
    let callbacks = Callbacks::default();
    let allocator = allocator_spec(allocator, &topology, &callbacks)?;
    let scheduler = policy_spec(scheduler, &topology, &callbacks)?;
    let mut exp = Experiment::new(
        MachineSource::parse(&topology.to_string()),
        source,
        allocator,
        scheduler,
    );
    exp.measures = measures;
    exp.seed = seed;
    exp.replications = seeds;
    exp.runtime_model = runtime;
    exp.slowdown_bound = slowdown_bound;
    exp.stop = RunLength { jobs, time, warmup };
    exp.record_jobs = records;
    // The check builds the strategy and the policy once: an exception a
    // Python class raised there is raised as itself.
    let prepared = exp
        .check_on(topology.clone())
        .map_err(|e| callbacks.or(refusal(e, seeds)))?;
    let (trace_jobs, description) = match prepared.trace() {
        Some(t) => {
            let (jobs, text) = read_source(t, &prepared, jobs)?;
            (Some(jobs), text)
        }
        None => (None, prepared.describe()),
    };
    // On a capacity machine the first run's grants are logged, as the
    // command line logs them, for the largest pod set per level.
    let grants = prepared
        .config()
        .measures
        .contains(partalloc_simkit::Measure::Capacity);
    // The long part runs without the interpreter lock (a Python strategy
    // takes it for each of its calls).
    let runs: PyResult<(Vec<Report>, Option<GrantLog>)> = py.allow_threads(|| {
        guard(|| {
            if let Some(all) = trace_jobs {
                let mut log = grants.then(first_log);
                let r = prepared
                    .run_jobs(all, &mut log)
                    .map_err(|e| refusal(e, seeds))?;
                return Ok((vec![r], log));
            }
            let runs = prepared
                .run(&|r| (grants && r == 0).then(first_log), &|| {})
                .map_err(|e| refusal(e, seeds))?;
            let mut first = None;
            let reports = runs
                .into_iter()
                .map(|(report, log)| {
                    first = first.take().or(log);
                    report
                })
                .collect();
            Ok((reports, first))
        })
    });
    // An exception a Python strategy raised is raised as itself.
    let (reports, log) = runs.map_err(|e| callbacks.or(e))?;
    let seeds = prepared.replications().count();
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
