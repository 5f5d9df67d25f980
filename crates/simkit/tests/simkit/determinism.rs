//! End to end: replications that generate a paper workload and push it
//! through the event calendar give bit-identical statistics on one thread,
//! on several, and on rayon's default global pool.

use partalloc_simkit::{
    Calendar, ConfidenceInterval, Replications, SimRng, TimeWeighted, Welford, thread_pool,
};
use partalloc_workload::{CubicShapes, Dependence, HyperExponential, Workload};
use std::error::Error;

#[derive(Debug, Clone, Copy)]
enum Ev {
    Arrive(u64),
    Depart(u64),
}

/// An infinite-server replay of Kang's cubic workload on a 4×4×4 machine:
/// every job starts at arrival. Returns (mean residence, time-average busy
/// nodes, calendar events processed).
fn replication(_r: u64, rng: &mut SimRng) -> Result<(f64, f64, u64), Box<dyn Error + Send + Sync>> {
    let w = Workload::with_load(
        0.5,
        64,
        CubicShapes::new(&[2, 2, 2])?,
        HyperExponential::new(1.0, 0.95, 4.0)?,
        Dependence::Dependent,
    )?;
    let jobs: Vec<_> = w.jobs(rng).take(1000).collect();
    let mut cal = Calendar::with_capacity(64);
    for j in &jobs {
        cal.schedule(j.arrival, Ev::Arrive(j.id))?;
    }
    let mut busy = TimeWeighted::new(0.0, 0.0)?;
    let mut residence = Welford::new();
    let mut nodes = 0u64;
    let mut events = 0;
    while let Some((t, ev)) = cal.pop() {
        events += 1;
        match ev {
            Ev::Arrive(id) => {
                let j = &jobs[id as usize];
                nodes += j.nodes();
                cal.schedule_in(j.service, Ev::Depart(id))?;
                residence.push(j.service)?;
            }
            Ev::Depart(id) => nodes -= jobs[id as usize].nodes(),
        }
        busy.update(t, nodes as f64)?;
    }
    let end = busy.last_time();
    let mean = residence.mean().ok_or("no jobs")?;
    Ok((mean, busy.mean_until(end)?, events))
}

#[test]
fn one_thread_four_threads_and_the_global_pool_agree_bit_for_bit() {
    let reps = Replications::new(20_260_101, 20).unwrap();
    let run = |threads| -> Vec<(f64, f64, u64)> {
        thread_pool(threads)
            .unwrap()
            .install(|| reps.run(replication))
            .into_iter()
            .map(Result::unwrap)
            .collect()
    };
    let (a, b) = (run(1), run(4));
    // `run` outside any pool uses the global pool, sized by rayon's default
    // (the machine's cores or RAYON_NUM_THREADS).
    let global: Vec<(f64, f64, u64)> = reps
        .run(replication)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(a.len(), 20);
    assert_eq!(global.len(), 20);
    for ((x, y), z) in a.iter().zip(&b).zip(&global) {
        for other in [y, z] {
            assert_eq!(x.0.to_bits(), other.0.to_bits());
            assert_eq!(x.1.to_bits(), other.1.to_bits());
            assert_eq!(x.2, other.2);
        }
        assert_eq!(x.2, 2000);
    }
    // The statistics reduced from each run are bit-identical too.
    let summary = |runs: &[(f64, f64, u64)]| {
        let means: Vec<f64> = runs.iter().map(|x| x.0).collect();
        let busy: Vec<f64> = runs.iter().map(|x| x.1).collect();
        let ci = ConfidenceInterval::from_samples(&means, 0.95).unwrap();
        let b = ConfidenceInterval::from_samples(&busy, 0.95).unwrap();
        let bits = [
            ci.mean,
            ci.half_width.unwrap(),
            b.mean,
            b.half_width.unwrap(),
        ]
        .map(f64::to_bits);
        (ci, bits)
    };
    let (ci, bits) = summary(&a);
    assert_eq!(bits, summary(&b).1, "1 and 4 threads");
    assert_eq!(bits, summary(&global).1, "1 thread and the global pool");
    // Hyper-exponential residence of mean 1, 20 replications of 1000 jobs
    // from a fixed seed: the interval covers the true mean.
    assert!(ci.contains(1.0), "{ci}");
    // Different replications really differ.
    assert_ne!(a[0].0.to_bits(), a[1].0.to_bits());
}
