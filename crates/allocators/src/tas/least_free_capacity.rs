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

/// Whether a domain with (slices, pods) `key` comes at or after one with
/// `than` in LeastFreeCapacity order (fewest slices, then fewest pods,
/// then label values, scanned in label order): the last such domain is the
/// one whose pods Kueue reports when a required request fits nowhere.
pub(super) fn later(key: (i64, i64), than: (i64, i64)) -> bool {
    key >= than
}
