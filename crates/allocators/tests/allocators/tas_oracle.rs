//! What "fits" means for TAS, by brute force on small machines: every
//! vector of pods per leaf within the leaves' free room is tried, and a
//! request fits exactly when one of them places all pods with each slice
//! inside one slice-level domain and, for `required`, all pods inside one
//! domain of the level. Each algorithm must find a placement exactly when
//! one exists, and what it returns must be one of them.
#![expect(clippy::unwrap_used, reason = "test helpers build fixed, valid inputs")]

use std::sync::Arc;

use partalloc_allocators::tas::{Tas, TasAlgorithm, TasError, TasMode, TasRequest};
use partalloc_topology::capacity::{CapacityMachine, CapacityMachineBuilder, HOSTNAME_LABEL};
use proptest::prelude::*;

/// A machine of 2 blocks, `racks` racks per block, hosts with `cpus` CPUs.
fn machine(racks: usize, cpus: &[u8]) -> CapacityMachine {
    let mut b = CapacityMachineBuilder::new("oracle", &["block", "rack", HOSTNAME_LABEL]).unwrap();
    let per_rack = cpus.len().div_ceil(2 * racks).max(1);
    for (i, &c) in cpus.iter().enumerate() {
        let rack = i / per_rack;
        let block = rack / racks;
        let host = format!("h{i:02}");
        b.add_node(
            0,
            &host,
            &[
                ("block", &format!("b{block}")),
                ("rack", &format!("b{block}r{rack}")),
                (HOSTNAME_LABEL, &host),
            ],
            &[("cpu", &c.to_string()), ("pods", "110")],
        )
        .unwrap();
    }
    b.build().unwrap()
}

/// The slice-level domain of a leaf, and the request-level one.
fn ancestor(m: &CapacityMachine, leaf: usize, level: usize) -> usize {
    let mut d = m.leaf_domain(leaf);
    for _ in level..m.levels().len() - 1 {
        d = m.parent(d).unwrap();
    }
    d
}

fn valid(m: &CapacityMachine, counts: &[u32], req: &TasRequest) -> bool {
    let last = m.levels().len() - 1;
    let (size, slice_level) = req.slice.unwrap_or((1, last));
    if counts.iter().map(|&c| u64::from(c)).sum::<u64>() != u64::from(req.count) {
        return false;
    }
    let mut per_slice_domain = vec![0u32; m.num_domains()];
    let mut level_domains = std::collections::BTreeSet::new();
    for (leaf, &c) in counts.iter().enumerate() {
        if c > 0 {
            per_slice_domain[ancestor(m, leaf, slice_level)] += c;
            level_domains.insert(ancestor(m, leaf, req.level));
        }
    }
    let slices_whole = per_slice_domain.iter().all(|&c| c % size == 0);
    slices_whole && (req.mode != TasMode::Required || level_domains.len() <= 1)
}

/// Tries every placement (the machine is small).
fn exists(m: &CapacityMachine, free: &[u32], req: &TasRequest) -> bool {
    let mut counts = vec![0u32; free.len()];
    fn go(
        i: usize,
        left: u32,
        m: &CapacityMachine,
        free: &[u32],
        counts: &mut Vec<u32>,
        req: &TasRequest,
    ) -> bool {
        if i == free.len() {
            return left == 0 && valid(m, counts, req);
        }
        for c in 0..=free[i].min(left) {
            counts[i] = c;
            if go(i + 1, left - c, m, free, counts, req) {
                return true;
            }
        }
        counts[i] = 0;
        false
    }
    go(0, req.count, m, free, &mut counts, req)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn each_algorithm_places_exactly_when_a_placement_exists(
        racks in 1usize..=2,
        cpus in prop::collection::vec(0u8..=3, 2..=6),
        used in prop::collection::vec(0u8..=2, 6),
        count in 1u32..=8,
        mode in 0u8..3,
        level in 0usize..3,
        sliced in any::<bool>(),
        slice_level_offset in 0usize..3,
        balanced in any::<bool>(),
    ) {
        let m = Arc::new(machine(racks, &cpus));
        let mut tas = Tas::new(Arc::clone(&m));
        let pod = m.pod_request(&[("cpu", 1000)]).unwrap();
        for leaf in 0..m.num_leaves() {
            let u = used[leaf].min(cpus[leaf]);
            tas.add_usage(leaf, &pod, i64::from(u));
        }
        let free: Vec<u32> = (0..m.num_leaves()).map(|l| tas.free_pods_on_leaf(l, &pod) as u32).collect();
        let mode = [TasMode::Required, TasMode::Preferred, TasMode::Unconstrained][mode as usize];
        let algorithm = match mode {
            TasMode::Preferred if balanced => TasAlgorithm::Balanced,
            TasMode::Unconstrained if balanced => TasAlgorithm::LeastFreeCapacity,
            _ => TasAlgorithm::BestFit,
        };
        let mut req = TasRequest::new(count, pod.clone(), mode, level, algorithm);
        if sliced && count % 2 == 0 {
            req = req.with_slices(2, (level + slice_level_offset).min(2));
        }
        // The level the oracle checks is the one the engine uses.
        if mode == TasMode::Unconstrained {
            req.level = if req.slice.is_some() { 0 } else { 2 };
        }
        let possible = exists(&m, &free, &req);
        match tas.place(&req) {
            Ok(a) => {
                let mut counts = vec![0u32; m.num_leaves()];
                for &(leaf, c) in a.entries() {
                    prop_assert!(c <= free[leaf as usize], "leaf {leaf} over its room");
                    counts[leaf as usize] = c;
                }
                prop_assert!(valid(&m, &counts, &req), "invalid placement {:?} for {:?}", a, req);
            }
            Err(TasError::NoFit { .. }) => prop_assert!(!possible, "a placement exists for {:?}", req),
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }
}
