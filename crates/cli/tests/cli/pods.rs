//! The `partalloc` binary on accelerator pods: preset and file pods,
//! their strategies, catalogue workloads, trace rounding and the pod
//! measures of `simulate`.
#![expect(
    clippy::unwrap_used,
    reason = "the helpers running the binary sit outside #[test] functions"
)]

use std::process::Output;

use serde_json::Value;

use crate::support::{ok, repo, run, words};

pub(crate) fn fails(o: &Output) -> String {
    let e = String::from_utf8(o.stderr.clone()).unwrap();
    assert_eq!(o.status.code(), Some(1), "stderr: {e}");
    assert!(e.starts_with("error: ") && e.lines().count() == 1, "{e}");
    e
}

fn pod_file(name: &str) -> String {
    repo()
        .join("examples/pods")
        .join(name)
        .display()
        .to_string()
}

fn simulate_json(extra: &[&str]) -> Value {
    let mut args = vec!["simulate", "--quiet", "--format", "json", "--jobs", "120"];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(&run(&args))).unwrap()
}

#[test]
fn strategies_on_a_pod_lists_the_pod_strategies_only() {
    let out = ok(&run(&["strategies", "--topology", "pod:tpu-v4:8x8x8"]));
    let allocators = out.split("Scheduling policies").next().unwrap();
    for name in [
        "pod-first-fit",
        "pod-best-fit",
        "pod-reconfigurable",
        "pod-free-list",
    ] {
        assert!(allocators.contains(name), "{name} missing:\n{out}");
    }
    assert!(!allocators.contains("  fsl\n"), "{out}");
    assert!(out.contains("easy-backfilling"), "{out}");
}

#[test]
fn simulate_runs_each_pod_strategy_on_a_preset_and_reports_pod_measures() {
    for alloc in [
        "pod-first-fit",
        "pod-best-fit",
        "pod-reconfigurable",
        "pod-free-list",
    ] {
        let v = simulate_json(&["--topology", "pod:tpu-v5e:8x8", "--allocator", alloc]);
        assert_eq!(v["topology"], "pod:tpu-v5e:8x8", "{alloc}");
        assert_eq!(v["allocator"], alloc);
        let pod = &v["replications"][0];
        assert_eq!(pod["completed"], 120, "{alloc}");
        assert_eq!(pod["measured"], "dispersal,pod", "{alloc}");
        let stranded = pod["mean_stranded_nodes"].as_f64().unwrap();
        let largest = pod["mean_largest_placeable"].as_f64().unwrap();
        assert!((0.0..=64.0).contains(&stranded), "{alloc}: {stranded}");
        assert!((0.0..=64.0).contains(&largest), "{alloc}: {largest}");
        assert!(v["workload"].as_str().unwrap().contains("catalogue"), "{v}");
    }
    // A mesh run takes no pod measure: its quantities are not listed.
    let v = simulate_json(&["--topology", "mesh:8x8", "--allocator", "first-fit"]);
    assert_eq!(v["replications"][0]["measured"], "dispersal", "{v}");
    assert!(
        !v["metrics"].to_string().contains("largest_placeable"),
        "{v}"
    );
}

#[test]
fn simulate_reads_a_pod_file_and_shape_weights() {
    let file = pod_file("lab-2d.toml");
    // Only 1x1 and 8x16 slices: the mean request is (1 + 128) / 2 chips.
    let v = simulate_json(&[
        "--topology",
        &file,
        "--allocator",
        "pod-first-fit",
        "--shape-weights",
        "1,0,0,0,0,0,1",
        "--load",
        "0.3",
    ]);
    let topology = v["topology"].as_str().unwrap();
    assert!(topology.starts_with("pod:8x16:name=lab-2d:"), "{topology}");
    assert!(
        v["workload"]
            .as_str()
            .unwrap()
            .contains("catalogue:1,0,0,0,0,0,1"),
        "{v}"
    );
    let e = fails(&run(&[
        "simulate",
        "--topology",
        &file,
        "--allocator",
        "pod-first-fit",
        "--shape-weights",
        "1,2",
    ]));
    assert!(
        e.contains("2 shape weights given for 7 catalogue shapes"),
        "{e}"
    );
}

#[test]
fn pod_input_errors_say_what_to_change() {
    let e = fails(&run(&words(
        "simulate --topology pod:tpu-v5e:8x8 --allocator fsl",
    )));
    assert!(e.contains("fsl") && e.contains("pod"), "{e}");
    let e = fails(&run(&words(
        "simulate --topology pod:tpu-v4:6x8x8 --allocator pod-first-fit",
    )));
    assert!(e.contains("cube 4x4x4 does not tile the pod 6x8x8"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "sides = \"8x8\"\nshapes = [\"3x3\", \"9x1\"]\n").unwrap();
    let e = fails(&run(&[
        "simulate",
        "--topology",
        &bad.display().to_string(),
        "--allocator",
        "pod-first-fit",
    ]));
    assert!(
        e.contains("bad.toml") && e.contains("9x1 does not fit the pod 8x8"),
        "{e}"
    );
}

#[test]
fn a_trace_replays_on_a_pod_with_counts_rounded_to_catalogue_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.swf");
    // Jobs of 3, 5 and 100 processors: 2x2, 2x4 and 8x16 slices.
    std::fs::write(
        &trace,
        "1 0 0 10 3 -1 -1 3 10 -1 1 -1 -1 -1 -1 -1 -1 -1\n\
         2 1 0 10 5 -1 -1 5 10 -1 1 -1 -1 -1 -1 -1 -1 -1\n\
         3 2 0 10 100 -1 -1 100 10 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    let jobs = dir.path().join("jobs.csv");
    let v: Value = serde_json::from_str(&ok(&run(&[
        "simulate",
        "--quiet",
        "--format",
        "json",
        "--topology",
        "pod:tpu-v5e",
        "--allocator",
        "pod-first-fit",
        "--trace",
        &trace.display().to_string(),
        "--jobs-csv",
        &jobs.display().to_string(),
    ])))
    .unwrap();
    assert_eq!(v["replications"][0]["completed"], 3);
    let csv = std::fs::read_to_string(&jobs).unwrap();
    let granted: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(8).unwrap_or(""))
        .collect();
    assert_eq!(granted, ["4", "8", "128"], "{csv}");
}

#[test]
fn show_draws_a_2d_pod_and_a_3d_pod_by_planes_with_the_pod_state() {
    let out = ok(&run(&words(
        "show --topology pod:tpu-v5e:8x8 --allocator pod-first-fit --at 20",
    )));
    let first = out.lines().next().unwrap();
    assert!(
        first.contains("largest placeable slice") && first.contains("(static rules)"),
        "{first}"
    );
    // Eight rows of eight cells.
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.len() == 8 && l.chars().all(|c| c == '.' || c.is_ascii_alphanumeric()))
        .collect();
    assert_eq!(rows.len(), 8, "{out}");
    let out = ok(&run(&words(
        "show --topology pod:tpu-v4:8x8x8 --allocator pod-reconfigurable --at 20",
    )));
    assert!(out.contains("(reconfigurable rules)"), "{out}");
    for z in 0..8 {
        assert!(
            out.contains(&format!("slice z = {z} (dimension 2)")),
            "{out}"
        );
    }
}

#[test]
fn easy_backfilling_runs_on_a_pod() {
    let v = simulate_json(&words(
        "--topology pod:tpu-v4:8x8x8 --allocator pod-reconfigurable --scheduler easy-backfilling --load 0.7",
    ));
    assert_eq!(v["scheduler"], "easy-backfilling");
    assert_eq!(v["replications"][0]["completed"], 120);
}
