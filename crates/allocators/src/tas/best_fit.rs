//! **BestFit** (Kueue v0.19.2, KEP 2724 "BestFit"; the default for
//! `required` and `preferred` requests, and for every request when the
//! `TASProfileMixed` gate is off).
//!
//! Domains are taken most-free first (most slices, then fewest pods, then
//! label values); whenever the domain about to be taken can hold all that
//! is left, it is swapped for the first domain in that order with the
//! smallest count that still holds the rest. This happens when choosing
//! the level (one domain that holds everything: the tightest one) and at
//! every step of the descent, so the last, partly used domain is the
//! tightest fit and large domains stay whole.

/// The first domain with the smallest count ≥ `needed` (Kueue's
/// `findBestFitDomainBy` without leaders or affinity); the first domain
/// when none holds it.
pub(super) fn pick(domains: &[u32], needed: i64, count: impl Fn(u32) -> i64) -> u32 {
    let mut best = None;
    let mut best_count = i64::MAX;
    for &d in domains {
        let c = count(d);
        if c >= needed && c < best_count {
            best = Some(d);
            best_count = c;
        }
    }
    best.or_else(|| domains.first().copied()).unwrap_or(0)
}

/// [`pick`] on domains in any order: the least (count, pods, label
/// values) among those whose count holds `needed`, which is what `pick`
/// finds when the domains are in BestFit order (equal counts are ordered
/// by pods, then label values); the first domain when none holds it.
pub(super) fn pick_least(
    domains: impl Iterator<Item = u32> + Clone,
    needed: i64,
    key: impl Fn(u32) -> (i64, i64),
) -> u32 {
    let mut best: Option<(i64, i64, u32)> = None;
    for d in domains.clone() {
        let (c, pods) = key(d);
        if c >= needed && best.is_none_or(|b| (c, pods, d) < b) {
            best = Some((c, pods, d));
        }
    }
    best.map(|b| b.2)
        .or_else(|| domains.clone().next())
        .unwrap_or(0)
}

/// Whether a domain with (slices, pods) `key` comes strictly before one
/// with `than` in BestFit order (most slices, then fewest pods; label
/// values break ties, scanned in label order): the first such domain is
/// the most free one, whose slices Kueue reports when a required request
/// fits nowhere.
pub(super) fn more_free(key: (i64, i64), than: (i64, i64)) -> bool {
    key.0 > than.0 || (key.0 == than.0 && key.1 < than.1)
}
