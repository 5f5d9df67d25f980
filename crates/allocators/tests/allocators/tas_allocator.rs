//! The `tas[...]` registry strategies as allocators: the `Allocator`
//! contract (`conformance::check_script`) for each algorithm and mode, and
//! a brute-force "fits" oracle — on small racks machines, every placement
//! of the job's pods over the nodes' free GPUs is tried, and the strategy
//! must grant exactly when one exists (wait when one exists only on the
//! empty machine, refuse when none does), with a valid grant.
#![expect(clippy::unwrap_used, reason = "test helpers build fixed, valid inputs")]

use partalloc_allocators::conformance::{Step, check_script};
use partalloc_allocators::tas::{TasAlgorithm, TasAllocator, TasMode, TasSettings};
use partalloc_allocators::{AllocError, Allocator, Grant, Request, registry};
use partalloc_topology::Topology;
use partalloc_topology::capacity::CapacityMachine;
use proptest::prelude::*;

/// Every algorithm in each mode Kueue runs it in, with slices and pods of
/// two GPUs.
const STRATEGIES: &[&str] = &[
    "tas",
    "tas[algorithm=best-fit,mode=required,level=rack]",
    "tas[algorithm=best-fit,mode=required,level=hostname]",
    "tas[algorithm=best-fit,mode=preferred,level=hostname]",
    "tas[algorithm=best-fit,mode=unconstrained]",
    "tas[algorithm=least-free-capacity,mode=unconstrained]",
    "tas[algorithm=balanced,mode=preferred,level=block]",
    "tas[algorithm=balanced,mode=preferred,level=rack,slice-size=2,slice-level=hostname]",
    "tas[mode=required,level=block,slice-size=2,slice-level=rack]",
    "tas[mode=preferred,level=rack,gpus-per-pod=2]",
];

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (1u32..=10).prop_map(|n| Step::Allocate(Request::nodes(n))),
        1 => Just(Step::Allocate(Request::nodes(17))),
        1 => Just(Step::Allocate(Request::subcube(1))),
        4 => (0usize..16).prop_map(Step::Release),
        1 => (0usize..16).prop_map(Step::ReleaseTwice),
        1 => (0u32..17).prop_map(Step::MarkFaulty),
    ]
}

/// 2 blocks × 2 racks × 2 nodes × 2 GPUs: 8 leaves, 16 GPUs.
fn small() -> Topology {
    "racks:2x2x2x2gpu".parse().unwrap()
}

/// The domain of `level` above a leaf.
fn ancestor(m: &CapacityMachine, leaf: usize, level: usize) -> usize {
    let mut d = m.leaf_domain(leaf);
    for _ in level..m.levels().len() - 1 {
        d = m.parent(d).unwrap();
    }
    d
}

/// What a spec asks, read back from its settings.
struct Ask {
    required_level: Option<usize>,
    slice: Option<(u32, usize)>,
    per_pod: u32,
}

fn ask(a: &dyn Allocator) -> Ask {
    // The allocator's name carries every setting in full.
    let m = a.topology().as_capacity().unwrap();
    let name = a.name();
    let get = |key: &str| {
        name.trim_end_matches(']')
            .split(['[', ','])
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .map(str::to_owned)
    };
    let level = |v: String| m.level_index(&v).unwrap();
    Ask {
        required_level: (get("mode").as_deref() == Some("required"))
            .then(|| level(get("level").unwrap())),
        slice: get("slice-size").map(|s| (s.parse().unwrap(), level(get("slice-level").unwrap()))),
        per_pod: get("gpus-per-pod").map_or(1, |s| s.parse().unwrap()),
    }
}

/// Whether pods per leaf form a valid placement of `pods` pods.
fn valid(m: &CapacityMachine, counts: &[u32], pods: u32, ask: &Ask) -> bool {
    if counts.iter().sum::<u32>() != pods {
        return false;
    }
    let last = m.levels().len() - 1;
    let (size, slice_level) = ask.slice.unwrap_or((1, last));
    let mut per_slice_domain = vec![0u32; m.num_domains()];
    let mut domains = std::collections::BTreeSet::new();
    for (leaf, &c) in counts.iter().enumerate() {
        if c > 0 {
            per_slice_domain[ancestor(m, leaf, slice_level)] += c;
            if let Some(l) = ask.required_level {
                domains.insert(ancestor(m, leaf, l));
            }
        }
    }
    per_slice_domain.iter().all(|&c| c % size == 0) && domains.len() <= 1
}

/// Tries every vector of pods per leaf within `free` pods per leaf.
fn exists(m: &CapacityMachine, free: &[u32], pods: u32, ask: &Ask) -> bool {
    fn go(
        i: usize,
        left: u32,
        free: &[u32],
        counts: &mut Vec<u32>,
        ok: &dyn Fn(&[u32]) -> bool,
    ) -> bool {
        if i == free.len() {
            return left == 0 && ok(counts);
        }
        for c in 0..=free[i].min(left) {
            counts[i] = c;
            if go(i + 1, left - c, free, counts, ok) {
                return true;
            }
        }
        counts[i] = 0;
        false
    }
    let mut counts = vec![0u32; free.len()];
    go(0, pods, free, &mut counts, &|c| valid(m, c, pods, ask))
}

/// Free pods per leaf, from the allocator's own busy GPUs.
fn free_pods(a: &dyn Allocator, per_pod: u32) -> Vec<u32> {
    let m = a.topology().as_capacity().unwrap();
    let busy = a.busy_nodes();
    (0..m.num_leaves())
        .map(|leaf| m.leaf_units(leaf).filter(|&u| !busy.contains(u)).count() as u32 / per_pod)
        .collect()
}

fn pods_of(gpus: u32, ask: &Ask) -> u32 {
    let pods = gpus.div_ceil(ask.per_pod);
    ask.slice.map_or(pods, |(s, _)| pods.div_ceil(s) * s)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_tas_strategy_keeps_the_allocator_contract(
        script in prop::collection::vec(step(), 1..50),
    ) {
        let t = small();
        for name in STRATEGIES {
            let mut a = registry::build(name, &t).unwrap();
            if let Err(v) = check_script(a.as_mut(), &script) {
                prop_assert!(false, "{name}: {v}");
            }
        }
    }

    #[test]
    fn each_strategy_grants_exactly_when_a_placement_exists(
        jobs in prop::collection::vec((1u32..=12, 0usize..4), 1..24),
    ) {
        let t = small();
        let m = t.as_capacity().unwrap();
        for name in STRATEGIES {
            let mut a = registry::build(name, &t).unwrap();
            let ask = ask(a.as_ref());
            let empty = vec![m.leaf_units(0).len() as u32 / ask.per_pod; m.num_leaves()];
            let mut live: Vec<Grant> = Vec::new();
            for &(gpus, release) in &jobs {
                if release == 0 && !live.is_empty() {
                    let g = live.remove(gpus as usize % live.len());
                    a.release(&g).unwrap();
                }
                let pods = pods_of(gpus, &ask);
                let free = free_pods(a.as_ref(), ask.per_pod);
                let now = exists(m, &free, pods, &ask);
                let ever = exists(m, &empty, pods, &ask);
                match a.allocate(&Request::nodes(gpus)) {
                    Ok(g) => {
                        prop_assert!(now, "{name}: granted {gpus} GPUs but no placement exists");
                        let units = g.partition().node_list(&t).unwrap();
                        prop_assert_eq!(units.len() as u32, pods * ask.per_pod, "{}", name);
                        let mut counts = vec![0u32; m.num_leaves()];
                        for &u in &units {
                            counts[m.unit_leaf(u).unwrap()] += 1;
                        }
                        for (leaf, c) in counts.iter_mut().enumerate() {
                            prop_assert!(*c % ask.per_pod == 0 && *c / ask.per_pod <= free[leaf], "{name}: leaf {leaf}");
                            *c /= ask.per_pod;
                        }
                        prop_assert!(valid(m, &counts, pods, &ask), "{name}: invalid grant {units:?}");
                        live.push(g);
                    }
                    Err(AllocError::NoRoom { .. }) => {
                        prop_assert!(!now && ever, "{name}: {gpus} GPUs wait, now={now} ever={ever}");
                    }
                    Err(AllocError::Invalid { .. }) => {
                        prop_assert!(!ever, "{name}: {gpus} GPUs refused though they fit the empty machine");
                    }
                    Err(e) => prop_assert!(false, "{name}: {e}"),
                }
            }
        }
    }
}

#[test]
fn kueue_names_and_refusals() {
    let t: Topology = "racks:8x18x4gpu".parse().unwrap();
    let a = registry::build("tas[mode=required,level=rack]", &t).unwrap();
    assert_eq!(
        a.name(),
        "tas[algorithm=best-fit,mode=required,level=cloud.provider.com/topology-rack]"
    );
    let u = registry::build("tas[mode=unconstrained]", &t).unwrap();
    assert_eq!(
        u.name(),
        "tas[algorithm=least-free-capacity,mode=unconstrained]"
    );
    assert_eq!(u.free_nodes(), 576);
    // A job of 5 pods never fits one 4-GPU node; within a rack it does.
    let mut host = registry::build("tas[mode=required,level=hostname]", &t).unwrap();
    assert!(matches!(
        host.allocate(&Request::nodes(5)),
        Err(AllocError::Invalid { .. })
    ));
    let mut rack = registry::build("tas[mode=required,level=rack]", &t).unwrap();
    let g = rack.allocate(&Request::nodes(5)).unwrap();
    assert_eq!(g.partition().len(), 5);
    // A rack holds 72 GPUs: 73 under required rack never fits.
    assert!(matches!(
        rack.allocate(&Request::nodes(73)),
        Err(AllocError::Invalid { .. })
    ));
    for (bad, says) in [
        (
            "tas[algorithm=least-free-capacity,mode=required]",
            "only for unconstrained",
        ),
        (
            "tas[algorithm=balanced,mode=required]",
            "only for preferred",
        ),
        ("tas[level=zone]", "expected one of the machine's levels"),
        ("tas[slice-level=rack]", "needs slice-size"),
        ("tas[slice-size=0]", "a positive whole number"),
        (
            "tas[mode=required,level=hostname,slice-size=2,slice-level=rack]",
            "above the level",
        ),
        ("tas[algorithm=first-fit]", "expected best-fit"),
        ("tas[gpus-per-pod=x]", "a positive whole number"),
    ] {
        let e = registry::build(bad, &t).unwrap_err().to_string();
        assert!(e.contains(says), "{bad}: {e}");
    }
    let mesh: Topology = "mesh:4x4".parse().unwrap();
    let e = registry::build("tas", &mesh).unwrap_err().to_string();
    assert!(e.contains("capacity"), "{e}");
}

#[test]
fn domains_per_level_count_the_racks_and_nodes_a_job_spans() {
    let t: Topology = "racks:2x2x3x4gpu".parse().unwrap();
    let settings = TasSettings {
        algorithm: TasAlgorithm::BestFit,
        mode: TasMode::Preferred,
        level: 1,
        slice: None,
        units_per_pod: 1,
    };
    let mut a = TasAllocator::new(&t, settings).unwrap();
    // 6 GPUs fit one rack of 12: one block, one rack, two nodes.
    let g = a.allocate(&Request::nodes(6)).unwrap();
    assert_eq!(a.domains_per_level(&g).unwrap(), vec![1, 1, 2]);
    // 30 GPUs: more than a block's 24, so both blocks and at least 3 racks.
    let big = a.allocate(&Request::nodes(30)).unwrap();
    let d = a.domains_per_level(&big).unwrap();
    assert_eq!(d[0], 2, "{d:?}");
    assert!(d[1] >= 3 && d[2] >= 8, "{d:?}");
    a.release(&g).unwrap();
    assert!(a.domains_per_level(&g).is_err());
}
