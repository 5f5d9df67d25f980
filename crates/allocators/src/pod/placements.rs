//! Every free placement of a box on a torus at once: for each base chip,
//! whether the (possibly wrapping) box based there avoids the blocked
//! chips, by a cyclic sliding window per dimension (O(chips · dims) per
//! shape instead of O(chips · volume)).

use partalloc_topology::NodeSet;

/// Reusable buffers and the results for one box extent.
#[derive(Debug, Default, Clone)]
pub(crate) struct FreeBases {
    /// free[b] = 1 when the box based at chip b is free.
    pub(crate) free: Vec<u8>,
    scratch: Vec<u8>,
    /// Free bases in all.
    pub(crate) total: u32,
}

impl FreeBases {
    /// Recomputes `free` for boxes of `ext` on a torus of `sides` with
    /// `blocked` chips.
    pub(crate) fn compute(&mut self, sides: &[u32], blocked: &NodeSet, ext: &[u32]) {
        let n: usize = sides.iter().map(|&k| k as usize).product();
        self.free.clear();
        self.free
            .extend((0..n).map(|i| u8::from(!blocked.contains(i as u32))));
        self.scratch.resize(n, 0);
        let mut stride = 1usize;
        for (&k, &e) in sides.iter().zip(ext) {
            let (k, e) = (k as usize, e as usize);
            if e > 1 {
                // Every line along d: its positions are start + j·stride.
                for block in 0..n / (k * stride) {
                    for low in 0..stride {
                        let start = block * k * stride + low;
                        let at = |j: usize| start + (j % k) * stride;
                        let mut sum: usize = (0..e).map(|j| usize::from(self.free[at(j)])).sum();
                        for p in 0..k {
                            self.scratch[at(p)] = u8::from(sum == e);
                            sum = sum + usize::from(self.free[at(p + e)])
                                - usize::from(self.free[at(p)]);
                        }
                    }
                }
                core::mem::swap(&mut self.free, &mut self.scratch);
            }
            stride *= k;
        }
        self.total = self.free.iter().map(|&f| u32::from(f)).sum();
    }

    /// Marks in `covered` every chip of a box of `ext` based at a free base
    /// (the free bases dilated by the box, cyclically per dimension).
    pub(crate) fn cover(&mut self, sides: &[u32], ext: &[u32], covered: &mut [u8]) {
        let n = self.free.len();
        // scratch = free, then per dimension scratch'[x] = OR of scratch[x − j], j < e.
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.free);
        let mut out = vec![0u8; n];
        let mut stride = 1usize;
        for (&k, &e) in sides.iter().zip(ext) {
            let (k, e) = (k as usize, e as usize);
            if e > 1 {
                for block in 0..n / (k * stride) {
                    for low in 0..stride {
                        let start = block * k * stride + low;
                        let at = |j: usize| start + (j % k) * stride;
                        // Window of positions p − e + 1 … p.
                        let mut sum: usize =
                            (0..e).map(|j| usize::from(self.scratch[at(k - j)])).sum();
                        for p in 0..k {
                            out[at(p)] = u8::from(sum > 0);
                            sum = sum + usize::from(self.scratch[at(p + 1)])
                                - usize::from(self.scratch[at(p + 1 + k - e)]);
                        }
                    }
                }
                core::mem::swap(&mut self.scratch, &mut out);
            }
            stride *= k;
        }
        for (c, &s) in covered.iter_mut().zip(&self.scratch) {
            *c |= s;
        }
    }
}
