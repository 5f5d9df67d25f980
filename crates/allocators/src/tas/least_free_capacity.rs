//! **LeastFreeCapacity** (Kueue v0.19.2, KEP 2724; used for
//! `unconstrained` requests while the `TASProfileMixed` gate is on, its
//! default since v0.15).
//!
//! Domains are ordered fewest slices first (then fewest pods, then label
//! values) and there is no best-fit swap: the request goes to the first
//! — fullest — domain of its level that holds it all; if none does, pods
//! are spread from the fullest domains upwards. Unconstrained requests
//! search the lowest level (the highest when only slices are asked for)
//! and never widen.

/// The first domain in order whose count holds `needed`.
pub(super) fn first_holding(
    sorted: &[u32],
    needed: i64,
    count: impl Fn(u32) -> i64,
) -> Option<u32> {
    sorted.iter().copied().find(|&d| count(d) >= needed)
}
