//! The `partalloc` binary on capacity machines (Kueue TAS): the Kueue
//! YAML pair and the synthetic `racks:` form, the `tas[...]` strategies
//! listed and simulated, jobs refused that never fit, and one file:line
//! error for a bad node list.
#![expect(clippy::unwrap_used, reason = "test helpers read fixed JSON")]

use std::path::Path;
use std::process::Output;

use serde_json::Value;

// The binary-running helpers of the pod tests.
use crate::pods::fails;
use crate::support::{ok, run};

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/kueue")
        .join(name)
        .display()
        .to_string()
}

fn kueue_machine() -> String {
    format!(
        "kueue:{},{}",
        example("topology.yaml"),
        example("nodes.yaml")
    )
}

const RACKS: &str = "racks:8x18x4gpu";

const TAS: &[&str] = &[
    "tas[algorithm=best-fit,mode=required,level=rack]",
    "tas[algorithm=best-fit,mode=preferred,level=rack]",
    "tas[algorithm=least-free-capacity,mode=unconstrained]",
    "tas[algorithm=balanced,mode=preferred,level=block]",
];

fn simulate(machine: &str, alloc: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "simulate", "--quiet", "--format", "json", "--jobs", "150", "-t", machine, "-a", alloc,
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn mean(v: &Value, metric: &str) -> f64 {
    v["replications"][0][metric].as_f64().unwrap()
}

#[test]
fn strategies_on_a_capacity_machine_list_tas_from_kueue() {
    for machine in [RACKS.to_owned(), kueue_machine()] {
        let out = ok(&run(&["strategies", "--topology", &machine]));
        let allocators = out.split("Scheduling policies").next().unwrap();
        assert!(allocators.contains("tas"), "{out}");
        assert!(allocators.contains("Kueue v0.19.2"), "{out}");
        assert!(allocators.contains("paging"), "{out}");
        assert!(!allocators.contains("fsl"), "{out}");
    }
}

#[test]
fn simulate_runs_each_tas_strategy_on_racks_and_on_the_yaml_machine() {
    for alloc in TAS {
        for machine in [RACKS.to_owned(), kueue_machine()] {
            let v: Value =
                serde_json::from_str(&ok(&simulate(&machine, alloc, &["--max-sides", "16"])))
                    .unwrap();
            assert_eq!(v["topology"], machine.as_str());
            assert_eq!(
                v["replications"][0]["completed"], 150,
                "{alloc} on {machine}"
            );
            let u = mean(&v, "utilization");
            assert!(u > 0.0 && u < 1.0, "{alloc}: utilization {u}");
        }
    }
}

#[test]
fn five_pods_never_fit_one_four_gpu_node_but_fit_a_rack() {
    let host = fails(&simulate(
        RACKS,
        "tas[mode=required,level=hostname]",
        &["--max-sides", "5"],
    ));
    assert!(host.contains("never fits"), "{host}");
    ok(&simulate(
        RACKS,
        "tas[mode=required,level=rack]",
        &["--max-sides", "5"],
    ));
}

#[test]
fn one_gpu_jobs_see_the_same_machine_as_paging() {
    // Any free GPU holds a 1-GPU pod, whatever the mode: the same jobs
    // start at the same times as under paging.
    let base: Value = serde_json::from_str(&ok(&simulate(
        RACKS,
        "paging",
        &["--max-sides", "1", "--load", "0.9"],
    )))
    .unwrap();
    for alloc in TAS.iter().chain(&["tas[mode=required,level=hostname]"]) {
        let v: Value = serde_json::from_str(&ok(&simulate(
            RACKS,
            alloc,
            &["--max-sides", "1", "--load", "0.9"],
        )))
        .unwrap();
        for metric in ["utilization", "mean_wait"] {
            assert_eq!(mean(&v, metric), mean(&base, metric), "{alloc}: {metric}");
        }
    }
}

#[test]
fn a_bad_node_list_is_one_line_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes.yaml");
    std::fs::write(
        &nodes,
        "items:\n- metadata:\n    name: a\n    labels:\n      cloud.provider.com/topology-block: b\n      cloud.provider.com/topology-rack: r\n      kubernetes.io/hostname: a\n  status:\n    allocatable:\n      nvidia.com/gpu: \"-4\"\n",
    )
    .unwrap();
    let machine = format!("kueue:{},{}", example("topology.yaml"), nodes.display());
    let e = fails(&run(&["strategies", "--topology", &machine]));
    assert!(e.contains("nodes.yaml:"), "{e}");
    let e = fails(&run(&["strategies", "--topology", "kueue:only-one.yaml"]));
    assert!(
        e.contains("needs a Kueue Topology file and a node list"),
        "{e}"
    );
    let e = fails(&run(&["strategies", "--topology", "racks:8x18"]));
    assert!(e.contains("racks:8x18x4gpu"), "{e}");
}

/// A `sacct` dump of a GPU cluster replayed on a capacity machine: each
/// job asks for its `gres/gpu` count (8 and 3 GPUs, the typed `h100`
/// entry not added), the CPU-only job is left out; on a mesh the same dump
/// asks for node counts and keeps all three jobs.
#[test]
fn sacct_gres_gpu_counts_are_gpu_requests_on_capacity_machines() {
    let dir = tempfile::tempdir().unwrap();
    let dump = "JobID|Submit|Start|End|NNodes|AllocTRES|State\n\
        200|2025-03-01T08:00:00|2025-03-01T08:00:10|2025-03-01T09:00:10|2|cpu=64,gres/gpu=8,gres/gpu:h100=8,node=2|COMPLETED\n\
        201|2025-03-01T08:01:00|2025-03-01T08:01:00|2025-03-01T08:11:00|1|cpu=4,node=1|COMPLETED\n\
        202|2025-03-01T08:02:00|2025-03-01T08:05:00|2025-03-01T08:35:00|1|cpu=8,gres/gpu=3,node=1|TIMEOUT\n";
    let path = dir.path().join("dump.txt");
    std::fs::write(&path, dump).unwrap();
    let replay = |machine: &str, alloc: &str| -> Value {
        let out = ok(&run(&[
            "replay",
            &path.display().to_string(),
            "-t",
            machine,
            "-a",
            alloc,
            "--trace-format",
            "sacct",
            "--format",
            "json",
        ]));
        serde_json::from_str(&out).unwrap()
    };
    let sizes = |v: &Value| -> Vec<u64> {
        v["mapping"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["processors_min"].as_u64().unwrap())
            .collect()
    };
    let gpus = replay("racks:2x2x4gpu", "tas");
    assert_eq!(
        (gpus["jobs"].as_u64(), gpus["skipped_lines"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(sizes(&gpus), [3, 8]);
    assert!(
        gpus["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["completed"] == 2)
    );
    let nodes = replay("mesh:4x4", "first-fit");
    assert_eq!(
        (nodes["jobs"].as_u64(), nodes["skipped_lines"].as_u64()),
        (Some(3), Some(0))
    );
    assert_eq!(sizes(&nodes), [1, 2]);
    // A count that is not a number names the line and the field.
    std::fs::write(&path, dump.replace("gres/gpu=3", "gres/gpu=x")).unwrap();
    let e = fails(&run(&[
        "replay",
        &path.display().to_string(),
        "-t",
        "racks:2x2x4gpu",
        "-a",
        "tas",
        "--trace-format",
        "sacct",
    ]));
    assert!(e.contains("line 4: AllocTRES"), "{e}");
}

#[test]
fn a_slurm_block_file_with_gpus_per_node_is_the_same_machine_as_racks() {
    // blocks-8x18.conf: 8 base blocks of 18 nodes; with 4 GPUs a node its
    // base blocks are the racks of racks:8x18x4gpu (above them it has the
    // pairs and quads of BlockSizes, which racks: has not, so only the
    // rack level is compared).
    let blocks = format!(
        "blocks:{},4gpu",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/blocks-8x18.conf")
            .display()
    );
    let out = ok(&run(&["strategies", "--topology", &blocks]));
    assert!(out.contains("Kueue v0.19.2"), "{out}");
    for (mode, ours, theirs) in [
        ("required", "rack", "topology.slurm/block-level-0"),
        ("preferred", "rack", "topology.slurm/block-level-0"),
    ] {
        let run_on = |machine: &str, level: &str| -> Value {
            let alloc = format!("tas[mode={mode},level={level}]");
            let extra = ["--max-sides", "16", "--load", "0.9"];
            serde_json::from_str(&ok(&simulate(machine, &alloc, &extra))).unwrap()
        };
        let (a, b) = (run_on(RACKS, ours), run_on(&blocks, theirs));
        assert_eq!(b["topology"], blocks.as_str());
        assert_eq!(
            a["replications"][0], b["replications"][0],
            "{mode} {ours} vs {theirs}"
        );
    }
    let e = fails(&run(&[
        "simulate",
        "-t",
        &blocks.replace(",4gpu", ",0gpu"),
        "-a",
        "paging",
    ]));
    assert!(e.contains("is not a GPU count"), "{e}");
}

#[test]
fn the_report_has_each_levels_largest_pod_set_over_time() {
    let v: Value = serde_json::from_str(&ok(&simulate(
        RACKS,
        "tas[mode=required,level=rack]",
        &["--max-sides", "72", "--load", "0.7"],
    )))
    .unwrap();
    let levels = v["capacity_levels"]["levels"].as_array().unwrap();
    let means: Vec<f64> = levels
        .iter()
        .map(|l| l["mean_largest_pod_set"].as_f64().unwrap())
        .collect();
    // The block holds all 576 GPUs, a rack 72, a node 4; a wider domain
    // never offers less than the narrower ones inside it.
    assert_eq!(means.len(), 3, "{v}");
    assert!(
        means[0] <= 576.0 && means[1] <= 72.0 && means[2] <= 4.0,
        "{means:?}"
    );
    assert!(
        means[0] >= means[1] && means[1] >= means[2] && means[2] > 0.0,
        "{means:?}"
    );
    assert_eq!(levels[1]["level"], "cloud.provider.com/topology-rack");
    // Machines that are not capacity machines have no such section.
    let mesh = ok(&run(&[
        "simulate", "--quiet", "--format", "json", "-t", "mesh:4x4", "-a", "paging",
    ]));
    assert!(!mesh.contains("capacity_levels"), "{mesh}");
}

/// `replay --allocators` splits its list at the commas outside brackets:
/// a TAS spec with two parameters is one strategy beside another, and a
/// repeated flag adds to the list.
#[test]
fn replay_keeps_commas_inside_a_specs_brackets() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.swf");
    std::fs::write(
        &trace,
        "1 0 0 100 3 -1 -1 3 100 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 5 0 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1\n",
    )
    .unwrap();
    let runs = |lists: &[&str]| -> Vec<String> {
        let mut args = vec![
            "replay".to_owned(),
            trace.display().to_string(),
            "-t".to_owned(),
            "racks:2x2x4gpu".to_owned(),
            "--format".to_owned(),
            "json".to_owned(),
        ];
        for l in lists {
            args.extend(["-a".to_owned(), (*l).to_owned()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let v: Value = serde_json::from_str(&ok(&run(&args))).unwrap();
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["allocator"].as_str().unwrap().to_owned())
            .collect()
    };
    let one = runs(&["tas[mode=required,level=rack],tas"]);
    // The two TAS runs, then the reference (paging) on shapes and counts.
    assert_eq!(one.len(), 4, "{one:?}");
    assert!(
        one[0].contains("mode=required") && one[0].contains("rack"),
        "{one:?}"
    );
    assert!(one[1].contains("mode=preferred"), "{one:?}");
    assert_eq!(runs(&["tas[mode=required,level=rack]", "tas"]), one);
    // An unclosed bracket is one bad spec, refused by the registry.
    fails(&run(&[
        "replay",
        &trace.display().to_string(),
        "-t",
        "racks:2x2x4gpu",
        "-a",
        "tas[mode=required,tas",
    ]));
}
