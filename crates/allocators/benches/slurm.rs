//! Allocate + release on a 10,000-node block machine kept half full, and on
//! a tree machine of the same size; every placement writes into one reused
//! buffer, so the loop does not allocate.

use criterion::{Criterion, criterion_group, criterion_main};
use partalloc_allocators::block::{BlockPlacer, Placement};
use partalloc_allocators::tree::TreePlacer;
use partalloc_allocators::{Request, registry};
use partalloc_topology::NodeId;
use partalloc_topology::Topology;
use partalloc_topology::slurm::SlurmMachine;

fn racks_conf(racks: u32) -> String {
    let mut conf = String::new();
    for r in 0..racks {
        conf.push_str(&format!(
            "BlockName=b{r} Nodes=n[{:05}-{:05}]\n",
            r * 18,
            r * 18 + 17
        ));
    }
    conf.push_str("BlockSizes=18,36,72,144\n");
    conf
}

fn half_full_block_machine(c: &mut Criterion) {
    // 556 racks of 18 nodes (10,008 nodes), BlockSizes 18..144.
    let Ok(m) = SlurmMachine::parse_conf(&racks_conf(556), "bench.conf") else {
        return;
    };
    let Some(blocks) = m.blocks() else { return };
    let mut p = BlockPlacer::new(blocks);
    let mut out: Vec<NodeId> = Vec::with_capacity(256);
    // Half full with jobs of 1..36 nodes in a fixed pattern.
    let mut size = 1u32;
    let mut used = 0u32;
    while used < 5004 {
        if p.place(size, Placement::default()).is_ok() {
            used += size;
        }
        size = size % 36 + 1;
    }
    let seg = Placement {
        segment: Some(6),
        ..Placement::default()
    };
    c.bench_function(
        "block: allocate+release 12 nodes, 10k nodes half full",
        |b| {
            b.iter(|| {
                if p.place_into(12, Placement::default(), &mut out).is_ok() {
                    p.release(&out, Placement::default());
                }
            });
        },
    );
    c.bench_function(
        "block: allocate+release 36 nodes segment 6, 10k half full",
        |b| {
            b.iter(|| {
                if p.place_into(36, seg, &mut out).is_ok() {
                    p.release(&out, seg);
                }
            });
        },
    );
}

fn half_full_tree_machine(c: &mut Criterion) {
    // 556 leaf switches of 18 nodes under 70 spines of 8 and one core.
    let mut conf = String::new();
    for l in 0..556u32 {
        conf.push_str(&format!(
            "SwitchName=l{l} Nodes=n[{:05}-{:05}]\n",
            l * 18,
            l * 18 + 17
        ));
    }
    for s in 0..70u32 {
        let hi = (s * 8 + 7).min(555);
        conf.push_str(&format!("SwitchName=s{s} Switches=l[{}-{hi}]\n", s * 8));
    }
    conf.push_str("SwitchName=core Switches=s[0-69]\n");
    let Ok(m) = SlurmMachine::parse_conf(&conf, "tree.conf") else {
        return;
    };
    let Some(tree) = m.tree() else { return };
    let mut p = TreePlacer::new(tree);
    let mut out: Vec<NodeId> = Vec::with_capacity(256);
    let (mut size, mut used) = (1u32, 0u32);
    while used < 5004 {
        if p.place(size, None).is_ok() {
            used += size;
        }
        size = size % 36 + 1;
    }
    c.bench_function(
        "tree: allocate+release 12 nodes, 10k nodes half full",
        |b| {
            b.iter(|| {
                if p.place_into(12, None, &mut out).is_ok() {
                    p.release(&out);
                }
            });
        },
    );
}

/// The same machine through the registry's `block` strategy: the grant
/// (a node list) and the ledger's copy are the only allocations.
fn half_full_block_allocator(c: &mut Criterion) {
    let Ok(m) = SlurmMachine::parse_conf(&racks_conf(556), "bench.conf") else {
        return;
    };
    let t = Topology::from(m);
    let Ok(mut a) = registry::build("block", &t) else {
        return;
    };
    let (mut size, mut used) = (1u32, 0u32);
    while used < 5004 {
        if a.allocate(&Request::nodes(size)).is_ok() {
            used += size;
        }
        size = size % 36 + 1;
    }
    c.bench_function(
        "block allocator: allocate+release 12 nodes, 10k half full",
        |b| {
            b.iter(|| {
                if let Ok(g) = a.allocate(&Request::nodes(12)) {
                    let _ = a.release(&g);
                }
            });
        },
    );
}

criterion_group!(
    benches,
    half_full_block_machine,
    half_full_tree_machine,
    half_full_block_allocator
);
criterion_main!(benches);
