//! The report page in a real browser: for a mesh, a hypercube, a Slurm
//! block machine replaying a sacct dump and a pod, `replay --report` and
//! `--batsim-jobs` write the page and the jobs CSV, headless Chromium opens
//! the page, and its DOM is checked against the CSV — the number of bars
//! drawn, the window of the chart, where a known job's bar was drawn and its
//! hover text — and a screenshot is taken.
//!
//! The browser is Debian's `chromium` (or `$PARTALLOC_CHROMIUM`); CI
//! installs it. Without it the test says so and checks nothing, except on
//! CI (`$CI` set), where a missing browser fails it.
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "the helpers that run the tool and the browser sit outside #[test] functions"
)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{fails, ok, repo, run, run_in};

/// The page's drawing constants (`crates/report/src/page.html`).
const WIDTH: f64 = 1100.0;
const HEIGHT: f64 = 520.0;
const LEFT: f64 = 110.0;
const RIGHT: f64 = 50.0;
const TOP: f64 = 8.0;
const BOTTOM: f64 = 26.0;

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PARTALLOC_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        let o = Command::new("which").arg(name).output().ok()?;
        o.status
            .success()
            .then(|| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
    })
}

fn browser(chromium: &Path, profile: &Path, extra: &[&str], url: &str) -> String {
    let o = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The value of `attr="…"` on the element whose opening tag holds `id`.
fn attribute(dom: &str, id: &str, attr: &str) -> String {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let tag_start = dom[..at].rfind('<').unwrap();
    let tag = &dom[tag_start..at + dom[at..].find('>').unwrap()];
    let key = format!("{attr}=\"");
    let from = tag
        .find(&key)
        .unwrap_or_else(|| panic!("#{id} has no {attr}: {tag}"))
        + key.len();
    tag[from..from + tag[from..].find('"').unwrap()].to_owned()
}

/// The page's number format (`fmt` in its script).
fn fmt(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// One row of Batsim's jobs CSV.
struct Row {
    id: String,
    submit: f64,
    start: f64,
    end: f64,
    granted: u64,
    /// (first node, count) per interval.
    intervals: Vec<(u64, u64)>,
}

fn batsim_rows(path: &Path) -> Vec<Row> {
    let text = fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (id, submit, start, end, res, alloc) = (
        col("job_id"),
        col("submission_time"),
        col("starting_time"),
        col("finish_time"),
        col("requested_number_of_resources"),
        col("allocated_resources"),
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let intervals = f[alloc]
                .split(' ')
                .map(|iv| match iv.split_once('-') {
                    Some((a, b)) => {
                        let (a, b): (u64, u64) = (a.parse().unwrap(), b.parse().unwrap());
                        (a, b - a + 1)
                    }
                    None => (iv.parse().unwrap(), 1),
                })
                .collect();
            Row {
                id: f[id].to_owned(),
                submit: f[submit].parse().unwrap(),
                start: f[start].parse().unwrap(),
                end: f[end].parse().unwrap(),
                granted: f[res].parse().unwrap(),
                intervals,
            }
        })
        .collect()
}

fn check_family(chromium: &Path, name: &str, args: &[&str], nodes: u64) {
    let dir = tempfile::tempdir().unwrap();
    for a in args {
        for part in a.split([':', ',']) {
            if part.starts_with("examples/") {
                let to = dir.path().join(part);
                fs::create_dir_all(to.parent().unwrap()).unwrap();
                fs::copy(repo().join(part), to).unwrap();
            }
        }
    }
    let mut all = vec!["replay"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--report", "r.html", "--batsim-jobs", "r_jobs.csv", "-q"]);
    ok(&run_in(dir.path(), &all));
    let rows = batsim_rows(&dir.path().join("r_jobs.csv"));
    assert!(rows.len() > 10, "{name}: {} jobs", rows.len());
    let known = &rows[rows.len() / 2];
    let page = dir.path().join("r.html");
    let url = format!("file://{}#probe={}", page.display(), known.id);
    let profile = dir.path().join("profile");
    let dom = browser(chromium, &profile, &["--dump-dom"], &url);
    assert!(
        dom.contains(r#"<body data-ready="1">"#),
        "{name}: the page did not finish"
    );

    // Stranded nodes over time where the machine defines them.
    let stranded = matches!(name, "blocks" | "pod");
    assert_eq!(
        dom.contains("id=\"stranded-note\">stranded nodes (green, 0 to "),
        stranded,
        "{name}: the stranded-node curve"
    );

    // Every job of the first run drawn, one bar per interval of its nodes.
    let bars: usize = rows.iter().map(|r| r.intervals.len()).sum();
    assert_eq!(
        attribute(&dom, "gantt", "data-bars"),
        bars.to_string(),
        "{name}: bars"
    );
    // The window: the run's time span, every node.
    let t0 = rows.iter().map(|r| r.submit).fold(f64::INFINITY, f64::min);
    let t1 = rows.iter().map(|r| r.end).fold(f64::NEG_INFINITY, f64::max);
    let window: Vec<f64> = attribute(&dom, "gantt", "data-window")
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(
        (window[0] - t0).abs() < 1e-6 && (window[1] - t1).abs() < 1e-6,
        "{name}: {window:?}"
    );
    assert_eq!(window[2..], [0.0, nodes as f64], "{name}: node range");

    // Where the known job's first bar was drawn, from the CSV alone.
    let probe = dom[dom.find("id=\"probe\"").unwrap()..].to_owned();
    let text = &probe[probe.find('>').unwrap() + 1..probe.find("</pre>").unwrap()];
    let mut lines = text.lines();
    let rect: Vec<f64> = lines
        .next()
        .unwrap()
        .trim_start_matches("rect ")
        .split(' ')
        .map(|v| v.parse().unwrap())
        .collect();
    let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let (first, count) = known.intervals[0];
    let want = [
        LEFT + (known.start - t0) / (t1 - t0) * pw,
        TOP + first as f64 / nodes as f64 * ph,
        ((known.end - known.start) / (t1 - t0) * pw).max(1.0),
        (count as f64 / nodes as f64 * ph).max(1.0),
    ];
    for (got, want) in rect.iter().zip(want) {
        assert!(
            (got - want).abs() < 0.01,
            "{name}: job {}'s bar at {rect:?}, expected {want:?}",
            known.id
        );
    }
    // Its hover text.
    let hover: Vec<&str> = lines.collect();
    assert_eq!(hover[0], format!("job {}", known.id), "{name}");
    assert!(
        hover[1].ends_with(&format!("granted {}", known.granted)),
        "{name}: {}",
        hover[1]
    );
    assert_eq!(
        hover[2],
        format!(
            "submit {}  start {}  end {}",
            fmt(known.submit),
            fmt(known.start),
            fmt(known.end)
        ),
        "{name}"
    );

    // A screenshot of the page.
    let shot = dir.path().join("shot.png");
    browser(
        chromium,
        &profile,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,1600",
        ],
        &url,
    );
    let png = fs::read(&shot).unwrap();
    assert!(
        png.len() > 10_000 && png.starts_with(b"\x89PNG"),
        "{name}: screenshot"
    );
}

#[test]
fn the_report_page_in_a_browser_shows_every_job_where_it_ran() {
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install chromium for the report's browser test"
        );
        eprintln!("no chromium: the report's browser test checked nothing");
        return;
    };
    let nasa = repo()
        .join("data/traces/NASA-iPSC-1993-3.1-cln.swf")
        .display()
        .to_string();
    check_family(
        &chromium,
        "mesh",
        &[
            "examples/mesh8x8-load0.6.swf",
            "-t",
            "mesh:8x8",
            "--allocators",
            "fsl",
        ],
        64,
    );
    check_family(
        &chromium,
        "hypercube",
        &[
            &nasa,
            "--jobs",
            "500",
            "-t",
            "hypercube:7",
            "--allocators",
            "buddy",
        ],
        128,
    );
    check_family(
        &chromium,
        "blocks",
        &[
            "examples/blocks-8x18.sacct",
            "--trace-format",
            "sacct",
            "-t",
            "blocks:examples/blocks-8x18.conf",
            "--allocators",
            "block",
        ],
        144,
    );
    check_family(
        &chromium,
        "pod",
        &[
            &nasa,
            "--jobs",
            "300",
            "-t",
            "pod:tpu-v4:8x8x8",
            "--allocators",
            "pod-best-fit",
            "--reference",
            "pod-first-fit",
        ],
        512,
    );
}

/// The rows of the page's summary table: one per run, its label first.
fn summary_rows(dom: &str) -> Vec<String> {
    let table = &dom[dom.find("id=\"summary\"").unwrap()..];
    let body = &table[table.find("<tbody>").unwrap()..table.find("</tbody>").unwrap()];
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            let cell = &row[row.find("<td>").unwrap() + 4..];
            cell[..cell.find("</td>").unwrap()].to_owned()
        })
        .collect()
}

#[test]
fn report_and_sweep_pages_show_every_run_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    // Two strategies under two policies on one generated workload.
    let out = ok(&run_in(
        dir.path(),
        &[
            "report",
            "-t",
            "mesh:8x8",
            "-a",
            "fsl,first-fit",
            "-s",
            "fcfs",
            "-s",
            "easy-backfilling",
            "--jobs",
            "300",
            "-o",
            "r.html",
            "-q",
        ],
    ));
    assert!(out.contains("report of 4 runs"), "{out}");
    let page = fs::read_to_string(dir.path().join("r.html")).unwrap();
    for label in [
        "fsl · fcfs",
        "first-fit · fcfs",
        "fsl · easy-backfilling",
        "first-fit · easy-backfilling",
    ] {
        assert!(page.contains(label), "{label}");
    }
    // The same runs as simulate's first seed: the same jobs, the same wait.
    let sim: serde_json::Value = serde_json::from_str(&ok(&run(&[
        "simulate", "-t", "mesh:8x8", "-a", "fsl", "--jobs", "300", "--format", "json",
    ])))
    .unwrap();
    let wait = sim["replications"][0]["mean_wait"].as_f64().unwrap();
    // A sweep's page: one run per point.
    fs::write(
        dir.path().join("exp.toml"),
        "topologies = [\"mesh:8x8\"]\nallocators = [\"fsl\", \"paging\"]\nloads = [0.3, 0.6]\n[workload]\njobs = 200\n",
    )
    .unwrap();
    let out = ok(&run_in(
        dir.path(),
        &[
            "sweep",
            "exp.toml",
            "--no-plots",
            "--report",
            "s.html",
            "-q",
        ],
    ));
    assert!(out.contains("report s.html"), "{out}");
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install chromium for the report's browser test"
        );
        return;
    };
    let profile = dir.path().join("profile");
    let open = |name: &str| {
        let url = format!("file://{}", dir.path().join(name).display());
        let dom = browser(&chromium, &profile, &["--dump-dom"], &url);
        assert!(
            dom.contains(r#"<body data-ready="1">"#),
            "{name} did not finish"
        );
        dom
    };
    let rows = summary_rows(&open("r.html"));
    assert_eq!(
        rows,
        [
            "fsl · fcfs",
            "first-fit · fcfs",
            "fsl · easy-backfilling",
            "first-fit · easy-backfilling"
        ]
    );
    let dom = open("r.html");
    let first = &dom[dom.find("<tbody>").unwrap()..];
    assert!(
        first.contains(&fmt(wait)),
        "mean wait {wait} not in {first:.600}"
    );
    let rows = summary_rows(&open("s.html"));
    assert_eq!(
        rows,
        [
            "fsl · fcfs · load 0.3",
            "fsl · fcfs · load 0.6",
            "paging · fcfs · load 0.3",
            "paging · fcfs · load 0.6"
        ]
    );
}

#[test]
fn a_report_of_nothing_or_too_much_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // A trace with no usable job.
    fs::write(dir.path().join("empty.swf"), "; nothing\n").unwrap();
    let e = fails(&run_in(
        dir.path(),
        &[
            "report",
            "-t",
            "mesh:8x8",
            "-a",
            "fsl",
            "--trace",
            "empty.swf",
            "-o",
            "r.html",
        ],
    ));
    assert!(e.contains("no usable job"), "{e}");
    // More jobs than a page holds, refused before anything runs.
    let e = fails(&run_in(
        dir.path(),
        &[
            "report",
            "-t",
            "mesh:8x8",
            "-a",
            "fsl,paging",
            "--jobs",
            "4000000",
            "-o",
            "r.html",
        ],
    ));
    assert!(e.contains("more than the 5000000 a report holds"), "{e}");
    // The page may not replace its input.
    let e = fails(&run_in(
        dir.path(),
        &[
            "report",
            "-t",
            "mesh:8x8",
            "-a",
            "fsl",
            "--trace",
            "empty.swf",
            "-o",
            "empty.swf",
        ],
    ));
    assert!(e.contains("that is the input"), "{e}");
    assert_eq!(
        fs::read_to_string(dir.path().join("empty.swf")).unwrap(),
        "; nothing\n"
    );
    assert!(!dir.path().join("r.html").exists());
    // A sweep's page is sized before the sweep runs.
    fs::write(
        dir.path().join("exp.toml"),
        "topologies = [\"mesh:8x8\"]\nallocators = [\"fsl\", \"paging\"]\nloads = [0.3, 0.6]\n[workload]\njobs = 2000000\n",
    )
    .unwrap();
    let e = fails(&run_in(
        dir.path(),
        &["sweep", "exp.toml", "--report", "s.html", "-q"],
    ));
    assert!(e.contains("a report holds"), "{e}");
    assert!(!dir.path().join("exp.csv").exists() && !dir.path().join("s.html").exists());
}
