//! Processor allocation and job scheduling on partitionable parallel
//! machines — hypercubes, k-ary n-cubes, meshes and tori.
//!
//! This crate gathers the five crates of the workspace under one name; it
//! is a plain library. The `partalloc` command-line tool lives in the
//! `partalloc-cli` crate, installed from a checkout of the repository with
//! `cargo install --path crates/cli` (it is not on crates.io).
//!
//! The snippets below need nothing but this crate: the random number
//! generator is re-exported as `partalloc::workload::{ChaCha8Rng,
//! SeedableRng}`. The sweep of step 6 also uses `serde` (to name the CSV
//! columns) and `tempfile`; add them to your own `Cargo.toml` to run it.
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | [`topology`] | `partalloc-topology` | machines, node addressing, subcubes, boxes, subtori, Gray codes |
//! | [`allocators`] | `partalloc-allocators` | the `Allocator` trait, one module per strategy, the registry by name |
//! | [`workload`] | `partalloc-workload` | jobs, the papers' arrival/shape/demand generators, SWF traces |
//! | [`schedulers`] | `partalloc-schedulers` | FCFS, Scan, static partitioning, lazy, M-FCFS, EASY; offline torus scheduling |
//! | [`simkit`] | `partalloc-simkit` | the event calendar, the run loop, statistics, replications, resumable sweeps |
//!
//! A resource manager that needs one allocator can depend on
//! `partalloc-allocators` alone; this crate is for studies that use all of
//! them.
//!
//! # From a machine to a sweep
//!
//! ## 1. Pick a machine
//!
//! The classic machines parse from short descriptions: `hypercube:N`,
//! `mesh:AxB[xC…]`, `torus:AxB[xC…]`, `kary:K^N` (a k-ary n-cube, a mesh
//! in Kang et al.'s sense) and `kary-torus:K^N`. So do today's
//! partitioned machines: accelerator pods (`pod:tpu-v4:8x8x8`, or a full
//! description of sides, cubes, wiring and shapes) and GPU racks that hold
//! several pods per node (`racks:8x18x4gpu`: racks × nodes × GPUs, with
//! an optional block level in front). Slurm machines (`topology/block`,
//! `tree`, ring and 3-D torus) are read from a `topology.conf` or
//! `topology.yaml` file with [`SlurmMachine::parse_conf`](topology::slurm::SlurmMachine::parse_conf)
//! or [`parse_yaml`](topology::slurm::SlurmMachine::parse_yaml), and a
//! Kueue machine from its Topology file and node list with
//! [`CapacityMachine::from_kueue_yaml`](topology::capacity::CapacityMachine::from_kueue_yaml);
//! each converts into a `Topology`.
//!
//! ```
//! use partalloc::topology::Topology;
//!
//! let cube: Topology = "hypercube:7".parse()?;
//! let mesh: Topology = "mesh:16x16".parse()?;
//! let kary: Topology = "kary:8^3".parse()?;
//! assert_eq!((cube.num_nodes(), mesh.num_nodes(), kary.num_nodes()), (128, 256, 512));
//! assert_eq!(mesh.diameter(), 30);
//! assert!("mesh:16xq".parse::<Topology>().is_err());
//!
//! let pod: Topology = "pod:tpu-v4:8x8x8".parse()?;
//! let racks: Topology = "racks:8x18x4gpu".parse()?;
//! assert_eq!((pod.num_nodes(), racks.num_nodes()), (512, 576));
//!
//! // Two racks of four nodes under Slurm's topology/block.
//! let conf = "BlockName=r0 Nodes=n[0-3]\nBlockName=r1 Nodes=n[4-7]\nBlockSizes=4,8\n";
//! let slurm = partalloc::topology::slurm::SlurmMachine::parse_conf(conf, "topology.conf")?;
//! assert_eq!(Topology::from(slurm).num_nodes(), 8);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## 2. Pick a strategy and allocate
//!
//! Every strategy is an [`Allocator`](allocators::Allocator), built by name
//! (with parameters in brackets) through the
//! [`registry`](allocators::registry). A grant is given back with
//! `release`; the allocator keeps its own record of it.
//!
//! ```
//! use partalloc::allocators::{Request, registry};
//! use partalloc::topology::Topology;
//!
//! let mesh: Topology = "mesh:16x16".parse()?;
//! let mut fsl = registry::build("fsl", &mesh)?;
//! let a = fsl.allocate(&Request::boxed(&[8, 4])?)?;
//! let b = fsl.allocate(&Request::boxed(&[16, 12])?)?;
//! assert_eq!(fsl.free_nodes(), 256 - 32 - 192);
//! fsl.release(&a)?;
//! fsl.release(&b)?;
//! assert_eq!(fsl.free_nodes(), 256);
//!
//! // The buddy system on a 7-cube grants subcubes, printed as the papers do.
//! let mut buddy = registry::build("buddy", &"hypercube:7".parse()?)?;
//! let g = buddy.allocate(&Request::subcube(5))?;
//! assert_eq!(g.partition().to_string(), "00XXXXX");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## 3. Describe a workload
//!
//! A [`Workload`](workload::Workload) combines Poisson arrivals (rate from
//! an offered load ρ = λ·m·r/N, Kim & Yoon §IV.1), a shape distribution and
//! a residence-time distribution. Draw from it with a seeded `ChaCha8Rng`.
//!
//! ```
//! use partalloc::topology::Grid;
//! use partalloc::workload::{Dependence, Exponential, MeshSides, SideLaw, Workload};
//! use partalloc::workload::{ChaCha8Rng, SeedableRng};
//!
//! // Kim & Yoon §IV.1: sides uniform in 1..=16 on a 16×16 mesh, load 0.47,
//! // exponential residence of mean 10.
//! let shapes = MeshSides::for_grid(SideLaw::Uniform, &Grid::mesh(&[16, 16])?)?;
//! let w = Workload::with_load(0.47, 256, shapes, Exponential::new(10.0)?, Dependence::Dependent)?;
//! assert!((w.offered_load(256) - 0.47).abs() < 1e-12);
//! let mut rng = ChaCha8Rng::seed_from_u64(1);
//! let jobs: Vec<_> = w.jobs(&mut rng).take(100).collect();
//! assert!(jobs.iter().all(|j| j.nodes() <= 256));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## 4. Simulate
//!
//! A [`Simulation`](simkit::Simulation) wires the job stream through a
//! scheduling policy to the allocator and reports response and waiting
//! times, the numerical/topological split of the delay (Kang §5.1),
//! utilization, allocation misses (Kim & Yoon §IV.2) and more.
//!
//! ```
//! use partalloc::allocators::registry::ALLOCATORS;
//! use partalloc::schedulers::registry::POLICIES;
//! use partalloc::simkit::{SimConfig, Simulation, Stop};
//! use partalloc::topology::{Grid, Topology};
//! use partalloc::workload::{Dependence, Exponential, MeshSides, SideLaw, Workload};
//! use partalloc::workload::{ChaCha8Rng, SeedableRng};
//!
//! let machine: Topology = "mesh:16x16".parse()?;
//! let shapes = MeshSides::for_grid(SideLaw::Uniform, &Grid::mesh(&[16, 16])?)?;
//! let w = Workload::with_load(0.3, 256, shapes, Exponential::new(10.0)?, Dependence::Dependent)?;
//! let mut rng = ChaCha8Rng::seed_from_u64(7);
//! let config = SimConfig { stop: Stop { jobs: Some(300), time: None }, ..SimConfig::default() };
//! let (fsl, fcfs) = (ALLOCATORS.spec("fsl")?, POLICIES.spec("fcfs")?);
//! let report = Simulation::from_specs(machine, &fsl, &fcfs, w.jobs(&mut rng), config)?.run()?;
//! let r = report.results;
//! assert_eq!(r.completed, 300);
//! // A job's wait is exactly its numerical plus its topological delay.
//! let split = r.mean_numerical_delay + r.mean_topological_delay;
//! assert!((r.mean_wait - split).abs() < 1e-9 * r.mean_wait.max(1.0));
//! assert!(r.utilization > 0.0 && r.utilization < 1.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## 5. Replay a trace
//!
//! A Standard Workload Format trace (the Parallel Workloads Archive's
//! format) is read whole with [`read_trace`](simkit::trace::read_trace),
//! each job's processor count mapped to a shape of the machine, and
//! replayed like any job stream.
//!
//! ```
//! use partalloc::allocators::registry::ALLOCATORS;
//! use partalloc::schedulers::registry::POLICIES;
//! use partalloc::simkit::{SimConfig, Simulation, trace::read_trace};
//! use partalloc::topology::Topology;
//! use partalloc::workload::ShapeMapping;
//!
//! let path = std::env::temp_dir().join(format!("facade-trace-{}.swf", std::process::id()));
//! std::fs::write(
//!     &path,
//!     "; MaxProcs: 8\n\
//!      1 0 -1 20 8 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n\
//!      2 5 -1 10 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n",
//! )?;
//! let machine: Topology = "hypercube:3".parse()?;
//! let trace = read_trace(&path, ShapeMapping::for_topology(&machine), false)?;
//! std::fs::remove_file(&path)?;
//! let (buddy, fcfs) = (ALLOCATORS.spec("buddy")?, POLICIES.spec("fcfs")?);
//! let report = Simulation::from_specs(machine, &buddy, &fcfs, trace.jobs, SimConfig::default())?.run()?;
//! // Job 2 (4 nodes, submitted at 5) waits for job 1 (the whole cube) to end at 20.
//! assert_eq!(report.results.completed, 2);
//! assert!((report.results.mean_wait - 7.5).abs() < 1e-9);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## 6. Replicate and sweep
//!
//! [`Replications`](simkit::Replications) runs independent seeds in
//! parallel (one ChaCha8 stream each; bit-identical at any thread count) and
//! summarizes them as mean ± Student-t half-width. A
//! [`Sweep`](simkit::Sweep) writes each finished point of a grid to CSV at
//! once and resumes after an interruption.
//!
//! ```
//! use partalloc::allocators::registry::ALLOCATORS;
//! use partalloc::schedulers::registry::POLICIES;
//! use partalloc::simkit::{Replications, SimConfig, Simulation, Stop, Sweep};
//! use partalloc::topology::{Hypercube, Topology};
//! use partalloc::workload::{CubeDims, Dependence, Exponential, Workload};
//! use serde::Serialize;
//!
//! #[derive(Serialize)]
//! struct Point { allocator: &'static str, load: f64 }
//! #[derive(Serialize)]
//! struct Row { response: f64, half_width: Option<f64> }
//!
//! let machine: Topology = "hypercube:6".parse()?;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("sweep.csv");
//! let points = ["buddy", "partner"]
//!     .into_iter()
//!     .flat_map(|a| [0.3, 0.6].map(|load| Point { allocator: a, load }))
//!     .collect();
//! let mut sweep = Sweep::open(&path, points)?;
//! sweep.run_pending(|_, p| -> Result<Row, Box<dyn std::error::Error + Send + Sync>> {
//!     let dims = CubeDims::mohapatra_uniform(&Hypercube::new(6)?)?;
//!     let w = Workload::with_load(p.load, 64, dims, Exponential::new(1.0)?, Dependence::Dependent)?;
//!     let (alloc, fcfs) = (ALLOCATORS.spec(p.allocator)?, POLICIES.spec("fcfs")?);
//!     let reps = Replications::new(1, 4)?;
//!     let responses = reps.run(|_, rng| {
//!         let config = SimConfig { stop: Stop { jobs: Some(200), time: None }, ..SimConfig::default() };
//!         let sim = Simulation::from_specs(machine.clone(), &alloc, &fcfs, w.jobs(rng), config)?;
//!         Ok::<_, partalloc::simkit::SimError>(sim.run()?.results.mean_response)
//!     }).into_iter().collect::<Result<Vec<_>, _>>()?;
//!     let ci = reps.summarize(&responses, 0.95)?;
//!     Ok(Row { response: ci.mean, half_width: ci.half_width })
//! }).map_err(|e| e.to_string())?;
//! sweep.finish()?;
//! let csv = std::fs::read_to_string(&path)?;
//! assert!(csv.starts_with("allocator,load,response,half_width\nbuddy,0.3,"));
//! assert_eq!(csv.lines().count(), 5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The command-line tool (crate `partalloc-cli`) does all of this from flags
//! and TOML files; see `docs/guide.md` in the repository.
//!
//! # Your own strategy
//!
//! A strategy or a scheduling policy of your own plugs in beside the
//! built-in ones: implement [`Allocator`](allocators::Allocator) (or
//! [`Scheduler`](schedulers::Scheduler)), register it in a registry value,
//! check it against the trait's contract with
//! [`conformance`](allocators::conformance) and simulate it by name. The
//! repository's `crates/partalloc/examples/custom_strategy.rs` does all
//! four (`cargo run -p partalloc --example custom_strategy`).
//!
//! # Features
//!
//! - `parallel` (default): replications and sweeps on rayon's thread pool;
//!   without it they run sequentially with bit-identical results.
//! - `csv` (default): resumable CSV sweeps (`simkit::sweep`) and CSV job
//!   records.
//! - `serde`: `Serialize`/`Deserialize` for the public data types of every
//!   crate.
//! - `plot`: SVG charts (`simkit::plot`).

#![deny(missing_docs)]

pub use partalloc_allocators as allocators;
pub use partalloc_schedulers as schedulers;
pub use partalloc_simkit as simkit;
pub use partalloc_topology as topology;
pub use partalloc_workload as workload;
