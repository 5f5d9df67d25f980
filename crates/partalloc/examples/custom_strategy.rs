//! A researcher plugs in a strategy: an allocation strategy and a
//! scheduling policy written here, outside the library crates, registered
//! in registry values beside the built-ins, checked against the
//! allocator contract and run through the simulator with the library API.
//!
//! - `first-free[from=low|high]` (`custom_strategy/first_free.rs`, the
//!   whole strategy in one file) grants any free nodes, the lowest ids
//!   first (or the highest): with `from=low` it must behave exactly as the
//!   built-in `paging`, so the simulations below must give bit-identical
//!   results with either.
//! - `smallest-first` starts the waiting job that needs the fewest nodes
//!   first, while it fits: on a small batch its mean response is known in
//!   closed form, and differs from FCFS's.
//!
//! Run: `cargo run -p partalloc --example custom_strategy` (CI runs it; it
//! exits non-zero if a check fails).

use std::collections::VecDeque;
use std::process::ExitCode;

use partalloc::allocators::conformance::{Step, check_script_in, check_spec};
use partalloc::allocators::registry::{self as allocators, ANY_TOPOLOGY, Entry, StrategyInfo};
use partalloc::allocators::{Allocator, Request};
use partalloc::schedulers::registry::{self as policies, PolicyEntry};
use partalloc::schedulers::{
    Attempt, RequestMapping, ScheduleError, Scheduler, Started, start_queued,
};
use partalloc::simkit::{Replications, SimConfig, Simulation, Stop};
use partalloc::topology::Topology;
use partalloc::workload::spec::WorkloadSpec;
use partalloc::workload::{Job, JobShape};

#[path = "custom_strategy/first_free.rs"]
mod first_free;
use first_free::ENTRY as FIRST_FREE;

/// Starts the waiting job that needs the fewest nodes (then the oldest)
/// while it fits.
#[derive(Debug, Default)]
struct SmallestFirst {
    queue: VecDeque<Job>,
    mapping: RequestMapping,
}

impl Scheduler for SmallestFirst {
    fn name(&self) -> String {
        policies::with_rotate("smallest-first", self.mapping, String::new())
    }

    fn schedule(
        &mut self,
        _now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        while let Some(i) = (0..self.queue.len()).min_by_key(|&i| (self.queue[i].nodes(), i)) {
            if start_queued(&mut self.queue, i, self.mapping, alloc, started)? == Attempt::Blocked {
                break;
            }
        }
        Ok(())
    }

    // submit (checked, appended), queue_len and head of a one-queue policy.
    partalloc::schedulers::queue_methods!(queue);
}

const SMALLEST_FIRST: PolicyEntry = Entry {
    info: StrategyInfo {
        name: "smallest-first",
        summary: "the waiting job needing the fewest nodes first, while it fits",
        source: "examples/custom_strategy.rs",
        params: &[policies::ROTATE],
        topologies: ANY_TOPOLOGY,
    },
    build: |_, spec| {
        Ok(Box::new(SmallestFirst {
            mapping: policies::mapping(spec)?,
            ..SmallestFirst::default()
        }))
    },
};

/// A check of the example that failed.
fn fail(what: String) -> Box<dyn std::error::Error> {
    what.into()
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    // 1. Registry values: the built-ins plus ours.
    let mut strategies = allocators::builtin();
    strategies.register(FIRST_FREE)?;
    let mut schedulers = policies::builtin();
    schedulers.register(SMALLEST_FIRST)?;
    if strategies.register(FIRST_FREE).is_ok() {
        return Err(fail("a second first-free was registered".to_owned()));
    }

    // 2. The allocator contract, with fresh twins from our registry, on a
    //    script with refusals, faults, repairs and a double release.
    let cube: Topology = "hypercube:5".parse()?;
    let mut script = Vec::new();
    for k in 0..40u32 {
        script.push(Step::Allocate(Request::nodes(1 + (k * 7) % 11)));
        if k % 3 == 2 {
            script.push(Step::Release(k as usize));
        }
        if k % 5 == 4 {
            script.push(Step::ReleaseTwice(0));
            script.push(Step::MarkFaulty((k * 13) % 32));
        }
        if k % 7 == 6 {
            script.push(Step::Repair((k * 13) % 32));
        }
    }
    script.push(Step::Allocate(Request::nodes(40))); // larger than the machine
    for text in ["first-free", "first-free[from=high]"] {
        let mut alloc = strategies.build(text, &cube)?;
        let summary = check_script_in(&strategies, alloc.as_mut(), &script)?;
        if summary.granted == 0 || summary.no_room == 0 || summary.rejected != 1 {
            return Err(fail(format!(
                "{text}: unexpected script outcome {summary:?}"
            )));
        }
        check_spec(&strategies.spec(text)?, &cube, &script)?;
        println!("{text}: contract holds ({summary:?})");
    }

    // 3. A closed-form outcome of the policy: on 4 nodes, jobs of 3, 2 and
    //    1 nodes (service 1) all arrive at 0. FCFS starts the 3 and blocks
    //    (responses 1, 2, 2); smallest-first starts 1 and 2 (responses 1,
    //    1, then 2 for the 3-node job).
    let small: Topology = "hypercube:2".parse()?;
    let batch = [3, 2, 1].map(|n| Job::new(u64::from(n), 0.0, JobShape::Nodes { count: n }, 1.0));
    let first_free = strategies.spec("first-free")?;
    for (policy, want) in [("fcfs", 5.0 / 3.0), ("smallest-first", 4.0 / 3.0)] {
        let sched = schedulers.spec(policy)?;
        let sim = Simulation::from_specs(
            small.clone(),
            &first_free,
            &sched,
            batch,
            SimConfig::default(),
        )?;
        let got = sim.run()?.results.mean_response;
        if (got - want).abs() > 1e-12 {
            return Err(fail(format!(
                "{policy}: mean response {got}, expected {want}"
            )));
        }
        println!("{policy} on the batch: mean response {got} as expected");
    }

    // 4. Replications of a generated workload: our allocator from the low
    //    end must reproduce the built-in paging bit for bit, under both
    //    policies; from the high end it grants other nodes, the same
    //    counts, so the same timing too (paging ignores the machine's shape).
    let mesh: Topology = "mesh:16x16".parse()?;
    let workload = WorkloadSpec {
        arrivals: "load:0.8".parse()?,
        shapes: "sides:uniform".parse()?,
        demand: "exp:1".parse()?,
        dependence: "dependent".parse()?,
        allow_saturation: false,
    }
    .build(&mesh)?;
    let config = SimConfig {
        stop: Stop {
            jobs: Some(400),
            time: None,
        },
        ..SimConfig::default()
    };
    let reps = Replications::new(2026, 4)?;
    let paging = strategies.spec("paging")?;
    let high = strategies.spec("first-free[from=high]")?;
    for policy in ["fcfs", "smallest-first"] {
        let sched = schedulers.spec(policy)?;
        let run = |alloc| reps.simulate((&mesh, alloc, &sched), &workload, config, &|_| (), &|| {});
        let (ours, theirs, other) = (run(&first_free)?, run(&paging)?, run(&high)?);
        for (((a, ()), (b, ())), (c, ())) in ours.iter().zip(&theirs).zip(&other) {
            if a.results != b.results || a.results != c.results {
                return Err(fail(format!(
                    "{policy}: first-free and paging disagree: {:?} vs {:?}",
                    a.results, b.results
                )));
            }
        }
        let wait: f64 = ours.iter().map(|(r, ())| r.results.mean_wait).sum::<f64>() / 4.0;
        println!(
            "{policy}: first-free = paging over {} replications (mean wait {wait:.4})",
            ours.len()
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("custom_strategy: {e}");
            ExitCode::FAILURE
        }
    }
}
