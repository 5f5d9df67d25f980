//! Kueue's Topology-Aware Scheduling (TAS), exact to Kueue v0.19.2.
//!
//! A pod set asks for `count` pods of equal per-pod resources
//! ([`PodRequest`]) on a [`CapacityMachine`], with a topology level and a
//! mode: `required` (all pods in one domain of that level, or fail),
//! `preferred` (one domain of that level if possible, else of the
//! narrowest wider level that holds it, else spread) or `unconstrained`
//! (any nodes). Optionally the pods come in slices of `slice_size` pods,
//! each slice within one domain of `slice_level`. The answer is a
//! [`TasAssignment`]: how many pods go to each leaf domain (each node, when
//! the lowest level is `kubernetes.io/hostname`).
//!
//! Three algorithms, each in its own module, named as Kueue names them
//! (KEP 2724 and `pkg/cache/scheduler` of the release):
//! - [`best_fit`] — **BestFit**, Kueue's default for `required` and
//!   `preferred`: at each level the domains with the most free room come
//!   first, and the last domain taken is swapped for the tightest one that
//!   still holds the rest.
//! - [`least_free_capacity`] — **LeastFreeCapacity**, Kueue's default for
//!   `unconstrained` (feature gate `TASProfileMixed`, on by default): the
//!   fullest domain that holds the request, else the fullest first.
//! - [`balanced`] — **BalancedPlacement** (feature gate
//!   `TASBalancedPlacement`, opt-in, `preferred` only): spreads the slices
//!   evenly over the fewest domains below one domain of the level above,
//!   falling back to BestFit when it cannot.
//!
//! The shared phases (counting what fits per domain, choosing the level,
//! descending level by level) are in `engine`. Not modelled: leader pod
//! sets, multi-layer slice constraints, node selectors, taints and
//! affinities, node replacement and elastic workloads (see `docs/kueue.md`).
//!
//! ```
//! use std::sync::Arc;
//! use partalloc_allocators::tas::{Tas, TasAlgorithm, TasMode, TasRequest};
//! use partalloc_topology::capacity::{CapacityMachine, RACK_LABEL};
//!
//! // 1 block of 2 racks of 4 nodes with 4 GPUs each.
//! let m = Arc::new(CapacityMachine::racks(1, 2, 4, &[("nvidia.com/gpu", 4)])?);
//! let mut tas = Tas::new(Arc::clone(&m));
//! let pod = m.pod_request(&[("nvidia.com/gpu", 1)])?;
//! let rack = m.level_index(RACK_LABEL)?;
//! let req = TasRequest::new(6, pod, TasMode::Required, rack, TasAlgorithm::BestFit);
//! let a = tas.place(&req)?;
//! // BestFit fills one node and puts the rest on the next one.
//! assert_eq!(a.total(), 6);
//! assert_eq!(a.entries(), &[(0, 4), (1, 2)]);
//! tas.commit(&a, &req.pod);
//! assert_eq!(tas.free_pods_on_leaf(0, &req.pod), 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod allocator;
pub mod balanced;
pub mod best_fit;
mod engine;
pub mod least_free_capacity;

use std::sync::Arc;

use partalloc_topology::capacity::{CapacityMachine, PodRequest};
use thiserror::Error;

pub(crate) use allocator::ENTRY;
pub use allocator::{TasAllocator, TasSettings};
use engine::Engine;

/// The Kueue release whose code these algorithms follow.
pub const KUEUE_RELEASE: &str = "v0.19.2";

/// Which of Kueue's placement algorithms to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TasAlgorithm {
    /// BestFit (`TASProfileMixed` off: used in every mode).
    BestFit,
    /// LeastFreeCapacity (`TASProfileMixed`, on by default; Kueue uses it
    /// for `unconstrained` requests only, so other modes refuse it).
    LeastFreeCapacity,
    /// BalancedPlacement (`TASBalancedPlacement`; Kueue uses it for
    /// `preferred` requests only, so other modes refuse it).
    Balanced,
}

impl TasAlgorithm {
    /// Kueue's default for a mode (gates at their v0.19.2 defaults):
    /// LeastFreeCapacity for `unconstrained`, BestFit otherwise.
    #[must_use]
    pub fn kueue_default(mode: TasMode) -> Self {
        match mode {
            TasMode::Unconstrained => Self::LeastFreeCapacity,
            TasMode::Required | TasMode::Preferred => Self::BestFit,
        }
    }

    /// The name used in strategy specs (`best-fit`, …).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::BestFit => "best-fit",
            Self::LeastFreeCapacity => "least-free-capacity",
            Self::Balanced => "balanced",
        }
    }
}

/// How strictly a pod set must stay within one domain of its level
/// (Kueue's `podset-required-topology`, `podset-preferred-topology`,
/// `podset-unconstrained-topology`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TasMode {
    /// All pods in one domain of the level, or no placement.
    Required,
    /// One domain of the level if possible, else wider ones.
    Preferred,
    /// Any nodes; the level is the lowest one (the highest with slices).
    Unconstrained,
}

impl TasMode {
    /// The name used in strategy specs.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::Preferred => "preferred",
            Self::Unconstrained => "unconstrained",
        }
    }
}

/// A pod set to place: `count` pods of `pod` resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TasRequest {
    /// Number of pods.
    pub count: u32,
    /// Per-pod resources.
    pub pod: PodRequest,
    /// Required, preferred or unconstrained.
    pub mode: TasMode,
    /// The level index for `required`/`preferred` (ignored when
    /// unconstrained).
    pub level: usize,
    /// Optional slices: (pods per slice, level index each slice stays in).
    pub slice: Option<(u32, usize)>,
    /// The algorithm.
    pub algorithm: TasAlgorithm,
}

impl TasRequest {
    /// A request without slices.
    #[must_use]
    pub fn new(
        count: u32,
        pod: PodRequest,
        mode: TasMode,
        level: usize,
        algorithm: TasAlgorithm,
    ) -> Self {
        Self {
            count,
            pod,
            mode,
            level,
            slice: None,
            algorithm,
        }
    }

    /// The same request in slices of `size` pods within `level`.
    #[must_use]
    pub fn with_slices(mut self, size: u32, level: usize) -> Self {
        self.slice = Some((size, level));
        self
    }
}

/// Pods per leaf domain, sorted by leaf (the order of the leaves' label
/// values), leaves with no pod left out.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TasAssignment {
    entries: Vec<(u32, u32)>,
}

impl TasAssignment {
    /// (leaf index, pod count) pairs.
    #[must_use]
    pub fn entries(&self) -> &[(u32, u32)] {
        &self.entries
    }

    /// Total pods.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.entries.iter().map(|&(_, c)| u64::from(c)).sum()
    }
}

/// A request that cannot be served as asked.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TasError {
    /// The request fits nowhere now (Kueue's "doesn't allow to fit" /
    /// "allows to fit only" reasons, with the same numbers).
    #[error("the topology allows to fit only {fit} out of {total} {unit}(s)")]
    NoFit {
        /// Slices (or pods) Kueue reports as fitting.
        fit: i64,
        /// Slices (or pods) asked for.
        total: i64,
        /// `pod` or `slice`.
        unit: &'static str,
    },
    /// A level index past the machine's levels.
    #[error("level {level} does not exist; the machine has {levels} levels")]
    Level {
        /// The index given.
        level: usize,
        /// How many levels the machine has.
        levels: usize,
    },
    /// The slice level is wider than the request's level (Kueue: "podset
    /// slice topology … is above the podset topology").
    #[error(
        "the slice level {slice} is above the request's level {level}; slices must be within the level"
    )]
    SliceAboveLevel {
        /// Slice level index.
        slice: usize,
        /// Request level index.
        level: usize,
    },
    /// A slice size of 0 or one that does not divide the pod count.
    #[error("slice size {size} does not divide the pod count {count}; use a divisor of the count")]
    SliceSize {
        /// The slice size.
        size: u32,
        /// The pod count.
        count: u32,
    },
    /// A pod set of no pods.
    #[error("a pod set needs at least one pod")]
    ZeroCount,
    /// An algorithm Kueue never runs in this mode.
    #[error("kueue {release} runs {algorithm} only for {needs} requests, not {mode}")]
    AlgorithmMode {
        /// The algorithm.
        algorithm: &'static str,
        /// The mode it needs.
        needs: &'static str,
        /// The mode given.
        mode: &'static str,
        /// The Kueue release.
        release: &'static str,
    },
    /// The descent could not place every pod (Kueue logs "code assumptions
    /// violated"); not expected.
    #[error("the descent left {remaining} pods unplaced")]
    Descent {
        /// Pods left.
        remaining: i64,
    },
}

/// Placement state on one machine: the resources in use on every leaf and
/// the scratch space of the algorithms (reused across calls).
#[derive(Debug, Clone)]
pub struct Tas {
    machine: Arc<CapacityMachine>,
    used: Vec<i64>,
    engine: Engine,
}

impl Tas {
    /// An empty machine.
    #[must_use]
    pub fn new(machine: Arc<CapacityMachine>) -> Self {
        let used = vec![0; machine.leaf_capacities().len()];
        let engine = Engine::new(&machine);
        Self {
            machine,
            used,
            engine,
        }
    }

    /// The machine.
    #[must_use]
    pub fn machine(&self) -> &Arc<CapacityMachine> {
        &self.machine
    }

    /// Resources in use on a leaf, indexed like the machine's resources.
    #[must_use]
    pub fn used(&self, leaf: usize) -> &[i64] {
        let k = self.machine.resources().len();
        self.used.get(leaf * k..(leaf + 1) * k).unwrap_or(&[])
    }

    /// How many `pod`s still fit on a leaf.
    #[must_use]
    pub fn free_pods_on_leaf(&self, leaf: usize, pod: &PodRequest) -> i64 {
        let k = self.machine.resources().len();
        let cap = self.machine.leaf_capacity(leaf);
        let mut count = i64::from(i32::MAX);
        for &(r, q) in pod.parts() {
            let r = r as usize;
            let free = cap.get(r).copied().unwrap_or(0)
                - self.used.get(leaf * k + r).copied().unwrap_or(0);
            count = count.min((free / q).max(0));
        }
        count
    }

    /// Adds (or, with `sign = -1`, removes) `times` pods of `pod` to a
    /// leaf's usage: Kueue's non-TAS usage (pods already on a node) and
    /// admitted workloads alike.
    pub fn add_usage(&mut self, leaf: usize, pod: &PodRequest, times: i64) {
        let k = self.machine.resources().len();
        self.engine.mark_dirty(leaf);
        for &(r, q) in pod.parts() {
            if let Some(slot) = self.used.get_mut(leaf * k + r as usize) {
                *slot = slot.saturating_add(q.saturating_mul(times));
            }
        }
    }

    /// Takes an assignment's resources.
    pub fn commit(&mut self, assignment: &TasAssignment, pod: &PodRequest) {
        for &(leaf, count) in &assignment.entries {
            self.add_usage(leaf as usize, pod, i64::from(count));
        }
    }

    /// Gives an assignment's resources back.
    pub fn release(&mut self, assignment: &TasAssignment, pod: &PodRequest) {
        for &(leaf, count) in &assignment.entries {
            self.add_usage(leaf as usize, pod, -i64::from(count));
        }
    }

    /// Where Kueue would place the request now (the state is not
    /// changed; [`commit`](Self::commit) takes the resources).
    ///
    /// # Errors
    /// [`TasError::NoFit`] when it does not fit, other [`TasError`]s for a
    /// request that is malformed for this machine.
    pub fn place(&mut self, request: &TasRequest) -> Result<TasAssignment, TasError> {
        let levels = self.machine.levels().len();
        if request.count == 0 {
            return Err(TasError::ZeroCount);
        }
        let needs = match request.algorithm {
            TasAlgorithm::LeastFreeCapacity if request.mode != TasMode::Unconstrained => {
                Some("unconstrained")
            }
            TasAlgorithm::Balanced if request.mode != TasMode::Preferred => Some("preferred"),
            _ => None,
        };
        if let Some(needs) = needs {
            return Err(TasError::AlgorithmMode {
                algorithm: request.algorithm.name(),
                needs,
                mode: request.mode.name(),
                release: KUEUE_RELEASE,
            });
        }
        let (slice_size, slice_level) = request.slice.unwrap_or((1, levels - 1));
        // Kueue: unconstrained is the lowest level, or the highest when
        // only slices are asked for.
        let level = match (request.mode, request.slice) {
            (TasMode::Unconstrained, Some(_)) => 0,
            (TasMode::Unconstrained, None) => levels - 1,
            _ => request.level,
        };
        for l in [level, slice_level] {
            if l >= levels {
                return Err(TasError::Level { level: l, levels });
            }
        }
        if level > slice_level {
            return Err(TasError::SliceAboveLevel {
                slice: slice_level,
                level,
            });
        }
        if slice_size == 0 || !request.count.is_multiple_of(slice_size) {
            return Err(TasError::SliceSize {
                size: slice_size,
                count: request.count,
            });
        }
        let params = engine::Params {
            count: i64::from(request.count),
            slice_size: i64::from(slice_size),
            slice_level,
            level,
            required: request.mode == TasMode::Required,
            unconstrained: request.mode == TasMode::Unconstrained,
            lfc: request.algorithm == TasAlgorithm::LeastFreeCapacity,
            balanced: request.algorithm == TasAlgorithm::Balanced,
        };
        let leaves = self
            .engine
            .run(&self.machine, &self.used, &request.pod, &params)?;
        Ok(TasAssignment { entries: leaves })
    }
}

#[cfg(test)]
mod tests;
