//! Per-pod goldens printed by the artifact itself (`data/fgd-artifact/`,
//! recorded by `scripts/fgd-artifact-oracle`): a cut of the OpenB cluster
//! and default pod list run through the artifact's whole protocol (shuffle,
//! tuning to 1.3 × the GPUs, tune seed 42) under the five deterministic
//! policies. Replayed here with the experiment's own setup and policy
//! code, every submitted pod lands on the same node with the same GPUs, or
//! fails in both.

#![expect(
    clippy::expect_used,
    reason = "the goldens and the cut are checked in; a bad one should fail the test loudly"
)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use partalloc_gpushare::experiment::{ClusterState, Workload, setup};
use partalloc_gpushare::openb::{Unplaceable, read_nodes, read_pods};
use partalloc_gpushare::policy::Policy;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/fgd-artifact")
}

/// One golden row: the pod submitted at this step, its node (empty when
/// it failed) and its GPUs (`0-1`, empty for CPU pods).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    pod: String,
    node: String,
    gpus: String,
}

/// The goldens by policy name, in submission order.
fn goldens() -> BTreeMap<String, Vec<Row>> {
    let text = std::fs::read_to_string(dir().join("placements.csv")).expect("golden file reads");
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(lines.next(), Some("policy,step,pod,node,gpus"));
    let mut by_policy: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 5, "bad golden line {line:?}");
        let rows = by_policy.entry(f[0].to_owned()).or_default();
        assert_eq!(
            f[1].parse::<usize>().ok(),
            Some(rows.len()),
            "steps in order: {line:?}"
        );
        rows.push(Row {
            pod: f[2].to_owned(),
            node: f[3].to_owned(),
            gpus: f[4].to_owned(),
        });
    }
    by_policy
}

/// The same pods replayed with this crate's protocol and policy.
fn replay(policy: Policy) -> Vec<Row> {
    let cluster = read_nodes(&dir().join("nodes.csv")).expect("the cut's nodes read");
    let pods = read_pods(&dir().join("pods.csv"), &cluster, Unplaceable::Keep)
        .expect("the cut's pods read");
    let workload = Workload::new("cut", pods);
    let s = setup(&cluster, &workload, 42);
    let mut rng = s.rng;
    let mut state = ClusterState::new(&cluster, &s.rank, &workload.typical);
    let n = workload.pods.len();
    let mut rows = Vec::with_capacity(s.order.len());
    for (step, &i) in s.order.iter().enumerate() {
        let pod = &workload.pods[i];
        // Clones are named after their original and their number.
        let name = if step < n {
            pod.name.clone()
        } else {
            format!("{}-tuned-{}", pod.name, step - n)
        };
        let (node, gpus) = match state.choose(&pod.request, policy, &mut rng) {
            Some((pos, at)) => {
                state
                    .place(pos, &pod.request, at)
                    .expect("the chosen node fits");
                let index = state.index_at(pos).expect("a node of the cluster");
                let gpus: Vec<String> = (0..16)
                    .filter(|g| at.gpus & (1 << g) != 0)
                    .map(|g: u32| g.to_string())
                    .collect();
                (cluster.nodes[index].name.clone(), gpus.join("-"))
            }
            None => (String::new(), String::new()),
        };
        rows.push(Row {
            pod: name,
            node,
            gpus,
        });
    }
    rows
}

#[test]
fn every_pod_lands_where_the_artifact_put_it() {
    let goldens = goldens();
    assert_eq!(
        goldens.keys().map(String::as_str).collect::<Vec<_>>(),
        ["BestFit", "DotProd", "FGD", "GpuClustering", "GpuPacking"]
    );
    for (name, want) in &goldens {
        let policy: Policy = name.parse().expect("a policy name");
        let got = replay(policy);
        assert_eq!(got.len(), want.len(), "{name}: pods submitted");
        let differ: Vec<(usize, &Row, &Row)> = want
            .iter()
            .zip(&got)
            .enumerate()
            .filter(|(_, (w, g))| w != g)
            .map(|(k, (w, g))| (k, w, g))
            .collect();
        assert!(
            differ.is_empty(),
            "{name}: {} of {} placements differ, first (step, artifact, here): {:?}",
            differ.len(),
            want.len(),
            differ.first()
        );
        // The goldens hold failures, multi-GPU pods and clones, so the
        // comparison covers each case.
        assert!(want.iter().any(|r| r.node.is_empty()));
        assert!(want.iter().any(|r| r.gpus.contains('-')));
        assert!(want.iter().any(|r| r.pod.contains("-tuned-")));
    }
}
