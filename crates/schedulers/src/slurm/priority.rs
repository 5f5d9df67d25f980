//! priority/multifactor: a job's factors and its priority, as
//! `set_priority_factors` and `_get_priority_internal` compute them
//! (`src/plugins/priority/multifactor/priority_multifactor.c`).
//!
//! - age: `min(1, (t − eligible) / PriorityMaxAge)`, at the time of the
//!   computation (submission or the last priority pass: sprio shows the
//!   stored values);
//! - fair share: the association's factor ([`fairshare`](super::fairshare));
//! - job size: favour large: `(nodes / cluster nodes + CPUs / cluster
//!   CPUs) / 2`; `PriorityFavorSmall`: `((N − nodes)/N + (C − CPUs)/C) / 2`;
//!   `SMALL_RELATIVE_TO_TIME`: `max(nodes · C/N, CPUs) / time limit in
//!   minutes / C`, inverted when favouring small; clamped to [0, 1];
//! - partition: `PriorityJobFactor / max over partitions`;
//! - QOS: `priority / max over QOS` (only for a QOS of priority > 0);
//! - association: its `Priority` (or its nearest ancestor's) / the highest
//!   of any association;
//! - TRES: each weighted TRES's count over the partition's (a pending
//!   job's request: one CPU per node of a whole-node job);
//! - priority = ⌊Σ weight · factor − nice⌋, at least 1.

use super::conf::SchedConf;

/// A job's unweighted factors, each in [0, 1] unless a `NO_NORMAL_*` flag
/// is set.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct Factors {
    /// Age.
    pub age: f64,
    /// Association (`PriorityWeightAssoc`).
    pub assoc: f64,
    /// Fair share.
    pub fairshare: f64,
    /// Job size.
    pub job_size: f64,
    /// Partition.
    pub partition: f64,
    /// QOS.
    pub qos: f64,
    /// CPUs over the partition's CPUs.
    pub tres_cpu: f64,
    /// Nodes over the partition's nodes.
    pub tres_node: f64,
    /// The job's nice value.
    pub nice: i64,
}

/// What a job's factors are computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct JobSize {
    /// Nodes asked for.
    pub nodes: u64,
    /// CPUs asked for.
    pub cpus: u64,
    /// Time limit, seconds (`None`: unlimited).
    pub time_limit: Option<u64>,
}

/// One line of `sprio -l`: the weighted factors and the priority.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SprioRow {
    /// `JOBID`.
    pub job: u64,
    /// `PARTITION`.
    pub partition: String,
    /// `USER`.
    pub user: String,
    /// `ACCOUNT`.
    pub account: String,
    /// `PRIORITY`.
    pub priority: u32,
    /// `AGE` (weighted).
    pub age: f64,
    /// `ASSOC` (weighted).
    pub assoc: f64,
    /// `FAIRSHARE` (weighted).
    pub fairshare: f64,
    /// `JOBSIZE` (weighted).
    pub job_size: f64,
    /// `PARTITION` (weighted).
    pub partition_factor: f64,
    /// `QOS` (weighted).
    pub qos: f64,
    /// `NICE`.
    pub nice: i64,
    /// `TRES` (weighted, per TRES: `cpu`, `node`).
    pub tres: Vec<(&'static str, f64)>,
    /// `QOSNAME`.
    pub qos_name: String,
    /// The unweighted factors (sprio's `N_*` columns).
    pub factors: Factors,
}

/// The normalized job-size factor.
#[must_use]
pub fn job_size_factor(conf: &SchedConf, size: JobSize, part_max_time: Option<u64>) -> f64 {
    let p = &conf.priority;
    let nodes_total = conf.nodes as f64;
    let cpus_total = conf.nodes as f64 * f64::from(conf.cpus_per_node);
    if nodes_total == 0.0 || cpus_total == 0.0 {
        return 0.0;
    }
    let (n, c) = (size.nodes as f64, size.cpus as f64);
    let js = if p.small_relative_to_time {
        let mut v = (n * cpus_total / nodes_total).max(c);
        // Minutes, as job_ptr->time_limit holds them; INFINITE as u32::MAX.
        let minutes = size
            .time_limit
            .or(part_max_time)
            .map_or(f64::from(u32::MAX), |s| (s / 60).max(1) as f64);
        v /= minutes;
        v /= cpus_total;
        if p.favor_small { 1.0 - v } else { v }
    } else if p.favor_small {
        let mut v = if nodes_total > n {
            (nodes_total - n) / nodes_total
        } else {
            0.0
        };
        if c > 0.0 {
            v += (cpus_total - c) / cpus_total;
            v /= 2.0;
        }
        v
    } else {
        let mut v = n / nodes_total;
        if c > 0.0 {
            v += c / cpus_total;
            v /= 2.0;
        }
        v
    };
    js.clamp(0.0, 1.0)
}

/// The configured weights, in the order age, association, fair share,
/// job size, partition, QOS, TRES cpu, TRES node.
fn weights(conf: &SchedConf) -> [f64; 8] {
    let p = &conf.priority;
    [
        p.weight_age,
        p.weight_assoc,
        p.weight_fairshare,
        p.weight_job_size,
        p.weight_partition,
        p.weight_qos,
        p.weight_tres_cpu,
        p.weight_tres_node,
    ]
}

/// The weighted factors: age, association, fair share, job size,
/// partition, QOS, TRES cpu, TRES node.
#[must_use]
pub fn weighted(conf: &SchedConf, f: &Factors) -> [f64; 8] {
    let w = weights(conf);
    let v = [
        f.age,
        f.assoc,
        f.fairshare,
        f.job_size,
        f.partition,
        f.qos,
        f.tres_cpu,
        f.tres_node,
    ];
    core::array::from_fn(|i| w[i] * v[i])
}

/// The priority of factors `f`: the floor of the weighted sum minus nice,
/// at least 1, at most 2³² − 1.
///
/// ```
/// use partalloc_schedulers::slurm::conf::SchedConf;
/// use partalloc_schedulers::slurm::priority::{priority, Factors};
/// let mut conf = SchedConf::default();
/// conf.priority.weight_age = 1000.0;
/// conf.priority.weight_fairshare = 10_000.0;
/// let mut f = Factors::default();
/// f.age = 0.5;
/// f.fairshare = 0.33333;
/// // 500 + 3333.3 = 3833.3 → 3833.
/// assert_eq!(priority(&conf, &f), 3833);
/// f.nice = 5000;
/// assert_eq!(priority(&conf, &f), 1);
/// ```
#[must_use]
pub fn priority(conf: &SchedConf, f: &Factors) -> u32 {
    // Summed in Slurm's order (age, assoc, fair share, job size,
    // partition, QOS, TRES, then site − nice) so the floor sees the same
    // rounding.
    let w = weighted(conf, f);
    let tres = w[6] + w[7];
    let sum = w[0] + w[1] + w[2] + w[3] + w[4] + w[5] + tres - f.nice as f64;
    if sum.is_nan() || sum < 1.0 {
        1
    } else if sum >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        sum as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(favor_small: bool, relative: bool) -> SchedConf {
        let mut c =
            SchedConf::parse("NodeName=n[1-10] CPUs=4\nPartitionName=p Nodes=ALL\n", "x").unwrap();
        c.priority.favor_small = favor_small;
        c.priority.small_relative_to_time = relative;
        c
    }

    /// By hand: 2 of 10 nodes, 8 of 40 CPUs.
    #[test]
    fn job_size_by_hand() {
        let size = JobSize {
            nodes: 2,
            cpus: 8,
            time_limit: Some(3600),
        };
        let large = job_size_factor(&conf(false, false), size, None);
        assert!((large - (0.2 + 0.2) / 2.0).abs() < 1e-12);
        let small = job_size_factor(&conf(true, false), size, None);
        assert!((small - (0.8 + 0.8) / 2.0).abs() < 1e-12);
        // max(2 · 40/10, 8) / 60 minutes / 40 CPUs.
        let rel = job_size_factor(&conf(false, true), size, None);
        assert!((rel - 8.0 / 60.0 / 40.0).abs() < 1e-15);
        let rel_small = job_size_factor(&conf(true, true), size, None);
        assert!((rel_small - (1.0 - 8.0 / 60.0 / 40.0)).abs() < 1e-15);
    }
}
