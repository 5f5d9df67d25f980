//! Blocked-chip counts per box base, kept up to date across requests, so
//! that static best fit reads the free placements of every catalogue
//! shape instead of recomputing them for each request.
//!
//! For a box extent `o` on a torus, `counts[b]` is the number of blocked
//! (busy or faulty) chips in the cyclic box of `o` based at chip `b`; that
//! placement is free exactly when its count is zero. Blocking or freeing a
//! cyclic box `P` changes `counts[b]` by `|box(b, o) ∩ P|`, a product of
//! one ring overlap per dimension, so an update visits only the bases
//! whose box meets `P` and never lists chips.
//!
//! Along a dimension where `o` spans the whole ring, every base holds the
//! same chips, so one count stands for the ring ("folded"). Lines along
//! dimension 0 of at most 64 chips also keep a bitmap of their free bases.
//!
//! Best fit then scores candidates by how many free placements of each
//! catalogue shape their grant would destroy (the free bases in a cyclic
//! box around the candidate), one shape at a time and only among the
//! candidates still tied. When some candidates destroy nothing (the free
//! bitmap, dilated by that box, is clear at them) those are kept without
//! counting; otherwise each shape is counted by whichever of three exact
//! methods costs least for the state at hand.

use core::ops::Range;

use partalloc_topology::{Coords, MAX_DIMS, NodeSet};

use crate::rowgrid::low_bits;

/// Blocked-chip counts for one box extent; see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct BoxCounts {
    ext: Coords,
    /// Offset of one step along each dimension in `counts`; 0 where the box
    /// spans the whole ring, since every base along such a dimension holds
    /// the same chips and one count stands for all of them.
    strides: [usize; MAX_DIMS],
    /// Counts per line along dimension 0 (its side, or 1 when folded).
    line_len: usize,
    /// `strides` in lines, for dimensions 1 and up.
    line_strides: [usize; MAX_DIMS],
    /// Whether no dimension is folded (then `counts` is indexed by chip id).
    full: bool,
    counts: Vec<u32>,
    /// Per line of `counts`, bit x set when the base at x along dimension
    /// 0 is free (every bit of the torus line when dimension 0 is
    /// folded); empty when dimension 0 is longer than 64.
    bits: Vec<u64>,
    /// The line of `counts` for each line of the torus.
    line_map: Vec<u32>,
    /// Bases of the torus that each count stands for.
    mult: u32,
    /// Free placements of `ext`: the zero counts times `mult`.
    free: u32,
}

/// Buffers reused by every count update and query.
#[derive(Debug, Clone, Default)]
struct Scratch {
    /// Per dimension, (offset, weight) entries.
    lists: [Vec<(usize, u32)>; MAX_DIMS],
    /// Dimension 0's weights, contiguous for the innermost loop.
    row: Vec<u32>,
    /// The (line, weight) combinations of dimensions 1 and up.
    combos: Vec<(usize, u32)>,
    tmp: Vec<u32>,
    acc: Vec<u32>,
}

impl BoxCounts {
    /// Counts for `ext` on a torus of `sides` with `blocked` chips;
    /// `coords` holds every chip's coordinates.
    fn new(
        sides: &[u32],
        ext: Coords,
        blocked: &NodeSet,
        coords: &[u32],
        scratch: &mut Scratch,
    ) -> Self {
        let dims = sides.len();
        let n: usize = sides.iter().map(|&k| k as usize).product();
        let mut all: Vec<u32> = (0..n)
            .map(|i| u32::from(blocked.contains(i as u32)))
            .collect();
        let tmp = &mut scratch.tmp;
        tmp.resize(n, 0);
        for d in 0..dims {
            if ext[d] > 1 {
                window_sums(sides, d, 0, ext[d], &all, tmp, &mut scratch.acc);
                core::mem::swap(&mut all, tmp);
            }
        }
        let mut strides = [0usize; MAX_DIMS];
        let (mut stride, mut mult) = (1usize, 1u32);
        for d in 0..dims {
            if ext[d] == sides[d] && sides[d] > 1 {
                mult *= sides[d];
            } else {
                strides[d] = stride;
                stride *= sides[d] as usize;
            }
        }
        // Keep the bases at coordinate 0 of every folded dimension, in id
        // order, which is the folded array's order.
        let counts: Vec<u32> = all
            .iter()
            .zip(coords.chunks_exact(dims))
            .filter(|(_, at)| (0..dims).all(|d| strides[d] != 0 || at[d] == 0 || sides[d] == 1))
            .map(|(&c, _)| c)
            .collect();
        let free = counts.iter().filter(|&&c| c == 0).count() as u32 * mult;
        let k0 = sides[0] as usize;
        let line_len = if strides[0] == 0 { 1 } else { k0 };
        let mut line_strides = [0usize; MAX_DIMS];
        for d in 1..dims {
            line_strides[d] = strides[d] / line_len;
        }
        let mut map = Self {
            ext,
            strides,
            line_len,
            line_strides,
            full: mult == 1,
            counts,
            bits: Vec::new(),
            line_map: coords
                .chunks_exact(dims * k0)
                .map(|at| {
                    (1..dims)
                        .map(|d| at[d] as usize * line_strides[d])
                        .sum::<usize>() as u32
                })
                .collect(),
            mult,
            free,
        };
        if k0 <= 64 {
            map.bits = (0..map.counts.len() / line_len)
                .map(|l| map.line_bits(l, k0))
                .collect();
        }
        map
    }

    /// The free bits of line `l` of `counts` from the counts.
    fn line_bits(&self, l: usize, k0: usize) -> u64 {
        let cells = &self.counts[l * self.line_len..][..self.line_len];
        if self.line_len == 1 {
            if cells[0] == 0 {
                low_bits(k0 as u32)
            } else {
                0
            }
        } else {
            cells
                .iter()
                .enumerate()
                .fold(0, |w, (x, &c)| w | u64::from(c == 0) << x)
        }
    }

    /// The free bits of line `l` of the torus.
    fn line_word(&self, l: usize) -> u64 {
        self.bits[self.line_map[l] as usize]
    }

    /// The count of the base with coordinates `at`.
    fn count_at(&self, at: &[u32]) -> u32 {
        let idx: usize = at
            .iter()
            .zip(&self.strides)
            .map(|(&x, &s)| x as usize * s)
            .sum();
        self.counts[idx]
    }

    /// The count of the base with chip id `b` (coordinates `at`).
    fn count_of(&self, b: usize, at: &[u32]) -> u32 {
        if self.full {
            self.counts[b]
        } else {
            self.count_at(at)
        }
    }

    /// Adds (`block`) or removes the chips of the cyclic box at `base` with
    /// `ext` to or from every count. Removing assumes the box was added.
    fn apply(
        &mut self,
        sides: &[u32],
        base: &[u32],
        ext: &[u32],
        block: bool,
        scratch: &mut Scratch,
    ) {
        let dims = sides.len();
        let lists = &mut scratch.lists;
        for d in 0..dims {
            if self.strides[d] == 0 {
                // A folded dimension: the box spans the ring, so it meets
                // every chip of the update along d.
                lists[d].clear();
                lists[d].push((0, ext[d]));
            } else {
                // Dimension 0 in counts, the others in lines.
                let stride = if d == 0 { 1 } else { self.line_strides[d] };
                ring_overlaps(
                    sides[d],
                    base[d],
                    ext[d],
                    self.ext[d],
                    stride,
                    &mut lists[d],
                );
            }
        }
        // Dimension 0's entries form at most two runs of adjacent counts (a
        // cyclic interval): loop over them as slices, without branches.
        let mut runs = [(0usize, 0usize); 2];
        let mut nruns = 0;
        for (i, &(o, _)) in lists[0].iter().enumerate() {
            if nruns > 0 && o == lists[0][runs[nruns - 1].1 - 1].0 + 1 {
                runs[nruns - 1].1 = i + 1;
            } else if nruns < 2 {
                runs[nruns] = (i, i + 1);
                nruns += 1;
            }
        }
        scratch.row.clear();
        scratch.row.extend(lists[0].iter().map(|&(_, w)| w));
        let (counts, bits, row, first) =
            (&mut self.counts, &mut self.bits, &scratch.row, &lists[0]);
        let (line_len, k0) = (self.line_len, sides[0] as usize);
        let mut zeros = 0u32;
        let has_bits = !bits.is_empty();
        let combos = &mut scratch.combos;
        combos.clear();
        for_each_combination(&lists[..dims], |line, weight| {
            combos.push((line, weight));
            true
        });
        for &(line, weight) in combos.iter() {
            for &(a, b) in &runs[..nruns] {
                let x0 = first[a].0;
                let cells = &mut counts[line * line_len + x0..][..b - a];
                let weights = &row[a..b];
                // The run's bits in the line word (the whole word when
                // dimension 0 is folded).
                let run_mask = if !has_bits {
                    0
                } else if line_len == 1 {
                    low_bits(k0 as u32)
                } else {
                    low_bits((b - a) as u32) << x0
                };
                if !has_bits {
                    for (c, &w0) in cells.iter_mut().zip(weights) {
                        if block {
                            zeros += u32::from(*c == 0);
                            *c += weight * w0;
                        } else {
                            *c -= weight * w0;
                            zeros += u32::from(*c == 0);
                        }
                    }
                } else if block {
                    // Every weight in a run is positive: the run's bases
                    // are all blocked afterwards.
                    let w = &mut bits[line];
                    zeros += if line_len == 1 {
                        u32::from(*w != 0)
                    } else {
                        (*w & run_mask).count_ones()
                    };
                    *w &= !run_mask;
                    for (c, &w0) in cells.iter_mut().zip(weights) {
                        *c += weight * w0;
                    }
                } else {
                    let mut run = 0u64;
                    for (i, (c, &w0)) in cells.iter_mut().zip(weights).enumerate() {
                        *c -= weight * w0;
                        run |= u64::from(*c == 0) << i;
                    }
                    zeros += run.count_ones();
                    let w = &mut bits[line];
                    *w = if line_len == 1 {
                        if run != 0 { run_mask } else { 0 }
                    } else {
                        *w & !run_mask | run << x0
                    };
                }
            }
        }
        if block {
            self.free -= zeros * self.mult;
        } else {
            self.free += zeros * self.mult;
        }
    }

    /// Free bases in the cyclic box of bases `[lo, lo + len)`, or some
    /// number at least `cap` when there are that many.
    fn free_in(
        &self,
        sides: &[u32],
        lo: &[u32],
        len: &[u32],
        cap: u32,
        lists: &mut [Vec<(usize, u32)>; MAX_DIMS],
    ) -> u32 {
        let dims = sides.len();
        for d in 0..dims {
            let (k, l) = (sides[d] as usize, len[d].min(sides[d]));
            lists[d].clear();
            if self.strides[d] == 0 {
                lists[d].push((0, l));
            } else {
                let lo = lo[d] as usize % k;
                let s = if d == 0 { 1 } else { self.line_strides[d] };
                lists[d]
                    .extend((lo..lo + l as usize).map(|j| (if j >= k { j - k } else { j } * s, 1)));
            }
        }
        let mut total = 0;
        if !self.bits.is_empty() {
            // The window along dimension 0 as a mask of a torus line.
            let (k0, l0, lo0) = (sides[0], len[0].min(sides[0]), lo[0] % sides[0]);
            let win = u128::from(low_bits(l0)) << lo0;
            let win = (win | win >> k0) as u64 & low_bits(k0);
            for_each_combination(&lists[..dims], |line, weight| {
                total += weight * (self.bits[line] & win).count_ones();
                total < cap
            });
            return total;
        }
        for_each_combination(&lists[..dims], |line, weight| {
            for &(o0, w0) in &lists[0] {
                total += weight * w0 * u32::from(self.counts[line * self.line_len + o0] == 0);
            }
            total < cap
        });
        total
    }
}

/// `dst[x] = Σ_{j < len} src[x with x_d replaced by (x_d + j − shift) mod k_d]`
/// for every chip `x`: a cyclic window sum along dimension `d`. Along a
/// dimension above the first, whole slabs of `stride` contiguous values
/// slide at once (`acc` holds one slab), so the inner loops vectorize.
fn window_sums(
    sides: &[u32],
    d: usize,
    shift: u32,
    len: u32,
    src: &[u32],
    dst: &mut [u32],
    acc: &mut Vec<u32>,
) {
    let stride: usize = sides[..d].iter().map(|&k| k as usize).product();
    let k = sides[d] as usize;
    let (shift, len) = (shift as usize % k, (len as usize).min(k));
    // The window of position p starts at ring index p + first (≡ p − shift).
    let first = k - shift;
    let wrap = |j: usize| {
        if j >= 2 * k {
            j - 2 * k
        } else if j >= k {
            j - k
        } else {
            j
        }
    };
    if stride == 1 {
        for (row, out) in src.chunks_exact(k).zip(dst.chunks_exact_mut(k)) {
            let mut sum: u32 = (first..first + len).map(|j| row[wrap(j)]).sum();
            for (p, o) in out.iter_mut().enumerate() {
                *o = sum;
                sum = sum + row[wrap(p + first + len)] - row[wrap(p + first)];
            }
        }
        return;
    }
    acc.clear();
    acc.resize(stride, 0);
    for (block, out) in src
        .chunks_exact(k * stride)
        .zip(dst.chunks_exact_mut(k * stride))
    {
        let slab = |j: usize| &block[wrap(j) * stride..][..stride];
        acc.fill(0);
        for j in first..first + len {
            for (a, &v) in acc.iter_mut().zip(slab(j)) {
                *a += v;
            }
        }
        for (p, out) in out.chunks_exact_mut(stride).enumerate() {
            out.copy_from_slice(acc);
            for ((a, &add), &sub) in acc
                .iter_mut()
                .zip(slab(p + first + len))
                .zip(slab(p + first))
            {
                *a = *a + add - sub;
            }
        }
    }
}

/// `(x − back) mod k` for `x < k` and `back < k`.
fn ring_back(x: u32, back: u32, k: u32) -> u32 {
    if x >= back { x - back } else { x + k - back }
}

/// Per dimension, the positions `b` (as offsets `b · stride`) where the
/// ring interval `[b, b + o)` meets `[p, p + e)`, with the overlap size.
fn ring_overlaps(k: u32, p: u32, e: u32, o: u32, stride: usize, out: &mut Vec<(usize, u32)>) {
    out.clear();
    let (k, p, e, o) = (k as usize, p as usize, e as usize, o as usize);
    // x, p < k, so (x − p) mod k is x + k − p less k at most once.
    let inside = |x: usize| {
        let t = x + k - p;
        u32::from(if t >= k { t - k } else { t } < e)
    };
    let mut ov: u32 = (0..o).map(inside).sum();
    for b in 0..k {
        if ov > 0 {
            out.push((b * stride, ov));
        }
        let ahead = if b + o >= k { b + o - k } else { b + o };
        ov = ov + inside(ahead) - inside(b);
    }
}

/// Per dimension, the offsets of the ring interval `[lo, lo + len)` (len
/// capped at the side), each with weight 1.
fn cyclic_offsets(
    sides: &[u32],
    lo: &[u32],
    len: &[u32],
    lists: &mut [Vec<(usize, u32)>; MAX_DIMS],
) {
    let mut stride = 1usize;
    for d in 0..sides.len() {
        let k = sides[d] as usize;
        let l = (len[d] as usize).min(k);
        lists[d].clear();
        let lo = lo[d] as usize % k;
        lists[d].extend((lo..lo + l).map(|j| (if j >= k { j - k } else { j } * stride, 1)));
        stride *= k;
    }
}

/// Calls `f(offset, weight)` for every combination of one entry from each
/// of `lists[1..]` (offsets summed, weights multiplied); the caller loops
/// over `lists[0]` itself, so the innermost loop is contiguous. `f`
/// returns whether to go on.
fn for_each_combination(lists: &[Vec<(usize, u32)>], mut f: impl FnMut(usize, u32) -> bool) {
    let dims = lists.len();
    let mut pos = [0usize; MAX_DIMS];
    loop {
        let (mut off, mut weight) = (0usize, 1u32);
        for d in 1..dims {
            let (o, w) = lists[d][pos[d]];
            off += o;
            weight *= w;
        }
        if !f(off, weight) {
            return;
        }
        let mut d = 1;
        while d < dims {
            pos[d] += 1;
            if pos[d] < lists[d].len() {
                break;
            }
            pos[d] = 0;
            d += 1;
        }
        if d >= dims {
            return;
        }
    }
}

/// Free-base bitmaps with one `u64` per line along dimension 0 (which must
/// have at most 64 chips), used to find the candidates that destroy no
/// free placement of a shape at all without counting.
#[derive(Debug, Clone, Default)]
struct LineBits {
    /// Line sides: dimensions 1.. of the torus.
    lines: Vec<u32>,
    k0: u32,
    mask: u64,
    /// Line index and bit of every chip.
    line_of: Vec<u32>,
    free: Vec<u64>,
    a: Vec<u64>,
    b: Vec<u64>,
}

impl LineBits {
    fn new(sides: &[u32]) -> Option<Self> {
        let k0 = *sides.first()?;
        if k0 > 64 {
            return None;
        }
        let n: usize = sides.iter().map(|&k| k as usize).product();
        Some(Self {
            lines: sides[1..].to_vec(),
            k0,
            mask: low_bits(k0),
            line_of: (0..n as u32).map(|b| b / k0).collect(),
            ..Self::default()
        })
    }

    fn is_set(words: &[u64], line: u32, bit: u32) -> bool {
        words[line as usize] >> bit & 1 == 1
    }

    /// Loads the free bases of `map` into `free`.
    fn load(&mut self, map: &BoxCounts) {
        self.free.clear();
        self.free
            .extend((0..map.line_map.len()).map(|l| map.line_word(l)));
    }

    /// `dst[x] = src[x with x_d replaced by (x_d + c) mod k_d]`, or that
    /// ORed into `dst` or into `src[x]` (see [`Rot`]), for dimension `d` of
    /// the torus (0: bits within a line).
    fn rotate(&self, src: &[u64], dst: &mut [u64], d: usize, c: u32, mode: Rot) {
        let put = |o: &mut u64, here: u64, r: u64| {
            *o = match mode {
                Rot::Set => r,
                Rot::Or => *o | r,
                Rot::Keep => here | r,
            }
        };
        if d == 0 {
            let (k0, mask) = (self.k0, self.mask);
            let c = c % k0;
            for (o, &w) in dst.iter_mut().zip(src) {
                let r = if c == 0 {
                    w
                } else {
                    ((w >> c) | (w << (k0 - c))) & mask
                };
                put(o, w, r);
            }
            return;
        }
        let stride: usize = self.lines[..d - 1].iter().map(|&k| k as usize).product();
        let k = self.lines[d - 1] as usize;
        let c = c as usize % k;
        // Within a block of k slabs, the rotation is two contiguous moves:
        // slabs c.. to 0.., and slabs ..c to k − c...
        let cut = c * stride;
        for (sb, db) in src
            .chunks_exact(k * stride)
            .zip(dst.chunks_exact_mut(k * stride))
        {
            let (d_head, d_tail) = db.split_at_mut(k * stride - cut);
            let (s_head, s_tail) = sb.split_at(k * stride - cut);
            let moves = [(d_head, s_head, &sb[cut..]), (d_tail, s_tail, &sb[..cut])];
            for (dl, here, from) in moves {
                match mode {
                    Rot::Set => dl.copy_from_slice(from),
                    Rot::Or => {
                        for (o, &r) in dl.iter_mut().zip(from) {
                            *o |= r;
                        }
                    }
                    Rot::Keep => {
                        for ((o, &h), &r) in dl.iter_mut().zip(here).zip(from) {
                            *o = h | r;
                        }
                    }
                }
            }
        }
    }

    /// `a[x] = OR_{j < len} free[x with x_d + j − shift, every d]`: the
    /// bases whose box of `e` meets the box of `o` at a free base, with
    /// `shift = o − 1` and `len = min(e + o − 1, k)` per dimension.
    fn dilate(&mut self, sides: &[u32], o: &Coords, e: &Coords) {
        let mut cur = core::mem::take(&mut self.a);
        let mut tmp = core::mem::take(&mut self.b);
        cur.clear();
        cur.extend_from_slice(&self.free);
        tmp.resize(cur.len(), 0);
        for d in 0..sides.len() {
            let k = sides[d];
            let (shift, len) = (o[d] - 1, (e[d] + o[d] - 1).min(k));
            if len == 1 && shift == 0 {
                continue;
            }
            if len == k {
                // The whole ring: every position gets the ring's OR.
                self.ring_or(&mut cur, &mut tmp, d);
                continue;
            }
            // Windows of a power of two by doubling, then two of them
            // cover any window length.
            let mut p = 1;
            while p * 2 <= len {
                self.rotate(&cur, &mut tmp, d, p, Rot::Keep);
                core::mem::swap(&mut cur, &mut tmp);
                p *= 2;
            }
            let back = k - shift % k;
            self.rotate(&cur, &mut tmp, d, back % k, Rot::Set);
            self.rotate(&cur, &mut tmp, d, (back + len - p) % k, Rot::Or);
            core::mem::swap(&mut cur, &mut tmp);
        }
        self.a = cur;
        self.b = tmp;
    }

    /// Replaces every word of `words` by the OR along dimension `d`'s ring
    /// through it (`tmp` is scratch).
    fn ring_or(&self, words: &mut [u64], tmp: &mut [u64], d: usize) {
        if d == 0 {
            for w in words.iter_mut() {
                *w = if *w != 0 { self.mask } else { 0 };
            }
            return;
        }
        let stride: usize = self.lines[..d - 1].iter().map(|&k| k as usize).product();
        let k = self.lines[d - 1] as usize;
        let acc = &mut tmp[..stride];
        for block in words.chunks_exact_mut(k * stride) {
            acc.fill(0);
            for slab in block.chunks_exact(stride) {
                for (a, &w) in acc.iter_mut().zip(slab) {
                    *a |= w;
                }
            }
            for slab in block.chunks_exact_mut(stride) {
                slab.copy_from_slice(acc);
            }
        }
    }
}

/// How [`LineBits::rotate`] writes the rotated word `r`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rot {
    /// `dst = r`.
    Set,
    /// `dst |= r`.
    Or,
    /// `dst = src | r`.
    Keep,
}

/// How to count, for candidates of one orientation, the free placements of
/// one shape orientation their grant would destroy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CountMethod {
    /// Visit each candidate's box of bases.
    PerCandidate,
    /// Spread each free base over the candidates it rules out.
    PerFreeBase,
    /// Window sums of the free-base indicator over the whole torus.
    Window,
}

/// Counts for every catalogue orientation, the groups that make up each
/// shape, and buffers reused between requests.
#[derive(Debug, Clone)]
pub(crate) struct CatalogueCounts {
    sides: Coords,
    maps: Vec<BoxCounts>,
    /// Catalogue shapes, largest first: their orientations' range in `maps`.
    groups: Vec<Range<usize>>,
    scratch: Scratch,
    /// Line bitmaps (`None` when dimension 0 is longer than 64).
    bits: Option<LineBits>,
    /// The map of each requested orientation.
    of_orient: Vec<usize>,
    /// Candidates still in the running: (base, index of its orientation's map).
    cands: Vec<(u32, usize)>,
    /// Destroyed placements per candidate for the shape being compared.
    destroyed: Vec<u32>,
    dense: Vec<u32>,
    /// The coordinates of every chip, `dims` values per chip.
    coords: Vec<u32>,
    /// Forces one counting method (tests compare them).
    #[cfg(test)]
    pub(crate) force: Option<CountMethod>,
}

impl CatalogueCounts {
    /// Counts for `shapes` (each a list of orientations, largest shape
    /// first) on an empty torus of `sides`.
    pub(crate) fn new(sides: Coords, shapes: &[Vec<Coords>]) -> Self {
        let n = sides.product() as usize;
        let empty = NodeSet::new(n);
        let mut s = Self {
            sides,
            maps: Vec::new(),
            groups: Vec::new(),
            scratch: Scratch::default(),
            bits: LineBits::new(sides.as_slice()),
            of_orient: Vec::new(),
            cands: Vec::new(),
            destroyed: Vec::new(),
            dense: Vec::new(),
            coords: (0..n)
                .flat_map(|id| {
                    let mut rest = id as u32;
                    sides.as_slice().iter().map(move |&k| {
                        let x = rest % k;
                        rest /= k;
                        x
                    })
                })
                .collect(),
            #[cfg(test)]
            force: None,
        };
        for orients in shapes {
            let start = s.maps.len();
            for &o in orients {
                let m = BoxCounts::new(sides.as_slice(), o, &empty, &s.coords, &mut s.scratch);
                s.maps.push(m);
            }
            s.groups.push(start..s.maps.len());
        }
        s
    }

    /// Blocks (`block`) or frees the chips of the cyclic box at `base`
    /// with `ext` in every kept count.
    pub(crate) fn apply(&mut self, base: &[u32], ext: &[u32], block: bool) {
        for m in &mut self.maps {
            m.apply(self.sides.as_slice(), base, ext, block, &mut self.scratch);
        }
    }

    /// The index of the counts for `ext`, built from `blocked` and kept
    /// from now on when the catalogue had no such orientation.
    fn map_of(&mut self, ext: Coords, blocked: impl FnOnce() -> NodeSet) -> usize {
        if let Some(i) = self.maps.iter().position(|m| m.ext == ext) {
            return i;
        }
        let m = BoxCounts::new(
            self.sides.as_slice(),
            ext,
            &blocked(),
            &self.coords,
            &mut self.scratch,
        );
        self.maps.push(m);
        self.maps.len() - 1
    }

    /// Fills `cands` with the free placements of `orients` in first-fit
    /// order (base, then orientation), only the first when `first_only`,
    /// and returns the map of each orientation.
    fn candidates(
        &mut self,
        orients: &[Coords],
        blocked: impl Fn() -> NodeSet,
        first_only: bool,
    ) -> Vec<usize> {
        let mut of_orient = core::mem::take(&mut self.of_orient);
        of_orient.clear();
        for &o in orients {
            let m = self.map_of(o, &blocked);
            of_orient.push(m);
        }
        let n = self.sides.product() as usize;
        self.cands.clear();
        let dims = self.sides.len();
        if self.bits.is_some() {
            let k0 = self.sides[0] as usize;
            for l in 0..n / k0 {
                let any = of_orient
                    .iter()
                    .fold(0, |w, &m| w | self.maps[m].line_word(l));
                let mut rest = any;
                while rest != 0 {
                    let x = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    for &m in &of_orient {
                        if self.maps[m].line_word(l) >> x & 1 == 1 {
                            self.cands.push(((l * k0 + x) as u32, m));
                            if first_only {
                                return of_orient;
                            }
                        }
                    }
                }
            }
        } else {
            for (b, at) in self.coords.chunks_exact(dims).enumerate().take(n) {
                for &m in &of_orient {
                    if self.maps[m].count_of(b, at) == 0 {
                        self.cands.push((b as u32, m));
                        if first_only {
                            return of_orient;
                        }
                    }
                }
            }
        }
        of_orient
    }

    /// The first free placement of `orients` in first-fit order, as
    /// [`choose`](Self::choose) returns it.
    pub(crate) fn first(
        &mut self,
        orients: &[Coords],
        blocked: impl Fn() -> NodeSet,
    ) -> Option<(u32, usize)> {
        let of_orient = self.candidates(orients, blocked, true);
        self.first_candidate(of_orient)
    }

    /// The first candidate left (base, index of its orientation), giving
    /// `of_orient` back for the next request.
    fn first_candidate(&mut self, of_orient: Vec<usize>) -> Option<(u32, usize)> {
        let chosen = self
            .cands
            .first()
            .and_then(|&(b, m)| Some((b, of_orient.iter().position(|&x| x == m)?)));
        self.of_orient = of_orient;
        chosen
    }

    /// The best-fit placement among the free placements of `orients`
    /// (base chip id and index into `orients`), or `None` when none is
    /// free. `blocked` gives the blocked chips, needed only for an
    /// orientation no catalogue shape has.
    pub(crate) fn choose(
        &mut self,
        orients: &[Coords],
        blocked: impl Fn() -> NodeSet,
    ) -> Option<(u32, usize)> {
        let of_orient = self.candidates(orients, blocked, false);
        // Score components largest shape first; a shape with no free
        // placement scores 0 for every candidate and decides nothing.
        for g in 0..self.groups.len() {
            if self.cands.len() <= 1 {
                break;
            }
            let group = self.groups[g].clone();
            if group.clone().all(|m| self.maps[m].free == 0) {
                continue;
            }
            if self.keep_untouched(group.clone(), &of_orient) {
                continue;
            }
            self.destroyed.clear();
            self.destroyed.resize(self.cands.len(), 0);
            // With one shape orientation to count and one candidate
            // orientation, each candidate's count is its whole component,
            // so counting may stop once it exceeds the least so far.
            let alone = of_orient.len() == 1
                && group.clone().filter(|&m| self.maps[m].free > 0).count() == 1;
            for target in group {
                if self.maps[target].free > 0 {
                    for &m in &of_orient {
                        self.add_destroyed(target, m, alone);
                    }
                }
            }
            // The component is the shape's free placements minus those
            // destroyed: the greatest component is the fewest destroyed.
            let least = self.destroyed.iter().copied().min().unwrap_or(0);
            let mut i = 0;
            let destroyed = &self.destroyed;
            self.cands.retain(|_| {
                let keep = destroyed[i] == least;
                i += 1;
                keep
            });
        }
        self.first_candidate(of_orient)
    }

    /// Adds to `destroyed` the free placements of map `target` that each
    /// candidate of orientation map `m` would destroy.
    /// When some candidates destroy no free placement of the shape whose
    /// orientations are `group` (the greatest component, then), keeps just
    /// those and returns true; found with line bitmaps, without counting.
    fn keep_untouched(&mut self, group: Range<usize>, of_orient: &[usize]) -> bool {
        let Self {
            bits,
            maps,
            coords,
            cands,
            sides,
            destroyed,
            scratch,
            ..
        } = self;
        let Some(bits) = bits.as_mut() else {
            return false;
        };
        let k = sides.as_slice();
        let dims = k.len();
        let lines = bits.line_of.last().map_or(0, |&l| l as usize + 1);
        // destroyed[i] = 1 once candidate i is seen to destroy something.
        destroyed.clear();
        destroyed.resize(cands.len(), 0);
        for target in group {
            if maps[target].free == 0 {
                continue;
            }
            let o = maps[target].ext;
            let mut loaded = false;
            for &m in of_orient {
                let e = maps[m].ext;
                let mut len = [0u32; MAX_DIMS];
                for d in 0..dims {
                    len[d] = (e[d] + o[d] - 1).min(k[d]);
                }
                // Word operations: dilating the whole bitmap, or testing
                // each candidate's box of bases line by line.
                let dilate: usize = (0..dims)
                    .map(|d| (len[d].max(1).ilog2() as usize + 2) * lines)
                    .sum();
                let of_m = cands.iter().filter(|c| c.1 == m).count();
                let per: usize = of_m * len[1..dims].iter().map(|&l| l as usize).product::<usize>();
                if per * 4 < dilate {
                    for (c, hit) in cands.iter().zip(destroyed.iter_mut()) {
                        if c.1 != m || *hit != 0 {
                            continue;
                        }
                        let at = &coords[c.0 as usize * dims..][..dims];
                        let mut lo = [0u32; MAX_DIMS];
                        for d in 0..dims {
                            lo[d] = ring_back(at[d], o[d] - 1, k[d]);
                        }
                        let lists = &mut scratch.lists;
                        *hit = u32::from(
                            maps[target].free_in(k, &lo[..dims], &len[..dims], 1, lists) > 0,
                        );
                    }
                } else {
                    if !loaded {
                        bits.load(&maps[target]);
                        loaded = true;
                    }
                    bits.dilate(k, &o, &e);
                    for (c, hit) in cands.iter().zip(destroyed.iter_mut()) {
                        if c.1 == m {
                            let (line, x) =
                                (bits.line_of[c.0 as usize], coords[c.0 as usize * dims]);
                            *hit |= u32::from(LineBits::is_set(&bits.a, line, x));
                        }
                    }
                }
            }
        }
        if destroyed.iter().all(|&h| h != 0) {
            return false;
        }
        let mut i = 0;
        cands.retain(|_| {
            i += 1;
            destroyed[i - 1] == 0
        });
        true
    }

    /// `alone`: this is the only count of the component, so a candidate's
    /// count may stop once it exceeds the least so far.
    fn add_destroyed(&mut self, target: usize, m: usize, alone: bool) {
        let sides = self.sides;
        let k = sides.as_slice();
        let dims = k.len();
        let n = sides.product() as usize;
        let (o, e) = (self.maps[target].ext, self.maps[m].ext);
        // Bases b' of o meeting a box of e at p: b' in p − o + 1 … p + e − 1.
        let mut len = [0u32; MAX_DIMS];
        for d in 0..dims {
            len[d] = (e[d] + o[d] - 1).min(k[d]);
        }
        let area: usize = len[..dims].iter().map(|&l| l as usize).product();
        let of_m = self.cands.iter().filter(|c| c.1 == m).count();
        if of_m == 0 {
            return;
        }
        // Free counts (a folded count stands for `mult` bases but is spread
        // once).
        let spread = (self.maps[target].free / self.maps[target].mult) as usize;
        let method = self.method(of_m * area, spread * area + n, n * (2 * dims + 1));
        match method {
            CountMethod::PerCandidate => {
                let (target_map, coords) = (&self.maps[target], &self.coords);
                let mut least = u32::MAX;
                for (c, dest) in self.cands.iter().zip(self.destroyed.iter_mut()) {
                    if c.1 != m {
                        continue;
                    }
                    let mut lo = [0u32; MAX_DIMS];
                    let at = &coords[c.0 as usize * dims..][..dims];
                    for d in 0..dims {
                        lo[d] = ring_back(at[d], o[d] - 1, k[d]);
                    }
                    let cap = if alone {
                        least.saturating_add(1)
                    } else {
                        u32::MAX
                    };
                    let lists = &mut self.scratch.lists;
                    let count = target_map.free_in(k, &lo[..dims], &len[..dims], cap, lists);
                    least = least.min(count);
                    *dest += count;
                }
            }
            CountMethod::PerFreeBase => {
                self.dense.clear();
                self.dense.resize(n, 0);
                let (target_map, coords) = (&self.maps[target], &self.coords);
                let mult = target_map.mult;
                for at in coords.chunks_exact(dims) {
                    // One base per count: coordinate 0 along folded
                    // dimensions.
                    let folded_zero = (0..dims).all(|d| target_map.strides[d] != 0 || at[d] == 0);
                    if !folded_zero || target_map.count_at(at) != 0 {
                        continue;
                    }
                    // Candidates p whose box of e meets the box of o at b:
                    // p in b − e + 1 … b + o − 1 (the whole ring along a
                    // folded dimension, once for each of its `k` bases).
                    let mut lo = [0u32; MAX_DIMS];
                    for d in 0..dims {
                        lo[d] = ring_back(at[d], e[d] - 1, k[d]);
                    }
                    let lists = &mut self.scratch.lists;
                    cyclic_offsets(k, &lo[..dims], &len[..dims], lists);
                    let dense = &mut self.dense;
                    for_each_combination(&lists[..dims], |off, _| {
                        for &(o0, _) in &lists[0] {
                            dense[off + o0] += mult;
                        }
                        true
                    });
                }
                self.add_dense(m);
            }
            CountMethod::Window => {
                self.dense.clear();
                let (target_map, coords) = (&self.maps[target], &self.coords);
                if target_map.bits.is_empty() {
                    self.dense.extend(
                        coords
                            .chunks_exact(dims)
                            .enumerate()
                            .map(|(b, at)| u32::from(target_map.count_of(b, at) == 0)),
                    );
                } else {
                    let k0 = k[0] as usize;
                    for l in 0..n / k0 {
                        let w = target_map.line_word(l);
                        self.dense.extend((0..k0).map(|x| (w >> x & 1) as u32));
                    }
                }
                let Scratch { tmp, acc, .. } = &mut self.scratch;
                tmp.resize(n, 0);
                for d in 0..dims {
                    if len[d] > 1 || o[d] > 1 {
                        window_sums(k, d, o[d] - 1, len[d], &self.dense, tmp, acc);
                        core::mem::swap(&mut self.dense, tmp);
                    }
                }
                self.add_dense(m);
            }
        }
    }

    fn add_dense(&mut self, m: usize) {
        for (c, dest) in self.cands.iter().zip(self.destroyed.iter_mut()) {
            if c.1 == m {
                *dest += self.dense[c.0 as usize];
            }
        }
    }

    /// The cheapest method for the three estimated costs.
    fn method(&self, per_candidate: usize, per_free_base: usize, window: usize) -> CountMethod {
        #[cfg(test)]
        if let Some(f) = self.force {
            return f;
        }
        if per_candidate <= per_free_base && per_candidate <= window {
            CountMethod::PerCandidate
        } else if per_free_base <= window {
            CountMethod::PerFreeBase
        } else {
            CountMethod::Window
        }
    }

    /// Whether every kept count equals one recomputed from `blocked`.
    #[cfg(test)]
    pub(crate) fn matches(&self, blocked: &NodeSet) -> bool {
        let mut scratch = Scratch::default();
        self.maps.iter().all(|m| {
            let fresh = BoxCounts::new(
                self.sides.as_slice(),
                m.ext,
                blocked,
                &self.coords,
                &mut scratch,
            );
            fresh.counts == m.counts && fresh.free == m.free && fresh.bits == m.bits
        })
    }
}
