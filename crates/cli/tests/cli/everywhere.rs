//! Every strategy and policy the tool lists for a machine runs there, in
//! `sweep` (generated jobs, every allocator with every policy) and in
//! `replay` (a trace), on one machine of each family: what
//! `strategies --topology` promises, kept by running it.
#![expect(
    clippy::unwrap_used,
    reason = "the helper running the binary sits outside #[test] functions"
)]

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

use partalloc_experiment::forms::FAMILIES;
use serde_json::Value;

/// Runs the tool in `dir`; its standard output, after asserting success.
fn tool(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_partalloc"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    String::from_utf8(out.stdout).unwrap()
}

/// The allocators and the policies `strategies` lists for `machine`.
fn listed(dir: &Path, machine: &str) -> (Vec<String>, Vec<String>) {
    let json: Value = serde_json::from_str(&tool(
        dir,
        &["strategies", "--format", "json", "--topology", machine],
    ))
    .unwrap();
    let names = |key: &str| -> Vec<String> {
        json[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_owned())
            .collect()
    };
    (names("allocators"), names("schedulers"))
}

/// Rows of a CSV as maps from column to field (no field holds a comma in
/// the columns read here).
fn rows(csv: &str) -> Vec<BTreeMap<String, String>> {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            head.iter()
                .zip(l.split(','))
                .map(|(h, f)| ((*h).to_owned(), f.to_owned()))
                .collect()
        })
        .collect()
}

/// A repository path, from its root.
fn at_root(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .display()
        .to_string()
}

/// Strategies that grant any free nodes when enough are free: under FCFS
/// their schedule is paging's, start for start.
const ANY_FREE_NODES: &[&str] = &[
    "paging",
    "mbs",
    "granular-mbs",
    "octet-mbs",
    "gabl",
    "random",
    // Its default, preferred at the rack level with 1-GPU pods, spreads
    // when no rack holds the job.
    "tas",
    "curve-first-fit",
    "curve-best-fit",
    "curve-sorted-free-list",
    "gen-alg",
    "mm",
    "mc1x1",
    "mc",
];

/// One machine of each family (the example of `forms::FAMILIES`) and 3-D
/// meshes and tori, with a workload line that keeps every generated
/// request placeable by every listed strategy and policy (static
/// partitioning has no partition for the whole machine); `None` where
/// no generated law places (a trace runs there).
fn machines() -> Vec<(String, Option<&'static str>)> {
    let mut out: Vec<(String, Option<&'static str>)> = FAMILIES
        .iter()
        .map(|f| {
            let files: Vec<String> = f.files.iter().map(|p| at_root(p)).collect();
            let refs: Vec<&str> = files.iter().map(String::as_str).collect();
            (f.machine(&refs), f.workload)
        })
        .collect();
    out.push(("mesh:4x4x4".to_owned(), Some("max_sides = \"2x2x2\"")));
    out.push(("torus:4x4x4".to_owned(), Some("max_sides = \"2x2x2\"")));
    out
}

#[test]
fn every_listed_allocator_and_policy_runs_in_a_sweep_on_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (machine, law) in machines() {
        let Some(law) = law else { continue };
        let (allocators, policies) = listed(d, &machine);
        // `random` runs everywhere.
        assert!(!allocators.is_empty(), "{machine}: {allocators:?}");
        assert!(policies.len() >= 9, "{machine}: {policies:?}");
        let quoted = |v: &[String]| {
            let q: Vec<String> = v.iter().map(|s| format!("{s:?}")).collect();
            q.join(", ")
        };
        let experiment = format!(
            "seeds = 1\ntopologies = [{machine:?}]\nallocators = [{}]\nschedulers = [{}]\n\
             loads = [0.6]\n[workload]\njobs = 60\nwarmup = 0\n{law}\n",
            quoted(&allocators),
            quoted(&policies)
        );
        fs::write(d.join("exp.toml"), experiment).unwrap();
        let _ = fs::remove_file(d.join("out.csv"));
        tool(
            d,
            &["sweep", "exp.toml", "--out", "out.csv", "-q", "--no-plots"],
        );
        let table = rows(&fs::read_to_string(d.join("out.csv")).unwrap());
        assert_eq!(table.len(), allocators.len() * policies.len(), "{machine}");
        let mut paging_fcfs_wait = None;
        for r in &table {
            let what = format!("{machine}: {} / {}", r["allocator"], r["scheduler"]);
            assert_eq!(r["completed"].parse::<f64>().unwrap(), 60.0, "{what}");
            let util: f64 = r["utilization"].parse().unwrap();
            assert!(util > 0.0 && util <= 1.0, "{what}: utilization {util}");
            if r["allocator"] == "paging" && r["scheduler"] == "fcfs" {
                paging_fcfs_wait = Some(r["mean_wait"].clone());
            }
        }
        // The strategies that take any free nodes wait exactly as paging
        // does under FCFS on machines where paging runs.
        if let Some(wait) = paging_fcfs_wait {
            for r in table.iter().filter(|r| {
                r["scheduler"] == "fcfs" && ANY_FREE_NODES.contains(&r["allocator"].as_str())
            }) {
                assert_eq!(r["mean_wait"], wait, "{machine}: {}", r["allocator"]);
            }
        }
    }
}

#[test]
fn every_listed_allocator_replays_a_trace_on_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 40 jobs of 2, 4 or 8 processors: sizes every family places (the
    // torus3d example's placements hold 2, 4, 8, 16 or 64 nodes).
    let mut swf = String::from("; jobs of 2, 4 and 8 processors\n");
    let mut submit = 0u32;
    for id in 1..=40u32 {
        submit += (id * 7) % 31;
        let procs = [2, 4, 8][(id % 3) as usize];
        let run = 10 + (id * 37) % 190;
        swf.push_str(&format!(
            "{id} {submit} -1 {run} {procs} -1 -1 {procs} {} -1 1 1 1 1 1 -1 -1 -1\n",
            run + 50
        ));
    }
    fs::write(d.join("t.swf"), swf).unwrap();
    for (machine, _) in machines() {
        let (allocators, _) = listed(d, &machine);
        let reference = if allocators.iter().any(|a| a == "paging") {
            "paging"
        } else {
            "random"
        };
        // `show` draws every family, by its structure or as a node list.
        let drawn = tool(
            d,
            &[
                "show", "-t", &machine, "-a", reference, "--trace", "t.swf", "--at", "300",
            ],
        );
        assert!(drawn.contains("t = 300"), "{machine}: {drawn}");
        let json = tool(
            d,
            &[
                "replay",
                "t.swf",
                "-t",
                &machine,
                "-a",
                &allocators.join(","),
                "--reference",
                reference,
                "--format",
                "json",
            ],
        );
        let report: Value = serde_json::from_str(&json).unwrap();
        let runs = report["runs"].as_array().unwrap();
        // Each listed allocator (printed with its default parameters), then
        // the reference on counts and on shapes.
        let names: Vec<&str> = runs
            .iter()
            .map(|r| {
                let a = r["allocator"].as_str().unwrap();
                a.split_once('[').map_or(a, |(name, _)| name)
            })
            .collect();
        let mut want: Vec<&str> = allocators.iter().map(String::as_str).collect();
        want.extend([reference, reference]);
        assert_eq!(names, want, "{machine}");
        for r in runs {
            assert_eq!(r["completed"], 40, "{machine}: {}", r["allocator"]);
            // Every grant is at least one contiguous piece where hops are
            // defined; Slurm and capacity machines measure no dispersal
            // (null, not a measured-looking 0).
            let pieces = &r["mean_pieces"];
            // Only a run that measured dispersal reports pieces.
            let slurm = !r["results"]["measured"]
                .as_str()
                .unwrap()
                .contains("dispersal");
            assert!(
                if slurm {
                    pieces.is_null()
                } else {
                    pieces.as_f64().is_some_and(|p| p >= 1.0)
                },
                "{machine}: {} pieces {pieces}",
                r["allocator"]
            );
        }
    }
}
