//! A policy ending running jobs early (`Scheduler::take_preemptions`),
//! by hand: the grant goes back once, the preempted job's departure never
//! ends a later job, and the measures say what was preempted.

use std::collections::VecDeque;
use std::error::Error;

use partalloc_allocators::Allocator;
use partalloc_schedulers::{Preemption, ScheduleError, Scheduler, Started};
use partalloc_simkit::{SimConfig, Simulation};
use partalloc_workload::{Job, JobShape};

/// FCFS that, when job 2 cannot start, preempts job 1 (once), cancelling
/// or requeueing it (at the head of the queue).
#[derive(Debug)]
struct PreemptOne {
    queue: VecDeque<Job>,
    requeue: bool,
    asked: Vec<Preemption>,
    done: bool,
    victim: Option<Job>,
}

impl Scheduler for PreemptOne {
    fn name(&self) -> String {
        "preempt-one".into()
    }

    fn submit(&mut self, job: Job, _now: f64) -> Result<(), ScheduleError> {
        self.queue.push_back(job);
        Ok(())
    }

    fn schedule(
        &mut self,
        _now: f64,
        alloc: &mut dyn Allocator,
        started: &mut Vec<Started>,
    ) -> Result<(), ScheduleError> {
        while let Some(job) = self.queue.front().copied() {
            let request = partalloc_allocators::Request::Nodes {
                count: u32::try_from(job.shape.node_count()).unwrap_or(u32::MAX),
            };
            match alloc.allocate(&request) {
                Ok(grant) => {
                    self.queue.pop_front();
                    started.push(Started { job, grant });
                }
                Err(_) => {
                    if job.id == 2 && !self.done {
                        self.done = true;
                        self.asked.push(Preemption {
                            job: 1,
                            requeue: self.requeue,
                        });
                    }
                    break;
                }
            }
        }
        Ok(())
    }

    fn departed(&mut self, job: &Job, _now: f64) {
        if job.id == 1 && self.requeue && self.victim.is_none() {
            self.victim = Some(*job);
            self.queue.insert(1, *job);
        }
    }

    fn queue_len(&self) -> usize {
        self.queue.len()
    }

    fn head(&self) -> Option<&Job> {
        self.queue.front()
    }

    fn take_preemptions(&mut self, out: &mut Vec<Preemption>) {
        out.append(&mut self.asked);
    }
}

fn job(id: u64, arrival: f64, count: u32, service: f64) -> Job {
    Job::new(id, arrival, JobShape::Nodes { count }, service)
}

/// One record: id, start, end, wait, runs preempted.
type Rec = (u64, f64, f64, f64, u32);

/// The records, and the results' completed jobs, preemption count and
/// utilization.
type Outcome = (Vec<Rec>, u64, u64, f64);

/// A run of three jobs under [`PreemptOne`].
fn run(requeue: bool) -> Result<Outcome, Box<dyn Error>> {
    let topo: partalloc_topology::Topology = "mesh:2x1".parse()?;
    let alloc = partalloc_allocators::registry::build("paging", &topo)?;
    let sched = PreemptOne {
        queue: VecDeque::new(),
        requeue,
        asked: Vec::new(),
        done: false,
        victim: None,
    };
    let jobs = vec![
        job(1, 0.0, 2, 100.0),
        job(2, 10.0, 2, 50.0),
        job(3, 20.0, 2, 200.0),
    ];
    let cfg = SimConfig {
        record_jobs: true,
        ..SimConfig::default()
    };
    let r = Simulation::new(topo, alloc, Box::new(sched), jobs, cfg)?.run()?;
    let mut recs: Vec<_> = r
        .jobs
        .iter()
        .map(|j| (j.id, j.start, j.end, j.wait, j.preempted))
        .collect();
    recs.sort_by_key(|r| r.0);
    Ok((
        recs,
        r.results.completed,
        r.results.preempted,
        r.results.utilization,
    ))
}

/// Two nodes. J1 (0–100) is cancelled at 10 for J2 (10–60); J3 waits
/// for J2 and runs 60–260: J1's old departure at 100 does not end it.
/// Every node is busy from 0 to 260.
#[test]
fn a_cancelled_job_leaves_at_once() -> Result<(), Box<dyn Error>> {
    let (recs, completed, preempted, util) = run(false)?;
    assert_eq!(
        recs,
        vec![
            (1, 0.0, 10.0, 0.0, 1),
            (2, 10.0, 60.0, 0.0, 0),
            (3, 60.0, 260.0, 40.0, 0),
        ]
    );
    assert_eq!((completed, preempted, util), (3, 1, 1.0));
    Ok(())
}

/// The same with J1 requeued: it runs again after J2, from the start
/// (60–160), its wait everything before its last run; J3 runs 160–360.
#[test]
fn a_requeued_job_runs_again_from_the_start() -> Result<(), Box<dyn Error>> {
    let (recs, completed, preempted, util) = run(true)?;
    assert_eq!(
        recs,
        vec![
            (1, 60.0, 160.0, 60.0, 1),
            (2, 10.0, 60.0, 0.0, 0),
            (3, 160.0, 360.0, 140.0, 0),
        ]
    );
    assert_eq!((completed, preempted, util), (3, 1, 1.0));
    Ok(())
}
