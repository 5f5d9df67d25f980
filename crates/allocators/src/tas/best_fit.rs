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
