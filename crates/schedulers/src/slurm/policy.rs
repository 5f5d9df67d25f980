//! The policy: slurmctld's queue as a [`Scheduler`].
//!
//! Three periodic passes run as timed events of the simulation (the
//! policy asks for them through [`Scheduler::next_wakeup`]), all counted
//! from time 0 (slurmctld's start):
//! - the priority pass every `PriorityCalcPeriod` (decay, usage of running
//!   jobs, fair share, every pending job's priority:
//!   `_decay_thread`, `src/plugins/priority/multifactor/priority_multifactor.c`;
//!   it runs no scheduler itself);
//! - the main scheduler at every job end, once its nodes have completed
//!   ([`SlurmPolicy::with_completing`]; the first `default_queue_depth`
//!   plus one jobs), after a submission once
//!   `batch_sched_delay` has passed since the last such pass
//!   (`_slurmctld_background`, `src/slurmctld/controller.c`), and every
//!   `sched_interval` (the whole queue) (`_schedule`,
//!   `src/slurmctld/job_scheduler.c`);
//! - backfill `bf_interval` after its last cycle, or once something
//!   changed after that (`backfill_agent`, `_attempt_backfill`,
//!   `src/plugins/sched/backfill/backfill.c`).
//!
//! A pass that would see exactly what the previous pass of its kind saw
//! (no submission, job end or priority change since) is skipped: it would
//! decide the same.
//!
//! Queue order (`sort_job_queue2`, `job_scheduler.c`): one record per
//! job and partition it was submitted to, each with the job's priority in
//! that partition; partition `PriorityTier` (higher first), priority
//! (higher first), submit time, job id. A partition's jobs run on its
//! nodes only. Main scheduler: a job that does not fit marks its partition
//! failed (reason `Resources`) and takes the partition's nodes from the
//! pass; the later jobs of a failed partition get `Priority`; a job of
//! another partition left with fewer of its nodes than it asks for fails
//! its partition too (`Resources`, "reserved for jobs in higher priority
//! partitions"). A job that starts in one partition leaves its other
//! records. A job below `bf_min_prio_reserve` does not fail its
//! partition. A job held by a limit gets the limit's reason and blocks
//! nothing. Backfill: a plan node by node (on partitions over every node,
//! without preemption; else of node counts) from the running jobs' time
//! limits and the reservations of the jobs tested before (rounded to
//! `bf_resolution`); each job (at most `bf_max_job_test`,
//! `bf_max_job_user` per user, `bf_max_job_part` per partition) gets the
//! will-run test (running jobs removed in 30-s groups, the select
//! plugin's best-fit consecutive nodes); it starts now if
//! that finds room now for its whole time limit, otherwise gets that
//! start (squeue's planned start) and, within `bf_window` and at or above
//! `bf_min_prio_reserve`, a reservation of the nodes chosen.
//! A started job that outruns its time limit is killed at the background
//! loop's first time-limit check after it, every 30 s (its run is cut
//! there).
//!
//! Preemption ([`SlurmPolicy::with_preemption`], off by default): a job
//! that does not fit in the main scheduler takes the running jobs it may
//! preempt (preempt/qos: a QOS its QOS lists; preempt/partition_prio: a
//! partition of lower tier; not `PreemptMode=OFF`, past
//! `PreemptExemptTime`) in the plugin's order until it fits
//! (`src/interfaces/preempt.c`); the driver ends them
//! ([`Scheduler::take_preemptions`], as the simulation engine does); a
//! requeued one waits `requeue_delay` + 1 s. It is on whenever slurm.conf
//! names a `PreemptType` other than preempt/none.

use std::collections::{BTreeMap, HashMap};

use partalloc_allocators::{AllocError, Allocator};
use partalloc_topology::nodeset::{set_word_bit, word_bit};
use partalloc_workload::Job;

use super::assoc::{AssocTree, QosTable};
use super::conf::{ResetPeriod, SchedConf};
use super::fairshare::{FairShare, SshareRow};
use super::jobs::{JobTable, Resolved, Users};
use super::limits::{Claim, Counters, Reason};
use super::priority::{Factors, JobSize, SprioRow, job_size_factor, priority, weighted};
use crate::profile::Profile;
use crate::{RequestMapping, ScheduleError, Scheduler, Started, check_job};

/// Everything the policy reads: slurm.conf, associations, QOS and the
/// jobs' attributes.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Inputs {
    /// slurm.conf.
    pub conf: SchedConf,
    /// The association tree.
    pub tree: AssocTree,
    /// The QOS.
    pub qos: QosTable,
    /// The jobs' attributes.
    pub jobs: JobTable,
}

impl Inputs {
    /// Bundles the four inputs.
    #[must_use]
    pub fn new(conf: SchedConf, tree: AssocTree, qos: QosTable, jobs: JobTable) -> Self {
        Self {
            conf,
            tree,
            qos,
            jobs,
        }
    }
}

/// Which scheduler started a job (sacct's `SchedMain` / `SchedBackfill`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StartedBy {
    /// The main scheduler.
    Main,
    /// Backfill.
    Backfill,
}

/// One line of squeue for a pending job.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SqueueRow {
    /// Job id.
    pub job: u64,
    /// `PENDING` or `RUNNING`.
    pub state: &'static str,
    /// Pending reason (`None` for a running job).
    pub reason: Reason,
    /// Backfill's planned start (pending) or the start (running).
    pub start: Option<f64>,
    /// Priority.
    pub priority: u32,
}

#[derive(Debug, Clone)]
struct Pending {
    job: Job,
    r: Resolved,
    /// Every partition it was submitted to (`r.partition` first).
    parts: Vec<usize>,
    /// Its priority and factors in each of `parts` when it has several
    /// (empty otherwise).
    per_part: Vec<(u32, Factors)>,
    cpus: u64,
    accrue: f64,
    tier: u32,
    prio: u32,
    factors: Factors,
    reason: Reason,
    planned: Option<f64>,
}

#[derive(Debug, Clone)]
struct Running {
    claim: Claim,
    assoc: usize,
    usage_factor: f64,
    billing: f64,
    start: f64,
    limit_end: f64,
    granted: u64,
    /// Its nodes, when some partition has only some of the machine's
    /// (empty otherwise).
    nodes: Vec<u32>,
    prio: u32,
    /// The pending record to requeue it from.
    pending: Pending,
}

/// How often slurmctld's background loop looks for jobs past their time
/// limit (`PERIODIC_TIMEOUT`, `src/slurmctld/slurmctld.h`; `job_time_limit`
/// in `src/slurmctld/job_mgr.c`, called from `_slurmctld_background` in
/// `src/slurmctld/controller.c`): a fixed 30 s, not an option.
const PERIODIC_TIMEOUT: f64 = 30.0;

/// Seconds in a year: the plan's length for a job without a time limit
/// (`YEAR_SECONDS` in backfill.c).
const YEAR: f64 = 365.0 * 86_400.0;

/// Slurm's scheduling half (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct SlurmPolicy {
    name: String,
    mapping: RequestMapping,
    conf: SchedConf,
    tree: AssocTree,
    qos: QosTable,
    jobs: JobTable,
    users: Users,
    fs: FairShare,
    counters: Counters,
    pending: Vec<Pending>,
    sorted: bool,
    running: BTreeMap<u64, Running>,
    last_calc: Option<f64>,
    next_calc: f64,
    next_bf: f64,
    next_sched: f64,
    dirty_main: bool,
    /// The queue changed since the last main pass without asking for one
    /// (new priorities): the next periodic pass runs.
    changed_main: bool,
    dirty_bf: bool,
    unexamined: bool,
    max_pjf: u32,
    started_by: HashMap<u64, (f64, StartedBy)>,
    plan: Profile,
    part_qos: Vec<Option<usize>>,
    epoch: f64,
    bf_phase: f64,
    /// The phase of the background loop's time-limit checks (modulo
    /// [`PERIODIC_TIMEOUT`]).
    timelimit_phase: f64,
    preemption: bool,
    preempted: Vec<(u64, super::conf::PreemptMode)>,
    requeue: Vec<u64>,
    /// Requeued jobs waiting for their begin time.
    held: Vec<(f64, Pending)>,
    /// A submission has queued a main pass (`queue_job_scheduler`).
    queued_main: bool,
    /// When the background loop last ran the main scheduler.
    last_queued_pass: f64,
    /// The time of the last `schedule` call.
    now_seen: f64,
    /// How long an ended job's nodes stay completing.
    completing: f64,
    /// Backfill plans with node counts only (`plan=counts`).
    count_plan: bool,
    /// Nodes of ended jobs still completing: until when, how many.
    completing_nodes: Vec<(f64, u64)>,
    /// The nodes themselves, when partitions divide the machine (until
    /// when, which).
    completing_ids: Vec<(f64, Vec<u32>)>,
    /// Preempted jobs the driver is ending now (their nodes are needed at
    /// once: they do not stay completing).
    victims: Vec<u64>,
    /// The partitions on part of the nodes, if any: which nodes each
    /// partition has, and the nodes grouped by the partitions they
    /// belong to.
    split: Option<Split>,
    /// Jobs refused at submission, with the limit.
    refused: Vec<(u64, Reason)>,
    /// The last backfill cycle's node plan, its buffers reused by the
    /// next.
    plan_buf: Option<NodePlan>,
}

/// The machine's nodes as the partitions divide them (when some
/// partition has only some of them).
#[derive(Debug, Clone)]
struct Split {
    /// Per partition, per node: whether the node is the partition's.
    member: Vec<Vec<bool>>,
    /// Per node: its class, the nodes of the same partitions.
    class_of: Vec<usize>,
    /// Per partition: the classes it holds, by lowest node.
    part_classes: Vec<Vec<usize>>,
    /// Per class: backfill's plan of its free nodes.
    plans: Vec<Profile>,
}

impl Split {
    /// The division of `nodes` nodes by `conf`'s partitions; `None` when
    /// every partition has every node.
    fn new(conf: &SchedConf) -> Option<Self> {
        if conf.partitions.iter().all(|p| p.node_ids.is_none()) {
            return None;
        }
        let n = usize::try_from(conf.nodes).unwrap_or(0);
        let member: Vec<Vec<bool>> = conf
            .partitions
            .iter()
            .map(|p| match &p.node_ids {
                None => vec![true; n],
                Some(ids) => {
                    let mut m = vec![false; n];
                    for &k in ids {
                        if let Some(x) = m.get_mut(k as usize) {
                            *x = true;
                        }
                    }
                    m
                }
            })
            .collect();
        let mut signatures: Vec<Vec<bool>> = Vec::new();
        let mut class_of = Vec::with_capacity(n);
        for k in 0..n {
            let sig: Vec<bool> = member.iter().map(|m| m[k]).collect();
            let c = match signatures.iter().position(|x| *x == sig) {
                Some(c) => c,
                None => {
                    signatures.push(sig);
                    signatures.len() - 1
                }
            };
            class_of.push(c);
        }
        let part_classes = (0..member.len())
            .map(|p| {
                (0..signatures.len())
                    .filter(|&c| signatures[c][p])
                    .collect()
            })
            .collect();
        Some(Self {
            member,
            class_of,
            part_classes,
            plans: vec![Profile::default(); signatures.len()],
        })
    }
}

/// Per node, whether the allocator has it free now.
fn free_mask(alloc: &dyn Allocator) -> Vec<bool> {
    let busy = alloc.busy_nodes();
    let faulty = alloc.faulty_nodes();
    (0..alloc.total_nodes())
        .map(|k| {
            let k = k as partalloc_topology::NodeId;
            !busy.contains(k) && !faulty.contains(k)
        })
        .collect()
}

impl SlurmPolicy {
    /// The policy for `inputs` on a machine of `nodes` nodes, named
    /// `name` (its spec).
    ///
    /// # Errors
    /// slurm.conf's nodes differ from the machine's, or a partition's QOS
    /// is unknown.
    pub fn new(
        inputs: Inputs,
        nodes: u64,
        name: String,
        mapping: RequestMapping,
    ) -> Result<Self, super::InputError> {
        use super::error::{InputError, InputErrorKind};
        let Inputs {
            conf,
            tree,
            qos,
            jobs,
        } = inputs;
        if conf.nodes != nodes {
            return Err(InputError::at(
                &conf.source,
                0,
                InputErrorKind::Machine(format!(
                    "the NodeName lines have {} nodes, the machine simulated {nodes}; make them agree",
                    conf.nodes
                )),
            ));
        }
        let mut part_qos = Vec::new();
        for p in &conf.partitions {
            part_qos.push(match &p.qos {
                None => None,
                Some(n) => Some(qos.find(n).ok_or_else(|| {
                    InputError::at(
                        &conf.source,
                        p.line,
                        InputErrorKind::Unknown {
                            what: "QOS",
                            name: partalloc_topology::echo(n),
                            hint: "the QOS dump (sacctmgr show qos -P)",
                        },
                    )
                })?),
            });
        }
        let fs = FairShare::new(&tree, conf.priority.algo, conf.priority.decay_half_life)
            .with_depth_oblivious(conf.priority.depth_oblivious);
        let counters = Counters::new(&tree, &qos);
        let max_pjf = conf
            .partitions
            .iter()
            .map(|p| p.priority_job_factor)
            .max()
            .unwrap_or(0);
        let sched = &conf.sched;
        let (next_bf, next_sched) = (sched.bf_interval as f64, sched.sched_interval as f64);
        let preemption = conf.preempt.kind != super::conf::PreemptType::None;
        let split = Split::new(&conf);
        Ok(Self {
            name,
            mapping,
            conf,
            tree,
            qos,
            jobs,
            users: Users::default(),
            fs,
            counters,
            pending: Vec::new(),
            sorted: true,
            running: BTreeMap::new(),
            last_calc: None,
            next_calc: 0.0,
            next_bf,
            next_sched,
            dirty_main: false,
            changed_main: false,
            dirty_bf: false,
            unexamined: false,
            max_pjf,
            started_by: HashMap::new(),
            plan: Profile::default(),
            plan_buf: None,
            part_qos,
            epoch: 0.0,
            bf_phase: 0.0,
            timelimit_phase: 0.0,
            preemption,
            preempted: Vec::new(),
            requeue: Vec::new(),
            held: Vec::new(),
            queued_main: false,
            last_queued_pass: f64::NEG_INFINITY,
            now_seen: f64::NEG_INFINITY,
            completing: 0.0,
            count_plan: false,
            completing_nodes: Vec::new(),
            completing_ids: Vec::new(),
            victims: Vec::new(),
            split,
            refused: Vec::new(),
        })
    }

    /// Job `id`'s account, QOS and partition names as the policy resolves
    /// them (the defaults for a job the table does not list).
    ///
    /// # Errors
    /// A name the configuration does not define.
    pub fn labels(
        &mut self,
        id: u64,
        estimate: Option<f64>,
    ) -> Result<(String, String, String), super::InputError> {
        let r = self.jobs.resolve(
            id,
            estimate,
            &self.conf,
            &self.tree,
            &self.qos,
            &mut self.users,
        )?;
        Ok((
            self.tree.get(r.assoc).account.clone(),
            self.qos.get(r.qos).name.clone(),
            self.conf.partitions[r.partition].name.clone(),
        ))
    }

    /// Runs one priority pass at `t` now (decay, running jobs' usage,
    /// fair share, every pending job's priority), whatever the period: for
    /// benchmarks and drivers that time passes themselves.
    pub fn run_priority_pass(&mut self, t: f64) {
        self.priority_pass(t);
    }

    /// Runs one backfill pass at `now`, whatever the period and whether
    /// anything changed since the last one.
    ///
    /// # Errors
    /// As [`Scheduler::schedule`].
    pub fn run_backfill(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        self.backfill_pass(now, alloc, started)
    }

    /// Tells the policy that nodes came back into service or left it
    /// outside its knowledge (a drain or resume): its next passes run
    /// again even if no job arrived or ended.
    pub fn nodes_changed(&mut self) {
        self.dirty_main = true;
        self.dirty_bf = true;
    }

    /// Runs the priority passes due by `now` (the schedule call does this
    /// first): to read sprio and sshare as they stand at `now` without
    /// scheduling.
    pub fn catch_up(&mut self, now: f64) {
        let calc = self.conf.priority.calc_period as f64;
        while self.next_calc <= now {
            let t = self.next_calc;
            self.priority_pass(t);
            self.next_calc = t + calc;
        }
    }

    /// Sets the phase of the periodic passes: the first priority pass at
    /// `first_pass` (later ones every `PriorityCalcPeriod`; a pass is taken
    /// to have run one period before it), and `epoch` seconds between the
    /// run's time 0 and the Unix epoch's last multiple of `bf_resolution`
    /// (backfill rounds absolute times). A replay of a real controller
    /// takes both from its log; a simulation keeps 0 and 0.
    #[must_use]
    pub fn with_phases(mut self, first_pass: f64, epoch: f64) -> Self {
        let period = self.conf.priority.calc_period as f64;
        // The pass before: the controller ran it before time 0.
        self.last_calc = None;
        self.priority_pass(first_pass - period);
        self.next_calc = first_pass;
        self.epoch = epoch;
        self
    }

    /// Sets when the first backfill cycle may run: at `phase` modulo
    /// `bf_interval` (0 by default); each later one `bf_interval` after
    /// the one before at the earliest. A replay of a real controller takes
    /// it from a job backfill started.
    #[must_use]
    pub fn with_backfill_phase(mut self, phase: f64) -> Self {
        let bf = self.conf.sched.bf_interval as f64;
        self.bf_phase = phase.rem_euclid(bf);
        self.next_bf = self.bf_phase;
        self
    }

    /// Sets when the background loop checks time limits: at `phase`
    /// modulo 30 s, slurmctld's `PERIODIC_TIMEOUT` (0 by default, the controller's start).
    /// A replay of a real controller takes it from a job that ran out of
    /// time.
    #[must_use]
    pub fn with_timelimit_phase(mut self, phase: f64) -> Self {
        self.timelimit_phase = phase.rem_euclid(PERIODIC_TIMEOUT);
        self
    }

    /// When a job started at `start` with a time limit of `limit` seconds
    /// is killed if it runs that long: at the first of the background
    /// loop's checks, every [`PERIODIC_TIMEOUT`], at or after
    /// `start + limit` (`job_time_limit` times out a job whose end time
    /// has come; `OverTimeLimit` 0).
    fn killed_at(&self, start: f64, limit: f64) -> f64 {
        let end = start + limit;
        let k = ((end - self.timelimit_phase) / PERIODIC_TIMEOUT).ceil();
        (self.timelimit_phase + k * PERIODIC_TIMEOUT).max(end)
    }

    /// Backfill plans with counts of free nodes over the running jobs'
    /// exact ends, never node by node: much faster on large machines, and
    /// further from slurmctld's schedules (docs/slurm-scheduling.md).
    #[must_use]
    pub fn with_count_plan(mut self, counts: bool) -> Self {
        self.count_plan = counts;
        self
    }

    /// Keeps an ended job's nodes completing for `seconds` (0 by default)
    /// before they are free again; the main scheduler the job's end runs
    /// (`_slurm_rpc_epilog_complete` in `src/slurmctld/proc_req.c`), and
    /// backfill's next cycle, see them then. It stands for the time
    /// slurmd takes to report the job's end and its epilog: a latency of
    /// the machine, not an option of slurm.conf. A negative or non-finite
    /// value counts as 0.
    #[must_use]
    pub fn with_completing(mut self, seconds: f64) -> Self {
        self.completing = if seconds.is_finite() {
            seconds.max(0.0)
        } else {
            0.0
        };
        self
    }

    /// Lets the policy preempt or not (on by default when slurm.conf names
    /// a `PreemptType` other than preempt/none): its driver must end the
    /// jobs [`take_preempted`](Self::take_preempted) (or
    /// [`Scheduler::take_preemptions`]) names at once, as the simulation
    /// engine does.
    #[must_use]
    pub fn with_preemption(mut self, on: bool) -> Self {
        self.preemption = on;
        self
    }

    /// The jobs preempted since the last call, each with what becomes of
    /// it (cancelled, or requeued: the policy queues it again when it is
    /// reported ended through [`Scheduler::departed`]). The driver ends
    /// them now (releases their grants, calls `departed`) and calls
    /// `schedule` again at the same time.
    pub fn take_preempted(&mut self) -> Vec<(u64, super::conf::PreemptMode)> {
        let out = core::mem::take(&mut self.preempted);
        self.victims.extend(out.iter().map(|v| v.0));
        for &(id, mode) in &out {
            if mode == super::conf::PreemptMode::Requeue {
                self.requeue.push(id);
            }
        }
        out
    }

    /// The running jobs pending job `i` may preempt now, in Slurm's order
    /// (`slurm_find_preemptable_jobs`, `src/interfaces/preempt.c`): the
    /// preempt plugin allows it, its `PreemptMode` is not OFF, and its
    /// `PreemptExemptTime` has passed; sorted by the plugin's preemption
    /// priority (the QOS priority or partition tier in the high 16 bits,
    /// the node count in the low ones: `preempt_p_get_prio`), lowest first,
    /// then by job id.
    fn preemptable(
        &self,
        i: usize,
        part: usize,
        now: f64,
    ) -> Vec<(u64, super::conf::PreemptMode, u64)> {
        use super::conf::{PreemptMode, PreemptType};
        let pc = self.conf.preempt;
        let job = &self.pending[i];
        let my_part = &self.conf.partitions[part];
        let my_qos = self.qos.get(job.r.qos);
        let mut out: Vec<(u32, u64, PreemptMode, u64)> = Vec::new();
        for (&id, r) in &self.running {
            let q = r.pending.r.qos;
            let part = &self.conf.partitions[r.pending.r.partition];
            let (allowed, mode, prio_high) = match pc.kind {
                PreemptType::Qos => (
                    my_qos.preempt.contains(&q),
                    self.qos.get(q).preempt_mode.unwrap_or(pc.mode),
                    self.qos.get(q).priority.min(0xffff),
                ),
                PreemptType::PartitionPrio => (
                    part.priority_tier < my_part.priority_tier,
                    part.preempt_mode.unwrap_or(pc.mode),
                    part.priority_tier.min(0xffff),
                ),
                _ => (false, PreemptMode::Off, 0),
            };
            if !allowed || mode == PreemptMode::Off {
                continue;
            }
            let exempt = self.qos.get(q).exempt_time.unwrap_or(pc.exempt_time) as f64;
            if now < r.start + exempt {
                continue;
            }
            let nodes = r.claim.nodes.min(0xffff) as u32;
            out.push(((prio_high << 16) + nodes, id, mode, r.granted));
        }
        out.sort_by_key(|&(p, id, _, _)| (p, id));
        out.into_iter().map(|(_, id, m, n)| (id, m, n)).collect()
    }

    /// Checks every job of the table against the configuration: names
    /// that exist and limits some machine state could meet. Returns the
    /// jobs a QOS with `Flags=DenyOnLimit` will refuse at submission, with
    /// the limit that refuses each.
    ///
    /// # Errors
    /// The first job with an unknown partition, QOS, account or user, or
    /// one that a limit holds even on an idle machine (without
    /// `DenyOnLimit`: it would wait forever).
    pub fn check_table(
        &mut self,
        ids: impl IntoIterator<Item = (u64, u64)>,
    ) -> Result<Vec<(u64, Reason)>, super::InputError> {
        let mut refused = Vec::new();
        for (id, nodes) in ids {
            let r =
                self.jobs
                    .resolve(id, None, &self.conf, &self.tree, &self.qos, &mut self.users)?;
            if let Some(why) = self.denied(&r, nodes) {
                refused.push((id, why));
                continue;
            }
            let claim = self.claim(&r, nodes);
            if let Some(why) = Counters::never(&self.tree, &self.qos, &claim)
                && self.conf.enforce_limits
            {
                let line = self.jobs.get(id).map_or(0, |a| a.line);
                return Err(super::error::InputError::at(
                    self.jobs.source(),
                    line,
                    super::error::InputErrorKind::Impossible(format!(
                        "job {id} can never start: {why} holds it even on an idle machine; raise the limit or drop the job"
                    )),
                ));
            }
        }
        Ok(refused)
    }

    /// The limit for which a job of `nodes` nodes resolved as `r` is
    /// refused at submission: its QOS or its partition's has
    /// `Flags=DenyOnLimit` and one of the limits checked with it — those
    /// that hold a job even on an idle machine (per job, per user, group
    /// totals, wall time) — holds it (`acct_policy_validate` with strict
    /// checking, `src/slurmctld/acct_policy.c`).
    fn denied(&self, r: &Resolved, nodes: u64) -> Option<Reason> {
        if !self.conf.enforce_limits {
            return None;
        }
        let claim = self.claim(r, nodes);
        let strict = core::iter::once(claim.qos)
            .chain(claim.part_qos)
            .any(|q| self.qos.get(q).deny_on_limit);
        if !strict {
            return None;
        }
        Counters::never(&self.tree, &self.qos, &claim)
    }

    /// The jobs refused at submission (`Flags=DenyOnLimit`), in order,
    /// with the limit that refused each: they never ran and are in no
    /// queue.
    #[must_use]
    pub fn refused(&self) -> &[(u64, Reason)] {
        &self.refused
    }

    fn claim(&self, r: &Resolved, nodes: u64) -> Claim {
        Claim {
            assoc: r.assoc,
            qos: r.qos,
            part_qos: self.part_qos[r.partition],
            user: r.user,
            cpus: nodes * u64::from(self.conf.cpus_per_node),
            nodes,
            time_limit: r.time_limit,
        }
    }

    /// The configuration.
    #[must_use]
    pub fn conf(&self) -> &SchedConf {
        &self.conf
    }

    /// The association tree.
    #[must_use]
    pub fn tree(&self) -> &AssocTree {
        &self.tree
    }

    /// The fair-share state.
    #[must_use]
    pub fn fair_share(&self) -> &FairShare {
        &self.fs
    }

    /// `sshare -l`'s lines now. Reading them computes, as slurmctld's
    /// reading does, the users' usage the classic algorithm has not
    /// computed since the last pass, and keeps it (a later
    /// `DEPTH_OBLIVIOUS` effective usage reads its siblings' as sshare
    /// left them).
    pub fn sshare(&mut self) -> Vec<SshareRow> {
        self.fs.sshare(&self.tree)
    }

    /// `sprio -l`'s lines now (pending jobs, by job id).
    #[must_use]
    pub fn sprio(&self) -> Vec<SprioRow> {
        let mut rows: Vec<SprioRow> = self
            .pending
            .iter()
            .flat_map(|p| {
                // One line per partition of a job of several.
                let lines: Vec<(usize, u32, Factors)> = if p.per_part.is_empty() {
                    vec![(p.r.partition, p.prio, p.factors)]
                } else {
                    p.parts
                        .iter()
                        .zip(&p.per_part)
                        .map(|(&part, &(prio, f))| (part, prio, f))
                        .collect()
                };
                lines
                    .into_iter()
                    .map(move |(part, prio, f)| (p, part, prio, f))
            })
            .map(|(p, part, prio, factors)| {
                let w = weighted(&self.conf, &factors);
                let a = self.tree.get(p.r.assoc);
                let mut tres = Vec::new();
                if self.conf.priority.weight_tres_cpu > 0.0 {
                    tres.push(("cpu", w[6]));
                }
                if self.conf.priority.weight_tres_node > 0.0 {
                    tres.push(("node", w[7]));
                }
                SprioRow {
                    job: p.job.id,
                    partition: self.conf.partitions[part].name.clone(),
                    user: a.user.clone().unwrap_or_default(),
                    account: a.account.clone(),
                    priority: prio,
                    age: w[0],
                    assoc: w[1],
                    fairshare: w[2],
                    job_size: w[3],
                    partition_factor: w[4],
                    qos: w[5],
                    nice: factors.nice,
                    tres,
                    qos_name: self.qos.get(p.r.qos).name.clone(),
                    factors,
                }
            })
            .collect();
        rows.sort_by_key(|r| r.job);
        rows
    }

    /// squeue's lines now: pending jobs with their reason and planned
    /// start, running jobs with their start, by job id.
    #[must_use]
    pub fn squeue(&self) -> Vec<SqueueRow> {
        let mut rows: Vec<SqueueRow> = self
            .pending
            .iter()
            .map(|p| SqueueRow {
                job: p.job.id,
                state: "PENDING",
                reason: p.reason,
                start: p.planned,
                priority: p.prio,
            })
            .chain(self.held.iter().map(|(begin, p)| SqueueRow {
                job: p.job.id,
                state: "PENDING",
                reason: p.reason,
                start: Some(*begin),
                priority: p.prio,
            }))
            .chain(self.running.iter().map(|(&id, r)| SqueueRow {
                job: id,
                state: "RUNNING",
                reason: Reason::None,
                start: Some(r.start),
                priority: r.prio,
            }))
            .collect();
        rows.sort_by_key(|r| r.job);
        rows
    }

    /// When and by which scheduler job `id` started, if it did.
    #[must_use]
    pub fn started_by(&self, id: u64) -> Option<(f64, StartedBy)> {
        self.started_by.get(&id).copied()
    }

    /// Pending job `p`'s factors at `t` in partition `part`.
    fn factors(&self, p: &Pending, part: usize, t: f64) -> Factors {
        let pc = &self.conf.priority;
        let part = &self.conf.partitions[part];
        let nodes = p.job.nodes();
        let age = if pc.weight_age > 0.0 {
            let diff = (t - p.accrue).max(0.0).floor();
            if diff < pc.max_age as f64 {
                diff / pc.max_age as f64
            } else {
                1.0
            }
        } else {
            0.0
        };
        let fairshare = if pc.weight_fairshare > 0.0 {
            self.fs.factor(p.r.assoc)
        } else {
            0.0
        };
        let job_size = if pc.weight_job_size > 0.0 {
            job_size_factor(
                &self.conf,
                JobSize {
                    nodes,
                    // A pending job's CPU count is its request: one CPU
                    // per node for a whole-node job (`details->min_cpus`;
                    // `total_cpus` is set only once it runs).
                    cpus: nodes,
                    time_limit: p.r.time_limit,
                },
                part.max_time,
            )
        } else {
            0.0
        };
        let partition = if pc.weight_partition > 0.0 && part.priority_job_factor > 0 {
            if pc.no_normal_part {
                f64::from(part.priority_job_factor)
            } else {
                f64::from(part.priority_job_factor) / f64::from(self.max_pjf.max(1))
            }
        } else {
            0.0
        };
        let q = self.qos.get(p.r.qos);
        let qos = if pc.weight_qos > 0.0 && q.priority > 0 {
            if pc.no_normal_qos {
                f64::from(q.priority)
            } else {
                f64::from(q.priority) / f64::from(self.qos.max_priority().max(1))
            }
        } else {
            0.0
        };
        // A pending job's TRES are its request (one CPU per node).
        let tres_cpu = nodes as f64 / (part.nodes as f64 * f64::from(self.conf.cpus_per_node));
        let tres_node = nodes as f64 / part.nodes as f64;
        let max_assoc = self.tree.max_priority();
        let assoc = if pc.weight_assoc > 0.0 && max_assoc > 0 {
            f64::from(self.tree.priority(p.r.assoc)) / f64::from(max_assoc)
        } else {
            0.0
        };
        Factors {
            age,
            assoc,
            fairshare,
            job_size,
            partition,
            qos,
            tres_cpu,
            tres_node,
            nice: p.r.nice,
        }
    }

    fn reprioritize(&mut self, p: usize, t: f64) {
        if !self.conf.priority.multifactor {
            return;
        }
        if self.conf.priority.weight_fairshare > 0.0 {
            // The user's fair share, computed now if unknown since the
            // last pass (`_get_fairshare_priority`).
            self.fs.refresh_user(&self.tree, self.pending[p].r.assoc);
        }
        let job = &self.pending[p];
        let f = self.factors(job, job.r.partition, t);
        let prio = priority(&self.conf, &f);
        // A job of several partitions has a priority in each
        // (`priority_array`, `_priority_each_partition`): their partition
        // and TRES factors differ.
        let per_part: Vec<(u32, Factors)> = if job.parts.len() > 1 {
            job.parts
                .iter()
                .map(|&part| {
                    let f = self.factors(job, part, t);
                    (priority(&self.conf, &f), f)
                })
                .collect()
        } else {
            Vec::new()
        };
        let job = &mut self.pending[p];
        if job.prio != prio
            || job
                .per_part
                .iter()
                .map(|x| x.0)
                .ne(per_part.iter().map(|x| x.0))
        {
            self.sorted = false;
        }
        job.factors = f;
        job.prio = prio;
        job.per_part = per_part;
    }

    /// One priority pass at `t`.
    fn priority_pass(&mut self, t: f64) {
        let classic = self.conf.priority.algo == super::conf::FairShareAlgo::Classic;
        let reset = match self.conf.priority.reset {
            ResetPeriod::Now => self.last_calc.is_none(),
            ResetPeriod::Every(p) => {
                let p = p as f64;
                self.last_calc
                    .is_some_and(|l| (t / p).floor() > (l / p).floor())
            }
            ResetPeriod::None => false,
        };
        if reset {
            self.fs.reset();
            self.counters.reset_usage();
        }
        if classic {
            self.fs.classic_accounts(&self.tree);
        }
        if let Some(last) = self.last_calc {
            self.fs.decay(t - last);
            let d = self.fs.decay_factor();
            if t > last && d != 1.0 {
                self.counters
                    .decay_usage(d.powf(t - last).max(f64::MIN_POSITIVE));
            }
            // The job list in order (by job id): a running job adds its
            // usage, a pending one has its priority computed, and with it
            // (classic) its user's fair share if unknown since the pass
            // began, from the usage added so far
            // (`_decay_apply_new_usage_and_weighted_factors`).
            let refresh = classic && t > last && self.conf.priority.weight_fairshare > 0.0;
            let mut waiting: Vec<(u64, usize)> = if refresh {
                self.pending
                    .iter()
                    .map(|p| (p.job.id, p.r.assoc))
                    .chain(self.held.iter().map(|(_, p)| (p.job.id, p.r.assoc)))
                    .collect()
            } else {
                Vec::new()
            };
            waiting.sort_unstable();
            let mut w = waiting.iter().peekable();
            for (&id, r) in &self.running {
                while let Some(&(_, assoc)) = w.next_if(|x| x.0 < id) {
                    self.fs.refresh_user(&self.tree, assoc);
                }
                let dt = t - last.max(r.start);
                let amount = self.fs.charge(dt, r.billing, r.usage_factor);
                self.fs.add(&self.tree, r.assoc, amount);
                // The same seconds per CPU and node, for GrpTRESMins.
                let seconds = self.fs.charge(dt, 1.0, r.usage_factor);
                self.counters.charge_usage(&self.tree, &r.claim, seconds);
            }
            for &(_, assoc) in w {
                self.fs.refresh_user(&self.tree, assoc);
            }
        }
        self.fs.recompute(&self.tree);
        if self.last_calc.is_some() {
            for i in 0..self.pending.len() {
                self.reprioritize(i, t);
            }
        }
        // New priorities: the next periodic main pass sees a changed
        // queue, and backfill more work (`last_job_update`); neither runs
        // for it at once (the decay thread calls no scheduler).
        if !self.sorted {
            self.changed_main = true;
            self.dirty_bf = true;
        }
        self.last_calc = Some(t);
    }

    fn sort(&mut self) {
        if self.sorted {
            return;
        }
        self.pending.sort_by(|a, b| {
            b.tier
                .cmp(&a.tier)
                .then(b.prio.cmp(&a.prio))
                .then(a.job.arrival.total_cmp(&b.job.arrival))
                .then(a.job.id.cmp(&b.job.id))
        });
        self.sorted = true;
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "a start names the job, its partition, its nodes and who started it"
    )]
    fn start(
        &mut self,
        i: usize,
        part: usize,
        now: f64,
        grant: partalloc_allocators::Grant,
        nodes: Vec<u32>,
        by: StartedBy,
        started: &mut Vec<Started>,
    ) {
        // A job of several partitions runs in the one that started it.
        self.pending[i].r.partition = part;
        self.pending[i].tier = self.conf.partitions[part].priority_tier;
        let k = self.pending[i].parts.iter().position(|&x| x == part);
        if let Some(&(prio, f)) = k.and_then(|k| self.pending[i].per_part.get(k)) {
            self.pending[i].prio = prio;
            self.pending[i].factors = f;
        }
        let p = &self.pending[i];
        let limit = p.r.time_limit.map_or(YEAR, |s| s as f64);
        let mut job = p.job;
        // A job that outruns its limit runs until the next time-limit
        // check.
        let killed = self.killed_at(now, limit) - now;
        if job.service > killed {
            job.service = killed;
        }
        let claim = self.claim(&p.r, p.job.nodes());
        self.counters.apply(&self.tree, &claim, 1);
        let record = p.clone();
        // Usage is charged in billing TRES: the partition's
        // TRESBillingWeights over the allocated CPUs and nodes, else the
        // CPUs (`calc_job_billable_tres`).
        let alloc_cpus = p.cpus as f64;
        let billing = match self.conf.partitions[p.r.partition].billing {
            Some((wc, wn)) => wc * alloc_cpus + wn * p.job.nodes() as f64,
            None => alloc_cpus,
        };
        let run = Running {
            pending: record,
            claim,
            assoc: p.r.assoc,
            usage_factor: self.qos.get(p.r.qos).usage_factor,
            billing,
            start: now,
            limit_end: now + limit,
            granted: grant.granted_nodes(),
            nodes,
            prio: p.prio,
        };
        self.running.insert(job.id, run);
        self.started_by.insert(job.id, (now, by));
        started.push(Started { job, grant });
    }

    /// Grants pending job `i` the nodes `ids` (lowest free ones of where
    /// it may run) through [`Allocator::allocate_at`]; an allocator that
    /// cannot grant a chosen list may place it itself, inside the nodes
    /// `allowed`.
    fn place(
        &self,
        i: usize,
        ids: Vec<u32>,
        allowed: &[bool],
        alloc: &mut dyn Allocator,
    ) -> Result<Option<partalloc_allocators::Grant>, ScheduleError> {
        let job = &self.pending[i].job;
        if (ids.len() as u64) < job.nodes() {
            return Ok(None);
        }
        let request = self.mapping.request(&job.shape);
        let at = partalloc_allocators::Partition::Nodes(ids);
        match alloc.allocate_at(&request, &at) {
            Ok(g) => return Ok(Some(g)),
            Err(AllocError::NoRoom { .. } | AllocError::PartitionBusy { .. }) => return Ok(None),
            Err(AllocError::PlacementUnsupported { .. } | AllocError::Unrecognized { .. }) => {}
            Err(source) => {
                return Err(ScheduleError::Unservable {
                    job: job.id,
                    source,
                });
            }
        }
        let g = match alloc.allocate(&request) {
            Ok(g) => g,
            Err(AllocError::NoRoom { .. }) => return Ok(None),
            Err(source) => {
                return Err(ScheduleError::Unservable {
                    job: job.id,
                    source,
                });
            }
        };
        let inside = g
            .partition()
            .node_list(alloc.topology())
            .is_ok_and(|ns| ns.iter().all(|&n| allowed.get(n as usize) == Some(&true)));
        if inside {
            return Ok(Some(g));
        }
        let _ = alloc.release(&g);
        Err(ScheduleError::Policy {
            policy: "slurm".into(),
            reason: format!(
                "allocator {} placed job {} outside its partition's nodes and cannot grant chosen nodes; use paging",
                alloc.name(),
                job.id
            ),
        })
    }

    /// Whether backfill plans node by node ([`NodePlan`]): on partitions
    /// over every node, without preemption, unless counts were asked for
    /// ([`SlurmPolicy::with_count_plan`]).
    fn node_plan(&self) -> bool {
        !self.count_plan
            && self.conf.sched.backfill
            && self.split.is_none()
            && (!self.preemption || self.conf.preempt.kind == super::conf::PreemptType::None)
    }

    /// The nodes of grant `g` when partitions divide the machine or
    /// backfill plans node by node (empty otherwise: nothing needs them).
    fn grant_nodes(&self, g: &partalloc_allocators::Grant, alloc: &dyn Allocator) -> Vec<u32> {
        if self.split.is_none() && !self.node_plan() {
            return Vec::new();
        }
        g.partition()
            .node_list(alloc.topology())
            .unwrap_or_default()
    }

    /// The queue as slurmctld's scheduler walks it: one record per job
    /// and partition it was submitted to (`build_job_queue`), by the
    /// partition's tier, then the job's order (`sort_job_queue2`).
    fn records(&mut self) -> Vec<(usize, usize)> {
        self.sort();
        let mut out: Vec<(usize, usize)> = Vec::with_capacity(self.pending.len());
        let mut several = false;
        for (i, p) in self.pending.iter().enumerate() {
            several |= p.parts.len() > 1;
            out.extend(p.parts.iter().map(|&part| (i, part)));
        }
        if several {
            let tiers: Vec<u32> = self
                .conf
                .partitions
                .iter()
                .map(|p| p.priority_tier)
                .collect();
            let pending = &self.pending;
            let prio = |i: usize, part: usize| {
                let p = &pending[i];
                p.parts
                    .iter()
                    .position(|&x| x == part)
                    .and_then(|k| p.per_part.get(k))
                    .map_or(p.prio, |x| x.0)
            };
            out.sort_by(|&(i, pi), &(j, pj)| {
                let (a, b) = (&pending[i], &pending[j]);
                tiers[pj]
                    .cmp(&tiers[pi])
                    .then(prio(j, pj).cmp(&prio(i, pi)))
                    .then(a.job.arrival.total_cmp(&b.job.arrival))
                    .then(a.job.id.cmp(&b.job.id))
            });
        }
        out
    }

    /// Tries the allocator for pending job `i`: `Some(grant)` if it fits.
    /// Grants pending job `i` the nodes `ids` through
    /// [`Allocator::allocate_at`]; an allocator that cannot grant a chosen
    /// list places the job itself (on partitions over every node any of
    /// its choices will do).
    fn place_chosen(
        &self,
        i: usize,
        ids: Vec<u32>,
        alloc: &mut dyn Allocator,
    ) -> Result<Option<partalloc_allocators::Grant>, ScheduleError> {
        let job = &self.pending[i].job;
        let request = self.mapping.request(&job.shape);
        match alloc.allocate_at(&request, &partalloc_allocators::Partition::Nodes(ids)) {
            Ok(g) => Ok(Some(g)),
            Err(AllocError::NoRoom { .. } | AllocError::PartitionBusy { .. }) => Ok(None),
            Err(AllocError::PlacementUnsupported { .. } | AllocError::Unrecognized { .. }) => {
                self.try_alloc(i, alloc)
            }
            Err(source) => Err(ScheduleError::Unservable {
                job: job.id,
                source,
            }),
        }
    }

    fn try_alloc(
        &self,
        i: usize,
        alloc: &mut dyn Allocator,
    ) -> Result<Option<partalloc_allocators::Grant>, ScheduleError> {
        let job = &self.pending[i].job;
        // Too few free nodes: no need to ask (a job larger than the
        // machine is asked, so that the allocator refuses it for good).
        if job.nodes() > alloc.free_nodes() as u64 && job.nodes() <= self.conf.nodes {
            return Ok(None);
        }
        match alloc.allocate(&self.mapping.request(&job.shape)) {
            Ok(g) => Ok(Some(g)),
            Err(AllocError::NoRoom { .. }) => Ok(None),
            Err(source) => Err(ScheduleError::Unservable {
                job: job.id,
                source,
            }),
        }
    }

    fn main_pass(
        &mut self,
        now: f64,
        full: bool,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        let records = self.records();
        let parts = self.conf.partitions.len();
        let mut failed = vec![false; parts];
        let mut any_failed = false;
        // The nodes the pass may still use (`avail_node_bitmap`): a
        // failed partition's leave it. Kept per node only when partitions
        // divide the machine; otherwise one failure leaves none.
        let mut avail: Option<Vec<bool>> =
            self.split.as_ref().map(|_| vec![true; alloc.total_nodes()]);
        let limit = self.conf.sched.default_queue_depth;
        let reserve = self.conf.sched.bf_min_prio_reserve;
        let mut depth = 0usize;
        let mut done = vec![false; self.pending.len()];
        self.unexamined = false;
        for (i, part) in records {
            // Started in another of its partitions.
            if done[i] {
                continue;
            }
            // A job over its partition's MaxTime is not queued there
            // (`job_limits_check` when the queue is built).
            if self.over_partition_time(i, part) {
                self.pending[i].reason = Reason::Limit("PartitionTimeLimit");
                continue;
            }
            if !full {
                if depth > limit {
                    self.unexamined = true;
                    break;
                }
                depth += 1;
            }
            if failed[part] {
                let p = &mut self.pending[i];
                if matches!(p.reason, Reason::None | Reason::Resources) {
                    p.reason = Reason::Priority;
                }
                continue;
            }
            let fail = |s: &mut Self,
                        failed: &mut Vec<bool>,
                        any: &mut bool,
                        avail: &mut Option<Vec<bool>>,
                        why: Reason| {
                let p = &mut s.pending[i];
                p.reason = why;
                if reserve == 0 || p.prio >= reserve {
                    failed[part] = true;
                    *any = true;
                    // `bit_and_not(avail_node_bitmap, part nodes)`.
                    if let (Some(a), Some(split)) = (avail.as_mut(), s.split.as_ref()) {
                        for (x, &m) in a.iter_mut().zip(&split.member[part]) {
                            *x &= !m;
                        }
                    }
                }
            };
            if avail.is_none() && any_failed {
                // Another partition's blocked job took every node.
                fail(
                    self,
                    &mut failed,
                    &mut any_failed,
                    &mut avail,
                    Reason::ReservedForOtherPartition,
                );
                continue;
            }
            let nodes = self.pending[i].job.nodes();
            if self.conf.enforce_limits {
                let mut r = self.pending[i].r;
                r.partition = part;
                let claim = self.claim(&r, nodes);
                if let Some(why) = self.counters.blocked(&self.tree, &self.qos, &claim) {
                    self.pending[i].reason = why;
                    continue;
                }
            }
            // The nodes of its partition the pass may use.
            let allowed: Option<Vec<bool>> = match (&avail, &self.split) {
                (Some(a), Some(split)) => Some(
                    a.iter()
                        .zip(&split.member[part])
                        .map(|(&x, &m)| x && m)
                        .collect(),
                ),
                _ => None,
            };
            if let Some(allowed) = &allowed
                && (allowed.iter().filter(|&&x| x).count() as u64) < nodes
            {
                // Fewer of its partition's nodes are left than it asks
                // for (`_schedule`: "reserved for jobs in higher priority
                // partitions").
                fail(
                    self,
                    &mut failed,
                    &mut any_failed,
                    &mut avail,
                    Reason::ReservedForOtherPartition,
                );
                continue;
            }
            let got = match &allowed {
                None => self.try_alloc(i, alloc),
                Some(allowed) => {
                    let free = free_mask(alloc);
                    let ids: Vec<u32> = (0..allowed.len())
                        .filter(|&k| allowed[k] && free[k])
                        .take(usize::try_from(nodes).unwrap_or(usize::MAX))
                        .map(|k| k as u32)
                        .collect();
                    self.place(i, ids, allowed, alloc)
                }
            };
            match got {
                Ok(Some(g)) => {
                    let ns = self.grant_nodes(&g, alloc);
                    self.start(i, part, now, g, ns, StartedBy::Main, started);
                    done[i] = true;
                }
                Ok(None) => {
                    // Preemption: victims in order until the job fits
                    // (the select plugin frees candidates one by one),
                    // counting only their nodes where it may run.
                    if self.preemption && self.preempted.is_empty() {
                        let inside = |r: &Running| -> u64 {
                            match &allowed {
                                None => r.granted,
                                Some(a) => r
                                    .nodes
                                    .iter()
                                    .filter(|&&n| a.get(n as usize) == Some(&true))
                                    .count() as u64,
                            }
                        };
                        let mut free = match &allowed {
                            None => alloc.free_nodes() as u64,
                            Some(a) => {
                                let f = free_mask(alloc);
                                a.iter().zip(&f).filter(|&(&x, &y)| x && y).count() as u64
                            }
                        };
                        let mut victims = Vec::new();
                        for (id, mode, _) in self.preemptable(i, part, now) {
                            if free >= nodes {
                                break;
                            }
                            let gain = self.running.get(&id).map_or(0, inside);
                            if gain == 0 {
                                continue;
                            }
                            free += gain;
                            victims.push((id, mode));
                        }
                        if free >= nodes && !victims.is_empty() {
                            self.preempted = victims;
                        }
                    }
                    fail(
                        self,
                        &mut failed,
                        &mut any_failed,
                        &mut avail,
                        Reason::Resources,
                    );
                }
                Err(e) => {
                    done[i] = true;
                    self.remove_done(&done);
                    return Err(e);
                }
            }
        }
        self.remove_done(&done);
        Ok(())
    }

    /// The passes of one `schedule` call at `now` (see the module docs).
    fn passes(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        self.catch_up(now);
        self.now_seen = now;
        // Requeued jobs whose begin time has come join the queue.
        let mut k = 0;
        while k < self.held.len() {
            if self.held[k].0 <= now {
                let (_, mut p) = self.held.swap_remove(k);
                p.reason = Reason::None;
                p.planned = None;
                self.pending.push(p);
                let i = self.pending.len() - 1;
                self.reprioritize(i, now);
                self.sorted = false;
                self.dirty_main = true;
                self.dirty_bf = true;
            } else {
                k += 1;
            }
        }
        // A periodic pass runs at its own times only: one missed while
        // the queue was empty (no wake-up was asked for) is not run late.
        let sched = self.conf.sched.sched_interval as f64;
        if self.next_sched < now {
            self.next_sched = (now / sched).ceil() * sched;
        }
        let full = self.next_sched == now;
        if full {
            self.next_sched = now + sched;
        }
        // slurmctld's background loop: the periodic full pass, or a queued
        // one once `batch_sched_delay` has passed since the last
        // (`_slurmctld_background`, `src/slurmctld/controller.c`).
        let delay = self.conf.sched.batch_sched_delay as f64;
        if full {
            self.last_queued_pass = now;
            if self.queued_main {
                self.queued_main = false;
                self.dirty_main = true;
            }
        } else if self.queued_main && now - self.last_queued_pass >= delay {
            self.queued_main = false;
            self.last_queued_pass = now;
            self.dirty_main = true;
        }
        if self.dirty_main || (full && (self.changed_main || self.unexamined || self.preemption)) {
            self.dirty_main = false;
            self.changed_main = false;
            self.main_pass(now, full, alloc, started)?;
        }
        // The backfill agent sleeps `bf_interval` after a cycle, then
        // checks every second and runs once something changed since its
        // last cycle (`backfill_agent`, `_more_work` in `backfill.c`).
        let bf = self.conf.sched.bf_interval as f64;
        if self.conf.sched.backfill && self.next_bf <= now && self.dirty_bf {
            self.next_bf = now + bf;
            self.dirty_bf = false;
            self.backfill_pass(now, alloc, started)?;
        }
        self.sort();
        Ok(())
    }

    /// Whether pending job `i`'s time limit exceeds partition `part`'s
    /// `MaxTime`.
    fn over_partition_time(&self, i: usize, part: usize) -> bool {
        let p = &self.pending[i];
        let max = self.conf.partitions[part].max_time;
        matches!((p.r.time_limit, max), (Some(t), Some(m)) if t > m)
            || (p.r.time_limit.is_none() && max.is_some())
    }

    fn remove_done(&mut self, done: &[bool]) {
        if !done.iter().any(|&d| d) {
            return;
        }
        let mut k = 0;
        self.pending.retain(|_| {
            let keep = !done.get(k).copied().unwrap_or(false);
            k += 1;
            keep
        });
        self.dirty_bf = true;
    }

    fn backfill_pass(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        let records = self.records();
        let s = self.conf.sched.clone();
        let res = s.bf_resolution as f64;
        let off = self.epoch;
        // Reservations are whole resolutions of the Unix clock
        // (`_set_slot_time`); running jobs end exactly at their limits
        // (the select plugin's will-run test reads their end times).
        let down = |t: f64| ((t + off) / res).floor() * res - off;
        let mut plan = core::mem::take(&mut self.plan);
        // With partitions on part of the nodes, one plan per class of
        // nodes (the nodes of the same partitions).
        let mut split = self.split.take();
        let mut free = split.as_ref().map(|_| free_mask(alloc));
        match (&mut split, &free) {
            (Some(sp), Some(free)) => {
                let mut counts = vec![0i64; sp.plans.len()];
                for (k, &f) in free.iter().enumerate() {
                    if f && let Some(&c) = sp.class_of.get(k) {
                        counts[c] += 1;
                    }
                }
                for (pl, &n) in sp.plans.iter_mut().zip(&counts) {
                    pl.reset(now, n);
                }
                for r in self.running.values() {
                    let end = if r.limit_end > now {
                        r.limit_end
                    } else {
                        now + 1.0
                    };
                    for &n in &r.nodes {
                        if let Some(&c) = sp.class_of.get(n as usize) {
                            sp.plans[c].add(end, f64::INFINITY, 1);
                        }
                    }
                }
            }
            _ => {
                plan.reset(now, alloc.free_nodes() as i64);
                for r in self.running.values() {
                    let end = if r.limit_end > now {
                        r.limit_end
                    } else {
                        now + 1.0
                    };
                    plan.add(end, f64::INFINITY, r.granted as i64);
                }
            }
        }
        let mut np = (split.is_none() && self.node_plan()).then(|| {
            let mut free_at = vec![f64::INFINITY; alloc.total_nodes()];
            for (k, &f) in free_mask(alloc).iter().enumerate() {
                if f {
                    free_at[k] = now;
                }
            }
            for r in self.running.values() {
                let end = if r.limit_end > now {
                    r.limit_end
                } else {
                    now + 1.0
                };
                for &n in &r.nodes {
                    if let Some(x) = free_at.get_mut(n as usize) {
                        *x = end;
                    }
                }
            }
            match self.plan_buf.take() {
                Some(mut np) => {
                    np.reset(&free_at);
                    np
                }
                None => NodePlan::new(free_at),
            }
        });
        let mut chosen: Vec<u32> = Vec::new();
        let mut tested = 0usize;
        let mut starts = 0usize;
        let mut per_user: HashMap<usize, usize> = HashMap::new();
        let mut per_part: HashMap<usize, usize> = HashMap::new();
        let mut done = vec![false; self.pending.len()];
        // Planned starts of this cycle: a job of several partitions shows
        // the earliest (`orig_start_time`: "can start earlier in different
        // partition").
        let mut planned_now: HashMap<usize, f64> = HashMap::new();
        let mut result = Ok(());
        for (i, part) in records {
            if done[i] {
                continue;
            }
            if tested >= s.bf_max_job_test {
                break;
            }
            if self.over_partition_time(i, part) {
                continue;
            }
            let (user, nodes) = {
                let p = &self.pending[i];
                (p.r.user, p.job.nodes())
            };
            if self.conf.enforce_limits {
                let mut r = self.pending[i].r;
                r.partition = part;
                let claim = self.claim(&r, nodes);
                if let Some(why) = self.counters.blocked(&self.tree, &self.qos, &claim) {
                    self.pending[i].reason = why;
                    continue;
                }
            }
            if s.bf_max_job_part > 0
                && per_part.get(&part).copied().unwrap_or(0) >= s.bf_max_job_part
            {
                continue;
            }
            if s.bf_max_job_user > 0
                && per_user.get(&user).copied().unwrap_or(0) >= s.bf_max_job_user
            {
                continue;
            }
            tested += 1;
            *per_part.entry(part).or_default() += 1;
            *per_user.entry(user).or_default() += 1;
            let tl = self.pending[i].r.time_limit.map_or(YEAR, |t| t as f64);
            let slot_end = |start: f64| down(start + tl + res - 1.0);
            let mut at = match (&split, &mut np) {
                (Some(sp), _) => earliest_in(sp, part, now, nodes as i64, tl),
                (None, Some(np)) => {
                    let (t, sel) = np.will_run(
                        now,
                        usize::try_from(nodes).unwrap_or(usize::MAX),
                        tl,
                        now + s.bf_window as f64,
                        |t| (down(t), slot_end(t)),
                    );
                    chosen = sel;
                    t
                }
                (None, None) => plan.earliest(now, nodes as i64, tl),
            };
            // A job that may preempt plans as if the running jobs it may
            // preempt were gone (the will-run test with preemptee
            // candidates): it is planned for when the jobs it cannot
            // preempt leave it room. Starting it by preemption is the
            // main scheduler's.
            if self.preemption && at > now && split.is_none() {
                let victims: u64 = self.preemptable(i, part, now).iter().map(|v| v.2).sum();
                if victims > 0 {
                    let sooner = plan.earliest(now, nodes as i64 - victims as i64, tl);
                    if sooner > now {
                        at = at.min(sooner);
                    }
                }
            }
            if at <= now {
                let got = match (&split, &free) {
                    (Some(sp), Some(free)) => {
                        // The lowest free nodes of each class of its
                        // partition, as many as the plan leaves free.
                        let mut room: Vec<i64> = sp
                            .plans
                            .iter()
                            .map(|pl| pl.min_over(now, now + tl).max(0))
                            .collect();
                        let mut allowed = vec![false; free.len()];
                        let mut ids = Vec::new();
                        for (k, &f) in free.iter().enumerate() {
                            let c = sp.class_of[k];
                            if f && sp.member[part][k] && room[c] > 0 && (ids.len() as u64) < nodes
                            {
                                room[c] -= 1;
                                allowed[k] = true;
                                ids.push(k as u32);
                            }
                        }
                        self.place(i, ids, &allowed, alloc)
                    }
                    _ => match &np {
                        // The nodes the plan chose, where the allocator
                        // grants chosen nodes; else its own choice.
                        Some(_) => self.place_chosen(i, chosen.clone(), alloc),
                        None => self.try_alloc(i, alloc),
                    },
                };
                match got {
                    Ok(Some(g)) => {
                        if let Some(np) = np.as_mut() {
                            // Running now: its nodes are the will-run
                            // test's until its end, and the map's until
                            // the end rounded up (`_bf_reserve_running`).
                            let ns = g
                                .partition()
                                .node_list(alloc.topology())
                                .unwrap_or_default();
                            np.run(&ns, now + tl, now, slot_end(now));
                        }
                        // (`self.split` is taken for the pass: ask the
                        // grant directly.)
                        let ns = if split.is_some() || np.is_some() {
                            g.partition()
                                .node_list(alloc.topology())
                                .unwrap_or_default()
                        } else {
                            Vec::new()
                        };
                        match &mut split {
                            Some(sp) => {
                                for &n in &ns {
                                    let c = sp.class_of[n as usize];
                                    sp.plans[c].add(now, slot_end(now), -1);
                                    // Taken now: not free for the next.
                                    if let Some(x) =
                                        free.as_mut().and_then(|f| f.get_mut(n as usize))
                                    {
                                        *x = false;
                                    }
                                }
                            }
                            None => plan.add(now, slot_end(now), -(g.granted_nodes() as i64)),
                        }
                        self.start(i, part, now, g, ns, StartedBy::Backfill, started);
                        done[i] = true;
                        // bf_max_job_start ends the cycle at once: the
                        // later jobs are not tested (no planned start).
                        starts += 1;
                        if s.bf_max_job_start > 0 && starts >= s.bf_max_job_start {
                            break;
                        }
                    }
                    Ok(None) => self.pending[i].reason = Reason::Resources,
                    Err(e) => {
                        done[i] = true;
                        result = Err(e);
                        break;
                    }
                }
                continue;
            }
            if !at.is_finite() {
                continue;
            }
            let p = &mut self.pending[i];
            // Below bf_min_prio_reserve a job is tested for an immediate
            // start only (`TEST_NOW_ONLY`): no planned start, no
            // reservation.
            if s.bf_min_prio_reserve > 0 && p.prio < s.bf_min_prio_reserve {
                continue;
            }
            let shown = planned_now.get(&i).map_or(at, |&t| t.min(at));
            planned_now.insert(i, shown);
            p.planned = Some(shown);
            // Past the window: a planned start but no reservation ("starts
            // too far in the future to worry about").
            if at > now + s.bf_window as f64 {
                continue;
            }
            if let Some(np) = np.as_mut() {
                np.reserve(&chosen, down(at), slot_end(at));
                continue;
            }
            match &mut split {
                Some(sp) => {
                    // Reserve the classes' nodes in their order, as many
                    // of each as are free over its slot.
                    let mut left = nodes as i64;
                    for &c in &sp.part_classes[part] {
                        if left == 0 {
                            break;
                        }
                        let take = sp.plans[c].min_over(at, at + tl).max(0).min(left);
                        sp.plans[c].add(down(at), slot_end(at), -take);
                        left -= take;
                    }
                }
                None => plan.add(down(at), slot_end(at), -(nodes as i64)),
            }
        }
        self.plan = plan;
        self.split = split;
        if np.is_some() {
            self.plan_buf = np;
        }
        self.remove_done(&done);
        result
    }
}

/// `need` of the nodes `cands` (ascending) as the select plugin picks
/// them (`_eval_nodes_consec`, `src/plugins/topology/common/eval_nodes.c`):
/// among the runs of consecutive nodes, the smallest that suffices (the
/// first of equals), its lowest nodes; while none suffices, the largest
/// whole (the first of equals), then again for the rest.
fn best_fit(cands: &[usize], need: usize) -> Vec<u32> {
    let mut runs: Vec<(usize, usize)> = Vec::new(); // (first, len)
    for &k in cands {
        match runs.last_mut() {
            Some((f, l)) if *f + *l == k => *l += 1,
            _ => runs.push((k, 1)),
        }
    }
    let mut out = Vec::with_capacity(need);
    let mut left = need;
    while left > 0 && !runs.is_empty() {
        // One scan: the smallest run that suffices and the largest, each
        // the first of equals.
        let mut fit: Option<usize> = None;
        let mut big = 0;
        for (j, r) in runs.iter().enumerate() {
            if r.1 >= left && fit.is_none_or(|f| r.1 < runs[f].1) {
                fit = Some(j);
            }
            if r.1 > runs[big].1 {
                big = j;
            }
        }
        let j = fit.unwrap_or(big);
        let (f, l) = runs.swap_remove(j);
        let take = l.min(left);
        out.extend((f..f + take).map(|k| k as u32));
        left -= take;
    }
    out.sort_unstable();
    out
}

/// Backfill's map node by node, on partitions over every node: when each
/// node is free by the running jobs' ends (the will-run test's view,
/// `_will_run_test` in `src/plugins/select/cons_tres/job_test.c`), and the
/// reservations this cycle made on it (`node_space`, `backfill.c`: a
/// time-ordered list of slots, each with the nodes reserved in it).
#[derive(Debug, Clone)]
struct NodePlan {
    /// Per node: when its running job ends (now if idle; infinity if it
    /// never frees within the plan).
    free_at: Vec<f64>,
    /// Per node: the times it is reserved, disjoint `[from, to)` in
    /// order (overlapping reservations merged).
    resv: Vec<Vec<(f64, f64)>>,
    /// The map's slot boundaries (every reservation's start and end), in
    /// order: slot `j` spans `[times[j], times[j + 1])`, the last to
    /// infinity (reserving no node), and before `times[0]` no node is
    /// reserved.
    times: Vec<f64>,
    /// Per slot (in `times`' order): its row of `rows`.
    slot_row: Vec<u32>,
    /// The nodes reserved in each slot, a bitmap of `words` words per
    /// row (rows are not moved when a slot is split).
    rows: Vec<u64>,
    /// Words per bitmap.
    words: usize,
    /// Every reservation's end.
    ends: BTreeMap<i64, f64>,
    /// The nodes by `free_at` (then by index).
    order: Vec<u32>,
    /// The nodes whose `free_at` is finite (a bitmap).
    finite: Vec<u64>,
    /// For each `q`: the first `64 q` nodes of `order` (a bitmap).
    marks: Vec<u64>,
    /// Whether a reservation is empty (of a job of no time): the
    /// will-run test then walks the nodes' lists
    /// ([`NodePlan::will_run_walk`]).
    walk: bool,
    /// Buffers of the will-run test, kept between jobs.
    scratch: Scratch,
}

/// The will-run test's buffers (bitmaps of [`NodePlan::words`] words).
#[derive(Debug, Default, Clone)]
struct Scratch {
    usable: Vec<u64>,
    at_start: Vec<u64>,
    prefix: Vec<u64>,
    taken: Vec<u64>,
    cands: Vec<usize>,
    suffix: Vec<u64>,
    back: Vec<u64>,
}

/// A key ordering times as `f64::total_cmp` does.
fn time_key(t: f64) -> i64 {
    let b = t.to_bits() as i64;
    b ^ ((((b >> 63) as u64) >> 1) as i64)
}

/// The will-run test groups running jobs ending within this many seconds
/// of the first (`time_window` in `_will_run_test`), doubling it after
/// each group that leaves the job no room.
const WILL_RUN_WINDOW: f64 = 30.0;

/// The union of the bitmaps of a run of consecutive slots `[lo, hi)`
/// that only moves forward (the nodes reserved somewhere over a job's
/// slot as `later_start` advances): the front part keeps its suffix
/// unions, the back part one running union, so each slot is added and
/// dropped in a constant number of bitmap operations over the test.
struct SlidingUnion<'s> {
    words: usize,
    lo: usize,
    mid: usize,
    hi: usize,
    /// The first slot of `suffix`.
    base: usize,
    /// For each slot `p` of `[base, mid)`: the union of slots `p..mid`.
    suffix: &'s mut Vec<u64>,
    /// The union of slots `mid..hi`.
    back: &'s mut Vec<u64>,
}

impl<'s> SlidingUnion<'s> {
    /// An empty run, in the buffers `suffix` and `back`.
    fn new(words: usize, suffix: &'s mut Vec<u64>, back: &'s mut Vec<u64>) -> Self {
        back.clear();
        back.resize(words, 0);
        SlidingUnion {
            words,
            lo: 0,
            mid: 0,
            hi: 0,
            base: 0,
            suffix,
            back,
        }
    }

    /// Moves the run to `[lo, hi)` (neither bound moving back), `row`
    /// giving a slot's bitmap.
    fn slide<'a>(&mut self, lo: usize, hi: usize, row: impl Fn(usize) -> &'a [u64]) {
        let w = self.words;
        while self.hi < hi {
            for (b, r) in self.back.iter_mut().zip(row(self.hi)) {
                *b |= r;
            }
            self.hi += 1;
        }
        if lo >= self.mid && lo < self.hi {
            // The front is used up: the back becomes the front.
            self.base = lo;
            self.mid = self.hi;
            self.suffix.clear();
            self.suffix.resize((self.mid - lo) * w, 0);
            for p in (lo..self.mid).rev() {
                let at = (p - lo) * w;
                let r = row(p);
                if p + 1 < self.mid {
                    let (cur, next) = self.suffix.split_at_mut(at + w);
                    for i in 0..w {
                        cur[at + i] = r[i] | next[i];
                    }
                } else {
                    self.suffix[at..at + w].copy_from_slice(r);
                }
            }
            self.back.fill(0);
        } else if lo >= self.hi {
            self.mid = lo;
            self.back.fill(0);
        }
        self.lo = lo;
    }

    /// `out` = `keep` without the nodes of the run's union.
    fn without(&self, keep: &[u64], out: &mut [u64]) {
        let w = self.words;
        if self.lo < self.mid {
            let at = (self.lo - self.base) * w;
            let front = &self.suffix[at..at + w];
            for i in 0..w {
                out[i] = keep[i] & !(front[i] | self.back[i]);
            }
        } else {
            for i in 0..w {
                out[i] = keep[i] & !self.back[i];
            }
        }
    }
}

impl NodePlan {
    /// A plan with no reservation, the nodes free at `free_at`.
    fn new(free_at: Vec<f64>) -> Self {
        let words = free_at.len().div_ceil(64);
        let mut np = NodePlan {
            resv: vec![Vec::new(); free_at.len()],
            order: (0..free_at.len() as u32).collect(),
            free_at,
            times: Vec::new(),
            slot_row: Vec::new(),
            rows: Vec::new(),
            words,
            ends: BTreeMap::new(),
            finite: vec![0; words],
            marks: Vec::new(),
            walk: false,
            scratch: Scratch::default(),
        };
        np.sorted();
        np
    }

    /// This plan again with no reservation, the nodes free at `free_at`
    /// (its buffers kept).
    fn reset(&mut self, free_at: &[f64]) {
        let n = free_at.len();
        self.words = n.div_ceil(64);
        self.free_at.clear();
        self.free_at.extend_from_slice(free_at);
        self.resv.resize_with(n, Vec::new);
        for r in &mut self.resv {
            r.clear();
        }
        self.times.clear();
        self.slot_row.clear();
        self.rows.clear();
        self.ends.clear();
        self.finite.clear();
        self.finite.resize(self.words, 0);
        self.walk = false;
        self.sorted();
    }

    /// `order` sorted again (by `free_at`, then by index).
    fn sorted(&mut self) {
        let f = &self.free_at;
        let key =
            |k: u32| (u128::from(time_key(f[k as usize]) as u64 ^ (1 << 63)) << 32) | u128::from(k);
        // From the last cycle's order when there is one: mostly in order
        // still, which the (adaptive) sort runs through.
        let mut keys: Vec<u128> = if self.order.len() == f.len() {
            self.order.iter().map(|&k| key(k)).collect()
        } else {
            (0..f.len() as u32).map(key).collect()
        };
        keys.sort();
        self.order.clear();
        self.order.extend(keys.iter().map(|&x| x as u32));
        self.marked();
    }

    /// Nodes `nodes` run a job from `now` to `end`, reserved in the map
    /// over `[now, slot_end)`.
    fn run(&mut self, nodes: &[u32], end: f64, now: f64, slot_end: f64) {
        let mut moved = vec![0u64; self.words];
        let mut ks: Vec<u32> = Vec::with_capacity(nodes.len());
        let nodes: Vec<u32> = nodes
            .iter()
            .copied()
            .filter(|&n| (n as usize) < self.free_at.len())
            .collect();
        self.reserve(&nodes, now, slot_end);
        for &n in &nodes {
            let k = n as usize;
            {
                self.free_at[k] = end;
                if !word_bit(&moved, k) {
                    set_word_bit(&mut moved, k);
                    ks.push(n);
                }
            }
        }
        // `order` again: the moved nodes merged into the others.
        let f = &self.free_at;
        let key = |k: u32| (time_key(f[k as usize]), k);
        ks.sort_unstable_by_key(|&k| key(k));
        let mut rest = core::mem::take(&mut self.order);
        rest.retain(|&k| !word_bit(&moved, k as usize));
        let mut order = Vec::with_capacity(f.len());
        let mut b = ks.iter().peekable();
        for k in rest {
            while let Some(&&m) = b.peek() {
                if key(m) < key(k) {
                    order.push(m);
                    b.next();
                } else {
                    break;
                }
            }
            order.push(k);
        }
        order.extend(b);
        self.order = order;
        self.marked();
    }

    /// `finite` and `marks` again after `order` changed.
    fn marked(&mut self) {
        let w = self.words;
        self.finite.fill(0);
        for (k, t) in self.free_at.iter().enumerate() {
            if t.is_finite() {
                set_word_bit(&mut self.finite, k);
            }
        }
        self.marks.clear();
        self.marks.resize((self.order.len() / 64 + 1) * w, 0);
        for (i, &k) in self.order.iter().enumerate() {
            let k = k as usize;
            // Node `i` of the order is among the first `64 q` for every
            // q > i / 64.
            let q = i / 64 + 1;
            if q * w < self.marks.len() {
                set_word_bit(&mut self.marks[q * w..], k);
            }
        }
        for q in 1..self.marks.len() / w {
            for i in 0..w {
                self.marks[q * w + i] |= self.marks[(q - 1) * w + i];
            }
        }
    }

    /// How many of the nodes `set` (a bitmap) are among the first `len`
    /// of `order`.
    fn among_first(&self, set: &[u64], len: usize) -> usize {
        let w = self.words;
        let q = len / 64;
        let mark = &self.marks[q * w..(q + 1) * w];
        let whole: usize = set
            .iter()
            .zip(mark)
            .map(|(s, m)| (s & m).count_ones() as usize)
            .sum();
        whole
            + self.order[q * 64..len]
                .iter()
                .filter(|&&k| word_bit(set, k as usize))
                .count()
    }

    /// The nodes reserved in slot `j`.
    fn row(&self, j: usize) -> &[u64] {
        let at = self.slot_row[j] as usize * self.words;
        &self.rows[at..at + self.words]
    }

    /// The slot beginning at `t`, splitting the one holding `t` if none
    /// does.
    fn boundary(&mut self, t: f64) -> usize {
        let j = self.times.partition_point(|x| x.total_cmp(&t).is_lt());
        if self.times.get(j).is_some_and(|x| x.total_cmp(&t).is_eq()) {
            return j;
        }
        let row = (self.rows.len() / self.words) as u32;
        if j == 0 {
            self.rows.extend(core::iter::repeat_n(0, self.words));
        } else {
            let at = self.slot_row[j - 1] as usize * self.words;
            self.rows.extend_from_within(at..at + self.words);
        }
        self.times.insert(j, t);
        self.slot_row.insert(j, row);
        j
    }

    /// Reserves nodes `nodes` over `[s, e)`.
    fn reserve(&mut self, nodes: &[u32], s: f64, e: f64) {
        if nodes.is_empty() {
            return;
        }
        if e <= s {
            // An empty or reversed reservation reserves no slot, but the
            // nodes' lists hold it: the test walks them.
            self.walk = true;
        }
        let js = self.boundary(s);
        let je = self.boundary(e);
        for j in js..je {
            let at = self.slot_row[j] as usize * self.words;
            for &k in nodes {
                let k = k as usize;
                set_word_bit(&mut self.rows[at..], k);
            }
        }
        self.ends.insert(time_key(e), e);
        for &k in nodes {
            self.reserve_node(k as usize, s, e);
        }
    }

    /// Adds `[s, e)` to node `k`'s list.
    fn reserve_node(&mut self, k: usize, s: f64, e: f64) {
        let rs = &mut self.resv[k];
        let lo = rs.partition_point(|r| r.1 < s);
        let hi = rs.partition_point(|r| r.0 <= e);
        if lo < hi {
            let merged = (s.min(rs[lo].0), e.max(rs[hi - 1].1));
            rs.splice(lo..hi, [merged]);
        } else {
            rs.insert(lo, (s, e));
        }
    }

    /// Node `k`'s first reservation ending after `t`.
    fn next_after(&self, k: usize, t: f64) -> Option<(f64, f64)> {
        let rs = &self.resv[k];
        rs.get(rs.partition_point(|r| r.1 <= t)).copied()
    }

    /// The first end of a reservation after `t` (infinity if none).
    fn end_after(&self, t: f64) -> f64 {
        use core::ops::Bound::{Excluded, Unbounded};
        self.ends
            .range((Excluded(time_key(t)), Unbounded))
            .next()
            .map_or(f64::INFINITY, |(_, &t)| t)
    }

    /// When and on which nodes a job of `need` nodes and `tl` seconds
    /// is planned (`_attempt_backfill`): from `start` = now, the nodes
    /// no reservation holds over `[start, start + tl]`; the will-run test
    /// on them; if the nodes it picks meet a reservation over the job's
    /// slot (`slot`: rounded start and end), or it finds no room before
    /// the map next frees a reserved node, the test is repeated from then
    /// (`later_start`, [`NodePlan::later_from`]). Infinity when nothing
    /// is found within `horizon`.
    fn will_run(
        &mut self,
        now: f64,
        need: usize,
        tl: f64,
        horizon: f64,
        slot: impl Fn(f64) -> (f64, f64),
    ) -> (f64, Vec<u32>) {
        // A job of no time is blocked by the reservations holding its
        // start strictly inside, which the slots beginning or ending
        // there do not tell: it walks the lists too.
        if self.walk || tl <= 0.0 {
            return self.will_run_walk(now, need, tl, horizon, slot);
        }
        let mut sc = core::mem::take(&mut self.scratch);
        let got = self.will_run_in(&mut sc, now, need, tl, horizon, slot);
        self.scratch = sc;
        got
    }

    /// When the running jobs leave `need` nodes free at the earliest
    /// (reservations aside; `now` for no node): a test whose running jobs
    /// all end before then finds no room, and is skipped for its
    /// `later_start`. `None` if they never do within the plan.
    fn enough(&self, now: f64, need: usize) -> Option<f64> {
        match need.checked_sub(1) {
            None => Some(now),
            Some(j) => self
                .order
                .get(j)
                .map(|&k| self.free_at[k as usize])
                .filter(|t| t.is_finite()),
        }
    }

    /// [`NodePlan::will_run`] with its buffers.
    fn will_run_in(
        &self,
        sc: &mut Scratch,
        now: f64,
        need: usize,
        tl: f64,
        horizon: f64,
        slot: impl Fn(f64) -> (f64, f64),
    ) -> (f64, Vec<u32>) {
        let Some(enough) = self.enough(now, need) else {
            return (f64::INFINITY, Vec::new());
        };
        let w = self.words;
        let m = self.times.len();
        // The slots over the job's `[start, end)`: from the one holding
        // `start` (`p0` boundaries by `start`) to the last beginning
        // before `end` (`pend` boundaries before it).
        let mut p0 = 0usize;
        let mut pend = 0usize;
        let Scratch {
            usable,
            at_start,
            prefix,
            taken,
            cands,
            suffix,
            back,
        } = sc;
        let mut reserved = SlidingUnion::new(w, suffix, back);
        // The usable nodes (free within the plan, no reservation over
        // `[start, end)`), and the nodes free within the plan and not
        // reserved at `start`.
        usable.clear();
        usable.resize(w, 0);
        at_start.clear();
        at_start.resize(w, 0);
        // How many of the order are free by the test's `by`, and those
        // nodes as a bitmap.
        let n = self.order.len();
        let mut free_by = 0usize;
        let mut prefix_len = 0usize;
        prefix.clear();
        prefix.resize(w, 0);
        let mut start = now;
        while start <= horizon {
            let end = start + tl;
            while p0 < m && self.times[p0] <= start {
                p0 += 1;
            }
            while pend < m && self.times[pend] < end {
                pend += 1;
            }
            let lo = p0.saturating_sub(1);
            reserved.slide(lo, pend.max(lo), |j| self.row(j));
            reserved.without(&self.finite, usable);
            match p0.checked_sub(1) {
                None => at_start.copy_from_slice(&self.finite),
                Some(j) => {
                    for ((a, f), r) in at_start.iter_mut().zip(&self.finite).zip(self.row(j)) {
                        *a = f & !r;
                    }
                }
            }
            // `later_start`: walking the slots after `start`'s while the
            // one before begins by `end`, the first at which a node free
            // at `start` becomes reserved (none does within the job's
            // slots if all those nodes are usable).
            let mut j = if *usable == *at_start {
                p0.max(pend)
            } else {
                p0
            };
            let mut later = f64::NAN;
            while j < m && (j == p0 || self.times[j - 1] <= end) {
                if self
                    .row(j)
                    .iter()
                    .zip(at_start.iter())
                    .any(|(r, a)| r & a != 0)
                {
                    later = self.times[j];
                    break;
                }
                j += 1;
            }
            if later.is_nan() {
                later = self.end_after(start);
            }
            if later < enough {
                start = later;
                continue;
            }
            // The test only frees nodes whose running jobs end by
            // `later`: too few such usable nodes, and it finds no room.
            let by = later.max(start);
            // `by` only grows: search on from the last count, by steps
            // doubling, then halving.
            let ok = |k: u32| {
                let t = self.free_at[k as usize];
                t.is_finite() && t <= by
            };
            let mut hi = free_by;
            let mut step = 1;
            while hi < n && ok(self.order[hi]) {
                free_by = hi + 1;
                hi += step;
                step *= 2;
            }
            free_by += self.order[free_by..hi.min(n)].partition_point(|&k| ok(k));
            // The first `free_by` of the order as a bitmap, from the
            // last one or the marks.
            let q = free_by / 64;
            if q > prefix_len / 64 {
                prefix.copy_from_slice(&self.marks[q * w..(q + 1) * w]);
                prefix_len = q * 64;
            }
            for &k in &self.order[prefix_len..free_by] {
                let k = k as usize;
                set_word_bit(prefix, k);
            }
            prefix_len = free_by;
            let room = if free_by < need {
                0
            } else {
                usable
                    .iter()
                    .zip(prefix.iter())
                    .map(|(u, f)| (u & f).count_ones() as usize)
                    .sum()
            };
            if room >= need
                && let Some((t, sel)) = self.fit(usable, taken, cands, start, need, later)
                && !self.clashes(&sel, slot(t))
            {
                return (t, sel);
            }
            if !later.is_finite() {
                break;
            }
            start = later;
        }
        (f64::INFINITY, Vec::new())
    }

    /// Whether a reservation on one of the nodes `sel` begins within the
    /// job's slot `(s, e)` (its rounded start and end): the test is then
    /// repeated from `later_start`.
    fn clashes(&self, sel: &[u32], (s, e): (f64, f64)) -> bool {
        sel.iter()
            .any(|&k| self.next_after(k as usize, s).is_some_and(|(rs, _)| rs < e))
    }

    /// [`NodePlan::will_run`] walking every node's list of reservations
    /// at each retry, for jobs of no time and plans holding an empty
    /// reservation (which no slot of the map shows).
    fn will_run_walk(
        &self,
        now: f64,
        need: usize,
        tl: f64,
        horizon: f64,
        slot: impl Fn(f64) -> (f64, f64),
    ) -> (f64, Vec<u32>) {
        let Some(enough) = self.enough(now, need) else {
            return (f64::INFINITY, Vec::new());
        };
        let n = self.free_at.len();
        // Whether a node is usable (free within the plan, no reservation
        // over `[start, end)`); nodes none of whose reservations end
        // after `start` stay usable, and leave `live`, which holds the
        // others with the index and bounds of their first reservation
        // not ended by `start` (`start` only grows).
        let mut usable: Vec<bool> = self.free_at.iter().map(|t| t.is_finite()).collect();
        let mut live: Vec<(usize, usize, f64, f64)> = (0..n)
            .filter(|&k| usable[k])
            .filter_map(|k| self.resv[k].first().map(|&(s, e)| (k, 0, s, e)))
            .collect();
        let mut blocked: Vec<usize> = Vec::new();
        let mut set = vec![0u64; self.words];
        let (mut taken, mut cands) = (Vec::new(), Vec::new());
        let mut start = now;
        while start <= horizon {
            let end = start + tl;
            // One walk over the nodes still reserved after `start`: the
            // ones reserved over `[start, end)`, and the earliest
            // reservation after `start` of a node free at `start` (see
            // [`NodePlan::later_from`]).
            blocked.clear();
            let mut first = f64::INFINITY;
            live.retain_mut(|(k, j, s, e)| {
                if *e <= start {
                    let rs = &self.resv[*k];
                    while *j < rs.len() && rs[*j].1 <= start {
                        *j += 1;
                    }
                    match rs.get(*j) {
                        Some(&r) => (*s, *e) = r,
                        None => {
                            usable[*k] = true;
                            return false;
                        }
                    }
                }
                if *s > start {
                    first = first.min(*s);
                }
                usable[*k] = *s >= end;
                if !usable[*k] {
                    blocked.push(*k);
                }
                true
            });
            let later = self.later_from(start, end, first);
            if later < enough {
                start = later;
                continue;
            }
            // The test only frees nodes whose running jobs end by
            // `later`: too few such usable nodes, and it finds no room.
            let by = later.max(start);
            let free_by = self.order.partition_point(|&k| {
                let t = self.free_at[k as usize];
                t.is_finite() && t <= by
            });
            let room = if free_by < need {
                0
            } else {
                free_by - blocked.iter().filter(|&&k| self.free_at[k] <= by).count()
            };
            if room >= need
                && let Some((t, sel)) = {
                    set.fill(0);
                    for k in (0..n).filter(|&k| usable[k]) {
                        set_word_bit(&mut set, k);
                    }
                    self.fit(&set, &mut taken, &mut cands, start, need, later)
                }
                && !self.clashes(&sel, slot(t))
            {
                return (t, sel);
            }
            if !later.is_finite() {
                break;
            }
            start = later;
        }
        (f64::INFINITY, Vec::new())
    }

    /// When the test from `start` (a job to `end`) is repeated if it
    /// fails (`later_start`): the first boundary of the map, walking its
    /// slots from `start` while they begin by `end`, at which a node
    /// still usable in every slot before it becomes reserved; else the
    /// first end of a reservation after `start`. Infinity when neither.
    ///
    /// `first` is the earliest first reservation after `start` of a node
    /// free at `start` (infinity if none): a node usable before boundary
    /// b and reserved at b has a reservation beginning at b, so the first
    /// such b is `first`.
    fn later_from(&self, start: f64, end: f64, first: f64) -> f64 {
        if first.is_finite() {
            // The walk reaches `first` if the boundary before it begins
            // by `end`.
            let a = self.times.partition_point(|x| x.total_cmp(&start).is_le());
            let b = self.times.partition_point(|x| x.total_cmp(&first).is_lt());
            let prev = if b > a { self.times[b - 1] } else { start };
            if prev <= end {
                return first;
            }
        }
        self.end_after(start)
    }

    /// The will-run test on the nodes `usable` (a bitmap) from `start`:
    /// the lowest `need` nodes free then, else the running jobs removed
    /// group by group (ending within [`WILL_RUN_WINDOW`] of the first's
    /// end rounded up to it, the window doubling after each failed group;
    /// none ending after `later`) until `need` nodes are free; the lowest
    /// of those, from the latest end among them (`_get_last_relevant_job`).
    /// It reads the nodes in order of their ends only as far as it needs.
    /// `taken` and `cands` are buffers.
    fn fit(
        &self,
        usable: &[u64],
        taken: &mut Vec<u64>,
        cands: &mut Vec<usize>,
        start: f64,
        need: usize,
        later: f64,
    ) -> Option<(f64, Vec<u32>)> {
        let total: usize = usable.iter().map(|x| x.count_ones() as usize).sum();
        if total < need {
            return None;
        }
        let order = &self.order;
        let free_at = &self.free_at;
        // The usable nodes free by `start` (the first `pos` of the
        // order), then those free by each end read: `count` of them.
        let mut pos = order.partition_point(|&k| free_at[k as usize] <= start);
        let mut count = self.among_first(usable, pos);
        // Reads every usable node free by `t`.
        let read_to = |t: f64, pos: &mut usize, count: &mut usize| {
            while let Some(&k) = order.get(*pos) {
                let k = k as usize;
                if free_at[k] > t {
                    break;
                }
                if word_bit(usable, k) {
                    *count += 1;
                }
                *pos += 1;
            }
        };
        // The next usable node's end (from `pos`), if any.
        let peek = |pos: &mut usize| -> Option<f64> {
            while let Some(&k) = order.get(*pos) {
                let k = k as usize;
                if word_bit(usable, k) {
                    return Some(free_at[k]).filter(|t| t.is_finite());
                }
                *pos += 1;
            }
            None
        };
        // The usable nodes among the first `pos` of the order, in index
        // order, best fit.
        let pick = |pos: usize, taken: &mut Vec<u64>, c: &mut Vec<usize>| -> Vec<u32> {
            let w = self.words;
            let q = pos / 64;
            taken.clear();
            taken.extend_from_slice(&self.marks[q * w..(q + 1) * w]);
            for &k in &order[q * 64..pos] {
                let k = k as usize;
                set_word_bit(taken, k);
            }
            c.clear();
            for (i, (&x, &u)) in taken.iter().zip(usable).enumerate() {
                let mut x = x & u;
                while x != 0 {
                    c.push(i * 64 + x.trailing_zeros() as usize);
                    x &= x - 1;
                }
            }
            best_fit(c, need)
        };
        if count >= need {
            return Some((start, pick(pos, taken, cands)));
        }
        let first = peek(&mut pos)?;
        let bound = first - first.rem_euclid(WILL_RUN_WINDOW) + WILL_RUN_WINDOW;
        let mut window = WILL_RUN_WINDOW;
        loop {
            // One group: the ends up to `later` within the window.
            let mut more = true;
            let mut read = false;
            loop {
                let Some(e) = peek(&mut pos) else {
                    more = false;
                    break;
                };
                if e > later {
                    more = false;
                    break;
                }
                read_to(e, &mut pos, &mut count);
                read = true;
                match peek(&mut pos) {
                    None => {
                        more = false;
                        break;
                    }
                    Some(n) if n > bound + window => break,
                    Some(_) => {}
                }
            }
            if read && count >= need {
                let sel = pick(pos, taken, cands);
                let t = sel
                    .iter()
                    .map(|&x| self.free_at[x as usize])
                    .fold(start, f64::max);
                return Some((t, sel));
            }
            if !more {
                return None;
            }
            window *= 2.0;
            while peek(&mut pos).is_some_and(|n| n > bound + window) {
                window *= 2.0;
            }
        }
    }
}

/// The earliest time from `now` at which partition `part`'s classes of
/// nodes have `need` nodes free together over `duration`.
fn earliest_in(sp: &Split, part: usize, now: f64, need: i64, duration: f64) -> f64 {
    let classes = &sp.part_classes[part];
    let mut times: Vec<f64> = vec![now];
    for &c in classes {
        times.extend(
            sp.plans[c]
                .breakpoints()
                .iter()
                .copied()
                .filter(|&t| t > now),
        );
    }
    times.sort_by(f64::total_cmp);
    times.dedup();
    times
        .into_iter()
        .find(|&t| {
            classes
                .iter()
                .map(|&c| sp.plans[c].min_over(t, t + duration).max(0))
                .sum::<i64>()
                >= need
        })
        .unwrap_or(f64::INFINITY)
}

impl Scheduler for SlurmPolicy {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn submit(&mut self, job: Job, now: f64) -> Result<(), ScheduleError> {
        check_job(&job)?;
        let r = self
            .jobs
            .resolve(
                job.id,
                job.estimate,
                &self.conf,
                &self.tree,
                &self.qos,
                &mut self.users,
            )
            .map_err(|e| ScheduleError::Policy {
                policy: "slurm".into(),
                reason: e.to_string(),
            })?;
        let parts =
            self.jobs
                .partitions(job.id, &self.conf)
                .map_err(|e| ScheduleError::Policy {
                    policy: "slurm".into(),
                    reason: e.to_string(),
                })?;
        // A job over a limit of a QOS with DenyOnLimit is refused: sbatch
        // fails, the job is never queued.
        if let Some(why) = self.denied(&r, job.nodes()) {
            self.refused.push((job.id, why));
            return Ok(());
        }
        let cpus = job.nodes() * u64::from(self.conf.cpus_per_node);
        let tier = parts
            .iter()
            .map(|&p| self.conf.partitions[p].priority_tier)
            .max()
            .unwrap_or(0);
        // Age accrues from eligibility; with ACCRUE_ALWAYS from submission
        // (`acct_policy_handle_accrue_time`, `src/slurmctld/acct_policy.c`).
        let submit = self
            .jobs
            .get(job.id)
            .and_then(|a| a.submit)
            .filter(|_| self.conf.priority.accrue_always)
            .map_or(job.arrival, |s| (s as f64).min(job.arrival));
        self.pending.push(Pending {
            job,
            r,
            parts,
            per_part: Vec::new(),
            cpus,
            accrue: submit,
            tier,
            prio: 1,
            factors: Factors::default(),
            reason: Reason::None,
            planned: None,
        });
        let i = self.pending.len() - 1;
        self.reprioritize(i, now);
        self.sorted = false;
        // A submission only queues a main pass (`queue_job_scheduler`,
        // `_slurm_rpc_submit_batch_job`); a job's end runs one at once
        // (`_slurm_rpc_epilog_complete` calls `schedule`).
        self.queued_main = true;
        self.dirty_bf = true;
        Ok(())
    }

    fn schedule(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        // Nodes whose completing time has passed are free; the others are
        // held from the allocator for the passes (on a machine where the
        // allocator cannot hold them as one request, they are not held).
        let mut completing = 0u64;
        let before = self.completing_nodes.len();
        self.completing_nodes.retain(|&(until, n)| {
            let keep = until > now;
            if keep {
                completing += n;
            }
            keep
        });
        if self.completing_nodes.len() < before {
            self.dirty_main = true;
            self.dirty_bf = true;
        }
        self.completing_ids.retain(|(until, _)| *until > now);
        // With partitions on part of the nodes, the ended jobs' own nodes
        // are held (their partitions' jobs must not see them free), where
        // the allocator grants chosen nodes.
        let exact = (completing > 0 && self.split.is_some())
            .then(|| {
                let mut ids: Vec<u32> = self
                    .completing_ids
                    .iter()
                    .flat_map(|(_, ids)| ids.iter().copied())
                    .filter(|&n| alloc.is_available(n))
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                let count = u32::try_from(ids.len()).ok().filter(|&c| c > 0)?;
                alloc
                    .allocate_at(
                        &partalloc_allocators::Request::Nodes { count },
                        &partalloc_allocators::Partition::Nodes(ids),
                    )
                    .ok()
            })
            .flatten();
        let hold = match exact {
            Some(g) => Some(g),
            None => u32::try_from(completing)
                .ok()
                .filter(|&count| count > 0)
                .and_then(|count| {
                    alloc
                        .allocate(&partalloc_allocators::Request::Nodes { count })
                        .ok()
                }),
        };
        let result = self.passes(now, alloc, started);
        if let Some(g) = hold {
            alloc.release(&g).map_err(|e| ScheduleError::Policy {
                policy: "slurm".into(),
                reason: format!("the allocator refused the completing nodes back: {e}"),
            })?;
        }
        result
    }

    fn departed(&mut self, job: &Job, now: f64) {
        let victim = match self.victims.iter().position(|&id| id == job.id) {
            Some(k) => {
                self.victims.swap_remove(k);
                true
            }
            None => false,
        };
        let Some(r) = self.running.remove(&job.id) else {
            return;
        };
        if let Some(k) = self.requeue.iter().position(|&id| id == job.id) {
            // A requeued job waits again, eligible after the requeue
            // delay (squeue: BeginTime until then).
            self.requeue.swap_remove(k);
            let begin = now + self.conf.sched.requeue_delay as f64 + 1.0;
            let mut p = r.pending.clone();
            p.accrue = begin;
            p.reason = Reason::Limit("BeginTime");
            p.planned = Some(begin);
            self.held.push((begin, p));
        }
        let from = self.last_calc.map_or(r.start, |l| l.max(r.start));
        let amount = self.fs.charge(now - from, r.billing, r.usage_factor);
        self.fs.add(&self.tree, r.assoc, amount);
        let seconds = self.fs.charge(now - from, 1.0, r.usage_factor);
        self.counters.charge_usage(&self.tree, &r.claim, seconds);
        self.counters.apply(&self.tree, &r.claim, -1);
        if self.completing > 0.0 && !victim {
            // Its nodes complete first; their epilog's end runs the main
            // scheduler then.
            self.completing_nodes
                .push((now + self.completing, r.granted));
            if !r.nodes.is_empty() {
                self.completing_ids
                    .push((now + self.completing, r.nodes.clone()));
            }
        } else {
            self.dirty_main = true;
            self.dirty_bf = true;
        }
    }

    fn queue_len(&self) -> usize {
        self.pending.len() + self.held.len()
    }

    fn take_preemptions(&mut self, out: &mut Vec<crate::Preemption>) {
        if self.preempted.is_empty() {
            return;
        }
        out.extend(
            self.take_preempted()
                .into_iter()
                .map(|(job, mode)| crate::Preemption {
                    job,
                    requeue: mode == super::conf::PreemptMode::Requeue,
                }),
        );
    }

    fn head(&self) -> Option<&Job> {
        self.pending.first().map(|p| &p.job)
    }

    fn next_wakeup(&self) -> Option<f64> {
        let queued = self
            .queued_main
            .then_some(self.last_queued_pass + self.conf.sched.batch_sched_delay as f64);
        let begin = self
            .held
            .iter()
            .map(|h| h.0)
            .chain(self.completing_nodes.iter().map(|c| c.0))
            .chain(queued)
            .reduce(f64::min);
        if self.pending.is_empty() {
            return begin;
        }
        if self.running.is_empty() {
            // An idle machine: only jobs the last event pass did not reach
            // may still start, at the next full pass.
            let full = self.unexamined.then_some(self.next_sched);
            return match (full, begin) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        let mut t = self.next_sched;
        if self.conf.sched.backfill && self.next_bf > self.now_seen {
            t = t.min(self.next_bf);
        }
        Some(begin.map_or(t, |b| b.min(t)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The select plugin's best fit of consecutive nodes: the smallest
    /// run that suffices, its lowest nodes; while none suffices, the
    /// largest run whole, then again for the rest.
    #[test]
    fn best_fit_takes_the_smallest_run_that_suffices() {
        let cands = [0, 1, 2, 5, 6, 9];
        assert_eq!(best_fit(&cands, 1), vec![9]);
        assert_eq!(best_fit(&cands, 2), vec![5, 6]);
        assert_eq!(best_fit(&cands, 3), vec![0, 1, 2]);
        assert_eq!(best_fit(&cands, 4), vec![0, 1, 2, 9]);
        assert_eq!(best_fit(&cands, 6), vec![0, 1, 2, 5, 6, 9]);
    }

    /// The best fit as its rule reads (the smallest run that suffices by
    /// length then place, else the largest by length then place, runs
    /// swapped out as taken): the oracle for [`best_fit`].
    fn best_fit_plain(cands: &[usize], need: usize) -> Vec<u32> {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for &k in cands {
            match runs.last_mut() {
                Some((f, l)) if *f + *l == k => *l += 1,
                _ => runs.push((k, 1)),
            }
        }
        let mut out = Vec::new();
        let mut left = need;
        while left > 0 && !runs.is_empty() {
            let fit = runs
                .iter()
                .enumerate()
                .filter(|(_, r)| r.1 >= left)
                .min_by_key(|(j, r)| (r.1, *j))
                .map(|(j, _)| j);
            let j = fit.unwrap_or_else(|| {
                runs.iter()
                    .enumerate()
                    .max_by_key(|(j, r)| (r.1, core::cmp::Reverse(*j)))
                    .map_or(0, |(j, _)| j)
            });
            let (f, l) = runs.swap_remove(j);
            let take = l.min(left);
            out.extend((f..f + take).map(|k| k as u32));
            left -= take;
        }
        out.sort_unstable();
        out
    }

    /// Random candidate sets (runs of every length, ties of length)
    /// give the same nodes from [`best_fit`] as from its rule read plainly.
    #[test]
    fn best_fit_agrees_with_its_rule() {
        let mut x: u64 = 0x1234_5678_9abc_def1;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..2000 {
            let n = 1 + rnd(150) as usize;
            let dense = 1 + rnd(9);
            let cands: Vec<usize> = (0..n).filter(|_| rnd(10) < dense).collect();
            let need = 1 + rnd(cands.len() as u64 + 2) as usize;
            assert_eq!(best_fit(&cands, need), best_fit_plain(&cands, need));
        }
    }

    /// The will-run test: J needs 2 nodes; node 0 is free now, node 1
    /// frees at 100, node 2 at 110 and node 3 at 200. The first group
    /// holds the jobs ending within 30 s of 100 rounded up to 30 (120):
    /// up to 150, so nodes 0–2 are free; the best fit of the run 0–2 is
    /// nodes 0 and 1, and J is planned at 100. A reservation of node 1
    /// over J's whole slot moves it: nodes 0 and 2, at 110.
    #[test]
    fn the_will_run_test_plans_at_the_latest_end_of_the_nodes_chosen() {
        let mut np = NodePlan::new(vec![0.0, 100.0, 110.0, 200.0]);
        let slot = |t: f64| (t, t + 60.0);
        assert_eq!(np.will_run(0.0, 2, 60.0, 1e9, slot), (100.0, vec![0, 1]));
        np.reserve(&[1], 0.0, 1000.0);
        assert_eq!(np.will_run(0.0, 2, 60.0, 1e9, slot), (110.0, vec![0, 2]));
        // Three nodes: node 1 is reserved, so node 3 (free at 200).
        assert_eq!(np.will_run(0.0, 3, 60.0, 1e9, slot), (200.0, vec![0, 2, 3]));
    }

    /// The will-run test as its rule reads, walking every node at each
    /// retry and sorting the ends: the oracle for [`NodePlan::will_run`].
    fn will_run_plain(
        np: &NodePlan,
        now: f64,
        need: usize,
        tl: f64,
        horizon: f64,
        slot: impl Fn(f64) -> (f64, f64),
    ) -> (f64, Vec<u32>) {
        let n = np.free_at.len();
        let mut start = now;
        while start <= horizon {
            let end = start + tl;
            let first = (0..n)
                .filter(|&k| np.free_at[k].is_finite())
                .filter_map(|k| np.next_after(k, start).map(|r| r.0))
                .filter(|&s| s > start)
                .fold(f64::INFINITY, f64::min);
            let later = np.later_from(start, end, first);
            let avail: Vec<usize> = (0..n)
                .filter(|&k| {
                    np.free_at[k].is_finite()
                        && np.next_after(k, start).is_none_or(|(s, _)| s >= end)
                })
                .collect();
            let free_by = |t: f64| -> Vec<usize> {
                avail
                    .iter()
                    .copied()
                    .filter(|&k| np.free_at[k] <= t)
                    .collect()
            };
            let mut got = None;
            if free_by(start).len() >= need {
                got = Some((start, best_fit(&free_by(start), need)));
            } else {
                let mut ends: Vec<f64> = avail
                    .iter()
                    .map(|&k| np.free_at[k])
                    .filter(|&t| t > start && t <= later)
                    .collect();
                ends.sort_by(f64::total_cmp);
                ends.dedup();
                if let Some(&f) = ends.first() {
                    let bound = f - f.rem_euclid(WILL_RUN_WINDOW) + WILL_RUN_WINDOW;
                    let mut window = WILL_RUN_WINDOW;
                    let mut k = 0;
                    while k < ends.len() {
                        // One group: every end within the window.
                        while k < ends.len() && (k == 0 || ends[k] <= bound + window) {
                            k += 1;
                        }
                        let c = free_by(ends[k - 1]);
                        if c.len() >= need {
                            let sel = best_fit(&c, need);
                            let t = sel
                                .iter()
                                .map(|&x| np.free_at[x as usize])
                                .fold(start, f64::max);
                            got = Some((t, sel));
                            break;
                        }
                        window *= 2.0;
                        while k < ends.len() && ends[k] > bound + window {
                            window *= 2.0;
                        }
                    }
                }
            }
            if let Some((t, sel)) = got {
                let (s, e) = slot(t);
                if !sel
                    .iter()
                    .any(|&k| np.next_after(k as usize, s).is_some_and(|(rs, _)| rs < e))
                {
                    return (t, sel);
                }
            }
            if !later.is_finite() {
                break;
            }
            start = later;
        }
        (f64::INFINITY, Vec::new())
    }

    /// Random plans (running jobs' ends, reservations, jobs) give the
    /// same start and nodes from [`NodePlan::will_run`] as from the
    /// plain walk over every node.
    #[test]
    fn the_will_run_test_agrees_with_the_plain_walk() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..300 {
            let n = 1 + rnd(24) as usize;
            let free_at: Vec<f64> = (0..n)
                .map(|_| match rnd(5) {
                    0 => 0.0,
                    1 => f64::INFINITY,
                    _ => (rnd(40) * 15) as f64,
                })
                .collect();
            let mut np = NodePlan::new(free_at);
            for _ in 0..rnd(3 * n as u64 + 1) {
                let s = (rnd(60) * 10) as f64;
                np.reserve(&[rnd(n as u64) as u32], s, s + (1 + rnd(20)) as f64 * 10.0);
            }
            for _ in 0..5 {
                let need = 1 + rnd(n as u64) as usize;
                let tl = (1 + rnd(12)) as f64 * 10.0;
                let slot = |t: f64| {
                    (
                        (t / 30.0).floor() * 30.0,
                        ((t + tl + 29.0) / 30.0).floor() * 30.0,
                    )
                };
                assert_eq!(
                    np.will_run(0.0, need, tl, 500.0, slot),
                    will_run_plain(&np, 0.0, need, tl, 500.0, slot)
                );
            }
        }
    }

    /// Larger random plans, built as a backfill cycle builds them (a plan
    /// reused with other nodes, reservations of several nodes at once,
    /// jobs started on nodes, which moves them in the order), some jobs
    /// of no time and some empty reservations: the will-run test gives
    /// the same start and nodes as the plain walk, and the order and the
    /// map's slots stay those of a plan built afresh.
    #[test]
    fn the_will_run_test_agrees_with_the_plain_walk_on_cycles() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut np = NodePlan::new(vec![0.0]);
        for round in 0..200 {
            let n = 1 + rnd(if round % 4 == 0 { 200 } else { 70 }) as usize;
            let free_at: Vec<f64> = (0..n)
                .map(|_| match rnd(5) {
                    0 => 0.0,
                    1 => f64::INFINITY,
                    _ => (rnd(40) * 15) as f64,
                })
                .collect();
            np.reset(&free_at);
            let empty = round % 5 == 0;
            for _ in 0..rnd(n as u64 / 2 + 4) {
                let k = 1 + rnd(8) as usize;
                let nodes: Vec<u32> = (0..k).map(|_| rnd(n as u64) as u32).collect();
                let s = (rnd(60) * 10) as f64;
                let e = if empty && rnd(6) == 0 {
                    s - (rnd(2) * 10) as f64
                } else {
                    s + (1 + rnd(20)) as f64 * 10.0
                };
                if rnd(4) == 0 {
                    np.run(&nodes, (rnd(60) * 10) as f64, s, e);
                } else {
                    np.reserve(&nodes, s, e);
                }
            }
            let mut fresh: Vec<u32> = (0..n as u32).collect();
            fresh.sort_by(|&a, &b| {
                np.free_at[a as usize]
                    .total_cmp(&np.free_at[b as usize])
                    .then(a.cmp(&b))
            });
            assert_eq!(np.order, fresh);
            for j in 0..np.times.len() {
                for k in 0..n {
                    // Reserved in slot j: some reservation covers it.
                    let t = np.times[j];
                    let held = np.next_after(k, t).is_some_and(|(s, _)| s <= t);
                    assert_eq!(word_bit(np.row(j), k), held, "slot {j} node {k}");
                }
            }
            for _ in 0..5 {
                let need = 1 + rnd(n as u64) as usize;
                let tl = rnd(12) as f64 * 10.0;
                let slot = |t: f64| {
                    (
                        (t / 30.0).floor() * 30.0,
                        ((t + tl + 29.0) / 30.0).floor() * 30.0,
                    )
                };
                let now = (rnd(3) * 15) as f64;
                assert_eq!(
                    np.will_run(now, need, tl, 500.0, slot),
                    will_run_plain(&np, now, need, tl, 500.0, slot),
                    "round {round}"
                );
            }
        }
    }
}
