//! `ring` and `torus3d` against Slurm 26.05.3: the allocator contract on
//! small machines, and every `ring-*.golden` / `torus3d-*.golden` file of
//! `data/slurm-oracle/` replayed decision by decision (the replay rules are
//! those of the golden format: Slurm's busy set, an FCFS pass after each
//! action, every `start` reproduced exactly, the head `pending` job told to
//! wait, every `reject` refused as invalid).

#![expect(
    clippy::panic,
    reason = "a malformed golden file fails the test with its name"
)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use partalloc_allocators::block::PlaceError;
use partalloc_allocators::conformance::{Step, check_script};
use partalloc_allocators::ring::RingPlacer;
use partalloc_allocators::torus3d::TorusPlacer;
use partalloc_allocators::{Request, registry};
use partalloc_topology::slurm::{SlurmMachine, hostlist};
use partalloc_topology::{NodeId, Topology};
use proptest::prelude::*;

const TORUS: &str = "- topology: t
  torus3d:
    toruses:
      - name: a
        dims: {x: 2, y: 2, z: 2}
        nodes: a[0-7]
        placements:
          - dims: {x: 1, y: 1, z: 1}
          - dims: {x: 2, y: 1, z: 1}
          - dims: {x: 2, y: 2, z: 1}
            anchor_spacing: {x: 1, y: 1, z: 1}
          - dims: {x: 2, y: 2, z: 2}
      - name: b
        dims: {x: 3, y: 2, z: 1}
        nodes: b[0-5]
        placements:
          - dims: {x: 1, y: 1, z: 1}
          - dims: {x: 3, y: 1, z: 1}
";

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (1u32..=9).prop_map(|n| Step::Allocate(Request::nodes(n))),
        1 => Just(Step::Allocate(Request::nodes(15))),
        4 => (0usize..16).prop_map(Step::Release),
        1 => (0usize..16).prop_map(Step::ReleaseTwice),
        1 => (0u32..15).prop_map(Step::MarkFaulty),
        1 => (0u32..15).prop_map(Step::Repair),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn ring_and_torus3d_keep_the_allocator_contract(script in prop::collection::vec(step(), 1..60)) {
        let rings: Topology = SlurmMachine::parse_conf("RingName=r0 Nodes=r[0-7]\nRingName=r1 Nodes=r[8-11]\nRingName=r2 Nodes=r[12-14]\n", "r.conf").unwrap().into();
        for name in ["ring", "ring[segment=2]", "ring[segment=3]"] {
            let mut a = registry::build(name, &rings).unwrap();
            if let Err(v) = check_script(a.as_mut(), &script) {
                prop_assert!(false, "{name}: {v}");
            }
        }
        let torus: Topology = SlurmMachine::parse_yaml(TORUS, "t.yaml", None).unwrap().into();
        for name in ["torus3d", "torus3d[segment=2]", "torus3d[segment=1]", "torus3d[segment=4]"] {
            let mut a = registry::build(name, &torus).unwrap();
            if let Err(v) = check_script(a.as_mut(), &script) {
                prop_assert!(false, "{name}: {v}");
            }
        }
    }
}

#[test]
fn the_strategies_say_they_follow_slurm_26_05_3() {
    for name in ["ring", "torus3d"] {
        let e = registry::find(name).unwrap();
        assert!(
            e.info.summary.contains("Slurm 26.05.3"),
            "{}",
            e.info.summary
        );
        assert!(
            e.info.source.contains("src/plugins/topology/"),
            "{}",
            e.info.source
        );
    }
    let blocks: Topology = SlurmMachine::parse_conf("BlockName=a Nodes=n[0-3]\n", "b.conf")
        .unwrap()
        .into();
    assert!(registry::build("ring", &blocks).is_err());
    assert!(registry::build("torus3d", &blocks).is_err());
    assert!(registry::build("ring[segment=0]", &blocks).is_err());
}

/// One golden's machine, actions and Slurm's outcomes.
struct Golden {
    machine: SlurmMachine,
    topology: String,
    actions: Vec<(Vec<String>, Vec<Vec<String>>)>,
}

fn read_golden(text: &str, name: &str) -> Golden {
    let (mut conf, mut yaml, mut topology) = (String::new(), String::new(), String::new());
    let mut actions: Vec<(Vec<String>, Vec<Vec<String>>)> = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (head, rest) = line.split_once(' ').unwrap_or((line, ""));
        match head {
            "slurm" => assert_eq!(rest, "26.05.3", "{name}"),
            "topology" => topology = rest.to_owned(),
            "conf" => conf += &format!("{rest}\n"),
            "yaml" => yaml += &format!("{rest}\n"),
            "submit" | "cancel" => {
                actions.push((line.split(' ').map(str::to_owned).collect(), Vec::new()))
            }
            "start" | "pending" | "reject" => {
                let mut w: Vec<String> = line.splitn(3, ' ').map(str::to_owned).collect();
                w.resize(3, String::new());
                actions
                    .last_mut()
                    .unwrap_or_else(|| panic!("{name}: outcome before any action"))
                    .1
                    .push(w);
            }
            other => panic!("{name}: unknown record {other:?}"),
        }
    }
    let machine = if yaml.is_empty() {
        SlurmMachine::parse_conf(&conf, name).unwrap()
    } else {
        SlurmMachine::parse_yaml(&yaml, name, None).unwrap()
    };
    Golden {
        machine,
        topology,
        actions,
    }
}

/// A decision of partalloc's on Slurm's busy set.
fn decide(
    g: &Golden,
    busy: &[NodeId],
    nodes: u32,
    segment: Option<u32>,
) -> Result<Vec<NodeId>, PlaceError> {
    let m = &g.machine;
    if g.topology == "ring" {
        let mut p = RingPlacer::new(m.rings().unwrap());
        p.occupy(busy);
        p.place(nodes, segment)
    } else {
        let mut p = TorusPlacer::new(m.toruses().unwrap());
        p.occupy(busy);
        p.place(nodes, segment)
    }
}

#[derive(Default, Debug)]
struct Tally {
    decisions: u32,
    agree: u32,
    rejects: u32,
    held: u32,
    mismatches: Vec<String>,
}

fn replay(g: &Golden, name: &str) -> Tally {
    let mut t = Tally::default();
    let mut queue: Vec<(String, u32, Option<u32>)> = Vec::new();
    let mut running: Vec<(String, Vec<NodeId>)> = Vec::new();
    let ids = |expr: &str| -> Vec<NodeId> {
        let mut v: Vec<NodeId> = hostlist::expand(expr)
            .unwrap()
            .iter()
            .map(|n| {
                g.machine
                    .id_of(n)
                    .unwrap_or_else(|| panic!("{name}: unknown node {n}"))
            })
            .collect();
        v.sort_unstable();
        v
    };
    for (k, (action, outcomes)) in g.actions.iter().enumerate() {
        let where_ = format!("{name} action {} ({})", k + 1, action.join(" "));
        let busy: Vec<NodeId> = running
            .iter()
            .flat_map(|(_, n)| n.iter().copied())
            .collect();
        let job = action[1].clone();
        if action[0] == "submit" {
            let opt = |key: &str| {
                action.iter().find_map(|w| {
                    w.strip_prefix(&format!("{key}="))
                        .map(|v| v.parse::<u32>().unwrap())
                })
            };
            let (nodes, segment) = (opt("nodes").unwrap(), opt("segment"));
            if outcomes.iter().any(|o| o[0] == "reject") {
                t.rejects += 1;
                match decide(g, &busy, nodes, segment) {
                    Err(PlaceError::Invalid { .. } | PlaceError::SegmentSize { .. }) => {}
                    other => t.mismatches.push(format!(
                        "{where_}: Slurm refused it, partalloc said {other:?}"
                    )),
                }
                continue;
            }
            queue.push((job, nodes, segment));
        } else if let Some(i) = running.iter().position(|(j, _)| *j == job) {
            running.remove(i);
        } else if let Some(i) = queue.iter().position(|(j, _, _)| *j == job) {
            queue.remove(i);
        } else {
            // A refused job was never queued: the harness cancels nothing
            // and records nothing.
            continue;
        }
        // The FCFS pass. Slurm queues a job larger than the partition
        // (reason PartitionConfig) and passes over it; partalloc refuses it.
        let starts: Vec<&Vec<String>> = outcomes.iter().filter(|o| o[0] == "start").collect();
        let reason = |j: &str| {
            outcomes
                .iter()
                .find(|o| o[0] == "pending" && o[1] == j)
                .map(|o| o[2].clone())
        };
        let mut next_start = 0;
        let mut pending_ok = true;
        let mut i = 0;
        while let Some((j, nodes, segment)) = queue.get(i).cloned() {
            let busy: Vec<NodeId> = running
                .iter()
                .flat_map(|(_, n)| n.iter().copied())
                .collect();
            let ours = decide(g, &busy, nodes, segment);
            if let Some(s) = starts.get(next_start).filter(|s| s[1] == j) {
                next_start += 1;
                t.decisions += 1;
                let want = ids(&s[2]);
                match ours {
                    Ok(got) if got == want => t.agree += 1,
                    other => t.mismatches.push(format!(
                        "{where_}: {j}: Slurm started {}, partalloc {}",
                        s[2],
                        match other {
                            Ok(got) => g.machine.hostlist(&got),
                            Err(e) => e.to_string(),
                        }
                    )),
                }
                running.push((j, want));
                queue.remove(i);
                continue;
            }
            match (reason(&j).as_deref(), ours) {
                (Some("PartitionConfig"), Err(PlaceError::Invalid { .. })) => {
                    t.held += 1;
                    i += 1;
                    continue;
                }
                (Some("PartitionConfig"), other) => {
                    pending_ok = false;
                    t.mismatches.push(format!(
                        "{where_}: {j}: Slurm holds it as larger than the partition, partalloc said {other:?}"
                    ));
                    i += 1;
                    continue;
                }
                (Some(_), Err(PlaceError::NoRoom { .. })) => {}
                (Some(_), other) => {
                    pending_ok = false;
                    t.mismatches.push(format!(
                        "{where_}: {j}: Slurm kept it waiting, partalloc said {other:?}"
                    ));
                }
                (None, _) => {
                    pending_ok = false;
                    t.mismatches
                        .push(format!("{where_}: {j} is neither started nor pending"));
                }
            }
            break;
        }
        // As the harness counts: the first pending line of an action is one
        // decision (all of this pass's waiting and holding must agree).
        if outcomes.iter().any(|o| o[0] == "pending") {
            t.decisions += 1;
            t.agree += u32::from(pending_ok);
        }
        if next_start != starts.len() {
            t.mismatches
                .push(format!("{where_}: Slurm started jobs out of queue order"));
        }
    }
    t
}

fn goldens() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/slurm-oracle");
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if (name.starts_with("ring-") || name.starts_with("torus3d-"))
                && name.ends_with(".golden")
            {
                out.push((name, std::fs::read_to_string(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Hand-made from the topology guide's examples (not Slurm output): the
/// replay itself is checked on them.
const HAND_RING: &str = "\
slurm 26.05.3
topology ring
conf RingName=ring0 Nodes=node[01-08]
conf RingName=ring1 Nodes=node[09-16]
submit j1 nodes=3
start j1 node[01-03]
submit j2 nodes=8
start j2 node[09-16]
submit j3 nodes=6
pending j3 Resources
cancel j1
start j3 node[01-06]
submit j4 nodes=12 segment=8
reject j4 sbatch: fatal: --segment=8 does not fit the job size (12): node count must be evenly divisible by segment size
";

const HAND_TORUS: &str = "\
slurm 26.05.3
topology torus3d
yaml - topology: topo-torus
yaml   cluster_default: true
yaml   torus3d:
yaml     toruses:
yaml       - name: pod1
yaml         dims: {x: 4, y: 4, z: 2}
yaml         nodes: node[01-32]
yaml         placements:
yaml           - dims: {x: 2, y: 2, z: 1}
yaml           - dims: {x: 2, y: 2, z: 2}
yaml           - dims: {x: 4, y: 4, z: 2}
submit j1 nodes=16 segment=8
start j1 node[01-02,05-06,09-10,13-14,17-18,21-22,25-26,29-30]
submit j2 nodes=32
pending j2 Resources
submit j3 nodes=4
pending j2 Resources
pending j3 Priority
cancel j1
start j2 node[01-32]
pending j3 Resources
submit j4 nodes=12
reject j4 sbatch: error: Batch job submission failed: Requested node configuration is not available
";

#[test]
fn the_hand_made_examples_replay_in_full() {
    for (name, text) in [("hand-ring", HAND_RING), ("hand-torus", HAND_TORUS)] {
        let t = replay(&read_golden(text, name), name);
        assert!(t.mismatches.is_empty(), "{name}: {:#?}", t.mismatches);
        assert_eq!(
            (t.decisions, t.agree, t.rejects),
            (t.agree, t.decisions, 1),
            "{name}"
        );
        assert!(t.decisions >= 4, "{name}: {t:?}");
    }
    // A wrong golden is caught.
    let wrong = HAND_RING.replace("start j1 node[01-03]", "start j1 node[02-04]");
    let t = replay(&read_golden(&wrong, "wrong"), "wrong");
    assert_eq!(t.mismatches.len(), 1, "{:#?}", t.mismatches);
}

#[test]
fn every_ring_and_torus3d_golden_agrees_with_slurm() {
    let mut all = Vec::new();
    let (mut decisions, mut agree) = (0, 0);
    let mut seen = BTreeSet::new();
    for (name, text) in goldens() {
        let g = read_golden(&text, &name);
        seen.insert(g.topology.clone());
        let t = replay(&g, &name);
        println!(
            "{name}: {} decisions, {} agree, {} refusals, {} held over the partition size, {} mismatches",
            t.decisions,
            t.agree,
            t.rejects,
            t.held,
            t.mismatches.len()
        );
        decisions += t.decisions;
        agree += t.agree;
        all.extend(t.mismatches);
    }
    println!(
        "ring and torus3d goldens: {agree} of {decisions} decisions agree ({:?})",
        seen
    );
    assert!(
        all.is_empty(),
        "{} mismatches:\n{}",
        all.len(),
        all.join("\n")
    );
}
