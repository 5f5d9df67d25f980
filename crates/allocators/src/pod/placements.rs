//! Every free placement of a box on a torus at once: for each base chip,
//! whether the (possibly wrapping) box based there avoids the blocked
//! chips, by a cyclic sliding window per dimension (O(chips · dims) per
//! shape instead of O(chips · volume)); and counts of free bases in a
//! cyclic box of bases by d-dimensional prefix sums, so that the number
//! of free placements a tentative grant destroys costs O(4^d) lookups.

use partalloc_topology::{MAX_DIMS, NodeSet};

/// Reusable buffers and the results for one box extent.
#[derive(Debug, Default, Clone)]
pub(crate) struct FreeBases {
    /// free[b] = 1 when the box based at chip b is free.
    pub(crate) free: Vec<u8>,
    scratch: Vec<u8>,
    /// Inclusive prefix sums of `free` over a (k_0+1)×(k_1+1)×… array.
    prefix: Vec<u32>,
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

    /// The first free base at or after `from`, if any.
    pub(crate) fn first_from(&self, from: usize) -> Option<usize> {
        self.free
            .get(from..)?
            .iter()
            .position(|&f| f == 1)
            .map(|i| from + i)
    }

    /// Builds the prefix sums used by [`count_cyclic`](Self::count_cyclic).
    pub(crate) fn build_prefix(&mut self, sides: &[u32]) {
        let dims = sides.len();
        let mut ps = [0usize; MAX_DIMS];
        let mut len = 1usize;
        for d in 0..dims {
            ps[d] = len;
            len *= sides[d] as usize + 1;
        }
        self.prefix.clear();
        self.prefix.resize(len, 0);
        // Place free[b] at prefix index of coords + 1, then sum along each
        // dimension.
        let n = self.free.len();
        for b in 0..n {
            let mut rest = b;
            let mut idx = 0;
            for d in 0..dims {
                let k = sides[d] as usize;
                idx += (rest % k + 1) * ps[d];
                rest /= k;
            }
            self.prefix[idx] = u32::from(self.free[b]);
        }
        for d in 0..dims {
            let step = ps[d];
            let side = sides[d] as usize + 1;
            for i in 0..len {
                if (i / step) % side != 0 {
                    self.prefix[i] += self.prefix[i - step];
                }
            }
        }
    }

    /// Free bases b with, in every dimension d, (b_d − lo_d) mod k_d <
    /// len_d (a cyclic box of bases; len_d ≤ k_d).
    pub(crate) fn count_cyclic(&self, sides: &[u32], lo: &[u32], len: &[u32]) -> u32 {
        let dims = sides.len();
        // Per dimension, one or two plain intervals [a, b).
        let mut parts = [[(0u32, 0u32); 2]; MAX_DIMS];
        let mut counts = [1usize; MAX_DIMS];
        for d in 0..dims {
            let (k, l, s) = (sides[d], len[d].min(sides[d]), lo[d] % sides[d]);
            if s + l <= k {
                parts[d][0] = (s, s + l);
            } else {
                parts[d] = [(s, k), (0, s + l - k)];
                counts[d] = 2;
            }
        }
        let mut ps = [0usize; MAX_DIMS];
        let mut stride = 1usize;
        for d in 0..dims {
            ps[d] = stride;
            stride *= sides[d] as usize + 1;
        }
        let combos: usize = counts[..dims].iter().product();
        let mut total = 0i64;
        for mut c in 0..combos {
            let mut pick = [(0u32, 0u32); MAX_DIMS];
            for d in 0..dims {
                pick[d] = parts[d][c % counts[d]];
                c /= counts[d];
            }
            // Inclusion–exclusion over the 2^d corners of [a, b).
            for corner in 0..(1usize << dims) {
                let mut idx = 0;
                let mut sign = 1i64;
                for d in 0..dims {
                    let (a, b) = pick[d];
                    if corner >> d & 1 == 1 {
                        idx += b as usize * ps[d];
                    } else {
                        idx += a as usize * ps[d];
                        sign = -sign;
                    }
                }
                total += sign * i64::from(self.prefix[idx]);
            }
        }
        u32::try_from(total).unwrap_or(0)
    }
}
