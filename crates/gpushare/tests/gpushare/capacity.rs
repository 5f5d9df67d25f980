//! Capacity machines as GPU-sharing clusters: the conversion, and the
//! capacity machine's per-node fit equal to this model's on whole GPUs.

#![expect(clippy::unwrap_used, reason = "fixtures are valid by construction")]

use partalloc_gpushare::capacity::{
    CapacityConversionError, MIB, cluster_from_capacity, request_on,
};
use partalloc_gpushare::model::{NodeState, Placement, Request};
use partalloc_topology::capacity::{CapacityMachine, GPU_RESOURCE};
use proptest::prelude::*;

fn kueue_example(topology: &str) -> Result<CapacityMachine, String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/kueue");
    let nodes = std::fs::read_to_string(root.join("nodes.yaml")).unwrap();
    CapacityMachine::from_kueue_yaml(topology, "topology.yaml", &nodes, "nodes.yaml")
        .map_err(|e| e.to_string())
}

#[test]
fn racks_and_the_kueue_example_become_clusters() {
    let racks = CapacityMachine::racks(
        1,
        8,
        18,
        &[("cpu", 72_000), ("memory", 1 << 40), (GPU_RESOURCE, 4)],
    )
    .unwrap();
    let c = cluster_from_capacity(&racks, "GB200").unwrap();
    assert_eq!((c.nodes.len(), c.gpus()), (144, 576));
    let n = &c.nodes[0];
    assert_eq!(
        (n.cpu_milli, n.memory_mib, n.gpus, n.max_pods),
        (72_000, 1 << 20, 4, 110)
    );
    assert_eq!(c.models.name(n.model), Some("GB200"));

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/kueue");
    let topology = std::fs::read_to_string(root.join("topology.yaml")).unwrap();
    let m = kueue_example(&topology).unwrap();
    let c = cluster_from_capacity(&m, "GPU").unwrap();
    assert_eq!(c.nodes.len(), m.node_names().len());
    assert!(
        c.nodes
            .iter()
            .all(|n| n.cpu_milli == 72_000 && n.memory_mib == 1 << 20 && n.gpus == 4)
    );
}

#[test]
fn machines_the_model_cannot_express_are_refused() {
    // Without the hostname level, nodes of a rack share one leaf.
    let topology = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata:\n  name: t\nspec:\n  levels:\n  - nodeLabel: cloud.provider.com/topology-block\n  - nodeLabel: cloud.provider.com/topology-rack\n";
    let m = kueue_example(topology).unwrap();
    let e = cluster_from_capacity(&m, "GPU").unwrap_err();
    assert!(matches!(e, CapacityConversionError::NotPerNode { .. }));
    assert_eq!(
        e.to_string(),
        "nodes.yaml: the lowest level is not the hostname, so nodes' own resources are not known"
    );
    let big = CapacityMachine::racks(1, 1, 1, &[("cpu", 1000), (GPU_RESOURCE, 32)]).unwrap();
    let e = cluster_from_capacity(&big, "G").unwrap_err().to_string();
    assert!(e.ends_with("has 32 gpus; at most 16"), "{e}");
    let odd = CapacityMachine::racks(1, 1, 1, &[("cpu", 1000), ("memory", MIB + 1)]).unwrap();
    let e = cluster_from_capacity(&odd, "G").unwrap_err().to_string();
    assert!(
        e.ends_with("memory (1048577) is not a whole number of MiB"),
        "{e}"
    );
    let share = Request::gpu(1000, 0, 1, 500).unwrap();
    assert!(
        request_on(&big, &share)
            .unwrap_err()
            .to_string()
            .contains("a share of a gpu")
    );
}

fn request() -> impl Strategy<Value = Request> {
    (0_u32..40_000, 0_u64..300_000, 0_u8..=5).prop_map(|(cpu, mem, gpus)| {
        if gpus == 0 {
            Request::cpu(cpu, mem)
        } else {
            Request::gpu(cpu, mem, gpus, 1000).unwrap()
        }
    })
}

proptest! {
    /// On one node of any capacity, through any sequence of pods placed
    /// where they fit: the capacity machine's fit and this model's agree.
    #[test]
    fn the_capacity_fit_is_this_models_fit_on_whole_gpus(
        cpu in 1_i64..100_000,
        mem_mib in 1_i64..600_000,
        gpus in 0_i64..=8,
        pods in 1_i64..6,
        reqs in proptest::collection::vec(request(), 1..20),
    ) {
        let m = CapacityMachine::racks(
            1, 1, 1,
            &[("cpu", cpu), ("memory", mem_mib * MIB), (GPU_RESOURCE, gpus), ("pods", pods)],
        ).unwrap();
        let c = cluster_from_capacity(&m, "G").unwrap();
        let mut node = NodeState::new(&c.nodes[0]);
        let mut left: Vec<i64> = m.leaf_capacity(0).to_vec();
        for r in &reqs {
            let pr = request_on(&m, r).unwrap();
            let capacity_fits = pr.fits_in(&left) >= 1;
            prop_assert_eq!(capacity_fits, node.fits(r), "{:?} on {:?}", r, node);
            if capacity_fits {
                let at = if r.gpus == 0 { Placement { gpus: 0, milli: 0 } } else { node.lowest_free(r.gpus).unwrap() };
                node.place(r, at).unwrap();
                for &(i, q) in pr.parts() {
                    left[i as usize] -= q;
                }
            }
        }
    }
}
