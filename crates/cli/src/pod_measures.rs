//! What `simulate` adds for a pod: stranded chips and the largest
//! placeable catalogue shape, averaged over time.

use partalloc::allocators::pod::{largest_placeable, stranded_chips_under};
use partalloc::simkit::pod::{pod_run_measures, wiring_of};
use partalloc::simkit::{JobRecord, SimConfig, Simulation, replication_rng};
use partalloc::topology::NodeSet;
use partalloc::topology::Topology;
use partalloc::workload::{DemandDist, ShapeDist, Workload};
use serde::Serialize;

use crate::error::CliError;

/// Sampling times of a run's pod measures.
const SAMPLES: usize = 200;

/// At most this many jobs after the warm-up are run again with records
/// for the pod and Slurm measures: memory stays bounded (a few tens of MB)
/// however long the simulated stream.
pub(crate) const MEASURED_JOBS: u64 = 100_000;

/// The pod section of a `simulate` report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PodSummary {
    /// Time-average free chips in no placeable catalogue shape.
    pub(crate) mean_stranded_chips: f64,
    /// Time-average chips of the largest placeable catalogue shape.
    pub(crate) mean_largest_placeable_chips: f64,
    /// Whose placement rules judged it: `static` or `reconfigurable`.
    pub(crate) rules: String,
    /// Jobs of seed 0 measured (after the warm-up).
    pub(crate) jobs: usize,
}

/// The measures of recorded jobs that all ran to completion.
pub(crate) fn from_records(
    topology: &Topology,
    allocator: &str,
    jobs: &[JobRecord],
) -> Option<PodSummary> {
    let wiring = wiring_of(allocator);
    pod_run_measures(topology, wiring, jobs, SAMPLES).map(|m| PodSummary {
        mean_stranded_chips: m.mean_stranded_chips,
        mean_largest_placeable_chips: m.mean_largest_placeable,
        rules: wiring.to_string(),
        jobs: jobs.len(),
    })
}

/// Replication 0 of a generated workload, its first `jobs + warmup` jobs
/// (at most `most` after the warm-up) run again to completion
/// with records, so that every running job is known at every sampled
/// time: the job records after the warm-up.
pub(crate) fn seed0_records(
    topology: &Topology,
    allocator: &str,
    scheduler: &str,
    workload: &Workload<ShapeDist, DemandDist>,
    jobs_and_warmup: (u64, u64),
    most: u64,
    seed: u64,
) -> Result<Vec<JobRecord>, CliError> {
    let (jobs, warmup) = jobs_and_warmup;
    let mut rng = replication_rng(seed, 0);
    let n = usize::try_from(jobs.min(most).saturating_add(warmup)).unwrap_or(usize::MAX);
    let config = SimConfig {
        warmup,
        record_jobs: true,
        measure_search_time: false,
        ..SimConfig::default()
    };
    let report = Simulation::by_name(
        topology.clone(),
        allocator,
        scheduler,
        workload.jobs(&mut rng).take(n),
        config,
    )?
    .run()?;
    Ok(report.jobs)
}

/// For `show` on a pod: "; largest placeable slice 4x4x8, 0 stranded chips
/// (static rules)" for the chips `owner` marks busy.
pub(crate) fn state_line(
    topology: &Topology,
    allocator: &str,
    owner: &[Option<usize>],
) -> Option<String> {
    let pod = topology.as_pod()?;
    let mut busy = NodeSet::new(owner.len());
    for (c, o) in owner.iter().enumerate() {
        if o.is_some() {
            let _ = busy.insert(u32::try_from(c).ok()?);
        }
    }
    let wiring = wiring_of(allocator);
    let largest = largest_placeable(pod, &busy, wiring).map_or_else(
        || "none".to_owned(),
        |s| {
            s.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("x")
        },
    );
    Some(format!(
        "; largest placeable slice {largest}, {} stranded chips ({wiring} rules)",
        stranded_chips_under(pod, &busy, wiring)
    ))
}

#[cfg(test)]
mod tests {
    use partalloc::workload::{Arrivals, DemandLaw, Dependence, ShapeLaw, WorkloadSpec};

    use super::*;

    #[test]
    fn the_rerun_keeps_at_most_the_bound_and_its_jobs_are_the_stream_s_first() {
        let topology: Topology = "pod:tpu-v5e:4x4".parse().unwrap();
        let w = WorkloadSpec {
            arrivals: Arrivals::Load(0.5),
            shapes: ShapeLaw::Catalogue { weights: None },
            demand: DemandLaw::Exponential { mean: 1.0 },
            dependence: Dependence::Dependent,
            allow_saturation: false,
        }
        .build(&topology)
        .unwrap();
        let all =
            seed0_records(&topology, "pod-first-fit", "fcfs", &w, (300, 20), 1000, 3).unwrap();
        assert_eq!(all.len(), 300);
        let capped =
            seed0_records(&topology, "pod-first-fit", "fcfs", &w, (300, 20), 120, 3).unwrap();
        assert_eq!(capped.len(), 120);
        // Under FCFS the first jobs run as they did in the longer stream.
        let starts = |r: &[JobRecord]| {
            let mut v: Vec<(u64, u64)> = r.iter().map(|j| (j.id, j.start.to_bits())).collect();
            v.sort_unstable();
            v
        };
        let (a, c) = (starts(&all), starts(&capped));
        assert!(c.iter().all(|x| a.contains(x)));
        assert!(from_records(&topology, "pod-first-fit", &capped).is_some_and(|m| m.jobs == 120));
    }
}
