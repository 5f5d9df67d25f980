//! QOS and association limits on running jobs, and the pending reason a
//! job gets when one holds it (`src/slurmctld/acct_policy.c`; reason names
//! from `src/common/job_state_reason.c`).
//!
//! Checked in Slurm's order: the job's QOS, then its partition's QOS, then
//! the association and each ancestor up to root. Per QOS: `MaxWall`,
//! `GrpTRES` (cpu, node), `GrpJobs`, `MaxTRESPU` (cpu, node), `MaxJobsPU`;
//! per association: `MaxWall`, `GrpTRES`, `GrpJobs`, `MaxJobs` (the user
//! association's own); then each one's `GrpTRESMins` against its usage. Limits hold only with `AccountingStorageEnforce`
//! including `limits`.

use std::collections::HashMap;

use super::assoc::{AssocTree, QosTable};

/// Why a job is pending, as squeue prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Reason {
    /// `None`: not yet considered.
    #[default]
    None,
    /// `Priority`: a job ahead of it in its partition could not start.
    Priority,
    /// `Resources`: not enough free nodes.
    Resources,
    /// `Resources` with squeue's description of nodes taken by a job of
    /// another partition that could not start (`_schedule` removes a
    /// failed partition's nodes from the nodes the pass may use; fewer
    /// of the job's partition's are left than it asks for).
    ReservedForOtherPartition,
    /// A limit (its reason name, e.g. `QOSMaxJobsPerUserLimit`).
    Limit(&'static str),
}

impl core::fmt::Display for Reason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::None => "None",
            Self::Priority => "Priority",
            Self::Resources => "Resources",
            Self::ReservedForOtherPartition => {
                "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"
            }
            Self::Limit(s) => s,
        })
    }
}

/// What a job would hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Claim {
    /// Its user association.
    pub assoc: usize,
    /// Its QOS.
    pub qos: usize,
    /// Its partition's QOS, if any and different.
    pub part_qos: Option<usize>,
    /// Its user number.
    pub user: usize,
    /// CPUs.
    pub cpus: u64,
    /// Nodes.
    pub nodes: u64,
    /// Time limit, seconds.
    pub time_limit: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Count {
    jobs: u64,
    cpus: u64,
    nodes: u64,
}

impl Count {
    fn add(&mut self, c: &Claim, sign: i64) {
        let f = |x: &mut u64, d: u64| {
            *x = if sign > 0 {
                x.saturating_add(d)
            } else {
                x.saturating_sub(d)
            }
        };
        f(&mut self.jobs, 1);
        f(&mut self.cpus, c.cpus);
        f(&mut self.nodes, c.nodes);
    }
}

/// Running jobs counted per association (subtree), per QOS and per QOS
/// and user; and the TRES usage (CPU- and node-seconds, decaying) per
/// association and QOS that `GrpTRESMins` limits (`usage_tres_raw`).
#[derive(Debug, Clone, Default)]
pub struct Counters {
    assoc: Vec<Count>,
    own: Vec<u64>,
    qos: Vec<Count>,
    qos_user: HashMap<(usize, usize), Count>,
    assoc_usage: Vec<[f64; 2]>,
    qos_usage: Vec<[f64; 2]>,
}

impl Counters {
    /// Zero counters for `tree` and `qos`.
    #[must_use]
    pub fn new(tree: &AssocTree, qos: &QosTable) -> Self {
        Self {
            assoc: vec![Count::default(); tree.len()],
            own: vec![0; tree.len()],
            qos: vec![Count::default(); qos.len()],
            qos_user: HashMap::new(),
            assoc_usage: vec![[0.0; 2]; tree.len()],
            qos_usage: vec![[0.0; 2]; qos.len()],
        }
    }

    /// Multiplies the TRES usage by `factor` (the priority pass's decay).
    pub fn decay_usage(&mut self, factor: f64) {
        for u in self.assoc_usage.iter_mut().chain(&mut self.qos_usage) {
            u[0] *= factor;
            u[1] *= factor;
        }
    }

    /// Clears the TRES usage (`PriorityUsageResetPeriod`).
    pub fn reset_usage(&mut self) {
        self.decay_usage(0.0);
    }

    /// Charges `seconds` (already decayed and times the QOS's
    /// `UsageFactor`) of job `c`'s CPUs and nodes to its association and
    /// every ancestor, and to its QOS (`_apply_new_usage`,
    /// `priority_multifactor.c`).
    pub fn charge_usage(&mut self, tree: &AssocTree, c: &Claim, seconds: f64) {
        if seconds == 0.0 {
            return;
        }
        let add = [seconds * c.cpus as f64, seconds * c.nodes as f64];
        for a in tree.chain(c.assoc) {
            self.assoc_usage[a][0] += add[0];
            self.assoc_usage[a][1] += add[1];
        }
        self.qos_usage[c.qos][0] += add[0];
        self.qos_usage[c.qos][1] += add[1];
    }

    /// The `GrpTRESMins` that holds `c` back, if any: the usage's whole
    /// minutes at or over the limit (`_validate_tres_usage_limits`,
    /// `acct_policy.c`, checked after node selection: QOS first, then the
    /// association up to root).
    fn usage_blocked(&self, tree: &AssocTree, qos: &QosTable, c: &Claim) -> Option<Reason> {
        let reached =
            |limit: Option<u64>, raw: f64| limit.is_some_and(|l| (raw / 60.0).floor() >= l as f64);
        for q in Self::qos_list(c) {
            let l = &qos.get(q).limits.grp_tres_mins;
            let u = self.qos_usage[q];
            if reached(l.cpu, u[0]) {
                return Some(Reason::Limit("QOSGrpCPUMinutesLimit"));
            }
            if reached(l.node, u[1]) {
                return Some(Reason::Limit("QOSGrpNodeMinutes"));
            }
        }
        for a in tree.chain(c.assoc) {
            let l = &tree.get(a).limits.grp_tres_mins;
            let u = self.assoc_usage[a];
            if reached(l.cpu, u[0]) {
                return Some(Reason::Limit("AssocGrpCPUMinutesLimit"));
            }
            if reached(l.node, u[1]) {
                return Some(Reason::Limit("AssocGrpNodeMinutes"));
            }
        }
        None
    }

    fn qos_list(c: &Claim) -> impl Iterator<Item = usize> {
        core::iter::once(c.qos).chain(c.part_qos.filter(|&p| p != c.qos))
    }

    /// Counts a job that started (`sign` 1) or ended (`sign` −1).
    pub fn apply(&mut self, tree: &AssocTree, c: &Claim, sign: i64) {
        for a in tree.chain(c.assoc) {
            self.assoc[a].add(c, sign);
        }
        self.own[c.assoc] = if sign > 0 {
            self.own[c.assoc] + 1
        } else {
            self.own[c.assoc].saturating_sub(1)
        };
        for q in Self::qos_list(c) {
            self.qos[q].add(c, sign);
            self.qos_user.entry((q, c.user)).or_default().add(c, sign);
        }
    }

    /// The limit that holds `c` back now, if any.
    #[must_use]
    pub fn blocked(&self, tree: &AssocTree, qos: &QosTable, c: &Claim) -> Option<Reason> {
        let over = |limit: Option<u64>, used: u64, add: u64| limit.is_some_and(|l| used + add > l);
        for q in Self::qos_list(c) {
            let l = &qos.get(q).limits;
            let used = self.qos[q];
            if let (Some(w), Some(t)) = (l.max_wall, c.time_limit)
                && t > w
            {
                return Some(Reason::Limit("QOSMaxWallDurationPerJobLimit"));
            }
            if over(l.max_tres_per_job.cpu, 0, c.cpus) {
                return Some(Reason::Limit("QOSMaxCpuPerJobLimit"));
            }
            if over(l.max_tres_per_job.node, 0, c.nodes) {
                return Some(Reason::Limit("QOSMaxNodePerJobLimit"));
            }
            if over(l.grp_tres.cpu, used.cpus, c.cpus) {
                return Some(Reason::Limit("QOSGrpCpuLimit"));
            }
            if over(l.grp_tres.node, used.nodes, c.nodes) {
                return Some(Reason::Limit("QOSGrpNodeLimit"));
            }
            if over(l.grp_jobs, used.jobs, 1) {
                return Some(Reason::Limit("QOSGrpJobsLimit"));
            }
            let mine = self.qos_user.get(&(q, c.user)).copied().unwrap_or_default();
            if over(l.max_tres_per_user.cpu, mine.cpus, c.cpus) {
                return Some(Reason::Limit("QOSMaxCpuPerUserLimit"));
            }
            if over(l.max_tres_per_user.node, mine.nodes, c.nodes) {
                return Some(Reason::Limit("QOSMaxNodePerUserLimit"));
            }
            if over(l.max_jobs_per_user, mine.jobs, 1) {
                return Some(Reason::Limit("QOSMaxJobsPerUserLimit"));
            }
        }
        // MaxJobs is inherited: the user association's own, else the
        // nearest ancestor's (sacctmgr's limits apply to every association
        // below unless overridden).
        let max_jobs = tree
            .chain(c.assoc)
            .find_map(|a| tree.get(a).limits.max_jobs_per_user);
        for a in tree.chain(c.assoc) {
            let l = &tree.get(a).limits;
            let used = self.assoc[a];
            if let (Some(w), Some(t)) = (l.max_wall, c.time_limit)
                && t > w
            {
                return Some(Reason::Limit("AssocMaxWallDurationPerJobLimit"));
            }
            if over(l.max_tres_per_job.cpu, 0, c.cpus) {
                return Some(Reason::Limit("AssocMaxCpuPerJobLimit"));
            }
            if over(l.max_tres_per_job.node, 0, c.nodes) {
                return Some(Reason::Limit("AssocMaxNodePerJobLimit"));
            }
            if over(l.grp_tres.cpu, used.cpus, c.cpus) {
                return Some(Reason::Limit("AssocGrpCpuLimit"));
            }
            if over(l.grp_tres.node, used.nodes, c.nodes) {
                return Some(Reason::Limit("AssocGrpNodeLimit"));
            }
            if over(l.grp_jobs, used.jobs, 1) {
                return Some(Reason::Limit("AssocGrpJobsLimit"));
            }
            if a == c.assoc && over(max_jobs, self.own[a], 1) {
                return Some(Reason::Limit("AssocMaxJobsLimit"));
            }
        }
        self.usage_blocked(tree, qos, c)
    }

    /// A limit that holds `c` back even on an idle machine without usage:
    /// a job that can never run. Returns the limit's name.
    #[must_use]
    pub fn never(tree: &AssocTree, qos: &QosTable, c: &Claim) -> Option<Reason> {
        let empty = Self::new(tree, qos);
        empty.blocked(tree, qos, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grp_tres_mins_holds_at_whole_minutes_of_decayed_usage() {
        let tree = AssocTree::parse(
            "Account|User|Share|GrpTRESMins\nroot||1|\na||1|cpu=2\na|u|1|\n",
            "t",
        )
        .unwrap();
        let qos = QosTable::parse("Name|GrpTRESMins\nnormal|\nlong|node=1\n", "q").unwrap();
        let mut c = Counters::new(&tree, &qos);
        let claim = Claim {
            assoc: tree.user("u", None).unwrap(),
            qos: 0,
            part_qos: None,
            user: 0,
            cpus: 2,
            nodes: 1,
            time_limit: Some(60),
        };
        // 59 s of 2 CPUs: 1.97 CPU-minutes, under 2 in whole minutes.
        c.charge_usage(&tree, &claim, 59.0);
        assert_eq!(c.blocked(&tree, &qos, &claim), None);
        c.charge_usage(&tree, &claim, 1.0);
        assert_eq!(
            c.blocked(&tree, &qos, &claim),
            Some(Reason::Limit("AssocGrpCPUMinutesLimit"))
        );
        // Decay brings it back under.
        c.decay_usage(0.9);
        assert_eq!(c.blocked(&tree, &qos, &claim), None);
        // A QOS's node-minutes, checked before the association.
        let long = Claim { qos: 1, ..claim };
        c.charge_usage(&tree, &long, 60.0);
        assert_eq!(
            c.blocked(&tree, &qos, &long),
            Some(Reason::Limit("QOSGrpNodeMinutes"))
        );
        c.reset_usage();
        assert_eq!(c.blocked(&tree, &qos, &long), None);
    }

    #[test]
    fn per_user_and_group_limits_hold_in_order() {
        let tree = AssocTree::parse(
            "Account|User|Share|GrpJobs|MaxJobs\nroot||1||\na||1|2|\na|u|1||1\na|v|1||\n",
            "t",
        )
        .unwrap();
        let qos = QosTable::parse("Name|MaxJobsPU|GrpTRES\nnormal|2|cpu=64\n", "q").unwrap();
        let mut c = Counters::new(&tree, &qos);
        let claim = |user: &str, u: usize| Claim {
            assoc: tree.user(user, None).unwrap(),
            qos: 0,
            part_qos: None,
            user: u,
            cpus: 16,
            nodes: 1,
            time_limit: Some(60),
        };
        let u = claim("u", 0);
        assert_eq!(c.blocked(&tree, &qos, &u), None);
        c.apply(&tree, &u, 1);
        // u's own association allows one job.
        assert_eq!(
            c.blocked(&tree, &qos, &u),
            Some(Reason::Limit("AssocMaxJobsLimit"))
        );
        let v = claim("v", 1);
        c.apply(&tree, &v, 1);
        c.apply(&tree, &v, 1);
        // v has two jobs: the QOS's per-user limit, checked before the
        // association's.
        assert_eq!(
            c.blocked(&tree, &qos, &v),
            Some(Reason::Limit("QOSMaxJobsPerUserLimit"))
        );
        c.apply(&tree, &v, -1);
        // Two jobs (32 CPUs) in account a: a third is within the QOS's
        // cpu=64 but a's GrpJobs=2 holds.
        assert_eq!(
            c.blocked(&tree, &qos, &v),
            Some(Reason::Limit("AssocGrpJobsLimit"))
        );
        let big = Claim { cpus: 65, ..v };
        assert_eq!(
            Counters::never(&tree, &qos, &big),
            Some(Reason::Limit("QOSGrpCpuLimit"))
        );
    }
}
