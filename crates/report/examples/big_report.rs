//! Writes the report page of one run of 100,000 jobs (FSL, FCFS, a 16×16
//! mesh, Kim & Yoon's uniform sides at load 0.6), to measure the page's
//! size and the time a browser takes to open it:
//!
//! ```sh
//! cargo run --release -p partalloc-report --example big_report -- /tmp/big.html
//! time chromium --headless --no-sandbox --screenshot=/tmp/big.png file:///tmp/big.html
//! ```

use std::path::PathBuf;

use partalloc_allocators::registry::ALLOCATORS;
use partalloc_report::{ReportOptions, RunView, write};
use partalloc_schedulers::registry::POLICIES;
use partalloc_simkit::{JobRecord, SimConfig, Simulation, Stop};
use partalloc_topology::Topology;
use partalloc_workload::{
    ChaCha8Rng, Dependence, Exponential, MeshSides, SeedableRng, SideLaw, Workload,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out: PathBuf = std::env::args_os()
        .nth(1)
        .map_or_else(|| "big.html".into(), PathBuf::from);
    let machine: Topology = "mesh:16x16".parse()?;
    let grid = machine.as_grid().ok_or("not a mesh")?;
    let shapes = MeshSides::for_grid(SideLaw::Uniform, grid)?;
    let w = Workload::with_load(
        0.6,
        256,
        shapes,
        Exponential::new(10.0)?,
        Dependence::Dependent,
    )?;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let config = SimConfig {
        stop: Stop {
            jobs: Some(100_000),
            time: None,
        },
        ..SimConfig::default()
    };
    let mut records: Vec<JobRecord> = Vec::new();
    Simulation::from_specs(
        machine.clone(),
        &ALLOCATORS.spec("fsl")?,
        &POLICIES.spec("fcfs")?,
        w.jobs(&mut rng),
        config,
    )?
    .run_observed(&mut (), Some(&mut |r| records.push(r)))?;
    write(
        &out,
        &[RunView::new("fsl · fcfs", &machine, &records)],
        &ReportOptions::titled("100,000 jobs"),
    )?;
    println!(
        "{} jobs, {} bytes: {}",
        records.len(),
        std::fs::metadata(&out)?.len(),
        out.display()
    );
    Ok(())
}
