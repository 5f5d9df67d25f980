//! One self-contained HTML report of partalloc runs, opened offline from
//! disk: no network, the data, the styles and the drawing code inside the
//! file.
//!
//! For each run (a strategy and policy on a workload) the page shows:
//! - a **Gantt chart on the machine**: one row per node, grouped by the
//!   machine's own structure (blocks or leaf switches of a Slurm machine,
//!   rows or planes of a mesh, subcubes of a hypercube), each job a bar on
//!   the nodes it held — several pieces for a grant that is not one run of
//!   node ids — coloured by job or by wait; the wheel zooms in time
//!   (shift: in nodes), dragging pans, hovering a bar tells the job's id,
//!   nodes asked and granted, submit, start, end, wait, bounded slowdown and
//!   partition (a hostlist on Slurm machines);
//! - **over time**, on the Gantt's time axis: busy nodes and utilization,
//!   and the queue length;
//! - the **machine at a moment**, with a time slider;
//! - and, across runs on the same axes, the **distributions** of wait and
//!   bounded slowdown and a **summary** with 95% confidence intervals
//!   (batch means over the jobs in completion order).
//!
//! **What is drawn.** The Gantt chart and the machine view draw the first
//! [`ReportOptions::max_drawn`] jobs by start time (100,000 by default); the
//! curves over time, the distributions and the summary use every job. The
//! page says when jobs were left out of the drawing.
//!
//! ```
//! use partalloc_allocators::registry::ALLOCATORS;
//! use partalloc_schedulers::registry::POLICIES;
//! use partalloc_report::{ReportOptions, RunView, render};
//! use partalloc_simkit::{SimConfig, Simulation, Stop};
//! use partalloc_topology::Topology;
//! use partalloc_workload::{ChaCha8Rng, CubeDims, Dependence, Exponential, SeedableRng, Workload};
//!
//! let machine: Topology = "hypercube:5".parse()?;
//! let dims = CubeDims::mohapatra_uniform(machine.as_hypercube().unwrap())?;
//! let w = Workload::with_load(0.6, 32, dims, Exponential::new(1.0)?, Dependence::Dependent)?;
//! let mut rng = ChaCha8Rng::seed_from_u64(1);
//! let config = SimConfig { stop: Stop { jobs: Some(200), time: None }, ..SimConfig::default() };
//! let (buddy, fcfs) = (ALLOCATORS.spec("buddy")?, POLICIES.spec("fcfs")?);
//! let sim = Simulation::from_specs(machine.clone(), &buddy, &fcfs, w.jobs(&mut rng), config)?;
//! let mut records: Vec<partalloc_simkit::JobRecord> = Vec::new();
//! sim.run_observed(&mut (), Some(&mut |r| records.push(r)))?;
//! let html = render(&[RunView::new("buddy · fcfs", &machine, &records)], &ReportOptions::default())?;
//! assert!(html.starts_with("<!DOCTYPE html>") && html.contains("buddy · fcfs"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod batsim;
mod data;
mod page;

use std::path::Path;

use partalloc_simkit::JobRecord;
use partalloc_topology::Topology;
use thiserror::Error;

/// One run to show: a label (strategy and policy, say), its machine and
/// the records of its finished jobs.
#[derive(Debug, Clone, Copy)]
pub struct RunView<'a> {
    /// What the run is called in the page.
    pub label: &'a str,
    /// The machine it ran on.
    pub topology: &'a Topology,
    /// Its finished jobs, in any order.
    pub records: &'a [JobRecord],
}

impl<'a> RunView<'a> {
    /// A run to show.
    #[must_use]
    pub fn new(label: &'a str, topology: &'a Topology, records: &'a [JobRecord]) -> Self {
        Self {
            label,
            topology,
            records,
        }
    }
}

/// How a report is made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReportOptions {
    /// The page's title.
    pub title: String,
    /// Jobs drawn in the Gantt chart and the machine view of a run, the
    /// first by start time; the others count in every curve and table.
    pub max_drawn: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        Self {
            title: "partalloc report".to_owned(),
            max_drawn: 100_000,
        }
    }
}

impl ReportOptions {
    /// The default options with this title.
    #[must_use]
    pub fn titled(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            ..Self::default()
        }
    }

    /// The same options drawing at most `jobs` jobs of a run.
    #[must_use]
    pub fn with_max_drawn(mut self, jobs: usize) -> Self {
        self.max_drawn = jobs;
        self
    }
}

/// The most jobs one run may bring to a report (its curves and tables use
/// every job; beyond this the page would not open in a browser).
pub const MAX_REPORT_JOBS: usize = 5_000_000;

/// Why no report was made.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReportError {
    /// Nothing to show.
    #[error("a report needs at least one run")]
    NoRuns,
    /// A run whose jobs never finished.
    #[error("run {label:?} has no finished job to show: run it longer or with more jobs")]
    NoJobs {
        /// The run's label.
        label: String,
    },
    /// A run too large for a page.
    #[error(
        "run {label:?} has {jobs} jobs, more than a report holds ({max}): report a shorter run"
    )]
    TooLarge {
        /// The run's label.
        label: String,
        /// Its jobs.
        jobs: usize,
        /// [`MAX_REPORT_JOBS`].
        max: usize,
    },
    /// A job's partition is not on the run's machine.
    #[error("run {label:?}: job {job}'s partition is not on machine {machine}")]
    Partition {
        /// The run's label.
        label: String,
        /// The job.
        job: u64,
        /// The machine.
        machine: String,
    },
    /// The file could not be written (nothing was).
    #[error("cannot write the report {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// The report of `runs` as one HTML document.
///
/// # Errors
/// [`ReportError::NoRuns`], [`ReportError::NoJobs`] for a run without a
/// finished job, [`ReportError::TooLarge`], [`ReportError::Partition`].
pub fn render(runs: &[RunView<'_>], options: &ReportOptions) -> Result<String, ReportError> {
    if runs.is_empty() {
        return Err(ReportError::NoRuns);
    }
    let mut json = String::new();
    page::write_data(&mut json, runs, options)?;
    Ok(page::document(&options.title, &json))
}

/// Renders the report and writes it to `path` atomically: a report is
/// either whole or not there, and nothing is written on an error.
///
/// # Errors
/// As [`render`], or [`ReportError::Io`].
pub fn write(
    path: &Path,
    runs: &[RunView<'_>],
    options: &ReportOptions,
) -> Result<(), ReportError> {
    let html = render(runs, options)?;
    partalloc_simkit::write_atomic(path, html).map_err(|source| ReportError::Io {
        path: partalloc_topology::echo(&path.display().to_string()),
        source,
    })
}
