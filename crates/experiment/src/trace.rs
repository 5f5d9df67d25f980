//! Recorded traces as jobs on a machine, whatever their format
//! ([`TraceFormat`]): a Standard Workload Format file, or a Slurm
//! accounting dump (`sacct --parsable2`).
//!
//! ```
//! use partalloc_experiment::machine::{MachineSource, MAX_MACHINE_NODES};
//! use partalloc_experiment::trace::read_jobs;
//! use partalloc_workload::{ShapeMapping, TraceFormat};
//! let dir = env!("CARGO_MANIFEST_DIR");
//! let machine = MachineSource::parse(&format!("blocks:{dir}/../../examples/blocks-8x18.conf"))
//!     .load("replay", MAX_MACHINE_NODES)?;
//! let dump = std::path::Path::new(dir).join("../../examples/blocks-8x18.sacct");
//! let (jobs, _skipped) = read_jobs(&dump, TraceFormat::Sacct, &machine, ShapeMapping::nodes_of(&machine), false)?;
//! assert_eq!(jobs.len(), 400);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use partalloc_topology::{Topology, echo_path};
use partalloc_workload::sacct::{SacctTrace, SacctUnit};
use partalloc_workload::{Job, ShapeMapping, TraceFormat};

use crate::SourceError;
use crate::files::{FileKind, read_text, register_input};

/// Every job of the trace at `path` on `topology`, sorted by arrival, and
/// the lines or jobs skipped: malformed lines with `lenient` (else the
/// first stops the read with its line), and, in a sacct dump, jobs that
/// never ran or do not fit. An SWF trace's processor counts become
/// requests by `mapping`; a sacct dump's `NNodes` are node counts (on a
/// capacity machine whose nodes are GPUs, its `gres/gpu` count, and jobs
/// without GPUs are dropped).
///
/// # Errors
/// The file cannot be read or a line is malformed.
pub fn read_jobs(
    path: &Path,
    format: TraceFormat,
    topology: &Topology,
    mapping: ShapeMapping,
    lenient: bool,
) -> Result<(Vec<Job>, u64), SourceError> {
    if format == TraceFormat::Sacct {
        return read_sacct(path, topology, lenient);
    }
    if format == TraceFormat::Openb {
        return read_openb(path, topology);
    }
    let file = std::fs::File::open(path).map_err(SourceError::io(path))?;
    register_input(path, &file);
    let trace = partalloc_simkit::read_trace(path, mapping, lenient).map_err(|e| match e {
        partalloc_simkit::TraceError::Io { path, source } => {
            SourceError::File(partalloc_topology::files::FileError::Io { path, source })
        }
        e => SourceError::Trace(partalloc_topology::escaped(&e.to_string()).into_owned()),
    })?;
    Ok((trace.jobs, trace.skipped))
}

/// Reads an OpenB pod list as jobs on `topology`, a GPU-sharing cluster:
/// each pod, in file order (job id = its row, from 0), arrives at its
/// `creation_time` (0 when the list has no such column) and runs until its
/// `deletion_time`; a pod with no deletion time (no column, or an empty
/// field) runs until the trace's end, the latest creation or deletion
/// time it lists. Times are seconds. A pod no node of the cluster could
/// hold even empty is skipped and counted (as a sacct dump's jobs that do
/// not fit). Jobs are sorted by arrival, ties in file order.
///
/// # Errors
/// The file cannot be read, is not a pod list for this cluster (a
/// malformed row is refused with `FILE:LINE: reason`), or `topology` is
/// not a GPU-sharing cluster.
pub fn read_openb(path: &Path, topology: &Topology) -> Result<(Vec<Job>, u64), SourceError> {
    use partalloc_gpushare::openb::{Cluster, Unplaceable, parse_pods_timed};
    let Some(machine) = topology.as_gpushare() else {
        return Err(SourceError::Trace(format!(
            "{}: an openb pod list replays on a gpu-sharing cluster, not {}; give --topology openb:NODES.csv or gpushare:NxGgpu",
            echo_path(path),
            partalloc_topology::echo(&topology.to_string())
        )));
    };
    let text = read_text(path, FileKind::PodList)?;
    let cluster = Cluster::from(machine.as_ref());
    let pods = parse_pods_timed(&text, &echo_path(path), &cluster, Unplaceable::Keep)
        .map_err(|e| SourceError::Trace(e.to_string()))?;
    let end = pods
        .iter()
        .flat_map(|p| [p.created, p.deleted])
        .flatten()
        .max()
        .unwrap_or(0);
    let mut skipped = 0;
    let mut jobs = Vec::with_capacity(pods.len());
    for (row, p) in pods.iter().enumerate() {
        if !machine.can_ever_hold(&p.pod.request) {
            skipped += 1;
            continue;
        }
        let start = p.created.unwrap_or(0);
        let stop = p.deleted.unwrap_or(end).max(start);
        jobs.push(Job::new(
            row as u64,
            start as f64,
            partalloc_workload::JobShape::Pod {
                request: p.pod.request,
            },
            (stop - start) as f64,
        ));
    }
    jobs.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
    Ok((jobs, skipped))
}

/// Reads a `sacct --parsable2` dump as jobs on `topology` (see
/// [`read_jobs`]).
///
/// # Errors
/// The file cannot be read, or a line is malformed (unless `lenient`).
pub fn read_sacct(
    path: &Path,
    topology: &Topology,
    lenient: bool,
) -> Result<(Vec<Job>, u64), SourceError> {
    let machine_nodes = topology.num_nodes() as u64;
    let unit = match topology.as_capacity() {
        Some(m) if m.unit_resource() != partalloc_topology::capacity::PODS_RESOURCE => {
            SacctUnit::Gpus
        }
        _ => SacctUnit::Nodes,
    };
    let text = read_text(path, FileKind::Sacct)?;
    let bad = |e: partalloc_workload::sacct::SacctError| {
        SourceError::Trace(format!("{}: {e}", echo_path(path)))
    };
    let trace = SacctTrace::parse(&text, lenient).map_err(bad)?;
    let skipped = trace.skipped.len() as u64;
    let (trace, dropped) = trace.usable_in(machine_nodes, unit);
    let jobs = trace.jobs_in(machine_nodes, unit).map_err(bad)?;
    Ok((jobs, skipped + dropped as u64))
}
