//! The `partalloc` binary on GPU-sharing clusters: an OpenB node list as
//! the machine, its pod list as the trace (creation and deletion times as
//! arrivals and departures) in replay and simulate alike, the FGD
//! strategies listed there, and bad lists refused in one `FILE:LINE` line
//! with nothing written.

use std::path::Path;

use serde_json::Value;

use crate::pods::fails;
use crate::support::{ok, run};

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/openb")
        .join(name)
        .display()
        .to_string()
}

fn machine() -> String {
    format!("openb:{},{}", example("nodes.csv"), example("pods.csv"))
}

const DETERMINISTIC: [&str; 5] = [
    "fgd",
    "gpu-best-fit",
    "dot-product",
    "gpu-packing",
    "gpu-clustering",
];

#[test]
fn the_fgd_strategies_are_listed_on_a_gpu_sharing_cluster_only() {
    let out = ok(&run(&["strategies", "--topology", &machine()]));
    let allocators = out.split("Scheduling policies").next().unwrap();
    for name in DETERMINISTIC.iter().chain(&["gpu-random"]) {
        assert!(allocators.contains(name), "{name}: {out}");
    }
    assert!(!allocators.contains("fsl\n"), "{out}");
}

/// A replay and a simulate of the same pod list report the same numbers,
/// the frag measure's included, for every deterministic policy.
#[test]
fn replay_and_simulate_of_a_pod_list_agree() {
    let pods = example("pods.csv");
    let replay: Value = serde_json::from_str(&ok(&run(&[
        "replay",
        &pods,
        "-t",
        &machine(),
        "--trace-format",
        "openb",
        "-a",
        &DETERMINISTIC.join(","),
        "--format",
        "json",
    ])))
    .unwrap();
    let runs = replay["runs"].as_array().unwrap();
    assert_eq!(replay["jobs"], 120);
    for (i, name) in DETERMINISTIC.iter().enumerate() {
        let r = &runs[i];
        assert_eq!(r["allocator"], *name);
        assert_eq!(r["completed"], 120, "{name}");
        let sim: Value = serde_json::from_str(&ok(&run(&[
            "simulate",
            "-t",
            &machine(),
            "--trace",
            &pods,
            "--trace-format",
            "openb",
            "-a",
            name,
            "--format",
            "json",
            "-q",
        ])))
        .unwrap();
        let s = &sim["replications"][0];
        assert_eq!(s["measured"], "frag", "{name}");
        assert_eq!(s["mean_response"], r["mean_response"], "{name}");
        let frag = r["frag"].as_array().unwrap();
        assert_eq!(s["mean_gpu_allocation"], frag[0], "{name}");
        assert_eq!(s["mean_frag_gpus"], frag[1], "{name}");
        assert_eq!(s["mean_frag_ratio"], frag[2], "{name}");
        let a = frag[0].as_f64().unwrap();
        assert!(a > 0.0 && a < 1.0, "{name}: allocation {a}");
    }
    // The policies decide differently on this list.
    let responses: std::collections::BTreeSet<String> = runs
        .iter()
        .map(|r| r["mean_response"].to_string())
        .collect();
    assert!(responses.len() >= 3, "{responses:?}");
}

#[test]
fn bad_openb_lists_are_one_line_naming_file_and_line_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let nodes = d.join("nodes.csv");
    std::fs::write(
        &nodes,
        "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,1024,2,T4\nn1,64000,-5,2,T4\n",
    )
    .unwrap();
    let out = d.join("out.json");
    let e = fails(&run(&[
        "simulate",
        "-t",
        &format!("openb:{}", nodes.display()),
        "-a",
        "fgd",
        "--output",
        out.to_str().unwrap(),
    ]));
    assert!(
        e.contains("nodes.csv:3:") && e.contains("memory_mib"),
        "{e}"
    );
    assert!(e.len() <= 200, "{} chars: {e}", e.len());
    assert!(!out.exists());
    // A pod list with a share of several GPUs, as a trace.
    let pods = d.join("pods.csv");
    std::fs::write(
        &pods,
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\np0,1000,10,1,500,0,5\np1,1000,10,2,500,1,9\n",
    )
    .unwrap();
    let e = fails(&run(&[
        "replay",
        pods.to_str().unwrap(),
        "-t",
        &machine(),
        "--trace-format",
        "openb",
        "--output",
        out.to_str().unwrap(),
    ]));
    assert!(e.contains("pods.csv:3:"), "{e}");
    assert!(e.len() <= 200, "{} chars: {e}", e.len());
    assert!(!out.exists());
    // A deletion before the creation.
    std::fs::write(
        &pods,
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\np0,1000,10,1,500,9,5\n",
    )
    .unwrap();
    let e = fails(&run(&[
        "simulate",
        "-t",
        &machine(),
        "-a",
        "fgd",
        "--trace",
        pods.to_str().unwrap(),
        "--trace-format",
        "openb",
    ]));
    assert!(e.contains("pods.csv:2:") && e.contains("before"), "{e}");
    // An OpenB list on another machine, and the form without a file.
    let e = fails(&run(&[
        "simulate",
        "-t",
        "mesh:4x4",
        "-a",
        "paging",
        "--trace",
        &example("pods.csv"),
        "--trace-format",
        "openb",
    ]));
    assert!(e.contains("gpu-sharing cluster"), "{e}");
    let e = fails(&run(&["strategies", "--topology", "openb:"]));
    assert!(e.contains("openb:NODES"), "{e}");
    assert!(!out.exists());
}

/// Generated workloads ask for whole GPUs there, at most a node's.
#[test]
fn generated_jobs_are_whole_gpus_on_one_node() {
    let v: Value = serde_json::from_str(&ok(&run(&[
        "simulate",
        "-t",
        "gpushare:8x4gpu",
        "-a",
        "gpu-random[seed=9]",
        "--load",
        "0.5",
        "--jobs",
        "100",
        "--format",
        "json",
        "-q",
    ])))
    .unwrap();
    let r = &v["replications"][0];
    assert_eq!(r["completed"], 100);
    let a = r["mean_gpu_allocation"].as_f64().unwrap();
    assert!(a > 0.2 && a < 0.9, "allocation {a}");
    let u = r["utilization"].as_f64().unwrap();
    assert!(u > 0.0 && u <= 1.0, "utilization {u}");
}
