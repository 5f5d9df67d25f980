//! Behaviour tests of the online policies on hand-computed cases.

use partalloc_allocators::{Allocator, Partition};
use partalloc_workload::{Job, JobShape};

use crate::testing::{TestAlloc, cube_job};
use crate::{Scheduler, Started, registry};

fn run_once(s: &mut dyn Scheduler, alloc: &mut dyn Allocator, jobs: &[Job]) -> Vec<Started> {
    for j in jobs {
        s.submit(*j, j.arrival).unwrap();
    }
    let mut started = Vec::new();
    s.schedule(0.0, alloc, &mut started).unwrap();
    started
}

fn placed(started: &[Started]) -> Vec<(u64, String)> {
    started
        .iter()
        .map(|s| (s.job.id, s.grant.partition().to_string()))
        .collect()
}

fn nodes(s: &Started) -> Vec<u32> {
    let Partition::Subcube(c) = s.grant.partition() else {
        panic!("not a subcube");
    };
    c.nodes().collect()
}

/// The Scan trace of docs/baselines.md#scan: Q_3, bitmap buddy, all jobs at t = 0 in the order
/// J1(d2), J2(d0), J3(d2), J4(d1), J5(d0), J6(d3).
fn trace() -> Vec<Job> {
    [(1, 2), (2, 0), (3, 2), (4, 1), (5, 0), (6, 3)]
        .iter()
        .map(|&(id, d)| cube_job(id, d, 0.0, 1.0))
        .collect()
}

#[test]
fn scan_up_trace_of_baselines_c() {
    let mut alloc = TestAlloc::buddy(3).unwrap();
    let topo = alloc.topology().clone();
    let mut scan = registry::build("scan", &topo).unwrap();
    let started = run_once(scan.as_mut(), &mut alloc, &trace());
    let got: Vec<(u64, Vec<u32>)> = started.iter().map(|s| (s.job.id, nodes(s))).collect();
    assert_eq!(
        got,
        vec![
            (2, vec![0]),
            (5, vec![1]),
            (4, vec![2, 3]),
            (1, vec![4, 5, 6, 7]),
        ]
    );
    // Blocked at J3 in the class-2 visit.
    assert_eq!(scan.head().map(|j| j.id), Some(3));
    assert_eq!(scan.queue_len(), 2);
}

#[test]
fn fcfs_trace_of_baselines_c() {
    let mut alloc = TestAlloc::buddy(3).unwrap();
    let topo = alloc.topology().clone();
    let mut fcfs = registry::build("fcfs", &topo).unwrap();
    let started = run_once(fcfs.as_mut(), &mut alloc, &trace());
    let got: Vec<(u64, Vec<u32>)> = started.iter().map(|s| (s.job.id, nodes(s))).collect();
    assert_eq!(got, vec![(1, vec![0, 1, 2, 3]), (2, vec![4])]);
    assert_eq!(fcfs.head().map(|j| j.id), Some(3));
}

#[test]
fn scan_down_and_pass_rules() {
    // Down from the largest class: J6 (Q_3) takes the whole cube first.
    let mut alloc = TestAlloc::buddy(3).unwrap();
    let topo = alloc.topology().clone();
    let mut scan = registry::build("scan[direction=down]", &topo).unwrap();
    let started = run_once(scan.as_mut(), &mut alloc, &trace());
    assert_eq!(placed(&started), vec![(6, "XXX".to_owned())]);
    assert_eq!(scan.head().map(|j| j.id), Some(1));
}

#[test]
fn scan_same_pass_lets_arrivals_join_the_open_visit() {
    // Q_1: class 0 visit serves J1; J2 (class 0) arrives while the visit
    // is blocked on J3 (class 0, queued before J2).
    for (spec, second) in [("scan", 4), ("scan[arrivals=same-pass]", 2)] {
        let mut alloc = TestAlloc::buddy(1).unwrap();
        let mut scan = registry::build(spec, alloc.topology()).unwrap();
        let mut started = Vec::new();
        for j in [
            cube_job(1, 0, 0.0, 1.0),
            cube_job(3, 0, 0.0, 1.0),
            cube_job(9, 0, 0.0, 1.0),
        ] {
            scan.submit(j, 0.0).unwrap();
        }
        scan.submit(cube_job(4, 1, 0.0, 1.0), 0.0).unwrap();
        scan.schedule(0.0, &mut alloc, &mut started).unwrap();
        // J1 and J3 fill Q_1; the class-0 visit is blocked on J9.
        assert_eq!(placed(&started).len(), 2);
        assert_eq!(scan.head().map(|j| j.id), Some(9));
        // J2 (class 0) arrives during the open visit.
        scan.submit(cube_job(2, 0, 0.5, 1.0), 0.5).unwrap();
        for s in std::mem::take(&mut started) {
            alloc.release(&s.grant).unwrap();
            scan.departed(&s.job, 1.0);
        }
        scan.schedule(1.0, &mut alloc, &mut started).unwrap();
        // J9 finishes the visit with J2 (same pass) or the visit ends and
        // class 1 (J4) is next (next pass, J2 waits).
        let ids: Vec<u64> = started.iter().map(|s| s.job.id).collect();
        assert_eq!(ids[0], 9, "{spec}");
        if second == 2 {
            assert_eq!(ids, [9, 2], "{spec}");
        } else {
            assert_eq!(ids, [9], "{spec}");
            assert_eq!(scan.head().map(|j| j.id), Some(4), "{spec}");
        }
    }
}

#[test]
fn static_partitioning_one_server_per_class_and_buddy_layout() {
    let mut alloc = TestAlloc::buddy(3).unwrap();
    let mut s = registry::build("static-partitioning", alloc.topology()).unwrap();
    let jobs = [
        cube_job(1, 0, 0.0, 1.0),
        cube_job(2, 2, 0.0, 1.0),
        cube_job(3, 1, 0.0, 1.0),
        cube_job(4, 2, 0.0, 1.0),
        cube_job(5, 0, 0.0, 1.0),
    ];
    let started = run_once(s.as_mut(), &mut alloc, &jobs);
    // One job per class, classes served 0, 1, 2 (first-fit buddy blocks).
    assert_eq!(
        placed(&started),
        vec![
            (1, "000".to_owned()),
            (3, "01X".to_owned()),
            (2, "1XX".to_owned()),
        ]
    );
    assert_eq!(s.queue_len(), 2);
    // The whole machine has no static partition.
    s.submit(cube_job(6, 3, 0.0, 1.0), 0.0).unwrap();
    let mut more = Vec::new();
    assert!(s.schedule(0.0, &mut alloc, &mut more).is_err());
    assert_eq!(s.queue_len(), 2);
}

#[test]
fn lazy_waits_for_a_running_subcube_then_adds_servers() {
    let mut alloc = TestAlloc::buddy(3).unwrap();
    let mut lazy = registry::build("lazy[threshold=100]", alloc.topology()).unwrap();
    let mut started = Vec::new();
    // J1 (Q_1) starts: |Q_1| = 1 > N_1 = 0.
    lazy.submit(cube_job(1, 1, 0.0, 5.0), 0.0).unwrap();
    lazy.schedule(0.0, &mut alloc, &mut started).unwrap();
    // J2: |Q_1| = 1, N_1 = 1: waits although 6 nodes are free.
    lazy.submit(cube_job(2, 1, 1.0, 5.0), 1.0).unwrap();
    lazy.schedule(1.0, &mut alloc, &mut started).unwrap();
    assert_eq!(started.len(), 1);
    // J3: |Q_1| = 2 > N_1 = 1: the head (J2) gets a new subcube.
    lazy.submit(cube_job(3, 1, 2.0, 5.0), 2.0).unwrap();
    lazy.schedule(2.0, &mut alloc, &mut started).unwrap();
    let ids: Vec<u64> = started.iter().map(|s| s.job.id).collect();
    assert_eq!(ids, [1, 2]);
    assert_eq!(lazy.queue_len(), 1);
    // J1 departs: its partition goes to the head of Q_1 (J3).
    let first = started.remove(0);
    alloc.release(&first.grant).unwrap();
    lazy.departed(&first.job, 5.0);
    started.clear();
    lazy.schedule(5.0, &mut alloc, &mut started).unwrap();
    assert_eq!(placed(&started), vec![(3, "00X".to_owned())]);
}

#[test]
fn lazy_threshold_sets_stop_alloc() {
    let mut alloc = TestAlloc::buddy(2).unwrap();
    let mut lazy = registry::build("lazy[threshold=2]", alloc.topology()).unwrap();
    let mut started = Vec::new();
    // J1 (Q_1) and J2 (Q_0) run; J3 (Q_2) cannot fit.
    for j in [
        cube_job(1, 1, 0.0, 10.0),
        cube_job(2, 0, 0.0, 4.0),
        cube_job(3, 2, 0.0, 1.0),
    ] {
        lazy.submit(j, 0.0).unwrap();
    }
    lazy.schedule(0.0, &mut alloc, &mut started).unwrap();
    assert_eq!(started.iter().map(|s| s.job.id).collect::<Vec<_>>(), [2, 1]);
    let j2 = started.remove(0);
    let j1 = started.remove(0);
    // J4 (Q_0) arrives: |Q_0| = 1 = N_0, it waits for J2's node.
    lazy.submit(cube_job(4, 0, 3.0, 1.0), 3.0).unwrap();
    lazy.schedule(3.0, &mut alloc, &mut started).unwrap();
    assert!(started.is_empty());
    // J2 departs at 4: J3 has waited 4 > 2, stop_alloc is set, the
    // released node is not handed to J4, and J3 still does not fit.
    alloc.release(&j2.grant).unwrap();
    lazy.departed(&j2.job, 4.0);
    lazy.schedule(4.0, &mut alloc, &mut started).unwrap();
    assert!(started.is_empty());
    assert_eq!(lazy.queue_len(), 2);
    // A Q_0 arrival does not pass the job with priority either.
    lazy.submit(cube_job(5, 0, 5.0, 1.0), 5.0).unwrap();
    lazy.schedule(5.0, &mut alloc, &mut started).unwrap();
    assert!(started.is_empty());
    assert_eq!(lazy.head().map(|j| j.id), Some(3));
    // J1 departs at 10: J3 gets the whole cube and stop_alloc clears; the
    // Q_0 jobs wait for it.
    alloc.release(&j1.grant).unwrap();
    lazy.departed(&j1.job, 10.0);
    lazy.schedule(10.0, &mut alloc, &mut started).unwrap();
    assert_eq!(placed(&started), vec![(3, "XX".to_owned())]);
    // J3 departs at 11: Q_2 is empty; Q_0 holds 2 jobs and N_0 = 0, so
    // J4 gets a server; then |Q_0| = 1 = N_0 and J5 waits for J4's node
    // although three nodes are free.
    let j3 = started.remove(0);
    alloc.release(&j3.grant).unwrap();
    lazy.departed(&j3.job, 11.0);
    lazy.schedule(11.0, &mut alloc, &mut started).unwrap();
    assert_eq!(placed(&started), vec![(4, "00".to_owned())]);
    assert_eq!(lazy.head().map(|j| j.id), Some(5));
}

#[test]
fn static_partition_passes_to_the_next_job_of_its_class() {
    let mut alloc = TestAlloc::buddy(2).unwrap();
    let mut s = registry::build("static-partitioning", alloc.topology()).unwrap();
    let mut started = Vec::new();
    for j in [cube_job(1, 1, 0.0, 2.0), cube_job(2, 1, 0.0, 2.0)] {
        s.submit(j, 0.0).unwrap();
    }
    s.schedule(0.0, &mut alloc, &mut started).unwrap();
    assert_eq!(placed(&started), vec![(1, "0X".to_owned())]);
    let j1 = started.remove(0);
    alloc.release(&j1.grant).unwrap();
    s.departed(&j1.job, 2.0);
    s.schedule(2.0, &mut alloc, &mut started).unwrap();
    assert_eq!(placed(&started), vec![(2, "0X".to_owned())]);
}

#[test]
fn mfcfs_skips_a_blocked_head_until_the_threshold() {
    let build = |spec: &str| {
        let alloc = TestAlloc::buddy(2).unwrap();
        let s = registry::build(spec, alloc.topology()).unwrap();
        (alloc, s)
    };
    // J1 (Q_1) runs, J2 (Q_2) blocks, J3 (Q_0) arrives at t = 1.
    for (spec, passes) in [
        ("m-fcfs[threshold=2]", true),
        ("m-fcfs[threshold=0.5]", false),
        ("fcfs", false),
    ] {
        let (mut alloc, mut s) = build(spec);
        let mut started = Vec::new();
        s.submit(cube_job(1, 1, 0.0, 10.0), 0.0).unwrap();
        s.submit(cube_job(2, 2, 0.0, 1.0), 0.0).unwrap();
        s.schedule(0.0, &mut alloc, &mut started).unwrap();
        s.submit(cube_job(3, 0, 1.0, 1.0), 1.0).unwrap();
        s.schedule(1.0, &mut alloc, &mut started).unwrap();
        let ids: Vec<u64> = started.iter().map(|s| s.job.id).collect();
        if passes {
            assert_eq!(ids, [1, 3], "{spec}");
        } else {
            assert_eq!(ids, [1], "{spec}");
        }
        assert_eq!(s.head().map(|j| j.id), Some(2), "{spec}");
    }
}

#[test]
fn mfcfs_dynamic_threshold_is_mean_delay_times_rate() {
    use crate::mfcfs::ModifiedFcfs;
    use crate::threshold::Threshold;
    let mut alloc = TestAlloc::buddy(1).unwrap();
    let mut s = ModifiedFcfs::new(Threshold::DynamicLinear, Default::default());
    assert_eq!(s.name(), "m-fcfs[threshold=dynamic]");
    let mut started = Vec::new();
    // J1 takes Q_1 until 2; J2 (Q_0) waits 2 units: d = (0 + 2) / 2 = 1.
    s.submit(cube_job(1, 1, 0.0, 2.0), 0.0).unwrap();
    s.schedule(0.0, &mut alloc, &mut started).unwrap();
    s.submit(cube_job(2, 0, 0.0, 9.0), 0.0).unwrap();
    s.schedule(0.0, &mut alloc, &mut started).unwrap();
    let j1 = started.remove(0);
    alloc.release(&j1.grant).unwrap();
    s.departed(&j1.job, 2.0);
    s.schedule(2.0, &mut alloc, &mut started).unwrap();
    assert_eq!(placed(&started), vec![(2, "0".to_owned())]);
    // J3 (Q_1) becomes the blocked head at t = 2; J4 (Q_0) would fit.
    // 4 arrivals: λ = 4/t, threshold d·λ = 4/t. At t = 3 the head has
    // waited 1 < 4/3 and J4 passes; at t = 4 it has waited 2 ≥ 1.
    s.submit(cube_job(3, 1, 2.0, 9.0), 2.0).unwrap();
    s.submit(cube_job(4, 0, 2.0, 9.0), 2.0).unwrap();
    for (now, passes) in [(3.0, true), (4.0, false)] {
        let (mut a, mut s2, mut q) = (alloc.clone(), s.clone(), Vec::new());
        s2.schedule(now, &mut a, &mut q).unwrap();
        let ids: Vec<u64> = q.iter().map(|x| x.job.id).collect();
        assert_eq!(ids.is_empty(), !passes, "t = {now}");
        if passes {
            assert_eq!(ids, [4]);
        }
    }
}

/// Before any job has waited the dynamic threshold is no threshold:
/// M-FCFS lets a fitting job pass the blocked head from the start instead
/// of behaving as FCFS.
#[test]
fn mfcfs_dynamic_threshold_is_never_before_a_delay_is_measured() {
    use crate::mfcfs::ModifiedFcfs;
    use crate::threshold::Threshold;
    let mut alloc = TestAlloc::buddy(1).unwrap();
    let mut s = ModifiedFcfs::new(Threshold::DynamicLinear, Default::default());
    let mut started = Vec::new();
    // J1 (Q_0) starts at once (no delay); J2 (Q_1) is blocked at t = 1;
    // J3 (Q_0) fits in the other node and passes.
    s.submit(cube_job(1, 0, 0.0, 5.0), 0.0).unwrap();
    s.schedule(0.0, &mut alloc, &mut started).unwrap();
    s.submit(cube_job(2, 1, 1.0, 1.0), 1.0).unwrap();
    s.submit(cube_job(3, 0, 1.0, 1.0), 1.0).unwrap();
    s.schedule(1.0, &mut alloc, &mut started).unwrap();
    let ids: Vec<u64> = started.iter().map(|x| x.job.id).collect();
    assert_eq!(ids, [1, 3]);
    assert_eq!(s.head().map(|j| j.id), Some(2));
}

#[test]
fn easy_backfills_only_jobs_that_do_not_delay_the_head() {
    let mut alloc = TestAlloc::buddy(2).unwrap();
    let mut s = registry::build("easy-backfilling", alloc.topology()).unwrap();
    let mut started = Vec::new();
    // J1 holds Q_1 until 10; J2 needs the whole Q_2: shadow time 10,
    // no extra nodes. J3 (Q_1, 5 units) ends in time; J4 (Q_0, 20) would
    // delay J2; J5 (Q_0, 10) ends exactly at the shadow time.
    for j in [
        cube_job(1, 1, 0.0, 10.0),
        cube_job(2, 2, 0.0, 1.0),
        cube_job(3, 1, 0.0, 5.0),
        cube_job(4, 0, 0.0, 20.0),
        cube_job(5, 0, 0.0, 10.0),
    ] {
        s.submit(j, 0.0).unwrap();
    }
    s.schedule(0.0, &mut alloc, &mut started).unwrap();
    let ids: Vec<u64> = started.iter().map(|s| s.job.id).collect();
    assert_eq!(ids, [1, 3]);
    assert_eq!(s.head().map(|j| j.id), Some(2));
    // Estimates drive the reservation: with J1 estimated at 30, J4 fits.
    let mut alloc = TestAlloc::buddy(2).unwrap();
    let mut s = registry::build("easy-backfilling", alloc.topology()).unwrap();
    let mut started = Vec::new();
    let mut j1 = cube_job(1, 1, 0.0, 10.0);
    j1.estimate = Some(30.0);
    for j in [j1, cube_job(2, 2, 0.0, 1.0), cube_job(4, 0, 0.0, 20.0)] {
        s.submit(j, 0.0).unwrap();
    }
    s.schedule(0.0, &mut alloc, &mut started).unwrap();
    let ids: Vec<u64> = started.iter().map(|s| s.job.id).collect();
    assert_eq!(ids, [1, 4]);
}

/// With a rounding allocator a backfilled job is admitted by its grant: a
/// 5-node request fits the 7 extra nodes but the buddy grants 8, which
/// would hold half of Q_4 past the head's shadow time; it is handed back
/// and waits.
#[test]
fn easy_admits_backfilled_jobs_by_their_grant() {
    let mut alloc = TestAlloc::buddy(4).unwrap();
    let mut s = registry::build("easy-backfilling", alloc.topology()).unwrap();
    let nodes = |id, count, service| Job::new(id, 0.0, JobShape::Nodes { count }, service);
    // J1 holds [0, 8) until 10. J2 (9 nodes, a whole Q_4 for the buddy) is
    // the blocked head: shadow time 10, extra 16 − 9 = 7 nodes. J3 asks
    // for 5 nodes for 50 units and would be granted [8, 16).
    for j in [nodes(1, 8, 10.0), nodes(2, 9, 1.0), nodes(3, 5, 50.0)] {
        s.submit(j, 0.0).unwrap();
    }
    let mut started = Vec::new();
    s.schedule(0.0, &mut alloc, &mut started).unwrap();
    let ids: Vec<u64> = started.iter().map(|x| x.job.id).collect();
    assert_eq!(ids, [1]);
    assert_eq!(s.queue_len(), 2);
    assert_eq!(alloc.free_nodes(), 8, "the refused grant was released");
    // At the shadow time the head starts as reserved.
    let j1 = started.remove(0);
    alloc.release(&j1.grant).unwrap();
    s.departed(&j1.job, 10.0);
    s.schedule(10.0, &mut alloc, &mut started).unwrap();
    assert_eq!(started.first().map(|x| x.job.id), Some(2));
}

#[test]
fn bad_jobs_are_refused_and_not_queued() {
    let alloc = TestAlloc::buddy(2).unwrap();
    for p in crate::registry::policies() {
        let mut s = registry::build(p.name, alloc.topology()).unwrap();
        let mut j = cube_job(1, 0, f64::NAN, 1.0);
        assert!(s.submit(j, 0.0).is_err(), "{}", p.name);
        j.arrival = 0.0;
        j.service = -1.0;
        assert!(s.submit(j, 0.0).is_err(), "{}", p.name);
        assert_eq!(s.queue_len(), 0, "{}", p.name);
    }
}

#[test]
fn unservable_jobs_are_dropped_with_an_error() {
    let alloc = TestAlloc::buddy(2).unwrap();
    for p in crate::registry::policies() {
        let mut a = alloc.clone();
        let mut s = registry::build(p.name, a.topology()).unwrap();
        s.submit(cube_job(1, 5, 0.0, 1.0), 0.0).unwrap();
        let mut started = Vec::new();
        let e = s.schedule(0.0, &mut a, &mut started).unwrap_err();
        assert!(e.to_string().contains("job 1"), "{}: {e}", p.name);
        assert_eq!(s.queue_len(), 0, "{}", p.name);
        assert_eq!(a.free_nodes(), 4);
    }
}

mod properties {
    use proptest::prelude::*;

    use super::*;
    use crate::ordering_tests::event_loop;

    /// A minimal event loop: all events at one time, then one decision.
    /// Returns (job id, start, end) in start order.
    fn simulate(policy: &str, n: u32, jobs: &[Job]) -> Vec<(u64, f64, f64)> {
        simulate_with_idle_heads(policy, n, jobs).0
    }

    /// (job id, start, end) of every started job.
    type Starts = Vec<(u64, f64, f64)>;

    /// As [`simulate`], and also every (time, head job id) where, after the
    /// policy's decision, its own head would have fitted the free nodes.
    fn simulate_with_idle_heads(policy: &str, n: u32, jobs: &[Job]) -> (Starts, Vec<(f64, u64)>) {
        let mut idle_heads = Vec::new();
        let mut alloc = TestAlloc::buddy(n).unwrap();
        let mut s = registry::build(policy, alloc.topology()).unwrap();
        // The loop checks free + held nodes against this total.
        assert_eq!(alloc.free_nodes(), 1 << n);
        let mut out = Vec::new();
        event_loop(
            s.as_mut(),
            &mut alloc,
            jobs,
            |st, t| {
                assert!(st.job.arrival <= t);
                out.push((st.job.id, t, t + st.job.service));
            },
            |s, alloc, m| {
                assert_eq!(s.queue_len() + m.started, m.submitted);
                // Probe on a copy whether the head would have been granted now.
                if let Some(head) = s.head() {
                    let request = crate::RequestMapping::default().request(&head.shape);
                    if alloc.clone().allocate(&request).is_ok() {
                        idle_heads.push((m.t, head.id));
                    }
                }
            },
        );
        (out, idle_heads)
    }

    fn workload() -> impl Strategy<Value = Vec<Job>> {
        proptest::collection::vec((0u32..4, 0u32..3, 1u32..6), 1..40).prop_map(|v| {
            let mut t = 0.0;
            v.into_iter()
                .enumerate()
                .map(|(i, (dt, dim, service))| {
                    t += f64::from(dt) * 0.5;
                    cube_job(i as u64, dim, t, f64::from(service))
                })
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Every policy starts every job exactly once, never before its
        /// arrival, and never over-commits the machine (checked inside).
        #[test]
        fn every_policy_serves_every_job_once(jobs in workload()) {
            for p in crate::registry::policies() {
                let out = simulate(p.name, 3, &jobs);
                let mut ids: Vec<u64> = out.iter().map(|o| o.0).collect();
                ids.sort_unstable();
                let expect: Vec<u64> = (0..jobs.len() as u64).collect();
                prop_assert_eq!(ids, expect, "{}", p.name);
            }
        }

        /// FCFS starts jobs in arrival order; M-FCFS with threshold 0 gives
        /// the head priority at once and so is FCFS; Scan with a single
        /// size class is FCFS too.
        #[test]
        fn fcfs_order_and_equivalences(jobs in workload()) {
            let fcfs = simulate("fcfs", 3, &jobs);
            prop_assert!(fcfs.windows(2).all(|w| w[0].0 < w[1].0));
            prop_assert_eq!(&simulate("m-fcfs[threshold=0]", 3, &jobs), &fcfs);
            let one_class: Vec<Job> = jobs
                .iter()
                .map(|j| j.with_shape(JobShape::Cube { dim: 1 }))
                .collect();
            prop_assert_eq!(
                simulate("scan", 3, &one_class),
                simulate("fcfs", 3, &one_class)
            );
        }

        /// A work-conserving policy never keeps a head that fits: after
        /// every decision, the job it would serve next cannot be granted
        /// on the nodes left free (lazy and static partitioning wait on
        /// purpose and are not held to it). In particular no job waits on
        /// an idle machine.
        #[test]
        fn no_policy_idles_with_a_fitting_head(jobs in workload()) {
            for p in ["fcfs", "m-fcfs[threshold=never]", "easy-backfilling", "scan"] {
                let (out, idle_heads) = simulate_with_idle_heads(p, 3, &jobs);
                prop_assert!(
                    idle_heads.is_empty(),
                    "{p}: (time, head) kept waiting though it fitted: {idle_heads:?}"
                );
                for &(id, start, _) in &out {
                    let arrival = jobs[id as usize].arrival;
                    if start > arrival {
                        let busy_at = |t: f64| out.iter().any(|&(_, s, e)| s <= t && t < e);
                        prop_assert!(busy_at(arrival), "{p}: job {id} waited on an idle machine");
                    }
                }
            }
        }
    }
}
