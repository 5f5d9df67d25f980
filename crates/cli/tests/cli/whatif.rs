//! `partalloc whatif`: a hand-computed workload under two configurations,
//! the CSV output, and bad inputs refused with their file and line.

use std::fs;

use crate::support::{fails, ok, run_in};

/// Four 1-CPU nodes. J1 (2 nodes, runs 600 s, limit 10 min) starts at 0;
/// J2 (whole machine, submitted at 10) waits for J1 and gets backfill's
/// reservation at 600; J3 (2 nodes, 250 s, limit 5 min, submitted at 20)
/// fits before it: with backfill it starts at the first backfill pass
/// (30 s), without (sched/builtin) it waits behind J2 until J2 ends (700).
/// Waits: 0, 590, 10 (mean 200) and 0, 590, 680 (mean 423.333).
const SACCT: &str = "\
JobID|Account|User|QOS|Partition|Submit|Start|End|NNodes|Timelimit|State
1|a|u|normal|batch|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:10:00|2|00:10:00|COMPLETED
2|a|u|normal|batch|2026-01-01T00:00:10|2026-01-01T00:10:00|2026-01-01T00:11:40|4|00:10:00|COMPLETED
3|a|v|normal|batch|2026-01-01T00:00:20|2026-01-01T00:11:40|2026-01-01T00:15:50|2|00:05:00|COMPLETED
";

const ASSOC: &str = "Account|User|Share\nroot||1\na||1\na|u|1\na|v|1\n";

fn conf(scheduler: &str) -> String {
    format!(
        "NodeName=n[1-4] CPUs=1\nPartitionName=batch Nodes=ALL Default=YES\n\
         SchedulerType={scheduler}\nSchedulerParameters=bf_interval=30,bf_resolution=60\n"
    )
}

fn setup() -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    fs::write(d.join("bf.conf"), conf("sched/backfill"))?;
    fs::write(d.join("fifo.conf"), conf("sched/builtin"))?;
    fs::write(d.join("sacct.txt"), SACCT)?;
    fs::write(d.join("assoc.txt"), ASSOC)?;
    Ok(dir)
}

#[test]
fn backfill_against_builtin_by_hand() {
    let dir = setup().unwrap();
    let d = dir.path();
    let out = ok(&run_in(
        d,
        &[
            "whatif",
            "--conf",
            "bf.conf",
            "--conf",
            "fifo.conf",
            "--trace",
            "sacct.txt",
            "--assoc",
            "assoc.txt",
            "--output",
            "table.csv",
        ],
    ));
    let all: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.get(1) == Some(&"all"))
        .collect();
    assert_eq!(all.len(), 2, "{out}");
    assert_eq!(
        (all[0][0], all[0][3], all[0][4]),
        ("bf.conf", "3", "200"),
        "{out}"
    );
    assert_eq!(
        (all[1][0], all[1][3], all[1][4]),
        ("fifo.conf", "3", "423.333"),
        "{out}"
    );
    // Per user association's account: both jobs of the one account.
    assert!(
        out.lines().any(|l| l
            .split_whitespace()
            .take(4)
            .eq(["bf.conf", "account", "a", "3"])),
        "{out}"
    );
    let csv = fs::read_to_string(d.join("table.csv")).unwrap();
    assert!(
        csv.starts_with("conf,group,name,jobs,mean_wait_s,"),
        "{csv}"
    );
    assert!(csv.contains("fifo.conf,all,-,3,423.333,"), "{csv}");
}

#[test]
fn bad_inputs_name_their_file_and_line() {
    let dir = setup().unwrap();
    let d = dir.path();
    let base = [
        "whatif",
        "--conf",
        "bf.conf",
        "--trace",
        "sacct.txt",
        "--assoc",
        "assoc.txt",
    ];
    fs::write(
        d.join("bad.txt"),
        SACCT.replace(
            "|normal|batch|2026-01-01T00:00:10",
            "|normal|gpu|2026-01-01T00:00:10",
        ),
    )
    .unwrap();
    let e = fails(&run_in(
        d,
        &[
            "whatif",
            "--conf",
            "bf.conf",
            "--trace",
            "bad.txt",
            "--assoc",
            "assoc.txt",
        ],
    ));
    assert!(
        e.contains("bad.txt:3:") && e.contains("partition \"gpu\""),
        "{e}"
    );
    fs::write(
        d.join("cyc.txt"),
        "Account|User|Share|ParentName\nroot||1|\na||1|b\nb||1|a\n",
    )
    .unwrap();
    let e = fails(&run_in(
        d,
        &[
            "whatif",
            "--conf",
            "bf.conf",
            "--trace",
            "sacct.txt",
            "--assoc",
            "cyc.txt",
        ],
    ));
    assert!(e.contains("cyc.txt:") && e.contains("own ancestor"), "{e}");
    fs::write(
        d.join("x.conf"),
        "NodeName=n[1-4] CPUs=1\nPartitionName=batch Nodes=ALL\nPriorityWeightAge=many\n",
    )
    .unwrap();
    let e = fails(&run_in(
        d,
        &[
            "whatif",
            "--conf",
            "x.conf",
            "--trace",
            "sacct.txt",
            "--assoc",
            "assoc.txt",
        ],
    ));
    assert!(e.contains("x.conf:3: PriorityWeightAge"), "{e}");
    // A job no limit lets run: a QOS MaxWall shorter than its time limit.
    fs::write(
        d.join("lim.conf"),
        conf("sched/backfill") + "AccountingStorageEnforce=limits\n",
    )
    .unwrap();
    fs::write(
        d.join("qos.txt"),
        "Name|Priority|MaxWall\nnormal|0|00:05:00\n",
    )
    .unwrap();
    let e = fails(&run_in(
        d,
        &[
            "whatif",
            "--conf",
            "lim.conf",
            "--trace",
            "sacct.txt",
            "--assoc",
            "assoc.txt",
            "--qos",
            "qos.txt",
        ],
    ));
    assert!(
        e.contains("sacct.txt:2:")
            && e.contains("job 1 can never start")
            && e.contains("QOSMaxWallDurationPerJobLimit"),
        "{e}"
    );
    // The table may not replace an input.
    let e = fails(&run_in(
        d,
        &[&base[..], &["--output", "sacct.txt"]].concat(),
    ));
    assert!(e.contains("sacct.txt"), "{e}");
    assert_eq!(fs::read_to_string(d.join("sacct.txt")).unwrap(), SACCT);
}

/// The same policy through the registry (`replay -s 'slurm[…]'`) decides
/// as `whatif` does: the hand-computed mean wait of 200 s.
#[test]
fn the_registered_policy_agrees_with_whatif() {
    let dir = setup().unwrap();
    let d = dir.path();
    let out = ok(&run_in(
        d,
        &[
            "replay",
            "sacct.txt",
            "--trace-format",
            "sacct",
            "-t",
            "mesh:4x1",
            "-a",
            "paging",
            "-s",
            "slurm[conf=bf.conf,assoc=assoc.txt,trace=sacct.txt]",
        ],
    ));
    let row: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with("paging"))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    // allocator, requests, response, wait, …
    assert_eq!(row.get(3), Some(&"200"), "{out}");
}

/// Preemption by partition tier, by hand. Four 1-CPU nodes; J1 (partition
/// low, the whole machine, runs 600 s) starts at 0; J2 (partition high,
/// tier 2, 2 nodes, runs 100 s) arrives at 100 and preempts it. CANCEL:
/// J1 ends at 100, J2 runs 100–200 (node-time 400 + 200 over 4 × 200).
/// REQUEUE: J1 waits its begin time (100 + requeue delay 120 + 1 s) and
/// runs 221–821 again, wait 221, bounded slowdown 821 / 600; its
/// node-time counts both runs (400 + 2400 over 4 × 821).
fn preemption_setup() -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let sacct = "\
JobID|Account|User|QOS|Partition|Submit|Start|End|NNodes|Timelimit|State
1|a|u|normal|low|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:10:00|4|00:10:00|COMPLETED
2|a|v|normal|high|2026-01-01T00:01:40|2026-01-01T00:10:00|2026-01-01T00:11:40|2|00:05:00|COMPLETED
";
    fs::write(d.join("sacct.txt"), sacct)?;
    fs::write(d.join("assoc.txt"), ASSOC)?;
    for mode in ["CANCEL", "REQUEUE"] {
        fs::write(
            d.join(format!("{}.conf", mode.to_lowercase())),
            format!(
                "NodeName=n[1-4] CPUs=1\nPartitionName=low Nodes=ALL Default=YES PriorityTier=1\n\
                 PartitionName=high Nodes=ALL PriorityTier=2\nSchedulerType=sched/backfill\n\
                 SchedulerParameters=bf_interval=30,bf_resolution=60\n\
                 PreemptType=preempt/partition_prio\nPreemptMode={mode}\n"
            ),
        )?;
    }
    Ok(dir)
}

#[test]
fn preemptions_per_group_by_hand() {
    let dir = preemption_setup().unwrap();
    let d = dir.path();
    let out = ok(&run_in(
        d,
        &[
            "whatif",
            "--conf",
            "cancel.conf",
            "--conf",
            "requeue.conf",
            "--trace",
            "sacct.txt",
            "--assoc",
            "assoc.txt",
        ],
    ));
    let row = |conf: &str, group: &str, name: &str| -> Vec<String> {
        out.lines()
            .map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .find(|w| w.len() == 8 && w[0] == conf && w[1] == group && w[2] == name)
            .unwrap_or_default()
    };
    // jobs, mean wait, mean bounded slowdown, node-time share, preempted.
    let cells = |r: Vec<String>| r[3..].join(" ");
    assert_eq!(
        cells(row("cancel.conf", "all", "-")),
        "2 0 1 0.750000 1",
        "{out}"
    );
    assert_eq!(
        cells(row("cancel.conf", "partition", "high")),
        "1 0 1 0.250000 0",
        "{out}"
    );
    assert_eq!(
        cells(row("requeue.conf", "partition", "low")),
        "1 221 1.36833 0.852619 1",
        "{out}"
    );
    assert_eq!(
        cells(row("requeue.conf", "all", "-")),
        "2 110.500 1.18417 0.913520 1",
        "{out}"
    );
}

/// The policy built from the registry preempts too (`simulate` through
/// the simulation engine): the requeue case above, one run preempted and
/// the mean wait of 110.5 s.
#[test]
fn the_registered_policy_preempts() {
    let dir = preemption_setup().unwrap();
    let out = ok(&run_in(
        dir.path(),
        &[
            "simulate",
            "--trace",
            "sacct.txt",
            "--trace-format",
            "sacct",
            "-t",
            "mesh:4x1",
            "-a",
            "paging",
            "-s",
            "slurm[conf=requeue.conf,assoc=assoc.txt,trace=sacct.txt]",
            "--format",
            "json",
        ],
    ));
    assert!(out.contains("\"preempted\": 1,"), "{out}");
    assert!(out.contains("\"mean_wait\": 110.5,"), "{out}");
}
