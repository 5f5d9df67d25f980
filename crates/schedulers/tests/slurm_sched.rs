//! The Slurm policy on worked examples derived by hand from slurmctld's
//! source (job_scheduler.c, backfill.c, priority_multifactor.c,
//! fair_tree.c), and its invariants.

mod slurm_common;

use partalloc_schedulers::slurm::StartedBy;
use partalloc_schedulers::slurm::limits::Reason;
use slurm_common::{job, policy, run};

const ONE_ACCOUNT: &str = "Account|User|Share\nroot||1\na||1\na|u|1\na|v|1\n";

fn conf(extra: &str) -> String {
    format!(
        "NodeName=n[1-4] CPUs=1\nPartitionName=batch Nodes=ALL Default=YES\n\
         SchedulerParameters=bf_interval=30,bf_resolution=60,sched_interval=60\n{extra}"
    )
}

/// J1 holds the machine until 600; J2 (whole machine) waits with
/// `Resources` and gets backfill's reservation at J1's time limit; J3,
/// behind J2 in the failed partition, gets `Priority` and is planned at
/// J2's reserved end (1200). J2 starts when J1 ends (main scheduler), and
/// J3 when J2 ends at 700, long before its planned start.
#[test]
fn reservation_and_pending_reasons_by_hand() {
    let mut p = policy(
        &conf(""),
        ONE_ACCOUNT,
        None,
        &[
            (1, "a", "u", None, None, 600),
            (2, "a", "u", None, None, 600),
            (3, "a", "v", None, None, 120),
        ],
    )
    .unwrap();
    let jobs = [
        job(1, 0.0, 4, 600.0),
        job(2, 10.0, 4, 100.0),
        job(3, 20.0, 1, 100.0),
    ];
    let mut seen = Vec::new();
    let out = run(&mut p, 4, &jobs, &[25.0, 100.0], |t, p| {
        seen.push((t, p.squeue()));
    })
    .unwrap();
    assert_eq!(out.start.get(&1), Some(&0.0));
    assert_eq!(out.start.get(&2), Some(&600.0));
    assert_eq!(out.start.get(&3), Some(&700.0));
    // Before the first backfill pass (30): reasons from the main
    // scheduler, no planned start yet.
    let q = &seen[0].1;
    assert_eq!((q[1].reason, q[1].start), (Reason::Resources, None));
    assert_eq!((q[2].reason, q[2].start), (Reason::Priority, None));
    let q = &seen[1].1;
    assert_eq!((q[1].reason, q[1].start), (Reason::Resources, Some(600.0)));
    assert_eq!((q[2].reason, q[2].start), (Reason::Priority, Some(1200.0)));
    assert_eq!(p.started_by(2).map(|s| s.1), Some(StartedBy::Main));
}

/// Half the machine is free until J1's limit (600) and J2 is reserved
/// there: a 2-node job whose limit ends before 600 is backfilled at the
/// first backfill pass (30); one whose limit reaches past 600 would delay
/// J2 and waits until J2's reserved end.
#[test]
fn backfill_fills_the_hole_before_a_reservation() {
    for (limit, want_start, by) in [
        (300, 30.0, StartedBy::Backfill),
        (900, 700.0, StartedBy::Main),
    ] {
        let mut p = policy(
            &conf(""),
            ONE_ACCOUNT,
            None,
            &[
                (1, "a", "u", None, None, 600),
                (2, "a", "u", None, None, 600),
                (3, "a", "v", None, None, limit),
            ],
        )
        .unwrap();
        let jobs = [
            job(1, 0.0, 2, 600.0),
            job(2, 10.0, 4, 100.0),
            job(3, 20.0, 2, 250.0),
        ];
        let out = run(&mut p, 4, &jobs, &[], |_, _| {}).unwrap();
        assert_eq!(out.start.get(&2), Some(&600.0), "limit {limit}");
        assert_eq!(out.start.get(&3), Some(&want_start), "limit {limit}");
        assert_eq!(p.started_by(3).map(|s| s.1), Some(by), "limit {limit}");
    }
}

/// The backfill agent runs a cycle `bf_interval` after the last at the
/// earliest, and then as soon as something changed (`backfill_agent`,
/// `_more_work` in backfill.c): J2 is reserved at the cycle at 30 (it
/// arrived at 10); nothing changes until J3 arrives at 100, when the
/// cycle that arrival allows backfills J3 at once (not at 120, the next
/// multiple of `bf_interval`), ahead of the main scheduler that J2 blocks.
#[test]
fn backfill_runs_at_the_first_change_after_its_interval() {
    let mut p = policy(
        &conf(""),
        ONE_ACCOUNT,
        None,
        &[
            (1, "a", "u", None, None, 600),
            (2, "a", "u", None, None, 600),
            (3, "a", "v", None, None, 300),
        ],
    )
    .unwrap();
    let jobs = [
        job(1, 0.0, 2, 600.0),
        job(2, 10.0, 4, 100.0),
        job(3, 100.0, 2, 250.0),
    ];
    let mut planned = None;
    let out = run(&mut p, 4, &jobs, &[50.0], |_, p| {
        planned = p.squeue().get(1).and_then(|r| r.start);
    })
    .unwrap();
    assert_eq!(planned, Some(600.0));
    assert_eq!(out.start.get(&3), Some(&100.0));
    assert_eq!(p.started_by(3).map(|s| s.1), Some(StartedBy::Backfill));
    assert_eq!(out.start.get(&2), Some(&600.0));
}

/// An ended job's nodes stay completing: J2 waits for J1's end (100)
/// plus the completing time, when the main scheduler its end runs starts
/// it; without a completing time it starts at 100.
#[test]
fn ended_jobs_nodes_stay_completing() {
    for (completing, want) in [(0.0, 100.0), (2.0, 102.0), (0.5, 100.5)] {
        let p = policy(
            &conf(""),
            ONE_ACCOUNT,
            None,
            &[
                (1, "a", "u", None, None, 600),
                (2, "a", "v", None, None, 600),
            ],
        )
        .unwrap();
        let mut p = p.with_completing(completing);
        let jobs = [job(1, 0.0, 4, 100.0), job(2, 10.0, 4, 100.0)];
        let out = run(&mut p, 4, &jobs, &[], |_, _| {}).unwrap();
        assert_eq!(out.start.get(&2), Some(&want), "completing {completing}");
        assert_eq!(p.started_by(2).map(|s| s.1), Some(StartedBy::Main));
    }
}

/// With sched/builtin there is no backfill: the 2-node job waits behind
/// the blocked whole-machine job even though it would fit.
#[test]
fn builtin_scheduler_never_backfills() {
    let mut p = policy(
        &conf("SchedulerType=sched/builtin\n"),
        ONE_ACCOUNT,
        None,
        &[
            (1, "a", "u", None, None, 600),
            (2, "a", "u", None, None, 600),
            (3, "a", "v", None, None, 300),
        ],
    )
    .unwrap();
    let jobs = [
        job(1, 0.0, 2, 600.0),
        job(2, 10.0, 4, 100.0),
        job(3, 20.0, 2, 250.0),
    ];
    let out = run(&mut p, 4, &jobs, &[], |_, _| {}).unwrap();
    assert_eq!(out.start.get(&3), Some(&700.0));
}

/// Fair Tree by hand. Accounts a and b hold one share each; u (in a) runs
/// a 1-CPU job from 0 to 120. The priority pass at 60 (PriorityCalcPeriod
/// = 1 minute, no decay) charges u 60 CPU-seconds: a's LevelFS is
/// 0.5 / 1 = 0.5, b's is 0.5 / 0 = ∞, so b's user w ranks first (2 of 2
/// user associations: factor 1) and u second (factor 1/2). A job of u
/// submitted at 70 gets FAIRSHARE = 10000 · 0.5 = 5000; one of w 10000.
/// At the pass at 120 the age factor is (120 − 70) / 600 of weight 1000.
#[test]
fn fair_tree_factors_by_hand() {
    let assoc = "Account|User|Share|ParentName\nroot||1|\na||1|root\na|u|1|\nb||1|root\nb|w|1|\n";
    let mut p = policy(
        "NodeName=n[1-2] CPUs=1\nPartitionName=batch Nodes=ALL Default=YES\n\
         PriorityWeightFairshare=10000\nPriorityWeightAge=1000\nPriorityMaxAge=10\n\
         PriorityDecayHalfLife=0\nPriorityCalcPeriod=1\n",
        assoc,
        None,
        &[
            (1, "a", "u", None, None, 600),
            (2, "a", "u", None, None, 600),
            (3, "b", "w", None, None, 600),
            (4, "a", "u", None, None, 600),
        ],
    )
    .unwrap();
    // Job 4 holds the second node so that 2 and 3 wait.
    let jobs = [
        job(1, 0.0, 1, 120.0),
        job(4, 0.0, 1, 1000.0),
        job(2, 70.0, 2, 10.0),
        job(3, 70.0, 2, 10.0),
    ];
    let mut rows = Vec::new();
    run(&mut p, 2, &jobs, &[100.0, 150.0], |t, p| {
        rows.push((t, p.sprio()))
    })
    .unwrap();
    let (_, at100) = &rows[0];
    let r2 = at100.iter().find(|r| r.job == 2).unwrap();
    let r3 = at100.iter().find(|r| r.job == 3).unwrap();
    // At 60 both u's jobs (1 and 4) ran 60 s: u has all the usage.
    assert_eq!((r2.fairshare, r3.fairshare), (5000.0, 10_000.0));
    assert_eq!((r2.age, r2.priority, r3.priority), (0.0, 5000, 10_000));
    let (_, at150) = &rows[1];
    let r2 = at150.iter().find(|r| r.job == 2).unwrap();
    assert!((r2.age - 1000.0 * 50.0 / 600.0).abs() < 1e-9, "{}", r2.age);
    assert_eq!(
        r2.priority,
        5000 + (1000.0f64 * 50.0 / 600.0).floor() as u32
    );
    // sshare: u's raw usage at the pass at 120 is 120 + 120 CPU-seconds.
    let sh = p.sshare();
    let u = sh.iter().find(|r| r.user == "u").unwrap();
    assert!(u.raw_usage >= 240.0, "{}", u.raw_usage);
}

/// Limits: with AccountingStorageEnforce=limits, a QOS MaxJobsPU of 1
/// holds v's second job (QOSMaxJobsPerUserLimit) although nodes are free,
/// and the held job blocks nothing behind it.
#[test]
fn qos_limit_holds_with_its_reason() {
    let qos = "Name|Priority|MaxJobsPU\nnormal|0|1\n";
    let mut p = policy(
        &conf("AccountingStorageEnforce=limits\n"),
        ONE_ACCOUNT,
        Some(qos),
        &[
            (1, "a", "v", None, None, 600),
            (2, "a", "v", None, None, 600),
            (3, "a", "u", None, None, 600),
        ],
    )
    .unwrap();
    let jobs = [
        job(1, 0.0, 1, 500.0),
        job(2, 10.0, 1, 100.0),
        job(3, 20.0, 1, 100.0),
    ];
    let mut seen = Vec::new();
    let out = run(&mut p, 4, &jobs, &[50.0], |_, p| seen.push(p.squeue())).unwrap();
    assert_eq!(out.start.get(&3), Some(&20.0));
    assert_eq!(out.start.get(&2), Some(&500.0));
    assert_eq!(
        seen[0].iter().find(|r| r.job == 2).unwrap().reason,
        Reason::Limit("QOSMaxJobsPerUserLimit")
    );
}

mod properties {
    use std::collections::HashMap;

    use partalloc_schedulers::slurm::assoc::AssocTree;
    use partalloc_schedulers::slurm::conf::FairShareAlgo;
    use partalloc_schedulers::slurm::fairshare::FairShare;
    use proptest::prelude::*;

    use super::{conf, job, policy, run, slurm_common};

    /// A random two-level tree: accounts under root (some under another
    /// account), each with 0-3 users, and random usage per user.
    fn tree_text(accounts: &[(u32, usize, Vec<u32>)]) -> String {
        let mut s = String::from("Account|User|Share|ParentName\nroot||1|\n");
        for (i, (shares, parent, _)) in accounts.iter().enumerate() {
            let parent = if *parent < i {
                format!("a{parent}")
            } else {
                "root".into()
            };
            s.push_str(&format!("a{i}||{shares}|{parent}\n"));
        }
        for (i, (_, _, users)) in accounts.iter().enumerate() {
            for (k, us) in users.iter().enumerate() {
                s.push_str(&format!("a{i}|u{i}_{k}|{us}|\n"));
            }
        }
        s
    }

    /// Under root, a1 (2 shares, no usage) ranks above a0 (1 share, used
    /// by its two users); inside a0, the empty a2 and a3 are tied at an
    /// infinite LevelFS, so a3 starts tied and its user u3_0 takes the
    /// rank of a1's users, the last ranked before it: factor 1, though a0
    /// is below a1.
    #[test]
    fn a_tie_carries_into_the_next_account() {
        let text = tree_text(&[
            (1, 0, vec![1, 1]),
            (2, 1, vec![1, 1]),
            (1, 0, vec![]),
            (1, 0, vec![1]),
        ]);
        let t = AssocTree::parse(&text, "t").unwrap();
        let mut fs = FairShare::new(&t, FairShareAlgo::FairTree, 0);
        let user = |name: &str| {
            (0..t.len())
                .find(|&i| t.get(i).user.as_deref() == Some(name))
                .unwrap()
        };
        fs.add(&t, user("u0_0"), 100.0);
        fs.add(&t, user("u0_1"), 100.0);
        fs.fair_tree(&t);
        let factors: Vec<f64> = ["u1_0", "u1_1", "u3_0", "u0_0", "u0_1"]
            .iter()
            .map(|u| fs.factor(user(u)))
            .collect();
        assert_eq!(factors, [1.0, 1.0, 1.0, 0.4, 0.4]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Fair Tree's ranks are an order consistent with the tree: every
        /// factor is rank / users with a whole rank in 1..=users; and of
        /// two sibling accounts with different LevelFS, no user below the
        /// lower one ranks above a user below the higher one. Not
        /// strictly: an account tied with the sibling before it starts its
        /// own level tied (`account_tied` in Slurm's
        /// `plugins/priority/multifactor/fair_tree.c`), so its first user
        /// takes the rank of the user ranked just before, who may sit
        /// below the higher account (see
        /// `a_tie_carries_into_the_next_account`).
        #[test]
        fn fair_tree_ranks_follow_the_tree(
            accounts in prop::collection::vec((1u32..5, 0usize..6, prop::collection::vec(1u32..4, 0..4)), 1..6),
            usage in prop::collection::vec(0u32..4, 0..24),
        ) {
            let text = tree_text(&accounts);
            let t = AssocTree::parse(&text, "t").unwrap();
            let mut fs = FairShare::new(&t, FairShareAlgo::FairTree, 0);
            let users: Vec<usize> = (0..t.len()).filter(|&i| t.get(i).user.is_some()).collect();
            for (k, &u) in users.iter().enumerate() {
                let amount = f64::from(usage.get(k).copied().unwrap_or(0)) * 100.0;
                fs.add(&t, u, amount);
            }
            fs.fair_tree(&t);
            let n = users.len() as f64;
            for &u in &users {
                let r = fs.factor(u) * n;
                prop_assert!((r - r.round()).abs() < 1e-9 && r.round() >= 1.0 && r.round() <= n, "{r}");
            }
            // Users below each association.
            let below = |a: usize| -> Vec<usize> {
                users.iter().copied().filter(|&u| t.chain(u).any(|x| x == a)).collect()
            };
            for a in 0..t.len() {
                for b in 0..t.len() {
                    let (na, nb) = (t.get(a), t.get(b));
                    if a == b || na.user.is_some() || nb.user.is_some() || na.parent.is_none() || na.parent != nb.parent {
                        continue;
                    }
                    let (la, lb) = (fs.usage(a).level_fs, fs.usage(b).level_fs);
                    if la > lb {
                        let lo = below(a).iter().map(|&u| fs.factor(u)).fold(f64::INFINITY, f64::min);
                        let hi = below(b).iter().map(|&u| fs.factor(u)).fold(0.0, f64::max);
                        prop_assert!(below(a).is_empty() || below(b).is_empty() || lo >= hi,
                            "{la} > {lb} but factors {lo} < {hi}\n{text}");
                    }
                }
            }
        }

        /// Backfill's plan of node counts (used where jobs may preempt)
        /// never delays the reserved start of a higher-priority job: with
        /// every job queued at time 0 (one fixed order) and exact time
        /// limits, the first pending job in the order starts no later
        /// than the start backfill planned for it while it was first (the
        /// jobs started around it all have lower priority). A job further
        /// back may start later than its first plan: a reservation ahead
        /// of it can move earlier when a job ends early. (Slurm's plan node
        /// by node can move it later: see
        /// `the_will_run_test_can_plan_a_job_later_in_a_later_cycle`.)
        #[test]
        fn backfill_never_delays_a_planned_start(
            spec in prop::collection::vec((1u32..5, 1u64..6), 2..14),
        ) {
            let attrs: Vec<slurm_common::Attrs<'_>> = spec
                .iter()
                .enumerate()
                .map(|(i, &(_, minutes))| (i as u64 + 1, "a", "u", None, None, minutes * 60))
                .collect();
            let mut p = policy(&conf("PreemptType=preempt/qos\n"), super::ONE_ACCOUNT, None, &attrs).unwrap();
            let jobs: Vec<_> = spec
                .iter()
                .enumerate()
                .map(|(i, &(nodes, minutes))| job(i as u64 + 1, 0.0, nodes, (minutes * 60) as f64))
                .collect();
            let mut first_plan: HashMap<u64, f64> = HashMap::new();
            let times: Vec<f64> = (0..200).map(|k| f64::from(k) * 15.0 + 1.0).collect();
            let out = run(&mut p, 4, &jobs, &times, |_, p| {
                let head = p.squeue().into_iter().find(|r| r.state == "PENDING");
                if let Some(r) = head
                    && let Some(s) = r.start
                {
                    first_plan.entry(r.job).or_insert(s);
                }
            })
            .unwrap();
            prop_assert_eq!(out.start.len(), jobs.len());
            for (id, plan) in &first_plan {
                let start = out.start[id];
                prop_assert!(start <= *plan, "job {id} started {start}, planned {plan}");
            }
        }
    }
}

/// Backfill plans node by node as slurmctld does (`_will_run_test`,
/// `src/plugins/select/cons_tres/job_test.c`): four 1-node machines' jobs
/// J1 (1 node to 300), J2 (2 nodes to 240) and J3 (1 node to 180) run;
/// J4 (3 nodes, 1 minute) is first planned at 240 (J2's and J3's nodes),
/// the earliest time. At 180 J3 has ended: the will-run test removes the
/// running jobs ending within 30 s of the first end rounded up to 30 s
/// (240 and 300 together), the select plugin takes the lowest three of
/// the four nodes then free (J1's among them), and J4 is planned at 300,
/// J1's end; J5 (1 node, 2 minutes) is backfilled on J3's node at 180,
/// and J4 starts at 300. A plan of node counts keeps J4 at 240.
#[test]
fn the_will_run_test_can_plan_a_job_later_in_a_later_cycle() {
    let spec = [(1u32, 5u64), (2, 4), (1, 3), (3, 1), (1, 2)];
    let attrs: Vec<slurm_common::Attrs<'_>> = spec
        .iter()
        .enumerate()
        .map(|(i, &(_, minutes))| (i as u64 + 1, "a", "u", None, None, minutes * 60))
        .collect();
    let jobs: Vec<_> = spec
        .iter()
        .enumerate()
        .map(|(i, &(nodes, minutes))| job(i as u64 + 1, 0.0, nodes, (minutes * 60) as f64))
        .collect();
    let times: Vec<f64> = (0..40).map(|k| f64::from(k) * 15.0 + 1.0).collect();
    for (extra, j4, j5) in [
        ("", 300.0, 180.0),
        ("PreemptType=preempt/qos\n", 240.0, 300.0),
    ] {
        let mut p = policy(&conf(extra), ONE_ACCOUNT, None, &attrs).unwrap();
        let mut plans: Vec<f64> = Vec::new();
        let out = run(&mut p, 4, &jobs, &times, |_, p| {
            if let Some(s) = p.squeue().iter().find(|r| r.job == 4).and_then(|r| r.start)
                && plans.last() != Some(&s)
            {
                plans.push(s);
            }
        })
        .unwrap();
        assert_eq!(plans.first(), Some(&240.0), "{extra}: {plans:?}");
        assert_eq!(out.start[&4], j4, "{extra}");
        assert_eq!(out.start[&5], j5, "{extra}");
    }
}

/// A submission only queues a main pass; slurmctld's background loop runs
/// it once `batch_sched_delay` (3 s) has passed since the last one: a job
/// submitted 1 s after another one starts at 3 on an idle machine (no
/// backfill pass comes before 30), and with `batch_sched_delay=0` at once.
#[test]
fn submissions_wait_for_batch_sched_delay() {
    for (extra, want) in [
        ("", 3.0),
        ("SchedulerParameters=batch_sched_delay=0\n", 1.0),
    ] {
        let text =
            format!("NodeName=n[1-4] CPUs=1\nPartitionName=batch Nodes=ALL Default=YES\n{extra}");
        let mut p = policy(
            &text,
            ONE_ACCOUNT,
            None,
            &[
                (1, "a", "u", None, None, 600),
                (2, "a", "v", None, None, 600),
            ],
        )
        .unwrap();
        let jobs = [job(1, 0.0, 1, 100.0), job(2, 1.0, 1, 100.0)];
        let out = run(&mut p, 4, &jobs, &[], |_, _| {}).unwrap();
        assert_eq!(out.start.get(&1), Some(&0.0), "{extra}");
        assert_eq!(out.start.get(&2), Some(&want), "{extra}");
    }
}

/// Partitions on part of the nodes: `hi` has n3-n4. J1 holds n1-n2 of
/// `lo`; J2 (2 nodes, `hi`) starts on n3-n4 at once; J3 (2 nodes, `hi`)
/// waits for J2 although n1-n2 are free after J1 ends, and backfill plans
/// it at J2's limit, not at J1's. J4 of `lo,hi` starts in `lo` once J1
/// is gone.
#[test]
fn partitions_on_some_nodes_keep_their_jobs_on_them() {
    let mut p = policy(
        "NodeName=n[1-4] CPUs=1\nPartitionName=lo Nodes=n[1-2] Default=YES\n\
         PartitionName=hi Nodes=n[3-4]\n\
         SchedulerParameters=bf_interval=30,bf_resolution=60,sched_interval=60\n",
        ONE_ACCOUNT,
        None,
        &[
            (1, "a", "u", None, Some("lo"), 300),
            (2, "a", "u", None, Some("hi"), 600),
            (3, "a", "v", None, Some("hi"), 600),
            (4, "a", "v", None, Some("hi,lo"), 600),
        ],
    )
    .unwrap();
    let jobs = [
        job(1, 0.0, 2, 100.0),
        job(2, 0.0, 2, 500.0),
        job(3, 10.0, 2, 100.0),
        job(4, 20.0, 2, 100.0),
    ];
    let mut seen = Vec::new();
    let out = run(&mut p, 4, &jobs, &[40.0], |_, p| seen.push(p.squeue())).unwrap();
    assert_eq!(out.start.get(&2), Some(&0.0));
    assert_eq!(out.start.get(&3), Some(&500.0));
    // J4 cannot run in `hi`, and starts in `lo` when J1 ends.
    assert_eq!(out.start.get(&4), Some(&100.0));
    let q = &seen[0];
    assert_eq!((q[2].reason, q[2].start), (Reason::Resources, Some(600.0)));
    assert_eq!((q[3].reason, q[3].start), (Reason::Resources, Some(300.0)));
}

/// A job listing an unknown partition among several is refused with the
/// partition's name; an allocator that cannot grant chosen nodes and
/// places a job outside its partition is an error, not a silent wrong
/// placement.
#[test]
fn bad_partitions_and_placements_are_refused() {
    use partalloc_schedulers::Scheduler;
    let conf = "NodeName=n[1-4] CPUs=1\nPartitionName=lo Nodes=n[1-2] Default=YES\n\
                PartitionName=hi Nodes=n[3-4]\n";
    let mut p = policy(
        conf,
        ONE_ACCOUNT,
        None,
        &[(1, "a", "u", None, Some("hi,zz"), 60)],
    )
    .unwrap();
    let e = p.check_table([(1, 1)]).unwrap_err().to_string();
    assert_eq!(
        e,
        "jobs:0: unknown partition \"zz\"; define it in slurm.conf (a PartitionName line)"
    );
    let mut p = policy(
        conf,
        ONE_ACCOUNT,
        None,
        &[(1, "a", "u", None, Some("hi"), 60)],
    )
    .unwrap();
    let machine: partalloc_topology::Topology = "mesh:4x1".parse().unwrap();
    let mut alloc =
        NoChosenNodes(partalloc_allocators::registry::build("paging", &machine).unwrap());
    p.submit(job(1, 0.0, 2, 10.0), 0.0).unwrap();
    let mut started = Vec::new();
    let e = p
        .schedule(0.0, &mut alloc, &mut started)
        .unwrap_err()
        .to_string();
    assert!(e.contains("outside its partition's nodes"), "{e}");
    assert!(e.len() <= 200, "{e}");
    assert_eq!(partalloc_allocators::Allocator::free_nodes(&alloc), 4);
}

/// Paging that cannot grant a chosen node list (the trait's default
/// `allocate_at`): it places every job on the lowest free nodes itself.
#[derive(Debug)]
struct NoChosenNodes(Box<dyn partalloc_allocators::Allocator>);

impl partalloc_allocators::Allocator for NoChosenNodes {
    fn name(&self) -> String {
        "lowest".into()
    }
    fn topology(&self) -> &partalloc_topology::Topology {
        self.0.topology()
    }
    fn allocate(
        &mut self,
        r: &partalloc_allocators::Request,
    ) -> Result<partalloc_allocators::Grant, partalloc_allocators::AllocError> {
        self.0.allocate(r)
    }
    fn release(
        &mut self,
        g: &partalloc_allocators::Grant,
    ) -> Result<(), partalloc_allocators::ReleaseError> {
        self.0.release(g)
    }
    fn free_nodes(&self) -> usize {
        self.0.free_nodes()
    }
    fn live_grants(&self) -> usize {
        self.0.live_grants()
    }
    fn busy_nodes(&self) -> partalloc_topology::NodeSet {
        self.0.busy_nodes()
    }
}

/// DenyOnLimit: a job over its QOS's MaxWall is refused at submission
/// (never queued, listed by `refused`), and the table check names it
/// instead of refusing the whole input; without the flag the same job is
/// an input error (it would wait forever).
#[test]
fn deny_on_limit_refuses_at_submission() {
    use partalloc_schedulers::Scheduler;
    let qos = |flags: &str| format!("Name|MaxWall|Flags\nnormal|10|{flags}\n");
    let conf = conf("AccountingStorageEnforce=limits\n");
    let jobs = [
        (1, "a", "u", None, None, 1200),
        (2, "a", "u", None, None, 60),
    ];
    let mut p = policy(&conf, ONE_ACCOUNT, Some(&qos("DenyOnLimit")), &jobs).unwrap();
    assert_eq!(
        p.check_table([(1, 1), (2, 1)]).unwrap(),
        [(1, Reason::Limit("QOSMaxWallDurationPerJobLimit"))]
    );
    p.submit(job(1, 0.0, 1, 60.0), 0.0).unwrap();
    p.submit(job(2, 0.0, 1, 60.0), 0.0).unwrap();
    assert_eq!(p.queue_len(), 1);
    assert_eq!(
        p.refused(),
        [(1, Reason::Limit("QOSMaxWallDurationPerJobLimit"))]
    );
    let mut p = policy(&conf, ONE_ACCOUNT, Some(&qos("")), &jobs).unwrap();
    let e = p.check_table([(1, 1)]).unwrap_err().to_string();
    assert!(
        e.contains("job 1 can never start: QOSMaxWallDurationPerJobLimit"),
        "{e}"
    );
}

/// Backfill on a machine partitions divide starts two short jobs behind a
/// blocked whole-partition job in one cycle, each on its own free node.
#[test]
fn backfill_with_partitions_places_each_start_on_free_nodes() {
    let mut p = policy(
        "NodeName=n[1-4] CPUs=1\nPartitionName=c Nodes=n[1-4] Default=YES\n\
         PartitionName=d Nodes=n4\n\
         SchedulerParameters=bf_interval=30,bf_resolution=60,sched_interval=60\n",
        ONE_ACCOUNT,
        None,
        &[
            (1, "a", "u", None, None, 600),
            (2, "a", "u", None, None, 600),
            (3, "a", "v", None, None, 60),
            (4, "a", "v", None, None, 60),
        ],
    )
    .unwrap();
    let jobs = [
        job(1, 0.0, 2, 500.0),
        job(2, 1.0, 4, 100.0),
        job(3, 2.0, 1, 50.0),
        job(4, 2.0, 1, 50.0),
    ];
    let out = run(&mut p, 4, &jobs, &[], |_, _| {}).unwrap();
    assert_eq!(out.start.get(&3), Some(&30.0));
    assert_eq!(out.start.get(&4), Some(&30.0));
    assert_eq!(out.start.get(&2), Some(&500.0));
    assert_eq!(p.started_by(4).map(|s| s.1), Some(StartedBy::Backfill));
}

/// With partitions on part of the nodes, an ended job's own nodes stay
/// completing: J1 ends on n3-n4 (partition `hi`) at 100 with 5 s of
/// completing time; the pass J3's submission (`lo`) runs before 105
/// starts J3 on n1-n2 and not J2 of `hi`, which starts at 105.
#[test]
fn completing_nodes_with_partitions_are_the_ended_jobs() {
    let mut p = policy(
        "NodeName=n[1-4] CPUs=1\nPartitionName=lo Nodes=n[1-2] Default=YES\n\
         PartitionName=hi Nodes=n[3-4]\n\
         SchedulerParameters=bf_interval=30,bf_resolution=60,sched_interval=60\n",
        ONE_ACCOUNT,
        None,
        &[
            (1, "a", "u", None, Some("hi"), 600),
            (2, "a", "u", None, Some("hi"), 600),
            (3, "a", "v", None, Some("lo"), 600),
        ],
    )
    .unwrap()
    .with_completing(5.0);
    let jobs = [
        job(1, 0.0, 2, 100.0),
        job(2, 10.0, 2, 100.0),
        job(3, 101.0, 2, 100.0),
    ];
    let out = run(&mut p, 4, &jobs, &[], |_, _| {}).unwrap();
    assert!(out.start.get(&3).is_some_and(|&t| t < 105.0), "{out:?}");
    assert_eq!(out.start.get(&2), Some(&105.0));
}

/// Classic fair share, the job list in order: at a priority pass
/// slurmctld walks its jobs by creation (`_decay_thread`,
/// `_decay_apply_new_usage_and_weighted_factors`): a running job adds its
/// usage, a pending one has its priority computed and with it its user's
/// fair share (unknown since the pass began), from the usage added so
/// far. v's job 1 runs 0–30 (30 CPU-seconds, charged at its end); u's job
/// 2 and w's job 4 run from 0; v's job 3 (all 3 nodes, created before
/// job 4 but arriving after it) waits. At the pass at 60, a's NormUsage is
/// 30 / 30 = 1 (accounts first); then job 2 adds 60 (root 90), job 3's
/// user v gets NormUsage 30 / 90 and EffectvUsage 1/3 + (1 − 1/3) · 1/2 =
/// 2/3, FairShare 2^(−(2/3) / 0.25); job 4's 60 comes after. (With every
/// job's usage first it would be 2^(−(0.2 + 0.4) / 0.25).)
#[test]
fn classic_fair_share_follows_the_job_list() {
    let assoc =
        "Account|User|Share|ParentName\nroot||1|\na||1|root\na|u|1|\na|v|1|\nb||1|root\nb|w|1|\n";
    let mut p = policy(
        "NodeName=n[1-3] CPUs=1\nPartitionName=batch Nodes=ALL Default=YES\n\
         PriorityType=priority/multifactor\nPriorityFlags=NO_FAIR_TREE\n\
         PriorityWeightFairshare=10000\nPriorityDecayHalfLife=0\nPriorityCalcPeriod=1\n",
        assoc,
        None,
        &[
            (1, "a", "v", None, None, 600),
            (2, "a", "u", None, None, 6000),
            (3, "a", "v", None, None, 600),
            (4, "b", "w", None, None, 6000),
        ],
    )
    .unwrap();
    let jobs = [
        job(1, 0.0, 1, 30.0),
        job(2, 0.0, 1, 1000.0),
        job(4, 0.0, 1, 1000.0),
        job(3, 1.0, 3, 10.0),
    ];
    let mut rows = Vec::new();
    run(&mut p, 3, &jobs, &[61.0], |_, p| rows.push(p.sprio())).unwrap();
    let r3 = rows[0].iter().find(|r| r.job == 3).unwrap();
    let want = (-(2.0f64 / 3.0) / 0.25).exp2();
    assert!(
        (r3.factors.fairshare - want).abs() < 1e-12,
        "{} against {want}",
        r3.factors.fairshare
    );
}

/// Time limits are enforced by slurmctld's background loop, every 30 s
/// from its start (`job_time_limit`, `PERIODIC_TIMEOUT`): a job that
/// outruns its limit ends at the first check at or after it. Job 1
/// (limit 1 minute, script 500 s) starts at 0 and is killed at 60, a check;
/// job 2 (the same) arrives at 5, starts then, reaches its limit at 65 and
/// is killed at the check at 90; job 3 (limit 2 minutes) starts at 8 (3 s,
/// `batch_sched_delay`, after the pass that started job 2) and ends by
/// itself 100 s later. With the checks' phase at 10 s, job 2 is killed at
/// 70.
#[test]
fn time_limits_are_enforced_at_the_periodic_check() {
    let jobs = [
        job(1, 0.0, 1, 500.0),
        job(2, 5.0, 1, 500.0),
        job(3, 7.0, 1, 100.0),
    ];
    let attrs = [
        (1, "a", "u", None, None, 60),
        (2, "a", "u", None, None, 60),
        (3, "a", "u", None, None, 120),
    ];
    let mut p = policy(&conf(""), ONE_ACCOUNT, None, &attrs).unwrap();
    let out = run(&mut p, 4, &jobs, &[], |_, _| {}).unwrap();
    assert_eq!(out.start.get(&2), Some(&5.0));
    assert_eq!(out.start.get(&3), Some(&8.0));
    assert_eq!(out.end.get(&1), Some(&60.0));
    assert_eq!(out.end.get(&2), Some(&90.0));
    assert_eq!(out.end.get(&3), Some(&108.0));
    let mut p = policy(&conf(""), ONE_ACCOUNT, None, &attrs)
        .unwrap()
        .with_timelimit_phase(10.0);
    let out = run(&mut p, 4, &jobs, &[], |_, _| {}).unwrap();
    assert_eq!(out.end.get(&2), Some(&70.0));
}

/// `plan=` picks backfill's plan: `nodes` (the default, printed bare) or
/// `counts` (printed), and nothing else.
#[test]
fn the_backfill_plan_is_a_parameter_of_two_values() {
    let topo: partalloc_topology::Topology = "mesh:16x1".parse().unwrap();
    let build = |s: &str| {
        partalloc_schedulers::registry::POLICIES
            .spec(s)
            .and_then(|spec| spec.build(&topo))
    };
    assert_eq!(build("slurm[plan=nodes]").unwrap().name(), "slurm");
    assert_eq!(
        build("slurm[plan=counts]").unwrap().name(),
        "slurm[plan=counts]"
    );
    let e = build("slurm[plan=pages]").unwrap_err().to_string();
    assert!(e.contains("plan") && e.contains("counts"), "{e}");
}
