//! Sweeps split into shards: the merge gives the unsharded sweep's bytes
//! for any number of shards, bad sets of shards are refused by name, and
//! the emitted Slurm script is valid bash.
#![expect(
    clippy::unwrap_used,
    reason = "the helpers running the binary sit outside #[test] functions"
)]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::support::{ok, run_in, words};

/// 2 machines × 2 strategies × 3 loads: 12 points.
const EXPERIMENT: &str = r#"
seeds = 2
topologies = ["mesh:8x8", "mesh:6x4"]
allocators = ["fsl", "first-fit"]
schedulers = ["fcfs"]
loads = [0.2, 0.4, 0.6]

[workload]
residence = "exp:5"
jobs = 80
warmup = 8
"#;

/// Asserts a one-line error with exit code 1 and returns it.
fn fails(o: &Output) -> String {
    let e = String::from_utf8(o.stderr.clone()).unwrap();
    assert_eq!(o.status.code(), Some(1), "stderr: {e}");
    assert_eq!(e.lines().count(), 1, "not one line: {e}");
    assert!(e.starts_with("error: "), "{e}");
    e
}

fn shard(dir: &Path, out: &str, i: usize, n: usize) -> String {
    let spec = format!("{i}/{n}");
    ok(&run_in(
        dir,
        &["sweep", "exp.toml", "--out", out, "--shard", &spec, "-q"],
    ));
    format!("{}.shard-{i}-of-{n}.csv", out.trim_end_matches(".csv"))
}

fn merge(dir: &Path, out: &str, files: &[String]) -> Output {
    let mut args = vec!["sweep", "merge", out];
    args.extend(files.iter().map(String::as_str));
    run_in(dir, &args)
}

#[test]
fn merged_shards_equal_the_unsharded_sweep_for_any_count() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("exp.toml"), EXPERIMENT).unwrap();
    ok(&run_in(
        d,
        &["sweep", "exp.toml", "--out", "full.csv", "-q", "--no-plots"],
    ));
    let want = fs::read(d.join("full.csv")).unwrap();
    assert_eq!(String::from_utf8_lossy(&want).lines().count(), 13);
    for n in [1, 2, 3, 7] {
        let out = format!("s{n}.csv");
        let mut files: Vec<String> = (0..n).map(|i| shard(d, &out, i, n)).collect();
        // Shards hold 12/n points each, within one.
        for f in &files {
            let rows = fs::read_to_string(d.join(f)).unwrap().lines().count() - 1;
            assert!(rows == 12 / n || rows == 12 / n + 1, "{f}: {rows} rows");
        }
        // The order of the arguments does not matter.
        files.reverse();
        let merged = format!("m{n}.csv");
        let msg = ok(&merge(d, &merged, &files));
        assert_eq!(
            msg,
            format!("12 points from {n} shards written to {merged}\n")
        );
        assert_eq!(fs::read(d.join(&merged)).unwrap(), want, "N = {n}");
    }
}

#[test]
fn an_interrupted_shard_resumes_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("exp.toml"), EXPERIMENT).unwrap();
    let whole = shard(d, "a.csv", 1, 2);
    let args = [
        "sweep", "exp.toml", "--out", "b.csv", "--shard", "1/2", "-q", "--limit", "2",
    ];
    let msg = ok(&run_in(d, &args));
    assert!(msg.starts_with("stopped with 4 of 6 points left"), "{msg}");
    assert!(!d.join("b.shard-1-of-2.csv").exists());
    assert!(!d.join("b.shard-1-of-2.json").exists());
    let resumed = shard(d, "b.csv", 1, 2);
    assert_eq!(
        fs::read(d.join(&resumed)).unwrap(),
        fs::read(d.join(&whole)).unwrap()
    );
    // Running a finished shard again computes nothing.
    let msg = ok(&run_in(d, &args[..7]));
    assert!(
        msg.starts_with("shard 1 of 2: 6 points (6 from an earlier run)"),
        "{msg}"
    );
}

#[test]
fn missing_duplicated_foreign_and_unfinished_shards_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("exp.toml"), EXPERIMENT).unwrap();
    let files: Vec<String> = (0..3).map(|i| shard(d, "x.csv", i, 3)).collect();
    let [s0, s1, s2] = [&files[0], &files[1], &files[2]].map(String::clone);

    let e = fails(&merge(d, "m.csv", &[s0.clone(), s2.clone()]));
    assert_eq!(e, "error: 1 of 3 shards missing: x.shard-1-of-3.csv\n");
    let e = fails(&merge(d, "m.csv", std::slice::from_ref(&s2)));
    assert_eq!(
        e,
        "error: 2 of 3 shards missing: x.shard-0-of-3.csv, x.shard-1-of-3.csv\n"
    );

    fs::copy(d.join(&s1), d.join("copy.csv")).unwrap();
    fs::copy(d.join("x.shard-1-of-3.json"), d.join("copy.json")).unwrap();
    let e = fails(&merge(
        d,
        "m.csv",
        &[s0.clone(), s1.clone(), "copy.csv".to_owned(), s2.clone()],
    ));
    assert_eq!(
        e,
        "error: copy.csv: shard 1 of 3 again (already given as x.shard-1-of-3.csv); give each shard once\n"
    );

    // The same grid under another seed is another experiment.
    fs::write(d.join("exp.toml"), format!("seed = 9\n{EXPERIMENT}")).unwrap();
    let other = shard(d, "y.csv", 1, 3);
    let e = fails(&merge(d, "m.csv", &[s0.clone(), other, s2.clone()]));
    assert_eq!(
        e,
        "error: y.shard-1-of-3.csv: a shard of another experiment than x.shard-0-of-3.csv (other grid or settings); merge shards of one experiment\n"
    );

    // Shards of another split.
    fs::write(d.join("exp.toml"), EXPERIMENT).unwrap();
    let four = shard(d, "z.csv", 1, 4);
    let e = fails(&merge(d, "m.csv", &[s0.clone(), four]));
    assert!(
        e.contains("one of 4 shards, but x.shard-0-of-3.csv is one of 3"),
        "{e}"
    );

    // A shard without its record has not finished.
    fs::remove_file(d.join("copy.json")).unwrap();
    let e = fails(&merge(
        d,
        "m.csv",
        &[s0.clone(), "copy.csv".to_owned(), s2.clone()],
    ));
    assert_eq!(
        e,
        "error: copy.csv: no shard record copy.json; the shard has not finished: run its --shard command again\n"
    );

    // A shard edited after it finished.
    let mut text = fs::read_to_string(d.join(&s1)).unwrap();
    let extra = text.lines().nth(1).unwrap().to_owned();
    text.push_str(&extra);
    text.push('\n');
    fs::write(d.join(&s1), text).unwrap();
    let e = fails(&merge(d, "m.csv", &[s0.clone(), s1.clone(), s2.clone()]));
    assert!(
        e.starts_with("error: x.shard-1-of-3.csv: changed since its shard finished"),
        "{e}"
    );

    // Nothing was written by the failed merges.
    assert!(!d.join("m.csv").exists());

    // More shards than points.
    let e = fails(&run_in(d, &["sweep", "exp.toml", "--shard", "3/13", "-q"]));
    assert_eq!(
        e,
        "error: --shard 3/13: the grid has only 12 points; use at most 12 shards\n"
    );
}

#[test]
fn the_emitted_slurm_script_is_an_array_of_shards_then_the_merge() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("exp.toml"), EXPERIMENT).unwrap();
    let script = ok(&run_in(
        d,
        &words(
            "sweep exp.toml --out it's.csv --emit-slurm --shards 3 --partition short --cpus-per-task 2 --sbatch-arg=--account=proj",
        ),
    ));
    for line in [
        "#!/bin/bash",
        "#SBATCH --array=0-2",
        "#SBATCH --cpus-per-task=2",
        "#SBATCH --partition=short",
        "#SBATCH --account=proj",
        "#SBATCH --time=01:00:00",
    ] {
        assert!(
            script.lines().any(|l| l == line),
            "no {line:?} in\n{script}"
        );
    }
    assert!(
        script.contains("--shard \"${SLURM_ARRAY_TASK_ID}/3\""),
        "{script}"
    );
    assert!(
        script.contains("--dependency=afterok:\"${SLURM_ARRAY_JOB_ID}\""),
        "{script}"
    );
    assert!(script.contains(r"it'\''s.shard-2-of-3.csv'"), "{script}");
    assert!(script.contains("sweep merge"), "{script}");

    // The default is one shard per point.
    let default = ok(&run_in(d, &["sweep", "exp.toml", "--emit-slurm"]));
    assert!(default.contains("#SBATCH --array=0-11\n"), "{default}");
    let e = fails(&run_in(
        d,
        &["sweep", "exp.toml", "--emit-slurm", "--shards", "13"],
    ));
    assert!(e.contains("--shards 13: choose 1 to 12"), "{e}");
    let e = fails(&run_in(
        d,
        &["sweep", "exp.toml", "--emit-slurm", "--partition", "a b"],
    ));
    assert!(e.contains("must be one word"), "{e}");

    // Flags that only a local run uses are refused, not ignored.
    let o = run_in(d, &["sweep", "exp.toml", "--emit-slurm", "--limit", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be used with"));

    fs::write(d.join("array.sbatch"), &script).unwrap();
    match Command::new("bash")
        .arg("-n")
        .arg(d.join("array.sbatch"))
        .output()
    {
        Ok(o) => assert!(
            o.status.success(),
            "bash -n: {}\n{script}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("bash is absent; the script's syntax is not checked");
        }
        Err(e) => panic!("cannot run bash: {e}"),
    }
}
