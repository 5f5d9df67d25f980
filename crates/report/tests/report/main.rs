//! The report's page carries exactly the runs it was given: the tests read
//! the data back out of the HTML and compare it with the job records.
#![expect(
    clippy::expect_used,
    reason = "the helpers that make runs and read pages sit outside #[test] functions"
)]

use std::path::Path;

use partalloc_allocators::registry::ALLOCATORS;
use partalloc_report::{ReportError, ReportOptions, RunView, render, write};
use partalloc_schedulers::registry::POLICIES;
use partalloc_simkit::{JobRecord, SimConfig, Simulation, Stop};
use partalloc_topology::Topology;
use partalloc_workload::{
    ChaCha8Rng, Dependence, Exponential, MeshSides, SeedableRng, SideLaw, Workload,
};
use serde_json::Value;

fn records(machine: &Topology, allocator: &str, jobs: u64) -> Vec<JobRecord> {
    let grid = machine.as_grid().expect("a mesh");
    let shapes = MeshSides::for_grid(SideLaw::Uniform, grid).expect("sides");
    let w = Workload::with_load(
        0.7,
        machine.num_nodes() as u64,
        shapes,
        Exponential::new(5.0).expect("law"),
        Dependence::Dependent,
    )
    .expect("workload");
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let config = SimConfig {
        stop: Stop {
            jobs: Some(jobs),
            time: None,
        },
        ..SimConfig::default()
    };
    let sim = Simulation::from_specs(
        machine.clone(),
        &ALLOCATORS.spec(allocator).expect("a known name"),
        &POLICIES.spec("fcfs").expect("a known name"),
        w.jobs(&mut rng),
        config,
    )
    .expect("simulation");
    let mut out = Vec::new();
    sim.run_observed(&mut (), Some(&mut |r| out.push(r)))
        .expect("run");
    out
}

/// The JSON object inside the page.
fn data(html: &str) -> Value {
    let start =
        html.find(r#"id="report-data">"#).expect("data element") + r#"id="report-data">"#.len();
    let end = start + html[start..].find("</script>").expect("end of data");
    serde_json::from_str(&html[start..end]).expect("valid JSON")
}

/// A job's runs of node ids as the page encodes them (`first, len`, or
/// `first, len, -stride, count` for rows of a box), as (first, len) pairs.
fn runs_of(v: &Value) -> Vec<(u32, u32)> {
    let enc: Vec<i64> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_i64().expect("integer"))
        .collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < enc.len() {
        let (first, len) = (enc[k], enc[k + 1]);
        if enc.get(k + 2).is_some_and(|&s| s < 0) {
            for c in 0..enc[k + 3] {
                out.push(((first - c * enc[k + 2]) as u32, len as u32));
            }
            k += 4;
        } else {
            out.push((first as u32, len as u32));
            k += 2;
        }
    }
    out
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

#[test]
fn every_job_is_drawn_on_the_nodes_it_held() {
    let mesh: Topology = "mesh:8x8".parse().expect("mesh");
    let recs = records(&mesh, "fsl", 300);
    let html = render(
        &[RunView::new("fsl · fcfs", &mesh, &recs)],
        &ReportOptions::default(),
    )
    .expect("report");
    let d = data(&html);
    let run = &d["runs"][0];
    assert_eq!(run["label"], "fsl · fcfs");
    assert_eq!(run["nodes"], 64);
    assert_eq!(run["total"].as_u64(), Some(recs.len() as u64));
    assert_eq!(run["drawn"].as_u64(), Some(recs.len() as u64));
    // Rows of the mesh as groups.
    assert_eq!(run["groups"].as_array().map(Vec::len), Some(8));
    let ids = nums(&run["jobs"]["id"]);
    let starts = nums(&run["jobs"]["start"]);
    assert!(
        starts.windows(2).all(|w| w[0] <= w[1]),
        "drawn in start order"
    );
    for r in &recs {
        let i = ids
            .iter()
            .position(|&x| x == r.id as f64)
            .expect("every job drawn");
        assert_eq!(starts[i], r.start);
        assert_eq!(nums(&run["jobs"]["end"])[i], r.end);
        assert_eq!(starts[i] - nums(&run["jobs"]["submit"])[i], r.wait);
        // The runs of node ids cover exactly the granted nodes.
        let mut nodes: Vec<u32> = runs_of(&run["jobs"]["runs"][i])
            .into_iter()
            .flat_map(|(first, len)| first..first + len)
            .collect();
        nodes.sort_unstable();
        let mut want = r.partition.node_list(&mesh).expect("nodes");
        want.sort_unstable();
        assert_eq!(nodes, want, "job {}", r.id);
        assert_eq!(run["jobs"]["part"][i], r.partition.to_string());
    }
    // Busy nodes never exceed the machine and end at zero.
    let busy = nums(&run["over"]["busy"]);
    assert!(busy.iter().all(|&b| (0.0..=64.0).contains(&b)));
    assert_eq!(busy.last(), Some(&0.0));
    // The summary's mean wait is the records' mean.
    let mean = recs.iter().map(|r| r.wait).sum::<f64>() / recs.len() as f64;
    assert!(
        (run["summary"]["wait"][0].as_f64().expect("mean") - mean).abs() < 1e-9 * mean.max(1.0)
    );
}

#[test]
fn a_long_run_draws_the_first_jobs_by_start_and_counts_them_all() {
    let mesh: Topology = "mesh:8x8".parse().expect("mesh");
    let recs = records(&mesh, "first-fit", 400);
    let options = ReportOptions::titled("t").with_max_drawn(50);
    let d = data(&render(&[RunView::new("ff", &mesh, &recs)], &options).expect("report"));
    let run = &d["runs"][0];
    assert_eq!(run["drawn"], 50);
    assert_eq!(run["total"].as_u64(), Some(recs.len() as u64));
    let mut starts: Vec<f64> = recs.iter().map(|r| r.start).collect();
    starts.sort_by(f64::total_cmp);
    let drawn = nums(&run["jobs"]["start"]);
    assert_eq!(drawn.len(), 50);
    assert_eq!(drawn[49], starts[49]);
    // The distribution counts every job: its last point is the largest wait.
    let max_wait = recs.iter().map(|r| r.wait).fold(0.0, f64::max);
    let cdf = run["cdf_wait"].as_array().expect("cdf");
    assert_eq!(cdf.last().expect("points")[0].as_f64(), Some(max_wait));
}

#[test]
fn several_runs_side_by_side_and_labels_cannot_break_the_page() {
    let mesh: Topology = "mesh:8x8".parse().expect("mesh");
    let a = records(&mesh, "fsl", 100);
    let b = records(&mesh, "paging", 100);
    let evil = "</script><script>alert(1)</script>";
    let html = render(
        &[
            RunView::new("fsl", &mesh, &a),
            RunView::new(evil, &mesh, &b),
        ],
        &ReportOptions::titled("<b>x</b>"),
    )
    .expect("report");
    assert!(!html.contains(evil) && !html.contains("<b>x</b>"));
    let d = data(&html);
    assert_eq!(d["runs"].as_array().map(Vec::len), Some(2));
    assert_eq!(d["runs"][1]["label"], evil);
}

#[test]
fn nothing_to_show_is_an_error_and_writes_nothing() {
    let mesh: Topology = "mesh:4x4".parse().expect("mesh");
    assert!(matches!(
        render(&[], &ReportOptions::default()),
        Err(ReportError::NoRuns)
    ));
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("r.html");
    let e = write(
        &path,
        &[RunView::new("empty", &mesh, &[])],
        &ReportOptions::default(),
    )
    .expect_err("no jobs");
    assert!(e.to_string().contains("no finished job"), "{e}");
    assert!(!Path::new(&path).exists());
}
