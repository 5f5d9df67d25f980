//! `partalloc benchmark`: the heuristics' scores on a golden sequence are
//! RLScheduler's simulator's to the bit, and bad input is one line.

use super::support::{fails, nasa, ok, repo, run};

/// The NASA golden's rows of its first sequence: (policy, backfill, start,
/// bounded slowdown).
fn golden_first_sequence() -> Vec<(String, bool, String, f64)> {
    let path = repo().join("data/rlscheduler-oracle/nasa-ipsc.golden.csv");
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("policy,"))
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[2] == "0")
        .map(|f| {
            (
                f[0].to_owned(),
                f[1] == "true",
                f[3].to_owned(),
                f[5].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn benchmark_csv_gives_the_simulators_scores_to_the_bit() {
    let golden = golden_first_sequence();
    assert_eq!(golden.len(), 10);
    let start = golden[0].2.clone();
    let policies = "fcfs,sjf,wfp3-rlscheduler,unicep-rlscheduler,f1";
    let out = ok(&run(&[
        "benchmark",
        "--trace",
        &nasa(),
        "--starts",
        &start,
        "--policies",
        policies,
        "--csv",
    ]));
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("policy,backfill,sequence,start,bounded_slowdown")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 10);
    for (policy, backfill, s, bsld) in &golden {
        let row = rows
            .iter()
            .find(|r| r[0] == policy && r[1] == backfill.to_string())
            .unwrap();
        assert_eq!(
            (row[3], row[4].parse::<f64>().unwrap()),
            (s.as_str(), *bsld),
            "{policy}"
        );
    }
}

#[test]
fn benchmark_refuses_bad_input_with_one_line() {
    let trace = nasa();
    let e = fails(&run(&["benchmark", "--trace", &trace, "--length", "10000"]));
    assert!(
        e.contains("sequences of 10000 jobs need a trace of at least 20002 jobs"),
        "{e}"
    );
    let e = fails(&run(&[
        "benchmark",
        "--trace",
        &trace,
        "--policies",
        "sjf,lifo",
    ]));
    assert!(
        e.starts_with("error: unknown heuristic \"lifo\"; known heuristics: fcfs"),
        "{e}"
    );
    let e = fails(&run(&[
        "benchmark",
        "--trace",
        &trace,
        "--starts",
        "18000",
        "--length",
        "256",
    ]));
    assert!(e.contains("from index 18000 runs past the trace's"), "{e}");
    let e = fails(&run(&[
        "benchmark",
        "--trace",
        &trace,
        "--scheduler",
        "nosuch",
    ]));
    assert!(e.contains("nosuch"), "{e}");
    // τ ≤ 0 is refused by the command-line parser (exit code 2).
    let o = run(&["benchmark", "--trace", &trace, "--slowdown-bound=-1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("must be above 0 seconds"));
}
