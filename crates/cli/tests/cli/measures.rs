//! One experiment, every front end: on one machine of each family,
//! `simulate` and a `sweep` point of the same experiment report the same
//! value of every metric (the measures of the machine's family among them),
//! leave out the same unmeasured ones, and taking fewer measures changes no
//! basic quantity.
#![expect(
    clippy::unwrap_used,
    reason = "the helpers running the binary sit outside #[test] functions"
)]

use std::collections::BTreeMap;
use std::fs;

use serde_json::Value;

use crate::support::{ok, repo, run, run_in};

/// (machine, allocator, the measures its family takes): every family's
/// example and every form that reads files, from the one table of
/// machine sources (`partalloc_experiment::forms`), where generated
/// workloads run (on the others, `everywhere.rs` replays a trace).
fn machines() -> Vec<(String, &'static str, &'static str)> {
    use partalloc_experiment::forms::{FAMILIES, Family, MACHINE_FILE_FORMS};
    let at_root = |files: &[&str]| -> Vec<String> {
        files
            .iter()
            .map(|f| repo().join(f).display().to_string())
            .collect()
    };
    let mut out: Vec<(String, &'static str, &'static str)> = Vec::new();
    for family in FAMILIES.iter().filter(|f| f.workload.is_some()) {
        let files = at_root(family.files);
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        out.push((family.machine(&refs), family.strategy, family.measured));
    }
    for form in MACHINE_FILE_FORMS {
        let files = at_root(form.examples);
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        let machine = form.machine(&refs);
        let kind = partalloc_experiment::MachineSource::parse(&machine)
            .load("test", usize::MAX)
            .unwrap()
            .kind();
        let family = Family::of(kind).unwrap();
        if family.workload.is_some() && !out.iter().any(|(m, _, _)| *m == machine) {
            out.push((machine, form.strategy, family.measured));
        }
    }
    out
}

/// The cells of a CSV line (quoted cells hold commas).
fn cells(line: &str) -> Vec<String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(line.as_bytes());
    reader
        .records()
        .next()
        .unwrap()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect()
}

/// Whether the registry's strategy `name` runs on `machine`.
fn accepts(name: &str, machine: &str) -> bool {
    let kind = partalloc_experiment::MachineSource::parse(machine)
        .load("test", usize::MAX)
        .unwrap()
        .kind();
    partalloc::allocators::registry::strategies()
        .any(|s| s.name == name && s.topologies.contains(&kind))
}

/// `simulate --format json` of the common experiment, plus `extra` flags.
fn simulate(machine: &str, allocator: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "simulate", "-t", machine, "-a", allocator, "--load", "0.5", "--jobs", "150", "--seeds",
        "2", "--format", "json", "-q",
    ];
    args.extend(extra);
    serde_json::from_str(&ok(&run(&args))).unwrap()
}

#[test]
fn simulate_and_sweep_report_the_same_measures_on_every_family() {
    let dir = tempfile::tempdir().unwrap();
    for (machine, allocator, measured) in machines() {
        let v = simulate(&machine, allocator, &[]);
        assert_eq!(v["replications"][0]["measured"], measured, "{machine}");
        let exp = format!(
            "topologies = [{machine:?}]\nallocators = [{allocator:?}]\nloads = [0.5]\nseeds = 2\n[workload]\njobs = 150\n"
        );
        let file = dir.path().join("exp.toml");
        fs::write(&file, exp).unwrap();
        let csv_path = dir.path().join("exp.csv");
        ok(&run_in(
            dir.path(),
            &[
                "sweep",
                file.to_str().unwrap(),
                "--out",
                csv_path.to_str().unwrap(),
                "--no-plots",
            ],
        ));
        let text = fs::read_to_string(&csv_path).unwrap();
        fs::remove_file(&csv_path).unwrap();
        let mut lines = text.lines();
        let head = cells(lines.next().unwrap());
        let values = cells(lines.next().unwrap());
        let row: BTreeMap<&str, &str> = head
            .iter()
            .map(String::as_str)
            .zip(values.iter().map(String::as_str))
            .collect();
        let listed: Vec<&str> = v["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["metric"].as_str().unwrap())
            .collect();
        for m in v["metrics"].as_array().unwrap() {
            let name = m["metric"].as_str().unwrap();
            let mean = m["mean"].as_f64().unwrap();
            let swept: f64 = row[name].parse().unwrap_or_else(|_| {
                panic!("{machine}: sweep left {name} empty, simulate gave {mean}")
            });
            assert_eq!(swept, mean, "{machine}: {name}");
        }
        // What simulate leaves out, the sweep leaves empty, and only that.
        for (col, cell) in &row {
            let Some(metric) = partalloc_metric(col) else {
                continue;
            };
            assert_eq!(
                cell.is_empty(),
                !listed.contains(&metric),
                "{machine}: column {col} = {cell:?}"
            );
        }
        // The family's own quantities are measured, not left at zero.
        let first = &v["replications"][0];
        match measured {
            "slurm" => assert!(first["mean_racks_per_job"].as_f64().unwrap() >= 1.0),
            "capacity" => assert!(first["mean_racks_per_job"].as_f64().unwrap() >= 1.0),
            "dispersal,pod" => assert!(first["mean_largest_placeable"].as_f64().unwrap() > 0.0),
            "frag" => assert!(first["mean_gpu_allocation"].as_f64().unwrap() > 0.0),
            "dispersal" => assert!(first["mean_pairwise_distance"].as_f64().unwrap() > 0.0),
            // A family with no measure of its own.
            _ => assert_eq!(measured, "none"),
        }
    }
}

/// The metric a sweep column holds (its mean or its half-width), if the
/// column is a metric's.
fn partalloc_metric(col: &str) -> Option<&str> {
    const NOT_METRICS: [&str; 6] = [
        "topology",
        "allocator",
        "scheduler",
        "load",
        "settings",
        "seeds",
    ];
    (!NOT_METRICS.contains(&col)).then(|| col.strip_suffix("_hw").unwrap_or(col))
}

#[test]
fn fewer_measures_change_no_basic_quantity() {
    for (machine, allocator, measured) in machines() {
        let all = simulate(&machine, allocator, &[]);
        let none = simulate(&machine, allocator, &["--measure", "none"]);
        assert_eq!(none["replications"][0]["measured"], "none", "{machine}");
        let basic: Vec<&Value> = none["metrics"].as_array().unwrap().iter().collect();
        // The basic quantities, value for value; nothing else is listed.
        let by_name = |v: &Value, name: &str| {
            v["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["metric"] == name)
                .cloned()
        };
        for m in &basic {
            let name = m["metric"].as_str().unwrap();
            assert_eq!(by_name(&all, name).as_ref(), Some(*m), "{machine}: {name}");
        }
        assert!(
            basic.len() < all["metrics"].as_array().unwrap().len() || measured == "none",
            "{machine}"
        );
        for gone in [
            "mean_pairwise_distance",
            "mean_stranded_nodes",
            "mean_racks_per_job",
        ] {
            assert!(by_name(&none, gone).is_none(), "{machine}: {gone}");
        }
    }
}

#[test]
fn replay_takes_several_policies_and_writes_the_first_run_s_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let trace = repo().join("examples/mesh8x8-load0.6.swf");
    let jobs = dir.path().join("jobs.csv");
    let out = ok(&run(&[
        "replay",
        trace.to_str().unwrap(),
        "-t",
        "mesh:8x8",
        "-a",
        "first-fit",
        "--scheduler",
        "fcfs,easy-backfilling",
        "--jobs",
        "200",
        "--measure",
        "none",
        "--jobs-csv",
        jobs.to_str().unwrap(),
        "--format",
        "json",
        "-q",
    ]));
    let v: Value = serde_json::from_str(&out).unwrap();
    let runs = v["runs"].as_array().unwrap();
    // Per policy: first-fit, then paging on counts and on shapes.
    let seen: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| {
            (
                r["allocator"].as_str().unwrap(),
                r["scheduler"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen.len(), 6, "{seen:?}");
    assert_eq!(seen[0], ("first-fit", "fcfs"));
    assert_eq!(seen[3], ("first-fit", "easy-backfilling"));
    // Nothing asked of dispersal: null, not 0.
    assert!(
        runs.iter().all(|r| r["mean_pairwise_distance"].is_null()),
        "{out}"
    );
    // Each run is compared with the reference under its own policy.
    for r in runs.iter().filter(|r| r["requests"] == "counts") {
        assert_eq!(r["response_vs_reference"], 1.0, "{r}");
    }
    let csv = fs::read_to_string(&jobs).unwrap();
    assert_eq!(csv.lines().count(), 201, "{csv}");
}

#[test]
fn a_sacct_dump_runs_the_same_in_simulate_replay_and_show() {
    let blocks = format!(
        "blocks:{}",
        repo().join("examples/blocks-8x18.conf").display()
    );
    let dump = repo().join("examples/blocks-8x18.sacct");
    let dump = dump.to_str().unwrap();
    let sim: Value = serde_json::from_str(&ok(&run(&[
        "simulate",
        "-t",
        &blocks,
        "-a",
        "block",
        "--trace",
        dump,
        "--trace-format",
        "sacct",
        "--format",
        "json",
    ])))
    .unwrap();
    let rep: Value = serde_json::from_str(&ok(&run(&[
        "replay",
        dump,
        "--trace-format",
        "sacct",
        "-t",
        &blocks,
        "-a",
        "block",
        "--format",
        "json",
        "-q",
    ])))
    .unwrap();
    let s = &sim["replications"][0];
    let r = &rep["runs"][0];
    assert_eq!(r["allocator"], "block");
    assert_eq!(s["completed"], r["completed"]);
    assert_eq!(s["mean_wait"], r["mean_wait"]);
    assert_eq!(s["mean_bounded_slowdown"], r["mean_bounded_slowdown"]);
    assert!(
        sim["workload"].as_str().unwrap().contains("sacct dump"),
        "{sim}"
    );
    // show draws the same dump at a moment.
    let out = ok(&run(&[
        "show",
        "-t",
        &blocks,
        "-a",
        "block",
        "--trace",
        dump,
        "--trace-format",
        "sacct",
        "--at",
        "100",
    ]));
    assert!(out.contains("stranded nodes"), "{out}");
}

#[test]
fn a_sweep_runs_a_trace_at_each_load_as_replay_scales_it() {
    let dir = tempfile::tempdir().unwrap();
    let trace = repo().join("examples/mesh8x8-load0.6.swf");
    let trace = trace.to_str().unwrap();
    let exp = format!(
        "topologies = [\"mesh:8x8\"]\nallocators = [\"paging\"]\nloads = [0.4, 0.6]\ntrace = {trace:?}\nmapping = \"nodes\"\n"
    );
    fs::write(dir.path().join("t.toml"), &exp).unwrap();
    ok(&run_in(
        dir.path(),
        &["sweep", "t.toml", "--no-plots", "-q"],
    ));
    let text = fs::read_to_string(dir.path().join("t.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let load = f[col("load")];
        assert_eq!(f[col("seeds")], "1", "a trace runs once");
        // replay scales the submits to the same offered load of the
        // processor counts: paging on counts is the same run.
        let rep: Value = serde_json::from_str(&ok(&run(&[
            "replay",
            trace,
            "-t",
            "mesh:8x8",
            "-a",
            "fsl",
            "--target-load",
            load,
            "--format",
            "json",
            "-q",
        ])))
        .unwrap();
        let counts = rep["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["requests"] == "counts")
            .unwrap();
        let swept: f64 = f[col("mean_wait")].parse().unwrap();
        assert_eq!(swept, counts["mean_wait"].as_f64().unwrap(), "load {load}");
    }
    // What a trace does not take is refused, naming the key.
    for (extra, says) in [
        ("seeds = 3\n", "seeds = 3: a trace runs once per point"),
        (
            "[workload]\njobs = 10\n",
            "a trace gives the jobs: remove the [workload] table",
        ),
        (
            "trace_format = \"csv\"\n",
            "trace_format: unknown trace format `csv`",
        ),
    ] {
        fs::write(dir.path().join("bad.toml"), format!("{exp}{extra}")).unwrap();
        let e = crate::support::fails(&run_in(dir.path(), &["sweep", "bad.toml", "-q"]));
        assert!(e.contains(says), "{extra}: {e}");
    }
    fs::write(
        dir.path().join("bad.toml"),
        "topologies = [\"mesh:8x8\"]\nallocators = [\"paging\"]\nloads = [0.4]\nmapping = \"nodes\"\n",
    )
    .unwrap();
    let e = crate::support::fails(&run_in(dir.path(), &["sweep", "bad.toml", "-q"]));
    assert!(e.contains("apply to a trace"), "{e}");
}

/// A trace runs the same in `simulate` and `replay` on every family: the
/// whole result of the run (every quantity, the family's measures among
/// them, and which were measured) is equal, for the strategy of the family
/// and for the reference on shapes.
#[test]
fn a_trace_runs_the_same_in_simulate_and_replay_on_every_family() {
    let dir = tempfile::tempdir().unwrap();
    for (machine, allocator, measured) in machines() {
        let trace = dir.path().join("t.swf");
        let trace = trace.to_str().unwrap();
        ok(&run(&[
            "generate", "-t", &machine, "--load", "0.7", "--jobs", "120", "--seed", "5", "--out",
            trace,
        ]));
        // Paging, the usual reference, takes no pod and no shared node.
        // Paging, the usual reference, takes no pod and no shared node;
        // `random` runs on every family.
        let reference = match measured {
            "dispersal,pod" => "pod-first-fit",
            "frag" => "gpu-best-fit",
            _ if accepts("paging", &machine) => "paging",
            _ => "random",
        };
        let rep: Value = serde_json::from_str(&ok(&run(&[
            "replay",
            trace,
            "-t",
            &machine,
            "-a",
            allocator,
            "--reference",
            reference,
            "--format",
            "json",
            "-q",
        ])))
        .unwrap();
        let runs = rep["runs"].as_array().unwrap();
        for (strategy, row) in [(allocator, &runs[0]), (reference, &runs[2])] {
            assert_eq!(row["requests"], "shapes", "{machine}");
            let sim = simulate_trace(&machine, strategy, trace);
            let first = &sim["replications"][0];
            assert_eq!(first["measured"], measured, "{machine}");
            assert_eq!(&row["results"], first, "{machine}: {strategy}");
            assert!(first["completed"].as_u64().unwrap() > 100, "{machine}");
        }
    }
}

/// `simulate --format json` of `trace` as recorded.
fn simulate_trace(machine: &str, allocator: &str, trace: &str) -> Value {
    let out = ok(&run(&[
        "simulate", "-t", machine, "-a", allocator, "--trace", trace, "--format", "json", "-q",
    ]));
    serde_json::from_str(&out).unwrap()
}
