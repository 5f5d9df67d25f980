//! Literal searches and brute force used as test oracles (ports of
//! definitions in docs/baselines.md#mesh-strategies).

use partalloc_topology::GridBox;

/// The w×h box based at ⟨x, y⟩ (test input, so a zero side panics).
pub(super) fn xywh(x: u32, y: u32, w: u32, h: u32) -> GridBox {
    GridBox::new(&[x, y], &[w, h]).unwrap()
}

/// The 3-D box at `lo` with extents `ext` (test input).
pub(super) fn cuboid(lo: [u32; 3], ext: [u32; 3]) -> GridBox {
    GridBox::new(&lo, &ext).unwrap()
}

/// Busy-List's choice, its BV, and all candidates with their BV in
/// selection order.
pub(super) type BlChoice = (GridBox, u32, Vec<(GridBox, u32)>);

/// A mesh state for the oracles: a W×H blocked array and the busy list.
#[derive(Debug, Clone)]
pub(super) struct Mesh {
    pub(super) w: u32,
    pub(super) h: u32,
    pub(super) busy: Vec<GridBox>,
    cells: Vec<bool>,
}

impl Mesh {
    pub(super) fn new(w: u32, h: u32, busy: &[GridBox]) -> Self {
        let mut cells = vec![false; (w * h) as usize];
        for r in busy {
            for y in r.lo(1)..r.lo(1) + r.extent(1) {
                for x in r.lo(0)..r.lo(0) + r.extent(0) {
                    cells[(x + w * y) as usize] = true;
                }
            }
        }
        Self {
            w,
            h,
            busy: busy.to_vec(),
            cells,
        }
    }

    /// From corner quadruples (x1, y1, x2, y2).
    pub(super) fn corners(w: u32, h: u32, busy: &[(u32, u32, u32, u32)]) -> Self {
        let v: Vec<GridBox> = busy
            .iter()
            .map(|&(x1, y1, x2, y2)| xywh(x1, y1, x2 - x1 + 1, y2 - y1 + 1))
            .collect();
        Self::new(w, h, &v)
    }

    pub(super) fn blocked(&self, x: i64, y: i64) -> bool {
        x < 0
            || y < 0
            || x >= i64::from(self.w)
            || y >= i64::from(self.h)
            || self.cells[(x + i64::from(self.w) * y) as usize]
    }

    pub(super) fn free(&self, x: i64, y: i64, w: u32, h: u32) -> bool {
        if x < 0
            || y < 0
            || x + i64::from(w) > i64::from(self.w)
            || y + i64::from(h) > i64::from(self.h)
        {
            return false;
        }
        (y..y + i64::from(h)).all(|j| (x..x + i64::from(w)).all(|i| !self.blocked(i, j)))
    }

    pub(super) fn bv(&self, r: GridBox) -> u32 {
        let (x, y) = (i64::from(r.lo(0)), i64::from(r.lo(1)));
        let (w, h) = (i64::from(r.extent(0)), i64::from(r.extent(1)));
        let mut v = 0;
        for i in x..x + w {
            v += u32::from(self.blocked(i, y - 1)) + u32::from(self.blocked(i, y + h));
        }
        for j in y..y + h {
            v += u32::from(self.blocked(x - 1, j)) + u32::from(self.blocked(x + w, j));
        }
        v
    }

    fn rowmajor(&self, w: u32, h: u32) -> Vec<(i64, i64)> {
        let mut v = Vec::new();
        if w > self.w || h > self.h {
            return v;
        }
        for y in 0..=i64::from(self.h - h) {
            for x in 0..=i64::from(self.w - w) {
                v.push((x, y));
            }
        }
        v
    }

    pub(super) fn ff(&self, w: u32, h: u32) -> Option<GridBox> {
        self.rowmajor(w, h)
            .into_iter()
            .find(|&(x, y)| self.free(x, y, w, h))
            .map(|(x, y)| xywh(x as u32, y as u32, w, h))
    }

    /// Adaptive Scan exactly as docs/baselines.md#adaptive-scan defines it, with the
    /// jump past an overlapping busy submesh.
    pub(super) fn adaptive_scan(&self, a: u32, b: u32, rotate: bool) -> Option<GridBox> {
        let mut ors = vec![(a, b)];
        if rotate && a != b {
            ors.push((b, a));
        }
        for (w, h) in ors {
            if w > self.w || h > self.h {
                continue;
            }
            for y in 0..=self.h - h {
                let mut x = 0;
                while x + w <= self.w {
                    let frame = xywh(x, y, w, h);
                    match self.busy.iter().find(|bz| bz.overlaps(&frame)) {
                        Some(bz) => x = bz.hi(0) + 1,
                        None => return Some(frame),
                    }
                }
            }
        }
        None
    }

    /// Best Fit; `coverage` selects the coverage-array score.
    pub(super) fn bf(&self, w: u32, h: u32, coverage: bool) -> Option<(GridBox, u32)> {
        let mut best: Option<(GridBox, u32)> = None;
        for (x, y) in self.rowmajor(w, h) {
            if !self.free(x, y, w, h) {
                continue;
            }
            let nb = [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)];
            let sc = if coverage {
                nb.iter().filter(|&&(i, j)| !self.free(i, j, w, h)).count()
            } else {
                nb.iter().filter(|&&(i, j)| self.blocked(i, j)).count()
            } as u32;
            if best.is_none_or(|(_, s)| sc > s) {
                best = Some((xywh(x as u32, y as u32, w, h), sc));
            }
        }
        best
    }

    /// Frame Sliding; `b_variant` starts every row at x0.
    pub(super) fn fs(&self, w: u32, h: u32, b_variant: bool) -> Option<GridBox> {
        let first = (0..self.h)
            .flat_map(|y| (0..self.w).map(move |x| (x, y)))
            .find(|&(x, y)| !self.blocked(i64::from(x), i64::from(y)))?;
        let (x0, y0) = first;
        let xs = if b_variant { x0 } else { x0 % w };
        let mut y = y0;
        while y + h <= self.h {
            let mut x = xs;
            while x + w <= self.w {
                if self.free(i64::from(x), i64::from(y), w, h) {
                    return Some(xywh(x, y, w, h));
                }
                x += w;
            }
            y += h;
        }
        None
    }

    /// Busy-List as docs/baselines.md#busy-list-candidates defines it (plus, with `complete`, the
    /// lower-left blocked placements): the chosen candidate, its BV, and
    /// all candidates sorted by the selection key.
    pub(super) fn busy_list(
        &self,
        a: u32,
        b: u32,
        rotate: bool,
        complete: bool,
    ) -> Option<BlChoice> {
        let mut ors = vec![(a, b)];
        if rotate && a != b {
            ors.push((b, a));
        }
        let mut cands: Vec<GridBox> = Vec::new();
        for (w, h) in ors {
            let (wi, hi) = (i64::from(w), i64::from(h));
            let mut pts = Vec::new();
            for bz in &self.busy {
                pts.extend(super::busy_list::bases_around(bz, wi, hi));
            }
            let (mw, mh) = (i64::from(self.w), i64::from(self.h));
            pts.extend([(0, 0), (mw - wi, 0), (0, mh - hi), (mw - wi, mh - hi)]);
            if complete {
                let xs: Vec<i64> = core::iter::once(0)
                    .chain(self.busy.iter().map(|bz| i64::from(bz.hi(0)) + 1))
                    .collect();
                let ys: Vec<i64> = core::iter::once(0)
                    .chain(self.busy.iter().map(|bz| i64::from(bz.hi(1)) + 1))
                    .collect();
                for &x in &xs {
                    for &y in &ys {
                        pts.push((x, y));
                    }
                }
            }
            for (x, y) in pts {
                if self.free(x, y, w, h) {
                    let r = xywh(x as u32, y as u32, w, h);
                    if !cands.contains(&r) {
                        cands.push(r);
                    }
                }
            }
        }
        let key = |c: &GridBox| {
            (
                core::cmp::Reverse(self.bv(*c)),
                c.lo(1),
                c.lo(0),
                u8::from((c.extent(0), c.extent(1)) != (a, b)),
            )
        };
        cands.sort_by_key(key);
        let all: Vec<(GridBox, u32)> = cands.iter().map(|&c| (c, self.bv(c))).collect();
        let first = *all.first()?;
        Some((first.0, first.1, all))
    }

    /// Whether any free w×h (or h×w when `rotate`) placement exists.
    pub(super) fn any_free(&self, a: u32, b: u32, rotate: bool) -> bool {
        self.ff(a, b).is_some() || (rotate && self.ff(b, a).is_some())
    }

    /// Every maximal free rectangle, sorted (brute force, O(H²·W²)).
    pub(super) fn maximal_free(&self) -> Vec<GridBox> {
        let mut out = Vec::new();
        for y1 in 0..self.h {
            let mut col_free = vec![true; self.w as usize];
            for y2 in y1..self.h {
                for x in 0..self.w {
                    if self.blocked(i64::from(x), i64::from(y2)) {
                        col_free[x as usize] = false;
                    }
                }
                let mut x = 0;
                while x < self.w {
                    if !col_free[x as usize] {
                        x += 1;
                        continue;
                    }
                    let x1 = x;
                    while x < self.w && col_free[x as usize] {
                        x += 1;
                    }
                    let x2 = x - 1;
                    let row_blocked = |row: i64| (x1..=x2).any(|i| self.blocked(i64::from(i), row));
                    if row_blocked(i64::from(y1) - 1) && row_blocked(i64::from(y2) + 1) {
                        out.push(xywh(x1, y1, x2 - x1 + 1, y2 - y1 + 1));
                    }
                }
            }
        }
        out.sort_unstable();
        out
    }
}
