//! The `partalloc` binary, run as a user runs it: each subcommand's happy
//! path (checked on content) and each kind of bad input (message and exit
//! code, and no output file left behind).

use std::fs;

use partalloc::allocators::registry::ALLOCATORS;
use partalloc::schedulers::registry::POLICIES;
use partalloc::simkit::{SimConfig, Simulation, Stop, replication_rng};
use partalloc::topology::{Grid, Topology};
use partalloc::workload::{Dependence, Exponential, MeshSides, SideLaw, Workload};
use serde_json::Value;

use crate::support::{bin, fails, nasa, ok, repo, run, run_in, stderr, words};

fn example(name: &str) -> String {
    repo().join("examples").join(name).display().to_string()
}

// ---------------------------------------------------------------- strategies

#[test]
fn strategies_lists_both_registries_with_parameters() {
    let text = ok(&run(&["strategies"]));
    for s in partalloc::allocators::registry::strategies() {
        assert!(text.contains(&format!("\n  {}\n", s.name)), "{}", s.name);
        for p in s.params {
            assert!(text.contains(&format!("[{}={}]", p.name, p.default)));
        }
    }
    for s in partalloc::schedulers::registry::policies() {
        assert!(text.contains(&format!("\n  {}\n", s.name)), "{}", s.name);
    }
    assert!(text.contains("machines: hypercube"));
    assert!(text.contains("[threshold="));

    let json: Value = serde_json::from_str(&ok(&run(&["strategies", "--format", "json"]))).unwrap();
    let names: Vec<&str> = json["allocators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = partalloc::allocators::registry::strategies()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, want);
    let fsl = json["allocators"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "fsl")
        .unwrap();
    assert!(
        fsl["topologies"]
            .as_array()
            .unwrap()
            .contains(&Value::from("mesh"))
    );
    assert_eq!(
        json["schedulers"].as_array().unwrap().len(),
        partalloc::schedulers::registry::policies().count()
    );

    // Restricted to a machine: exactly what the registry builds there.
    let machine: Topology = "torus:8x8x8".parse().unwrap();
    let json: Value = serde_json::from_str(&ok(&run(&words(
        "strategies --format json --topology torus:8x8x8",
    ))))
    .unwrap();
    let listed: Vec<&str> = json["allocators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    let builds: Vec<&str> = partalloc::allocators::registry::strategies()
        .map(|s| s.name)
        .filter(|n| partalloc::allocators::registry::build(n, &machine).is_ok())
        .collect();
    assert_eq!(listed, builds);
    assert!(listed.contains(&"etc") && listed.contains(&"paging"));
    let refused = json["refused"].as_array().unwrap();
    let buddy = refused.iter().find(|r| r["name"] == "buddy").unwrap();
    assert_eq!(
        buddy["reason"],
        "buddy does not run on torus:8x8x8; it accepts: hypercube"
    );
    let text = ok(&run(&["strategies", "-t", "torus:8x8x8"]));
    assert!(text.contains("\nNot on this machine:\n  buddy "), "{text}");
}

// ------------------------------------------------------------------ simulate

const SIM: &[&str] = &[
    "simulate",
    "--topology",
    "mesh:8x8",
    "--allocator",
    "fsl",
    "--load",
    "0.4",
    "--residence",
    "exp:10",
    "--jobs",
    "200",
];

#[test]
fn simulate_matches_the_library_run_with_the_same_stream() {
    let mut args = SIM.to_vec();
    args.extend(["--seeds", "2", "--seed", "5", "--format", "json"]);
    let json: Value = serde_json::from_str(&ok(&run(&args))).unwrap();
    assert_eq!(json["topology"], "mesh:8x8");
    assert_eq!(json["allocator"], "fsl");
    assert_eq!(json["scheduler"], "fcfs");
    assert_eq!(json["seeds"], 2);
    let reps = json["replications"].as_array().unwrap();
    assert_eq!(reps.len(), 2);

    // Replication r is the library run on ChaCha8 stream r of seed 5.
    let machine: Topology = "mesh:8x8".parse().unwrap();
    let shapes = MeshSides::for_grid(SideLaw::Uniform, &Grid::mesh(&[8, 8]).unwrap()).unwrap();
    let w = Workload::with_load(
        0.4,
        64,
        shapes,
        Exponential::new(10.0).unwrap(),
        Dependence::Dependent,
    )
    .unwrap();
    let mut means = Vec::new();
    for (r, rep) in reps.iter().enumerate() {
        let mut rng = replication_rng(5, r as u64);
        let config = SimConfig {
            stop: Stop {
                jobs: Some(200),
                time: None,
            },
            ..SimConfig::default()
        };
        let lib = Simulation::from_specs(
            machine.clone(),
            &ALLOCATORS.spec("fsl").unwrap(),
            &POLICIES.spec("fcfs").unwrap(),
            w.jobs(&mut rng),
            config,
        )
        .unwrap()
        .run()
        .unwrap()
        .results;
        assert_eq!(rep["completed"], lib.completed);
        // Bit for bit (JSON floats round-trip exactly).
        assert_eq!(rep["mean_response"].as_f64().unwrap(), lib.mean_response);
        assert_eq!(rep["utilization"].as_f64().unwrap(), lib.utilization);
        assert_eq!(rep["miss_rate"].as_f64().unwrap(), lib.miss_rate);
        means.push(lib.mean_response);
    }
    // The summary is the mean over the replications.
    let m = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "mean_response")
        .unwrap();
    let mean = (means[0] + means[1]) / 2.0;
    assert!((m["mean"].as_f64().unwrap() - mean).abs() <= 1e-12 * mean);
    assert!(m["half_width"].as_f64().unwrap() > 0.0);
}

#[test]
fn simulate_table_csv_and_job_records() {
    let dir = tempfile::tempdir().unwrap();
    let table = ok(&run_in(dir.path(), SIM));
    assert!(table.contains("machine    mesh:8x8 (64 nodes)"), "{table}");
    assert!(table.contains("allocator  fsl"));
    assert!(table.contains("mean response time"));
    assert!(table.contains("completed jobs"));

    let mut args = SIM.to_vec();
    args.extend(["--format", "csv", "--jobs-csv", "jobs.csv"]);
    let csv = ok(&run_in(dir.path(), &args));
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("metric,mean,half_width,n"));
    let completed = csv
        .lines()
        .find(|l| l.starts_with("completed,"))
        .unwrap()
        .split(',')
        .nth(1)
        .unwrap()
        .parse::<f64>()
        .unwrap();
    // The same run as the table: same numbers.
    let resp: f64 = csv
        .lines()
        .find(|l| l.starts_with("mean_response,"))
        .unwrap()
        .split(',')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let shown: f64 = table
        .lines()
        .find(|l| l.starts_with("mean response time"))
        .unwrap()
        .split_whitespace()
        .nth(3)
        .unwrap()
        .parse()
        .unwrap();
    assert!((shown - resp).abs() <= 1e-5 * resp, "{shown} vs {resp}");
    let jobs = fs::read_to_string(dir.path().join("jobs.csv")).unwrap();
    let mut rows = jobs.lines();
    assert_eq!(
        rows.next(),
        Some(
            "id,arrival,start,end,wait,response,numerical_delay,topological_delay,requested,granted,partition,distance_sum,mean_distance,diameter,span,pieces,bounded_slowdown,domains_per_level,holding_level"
        )
    );
    let rows: Vec<&str> = rows.collect();
    assert_eq!(rows.len() as f64, completed);
    // Every job starts no earlier than it arrives and ends after it starts.
    for r in rows {
        let f: Vec<&str> = r.split(',').collect();
        let (a, s, e): (f64, f64, f64) = (
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
        );
        assert!(a <= s && s <= e, "{r}");
    }
}

#[test]
fn simulate_replays_a_trace() {
    let trace = example("mesh8x8-load0.6.swf");
    let out = ok(&run(&[
        "simulate",
        "-t",
        "mesh:8x8",
        "-a",
        "paging",
        "--trace",
        &trace,
        "--mapping",
        "nodes",
        "--format",
        "json",
    ]));
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["replications"][0]["completed"], 200);
    assert!(json["workload"].as_str().unwrap().contains("200 jobs"));
    // The first 50 jobs only.
    let out = ok(&run(&[
        "simulate",
        "-t",
        "mesh:8x8",
        "-a",
        "first-fit",
        "--trace",
        &trace,
        "--jobs",
        "50",
        "--format",
        "json",
    ]));
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["replications"][0]["completed"], 50);
}

// --------------------------------------------------------------------- sweep

const EXPERIMENT: &str = r#"
seeds = 2
topologies = ["mesh:8x8"]
allocators = ["fsl", "first-fit"]
schedulers = ["fcfs"]
loads = [0.2, 0.4, 0.6]

[workload]
residence = "exp:5"
jobs = 150
warmup = 10

[plot]
metrics = ["mean_response", "utilization"]
"#;

#[test]
fn sweep_writes_csv_and_charts_and_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("exp.toml"), EXPERIMENT).unwrap();

    let msg = ok(&run_in(
        d,
        &["sweep", "exp.toml", "--out", "full.csv", "--quiet"],
    ));
    assert!(
        msg.contains("6 points (0 from an earlier run) written to full.csv"),
        "{msg}"
    );
    let full = fs::read_to_string(d.join("full.csv")).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    assert_eq!(lines.len(), 7);
    assert!(lines[0].starts_with(
        "topology,allocator,scheduler,load,settings,seeds,mean_response,mean_response_hw,"
    ));
    // Declared order: allocator, then load; one settings fingerprint.
    let key = |l: &str| l.split(',').take(6).map(str::to_owned).collect::<Vec<_>>();
    let fp = key(lines[1])[4].clone();
    assert_eq!(fp.len(), 16);
    assert_eq!(key(lines[1]), ["mesh:8x8", "fsl", "fcfs", "0.2", &fp, "2"]);
    assert_eq!(
        key(lines[4]),
        ["mesh:8x8", "first-fit", "fcfs", "0.2", &fp, "2"]
    );
    assert_eq!(
        key(lines[6]),
        ["mesh:8x8", "first-fit", "fcfs", "0.6", &fp, "2"]
    );
    // A sweep point is the simulate run with the same settings.
    let json: Value = serde_json::from_str(&ok(&run(&words("simulate -t mesh:8x8 -a first-fit --load 0.4 --residence exp:5 --jobs 150 --warmup 10 --seeds 2 --seed 1 --format json"))))
    .unwrap();
    let header: Vec<&str> = lines[0].split(',').collect();
    let row: Vec<&str> = lines[5].split(',').collect();
    assert_eq!(&row[..4], ["mesh:8x8", "first-fit", "fcfs", "0.4"]);
    for m in json["metrics"].as_array().unwrap() {
        let name = m["metric"].as_str().unwrap();
        let col = header.iter().position(|h| *h == name).unwrap();
        let swept: f64 = row[col].parse().unwrap();
        assert_eq!(swept, m["mean"].as_f64().unwrap(), "{name}");
    }
    for m in ["mean_response", "utilization"] {
        let svg = fs::read_to_string(d.join(format!("full-{m}-mesh-8x8-fcfs.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("first-fit") && svg.contains("offered load")
        );
    }

    // Stopped after two points: no final file, two rows kept.
    let msg = ok(&run_in(
        d,
        &[
            "sweep", "exp.toml", "--out", "part.csv", "--limit", "2", "-q",
        ],
    ));
    assert!(msg.contains("stopped with 4 of 6 points left"), "{msg}");
    assert!(!d.join("part.csv").exists());
    let partial = fs::read_to_string(d.join("part.csv.partial")).unwrap();
    assert_eq!(partial.lines().count(), 3);
    // The rerun on one thread finishes the rest; same bytes as one run.
    let msg = ok(&run_in(
        d,
        &words("sweep exp.toml --out part.csv --threads 1 -q --no-plots"),
    ));
    assert!(msg.contains("(2 from an earlier run)"), "{msg}");
    assert_eq!(fs::read(d.join("part.csv")).unwrap(), full.as_bytes());
    assert!(!d.join("part.csv.partial").exists());

    // Other workload settings never reuse rows computed under the old ones.
    fs::write(
        d.join("exp.toml"),
        EXPERIMENT.replace("jobs = 150", "jobs = 100"),
    )
    .unwrap();
    let e = fails(&run_in(
        d,
        &["sweep", "exp.toml", "--out", "part.csv", "-q"],
    ));
    assert!(
        e.contains("other settings (seed, seeds or workload)"),
        "{e}"
    );
    assert_eq!(fs::read(d.join("part.csv")).unwrap(), full.as_bytes());
}

#[test]
fn sweep_killed_mid_run_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let exp = EXPERIMENT.replace("jobs = 150", "jobs = 20000");
    fs::write(d.join("exp.toml"), &exp).unwrap();
    ok(&run_in(
        d,
        &["sweep", "exp.toml", "--out", "want.csv", "-q", "--no-plots"],
    ));

    let mut child = bin()
        .current_dir(d)
        .args([
            "sweep",
            "exp.toml",
            "--out",
            "got.csv",
            "--threads",
            "1",
            "-q",
            "--no-plots",
        ])
        .spawn()
        .unwrap();
    let partial = d.join("got.csv.partial");
    // Kill it once at least one point is on disk (or let it finish, if the
    // machine is fast enough to beat the polling).
    for _ in 0..2000 {
        if fs::read_to_string(&partial).is_ok_and(|t| t.lines().count() >= 2)
            || child.try_wait().unwrap().is_some()
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let killed = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    child.wait().unwrap();
    eprintln!("killed mid-run: {killed}");
    if partial.exists() {
        assert!(
            !d.join("got.csv").exists(),
            "a killed sweep left a final file"
        );
    }
    ok(&run_in(
        d,
        &["sweep", "exp.toml", "--out", "got.csv", "-q", "--no-plots"],
    ));
    assert_eq!(
        fs::read(d.join("got.csv")).unwrap(),
        fs::read(d.join("want.csv")).unwrap()
    );
}

#[test]
fn shipped_example_experiments_parse_and_validate() {
    // --limit 0: everything is checked, nothing is computed or written.
    let dir = tempfile::tempdir().unwrap();
    let mut seen = 0;
    for entry in fs::read_dir(repo().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let msg = ok(&run_in(
            dir.path(),
            &["sweep", path.to_str().unwrap(), "--limit", "0", "-q"],
        ));
        assert!(
            msg.starts_with("stopped with "),
            "{}: {msg}",
            path.display()
        );
        seen += 1;
    }
    assert!(seen >= 3);
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    let msg = ok(&run_in(
        dir.path(),
        &[
            "sweep",
            &example("kimyoon-small.toml"),
            "--limit",
            "0",
            "-q",
        ],
    ));
    assert!(msg.contains("stopped with 12 of 12 points left"), "{msg}");
}

// -------------------------------------------------------------------- replay

#[test]
fn replay_shows_mapping_load_and_comparison() {
    let trace = example("mesh8x8-load0.6.swf");
    let text = ok(&run(&["replay", &trace, "-t", "mesh:8x8"]));
    assert!(text.contains("(200 jobs)"), "{text}");
    // Most square boxes (ShapeMapping): 7–9 processors → 3x3, 10–12 → 4x3.
    let row = |p: &str, shape: &str| {
        text.lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() >= 3 && f[0] == p && f[1] == shape
        })
    };
    assert!(row("7–9", "3x3"), "{text}");
    assert!(row("10–12", "4x3"), "{text}");
    assert!(text.contains("trace as recorded"));

    let csv = ok(&run(&[
        "replay", &trace, "-t", "mesh:8x8", "--format", "csv",
    ]));
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let names: Vec<(&str, &str)> = rows.iter().map(|r| (r[0], r[1])).collect();
    assert_eq!(
        names,
        [
            ("fsl", "shapes"),
            ("busy-list", "shapes"),
            ("adaptive-scan", "shapes"),
            ("paging", "counts"),
            ("paging", "shapes")
        ]
    );
    for r in &rows {
        assert_eq!(r[2], "200");
    }
    assert_eq!(rows[3][10], "1");
    // --output writes the same report to a file, and nothing to stdout.
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "replay", &trace, "-t", "mesh:8x8", "--format", "csv", "-o", "r.csv",
        ],
    );
    assert!(ok(&out).is_empty());
    assert_eq!(fs::read_to_string(dir.path().join("r.csv")).unwrap(), csv);
    // Paging never misses: any request of at most the free nodes fits.
    assert_eq!(rows[3][9], "0");
}

#[test]
fn replay_writes_a_report_page_of_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("nasa.html");
    let page_arg = page.display().to_string();
    let nasa = nasa();
    let o = run(&[
        "replay",
        &nasa,
        "--topology",
        "hypercube:7",
        "--allocators",
        "buddy,partner",
        "--jobs",
        "400",
        "--report",
        &page_arg,
        "-q",
    ]);
    ok(&o);
    let html = fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // Four runs (two strategies, the reference on counts and on shapes),
    // each with its 400 jobs, on the 7-cube's 128 nodes.
    assert_eq!(
        html.matches(r#""total":400"#).count(),
        4,
        "{}",
        &html[..400]
    );
    assert_eq!(
        html.matches(r#""machine":"hypercube:7","nodes":128"#)
            .count(),
        4
    );
    assert!(html.contains(r#""label":"buddy · fcfs (shapes)""#));
    // The trace is an input: a report over it is refused and it stays whole.
    let copy = dir.path().join("t.swf");
    fs::copy(&nasa, &copy).unwrap();
    let before = fs::read(&copy).unwrap();
    let copy_arg = copy.display().to_string();
    let e = fails(&run(&[
        "replay",
        &copy_arg,
        "--topology",
        "hypercube:7",
        "--jobs",
        "50",
        "--report",
        &copy_arg,
    ]));
    assert!(e.contains("--report"), "{e}");
    assert_eq!(fs::read(&copy).unwrap(), before);
}

#[test]
fn simulate_writes_a_report_page_of_its_first_replication() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&run_in(
        d,
        &[
            "simulate",
            "-t",
            "mesh:16x16",
            "-a",
            "fsl",
            "--load",
            "0.6",
            "--jobs",
            "300",
            "--seeds",
            "2",
            "--report",
            "g.html",
            "-q",
        ],
    ));
    let html = fs::read_to_string(d.join("g.html")).unwrap();
    assert!(
        html.contains(r#""label":"fsl · fcfs","machine":"mesh:16x16","nodes":256,"total":300"#)
    );
    let nasa = nasa();
    ok(&run_in(
        d,
        &[
            "simulate",
            "-t",
            "hypercube:7",
            "-a",
            "buddy",
            "--trace",
            &nasa,
            "--jobs",
            "250",
            "--report",
            "t.html",
            "-q",
        ],
    ));
    let html = fs::read_to_string(d.join("t.html")).unwrap();
    assert!(html.contains(r#""total":250"#));
    // Too many jobs to keep for a page: refused before anything runs.
    let e = fails(&run_in(
        d,
        &[
            "simulate", "-t", "mesh:8x8", "-a", "fsl", "--jobs", "20000000", "--report", "big.html",
        ],
    ));
    assert!(e.contains("--jobs with --report"), "{e}");
    assert!(!d.join("big.html").exists());
}

/// On a machine without hop distances nothing is measured, and replay says
/// so rather than printing a distance of 0.
#[test]
fn replay_shows_no_dispersal_where_none_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir_all(d.join("examples")).unwrap();
    for f in ["blocks-8x18.sacct", "blocks-8x18.conf"] {
        fs::copy(example(f), d.join("examples").join(f)).unwrap();
    }
    let base = [
        "replay",
        "examples/blocks-8x18.sacct",
        "--trace-format",
        "sacct",
        "-t",
        "blocks:examples/blocks-8x18.conf",
        "--allocators",
        "block",
        "-q",
    ];
    let text = ok(&run_in(d, &base));
    let row = text.lines().find(|l| l.starts_with("block ")).unwrap();
    assert!(row.contains("     –      –"), "{row}");
    let mut json = base.to_vec();
    json.extend(["--format", "json"]);
    let v: Value = serde_json::from_str(&ok(&run_in(d, &json))).unwrap();
    assert!(v["runs"][0]["mean_pairwise_distance"].is_null(), "{v}");
    // A mesh measures it.
    let mesh = ok(&run(&[
        "replay",
        &example("mesh8x8-load0.6.swf"),
        "-t",
        "mesh:8x8",
        "--format",
        "json",
        "-q",
    ]));
    let v: Value = serde_json::from_str(&mesh).unwrap();
    assert!(v["runs"][0]["mean_pairwise_distance"].as_f64().unwrap() > 1.0);
}

#[test]
fn replay_scales_the_nasa_trace_to_a_target_load() {
    let out = ok(&run(&[
        "replay",
        &nasa(),
        "-t",
        "hypercube:7",
        "--jobs",
        "1500",
        "--target-load",
        "0.6",
        "--format",
        "json",
    ]));
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["jobs"], 1500);
    let loads = &json["loads"];
    assert!((loads["scaled"].as_f64().unwrap() - 0.6).abs() < 1e-12);
    let scale = loads["scale"].as_f64().unwrap();
    let original = loads["original"].as_f64().unwrap();
    assert!((scale * original - 0.6).abs() < 1e-12);
    // The iPSC/860 ran power-of-two partitions: every count is a subcube.
    for m in json["mapping"].as_array().unwrap() {
        let (lo, hi) = (
            m["processors_min"].as_u64().unwrap(),
            m["processors_max"].as_u64().unwrap(),
        );
        assert_eq!(lo, hi);
        assert!(lo.is_power_of_two());
        assert_eq!(m["shape"], format!("Q_{}", lo.trailing_zeros()));
    }
    let runs = json["runs"].as_array().unwrap();
    let names: Vec<&str> = runs
        .iter()
        .map(|r| r["allocator"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["buddy", "partner", "multiple-gray-code", "paging", "paging"]
    );
    for r in runs {
        assert_eq!(r["completed"], 1500);
    }
}

// ---------------------------------------------------------------------- show

/// A tiny trace on a 4x4 mesh, replayed with paging on plain counts.
/// Paging grants the lowest free node ids. Job 1 (4 nodes, 0–10) gets ids
/// 0–3, job 2 (6 nodes, 0–20) ids 4–9; job 3 (10 nodes, arriving at 1)
/// waits until 10 and then takes ids 0–3 and 10–15.
const TINY: &str = "; MaxNodes: 16\n\
1 0 -1 10 4 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n\
2 0 -1 20 6 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n\
3 1 -1 30 10 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n";

#[test]
fn show_draws_the_occupancy_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("tiny.swf"), TINY).unwrap();
    let base = [
        "show",
        "-t",
        "mesh:4x4",
        "-a",
        "paging",
        "--trace",
        "tiny.swf",
        "--mapping",
        "nodes",
    ];
    let mut a = base.to_vec();
    a.extend(["--at", "5"]);
    let text = ok(&run_in(d, &a));
    assert!(
        text.contains("2 jobs running on 10 of 16 nodes, 1 waiting"),
        "{text}"
    );
    assert!(text.contains("\nAAAA\nBBBB\nBB..\n....\n"), "{text}");

    let mut a = base.to_vec();
    a.extend(["--at", "12", "--svg", "at12.svg"]);
    let text = ok(&run_in(d, &a));
    assert!(
        text.contains("2 jobs running on 16 of 16 nodes, 0 waiting"),
        "{text}"
    );
    // Job 2 started first (A), job 3 at 10 (B).
    assert!(text.contains("\nBBBB\nAAAA\nAABB\nBBBB\n"), "{text}");
    assert!(text.contains("A job 2"));
    assert!(text.contains("B job 3"));
    let svg = fs::read_to_string(d.join("at12.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
    assert_eq!(svg.matches("<title>job 3 ").count(), 10);
    assert_eq!(svg.matches("<title>job 2 ").count(), 6);
}

/// A Slurm block machine is drawn one row per base block, labelled with the
/// block's name, and grants print as hostlists (Slurm's `NodeList`), in the
/// picture and in the per-job CSV. Paging grants the lowest free ids: job 1
/// A picture names the machine's file, not its path; its title and
/// summary fit its width; a time after the trace's last job is refused.
#[test]
fn show_titles_fit_name_no_path_and_refuse_a_time_past_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir_all(d.join("deep/machines")).unwrap();
    fs::copy(
        example("blocks-8x18.conf"),
        d.join("deep/machines/racks.conf"),
    )
    .unwrap();
    let base = [
        "show",
        "-t",
        "blocks:deep/machines/racks.conf",
        "-a",
        "block[segment=6]",
        "--load",
        "0.5",
    ];
    let mut a = base.to_vec();
    a.extend(["--at", "11", "--svg", "p.svg"]);
    let text = ok(&run_in(d, &a));
    assert!(
        text.starts_with("blocks:racks.conf · block[segment=6]"),
        "{text}"
    );
    let svg = fs::read_to_string(d.join("p.svg")).unwrap();
    assert!(!svg.contains("deep/machines"), "the picture names a path");
    let width: f64 = svg
        .split("width=\"")
        .nth(1)
        .and_then(|w| w.split('"').next())
        .and_then(|w| w.parse().ok())
        .unwrap();
    let summary = svg
        .lines()
        .find(|l| l.contains(r#"y="40""#))
        .and_then(|l| l.split('>').nth(1))
        .and_then(|l| l.split('<').next())
        .unwrap();
    // 12-pixel text: at least half an em a character must fit.
    assert!(
        width >= 6.0 * summary.chars().count() as f64,
        "{width} for {summary:?}"
    );
    // A trace's end: a later time is refused and nothing is written.
    fs::write(
        d.join("t.swf"),
        "1 0 -1 10 3 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n2 5 -1 20 4 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    // The same machine and trace, at a time, with the picture's file if given.
    let on_trace = |at: &str, svg: Option<&str>| {
        let mut a = vec![
            "show",
            "-t",
            "blocks:deep/machines/racks.conf",
            "-a",
            "block",
            "--trace",
            "t.swf",
            "--at",
            at,
        ];
        a.extend(svg.map(|f| ["--svg", f]).into_iter().flatten());
        run_in(d, &a)
    };
    let e = fails(&on_trace("26", Some("late.svg")));
    assert!(
        e.contains("--at 26: the trace's last job ends at 25"),
        "{e}"
    );
    assert!(!d.join("late.svg").exists());
    ok(&on_trace("25", None));
}

/// (3 nodes) n[0-2], job 2 (4 nodes) n[3-6], across the two blocks.
#[test]
fn show_and_job_records_print_hostlists_on_a_block_machine() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(
        d.join("t.conf"),
        "BlockName=b0 Nodes=n[0-3]\nBlockName=b1 Nodes=n[4-7]\nBlockSizes=4,8\n",
    )
    .unwrap();
    fs::write(
        d.join("t.swf"),
        "1 0 -1 10 3 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n\
         2 0 -1 20 4 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    let base = ["-t", "blocks:t.conf", "-a", "paging", "--trace", "t.swf"];
    let mut a = vec!["show"];
    a.extend(base);
    a.extend(["--at", "5", "--svg", "at5.svg"]);
    let text = ok(&run_in(d, &a));
    // n7 is free in the partly busy block b1.
    assert!(
        text.contains("2 jobs running on 7 of 8 nodes, 0 waiting; 1 stranded node (free in partly busy base blocks)"),
        "{text}"
    );
    assert!(text.contains("\nb0  AAAB\nb1  BBB.\n"), "{text}");
    assert!(text.contains("A job 1          3 nodes  n[0-2] "), "{text}");
    assert!(text.contains("B job 2          4 nodes  n[3-6] "), "{text}");
    let svg = fs::read_to_string(d.join("at5.svg")).unwrap();
    assert!(svg.contains(r#"text-anchor="end">b1</text>"#), "{svg}");
    assert_eq!(
        svg.matches("<title>job 2 (4 nodes) n[3-6]</title>").count(),
        4
    );

    let mut a = vec!["simulate"];
    a.extend(base);
    a.extend(["--jobs-csv", "jobs.csv"]);
    ok(&run_in(d, &a));
    let csv = fs::read_to_string(d.join("jobs.csv")).unwrap();
    // The partition column, then the five dispersal columns, empty on a
    // Slurm machine (no hop distances), then the bounded slowdown, then
    // the two empty capacity-machine columns.
    let nodelists: Vec<&str> = csv
        .lines()
        .skip(1)
        .filter_map(|l| {
            l.strip_suffix(",,")?
                .rsplit_once(',')?
                .0
                .strip_suffix(",,,,,")?
                .rsplit(',')
                .next()
        })
        .collect();
    assert_eq!(nodelists, ["n[0-2]", "n[3-6]"], "{csv}");
}

/// Buddy on a 4-cube grants the least aligned free block (Al-Dhelaan &
/// Bose, Alg. 1): Q_3 0XXX (nodes 0–7), then Q_2 10XX (8–11), then 3
/// processors round up to Q_2 11XX (12–15). The picture puts the low two
/// bits of a node id across and the high two down.
#[test]
fn show_lays_a_hypercube_out_by_address_bits() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("h.swf"),
        "1 0 -1 10 8 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n\
         2 0 -1 10 4 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n\
         3 0 -1 10 3 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    let text = ok(&run_in(
        dir.path(),
        &words("show -t hypercube:4 -a buddy --trace h.swf --at 1"),
    ));
    assert!(
        text.contains("3 jobs running on 16 of 16 nodes, 0 waiting"),
        "{text}"
    );
    assert!(text.contains("\nAAAA\nAAAA\nBBBB\nCCCC\n"), "{text}");
    for (sym, id, nodes, cube) in [
        ("A", 1, 8, "0XXX"),
        ("B", 2, 4, "10XX"),
        ("C", 3, 4, "11XX"),
    ] {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{sym} job {id} ")))
            .unwrap();
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!((f[3], f[5]), (nodes.to_string().as_str(), cube), "{line}");
    }
}

#[test]
fn show_slices_a_3d_machine_and_counts_agree() {
    let text = ok(&run(&words(
        "show -t mesh:4x4x4 -a fsl-3d --shapes cubic --load 0.7 --at 15 --seed 3",
    )));
    let header = text.lines().next().unwrap();
    let busy: usize = header
        .split(" running on ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(text.matches("slice z = ").count(), 4);
    let drawn: usize = text
        .lines()
        .filter(|l| l.len() == 4 && l.chars().all(|c| c == '.' || c.is_ascii_alphanumeric()))
        .map(|l| l.chars().filter(|&c| c != '.').count())
        .sum();
    assert_eq!(drawn, busy);
    let legend: usize = text
        .lines()
        .filter(|l| l.trim_start().contains(" job "))
        .map(|l| {
            l.split_whitespace()
                .nth(3)
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(legend, busy);
}

// ------------------------------------------------------------------ generate

#[test]
fn generate_writes_a_trace_that_replays() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = [
        "generate",
        "-t",
        "mesh:8x8",
        "--load",
        "0.6",
        "--residence",
        "exp:10",
        "--jobs",
        "200",
        "--seed",
        "7",
        "--out",
        "g.swf",
    ];
    ok(&run_in(d, &args));
    let text = fs::read_to_string(d.join("g.swf")).unwrap();
    assert!(text.contains("; MaxNodes: 64\n"));
    assert_eq!(text.lines().filter(|l| !l.starts_with(';')).count(), 200);
    // The shipped example is exactly this command's output.
    assert!(
        text == fs::read_to_string(example("mesh8x8-load0.6.swf")).unwrap(),
        "examples/mesh8x8-load0.6.swf is stale: regenerate it with `partalloc {}`",
        args.join(" ")
            .replace("g.swf", "examples/mesh8x8-load0.6.swf")
    );
}

// ----------------------------------------------------------------- bad input

#[test]
fn unknown_names_list_the_known_ones() {
    let e = fails(&run(&[
        "simulate", "-t", "mesh:8x8", "-a", "fsll", "--jobs", "5",
    ]));
    assert!(e.contains("unknown allocation strategy \"fsll\""), "{e}");
    // The long list is not spelled out: the closest name is, and where
    // to find them all.
    assert!(
        e.contains("(did you mean \"fsl\"?)") && e.contains("partalloc strategies"),
        "{e}"
    );
    let e = fails(&run(&[
        "simulate", "-t", "mesh:8x8", "-a", "fsl", "-s", "sjf", "--jobs", "5",
    ]));
    assert!(
        e.contains("unknown scheduling policy \"sjf\"") && e.contains("m-fcfs"),
        "{e}"
    );
    let e = fails(&run(&[
        "replay",
        &example("mesh8x8-load0.6.swf"),
        "-t",
        "mesh:8x8",
        "-a",
        "bogus",
    ]));
    assert!(e.contains("known strategies"), "{e}");
    let e = fails(&run(&words("simulate -t hypercube:4 -a fsl --jobs 5")));
    assert!(e.contains("fsl does not run on hypercube:4"), "{e}");
}

#[test]
fn malformed_topologies_are_refused() {
    for (t, want) in [
        ("mesh:8xq", "\"q\" is not a non-negative integer"),
        ("blob:4", "unknown family"),
        ("mesh8x8", "missing ':'"),
    ] {
        let e = fails(&run(&["simulate", "-t", t, "-a", "fsl"]));
        assert!(
            e.contains(&format!("--topology {t:?}")) && e.contains(want),
            "{e}"
        );
    }
}

#[test]
fn shapes_larger_than_the_machine_are_refused() {
    let e = fails(&run(&words("simulate -t mesh:8x8 -a fsl --max-sides 16x4")));
    assert!(e.contains("larger than the machine mesh:8x8"), "{e}");
    let e = fails(&run(&words(
        "simulate -t hypercube:4 -a buddy --cube-dims uniform:0-6",
    )));
    assert!(e.contains("larger than the machine's 4-cube"), "{e}");
    // A trace job of 100 processors on a 64-node mesh: its line is named.
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("big.swf"),
        "; MaxNodes: 128\n1 0 -1 5 4 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n2 3 -1 5 100 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    let e = fails(&run_in(
        dir.path(),
        &[
            "simulate", "-t", "mesh:8x8", "-a", "fsl", "--trace", "big.swf",
        ],
    ));
    assert!(
        e.contains("big.swf: line 3: job 2") && e.contains("100 nodes"),
        "{e}"
    );
}

#[test]
fn saturating_loads_need_the_flag() {
    let e = fails(&run(&[
        "simulate", "-t", "mesh:8x8", "-a", "fsl", "--load", "1.0", "--jobs", "20",
    ]));
    assert!(
        e.contains("offered load 1 is at least 1") && e.contains("--allow-saturation"),
        "{e}"
    );
    let out = ok(&run(&words(
        "simulate -t mesh:8x8 -a fsl --load 1.2 --jobs 20 --allow-saturation --format json",
    )));
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["replications"][0]["completed"], 20);
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("sat.toml"),
        EXPERIMENT.replace("0.6]", "1.5]"),
    )
    .unwrap();
    let e = fails(&run_in(dir.path(), &["sweep", "sat.toml"]));
    assert!(
        e.contains("load 1.5") && e.contains("allow_saturation"),
        "{e}"
    );
}

#[test]
fn malformed_traces_name_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("bad.swf"),
        "; MaxNodes: 16\n1 0 -1 10 4 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n2 5 -1 ten 4 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n3 6 -1 1 4 -1\n4 8 -1 2 4 -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    let e = fails(&run_in(
        dir.path(),
        &["replay", "bad.swf", "-t", "mesh:4x4"],
    ));
    assert!(
        e.contains("bad.swf: line 3: field 4 (run time): \"ten\" is not a number"),
        "{e}"
    );
    // Lenient: both bad lines skipped and counted.
    let text = ok(&run_in(
        dir.path(),
        &words("replay bad.swf -t mesh:4x4 --lenient -a first-fit"),
    ));
    assert!(
        text.contains("(2 jobs, 2 malformed lines skipped)"),
        "{text}"
    );
}

#[test]
fn unreadable_and_unwritable_paths() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let e = fails(&run_in(d, &["replay", "missing.swf", "-t", "hypercube:7"]));
    assert!(e.contains("missing.swf"), "{e}");
    let e = fails(&run_in(d, &["sweep", "missing.toml"]));
    assert!(e.contains("missing.toml"), "{e}");
    // A job file in a directory that does not exist: nothing written.
    let mut a = SIM.to_vec();
    a.extend(["--jobs-csv", "no/such/dir/jobs.csv"]);
    let e = fails(&run_in(d, &a));
    assert!(e.contains("no/such/dir/jobs.csv"), "{e}");
    // A failed run leaves no job file behind.
    let e = fails(&run_in(
        d,
        &words("simulate -t mesh:8x8 -a nope --jobs-csv j.csv"),
    ));
    assert!(e.contains("unknown allocation strategy"));
    assert!(!d.join("j.csv").exists());
    let mut a = SIM.to_vec();
    a.extend(["--output", "no/such/dir/report.txt"]);
    let e = fails(&run_in(d, &a));
    assert!(e.contains("no/such/dir/report.txt"), "{e}");
    // A sweep into a missing directory.
    fs::write(d.join("exp.toml"), EXPERIMENT).unwrap();
    let e = fails(&run_in(d, &["sweep", "exp.toml", "--out", "nowhere/x.csv"]));
    assert!(e.contains("does not exist"), "{e}");
    // An SVG that cannot be written: no file, no text claiming success.
    let e = fails(&run_in(
        d,
        &words("show -t mesh:4x4 -a paging --at 1 --svg nowhere/x.svg"),
    ));
    assert!(e.contains("nowhere/x.svg"), "{e}");
    assert_eq!(fs::read_dir(d).unwrap().count(), 1, "stray files left");
}

#[test]
fn malformed_experiment_files_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("e.toml"),
        "topologies = [\"mesh:4x4\"]\nallocators = [\"fsl\"]\nloads = [0.5]\n[workload]\njobz = 3\n",
    )
    .unwrap();
    let e = fails(&run_in(dir.path(), &["sweep", "e.toml"]));
    assert!(e.contains("e.toml: line 5: unknown field `jobz`"), "{e}");
    fs::write(
        dir.path().join("f.toml"),
        "topologies = [\"hypercube:4\"]\nallocators = [\"fsl\"]\nloads = [0.5]\n",
    )
    .unwrap();
    let e = fails(&run_in(dir.path(), &["sweep", "f.toml"]));
    assert!(e.contains("allocator \"fsl\" on hypercube:4"), "{e}");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn command_line_errors_exit_with_2() {
    let o = run(&["simulate", "--topology", "mesh:4x4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--allocator"));
}

#[test]
fn replay_reads_cores_per_node_and_sacct_dumps() {
    let dir = tempfile::tempdir().unwrap();
    // Jobs of 72, 144 and 10 processors: 1, 2 and 1 nodes of 72 cores.
    let swf = "; tiny\n\
        1 0 0 100 72 -1 -1 72 200 -1 1 1 1 -1 1 -1 -1 -1\n\
        2 10 0 50 144 -1 -1 144 200 -1 1 1 1 -1 1 -1 -1 -1\n\
        3 20 0 30 10 -1 -1 10 200 -1 1 1 1 -1 1 -1 -1 -1\n";
    fs::write(dir.path().join("t.swf"), swf).unwrap();
    let args = [
        "replay",
        "t.swf",
        "-t",
        "mesh:2x2",
        "-a",
        "first-fit",
        "--format",
        "json",
    ];
    let e = fails(&run_in(dir.path(), &args));
    assert!(e.contains("72"), "{e}");
    let out = ok(&run_in(
        dir.path(),
        &[&args[..], &["--cores-per-node", "72"]].concat(),
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["jobs"], 3);
    let counts: Vec<(u64, u64)> = v["mapping"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["processors_min"].as_u64().unwrap(),
                r["jobs"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(counts, [(1, 2), (2, 1)]);
    let zero = run_in(
        dir.path(),
        &[&args[..], &["--cores-per-node", "0"]].concat(),
    );
    assert!(!zero.status.success() && stderr(&zero).contains("--cores-per-node"));

    // The same three jobs as a sacct dump, with a step, a pending job and
    // a bad line (skipped in lenient mode).
    let dump = "JobID|Submit|Start|End|NNodes|Timelimit|State\n\
        1|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:40|1|00:03:20|COMPLETED\n\
        1.batch|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:40|1||COMPLETED\n\
        2|2024-01-01T00:00:10|2024-01-01T00:01:40|2024-01-01T00:02:30|2|00:03:20|COMPLETED\n\
        3|2024-01-01T00:00:20|2024-01-01T00:00:20|2024-01-01T00:00:50|1|00:03:20|COMPLETED\n\
        4|2024-01-01T00:00:30|Unknown|Unknown|1|00:03:20|PENDING\n\
        5|2024-01-01T00:00:40|x|2024-01-01T00:00:50|1|00:03:20|FAILED\n";
    fs::write(dir.path().join("d.txt"), dump).unwrap();
    let sacct = [
        "replay",
        "d.txt",
        "-t",
        "mesh:2x2",
        "-a",
        "first-fit",
        "--trace-format",
        "sacct",
        "--format",
        "json",
    ];
    let e = fails(&run_in(dir.path(), &sacct));
    assert!(e.contains("line 7: Start: \"x\""), "{e}");
    let out = ok(&run_in(dir.path(), &[&sacct[..], &["--lenient"]].concat()));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["jobs"].as_u64(), v["skipped_lines"].as_u64()),
        (Some(3), Some(2))
    );
    assert!(
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["completed"] == 3),
        "{out}"
    );
}

#[test]
fn max_sides_caps_node_count_jobs_and_the_report_says_how_many_were_measured() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = dir.path().join("jobs.csv");
    let blocks = format!("blocks:{}", example("blocks-8x18.conf"));
    let out = ok(&run(&[
        "simulate",
        "-t",
        &blocks,
        "-a",
        "block",
        "--jobs",
        "300",
        "--max-sides",
        "18",
        "--jobs-csv",
        jobs.to_str().unwrap(),
    ]));
    assert!(out.contains("nodes up to 18"), "{out}");
    // The slurm measure is taken on a block machine, and listed.
    assert!(out.contains("stranded nodes"), "{out}");
    assert!(out.contains("racks per job"), "{out}");
    assert!(!out.contains("pairwise distance"), "{out}");
    let csv = fs::read_to_string(&jobs).unwrap();
    let requested: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(8).unwrap().parse().unwrap())
        .collect();
    assert_eq!(requested.len(), 300);
    assert!(
        requested.iter().all(|&n| (1..=18).contains(&n)),
        "{requested:?}"
    );
    assert!(requested.iter().any(|&n| n > 9));
    let e = fails(&run(&[
        "simulate",
        "-t",
        &blocks,
        "-a",
        "block",
        "--jobs",
        "10",
        "--max-sides",
        "200",
    ]));
    assert!(
        e.contains("larger than the largest job") && e.contains("can place, 144 nodes"),
        "{e}"
    );
}

#[test]
fn a_replayed_trace_on_a_slurm_machine_reports_its_locality() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("blocks.swf");
    let blocks = format!("blocks:{}", example("blocks-8x18.conf"));
    ok(&run(&[
        "generate",
        "-t",
        &blocks,
        "--jobs",
        "300",
        "--load",
        "0.7",
        "--out",
        trace.to_str().unwrap(),
    ]));
    for (limit, want) in [(None, 300), (Some("120"), 120)] {
        let mut args = vec![
            "simulate",
            "-t",
            &blocks,
            "-a",
            "block[segment=6]",
            "--trace",
            trace.to_str().unwrap(),
            "--format",
            "json",
        ];
        if let Some(l) = limit {
            args.extend(["--jobs", l]);
        }
        let out = ok(&run(&args));
        let v: Value = serde_json::from_str(&out).unwrap();
        let m = &v["replications"][0];
        assert_eq!(m["completed"], want, "{m}");
        assert_eq!(m["measured"], "slurm", "{m}");
        assert_eq!(m["mean_split_segments"], 0.0, "{m}");
        let share = m["lowest_level_share"].as_f64().unwrap();
        assert!(share > 0.0 && share <= 1.0, "{m}");
        assert!(m["mean_racks_per_job"].as_f64().unwrap() >= 1.0, "{m}");
    }
}

#[test]
fn simulate_runs_every_slurm_strategy_on_block_and_tree_files() {
    let blocks = format!("blocks:{}", example("blocks-8x18.yaml"));
    for a in [
        "block",
        "block[segment=6]",
        "block[exclusive=true]",
        "block-buddy",
        "paging",
    ] {
        let out = ok(&run(&[
            "simulate", "-t", &blocks, "-a", a, "--jobs", "200", "--format", "json",
        ]));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(v.to_string().contains("blocks-8x18.yaml"), "{a}: {out}");
        // The run's locality and fragmentation: segments of 6 never
        // straddle a rack, and whole-block grants strand no node.
        let m = &v["replications"][0];
        let stranded = m["mean_stranded_nodes"].as_f64().unwrap();
        assert!((0.0..=144.0).contains(&stranded), "{a}: {m}");
        assert!(m["mean_racks_per_job"].as_f64().unwrap() >= 1.0, "{a}: {m}");
        // The metrics list the slurm measure's quantities, not dispersal.
        let listed = v["metrics"].to_string();
        assert!(listed.contains("mean_stranded_nodes"), "{a}: {listed}");
        assert!(!listed.contains("mean_pairwise_distance"), "{a}: {listed}");
        match a {
            "block[segment=6]" => assert_eq!(m["mean_split_segments"], 0.0, "{m}"),
            "block-buddy" => assert_eq!(stranded, 0.0, "{a}: {m}"),
            _ => {}
        }
    }
    let tree = format!("tree:{}", example("tree-2level.conf"));
    for a in ["tree", "paging"] {
        ok(&run(&["simulate", "-t", &tree, "-a", a, "--jobs", "200"]));
    }
    let listing = ok(&run(&["strategies", "--topology", &blocks]));
    assert!(
        listing.contains("block-buddy") && !listing.contains("\n  tree\n"),
        "{listing}"
    );
    let e = fails(&run(&[
        "simulate", "-t", &tree, "-a", "block", "--jobs", "10",
    ]));
    assert!(e.contains("accepts: blocks"), "{e}");
    let e = fails(&run(&words("simulate -t blocks:no-such.conf -a block")));
    assert!(e.contains("no-such.conf"), "{e}");
}
