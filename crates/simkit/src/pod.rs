//! Fragmentation of an accelerator pod over a run: stranded chips and the
//! largest placeable catalogue shape, averaged over time from the grants
//! of the run's measured jobs.
//!
//! The measures are sampled at evenly spaced times of the window in which
//! the grants of every running job are known: from the first measured
//! completion (every warm-up job has ended by then) to the last one.
//! [`pod_log_measures`] reads them from a [`GrantLog`] that watched the
//! run (it keeps the jobs still running when it closes, so any stop rule
//! will do); [`pod_run_measures`] from job records, for which the jobs
//! must run to completion (a finite job source, no stop rule) so that no
//! job still running at the end is missing.
//!
//! ```
//! use partalloc_allocators::registry::ALLOCATORS;
//! use partalloc_schedulers::registry::POLICIES;
//! use partalloc_simkit::pod::pod_run_measures;
//! use partalloc_simkit::{SimConfig, Simulation};
//! use partalloc_topology::Topology;
//! use partalloc_topology::pod::Wiring;
//! use partalloc_workload::{
//!     Arrivals, ChaCha8Rng, DemandLaw, Dependence, SeedableRng, ShapeLaw, WorkloadSpec,
//! };
//!
//! let pod: Topology = "pod:tpu-v5e:8x8".parse()?;
//! let w = WorkloadSpec {
//!     arrivals: Arrivals::Load(0.6),
//!     shapes: ShapeLaw::Catalogue { weights: None },
//!     demand: DemandLaw::Exponential { mean: 1.0 },
//!     dependence: Dependence::Dependent,
//!     allow_saturation: false,
//! }
//! .build(&pod)?;
//! let mut rng = ChaCha8Rng::seed_from_u64(1);
//! let jobs = w.jobs(&mut rng).take(300);
//! let config = SimConfig { record_jobs: true, ..SimConfig::default() };
//! let (pod_best_fit, fcfs) = (ALLOCATORS.spec("pod-best-fit")?, POLICIES.spec("fcfs")?);
//! let report = Simulation::from_specs(pod.clone(), &pod_best_fit, &fcfs, jobs, config)?.run()?;
//! let m = pod_run_measures(&pod, Wiring::Static, &report.jobs, 100).expect("a pod");
//! assert!(m.mean_stranded_chips >= 0.0 && m.mean_stranded_chips <= 64.0);
//! assert!(m.mean_largest_placeable <= 64.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_allocators::pod::{largest_placeable, stranded_chips_under};
use partalloc_topology::pod::Wiring;
use partalloc_topology::{NodeSet, Topology};

use crate::JobRecord;
use crate::observe::GrantLog;

/// Time averages of a pod's fragmentation over a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PodRunMeasures {
    /// Mean number of free chips in no placeable catalogue shape.
    pub mean_stranded_chips: f64,
    /// Mean chip count of the largest placeable catalogue shape (0 when
    /// none is placeable).
    pub mean_largest_placeable: f64,
    /// Sampling times used.
    pub samples: usize,
}

/// The measures of a run on `topology` (a pod; `None` otherwise or without
/// records), placement judged by `wiring`'s rules, sampled at `samples`
/// evenly spaced times (at least 1).
#[must_use]
pub fn pod_run_measures(
    topology: &Topology,
    wiring: Wiring,
    jobs: &[JobRecord],
    samples: usize,
) -> Option<PodRunMeasures> {
    measures(topology, wiring, |f| {
        crate::report::for_each_sampled_state(topology, jobs, samples, f)
    })
}

/// The measures of a run on `topology` (a pod; `None` otherwise or without
/// a logged completion) from the grants `log` kept during the run, judged
/// by the wiring the allocator reported ([`GrantLog::wiring`]), sampled at
/// `samples` evenly spaced times (at least 1) between the first and the
/// last logged completion.
///
/// ```
/// use partalloc_allocators::registry::ALLOCATORS;
/// use partalloc_schedulers::registry::POLICIES;
/// use partalloc_simkit::observe::GrantLog;
/// use partalloc_simkit::pod::pod_log_measures;
/// use partalloc_simkit::{SimConfig, Simulation, Stop};
/// use partalloc_topology::Topology;
/// use partalloc_topology::pod::Wiring;
/// use partalloc_workload::{ChaCha8Rng, SeedableRng, WorkloadSpec};
///
/// let pod: Topology = "pod:tpu-v4:8x8x8".parse()?;
/// let w = WorkloadSpec {
///     arrivals: "load:0.6".parse()?,
///     shapes: "catalogue".parse()?,
///     demand: "exp:1".parse()?,
///     dependence: "dependent".parse()?,
///     allow_saturation: false,
/// }
/// .build(&pod)?;
/// let mut rng = ChaCha8Rng::seed_from_u64(1);
/// let jobs = w.jobs(&mut rng);
/// let config = SimConfig { stop: Stop { jobs: Some(200), time: None }, ..SimConfig::default() };
/// let (pod_reconfigurable, fcfs) = (ALLOCATORS.spec("pod-reconfigurable")?, POLICIES.spec("fcfs")?);
/// let sim = Simulation::from_specs(pod.clone(), &pod_reconfigurable, &fcfs, jobs, config)?;
/// let mut log = GrantLog::new(usize::MAX);
/// sim.run_observed(&mut log, None)?;
/// // The strategy says which rules judge it.
/// assert_eq!(log.wiring(), Wiring::Reconfigurable);
/// let m = pod_log_measures(&pod, &log, 100).expect("a pod");
/// assert!(m.mean_largest_placeable <= 512.0 && m.samples == 100);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn pod_log_measures(
    topology: &Topology,
    log: &GrantLog,
    samples: usize,
) -> Option<PodRunMeasures> {
    measures(topology, log.wiring(), |f| {
        log.for_each_sampled_state(topology, samples, f)
    })
}

/// The time averages over the states `sample` visits.
fn measures(
    topology: &Topology,
    wiring: Wiring,
    sample: impl FnOnce(&mut dyn FnMut(&NodeSet)) -> Option<usize>,
) -> Option<PodRunMeasures> {
    let pod = topology.as_pod()?;
    let (mut stranded, mut largest) = (0.0, 0.0);
    let samples = sample(&mut |busy| {
        stranded += stranded_chips_under(pod, busy, wiring) as f64;
        largest += largest_placeable(pod, busy, wiring).map_or(0.0, |s| s.product() as f64);
    })?;
    Some(PodRunMeasures {
        mean_stranded_chips: stranded / samples as f64,
        mean_largest_placeable: largest / samples as f64,
        samples,
    })
}
