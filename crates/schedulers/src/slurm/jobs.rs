//! Each job's Slurm attributes (account, user, QOS, partition, time
//! limit, nice), in a table keyed by job id that the policy owns: a
//! `Job` carries only what every policy needs.

use std::collections::HashMap;

use partalloc_workload::sacct::SacctTrace;

use super::assoc::{AssocTree, QosTable};
use super::conf::SchedConf;
use super::error::{InputError, InputErrorKind};

/// A job's Slurm attributes as written in a trace (names, not yet checked).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct JobAttrs {
    /// `Account` (`None`: the user's first account).
    pub account: Option<String>,
    /// `User` (`None`: the built-in user).
    pub user: Option<String>,
    /// `QOS` (`None`: the default QOS).
    pub qos: Option<String>,
    /// `Partition` (`None`: the default partition); several separated by
    /// commas for a job submitted to several (`-p a,b`).
    pub partition: Option<String>,
    /// Time limit, seconds (`None`: the partition's default or maximum).
    pub time_limit: Option<u64>,
    /// Nice value (subtracted from the priority).
    pub nice: i64,
    /// Its submit time, whole seconds on the run's clock, when it came
    /// before its arrival (a job held or given a begin time: sacct's
    /// `Submit` before its `Eligible`); `None`: it was submitted when it
    /// arrived. Age counts from it under `PriorityFlags=ACCRUE_ALWAYS`.
    pub submit: Option<u64>,
    /// Where it was read (line of its file).
    pub line: usize,
}

impl JobAttrs {
    /// Attributes with everything defaulted.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// With account, user, QOS and partition set.
    #[must_use]
    pub fn with_names(
        mut self,
        account: Option<&str>,
        user: Option<&str>,
        qos: Option<&str>,
        partition: Option<&str>,
    ) -> Self {
        self.account = account.map(str::to_owned);
        self.user = user.map(str::to_owned);
        self.qos = qos.map(str::to_owned);
        self.partition = partition.map(str::to_owned);
        self
    }

    /// With a time limit in seconds.
    #[must_use]
    pub fn with_time_limit(mut self, secs: Option<u64>) -> Self {
        self.time_limit = secs;
        self
    }

    /// With a nice value.
    #[must_use]
    pub fn with_nice(mut self, nice: i64) -> Self {
        self.nice = nice;
        self
    }

    /// With the submit time of a job that arrives (becomes eligible)
    /// later.
    #[must_use]
    pub fn with_submit(mut self, submit: Option<u64>) -> Self {
        self.submit = submit;
        self
    }
}

/// A job's attributes resolved against the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Resolved {
    /// Its user association.
    pub assoc: usize,
    /// Its QOS.
    pub qos: usize,
    /// Its partition (the first it was submitted to; see
    /// [`JobTable::partitions`] for all).
    pub partition: usize,
    /// Its time limit, seconds (`None`: unlimited).
    pub time_limit: Option<u64>,
    /// Its nice value.
    pub nice: i64,
    /// Its user, as an index among the users of the tree (for per-user
    /// limits and counters).
    pub user: usize,
}

/// The attributes of a workload's jobs, by job id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JobTable {
    source: String,
    by_id: HashMap<u64, JobAttrs>,
}

impl JobTable {
    /// An empty table: every job has the default attributes.
    #[must_use]
    pub fn new(source: &str) -> Self {
        Self {
            source: source.to_owned(),
            by_id: HashMap::new(),
        }
    }

    /// The file the table was read from.
    #[must_use]
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Sets job `id`'s attributes.
    pub fn insert(&mut self, id: u64, attrs: JobAttrs) {
        self.by_id.insert(id, attrs);
    }

    /// Job `id`'s attributes, if listed.
    #[must_use]
    pub fn get(&self, id: u64) -> Option<&JobAttrs> {
        self.by_id.get(&id)
    }

    /// Number of jobs listed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether no job is listed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The table of a sacct dump's jobs, numbered as
    /// [`SacctTrace::jobs`] numbers them (from 1, in file order, after
    /// [`SacctTrace::usable`] on a machine of `machine_nodes` nodes).
    ///
    /// ```
    /// use partalloc_schedulers::slurm::jobs::JobTable;
    /// use partalloc_workload::sacct::SacctTrace;
    /// let dump = "JobID|Submit|Start|End|NNodes|Timelimit|Account|User|QOS|Partition\n\
    ///     7|2024-05-01T10:00:00|2024-05-01T10:00:05|2024-05-01T11:00:05|2|02:00:00|phys|ann|high|batch\n";
    /// let t = JobTable::from_sacct(&SacctTrace::parse(dump, false)?, 4, "d.txt");
    /// let a = t.get(1).unwrap();
    /// assert_eq!((a.account.as_deref(), a.qos.as_deref(), a.time_limit), (Some("phys"), Some("high"), Some(7200)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn from_sacct(trace: &SacctTrace, machine_nodes: u64, source: &str) -> Self {
        let (usable, _) = trace.clone().usable(machine_nodes);
        let mut t = Self::new(source);
        for (k, r) in usable.records.iter().enumerate() {
            let attrs = JobAttrs {
                account: r.account.clone(),
                user: r.user.clone(),
                qos: r.qos.clone(),
                partition: r.partition.clone(),
                time_limit: r.time_limit,
                nice: 0,
                submit: None,
                line: usize::try_from(r.line).unwrap_or(usize::MAX),
            };
            t.insert(k as u64 + 1, attrs);
        }
        t
    }

    /// The partitions job `id` was submitted to (`-p a,b`), in the order
    /// given; one for a job that names one, the default partition for a
    /// job that names none.
    ///
    /// # Errors
    /// An unknown partition, with the job's line.
    pub fn partitions(&self, id: u64, conf: &SchedConf) -> Result<Vec<usize>, InputError> {
        let default = JobAttrs::default();
        self.partition_list(self.by_id.get(&id).unwrap_or(&default), conf)
    }

    fn partition_list(&self, a: &JobAttrs, conf: &SchedConf) -> Result<Vec<usize>, InputError> {
        let Some(names) = &a.partition else {
            return Ok(vec![conf.default_partition()]);
        };
        let mut out = Vec::new();
        for p in names.split(',').filter(|p| !p.is_empty()) {
            let k = conf.partition(p).ok_or_else(|| {
                InputError::at(
                    &self.source,
                    a.line,
                    InputErrorKind::Unknown {
                        what: "partition",
                        name: partalloc_topology::echo(p),
                        hint: "slurm.conf (a PartitionName line)",
                    },
                )
            })?;
            if !out.contains(&k) {
                out.push(k);
            }
        }
        if out.is_empty() {
            out.push(conf.default_partition());
        }
        Ok(out)
    }

    /// Resolves job `id`'s attributes (defaults for an unlisted job; the
    /// `estimate` is its time limit when the table has none).
    ///
    /// # Errors
    /// An unknown partition, QOS, user or account, with the job's line.
    pub fn resolve(
        &self,
        id: u64,
        estimate: Option<f64>,
        conf: &SchedConf,
        tree: &AssocTree,
        qos: &QosTable,
        users: &mut Users,
    ) -> Result<Resolved, InputError> {
        let default = JobAttrs::default();
        let a = self.by_id.get(&id).unwrap_or(&default);
        let err = |kind| InputError::at(&self.source, a.line, kind);
        let partition = self.partition_list(a, conf)?[0];
        let q = match &a.qos {
            None => conf.partitions[partition]
                .qos
                .as_deref()
                .and_then(|n| qos.find(n))
                .unwrap_or_else(|| qos.default_qos()),
            Some(n) => qos.find(n).ok_or_else(|| {
                err(InputErrorKind::Unknown {
                    what: "QOS",
                    name: partalloc_topology::echo(n),
                    hint: "the QOS dump (sacctmgr show qos -P)",
                })
            })?,
        };
        let user_name = a.user.as_deref().unwrap_or(DEFAULT_USER);
        let assoc = match (&a.account, tree.user(user_name, a.account.as_deref())) {
            (_, Some(i)) => i,
            (Some(acct), None) if tree.account(acct).is_none() => {
                return Err(err(InputErrorKind::Unknown {
                    what: "account",
                    name: partalloc_topology::echo(acct),
                    hint: "the association dump (sacctmgr show assoc -P)",
                }));
            }
            _ => {
                // The built-in user of a run without accounts runs in the
                // first user association.
                match (
                    a.user.is_none(),
                    tree.all().iter().position(|x| x.user.is_some()),
                ) {
                    (true, Some(i)) if a.account.is_none() => i,
                    _ => {
                        return Err(err(InputErrorKind::Unknown {
                            what: "association of user",
                            name: format!(
                                "{}/{}",
                                partalloc_topology::echo(user_name),
                                partalloc_topology::echo(a.account.as_deref().unwrap_or("(first)"))
                            ),
                            hint: "the association dump (a line with that Account and User)",
                        }));
                    }
                }
            }
        };
        let part = &conf.partitions[partition];
        let time_limit = match a.time_limit.or(estimate.map(|e| e.ceil() as u64)) {
            Some(t) => Some(t),
            None => part.default_time.or(part.max_time),
        };
        let user = users.id(tree.get(assoc).user.as_deref().unwrap_or(DEFAULT_USER));
        Ok(Resolved {
            assoc,
            qos: q,
            partition,
            time_limit,
            nice: a.nice,
            user,
        })
    }
}

/// The user of a job that names none.
pub const DEFAULT_USER: &str = "user";

/// User names numbered in order of first appearance.
#[derive(Debug, Clone, Default)]
pub struct Users {
    ids: HashMap<String, usize>,
}

impl Users {
    /// The number of `name`, given on its first appearance.
    pub fn id(&mut self, name: &str) -> usize {
        let n = self.ids.len();
        *self.ids.entry(name.to_owned()).or_insert(n)
    }

    /// Users numbered so far.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether none is numbered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}
