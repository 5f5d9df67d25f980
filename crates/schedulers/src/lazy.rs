//! Lazy scheduling (Mohapatra, Yu, Das & Kim §3.2).
//!
//! One FIFO queue `Q_k` per size class and a count `N_k` of running
//! class-k jobs. A class-k job "tends to wait for an occupied subcube of the
//! same size instead of using a new cube": the head of `Q_k` asks the
//! allocator for a new partition only while `|Q_k| > N_k`. When a class-k
//! job departs, its partition goes to the head of `Q_k` (Lazy_Release step
//! 2). A job whose waiting time exceeds the threshold sets *stop_alloc*:
//! then nothing starts until that job has started (steps 1 and 3).
//!
//! How the algorithm text maps onto events (each choice is also in
//! `docs/paper-errata.md` (schedulers part)):
//! - Lazy_Release runs on every departure: step 1 checks the oldest waiting
//!   job against the threshold; step 2 hands the released partition to the
//!   head of `Q_k` (modelled as release then an allocation for that head —
//!   with a buddy allocator the head gets a Q_k, not necessarily the same
//!   one); step 3 is tried *after* the release of step 4 (the text orders
//!   it before, which would keep the released nodes away from the job that
//!   has priority).
//! - The Lazy_Request rule (`|Q_k| > N_k` → try the head of `Q_k`) is
//!   applied to every queue, smallest class first, after every arrival and
//!   departure, while *stop_alloc* is false; the text applies it only to
//!   the arriving job's queue, which would leave a refused job waiting for
//!   another arrival of its size even on an empty machine.
//! - The threshold is fixed or dynamic, `d² · λ` ([`Threshold`]); it is
//!   exceeded when the waiting time is strictly greater.
//!
//! ```
//! use partalloc_schedulers::{registry, Scheduler};
//! use partalloc_topology::Topology;
//! use partalloc_workload::{Job, JobShape};
//!
//! let machine: Topology = "hypercube:3".parse()?;
//! let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
//! let mut lazy = registry::build("lazy[threshold=10]", &machine)?;
//! let mut started = Vec::new();
//! let job = |id| Job::new(id, 0.0, JobShape::Cube { dim: 1 }, 1.0);
//! lazy.submit(job(1), 0.0)?;
//! lazy.schedule(0.0, alloc.as_mut(), &mut started)?;
//! lazy.submit(job(2), 0.0)?;
//! lazy.schedule(0.0, alloc.as_mut(), &mut started)?;
//! // Job 2 waits for job 1's subcube although 6 nodes are free.
//! assert_eq!(started.len(), 1);
//! assert_eq!(lazy.queue_len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_allocators::Allocator;
use partalloc_workload::Job;

use crate::entry::{ANY_TOPOLOGY, Entry, ParamInfo, PolicyEntry, ROTATE, StrategyInfo};
use crate::scheduler::{Attempt, ClassQueues, check_job};
use crate::threshold::{DelayMonitor, Threshold};
use crate::{RequestMapping, ScheduleError, Scheduler, Started, class_count};

/// The lazy scheduling policy.
#[derive(Debug, Clone)]
pub struct Lazy {
    queues: ClassQueues,
    running: Vec<usize>,
    // Classes whose jobs departed since the last `schedule`, in order.
    handovers: Vec<usize>,
    departed_since: bool,
    stop_alloc: Option<usize>,
    threshold: Threshold,
    monitor: DelayMonitor,
    mapping: RequestMapping,
}

impl Lazy {
    /// Lazy scheduling over `classes` size classes with this threshold.
    #[must_use]
    pub fn new(classes: usize, threshold: Threshold, mapping: RequestMapping) -> Self {
        let classes = classes.max(1);
        Self {
            queues: ClassQueues::new(classes),
            running: vec![0; classes],
            handovers: Vec::with_capacity(8),
            departed_since: false,
            stop_alloc: None,
            threshold,
            monitor: DelayMonitor::default(),
            mapping,
        }
    }

    /// Tries the head of `Q_k`; `Ok(true)` if it started.
    fn try_head(
        &mut self,
        k: usize,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<bool, ScheduleError> {
        let Some(arrival) = self.queues[k].front().map(|job| job.arrival) else {
            return Ok(false);
        };
        match self.queues.start_front(k, self.mapping, alloc, started)? {
            Attempt::Started => {
                self.running[k] += 1;
                self.monitor.allocated(arrival, now);
                Ok(true)
            }
            Attempt::Blocked => Ok(false),
        }
    }

    /// Whether the policy is holding everything back for one class.
    #[must_use]
    pub fn stop_alloc(&self) -> Option<usize> {
        self.stop_alloc
    }
}

pub(crate) const ENTRY: PolicyEntry = Entry {
    info: StrategyInfo {
        name: "lazy",
        summary: "one queue per size class; a job waits for a running partition of its size unless its queue is longer than the number running",
        source: "Mohapatra, Yu, Das & Kim §3.2",
        params: &[
            ParamInfo {
                name: "threshold",
                default: "dynamic",
                doc: "waiting time after which the oldest job gets priority: a non-negative time, never, or dynamic (d²·λ)",
            },
            ROTATE,
        ],
        topologies: ANY_TOPOLOGY,
    },
    build: |t, spec| {
        let threshold = match spec.get("threshold") {
            None | Some("dynamic") => Threshold::DynamicSquare,
            Some(v) => v
                .parse::<Threshold>()
                .map_err(|reason| spec.invalid("threshold", reason))?,
        };
        Ok(Box::new(Lazy::new(
            class_count(t.num_nodes()),
            threshold,
            crate::entry::mapping(spec)?,
        )))
    },
};

impl Scheduler for Lazy {
    fn name(&self) -> String {
        let params = match self.threshold {
            Threshold::DynamicSquare => String::new(),
            Threshold::DynamicLinear => "threshold=dynamic-linear".to_owned(),
            t => format!("threshold={t}"),
        };
        crate::entry::with_rotate("lazy", self.mapping, params)
    }

    fn submit(&mut self, job: Job, _now: f64) -> Result<(), ScheduleError> {
        check_job(&job)?;
        self.queues.push(job);
        self.monitor.arrived();
        Ok(())
    }

    fn schedule(
        &mut self,
        now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        if self.departed_since {
            self.departed_since = false;
            // Lazy_Release step 1: the oldest request against the threshold.
            if self.stop_alloc.is_none()
                && let Some(oldest) = self.head()
                && now - oldest.arrival > self.threshold.value(&self.monitor, now)
            {
                self.stop_alloc = Some(self.queues.class_of(oldest));
            }
            // Step 2: hand each released partition to the head of its queue.
            let mut i = 0;
            while i < self.handovers.len() {
                let k = self.handovers[i];
                i += 1;
                if self.stop_alloc.is_none() {
                    self.try_head(k, now, alloc, started)?;
                }
            }
            self.handovers.clear();
        }
        // Step 3: the job with priority.
        if let Some(j) = self.stop_alloc {
            if self.queues[j].is_empty() || self.try_head(j, now, alloc, started)? {
                self.stop_alloc = None;
            } else {
                return Ok(());
            }
        }
        // Lazy_Request: more servers for queues longer than their server count.
        for k in 0..self.queues.classes() {
            while self.queues[k].len() > self.running[k] {
                if !self.try_head(k, now, alloc, started)? {
                    break;
                }
            }
        }
        Ok(())
    }

    fn departed(&mut self, job: &Job, _now: f64) {
        let k = self.queues.class_of(job);
        self.running[k] = self.running[k].saturating_sub(1);
        self.handovers.push(k);
        self.departed_since = true;
    }

    fn queue_len(&self) -> usize {
        self.queues.waiting()
    }

    fn head(&self) -> Option<&Job> {
        self.queues.oldest()
    }
}
