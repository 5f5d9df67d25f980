//! What the commands that run simulations share: a machine parsed from
//! its description, the strategy and the policy parsed at the edge, and
//! the run flags.

use partalloc::allocators::BuildError;
use partalloc::allocators::registry::{ALLOCATORS, AllocatorSpec};
use partalloc::schedulers::PolicyBuildError;
use partalloc::schedulers::registry::{POLICIES, PolicySpec};
use partalloc::simkit::SimError;
use partalloc::topology::Topology;

use crate::error::CliError;

/// Reads a machine description such as `mesh:64x64`, or the file it names
/// (a pod's `.toml`, `blocks:FILE`, `tree:FILE`, `kueue:TOPOLOGY,NODES`),
/// through the library's one reader of machines, without a size bound
/// (`crate::limits::machine` adds the bound of a run).
pub(crate) fn parse_topology(text: &str) -> Result<Topology, CliError> {
    Ok(partalloc_experiment::MachineSource::parse(text).load("this command", usize::MAX)?)
}

/// The files a `--topology` value reads: inputs no output may replace.
pub(crate) fn topology_files(text: &str) -> Vec<std::path::PathBuf> {
    partalloc_experiment::MachineSource::parse(text).files()
}

/// A command's allocation strategy and scheduling policy, parsed once at
/// the edge into typed specs that build fresh instances per run. A
/// malformed or unknown one is reported where the command first needs
/// it, and in the order building by name reports it: everything about the
/// allocator before anything about the policy.
#[derive(Debug)]
pub(crate) struct Strategies {
    allocator: Result<AllocatorSpec, BuildError>,
    scheduler: Result<PolicySpec, PolicyBuildError>,
}

impl Strategies {
    /// Parses both, keeping their errors for later.
    pub(crate) fn parse(allocator: &str, scheduler: &str) -> Self {
        Self {
            allocator: ALLOCATORS.spec(allocator),
            scheduler: POLICIES.spec(scheduler),
        }
    }

    /// Both specs, the allocator's error first.
    pub(crate) fn specs(&self) -> Result<(AllocatorSpec, PolicySpec), SimError> {
        let allocator = self.allocator.clone()?;
        let scheduler = self.scheduler.clone()?;
        Ok((allocator, scheduler))
    }
}

/// The flags every command that runs a simulation shares.
#[derive(Debug, clap::Args)]
pub(crate) struct RunFlags {
    /// The threshold τ of the bounded slowdown, max(1, response /
    /// max(service, τ)), in the trace's time unit (seconds in SWF).
    #[arg(long, value_name = "SECONDS", default_value_t = partalloc::simkit::SlowdownBound::default())]
    pub(crate) slowdown_bound: partalloc::simkit::SlowdownBound,
    /// Run times grow with each grant's dispersal: sst:A[B,C] (SST's
    /// allocation-based timing, e.g. sst:.001865[.1569,.0129]) or linear:K
    /// (K × the relative excess of the mean pairwise distance over the
    /// baseline's). Off by default.
    #[arg(long)]
    pub(crate) runtime_model: Option<String>,
    /// The measures to take beyond the basic ones: auto (the machine's own:
    /// dispersal on meshes, tori, hypercubes and pods; capacity, slurm or
    /// pod measures on those machines), none, or a list such as
    /// dispersal,pod. A measure not taken costs nothing and is not printed.
    #[arg(long, value_name = "LIST", default_value_t = partalloc::simkit::MeasureSet::AUTO)]
    pub(crate) measure: partalloc::simkit::MeasureSet,
}

impl RunFlags {
    /// The experiment of `topology` running `workload` under `specs` with
    /// these flags' measures and slowdown bound, drawn from `seed` (the
    /// run-time model, the replications and the stop are the command's).
    pub(crate) fn experiment(
        &self,
        topology: &str,
        workload: partalloc_experiment::WorkloadSource,
        (allocator, policy): (AllocatorSpec, PolicySpec),
        seed: u64,
    ) -> partalloc_experiment::Experiment {
        let mut exp = partalloc_experiment::Experiment::new(
            partalloc_experiment::MachineSource::parse(topology),
            workload,
            allocator,
            policy,
        );
        exp.measures = self.measure;
        exp.slowdown_bound = self.slowdown_bound;
        exp.seed = seed;
        exp
    }
}

/// Reads a `--runtime-model` value (`sst:A[B,C]`, `linear:K`), naming the
/// option in the error.
pub(crate) fn runtime_model(
    text: Option<&str>,
) -> Result<Option<partalloc::simkit::RuntimeModel>, CliError> {
    text.map(|t| {
        t.parse()
            .map_err(|e| CliError::input(format!("--runtime-model: {e}")))
    })
    .transpose()
}

/// The strategy and the policy of a run, parsed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setup<'a> {
    pub(crate) allocator: &'a AllocatorSpec,
    pub(crate) scheduler: &'a PolicySpec,
}
