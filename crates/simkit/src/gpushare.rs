//! The `frag` measure of GPU-sharing clusters: the share of the cluster's
//! GPUs allocated, and FGD's fragmentation (Weng et al., USENIX ATC 2023)
//! of its idle GPUs against the cluster's typical pods, as time averages
//! over the run.
//!
//! [`FragMeter`] is an [`Observer`]: it follows the run's grants on a
//! twin of the run's strategy ([`GpuShareAllocator::same_as`], built from
//! the canonical name the strategy reports), placing each started pod on
//! the node its grant names with the GPUs that strategy takes there
//! ([`Allocator::allocate_at`]), and releasing it when it departs. The
//! twin's state is then the run's, GPU for GPU (the run's strategy takes
//! the same GPUs within the node it chose; `gpu-random` draws a share's
//! GPU from a stream of its own, drawn once per placement), and its
//! fragmentation is the cluster's. A strategy of another module on this
//! family is followed with `gpu-best-fit`'s choice of GPUs within the
//! node.
//!
//! ```
//! use partalloc_allocators::registry::ALLOCATORS;
//! use partalloc_schedulers::registry::POLICIES;
//! use partalloc_simkit::{SimConfig, Simulation};
//! use partalloc_topology::gpushare::GpuRequest;
//! use partalloc_workload::{Job, JobShape};
//!
//! let pod = |milli| JobShape::Pod { request: GpuRequest::gpu(1000, 1024, 1, milli).unwrap() };
//! let jobs = vec![Job::new(0, 0.0, pod(500), 4.0), Job::new(1, 0.0, pod(250), 2.0)];
//! let (fgd, fcfs) = (ALLOCATORS.spec("fgd")?, POLICIES.spec("fcfs")?);
//! let sim = Simulation::from_specs("gpushare:1x2gpu".parse()?, &fgd, &fcfs, jobs, SimConfig::default())?;
//! let r = sim.run()?.results;
//! assert_eq!(r.measured.to_string(), "frag");
//! // 750 of 2000 thousandths for 2 time units, 500 for 2 more.
//! assert!((r.mean_gpu_allocation - 0.3125).abs() < 1e-12);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_allocators::gpushare::{GpuReading, GpuShareAllocator};
use partalloc_allocators::{Allocator, Grant};
use partalloc_schedulers::RequestMapping;
use partalloc_topology::Topology;
use partalloc_workload::Job;

use crate::observe::{Departure, Observer};

/// The three time averages of the `frag` measure.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FragMeasures {
    /// Time-average share of the cluster's GPU thousandths allocated.
    pub mean_gpu_allocation: f64,
    /// Time-average fragmented GPUs (idle thousandths no typical pod can
    /// use, weighted by the typical pods' frequencies, over 1000).
    pub mean_frag_gpus: f64,
    /// Time-average fragmented share of the idle GPUs (0 while none is
    /// idle).
    pub mean_frag_ratio: f64,
}

/// Follows a run's grants on a twin of its strategy (see the module docs).
#[derive(Debug, Default)]
pub struct FragMeter {
    twin: Option<GpuShareAllocator>,
    /// The twin's grant of each running slot.
    held: Vec<Option<Grant>>,
    /// Grants the twin could not follow (0 unless the run's strategy
    /// places as no strategy of this family does).
    missed: u64,
    start: Option<f64>,
    last: f64,
    now: Quantities,
    sums: [f64; 3],
}

/// A reading as the three quantities.
#[derive(Debug, Clone, Copy, Default)]
struct Quantities([f64; 3]);

impl Quantities {
    fn of(r: GpuReading) -> Self {
        let alloc = if r.total > 0.0 { r.used / r.total } else { 0.0 };
        let ratio = if r.idle > 0.0 { r.frag / r.idle } else { 0.0 };
        Quantities([alloc, r.frag / 1000.0, ratio])
    }
}

impl FragMeter {
    /// A meter that starts following at the run's [`Observer::begin`].
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Grants the twin could not follow.
    #[must_use]
    pub fn missed(&self) -> u64 {
        self.missed
    }

    /// The time averages from the run's first event to `end` (all 0 before
    /// any event, or on another machine family).
    #[must_use]
    pub fn measures(&self, end: f64) -> FragMeasures {
        let Some(start) = self.start else {
            return FragMeasures::default();
        };
        let mut sums = self.sums;
        let tail = (end - self.last).max(0.0);
        for (s, v) in sums.iter_mut().zip(self.now.0) {
            *s += v * tail;
        }
        let span = end.max(self.last) - start;
        if span <= 0.0 {
            let [a, f, r] = self.now.0;
            return FragMeasures {
                mean_gpu_allocation: a,
                mean_frag_gpus: f,
                mean_frag_ratio: r,
            };
        }
        FragMeasures {
            mean_gpu_allocation: sums[0] / span,
            mean_frag_gpus: sums[1] / span,
            mean_frag_ratio: sums[2] / span,
        }
    }
}

impl Observer for FragMeter {
    fn begin(&mut self, topology: &Topology, alloc: &dyn Allocator) {
        self.twin = GpuShareAllocator::same_as(&alloc.name(), topology)
            .or_else(|| GpuShareAllocator::same_as("gpu-best-fit", topology));
        if let Some(t) = &self.twin {
            self.now = Quantities::of(t.reading());
        }
    }

    fn started(&mut self, slot: u32, job: &Job, grant: &Grant, _now: f64) {
        let Some(twin) = self.twin.as_mut() else {
            return;
        };
        let request = RequestMapping::default().request(&job.shape);
        let slot = slot as usize;
        if self.held.len() <= slot {
            self.held.resize(slot + 1, None);
        }
        match twin.allocate_at(&request, grant.partition()) {
            Ok(g) => self.held[slot] = Some(g),
            Err(_) => self.missed += 1,
        }
    }

    fn departed(&mut self, departure: &Departure<'_>) {
        let Some(twin) = self.twin.as_mut() else {
            return;
        };
        if let Some(g) = self
            .held
            .get_mut(departure.slot as usize)
            .and_then(Option::take)
            && twin.release(&g).is_err()
        {
            self.missed += 1;
        }
    }

    fn settled(&mut self, now: f64, _alloc: &dyn Allocator, _waiting: usize) {
        let Some(twin) = &self.twin else {
            return;
        };
        match self.start {
            None => self.start = Some(now),
            Some(_) => {
                let dt = (now - self.last).max(0.0);
                for (s, v) in self.sums.iter_mut().zip(self.now.0) {
                    *s += v * dt;
                }
            }
        }
        self.last = now;
        self.now = Quantities::of(twin.reading());
    }
}
