//! The earlier findings' numbered items, each as the behaviour asked for:
//! exit 1 with one line (or success where the input is fine), nothing
//! destroyed, memory bounded by the address-space limit.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{Expect, Probe, Special, bin, data, leftover_temporaries};
use crate::support::words;

fn p(item: u32, what: &str, args: &[&str]) -> Probe {
    Probe::new("earlier findings", format!("item {item}: {what}"), args)
}

fn with_shards(mut probe: Probe) -> Probe {
    for (name, bytes) in super::recovery::shard_files() {
        probe = probe.file(&name, bytes);
    }
    probe
}

fn edit_record(mut probe: Probe, from: &str, to: &str) -> Probe {
    for (name, bytes) in &mut probe.files {
        if name == "e.shard-0-of-2.json" {
            *bytes = String::from_utf8_lossy(bytes)
                .replacen(from, to, 1)
                .into_bytes();
        }
    }
    probe
}

/// A trace of `jobs` one-node jobs, one a second, each running 10 s.
fn long_trace(jobs: u64) -> Vec<u8> {
    let mut s = String::from("; MaxNodes: 64\n");
    for j in 1..=jobs {
        let _ = writeln!(s, "{j} {j} -1 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1");
    }
    s.into_bytes()
}

/// Fails if any hidden file is left in the directory.
fn no_hidden_files(d: &Path, _: &[u8]) -> Result<(), String> {
    for e in fs::read_dir(d).map_err(|e| e.to_string())?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            return Err(format!("a hidden file is left behind: {name}"));
        }
    }
    Ok(())
}

/// Runs the emitted Slurm script with bash, `sbatch` stubbed and no
/// sweep run, and fails if an injected command ran.
fn script_runs_nothing_injected(d: &Path, script: &[u8]) -> Result<(), String> {
    let bindir = d.join("stub-bin");
    fs::create_dir_all(&bindir).map_err(|e| e.to_string())?;
    let sbatch = bindir.join("sbatch");
    fs::write(&sbatch, "#!/bin/sh\nexit 0\n").map_err(|e| e.to_string())?;
    let ok = Command::new("chmod")
        .arg("+x")
        .arg(&sbatch)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return Err("cannot make the sbatch stub executable".to_owned());
    }
    fs::write(d.join("job.sh"), script).map_err(|e| e.to_string())?;
    let path = format!(
        "{}:{}",
        bindir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let _ = Command::new("bash")
        .arg("job.sh")
        .current_dir(d)
        .env("PATH", path)
        .env("PARTALLOC", "true")
        .env("SLURM_ARRAY_TASK_ID", "0")
        .env("SLURM_ARRAY_JOB_ID", "1")
        .env("SLURM_CPUS_PER_TASK", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    for bad in ["PWNED", "PWNED2", "PWNED3"] {
        if d.join(bad).exists() {
            return Err(format!("running the emitted script created {bad}"));
        }
    }
    Ok(())
}

/// The writers of item 8, each ending with its output path.
pub(super) fn writers() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        (
            "simulate -o",
            words("simulate -t mesh:8x8 -a first-fit --jobs 10 -q -o"),
        ),
        (
            "simulate --jobs-csv",
            words("simulate -t mesh:8x8 -a first-fit --jobs 10 -q --jobs-csv"),
        ),
        (
            "show --svg",
            words("show -t mesh:8x8 -a first-fit --at 5 --svg"),
        ),
        (
            "generate --out",
            vec!["generate", "-t", "mesh:8x8", "--jobs", "10", "--out"],
        ),
        (
            "replay -o",
            words("replay t.swf -t mesh:8x8 -a first-fit -q -o"),
        ),
        (
            "sweep -o",
            vec!["sweep", "e.toml", "-q", "--no-plots", "-o"],
        ),
        ("sweep merge", vec!["sweep", "merge"]),
    ]
}

fn item_8() -> Vec<Probe> {
    let mut v = Vec::new();
    for (w, args) in writers() {
        let merge = w == "sweep merge";
        let with = |what: &str, target: &str| {
            let mut a = args.clone();
            a.push(target);
            if merge {
                a.extend(["e.shard-0-of-2.csv", "e.shard-1-of-2.csv"]);
            }
            let mut probe = p(8, &format!("{w} to {what}"), &a).file("t.swf", data("mesh8x8.swf"));
            probe = if merge {
                with_shards(probe)
            } else {
                probe.file("e.toml", data("sweep.toml"))
            };
            probe
        };
        let device = |name: &str, minor: u32| Special::Device {
            name: name.to_owned(),
            major: 1,
            minor,
        };
        // Written to directly: the device stays a device.
        v.push(
            with("a null device", "null")
                .special(device("null", 3))
                .expect(Expect::Ok),
        );
        // A full device: one line, and it stays a device.
        v.push(
            with("a full device", "full")
                .special(device("full", 7))
                .expect(Expect::Fails),
        );
        v.push(
            with("a FIFO", "fifo")
                .special(Special::Fifo("fifo".into()))
                .expect(Expect::Ok),
        );
        // A symbolic link is followed or refused, never replaced.
        v.push(
            with("a symbolic link", "link")
                .output_file("target.out", "old")
                .special(Special::Symlink {
                    name: "link".into(),
                    target: "target.out".into(),
                })
                .expect(Expect::Either),
        );
        v.push(
            with("a dangling symbolic link", "dangling")
                .special(Special::Symlink {
                    name: "dangling".into(),
                    target: "nowhere/x".into(),
                })
                .expect(Expect::Either),
        );
    }
    // An output that is one of the inputs is refused, the input kept.
    v.push(
        p(
            8,
            "replay -o its own trace",
            &words("replay t.swf -t mesh:8x8 -a first-fit -q -o t.swf"),
        )
        .file("t.swf", data("mesh8x8.swf"))
        .expect(Expect::Fails),
    );
    v.push(
        p(
            8,
            "simulate --trace -o its own trace",
            &words("simulate --trace t.swf -t mesh:8x8 -a first-fit -q -o t.swf"),
        )
        .file("t.swf", data("mesh8x8.swf"))
        .expect(Expect::Fails),
    );
    v.push(
        p(
            8,
            "sweep -o its experiment",
            &["sweep", "e.toml", "-q", "--no-plots", "-o", "e.toml"],
        )
        .file("e.toml", data("sweep.toml"))
        .expect(Expect::Fails),
    );
    v.push(
        p(
            8,
            "replay -o a hard link to its trace",
            &words("replay t.swf -t mesh:8x8 -a first-fit -q -o same.swf"),
        )
        .file("t.swf", data("mesh8x8.swf"))
        .special(Special::HardLink {
            name: "same.swf".into(),
            target: "t.swf".into(),
        })
        .expect(Expect::Fails),
    );
    v
}

/// The probes of items 1 to 10; the slow ones (3, 4 and the
/// sizes of 6) in the full corpus only.
pub(crate) fn probes(full_corpus: bool) -> Vec<Probe> {
    let merge = [
        "sweep",
        "merge",
        "m.csv",
        "e.shard-0-of-2.csv",
        "e.shard-1-of-2.csv",
    ];
    let mut v = vec![
        // 1. A shard record's points count is checked before allocating.
        edit_record(
            with_shards(p(1, "points 2^40", &merge)),
            "\"points\":4",
            "\"points\":1099511627776",
        )
        .expect(Expect::Fails)
        .absent("m.csv"),
        edit_record(
            with_shards(p(1, "points 2^29", &merge)),
            "\"points\":4",
            "\"points\":536870912",
        )
        .expect(Expect::Fails)
        .absent("m.csv"),
        edit_record(
            with_shards(p(1, "points 2^64-1", &merge)),
            "\"points\":4",
            "\"points\":18446744073709551615",
        )
        .expect(Expect::Fails)
        .absent("m.csv"),
    ];
    // 2. The node cap applies to the sum of a file's hostlists, before
    // expansion: each line names 2^22 nodes in 64 ranges of 65,536 (the
    // most one range may hold, as in Slurm).
    let ranges = (0..64u32)
        .map(|k| format!("{}-{}", k << 16, ((k + 1) << 16) - 1))
        .collect::<Vec<_>>()
        .join(",");
    let blocks: String = (0..16)
        .map(|i| format!("BlockName=b{i} Nodes=p{i}_[{ranges}]\n"))
        .collect();
    let switches: String = (0..16)
        .map(|i| format!("SwitchName=s{i} Nodes=p{i}_[{ranges}]\n"))
        .collect();
    v.push(
        p(
            2,
            "16 blocks of 2^22 nodes",
            &words("simulate -t blocks:b.conf -a block --jobs 5 -q"),
        )
        .file("b.conf", blocks)
        .expect(Expect::Fails)
        .says("more than the 524288 (2^19) a Slurm machine may have")
        .timeout(10),
    );
    v.push(
        p(
            2,
            "16 switches of 2^22 nodes",
            &words("simulate -t tree:t.conf -a tree --jobs 5 -q"),
        )
        .file("t.conf", switches)
        .expect(Expect::Fails)
        .says("more than the 524288 (2^19) a Slurm machine may have")
        .timeout(10),
    );
    v.push(
        p(
            2,
            "one block of 2^22+1 nodes",
            &["strategies", "--topology", "blocks:b.conf"],
        )
        .file("b.conf", "BlockName=b Nodes=n[0-4194304]\n")
        .expect(Expect::Fails)
        .timeout(10),
    );
    // 5. Whole-file reads are bounded: /dev/zero behind every file input.
    let zero = |name: &str| Special::Symlink {
        name: name.to_owned(),
        target: "/dev/zero".to_owned(),
    };
    for (what, name, args) in [
        (
            "pod file",
            "z.toml",
            vec!["simulate", "-t", "z.toml", "-a", "pod-first-fit", "-q"],
        ),
        (
            "topology.conf",
            "z.conf",
            vec!["simulate", "-t", "blocks:z.conf", "-a", "block", "-q"],
        ),
        (
            "topology.yaml",
            "z.yaml",
            vec!["simulate", "-t", "tree:z.yaml", "-a", "tree", "-q"],
        ),
        (
            "sweep file",
            "z.toml",
            vec!["sweep", "z.toml", "-q", "--no-plots", "-o", "o.csv"],
        ),
        (
            "swf trace",
            "z.swf",
            vec!["replay", "z.swf", "-t", "mesh:8x8", "-a", "first-fit", "-q"],
        ),
        (
            "swf trace (simulate)",
            "z.swf",
            words("simulate --trace z.swf -t mesh:8x8 -a first-fit -q"),
        ),
        (
            "sacct dump",
            "z.txt",
            words("replay z.txt -t mesh:8x8 -a first-fit --trace-format sacct -q"),
        ),
    ] {
        v.push(
            p(5, &format!("{what} on /dev/zero"), &args)
                .special(zero(name))
                .expect(Expect::Fails)
                .timeout(20),
        );
    }
    v.push(
        with_shards(p(
            5,
            "shard record on /dev/zero",
            &words("sweep merge m.csv z.shard-0-of-2.csv z.shard-1-of-2.csv"),
        ))
        .special(zero("z.shard-0-of-2.json"))
        .special(zero("z.shard-1-of-2.json"))
        .special(zero("z.shard-0-of-2.csv"))
        .special(zero("z.shard-1-of-2.csv"))
        .expect(Expect::Fails)
        .timeout(20),
    );
    // 6. Thread counts are checked before threads are made.
    for args in [
        words("simulate -t mesh:8x8 -a first-fit --jobs 10 -q --threads 100000"),
        words("replay t.swf -t mesh:8x8 -a first-fit -q --threads 100000"),
        words("sweep e.toml -o o.csv -q --no-plots --threads 100000"),
    ] {
        v.push(
            p(6, &format!("{} --threads 100000", args[0]), &args)
                .file("t.swf", data("mesh8x8.swf"))
                .file("e.toml", data("sweep.toml"))
                .expect(Expect::Fails)
                .timeout(5)
                .absent("o.csv"),
        );
    }
    // 7. The emitted Slurm script quotes what it interpolates and refuses
    // control characters.
    v.push(
        p(
            7,
            "a newline in --out",
            &[
                "sweep",
                "e.toml",
                "--emit-slurm",
                "--out",
                "{dir}/x\ntouch PWNED\n.csv",
            ],
        )
        .file("e.toml", data("sweep.toml"))
        .expect(Expect::Fails)
        .after(script_runs_nothing_injected),
    );
    v.push(
        p(
            7,
            "a newline in the experiment path",
            &["sweep", "e\ntouch PWNED\n.toml", "--emit-slurm"],
        )
        .file("e\ntouch PWNED\n.toml", data("sweep.toml"))
        .expect(Expect::Fails)
        .after(script_runs_nothing_injected),
    );
    for out in [
        "{dir}/a b'$(touch PWNED2)'.csv",
        "{dir}/$(touch PWNED3).csv",
        "{dir}/`touch PWNED`.csv",
        "{dir}/\"; touch PWNED; \".csv",
    ] {
        v.push(
            p(
                7,
                &format!("--out {out:?} is quoted"),
                &["sweep", "e.toml", "--emit-slurm", "--out", out],
            )
            .file("e.toml", data("sweep.toml"))
            .expect(Expect::Either)
            .after(script_runs_nothing_injected),
        );
    }
    for (flag, value) in [
        ("--partition", "p\ntouch PWNED"),
        ("--time", "1:00\ntouch PWNED"),
        ("--sbatch-arg", "--x=1\ntouch PWNED"),
        ("--sbatch-arg", "--comment=$(touch PWNED)"),
    ] {
        v.push(
            p(
                7,
                &format!("{flag} {value:?}"),
                &["sweep", "e.toml", "--emit-slurm", flag, value],
            )
            .file("e.toml", data("sweep.toml"))
            .expect(Expect::Either)
            .after(script_runs_nothing_injected),
        );
    }
    // 8. Devices, FIFOs, symbolic links and inputs as outputs.
    v.extend(item_8());
    // 9. `sweep merge` never writes over one of its inputs.
    for (what, out) in [
        ("a shard's CSV", "e.shard-0-of-2.csv"),
        ("a shard's record", "e.shard-1-of-2.json"),
        ("a hard link to a shard", "same.csv"),
    ] {
        v.push(
            with_shards(p(
                9,
                &format!("merge into {what}"),
                &[
                    "sweep",
                    "merge",
                    out,
                    "e.shard-0-of-2.csv",
                    "e.shard-1-of-2.csv",
                ],
            ))
            .special(Special::HardLink {
                name: "same.csv".into(),
                target: "e.shard-0-of-2.csv".into(),
            })
            .expect(Expect::Fails),
        );
    }
    // 10. Output paths are checked before work; resumed values checked.
    let base = String::from_utf8(data("sweep.toml")).unwrap_or_default();
    v.push(
        p(
            10,
            "output = \"\"",
            &["sweep", "e.toml", "-q", "--no-plots"],
        )
        .file(
            "e.toml",
            base.replace("output = \"small.csv\"", "output = \"\""),
        )
        .expect(Expect::Fails)
        .after(no_hidden_files),
    );
    v.push(
        p(
            10,
            "--jobs-csv X -o X",
            &words("simulate -t mesh:8x8 -a first-fit --jobs 10 -q --jobs-csv x.csv -o x.csv"),
        )
        .expect(Expect::Fails)
        .absent("x.csv"),
    );
    let partial = super::recovery::partial_file();
    for (what, from, to) in [
        ("NaN", 6, "NaN"),
        ("text", 6, "x"),
        ("a negative count", 5, "-2"),
        ("infinity", 7, "inf"),
    ] {
        let edited = edit_field(&partial, from, to);
        v.push(
            p(
                10,
                &format!("a resumed .partial holding {what}"),
                &["sweep", "e.toml", "-q", "--no-plots", "-o", "small.csv"],
            )
            .file("e.toml", data("sweep.toml"))
            .file("small.csv.partial", edited)
            .expect(Expect::Fails)
            .absent("small.csv"),
        );
    }
    if full_corpus {
        // 3. replay streams: a million-job trace in 400 MB of address space.
        v.push(
            p(
                3,
                "replay of 1,000,000 jobs under 400 MB",
                &words("replay big.swf -t mesh:8x8 -a first-fit,paging -q --threads 1"),
            )
            .file("big.swf", long_trace(1_000_000))
            .expect(Expect::Ok)
            .memory_kb(400_000)
            .timeout(1800),
        );
        // 4. A saturated run stops at a documented cap or stays bounded.
        v.push(
            p(
                4,
                "saturated simulate",
                &words("simulate -t mesh:16x16 -a first-fit --load 1e6 --allow-saturation --jobs 1000000 -q"),
            )
            .expect(Expect::Either)
            .memory_kb(1 << 21)
            .timeout(1800),
        );
        // 6. Accepted sizes run in bounded time.
        v.push(
            p(
                6,
                "a pod of 2^22 chips",
                &words("simulate -t pod:tpu-v4:256x128x128 -a pod-first-fit --jobs 20 -q"),
            )
            .expect(Expect::Either)
            .timeout(30),
        );
        let mut chain = String::from("SwitchName=s0 Nodes=n0\n");
        for i in 1..100_000 {
            let _ = writeln!(chain, "SwitchName=s{i} Switches=s{}", i - 1);
        }
        v.push(
            p(
                6,
                "a chain of 100,000 switches",
                &["strategies", "--topology", "tree:c.conf"],
            )
            .file("c.conf", chain)
            .expect(Expect::Either)
            .timeout(30),
        );
    }
    v
}

/// Field `col` (0-based) of the first data row of a CSV set to `to`.
fn edit_field(csv: &[u8], col: usize, to: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(csv);
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    if let Some(row) = lines.get_mut(1) {
        let mut f: Vec<&str> = row.split(',').collect();
        if let Some(x) = f.get_mut(col) {
            *x = to;
        }
        *row = f.join(",");
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out.into_bytes()
}

/// Item 10: a write stopped by SIGTERM removes its temporary file:
/// `generate` writing a large trace is stopped while its temporary file
/// exists.
pub(crate) fn sigterm_cleans_up() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let d = dir.path();
    let mut child = Command::new(bin())
        .args([
            "generate", "-t", "mesh:8x8", "--jobs", "5000000", "--out", "big.swf",
        ])
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    // Wait until the temporary file exists, then stop the writer.
    let start = std::time::Instant::now();
    while leftover_temporaries(d).is_none() && start.elapsed() < Duration::from_secs(20) {
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            return Err("generate finished before it could be stopped".to_owned());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    if leftover_temporaries(d).is_none() {
        return Err("generate wrote no temporary file within 20 s".to_owned());
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    match leftover_temporaries(d) {
        Some(t) => Err(format!(
            "item 10: a temporary file is left after SIGTERM: {t}"
        )),
        None => Ok(()),
    }
}

#[test]
fn a_write_stopped_by_sigterm_leaves_no_temporary_file() {
    if let Err(e) = sigterm_cleans_up() {
        panic!("{e}");
    }
}
