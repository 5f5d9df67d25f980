//! The scheduling options of a `slurm.conf`: priority/multifactor's
//! weights and periods, the main and backfill schedulers' parameters,
//! preemption, limit enforcement, and the node and partition lines (how
//! many nodes, CPUs per node, each partition's tier, job factor, time
//! limit and QOS).
//!
//! Every other option is kept, by name, in [`SchedConf::not_modelled`]:
//! a run prints them in one line instead of dropping them silently.
//! Defaults are slurm.conf(5)'s (checked in `src/common/read_config.c` and
//! `src/plugins/sched/backfill/backfill.c`).

use std::collections::HashMap;

use super::error::{InputError, InputErrorKind};

/// Node names are listed (for partitions on some of the nodes) up to this
/// many nodes.
const MAX_NAMED_NODES: u64 = 1 << 20;

/// Which fair-share algorithm priority/multifactor runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FairShareAlgo {
    /// Fair Tree (the default; `src/plugins/priority/multifactor/fair_tree.c`).
    #[default]
    FairTree,
    /// The classic algorithm (`PriorityFlags=NO_FAIR_TREE`).
    Classic,
}

/// When accumulated usage is cleared (`PriorityUsageResetPeriod`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ResetPeriod {
    /// Never.
    #[default]
    None,
    /// Once, at the first priority pass.
    Now,
    /// Every this many seconds, counted from time 0 of the run.
    Every(u64),
}

/// priority/multifactor's settings.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PriorityConf {
    /// `PriorityType=priority/multifactor` (otherwise priority/basic: every
    /// job has the same priority and the queue is served by submit time).
    pub multifactor: bool,
    /// `PriorityWeightAge`.
    pub weight_age: f64,
    /// `PriorityWeightFairshare`.
    pub weight_fairshare: f64,
    /// `PriorityWeightJobSize`.
    pub weight_job_size: f64,
    /// `PriorityWeightPartition`.
    pub weight_partition: f64,
    /// `PriorityWeightQOS`.
    pub weight_qos: f64,
    /// `PriorityWeightAssoc`.
    pub weight_assoc: f64,
    /// `PriorityWeightTRES`'s CPU weight.
    pub weight_tres_cpu: f64,
    /// `PriorityWeightTRES`'s Node weight.
    pub weight_tres_node: f64,
    /// `PriorityMaxAge`, seconds.
    pub max_age: u64,
    /// `PriorityDecayHalfLife`, seconds (0: no decay).
    pub decay_half_life: u64,
    /// `PriorityUsageResetPeriod`.
    pub reset: ResetPeriod,
    /// `PriorityCalcPeriod`, seconds.
    pub calc_period: u64,
    /// `PriorityFavorSmall`.
    pub favor_small: bool,
    /// Fair Tree or classic (`PriorityFlags=NO_FAIR_TREE`).
    pub algo: FairShareAlgo,
    /// `PriorityFlags=SMALL_RELATIVE_TO_TIME`.
    pub small_relative_to_time: bool,
    /// `PriorityFlags=NO_NORMAL_PART`: the partition factor is the raw
    /// `PriorityJobFactor`.
    pub no_normal_part: bool,
    /// `PriorityFlags=NO_NORMAL_QOS`: the QOS factor is the raw priority.
    pub no_normal_qos: bool,
    /// `PriorityFlags=DEPTH_OBLIVIOUS`: the classic algorithm with an
    /// effective usage that does not shrink with depth (it turns Fair
    /// Tree off whatever the other flags say).
    pub depth_oblivious: bool,
    /// `PriorityFlags=ACCRUE_ALWAYS`: age counts from submission, held
    /// or not.
    pub accrue_always: bool,
}

impl Default for PriorityConf {
    fn default() -> Self {
        Self {
            multifactor: true,
            weight_age: 0.0,
            weight_fairshare: 0.0,
            weight_job_size: 0.0,
            weight_partition: 0.0,
            weight_qos: 0.0,
            weight_assoc: 0.0,
            weight_tres_cpu: 0.0,
            weight_tres_node: 0.0,
            max_age: 7 * 86_400,
            decay_half_life: 7 * 86_400,
            reset: ResetPeriod::None,
            calc_period: 300,
            favor_small: false,
            algo: FairShareAlgo::FairTree,
            small_relative_to_time: false,
            depth_oblivious: false,
            accrue_always: false,
            no_normal_part: false,
            no_normal_qos: false,
        }
    }
}

/// The main and backfill schedulers' parameters (`SchedulerType`,
/// `SchedulerParameters`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SchedParams {
    /// `SchedulerType=sched/backfill` (the default) and not
    /// `bf_interval=-1`; otherwise sched/builtin.
    pub backfill: bool,
    /// `default_queue_depth`: jobs an event-triggered main pass tests.
    pub default_queue_depth: usize,
    /// `sched_interval`, seconds: the period of the full main pass.
    pub sched_interval: u64,
    /// `bf_interval`, seconds.
    pub bf_interval: u64,
    /// `bf_window`, seconds (read in minutes).
    pub bf_window: u64,
    /// `bf_resolution`, seconds.
    pub bf_resolution: u64,
    /// `bf_max_job_test`.
    pub bf_max_job_test: usize,
    /// `bf_max_job_user` (0: no limit).
    pub bf_max_job_user: usize,
    /// `bf_max_job_part` (0: no limit).
    pub bf_max_job_part: usize,
    /// `bf_max_job_start`: the jobs one backfill cycle starts at most
    /// (0: no limit).
    pub bf_max_job_start: usize,
    /// `bf_continue` (read; a simulated pass never yields its locks, so it
    /// changes nothing).
    pub bf_continue: bool,
    /// `bf_min_prio_reserve` (0: every job may reserve).
    pub bf_min_prio_reserve: u32,
    /// `batch_sched_delay`, seconds: a submission queues a main pass
    /// that slurmctld's background loop runs once this long has passed
    /// since its last one (default 3).
    pub batch_sched_delay: u64,
    /// `requeue_delay`, seconds: a requeued job waits this long plus one
    /// second before it is eligible again (default: the credential
    /// lifetime, 120 s; `_requeue_delay` in `src/slurmctld/job_mgr.c`).
    pub requeue_delay: u64,
}

impl Default for SchedParams {
    fn default() -> Self {
        Self {
            backfill: true,
            default_queue_depth: 100,
            sched_interval: 60,
            bf_interval: 30,
            bf_window: 86_400,
            bf_resolution: 60,
            bf_max_job_test: 500,
            bf_max_job_user: 0,
            bf_max_job_part: 0,
            bf_max_job_start: 0,
            bf_continue: false,
            bf_min_prio_reserve: 0,
            requeue_delay: 120,
            batch_sched_delay: 3,
        }
    }
}

/// Which preemption plugin runs (`PreemptType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PreemptType {
    /// preempt/none.
    #[default]
    None,
    /// preempt/qos: a job may preempt jobs of the QOS its QOS lists.
    Qos,
    /// preempt/partition_prio: a job may preempt jobs of partitions of a
    /// lower `PriorityTier`.
    PartitionPrio,
}

/// What happens to a preempted job (`PreemptMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PreemptMode {
    /// OFF.
    #[default]
    Off,
    /// CANCEL: the victim is cancelled.
    Cancel,
    /// REQUEUE: the victim goes back to the queue.
    Requeue,
}

/// Preemption settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct PreemptConf {
    /// `PreemptType`.
    pub kind: PreemptType,
    /// `PreemptMode`.
    pub mode: PreemptMode,
    /// `PreemptExemptTime`, seconds (0: none).
    pub exempt_time: u64,
}

/// A `PartitionName` line.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PartitionConf {
    /// Its name.
    pub name: String,
    /// Nodes it has.
    pub nodes: u64,
    /// Its nodes as indices in the order of the `NodeName` lines (node k
    /// of those lines is node k of the machine), when it has only some of
    /// them; `None`: every node.
    pub node_ids: Option<Vec<u32>>,
    /// `PriorityJobFactor` (or `Priority`).
    pub priority_job_factor: u32,
    /// `PriorityTier` (or `Priority`).
    pub priority_tier: u32,
    /// `MaxTime`, seconds (`None`: unlimited).
    pub max_time: Option<u64>,
    /// `DefaultTime`, seconds, for jobs without a time limit.
    pub default_time: Option<u64>,
    /// `Default=YES`.
    pub default: bool,
    /// `QOS`: the partition's QOS.
    pub qos: Option<String>,
    /// `PreemptMode` of the partition, when set.
    pub preempt_mode: Option<PreemptMode>,
    /// `TRESBillingWeights`' CPU and Node weights (`None`: a job's billing
    /// is its CPU count).
    pub billing: Option<(f64, f64)>,
    /// The line it was read from.
    pub line: usize,
}

/// What a `slurm.conf` says about scheduling.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SchedConf {
    /// The file read.
    pub source: String,
    /// priority/multifactor.
    pub priority: PriorityConf,
    /// The main and backfill schedulers.
    pub sched: SchedParams,
    /// Preemption.
    pub preempt: PreemptConf,
    /// `AccountingStorageEnforce` includes `limits` (or `safe`): QOS and
    /// association limits hold jobs.
    pub enforce_limits: bool,
    /// Nodes of all `NodeName` lines.
    pub nodes: u64,
    /// CPUs per node (the `CPUs` of the `NodeName` lines; they must agree).
    pub cpus_per_node: u32,
    /// The partitions, in file order.
    pub partitions: Vec<PartitionConf>,
    /// Options read but not modelled, by name, in file order.
    pub not_modelled: Vec<String>,
}

impl Default for SchedConf {
    fn default() -> Self {
        Self {
            source: "slurm.conf".into(),
            priority: PriorityConf::default(),
            sched: SchedParams::default(),
            preempt: PreemptConf::default(),
            enforce_limits: false,
            nodes: 0,
            cpus_per_node: 1,
            partitions: Vec::new(),
            not_modelled: Vec::new(),
        }
    }
}

/// A Slurm duration in seconds: `minutes`, `minutes:seconds`,
/// `hours:minutes:seconds`, `days-hours`, `days-hours:minutes`,
/// `days-hours:minutes:seconds`; `UNLIMITED`/`INFINITE` is `None`
/// (`time_str2mins`, `src/common/parse_time.c`).
///
/// ```
/// use partalloc_schedulers::slurm::conf::duration;
/// assert_eq!(duration("7-0"), Ok(Some(7 * 86_400)));
/// assert_eq!(duration("90"), Ok(Some(5_400)));
/// assert_eq!(duration("1:02:03"), Ok(Some(3_723)));
/// assert_eq!(duration("UNLIMITED"), Ok(None));
/// assert!(duration("1:2:3:4").is_err());
/// ```
///
/// # Errors
/// A text in none of these forms.
pub fn duration(text: &str) -> Result<Option<u64>, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("unlimited") || t.eq_ignore_ascii_case("infinite") {
        return Ok(None);
    }
    let bad = || {
        "is not a duration (minutes, minutes:seconds, hours:minutes:seconds, days-hours[:minutes[:seconds]] or UNLIMITED)"
            .to_owned()
    };
    let num = |s: &str| -> Result<u64, String> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 12 {
            return Err(bad());
        }
        s.parse::<u64>().map_err(|_| bad())
    };
    let secs = if let Some((d, rest)) = t.split_once('-') {
        let parts: Vec<&str> = rest.split(':').collect();
        let hms = match parts.as_slice() {
            [h] => num(h)? * 3600,
            [h, m] => num(h)? * 3600 + num(m)? * 60,
            [h, m, s] => num(h)? * 3600 + num(m)? * 60 + num(s)?,
            _ => return Err(bad()),
        };
        num(d)? * 86_400 + hms
    } else {
        let parts: Vec<&str> = t.split(':').collect();
        match parts.as_slice() {
            [m] => num(m)? * 60,
            [m, s] => num(m)? * 60 + num(s)?,
            [h, m, s] => num(h)? * 3600 + num(m)? * 60 + num(s)?,
            _ => return Err(bad()),
        }
    };
    Ok(Some(secs))
}

/// Reads an option's whole number (key, value).
type ReadInt<'a> = dyn Fn(&str, &str) -> Result<u64, InputError> + 'a;
/// Reads an option's duration (key, value).
type ReadDuration<'a> = dyn Fn(&str, &str) -> Result<Option<u64>, InputError> + 'a;
/// The error for an option's value (key, value, reason).
type BadValue<'a> = dyn Fn(&str, &str, String) -> InputError + 'a;

fn yes(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "yes" | "1" | "true" => Some(true),
        "no" | "0" | "false" => Some(false),
        _ => None,
    }
}

/// The `Key=Value` words of a line (`#` starts a comment).
fn words(line: &str) -> impl Iterator<Item = &str> {
    let body = line.split('#').next().unwrap_or("");
    body.split_whitespace()
}

impl SchedConf {
    /// Reads a `slurm.conf` text; `source` names it in errors.
    ///
    /// ```
    /// use partalloc_schedulers::slurm::conf::{FairShareAlgo, SchedConf};
    /// let c = SchedConf::parse("NodeName=n[1-4] CPUs=8\n\
    ///     PartitionName=batch Nodes=ALL Default=YES PriorityJobFactor=10\n\
    ///     PriorityWeightAge=1000\nPriorityFlags=NO_FAIR_TREE\n\
    ///     SchedulerParameters=bf_interval=10,bf_window=60\nMailProg=/bin/true\n", "s.conf")?;
    /// assert_eq!((c.nodes, c.cpus_per_node, c.partitions[0].nodes), (4, 8, 4));
    /// assert_eq!((c.sched.bf_interval, c.sched.bf_window), (10, 3600));
    /// assert_eq!(c.priority.algo, FairShareAlgo::Classic);
    /// assert_eq!(c.not_modelled, ["MailProg"]);
    /// # Ok::<(), partalloc_schedulers::slurm::InputError>(())
    /// ```
    ///
    /// # Errors
    /// A word that is not `Key=Value`, a value that cannot be read, CPU
    /// counts that differ between node lines, a partition naming an
    /// unknown node count, two partitions with one name, no node line.
    pub fn parse(text: &str, source: &str) -> Result<Self, InputError> {
        let mut c = Self {
            source: source.to_owned(),
            ..Self::default()
        };
        let mut cpus: Option<(u32, usize)> = None;
        let mut node_names: Vec<String> = Vec::new();
        // Partitions on some nodes: (partition, hostlist, line), resolved
        // once every NodeName line is read.
        let mut subsets: Vec<(usize, String, usize)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let err = |kind| InputError::at(source, n, kind);
            let bad = |key: &str, value: &str, reason: String| {
                err(InputErrorKind::BadValue {
                    key: key.to_owned(),
                    value: partalloc_topology::echo(value),
                    reason,
                })
            };
            let mut pairs = Vec::new();
            for w in words(line) {
                let (k, v) = w
                    .split_once('=')
                    .ok_or_else(|| err(InputErrorKind::NotKeyValue(partalloc_topology::echo(w))))?;
                pairs.push((k, v));
            }
            let Some(&(first, value)) = pairs.first() else {
                continue;
            };
            let key = first.to_ascii_lowercase();
            let int = |k: &str, v: &str| -> Result<u64, InputError> {
                v.parse::<u64>()
                    .map_err(|_| bad(k, v, "is not a whole number".into()))
            };
            let dur = |k: &str, v: &str| -> Result<Option<u64>, InputError> {
                duration(v).map_err(|r| bad(k, v, r))
            };
            match key.as_str() {
                "nodename" => {
                    if value.eq_ignore_ascii_case("default") {
                        c.not_modelled.push("NodeName=DEFAULT".into());
                        continue;
                    }
                    let count = partalloc_topology::slurm::hostlist::count(value)
                        .map_err(|e| bad(first, value, e.to_string()))?;
                    // Names are kept only while they are few enough to
                    // list (a partition on some of them needs them).
                    if node_names.len() as u64 + count <= MAX_NAMED_NODES {
                        node_names.extend(
                            partalloc_topology::slurm::hostlist::expand(value)
                                .map_err(|e| bad(first, value, e.to_string()))?,
                        );
                    }
                    let mut node_cpus = 1u32;
                    for &(k, v) in &pairs[1..] {
                        if k.eq_ignore_ascii_case("cpus") || k.eq_ignore_ascii_case("procs") {
                            node_cpus = u32::try_from(int(k, v)?)
                                .ok()
                                .filter(|&x| x > 0)
                                .ok_or_else(|| {
                                    bad(k, v, "must be a positive whole number".into())
                                })?;
                        } else {
                            c.not_modelled.push(format!("NodeName {k}"));
                        }
                    }
                    if let Some((seen, at)) = cpus
                        && seen != node_cpus
                    {
                        return Err(err(InputErrorKind::Machine(format!(
                            "CPUs={node_cpus} differs from CPUs={seen} on line {at}; this model needs one CPU count for every node"
                        ))));
                    }
                    cpus = Some((node_cpus, n));
                    c.cpus_per_node = node_cpus;
                    c.nodes += count;
                }
                "partitionname" => {
                    if value.eq_ignore_ascii_case("default") {
                        c.not_modelled.push("PartitionName=DEFAULT".into());
                        continue;
                    }
                    if c.partitions.iter().any(|p| p.name == value) {
                        return Err(err(InputErrorKind::Duplicate {
                            what: "partition",
                            name: partalloc_topology::echo(value),
                        }));
                    }
                    let mut p = PartitionConf {
                        name: value.to_owned(),
                        nodes: 0,
                        node_ids: None,
                        priority_job_factor: 1,
                        priority_tier: 1,
                        max_time: None,
                        default_time: None,
                        default: false,
                        qos: None,
                        preempt_mode: None,
                        billing: None,
                        line: n,
                    };
                    let mut nodes_text = None;
                    for &(k, v) in &pairs[1..] {
                        let small = |k: &str, v: &str| -> Result<u32, InputError> {
                            u32::try_from(int(k, v)?)
                                .ok()
                                .filter(|&x| x <= 65_533)
                                .ok_or_else(|| bad(k, v, "must be at most 65533".into()))
                        };
                        match k.to_ascii_lowercase().as_str() {
                            "nodes" => nodes_text = Some(v),
                            "priority" => {
                                let x = small(k, v)?;
                                p.priority_job_factor = x;
                                p.priority_tier = x;
                            }
                            "priorityjobfactor" => p.priority_job_factor = small(k, v)?,
                            "prioritytier" => p.priority_tier = small(k, v)?,
                            "maxtime" => p.max_time = dur(k, v)?,
                            "defaulttime" => p.default_time = dur(k, v)?,
                            "default" => {
                                p.default =
                                    yes(v).ok_or_else(|| bad(k, v, "is not YES or NO".into()))?;
                            }
                            "qos" => p.qos = Some(v.to_owned()),
                            "tresbillingweights" => {
                                let (mut cpu, mut node) = (0.0, 0.0);
                                for item in v.split(',').filter(|x| !x.is_empty()) {
                                    let (name, w) = item
                                        .split_once('=')
                                        .ok_or_else(|| bad(k, item, "is not TRES=weight".into()))?;
                                    let w: f64 = w
                                        .trim_end_matches(['K', 'M', 'G', 'T'])
                                        .parse()
                                        .ok()
                                        .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                                        .ok_or_else(|| {
                                            bad(k, item, "has a weight that is not a number".into())
                                        })?;
                                    match name.to_ascii_lowercase().as_str() {
                                        "cpu" => cpu = w,
                                        "node" => node = w,
                                        other => c
                                            .not_modelled
                                            .push(format!("TRESBillingWeights {other}")),
                                    }
                                }
                                p.billing = Some((cpu, node));
                            }
                            "preemptmode" => {
                                p.preempt_mode = Some(match v.to_ascii_lowercase().as_str() {
                                    "off" => PreemptMode::Off,
                                    "cancel" => PreemptMode::Cancel,
                                    "requeue" => PreemptMode::Requeue,
                                    _ => {
                                        return Err(bad(
                                            k,
                                            v,
                                            "is not OFF, CANCEL or REQUEUE".into(),
                                        ));
                                    }
                                });
                            }
                            "state" if v.eq_ignore_ascii_case("up") => {}
                            _ => c.not_modelled.push(format!("PartitionName {k}")),
                        }
                    }
                    p.nodes = match nodes_text {
                        None => {
                            return Err(err(InputErrorKind::Machine(format!(
                                "partition {:?} has no Nodes=; give Nodes=ALL or a hostlist",
                                partalloc_topology::echo(value)
                            ))));
                        }
                        Some(v) if v.eq_ignore_ascii_case("all") => u64::MAX,
                        Some(v) => {
                            subsets.push((c.partitions.len(), v.to_owned(), n));
                            partalloc_topology::slurm::hostlist::count(v)
                                .map_err(|e| bad("Nodes", v, e.to_string()))?
                        }
                    };
                    c.partitions.push(p);
                }
                _ => {
                    if pairs.len() > 1 {
                        return Err(err(InputErrorKind::NotKeyValue(format!(
                            "{} after {first}= (one option per line outside NodeName and PartitionName lines)",
                            partalloc_topology::echo(pairs[1].0)
                        ))));
                    }
                    c.option(first, value, &int, &dur, &bad)?;
                }
            }
        }
        if c.nodes == 0 {
            return Err(InputError::at(
                source,
                0,
                InputErrorKind::Machine("no NodeName line; add NodeName=... CPUs=...".into()),
            ));
        }
        for p in &mut c.partitions {
            if p.nodes == u64::MAX {
                p.nodes = c.nodes;
            }
        }
        c.resolve_subsets(&node_names, &subsets)?;
        if c.partitions.is_empty() {
            return Err(InputError::at(
                source,
                0,
                InputErrorKind::Machine(
                    "no PartitionName line; add PartitionName=batch Nodes=ALL Default=YES".into(),
                ),
            ));
        }
        Ok(c)
    }

    /// Maps each partition's `Nodes=` hostlist to node indices: a
    /// partition on every node keeps `node_ids` = `None`.
    fn resolve_subsets(
        &mut self,
        names: &[String],
        subsets: &[(usize, String, usize)],
    ) -> Result<(), InputError> {
        if subsets.is_empty() {
            return Ok(());
        }
        let err = |line, kind| InputError::at(&self.source, line, kind);
        if names.len() as u64 != self.nodes {
            return Err(err(
                subsets[0].2,
                InputErrorKind::Machine(format!(
                    "a partition on some of the nodes needs at most {MAX_NAMED_NODES} nodes; give Nodes=ALL"
                )),
            ));
        }
        let index: HashMap<&str, u32> = names
            .iter()
            .enumerate()
            .map(|(k, n)| (n.as_str(), k as u32))
            .collect();
        for (k, text, line) in subsets {
            let listed = partalloc_topology::slurm::hostlist::expand(text).map_err(|e| {
                err(
                    *line,
                    InputErrorKind::BadValue {
                        key: "Nodes".into(),
                        value: partalloc_topology::echo(text),
                        reason: e.to_string(),
                    },
                )
            })?;
            let mut ids = Vec::with_capacity(listed.len());
            for name in &listed {
                let id = index.get(name.as_str()).ok_or_else(|| {
                    err(
                        *line,
                        InputErrorKind::Unknown {
                            what: "node",
                            name: partalloc_topology::echo(name),
                            hint: "slurm.conf (a NodeName line)",
                        },
                    )
                })?;
                ids.push(*id);
            }
            ids.sort_unstable();
            ids.dedup();
            let p = &mut self.partitions[*k];
            p.nodes = ids.len() as u64;
            p.node_ids = (p.nodes != self.nodes).then_some(ids);
        }
        Ok(())
    }

    fn option(
        &mut self,
        key: &str,
        value: &str,
        int: &ReadInt<'_>,
        dur: &ReadDuration<'_>,
        bad: &BadValue<'_>,
    ) -> Result<(), InputError> {
        let p = &mut self.priority;
        let weight = |v: &str| int(key, v).map(|x| x as f64);
        match key.to_ascii_lowercase().as_str() {
            "prioritytype" => {
                p.multifactor = match value {
                    "priority/multifactor" => true,
                    "priority/basic" => false,
                    _ => {
                        return Err(bad(
                            key,
                            value,
                            "is not priority/multifactor or priority/basic".into(),
                        ));
                    }
                }
            }
            "priorityweightage" => p.weight_age = weight(value)?,
            "priorityweightfairshare" => p.weight_fairshare = weight(value)?,
            "priorityweightjobsize" => p.weight_job_size = weight(value)?,
            "priorityweightpartition" => p.weight_partition = weight(value)?,
            "priorityweightqos" => p.weight_qos = weight(value)?,
            "priorityweightassoc" => p.weight_assoc = weight(value)?,
            "priorityweighttres" => {
                for item in value.split(',').filter(|s| !s.is_empty()) {
                    let (name, w) = item
                        .split_once('=')
                        .ok_or_else(|| bad(key, item, "is not TRES=weight".into()))?;
                    let w: f64 = w
                        .parse()
                        .ok()
                        .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                        .ok_or_else(|| {
                            bad(key, item, "has a weight that is not a number".into())
                        })?;
                    match name.to_ascii_lowercase().as_str() {
                        "cpu" => p.weight_tres_cpu = w,
                        "node" => p.weight_tres_node = w,
                        other => self
                            .not_modelled
                            .push(format!("PriorityWeightTRES {other}")),
                    }
                }
            }
            "prioritymaxage" => {
                p.max_age = dur(key, value)?.unwrap_or(u64::from(u32::MAX));
            }
            "prioritydecayhalflife" => p.decay_half_life = dur(key, value)?.unwrap_or(0),
            "prioritycalcperiod" => {
                p.calc_period = dur(key, value)?
                    .filter(|&s| s > 0)
                    .ok_or_else(|| bad(key, value, "must be a positive duration".into()))?;
            }
            "priorityusageresetperiod" => {
                p.reset = match value.to_ascii_uppercase().as_str() {
                    "NONE" => ResetPeriod::None,
                    "NOW" => ResetPeriod::Now,
                    "DAILY" => ResetPeriod::Every(86_400),
                    "WEEKLY" => ResetPeriod::Every(7 * 86_400),
                    "MONTHLY" => ResetPeriod::Every(30 * 86_400),
                    "QUARTERLY" => ResetPeriod::Every(91 * 86_400),
                    "YEARLY" => ResetPeriod::Every(365 * 86_400),
                    _ => {
                        return Err(bad(
                            key,
                            value,
                            "is not NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY".into(),
                        ));
                    }
                }
            }
            "priorityfavorsmall" => {
                p.favor_small =
                    yes(value).ok_or_else(|| bad(key, value, "is not YES or NO".into()))?;
            }
            "priorityflags" => {
                for flag in value.split(',').filter(|s| !s.is_empty()) {
                    match flag.to_ascii_uppercase().as_str() {
                        "NO_FAIR_TREE" => p.algo = FairShareAlgo::Classic,
                        "FAIR_TREE" if !p.depth_oblivious => p.algo = FairShareAlgo::FairTree,
                        "FAIR_TREE" => {}
                        // `read_config.c`: it clears the Fair Tree flag.
                        "DEPTH_OBLIVIOUS" => {
                            p.depth_oblivious = true;
                            p.algo = FairShareAlgo::Classic;
                        }
                        "SMALL_RELATIVE_TO_TIME" => p.small_relative_to_time = true,
                        "ACCRUE_ALWAYS" => p.accrue_always = true,
                        "NO_NORMAL_PART" => p.no_normal_part = true,
                        "NO_NORMAL_QOS" => p.no_normal_qos = true,
                        other => self.not_modelled.push(format!("PriorityFlags {other}")),
                    }
                }
            }
            "schedulertype" => {
                self.sched.backfill = match value {
                    "sched/backfill" => true,
                    "sched/builtin" => false,
                    _ => {
                        return Err(bad(
                            key,
                            value,
                            "is not sched/backfill or sched/builtin".into(),
                        ));
                    }
                }
            }
            "schedulerparameters" => self.scheduler_parameters(value, bad)?,
            "preempttype" => {
                self.preempt.kind = match value {
                    "preempt/none" => PreemptType::None,
                    "preempt/qos" => PreemptType::Qos,
                    "preempt/partition_prio" => PreemptType::PartitionPrio,
                    _ => {
                        return Err(bad(
                            key,
                            value,
                            "is not preempt/none, preempt/qos or preempt/partition_prio".into(),
                        ));
                    }
                }
            }
            "preemptmode" => {
                for m in value.split(',') {
                    match m.to_ascii_uppercase().as_str() {
                        "OFF" => self.preempt.mode = PreemptMode::Off,
                        "CANCEL" => self.preempt.mode = PreemptMode::Cancel,
                        "REQUEUE" => self.preempt.mode = PreemptMode::Requeue,
                        other => self.not_modelled.push(format!("PreemptMode {other}")),
                    }
                }
            }
            "preemptexempttime" => {
                self.preempt.exempt_time = if value == "-1" {
                    0
                } else {
                    dur(key, value)?.unwrap_or(0)
                };
            }
            "accountingstorageenforce" => {
                self.enforce_limits = value
                    .split(',')
                    .any(|w| matches!(w.to_ascii_lowercase().as_str(), "limits" | "safe" | "qos"));
            }
            _ => self.not_modelled.push(key.to_owned()),
        }
        Ok(())
    }

    fn scheduler_parameters(&mut self, value: &str, bad: &BadValue<'_>) -> Result<(), InputError> {
        let s = &mut self.sched;
        for item in value.split(',').filter(|x| !x.is_empty()) {
            let (k, v) = item.split_once('=').unwrap_or((item, ""));
            let num = || -> Result<u64, InputError> {
                v.parse::<u64>().map_err(|_| {
                    bad(
                        "SchedulerParameters",
                        item,
                        "needs a whole number after =".into(),
                    )
                })
            };
            let positive = || -> Result<u64, InputError> {
                num()?.checked_sub(0).filter(|&x| x > 0).ok_or_else(|| {
                    bad(
                        "SchedulerParameters",
                        item,
                        "needs a positive whole number".into(),
                    )
                })
            };
            match k.to_ascii_lowercase().as_str() {
                "default_queue_depth" => s.default_queue_depth = num()? as usize,
                "sched_interval" => s.sched_interval = positive()?,
                // -1 turns backfill off (`_load_config`, backfill.c).
                "bf_interval" if v == "-1" => s.backfill = false,
                "bf_interval" => s.bf_interval = positive()?,
                "bf_window" => s.bf_window = positive()? * 60,
                "bf_resolution" => s.bf_resolution = positive()?,
                "bf_max_job_test" => s.bf_max_job_test = positive()? as usize,
                "bf_max_job_user" => s.bf_max_job_user = num()? as usize,
                "bf_max_job_part" => s.bf_max_job_part = num()? as usize,
                // At most 10000 (`MAX_BF_MAX_JOB_START`, backfill.c).
                "bf_max_job_start" => {
                    let n = num()?;
                    if n > 10_000 {
                        return Err(bad(
                            "SchedulerParameters",
                            item,
                            "must be a whole number from 0 to 10000".into(),
                        ));
                    }
                    s.bf_max_job_start = n as usize;
                }
                "bf_continue" => s.bf_continue = true,
                "requeue_delay" => s.requeue_delay = num()?,
                "batch_sched_delay" => s.batch_sched_delay = num()?,
                "bf_min_prio_reserve" => {
                    s.bf_min_prio_reserve = u32::try_from(num()?).map_err(|_| {
                        bad("SchedulerParameters", item, "must fit in 32 bits".into())
                    })?;
                }
                other => self
                    .not_modelled
                    .push(format!("SchedulerParameters {other}")),
            }
        }
        Ok(())
    }

    /// The configuration of a run without a slurm.conf: `nodes` nodes of
    /// one CPU, one partition `batch` over all of them, every other option
    /// at its default.
    #[must_use]
    pub fn for_machine(nodes: u64) -> Self {
        Self {
            source: "built-in".into(),
            nodes,
            partitions: vec![PartitionConf {
                name: "batch".into(),
                nodes,
                node_ids: None,
                priority_job_factor: 1,
                priority_tier: 1,
                max_time: None,
                default_time: None,
                default: true,
                qos: None,
                preempt_mode: None,
                billing: None,
                line: 0,
            }],
            ..Self::default()
        }
    }

    /// The partition named `name`.
    #[must_use]
    pub fn partition(&self, name: &str) -> Option<usize> {
        self.partitions.iter().position(|p| p.name == name)
    }

    /// The default partition: the one marked `Default=YES`, else the first.
    #[must_use]
    pub fn default_partition(&self) -> usize {
        self.partitions.iter().position(|p| p.default).unwrap_or(0)
    }

    /// The one line naming the options read but not modelled, or `None`.
    #[must_use]
    pub fn not_modelled_line(&self) -> Option<String> {
        if self.not_modelled.is_empty() {
            return None;
        }
        let mut seen: Vec<&str> = Vec::new();
        for k in &self.not_modelled {
            if !seen.contains(&k.as_str()) {
                seen.push(k);
            }
        }
        Some(format!(
            "{}: not modelled (read and ignored): {}",
            self.source,
            seen.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_on_some_nodes_lists_them_in_node_line_order() {
        let c = SchedConf::parse(
            "NodeName=n[1-4]\nNodeName=g1\nPartitionName=a Nodes=n[3-4],g1\nPartitionName=b Nodes=ALL\nPartitionName=c Nodes=g1,n[1-4]\n",
            "x",
        )
        .unwrap();
        assert_eq!(c.partitions[0].node_ids, Some(vec![2, 3, 4]));
        assert_eq!(c.partitions[0].nodes, 3);
        // Every node, listed or ALL: no subset.
        assert_eq!(
            (c.partitions[1].node_ids.as_ref(), c.partitions[1].nodes),
            (None, 5)
        );
        assert_eq!(
            (c.partitions[2].node_ids.as_ref(), c.partitions[2].nodes),
            (None, 5)
        );
        // A partition may come before the nodes it names.
        let c = SchedConf::parse("PartitionName=a Nodes=n2\nNodeName=n[1-2]\n", "x").unwrap();
        assert_eq!(c.partitions[0].node_ids, Some(vec![1]));
    }

    #[test]
    fn a_partition_naming_an_unknown_node_is_refused_at_its_line() {
        let e = SchedConf::parse("NodeName=n[1-4]\nPartitionName=a Nodes=n[4-5]\n", "s.conf")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "s.conf:2: unknown node \"n5\"; define it in slurm.conf (a NodeName line)"
        );
        assert!(e.len() <= 200);
    }

    #[test]
    fn errors_name_the_line_and_the_fix() {
        let e = SchedConf::parse("NodeName=n1 CPUs=4\nPriorityWeightAge=lots\n", "a.conf")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("a.conf:2: PriorityWeightAge"), "{e}");
        let e = SchedConf::parse(
            "NodeName=n1 CPUs=4\nNodeName=n2 CPUs=8\nPartitionName=p Nodes=ALL\n",
            "a.conf",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("a.conf:2:") && e.contains("CPUs=8"), "{e}");
        let e = SchedConf::parse("PartitionName=p Nodes=ALL\n", "a.conf")
            .unwrap_err()
            .to_string();
        assert!(e.contains("NodeName"), "{e}");
        let e = SchedConf::parse(
            "NodeName=n1\nPartitionName=p Nodes=ALL\nPartitionName=p Nodes=ALL\n",
            "a.conf",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("a.conf:3:") && e.contains("twice"), "{e}");
        let e = SchedConf::parse(
            "NodeName=n1\nSchedulerParameters=bf_max_job_start=10001\n",
            "a.conf",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("a.conf:2:") && e.contains("0 to 10000"),
            "{e}"
        );
    }

    #[test]
    fn defaults_are_slurms() {
        let c = SchedConf::parse("NodeName=n[1-2]\nPartitionName=p Nodes=n[1-2]\n", "x").unwrap();
        assert_eq!(c.priority.max_age, 7 * 86_400);
        assert_eq!(c.priority.calc_period, 300);
        assert_eq!(c.sched.bf_interval, 30);
        assert_eq!(c.sched.bf_resolution, 60);
        assert_eq!(c.sched.bf_window, 86_400);
        assert_eq!(c.sched.bf_max_job_test, 500);
        assert_eq!(c.sched.bf_max_job_start, 0);
        assert_eq!(c.sched.default_queue_depth, 100);
        assert_eq!(c.priority.algo, FairShareAlgo::FairTree);
        assert!(c.not_modelled_line().is_none());
    }
}
