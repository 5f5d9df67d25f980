//! Allocate + release on a 10,000-node block machine kept half full.

use criterion::{Criterion, criterion_group, criterion_main};
use partalloc_allocators::block::{BlockPlacer, Placement};
use partalloc_topology::slurm::SlurmMachine;

fn half_full_block_machine(c: &mut Criterion) {
    // 556 racks of 18 nodes (10,008 nodes), BlockSizes 18..144.
    let mut conf = String::new();
    for r in 0..556u32 {
        conf.push_str(&format!(
            "BlockName=b{r} Nodes=n[{:05}-{:05}]\n",
            r * 18,
            r * 18 + 17
        ));
    }
    conf.push_str("BlockSizes=18,36,72,144\n");
    let Ok(m) = SlurmMachine::parse_conf(&conf, "bench.conf") else {
        return;
    };
    let Some(blocks) = m.blocks() else { return };
    let mut p = BlockPlacer::new(blocks);
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
        exclusive: false,
    };
    c.bench_function(
        "block: allocate+release 12 nodes, 10k nodes half full",
        |b| {
            b.iter(|| {
                if let Ok(v) = p.place(12, Placement::default()) {
                    p.release(&v, Placement::default());
                }
            });
        },
    );
    c.bench_function(
        "block: allocate+release 36 nodes segment 6, 10k half full",
        |b| {
            b.iter(|| {
                if let Ok(v) = p.place(36, seg) {
                    p.release(&v, seg);
                }
            });
        },
    );
}

criterion_group!(benches, half_full_block_machine);
criterion_main!(benches);
