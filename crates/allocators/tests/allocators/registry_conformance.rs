//! The trait contract over the whole registry: every built-in strategy, on
//! a small machine of every family its entry accepts, runs a mixed script
//! through `conformance::check_spec` (determinism, exact release, refusals
//! that change nothing, faults and repairs); and every documented default
//! builds the strategy the bare name builds. A strategy added to the
//! registry is checked here without anyone writing its test.
#![expect(
    clippy::panic,
    reason = "a failing check names the strategy and the machine in its panic"
)]

use std::path::Path;

use partalloc_allocators::Request;
use partalloc_allocators::conformance::{Step, check_spec};
use partalloc_allocators::registry::{ALLOCATORS, ANY_TOPOLOGY};
use partalloc_topology::slurm::SlurmMachine;
use partalloc_topology::{Topology, TopologyKind};

use crate::support::SplitMix;

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Small machines of a family, the first that a strategy builds on is
/// used (some take only cubes, powers of two or 3-D boxes).
fn machines(kind: TopologyKind) -> Vec<Topology> {
    let parse = |t: &str| t.parse::<Topology>().unwrap_or_else(|e| panic!("{t}: {e}"));
    let slurm = |m: Result<SlurmMachine, _>| -> Topology {
        m.unwrap_or_else(|e: partalloc_topology::slurm::ConfError| panic!("{e}"))
            .into()
    };
    match kind {
        TopologyKind::Hypercube => vec![parse("hypercube:6")],
        TopologyKind::Mesh => ["mesh:8x8", "kary:4^3", "mesh:8x4x4", "mesh:16x16"]
            .map(parse)
            .to_vec(),
        TopologyKind::Torus => ["torus:8x8", "kary-torus:4^3", "torus:4x4x4"]
            .map(parse)
            .to_vec(),
        TopologyKind::Pod => ["pod:tpu-v5e:8x8", "pod:tpu-v4:4x4x8"].map(parse).to_vec(),
        TopologyKind::Blocks => vec![slurm(SlurmMachine::parse_conf(
            &example("blocks-8x18.conf"),
            "blocks-8x18.conf",
        ))],
        TopologyKind::Tree => vec![slurm(SlurmMachine::parse_conf(
            &example("tree-2level.conf"),
            "tree-2level.conf",
        ))],
        TopologyKind::Ring => vec![slurm(SlurmMachine::parse_conf(
            &example("ring-4x8.conf"),
            "ring-4x8.conf",
        ))],
        TopologyKind::Torus3d => vec![slurm(SlurmMachine::parse_yaml(
            &example("torus3d-4x4x4.yaml"),
            "torus3d-4x4x4.yaml",
            None,
        ))],
        _ => vec![kind.example()],
    }
}

/// A mixed script for `topology`: node counts, boxes and subcubes of
/// sizes up to half the machine, releases (some twice), and a few faults
/// and repairs; the same stream for the same seed.
fn script(topology: &Topology, seed: u64) -> Vec<Step> {
    let mut rng = SplitMix(seed);
    let nodes = topology.num_nodes() as u64;
    let mut steps = Vec::new();
    for _ in 0..60 {
        let step = match rng.below(10) {
            0..=3 => Step::Allocate(Request::nodes(1 + rng.below((nodes / 4).max(1)) as u32)),
            4 => {
                let (a, b) = (1 + rng.below(4) as u32, 1 + rng.below(4) as u32);
                match Request::boxed(&[a, b]) {
                    Ok(r) => Step::Allocate(r),
                    Err(_) => continue,
                }
            }
            5 => Step::Allocate(Request::subcube(rng.below(4) as u32)),
            6 | 7 => Step::Release(rng.below(8) as usize),
            8 => Step::ReleaseTwice(rng.below(8) as usize),
            _ => {
                let n = rng.below(nodes) as u32;
                if rng.below(2) == 0 {
                    Step::MarkFaulty(n)
                } else {
                    Step::Repair(n)
                }
            }
        };
        steps.push(step);
    }
    steps
}

#[test]
fn every_registry_entry_keeps_the_contract_on_every_family_it_accepts() {
    let mut checked = 0;
    for entry in ALLOCATORS.entries() {
        let info = entry.info;
        let families: &[TopologyKind] = if info.topologies.is_empty() {
            ANY_TOPOLOGY
        } else {
            info.topologies
        };
        let spec = ALLOCATORS
            .spec(info.name)
            .unwrap_or_else(|e| panic!("{}: {e}", info.name));
        for &kind in families {
            if kind == TopologyKind::GpuShare {
                // Pods share nodes there: the `gpushare` module checks
                // that family's form of the contract.
                checked += usize::from(families.len() == 1);
                continue;
            }
            let candidates = machines(kind);
            let Some(machine) = candidates.iter().find(|m| spec.build(m).is_ok()) else {
                panic!(
                    "{} accepts {kind} but builds on none of {:?}",
                    info.name,
                    candidates
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                );
            };
            for seed in [1, 2] {
                let summary = check_spec(&spec, machine, &script(machine, seed))
                    .unwrap_or_else(|v| panic!("{} on {machine}, seed {seed}: {v}", info.name));
                assert!(
                    summary.granted + summary.no_room + summary.rejected > 0,
                    "{} on {machine}: the script asked for nothing",
                    info.name
                );
            }
            checked += 1;
        }
    }
    // Every entry on at least one family.
    assert!(checked >= ALLOCATORS.entries().len(), "{checked} checks");
}

#[test]
fn every_documented_default_builds_what_the_bare_name_builds() {
    for entry in ALLOCATORS.entries() {
        let info = entry.info;
        if info.params.is_empty() {
            continue;
        }
        let families: &[TopologyKind] = if info.topologies.is_empty() {
            ANY_TOPOLOGY
        } else {
            info.topologies
        };
        let bare = ALLOCATORS.spec(info.name).unwrap();
        // A default written as a description ("1,2,…,n", "the machine's
        // sides") is not a value to spell; every literal one is.
        let params: Vec<String> = info
            .params
            .iter()
            .filter(|p| {
                !p.default.contains('…') && !p.default.contains(' ') && !p.default.is_empty()
            })
            .map(|p| format!("{}={}", p.name, p.default))
            .collect();
        if params.is_empty() {
            continue;
        }
        let text = format!("{}[{}]", info.name, params.join(","));
        let spelled = ALLOCATORS
            .spec(&text)
            .unwrap_or_else(|e| panic!("{text}: the documented defaults do not parse: {e}"));
        // GPU-sharing clusters have no small machine here (their own
        // module checks them); every other family has one.
        let Some(machine) = families
            .iter()
            .flat_map(|&k| machines(k))
            .find(|m| bare.build(m).is_ok())
        else {
            assert!(
                families.iter().all(|&k| k == TopologyKind::GpuShare),
                "{text}: the bare name builds on no machine of {families:?}"
            );
            continue;
        };
        let spelled_alloc = spelled
            .build(&machine)
            .unwrap_or_else(|e| panic!("{text} on {machine}: {e}"));
        let bare_alloc = bare.build(&machine).unwrap();
        // The same strategy: the same canonical name, and the same
        // decisions on a script.
        assert_eq!(spelled_alloc.name(), bare_alloc.name(), "{text}");
        let (mut a, mut b) = (bare_alloc, spelled_alloc);
        for step in script(&machine, 7) {
            if let Step::Allocate(r) = step {
                let (ga, gb) = (a.allocate(&r), b.allocate(&r));
                assert_eq!(
                    ga.as_ref().map(|g| g.partition().clone()).ok(),
                    gb.as_ref().map(|g| g.partition().clone()).ok(),
                    "{text} on {machine}: {r:?}"
                );
            }
        }
    }
}
