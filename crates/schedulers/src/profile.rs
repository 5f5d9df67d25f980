//! Free nodes over time as a step function in two flat arrays, the plan
//! conservative backfilling keeps.
//!
//! Segment k covers `[times[k], times[k + 1])` with `free[k]` nodes free;
//! the last segment runs to +∞. Breakpoints are strictly increasing and
//! neighbouring segments never hold the same count (they are merged), so
//! the arrays have at most two entries per planned job. Counts are signed:
//! a plan that overcommits (a machine that lost nodes) reads as negative
//! free nodes and admits nothing there, instead of wrapping.

/// A step function of free nodes over `[origin, +∞)`.
#[derive(Debug, Clone)]
pub(crate) struct Profile {
    times: Vec<f64>,
    free: Vec<i64>,
}

impl Default for Profile {
    fn default() -> Self {
        Self {
            times: vec![0.0],
            free: vec![0],
        }
    }
}

impl Profile {
    /// One segment: `free` nodes from `origin` on.
    pub(crate) fn reset(&mut self, origin: f64, free: i64) {
        self.times.clear();
        self.free.clear();
        self.times.push(origin);
        self.free.push(free);
    }

    /// The start of the profile.
    #[cfg(test)]
    pub(crate) fn origin(&self) -> f64 {
        self.times[0]
    }

    /// The number of segments.
    #[cfg(test)]
    pub(crate) fn segments(&self) -> usize {
        self.times.len()
    }

    /// Forgets everything before `now` (no-op if `now` is not later).
    pub(crate) fn advance(&mut self, now: f64) {
        if now <= self.times[0] {
            return;
        }
        let k = self.segment_at(now);
        self.times.drain(..k);
        self.free.drain(..k);
        self.times[0] = now;
    }

    /// The segment holding time `t` (the first one for `t` before the
    /// origin).
    fn segment_at(&self, t: f64) -> usize {
        self.times.partition_point(|&x| x <= t).saturating_sub(1)
    }

    /// Free nodes at time `t`.
    #[cfg(test)]
    pub(crate) fn free_at(&self, t: f64) -> i64 {
        self.free[self.segment_at(t)]
    }

    /// Makes `t` (≥ origin) a breakpoint; returns its segment.
    fn split(&mut self, t: f64) -> usize {
        let k = self.segment_at(t);
        if self.times[k] >= t {
            return k;
        }
        self.times.insert(k + 1, t);
        self.free.insert(k + 1, self.free[k]);
        k + 1
    }

    /// Merges segment `k` into segment `k − 1` when their counts are equal.
    fn merge_at(&mut self, k: usize) {
        if k > 0 && k < self.times.len() && self.free[k] == self.free[k - 1] {
            self.times.remove(k);
            self.free.remove(k);
        }
    }

    /// Adds `delta` free nodes over `[from, to)` (clipped to the origin);
    /// nothing for an empty interval.
    pub(crate) fn add(&mut self, from: f64, to: f64, delta: i64) {
        let from = from.max(self.times[0]);
        if from >= to || delta == 0 {
            return;
        }
        let i = self.split(from);
        let e = if to == f64::INFINITY {
            self.times.len()
        } else {
            self.split(to)
        };
        for f in &mut self.free[i..e] {
            *f += delta;
        }
        self.merge_at(e);
        self.merge_at(i);
    }

    /// The fewest free nodes over `[from, to)`, or at `from` when the
    /// interval is empty.
    pub(crate) fn min_over(&self, from: f64, to: f64) -> i64 {
        let k = self.segment_at(from);
        let mut least = self.free[k];
        for j in k + 1..self.times.len() {
            if self.times[j] >= to {
                break;
            }
            least = least.min(self.free[j]);
        }
        least
    }

    /// The earliest time t ≥ `from` with at least `need` nodes free over
    /// `[t, t + duration)` (at time t itself when `duration` is 0), or +∞
    /// if there is none. Linear in the segments it passes.
    pub(crate) fn earliest(&self, from: f64, need: i64, duration: f64) -> f64 {
        let len = self.times.len();
        let mut k = self.segment_at(from);
        let mut anchor = from.max(self.times[0]);
        loop {
            let end = anchor + duration;
            let mut j = k;
            let blocked = loop {
                if self.free[j] < need {
                    break Some(j);
                }
                j += 1;
                if j >= len || self.times[j] >= end {
                    break None;
                }
            };
            match blocked {
                None => return anchor,
                Some(j) if j + 1 < len => {
                    k = j + 1;
                    anchor = self.times[k];
                }
                Some(_) => return f64::INFINITY,
            }
        }
    }

    /// The breakpoints: the start of each segment.
    pub(crate) fn breakpoints(&self) -> &[f64] {
        &self.times
    }

    /// The earliest start t in `[from, limit)` at which [`earliest`]
    /// (Self::earliest) would place a job of `need` nodes and `duration`,
    /// given that a start at `limit` is known to fit; `None` if no earlier
    /// start fits. With `own`, the job itself is booked from `limit` for
    /// `duration` and counted free there: a window starting before `limit`
    /// ends before the job's own booking does, so past `limit` it only
    /// needs no overbooking (at least 0 free besides the job's own nodes).
    ///
    /// Scans only the segments before `limit` and the windows of the
    /// anchors tried, and writes nothing: a job that cannot move costs no
    /// booking.
    pub(crate) fn earlier_start(
        &self,
        from: f64,
        need: i64,
        duration: f64,
        limit: f64,
        own: bool,
    ) -> Option<f64> {
        let len = self.times.len();
        let mut k = self.segment_at(from);
        let mut anchor = from.max(self.times[0]);
        let floor = if own { 0 } else { need };
        while anchor < limit {
            let end = anchor + duration;
            let mut j = k;
            let blocked = loop {
                let wants = if self.times[j] < limit { need } else { floor };
                if self.free[j] < wants {
                    break Some(j);
                }
                j += 1;
                if j >= len || self.times[j] >= end {
                    break None;
                }
            };
            match blocked {
                None => return Some(anchor),
                Some(j) if j + 1 < len => {
                    k = j + 1;
                    anchor = self.times[k];
                }
                Some(_) => return None,
            }
        }
        None
    }

    /// Checks the representation (tests).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        assert_eq!(self.times.len(), self.free.len());
        for k in 1..self.times.len() {
            assert!(self.times[k - 1] < self.times[k], "{self:?}");
            assert_ne!(self.free[k - 1], self.free[k], "unmerged: {self:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Profile;

    /// The oracle: free nodes per unit time slot `[t, t + 1)` for t in
    /// `0..H`, with everything after H equal to slot H − 1.
    const H: usize = 40;

    fn earliest_oracle(slots: &[i64; H], from: usize, need: i64, dur: usize) -> Option<usize> {
        (from..H).find(|&t| {
            if dur == 0 {
                slots[t] >= need
            } else {
                (t..t + dur).all(|u| slots[u.min(H - 1)] >= need)
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Random bookings and releases on integer times agree with a
        /// slot-by-slot array: free counts, minima and earliest starts.
        #[test]
        fn matches_a_slot_array(
            ops in proptest::collection::vec((0usize..30, 0usize..12, -3i64..4), 0..30),
            queries in proptest::collection::vec((0usize..30, 0i64..8, 0usize..10), 1..12),
            advance in 0usize..5,
        ) {
            let mut p = Profile::default();
            p.reset(0.0, 4);
            let mut slots = [4i64; H];
            for &(from, len, delta) in &ops {
                p.add(from as f64, (from + len) as f64, delta);
                for s in &mut slots[from..(from + len).min(H)] {
                    *s += delta;
                }
                p.check();
            }
            p.advance(advance as f64);
            p.check();
            prop_assert_eq!(p.origin(), advance as f64);
            for (t, &want) in slots.iter().enumerate().take(H - 12).skip(advance) {
                prop_assert_eq!(p.free_at(t as f64), want, "t = {}", t);
            }
            for &(from, need, dur) in &queries {
                let from = from.max(advance);
                let want = earliest_oracle(&slots, from, need, dur);
                let got = p.earliest(from as f64, need, dur as f64);
                match want {
                    // Past the oracle's horizon the profile is flat.
                    Some(t) if t + dur < H => prop_assert_eq!(got, t as f64),
                    Some(_) => prop_assert!(got >= (H - 12) as f64 || got.is_infinite()),
                    None => prop_assert!(got.is_infinite() || got >= (H - 12) as f64),
                }
                if dur > 0 && from + dur < H {
                    let least = slots[from..from + dur].iter().copied().min().unwrap_or(0);
                    prop_assert_eq!(p.min_over(from as f64, (from + dur) as f64), least);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// `earlier_start` finds what `earliest` finds before the limit,
        /// with the job out of the plan (`own = false`) or booked at the
        /// limit (`own = true`).
        #[test]
        fn earlier_start_is_earliest_before_the_limit(
            ops in proptest::collection::vec((0usize..30, 1usize..12, 1i64..4), 0..20),
            from in 0usize..10,
            need in 1i64..6,
            dur in 0usize..10,
            own in any::<bool>(),
        ) {
            let mut p = Profile::default();
            p.reset(0.0, 6);
            for &(at, len, n) in &ops {
                // Bookings only where they fit, as reservations are made.
                let t = p.earliest(at as f64, n, len as f64);
                if t.is_finite() {
                    p.add(t, t + len as f64, -n);
                }
            }
            let (from, dur) = (from as f64, dur as f64);
            let limit = p.earliest(from + 3.0, need, dur);
            prop_assume!(limit.is_finite());
            let want = p.earliest(from, need, dur);
            if own {
                let mut booked = p.clone();
                booked.add(limit, limit + dur, -need);
                let got = booked.earlier_start(from, need, dur, limit, true);
                prop_assert_eq!(got, (want < limit).then_some(want));
            } else {
                let got = p.earlier_start(from, need, dur, limit, false);
                prop_assert_eq!(got, (want < limit).then_some(want));
            }
        }
    }

    #[test]
    fn bookings_merge_back_to_one_segment() {
        let mut p = Profile::default();
        p.reset(0.0, 8);
        p.add(2.0, 5.0, -3);
        p.add(5.0, 9.0, -3);
        assert_eq!(p.segments(), 3);
        assert_eq!(p.earliest(0.0, 6, 3.0), 9.0);
        assert_eq!(p.earliest(0.0, 5, 3.0), 0.0);
        assert_eq!(p.earliest(1.0, 5, 0.0), 1.0);
        assert_eq!(p.earliest(0.0, 9, 1.0), f64::INFINITY);
        p.add(2.0, 9.0, 3);
        assert_eq!(p.segments(), 1);
        p.check();
    }
}
