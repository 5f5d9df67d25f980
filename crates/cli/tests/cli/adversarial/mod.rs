//! The adversarial corpus: malformed and extreme inputs over every input
//! surface of the `partalloc` binary, each run as a process
//! under an address-space limit.
//!
//! Every probe asserts the exit code (0 or 1, or 2 where clap may refuse
//! the command line), that a failure is one line starting `error: ` and
//! at most [`MAX_MESSAGE`] bytes (clap's usage errors excepted), that
//! nothing on standard error tells of a panic or a failed allocation, that
//! the process neither dies by a signal nor outlives its time limit, that
//! no temporary file is left behind, and that the files it must not touch
//! (its inputs, devices, FIFOs, symbolic links) keep their kind and bytes.
//!
//! `cargo test` runs the fast part (every hand-written probe and a few
//! mutations of each file kind); `PARTALLOC_ADVERSARIAL=full` (set by
//! `cargo xtask ci --adversarial`) runs the whole corpus. Cases that need
//! root (`mknod`, a tmpfs mount) fail with a message saying why when they
//! cannot run, unless `PARTALLOC_ADVERSARIAL_SKIP` lists them (`mknod`,
//! `tmpfs`, comma-separated). See docs/guide.md, "Adversarial corpus".
#![expect(
    clippy::expect_used,
    clippy::panic,
    reason = "a test harness: a setup that cannot be made stops the test"
)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

mod corpus;
mod generated;
mod issue;
mod recovery;
mod surfaces;

/// Address-space limit of every probe, in KiB (`ulimit -v`): 1 GiB, ten
/// times what a debug build needs for the small inputs of the corpus.
pub(crate) const MEMORY_KB: u64 = 1 << 20;

/// Longest accepted error message, in bytes.
pub(crate) const MAX_MESSAGE: usize = 2048;

/// Default time limit of a probe.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

/// Which exit codes a probe accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// Exit 0.
    Ok,
    /// Exit 1 with one line.
    Fails,
    /// Exit 0, or 1 with one line.
    Either,
    /// Exit 0, 1 with one line, or 2 (clap refused the command line).
    Any,
}

/// What to prepare in a probe's directory besides plain files.
#[derive(Debug, Clone)]
pub(crate) enum Special {
    /// A symbolic link `name` pointing at `target`.
    Symlink { name: String, target: String },
    /// A FIFO `name`, drained by a reader while the probe runs.
    Fifo(String),
    /// A character device `name` (major, minor), made with mknod.
    Device {
        name: String,
        major: u32,
        minor: u32,
    },
    /// A directory.
    Dir(String),
    /// A hard link `name` to the file `target`.
    HardLink { name: String, target: String },
    /// A write-protected file `name` (mode 444) holding `bytes`.
    ReadOnly { name: String, bytes: Vec<u8> },
}

/// One run of the binary.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    /// The input surface it exercises (the docs' table counts these).
    pub(crate) surface: &'static str,
    /// A unique name, shown when it fails.
    pub(crate) name: String,
    /// Command-line arguments; `{dir}` is replaced by the probe's directory.
    pub(crate) args: Vec<String>,
    /// Files written into the directory first.
    pub(crate) files: Vec<(String, Vec<u8>)>,
    /// Links, FIFOs, devices and directories made first.
    pub(crate) specials: Vec<Special>,
    /// Accepted exit codes.
    pub(crate) expect: Expect,
    /// Paths (relative to the directory) whose kind and bytes must not
    /// change; every input file is kept by default.
    pub(crate) keep: Vec<String>,
    /// Paths that must not exist afterwards.
    pub(crate) absent: Vec<String>,
    /// Time limit.
    pub(crate) timeout: Duration,
    /// Address-space limit, KiB.
    pub(crate) memory_kb: u64,
    /// Text standard error must contain when the probe fails (exit 1).
    pub(crate) says: Option<String>,
    /// A last check, given the directory and standard output.
    pub(crate) after: Option<After>,
    /// Most characters of a failure's message, if stricter than
    /// [`MAX_MESSAGE`] bytes.
    pub(crate) max_chars: Option<usize>,
}

/// A probe's last check: the directory and standard output in, why it
/// failed out.
pub(crate) type After = fn(&Path, &[u8]) -> Result<(), String>;

impl Probe {
    /// A probe of `surface` running `args` with no files.
    pub(crate) fn new(surface: &'static str, name: impl Into<String>, args: &[&str]) -> Self {
        Self {
            surface,
            name: name.into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            files: Vec::new(),
            specials: Vec::new(),
            expect: Expect::Either,
            keep: Vec::new(),
            absent: Vec::new(),
            timeout: TIMEOUT,
            memory_kb: MEMORY_KB,
            says: None,
            after: None,
            max_chars: Some(MESSAGE_CHARS),
        }
    }

    /// With a file (kept unchanged).
    pub(crate) fn file(mut self, name: &str, bytes: impl Into<Vec<u8>>) -> Self {
        self.keep.push(name.to_owned());
        self.files.push((name.to_owned(), bytes.into()));
        self
    }

    /// With a file the run may change or replace (an output).
    pub(crate) fn output_file(mut self, name: &str, bytes: impl Into<Vec<u8>>) -> Self {
        self.files.push((name.to_owned(), bytes.into()));
        self
    }

    /// With a special file (kept unchanged).
    pub(crate) fn special(mut self, s: Special) -> Self {
        let name = match &s {
            Special::Symlink { name, .. }
            | Special::Fifo(name)
            | Special::Device { name, .. }
            | Special::Dir(name)
            | Special::HardLink { name, .. }
            | Special::ReadOnly { name, .. } => name.clone(),
        };
        self.keep.push(name);
        self.specials.push(s);
        self
    }

    pub(crate) fn expect(mut self, e: Expect) -> Self {
        self.expect = e;
        self
    }

    pub(crate) fn says(mut self, text: &str) -> Self {
        self.says = Some(text.to_owned());
        self
    }

    pub(crate) fn absent(mut self, name: &str) -> Self {
        self.absent.push(name.to_owned());
        self
    }

    pub(crate) fn timeout(mut self, secs: u64) -> Self {
        self.timeout = Duration::from_secs(secs);
        self
    }

    pub(crate) fn after(mut self, f: After) -> Self {
        self.after = Some(f);
        self
    }

    pub(crate) fn memory_kb(mut self, kb: u64) -> Self {
        self.memory_kb = kb;
        self
    }

    /// A failure's message must be one line of at most `n` characters.
    pub(crate) fn max_chars(mut self, n: usize) -> Self {
        self.max_chars = Some(n);
        self
    }
}

/// Longest message any probe accepts, in characters: an error is one line
/// a person reads (a probe may ask for less).
pub(crate) const MESSAGE_CHARS: usize = 200;

/// Whether the whole corpus runs (`PARTALLOC_ADVERSARIAL=full`).
pub(crate) fn full() -> bool {
    std::env::var("PARTALLOC_ADVERSARIAL").is_ok_and(|v| v == "full")
}

/// Whether the case `what` (`mknod`, `tmpfs`) was opted out of.
pub(crate) fn skipped(what: &str) -> bool {
    std::env::var("PARTALLOC_ADVERSARIAL_SKIP")
        .is_ok_and(|v| v.split(',').any(|s| s.trim() == what))
}

/// The seed files of the mutation probes, in `tests/cli/adversarial/data`.
pub(crate) fn data(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/adversarial/data")
        .join(name);
    fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_partalloc")
}

/// What a file looked like: its kind, and its bytes for a regular file.
#[derive(Debug, PartialEq, Eq)]
enum Snapshot {
    Missing,
    File(u64, u64),
    Dir,
    Symlink(PathBuf),
    Fifo,
    CharDevice(u64),
    Other,
}

fn snapshot(path: &Path) -> Snapshot {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return Snapshot::Missing;
    };
    let t = meta.file_type();
    if t.is_symlink() {
        Snapshot::Symlink(fs::read_link(path).unwrap_or_default())
    } else if t.is_dir() {
        Snapshot::Dir
    } else if t.is_fifo() {
        Snapshot::Fifo
    } else if t.is_char_device() {
        use std::os::unix::fs::MetadataExt as _;
        Snapshot::CharDevice(meta.rdev())
    } else if t.is_file() {
        let bytes = fs::read(path).unwrap_or_default();
        Snapshot::File(bytes.len() as u64, fnv(&bytes))
    } else {
        Snapshot::Other
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The result of one run.
pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: String,
    pub(crate) timed_out: bool,
    pub(crate) elapsed: Duration,
}

/// Runs the binary in `dir` with `args` under `memory_kb` and `timeout`,
/// standard output and error to files (so a flood cannot block it).
pub(crate) fn run_limited(dir: &Path, args: &[String], memory_kb: u64, timeout: Duration) -> Run {
    let out_dir = tempfile::tempdir().expect("a temporary directory for the output");
    let (out, err) = (out_dir.path().join("out"), out_dir.path().join("err"));
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {memory_kb}; exec \"$0\" \"$@\""))
        .arg(bin())
        .args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out).expect("stdout file"))
        .stderr(fs::File::create(&err).expect("stderr file"))
        .spawn()
        .expect("sh runs");
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > timeout {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("wait after kill");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = start.elapsed();
    let stdout = fs::read(&out).unwrap_or_default();
    let mut stderr = String::new();
    if let Ok(mut f) = fs::File::open(&err) {
        let mut buf = Vec::new();
        let _ = f.by_ref().take(1 << 20).read_to_end(&mut buf);
        stderr = String::from_utf8_lossy(&buf).into_owned();
    }
    Run {
        code: if timed_out { None } else { status.code() },
        stdout,
        stderr,
        timed_out,
        elapsed,
    }
}

/// Why the run broke a rule of every probe, if it did.
pub(crate) fn judge(expect: Expect, run: &Run, says: Option<&str>) -> Result<(), String> {
    let e = &run.stderr;
    let short = |s: &str| s.chars().take(300).collect::<String>();
    if run.timed_out {
        return Err(format!("still running after {:?}", run.elapsed));
    }
    for bad in [
        "panicked",
        "memory allocation of",
        "RUST_BACKTRACE",
        "stack overflow",
        "Aborted",
    ] {
        if e.contains(bad) {
            return Err(format!("stderr tells of {bad:?}: {}", short(e)));
        }
    }
    let Some(code) = run.code else {
        return Err(format!("killed by a signal; stderr: {}", short(e)));
    };
    let allowed: &[i32] = match expect {
        Expect::Ok => &[0],
        Expect::Fails => &[1],
        Expect::Either => &[0, 1],
        Expect::Any => &[0, 1, 2],
    };
    if !allowed.contains(&code) {
        return Err(format!(
            "exit {code}, expected one of {allowed:?}; stderr: {}",
            short(e)
        ));
    }
    // A refusal, by the tool (1) or by its argument parser (2).
    if code != 0 {
        if !e.starts_with("error: ") || e.lines().count() != 1 {
            return Err(format!(
                "not one line starting `error: ` ({} lines): {}",
                e.lines().count(),
                short(e)
            ));
        }
        if e.len() > MAX_MESSAGE {
            return Err(format!(
                "a message of {} bytes (at most {MAX_MESSAGE}): {}",
                e.len(),
                short(e)
            ));
        }
        if let Some(c) = e.trim_end_matches('\n').chars().find(|c| c.is_control()) {
            return Err(format!(
                "the message holds the control character {c:?} (echoed input must be escaped): {}",
                short(e)
            ));
        }
        if let Some(s) = says
            && !e.contains(s)
        {
            return Err(format!("the message does not say {s:?}: {}", short(e)));
        }
        if !run.stdout.is_empty() {
            return Err("output on standard output before failing".to_owned());
        }
    }
    Ok(())
}

/// A reader that keeps a FIFO open (non-blocking) and drains it until
/// `stop`, so that a writer opening it does not wait for ever.
fn drain_fifo(path: PathBuf, stop: &AtomicBool) {
    const O_NONBLOCK: i32 = 0o4000;
    let Ok(mut f) = fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(&path)
    else {
        return;
    };
    let mut buf = [0u8; 1 << 16];
    while !stop.load(Ordering::Relaxed) {
        match f.read(&mut buf) {
            Ok(n) if n > 0 => {}
            _ => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// Runs one probe in a fresh directory; `Err` says what went wrong.
pub(crate) fn run_probe(p: &Probe) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let d = dir.path();
    for (name, bytes) in &p.files {
        if let Some(parent) = d.join(name).parent() {
            fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        fs::write(d.join(name), bytes).map_err(|e| format!("writing {name}: {e}"))?;
    }
    let mut fifos = Vec::new();
    for s in &p.specials {
        match s {
            Special::Symlink { name, target } => {
                let target = target.replace("{dir}", &d.display().to_string());
                std::os::unix::fs::symlink(target, d.join(name)).map_err(|e| e.to_string())?;
            }
            Special::Dir(name) => fs::create_dir_all(d.join(name)).map_err(|e| e.to_string())?,
            Special::HardLink { name, target } => {
                fs::hard_link(d.join(target), d.join(name)).map_err(|e| e.to_string())?;
            }
            Special::ReadOnly { name, bytes } => {
                use std::os::unix::fs::PermissionsExt as _;
                fs::write(d.join(name), bytes).map_err(|e| e.to_string())?;
                fs::set_permissions(d.join(name), fs::Permissions::from_mode(0o444))
                    .map_err(|e| e.to_string())?;
            }
            Special::Fifo(name) => {
                let ok = Command::new("mkfifo")
                    .arg(d.join(name))
                    .status()
                    .is_ok_and(|s| s.success());
                if !ok {
                    return Err(format!("cannot make the FIFO {name} (mkfifo failed)"));
                }
                fifos.push(d.join(name));
            }
            Special::Device { name, major, minor } => {
                let ok = Command::new("mknod")
                    .arg(d.join(name))
                    .arg("c")
                    .arg(major.to_string())
                    .arg(minor.to_string())
                    .status()
                    .is_ok_and(|s| s.success());
                if !ok {
                    if skipped("mknod") {
                        return Ok(());
                    }
                    return Err(format!(
                        "cannot make the device {name} with mknod (needs root); set PARTALLOC_ADVERSARIAL_SKIP=mknod to opt out"
                    ));
                }
            }
        }
    }
    let before: Vec<Snapshot> = p.keep.iter().map(|k| snapshot(&d.join(k))).collect();
    let args: Vec<String> = p
        .args
        .iter()
        .map(|a| a.replace("{dir}", &d.display().to_string()))
        .collect();
    let stop = AtomicBool::new(false);
    let run = std::thread::scope(|s| {
        for f in &fifos {
            let (f, stop) = (f.clone(), &stop);
            s.spawn(move || drain_fifo(f, stop));
        }
        let r = run_limited(d, &args, p.memory_kb, p.timeout);
        stop.store(true, Ordering::Relaxed);
        r
    });
    judge(p.expect, &run, p.says.as_deref())?;
    if let Some(max) = p.max_chars
        && run.code == Some(1)
        && run.stderr.trim_end().chars().count() > max
    {
        return Err(format!(
            "a message of {} characters (at most {max}): {}",
            run.stderr.trim_end().chars().count(),
            run.stderr.chars().take(300).collect::<String>()
        ));
    }
    for (k, b) in p.keep.iter().zip(&before) {
        let after = snapshot(&d.join(k));
        if after != *b {
            return Err(format!("{k} changed: {b:?} became {after:?}"));
        }
    }
    for a in &p.absent {
        if fs::symlink_metadata(d.join(a)).is_ok() {
            return Err(format!("{a} exists afterwards"));
        }
    }
    if let Some(t) = leftover_temporaries(d) {
        return Err(format!("a temporary file is left behind: {t}"));
    }
    match p.after {
        Some(f) => f(d, &run.stdout),
        None => Ok(()),
    }
}

/// A hidden temporary file left in `dir` or its subdirectories.
pub(crate) fn leftover_temporaries(dir: &Path) -> Option<String> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).ok()?.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let t = e.file_type().ok()?;
            if t.is_dir() {
                stack.push(e.path());
            } else if name.starts_with('.') && name.ends_with(".tmp") {
                return Some(name);
            }
        }
    }
    None
}

/// Runs `probes` on all cores; returns the failures, and prints the count
/// per surface.
pub(crate) fn run_all(what: &str, probes: &[Probe]) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(p) = probes.get(i) else { break };
                    if let Err(why) = run_probe(p) {
                        failures
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push(format!("[{}] {}: {why}", p.surface, p.name));
                    }
                }
            });
        }
    });
    let mut per: BTreeMap<&str, usize> = BTreeMap::new();
    for p in probes {
        *per.entry(p.surface).or_default() += 1;
    }
    let mut table = String::new();
    for (s, n) in &per {
        let _ = write!(table, "{s}: {n}; ");
    }
    let mut failures = failures
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    failures.sort();
    eprintln!(
        "{what}: {} probes in {:.1} s ({table}), {} failed",
        probes.len(),
        start.elapsed().as_secs_f64(),
        failures.len()
    );
    failures
}

/// Fails the test listing every failure.
pub(crate) fn assert_none(what: &str, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{what}: {} probes failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn adversarial_corpus() {
    let probes = corpus::probes(full());
    assert!(
        probes.len() >= if full() { 1000 } else { 250 },
        "only {} probes",
        probes.len()
    );
    let failures = run_all("adversarial corpus", &probes);
    assert_none("adversarial corpus", &failures);
}

#[test]
fn earlier_findings_stay_fixed() {
    let probes = issue::probes(full());
    let failures = run_all("earlier findings", &probes);
    assert_none("earlier findings", &failures);
}

#[test]
fn newer_surfaces_hold_the_same_guards() {
    let probes = surfaces::probes();
    let failures = run_all("newer surfaces", &probes);
    assert_none("newer surfaces", &failures);
}

#[test]
fn every_registered_input_form_holds_the_same_guards() {
    let probes = generated::probes();
    let failures = run_all("registry of input forms", &probes);
    assert_none("registry of input forms", &failures);
}

#[test]
fn sweep_killed_with_sigkill_resumes_byte_exact() {
    recovery::kill_and_resume();
}

#[test]
fn disk_full_fails_in_one_line_and_resumes_byte_exact() {
    recovery::disk_full();
}
