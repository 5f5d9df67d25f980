//! Recovery: a sweep killed with SIGKILL and resumed, and a sweep on a
//! full file system, both ending byte-exact with an uninterrupted run;
//! and the shard files the merge probes start from.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{Expect, MEMORY_KB, bin, data, judge, leftover_temporaries, run_limited, skipped};
use crate::support::words;

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| (*s).to_owned()).collect()
}

/// The small experiment's two shards (`e.shard-I-of-2.csv` and `.json`)
/// and the experiment `e.toml`, made once by the binary.
pub(crate) fn shard_files() -> Vec<(String, Vec<u8>)> {
    static FILES: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    FILES
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("temporary directory");
            let d = dir.path();
            fs::write(d.join("e.toml"), data("sweep.toml")).expect("write e.toml");
            for shard in ["0/2", "1/2"] {
                let run = run_limited(
                    d,
                    &args(&[
                        "sweep",
                        "e.toml",
                        "-o",
                        "e.csv",
                        "-q",
                        "--no-plots",
                        "--shard",
                        shard,
                    ]),
                    MEMORY_KB,
                    super::TIMEOUT,
                );
                assert_eq!(run.code, Some(0), "shard {shard}: {}", run.stderr);
            }
            let mut files = Vec::new();
            for name in [
                "e.toml",
                "e.shard-0-of-2.csv",
                "e.shard-0-of-2.json",
                "e.shard-1-of-2.csv",
                "e.shard-1-of-2.json",
            ] {
                let bytes = fs::read(d.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
                files.push((name.to_owned(), bytes));
            }
            files
        })
        .clone()
}

/// The `.partial` file of the small experiment stopped after one point.
pub(crate) fn partial_file() -> Vec<u8> {
    static FILE: OnceLock<Vec<u8>> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary directory");
        let d = dir.path();
        fs::write(d.join("e.toml"), data("sweep.toml")).expect("write e.toml");
        let run = run_limited(
            d,
            &args(&words("sweep e.toml -o small.csv -q --no-plots --limit 1")),
            MEMORY_KB,
            super::TIMEOUT,
        );
        assert_eq!(run.code, Some(0), "sweep --limit 1: {}", run.stderr);
        fs::read(d.join("small.csv.partial")).expect("small.csv.partial")
    })
    .clone()
}

/// An experiment of 24 points that takes a few seconds in a debug build.
const LONG_SWEEP: &str = "\
seed = 5
seeds = 2
topologies = [\"mesh:8x8\"]
allocators = [\"first-fit\", \"paging\", \"fsl\", \"busy-list\"]
loads = [0.2, 0.3, 0.4, 0.5, 0.6, 0.7]

[workload]
shapes = \"sides\"
jobs = 400
";

fn sweep_args(out: &str) -> Vec<String> {
    args(&[
        "sweep",
        "x.toml",
        "-o",
        out,
        "-q",
        "--no-plots",
        "--threads",
        "2",
    ])
}

/// The uninterrupted run's CSV and how long it took.
fn reference(d: &Path) -> (Vec<u8>, Duration) {
    fs::write(d.join("x.toml"), LONG_SWEEP).expect("write x.toml");
    let run = run_limited(
        d,
        &sweep_args("ref.csv"),
        MEMORY_KB,
        Duration::from_secs(600),
    );
    assert_eq!(run.code, Some(0), "reference run: {}", run.stderr);
    (fs::read(d.join("ref.csv")).expect("ref.csv"), run.elapsed)
}

/// Kills a sweep with SIGKILL three times at different moments, resumes
/// it, and compares the result with an uninterrupted run byte for byte.
pub(crate) fn kill_and_resume() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let d = dir.path();
    let (want, took) = reference(d);
    let mut killed = 0;
    for fraction in [0.2, 0.45, 0.7] {
        let mut child = Command::new(bin())
            .args(sweep_args("out.csv"))
            .current_dir(d)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the sweep");
        let start = Instant::now();
        std::thread::sleep(took.mul_f64(fraction));
        if child.try_wait().expect("wait").is_none() {
            child.kill().expect("SIGKILL");
            killed += 1;
        }
        let _ = child.wait();
        assert!(
            !d.join("out.csv").exists() || start.elapsed() >= took.mul_f64(fraction),
            "a killed sweep left a complete-looking out.csv"
        );
        if d.join("out.csv").exists() {
            break;
        }
    }
    assert!(
        killed > 0,
        "the sweep always finished before it could be killed"
    );
    let run = run_limited(
        d,
        &sweep_args("out.csv"),
        MEMORY_KB,
        Duration::from_secs(600),
    );
    judge(Expect::Ok, &run, None).unwrap_or_else(|e| panic!("resume: {e}"));
    let got = fs::read(d.join("out.csv")).expect("out.csv after resuming");
    assert!(
        got == want,
        "the resumed CSV differs from the uninterrupted one"
    );
    assert_eq!(leftover_temporaries(d), None);
}

/// Unmounts a tmpfs when dropped.
struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Fills a small tmpfs, runs writers on it (each must fail in one line
/// and leave no file), frees it, and resumes the sweep byte-exact.
pub(crate) fn disk_full() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let d = dir.path();
    let mnt = d.join("mnt");
    fs::create_dir(&mnt).expect("mkdir mnt");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        assert!(
            skipped("tmpfs"),
            "cannot mount a small tmpfs for the disk-full case (needs root and mount); set PARTALLOC_ADVERSARIAL_SKIP=tmpfs to opt out"
        );
        return;
    }
    let _guard = Mount(mnt.clone());
    let (want, _) = reference(d);
    // Fill it: write until the file system refuses.
    {
        use std::io::Write as _;
        let mut f = fs::File::create(mnt.join("filler")).expect("filler");
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
    }
    let out = mnt.join("out.csv").display().to_string();
    let full_runs: Vec<(&str, Vec<String>)> = vec![
        ("sweep", sweep_args(&out)),
        (
            "simulate -o",
            args(&[
                "simulate",
                "-t",
                "mesh:8x8",
                "-a",
                "first-fit",
                "--jobs",
                "50",
                "-q",
                "-o",
                &out,
            ]),
        ),
        (
            "generate --out",
            args(&["generate", "-t", "mesh:8x8", "--jobs", "500", "--out", &out]),
        ),
    ];
    for (what, a) in &full_runs {
        let run = run_limited(d, a, MEMORY_KB, Duration::from_secs(600));
        judge(Expect::Fails, &run, None).unwrap_or_else(|e| panic!("{what} on a full disk: {e}"));
        assert!(
            !run.stderr.contains("cannot read"),
            "{what} on a full disk blames reading: {}",
            run.stderr
        );
        assert!(
            !mnt.join("out.csv").exists(),
            "{what} left out.csv on a full disk"
        );
        assert_eq!(leftover_temporaries(&mnt), None, "{what}");
    }
    fs::remove_file(mnt.join("filler")).expect("free the disk");
    let run = run_limited(d, &sweep_args(&out), MEMORY_KB, Duration::from_secs(600));
    judge(Expect::Ok, &run, None).unwrap_or_else(|e| panic!("after freeing the disk: {e}"));
    let got = fs::read(mnt.join("out.csv")).expect("out.csv");
    assert!(
        got == want,
        "the CSV written after the disk-full failure differs"
    );
}
