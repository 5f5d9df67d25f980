//! Locality and stranding on a capacity machine (`racks:`, `kueue:`: the
//! machines of Kueue's Topology-Aware Scheduling), measured as a run goes.
//!
//! The machine's nodes, as the run counts them, are its allocation units
//! (GPUs); each belongs to a leaf domain (a Kubernetes node) under the
//! machine's levels, widest first (block → rack → hostname). Every
//! [`Simulation`](crate::Simulation) on such a machine measures, with a
//! [`CapacityMeter`]:
//!
//! - per job, when it starts, a [`GrantDomains`]: how many domains of each
//!   level its GPUs lie in, and the **holding level**, the lowest (deepest)
//!   level one of whose domains holds all of them (none when even the
//!   widest level needs two domains). The jobs CSV writes them as
//!   `domains_per_level` (counts widest first, joined by `;`) and
//!   `holding_level` (the level's index, 0 for the widest; `-1` for none);
//!   [`Results::mean_racks_per_job`](crate::Results::mean_racks_per_job)
//!   is the mean over the measured jobs of the domains touched at the
//!   level just above the leaves (the racks of a `racks:` machine; the
//!   leaves themselves on a one-level machine);
//! - per state (after every scheduling decision), the **stranded GPUs**:
//!   let g be the fewest GPUs a waiting job asks for and L the lowest
//!   level with a domain of at least g GPUs (on the empty machine); a free
//!   GPU is stranded when its domain of level L has fewer than g free
//!   GPUs, so the smallest waiting job cannot use it without spreading
//!   over a wider domain. With no level holding g, the whole machine is
//!   the one domain; with no waiting job nothing is stranded.
//!   [`Results::mean_stranded_gpus`](crate::Results::mean_stranded_gpus)
//!   is its time average over the measurement window. The **largest
//!   placeable pod set** of each level ([`CapacityMeter::largest_free`])
//!   is the most free GPUs in one domain of the level: the largest job
//!   that level could take now within one domain.
//!
//! On other machines nothing is measured: the two jobs CSV columns are
//! empty and both run means are 0.
//!
//! ```
//! use partalloc_allocators::Partition;
//! use partalloc_simkit::capacity::CapacityMeter;
//! use partalloc_topology::Topology;
//!
//! // 1 block of 2 racks of 2 nodes with 4 GPUs: GPUs 0–7 in rack 0.
//! let m: Topology = "racks:1x2x2x4gpu".parse()?;
//! let mut meter = CapacityMeter::new(&m);
//! // GPUs 3 and 4: two nodes of rack 0.
//! let d = meter.measure(&Partition::Nodes(vec![3, 4])).expect("a capacity machine");
//! assert_eq!(d.per_level(), &[1, 1, 2]);
//! assert_eq!((d.holding_level(), d.racks()), (Some(1), 1));
//! // GPUs 7 and 8 straddle the racks: only the block holds them.
//! let d = meter.measure(&Partition::Nodes(vec![7, 8])).expect("a capacity machine");
//! assert_eq!((d.per_level(), d.holding_level()), (&[1, 2, 2][..], Some(0)));
//! // Two jobs of 6 GPUs each leave 2 free GPUs in each rack: a waiting job
//! // of 3 GPUs (a node holds 4, so L is the hostname level) finds no node
//! // with 3 free, so all 4 free GPUs are stranded.
//! meter.take(&Partition::Nodes(vec![0, 1, 2, 3, 4, 5]));
//! meter.take(&Partition::Nodes(vec![8, 9, 10, 11, 12, 13]));
//! meter.queue(3);
//! assert_eq!(meter.stranded_gpus(), 4);
//! assert_eq!(meter.largest_free(), vec![4, 2, 2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use partalloc_allocators::Partition;
use partalloc_topology::capacity::CapacityMachine;
use partalloc_topology::{NodeId, Topology};

/// Most levels a [`GrantDomains`] holds (as many as a capacity machine
/// may have).
pub const MAX_LEVELS: usize = 16;

/// How many domains of each level one grant touches (see the
/// [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GrantDomains {
    counts: [u32; MAX_LEVELS],
    levels: u8,
}

impl GrantDomains {
    /// Domains touched per level, widest first.
    #[must_use]
    pub fn per_level(&self) -> &[u32] {
        &self.counts[..usize::from(self.levels)]
    }

    /// The lowest (deepest) level with one domain holding the whole grant
    /// (0 is the widest), `None` when the widest level needs several (or
    /// for an empty grant).
    #[must_use]
    pub fn holding_level(&self) -> Option<usize> {
        self.per_level().iter().rposition(|&c| c == 1)
    }

    /// Domains touched at the level just above the leaves (the racks of a
    /// `racks:` machine; the leaves on a one-level machine).
    #[must_use]
    pub fn racks(&self) -> u32 {
        let l = usize::from(self.levels);
        self.counts[l.saturating_sub(2).min(l.saturating_sub(1))]
    }

    /// `domains_per_level` as the jobs CSV writes it: `1;2;5`.
    #[must_use]
    pub fn per_level_text(&self) -> String {
        let mut s = String::new();
        for (i, c) in self.per_level().iter().enumerate() {
            if i > 0 {
                s.push(';');
            }
            s.push_str(&c.to_string());
        }
        s
    }
}

/// The per-job and per-state measures of one capacity machine (see the
/// [module docs](self)); it keeps its buffers between calls.
#[derive(Debug, Clone)]
pub struct CapacityMeter {
    inner: Option<Inner>,
}

#[derive(Debug, Clone)]
struct Inner {
    topology: Topology,
    machine: Arc<CapacityMachine>,
    /// Level of each domain.
    level_of: Vec<u8>,
    /// Per domain: the epoch of the last grant that touched it.
    stamp: Vec<u32>,
    epoch: u32,
    ids: Vec<NodeId>,
    /// Free units per domain.
    free: Vec<u64>,
    total_free: u64,
    /// Per level: the most units one domain has on the empty machine.
    widest: Vec<u64>,
    /// Waiting jobs by requested units.
    queued: BTreeMap<u64, u32>,
}

impl CapacityMeter {
    /// A meter for `topology` (one that measures nothing on a machine
    /// that is not a capacity machine, or one of more than [`MAX_LEVELS`]
    /// levels).
    #[must_use]
    pub fn new(topology: &Topology) -> Self {
        let inner = topology
            .as_capacity()
            .filter(|m| m.levels().len() <= MAX_LEVELS)
            .map(|m| Inner::new(topology, m));
        Self { inner }
    }

    /// A meter that measures nothing (a run that did not ask for the
    /// capacity measure).
    #[must_use]
    pub fn undefined() -> Self {
        Self { inner: None }
    }

    /// Whether the machine is a capacity machine.
    #[must_use]
    pub fn is_defined(&self) -> bool {
        self.inner.is_some()
    }

    /// The domains per level of `partition`; `None` on another machine or
    /// for a partition with a unit outside the machine.
    pub fn measure(&mut self, partition: &Partition) -> Option<GrantDomains> {
        let inner = self.inner.as_mut()?;
        inner.list(partition)?;
        inner.epoch = inner.epoch.wrapping_add(1);
        if inner.epoch == 0 {
            inner.stamp.fill(0);
            inner.epoch = 1;
        }
        let m = Arc::clone(&inner.machine);
        let mut out = GrantDomains {
            counts: [0; MAX_LEVELS],
            levels: m.levels().len() as u8,
        };
        let mut last: Option<(core::ops::Range<u32>, usize)> = None;
        for &u in &inner.ids {
            let leaf = match &last {
                Some((r, leaf)) if r.contains(&u) => *leaf,
                _ => {
                    let leaf = m.unit_leaf(u)?;
                    last = Some((m.leaf_units(leaf), leaf));
                    leaf
                }
            };
            let mut d = m.leaf_domain(leaf);
            loop {
                // An ancestor of a domain seen is seen.
                if inner.stamp[d] == inner.epoch {
                    break;
                }
                inner.stamp[d] = inner.epoch;
                out.counts[usize::from(inner.level_of[d])] += 1;
                match m.parent(d) {
                    Some(p) => d = p,
                    None => break,
                }
            }
        }
        Some(out)
    }

    /// A grant's units become busy.
    pub fn take(&mut self, partition: &Partition) {
        if let Some(inner) = self.inner.as_mut() {
            inner.change(partition, false);
        }
    }

    /// A grant's units become free again.
    pub fn give_back(&mut self, partition: &Partition) {
        if let Some(inner) = self.inner.as_mut() {
            inner.change(partition, true);
        }
    }

    /// A job asking for `units` GPUs joins the queue.
    pub fn queue(&mut self, units: u64) {
        if let Some(inner) = self.inner.as_mut() {
            *inner.queued.entry(units).or_insert(0) += 1;
        }
    }

    /// A job asking for `units` GPUs leaves the queue (it started).
    pub fn dequeue(&mut self, units: u64) {
        if let Some(inner) = self.inner.as_mut()
            && let Some(n) = inner.queued.get_mut(&units)
        {
            *n -= 1;
            if *n == 0 {
                inner.queued.remove(&units);
            }
        }
    }

    /// Free GPUs the smallest waiting job cannot use within the lowest
    /// level that could hold it (see the [module docs](self)); 0 with no
    /// waiting job or on another machine.
    #[must_use]
    pub fn stranded_gpus(&self) -> u64 {
        let Some(inner) = &self.inner else {
            return 0;
        };
        let Some((&g, _)) = inner.queued.first_key_value() else {
            return 0;
        };
        match inner.widest.iter().rposition(|&w| w >= g) {
            Some(level) => inner
                .machine
                .level_domains(level)
                .map(|d| inner.free[d])
                .filter(|&f| f < g)
                .sum(),
            None if inner.total_free < g => inner.total_free,
            None => 0,
        }
    }

    /// Per level (widest first), the most free GPUs in one of its domains:
    /// the largest pod set of one-GPU pods one domain could take now.
    /// Empty on another machine.
    #[must_use]
    pub fn largest_free(&self) -> Vec<u64> {
        let Some(inner) = &self.inner else {
            return Vec::new();
        };
        (0..inner.machine.levels().len())
            .map(|l| {
                inner
                    .machine
                    .level_domains(l)
                    .map(|d| inner.free[d])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }
}

impl Inner {
    fn new(topology: &Topology, m: &Arc<CapacityMachine>) -> Self {
        let domains = m.num_domains();
        let levels = m.levels().len();
        let mut level_of = vec![0u8; domains];
        let mut free = vec![0u64; domains];
        for l in 0..levels {
            for d in m.level_domains(l) {
                level_of[d] = l as u8;
            }
        }
        for leaf in 0..m.num_leaves() {
            let n = u64::from(m.leaf_units(leaf).len() as u32);
            let mut d = Some(m.leaf_domain(leaf));
            while let Some(x) = d {
                free[x] += n;
                d = m.parent(x);
            }
        }
        let widest = (0..levels)
            .map(|l| m.level_domains(l).map(|d| free[d]).max().unwrap_or(0))
            .collect();
        Self {
            topology: topology.clone(),
            machine: Arc::clone(m),
            level_of,
            stamp: vec![0; domains],
            epoch: 0,
            ids: Vec::new(),
            total_free: m.num_units() as u64,
            free,
            widest,
            queued: BTreeMap::new(),
        }
    }

    /// Lists the partition's units into `ids`; `None` if one is outside.
    fn list(&mut self, partition: &Partition) -> Option<()> {
        self.ids.clear();
        match partition {
            Partition::Nodes(ns) => self.ids.extend_from_slice(ns),
            p => {
                let ids = &mut self.ids;
                p.for_each_node(&self.topology, |n| ids.push(n)).ok()?;
            }
        }
        let units = self.machine.num_units();
        self.ids.iter().all(|&u| (u as usize) < units).then_some(())
    }

    fn change(&mut self, partition: &Partition, freed: bool) {
        if self.list(partition).is_none() {
            return;
        }
        let m = Arc::clone(&self.machine);
        // Units of one leaf are counted together and the leaf's domains
        // changed once per run of them: a grant's units are mostly in
        // order, so a grant of millions of GPUs costs a pass over its ids,
        // not a search and a walk up the tree per unit.
        let mut run: Option<(usize, std::ops::Range<u32>, u64)> = None;
        let ids = std::mem::take(&mut self.ids);
        for &u in &ids {
            if let Some((_, units, count)) = &mut run
                && units.contains(&u)
            {
                *count += 1;
                continue;
            }
            if let Some((leaf, _, count)) = run.take() {
                self.apply(&m, leaf, count, freed);
            }
            run = m.unit_leaf(u).map(|leaf| (leaf, m.leaf_units(leaf), 1));
        }
        if let Some((leaf, _, count)) = run {
            self.apply(&m, leaf, count, freed);
        }
        self.ids = ids;
    }

    /// Frees (or takes) `count` units of `leaf` in every domain above it.
    fn apply(&mut self, m: &CapacityMachine, leaf: usize, count: u64, freed: bool) {
        let mut d = Some(m.leaf_domain(leaf));
        while let Some(x) = d {
            self.free[x] = if freed {
                self.free[x] + count
            } else {
                self.free[x].saturating_sub(count)
            };
            d = m.parent(x);
        }
        self.total_free = if freed {
            self.total_free + count
        } else {
            self.total_free.saturating_sub(count)
        };
    }
}

/// The `capacity` measure ([`crate::measure`]) as an
/// [`Observer`](crate::observe::Observer): racks per measured job and the
/// time-average stranded GPUs over the measurement window, judged on
/// `machine` (a capacity machine) whatever machine the run is on, as long
/// as its node ids are the capacity machine's units (a Slurm block machine
/// of one node per GPU, numbered rack after rack, is). A run on a capacity
/// machine takes it for [`Results`](crate::Results); passed to
/// [`Simulation::run_observed`](crate::Simulation::run_observed) it
/// measures another machine's grants the same way.
///
/// ```
/// use partalloc_allocators::registry::ALLOCATORS;
/// use partalloc_schedulers::registry::POLICIES;
/// use partalloc_simkit::capacity::CapacityObserver;
/// use partalloc_simkit::{SimConfig, Simulation};
/// use partalloc_workload::{Job, JobShape};
/// let racks: partalloc_topology::Topology = "racks:1x2x2x4gpu".parse()?;
/// let jobs = [(1, 0.0, 6), (2, 0.0, 6), (3, 1.0, 3)]
///     .map(|(id, at, count)| Job::new(id, at, JobShape::Nodes { count }, 10.0));
/// let (tas, fcfs) = (ALLOCATORS.spec("tas[mode=required,level=rack]")?, POLICIES.spec("fcfs")?);
/// let sim = Simulation::from_specs(racks.clone(), &tas, &fcfs, jobs, SimConfig::default())?;
/// let mut seen = CapacityObserver::new(&racks);
/// let r = sim.run_observed(&mut seen, None)?;
/// assert_eq!(seen.mean_stranded_gpus(), r.results.mean_stranded_gpus);
/// assert_eq!(seen.mean_racks_per_job(), r.results.mean_racks_per_job);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct CapacityObserver {
    meter: CapacityMeter,
    /// The domains of each running slot's grant.
    held: Vec<Option<GrantDomains>>,
    racks: DomainSums,
    /// ∫ stranded GPUs dt since the window opened, up to `last`'s time.
    stranded: f64,
    /// The last settled time and the stranded GPUs since.
    last: (f64, f64),
    window_start: f64,
    reset_pending: bool,
    end: f64,
}

impl CapacityObserver {
    /// An observer judging grants on `machine` (measuring nothing unless
    /// it is a capacity machine).
    #[must_use]
    pub fn new(machine: &Topology) -> Self {
        Self {
            meter: CapacityMeter::new(machine),
            held: Vec::new(),
            racks: DomainSums::default(),
            stranded: 0.0,
            last: (0.0, 0.0),
            window_start: 0.0,
            reset_pending: false,
            end: 0.0,
        }
    }

    /// The mean racks per measured job.
    #[must_use]
    pub fn mean_racks_per_job(&self) -> f64 {
        self.racks.mean_racks()
    }

    /// The time-average stranded GPUs over the measurement window (read
    /// after the run).
    #[must_use]
    pub fn mean_stranded_gpus(&self) -> f64 {
        let span = (self.end - self.window_start).max(0.0);
        if span > 0.0 {
            self.stranded / span
        } else {
            0.0
        }
    }

    /// The domains per level of the grant running in `slot`.
    pub(crate) fn domains(&self, slot: u32) -> Option<GrantDomains> {
        self.held.get(slot as usize).copied().flatten()
    }
}

impl crate::observe::Observer for CapacityObserver {
    fn arrived(&mut self, job: &partalloc_workload::Job, _now: f64) {
        self.meter.queue(job.shape.node_count());
    }

    fn started(
        &mut self,
        slot: u32,
        job: &partalloc_workload::Job,
        grant: &partalloc_allocators::Grant,
        _now: f64,
    ) {
        self.meter.dequeue(job.shape.node_count());
        self.meter.take(grant.partition());
        let domains = self.meter.measure(grant.partition());
        let i = slot as usize;
        if self.held.len() <= i {
            self.held.resize(i + 1, None);
        }
        self.held[i] = domains;
    }

    fn departed(&mut self, d: &crate::observe::Departure<'_>) {
        self.meter.give_back(d.grant.partition());
        if d.requeued {
            self.meter.queue(d.job.shape.node_count());
        } else if d.measured
            && let Some(domains) = self.domains(d.slot)
        {
            self.racks.add(&domains);
        }
    }

    fn settled(&mut self, now: f64, _alloc: &dyn partalloc_allocators::Allocator, _waiting: usize) {
        let (t, v) = self.last;
        self.stranded += v * (now - t);
        self.last = (now, self.meter.stranded_gpus() as f64);
        if self.reset_pending {
            self.reset_pending = false;
            self.stranded = 0.0;
            self.window_start = now;
        }
    }

    fn window_opened(&mut self, _now: f64) {
        self.reset_pending = true;
    }

    fn finish(&mut self, end: f64) {
        let (t, v) = self.last;
        self.stranded += v * (end - t).max(0.0);
        self.last = (end, v);
        self.end = end;
    }
}

/// Running sums of the measured jobs' racks, for the run mean.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DomainSums {
    jobs: u64,
    racks: f64,
}

impl DomainSums {
    pub(crate) fn add(&mut self, d: &GrantDomains) {
        self.jobs += 1;
        self.racks += f64::from(d.racks());
    }

    /// The mean racks per measured job; 0 without one.
    pub(crate) fn mean_racks(&self) -> f64 {
        if self.jobs == 0 {
            0.0
        } else {
            self.racks / self.jobs as f64
        }
    }
}

/// Sampling times of [`largest_pod_sets`]'s time average.
pub const LARGEST_SAMPLES: usize = 200;

/// One level's time-average largest placeable pod set.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LevelLargest {
    /// The level's node label.
    pub level: String,
    /// Mean over the sampled states of the most free GPUs in one domain
    /// of the level.
    pub mean_largest_pod_set: f64,
}

/// Per level of a capacity machine, the largest pod set of one-GPU pods
/// one domain could take, as a time average over a logged run
/// ([`largest_pod_sets`]).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LargestPodSets {
    /// Per level, widest first.
    pub levels: Vec<LevelLargest>,
    /// States sampled (evenly spaced over the logged run).
    pub samples: usize,
}

/// The time averages of [`CapacityMeter::largest_free`] over
/// [`LARGEST_SAMPLES`] states of the run `log` recorded, if `topology` is a
/// capacity machine and a job completed: what every front end reports
/// beside a capacity machine's racks per job and stranded GPUs (from the
/// log of the first replication).
#[must_use]
pub fn largest_pod_sets(
    topology: &Topology,
    log: &crate::observe::GrantLog,
) -> Option<LargestPodSets> {
    let machine = topology.as_capacity()?;
    let mut sums = vec![0.0_f64; machine.levels().len()];
    let samples = log.for_each_sampled_state(topology, LARGEST_SAMPLES, |busy| {
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
    Some(LargestPodSets { levels, samples })
}

#[cfg(test)]
mod tests {
    use super::*;
    use partalloc_allocators::registry::ALLOCATORS;
    use partalloc_schedulers::registry::POLICIES;
    use proptest::prelude::*;

    /// Brute force: a free GPU is stranded when no domain of level L (the
    /// lowest with a domain of g GPUs) containing it has g free.
    fn brute_stranded(m: &CapacityMachine, busy: &[bool], g: u64) -> u64 {
        let levels = m.levels().len();
        let leaf_of = |u: u32| m.unit_leaf(u).unwrap();
        let ancestor = |u: u32, level: usize| {
            let mut d = m.leaf_domain(leaf_of(u));
            for _ in level..levels - 1 {
                d = m.parent(d).unwrap();
            }
            d
        };
        let units = m.num_units() as u32;
        let level = (0..levels).rev().find(|&l| {
            m.level_domains(l)
                .any(|d| (0..units).filter(|&u| ancestor(u, l) == d).count() as u64 >= g)
        });
        let free: Vec<u32> = (0..units).filter(|&u| !busy[u as usize]).collect();
        match level {
            None => {
                if (free.len() as u64) < g {
                    free.len() as u64
                } else {
                    0
                }
            }
            Some(l) => free
                .iter()
                .filter(|&&u| {
                    let d = ancestor(u, l);
                    (free.iter().filter(|&&v| ancestor(v, l) == d).count() as u64) < g
                })
                .count() as u64,
        }
    }

    proptest! {
        /// Domains per level, stranded GPUs and the largest free domain
        /// per level equal their definitions counted unit by unit.
        #[test]
        fn measures_equal_brute_force(
            (b, r, n, gpus) in (1u32..=2, 1u32..=3, 1u32..=3, 1u32..=4),
            picks in prop::collection::vec(any::<u32>(), 0..40),
            g in 1u64..=40,
        ) {
            let t: Topology = format!("racks:{b}x{r}x{n}x{gpus}gpu").parse().unwrap();
            let m = t.as_capacity().unwrap().clone();
            let units = m.num_units() as u32;
            let mut busy = vec![false; units as usize];
            let mut grant: Vec<u32> = Vec::new();
            for p in picks {
                let u = p % units;
                if !busy[u as usize] {
                    busy[u as usize] = true;
                    grant.push(u);
                }
            }
            let mut meter = CapacityMeter::new(&t);
            let d = meter.measure(&Partition::Nodes(grant.clone())).unwrap();
            let levels = m.levels().len();
            for l in 0..levels {
                let mut seen: Vec<usize> = grant
                    .iter()
                    .map(|&u| {
                        let mut d = m.leaf_domain(m.unit_leaf(u).unwrap());
                        for _ in l..levels - 1 {
                            d = m.parent(d).unwrap();
                        }
                        d
                    })
                    .collect();
                seen.sort_unstable();
                seen.dedup();
                prop_assert_eq!(d.per_level()[l] as usize, seen.len());
            }
            meter.take(&Partition::Nodes(grant.clone()));
            meter.queue(g + 3);
            meter.queue(g);
            prop_assert_eq!(meter.stranded_gpus(), brute_stranded(&m, &busy, g));
            for l in 0..levels {
                let most = m
                    .level_domains(l)
                    .map(|dom| {
                        (0..units)
                            .filter(|&u| !busy[u as usize])
                            .filter(|&u| {
                                let mut x = m.leaf_domain(m.unit_leaf(u).unwrap());
                                for _ in l..levels - 1 {
                                    x = m.parent(x).unwrap();
                                }
                                x == dom
                            })
                            .count() as u64
                    })
                    .max()
                    .unwrap();
                prop_assert_eq!(meter.largest_free()[l], most);
            }
            // Released, and the queue emptied: nothing stranded, all free.
            meter.give_back(&Partition::Nodes(grant));
            meter.dequeue(g);
            meter.dequeue(g + 3);
            prop_assert_eq!(meter.stranded_gpus(), 0);
            prop_assert_eq!(meter.largest_free()[0], m.level_domains(0).map(|dom| {
                (0..units).filter(|&u| {
                    let mut x = m.leaf_domain(m.unit_leaf(u).unwrap());
                    for _ in 0..levels - 1 {
                        x = m.parent(x).unwrap();
                    }
                    x == dom
                }).count() as u64
            }).max().unwrap());
        }
    }

    /// Three jobs on 2 racks × 2 nodes × 4 GPUs, by hand. J1 and J2 (6
    /// GPUs, 0–10) fill a node and half the next in each rack. J3 (3 GPUs,
    /// arrives at 1): under `required` rack it waits until 10, while every
    /// node has 0 or 2 free GPUs, so all 4 free GPUs are stranded for 9 of
    /// the 15 time units (mean 2.4), then runs 10–15 on one node. Under
    /// `preferred` it starts at once over both racks (2 + 1 GPUs): racks
    /// per job (1 + 1 + 2) / 3, nothing stranded.
    #[test]
    fn a_run_by_hand() -> Result<(), Box<dyn std::error::Error>> {
        use crate::{SimConfig, Simulation};
        use partalloc_workload::{Job, JobShape};
        let jobs = [(1, 0.0, 6, 10.0), (2, 0.0, 6, 10.0), (3, 1.0, 3, 5.0)]
            .map(|(id, at, count, s)| Job::new(id, at, JobShape::Nodes { count }, s));
        let config = SimConfig {
            record_jobs: true,
            measure_search_time: false,
            ..SimConfig::default()
        };
        let racks: Topology = "racks:1x2x2x4gpu".parse()?;
        let run = |strategy: &str| {
            Simulation::from_specs(
                racks.clone(),
                &ALLOCATORS.spec(strategy)?,
                &POLICIES.spec("fcfs")?,
                jobs,
                config,
            )?
            .run()
        };
        let required = run("tas[mode=required,level=rack]")?;
        let per_job: Vec<(f64, Vec<u32>, Option<usize>)> = required
            .jobs
            .iter()
            .map(|j| {
                let d = j.domains.unwrap();
                (j.start, d.per_level().to_vec(), d.holding_level())
            })
            .collect();
        assert_eq!(
            per_job,
            [
                (0.0, vec![1, 1, 2], Some(1)),
                (0.0, vec![1, 1, 2], Some(1)),
                (10.0, vec![1, 1, 1], Some(2)),
            ]
        );
        assert_eq!(required.results.mean_stranded_gpus, 4.0 * 9.0 / 15.0);
        assert_eq!(required.results.mean_racks_per_job, 1.0);
        let preferred = run("tas[mode=preferred,level=rack]")?;
        let j3 = &preferred.jobs[0];
        assert_eq!((j3.id, j3.start), (3, 1.0));
        let d = j3.domains.unwrap();
        assert_eq!(
            (d.per_level(), d.holding_level()),
            (&[1, 2, 2][..], Some(0))
        );
        assert_eq!(preferred.results.mean_stranded_gpus, 0.0);
        assert_eq!(preferred.results.mean_racks_per_job, 4.0 / 3.0);
        #[cfg(feature = "csv")]
        {
            let mut csv = Vec::new();
            required.write_jobs_csv(&mut csv)?;
            let text = String::from_utf8(csv)?;
            assert!(text.lines().nth(3).unwrap().ends_with(",1;1;1,2"));
        }
        Ok(())
    }

    #[test]
    fn other_machines_and_bad_grants_measure_nothing() {
        let mesh: Topology = "mesh:4x4".parse().unwrap();
        let mut m = CapacityMeter::new(&mesh);
        assert!(!m.is_defined());
        assert_eq!(m.measure(&Partition::Nodes(vec![0])), None);
        m.queue(1);
        assert_eq!((m.stranded_gpus(), m.largest_free()), (0, vec![]));
        let racks: Topology = "racks:1x2x2x4gpu".parse().unwrap();
        let mut c = CapacityMeter::new(&racks);
        assert_eq!(c.measure(&Partition::Nodes(vec![16])), None);
        let d = c.measure(&Partition::Nodes(vec![])).unwrap();
        assert_eq!((d.per_level(), d.holding_level()), (&[0, 0, 0][..], None));
        // Larger than the machine: the machine is the one domain.
        c.queue(17);
        assert_eq!(c.stranded_gpus(), 16);
        assert_eq!(d.per_level_text(), "0;0;0");
    }

    #[test]
    fn one_busy_gpu_leaves_each_level_its_widest_domain_less_one() {
        use crate::observe::{Departure, GrantLog, Observer};
        use partalloc_allocators::Request;
        use partalloc_workload::{Job, JobShape};
        // On racks:2x3x4gpu (2 racks of 3 nodes of 4 GPUs) job 1 holds a
        // GPU until 2 and job 2 another one past the log's end: at the one
        // sampled time (2, the only completion) one GPU is busy, so the
        // block has 23 free GPUs, the best rack 12, the best node 4.
        let topology: Topology = "racks:2x3x4gpu".parse().unwrap();
        let mut alloc = partalloc_allocators::registry::build("paging", &topology).unwrap();
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
            requeued: false,
        });
        // The run ends with job 2 still running: the log keeps it open.
        log.finish(2.0);
        let s = largest_pod_sets(&topology, &log).unwrap();
        let got: Vec<f64> = s.levels.iter().map(|l| l.mean_largest_pod_set).collect();
        assert_eq!(got, [23.0, 12.0, 4.0]);
        assert!(s.samples >= 1);
        assert!(largest_pod_sets(&"mesh:4x4".parse().unwrap(), &log).is_none());
    }
}
