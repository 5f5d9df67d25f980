//! What `simulate` and `show` add on a Slurm block or tree machine:
//! stranded nodes (free in partly busy racks or leaf switches) and the
//! jobs' locality (`partalloc_simkit::slurm`).

use partalloc::simkit::observe::GrantLog;
use partalloc::simkit::slurm::{slurm_log_measures, stranded_nodes};
use partalloc::topology::{NodeSet, Topology};
use serde::Serialize;

/// Sampling times of a run's stranded-node average.
const SAMPLES: usize = 200;

/// The Slurm section of a `simulate` report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SlurmSummary {
    /// Time-average free nodes in partly busy fast domains.
    pub(crate) mean_stranded_nodes: f64,
    /// Mean base blocks (or leaf switches) a job's nodes lie in.
    pub(crate) mean_domains_per_job: f64,
    /// The segment size split segments are counted in, if the strategy has
    /// one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) segment: Option<u32>,
    /// Mean segments per job that no single domain holds.
    pub(crate) mean_split_segments_per_job: f64,
    /// Share of jobs at the lowest block level or switch their size allows.
    pub(crate) lowest_level_share: f64,
    /// Jobs of seed 0 measured (after the warm-up).
    pub(crate) jobs: usize,
}

/// The measures of the grants a run logged, segments counted in the
/// segment size its allocator reported.
pub(crate) fn from_log(topology: &Topology, log: &GrantLog) -> Option<SlurmSummary> {
    let segment = log.segment();
    slurm_log_measures(topology, log, segment, SAMPLES).map(|m| SlurmSummary {
        mean_stranded_nodes: m.mean_stranded_nodes,
        mean_domains_per_job: m.mean_domains,
        segment,
        mean_split_segments_per_job: m.mean_split_segments,
        lowest_level_share: m.lowest_level_share,
        jobs: m.jobs,
    })
}

/// For `show` on a Slurm machine: "; 12 stranded nodes (free in partly
/// busy racks or leaf switches)" for the nodes `owner` marks busy.
pub(crate) fn state_line(topology: &Topology, owner: &[Option<usize>]) -> Option<String> {
    let machine = topology.as_slurm()?;
    let mut busy = NodeSet::new(owner.len());
    for (n, o) in owner.iter().enumerate() {
        if o.is_some() {
            let _ = busy.insert(u32::try_from(n).ok()?);
        }
    }
    let domains = if machine.tree().is_some() {
        "leaf switches"
    } else {
        "base blocks"
    };
    let n = stranded_nodes(machine, &busy);
    Some(format!(
        "; {n} stranded node{} (free in partly busy {domains})",
        if n == 1 { "" } else { "s" }
    ))
}
