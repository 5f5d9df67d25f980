//! Set-up shared by the allocate + release benches (included by each with
//! `mod support;`; cargo does not take a subdirectory of `benches/` without
//! a `main.rs` for a bench target).
//!
//! A [`Run`] holds an allocator, a pre-generated request stream and a
//! pre-drawn pick per request. One step is one allocation attempt for the
//! next request (granted or refused) and, while the machine is above its
//! target occupancy, the release of the picked live job, so in the steady
//! state the time per step is the mean cost of one allocate plus one
//! release at that occupancy.

use std::hint::black_box;
use std::time::{Duration, Instant};

use partalloc_allocators::{Allocator, Grant, Request};

/// An allocator under a fixed stream of requests, kept near a target
/// number of busy nodes.
pub(crate) struct Run {
    pub(crate) alloc: Box<dyn Allocator>,
    requests: Vec<Request>,
    picks: Vec<usize>,
    pub(crate) live: Vec<Grant>,
    target: usize,
    /// Release until at most `target` nodes are busy (else one job per
    /// step at most).
    drain: bool,
    /// Steps taken.
    i: usize,
    /// The next request's index (`i` modulo the stream's length).
    k: usize,
}

impl Run {
    /// A run of `alloc` over `requests`, with `picks` (as many) choosing
    /// the job to release, around `target` busy nodes; `drain` releases
    /// jobs until the target is met instead of one per step.
    pub(crate) fn new(
        alloc: Box<dyn Allocator>,
        requests: Vec<Request>,
        picks: Vec<usize>,
        target: usize,
        drain: bool,
    ) -> Self {
        assert!(!requests.is_empty() && picks.len() == requests.len());
        Self {
            alloc,
            requests,
            picks,
            live: Vec::new(),
            target,
            drain,
            i: 0,
            k: 0,
        }
    }

    /// Takes steps until `steps` in all are taken or, with `to_target`,
    /// the target is reached (a refused request does not stop the fill).
    pub(crate) fn fill(mut self, steps: usize, to_target: bool) -> Self {
        while self.i < steps && !(to_target && self.busy() >= self.target) {
            self.step();
        }
        self
    }

    /// The nodes busy now.
    pub(crate) fn busy(&self) -> usize {
        self.alloc.total_nodes() - self.alloc.free_nodes()
    }

    fn step(&mut self) {
        let k = self.k;
        self.i += 1;
        self.k = if k + 1 == self.requests.len() {
            0
        } else {
            k + 1
        };
        if let Ok(g) = self.alloc.allocate(&self.requests[k]) {
            self.live.push(g);
        }
        while self.busy() > self.target && !self.live.is_empty() {
            let g = self.live.swap_remove(self.picks[k] % self.live.len());
            self.alloc.release(&g).unwrap();
            if !self.drain {
                break;
            }
        }
        black_box(&self.live);
    }

    /// The time of `iters` steps.
    pub(crate) fn time(&mut self, iters: u64) -> Duration {
        let start = Instant::now();
        for _ in 0..iters {
            self.step();
        }
        start.elapsed()
    }
}
