//! The dispersal measures of a run and the run-time model, against brute
//! force over the recorded grants.

#![expect(
    clippy::unwrap_used,
    reason = "the helpers building fixtures sit outside #[test] functions"
)]

use partalloc_allocators::Partition;
use partalloc_allocators::registry::ALLOCATORS;
use partalloc_schedulers::registry::POLICIES;
use partalloc_simkit::runtime_model::baseline_nodes;
use partalloc_simkit::{Report, RuntimeModel, SimConfig, Simulation};
use partalloc_topology::{NodeId, Topology};
use partalloc_workload::{Job, JobShape};

/// A reproducible stream of jobs of 1..=max nodes (a small LCG).
fn jobs(count: u64, max: u32, seed: u64) -> Vec<Job> {
    let mut x = seed;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    let mut t = 0.0;
    (0..count)
        .map(|id| {
            t += (next() % 5) as f64 * 0.5;
            let n = 1 + (next() % u64::from(max)) as u32;
            let service = 1.0 + (next() % 40) as f64;
            Job::new(id, t, JobShape::Nodes { count: n }, service)
        })
        .collect()
}

fn nodes_of(topology: &Topology, p: &Partition) -> Vec<NodeId> {
    let mut v = Vec::new();
    p.for_each_node(topology, |n| v.push(n)).unwrap();
    v
}

fn hop(topology: &Topology, a: NodeId, b: NodeId) -> u32 {
    match topology.as_grid() {
        Some(g) => g.distance(a, b).unwrap(),
        None => (a ^ b).count_ones(),
    }
}

/// Sum, diameter, bounding-box nodes (meshes and hypercubes) and pieces by
/// every pair and a flood fill.
fn brute(topology: &Topology, nodes: &[NodeId]) -> (u128, u32, Option<u64>, u32) {
    let (sum, diameter, pieces) =
        partalloc_testkit::brute_dispersal(nodes.len(), |i, j| hop(topology, nodes[i], nodes[j]));
    let span = match topology.as_grid() {
        Some(g) if !g.is_torus() => Some(
            (0..g.dims())
                .map(|d| {
                    let cs = nodes.iter().map(|&n| g.coords_of(n).unwrap()[d]);
                    let (lo, hi) = cs.fold((u32::MAX, 0), |(l, h), c| (l.min(c), h.max(c)));
                    u64::from(hi - lo + 1)
                })
                .product(),
        ),
        Some(_) => None,
        None => {
            let varying = nodes.iter().fold(0, |v, &n| v | (n ^ nodes[0]));
            Some(1 << varying.count_ones())
        }
    };
    (sum, diameter, span, pieces)
}

fn run(machine: &str, allocator: &str, jobs: Vec<Job>, model: Option<&str>) -> Report {
    let config = SimConfig {
        record_jobs: true,
        warmup: 5,
        ..SimConfig::default()
    };
    let mut sim = Simulation::from_specs(
        machine.parse().unwrap(),
        &ALLOCATORS.spec(allocator).unwrap(),
        &POLICIES.spec("fcfs").unwrap(),
        jobs,
        config,
    )
    .unwrap();
    if let Some(m) = model {
        sim = sim.with_runtime_model(m.parse().unwrap()).unwrap();
    }
    sim.run().unwrap()
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} vs {b}");
}

/// Every measured job's dispersal equals brute force over its grant, and
/// each run mean is the mean of the per-job values.
#[test]
fn per_job_measures_are_brute_force_and_the_means_their_means() {
    for (machine, allocator, max) in [
        ("mesh:8x8", "paging", 20),
        ("mesh:8x8", "mbs", 20),
        ("mesh:4x4x4", "curve-best-fit[order=hilbert]", 16),
        ("torus:6x5", "paging", 12),
        ("hypercube:5", "paging", 12),
    ] {
        let topology: Topology = machine.parse().unwrap();
        let r = run(machine, allocator, jobs(80, max, 3), None);
        assert!(r.jobs.len() >= 70, "{machine} {allocator}");
        let mut means = [0.0; 5];
        let mut dispersed = 0;
        for j in &r.jobs {
            let d = j.dispersal.expect("a machine with distances");
            let nodes = nodes_of(&topology, &j.partition);
            let (sum, diameter, span, pieces) = brute(&topology, &nodes);
            assert_eq!(
                (d.nodes, d.distance_sum, d.diameter, d.pieces),
                (nodes.len() as u64, sum, diameter, pieces),
                "{machine} {allocator} job {}",
                j.id
            );
            if let Some(s) = span {
                assert_eq!(d.span_nodes, s);
            }
            dispersed += u32::from(pieces > 1);
            for (m, v) in means.iter_mut().zip([
                d.distance_sum as f64,
                d.mean_distance(),
                f64::from(d.diameter),
                d.span_nodes as f64,
                f64::from(d.pieces),
            ]) {
                *m += v / r.jobs.len() as f64;
            }
        }
        let res = &r.results;
        for (got, want) in [
            res.mean_distance_sum,
            res.mean_pairwise_distance,
            res.mean_diameter,
            res.mean_span,
            res.mean_pieces,
        ]
        .into_iter()
        .zip(means)
        {
            close(got, want);
        }
        // The non-contiguous strategies did scatter some grants.
        if allocator == "paging" {
            assert!(dispersed > 0, "{machine}");
        }
    }
}

/// With a model, each job runs the model's time for its grant: the linear
/// model against a brute-force baseline, SST's through its formula.
#[test]
fn the_runtime_model_sets_each_jobs_run_time() {
    let machine = "mesh:8x8";
    let topology: Topology = machine.parse().unwrap();
    let js = jobs(80, 20, 9);
    let service = |id: u64| js.iter().find(|j| j.id == id).unwrap().service;
    let base = |n: u64| {
        let mut b = Vec::new();
        baseline_nodes(&topology, n, &mut b);
        brute(&topology, &b).0 as f64
    };
    let linear = run(machine, "paging", js.clone(), Some("linear:0.5"));
    let mut slowed = 0;
    for j in &linear.jobs {
        let d = j.dispersal.unwrap();
        let b = base(d.nodes);
        let want = if b == 0.0 {
            service(j.id)
        } else {
            service(j.id) * (1.0 + 0.5 * (d.distance_sum as f64 / b - 1.0))
        };
        close(j.end - j.start, want);
        slowed += u32::from(want > service(j.id));
    }
    assert!(slowed > 10, "{slowed}");
    let sst: RuntimeModel = "sst:.001865[.1569,0.0129]".parse().unwrap();
    let r = run(
        machine,
        "paging",
        js.clone(),
        Some("sst:.001865[.1569,0.0129]"),
    );
    for j in &r.jobs {
        let d = j.dispersal.unwrap();
        let want = sst.run_time(service(j.id), j.id, d.distance_sum as f64, base(d.nodes));
        close(j.end - j.start, want);
    }
    // A coefficient of 0 is the plain run, exactly.
    let plain = run(machine, "paging", js.clone(), None);
    let zero = run(machine, "paging", js, Some("linear:0"));
    assert_eq!((zero.results, zero.jobs), (plain.results, plain.jobs));
}

#[test]
fn a_slurm_machine_measures_nothing_and_refuses_a_model() {
    let topology: Topology = partalloc_topology::slurm::SlurmMachine::parse_conf(
        "BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\nBlockSizes=4\n",
        "b.conf",
    )
    .unwrap()
    .into();
    let config = SimConfig {
        record_jobs: true,
        ..SimConfig::default()
    };
    let sim = || {
        Simulation::from_specs(
            topology.clone(),
            &ALLOCATORS.spec("paging").unwrap(),
            &POLICIES.spec("fcfs").unwrap(),
            jobs(10, 4, 1),
            config,
        )
        .unwrap()
    };
    let r = sim().run().unwrap();
    assert!(r.jobs.iter().all(|j| j.dispersal.is_none()));
    assert_eq!(r.results.mean_pairwise_distance, 0.0);
    let e = sim()
        .with_runtime_model("linear:1".parse().unwrap())
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("a run-time model needs hop distances"),
        "{e}"
    );
}
