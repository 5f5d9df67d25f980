//! Slurm strategies through the public API: registry, the allocator
//! contract (`conformance::check_script`), the documented placements, and
//! refused parameters and machines.

#![expect(clippy::unwrap_used, reason = "test helpers build fixed, valid inputs")]

use std::sync::Arc;

use partalloc_allocators::conformance::{Step, check_script};
use partalloc_allocators::slurm::{SlurmAllocator, SlurmRule};
use partalloc_allocators::{AllocError, Allocator, BuildError, Request, registry};
use partalloc_topology::Topology;
use partalloc_topology::slurm::SlurmMachine;
use proptest::prelude::*;

#[path = "slurm_goldens/torus_ring.rs"]
mod torus_ring_goldens;

fn racks(n: u32, size: u32, sizes: &str) -> Topology {
    let mut conf = String::new();
    for r in 0..n {
        let lo = r * size;
        conf.push_str(&format!(
            "BlockName=rack{r} Nodes=n[{lo:03}-{:03}]\n",
            lo + size - 1
        ));
    }
    conf.push_str(&format!("BlockSizes={sizes}\n"));
    SlurmMachine::parse_conf(&conf, "racks.conf")
        .unwrap()
        .into()
}

fn fabric() -> Topology {
    let conf = "SwitchName=l0 Nodes=t[00-01]\nSwitchName=l1 Nodes=t[02-04]\n\
                SwitchName=l2 Nodes=t[05-07]\nSwitchName=l3 Nodes=t[08-11]\n\
                SwitchName=s0 Switches=l[0-1]\nSwitchName=s1 Switches=l[2-3]\n\
                SwitchName=top Switches=s[0-1]\n";
    SlurmMachine::parse_conf(conf, "fabric.conf")
        .unwrap()
        .into()
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (1u32..=12).prop_map(|n| Step::Allocate(Request::nodes(n))),
        1 => Just(Step::Allocate(Request::nodes(13))),
        1 => Just(Step::Allocate(Request::subcube(1))),
        4 => (0usize..16).prop_map(Step::Release),
        1 => (0usize..16).prop_map(Step::ReleaseTwice),
        1 => (0u32..14).prop_map(Step::MarkFaulty),
        1 => (0u32..14).prop_map(Step::Repair),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_slurm_strategy_keeps_the_allocator_contract(
        script in prop::collection::vec(step(), 1..60),
    ) {
        let blocks = racks(4, 3, "3,6,12");
        for name in ["block", "block[segment=3]", "block[segment=6]", "block[segment=3,consolidate=true]", "block[exclusive=true]", "block[segment=1,exclusive=true]", "block-buddy", "paging"] {
            let mut a = registry::build(name, &blocks).unwrap();
            if let Err(v) = check_script(a.as_mut(), &script) {
                prop_assert!(false, "{name}: {v}");
            }
        }
        let tree = fabric();
        for name in ["tree", "tree[switches=1]", "tree[switches=2]", "paging"] {
            let mut a = registry::build(name, &tree).unwrap();
            if let Err(v) = check_script(a.as_mut(), &script) {
                prop_assert!(false, "{name}: {v}");
            }
        }
    }
}

#[test]
fn the_documented_placements_through_the_registry() {
    let t = racks(8, 18, "18,36,72,144");
    let m = Arc::clone(t.as_slurm().unwrap());
    let mut seg = registry::build("block[segment=12]", &t).unwrap();
    assert_eq!(seg.name(), "block[segment=12]");
    let g = seg.allocate(&Request::nodes(36)).unwrap();
    let nodes = g.partition().node_list(&t).unwrap();
    // Slurm 26.05.3 places each segment on its own in the best-fit rack,
    // the last among equals: racks 7, 6 and 5 (the old rule filled racks
    // 0-2 from the first).
    assert_eq!(m.hostlist(&nodes), "n[090-101,108-119,126-137]");
    let loc = m.job_locality(&nodes, Some(12));
    assert_eq!((loc.domains, loc.split_segments), (3, 0));
    // 24 nodes in segments of 12: racks 5-7 keep 6 free each, so the
    // segments go to the last whole racks, 4 then 3.
    let h = seg.allocate(&Request::nodes(24)).unwrap();
    assert_eq!(
        m.hostlist(&h.partition().node_list(&t).unwrap()),
        "n[054-065,072-083]"
    );
    // 30 nodes ask for three segments of 12: 36 nodes granted.
    let r = seg.allocate(&Request::nodes(30)).unwrap();
    assert_eq!((r.requested_nodes(), r.granted_nodes()), (30, 36));
    assert!(matches!(
        seg.allocate(&Request::nodes(145)),
        Err(AllocError::Invalid { .. })
    ));
    // The buddy gives whole blocks: 19 nodes take a pair of racks.
    let mut buddy = registry::build("block-buddy", &t).unwrap();
    let b = buddy.allocate(&Request::nodes(19)).unwrap();
    assert_eq!((b.requested_nodes(), b.granted_nodes()), (19, 36));
    assert_eq!(buddy.free_nodes(), 144 - 36);
    // Stranded nodes and locality through the concrete type.
    // 20 nodes: the last pair of racks; rack 7 whole, then the best fit
    // for the 2 left in rack 6 (the old rule took n[000-019]).
    let mut a = SlurmAllocator::new(&t, SlurmRule::Block(Default::default())).unwrap();
    let g = a.allocate(&Request::nodes(20)).unwrap();
    assert_eq!(
        a.machine().hostlist(&g.partition().node_list(&t).unwrap()),
        "n[108-109,126-143]"
    );
    assert_eq!(a.stranded_nodes(), 16);
    assert_eq!(a.locality(&g).distance_class, 1);
    a.release(&g).unwrap();
    assert_eq!(a.stranded_nodes(), 0);
}

#[test]
fn the_tree_strategy_through_the_registry() {
    let t = fabric();
    let m = Arc::clone(t.as_slurm().unwrap());
    let mut a = registry::build("tree[switches=1]", &t).unwrap();
    assert_eq!(a.name(), "tree[switches=1]");
    let g = a.allocate(&Request::nodes(3)).unwrap();
    assert_eq!(
        m.hostlist(&g.partition().node_list(&t).unwrap()),
        "t[02-04]"
    );
    // Five nodes would need two leaves: never placeable with one.
    assert!(matches!(
        a.allocate(&Request::nodes(5)),
        Err(AllocError::Invalid { .. })
    ));
    // Four fit l3 once; then no single leaf has four free.
    a.allocate(&Request::nodes(4)).unwrap();
    assert!(matches!(
        a.allocate(&Request::nodes(4)),
        Err(AllocError::NoRoom { .. })
    ));
    // Without the limit: s0 (2 + 3 free) is the best fit among the spines.
    let mut b = registry::build("tree", &t).unwrap();
    let g = b.allocate(&Request::nodes(5)).unwrap();
    assert_eq!(
        m.hostlist(&g.partition().node_list(&t).unwrap()),
        "t[00-04]"
    );
}

#[test]
fn bad_parameters_and_machines_are_refused() {
    let blocks = racks(4, 3, "3,6,12");
    let tree = fabric();
    for (spec, machine, says) in [
        ("block[consolidate=maybe]", &blocks, "consolidate"),
        ("block[segment=0]", &blocks, "a positive whole number"),
        ("block[exclusive=maybe]", &blocks, "exclusive"),
        ("tree[switches=0]", &tree, "a positive whole number"),
        ("block", &tree, "block"),
        ("tree", &blocks, "tree"),
        ("buddy", &blocks, "hypercube"),
    ] {
        let e = registry::build(spec, machine).unwrap_err();
        assert!(e.to_string().contains(says), "{spec}: {e}");
    }
    assert!(matches!(
        registry::build("tree", &blocks),
        Err(BuildError::UnsupportedTopology(_))
    ));
    let mesh: Topology = "mesh:4x4".parse().unwrap();
    assert!(SlurmAllocator::new(&mesh, SlurmRule::BlockBuddy).is_err());
}

#[path = "support/slurm_golden_replay.rs"]
mod slurm_golden_replay;

/// Every Slurm oracle golden replayed decision by decision and as a whole
/// sequence: 100% agreement, every decision the files hold checked.
#[test]
fn slurm_goldens_replay_with_full_agreement() {
    let dir = slurm_golden_replay::golden_dir();
    let r = slurm_golden_replay::replay_dir(&dir).unwrap();
    println!(
        "slurm goldens: {} files, {} decisions recorded, {} checked one by one, {} in sequence, {} rejections, {} mismatches",
        r.files,
        r.present,
        r.checked,
        r.sequence_checked,
        r.rejects,
        r.mismatches.len()
    );
    assert!(r.files > 0, "no golden in {}", dir.display());
    assert!(
        r.mismatches.is_empty(),
        "{} mismatches:\n{}",
        r.mismatches.len(),
        r.mismatches.join("\n")
    );
    assert!(
        r.checked >= r.present && r.present > 0,
        "{} of {} decisions checked",
        r.checked,
        r.present
    );
    assert!(
        r.sequence_checked >= r.present,
        "{} of {} decisions in sequence",
        r.sequence_checked,
        r.present
    );
}

/// Two leaf switches with no common root (a forest of two trees of 4). A
/// job of 5 is refused at submission; cancelling it afterwards (the harness
/// records nothing, as the job was never queued) needs no outcome even
/// with another job queued at that moment.
const HAND_FOREST: &str = "\
slurm 26.05.3
topology tree
conf SwitchName=a Nodes=n[0-3]
conf SwitchName=b Nodes=n[4-7]
submit j1 nodes=4
start j1 n[4-7]
submit j2 nodes=4
start j2 n[0-3]
submit j3 nodes=2
pending j3 Resources
submit j4 nodes=5
reject j4 sbatch: error: Batch job submission failed: Requested node configuration is not available
cancel j4
# j4 was never queued; nothing to cancel
cancel j1
start j3 n[4-5]
";

#[test]
fn a_refused_job_is_refused_and_its_cancel_needs_no_outcome() {
    let mut r = slurm_golden_replay::Report::default();
    slurm_golden_replay::replay_text("hand-forest", HAND_FOREST, None, &mut r).unwrap();
    assert!(r.mismatches.is_empty(), "{}", r.mismatches.join("\n"));
    assert_eq!((r.files, r.present, r.rejects), (1, 4, 1));
    assert_eq!((r.checked, r.sequence_checked), (4, 4));
    // An outcome recorded after such a cancel is a mismatch, not ignored.
    let extra = HAND_FOREST.replace(
        "# j4 was never queued; nothing to cancel",
        "pending j3 Resources",
    );
    let mut r = slurm_golden_replay::Report::default();
    slurm_golden_replay::replay_text("extra", &extra, None, &mut r).unwrap();
    assert_eq!(r.mismatches.len(), 1, "{}", r.mismatches.join("\n"));
    // Were the refused job queued instead, it would wait at the head.
    let queued = HAND_FOREST.replace("reject j4 sbatch", "# reject j4 sbatch");
    let mut r = slurm_golden_replay::Report::default();
    slurm_golden_replay::replay_text("queued", &queued, None, &mut r).unwrap();
    assert!(!r.mismatches.is_empty());
}

/// The goldens' machines as machine files: a file in `examples/` read as
/// `blocks:FILE` / `tree:FILE` read it (`SlurmMachine::parse_conf` of the
/// file) is the golden's machine, and the golden replays on it in full.
#[test]
fn goldens_replay_on_machines_read_from_the_example_files() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (file, golden) in [
        ("examples/blocks-uneven.conf", "block-uneven.golden"),
        ("examples/tree-forest.conf", "tree-forest.golden"),
    ] {
        let conf = std::fs::read_to_string(root.join(file)).unwrap();
        let m = SlurmMachine::parse_conf(&conf, file).unwrap();
        let text = std::fs::read_to_string(slurm_golden_replay::golden_dir().join(golden)).unwrap();
        let g = partalloc_allocators::slurm_golden::Golden::parse(&text, golden).unwrap();
        let from_golden = SlurmMachine::parse_conf(&g.conf_text(), file).unwrap();
        assert_eq!(m, from_golden, "{file} is not the machine of {golden}");
        let mut r = slurm_golden_replay::Report::default();
        slurm_golden_replay::replay_text(golden, &text, Some(&m), &mut r).unwrap();
        assert!(r.mismatches.is_empty(), "{}", r.mismatches.join("\n"));
        assert!(
            r.checked >= r.present && r.present > 20,
            "{golden}: {}",
            r.present
        );
    }
    // Through the registry too: `block` on the uneven racks from the file.
    let conf = std::fs::read_to_string(root.join("examples/blocks-uneven.conf")).unwrap();
    let t: Topology = SlurmMachine::parse_conf(&conf, "blocks-uneven.conf")
        .unwrap()
        .into();
    let mut a = registry::build("block", &t).unwrap();
    let g = a.allocate(&Request::nodes(10)).unwrap();
    // The best-fit rack is r5 (12 nodes): its first 10.
    let m = Arc::clone(t.as_slurm().unwrap());
    assert_eq!(
        m.hostlist(&g.partition().node_list(&t).unwrap()),
        "n[072-081]"
    );
}
