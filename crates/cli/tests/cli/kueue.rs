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
