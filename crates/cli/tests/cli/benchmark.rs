//! `partalloc benchmark`: the heuristics' scores on a golden sequence are
//! RLScheduler's simulator's to the bit, and bad input is one line.
#![expect(
    clippy::unwrap_used,
    reason = "the helpers reading the goldens sit outside #[test] functions"
)]

use super::support::{fails, nasa, ok, repo, run};

/// The lublin_256 golden's rows of its first sequence: (policy, backfill,
/// first job, bounded slowdown).
fn golden_first_sequence() -> Vec<(String, bool, String, f64)> {
    let path = repo().join("data/rlscheduler-oracle/lublin_256.golden.csv");
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("policy,"))
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[2] == "0")
        .map(|f| {
            let bsld = f[5].parse().unwrap();
            (f[0].to_owned(), f[1] == "true", f[4].to_owned(), bsld)
        })
        .collect()
}

#[test]
fn benchmark_csv_gives_the_simulators_scores_to_the_bit() {
    let golden = golden_first_sequence();
    assert_eq!(golden.len(), 10);
    // The cut holds only the golden sequences' jobs: the sequence starts
    // at its first job's place among the cut's job lines.
    let cut = repo().join("data/rlscheduler-oracle/lublin_256.cut.swf");
    let text = std::fs::read_to_string(&cut).unwrap();
    let first = golden[0].2.as_str();
    let start = text
        .lines()
        .filter(|l| !l.starts_with(';'))
        .position(|l| l.split(' ').next() == Some(first))
        .unwrap()
        .to_string();
    let policies = "fcfs,sjf,wfp3-rlscheduler,unicep-rlscheduler,f1";
    let cut = cut.to_str().unwrap();
    let args = [
        "benchmark",
        "--trace",
        cut,
        "--starts",
        &start,
        "--policies",
        policies,
        "--csv",
    ];
    let out = ok(&run(&args));
    let mut lines = out.lines();
    let header = "policy,backfill,sequence,start,bounded_slowdown";
    assert_eq!(lines.next(), Some(header));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 10);
    for (policy, backfill, _, bsld) in &golden {
        let row = rows
            .iter()
            .find(|r| r[0] == policy && r[1] == backfill.to_string())
            .unwrap();
        let got = (row[3], row[4].parse::<f64>().unwrap());
        assert_eq!(got, (start.as_str(), *bsld), "{policy} backfill={backfill}");
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
