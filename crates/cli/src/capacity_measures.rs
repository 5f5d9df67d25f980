//! What `simulate` adds on a capacity machine (`racks:`, `kueue:`, Slurm
//! files with GPUs) besides the run's racks per job and stranded GPUs:
//! per level, the largest pod set of one-GPU pods one domain could take,
//! as a time average over the run of seed 0
//! ([`CapacityMeter::largest_free`]).

use partalloc::allocators::Partition;
use partalloc::simkit::capacity::CapacityMeter;
use partalloc::simkit::observe::GrantLog;
use partalloc::topology::Topology;
use serde::Serialize;

/// Sampling times of the time average.
const SAMPLES: usize = 200;

/// One level's time-average largest placeable pod set.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LevelLargest {
    /// The level's node label.
    pub(crate) level: String,
    /// Mean over the sampled states of the most free GPUs in one domain
    /// of the level.
    pub(crate) mean_largest_pod_set: f64,
}

/// The capacity section of a `simulate` report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CapacitySummary {
    /// Per level, widest first.
    pub(crate) levels: Vec<LevelLargest>,
    /// States sampled (evenly spaced over the logged run).
    pub(crate) samples: usize,
}

/// The time averages over the states of the run `log` recorded, if
/// `topology` is a capacity machine and a job completed.
pub(crate) fn from_log(topology: &Topology, log: &GrantLog) -> Option<CapacitySummary> {
    let machine = topology.as_capacity()?;
    let mut sums = vec![0.0_f64; machine.levels().len()];
    let samples = log.for_each_sampled_state(topology, SAMPLES, |busy| {
        let mut meter = CapacityMeter::new(topology);
        meter.take(&Partition::Nodes(busy.iter().collect()));
        for (s, v) in sums.iter_mut().zip(meter.largest_free()) {
            *s += v as f64;
        }
    })?;
    let levels = machine
        .levels()
        .iter()
        .zip(sums)
        .map(|(level, sum)| LevelLargest {
            level: level.clone(),
            mean_largest_pod_set: sum / samples as f64,
        })
        .collect();
    Some(CapacitySummary { levels, samples })
}

#[cfg(test)]
mod tests {
    use super::*;
    use partalloc::allocators::Request;
    use partalloc::simkit::observe::{Departure, Observer};
    use partalloc::workload::{Job, JobShape};

    #[test]
    fn one_busy_gpu_leaves_each_level_its_widest_domain_less_one() {
        // On racks:2x3x4gpu (2 racks of 3 nodes of 4 GPUs) job 1 holds a
        // GPU until 2 and job 2 another one past the log's end: at the one
        // sampled time (2, the only completion) one GPU is busy, so the
        // block has 23 free GPUs, the best rack 12, the best node 4.
        let topology: Topology = "racks:2x3x4gpu".parse().unwrap();
        let mut alloc = partalloc::allocators::registry::build("paging", &topology).unwrap();
        let mut log = GrantLog::new(10);
        let jobs =
            [1, 2].map(|id| Job::new(id, 0.0, JobShape::Nodes { count: 1 }, 2.0 * id as f64));
        let grants = jobs.map(|_| alloc.allocate(&Request::nodes(1)).unwrap());
        for (slot, (job, grant)) in jobs.iter().zip(&grants).enumerate() {
            log.started(slot as u32, job, grant, 0.0);
        }
        log.departed(&Departure {
            slot: 0,
            job: &jobs[0],
            grant: &grants[0],
            start: 0.0,
            end: 2.0,
            measured: true,
        });
        // The run ends with job 2 still running: the log keeps it open.
        log.finish(2.0);
        let s = from_log(&topology, &log).unwrap();
        let got: Vec<f64> = s.levels.iter().map(|l| l.mean_largest_pod_set).collect();
        assert_eq!(got, [23.0, 12.0, 4.0]);
        assert!(s.samples >= 1);
        assert!(from_log(&"mesh:4x4".parse().unwrap(), &log).is_none());
    }
}
