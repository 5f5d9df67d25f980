//! **BalancedPlacement** (Kueue v0.19.2, `tas_balanced_placement.go`;
//! feature gate `TASBalancedPlacement`, alpha, off by default; only for
//! `preferred` requests, falling back to BestFit when it finds nothing).
//!
//! For each domain one level above the requested level (or the whole top
//! level when the requested level is the top), it asks how many domains a
//! greedy fill of the level below the requested one needs, and takes as
//! the *threshold* the even share `slices / domains`, lowered to the
//! slices of the last domain that greedy fill used. Domains holding fewer
//! than the threshold are pruned; the candidate with the highest threshold
//! (then fewest requested-level domains) wins. Within it, a subset of the
//! fewest domains with the least total room that holds the request is
//! found by dynamic programming (at the requested level ordered by room
//! and then by the evenness — entropy — of their children), every chosen
//! domain gets the threshold and the remainder is added most-room first.
//! Leader pod sets are not modelled.

use std::collections::BTreeMap;

use partalloc_topology::capacity::CapacityMachine;

use super::engine::{Counts, Params, recount, sort_domains};

/// Runs balanced placement; the counts to descend with, the chosen
/// domains and their level, or `None` to fall back to BestFit.
pub(super) fn place(
    m: &CapacityMachine,
    counts: &Counts,
    p: &Params,
) -> Option<(Counts, Vec<u32>, usize)> {
    let needed = p.count / p.slice_size;
    let groups: Vec<Vec<u32>> = if p.level == 0 {
        vec![m.level_domains(0).map(|d| d as u32).collect()]
    } else {
        m.level_domains(p.level - 1)
            .map(|h| m.children(h).map(|d| d as u32).collect())
            .collect()
    };
    let mut best: Option<(Counts, Vec<u32>)> = None;
    let mut best_threshold = 0;
    let mut best_domains = 0;
    for group in groups {
        let mut c = counts.clone();
        let lower: Vec<u32> = if p.level < p.slice_level {
            children_of(m, &group)
        } else {
            group.clone()
        };
        let Some((used, last)) = greedy(&c, &lower, needed) else {
            continue;
        };
        let mut threshold = needed / used;
        if let Some(last) = last {
            threshold = threshold.min(c.slice[last as usize]);
        }
        if threshold < best_threshold {
            continue;
        }
        prune(m, &mut c, &group, threshold, p);
        let Some((domains, _)) = greedy(&c, &group, needed) else {
            continue;
        };
        if threshold > best_threshold || (threshold == best_threshold && domains < best_domains) {
            best_threshold = threshold;
            best_domains = domains;
            best = Some((c, group));
        }
    }
    if best_threshold <= 0 {
        return None;
    }
    let (mut c, group) = best?;
    let (domains, level) = if p.level < p.slice_level {
        let chosen = optimal_subset(m, &c, &group, needed, p.slice_size, true)?;
        (children_of(m, &chosen), p.level + 1)
    } else {
        (group, p.level)
    };
    let placed = spread(m, &mut c, &domains, needed, p.slice_size, best_threshold)?;
    Some((c, placed, level))
}

fn children_of(m: &CapacityMachine, domains: &[u32]) -> Vec<u32> {
    domains
        .iter()
        .flat_map(|&d| m.children(d as usize).map(|c| c as u32))
        .collect()
}

/// Kueue's `evaluateGreedyAssignment` without leaders: how many domains a
/// most-room-first fill uses and the last one, if it holds `needed`.
fn greedy(c: &Counts, domains: &[u32], needed: i64) -> Option<(i64, Option<u32>)> {
    let mut sorted = domains.to_vec();
    sort_domains(c, &mut sorted, false);
    let mut remaining = needed;
    let mut used = 0;
    let mut last = None;
    for &d in &sorted {
        if remaining <= 0 || c.slice[d as usize] <= 0 {
            break;
        }
        used += 1;
        last = Some(d);
        remaining -= c.slice[d as usize];
    }
    (remaining <= 0).then_some((used, last))
}

fn clear(m: &CapacityMachine, c: &mut Counts, d: usize) {
    c.pod[d] = 0;
    c.slice[d] = 0;
    for ch in m.children(d) {
        clear(m, c, ch);
    }
}

/// Kueue's `pruneDomainsBelowThreshold`: children of the group's domains
/// below the threshold are emptied, the group recounted, and group
/// domains below the threshold emptied too.
fn prune(m: &CapacityMachine, c: &mut Counts, group: &[u32], threshold: i64, p: &Params) {
    for &d in group {
        for ch in m.children(d as usize) {
            if c.slice[ch] < threshold {
                clear(m, c, ch);
            }
        }
    }
    for &d in group {
        recount_subtree(m, c, d as usize, p.level, p);
        if c.slice[d as usize] < threshold {
            clear(m, c, d as usize);
        }
    }
}

fn recount_subtree(m: &CapacityMachine, c: &mut Counts, d: usize, level: usize, p: &Params) {
    if m.children(d).is_empty() {
        if level == p.slice_level {
            c.slice[d] = c.pod[d] / p.slice_size;
        }
        return;
    }
    for ch in m.children(d) {
        recount_subtree(m, c, ch, level + 1, p);
    }
    recount(m, c, d, level, p.slice_size, p.slice_level);
}

fn entropy(m: &CapacityMachine, c: &Counts, d: usize) -> f64 {
    let total: i64 = m.children(d).map(|ch| c.pod[ch]).sum();
    if total == 0 {
        return 0.0;
    }
    let t = total as f64;
    m.children(d)
        .map(|ch| c.pod[ch])
        .filter(|&x| x > 0)
        .map(|x| {
            let q = x as f64 / t;
            -q * q.log2()
        })
        .sum()
}

/// Kueue's `selectOptimalDomainSetToFit` without leaders: among subsets of
/// as many domains as the greedy fill uses, the first found (in the given
/// order) that leaves the least room unused.
fn optimal_subset(
    m: &CapacityMachine,
    c: &Counts,
    domains: &[u32],
    needed: i64,
    slice_size: i64,
    by_entropy: bool,
) -> Option<Vec<u32>> {
    let (n, _) = greedy(c, domains, needed)?;
    let n = usize::try_from(n).ok()?;
    let mut ordered = domains.to_vec();
    if by_entropy {
        ordered.sort_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            c.slice[b].cmp(&c.slice[a]).then_with(|| {
                let (ea, eb) = (entropy(m, c, a), entropy(m, c, b));
                eb.partial_cmp(&ea)
                    .unwrap_or(core::cmp::Ordering::Equal)
                    .then(a.cmp(&b))
            })
        });
    } else {
        ordered.sort_unstable();
    }
    // table[i]: pods still to place → the first subset of i domains found.
    let mut table: Vec<BTreeMap<i64, Vec<u32>>> = vec![BTreeMap::new(); n + 1];
    table[0].insert(needed * slice_size, Vec::new());
    for &d in &ordered {
        if c.slice[d as usize] <= 0 {
            continue;
        }
        for i in (1..=n).rev() {
            let (below, above) = table.split_at_mut(i);
            for (&left, subset) in &below[i - 1] {
                if left <= 0 {
                    continue;
                }
                let after = left - c.pod[d as usize];
                above[0].entry(after).or_insert_with(|| {
                    let mut s = subset.clone();
                    s.push(d);
                    s
                });
            }
        }
    }
    table[n].range(..=0).next_back().map(|(_, s)| s.clone())
}

/// Kueue's `placeSlicesOnDomainsBalanced` without leaders.
fn spread(
    m: &CapacityMachine,
    c: &mut Counts,
    domains: &[u32],
    needed: i64,
    slice_size: i64,
    threshold: i64,
) -> Option<Vec<u32>> {
    let mut chosen = optimal_subset(m, c, domains, needed, slice_size, false)?;
    let k = chosen.len() as i64;
    if needed < k * threshold {
        return None;
    }
    sort_domains(c, &mut chosen, false);
    let mut extra = needed - k * threshold;
    for &d in &chosen {
        let d = d as usize;
        let take = if extra > 0 {
            (c.slice[d] - threshold).min(extra)
        } else {
            0
        };
        c.slice[d] = threshold + take;
        c.pod[d] = c.slice[d] * slice_size;
        extra -= take;
    }
    (extra <= 0).then_some(chosen)
}
