//! Bounded slowdown in the tool's outputs: a hand-computed trace through
//! `simulate` (report and jobs CSV) and `replay`, the bound as an option
//! and a sweep key, and bad bounds refused.

use std::fs;

use crate::support::{fails, ok, run_in, stderr, words};

/// Three jobs on four nodes under FCFS: J1 (4 nodes, 20 s) runs 0–20; J2
/// (2 nodes, 5 s, submitted at 0) and J3 (2 nodes, 40 s, submitted at 10)
/// wait for it and run 20–25 and 20–60. Bounded slowdowns with τ = 10:
/// 20/20 = 1, 25/max(5, 10) = 2.5, 50/40 = 1.25; with τ = 1, J2's is 5.
const TRACE: &str = "\
1 0 -1 20 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1
2 0 -1 5 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1
3 10 -1 40 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1
";

fn metric(json: &str, name: &str) -> Option<f64> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["metric"] == name)
        .and_then(|m| m["mean"].as_f64())
}

#[test]
fn simulate_reports_the_hand_computed_bounded_slowdown() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("t.swf"), TRACE).unwrap();
    let base = [
        "simulate", "--trace", "t.swf", "-t", "mesh:2x2", "-a", "paging", "--format", "json", "-q",
    ];
    let out = ok(&run_in(
        d,
        &[&base[..], &["--jobs-csv", "jobs.csv"]].concat(),
    ));
    assert_eq!(
        metric(&out, "mean_bounded_slowdown").unwrap(),
        (1.0 + 2.5 + 1.25) / 3.0
    );
    let csv = fs::read_to_string(d.join("jobs.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .ends_with(",bounded_slowdown,domains_per_level,holding_level")
    );
    // Before the two capacity-machine columns, empty on this machine.
    let last: Vec<&str> = lines.map(|l| l.rsplit(',').nth(2).unwrap()).collect();
    assert_eq!(last, ["1", "2.5", "1.25"]);
    let tight = ok(&run_in(
        d,
        &[&base[..], &["--slowdown-bound", "1"]].concat(),
    ));
    assert_eq!(
        metric(&tight, "mean_bounded_slowdown").unwrap(),
        (1.0 + 5.0 + 1.25) / 3.0
    );
    // The text table names it too.
    let text = ok(&run_in(d, &base[..7]));
    assert!(text.contains("mean bounded slowdown"), "{text}");
}

/// The `mean_bounded_slowdown` column of `replay --format csv`, one
/// value per run.
fn replay_column(d: &std::path::Path, extra: &[&str]) -> Option<Vec<f64>> {
    let line = "replay t.swf -t hypercube:2 --allocators buddy --format csv -q";
    let csv = ok(&run_in(d, &[&words(line)[..], extra].concat()));
    let mut lines = csv.lines();
    let header = lines.next()?;
    let col = header
        .split(',')
        .position(|h| h == "mean_bounded_slowdown")?;
    lines.map(|l| l.split(',').nth(col)?.parse().ok()).collect()
}

#[test]
fn replay_reports_it_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("t.swf"), TRACE).unwrap();
    // buddy on shapes, paging on counts and on shapes: the same starts.
    let rows = replay_column(d, &[]).unwrap();
    assert_eq!(rows, [(1.0 + 2.5 + 1.25) / 3.0; 3]);
    let tight = replay_column(d, &["--slowdown-bound", "1"]).unwrap();
    assert_eq!(tight, [(1.0 + 5.0 + 1.25) / 3.0; 3]);
}

#[test]
fn bad_bounds_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("t.swf"), TRACE).unwrap();
    for (bad, why) in [
        ("0", "slowdown bound 0 must be above 0 seconds"),
        ("-5", "slowdown bound -5 must be above 0 seconds"),
        ("inf", "slowdown bound inf is not finite"),
        ("ten", "slowdown bound \"ten\" is not a number"),
    ] {
        for cmd in ["simulate", "replay"] {
            let flag = format!("--slowdown-bound={bad}");
            let mut args = vec![cmd, "t.swf", "-t", "hypercube:2", "-q", &flag];
            if cmd == "simulate" {
                args.splice(1..1, ["--trace"]);
                args.extend(["-a", "buddy"]);
            }
            let o = run_in(d, &args);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{cmd} {bad}: {e}");
            assert!(e.lines().next().unwrap().contains(why), "{cmd} {bad}: {e}");
        }
    }
    fs::write(
        d.join("exp.toml"),
        "topologies = [\"mesh:4x4\"]\nallocators = [\"fsl\"]\nloads = [0.5]\nslowdown_bound = 0.0\n",
    )
    .unwrap();
    let e = fails(&run_in(d, &["sweep", "exp.toml", "--out", "x.csv", "-q"]));
    assert!(
        e.contains("slowdown_bound: slowdown bound 0 must be above 0 seconds"),
        "{e}"
    );
    assert!(!d.join("x.csv").exists());
}

#[test]
fn a_sweep_takes_the_bound_as_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let exp = "seeds = 1\ntopologies = [\"mesh:8x8\"]\nallocators = [\"fsl\"]\nloads = [0.7]\n\n[workload]\njobs = 200\n";
    let column = |bound: Option<&str>, out: &str| -> (String, f64) {
        let text = match bound {
            Some(b) => exp.replace("seeds = 1\n", &format!("seeds = 1\nslowdown_bound = {b}\n")),
            None => exp.to_owned(),
        };
        fs::write(d.join("exp.toml"), text).unwrap();
        ok(&run_in(
            d,
            &["sweep", "exp.toml", "--out", out, "-q", "--no-plots"],
        ));
        let csv = fs::read_to_string(d.join(out)).unwrap();
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
        (
            row[at("settings")].to_owned(),
            row[at("mean_bounded_slowdown")].parse().unwrap(),
        )
    };
    let (plain, ten) = column(None, "a.csv");
    let (same, explicit_ten) = column(Some("10.0"), "b.csv");
    let (other, one) = column(Some("1.0"), "c.csv");
    // The default bound is the default: same fingerprint, same value.
    assert_eq!((same.as_str(), explicit_ten), (plain.as_str(), ten));
    // Another bound is other settings, and each job's slowdown only grows
    // as the bound shrinks.
    assert_ne!(other, plain);
    assert!(one > ten && ten >= 1.0, "{one} vs {ten}");
}
