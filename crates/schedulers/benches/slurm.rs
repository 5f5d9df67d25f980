//! The Slurm policy's periodic passes at 10,000 pending jobs on a
//! 1,000-node machine whose nodes are all busy: one priority
//! recalculation (Fair Tree over 6 accounts and 24 users, every pending
//! job's factors) and one backfill pass testing every pending job
//! (`bf_max_job_test=10000`, one-day window) against 1,000 running jobs.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use partalloc_schedulers::slurm::assoc::{AssocTree, QosTable};
use partalloc_schedulers::slurm::conf::SchedConf;
use partalloc_schedulers::slurm::jobs::{JobAttrs, JobTable};
use partalloc_schedulers::slurm::{Inputs, SlurmPolicy};
use partalloc_schedulers::{RequestMapping, Scheduler};
use partalloc_workload::{Job, JobShape};

const CONF: &str = "NodeName=n[0001-1000] CPUs=32\n\
    PartitionName=batch Nodes=ALL Default=YES\n\
    SchedulerParameters=bf_interval=30,bf_window=1440,bf_resolution=60,bf_max_job_test=10000,default_queue_depth=20000\n\
    PriorityWeightFairshare=10000\nPriorityWeightAge=1000\nPriorityWeightJobSize=500\n\
    PriorityDecayHalfLife=7-0\n";

const PENDING: u64 = 10_000;

type Setup = (SlurmPolicy, Box<dyn partalloc_allocators::Allocator>);

fn setup() -> Result<Setup, Box<dyn std::error::Error>> {
    let accounts = ["phys", "chem", "bio", "astro", "eng", "math"];
    let mut assoc = String::from("Account|User|Share|ParentName\nroot||1|\n");
    for (i, a) in accounts.iter().enumerate() {
        assoc.push_str(&format!("{a}||{}|root\n", 10 + 5 * i));
    }
    for i in 0..24 {
        assoc.push_str(&format!("{}|u{i:02}|1|\n", accounts[i % 6]));
    }
    let conf = SchedConf::parse(CONF, "bench.conf")?;
    let tree = AssocTree::parse(&assoc, "bench")?;
    let mut table = JobTable::new("bench");
    let mut jobs = Vec::new();
    // A fixed linear congruential sequence keeps the input reproducible.
    let mut x: u64 = 12345;
    for id in 1..=(1000 + PENDING) {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let user = (x >> 33) % 24;
        let (nodes, limit) = if id <= 1000 {
            (1, 600 + (x >> 40) % 86_400)
        } else {
            (1u32 << ((x >> 45) % 7), 60 * (1 + (x >> 50) % 240))
        };
        table.insert(
            id,
            JobAttrs::new()
                .with_names(
                    Some(accounts[(user % 6) as usize]),
                    Some(&format!("u{user:02}")),
                    None,
                    None,
                )
                .with_time_limit(Some(limit)),
        );
        jobs.push(Job::new(
            id,
            0.0,
            JobShape::Nodes { count: nodes },
            limit as f64,
        ));
    }
    let inputs = Inputs::new(conf, tree, QosTable::single(), table);
    let mut p = SlurmPolicy::new(inputs, 1000, "slurm".into(), RequestMapping::default())?;
    let machine = "mesh:1000x1".parse()?;
    let mut alloc = partalloc_allocators::registry::build("paging", &machine)?;
    let mut started = Vec::new();
    // 1,000 one-node jobs fill the machine, then 10,000 wait.
    for j in &jobs[..1000] {
        p.submit(*j, 0.0)?;
    }
    p.schedule(0.0, alloc.as_mut(), &mut started)?;
    for j in &jobs[1000..] {
        p.submit(*j, 0.0)?;
    }
    p.schedule(0.0, alloc.as_mut(), &mut started)?;
    if p.queue_len() as u64 != PENDING {
        return Err(format!("{} jobs wait, not {PENDING}", p.queue_len()).into());
    }
    Ok((p, alloc))
}

fn bench(c: &mut Criterion) {
    let (mut p, mut alloc) = match setup() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("slurm benches not run: {e}");
            return;
        }
    };
    let mut g = c.benchmark_group("slurm");
    g.throughput(Throughput::Elements(PENDING));
    let mut t = 300.0;
    g.bench_function("priority_pass_10000_pending", |b| {
        b.iter(|| {
            t += 300.0;
            p.run_priority_pass(black_box(t));
        });
    });
    let mut started = Vec::new();
    g.bench_function("backfill_pass_10000_pending", |b| {
        b.iter(|| {
            started.clear();
            let r = p.run_backfill(black_box(30.0), alloc.as_mut(), &mut started);
            black_box((r.is_ok(), started.len()))
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
