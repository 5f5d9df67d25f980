//! Tests of the queue orders, conservative backfilling, the estimates
//! rules and RLScheduler's procedure: hand-worked schedules, closed-form
//! checks of the priority formulas and the reservation guarantee as a
//! property.

use partalloc_allocators::{Allocator, registry as allocators};
use partalloc_topology::Topology;
use partalloc_workload::{Job, JobShape};
use proptest::prelude::*;

use crate::conservative::{Compression, ConservativeBackfilling};
use crate::order::{ORDERS, Order};
use crate::priority::QueueOptions;
use crate::{PolicyBuildError, Scheduler, Started, registry};

/// A job of `count` nodes.
fn job(id: u64, arrival: f64, count: u32, service: f64, estimate: Option<f64>) -> Job {
    Job::new(id, arrival, JobShape::Nodes { count }, service).with_estimate(estimate)
}

/// A paging allocator (any free nodes) on a hypercube of 2^n nodes.
fn paging(n: u32) -> Box<dyn Allocator> {
    let machine: Topology = format!("hypercube:{n}").parse().unwrap();
    allocators::build("paging", &machine).unwrap()
}

/// What the observer of [`event_loop`] sees after a decision.
pub(crate) struct Moment {
    /// The time of the decision.
    pub(crate) t: f64,
    /// How many jobs have been submitted.
    pub(crate) submitted: usize,
    /// How many jobs have started.
    pub(crate) started: usize,
    /// How many jobs are running.
    pub(crate) running: usize,
}

/// An allocator [`event_loop`] can hand to a policy: a concrete one (whose
/// copies an observer may probe) or a `dyn` one.
pub(crate) trait AsDynAllocator: Allocator {
    fn as_dyn(&mut self) -> &mut dyn Allocator;
}

impl<T: Allocator + 'static> AsDynAllocator for T {
    fn as_dyn(&mut self) -> &mut dyn Allocator {
        self
    }
}

impl<'a> AsDynAllocator for dyn Allocator + 'a {
    fn as_dyn(&mut self) -> &mut dyn Allocator {
        self
    }
}

/// An event loop: every departure (by end, then in start order, as PReMAS's
/// event numbers order them) and arrival at a
/// time, then one decision. `on_start` sees each started job with the
/// time; `after` sees the policy and the allocator after each decision,
/// once the allocator's free nodes are checked against the live grants.
pub(crate) fn event_loop<S: Scheduler + ?Sized, A: AsDynAllocator + ?Sized>(
    s: &mut S,
    alloc: &mut A,
    jobs: &[Job],
    on_start: impl FnMut(&Started, f64),
    after: impl FnMut(&S, &A, Moment),
) {
    event_loop_reordered(s, alloc, jobs, |_| {}, on_start, after);
}

/// [`event_loop`] in which `reorder` may permute the jobs departing at one
/// time (given in start order) before they are handed to the policy.
pub(crate) fn event_loop_reordered<S: Scheduler + ?Sized, A: AsDynAllocator + ?Sized>(
    s: &mut S,
    alloc: &mut A,
    jobs: &[Job],
    mut reorder: impl FnMut(&mut [(f64, usize, Started)]),
    mut on_start: impl FnMut(&Started, f64),
    mut after: impl FnMut(&S, &A, Moment),
) {
    let total = alloc.free_nodes() as u64;
    // (end, start sequence number, grant).
    let mut running: Vec<(f64, usize, Started)> = Vec::new();
    let mut next = 0;
    let mut count = 0;
    let mut started = Vec::new();
    // A time the policy asked to be woken at (its periodic passes), an
    // event of its own as in the simulation engine.
    let mut wakeup: Option<f64> = None;
    loop {
        let t_arr = jobs.get(next).map(|j| j.arrival);
        let t_dep = running.iter().map(|r| r.0).reduce(f64::min);
        let t = match (t_arr, t_dep, wakeup) {
            (None, None, None) => break,
            (a, d, w) => a
                .unwrap_or(f64::INFINITY)
                .min(d.unwrap_or(f64::INFINITY))
                .min(w.unwrap_or(f64::INFINITY)),
        };
        running.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let ending = running.iter().take_while(|r| r.0 == t).count();
        reorder(&mut running[..ending]);
        for (_, _, r) in running.drain(..ending) {
            alloc.release(&r.grant).unwrap();
            s.departed(&r.job, t);
        }
        while jobs.get(next).is_some_and(|j| j.arrival == t) {
            s.submit(jobs[next], t).unwrap();
            next += 1;
        }
        started.clear();
        s.schedule(t, alloc.as_dyn(), &mut started).unwrap();
        for st in started.drain(..) {
            on_start(&st, t);
            running.push((t + st.job.service, count, st));
            count += 1;
        }
        wakeup = s.next_wakeup().filter(|&w| w > t);
        let held: u64 = running.iter().map(|r| r.2.grant.granted_nodes()).sum();
        assert_eq!(alloc.free_nodes() as u64 + held, total);
        let moment = Moment {
            t,
            submitted: next,
            started: count,
            running: running.len(),
        };
        after(s, alloc, moment);
    }
}

/// [`event_loop`] that also fails if jobs are left waiting on an idle
/// machine; `observe` sees the policy after each decision. Returns
/// (id, start) in start order.
pub(crate) fn run<S: Scheduler + ?Sized>(
    s: &mut S,
    alloc: &mut dyn Allocator,
    jobs: &[Job],
    mut observe: impl FnMut(&S, f64),
) -> Vec<(u64, f64)> {
    let mut out = Vec::new();
    event_loop(
        s,
        alloc,
        jobs,
        |st, t| out.push((st.job.id, t)),
        |s, _, m| {
            observe(s, m.t);
            assert!(
                m.submitted < jobs.len() || m.running > 0 || s.queue_len() == 0,
                "jobs left waiting on an idle machine"
            );
        },
    );
    out
}

/// Start times by job id (jobs numbered from 1).
fn starts(policy: &str, n: u32, jobs: &[Job]) -> Vec<f64> {
    let mut alloc = paging(n);
    let mut s = registry::build(policy, alloc.topology()).unwrap();
    let mut out = run(s.as_mut(), alloc.as_mut(), jobs, |_, _| {});
    out.sort_by_key(|o| o.0);
    out.into_iter().map(|o| o.1).collect()
}

/// The ids `policy` starts at time 0 with `jobs` queued, in start order.
fn first_pass(policy: &str, n: u32, jobs: &[Job], now: f64) -> Vec<u64> {
    let mut alloc = paging(n);
    let mut s = registry::build(policy, alloc.topology()).unwrap();
    for j in jobs {
        s.submit(*j, j.arrival).unwrap();
    }
    let mut started = Vec::new();
    s.schedule(now, alloc.as_mut(), &mut started).unwrap();
    started.iter().map(|s| s.job.id).collect()
}

/// Four jobs on 4 nodes where EASY and conservative backfilling differ:
/// J1 (3 nodes, 10 s) runs; J2 (3 nodes) is reserved for 10 with one extra
/// node; J3 (4 nodes, 5 s) is reserved for 15 by conservative; J4 (1
/// node, 20 s) fits now on the extra node. EASY starts J4 at once (it
/// delays only J3, which has no reservation under EASY), so J3 waits for
/// J4's end at 20; conservative protects J3's reservation at 15 and puts
/// J4 after it, at 20.
#[test]
fn conservative_and_easy_differ_on_the_four_job_example() {
    let jobs = [
        job(1, 0.0, 3, 10.0, None),
        job(2, 0.0, 3, 5.0, None),
        job(3, 0.0, 4, 5.0, None),
        job(4, 0.0, 1, 20.0, None),
    ];
    assert_eq!(starts("easy-backfilling", 2, &jobs), [0.0, 10.0, 20.0, 0.0]);
    for compression in ["queue", "rebuild"] {
        let policy = format!("conservative-backfilling[compression={compression}]");
        assert_eq!(
            starts(&policy, 2, &jobs),
            [0.0, 10.0, 15.0, 20.0],
            "{policy}"
        );
    }
    // Mean waits: EASY (0 + 10 + 20 + 0)/4 = 7.5, conservative 11.25.
}

/// Conservative reservations as the worked example of the docs: every
/// job's reservation right after the first pass.
#[test]
fn conservative_reservations_of_the_four_job_example() {
    let jobs = [
        job(1, 0.0, 3, 10.0, None),
        job(2, 0.0, 3, 5.0, None),
        job(3, 0.0, 4, 5.0, None),
        job(4, 0.0, 1, 20.0, None),
    ];
    let mut alloc = paging(2);
    let mut s = ConservativeBackfilling::new(QueueOptions::default(), Compression::Rebuild);
    for j in jobs {
        s.submit(j, 0.0).unwrap();
    }
    let mut started = Vec::new();
    s.schedule(0.0, alloc.as_mut(), &mut started).unwrap();
    assert_eq!(started.len(), 1);
    let got: Vec<Option<f64>> = (1..=4).map(|id| s.reservation(id)).collect();
    assert_eq!(got, [None, Some(10.0), Some(15.0), Some(20.0)]);
    assert_eq!(s.head().map(|j| j.id), Some(2));
}

/// An early end compresses the plan; the two compression rules differ.
/// 4 nodes. R1 (2 nodes, estimate 20, runs 5) and R2 (2 nodes, 10 s) run.
/// A (4 nodes, 10 s) is reserved for 20, B (2 nodes, 10 s) for 10, C (2
/// nodes, 10 s) for 30. R1 ends at 5. Rebuilt in order of reserved
/// starts: B to 5, A to 15 (B ends then), C to 25 (after A). In queue
/// order: A cannot move while B holds [10, 20); B moves to 5, C to 10 (R2
/// ends then); a second pass moves nothing (A's slot is held by B and C
/// until 20).
#[test]
fn early_end_compresses_by_rebuilding_or_in_queue_order() {
    let jobs = [
        job(10, 0.0, 2, 5.0, Some(20.0)),
        job(11, 0.0, 2, 10.0, None),
        job(1, 0.0, 4, 10.0, None),
        job(2, 0.0, 2, 10.0, None),
        job(3, 0.0, 2, 10.0, None),
    ];
    for (compression, want) in [
        (Compression::Rebuild, [15.0, 5.0, 25.0]),
        (Compression::Queue, [20.0, 5.0, 10.0]),
    ] {
        let mut alloc = paging(2);
        let mut s = ConservativeBackfilling::new(QueueOptions::default(), compression);
        let mut at_zero = None;
        let out = run(&mut s, alloc.as_mut(), &jobs, |s, t| {
            if t == 0.0 {
                at_zero = Some([1, 2, 3].map(|id| s.reservation(id)));
            }
        });
        assert_eq!(
            at_zero,
            Some([Some(20.0), Some(10.0), Some(30.0)]),
            "{compression:?}"
        );
        let start = |id| out.iter().find(|o| o.0 == id).map_or(f64::NAN, |o| o.1);
        assert_eq!([1, 2, 3].map(start), want, "{compression:?}");
    }
}

/// The hand-worked queue of docs/baselines.md#queue-orders: five jobs
/// (id, arrival, nodes, estimate) = (1, 1000, 8, 100), (2, 1010, 1, 20),
/// (3, 1020, 4, 400), (4, 1030, 2, 50), (5, 1040, 16, 10), all waiting at
/// t = 1100 on an idle 64-node machine, so strict priority starts them
/// all in its order.
#[test]
fn every_order_on_the_hand_worked_queue() {
    let jobs = [
        job(1, 1000.0, 8, 1.0, Some(100.0)),
        job(2, 1010.0, 1, 1.0, Some(20.0)),
        job(3, 1020.0, 4, 1.0, Some(400.0)),
        job(4, 1030.0, 2, 1.0, Some(50.0)),
        job(5, 1040.0, 16, 1.0, Some(10.0)),
    ];
    for (order, expect) in [
        ("fcfs", [1, 2, 3, 4, 5]),
        ("smallest", [2, 4, 3, 1, 5]),
        ("largest", [5, 1, 3, 4, 2]),
        ("widest", [5, 1, 3, 4, 2]),
        ("shortest", [5, 2, 4, 1, 3]),
        ("sjf", [5, 2, 4, 1, 3]),
        ("longest", [3, 1, 4, 2, 5]),
        // n·r = 800, 20, 1600, 100, 160
        ("least-work", [2, 4, 5, 1, 3]),
        ("most-work", [3, 1, 5, 4, 2]),
        // (w/r)³·n with w = 100, 90, 80, 70, 60: 8, 91.125, 0.032, 5.488, 3456
        ("wfp3", [5, 2, 1, 4, 3]),
        // w/(log₂ n · r): 0.333, +∞ (one node), 0.1, 1.4, 1.5
        ("unicep", [2, 5, 4, 1, 3]),
        // log₁₀ r · n + 870 log₁₀ s: 2626.0, 2615.06, 2627.89, 2624.57, 2640.82
        ("f1", [2, 4, 1, 3, 5]),
        // −((−1 − s)/r)³·n: 8024.0, 129170.5, 66.5, 17534.6, 1.8e7
        ("wfp3-rlscheduler", [3, 1, 4, 2, 5]),
        // (1 + s)/(log₂(n + 1e−15)·r): 3.337, ≈3e16, 1.276, 20.62, 26.03
        ("unicep-rlscheduler", [3, 1, 4, 5, 2]),
    ] {
        let got = first_pass(&format!("priority[order={order}]"), 6, &jobs, 1100.0);
        assert_eq!(got, expect, "{order}");
    }
}

/// The scores of the hand-worked queue, to the digits above.
#[test]
fn hand_worked_scores() {
    let j = |arrival, count, est| (job(0, arrival, count, 1.0, None), est);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    let cases = [
        (Order::Wfp3, j(1010.0, 1, 20.0), -91.125),
        (Order::Wfp3, j(1030.0, 2, 50.0), -5.488),
        (Order::Unicep, j(1000.0, 8, 100.0), -1.0 / 3.0),
        (Order::F1, j(1000.0, 8, 100.0), 2626.0),
        (
            Order::Wfp3Rlscheduler,
            j(1000.0, 8, 100.0),
            8.0 * 10.01f64.powi(3),
        ),
        (
            Order::UnicepRlscheduler,
            j(1030.0, 2, 50.0),
            (1031.0 - 1e-15) / 50.0,
        ),
    ];
    for (order, (jb, est), want) in cases {
        let got = order.score(&jb, est, 1100.0);
        assert!(close(got, want), "{order}: {got} vs {want}");
    }
    // The undefined cases take the documented limits.
    let serial = job(0, 0.0, 1, 1.0, None);
    assert_eq!(Order::Unicep.score(&serial, 5.0, 3.0), f64::NEG_INFINITY);
    assert_eq!(Order::Unicep.score(&serial, 5.0, 0.0), 0.0);
    assert_eq!(Order::Wfp3.score(&serial, 0.0, 3.0), f64::NEG_INFINITY);
    assert_eq!(Order::Wfp3.score(&serial, 0.0, 0.0), 0.0);
    // F1 at s = 0 and r = 0 uses log₁₀ 0.1 = −1 for both: −1·1 − 870.
    assert_eq!(Order::F1.score(&serial, 0.0, 0.0), -871.0);
    for (_, o) in ORDERS {
        assert!(!o.score(&serial, 0.0, 0.0).is_nan(), "{o}");
        assert_eq!(o.to_string().parse::<Order>().unwrap(), o);
    }
}

#[test]
fn unknown_orders_and_values_are_typed_errors() {
    let machine: Topology = "hypercube:3".parse().unwrap();
    for spec in [
        "priority[order=wfp4]",
        "easy-backfilling[order=]",
        "conservative-backfilling[order=WFP3]",
        "rlscheduler[order=f2]",
    ] {
        let e = registry::build(spec, &machine).unwrap_err();
        assert!(matches!(e, PolicyBuildError::Spec(_)), "{spec}: {e}");
        let text = e.to_string();
        assert!(
            text.contains("unknown queue order") && text.contains("unicep-rlscheduler"),
            "{text}"
        );
    }
    for (spec, key) in [
        ("priority[estimates=guess]", "estimates"),
        ("easy-backfilling[underestimates=kill]", "underestimates"),
        ("conservative-backfilling[compression=fast]", "compression"),
        ("rlscheduler[backfill=maybe]", "backfill"),
    ] {
        let e = registry::build(spec, &machine).unwrap_err().to_string();
        assert!(e.contains(key), "{spec}: {e}");
    }
}

#[test]
fn canonical_names_keep_only_what_differs_from_the_defaults() {
    let machine: Topology = "hypercube:3".parse().unwrap();
    for (text, canonical) in [
        ("priority[order=fcfs]", "priority"),
        (
            "easy-backfilling[order=wfp3]",
            "easy-backfilling[order=wfp3]",
        ),
        (
            "easy-backfilling[estimates=user,underestimates=keep]",
            "easy-backfilling",
        ),
        (
            "conservative-backfilling[rotate=true,compression=queue,order=f1,estimates=exact]",
            "conservative-backfilling[order=f1,compression=queue,estimates=exact,rotate=true]",
        ),
        (
            "rlscheduler[backfill=true,order=wfp3-rlscheduler,underestimates=raise]",
            "rlscheduler[order=wfp3-rlscheduler,backfill=true,underestimates=raise]",
        ),
    ] {
        assert_eq!(registry::build(text, &machine).unwrap().name(), canonical);
    }
}

/// Estimates feed EASY's admission. 4 nodes: J1 (2 nodes, 10 s) runs, J2
/// (4 nodes) is reserved for 10 with no extra nodes; J3 (2 nodes) runs 20 s.
#[test]
fn estimates_decide_what_easy_backfills() {
    let with = |estimate| {
        [
            job(1, 0.0, 2, 10.0, None),
            job(2, 0.0, 4, 1.0, None),
            job(3, 0.0, 2, 20.0, estimate),
        ]
    };
    // Its estimate 5 is below its run time: kept, it backfills (and then
    // delays J2); raised or exact, it is 20 and waits.
    assert_eq!(
        first_pass("easy-backfilling", 2, &with(Some(5.0)), 0.0),
        [1, 3]
    );
    for p in [
        "easy-backfilling[underestimates=raise]",
        "easy-backfilling[estimates=exact]",
    ] {
        assert_eq!(first_pass(p, 2, &with(Some(5.0)), 0.0), [1], "{p}");
    }
    // Missing (SWF −1): the run time, 20: waits.
    assert_eq!(first_pass("easy-backfilling", 2, &with(None), 0.0), [1]);
    // A short job over-estimated at 50 waits on user estimates, backfills on exact.
    let short = [
        job(1, 0.0, 2, 10.0, None),
        job(2, 0.0, 4, 1.0, None),
        job(3, 0.0, 2, 5.0, Some(50.0)),
    ];
    assert_eq!(first_pass("easy-backfilling", 2, &short, 0.0), [1]);
    assert_eq!(
        first_pass("easy-backfilling[estimates=exact]", 2, &short, 0.0),
        [1, 3]
    );
    // The same for conservative backfilling.
    assert_eq!(first_pass("conservative-backfilling", 2, &short, 0.0), [1]);
    assert_eq!(
        first_pass("conservative-backfilling[estimates=exact]", 2, &short, 0.0),
        [1, 3]
    );
}

/// Orders change EASY's head and candidates: with SJF the 4-node job with
/// the shortest estimate becomes the head.
#[test]
fn easy_with_an_order_reserves_for_the_first_job_in_it() {
    let jobs = [
        job(1, 0.0, 2, 10.0, None),
        job(2, 0.0, 4, 50.0, None),
        job(3, 0.0, 2, 20.0, None),
    ];
    // FCFS: J1 starts, J2 is the head (shadow 10), J3 (20 s) would delay it.
    assert_eq!(first_pass("easy-backfilling", 2, &jobs, 0.0), [1]);
    // SJF: J1 (10) then J3 (20) start; J2 is last.
    assert_eq!(
        first_pass("easy-backfilling[order=sjf]", 2, &jobs, 0.0),
        [1, 3]
    );
    assert_eq!(first_pass("priority[order=sjf]", 2, &jobs, 0.0), [1, 3]);
    assert_eq!(first_pass("priority[order=largest]", 2, &jobs, 0.0), [2]);
}

/// Two running jobs estimated to end together at the head's shadow time
/// both free their nodes then. 8 nodes: A (4 nodes) and B (2 nodes) run
/// from 0 to 100; C (6 nodes) arrives at 1 and is reserved for 100, when 8
/// nodes are free, 2 more than it needs; D (1 node, 500 s) arrives at 2
/// and backfills on one of them. Waits 0, 0, 99, 0 (mean 24.75) whichever
/// of A and B is listed first. Counting only the first job to end at 100
/// would leave no extra node when A is first, and D would wait until 100.
#[test]
fn easy_counts_every_job_ending_at_the_shadow_time() {
    let (a, b) = ((4, 100.0), (2, 100.0));
    for (first, second) in [(a, b), (b, a)] {
        let jobs = [
            job(1, 0.0, first.0, first.1, None),
            job(2, 0.0, second.0, second.1, None),
            job(3, 1.0, 6, 10.0, None),
            job(4, 2.0, 1, 500.0, None),
        ];
        let got = starts("easy-backfilling", 3, &jobs);
        assert_eq!(got, [0.0, 0.0, 100.0, 2.0], "{first:?} first");
        let wait: f64 = jobs.iter().zip(&got).map(|(j, s)| s - j.arrival).sum();
        assert_eq!(wait / 4.0, 24.75);
    }
}

/// Running jobs as (estimated end, nodes).
type Ends = Vec<(u32, u64)>;

/// Running jobs with ends from a few values, so that ties are common, and
/// the same jobs in another order.
fn running_twice() -> impl Strategy<Value = (Ends, Ends)> {
    proptest::collection::vec((0u32..6, 1u64..6), 0..10)
        .prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle()))
}

/// Departures at one time in start order, reversed, or rotated.
fn reorder_by(how: u8) -> impl FnMut(&mut [(f64, usize, Started)]) {
    move |group| match how {
        0 => {}
        1 => group.reverse(),
        _ => group.rotate_left(1.min(group.len())),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// EASY's reservation is the brute-force one (the first estimated end
    /// at which the free nodes and those of every job ended by then reach
    /// the need; extra: all nodes free then beyond the need), in whatever
    /// order the running jobs were reported.
    #[test]
    fn easy_reservation_does_not_depend_on_the_order_of_the_running_jobs(
        (running, shuffled) in running_twice(),
        need in 1u64..30,
        free in 0u64..6,
        now in 0u32..3,
    ) {
        let now = f64::from(now);
        let ends = |v: &[(u32, u64)]| {
            let mut r = crate::easy::RunningEstimates::default();
            for (id, &(end, nodes)) in v.iter().enumerate() {
                r.push(id as u64, f64::from(end), nodes);
            }
            r
        };
        let freed_by = |t: f64| -> u64 {
            running.iter().filter(|r| f64::from(r.0).max(now) <= t).map(|r| r.1).sum()
        };
        let mut times: Vec<f64> = running.iter().map(|r| f64::from(r.0).max(now)).collect();
        times.sort_by(f64::total_cmp);
        let want = times
            .iter()
            .find(|&&t| free + freed_by(t) >= need)
            .map_or((f64::INFINITY, 0), |&t| (t, free + freed_by(t) - need));
        for v in [&running, &shuffled] {
            let r = ends(v).reservation(need, free, now);
            prop_assert_eq!((r.shadow(), r.extra()), want, "{:?}", v);
        }
    }

    /// The order in which the jobs ending at one time are reported does
    /// not change any start, under EASY with every order, conservative
    /// backfilling with both compressions, and the queue policies.
    /// Integer times from a few values and round estimates (30 or 60 s,
    /// never below the run time) make simultaneous ends, estimated and
    /// actual, common.
    #[test]
    fn simultaneous_ends_in_any_order_give_the_same_schedule(
        v in proptest::collection::vec((0u32..3, 1u32..=8, 1u32..4, 0u32..3), 1..60),
        how in 1u8..3,
        order in 0usize..ORDERS.len(),
    ) {
        let mut t = 0.0;
        let jobs: Vec<Job> = v
            .iter()
            .enumerate()
            .map(|(i, &(dt, n, service, extra))| {
                t += f64::from(dt);
                let service = f64::from(service * 10);
                job(i as u64 + 1, t, n, service, Some(30.0 * f64::from(1 + extra % 2)))
            })
            .collect();
        let order = ORDERS[order].0;
        for policy in [
            format!("easy-backfilling[order={order}]"),
            format!("conservative-backfilling[order={order},compression=rebuild]"),
            format!("conservative-backfilling[order={order},compression=queue]"),
            format!("priority[order={order}]"),
            "fcfs".to_owned(),
        ] {
            let schedule = |how| {
                let mut alloc = paging(3);
                let mut s = registry::build(&policy, alloc.topology()).unwrap();
                let mut out = Vec::new();
                event_loop_reordered(
                    s.as_mut(),
                    alloc.as_mut(),
                    &jobs,
                    reorder_by(how),
                    |st, t| out.push((st.job.id, t)),
                    |_, _, _| {},
                );
                out.sort_by_key(|o| o.0);
                out
            };
            let want = schedule(0);
            prop_assert_eq!(want.len(), jobs.len());
            prop_assert_eq!(schedule(how), want, "{}", policy);
        }
    }
}

/// RLScheduler's simulator keeps a chosen head until it starts; priority
/// chooses again at every pass. 4 nodes: J1 (4 nodes, 10 s) runs from 0;
/// J2 (4 nodes, 50 s) arrives at 1 and is chosen; J3 (4 nodes, 5 s)
/// arrives at 2. At 10, SJF by priority starts J3, RLScheduler J2.
#[test]
fn rlscheduler_keeps_its_chosen_head() {
    let jobs = [
        job(1, 0.0, 4, 10.0, None),
        job(2, 1.0, 4, 50.0, None),
        job(3, 2.0, 4, 5.0, None),
    ];
    assert_eq!(starts("priority[order=sjf]", 2, &jobs), [0.0, 15.0, 10.0]);
    assert_eq!(
        starts("rlscheduler[order=sjf]", 2, &jobs),
        [0.0, 10.0, 60.0]
    );
}

/// RLScheduler's backfilling: strictly before the shadow time and no
/// extra-nodes rule. 4 nodes: J1 (3 nodes, 10 s) runs; J2 (3 nodes) waits
/// with shadow 10 and one extra node.
#[test]
fn rlscheduler_backfills_strictly_before_the_shadow_without_extra_nodes() {
    for (service, easy, rl) in [
        (20.0, vec![1, 3], vec![1]), // past the shadow: EASY uses the extra node
        (10.0, vec![1, 3], vec![1]), // ends at the shadow: EASY yes, strictly before: no
        (9.5, vec![1, 3], vec![1, 3]),
    ] {
        let jobs = [
            job(1, 0.0, 3, 10.0, None),
            job(2, 0.0, 3, 1.0, None),
            job(3, 0.0, 1, service, None),
        ];
        assert_eq!(
            first_pass("easy-backfilling", 2, &jobs, 0.0),
            easy,
            "{service}"
        );
        assert_eq!(
            first_pass("rlscheduler[backfill=true]", 2, &jobs, 0.0),
            rl,
            "{service}"
        );
        assert_eq!(first_pass("rlscheduler", 2, &jobs, 0.0), [1], "{service}");
    }
}

/// RLScheduler's shadow time is fixed when the head is first refused.
/// 4 nodes: J0 (1 node, estimate 100, runs 3) and J1 (2 nodes, 10 s) run;
/// J2 (4 nodes) waits: shadow 100 (J1's end frees 3, J0's the fourth).
/// J0 ends at 3, J3 (1 node, estimate 50) arrives at 3: 3 + 50 < 100, so
/// RLScheduler backfills it; EASY recomputes the shadow (10, no extra
/// node) and does not.
#[test]
fn rlscheduler_keeps_the_first_shadow_time() {
    let jobs = [
        job(10, 0.0, 1, 3.0, Some(100.0)),
        job(11, 0.0, 2, 10.0, None),
        job(2, 0.0, 4, 1.0, None),
        job(3, 3.0, 1, 50.0, None),
    ];
    let at = |policy: &str| {
        let mut alloc = paging(2);
        let mut s = registry::build(policy, alloc.topology()).unwrap();
        run(s.as_mut(), alloc.as_mut(), &jobs, |_, _| {})
            .into_iter()
            .find(|o| o.0 == 3)
            .map(|o| o.1)
    };
    assert_eq!(at("rlscheduler[backfill=true]"), Some(3.0));
    // EASY: J2 starts at 10 (J1's end) and J3 after it ends at 11.
    assert_eq!(at("easy-backfilling"), Some(11.0));
}

/// The exact-estimate conservative schedule by brute force: each job, in
/// arrival order, at the earliest time t ≥ its arrival among its arrival
/// and the ends of the jobs placed before it such that the jobs placed
/// before it leave enough nodes free over [t, t + run time).
fn conservative_oracle(jobs: &[Job], nodes: u64) -> Vec<f64> {
    let mut placed: Vec<(f64, f64, u64)> = Vec::new();
    for j in jobs {
        let n = j.shape.node_count();
        let mut candidates: Vec<f64> = placed
            .iter()
            .map(|p| p.1)
            .filter(|&e| e > j.arrival)
            .collect();
        candidates.push(j.arrival);
        candidates.sort_by(f64::total_cmp);
        let fits = |t: f64| {
            let end = t + j.service;
            // The load is a step function changing at starts and ends: check
            // t and every start inside the window.
            let mut probes = vec![t];
            probes.extend(placed.iter().map(|p| p.0).filter(|&s| s > t && s < end));
            probes.iter().all(|&u| {
                let used: u64 = placed
                    .iter()
                    .filter(|p| p.0 <= u && u < p.1)
                    .map(|p| p.2)
                    .sum();
                used + n <= nodes
            })
        };
        let t = candidates.into_iter().find(|&t| fits(t)).unwrap();
        placed.push((t, t + j.service, n));
    }
    placed.into_iter().map(|p| p.0).collect()
}

/// Random job streams on 16 nodes (ids from 1, in arrival order).
fn stream(max_nodes: u32) -> impl Strategy<Value = Vec<(u32, u32, u32, u32)>> {
    proptest::collection::vec((0u32..4, 1..=max_nodes, 1u32..8, 0u32..4), 1..40)
}

fn jobs_of(v: &[(u32, u32, u32, u32)], over: bool) -> Vec<Job> {
    let mut t = 0.0;
    v.iter()
        .enumerate()
        .map(|(i, &(dt, n, service, extra))| {
            t += f64::from(dt);
            let est = over.then(|| f64::from(service + extra * 3));
            job(i as u64 + 1, t, n, f64::from(service), est)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// With exact estimates nothing ends early, and conservative
    /// backfilling is the brute-force plan exactly.
    #[test]
    fn conservative_with_exact_estimates_is_the_brute_force_plan(v in stream(16)) {
        let jobs = jobs_of(&v, false);
        let want = conservative_oracle(&jobs, 16);
        for compression in ["queue", "rebuild"] {
            let got = starts(&format!("conservative-backfilling[compression={compression}]"), 4, &jobs);
            prop_assert_eq!(&got, &want, "{}", compression);
        }
    }

    /// The guarantee: on a non-contiguous machine, with exact estimates or
    /// over-estimates, no job starts later than its first reservation,
    /// whatever the order and the compression rule.
    #[test]
    fn no_job_starts_after_its_first_reservation(
        v in stream(16),
        over in any::<bool>(),
        order in 0usize..ORDERS.len(),
        rebuild in any::<bool>(),
    ) {
        let jobs = jobs_of(&v, over);
        let options = QueueOptions { order: ORDERS[order].1, ..QueueOptions::default() };
        let compression = if rebuild { Compression::Rebuild } else { Compression::Queue };
        let mut s = ConservativeBackfilling::new(options, compression);
        let mut alloc = paging(4);
        // The reservation each job holds after the pass that placed it.
        let mut first = vec![None; jobs.len() + 1];
        let out = run(&mut s, alloc.as_mut(), &jobs, |s, _| {
            for j in &jobs {
                let slot = &mut first[j.id as usize];
                if slot.is_none() {
                    *slot = s.reservation(j.id);
                }
            }
        });
        prop_assert_eq!(out.len(), jobs.len());
        for &(id, start) in &out {
            let j = &jobs[id as usize - 1];
            prop_assert!(start >= j.arrival);
            // Started in the pass that placed it: at its arrival pass.
            let reserved = first[id as usize].unwrap_or(start);
            prop_assert!(start <= reserved, "job {} reserved {} started {}", id, reserved, start);
        }
    }
}

/// How an independent oracle compares two jobs under an order: `Some`
/// when it decides (Less = the first goes first), `None` when the two
/// are too close for floating point to decide.
fn oracle(order: Order, a: &Job, b: &Job, now: f64) -> Option<core::cmp::Ordering> {
    use core::cmp::Ordering;
    let est = |j: &Job| j.estimate.unwrap_or(j.service) as u128;
    let (na, nb) = (a.shape.node_count() as u128, b.shape.node_count() as u128);
    let (ra, rb) = (est(a), est(b));
    // Exact: integer inputs, products in u128.
    let exact = |x: u128, y: u128| Some(x.cmp(&y));
    // Approximate: the paper's utility (higher first) within 1e-9.
    let approx = |x: f64, y: f64| {
        if (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0) {
            None
        } else {
            Some(y.total_cmp(&x))
        }
    };
    let wait = |j: &Job| (now - j.arrival) as u128;
    let decided = match order {
        Order::Smallest => exact(na, nb),
        Order::Largest | Order::Widest => exact(nb, na),
        Order::Shortest | Order::Sjf => exact(ra, rb),
        Order::Longest => exact(rb, ra),
        Order::LeastWork => exact(na * ra, nb * rb),
        Order::MostWork => exact(nb * rb, na * ra),
        // (w/r)³·n higher first: compare w_b³·n_b·r_a³ with w_a³·n_a·r_b³.
        Order::Wfp3 => exact(
            wait(b).pow(3) * nb * ra.pow(3),
            wait(a).pow(3) * na * rb.pow(3),
        ),
        // ((1 + s)/r)³·n lower first.
        Order::Wfp3Rlscheduler => {
            let s = |j: &Job| 1 + j.arrival as u128;
            exact(s(a).pow(3) * na * rb.pow(3), s(b).pow(3) * nb * ra.pow(3))
        }
        Order::Unicep => {
            let u = |j: &Job, n: u128, r: u128| {
                let w = now - j.arrival;
                if n == 1 {
                    if w > 0.0 { f64::INFINITY } else { 0.0 }
                } else {
                    w / ((n as f64).log2() * r as f64)
                }
            };
            let (x, y) = (u(a, na, ra), u(b, nb, rb));
            if x.is_infinite() || y.is_infinite() {
                if x == y {
                    Some(Ordering::Equal)
                } else {
                    Some(y.total_cmp(&x))
                }
            } else {
                approx(x, y)
            }
        }
        Order::F1 => {
            let f = |j: &Job, n: u128, r: u128| {
                -((r as f64).log10() * n as f64 + 870.0 * j.arrival.log10())
            };
            approx(f(a, na, ra), f(b, nb, rb))
        }
        // Checked by hand above; submission order is checked apart.
        _ => return None,
    };
    decided.map(|o| {
        o.then(a.arrival.total_cmp(&b.arrival))
            .then(a.id.cmp(&b.id))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Every order puts a random queue in the order an independent oracle
    /// gives: exact integer comparisons for the count, estimate, work and
    /// WFP3 orders, the papers' utilities in floating point (pairs closer
    /// than 1e-9 skipped) for UNICEP and F1.
    #[test]
    fn orders_agree_with_an_independent_oracle(
        v in proptest::collection::vec((1u32..1000, 1u32..64, 1u32..1000), 2..30),
        which in 0usize..ORDERS.len(),
    ) {
        let order = ORDERS[which].1;
        let now = 2000.0;
        let jobs: Vec<Job> = v
            .iter()
            .enumerate()
            .map(|(i, &(s, n, r))| job(i as u64 + 1, f64::from(s), n, 1.0, Some(f64::from(r))))
            .collect();
        let mut ranking = crate::order::Ranking::default();
        ranking.rank(order, now, &crate::estimates::Estimates::default(), jobs.iter());
        let ranked: Vec<&Job> = ranking.indices().map(|i| &jobs[i]).collect();
        if order.is_fcfs() {
            prop_assert!(ranked.iter().zip(&jobs).all(|(a, b)| a.id == b.id));
        }
        for (x, a) in ranked.iter().enumerate() {
            for b in &ranked[x + 1..] {
                if let Some(o) = oracle(order, a, b, now) {
                    prop_assert_ne!(o, core::cmp::Ordering::Greater, "{}: {:?} before {:?}", order, a, b);
                }
            }
        }
    }
}

/// Random cube jobs on Q4 (ids from 1, in arrival order): (gap, dim,
/// service, estimate in quarters of the service, 1..=8: under- and
/// over-estimates).
fn cube_stream() -> impl Strategy<Value = Vec<(u32, u32, u32, u32)>> {
    proptest::collection::vec((0u32..4, 0u32..4, 1u32..10, 1u32..=8), 1..60)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    /// The compression shortcuts (search only before the old start, leave
    /// a job that cannot move in place) give the schedule of the literal
    /// definitions, with early ends, late ends, and a buddy allocator that
    /// refuses due jobs (fragmentation), for every order and both rules.
    /// Each pass of both also checks the plan (`check_plan`).
    #[test]
    fn compression_shortcuts_give_the_literal_schedule(
        v in cube_stream(),
        order in 0usize..ORDERS.len(),
        rebuild in any::<bool>(),
        contiguous in any::<bool>(),
    ) {
        let mut t = 0.0;
        let jobs: Vec<Job> = v
            .iter()
            .enumerate()
            .map(|(i, &(dt, dim, service, quarters))| {
                t += f64::from(dt);
                let est = f64::from(service * quarters) / 4.0;
                crate::testing::cube_job(i as u64 + 1, dim, t, f64::from(service))
                    .with_estimate(Some(est))
            })
            .collect();
        let options = QueueOptions { order: ORDERS[order].1, ..QueueOptions::default() };
        let compression = if rebuild { Compression::Rebuild } else { Compression::Queue };
        let schedule = |mut s: ConservativeBackfilling| {
            let mut alloc: Box<dyn Allocator> = if contiguous {
                Box::new(crate::testing::TestAlloc::buddy(4).unwrap())
            } else {
                paging(4)
            };
            run(&mut s, alloc.as_mut(), &jobs, |_, _| {})
        };
        let fast = schedule(ConservativeBackfilling::new(options, compression));
        let literal = schedule(ConservativeBackfilling::reference(options, compression));
        prop_assert_eq!(fast.len(), jobs.len());
        prop_assert_eq!(fast, literal);
    }
}
