//! Sweeps across a cluster: shards of the grid, their merge, and a Slurm
//! job-array script that runs them.
//!
//! Shard `I` of `N` (0-based, as Slurm numbers array tasks) holds the
//! points whose position in the grid order is `I` modulo `N`. Every point
//! of a sweep runs the same number of jobs and replications, so dealing
//! them out round-robin gives shards of equal size (within one point), and
//! since the load varies fastest in the grid order each shard gets light
//! and heavy loads alike. A shard is an ordinary resumable sweep over its
//! points, written to `<out stem>.shard-I-of-N.csv`; when it finishes, a
//! record `<out stem>.shard-I-of-N.json` names the experiment (a hash of
//! every point of the grid, settings included), the shard, its point ids
//! and a hash of the CSV. `merge` checks the records (one shard of each
//! index, one experiment, unchanged files) and writes the rows in grid
//! order, which are the bytes the unsharded sweep writes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{CliError, ShardError};
use crate::limits::{FileKind, read_bytes, read_text};
use crate::output::{emit, write_atomic};

/// Which shard to run: `index` of `count`, 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShardSpec {
    /// 0-based shard index, below `count`.
    pub(crate) index: usize,
    /// Number of shards, at least 1.
    pub(crate) count: usize,
}

impl FromStr for ShardSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            format!(
                "{:?} is not I/N with 0 <= I < N (e.g. 0/4 … 3/4)",
                partalloc::topology::echo(s)
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index >= count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }
}

/// The cluster options of `partalloc sweep`.
#[derive(Debug, clap::Args)]
pub(crate) struct ClusterArgs {
    /// Run only shard I of N (0-based): the points whose position in the
    /// grid is I modulo N, written to `<out stem>.shard-I-of-N.csv`
    /// (combine the shards with `partalloc sweep merge`).
    #[arg(long, value_name = "I/N", conflicts_with = "emit_slurm")]
    pub(crate) shard: Option<ShardSpec>,
    /// Print a Slurm batch script that runs the sweep as a job array of
    /// shards, then merges them in a dependent job; submit it with sbatch.
    #[arg(long, conflicts_with_all = ["limit", "threads", "quiet", "no_plots"])]
    pub(crate) emit_slurm: bool,
    /// Shards (array tasks) of the emitted script (default: one per point).
    #[arg(long, value_name = "N", requires = "emit_slurm")]
    pub(crate) shards: Option<usize>,
    /// Slurm partition of the emitted jobs.
    #[arg(long, requires = "emit_slurm")]
    pub(crate) partition: Option<String>,
    /// Time limit of each emitted job (Slurm's format, e.g. 30:00).
    #[arg(long, default_value = "01:00:00", requires = "emit_slurm")]
    pub(crate) time: String,
    /// CPUs of each array task (also its worker threads).
    #[arg(long, default_value_t = 1, requires = "emit_slurm")]
    pub(crate) cpus_per_task: usize,
    /// One more sbatch option for every emitted job, e.g.
    /// `--sbatch-arg=--account=proj` (repeatable).
    #[arg(
        long = "sbatch-arg",
        value_name = "OPTION",
        allow_hyphen_values = true,
        requires = "emit_slurm"
    )]
    pub(crate) sbatch_args: Vec<String>,
}

/// Subcommands of `partalloc sweep`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum SweepCommand {
    /// Combine finished shards into the file the unsharded sweep writes.
    Merge(MergeArgs),
}

/// Options of `partalloc sweep merge`.
#[derive(Debug, clap::Args)]
pub(crate) struct MergeArgs {
    /// The CSV to write.
    out: PathBuf,
    /// Every shard's CSV (`<out stem>.shard-I-of-N.csv`), in any order.
    #[arg(required = true)]
    shards: Vec<PathBuf>,
}

/// What a finished shard records beside its CSV for `merge`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShardRecord {
    /// Format tag, [`RECORD_FORMAT`].
    format: String,
    /// Hash of every point of the grid, settings included.
    experiment: String,
    /// The shard's index.
    shard: usize,
    /// The number of shards.
    shards: usize,
    /// Points of the whole grid.
    points: usize,
    /// Grid positions of the shard's points, in its CSV's row order.
    ids: Vec<usize>,
    /// Hash of the shard's CSV.
    csv: String,
}

/// Missing shards named in the error; the rest are counted.
const MAX_NAMED_MISSING: usize = 5;

const RECORD_FORMAT: &str = "partalloc-sweep-shard/1";

/// 64-bit FNV-1a as 16 hex digits: stable across runs and platforms.
fn fnv1a(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The experiment's identity: a hash of every point of its grid.
pub(crate) fn experiment_hash<P: Serialize>(points: &[P]) -> Result<String, CliError> {
    let json = serde_json::to_vec(points)
        .map_err(|e| CliError::input(format!("cannot fingerprint the experiment: {e}")))?;
    Ok(fnv1a(&json))
}

/// Grid positions of shard `spec`'s points among `points`.
fn ids(spec: ShardSpec, points: usize) -> Vec<usize> {
    (spec.index..points).step_by(spec.count).collect()
}

/// Shard `spec` of `points`: its points and their grid positions.
pub(crate) fn select<P>(
    points: Vec<P>,
    spec: ShardSpec,
) -> Result<(Vec<P>, Vec<usize>), ShardError> {
    let total = points.len();
    if spec.count > total {
        return Err(ShardError::TooManyShards {
            index: spec.index,
            count: spec.count,
            points: total,
        });
    }
    let mine: Vec<P> = points
        .into_iter()
        .skip(spec.index)
        .step_by(spec.count)
        .collect();
    Ok((mine, ids(spec, total)))
}

/// `<out stem>.shard-I-of-N.csv`, beside `out`.
pub(crate) fn shard_path(out: &Path, index: usize, count: usize) -> PathBuf {
    let mut name = out.with_extension("").into_os_string();
    name.push(format!(".shard-{index}-of-{count}.csv"));
    PathBuf::from(name)
}

fn record_path(csv: &Path) -> PathBuf {
    csv.with_extension("json")
}

/// Writes the record of a finished shard beside its CSV.
pub(crate) fn write_record(
    csv: &Path,
    spec: ShardSpec,
    experiment: String,
    points: usize,
    ids: Vec<usize>,
) -> Result<PathBuf, CliError> {
    let bytes = read_bytes(csv, FileKind::Shard)?;
    let record = ShardRecord {
        format: RECORD_FORMAT.to_owned(),
        experiment,
        shard: spec.index,
        shards: spec.count,
        points,
        ids,
        csv: fnv1a(&bytes),
    };
    let path = record_path(csv);
    let mut text = serde_json::to_string(&record)
        .map_err(|e| CliError::input(format!("cannot write the shard record: {e}")))?;
    text.push('\n');
    write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

/// A shard as read by `merge`.
struct Shard {
    file: PathBuf,
    record: ShardRecord,
    header: csv::StringRecord,
    rows: Vec<csv::StringRecord>,
}

fn read_shard(file: &Path) -> Result<Shard, CliError> {
    let record_file = record_path(file);
    let bytes = read_bytes(file, FileKind::Shard)?;
    if !record_file.exists() {
        return Err(ShardError::NoRecord {
            file: file.to_path_buf(),
            record: record_file,
        }
        .into());
    }
    let text = read_text(&record_file, FileKind::Shard)?;
    let bad = |reason: String| ShardError::BadRecord {
        file: record_file.clone(),
        reason,
    };
    let record: ShardRecord =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a shard record: {e}")))?;
    if record.format != RECORD_FORMAT {
        return Err(bad(format!(
            "format {:?}, this version reads {RECORD_FORMAT:?}",
            partalloc::topology::echo(&record.format)
        ))
        .into());
    }
    // Compared without building the expected list: `points` and `shards`
    // come from the file, and only the ids it lists are in memory.
    if record.shards == 0
        || record.shard >= record.shards
        || record.ids.len()
            != record
                .points
                .saturating_sub(record.shard)
                .div_ceil(record.shards)
        || !record
            .ids
            .iter()
            .copied()
            .eq((record.shard..record.points).step_by(record.shards))
    {
        return Err(bad("its shard, shard count and point ids disagree".to_owned()).into());
    }
    if fnv1a(&bytes) != record.csv {
        return Err(ShardError::Stale {
            file: file.to_path_buf(),
            record: record_file,
        }
        .into());
    }
    let bad_csv = |reason: String| ShardError::BadCsv {
        file: file.to_path_buf(),
        reason,
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(bytes.as_slice());
    let header = reader
        .headers()
        .map_err(|e| bad_csv(e.to_string()))?
        .clone();
    let rows: Vec<csv::StringRecord> = reader
        .records()
        .collect::<Result<_, _>>()
        .map_err(|e| bad_csv(e.to_string()))?;
    if rows.len() != record.ids.len() {
        return Err(bad_csv(format!(
            "{} rows, its record lists {} points",
            rows.len(),
            record.ids.len()
        ))
        .into());
    }
    Ok(Shard {
        file: file.to_path_buf(),
        record,
        header,
        rows,
    })
}

/// Runs `partalloc sweep merge`.
pub(crate) fn merge(args: &MergeArgs) -> Result<(), CliError> {
    let records: Vec<PathBuf> = args.shards.iter().map(|f| record_path(f)).collect();
    let inputs: Vec<&Path> = args
        .shards
        .iter()
        .chain(&records)
        .map(PathBuf::as_path)
        .collect();
    crate::output::check_outputs(&[("the merged CSV", &args.out)], &inputs)?;
    let shards = args
        .shards
        .iter()
        .map(|f| read_shard(f))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(first) = shards.first() else {
        return Err(CliError::input("give at least one shard to merge"));
    };
    let count = first.record.shards;
    let mut by_index: BTreeMap<usize, &Shard> = BTreeMap::new();
    for s in &shards {
        if s.record.experiment != first.record.experiment || s.record.points != first.record.points
        {
            return Err(ShardError::Foreign {
                file: s.file.clone(),
                first: first.file.clone(),
            }
            .into());
        }
        if s.record.shards != count {
            return Err(ShardError::OtherSplit {
                file: s.file.clone(),
                count: s.record.shards,
                first: first.file.clone(),
                first_count: count,
            }
            .into());
        }
        if let Some(prev) = by_index.insert(s.record.shard, s) {
            return Err(ShardError::Duplicate {
                file: s.file.clone(),
                index: s.record.shard,
                count,
                first: prev.file.clone(),
            }
            .into());
        }
        if s.header != first.header {
            return Err(ShardError::BadCsv {
                file: s.file.clone(),
                reason: format!("other columns than {}", crate::error::shown(&first.file)),
            }
            .into());
        }
    }
    // Every shard is given once, so the ids add up to `points` and the rows
    // below are all in memory; name at most a few missing ones (`count`
    // comes from a file).
    let missing: Vec<String> = (0..count)
        .filter(|i| !by_index.contains_key(i))
        .take(MAX_NAMED_MISSING)
        .map(|i| {
            // Name the missing file as its siblings are named.
            let name = first
                .file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let tag = format!(".shard-{}-of-{count}.", first.record.shard);
            if name.contains(&tag) {
                name.replace(&tag, &format!(".shard-{i}-of-{count}."))
            } else {
                format!("shard {i}")
            }
        })
        .collect();
    if !missing.is_empty() {
        let more = count - by_index.len() - missing.len();
        let mut names = missing.join(", ");
        if more > 0 {
            names.push_str(&format!(" and {more} more"));
        }
        return Err(ShardError::Missing {
            missing: count - by_index.len(),
            count,
            names,
        }
        .into());
    }
    let mut rows: Vec<Option<&csv::StringRecord>> = vec![None; first.record.points];
    for s in &shards {
        for (&id, row) in s.record.ids.iter().zip(&s.rows) {
            if let Some(slot) = rows.get_mut(id) {
                *slot = Some(row);
            }
        }
    }
    let csv_err = |e: csv::Error| {
        CliError::input(format!(
            "cannot write {}: {e}",
            crate::error::shown(&args.out)
        ))
    };
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.write_record(&first.header).map_err(csv_err)?;
    for r in rows.into_iter().flatten() {
        w.write_record(r).map_err(csv_err)?;
    }
    let bytes = w.into_inner().map_err(|e| {
        CliError::input(format!(
            "cannot write {}: {e}",
            crate::error::shown(&args.out)
        ))
    })?;
    write_atomic(&args.out, &bytes)?;
    emit(&format!(
        "{} points from {count} shards written to {}\n",
        first.record.points,
        crate::error::shown(&args.out)
    ))
}

/// `s` quoted for the shell.
fn sh(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn absolute(p: &Path) -> Result<PathBuf, CliError> {
    std::path::absolute(p).map_err(CliError::io(p))
}

/// An option value bound for an `#SBATCH` line, which has no quoting.
fn line_safe(option: &'static str, value: &str) -> Result<(), ShardError> {
    if value.is_empty() || value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ShardError::BadOption {
            option,
            value: value.to_owned(),
            reason: "must be one word (no spaces or line breaks)",
        });
    }
    Ok(())
}

/// A path bound for the script: no control character (a line break would
/// end the line it stands in).
fn script_safe(option: &'static str, p: &Path) -> Result<(), ShardError> {
    let text = p.to_string_lossy();
    if text.chars().any(char::is_control) {
        return Err(ShardError::BadOption {
            option,
            value: text.into_owned(),
            reason: "has a control character (such as a line break), which a batch script cannot hold safely; rename it",
        });
    }
    Ok(())
}

/// The Slurm batch script of `partalloc sweep --emit-slurm`: a job array
/// of the shards whose first task submits the merge, which waits for every
/// task (`afterok`) and is dropped if one fails.
pub(crate) fn slurm_script(
    experiment: &Path,
    out: &Path,
    points: usize,
    cluster: &ClusterArgs,
) -> Result<String, CliError> {
    let count = cluster.shards.unwrap_or(points);
    if count == 0 || count > points {
        return Err(CliError::input(format!(
            "--shards {count}: choose 1 to {points} (the points of the grid)"
        )));
    }
    if cluster.cpus_per_task == 0 {
        return Err(CliError::input("--cpus-per-task must be at least 1"));
    }
    line_safe("--time", &cluster.time)?;
    if let Some(p) = &cluster.partition {
        line_safe("--partition", p)?;
    }
    for a in &cluster.sbatch_args {
        line_safe("--sbatch-arg", a)?;
        if !a.starts_with('-') {
            return Err(ShardError::BadOption {
                option: "--sbatch-arg",
                value: a.clone(),
                reason: "must be an sbatch option, e.g. --account=proj",
            }
            .into());
        }
    }
    let experiment = absolute(experiment)?;
    let out = absolute(out)?;
    let dir = out.parent().unwrap_or(Path::new("/")).to_path_buf();
    let exe = std::env::current_exe()
        .map_err(|e| CliError::input(format!("cannot locate the partalloc binary: {e}")))?;
    // Every path goes into the script: quoted for the shell where it is a
    // word of a command, but a line break would end a comment or an
    // `#SBATCH` line and start a command of its own.
    for (option, p) in [
        ("the experiment path", &experiment),
        ("--out", &out),
        ("the partalloc binary's path", &exe),
    ] {
        script_safe(option, p)?;
    }
    let stem = out
        .file_stem()
        .map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned());
    let name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let d = |p: &Path| p.display().to_string();
    // `#SBATCH --output` takes a file name pattern: `%` is doubled to stay
    // a `%`, and the line has no quoting, so no space may stand in it.
    let log_dir = d(&dir).replace('%', "%%");
    line_safe("--out (its directory, for the log files)", &log_dir)?;
    let log = format!(
        "{log_dir}/{}.shard-%a-of-{count}.log",
        stem.replace('%', "%%")
    );
    line_safe("--out (its name, for the log files)", &log)?;
    let merge_log = format!("{log_dir}/{}.merge.log", stem.replace('%', "%%"));
    let mut common = vec![format!("--time={}", cluster.time)];
    if let Some(p) = &cluster.partition {
        common.push(format!("--partition={p}"));
    }
    common.extend(cluster.sbatch_args.iter().cloned());

    let mut s = String::new();
    let w = &mut s;
    // `fmt::Write` into a String cannot fail.
    let _ = writeln!(w, "#!/bin/bash");
    let _ = writeln!(
        w,
        "# The partalloc sweep {} in {count} shards, as a Slurm job array.",
        d(&experiment)
    );
    let _ = writeln!(w, "# Submit as is: sbatch <this file>");
    let _ = writeln!(
        w,
        "# Task 0 also submits the merge into {}, a job that starts once every",
        d(&out)
    );
    let _ = writeln!(
        w,
        "# task has succeeded (afterok) and is cancelled if one fails. A failed"
    );
    let _ = writeln!(w, "# task can be rerun alone: it resumes where it stopped.");
    let _ = writeln!(w, "#SBATCH --job-name=partalloc-{name}");
    let _ = writeln!(w, "#SBATCH --array=0-{}", count - 1);
    let _ = writeln!(w, "#SBATCH --cpus-per-task={}", cluster.cpus_per_task);
    let _ = writeln!(w, "#SBATCH --output={log}");
    for c in &common {
        let _ = writeln!(w, "#SBATCH {c}");
    }
    let _ = writeln!(w, "set -euo pipefail");
    let _ = writeln!(
        w,
        "# Another partalloc binary can be chosen with PARTALLOC=/path/to/partalloc."
    );
    let _ = writeln!(w, "partalloc=${{PARTALLOC:-{}}}", sh(&d(&exe)));
    let _ = writeln!(w, "cd {}", sh(&d(&dir)));
    let _ = writeln!(
        w,
        "if [ \"${{SLURM_ARRAY_TASK_ID}}\" = 0 ] && [ \"${{SLURM_RESTART_COUNT:-0}}\" = 0 ]; then"
    );
    let _ = write!(w, "  merge=(\"$partalloc\" sweep merge {}", sh(&d(&out)));
    for i in 0..count {
        let _ = write!(w, " {}", sh(&d(&shard_path(&out, i, count))));
    }
    let _ = writeln!(w, ")");
    let _ = write!(
        w,
        "  sbatch --dependency=afterok:\"${{SLURM_ARRAY_JOB_ID}}\" --kill-on-invalid-dep=yes \\\n    --job-name=partalloc-{name}-merge --output={}",
        sh(&merge_log)
    );
    for c in &common {
        let _ = write!(w, " {}", sh(c));
    }
    let _ = writeln!(w, " \\\n    --wrap=\"$(printf '%q ' \"${{merge[@]}}\")\"");
    let _ = writeln!(w, "fi");
    let _ = writeln!(
        w,
        "\"$partalloc\" sweep {} --out {} --shard \"${{SLURM_ARRAY_TASK_ID}}/{count}\" \\\n  --threads \"${{SLURM_CPUS_PER_TASK:-1}}\" --quiet --no-plots",
        sh(&d(&experiment)),
        sh(&d(&out))
    );
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_specs_parse_and_reject() {
        assert_eq!(
            "2/7".parse::<ShardSpec>(),
            Ok(ShardSpec { index: 2, count: 7 })
        );
        for bad in ["7/7", "1/0", "x/3", "3", "-1/3", "1/3/4"] {
            assert!(bad.parse::<ShardSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn round_robin_covers_every_point_once_and_balances() {
        for n in 1..=7 {
            let mut seen = [0; 23];
            for i in 0..n {
                let spec = ShardSpec { index: i, count: n };
                let (pts, id) = select((0..23).collect::<Vec<usize>>(), spec).unwrap();
                assert_eq!(pts, id);
                assert!(id.len() == 23 / n || id.len() == 23 / n + 1);
                for k in id {
                    seen[k] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1));
        }
        let e = select(vec![1, 2], ShardSpec { index: 0, count: 3 }).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--shard 0/3: the grid has only 2 points; use at most 2 shards"
        );
    }

    #[test]
    fn shard_files_sit_beside_the_output() {
        assert_eq!(
            shard_path(Path::new("out/kang.csv"), 2, 7),
            PathBuf::from("out/kang.shard-2-of-7.csv")
        );
        assert_eq!(
            record_path(&shard_path(Path::new("kang"), 0, 1)),
            PathBuf::from("kang.shard-0-of-1.json")
        );
    }

    #[test]
    fn shell_quoting_survives_quotes() {
        assert_eq!(sh("a b"), "'a b'");
        assert_eq!(sh("it's"), r"'it'\''s'");
    }
}
