//! What a run reports (definitions: docs/baselines.md#measurements).
//!
//! Definitions, over the measured jobs (those completing after the warm-up)
//! and the measurement window (from the warm-up's last completion to the
//! end of the run, of length `span`):
//!
//! - **response** = end − arrival, **wait** = start − arrival,
//!   **service** = end − start (means over measured jobs);
//! - **numerical and topological delay** (Kang et al. §5.1): at every
//!   instant the head of the queue ([`Scheduler::head`]) waits, the instant
//!   is *numerical* if fewer nodes are free than the head requests and
//!   *topological* otherwise (enough nodes are free but no partition is
//!   granted — for the policies that hold jobs back on purpose, such as
//!   lazy or static partitioning, that includes the policy's own waiting).
//!   Every waiting job accrues each instant under the head's category, so
//!   a job's wait is exactly its numerical plus its topological delay and
//!   mean response = mean service + mean numerical + mean topological
//!   delay, the decomposition of Kang's Figs. 11–13;
//! - **utilization** = busy node·time / (N · span), busy meaning granted
//!   nodes; **useful utilization** counts requested nodes instead;
//! - **allocation miss rate** (Kim & Yoon §IV.2): among allocation attempts
//!   made while at least the requested number of nodes was free ("valid
//!   requests"), the fraction refused;
//! - **internal fragmentation**: mean granted − requested nodes per job;
//! - **queue length** and **number in system**: time averages;
//! - **throughput**: measured jobs / span;
//! - **bounded slowdown** = max(1, response / max(service, τ)), τ from
//!   [`SimConfig::slowdown_bound`](crate::SimConfig::slowdown_bound)
//!   (10 by default; [`crate::slowdown`]), per job and its mean;
//! - **search time**: wall-clock (monotonic) time spent in the allocator's
//!   allocate (every attempt) and release calls, per measured job. It is
//!   kept in [`Report::search_time`], outside [`Results`], so it never takes
//!   part in determinism comparisons. It is a sampled estimate: calls
//!   costing 200 clock reads or more (at least 2 µs) are all timed, faster
//!   ones one in up to 1024 (each timed call counting for the calls it
//!   stands for, and at most 16 times the mean of the timed calls, so that
//!   a preemption inside one sampled call is not multiplied), so that
//!   reading the clock stays about 1% of the time in the allocator.
//!
//! [`Scheduler::head`]: partalloc_schedulers::Scheduler::head
//!
//! ```
//! use partalloc_simkit::report::Results;
//! let r = Results::default();
//! assert_eq!(r.completed, 0);
//! assert!(r.to_string().contains("mean response"));
//! ```

use core::fmt;

use partalloc_allocators::{Grant, Partition};
use partalloc_topology::{NodeId, NodeSet, Topology};
use partalloc_workload::Job;

use crate::capacity::GrantDomains;
use crate::dispersal::GrantDispersal;
use crate::measure::{Measure, MeasureSet, SAMPLES};
use crate::observe::GrantLog;
use crate::slowdown::{SlowdownBound, bounded_slowdown};

/// The deterministic results of a run: the same seed and configuration give
/// bit-identical values.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Results {
    /// Measured (post-warm-up) completed jobs.
    pub completed: u64,
    /// Length of the measurement window.
    pub span: f64,
    /// Mean response time.
    pub mean_response: f64,
    /// Mean waiting time.
    pub mean_wait: f64,
    /// Mean service time.
    pub mean_service: f64,
    /// Mean numerical delay.
    pub mean_numerical_delay: f64,
    /// Mean topological delay.
    pub mean_topological_delay: f64,
    /// Mean bounded slowdown, max(1, response / max(service, τ))
    /// ([`crate::slowdown`]; τ is [`SimConfig::slowdown_bound`](crate::SimConfig::slowdown_bound)).
    pub mean_bounded_slowdown: f64,
    /// Granted node·time over N · span.
    pub utilization: f64,
    /// Requested node·time over N · span.
    pub useful_utilization: f64,
    /// Allocation attempts in the window.
    pub attempts: u64,
    /// Attempts made while enough nodes were free.
    pub valid_attempts: u64,
    /// Valid attempts that failed.
    pub misses: u64,
    /// `misses / valid_attempts` (0 without valid attempts).
    pub miss_rate: f64,
    /// Mean requested nodes per job.
    pub mean_requested: f64,
    /// Mean granted nodes per job.
    pub mean_granted: f64,
    /// Mean granted − requested nodes per job.
    pub mean_internal_fragmentation: f64,
    /// Time-average number of waiting jobs.
    pub mean_queue_length: f64,
    /// Time-average number of jobs waiting or running.
    pub mean_in_system: f64,
    /// Completed jobs per time unit.
    pub throughput: f64,
    /// Mean over measured jobs of the sum of hop distances over the
    /// grant's node pairs ([`crate::dispersal`]; 0 on machines without
    /// distances).
    pub mean_distance_sum: f64,
    /// Mean over measured jobs of the grant's mean pairwise hop distance.
    pub mean_pairwise_distance: f64,
    /// Mean over measured jobs of the grant's diameter.
    pub mean_diameter: f64,
    /// Mean over measured jobs of the nodes in the grant's bounding box.
    pub mean_span: f64,
    /// Mean over measured jobs of the grant's contiguous pieces.
    pub mean_pieces: f64,
    /// Mean over measured jobs of the racks (domains of the level above
    /// the leaves) the grant's GPUs lie in ([`crate::capacity`]; 0 on
    /// machines other than capacity machines).
    pub mean_racks_per_job: f64,
    /// Time-average GPUs free but stranded for the smallest waiting job
    /// ([`crate::capacity`]; 0 on machines other than capacity machines).
    pub mean_stranded_gpus: f64,
    /// Time-average free nodes that the machine's structure strands: on a
    /// Slurm machine, free nodes in partly busy base blocks or leaf
    /// switches ([`crate::slurm`]); on a pod, free chips in no placeable
    /// catalogue shape ([`crate::pod`]); 0 elsewhere. Sampled at
    /// [`SAMPLES`] times over the logged jobs.
    pub mean_stranded_nodes: f64,
    /// Mean segments per job that no single base block or leaf switch
    /// holds, on a Slurm machine whose strategy has a segment size.
    pub mean_split_segments: f64,
    /// Share of jobs placed at the lowest level of a Slurm machine that
    /// their size allows.
    pub lowest_level_share: f64,
    /// Time-average chips of the largest catalogue slice a pod could still
    /// place.
    pub mean_largest_placeable: f64,
    /// Runs of measured jobs that the scheduler ended by preemption
    /// ([`Scheduler::take_preemptions`](partalloc_schedulers::Scheduler::take_preemptions)):
    /// cancelled jobs and every run of a requeued job but its last (0 for
    /// a policy that never preempts, and then left out of serialized
    /// results).
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_zero"))]
    pub preempted: u64,
    /// Time-average share of a GPU-sharing cluster's GPUs allocated
    /// ([`crate::gpushare`]).
    pub mean_gpu_allocation: f64,
    /// Time-average GPUs of a GPU-sharing cluster fragmented by FGD's
    /// measure against its typical pods.
    pub mean_frag_gpus: f64,
    /// Time-average fragmented share of a GPU-sharing cluster's idle GPUs.
    pub mean_frag_ratio: f64,
    /// The measures the run took beyond the basic quantities
    /// ([`crate::measure`]): a quantity of a measure not in the set was not
    /// measured and reads 0.
    pub measured: MeasureSet,
}

#[cfg(feature = "serde")]
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Results {
    /// Adds the `slurm` and `pod` measures from the grants `log` kept.
    pub(crate) fn add_logged(&mut self, topology: &Topology, taken: MeasureSet, log: &GrantLog) {
        if taken.contains(Measure::Slurm)
            && let Some(m) = crate::slurm::slurm_log_measures(topology, log, log.segment(), SAMPLES)
        {
            self.mean_stranded_nodes = m.mean_stranded_nodes;
            self.mean_racks_per_job = m.mean_domains;
            self.mean_split_segments = m.mean_split_segments;
            self.lowest_level_share = m.lowest_level_share;
        }
        if taken.contains(Measure::Pod)
            && let Some(m) = crate::pod::pod_log_measures(topology, log, SAMPLES)
        {
            self.mean_stranded_nodes = m.mean_stranded_chips;
            self.mean_largest_placeable = m.mean_largest_placeable;
        }
    }

    /// Adds the `frag` measure's time averages.
    pub(crate) fn add_frag(&mut self, m: crate::gpushare::FragMeasures) {
        self.mean_gpu_allocation = m.mean_gpu_allocation;
        self.mean_frag_gpus = m.mean_frag_gpus;
        self.mean_frag_ratio = m.mean_frag_ratio;
    }

    /// [`fields`](Self::fields) as a front end reports them: `None` for a
    /// quantity the run did not measure (its measure was not taken), so it
    /// prints as null rather than as a 0 nobody measured.
    ///
    /// ```
    /// use partalloc_simkit::{MeasureSet, Results};
    /// let r = Results { completed: 2, measured: MeasureSet::NONE, ..Results::default() };
    /// let f = r.reported_fields();
    /// assert!(f.iter().any(|(n, v)| *n == "completed" && v.is_some()));
    /// assert!(f.iter().any(|(n, v)| *n == "mean_pairwise_distance" && v.is_none()));
    /// ```
    #[must_use]
    pub fn reported_fields(&self) -> Vec<(&'static str, Option<ResultValue>)> {
        self.fields()
            .into_iter()
            .map(|(name, v)| (name, self.was_measured(name).then_some(v)))
            .collect()
    }

    /// Whether the quantity `name` (a [`fields`](Self::fields) name) was
    /// measured by this run: the basic quantities always, the others when
    /// their measure was taken ([`crate::measure`]).
    #[must_use]
    pub fn was_measured(&self, name: &str) -> bool {
        match crate::measure::measure_of(name) {
            None => true,
            Some(ms) => ms.iter().any(|m| self.measured.contains(*m)),
        }
    }
}

/// One value of [`Results`]: a count or a real number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ResultValue {
    /// A count (jobs, attempts).
    Count(u64),
    /// A time, a mean or a share.
    Real(f64),
}

impl Results {
    /// Every field by name, in declaration order (the order serde writes
    /// them): the one list a front end without serde, such as the Python
    /// package, reads the results by.
    ///
    /// ```
    /// use partalloc_simkit::report::{ResultValue, Results};
    /// let r = Results { completed: 3, mean_wait: 0.5, ..Results::default() };
    /// let f = r.fields();
    /// assert_eq!(f[0], ("completed", ResultValue::Count(3)));
    /// assert!(f.contains(&("mean_wait", ResultValue::Real(0.5))));
    /// ```
    #[must_use]
    pub fn fields(&self) -> [(&'static str, ResultValue); 35] {
        use ResultValue::{Count, Real};
        [
            ("completed", Count(self.completed)),
            ("span", Real(self.span)),
            ("mean_response", Real(self.mean_response)),
            ("mean_wait", Real(self.mean_wait)),
            ("mean_service", Real(self.mean_service)),
            ("mean_numerical_delay", Real(self.mean_numerical_delay)),
            ("mean_topological_delay", Real(self.mean_topological_delay)),
            ("mean_bounded_slowdown", Real(self.mean_bounded_slowdown)),
            ("utilization", Real(self.utilization)),
            ("useful_utilization", Real(self.useful_utilization)),
            ("attempts", Count(self.attempts)),
            ("valid_attempts", Count(self.valid_attempts)),
            ("misses", Count(self.misses)),
            ("miss_rate", Real(self.miss_rate)),
            ("mean_requested", Real(self.mean_requested)),
            ("mean_granted", Real(self.mean_granted)),
            (
                "mean_internal_fragmentation",
                Real(self.mean_internal_fragmentation),
            ),
            ("mean_queue_length", Real(self.mean_queue_length)),
            ("mean_in_system", Real(self.mean_in_system)),
            ("throughput", Real(self.throughput)),
            ("mean_distance_sum", Real(self.mean_distance_sum)),
            ("mean_pairwise_distance", Real(self.mean_pairwise_distance)),
            ("mean_diameter", Real(self.mean_diameter)),
            ("mean_span", Real(self.mean_span)),
            ("mean_pieces", Real(self.mean_pieces)),
            ("mean_racks_per_job", Real(self.mean_racks_per_job)),
            ("mean_stranded_gpus", Real(self.mean_stranded_gpus)),
            ("mean_stranded_nodes", Real(self.mean_stranded_nodes)),
            ("mean_split_segments", Real(self.mean_split_segments)),
            ("lowest_level_share", Real(self.lowest_level_share)),
            ("mean_largest_placeable", Real(self.mean_largest_placeable)),
            ("preempted", Count(self.preempted)),
            ("mean_gpu_allocation", Real(self.mean_gpu_allocation)),
            ("mean_frag_gpus", Real(self.mean_frag_gpus)),
            ("mean_frag_ratio", Real(self.mean_frag_ratio)),
        ]
    }
}

/// Time spent in the allocator (not deterministic): a sampled estimate
/// (see the [module docs](crate::report)), a full measurement only for slow
/// calls.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SearchTime {
    /// Whether it was measured.
    pub measured: bool,
    /// Seconds in allocate + release per measured job.
    pub mean_seconds_per_job: f64,
}

/// One job that ran: the one record every driver of the engine keeps (a
/// simulation's `--jobs-csv` and report, a [`Stepper`](crate::Stepper)'s
/// completions).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct JobRecord {
    /// Job id.
    pub id: u64,
    /// Arrival time.
    pub arrival: f64,
    /// Start time.
    pub start: f64,
    /// End time.
    pub end: f64,
    /// start − arrival.
    pub wait: f64,
    /// end − arrival.
    pub response: f64,
    /// The part of the wait that was numerical delay (too few free nodes
    /// while the job was first in line). 0 under a
    /// [`Stepper`](crate::Stepper), whose caller chooses every start, so no
    /// job is first in line.
    pub numerical_delay: f64,
    /// max(1, response / max(service, τ)) ([`crate::slowdown`]).
    pub bounded_slowdown: f64,
    /// Requested nodes.
    pub requested: u64,
    /// Granted nodes.
    pub granted: u64,
    /// The granted partition.
    pub partition: Partition,
    /// How far apart its nodes are (`None` on a machine without hop
    /// distances: see [`crate::dispersal`]).
    pub dispersal: Option<GrantDispersal>,
    /// The domains of each level its GPUs lie in (`None` on machines
    /// other than capacity machines: see [`crate::capacity`]).
    pub domains: Option<GrantDomains>,
    /// How many of its runs preemption ended: the runs before a requeue,
    /// and its last if it was cancelled (0 for a job never preempted, and
    /// then left out of serialized records). Its `start` is its last
    /// run's and its `wait` everything before it.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "is_zero_u32"))]
    pub preempted: u32,
}

#[cfg(feature = "serde")]
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

impl JobRecord {
    /// The record of `job`, run on `grant` from `start` to `end`, its
    /// bounded slowdown under `bound`: no numerical delay, dispersal,
    /// domains or preemption (a simulation fills those in when it measures
    /// them).
    #[must_use]
    pub fn new(job: &Job, grant: &Grant, start: f64, end: f64, bound: SlowdownBound) -> Self {
        Self {
            id: job.id,
            arrival: job.arrival,
            start,
            end,
            wait: start - job.arrival,
            response: end - job.arrival,
            numerical_delay: 0.0,
            bounded_slowdown: bounded_slowdown(job.arrival, start, end, bound),
            requested: grant.requested_nodes(),
            granted: grant.granted_nodes(),
            partition: grant.partition().clone(),
            dispersal: None,
            domains: None,
            preempted: 0,
        }
    }

    /// Bounded slowdown max(1, response / max(service, `bound`)) under
    /// another bound than the one it was recorded with (the definition of
    /// [`crate::slowdown`]).
    #[must_use]
    pub fn bounded_slowdown_under(&self, bound: SlowdownBound) -> f64 {
        bounded_slowdown(self.arrival, self.start, self.end, bound)
    }
}

/// The report of one run.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Report {
    /// The allocator's canonical name.
    pub allocator: String,
    /// The scheduler's canonical name.
    pub scheduler: String,
    /// The machine.
    pub topology: String,
    /// The deterministic statistics.
    pub results: Results,
    /// Time spent in the allocator.
    pub search_time: SearchTime,
    /// Per-job records, if requested.
    pub jobs: Vec<JobRecord>,
}

#[cfg(feature = "csv")]
/// Writing a report failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// The CSV writer failed (usually an I/O error of the destination).
    #[error("cannot write the job records: {0}")]
    Csv(#[from] csv::Error),
    /// The destination failed.
    #[error("cannot write the job records: {0}")]
    Io(#[from] std::io::Error),
}

#[cfg(feature = "csv")]
impl Report {
    /// Writes the per-job records as CSV with a header line.
    ///
    /// # Errors
    /// The destination fails.
    pub fn write_jobs_csv<W: std::io::Write>(&self, out: W) -> Result<(), ReportError> {
        self.write_jobs_csv_on(None, out)
    }

    /// As [`Report::write_jobs_csv`], with partitions printed as hostlists
    /// when `topology` is a Slurm machine ([`JobCsvWriter::on`]).
    ///
    /// # Errors
    /// The destination fails.
    pub fn write_jobs_csv_on<W: std::io::Write>(
        &self,
        topology: Option<&Topology>,
        out: W,
    ) -> Result<(), ReportError> {
        let mut w = JobCsvWriter::new(out)?;
        if let Some(t) = topology {
            w = w.on(t);
        }
        for j in &self.jobs {
            w.write(j)?;
        }
        w.finish()?;
        Ok(())
    }
}

/// Calls `f` with the busy nodes of `topology` at `samples` (at least 1)
/// evenly spaced times of the window in which `jobs` hold every running
/// job: from the first recorded completion (every warm-up job has ended
/// by then) to the last one. Returns the number of samples, or `None`
/// without records.
pub fn for_each_sampled_state(
    topology: &Topology,
    jobs: &[JobRecord],
    samples: usize,
    f: impl FnMut(&NodeSet),
) -> Option<usize> {
    crate::observe::sample_states(
        topology,
        jobs.iter().map(|j| (j.start, j.end, &j.partition)),
        jobs.iter().map(|j| j.end),
        samples,
        f,
    )
}

/// How a grant is printed for people: a hostlist expression of node names
/// on a Slurm machine (as Slurm's `NodeList`), the partition's own form
/// elsewhere. `nodes` is scratch space, reused between calls.
#[must_use]
pub fn partition_label(
    partition: &Partition,
    topology: &Topology,
    nodes: &mut Vec<NodeId>,
) -> String {
    let Some(m) = topology.as_slurm() else {
        return partition.to_string();
    };
    nodes.clear();
    match partition.for_each_node(topology, |n| nodes.push(n)) {
        Ok(()) => m.hostlist(nodes),
        // A partition that is not of this machine keeps its own form.
        Err(_) => partition.to_string(),
    }
}

/// Writes per-job records as CSV one row at a time, as a run hands them
/// out ([`Simulation::run_observed`](crate::Simulation::run_observed) with a record sink),
/// in the format of [`Report::write_jobs_csv`].
#[cfg(feature = "csv")]
#[derive(Debug)]
pub struct JobCsvWriter<W: std::io::Write> {
    w: csv::Writer<W>,
    /// On a Slurm machine: the machine and a reusable node buffer, so the
    /// partition column is the job's hostlist, as Slurm prints it.
    hostlists: Option<(Topology, Vec<NodeId>)>,
}

#[cfg(feature = "csv")]
impl<W: std::io::Write> JobCsvWriter<W> {
    /// Writes the header line.
    ///
    /// # Errors
    /// The destination fails.
    pub fn new(out: W) -> Result<Self, ReportError> {
        let mut w = csv::Writer::from_writer(out);
        w.write_record([
            "id",
            "arrival",
            "start",
            "end",
            "wait",
            "response",
            "numerical_delay",
            "topological_delay",
            "requested",
            "granted",
            "partition",
            "distance_sum",
            "mean_distance",
            "diameter",
            "span",
            "pieces",
            "bounded_slowdown",
            "domains_per_level",
            "holding_level",
        ])?;
        Ok(Self { w, hostlists: None })
    }

    /// Writes the partition column as a hostlist expression of node names
    /// (`rack[0-1]-n[00-17]`, as Slurm's `NodeList`) when `topology` is a
    /// Slurm block or tree machine; other machines keep the partition's
    /// own printed form.
    #[must_use]
    pub fn on(mut self, topology: &Topology) -> Self {
        self.hostlists = topology.as_slurm().map(|_| (topology.clone(), Vec::new()));
        self
    }

    /// Writes one record.
    ///
    /// # Errors
    /// The destination fails.
    pub fn write(&mut self, j: &JobRecord) -> Result<(), ReportError> {
        let partition = match &mut self.hostlists {
            Some((topology, nodes)) => partition_label(&j.partition, topology, nodes),
            None => j.partition.to_string(),
        };
        let d = j.dispersal.as_ref();
        let cell = |f: &dyn Fn(&GrantDispersal) -> String| d.map_or_else(String::new, f);
        self.w.write_record([
            j.id.to_string(),
            j.arrival.to_string(),
            j.start.to_string(),
            j.end.to_string(),
            j.wait.to_string(),
            j.response.to_string(),
            j.numerical_delay.to_string(),
            (j.wait - j.numerical_delay).to_string(),
            j.requested.to_string(),
            j.granted.to_string(),
            partition,
            cell(&|d| d.distance_sum.to_string()),
            cell(&|d| d.mean_distance().to_string()),
            cell(&|d| d.diameter.to_string()),
            cell(&|d| d.span_nodes.to_string()),
            cell(&|d| d.pieces.to_string()),
            j.bounded_slowdown.to_string(),
            j.domains
                .as_ref()
                .map_or_else(String::new, GrantDomains::per_level_text),
            j.domains.as_ref().map_or_else(String::new, |d| {
                d.holding_level()
                    .map_or_else(|| "-1".to_owned(), |l| l.to_string())
            }),
        ])?;
        Ok(())
    }

    /// Flushes and returns the destination.
    ///
    /// # Errors
    /// The destination fails.
    pub fn finish(self) -> Result<W, ReportError> {
        self.w
            .into_inner()
            .map_err(|e| ReportError::Io(e.into_error()))
    }
}

impl fmt::Display for Results {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "completed jobs          {}", self.completed)?;
        writeln!(f, "mean response           {:.6}", self.mean_response)?;
        writeln!(f, "mean wait               {:.6}", self.mean_wait)?;
        writeln!(
            f,
            "  numerical delay       {:.6}",
            self.mean_numerical_delay
        )?;
        writeln!(
            f,
            "  topological delay     {:.6}",
            self.mean_topological_delay
        )?;
        writeln!(f, "mean service            {:.6}", self.mean_service)?;
        writeln!(
            f,
            "mean bounded slowdown   {:.6}",
            self.mean_bounded_slowdown
        )?;
        writeln!(f, "utilization             {:.6}", self.utilization)?;
        writeln!(f, "useful utilization      {:.6}", self.useful_utilization)?;
        writeln!(
            f,
            "allocation miss rate    {:.6} ({} of {} valid attempts)",
            self.miss_rate, self.misses, self.valid_attempts
        )?;
        writeln!(
            f,
            "internal fragmentation  {:.6}",
            self.mean_internal_fragmentation
        )?;
        writeln!(f, "mean queue length       {:.6}", self.mean_queue_length)?;
        write!(f, "throughput              {:.6}", self.throughput)
    }
}

#[cfg(test)]
mod sampled_state_tests {
    use partalloc_allocators::registry::ALLOCATORS;
    use partalloc_schedulers::registry::POLICIES;
    use partalloc_topology::{NodeSet, Topology};
    use partalloc_workload::{
        Arrivals, ChaCha8Rng, DemandLaw, Dependence, SeedableRng, ShapeLaw, WorkloadSpec,
    };

    use super::for_each_sampled_state;
    use crate::{SimConfig, Simulation};

    /// The sweep gives, at every sample, the nodes of the jobs with
    /// start <= t < end, as a pass over every job finds them.
    #[test]
    fn the_sweep_finds_the_jobs_running_at_each_sample() {
        for strategy in ["pod-best-fit", "pod-reconfigurable"] {
            let machine = "pod:tpu-v4:8x8x8";
            let topology: Topology = machine.parse().unwrap();
            let w = WorkloadSpec {
                arrivals: Arrivals::Load(0.8),
                shapes: ShapeLaw::Catalogue { weights: None },
                demand: DemandLaw::Exponential { mean: 1.0 },
                dependence: Dependence::Dependent,
                allow_saturation: false,
            }
            .build(&topology)
            .unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            let config = SimConfig {
                record_jobs: true,
                warmup: 50,
                ..SimConfig::default()
            };
            let jobs = w.jobs(&mut rng).take(400);
            let report = Simulation::from_specs(
                topology.clone(),
                &ALLOCATORS.spec(strategy).unwrap(),
                &POLICIES.spec("fcfs").unwrap(),
                jobs,
                config,
            )
            .unwrap()
            .run()
            .unwrap();
            let lo = report
                .jobs
                .iter()
                .map(|j| j.end)
                .fold(f64::INFINITY, f64::min);
            let hi = report.jobs.iter().map(|j| j.end).fold(0.0, f64::max);
            let samples = 37;
            let mut seen = Vec::new();
            let n =
                for_each_sampled_state(&topology, &report.jobs, samples, |b| seen.push(b.clone()));
            assert_eq!(n, Some(samples));
            for (i, busy) in seen.iter().enumerate() {
                let t = lo + (hi - lo) * (i as f64 + 0.5) / samples as f64;
                let mut want = NodeSet::new(topology.num_nodes());
                for j in report.jobs.iter().filter(|j| j.start <= t && t < j.end) {
                    j.partition
                        .for_each_node(&topology, |c| {
                            want.insert(c).unwrap();
                        })
                        .unwrap();
                }
                assert_eq!(busy, &want, "sample {i}");
            }
            assert!(seen.iter().any(|b| b.count() > 0));
        }
    }
}

#[cfg(test)]
mod field_tests {
    use super::{ResultValue, Results};

    /// The list of fields is the struct: every field, in order, with its
    /// own value (read back from the derived `Debug`, which lists them
    /// all), so a field added to `Results` and not to the list fails here.
    #[test]
    fn the_field_list_is_every_field_of_results_in_order() {
        let r = Results {
            completed: 1,
            span: 2.5,
            mean_response: 3.5,
            mean_wait: 4.5,
            mean_service: 5.5,
            mean_numerical_delay: 6.5,
            mean_topological_delay: 7.5,
            mean_bounded_slowdown: 7.75,
            utilization: 8.5,
            useful_utilization: 9.5,
            attempts: 10,
            valid_attempts: 11,
            misses: 12,
            miss_rate: 13.5,
            mean_requested: 14.5,
            mean_granted: 15.5,
            mean_internal_fragmentation: 16.5,
            mean_queue_length: 17.5,
            mean_in_system: 18.5,
            throughput: 19.5,
            mean_distance_sum: 20.5,
            mean_pairwise_distance: 21.5,
            mean_diameter: 22.5,
            mean_span: 23.5,
            mean_pieces: 24.5,
            mean_racks_per_job: 25.5,
            mean_stranded_gpus: 26.5,
            mean_stranded_nodes: 27.5,
            mean_split_segments: 28.5,
            lowest_level_share: 0.25,
            mean_largest_placeable: 29.5,
            preempted: 30,
            mean_gpu_allocation: 30.5,
            mean_frag_gpus: 31.5,
            mean_frag_ratio: 32.5,
            measured: super::MeasureSet::NONE,
        };
        let listed: Vec<String> = r
            .fields()
            .iter()
            .map(|(name, v)| match v {
                ResultValue::Count(n) => format!("{name}: {n}"),
                ResultValue::Real(x) => format!("{name}: {x:?}"),
            })
            .collect();
        // The measure set closes the struct; it is not a quantity.
        assert_eq!(
            format!("{r:?}"),
            format!(
                "Results {{ {}, measured: {:?} }}",
                listed.join(", "),
                r.measured
            )
        );
    }
}
