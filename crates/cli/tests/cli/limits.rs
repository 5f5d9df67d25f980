//! Input that would make the tool allocate without bound is refused with
//! one line and exit code 1; flags a subcommand does not use are refused by
//! the command line parser; the thread count never changes a result.

use std::fs;
use std::path::PathBuf;
use std::process::Output;

use crate::support::{fails, nasa, ok, run, run_in, stderr, words};

/// Asserts that clap refused the command line (exit code 2) and returns
/// its message.
fn refused(o: &Output) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    e
}

#[test]
fn show_on_a_huge_mesh_says_what_is_too_big() {
    let e = fails(&run(&words(
        "show --topology mesh:40000x40000 --allocator fsl --at 10",
    )));
    assert!(
        e.contains("mesh:40000x40000 has 1600000000 nodes") && e.contains("at most 1048576"),
        "{e}"
    );
}

#[test]
fn the_largest_machines_the_parser_accepts_are_refused_in_one_line() {
    for machine in ["hypercube:30", "mesh:46340x46340", "torus:2147483648"] {
        let e = fails(&run(&[
            "simulate", "-t", machine, "-a", "buddy", "--jobs", "1",
        ]));
        assert!(
            e.contains("too many for simulate") && e.contains("at most 4194304"),
            "{e}"
        );
        let e = fails(&run(&["strategies", "--topology", machine]));
        assert!(e.contains("too many for strategies --topology"), "{e}");
        let e = fails(&run(&["replay", &nasa(), "-t", machine, "-a", "paging"]));
        assert!(e.contains("too many for replay"), "{e}");
    }
    // The largest accepted machine still lists its strategies.
    let out = ok(&run(&["strategies", "--topology", "hypercube:22"]));
    assert!(out.contains("buddy-free-list"), "{out}");
}

#[test]
fn sweep_refuses_huge_machines_and_seed_counts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(
        d.join("big.toml"),
        "topologies = [\"mesh:8x8\", \"mesh:40000x40000\"]\nallocators = [\"fsl\"]\nloads = [0.5]\n",
    )
    .unwrap();
    let e = fails(&run_in(d, &["sweep", "big.toml"]));
    assert!(
        e.contains("mesh:40000x40000") && e.contains("too many for sweep"),
        "{e}"
    );
    fs::write(
        d.join("seeds.toml"),
        "seeds = 18446744073709551615\ntopologies = [\"mesh:8x8\"]\nallocators = [\"fsl\"]\nloads = [0.5]\n",
    )
    .unwrap();
    let e = fails(&run_in(d, &["sweep", "seeds.toml"]));
    assert!(e.contains("seeds 18446744073709551615 is too large"), "{e}");
    assert!(!d.join("big.csv").exists() && !d.join("seeds.csv").exists());
}

#[test]
fn counts_that_would_fill_memory_are_refused() {
    let e = fails(&run(&words(
        "simulate -t mesh:8x8 -a fsl --seeds 1000000000",
    )));
    assert!(e.contains("--seeds 1000000000 is too large"), "{e}");
    let e = fails(&run(&words(
        "simulate -t mesh:8x8 -a fsl --jobs 100000000000 --jobs-csv j.csv",
    )));
    assert!(e.contains("--jobs with --jobs-csv"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let e = fails(&run_in(
        dir.path(),
        &words("generate -t mesh:8x8 --jobs 100000000000 --out g.swf"),
    ));
    assert!(e.contains("--jobs 100000000000 is too large"), "{e}");
    assert!(!dir.path().join("g.swf").exists());
    // A time so late that the jobs before it cannot be kept.
    let e = fails(&run(&[
        "show", "-t", "mesh:4x4", "-a", "fsl", "--at", "1e300",
    ]));
    assert!(e.contains("more than 1000000 jobs arrive by then"), "{e}");
}

#[test]
fn show_svg_of_a_large_machine_is_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = ok(&run_in(
        d,
        &words("show -t mesh:1024x1024 -a first-fit --at 0.5 --load 0.3 --svg big.svg"),
    ));
    assert!(out.contains("nodes"), "{out}");
    let svg = fs::read_to_string(d.join("big.svg")).unwrap();
    assert!(
        svg.contains("1048576 cells are more than the 16384"),
        "{svg}"
    );
    assert!(svg.len() < 20_000, "{} bytes", svg.len());
    // Small machines still get a cell per busy node.
    ok(&run_in(
        d,
        &words("show -t mesh:16x16 -a fsl --at 5 --svg small.svg"),
    ));
    let svg = fs::read_to_string(d.join("small.svg")).unwrap();
    assert!(svg.contains("<title>job "), "{svg}");
}

#[test]
fn flags_a_subcommand_ignores_are_refused() {
    for args in [
        &[
            "show", "-t", "mesh:8x8", "-a", "fsl", "--at", "1", "--jobs", "5",
        ][..],
        &[
            "show", "-t", "mesh:8x8", "-a", "fsl", "--at", "1", "--warmup", "5",
        ],
        &[
            "generate", "-t", "mesh:8x8", "--out", "x.swf", "--warmup", "5",
        ],
        &words("generate -t mesh:8x8 --out x.swf --mapping nodes"),
        &["generate", "-t", "mesh:8x8", "--out", "x.swf", "--lenient"],
        &["strategies", "--json"],
    ] {
        let e = refused(&run(args));
        assert!(e.contains("unexpected argument"), "{args:?}: {e}");
    }
}

#[test]
fn generate_writes_no_warm_up_into_the_header() {
    let dir = tempfile::tempdir().unwrap();
    ok(&run_in(
        dir.path(),
        &[
            "generate", "-t", "mesh:8x8", "--jobs", "20", "--out", "g.swf",
        ],
    ));
    let text = fs::read_to_string(dir.path().join("g.swf")).unwrap();
    let note = text.lines().find(|l| l.starts_with("; Note:")).unwrap();
    assert!(
        !note.contains("warm-up") && note.contains("20 jobs"),
        "{note}"
    );
}

#[test]
fn residence_ranges_and_reference_errors_name_the_flag() {
    // An exponent's sign is not a range separator: 1e-3 is a mean.
    for (law, shown) in [
        ("uniform:1e-3", "uniform:0.001"),
        ("uniform:1e-3-3e-3", "uniform:0.001-0.003"),
    ] {
        let out = ok(&run(&[
            "simulate",
            "-t",
            "mesh:8x8",
            "-a",
            "fsl",
            "--jobs",
            "50",
            "--residence",
            law,
        ]));
        assert!(out.contains(shown), "{law}: {out}");
    }
    let e = refused(&run(&words(
        "simulate -t mesh:8x8 -a fsl --residence uniform:x-2",
    )));
    assert!(e.contains("--residence"), "{e}");
    let e = fails(&run(&[
        "replay",
        &nasa(),
        "-t",
        "hypercube:7",
        "--reference",
        "bogus",
    ]));
    assert!(
        e.starts_with("error: --reference: unknown allocation strategy \"bogus\""),
        "{e}"
    );
}

#[test]
fn every_format_flag_is_one_spelling_and_help_lists_the_choices() {
    let json = ok(&run(&["strategies", "--format", "json"]));
    assert!(json.trim_start().starts_with('{'), "{json}");
    let help = ok(&run(&["simulate", "-h"]));
    for choices in [
        "[possible values: text, json, csv]",
        "[possible values: auto, sides, cubic, noncubic, cube, nodes, catalogue]",
        "[possible values: uniform, normal, exponential]",
        "[possible values: dependent, independent]",
        "[possible values: shapes, nodes]",
    ] {
        assert!(help.contains(choices), "{choices} not in\n{help}");
    }
    assert!(ok(&run(&["strategies", "-h"])).contains("[possible values: text, json]"));
    // The old spelling of the text format still works.
    ok(&run(&[
        "simulate", "-t", "mesh:8x8", "-a", "fsl", "--jobs", "20", "--format", "table",
    ]));
}

fn csv_with_threads(args: &[&str], threads: &str) -> String {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--format", "csv", "--threads", threads]);
    ok(&run(&all))
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let sim = [
        "simulate",
        "-t",
        "mesh:16x16",
        "-a",
        "fsl",
        "--seeds",
        "6",
        "--jobs",
        "300",
        "--load",
        "0.7",
    ];
    let one = csv_with_threads(&sim, "1");
    assert!(one.lines().count() > 3, "{one}");
    assert_eq!(one, csv_with_threads(&sim, "3"));
    let replay = [
        "replay",
        &nasa(),
        "-t",
        "hypercube:7",
        "--jobs",
        "2000",
        "--quiet",
    ];
    let one = csv_with_threads(&replay, "1");
    assert_eq!(one, csv_with_threads(&replay, "4"));
    // Without a terminal no bar is drawn: standard error stays empty.
    let o = run(&[
        "simulate", "-t", "mesh:8x8", "-a", "fsl", "--seeds", "3", "--jobs", "50",
    ]);
    ok(&o);
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
}

#[test]
fn machines_within_the_bounds_run_as_before() {
    // Sizes inside the bounds run as before.
    let dir = tempfile::tempdir().unwrap();
    let p: PathBuf = dir.path().join("s.txt");
    ok(&run(&[
        "simulate",
        "-t",
        "hypercube:10",
        "-a",
        "buddy",
        "--jobs",
        "100",
        "-o",
        p.to_str().unwrap(),
    ]));
    assert!(fs::read_to_string(&p).unwrap().contains("hypercube:10"));
}
