//! The Standard Workload Format (SWF) of the Parallel Workloads Archive.
//!
//! An SWF file (Chapin et al., "Benchmarks and Standards for the
//! Evaluation of Parallel Job Schedulers", JSSPP 1999; format description
//! at <https://www.cs.huji.ac.il/labs/parallel/workload/swf.html>) is a
//! header of comment lines starting with `;` — `; Key: value` pairs such as
//! `MaxNodes` and `MaxProcs`, with indented continuation lines — followed by
//! one line per job of 18 whitespace-separated fields. −1 marks an unknown
//! value; blank lines are ignored.
//!
//! [`SwfReader`] streams records from any `BufRead`, one line buffer at a
//! time, so traces of any length are read in constant memory. Every
//! malformed line is an [`SwfError`] naming the line and the field; with
//! [`SwfReader::lenient`] such lines are skipped and counted instead.
//! [`SwfWriter`] writes a header and records back; reading what it wrote
//! gives the same records. [`SwfRecord::to_job`] (or [`SwfReader::jobs`]
//! for a whole trace) turns a record into a [`Job`] on a machine through a
//! [`ShapeMapping`].
//!
//! ```
//! use partalloc_workload::swf::{ShapeMapping, SwfReader};
//! use partalloc_topology::Topology;
//!
//! let text = "; MaxNodes: 128\n; MaxProcs: 128\n\n\
//!             1 0 -1 1451 128 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n\
//!             2 1460 -1 3726 32 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n";
//! let mut reader = SwfReader::new(text.as_bytes())?;
//! assert_eq!(reader.header().max_nodes()?, Some(128));
//! let records = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
//! assert_eq!(records[1].run_time, Some(3726.0));
//! let mapping = ShapeMapping::for_topology(&"hypercube:7".parse::<Topology>()?);
//! let job = records[1].to_job(&mapping)?;
//! assert_eq!(job.shape.to_string(), "Q_5");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;
use std::io::{self, BufRead, Read as _, Write};

use thiserror::Error;

pub use crate::mapping::ShapeMapping;
use crate::{Job, WorkloadError};

/// The longest line [`SwfReader`] reads (1 MiB); header comments in the
/// archive's logs are a few hundred bytes.
pub const MAX_LINE_BYTES: u64 = 1 << 20;

/// The 18 fields of an SWF job line, in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum SwfField {
    /// 1: job number.
    JobNumber,
    /// 2: submit time (seconds).
    SubmitTime,
    /// 3: wait time (seconds).
    WaitTime,
    /// 4: run time (seconds).
    RunTime,
    /// 5: number of allocated processors.
    AllocatedProcessors,
    /// 6: average CPU time used (seconds).
    AverageCpuTime,
    /// 7: used memory (KB).
    UsedMemory,
    /// 8: requested number of processors.
    RequestedProcessors,
    /// 9: requested time (seconds).
    RequestedTime,
    /// 10: requested memory (KB).
    RequestedMemory,
    /// 11: status.
    Status,
    /// 12: user id.
    UserId,
    /// 13: group id.
    GroupId,
    /// 14: executable (application) number.
    Executable,
    /// 15: queue number.
    Queue,
    /// 16: partition number.
    Partition,
    /// 17: preceding job number.
    PrecedingJob,
    /// 18: think time from the preceding job (seconds).
    ThinkTime,
}

impl SwfField {
    /// All fields in file order.
    pub const ALL: [Self; 18] = [
        Self::JobNumber,
        Self::SubmitTime,
        Self::WaitTime,
        Self::RunTime,
        Self::AllocatedProcessors,
        Self::AverageCpuTime,
        Self::UsedMemory,
        Self::RequestedProcessors,
        Self::RequestedTime,
        Self::RequestedMemory,
        Self::Status,
        Self::UserId,
        Self::GroupId,
        Self::Executable,
        Self::Queue,
        Self::Partition,
        Self::PrecedingJob,
        Self::ThinkTime,
    ];

    /// The 1-based field number of the format.
    #[must_use]
    pub fn number(self) -> usize {
        self as usize + 1
    }

    /// The field's name in the format description.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::JobNumber => "job number",
            Self::SubmitTime => "submit time",
            Self::WaitTime => "wait time",
            Self::RunTime => "run time",
            Self::AllocatedProcessors => "number of allocated processors",
            Self::AverageCpuTime => "average CPU time used",
            Self::UsedMemory => "used memory",
            Self::RequestedProcessors => "requested number of processors",
            Self::RequestedTime => "requested time",
            Self::RequestedMemory => "requested memory",
            Self::Status => "status",
            Self::UserId => "user id",
            Self::GroupId => "group id",
            Self::Executable => "executable number",
            Self::Queue => "queue number",
            Self::Partition => "partition number",
            Self::PrecedingJob => "preceding job number",
            Self::ThinkTime => "think time from preceding job",
        }
    }
}

impl fmt::Display for SwfField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field {} ({})", self.number(), self.name())
    }
}

/// Why an SWF line or trace was refused.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SwfError {
    /// The input could not be read.
    #[error("line {line}: cannot read the trace: {source}")]
    Io {
        /// 1-based line number being read.
        line: u64,
        /// The underlying error.
        source: io::Error,
    },
    /// A line longer than [`MAX_LINE_BYTES`]: not an SWF line, and reading
    /// it whole could exhaust memory (a binary file, a file with no line
    /// breaks). Stops the read in lenient mode too.
    #[error("line {line}: longer than {max} bytes; an SWF line is 18 numbers")]
    LineTooLong {
        /// 1-based line number.
        line: u64,
        /// The bound, [`MAX_LINE_BYTES`].
        max: u64,
    },
    /// A job line that is not UTF-8 text (a malformed line: skipped and
    /// counted in lenient mode).
    #[error("line {line}: not UTF-8 text")]
    NotUtf8 {
        /// 1-based line number.
        line: u64,
    },
    /// A job line does not have 18 fields.
    #[error("line {line}: {found} fields, an SWF job line has 18")]
    FieldCount {
        /// 1-based line number.
        line: u64,
        /// Number of fields found.
        found: usize,
    },
    /// A field's value is not acceptable.
    #[error("line {line}: {field}: {value:?} {reason}")]
    Field {
        /// 1-based line number.
        line: u64,
        /// The field.
        field: SwfField,
        /// The text found.
        value: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A numeric header value cannot be parsed.
    #[error("line {line}: header {key}: {value:?} is not a non-negative integer")]
    Header {
        /// 1-based line number (0 when unknown).
        line: u64,
        /// The header key.
        key: String,
        /// The text found.
        value: String,
    },
    /// A record lacks what a job needs.
    #[error("job {job}: {reason}")]
    Unusable {
        /// The record's job number.
        job: u64,
        /// What is missing.
        reason: String,
    },
    /// A record value that the format cannot hold: a negative, NaN or
    /// infinite time or amount (only a missing value is written as −1).
    #[error("job {job}: {field}: {value} cannot be written; {reason}")]
    Unwritable {
        /// The record's job number.
        job: u64,
        /// The field.
        field: SwfField,
        /// The value given.
        value: f64,
        /// What is wrong.
        reason: &'static str,
    },
    /// A header line that would not stay one comment line.
    #[error("header line {text:?} contains a line break; it would be read back as more lines")]
    HeaderLineBreak {
        /// The header line.
        text: String,
    },
    /// The mapping onto the machine failed.
    #[error("job {job}: {source}")]
    Mapping {
        /// The record's job number.
        job: u64,
        /// Why the shape does not fit.
        source: WorkloadError,
    },
}

/// One job line. `None` is the format's −1 ("unknown").
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SwfRecord {
    /// 1: job number.
    pub job_number: u64,
    /// 2: submit time, seconds from the start of the log.
    pub submit_time: Option<f64>,
    /// 3: wait time, seconds.
    pub wait_time: Option<f64>,
    /// 4: run time, seconds.
    pub run_time: Option<f64>,
    /// 5: number of allocated processors.
    pub allocated_processors: Option<u64>,
    /// 6: average CPU time used, seconds.
    pub average_cpu_time: Option<f64>,
    /// 7: used memory, KB per processor.
    pub used_memory: Option<f64>,
    /// 8: requested number of processors.
    pub requested_processors: Option<u64>,
    /// 9: requested time, seconds.
    pub requested_time: Option<f64>,
    /// 10: requested memory, KB per processor.
    pub requested_memory: Option<f64>,
    /// 11: status (0 failed, 1 completed, 5 cancelled, …).
    pub status: Option<u64>,
    /// 12: user id.
    pub user_id: Option<u64>,
    /// 13: group id.
    pub group_id: Option<u64>,
    /// 14: executable number.
    pub executable: Option<u64>,
    /// 15: queue number.
    pub queue: Option<u64>,
    /// 16: partition number.
    pub partition: Option<u64>,
    /// 17: preceding job number.
    pub preceding_job: Option<u64>,
    /// 18: think time from the preceding job, seconds.
    pub think_time: Option<f64>,
}

impl SwfRecord {
    /// A record with every field but the job number unknown.
    #[must_use]
    pub fn unknown(job_number: u64) -> Self {
        Self {
            job_number,
            submit_time: None,
            wait_time: None,
            run_time: None,
            allocated_processors: None,
            average_cpu_time: None,
            used_memory: None,
            requested_processors: None,
            requested_time: None,
            requested_memory: None,
            status: None,
            user_id: None,
            group_id: None,
            executable: None,
            queue: None,
            partition: None,
            preceding_job: None,
            think_time: None,
        }
    }

    /// Parses one job line (`line` is its 1-based number, for errors).
    ///
    /// # Errors
    /// [`SwfError::FieldCount`] unless there are 18 fields;
    /// [`SwfError::Field`] for a value that is not a number, a negative
    /// value other than −1, a fraction in an integer field, or an unknown
    /// job number.
    pub fn parse_line(text: &str, line: u64) -> Result<Self, SwfError> {
        let mut toks = [""; 18];
        let mut found = 0;
        for t in text.split_ascii_whitespace() {
            if let Some(slot) = toks.get_mut(found) {
                *slot = t;
            }
            found += 1;
        }
        if found != 18 {
            return Err(SwfError::FieldCount { line, found });
        }
        let [
            t1,
            t2,
            t3,
            t4,
            t5,
            t6,
            t7,
            t8,
            t9,
            t10,
            t11,
            t12,
            t13,
            t14,
            t15,
            t16,
            t17,
            t18,
        ] = toks;
        let int = |field, t| int_field(t, field, line);
        let real = |field, t| real_field(t, field, line);
        let job_number = int(SwfField::JobNumber, t1)?.ok_or_else(|| SwfError::Field {
            line,
            field: SwfField::JobNumber,
            value: t1.to_owned(),
            reason: "must be known: every job needs a number",
        })?;
        Ok(Self {
            job_number,
            submit_time: real(SwfField::SubmitTime, t2)?,
            wait_time: real(SwfField::WaitTime, t3)?,
            run_time: real(SwfField::RunTime, t4)?,
            allocated_processors: int(SwfField::AllocatedProcessors, t5)?,
            average_cpu_time: real(SwfField::AverageCpuTime, t6)?,
            used_memory: real(SwfField::UsedMemory, t7)?,
            requested_processors: int(SwfField::RequestedProcessors, t8)?,
            requested_time: real(SwfField::RequestedTime, t9)?,
            requested_memory: real(SwfField::RequestedMemory, t10)?,
            status: int(SwfField::Status, t11)?,
            user_id: int(SwfField::UserId, t12)?,
            group_id: int(SwfField::GroupId, t13)?,
            executable: int(SwfField::Executable, t14)?,
            queue: int(SwfField::Queue, t15)?,
            partition: int(SwfField::Partition, t16)?,
            preceding_job: int(SwfField::PrecedingJob, t17)?,
            think_time: real(SwfField::ThinkTime, t18)?,
        })
    }

    /// The processors the job asked for: the requested number, or the
    /// allocated number when the request is unknown (as in many archive
    /// logs, e.g. the NASA iPSC/860 trace).
    #[must_use]
    pub fn processors(&self) -> Option<u64> {
        self.requested_processors.or(self.allocated_processors)
    }

    /// The job this record describes on a machine: id = job number,
    /// arrival = submit time, shape = [`processors`](Self::processors)
    /// through `mapping`, service = run time, estimate = requested time.
    ///
    /// # Errors
    /// [`SwfError::Unusable`] if the submit time, run time or processor
    /// count is unknown or the count is 0; [`SwfError::Mapping`] if the
    /// shape does not fit the machine.
    pub fn to_job(&self, mapping: &ShapeMapping) -> Result<Job, SwfError> {
        let job = self.job_number;
        let unusable = |reason: &str| SwfError::Unusable {
            job,
            reason: reason.to_owned(),
        };
        let arrival = self
            .submit_time
            .ok_or_else(|| unusable("the submit time is unknown"))?;
        let service = self
            .run_time
            .ok_or_else(|| unusable("the run time is unknown"))?;
        let procs = self
            .processors()
            .ok_or_else(|| unusable("the number of processors is unknown"))?;
        let shape = mapping
            .shape_for(procs)
            .map_err(|source| SwfError::Mapping { job, source })?;
        Ok(Job {
            id: job,
            arrival,
            shape,
            service,
            estimate: self.requested_time,
        })
    }

    /// Writes the record as one SWF line (no newline); unknowns as −1.
    ///
    /// # Errors
    /// Any error of `out`.
    pub fn write_line<W: fmt::Write>(&self, out: &mut W) -> fmt::Result {
        fn int<W: fmt::Write>(out: &mut W, v: Option<u64>) -> fmt::Result {
            match v {
                Some(v) => write!(out, " {v}"),
                None => out.write_str(" -1"),
            }
        }
        fn real<W: fmt::Write>(out: &mut W, v: Option<f64>) -> fmt::Result {
            match v {
                Some(v) => write!(out, " {v}"),
                None => out.write_str(" -1"),
            }
        }
        write!(out, "{}", self.job_number)?;
        real(out, self.submit_time)?;
        real(out, self.wait_time)?;
        real(out, self.run_time)?;
        int(out, self.allocated_processors)?;
        real(out, self.average_cpu_time)?;
        real(out, self.used_memory)?;
        int(out, self.requested_processors)?;
        real(out, self.requested_time)?;
        real(out, self.requested_memory)?;
        int(out, self.status)?;
        int(out, self.user_id)?;
        int(out, self.group_id)?;
        int(out, self.executable)?;
        int(out, self.queue)?;
        int(out, self.partition)?;
        int(out, self.preceding_job)?;
        real(out, self.think_time)
    }
}

impl SwfRecord {
    /// The real-valued fields with their values, in file order.
    fn reals(&self) -> [(SwfField, Option<f64>); 8] {
        [
            (SwfField::SubmitTime, self.submit_time),
            (SwfField::WaitTime, self.wait_time),
            (SwfField::RunTime, self.run_time),
            (SwfField::AverageCpuTime, self.average_cpu_time),
            (SwfField::UsedMemory, self.used_memory),
            (SwfField::RequestedTime, self.requested_time),
            (SwfField::RequestedMemory, self.requested_memory),
            (SwfField::ThinkTime, self.think_time),
        ]
    }

    /// Checks that [`write_line`](Self::write_line) gives a line that reads
    /// back as this record: every known real value finite and at least 0.
    ///
    /// # Errors
    /// [`SwfError::Unwritable`] for the first value that is not.
    pub fn check_writable(&self) -> Result<(), SwfError> {
        for (field, value) in self.reals() {
            let Some(v) = value else { continue };
            let reason = if v.is_nan() || v.is_infinite() {
                "only finite numbers can be written"
            } else if v < 0.0 {
                "a negative value would read back as unknown (-1) or be refused; use None for unknown"
            } else {
                continue;
            };
            return Err(SwfError::Unwritable {
                job: self.job_number,
                field,
                value: v,
                reason,
            });
        }
        Ok(())
    }
}

impl fmt::Display for SwfRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_line(f)
    }
}

fn int_field(t: &str, field: SwfField, line: u64) -> Result<Option<u64>, SwfError> {
    let err = |reason| SwfError::Field {
        line,
        field,
        value: t.to_owned(),
        reason,
    };
    if t == "-1" {
        return Ok(None);
    }
    if t.starts_with('-') {
        return Err(err("is negative; only -1 marks an unknown value"));
    }
    t.parse::<u64>()
        .map(Some)
        .map_err(|_| err("is not a whole number"))
}

fn real_field(t: &str, field: SwfField, line: u64) -> Result<Option<f64>, SwfError> {
    let err = |reason| SwfError::Field {
        line,
        field,
        value: t.to_owned(),
        reason,
    };
    // Only plain decimal numbers: `f64::from_str` also takes "inf", "NaN".
    if !t
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
    {
        return Err(err("is not a number"));
    }
    let v: f64 = t.parse().map_err(|_| err("is not a number"))?;
    if !v.is_finite() {
        return Err(err("is not a finite number"));
    }
    if v == -1.0 {
        return Ok(None);
    }
    if v < 0.0 {
        return Err(err("is negative; only -1 marks an unknown value"));
    }
    Ok(Some(v))
}

/// The comment header of a trace: its lines verbatim, and the
/// `; Key: value` pairs parsed from them (continuation lines appended to
/// the previous value with a newline).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SwfHeader {
    lines: Vec<String>,
    fields: Vec<(String, String, u64)>,
}

impl SwfHeader {
    /// An empty header.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the comment line `;{text}` (`text` without the `;`), parsing a
    /// `Key: value` pair from it; `line` is its line number in a file (0
    /// when built by hand).
    pub fn push_line(&mut self, text: &str, line: u64) {
        let text = text.trim_end_matches(['\r', '\n']);
        self.lines.push(text.to_owned());
        let body = text.trim();
        let key_end = body.find(':').filter(|&i| {
            i > 0
                && body
                    .bytes()
                    .take(i)
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
        match key_end {
            Some(i)
                if body
                    .get(i + 1..)
                    .is_none_or(|r| r.is_empty() || r.starts_with([' ', '\t'])) =>
            {
                let key = body.get(..i).unwrap_or_default().to_owned();
                let value = body.get(i + 1..).unwrap_or_default().trim().to_owned();
                self.fields.push((key, value, line));
            }
            _ => {
                // An indented continuation of the previous value.
                if !body.is_empty()
                    && text.starts_with([' ', '\t'])
                    && text.len() > body.len() + 1
                    && let Some((_, v, _)) = self.fields.last_mut()
                {
                    v.push('\n');
                    v.push_str(body);
                }
            }
        }
    }

    /// Adds a `; Key: value` line.
    pub fn push_field(&mut self, key: &str, value: &str) {
        self.push_line(&format!(" {key}: {value}"), 0);
    }

    /// The comment lines, without their leading `;`.
    #[must_use]
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The first value of `key` (case-sensitive, as the format spells it).
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _, _)| k == key)
            .map(|(_, v, _)| v.as_str())
    }

    /// Every value of `key`, in file order (e.g. `Queue`, `Note`).
    pub fn get_all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.fields
            .iter()
            .filter(move |(k, _, _)| k == key)
            .map(|(_, v, _)| v.as_str())
    }

    /// The value of `key` as a non-negative integer.
    ///
    /// # Errors
    /// [`SwfError::Header`] if present but not an integer.
    pub fn get_u64(&self, key: &str) -> Result<Option<u64>, SwfError> {
        let Some((_, v, line)) = self.fields.iter().find(|(k, _, _)| k == key) else {
            return Ok(None);
        };
        v.parse().map(Some).map_err(|_| SwfError::Header {
            line: *line,
            key: key.to_owned(),
            value: v.clone(),
        })
    }

    /// `MaxNodes`: the machine's nodes.
    ///
    /// # Errors
    /// As [`get_u64`](Self::get_u64).
    pub fn max_nodes(&self) -> Result<Option<u64>, SwfError> {
        self.get_u64("MaxNodes")
    }

    /// `MaxProcs`: the machine's processors.
    ///
    /// # Errors
    /// As [`get_u64`](Self::get_u64).
    pub fn max_procs(&self) -> Result<Option<u64>, SwfError> {
        self.get_u64("MaxProcs")
    }

    /// `MaxJobs`: jobs in the original log (a cleaned trace may hold
    /// fewer).
    ///
    /// # Errors
    /// As [`get_u64`](Self::get_u64).
    pub fn max_jobs(&self) -> Result<Option<u64>, SwfError> {
        self.get_u64("MaxJobs")
    }
}

/// A streaming reader of SWF records; see the [module docs](self).
#[derive(Debug)]
pub struct SwfReader<R> {
    input: R,
    header: SwfHeader,
    bytes: Vec<u8>,
    buf: String,
    // A job line read while scanning the header, not yet returned.
    pending: bool,
    line: u64,
    lenient: bool,
    skipped: u64,
    done: bool,
    // The last line read is not UTF-8.
    invalid_utf8: bool,
}

impl<R: BufRead> SwfReader<R> {
    /// Reads the header (the leading comment and blank lines) and stops at
    /// the first job line.
    ///
    /// # Errors
    /// [`SwfError::Io`] if the input cannot be read;
    /// [`SwfError::LineTooLong`] for a header line above [`MAX_LINE_BYTES`].
    pub fn new(input: R) -> Result<Self, SwfError> {
        let mut r = Self {
            input,
            header: SwfHeader::new(),
            bytes: Vec::new(),
            buf: String::new(),
            pending: false,
            line: 0,
            lenient: false,
            skipped: 0,
            done: false,
            invalid_utf8: false,
        };
        loop {
            if !r.read_line()? {
                r.done = true;
                break;
            }
            let t = r.buf.trim_start();
            if let Some(rest) = t.strip_prefix(';') {
                let rest = rest.to_owned();
                r.header.push_line(&rest, r.line);
            } else if !t.trim().is_empty() || r.invalid_utf8 {
                r.pending = true;
                break;
            }
        }
        Ok(r)
    }

    /// Skips malformed job lines (counting them, see
    /// [`skipped`](Self::skipped)) instead of returning errors. Read
    /// errors are still returned.
    #[must_use]
    pub fn lenient(mut self, yes: bool) -> Self {
        self.lenient = yes;
        self
    }

    /// The header read by [`new`](Self::new).
    #[must_use]
    pub fn header(&self) -> &SwfHeader {
        &self.header
    }

    /// Malformed lines skipped so far in lenient mode.
    #[must_use]
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The number of the last line read.
    #[must_use]
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Reads the next line into `buf`; `Ok(false)` at the end. A line that
    /// is not UTF-8 is decoded lossily and sets `invalid_utf8`: a comment
    /// keeps its readable part, a job line is malformed (not a read error).
    fn read_line(&mut self) -> Result<bool, SwfError> {
        self.buf.clear();
        self.bytes.clear();
        self.invalid_utf8 = false;
        let n = (&mut self.input)
            .take(MAX_LINE_BYTES)
            .read_until(b'\n', &mut self.bytes)
            .map_err(|source| SwfError::Io {
                line: self.line + 1,
                source,
            })?;
        if n == 0 {
            return Ok(false);
        }
        if n as u64 == MAX_LINE_BYTES && self.bytes.last() != Some(&b'\n') {
            return Err(SwfError::LineTooLong {
                line: self.line + 1,
                max: MAX_LINE_BYTES,
            });
        }
        self.line += 1;
        match core::str::from_utf8(&self.bytes) {
            Ok(s) => self.buf.push_str(s),
            Err(_) => {
                self.invalid_utf8 = true;
                self.buf.push_str(&String::from_utf8_lossy(&self.bytes));
            }
        }
        Ok(true)
    }
}

impl<R: BufRead> SwfReader<R> {
    /// The records as jobs on a machine (see [`SwfRecord::to_job`]); a
    /// record that cannot become a job is an error item (or, in lenient
    /// mode, skipped and counted like a malformed line).
    pub fn jobs(self, mapping: ShapeMapping) -> SwfJobs<R> {
        SwfJobs {
            reader: self,
            mapping,
        }
    }
}

/// The jobs of a trace; see [`SwfReader::jobs`].
#[derive(Debug)]
pub struct SwfJobs<R> {
    reader: SwfReader<R>,
    mapping: ShapeMapping,
}

impl<R> SwfJobs<R> {
    /// The underlying reader (header, line, skipped count).
    #[must_use]
    pub fn reader(&self) -> &SwfReader<R> {
        &self.reader
    }
}

impl<R: BufRead> Iterator for SwfJobs<R> {
    type Item = Result<Job, SwfError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let rec = match self.reader.next()? {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            match rec.to_job(&self.mapping) {
                Ok(j) => return Some(Ok(j)),
                Err(_) if self.reader.lenient => self.reader.skipped += 1,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl<R: BufRead> Iterator for SwfReader<R> {
    type Item = Result<SwfRecord, SwfError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.pending {
                self.pending = false;
            } else {
                if self.done {
                    return None;
                }
                match self.read_line() {
                    Ok(true) => {}
                    Ok(false) => {
                        self.done = true;
                        return None;
                    }
                    Err(e) => {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
            }
            let t = self.buf.trim();
            if t.starts_with(';') || (t.is_empty() && !self.invalid_utf8) {
                continue;
            }
            let parsed = if self.invalid_utf8 {
                Err(SwfError::NotUtf8 { line: self.line })
            } else {
                SwfRecord::parse_line(t, self.line)
            };
            match parsed {
                Ok(r) => return Some(Ok(r)),
                Err(_) if self.lenient => self.skipped += 1,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// Writes an SWF header and records.
#[derive(Debug)]
pub struct SwfWriter<W: Write> {
    out: W,
    line: String,
    /// Lines written so far.
    written: u64,
}

impl<W: Write> SwfWriter<W> {
    /// Writes `header`'s lines (each prefixed with `;`) to `out`.
    ///
    /// # Errors
    /// [`SwfError::HeaderLineBreak`] for a header line holding a line
    /// break (nothing is written then); [`SwfError::Io`] for an error of
    /// `out`.
    pub fn new(mut out: W, header: &SwfHeader) -> Result<Self, SwfError> {
        if let Some(l) = header.lines().iter().find(|l| l.contains(['\n', '\r'])) {
            return Err(SwfError::HeaderLineBreak { text: l.clone() });
        }
        for (i, l) in header.lines().iter().enumerate() {
            writeln!(out, ";{l}").map_err(|source| SwfError::Io {
                line: i as u64 + 1,
                source,
            })?;
        }
        Ok(Self {
            out,
            line: String::new(),
            written: header.lines().len() as u64,
        })
    }

    /// Writes one record line.
    ///
    /// # Errors
    /// [`SwfError::Unwritable`] for a record that would not read back as
    /// itself (see [`SwfRecord::check_writable`]; nothing is written
    /// then); [`SwfError::Io`] for an error of the output.
    pub fn write(&mut self, record: &SwfRecord) -> Result<(), SwfError> {
        record.check_writable()?;
        self.line.clear();
        let line = self.written + 1;
        record
            .write_line(&mut self.line)
            .map_err(|_| SwfError::Io {
                line,
                source: io::Error::other("cannot format an SWF record"),
            })?;
        self.line.push('\n');
        self.out
            .write_all(self.line.as_bytes())
            .map_err(|source| SwfError::Io { line, source })?;
        self.written = line;
        Ok(())
    }

    /// Flushes and returns the output.
    ///
    /// # Errors
    /// Any error of the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use partalloc_topology::Topology;
    use proptest::prelude::*;
    use std::io::{BufReader, Read};

    const SAMPLE: &str = "\
; Version: 2.2
; Computer: Test machine
; Information: http://example.invalid/
;              http://example.invalid/more
; MaxNodes: 64
; MaxProcs: 64
; Queue:  0  interactive
; Queue:  1  batch

    1        0     -1   1451   64     -1    -1   -1     -1    -1 -1   1   1  -1 -1 -1 -1 -1
    2     1460     10   3726    8   12.5  1024    8   4000    -1  1   1   1   3  1 -1  1  0.5

; a comment between jobs
    3     1500     -1     -1   -1     -1    -1   -1     -1    -1 -1  -1  -1  -1 -1 -1 -1 -1
    4     1600     -1     20   16     -1    -1   -1     -1    -1 -1   2   1
    5     1700     -1    2.5    x     -1    -1   -1     -1    -1 -1   2   1  -1 -1 -1 -1 -1
    6     1800     -1     -3    4     -1    -1   -1     -1    -1 -1   2   1  -1 -1 -1 -1 -1
    7     1900     -1     30  2.0     -1    -1   -1     -1    -1 -1   2   1  -1 -1 -1 -1 -1
   -1     2000     -1     30    2     -1    -1   -1     -1    -1 -1   2   1  -1 -1 -1 -1 -1
    9     2100     -1    inf    2     -1    -1   -1     -1    -1 -1   2   1  -1 -1 -1 -1 -1
   10     2200     -1     40    4     -1    -1   -1     -1    -1 -1   2   1  -1 -1 -1 -1 -1
";

    #[test]
    fn sample_header_records_and_errors() {
        let mut r = SwfReader::new(SAMPLE.as_bytes()).unwrap();
        let h = r.header().clone();
        assert_eq!(h.get("Version"), Some("2.2"));
        assert_eq!(
            h.get("Information"),
            Some("http://example.invalid/\nhttp://example.invalid/more")
        );
        assert_eq!(h.max_nodes().unwrap(), Some(64));
        assert_eq!(h.max_procs().unwrap(), Some(64));
        assert_eq!(h.max_jobs().unwrap(), None);
        assert_eq!(
            h.get_all("Queue").collect::<Vec<_>>(),
            vec!["0  interactive", "1  batch"]
        );
        assert_eq!(h.lines().len(), 8);
        let out: Vec<Result<SwfRecord, String>> =
            r.by_ref().map(|x| x.map_err(|e| e.to_string())).collect();
        assert_eq!(out.len(), 10);
        let ok = |i: usize| out[i].as_ref().unwrap();
        assert_eq!(ok(0).job_number, 1);
        assert_eq!(ok(0).wait_time, None);
        assert_eq!(ok(0).allocated_processors, Some(64));
        assert_eq!(ok(1).average_cpu_time, Some(12.5));
        assert_eq!(ok(1).requested_time, Some(4000.0));
        assert_eq!(ok(1).status, Some(1));
        assert_eq!(ok(1).partition, None);
        assert_eq!(ok(1).think_time, Some(0.5));
        assert_eq!(*ok(2), {
            let mut u = SwfRecord::unknown(3);
            u.submit_time = Some(1500.0);
            u
        });
        let err = |i: usize| out[i].as_ref().unwrap_err().as_str();
        assert_eq!(err(3), "line 15: 13 fields, an SWF job line has 18");
        assert_eq!(
            err(4),
            "line 16: field 5 (number of allocated processors): \"x\" is not a whole number"
        );
        assert_eq!(
            err(5),
            "line 17: field 4 (run time): \"-3\" is negative; only -1 marks an unknown value"
        );
        assert_eq!(
            err(6),
            "line 18: field 5 (number of allocated processors): \"2.0\" is not a whole number"
        );
        assert_eq!(
            err(7),
            "line 19: field 1 (job number): \"-1\" must be known: every job needs a number"
        );
        assert_eq!(
            err(8),
            "line 20: field 4 (run time): \"inf\" is not a number"
        );
        assert_eq!(ok(9).job_number, 10);
        assert_eq!(r.line(), 21);
    }

    #[test]
    fn lenient_skips_and_counts() {
        let mut r = SwfReader::new(SAMPLE.as_bytes()).unwrap().lenient(true);
        let jobs: Vec<u64> = r.by_ref().map(|x| x.unwrap().job_number).collect();
        assert_eq!(jobs, vec![1, 2, 3, 10]);
        assert_eq!(r.skipped(), 6);
    }

    #[test]
    fn jobs_adaptor() {
        let cube: Topology = "hypercube:6".parse().unwrap();
        let m = ShapeMapping::for_topology(&cube);
        let r = SwfReader::new(SAMPLE.as_bytes()).unwrap();
        let out: Vec<Result<Job, SwfError>> = r.jobs(m).collect();
        assert_eq!(out.len(), 10);
        assert_eq!(
            out[0].as_ref().unwrap().shape,
            crate::JobShape::Cube { dim: 6 }
        );
        assert_eq!(
            out[2].as_ref().unwrap_err().to_string(),
            "job 3: the run time is unknown"
        );
        let mut lenient = SwfReader::new(SAMPLE.as_bytes())
            .unwrap()
            .lenient(true)
            .jobs(m);
        let ids: Vec<u64> = lenient.by_ref().map(|j| j.unwrap().id).collect();
        assert_eq!(ids, vec![1, 2, 10]);
        assert_eq!(lenient.reader().skipped(), 7);
    }

    #[test]
    fn header_errors_and_edge_cases() {
        let mut h = SwfHeader::new();
        h.push_field("MaxNodes", "lots");
        assert_eq!(
            h.max_nodes().unwrap_err().to_string(),
            "line 0: header MaxNodes: \"lots\" is not a non-negative integer"
        );
        // Empty input, header only, no trailing newline, CRLF.
        assert_eq!(SwfReader::new("".as_bytes()).unwrap().count(), 0);
        assert_eq!(
            SwfReader::new("; MaxNodes: 4\n".as_bytes())
                .unwrap()
                .count(),
            0
        );
        let crlf = "; MaxNodes: 4\r\n1 0 -1 5 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1";
        let mut r = SwfReader::new(crlf.as_bytes()).unwrap();
        assert_eq!(r.header().max_nodes().unwrap(), Some(4));
        assert_eq!(r.next().unwrap().unwrap().run_time, Some(5.0));
        assert!(r.next().is_none());
        // Not UTF-8: a malformed line, not a read error.
        let bad: &[u8] = b"1 0 -1 5 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 \xff\n";
        let e = SwfReader::new(bad).map(|mut r| r.next());
        assert!(
            matches!(e, Ok(Some(Err(SwfError::NotUtf8 { line: 1 })))),
            "{e:?}"
        );
    }

    #[test]
    fn to_job_uses_requested_then_allocated() {
        let cube: Topology = "hypercube:6".parse().unwrap();
        let m = ShapeMapping::for_topology(&cube);
        let mut r = SwfRecord::unknown(7);
        assert_eq!(
            r.to_job(&m).unwrap_err().to_string(),
            "job 7: the submit time is unknown"
        );
        r.submit_time = Some(10.0);
        r.run_time = Some(3.0);
        assert_eq!(
            r.to_job(&m).unwrap_err().to_string(),
            "job 7: the number of processors is unknown"
        );
        r.allocated_processors = Some(5);
        let j = r.to_job(&m).unwrap();
        assert_eq!((j.id, j.arrival, j.service), (7, 10.0, 3.0));
        assert_eq!(j.shape, crate::JobShape::Cube { dim: 3 });
        r.requested_processors = Some(2);
        r.requested_time = Some(60.0);
        let j = r.to_job(&m).unwrap();
        assert_eq!(j.shape, crate::JobShape::Cube { dim: 1 });
        assert_eq!(j.estimate, Some(60.0));
        r.requested_processors = Some(65);
        assert!(matches!(
            r.to_job(&m),
            Err(SwfError::Mapping { job: 7, .. })
        ));
    }

    /// The Parallel Workloads Archive trace shipped in the repository's
    /// `data/traces/` (not in the published crate: the test is skipped
    /// there, and fails in the repository if the file is missing).
    #[test]
    fn nasa_ipsc_trace_parses_completely() {
        let traces = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces");
        let path = format!("{traces}/NASA-iPSC-1993-3.1-cln.swf");
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if std::path::Path::new(traces).is_dir() => {
                panic!("{path}: {e}")
            }
            Err(_) => {
                eprintln!(
                    "skipping nasa_ipsc_trace_parses_completely: {path} is not here \
                     (the trace ships with the repository, not the crate)"
                );
                return;
            }
        };
        let mut r = SwfReader::new(BufReader::new(file)).unwrap();
        let h = r.header().clone();
        assert_eq!(h.max_nodes().unwrap(), Some(128));
        assert_eq!(h.max_procs().unwrap(), Some(128));
        // MaxJobs counts the original log; the cleaned trace keeps 18 239.
        assert_eq!(h.max_jobs().unwrap(), Some(42_264));
        assert_eq!(h.get("Computer"), Some("Intel iPSC/860"));
        assert_eq!(h.get_all("Queue").count(), 2);
        let cube: Topology = "hypercube:7".parse().unwrap();
        let m = ShapeMapping::for_topology(&cube);
        let (mut n, mut last_submit, mut max_procs) = (0u64, 0.0f64, 0u64);
        let mut first_last = Vec::new();
        for rec in r.by_ref() {
            let rec = rec.unwrap();
            n += 1;
            let sub = rec.submit_time.unwrap();
            assert!(sub >= last_submit, "job {} out of order", rec.job_number);
            last_submit = sub;
            max_procs = max_procs.max(rec.processors().unwrap());
            rec.to_job(&m).unwrap();
            if n == 1 || rec.job_number == 42_264 {
                first_last.push(rec.to_string());
            }
        }
        assert_eq!(n, 18_239);
        assert_eq!(max_procs, 128);
        assert_eq!(r.skipped(), 0);
        // First and last lines of the file, as normalized by the writer.
        assert_eq!(
            first_last,
            vec![
                "1 0 -1 1451 128 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1",
                "42264 7948936 -1 86 128 -1 -1 -1 -1 -1 -1 12 2 -1 -1 -1 -1 -1",
            ]
        );
    }

    /// A reader of a synthetic trace generated line by line on demand:
    /// the whole text never exists in memory.
    struct Synthetic {
        next_job: u64,
        jobs: u64,
        line: Vec<u8>,
        pos: usize,
    }

    impl Read for Synthetic {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.pos == self.line.len() {
                if self.next_job > self.jobs {
                    return Ok(0);
                }
                let j = self.next_job;
                self.line.clear();
                if j == 0 {
                    self.line.extend_from_slice(b"; MaxProcs: 1024\n");
                } else {
                    let mut r = SwfRecord::unknown(j);
                    r.submit_time = Some(j as f64 * 2.0);
                    r.run_time = Some((j % 97) as f64 + 0.25);
                    r.allocated_processors = Some(1 << (j % 11));
                    self.line.extend_from_slice(format!("{r}\n").as_bytes());
                }
                self.next_job += 1;
                self.pos = 0;
            }
            let n = buf.len().min(self.line.len() - self.pos);
            buf[..n].copy_from_slice(&self.line[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    #[test]
    fn streams_a_100k_job_trace() {
        let src = Synthetic {
            next_job: 0,
            jobs: 100_000,
            line: Vec::new(),
            pos: 0,
        };
        let mut r = SwfReader::new(BufReader::with_capacity(4096, src)).unwrap();
        assert_eq!(r.header().max_procs().unwrap(), Some(1024));
        let (mut n, mut procs, mut run) = (0u64, 0u64, 0.0f64);
        for rec in r.by_ref() {
            let rec = rec.unwrap();
            n += 1;
            assert_eq!(rec.job_number, n);
            procs += rec.allocated_processors.unwrap();
            run += rec.run_time.unwrap();
        }
        assert_eq!(n, 100_000);
        let want_procs: u64 = (1..=100_000u64).map(|j| 1 << (j % 11)).sum();
        let want_run: f64 = (1..=100_000u64).map(|j| (j % 97) as f64 + 0.25).sum();
        assert_eq!(procs, want_procs);
        assert_eq!(run, want_run);
    }

    fn opt_real() -> impl Strategy<Value = Option<f64>> {
        prop_oneof![
            Just(None),
            (0u32..1_000_000).prop_map(|v| Some(f64::from(v))),
            (0.0f64..1e7).prop_map(Some),
        ]
    }

    fn opt_int() -> impl Strategy<Value = Option<u64>> {
        prop_oneof![Just(None), (0u64..u64::MAX).prop_map(Some)]
    }

    prop_compose! {
        fn record()(
            job_number in 0u64..u64::MAX,
            reals in proptest::collection::vec(opt_real(), 8),
            ints in proptest::collection::vec(opt_int(), 9),
        ) -> SwfRecord {
            SwfRecord {
                job_number,
                submit_time: reals[0],
                wait_time: reals[1],
                run_time: reals[2],
                allocated_processors: ints[0],
                average_cpu_time: reals[3],
                used_memory: reals[4],
                requested_processors: ints[1],
                requested_time: reals[5],
                requested_memory: reals[6],
                status: ints[2],
                user_id: ints[3],
                group_id: ints[4],
                executable: ints[5],
                queue: ints[6],
                partition: ints[7],
                preceding_job: ints[8],
                think_time: reals[7],
            }
        }
    }

    #[test]
    fn writer_refuses_values_that_would_not_read_back() {
        let mut w = SwfWriter::new(Vec::new(), &SwfHeader::new()).unwrap();
        for (value, field) in [
            (-1.0, SwfField::RunTime),
            (-0.5, SwfField::RunTime),
            (f64::NAN, SwfField::RunTime),
            (f64::INFINITY, SwfField::RunTime),
        ] {
            let mut r = SwfRecord::unknown(7);
            r.run_time = Some(value);
            match w.write(&r) {
                Err(SwfError::Unwritable {
                    job: 7, field: f, ..
                }) => assert_eq!(f, field),
                other => panic!("{value}: {other:?}"),
            }
        }
        let mut r = SwfRecord::unknown(8);
        r.think_time = Some(-2.0);
        assert!(matches!(
            w.write(&r),
            Err(SwfError::Unwritable {
                field: SwfField::ThinkTime,
                ..
            })
        ));
        // Nothing was written for the refused records.
        let ok = SwfRecord::unknown(9);
        w.write(&ok).unwrap();
        let bytes = w.finish().unwrap();
        let back: Vec<SwfRecord> = SwfReader::new(bytes.as_slice())
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(back, vec![ok]);
    }

    #[test]
    fn writer_refuses_header_lines_with_line_breaks() {
        let mut h = SwfHeader::new();
        h.push_field(
            "Note",
            "x\n1 0 -1 1 1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1",
        );
        assert!(matches!(
            SwfWriter::new(Vec::new(), &h),
            Err(SwfError::HeaderLineBreak { .. })
        ));
        let mut h = SwfHeader::new();
        h.push_line(" Note: a\rb", 0);
        assert!(matches!(
            SwfWriter::new(Vec::new(), &h),
            Err(SwfError::HeaderLineBreak { .. })
        ));
    }

    #[test]
    fn non_utf8_lines_are_malformed_lines() {
        let good = "1 0 -1 10 4 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";
        let mut text = b"; Computer: M\xfcller\n".to_vec();
        text.extend_from_slice(good.as_bytes());
        text.extend_from_slice(b"2 0 -1 1\xff 4 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
        text.extend_from_slice(good.replace("1 0", "3 0").as_bytes());
        text.extend_from_slice(b"; M\xfcller again\n");
        text.extend_from_slice(good.replace("1 0", "4 0").as_bytes());

        // Strict: an error naming line 3, then reading goes on.
        let mut strict = SwfReader::new(text.as_slice()).unwrap();
        assert!(strict.header().get("Computer").is_some());
        let out: Vec<_> = strict.by_ref().collect();
        assert_eq!(out.len(), 4);
        assert!(matches!(out[1], Err(SwfError::NotUtf8 { line: 3 })));
        let jobs: Vec<u64> = out
            .iter()
            .filter_map(|r| r.as_ref().ok().map(|r| r.job_number))
            .collect();
        assert_eq!(jobs, vec![1, 3, 4]);

        // Lenient: skipped and counted.
        let mut lenient = SwfReader::new(text.as_slice()).unwrap().lenient(true);
        let jobs: Vec<u64> = lenient.by_ref().map(|r| r.unwrap().job_number).collect();
        assert_eq!(jobs, vec![1, 3, 4]);
        assert_eq!(lenient.skipped(), 1);

        // A first job line that is not UTF-8 ends the header.
        let mut first = b"\xff\xfe 0 -1\n".to_vec();
        first.extend_from_slice(good.as_bytes());
        let mut r = SwfReader::new(first.as_slice()).unwrap().lenient(true);
        assert_eq!(
            r.by_ref()
                .map(|x| x.unwrap().job_number)
                .collect::<Vec<_>>(),
            vec![1]
        );
        assert_eq!(r.skipped(), 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn write_read_round_trip(records in proptest::collection::vec(record(), 0..40)) {
            let mut h = SwfHeader::new();
            h.push_field("Version", "2.2");
            h.push_field("MaxNodes", "128");
            h.push_line("", 0);
            let mut w = SwfWriter::new(Vec::new(), &h).unwrap();
            for r in &records {
                w.write(r).unwrap();
            }
            let bytes = w.finish().unwrap();
            let mut rd = SwfReader::new(bytes.as_slice()).unwrap();
            let back: Vec<SwfRecord> = rd.by_ref().map(Result::unwrap).collect();
            prop_assert_eq!(&back, &records);
            prop_assert_eq!(rd.header(), &{
                let mut h2 = h.clone();
                // Line numbers are those of the written file.
                h2.fields.iter_mut().enumerate().for_each(|(i, f)| f.2 = i as u64 + 1);
                h2
            });
        }
    }
}
