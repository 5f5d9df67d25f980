//! Locality and fragmentation of a Slurm block or tree machine over a run:
//! stranded nodes averaged over time, and per job the fast domains touched,
//! the segments split and whether the job sat at the lowest level its size
//! allows, all from the job records.
//!
//! A *fast domain* is a base block of a block machine or a leaf switch of a
//! tree machine. A free node is **stranded** when its domain is partly
//! busy: a job that wants whole domains (Slurm's `--exclusive=topo`, or
//! segments as large as a domain) cannot use it. The per-state measure is
//! [`stranded_nodes`]; over a run it is sampled at evenly spaced times of
//! the window in which the grants of every running job are known, from the
//! first measured completion to the last one, as [`crate::pod`] does for
//! pods: [`slurm_log_measures`] from a [`GrantLog`] that watched the run
//! (any stop rule), [`slurm_run_measures`] from job records of jobs run to
//! completion (a finite job source, no stop rule).
//!
//! ```
//! use partalloc_allocators::registry::ALLOCATORS;
//! use partalloc_schedulers::registry::POLICIES;
//! use partalloc_simkit::slurm::slurm_run_measures;
//! use partalloc_simkit::{SimConfig, Simulation};
//! use partalloc_topology::Topology;
//! use partalloc_topology::slurm::SlurmMachine;
//! use partalloc_workload::{
//!     Arrivals, ChaCha8Rng, DemandLaw, Dependence, NodeCountLaw, SeedableRng, ShapeLaw,
//!     WorkloadSpec,
//! };
//!
//! let conf = "BlockName=r0 Nodes=n[00-07]\nBlockName=r1 Nodes=n[08-15]\nBlockSizes=8,16\n";
//! let machine: Topology = SlurmMachine::parse_conf(conf, "example")?.into();
//! let w = WorkloadSpec {
//!     arrivals: Arrivals::Load(0.6),
//!     shapes: ShapeLaw::Nodes { law: NodeCountLaw::Multiples(2), max: Some(8) },
//!     demand: DemandLaw::Exponential { mean: 1.0 },
//!     dependence: Dependence::Dependent,
//!     allow_saturation: false,
//! }
//! .build(&machine)?;
//! let mut rng = ChaCha8Rng::seed_from_u64(1);
//! let jobs = w.jobs(&mut rng).take(200);
//! let config = SimConfig { record_jobs: true, ..SimConfig::default() };
//! let (block, fcfs) = (ALLOCATORS.spec("block[segment=2]")?, POLICIES.spec("fcfs")?);
//! let report = Simulation::from_specs(machine.clone(), &block, &fcfs, jobs, config)?.run()?;
//! let m = slurm_run_measures(&machine, &report.jobs, Some(2), 50).expect("a Slurm machine");
//! assert!(m.mean_stranded_nodes >= 0.0 && m.mean_stranded_nodes <= 16.0);
//! // Segments of 2 never straddle a block of 8.
//! assert_eq!(m.mean_split_segments, 0.0);
//! assert!(m.mean_domains >= 1.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_allocators::Partition;
use partalloc_topology::slurm::SlurmMachine;
use partalloc_topology::{NodeId, NodeSet, Topology};

use crate::JobRecord;
use crate::observe::GrantLog;

/// What a run on a Slurm machine did to locality and fragmentation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlurmRunMeasures {
    /// Mean number of free nodes in partly busy fast domains (time average).
    pub mean_stranded_nodes: f64,
    /// Mean number of fast domains a job's nodes lie in.
    pub mean_domains: f64,
    /// Mean number of a job's segments that no single domain holds (0
    /// without a segment size).
    pub mean_split_segments: f64,
    /// Share of jobs placed at the lowest level their size allows (one base
    /// block or leaf switch if they fit one, else the smallest aggregate or
    /// switch that could hold them on an empty machine).
    pub lowest_level_share: f64,
    /// Sampling times of the stranded-node average.
    pub samples: usize,
    /// Job records measured.
    pub jobs: usize,
}

/// Free nodes of `machine` lying in fast domains that also hold a busy node
/// (`busy` holds the busy ids).
#[must_use]
pub fn stranded_nodes(machine: &SlurmMachine, busy: &NodeSet) -> u32 {
    let domains = machine.num_domains() as usize;
    // Per domain: (nodes, busy nodes).
    let mut count = vec![(0u32, 0u32); domains];
    for node in 0..machine.num_nodes() as NodeId {
        if let Some(c) = machine
            .domain_of(node)
            .and_then(|d| count.get_mut(d as usize))
        {
            c.0 += 1;
            c.1 += u32::from(busy.contains(node));
        }
    }
    count
        .iter()
        .filter(|&&(_, b)| b > 0)
        .map(|&(n, b)| n - b)
        .sum()
}

/// The lowest distance class ([`JobLocality::distance_class`]) a job of
/// `nodes` nodes can have on `machine`, whatever else runs (`u32::MAX` if
/// no switch holds that many; on a block machine, the number of levels if
/// no block does).
///
/// [`JobLocality::distance_class`]: partalloc_topology::slurm::JobLocality::distance_class
#[must_use]
pub fn lowest_class(machine: &SlurmMachine, nodes: u64) -> u32 {
    if let Some(b) = machine.blocks() {
        // The first level with a block of that many nodes (racks may be
        // smaller than the base block size).
        return (0..b.levels().len())
            .find(|&l| u64::from(b.largest_block_nodes_at(l)) >= nodes)
            .map_or(b.levels().len() as u32, |l| l as u32);
    }
    let Some(t) = machine.tree() else {
        return 0;
    };
    // Nodes under every switch; the lowest level among the switches that
    // hold enough nodes.
    let switches = t.switches();
    let mut under: Vec<u64> = switches
        .iter()
        .map(|s| u64::from(s.nodes.end - s.nodes.start))
        .collect();
    for &leaf in t.leaves() {
        let n = under.get(leaf as usize).copied().unwrap_or(0);
        for a in t.ancestors(leaf).skip(1) {
            if let Some(u) = under.get_mut(a as usize) {
                *u += n;
            }
        }
    }
    (0..switches.len() as u32)
        .filter(|&s| under.get(s as usize).is_some_and(|&u| u >= nodes))
        .filter_map(|s| t.level(s))
        .min()
        .unwrap_or(u32::MAX)
}

/// The measures of a run on `topology` (a Slurm machine; `None` otherwise
/// or without records), segments of `segment` nodes counted as split when
/// no domain holds them, stranded nodes sampled at `samples` evenly spaced
/// times (at least 1).
#[must_use]
pub fn slurm_run_measures(
    topology: &Topology,
    jobs: &[JobRecord],
    segment: Option<u32>,
    samples: usize,
) -> Option<SlurmRunMeasures> {
    measures(
        topology,
        |f| crate::report::for_each_sampled_state(topology, jobs, samples, f),
        jobs.iter().map(|j| &j.partition),
        segment,
    )
}

/// The measures of a run on `topology` (a Slurm machine; `None` otherwise
/// or without a logged completion) from the grants `log` kept during the
/// run: stranded nodes sampled at `samples` evenly spaced times (at least
/// one) between the first and the last logged completion, and the
/// locality of the logged completed jobs, segments of `segment` nodes
/// counted as split when no domain holds them (the allocator's own segment
/// size is [`GrantLog::segment`]).
///
/// ```
/// use partalloc_allocators::registry::ALLOCATORS;
/// use partalloc_schedulers::registry::POLICIES;
/// use partalloc_simkit::observe::GrantLog;
/// use partalloc_simkit::slurm::slurm_log_measures;
/// use partalloc_simkit::{SimConfig, Simulation};
/// use partalloc_topology::Topology;
/// use partalloc_topology::slurm::SlurmMachine;
/// use partalloc_workload::{Job, JobShape};
///
/// let conf = "BlockName=r0 Nodes=n[00-07]\nBlockName=r1 Nodes=n[08-15]\nBlockSizes=8,16\n";
/// let machine: Topology = SlurmMachine::parse_conf(conf, "example")?.into();
/// let jobs = (0..40).map(|i| Job::new(i, f64::from(i as u32) * 0.5, JobShape::Nodes { count: 4 }, 1.5));
/// let (block, fcfs) = (ALLOCATORS.spec("block[segment=2]")?, POLICIES.spec("fcfs")?);
/// let sim = Simulation::from_specs(machine.clone(), &block, &fcfs, jobs, SimConfig::default())?;
/// let mut log = GrantLog::new(usize::MAX);
/// sim.run_observed(&mut log, None)?;
/// // The strategy reports its own segment size.
/// assert_eq!(log.segment(), Some(2));
/// let m = slurm_log_measures(&machine, &log, log.segment(), 50).expect("a Slurm machine");
/// assert_eq!((m.jobs, m.mean_split_segments), (40, 0.0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn slurm_log_measures(
    topology: &Topology,
    log: &GrantLog,
    segment: Option<u32>,
    samples: usize,
) -> Option<SlurmRunMeasures> {
    measures(
        topology,
        |f| log.for_each_sampled_state(topology, samples, f),
        log.completed().iter().map(|h| &h.partition),
        segment,
    )
}

/// The stranded nodes over the states `sample` visits and the locality of
/// the completed jobs' `partitions`.
fn measures<'a>(
    topology: &Topology,
    sample: impl FnOnce(&mut dyn FnMut(&NodeSet)) -> Option<usize>,
    partitions: impl ExactSizeIterator<Item = &'a Partition>,
    segment: Option<u32>,
) -> Option<SlurmRunMeasures> {
    let machine = topology.as_slurm()?;
    let mut stranded = 0.0;
    let samples = sample(&mut |busy| {
        stranded += f64::from(stranded_nodes(machine, busy));
    })?;
    let (mut domains, mut split, mut lowest) = (0u64, 0u64, 0u64);
    let mut ids = Vec::new();
    let jobs = partitions.len();
    for p in partitions {
        ids.clear();
        let _ = p.for_each_node(topology, |c| ids.push(c));
        ids.sort_unstable();
        let l = machine.job_locality(&ids, segment);
        domains += u64::from(l.domains);
        split += u64::from(l.split_segments);
        lowest += u64::from(l.distance_class <= lowest_class(machine, ids.len() as u64));
    }
    let n = jobs as f64;
    Some(SlurmRunMeasures {
        mean_stranded_nodes: stranded / samples as f64,
        mean_domains: domains as f64 / n,
        mean_split_segments: split as f64 / n,
        lowest_level_share: lowest as f64 / n,
        samples,
        jobs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks() -> SlurmMachine {
        let conf = "BlockName=r0 Nodes=n[00-05]\nBlockName=r1 Nodes=n[06-11]\n\
                    BlockName=r2 Nodes=n[12-17]\nBlockName=r3 Nodes=n[18-23]\n\
                    BlockSizes=6,12,24\n";
        SlurmMachine::parse_conf(conf, "test").unwrap()
    }

    fn tree() -> SlurmMachine {
        let conf = "SwitchName=l0 Nodes=t[0-3]\nSwitchName=l1 Nodes=t[4-7]\n\
                    SwitchName=l2 Nodes=t[8-13]\nSwitchName=s0 Switches=l[0-1]\n\
                    SwitchName=top Switches=s0,l2\n";
        SlurmMachine::parse_conf(conf, "test").unwrap()
    }

    /// Stranded nodes by brute force: for each node, whether it is free
    /// and some node of its domain is busy.
    fn brute(m: &SlurmMachine, busy: &NodeSet) -> u32 {
        let n = m.num_nodes() as NodeId;
        (0..n)
            .filter(|&a| {
                !busy.contains(a)
                    && (0..n).any(|b| busy.contains(b) && m.domain_of(a) == m.domain_of(b))
            })
            .count() as u32
    }

    #[test]
    fn stranded_nodes_match_a_brute_force_count() {
        for m in [blocks(), tree()] {
            let n = m.num_nodes();
            let mut state = 0x9E37_79B9_7F4A_7C15u64;
            for _ in 0..300 {
                let mut busy = NodeSet::new(n);
                for node in 0..n as NodeId {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    if state >> 61 == 0 {
                        busy.insert(node).unwrap();
                    }
                }
                assert_eq!(stranded_nodes(&m, &busy), brute(&m, &busy));
            }
            assert_eq!(stranded_nodes(&m, &NodeSet::new(n)), 0);
        }
        // One busy node in r1 strands the other five of r1 only.
        let m = blocks();
        let mut busy = NodeSet::new(24);
        busy.insert(7).unwrap();
        assert_eq!(stranded_nodes(&m, &busy), 5);
    }

    #[test]
    fn the_lowest_class_follows_the_levels_and_the_switches() {
        let b = blocks();
        assert_eq!(
            [1, 6, 7, 12, 13, 24, 25].map(|n| lowest_class(&b, n)),
            [0, 0, 1, 1, 2, 2, 3]
        );
        // Racks of 6, 3, 6, 3: no pair holds 10 nodes, so such a job's
        // lowest class is the whole machine's level.
        let uneven = SlurmMachine::parse_conf(
            "BlockName=r0 Nodes=n[00-05]\nBlockName=r1 Nodes=n[06-08]\n\
             BlockName=r2 Nodes=n[09-14]\nBlockName=r3 Nodes=n[15-17]\nBlockSizes=6,12,24\n",
            "uneven",
        )
        .unwrap();
        assert_eq!(
            [6, 7, 9, 10, 18, 19].map(|n| lowest_class(&uneven, n)),
            [0, 1, 1, 2, 2, 3]
        );
        // Leaves l0, l1 of 4 nodes under s0 (8, level 1) under top (14),
        // and l2 of 6 nodes right under top: top's level is 2, one more
        // than s0's, though l2 is one step below it.
        let t = tree();
        assert_eq!(
            [4, 5, 6, 7, 8, 9, 14, 15].map(|n| lowest_class(&t, n)),
            [0, 0, 0, 1, 1, 2, 2, u32::MAX]
        );
        // A job's class does not depend on which of its nodes comes first.
        let one_each = [0, 8]; // t0 on l0, t8 on l2
        assert_eq!(t.job_locality(&one_each, None).distance_class, 2);
        assert_eq!(t.job_locality(&[8, 0], None).distance_class, 2);
    }

    #[test]
    fn a_run_without_records_or_off_a_slurm_machine_has_no_measures() {
        let m: Topology = blocks().into();
        assert!(slurm_run_measures(&m, &[], None, 10).is_none());
        let mesh: Topology = "mesh:4x4".parse().unwrap();
        assert!(slurm_run_measures(&mesh, &[], None, 10).is_none());
    }
}
