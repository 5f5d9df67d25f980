//! The phases every TAS algorithm shares (Kueue v0.19.2,
//! `pkg/cache/scheduler/tas_flavor_snapshot.go`): count how many pods and
//! slices each domain can hold, choose the level and the domains that hold
//! the request, then descend level by level, keeping the number of domains
//! used small at each level, down to pods per leaf.
//!
//! Domains are numbers of the [`CapacityMachine`]; within a level a smaller
//! number is a lexicographically smaller list of label values, Kueue's
//! last tie-break.

use partalloc_topology::capacity::{CapacityMachine, PodRequest};

use super::{TasError, balanced, best_fit, least_free_capacity};

/// What the request asks, after defaults are resolved.
#[derive(Debug, Clone, Copy)]
pub(super) struct Params {
    pub(super) count: i64,
    pub(super) slice_size: i64,
    pub(super) slice_level: usize,
    pub(super) level: usize,
    pub(super) required: bool,
    pub(super) unconstrained: bool,
    /// LeastFreeCapacity order and no best-fit swaps.
    pub(super) lfc: bool,
    pub(super) balanced: bool,
}

/// Per-domain pod and slice counts: first what fits, then what is placed.
#[derive(Debug, Clone, Default)]
pub(super) struct Counts {
    pub(super) pod: Vec<i64>,
    pub(super) slice: Vec<i64>,
}

/// What the counts of phase 1 depend on besides the usage: the per-pod
/// request and the slices.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CountsKey {
    pod: PodRequest,
    slice_size: i64,
    slice_level: usize,
}

/// Scratch space reused across placements, and phase 1's counts kept
/// between them: while the request's pod and slices stay the same, a
/// placement recounts only the leaves whose usage changed (and their
/// ancestors) instead of every leaf, and undoes its own writes to the
/// counts when it ends.
#[derive(Debug, Clone)]
pub(super) struct Engine {
    counts: Counts,
    cur: Vec<u32>,
    next: Vec<u32>,
    sorted: Vec<u32>,
    keys: Vec<u128>,
    /// The request the counts were made for; `None` when they are stale.
    key: Option<CountsKey>,
    /// Leaves whose usage changed since the counts were made.
    dirty: Vec<u32>,
    /// (domain, pods, slices) before a placement wrote them.
    saved: Vec<(u32, i64, i64)>,
}

impl Engine {
    pub(super) fn new(m: &CapacityMachine) -> Self {
        let n = m.num_domains();
        Self {
            counts: Counts {
                pod: vec![0; n],
                slice: vec![0; n],
            },
            cur: Vec::new(),
            next: Vec::new(),
            sorted: Vec::new(),
            keys: Vec::new(),
            key: None,
            dirty: Vec::new(),
            saved: Vec::new(),
        }
    }

    /// Notes that a leaf's usage changed.
    pub(super) fn mark_dirty(&mut self, leaf: usize) {
        if self.key.is_some() {
            self.dirty.push(leaf as u32);
        }
    }

    /// Brings phase 1's counts up to date for this request: a full count
    /// when the request's pod or slices differ from the last one's or
    /// many leaves changed, else only the changed leaves and their
    /// ancestors.
    fn refresh_counts(&mut self, m: &CapacityMachine, used: &[i64], pod: &PodRequest, p: &Params) {
        let fresh = self.key.as_ref().is_some_and(|k| {
            k.slice_size == p.slice_size && k.slice_level == p.slice_level && k.pod == *pod
        });
        if !fresh || self.dirty.len() > (m.num_leaves() / 16).max(8) {
            fill_counts(m, used, pod, p.slice_size, p.slice_level, &mut self.counts);
            if !fresh {
                self.key = Some(CountsKey {
                    pod: pod.clone(),
                    slice_size: p.slice_size,
                    slice_level: p.slice_level,
                });
            }
            self.dirty.clear();
            return;
        }
        let last = m.levels().len() - 1;
        let k = m.resources().len();
        for i in 0..self.dirty.len() {
            let leaf = self.dirty[i] as usize;
            let d = m.leaf_domain(leaf);
            let (cap, use_) = (m.leaf_capacity(leaf), used.get(leaf * k..(leaf + 1) * k));
            let pods = use_.map_or(0, |u| leaf_pods(pod, cap, u));
            self.counts.pod[d] = pods;
            self.counts.slice[d] = leaf_slices(pods, last == p.slice_level, p.slice_size);
            let (mut at, mut level) = (d, last);
            while let Some(parent) = m.parent(at) {
                level -= 1;
                recount(
                    m,
                    &mut self.counts,
                    parent,
                    level,
                    p.slice_size,
                    p.slice_level,
                );
                at = parent;
            }
        }
        self.dirty.clear();
    }

    /// Keeps the counts of `domains` to restore after the placement.
    fn save(&mut self, domains: &[u32]) {
        for &d in domains {
            let i = d as usize;
            self.saved
                .push((d, self.counts.pod[i], self.counts.slice[i]));
        }
    }

    /// Undoes the placement's writes (latest first, so each domain gets
    /// its count from before the placement).
    fn restore(&mut self) {
        for &(d, pods, slices) in self.saved.iter().rev() {
            self.counts.pod[d as usize] = pods;
            self.counts.slice[d as usize] = slices;
        }
        self.saved.clear();
    }

    pub(super) fn run(
        &mut self,
        m: &CapacityMachine,
        used: &[i64],
        pod: &PodRequest,
        p: &Params,
    ) -> Result<Vec<(u32, u32)>, TasError> {
        self.refresh_counts(m, used, pod, p);
        self.saved.clear();
        let result = self.descend(m, p);
        self.restore();
        result
    }

    /// Phases 2 and 3 on up-to-date counts; every count it writes is
    /// saved first (or, after a balanced placement, which replaces the
    /// counts, they are marked stale).
    fn descend(&mut self, m: &CapacityMachine, p: &Params) -> Result<Vec<(u32, u32)>, TasError> {
        let last = m.levels().len() - 1;
        let mut use_balanced = false;
        let mut fit_level = p.level;
        if p.balanced
            && !p.required
            && !p.unconstrained
            && let Some((counts, domains, level)) = balanced::place(m, &self.counts, p)
        {
            self.counts = counts;
            self.key = None;
            self.cur.clear();
            self.cur.extend_from_slice(&domains);
            fit_level = level;
            use_balanced = true;
        }
        if !use_balanced {
            fit_level = find_level(
                m,
                &self.counts,
                p,
                p.level,
                &mut self.cur,
                &mut self.sorted,
                &mut self.keys,
            )?;
        }
        let cur = core::mem::take(&mut self.cur);
        self.save(&cur);
        self.cur = cur;
        update_counts(
            &mut self.counts,
            &mut self.cur,
            p.count,
            p.slice_size,
            true,
            p.lfc,
        )?;
        let mut level = fit_level;
        if !use_balanced {
            while level < last.min(p.slice_level) {
                self.sorted.clear();
                for &d in &self.cur {
                    self.sorted.extend(m.children(d as usize).map(|c| c as u32));
                }
                sort_domains(&self.counts, &mut self.sorted, p.lfc);
                std::mem::swap(&mut self.cur, &mut self.sorted);
                let cur = core::mem::take(&mut self.cur);
                self.save(&cur);
                self.cur = cur;
                update_counts(
                    &mut self.counts,
                    &mut self.cur,
                    p.count,
                    p.slice_size,
                    true,
                    p.lfc,
                )?;
                level += 1;
            }
        }
        while level < last {
            let size_here = if level >= p.slice_level {
                1
            } else {
                p.slice_size
            };
            self.next.clear();
            for i in 0..self.cur.len() {
                let d = self.cur[i] as usize;
                self.sorted.clear();
                self.sorted.extend(m.children(d).map(|c| c as u32));
                sort_domains(&self.counts, &mut self.sorted, p.lfc);
                let sorted = core::mem::take(&mut self.sorted);
                self.save(&sorted);
                self.sorted = sorted;
                if size_here > 1 {
                    // Kueue recounts the children's slices from their pods here.
                    for &c in &self.sorted {
                        self.counts.slice[c as usize] = self.counts.pod[c as usize] / size_here;
                    }
                }
                let parent_pods = self.counts.pod[d];
                update_counts(
                    &mut self.counts,
                    &mut self.sorted,
                    parent_pods,
                    size_here,
                    size_here > 1,
                    p.lfc,
                )?;
                self.next.extend_from_slice(&self.sorted);
            }
            std::mem::swap(&mut self.cur, &mut self.next);
            level += 1;
        }
        let leaf0 = m.leaf_domain(0);
        let mut out: Vec<(u32, u32)> = self
            .cur
            .iter()
            .filter(|&&d| self.counts.pod[d as usize] > 0)
            .map(|&d| {
                (
                    (d as usize - leaf0) as u32,
                    self.counts.pod[d as usize].clamp(0, i64::from(u32::MAX)) as u32,
                )
            })
            .collect();
        out.sort_unstable();
        Ok(out)
    }
}

/// Phase 1: pods that fit on each leaf, rolled up; slices at and above
/// the slice level (Kueue's `fillInCounts`).
pub(super) fn fill_counts(
    m: &CapacityMachine,
    used: &[i64],
    pod: &PodRequest,
    slice_size: i64,
    slice_level: usize,
    counts: &mut Counts,
) {
    let last = m.levels().len() - 1;
    let k = m.resources().len();
    let caps = m.leaf_capacities();
    let leaves = m.level_domains(last);
    let at_slice_level = last == slice_level;
    if pod.is_impossible() || k == 0 {
        counts.pod[leaves.clone()].fill(0);
        counts.slice[leaves].fill(0);
    } else {
        for ((d, cap), use_) in leaves.zip(caps.chunks_exact(k)).zip(used.chunks_exact(k)) {
            let pods = leaf_pods(pod, cap, use_);
            counts.pod[d] = pods;
            counts.slice[d] = leaf_slices(pods, at_slice_level, slice_size);
        }
    }
    for level in (0..last).rev() {
        recount_level(m, counts, level, slice_size, slice_level);
    }
}

/// Pods of `pod` that fit in a leaf's capacity less its usage.
#[inline]
fn leaf_pods(pod: &PodRequest, cap: &[i64], used: &[i64]) -> i64 {
    if pod.is_impossible() {
        return 0;
    }
    let mut pods = i64::from(i32::MAX);
    for &(r, q) in pod.parts() {
        let r = r as usize;
        let room = cap.get(r).copied().unwrap_or(0) - used.get(r).copied().unwrap_or(0);
        pods = pods.min(if q == 1 { room } else { room / q });
    }
    pods.max(0)
}

/// A leaf's slices: its pods in slices when the leaves are the slice
/// level, else none.
#[inline]
fn leaf_slices(pods: i64, at_slice_level: bool, slice_size: i64) -> i64 {
    if !at_slice_level {
        0
    } else if slice_size == 1 {
        pods
    } else {
        pods / slice_size
    }
}

/// Recomputes one level's counts from its children.
pub(super) fn recount_level(
    m: &CapacityMachine,
    counts: &mut Counts,
    level: usize,
    slice_size: i64,
    slice_level: usize,
) {
    for d in m.level_domains(level) {
        recount(m, counts, d, level, slice_size, slice_level);
    }
}

/// One parent's counts from its children (Kueue's `fillInCountsHelper`
/// without leaders and inner slice layers).
pub(super) fn recount(
    m: &CapacityMachine,
    counts: &mut Counts,
    d: usize,
    level: usize,
    slice_size: i64,
    slice_level: usize,
) {
    let mut pods = 0;
    let mut slices = 0;
    for c in m.children(d) {
        pods += counts.pod[c];
        slices += counts.slice[c];
    }
    counts.pod[d] = pods;
    counts.slice[d] = if level == slice_level {
        pods / slice_size
    } else {
        slices
    };
}

/// Kueue's `sortedDomains`: most slices first (fewest with
/// LeastFreeCapacity), then fewest pods, then label values.
pub(super) fn sort_domains(counts: &Counts, domains: &mut [u32], lfc: bool) {
    domains.sort_unstable_by(|&a, &b| domain_order(counts, a, b, lfc));
}

/// The order of [`sort_domains`].
fn domain_order(counts: &Counts, a: u32, b: u32, lfc: bool) -> core::cmp::Ordering {
    let (sa, sb) = (counts.slice[a as usize], counts.slice[b as usize]);
    let by_slices = if lfc { sa.cmp(&sb) } else { sb.cmp(&sa) };
    by_slices
        .then(counts.pod[a as usize].cmp(&counts.pod[b as usize]))
        .then(a.cmp(&b))
}

/// Phase 2a (Kueue's `findLevelWithFitDomains`): the level and the domains
/// that will hold the request, into `out`; returns the level.
/// Most domains a LeastFreeCapacity spread keeps in a sorted buffer while
/// it scans (larger spreads select among all the domains instead).
const SMALL_SPREAD: usize = 256;

fn find_level(
    m: &CapacityMachine,
    counts: &Counts,
    p: &Params,
    level: usize,
    out: &mut Vec<u32>,
    sorted: &mut Vec<u32>,
    keys: &mut Vec<u128>,
) -> Result<usize, TasError> {
    let needed = p.count / p.slice_size;
    let no_fit = |fit: i64| TasError::NoFit {
        fit,
        total: needed,
        unit: if p.slice_size == 1 { "pod" } else { "slice" },
    };
    let slices = |d: u32| counts.slice[d as usize];
    // One pass finds what Kueue's sorted scans find when a domain holds
    // the request: BestFit swaps the most-free domain for the first with
    // the fewest slices that still hold it, LeastFreeCapacity takes the
    // first in its ascending order that holds it; both are the least
    // (slices, pods, label values) among the domains that hold it.
    let key_of = |d: usize| {
        let (sl, pods) = (counts.slice[d], counts.pod[d]);
        let sl_key = if p.lfc {
            sl as u128
        } else {
            (i64::from(i32::MAX) - sl) as u128
        };
        sl_key << 64 | (pods as u128) << 32 | d as u128
    };
    let wanted = usize::try_from(needed).unwrap_or(usize::MAX);
    // LeastFreeCapacity takes only the `wanted` least keys of a spread (no
    // swap looks past them): keep them sorted as the scan goes, most
    // domains rejected by one comparison with the largest kept. An
    // unconstrained request never widens, so its spread's keys are kept
    // in the same pass that looks for a domain holding it all.
    let bounded = p.lfc && wanted <= SMALL_SPREAD;
    let fused = bounded && p.unconstrained;
    let keep_least = |keys: &mut Vec<u128>, d: usize| {
        if counts.slice[d] <= 0 {
            return;
        }
        let k = key_of(d);
        if keys.len() == wanted && keys.last().is_some_and(|&l| k >= l) {
            return;
        }
        let at = keys.partition_point(|&x| x < k);
        if keys.len() == wanted {
            keys.pop();
        }
        keys.insert(at, k);
    };
    keys.clear();
    let mut holding: Option<u32> = None;
    let mut widest: Option<u32> = None;
    if fused {
        // The same pass over flat slices of the counts. A domain is kept
        // only if its key is below the largest kept one; since domains come
        // in increasing number, that is (slices, pods) below the largest
        // kept one's, judged without building the key.
        let range = m.level_domains(level);
        let (slice, pod) = (&counts.slice[range.clone()], &counts.pod[range.clone()]);
        for (i, (&sl, &pods)) in slice.iter().zip(pod).enumerate() {
            let d = range.start + i;
            if sl >= needed
                && holding
                    .is_none_or(|h| (sl, pods) < (counts.slice[h as usize], counts.pod[h as usize]))
            {
                holding = Some(d as u32);
            }
            if sl <= 0 {
                continue;
            }
            if keys.len() >= wanted
                && let Some(&last) = keys.last()
            {
                let (last_sl, last_pods) = ((last >> 64) as i64, i64::from((last >> 32) as u32));
                if sl > last_sl || (sl == last_sl && pods >= last_pods) {
                    continue;
                }
            }
            keep_least(keys, d);
        }
    }
    // Every other search: the holding domain and the widest, in one pass.
    let rest = if fused { 0..0 } else { m.level_domains(level) };
    for d in rest {
        let d = d as u32;
        let key = (counts.slice[d as usize], counts.pod[d as usize]);
        if key.0 >= needed
            && holding.is_none_or(|h| key < (counts.slice[h as usize], counts.pod[h as usize]))
        {
            holding = Some(d);
        }
        let wider = widest.is_none_or(|w| {
            let wk = (counts.slice[w as usize], counts.pod[w as usize]);
            if p.lfc {
                least_free_capacity::later(key, wk)
            } else {
                best_fit::more_free(key, wk)
            }
        });
        if wider {
            widest = Some(d);
        }
    }
    if let Some(d) = holding {
        out.clear();
        out.push(d);
        return Ok(level);
    }
    if !fused {
        let Some(widest) = widest else {
            return Err(no_fit(0));
        };
        if p.required {
            // Kueue reports the most free domain's slices (BestFit) or the
            // last domain's pods in LeastFreeCapacity order.
            let fit = if p.lfc {
                counts.pod[widest as usize]
            } else {
                slices(widest)
            };
            return Err(no_fit(fit));
        }
        if level > 0 && !p.unconstrained {
            return find_level(m, counts, p, level - 1, out, sorted, keys);
        }
        // Spread over several domains of this level, in Kueue's order.
        // Domains that hold no slice change nothing (Kueue takes them with
        // no pods), so they are left out; each other one holds a slice, so
        // at most `needed` are taken and only that prefix is sorted. Keys
        // pack (slices, pods, domain) so the order is an integer order.
        let _ = &sorted;
        for d in m.level_domains(level) {
            if bounded {
                keep_least(keys, d);
            } else if counts.slice[d] > 0 {
                keys.push(key_of(d));
            }
        }
    }
    let take = wanted.min(keys.len());
    if take > 0 && take < keys.len() {
        keys.select_nth_unstable(take - 1);
    }
    keys[..take].sort_unstable();
    let domain_of = |k: u128| (k & 0xffff_ffff) as u32;
    out.clear();
    let mut remaining = needed;
    let mut idx = 0;
    while remaining > 0 && idx < take {
        let mut d = domain_of(keys[idx]);
        if !p.lfc && slices(d) >= remaining {
            d = best_fit::pick_least(keys[idx..].iter().map(|&k| domain_of(k)), remaining, |x| {
                (counts.slice[x as usize], counts.pod[x as usize])
            });
        }
        out.push(d);
        remaining -= slices(d);
        idx += 1;
    }
    if remaining > 0 {
        return Err(no_fit(needed - remaining));
    }
    Ok(level)
}

/// Kueue's `updateCountsToMinimumGeneric` without leaders: takes domains
/// in the given order until `count` pods (or `count / slice_size` slices)
/// are placed, swapping the last one for the best fit unless
/// LeastFreeCapacity; sets each chosen domain's placed counts and keeps
/// only the chosen domains in `domains`.
pub(super) fn update_counts(
    counts: &mut Counts,
    domains: &mut Vec<u32>,
    count: i64,
    slice_size: i64,
    slices: bool,
    lfc: bool,
) -> Result<(), TasError> {
    let mut remaining = if slices { count / slice_size } else { count };
    for i in 0..domains.len() {
        let mut d = domains[i];
        if slices {
            if !lfc && counts.slice[d as usize] >= remaining {
                d = best_fit::pick(&domains[i..], remaining, |x| counts.slice[x as usize]);
            }
            let di = d as usize;
            if counts.slice[di] >= remaining {
                counts.pod[di] = remaining * slice_size;
                counts.slice[di] = remaining;
                domains[i] = d;
                domains.truncate(i + 1);
                return Ok(());
            }
            counts.pod[di] = counts.slice[di] * slice_size;
            remaining -= counts.slice[di];
        } else {
            if !lfc && counts.pod[d as usize] >= remaining {
                d = best_fit::pick(&domains[i..], remaining, |x| counts.pod[x as usize]);
            }
            let di = d as usize;
            if counts.pod[di] >= remaining {
                counts.pod[di] = remaining;
                domains[i] = d;
                domains.truncate(i + 1);
                return Ok(());
            }
            remaining -= counts.pod[di];
        }
        domains[i] = d;
    }
    Err(TasError::Descent { remaining })
}
