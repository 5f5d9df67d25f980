//! Word-level searches for the scanning mesh strategies (First Fit, Best
//! Fit, Adaptive Scan, Frame Sliding, Busy List).
//!
//! The mesh is read once per request into row bit-words (`free`: bit x of
//! row y set iff node ⟨x,y⟩ is available; bits past the last column are 0).
//! The bases of a w-wide run in a row (bit x set iff bits x..x+w−1 all
//! are) come from walking the row's runs of free nodes a word at a time,
//! and eroding the rows vertically by h takes ⌈log₂ h⌉ AND passes over
//! whole rows, so the free bases of every w×h frame cost
//! O(H · (⌈W/64⌉ · log h + runs)) word operations instead of O(W·H) node
//! tests. Every search here reads those bases in the literal search's
//! order (rows by increasing y, bits by increasing x), so it picks the
//! same box and breaks ties the same way. Scratch buffers live in
//! [`MeshScratch`] and are reused, so a warm search does not allocate.

use core::cell::RefCell;

use partalloc_topology::GridBox;
use partalloc_topology::nodeset::{set_word_bit, word_bit};

use super::MeshCore;
use crate::BuildError;
use crate::StrategySpec;
use crate::entry::ParamInfo;
use crate::rowgrid::{RowGrid, SearchMode, set_range};

/// Whether the fast searches use the row words even where the per-request
/// cost model prefers the literal path (which chooses the same box): in
/// tests, so the equivalence checks exercise the word-level code on small
/// meshes too.
pub(crate) const WORDS_ALWAYS: bool = cfg!(test);

/// The `search` parameter of the scanning mesh strategies.
pub(crate) const SEARCH_PARAM: ParamInfo = ParamInfo {
    name: "search",
    default: "fast",
    doc: "fast (row bit-words, word-level erosion) or literal (node by node); both choose the same box",
};

/// Reads the `search` parameter.
pub(crate) fn search_param(spec: &StrategySpec) -> Result<SearchMode, BuildError> {
    Ok(spec.parse_or(SEARCH_PARAM.name, SearchMode::default())?)
}

/// A scanning strategy's search: the mode it runs in and the reusable
/// buffers that both `choose` and `fits` work in.
#[derive(Debug, Clone, Default)]
pub(crate) struct Search {
    pub(crate) mode: SearchMode,
    scratch: RefCell<MeshScratch>,
}

impl Search {
    /// Runs `f` on the buffers (on fresh ones if they are in use).
    pub(crate) fn run<T>(&self, f: impl FnOnce(&mut MeshScratch) -> T) -> T {
        with_scratch(&self.scratch, f)
    }

    /// The first free a×b frame in row-major base order, then (with
    /// `rotate`) the first free b×a one.
    pub(crate) fn first_fit(
        &self,
        core: &MeshCore<'_>,
        a: u32,
        b: u32,
        rotate: bool,
    ) -> Option<GridBox> {
        self.run(|s| super::first_fit_by(core, self.mode, s, a, b, rotate))
    }
}

/// The public `with_search` and `search` of the allocator of a scanning
/// strategy whose [`Search`] is its `search` field:
/// `search_methods!([generics] Type)`.
macro_rules! search_methods {
    ([$($g:tt)*] $ty:ty) => {
        impl<$($g)*> $crate::Managed<$ty> {
            /// The same strategy with the given search (both choose the same box).
            #[must_use]
            pub fn with_search(self, mode: $crate::mesh::SearchMode) -> Self {
                self.map(|mut s| {
                    s.search.mode = mode;
                    s
                })
            }

            /// The search in use.
            #[must_use]
            pub fn search(&self) -> $crate::mesh::SearchMode {
                self.strategy().search.mode
            }
        }
    };
}
pub(crate) use search_methods;

/// `name` with `params` (each `key=value`, already in canonical order) and
/// `search=literal` when the search is literal.
pub(crate) fn spec_name(name: &str, params: &[&str], mode: SearchMode) -> String {
    let literal = (mode == SearchMode::Literal).then_some("search=literal");
    let all: Vec<&str> = params.iter().copied().chain(literal).collect();
    if all.is_empty() {
        name.to_owned()
    } else {
        format!("{name}[{}]", all.join(","))
    }
}

/// A first-fit answer: the frame (w, h) and its first free base.
type LastFirst = (u32, u32, Option<(u32, u32)>);

/// Reusable buffers of one mesh strategy's searches.
#[derive(Debug, Clone, Default)]
pub(crate) struct MeshScratch {
    /// Words per row.
    pub(crate) nw: usize,
    /// The mesh generation `free` was read at.
    loaded: Option<u64>,
    /// The free rows, H × nw words.
    pub(crate) free: RowGrid,
    /// The eroded rows (free bases of the current frame), H × nw words.
    pub(crate) bases: Vec<u64>,
    /// One row of words (masks, running ANDs).
    pub(crate) row: Vec<u64>,
    /// Suffix ANDs of the vertical erosion, H × nw words.
    aux: Vec<u64>,
    /// The generation the two caches below hold for.
    cache_gen: Option<u64>,
    /// The frames (w, h) known to have no free placement (the minimal
    /// ones): any frame at least as wide and as tall has none either.
    refused: Vec<(u32, u32)>,
    /// The last first-fit answer, for the allocation that follows a probe.
    last_first: Option<LastFirst>,
    /// The longest free run of each row of `free`, and the generation it
    /// was computed for (`first_base_in_bands`).
    row_max: Vec<u32>,
    row_max_at: Option<u64>,
    /// The generation of the last first-fit probe.
    probed_at: Option<u64>,
    /// Literal First Fit's run lengths and counts.
    pub(crate) run: Vec<u32>,
    pub(crate) cnt: Vec<u32>,
    /// Literal Best Fit's coverage array.
    pub(crate) cov: Vec<bool>,
    /// Busy List: the busy rectangles and candidate rows.
    pub(crate) busy: Vec<GridBox>,
    pub(crate) ys: Vec<u32>,
}

impl MeshScratch {
    /// Loads the free rows of the mesh into `free` (kept while the mesh
    /// has not changed: a scheduler probes many requests between changes).
    pub(crate) fn load(&mut self, core: &MeshCore<'_>) {
        if self.loaded == Some(core.generation()) {
            return;
        }
        self.loaded = Some(core.generation());
        self.free
            .load_free(core.occupancy.blocked(), core.width as usize);
        self.nw = self.free.per_row();
    }

    /// Fills `bases` with the free bases of a w×h frame: bit x of row y set
    /// iff the frame based at ⟨x,y⟩ lies in the mesh and is free. Needs
    /// `load` first; w, h ≥ 1.
    /// Returns false if no base is set.
    pub(crate) fn frame_bases(&mut self, w: u32, h: u32) -> bool {
        let nw = self.nw;
        self.bases.clear();
        self.bases.resize(self.free.words().len(), 0);
        if nw == 0 {
            return false;
        }
        let mut any = 0;
        for (src, dst) in self
            .free
            .words()
            .chunks_exact(nw)
            .zip(self.bases.chunks_exact_mut(nw))
        {
            any |= run_starts(src, dst, w as usize);
        }
        if any == 0 {
            return false;
        }
        if h <= 4 {
            erode_rows(&mut self.bases, nw, h as usize);
        } else {
            self.erode_rows_blocked(h as usize);
        }
        self.bases.iter().any(|&w| w != 0)
    }

    /// Vertical erosion of all of `bases` by h (see [`erode_blocked`]).
    fn erode_rows_blocked(&mut self, h: usize) {
        erode_blocked(&mut self.bases, &mut self.aux, &mut self.row, self.nw, h);
    }

    /// The first free base of a w×h frame in row-major order, eroding
    /// only bands of consecutive rows that each hold a free run of at
    /// least w: a frame's rows all do, so a band shorter than h holds no
    /// base, and the search stops at the first band holding one. From the
    /// second probe between two changes of the mesh on, the rows' longest
    /// free runs are kept, so a probe that fits nowhere (most probes of a
    /// waiting queue) is often refused without reading the rows' words.
    /// Needs `load` first; w, h ≥ 1.
    fn first_base_in_bands(&mut self, w: u32, h: u32) -> Option<(u32, u32)> {
        let nw = self.nw;
        if nw == 0 {
            return None;
        }
        let height = self.free.rows();
        let (w, h) = (w as usize, h as usize);
        self.bases.resize(self.free.words().len(), 0);
        if self.probed_at != self.loaded {
            // The first probe since the change: the horizontal bases of
            // every row tell the bands as they are computed.
            self.probed_at = self.loaded;
            let mut start = 0;
            for y in 0..=height {
                let long_enough = y < height && {
                    let dst = &mut self.bases[y * nw..(y + 1) * nw];
                    dst.fill(0);
                    run_starts(self.free.row(y), dst, w) != 0
                };
                if !long_enough {
                    if y - start >= h
                        && let Some(found) = self.first_base_of_band(start, y, h)
                    {
                        return Some(found);
                    }
                    start = y + 1;
                }
            }
            return None;
        }
        if self.row_max_at != self.loaded {
            self.row_max_at = self.loaded;
            self.row_max.clear();
            self.row_max
                .extend(self.free.words().chunks_exact(nw).map(longest_run));
        }
        let mut y = 0;
        while y < height {
            if (self.row_max[y] as usize) < w {
                y += 1;
                continue;
            }
            let start = y;
            while y < height && self.row_max[y] as usize >= w {
                y += 1;
            }
            if y - start < h {
                continue;
            }
            let band = &mut self.bases[start * nw..y * nw];
            band.fill(0);
            for (src, dst) in self.free.words()[start * nw..y * nw]
                .chunks_exact(nw)
                .zip(band.chunks_exact_mut(nw))
            {
                run_starts(src, dst, w);
            }
            if let Some(found) = self.first_base_of_band(start, y, h) {
                return Some(found);
            }
        }
        None
    }

    /// Erodes rows start..end of `bases` (holding horizontal bases) by h
    /// within the band and returns its first base.
    fn first_base_of_band(&mut self, start: usize, end: usize, h: usize) -> Option<(u32, u32)> {
        let nw = self.nw;
        let band = &mut self.bases[start * nw..end * nw];
        if h <= 4 {
            erode_rows(band, nw, h);
        } else {
            erode_blocked(band, &mut self.aux, &mut self.row, nw, h);
        }
        let i = band.iter().position(|&b| b != 0)?;
        let x = (i % nw) * 64 + band[i].trailing_zeros() as usize;
        Some((x as u32, (start + i / nw) as u32))
    }

    /// Starts the caches afresh if the mesh changed since they were filled.
    fn sync_cache(&mut self, generation: u64) {
        if self.cache_gen != Some(generation) {
            self.cache_gen = Some(generation);
            self.refused.clear();
            self.last_first = None;
        }
    }

    /// Whether a w×h frame is known to have no free placement now.
    pub(crate) fn known_refused(&mut self, core: &MeshCore<'_>, w: u32, h: u32) -> bool {
        self.sync_cache(core.generation());
        self.refused.iter().any(|&(rw, rh)| w >= rw && h >= rh)
    }

    /// Records that a w×h frame has no free placement now.
    pub(crate) fn note_refused(&mut self, w: u32, h: u32) {
        self.refused.retain(|&(rw, rh)| !(rw >= w && rh >= h));
        self.refused.push((w, h));
    }

    /// Whether bit x of row y of `bases` is set (coordinates may be off
    /// the mesh).
    pub(crate) fn is_base(&self, x: i64, y: i64, width: u32, height: u32) -> bool {
        if x < 0 || y < 0 || x >= i64::from(width) || y >= i64::from(height) {
            return false;
        }
        let (x, y) = (x as usize, y as usize);
        word_bit(&self.bases[y * self.nw..], x)
    }

    /// Whether node ⟨x,y⟩ (on the mesh) is free in `free`.
    #[inline]
    pub(crate) fn is_free(&self, x: u32, y: u32) -> bool {
        self.free.is_set(x as usize, y as usize)
    }

    /// Free nodes of row y in columns lo..lo+len.
    pub(crate) fn free_in_row(&self, y: u32, lo: u32, len: u32) -> u32 {
        self.free
            .count_in_row(y as usize, lo as usize, lo as usize + len as usize)
    }
}

/// Sets in `dst` (zeroed) every bit x of `src` that starts a run of at
/// least `len` set bits (len ≥ 1), walking the runs of the row rather than
/// shifting it ⌈log₂ len⌉ times: a busy row has few runs. Returns the OR of
/// the words written (0: no base in this row).
fn run_starts(src: &[u64], dst: &mut [u64], len: usize) -> u64 {
    let n = src.len();
    let mut any = 0;
    let mut k = 0;
    let mut carry_start: Option<usize> = None;
    // Walk set runs: `start` is the bit where the current run began.
    while k < n {
        let word = src[k];
        let mut pos = 0u32;
        while pos < 64 {
            let rest = word >> pos;
            if carry_start.is_none() {
                if rest == 0 {
                    break;
                }
                pos += rest.trailing_zeros();
                carry_start = Some(64 * k + pos as usize);
            }
            let ones = if pos < 64 {
                (word >> pos).trailing_ones()
            } else {
                0
            };
            pos += ones;
            if pos < 64 {
                // The run ends at bit 64k + pos.
                if let Some(st) = carry_start.take() {
                    any |= set_bases(dst, st, 64 * k + pos as usize, len);
                }
            }
        }
        k += 1;
    }
    if let Some(st) = carry_start {
        any |= set_bases(dst, st, 64 * n, len);
    }
    any
}

/// Sets bits start..=end−len of `dst` (the bases of a run [start, end)).
fn set_bases(dst: &mut [u64], start: usize, end: usize, len: usize) -> u64 {
    if end - start < len {
        return 0;
    }
    set_range(dst, start, end - len + 1)
}

/// Rows (nw words each): row y &= rows y+1..y+len−1 (rows past the end
/// read as 0), by doubling.
fn erode_rows(rows: &mut [u64], nw: usize, len: usize) {
    let height = rows.len() / nw;
    let mut have = 1;
    while have < len {
        let step = have.min(len - have);
        for y in 0..height {
            if y + step < height {
                let (lo, hi) = rows.split_at_mut((y + step) * nw);
                for (a, b) in lo[y * nw..(y + 1) * nw].iter_mut().zip(&hi[..nw]) {
                    *a &= *b;
                }
            } else {
                rows[y * nw..(y + 1) * nw].fill(0);
            }
        }
        have += step;
    }
}

/// Vertical erosion of `rows` (nw words each) by h in three AND passes
/// whatever h (van Herk, Gil & Werman): rows split into blocks of h, a
/// window of h rows is the suffix AND of its first block times the prefix
/// AND of the next. Rows whose window runs past the end become 0.
fn erode_blocked(rows: &mut [u64], aux: &mut Vec<u64>, row: &mut Vec<u64>, nw: usize, h: usize) {
    let height = rows.len() / nw;
    aux.clear();
    aux.extend_from_slice(rows);
    for start in (0..height).step_by(h) {
        let end = (start + h).min(height);
        for y in (start..end - 1).rev() {
            let (lo, hi) = aux.split_at_mut((y + 1) * nw);
            for (a, b) in lo[y * nw..].iter_mut().zip(&hi[..nw]) {
                *a &= *b;
            }
        }
    }
    row.clear();
    row.resize(nw, 0);
    for y in 0..height {
        let cur = &rows[y * nw..(y + 1) * nw];
        if y % h == 0 {
            row.copy_from_slice(cur);
        } else {
            for (p, c) in row.iter_mut().zip(cur) {
                *p &= *c;
            }
        }
        if y + 1 >= h {
            let top = y + 1 - h;
            for k in 0..nw {
                rows[top * nw + k] = aux[top * nw + k] & row[k];
            }
        }
    }
    let first_dead = (height + 1).saturating_sub(h) * nw;
    rows[first_dead.min(height * nw)..].fill(0);
}

/// The longest run of set bits in a row of words.
fn longest_run(row: &[u64]) -> u32 {
    let (mut best, mut cur) = (0u32, 0u32);
    for &word in row {
        if word == !0 {
            cur += 64;
            continue;
        }
        // The low ones continue the run of the words before.
        let low = word.trailing_ones();
        best = best.max(cur + low);
        cur = 0;
        let mut pos = low;
        while pos < 64 {
            let rest = word >> pos;
            if rest == 0 {
                break;
            }
            pos += rest.trailing_zeros();
            let ones = (word >> pos).trailing_ones();
            pos += ones;
            if pos >= 64 {
                // Runs on into the next word.
                cur = ones;
            } else {
                best = best.max(ones);
            }
        }
    }
    best.max(cur)
}

/// Runs `f` on the scratch of a `&self` query without allocating, or on a
/// fresh one if the scratch is in use (not expected: queries do not nest).
pub(crate) fn with_scratch<T>(
    cell: &RefCell<MeshScratch>,
    f: impl FnOnce(&mut MeshScratch) -> T,
) -> T {
    match cell.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut MeshScratch::default()),
    }
}

/// Fast first fit: the first free w×h frame in row-major base order.
pub(crate) fn first_free_base_fast(
    core: &MeshCore<'_>,
    s: &mut MeshScratch,
    w: u32,
    h: u32,
) -> Option<(u32, u32)> {
    if w == 0 || h == 0 || w > core.width || h > core.height || s.known_refused(core, w, h) {
        return None;
    }
    if let Some((lw, lh, found)) = s.last_first
        && (lw, lh) == (w, h)
    {
        return found;
    }
    let found = s.first_base_in_bands(w, h);
    if found.is_none() {
        s.note_refused(w, h);
    }
    s.last_first = Some((w, h, found));
    found
}

/// Per bit, whether at least 0..=4 of four masks are set: `ge[s]`.
#[inline]
fn at_least(l: u64, r: u64, d: u64, u: u64) -> [u64; 5] {
    let (s1, c1) = (l ^ r, l & r);
    let (s2, c2) = (d ^ u, d & u);
    let b0 = s1 ^ s2;
    let carry = s1 & s2;
    let b1 = c1 ^ c2 ^ carry;
    let b2 = (c1 & c2) | ((c1 ^ c2) & carry);
    [!0, b2 | b1 | b0, b2 | b1, b2 | (b1 & b0), b2]
}

/// Fast Best Fit on loaded `free` and computed `bases` of an a×b frame:
/// the base with the highest score (blocked neighbours in `planes`, which
/// is `free` or `bases`), first in row-major order on ties.
pub(crate) fn best_base_fast(s: &MeshScratch, use_bases: bool, height: u32) -> Option<(u32, u32)> {
    let nw = s.nw;
    let planes = if use_bases { &s.bases } else { s.free.words() };
    let height = height as usize;
    let mut best: Option<(usize, u32, u32)> = None;
    for y in 0..height {
        let cur = &planes[y * nw..(y + 1) * nw];
        for k in 0..nw {
            let b = s.bases[y * nw + k];
            if b == 0 {
                continue;
            }
            let prev_hi = if k > 0 { cur[k - 1] >> 63 } else { 0 };
            let next_lo = if k + 1 < nw { cur[k + 1] << 63 } else { 0 };
            let left = !(cur[k] << 1 | prev_hi);
            let right = !(cur[k] >> 1 | next_lo);
            let down = if y == 0 {
                !0
            } else {
                !planes[(y - 1) * nw + k]
            };
            let up = if y + 1 == height {
                !0
            } else {
                !planes[(y + 1) * nw + k]
            };
            let ge = at_least(left, right, down, up);
            let floor = best.map_or(0, |(bs, _, _)| bs + 1);
            for sc in (floor..=4).rev() {
                let m = b & ge[sc];
                if m != 0 {
                    let x = 64 * k + m.trailing_zeros() as usize;
                    best = Some((sc, x as u32, y as u32));
                    break;
                }
            }
            if best.is_some_and(|(bs, _, _)| bs == 4) {
                return best.map(|(_, x, y)| (x, y));
            }
        }
    }
    best.map(|(_, x, y)| (x, y))
}

/// Fast Frame Sliding: frames of a×b at rows y0, y0+b, … and columns
/// xs, xs+a, …; the first entirely free one. Needs `load` first.
pub(crate) fn frame_slide_fast(
    core: &MeshCore<'_>,
    s: &mut MeshScratch,
    xs: u32,
    y0: u32,
    a: u32,
    b: u32,
) -> Option<GridBox> {
    let (width, height) = (core.width, core.height);
    if a > width || b > height || xs >= width {
        return None;
    }
    let nw = s.nw;
    // Stride mask: bits xs, xs+a, … (frames past the edge fail the erosion).
    s.row.clear();
    s.row.resize(nw, 0);
    let mut x = xs as usize;
    while x < width as usize {
        set_word_bit(&mut s.row, x);
        x += a as usize;
    }
    s.bases.clear();
    s.bases.resize(2 * nw, 0);
    let mut y = y0;
    while y + b <= height {
        let (acc, tmp) = s.bases.split_at_mut(nw);
        acc.copy_from_slice(&s.row);
        for r in y..y + b {
            tmp.fill(0);
            run_starts(s.free.row(r as usize), tmp, a as usize);
            let mut any = 0;
            for (p, q) in acc.iter_mut().zip(tmp.iter()) {
                *p &= *q;
                any |= *p;
            }
            if any == 0 {
                break;
            }
        }
        if let Some(k) = acc.iter().position(|&w| w != 0) {
            let x = 64 * k as u32 + acc[k].trailing_zeros();
            return super::rect(x, y, a, b);
        }
        y += b;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::longest_run;
    use partalloc_topology::nodeset::word_bit;

    /// The longest run by bits, one at a time.
    fn naive(row: &[u64], width: usize) -> u32 {
        let (mut best, mut cur) = (0, 0);
        for x in 0..width {
            if word_bit(row, x) {
                cur += 1;
                best = best.max(cur);
            } else {
                cur = 0;
            }
        }
        best
    }

    #[test]
    fn longest_run_matches_a_bit_by_bit_count() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for words in 1..=4 {
            for _ in 0..2000 {
                // Dense, sparse and whole words, so runs cross word ends.
                let row: Vec<u64> = (0..words)
                    .map(|_| match next() % 4 {
                        0 => !0,
                        1 => next() | next(),
                        2 => next() & next(),
                        _ => next(),
                    })
                    .collect();
                assert_eq!(longest_run(&row), naive(&row, 64 * words), "{row:x?}");
            }
        }
        assert_eq!(longest_run(&[]), 0);
        assert_eq!(longest_run(&[0, 0]), 0);
        assert_eq!(longest_run(&[!0, !0]), 128);
        assert_eq!(longest_run(&[1 << 63, 1]), 2);
    }
}
