//! The FGD policies as strategies of GPU-sharing clusters: a replay of a
//! small OpenB pod list (creations and deletions in time order, deletions
//! first) places every pod on the node, and with the GPUs, that a plain
//! oracle over `partalloc_gpushare::policy`'s scores chooses; and the
//! shared-node form of the allocator contract (many pods share a node, so
//! the disjointness of `conformance` does not apply): exact release,
//! determinism, refusals that change nothing, and a twin that follows the
//! grants with `allocate_at` ending in the same state.
#![expect(
    clippy::panic,
    reason = "a failing check names the policy and the pod in its panic"
)]

use std::path::Path;

use partalloc_allocators::gpushare::GpuShareAllocator;
use partalloc_allocators::{Allocator, Grant, Partition, Request};
use partalloc_gpushare::frag::{frag_of, node_frag, node_frag_score};
use partalloc_gpushare::openb::{Cluster, Unplaceable, parse_nodes, parse_pods_timed};
use partalloc_gpushare::policy::{self, Policy};
use partalloc_gpushare::{NodeState, Placement};
use partalloc_topology::Topology;

use crate::support::SplitMix;

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/openb")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The example cluster, judged against its pod list's typical pods.
fn machine() -> (Cluster, Topology) {
    let cluster = parse_nodes(&example("nodes.csv"), "nodes.csv").unwrap_or_else(|e| panic!("{e}"));
    let pods = parse_pods_timed(
        &example("pods.csv"),
        "pods.csv",
        &cluster,
        Unplaceable::Keep,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let plain: Vec<_> = pods.into_iter().map(|p| p.pod).collect();
    let typical = partalloc_gpushare::frag::typical_pods(&plain, 95);
    let topology = cluster
        .to_machine("openb:nodes.csv,pods.csv", typical)
        .unwrap_or_else(|e| panic!("{e}"))
        .into();
    (cluster, topology)
}

/// The oracle: every node scored afresh by the policy's own functions,
/// the highest score first, ties to the node whose name sorts first.
fn oracle_choice(
    nodes: &[NodeState],
    by_name: &[usize],
    req: &partalloc_gpushare::Request,
    policy: Policy,
    typical: &[partalloc_gpushare::frag::TypicalPod],
) -> Option<(usize, Placement)> {
    let mut best: Option<(i64, usize, Placement)> = None;
    for &i in by_name {
        let n = &nodes[i];
        if !n.fits(req) {
            continue;
        }
        let (score, at) = match policy {
            Policy::Fgd => policy::fgd_score(n, req, typical, node_frag_score(n, typical)),
            p => {
                let f = match p {
                    Policy::BestFit => policy::best_fit_raw,
                    Policy::DotProd => policy::dot_prod_score,
                    Policy::GpuClustering => policy::gpu_clustering_score,
                    _ => policy::gpu_packing_score,
                };
                let Some(at) = policy::best_gpus(n, req) else {
                    continue;
                };
                (f(n, req), at)
            }
        };
        if best.is_none_or(|(b, _, _)| score > b) {
            best = Some((score, i, at));
        }
    }
    best.map(|(_, i, at)| (i, at))
}

#[test]
fn a_replay_places_every_pod_where_the_policy_scores_place_it() {
    let (cluster, topology) = machine();
    let typical = topology
        .as_gpushare()
        .map(|c| c.typical().to_vec())
        .unwrap_or_default();
    let pods = parse_pods_timed(
        &example("pods.csv"),
        "pods.csv",
        &cluster,
        Unplaceable::Keep,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // (time, 0 = deletion / 1 = creation, pod): deletions first at a time.
    let mut events: Vec<(u64, u8, usize)> = Vec::new();
    for (i, p) in pods.iter().enumerate() {
        events.push((p.created.unwrap_or(0), 1, i));
        if let Some(d) = p.deleted {
            events.push((d, 0, i));
        }
    }
    events.sort_unstable();
    let mut by_name: Vec<usize> = (0..cluster.nodes.len()).collect();
    by_name.sort_by(|&a, &b| cluster.nodes[a].name.cmp(&cluster.nodes[b].name));
    for policy in [
        Policy::Fgd,
        Policy::BestFit,
        Policy::DotProd,
        Policy::GpuPacking,
        Policy::GpuClustering,
    ] {
        let mut alloc =
            GpuShareAllocator::new(&topology, policy, 42).unwrap_or_else(|e| panic!("{e}"));
        let mut nodes: Vec<NodeState> = cluster.nodes.iter().map(NodeState::new).collect();
        let mut live: Vec<Option<(Grant, usize, Placement)>> = vec![None; pods.len()];
        let mut placed = 0;
        for &(_, kind, i) in &events {
            let req = pods[i].pod.request;
            if kind == 0 {
                if let Some((g, node, at)) = live[i].take() {
                    alloc.release(&g).unwrap_or_else(|e| panic!("{e}"));
                    nodes[node]
                        .remove(&req, at)
                        .unwrap_or_else(|e| panic!("{e}"));
                }
                continue;
            }
            let want = oracle_choice(&nodes, &by_name, &req, policy, &typical);
            let got = alloc.allocate(&Request::Pod { request: req });
            match (want, got) {
                (None, Err(_)) => {}
                (Some((node, at)), Ok(g)) => {
                    assert_eq!(
                        g.partition(),
                        &Partition::Nodes(vec![node as u32]),
                        "{policy}: pod {i}"
                    );
                    nodes[node]
                        .place(&req, at)
                        .unwrap_or_else(|e| panic!("{e}"));
                    live[i] = Some((g, node, at));
                    placed += 1;
                }
                (w, g) => panic!("{policy}: pod {i}: the oracle chose {w:?}, the strategy {g:?}"),
            }
            // The same GPUs: the cluster's fragmentation and allocation
            // agree with the oracle's nodes.
            let r = alloc.reading();
            let used: u32 = nodes
                .iter()
                .map(|n| n.gpu_left().len() as u32 * 1000 - n.gpu_left_total())
                .sum();
            let frag: f64 = nodes.iter().map(|n| frag_of(&node_frag(n, &typical))).sum();
            assert_eq!(r.used, f64::from(used), "{policy}: pod {i}");
            assert!(
                (r.frag - frag).abs() < 1e-6,
                "{policy}: pod {i}: {} vs {frag}",
                r.frag
            );
        }
        assert!(placed > 100, "{policy}: {placed} placed");
        assert!(alloc.live_grants() < pods.len(), "{policy}: some pods left");
    }
}

/// A random script of pods (shares, whole GPUs, CPU only, some of models
/// the cluster lacks) and node counts, with releases.
fn script(seed: u64) -> Vec<Option<Request>> {
    let mut rng = SplitMix(seed);
    (0..300)
        .map(|_| match rng.below(6) {
            0 | 1 => None,
            2 => Some(Request::nodes(1 + rng.below(4) as u32)),
            k => {
                let cpu = 1000 * (1 + rng.below(16) as u32);
                let gpus = if k == 3 {
                    0
                } else {
                    1 + rng.below(2) as u8 * 3
                };
                let milli = if gpus == 1 {
                    100 * (1 + rng.below(10) as u32)
                } else {
                    1000
                };
                let r = if gpus == 0 {
                    partalloc_gpushare::Request::cpu(cpu, 1024)
                } else {
                    partalloc_gpushare::Request::gpu(cpu, 1024, gpus, milli)
                        .unwrap_or_else(|e| panic!("{e}"))
                        .with_models(rng.below(4))
                };
                Some(Request::Pod { request: r })
            }
        })
        .collect()
}

#[test]
fn the_shared_node_contract_holds_for_every_policy() {
    let (_, topology) = machine();
    for policy in Policy::ALL {
        for seed in [1, 2, 3] {
            let fresh =
                GpuShareAllocator::new(&topology, policy, 7).unwrap_or_else(|e| panic!("{e}"));
            let mut a = fresh.clone();
            let mut b = fresh.clone();
            let mut twin = fresh.clone();
            let mut live: Vec<(Grant, Grant, Grant)> = Vec::new();
            let mut rng = SplitMix(seed ^ 0x5eed);
            for step in script(seed) {
                match step {
                    Some(req) => {
                        let before = a.reading();
                        match (a.allocate(&req), b.allocate(&req)) {
                            (Ok(g), Ok(h)) => {
                                assert_eq!(g.partition(), h.partition(), "{policy}: determinism");
                                let t = twin
                                    .allocate_at(&req, g.partition())
                                    .unwrap_or_else(|e| panic!("{policy}: twin: {e}"));
                                assert_eq!(t.partition(), g.partition());
                                live.push((g, t, h));
                            }
                            (Err(_), Err(_)) => assert_eq!(
                                a.reading(),
                                before,
                                "{policy}: a refusal changed the state"
                            ),
                            (x, y) => panic!("{policy}: twins disagree: {x:?} vs {y:?}"),
                        }
                    }
                    None if !live.is_empty() => {
                        let k = rng.below(live.len() as u64) as usize;
                        let (g, t, h) = live.swap_remove(k);
                        a.release(&g).unwrap_or_else(|e| panic!("{e}"));
                        b.release(&h).unwrap_or_else(|e| panic!("{e}"));
                        twin.release(&t).unwrap_or_else(|e| panic!("{e}"));
                        let before = a.reading();
                        assert!(a.release(&g).is_err(), "{policy}: released twice");
                        assert_eq!(a.reading(), before);
                    }
                    None => {}
                }
                assert_eq!(a.reading(), twin.reading(), "{policy}: the twin drifted");
                assert_eq!(
                    a.free_nodes(),
                    topology.num_nodes() - a.busy_nodes().count()
                );
            }
            for (g, _, _) in live.drain(..) {
                a.release(&g).unwrap_or_else(|e| panic!("{e}"));
            }
            assert_eq!(a.reading(), fresh.reading(), "{policy}: release restores");
            assert_eq!(a.free_nodes(), topology.num_nodes());
            assert_eq!(a.live_grants(), 0);
        }
    }
}
