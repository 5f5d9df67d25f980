//! Does Isomorphic's split option help? Kang Fig. 11 workload: noncubic
//! jobs l_2 × l_1 × l_0 with every side uniform in 1..=k on the 4-, 8- and
//! 16-ary 3-cube, FCFS, Poisson arrivals, exponential service of mean 1.
//! `isomorphic` against `isomorphic[split=true]` at a few offered loads
//! ρ = λ · E[Π l_i] / k³, each over several seeds; prints a Markdown table
//! of the mean response time and utilization (mean ± 95% CI half-width
//! over the seeds).
//!
//! Run: `cargo run --release -p partalloc-simkit --example kary_split`

use partalloc_allocators::registry::ALLOCATORS;
use partalloc_schedulers::registry::POLICIES;
use partalloc_simkit::{ConfidenceInterval, DEFAULT_LEVEL, SimConfig, Simulation, replication_rng};
use partalloc_topology::{Coords, Topology};
use partalloc_workload::{Job, JobShape};
use rand::RngExt;
use rand_distr::{Distribution, Exp};

const JOBS: u64 = 4_000;
const WARMUP: u64 = 400;
const SEEDS: u64 = 5;

fn jobs(k: u32, load: f64, seed: u64) -> Vec<Job> {
    let mut rng = replication_rng(2003, seed);
    let side = f64::from(k + 1) / 2.0;
    let lambda = load * f64::from(k).powi(3) / side.powi(3);
    let (Ok(inter), Ok(service)) = (Exp::new(lambda), Exp::new(1.0)) else {
        return Vec::new();
    };
    let mut t = 0.0;
    (0..JOBS)
        .filter_map(|id| {
            t += inter.sample(&mut rng);
            let s: Vec<u32> = (0..3).map(|_| rng.random_range(1..=k)).collect();
            Some(Job::new(
                id,
                t,
                JobShape::Box {
                    sides: Coords::new(&s).ok()?,
                },
                service.sample(&mut rng),
            ))
        })
        .collect()
}

fn show(samples: &[f64]) -> String {
    match ConfidenceInterval::from_samples(samples, DEFAULT_LEVEL) {
        Ok(ci) => format!("{:.3} ± {:.3}", ci.mean, ci.half_width.unwrap_or(0.0)),
        Err(e) => format!("({e})"),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("| machine | load ρ | strategy | mean response | utilization |");
    println!("|---|---|---|---|---|");
    for k in [4u32, 8, 16] {
        let topology: Topology = format!("kary:{k}^3").parse()?;
        for load in [0.2, 0.35, 0.5] {
            for strategy in ["isomorphic", "isomorphic[split=true]"] {
                let (mut resp, mut util) = (Vec::new(), Vec::new());
                for seed in 0..SEEDS {
                    let cfg = SimConfig {
                        warmup: WARMUP,
                        measure_search_time: false,
                        ..SimConfig::default()
                    };
                    let r = Simulation::from_specs(
                        topology.clone(),
                        &ALLOCATORS.spec(strategy)?,
                        &POLICIES.spec("fcfs")?,
                        jobs(k, load, seed),
                        cfg,
                    )?
                    .run()?;
                    resp.push(r.results.mean_response);
                    util.push(r.results.utilization);
                }
                println!(
                    "| {k}-ary 3-cube | {load} | `{strategy}` | {} | {} |",
                    show(&resp),
                    show(&util)
                );
            }
        }
    }
    Ok(())
}
