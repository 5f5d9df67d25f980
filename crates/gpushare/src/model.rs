//! The multi-resource model: nodes with CPU, memory and a row of GPUs of
//! one model, each GPU shared in thousandths; requests for CPU, memory and
//! either a fraction of one GPU or whole GPUs of allowed models.

use crate::error::ModelError;
pub use partalloc_topology::gpushare::{
    GpuRequest as Request, MAX_GPUS, MAX_MODELS, MILLI, Models, NodeSpec, model_bit,
};

/// Which GPUs a placement takes, and how much of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// Bit `i` set: GPU `i` takes `milli`.
    pub gpus: u16,
    /// Thousandths taken on each chosen GPU.
    pub milli: u32,
}

/// A node's state: what is left of each resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeState {
    /// CPU left, in thousandths.
    pub cpu_left: u32,
    /// CPU capacity, in thousandths.
    pub cpu_capacity: u32,
    /// Memory left, in MiB.
    pub memory_left: u64,
    /// Memory capacity, in MiB.
    pub memory_capacity: u64,
    /// Thousandths left on each GPU (the first `gpus` entries count).
    pub gpu_left: [u16; MAX_GPUS],
    /// Number of GPUs.
    pub gpus: u8,
    /// GPU model id.
    pub model: u8,
    /// Pod slots left.
    pub pods_left: u32,
    /// Pod slots in all.
    pub pods_capacity: u32,
    /// Pods running per kind: index 0 GPU shares, index `k` pods of `k`
    /// whole GPUs (what GpuClustering groups by).
    pub kinds: [u32; MAX_GPUS + 1],
    left_total: u32,
    free: u8,
    max_left: u16,
}

impl NodeState {
    /// An empty node.
    #[must_use]
    pub fn new(spec: &NodeSpec) -> Self {
        let mut gpu_left = [0; MAX_GPUS];
        for g in gpu_left.iter_mut().take(usize::from(spec.gpus)) {
            *g = MILLI as u16;
        }
        let mut s = NodeState {
            cpu_left: spec.cpu_milli,
            cpu_capacity: spec.cpu_milli,
            memory_left: spec.memory_mib,
            memory_capacity: spec.memory_mib,
            gpu_left,
            gpus: spec.gpus,
            model: spec.model,
            pods_left: spec.max_pods,
            pods_capacity: spec.max_pods,
            kinds: [0; MAX_GPUS + 1],
            left_total: 0,
            free: 0,
            max_left: 0,
        };
        s.sync();
        s
    }

    /// Recomputes the GPU aggregates after the GPUs changed.
    fn sync(&mut self) {
        let g = &self.gpu_left[..usize::from(self.gpus)];
        self.left_total = g.iter().map(|&x| u32::from(x)).sum();
        self.free = g.iter().filter(|&&x| u32::from(x) == MILLI).count() as u8;
        self.max_left = g.iter().copied().max().unwrap_or(0);
    }

    /// The GPUs' thousandths left, one per GPU.
    #[must_use]
    pub fn gpu_left(&self) -> &[u16] {
        &self.gpu_left[..usize::from(self.gpus)]
    }

    /// Thousandths left over all GPUs.
    #[must_use]
    pub fn gpu_left_total(&self) -> u32 {
        self.left_total
    }

    /// GPUs nobody uses.
    #[must_use]
    pub fn free_gpus(&self) -> u32 {
        u32::from(self.free)
    }

    /// The most thousandths left on one GPU.
    #[must_use]
    pub fn max_gpu_left(&self) -> u32 {
        u32::from(self.max_left)
    }

    /// Whether anything runs here.
    #[must_use]
    pub fn is_used(&self) -> bool {
        self.cpu_left < self.cpu_capacity || self.free_gpus() < u32::from(self.gpus)
    }

    /// Whether CPU, memory and a pod slot are left for `req`.
    #[must_use]
    pub fn fits_cpu_memory(&self, req: &Request) -> bool {
        req.cpu_milli <= self.cpu_left && req.memory_mib <= self.memory_left && self.pods_left > 0
    }

    /// Whether the GPUs can take `req` (any model check included): one
    /// GPU with enough left for a share or a single GPU, enough free GPUs
    /// for several.
    #[must_use]
    pub fn fits_gpus(&self, req: &Request) -> bool {
        if req.gpus == 0 {
            return true;
        }
        if self.gpus == 0 || !req.allows(self.model) {
            return false;
        }
        if req.gpus == 1 {
            u32::from(self.max_left) >= req.gpu_milli
        } else {
            self.free_gpus() >= u32::from(req.gpus)
        }
    }

    /// Whether the node can hold `req` now.
    #[must_use]
    pub fn fits(&self, req: &Request) -> bool {
        self.fits_cpu_memory(req) && self.fits_gpus(req)
    }

    /// The lowest-index free GPUs for a request of whole GPUs.
    #[must_use]
    pub fn lowest_free(&self, count: u8) -> Option<Placement> {
        let mut mask = 0_u16;
        let mut need = count;
        for (i, &g) in self.gpu_left().iter().enumerate() {
            if need == 0 {
                break;
            }
            if u32::from(g) == MILLI {
                mask |= 1 << i;
                need -= 1;
            }
        }
        (need == 0).then_some(Placement {
            gpus: mask,
            milli: MILLI,
        })
    }

    /// Places `req` on the GPUs of `at` (empty for a CPU pod).
    ///
    /// # Errors
    /// [`ModelError::DoesNotFit`] (state unchanged) when CPU, memory, a
    /// pod slot or a chosen GPU is short, or the placement does not match
    /// the request.
    pub fn place(&mut self, req: &Request, at: Placement) -> Result<(), ModelError> {
        let chosen = at.gpus.count_ones();
        let matches = if req.gpus == 0 {
            at.gpus == 0
        } else {
            chosen == u32::from(req.gpus)
                && at.milli == req.gpu_milli
                && u32::from(at.gpus) >> self.gpus == 0
        };
        let gpus_ok = (0..usize::from(self.gpus))
            .filter(|i| at.gpus & (1 << i) != 0)
            .all(|i| u32::from(self.gpu_left[i]) >= at.milli);
        if !matches
            || !gpus_ok
            || !self.fits_cpu_memory(req)
            || !req.allows(self.model) && req.gpus > 0
        {
            return Err(ModelError::DoesNotFit);
        }
        self.cpu_left -= req.cpu_milli;
        self.memory_left -= req.memory_mib;
        self.pods_left -= 1;
        for i in 0..usize::from(self.gpus) {
            if at.gpus & (1 << i) != 0 {
                self.gpu_left[i] -= at.milli as u16;
            }
        }
        if let Some(k) = kind(req) {
            self.kinds[k] += 1;
        }
        self.sync();
        Ok(())
    }

    /// Undoes [`NodeState::place`] of the same request and placement.
    ///
    /// # Errors
    /// [`ModelError::NotPlaced`] (state unchanged) when giving back would
    /// exceed a capacity, so the pair was not placed here.
    pub fn remove(&mut self, req: &Request, at: Placement) -> Result<(), ModelError> {
        let gpus_ok = (0..usize::from(self.gpus))
            .filter(|i| at.gpus & (1 << i) != 0)
            .all(|i| u32::from(self.gpu_left[i]).saturating_add(at.milli) <= MILLI);
        let kind_ok = kind(req).is_none_or(|k| self.kinds[k] > 0);
        let within =
            |left: u64, back: u64, cap: u64| left.checked_add(back).is_some_and(|v| v <= cap);
        let shape_ok = if req.gpus == 0 {
            at.gpus == 0
        } else {
            at.gpus.count_ones() == u32::from(req.gpus) && at.milli == req.gpu_milli
        };
        if !gpus_ok
            || !shape_ok
            || u32::from(at.gpus) >> self.gpus != 0
            || !within(
                u64::from(self.cpu_left),
                u64::from(req.cpu_milli),
                u64::from(self.cpu_capacity),
            )
            || !within(self.memory_left, req.memory_mib, self.memory_capacity)
            || !within(u64::from(self.pods_left), 1, u64::from(self.pods_capacity))
            || !kind_ok
        {
            return Err(ModelError::NotPlaced);
        }
        self.cpu_left += req.cpu_milli;
        self.memory_left += req.memory_mib;
        self.pods_left += 1;
        for i in 0..usize::from(self.gpus) {
            if at.gpus & (1 << i) != 0 {
                self.gpu_left[i] += at.milli as u16;
            }
        }
        if let Some(k) = kind(req) {
            self.kinds[k] -= 1;
        }
        self.sync();
        Ok(())
    }

    /// How many kinds of GPU pods run here (GpuClustering's affinities).
    #[must_use]
    pub fn kind_count(&self) -> usize {
        self.kinds.iter().filter(|&&c| c > 0).count()
    }
}

/// The kind index of a GPU pod: 0 for a share, `k` for `k` whole GPUs
/// (`None` for CPU pods and for more than [`MAX_GPUS`] GPUs).
#[must_use]
pub fn kind(req: &Request) -> Option<usize> {
    match req.gpus {
        0 => None,
        _ if req.is_share() => Some(0),
        k if usize::from(k) <= MAX_GPUS => Some(usize::from(k)),
        _ => None,
    }
}
