//! Slurm accounting dumps as traces: what operators have.
//!
//! `sacct --parsable2 --allocations --format=JobID,Submit,Start,End,NNodes,Timelimit,…`
//! prints a header line of column names and one line per job, fields
//! separated by `|` with no trailing separator (sacct(1), `--parsable2`).
//! Columns may come in any order and extra ones are ignored; `JobID`,
//! `Submit`, `Start`, `End` and `NNodes` are required, `Timelimit` and
//! `State` are read when present. Job steps (`1234.batch`, `1234.0`,
//! `1234.extern`) are skipped: a job's nodes are those of its allocation.
//!
//! The Slurm attributes a scheduling policy needs are kept when their
//! columns are present: `Account`, `User`, `QOS`, `Partition`
//! ([`SacctRecord::account`] …; `Timelimit` is the estimate).
//!
//! With an `AllocTRES` column, a job's `gres/gpu=N` entry is its GPU count
//! ([`SacctRecord::gpus`]; typed entries such as `gres/gpu:a100=N` are a
//! breakdown of it and are not added). [`SacctTrace::jobs_in`] with
//! [`SacctUnit::Gpus`] turns the jobs into requests of that many GPUs, for
//! machines whose nodes are GPUs (Kueue's capacity machines); jobs without
//! GPUs are then left out by [`SacctTrace::usable_in`].
//!
//! Times are sacct's `YYYY-MM-DDTHH:MM:SS` (read as UTC seconds; only
//! differences matter); `Unknown` or `None` marks a time that does not
//! exist (a job that never started or has not ended). Time limits are
//! `[days-]hours:minutes:seconds`, `minutes:seconds` or `minutes`, or
//! `UNLIMITED` / `Partition_Limit` (no estimate).
//!
//! ```
//! use partalloc_workload::sacct::SacctTrace;
//! let dump = "JobID|Submit|Start|End|NNodes|Timelimit|State\n\
//!             7|2024-05-01T10:00:00|2024-05-01T10:00:05|2024-05-01T11:00:05|36|02:00:00|COMPLETED\n\
//!             7.batch|2024-05-01T10:00:05|2024-05-01T10:00:05|2024-05-01T11:00:05|1||COMPLETED\n\
//!             8|2024-05-01T10:30:00|2024-05-01T11:00:05|2024-05-01T11:10:05|18|1-00:00:00|TIMEOUT\n";
//! let trace = SacctTrace::parse(dump, false)?;
//! let jobs = trace.jobs(144)?;
//! assert_eq!(jobs.len(), 2);
//! assert_eq!((jobs[1].arrival, jobs[1].service, jobs[1].nodes()), (1800.0, 600.0, 18));
//! assert_eq!(jobs[1].estimate, Some(86_400.0));
//! # Ok::<(), partalloc_workload::sacct::SacctError>(())
//! ```

use thiserror::Error;

use crate::{Job, JobShape};

/// Why an accounting dump (or one of its lines) was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SacctError {
    /// The header lacks a column the trace needs.
    #[error(
        "line 1: no {0} column; dump with sacct --parsable2 --format=JobID,Submit,Start,End,NNodes,Timelimit"
    )]
    MissingColumn(&'static str),
    /// The dump has no header line.
    #[error("the dump is empty; it needs a header line of column names")]
    Empty,
    /// A line with a different number of fields than the header.
    #[error("line {line}: {found} fields, the header has {want} (fields are separated by |)")]
    FieldCount {
        /// 1-based line number.
        line: u64,
        /// Fields found.
        found: usize,
        /// Columns of the header.
        want: usize,
    },
    /// A field that cannot be read.
    #[error("line {line}: {column}: {value:?} {reason}")]
    Field {
        /// 1-based line number.
        line: u64,
        /// The column.
        column: &'static str,
        /// The text found.
        value: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A job that cannot be replayed: it never started or has not ended.
    #[error("line {line}: job {job}: {reason}")]
    Unusable {
        /// 1-based line number.
        line: u64,
        /// The job's JobID.
        job: String,
        /// Why.
        reason: &'static str,
    },
    /// No job is left to replay: every row was malformed or dropped.
    #[error("no job to replay: {0}")]
    NoUsableJob(Dropped),
    /// A job asks for more GPUs than the machine has, or for none (when
    /// its GPUs are the request: [`SacctUnit::Gpus`]).
    #[error(
        "line {line}: job {job} asks for {gpus} GPUs (gres/gpu in AllocTRES); the machine has {machine}"
    )]
    Gpus {
        /// 1-based line number.
        line: u64,
        /// The job's JobID.
        job: String,
        /// GPUs asked for (0 without a `gres/gpu` entry).
        gpus: u32,
        /// GPUs of the machine.
        machine: u64,
    },
    /// A job asks for more nodes than the machine has.
    #[error("line {line}: job {job} asks for {nodes} nodes; the machine has {machine}")]
    TooLarge {
        /// 1-based line number.
        line: u64,
        /// The job's JobID.
        job: String,
        /// Nodes asked for.
        nodes: u32,
        /// Nodes of the machine.
        machine: u64,
    },
}

/// One job (allocation) of an accounting dump.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SacctRecord {
    /// The 1-based line it was read from.
    pub line: u64,
    /// `JobID` as written (`1234`, `1234_7` for an array task, `1234+1`
    /// for a heterogeneous component).
    pub job_id: String,
    /// Submit time, seconds.
    pub submit: i64,
    /// Start time, if the job started.
    pub start: Option<i64>,
    /// End time, if the job ended.
    pub end: Option<i64>,
    /// Nodes allocated (or requested, for a job that never ran).
    pub nodes: u32,
    /// Time limit in seconds, if limited.
    pub time_limit: Option<u64>,
    /// `State`, if the column is present (`COMPLETED`, `TIMEOUT`, …).
    pub state: Option<String>,
    /// GPUs allocated: the `gres/gpu=N` entry of `AllocTRES`, if the
    /// column is present and has one.
    pub gpus: Option<u32>,
    /// `Account`, if the column is present and the field not empty.
    pub account: Option<String>,
    /// `User`, if the column is present and the field not empty.
    pub user: Option<String>,
    /// `QOS`, if the column is present and the field not empty.
    pub qos: Option<String>,
    /// `Partition`, if the column is present and the field not empty.
    pub partition: Option<String>,
}

/// What a job of a dump asks for, as a request of the machine's nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum SacctUnit {
    /// Its node count (`NNodes`).
    #[default]
    Nodes,
    /// Its GPU count (`gres/gpu=N` of `AllocTRES`), on a machine whose
    /// nodes are GPUs.
    Gpus,
}

/// The jobs of an accounting dump, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SacctTrace {
    /// Jobs read.
    pub records: Vec<SacctRecord>,
    /// Lines skipped in lenient mode, with why.
    pub skipped: Vec<SacctError>,
    /// Jobs left out by [`usable`](Self::usable), by reason.
    pub dropped: Dropped,
}

/// How many job rows of a dump were left out, and why: the reason given
/// when no job is left.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Dropped {
    /// Malformed lines skipped in lenient mode.
    pub malformed: usize,
    /// The first malformed line's error, as printed.
    pub first_malformed: Option<String>,
    /// Jobs that never started (`Start` is `Unknown`).
    pub never_started: usize,
    /// Jobs that have not ended (`End` is `Unknown`).
    pub not_ended: usize,
    /// Jobs that end before they start.
    pub ends_before_start: usize,
    /// Jobs asking for more nodes than the machine has.
    pub too_large: usize,
    /// Jobs without a `gres/gpu` entry, when GPUs are the request.
    pub no_gpus: usize,
    /// The machine's nodes, when jobs were checked against it.
    pub machine_nodes: u64,
}

impl Dropped {
    /// Rows left out, malformed or dropped.
    #[must_use]
    pub fn total(&self) -> usize {
        self.malformed
            + self.never_started
            + self.not_ended
            + self.ends_before_start
            + self.too_large
            + self.no_gpus
    }
}

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total = self.total();
        if total == 0 {
            return f.write_str("the dump has a header but no job line");
        }
        let s = |n: usize| if n == 1 { "" } else { "s" };
        write!(f, "all {total} job row{} left out:", s(total))?;
        let mut sep = " ";
        let mut part = |f: &mut std::fmt::Formatter<'_>, n: usize, text: String| {
            if n == 0 {
                return Ok(());
            }
            let r = write!(f, "{sep}{n} {text}");
            sep = ", ";
            r
        };
        part(
            f,
            self.never_started,
            "never ran (Start is Unknown)".to_owned(),
        )?;
        part(
            f,
            self.not_ended,
            "have not ended (End is Unknown)".to_owned(),
        )?;
        part(
            f,
            self.ends_before_start,
            "end before they start".to_owned(),
        )?;
        part(
            f,
            self.too_large,
            format!("need more nodes than the machine's {}", self.machine_nodes),
        )?;
        part(
            f,
            self.no_gpus,
            "ask for no GPU (no gres/gpu in AllocTRES)".to_owned(),
        )?;
        let first = self
            .first_malformed
            .as_deref()
            .map(|e| format!(" (first: {e})"))
            .unwrap_or_default();
        part(
            f,
            self.malformed,
            format!("malformed line{}{first}", s(self.malformed)),
        )
    }
}

struct Columns {
    count: usize,
    job_id: usize,
    submit: usize,
    start: usize,
    end: usize,
    nodes: usize,
    time_limit: Option<usize>,
    state: Option<usize>,
    tres: Option<usize>,
    account: Option<usize>,
    user: Option<usize>,
    qos: Option<usize>,
    partition: Option<usize>,
}

impl Columns {
    fn read(header: &str) -> Result<Self, SacctError> {
        let names: Vec<String> = header
            .split('|')
            .map(|n| n.trim().to_ascii_lowercase())
            .collect();
        let find = |name: &str| names.iter().position(|n| n == name);
        let need = |name: &'static str, key: &str| find(key).ok_or(SacctError::MissingColumn(name));
        Ok(Self {
            count: names.len(),
            job_id: need("JobID", "jobid")?,
            submit: need("Submit", "submit")?,
            start: need("Start", "start")?,
            end: need("End", "end")?,
            nodes: need("NNodes", "nnodes")?,
            time_limit: find("timelimit"),
            state: find("state"),
            tres: find("alloctres"),
            account: find("account"),
            user: find("user"),
            qos: find("qos"),
            partition: find("partition"),
        })
    }
}

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DDTHH:MM:SS` as seconds, `None` for `Unknown`/`None`/empty.
fn time(text: &str) -> Result<Option<i64>, &'static str> {
    let t = text.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("unknown") || t.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    const BAD: &str = "is not a time YYYY-MM-DDTHH:MM:SS";
    let (date, clock) = t.split_once('T').ok_or(BAD)?;
    let num = |s: &str, lo: i64, hi: i64| {
        s.parse::<i64>()
            .ok()
            .filter(|v| (lo..=hi).contains(v) && !s.starts_with('+'))
            .ok_or(BAD)
    };
    let d: Vec<&str> = date.split('-').collect();
    let c: Vec<&str> = clock.split(':').collect();
    let ([y, mo, da], [h, mi, s]) = (d.as_slice(), c.as_slice()) else {
        return Err(BAD);
    };
    let (y, mo) = (num(y, 0, 9999)?, num(mo, 1, 12)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let da = num(da, 1, month_days[(mo - 1) as usize])?;
    let (h, mi, s) = (num(h, 0, 23)?, num(mi, 0, 59)?, num(s, 0, 60)?);
    Ok(Some(
        days_from_civil(y, mo, da) * 86_400 + h * 3600 + mi * 60 + s,
    ))
}

/// A Slurm time limit in seconds, `None` when unlimited.
fn duration(text: &str) -> Result<Option<u64>, &'static str> {
    let t = text.trim();
    if t.is_empty()
        || t.eq_ignore_ascii_case("unlimited")
        || t.eq_ignore_ascii_case("partition_limit")
    {
        return Ok(None);
    }
    const BAD: &str =
        "is not a time limit ([days-]hours:minutes:seconds, minutes:seconds or minutes)";
    let num = |s: &str| {
        s.parse::<u64>()
            .ok()
            .filter(|_| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .ok_or(BAD)
    };
    let (days, rest) = match t.split_once('-') {
        Some((d, r)) => (num(d)?, r),
        None => (0, t),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let secs = match (parts.as_slice(), days) {
        ([h, m, s], _) => num(h)? * 3600 + num(m)? * 60 + num(s)?,
        ([m, s], 0) => num(m)? * 60 + num(s)?,
        ([m], 0) => num(m)? * 60,
        ([h, m], _) => num(h)? * 3600 + num(m)? * 60,
        ([h], _) => num(h)? * 3600,
        _ => return Err(BAD),
    };
    Ok(Some(days * 86_400 + secs))
}

/// The `gres/gpu=N` entry of an `AllocTRES` field (`cpu=8,gres/gpu=4,…`),
/// `None` without one.
fn gres_gpus(text: &str) -> Result<Option<u32>, &'static str> {
    let mut found = None;
    for entry in text.split(',') {
        if let Some(n) = entry.trim().strip_prefix("gres/gpu=") {
            let n = n
                .parse::<u32>()
                .ok()
                .filter(|_| n.bytes().all(|b| b.is_ascii_digit()))
                .ok_or("has a gres/gpu count that is not a whole number")?;
            found = Some(n);
        }
    }
    Ok(found)
}

fn record(cols: &Columns, text: &str, line: u64) -> Result<Option<SacctRecord>, SacctError> {
    let f: Vec<&str> = text.split('|').collect();
    if f.len() != cols.count {
        return Err(SacctError::FieldCount {
            line,
            found: f.len(),
            want: cols.count,
        });
    }
    let job_id = f[cols.job_id].trim();
    if job_id.contains('.') {
        return Ok(None); // a job step, not an allocation
    }
    let field = |column: &'static str, value: &str, reason: &'static str| SacctError::Field {
        line,
        column,
        value: partalloc_topology::echo(value),
        reason,
    };
    if job_id.is_empty() {
        return Err(field("JobID", job_id, "is empty"));
    }
    let at = |column: &'static str, i: usize| time(f[i]).map_err(|r| field(column, f[i], r));
    let submit = at("Submit", cols.submit)?.ok_or_else(|| {
        field(
            "Submit",
            f[cols.submit],
            "is unknown; every job has a submit time",
        )
    })?;
    let nodes = f[cols.nodes]
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| field("NNodes", f[cols.nodes], "is not a positive whole number"))?;
    let time_limit = cols
        .time_limit
        .map(|i| duration(f[i]).map_err(|r| field("Timelimit", f[i], r)))
        .transpose()?
        .flatten();
    Ok(Some(SacctRecord {
        line,
        job_id: job_id.to_owned(),
        submit,
        start: at("Start", cols.start)?,
        end: at("End", cols.end)?,
        nodes,
        time_limit,
        state: cols.state.map(|i| f[i].trim().to_owned()),
        gpus: cols
            .tres
            .map(|i| gres_gpus(f[i]).map_err(|r| field("AllocTRES", f[i], r)))
            .transpose()?
            .flatten(),
        account: text_of(&f, cols.account),
        user: text_of(&f, cols.user),
        qos: text_of(&f, cols.qos),
        partition: text_of(&f, cols.partition),
    }))
}

/// The trimmed text of an optional column, `None` when absent or empty.
fn text_of(f: &[&str], col: Option<usize>) -> Option<String> {
    col.map(|i| f[i].trim())
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

impl SacctTrace {
    /// Reads a `sacct --parsable2` dump. In lenient mode a bad job line is
    /// skipped and kept in [`skipped`](Self::skipped); otherwise the first
    /// one is the error.
    ///
    /// # Errors
    /// [`SacctError::Empty`] or [`SacctError::MissingColumn`] for a bad
    /// header, whatever the mode; a bad job line when not lenient.
    pub fn parse(text: &str, lenient: bool) -> Result<Self, SacctError> {
        let mut lines = text.lines().enumerate();
        let header = lines
            .by_ref()
            .find(|(_, l)| !l.trim().is_empty())
            .ok_or(SacctError::Empty)?;
        let cols = Columns::read(header.1)?;
        let mut trace = Self::default();
        for (i, l) in lines {
            if l.trim().is_empty() {
                continue;
            }
            match record(&cols, l, i as u64 + 1) {
                Ok(Some(r)) => trace.records.push(r),
                Ok(None) => {}
                Err(e) if lenient => trace.skipped.push(e),
                Err(e) => return Err(e),
            }
        }
        Ok(trace)
    }

    /// The dump as jobs for a machine of `machine_nodes` nodes: arrival =
    /// submit time after the earliest submit, service = end − start,
    /// estimate = the time limit, shape = the node count; ids number the
    /// jobs from 1 in file order, and the jobs come sorted by arrival
    /// (file order among equal arrivals).
    ///
    /// # Errors
    /// [`SacctError::Unusable`] for a job that never started or has not
    /// ended, or that ended before it started; [`SacctError::TooLarge`] for
    /// one larger than the machine; [`SacctError::NoUsableJob`], counting
    /// the rows left out by reason, when there is no job at all. Use
    /// [`usable`](Self::usable) first to keep only the jobs that ran.
    pub fn jobs(&self, machine_nodes: u64) -> Result<Vec<Job>, SacctError> {
        self.jobs_in(machine_nodes, SacctUnit::Nodes)
    }

    /// As [`jobs`](Self::jobs), each job asking for its `unit`s: its node
    /// count, or its GPU count on a machine of `machine_units` GPUs.
    ///
    /// ```
    /// use partalloc_workload::sacct::{SacctTrace, SacctUnit};
    /// let dump = "JobID|Submit|Start|End|NNodes|AllocTRES\n\
    ///             7|2024-05-01T10:00:00|2024-05-01T10:00:05|2024-05-01T11:00:05|2|billing=16,cpu=16,gres/gpu=6,gres/gpu:h100=6,node=2\n";
    /// let jobs = SacctTrace::parse(dump, false)?.jobs_in(576, SacctUnit::Gpus)?;
    /// assert_eq!(jobs[0].nodes(), 6);
    /// # Ok::<(), partalloc_workload::sacct::SacctError>(())
    /// ```
    ///
    /// # Errors
    /// As [`jobs`](Self::jobs); with [`SacctUnit::Gpus`],
    /// [`SacctError::Gpus`] for a job asking for no GPU or more than the
    /// machine has.
    pub fn jobs_in(&self, machine_units: u64, unit: SacctUnit) -> Result<Vec<Job>, SacctError> {
        let machine_nodes = machine_units;
        if self.records.is_empty() {
            let mut why = self.dropped.clone();
            why.malformed = self.skipped.len();
            why.first_malformed = self.skipped.first().map(ToString::to_string);
            return Err(SacctError::NoUsableJob(why));
        }
        let origin = self.records.iter().map(|r| r.submit).min().unwrap_or(0);
        let mut jobs = Vec::with_capacity(self.records.len());
        for (k, r) in self.records.iter().enumerate() {
            let unusable = |reason| SacctError::Unusable {
                line: r.line,
                job: partalloc_topology::echo(&r.job_id),
                reason,
            };
            let start = r
                .start
                .ok_or_else(|| unusable("it never started (Start is Unknown)"))?;
            let end = r
                .end
                .ok_or_else(|| unusable("it has not ended (End is Unknown)"))?;
            if end < start {
                return Err(unusable("it ends before it starts"));
            }
            let count = match unit {
                SacctUnit::Nodes => r.nodes,
                SacctUnit::Gpus => match r.gpus.filter(|&g| g > 0 && u64::from(g) <= machine_units)
                {
                    Some(g) => g,
                    None => {
                        return Err(SacctError::Gpus {
                            line: r.line,
                            job: partalloc_topology::echo(&r.job_id),
                            gpus: r.gpus.unwrap_or(0),
                            machine: machine_units,
                        });
                    }
                },
            };
            if unit == SacctUnit::Nodes && u64::from(r.nodes) > machine_nodes {
                return Err(SacctError::TooLarge {
                    line: r.line,
                    job: partalloc_topology::echo(&r.job_id),
                    nodes: r.nodes,
                    machine: machine_nodes,
                });
            }
            let shape = JobShape::Nodes { count };
            let job = Job::new(
                k as u64 + 1,
                (r.submit - origin) as f64,
                shape,
                (end - start) as f64,
            )
            .with_estimate(r.time_limit.map(|t| t as f64));
            jobs.push(job);
        }
        jobs.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
        Ok(jobs)
    }

    /// The trace without the jobs that cannot be replayed (never started,
    /// not ended, ending before they start, larger than `machine_nodes`),
    /// and how many were dropped.
    #[must_use]
    pub fn usable(self, machine_nodes: u64) -> (Self, usize) {
        self.usable_in(machine_nodes, SacctUnit::Nodes)
    }

    /// As [`usable`](Self::usable), sizes in `unit`s: with
    /// [`SacctUnit::Gpus`] a job without GPUs is left out too, and one of
    /// more GPUs than `machine_units` counts as too large.
    #[must_use]
    pub fn usable_in(mut self, machine_units: u64, unit: SacctUnit) -> (Self, usize) {
        let machine_nodes = machine_units;
        let before = self.records.len();
        let d = &mut self.dropped;
        d.machine_nodes = machine_nodes;
        self.records.retain(|r| {
            let counter = match (r.start, r.end) {
                (None, _) => &mut d.never_started,
                (_, None) => &mut d.not_ended,
                (Some(s), Some(e)) if e < s => &mut d.ends_before_start,
                _ if unit == SacctUnit::Gpus && r.gpus.is_none_or(|g| g == 0) => &mut d.no_gpus,
                _ if u64::from(match unit {
                    SacctUnit::Nodes => r.nodes,
                    SacctUnit::Gpus => r.gpus.unwrap_or(0),
                }) > machine_nodes =>
                {
                    &mut d.too_large
                }
                _ => return true,
            };
            *counter += 1;
            false
        });
        let dropped = before - self.records.len();
        (self, dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-written dump: an array task, steps, a pending job, a running
    /// one, and four bad lines.
    const DUMP: &str = "\
JobID|JobName|Partition|Submit|Start|End|NNodes|NCPUS|Timelimit|State
100|train|gpu|2024-02-28T23:59:50|2024-02-29T00:00:00|2024-02-29T01:00:00|36|2592|1-00:00:00|COMPLETED
100.batch|batch||2024-02-29T00:00:00|2024-02-29T00:00:00|2024-02-29T01:00:00|1|72||COMPLETED
100.0|python||2024-02-29T00:00:01|2024-02-29T00:00:01|2024-02-29T00:59:59|36|2592||COMPLETED
101_3|sweep|gpu|2024-02-29T00:00:10|2024-02-29T00:30:00|2024-02-29T00:45:30|2|144|30:00|CANCELLED by 1000
102|eval|gpu|2024-02-29T00:01:00|Unknown|Unknown|4|288|UNLIMITED|PENDING
103|big|gpu|2024-02-29T00:02:00|2024-02-29T00:02:00|Unknown|18|1296|02:00:00|RUNNING
104|oops|gpu|2024-02-29T00:03:00|2024-02-29T00:03:00|2024-02-29T00:04:00|zero|0|10|FAILED
105|oops|gpu|2024-02-30 00:03:00|2024-02-29T00:03:00|2024-02-29T00:04:00|1|72|10|FAILED
106|short|gpu|2024-02-29T00:03:00|2024-02-29T00:04:00|1
107|oops|gpu|2024-02-29T00:03:00|2024-02-29T00:04:00|2024-02-29T00:05:00|1|72|1:2:3:4|FAILED
";

    /// A GPU cluster's dump (`--format=…,AllocTRES`): two GPU jobs (the
    /// typed `gres/gpu:h100` entry repeats the total and is not added), a
    /// CPU-only job, a job step, and one job larger than the machine.
    const GPU_DUMP: &str = "\
JobID|Submit|Start|End|NNodes|AllocTRES|State
200|2025-03-01T08:00:00|2025-03-01T08:00:10|2025-03-01T09:00:10|2|billing=64,cpu=64,gres/gpu=8,gres/gpu:h100=8,mem=512G,node=2|COMPLETED
200.batch|2025-03-01T08:00:10|2025-03-01T08:00:10|2025-03-01T09:00:10|1|cpu=32,gres/gpu=4,mem=256G,node=1|COMPLETED
201|2025-03-01T08:01:00|2025-03-01T08:01:00|2025-03-01T08:11:00|1|billing=4,cpu=4,mem=16G,node=1|COMPLETED
202|2025-03-01T08:02:00|2025-03-01T08:05:00|2025-03-01T08:35:00|1|cpu=8,gres/gpu=3,node=1|TIMEOUT
203|2025-03-01T08:03:00|2025-03-01T08:05:00|2025-03-01T08:35:00|20|cpu=8,gres/gpu=80,node=20|COMPLETED
";

    #[test]
    fn gres_gpu_counts_become_gpu_requests() {
        let t = SacctTrace::parse(GPU_DUMP, false).unwrap();
        let gpus: Vec<Option<u32>> = t.records.iter().map(|r| r.gpus).collect();
        assert_eq!(gpus, [Some(8), None, Some(3), Some(80)]);
        // As nodes, every job is kept.
        let by_nodes = t.clone().jobs(144).unwrap();
        assert_eq!(
            by_nodes.iter().map(|j| j.nodes()).collect::<Vec<_>>(),
            [2, 1, 1, 20]
        );
        // As GPUs on 72 of them: the CPU-only job asks for none, the
        // 80-GPU job for too many.
        let e = t.jobs_in(72, SacctUnit::Gpus).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 4: job 201 asks for 0 GPUs (gres/gpu in AllocTRES); the machine has 72"
        );
        let (kept, dropped) = t.usable_in(72, SacctUnit::Gpus);
        assert_eq!(
            (dropped, kept.dropped.no_gpus, kept.dropped.too_large),
            (2, 1, 1)
        );
        let jobs = kept.jobs_in(72, SacctUnit::Gpus).unwrap();
        let got: Vec<(f64, f64, u64)> = jobs
            .iter()
            .map(|j| (j.arrival, j.service, j.nodes()))
            .collect();
        assert_eq!(got, [(0.0, 3600.0, 8), (120.0, 1800.0, 3)]);
        // Without a GPU job left, the reason names the missing gres/gpu.
        let cpu_only = "JobID|Submit|Start|End|NNodes|AllocTRES\n\
                        1|2025-03-01T08:00:00|2025-03-01T08:00:00|2025-03-01T08:10:00|1|cpu=4\n";
        let (t, _) = SacctTrace::parse(cpu_only, false)
            .unwrap()
            .usable_in(72, SacctUnit::Gpus);
        assert_eq!(
            t.jobs_in(72, SacctUnit::Gpus).unwrap_err().to_string(),
            "no job to replay: all 1 job row left out: 1 ask for no GPU (no gres/gpu in AllocTRES)"
        );
        // A count that is not a number is a typed, one-line error.
        let bad = GPU_DUMP.replace("gres/gpu=3", "gres/gpu=three");
        assert_eq!(
            SacctTrace::parse(&bad, false).unwrap_err().to_string(),
            "line 5: AllocTRES: \"cpu=8,gres/gpu=three,node=1\" has a gres/gpu count that is not a whole number"
        );
    }

    #[test]
    fn strict_reading_stops_at_the_first_bad_line() {
        let e = SacctTrace::parse(DUMP, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 8: NNodes: \"zero\" is not a positive whole number"
        );
    }

    #[test]
    fn lenient_reading_skips_bad_lines_with_their_numbers() {
        let t = SacctTrace::parse(DUMP, true).unwrap();
        let ids: Vec<&str> = t.records.iter().map(|r| r.job_id.as_str()).collect();
        assert_eq!(ids, ["100", "101_3", "102", "103"]);
        let lines: Vec<String> = t.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "line 8: NNodes: \"zero\" is not a positive whole number",
                "line 9: Submit: \"2024-02-30 00:03:00\" is not a time YYYY-MM-DDTHH:MM:SS",
                "line 10: 6 fields, the header has 10 (fields are separated by |)",
                "line 11: Timelimit: \"1:2:3:4\" is not a time limit ([days-]hours:minutes:seconds, minutes:seconds or minutes)",
            ]
        );
        let r = &t.records[1];
        assert_eq!((r.nodes, r.time_limit), (2, Some(1800)));
        assert_eq!(r.state.as_deref(), Some("CANCELLED by 1000"));
        assert_eq!(t.records[2].time_limit, None);
        // The pending and the running job cannot be replayed.
        let e = t.jobs(144).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 6: job 102: it never started (Start is Unknown)"
        );
        let (t, dropped) = t.usable(144);
        assert_eq!(dropped, 2);
        let jobs = t.jobs(144).unwrap();
        // Across the leap day: 23:59:50 to 00:00:10 is 20 s.
        let got: Vec<(u64, f64, f64, u64, Option<f64>)> = jobs
            .iter()
            .map(|j| (j.id, j.arrival, j.service, j.nodes(), j.estimate))
            .collect();
        assert_eq!(
            got,
            [
                (1, 0.0, 3600.0, 36, Some(86_400.0)),
                (2, 20.0, 930.0, 2, Some(1800.0)),
            ]
        );
    }

    #[test]
    fn a_dump_with_no_usable_job_says_why_each_row_was_left_out() {
        let head = "JobID|Submit|Start|End|NNodes\n";
        let row = |id: u32, start: &str, nodes: u32| {
            format!("{id}|2024-01-01T00:00:00|{start}|2024-01-01T01:00:00|{nodes}\n")
        };
        let mut dump = head.to_owned();
        for id in 0..10 {
            dump.push_str(&row(id, "Unknown", 1));
        }
        dump.push_str(&row(10, "2024-01-01T00:00:00", 145));
        dump.push_str(&row(11, "2024-01-01T00:00:00", 200));
        let (t, _) = SacctTrace::parse(&dump, false).unwrap().usable(144);
        assert_eq!(
            t.jobs(144).unwrap_err().to_string(),
            "no job to replay: all 12 job rows left out: 10 never ran (Start is Unknown), 2 need more nodes than the machine's 144"
        );
        dump.push_str("12|x|x|x|1\n");
        let (t, _) = SacctTrace::parse(&dump, true).unwrap().usable(144);
        let e = t.jobs(144).unwrap_err().to_string();
        assert!(
            e.starts_with("no job to replay: all 13 job rows left out: 10 never ran")
                && e.ends_with(", 1 malformed line (first: line 14: Submit: \"x\" is not a time YYYY-MM-DDTHH:MM:SS)"),
            "{e}"
        );
        let t = SacctTrace::parse(head, false).unwrap();
        assert_eq!(
            t.jobs(144).unwrap_err().to_string(),
            "no job to replay: the dump has a header but no job line"
        );
    }

    #[test]
    fn a_huge_field_is_echoed_in_40_characters() {
        let big = "7".repeat(10_000_000);
        let dump = format!("JobID|Submit|Start|End|NNodes\n1|{big}|x|x|1\n");
        let e = SacctTrace::parse(&dump, false).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "line 2: Submit: \"{}…\" is not a time YYYY-MM-DDTHH:MM:SS",
                "7".repeat(40)
            )
        );
    }

    #[test]
    fn headers_and_limits() {
        assert_eq!(SacctTrace::parse("\n\n", false), Err(SacctError::Empty));
        assert_eq!(
            SacctTrace::parse("JobID|Submit|Start|End\n", false),
            Err(SacctError::MissingColumn("NNodes"))
        );
        let t = SacctTrace::parse(
            "nnodes|end|START|submit|JobID\n400|2024-01-01T00:00:09|2024-01-01T00:00:01|2024-01-01T00:00:00|9\n",
            false,
        )
        .unwrap();
        assert_eq!(
            t.jobs(100).unwrap_err().to_string(),
            "line 2: job 9 asks for 400 nodes; the machine has 100"
        );
        assert_eq!(t.jobs(400).unwrap()[0].service, 8.0);
        for (text, secs) in [
            ("1-00:00:00", Some(86_400)),
            ("2-3", Some(2 * 86_400 + 3 * 3600)),
            ("2-03:04", Some(2 * 86_400 + 3 * 3600 + 240)),
            ("05:00", Some(300)),
            ("7", Some(420)),
            ("Partition_Limit", None),
        ] {
            assert_eq!(duration(text), Ok(secs), "{text}");
        }
        assert!(duration("-5").is_err() && duration("1:x").is_err());
        assert_eq!(time("1970-01-02T00:00:01"), Ok(Some(86_401)));
        assert_eq!(time("2000-03-01T00:00:00"), Ok(Some(951_868_800)));
        assert!(time("2024-13-01T00:00:00").is_err());
        assert!(time("2023-02-29T00:00:00").is_err() && time("2024-02-29T00:00:00").is_ok());
    }
}
