//! Resumable parameter sweeps written to CSV.
//!
//! A sweep is a declared list of points (a serde-serializable parameter
//! type `P`, e.g. `{ strategy, load }`). Each finished point is appended to
//! `<file>.partial` at once and flushed, so an interrupted run loses only
//! the points in flight. Reopening the sweep reads the partial file, drops
//! a torn last line, and reports which points are still
//! [`pending`](Sweep::pending); the parameters of a point are its key.
//! [`finish`](Sweep::finish) writes every row in the *declared* order
//! with [`write_atomic`]: the final file
//! exists only when complete, and its bytes do not depend on the order in
//! which points finished or on how often the sweep was interrupted.
//!
//! Each row is the parameter fields followed by the result fields (any
//! serde-serializable `M`, e.g. a struct holding a
//! [`ConfidenceInterval`](crate::ConfidenceInterval)'s fields); the header
//! comes from the field names. Floats are written in their shortest
//! round-trip form, so a point read back compares equal.
//!
//! For points computed in parallel, send results to one thread that owns
//! the `Sweep` (or wrap it in a `Mutex`); [`append`](Sweep::append) takes
//! `&mut self`.
//!
//! ```
//! use partalloc_simkit::Sweep;
//! use serde::Serialize;
//!
//! #[derive(Serialize)]
//! struct Point { strategy: &'static str, load: f64 }
//! #[derive(Serialize)]
//! struct Result { response: f64 }
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("fig.csv");
//! let points = vec![
//!     Point { strategy: "buddy", load: 0.3 },
//!     Point { strategy: "buddy", load: 0.6 },
//! ];
//! let mut sweep = Sweep::open(&path, points)?;
//! let todo: Vec<usize> = sweep.pending().collect();
//! for i in todo {
//!     let load = sweep.points()[i].load;
//!     sweep.append_index(i, &Result { response: 1.0 / (1.0 - load) })?;
//! }
//! sweep.finish()?;
//! assert_eq!(
//!     std::fs::read_to_string(&path)?,
//!     "strategy,load,response\nbuddy,0.3,1.4285714285714286\nbuddy,0.6,2.5\n"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use csv::StringRecord;
use serde::Serialize;
use thiserror::Error;

use crate::atomic::write_atomic;

/// Why a sweep could not be opened, extended or finished.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SweepError {
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A value could not be serialized to (or a file parsed as) CSV.
    #[error("{context}: {source}")]
    Csv {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: csv::Error,
    },
    /// The sweep declares no points.
    #[error("a sweep needs at least one point")]
    NoPoints,
    /// Two declared points have the same parameters.
    #[error(
        "points {first} and {second} have the same parameters ({key}); each point must be distinct"
    )]
    DuplicatePoint {
        /// Index of the first occurrence.
        first: usize,
        /// Index of the repeat.
        second: usize,
        /// The parameters, comma-separated.
        key: String,
    },
    /// The file on disk (or a result) has other columns than this sweep.
    #[error(
        "{path}: columns [{found}] do not match this sweep's [{expected}]; move the file away or use another name"
    )]
    HeaderMismatch {
        /// The file.
        path: PathBuf,
        /// The sweep's columns.
        expected: String,
        /// The columns found.
        found: String,
    },
    /// A line of the file on disk is damaged.
    #[error("{path}: line {line}: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        reason: String,
    },
    /// A row on disk, or a point passed to `append`, is not one of the
    /// declared points.
    #[error("point ({key}) is not part of this sweep{}", .line.map(|l| format!(" (line {l} of the file on disk)")).unwrap_or_default())]
    UnknownPoint {
        /// The parameters, comma-separated.
        key: String,
        /// The line on disk, when the row came from a file.
        line: Option<u64>,
    },
    /// The point already has a row.
    #[error("point ({key}) already has a result")]
    AlreadyDone {
        /// The parameters, comma-separated.
        key: String,
    },
    /// `finish` was called with points still pending.
    #[error("{missing} of {total} points have no result yet; run them before finishing")]
    Incomplete {
        /// Points without a result.
        missing: usize,
        /// All points.
        total: usize,
    },
}

/// Serializes `value` as one CSV row; returns (header, fields).
fn to_record<T: Serialize>(value: &T) -> Result<(StringRecord, StringRecord), SweepError> {
    let csv_err = |source| SweepError::Csv {
        context: "cannot serialize a sweep row".to_owned(),
        source,
    };
    let mut w = csv::WriterBuilder::new()
        .has_headers(true)
        .from_writer(Vec::new());
    w.serialize(value).map_err(csv_err)?;
    let bytes = w.into_inner().map_err(|e| SweepError::Io {
        path: PathBuf::new(),
        source: io::Error::other(e.to_string()),
    })?;
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes.as_slice());
    let mut recs = r.records();
    let mut next = || -> Result<StringRecord, SweepError> {
        recs.next()
            .ok_or_else(|| {
                csv_err(csv::Error::from(io::Error::other(
                    "a row must serialize to a header and one record",
                )))
            })?
            .map_err(csv_err)
    };
    let first = next()?;
    // Structs give a header line; plain tuples and scalars do not.
    match next() {
        Ok(second) => Ok((first, second)),
        Err(_) => Ok((StringRecord::new(), first)),
    }
}

fn join(rec: &StringRecord) -> String {
    rec.iter().collect::<Vec<_>>().join(",")
}

/// Key under which a point is indexed: its fields joined by a separator
/// that cannot occur unescaped in CSV text.
fn key_of<'a>(fields: impl IntoIterator<Item = &'a str>) -> String {
    let mut k = String::new();
    for (i, f) in fields.into_iter().enumerate() {
        if i > 0 {
            k.push('\u{1f}');
        }
        k.push_str(f);
    }
    k
}

/// Where the rows already on disk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Nothing,
    Partial,
    Final,
}

/// A declared list of points whose results go to one CSV file, resumable
/// after interruption. See the [module docs](self).
#[derive(Debug)]
pub struct Sweep<P> {
    path: PathBuf,
    partial: PathBuf,
    points: Vec<P>,
    point_header: StringRecord,
    keys: Vec<StringRecord>,
    index: HashMap<String, usize>,
    rows: Vec<Option<StringRecord>>,
    header: Option<StringRecord>,
    source: Source,
    appended: bool,
    writer: Option<csv::Writer<File>>,
}

impl<P: Serialize> Sweep<P> {
    /// Opens the sweep writing to `path`, resuming from `<path>.partial` if
    /// it exists (else from a finished `path`, whose points then count as
    /// done).
    ///
    /// # Errors
    /// [`SweepError::NoPoints`], [`SweepError::DuplicatePoint`] for bad
    /// declarations; [`SweepError::HeaderMismatch`],
    /// [`SweepError::Corrupt`] or [`SweepError::UnknownPoint`] if the file
    /// on disk belongs to another sweep; [`SweepError::Io`] for file errors.
    /// A torn last line in the partial file (from an interrupted write) is
    /// not an error: it is dropped and its point runs again.
    pub fn open(path: impl AsRef<Path>, points: Vec<P>) -> Result<Self, SweepError> {
        let path = path.as_ref().to_path_buf();
        let mut partial = path.clone().into_os_string();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        if points.is_empty() {
            return Err(SweepError::NoPoints);
        }
        let mut keys = Vec::with_capacity(points.len());
        let mut index = HashMap::with_capacity(points.len());
        let mut point_header = StringRecord::new();
        for (i, p) in points.iter().enumerate() {
            let (h, rec) = to_record(p)?;
            if i == 0 {
                point_header = h;
            }
            let k = key_of(rec.iter());
            if let Some(&first) = index.get(&k) {
                return Err(SweepError::DuplicatePoint {
                    first,
                    second: i,
                    key: join(&rec),
                });
            }
            index.insert(k, i);
            keys.push(rec);
        }
        let n = points.len();
        let mut sweep = Self {
            path,
            partial,
            points,
            point_header,
            keys,
            index,
            rows: vec![None; n],
            header: None,
            source: Source::Nothing,
            appended: false,
            writer: None,
        };
        // Only regular files hold earlier results: a device, FIFO or
        // terminal named as the output is written to, never read (reading
        // a FIFO blocks until someone writes to it, /dev/zero never ends).
        if sweep.partial.is_file() {
            sweep.source = Source::Partial;
            sweep.load(&sweep.partial.clone(), true)?;
        } else if sweep.path.is_file() {
            sweep.source = Source::Final;
            sweep.load(&sweep.path.clone(), false)?;
        }
        Ok(sweep)
    }

    /// Reads rows from `file`; with `repair`, cuts a torn last line off.
    fn load(&mut self, file: &Path, repair: bool) -> Result<(), SweepError> {
        let io_err = |source| SweepError::Io {
            path: file.to_path_buf(),
            source,
        };
        let bytes = fs::read(file).map_err(io_err)?;
        let complete = match bytes.iter().rposition(|&b| b == b'\n') {
            Some(i) => i + 1,
            None => 0,
        };
        if complete < bytes.len() {
            if !repair {
                return Err(SweepError::Corrupt {
                    path: file.to_path_buf(),
                    line: bytes.iter().filter(|&&b| b == b'\n').count() as u64 + 1,
                    reason: "the last line is incomplete".to_owned(),
                });
            }
            let f = OpenOptions::new().write(true).open(file).map_err(io_err)?;
            f.set_len(complete as u64).map_err(io_err)?;
            f.sync_all().map_err(io_err)?;
        }
        let text = bytes.get(..complete).unwrap_or_default();
        if text.is_empty() {
            return Ok(());
        }
        let mut r = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .from_reader(text);
        let csv_err = |source| SweepError::Csv {
            context: format!("cannot read {}", file.display()),
            source,
        };
        let header = r.headers().map_err(csv_err)?.clone();
        let k = self.point_header.len();
        let header_ok = header.len() >= k
            && header.iter().take(k).eq(self.point_header.iter())
            && (self.point_header.is_empty() || header.len() > k);
        if !header_ok {
            return Err(SweepError::HeaderMismatch {
                path: file.to_path_buf(),
                expected: format!("{}, …", join(&self.point_header)),
                found: join(&header),
            });
        }
        for rec in r.records() {
            let rec = rec.map_err(csv_err)?;
            let line = rec.position().map_or(0, csv::Position::line);
            if rec.len() != header.len() {
                return Err(SweepError::Corrupt {
                    path: file.to_path_buf(),
                    line,
                    reason: format!("{} fields, the header has {}", rec.len(), header.len()),
                });
            }
            let key = key_of(
                rec.iter()
                    .take(self.keys.first().map_or(0, StringRecord::len)),
            );
            let Some(&i) = self.index.get(&key) else {
                return Err(SweepError::UnknownPoint {
                    key: key.replace('\u{1f}', ","),
                    line: Some(line),
                });
            };
            let Some(slot) = self.rows.get_mut(i) else {
                continue;
            };
            if slot.is_some() {
                return Err(SweepError::Corrupt {
                    path: file.to_path_buf(),
                    line,
                    reason: "a second row for the same point".to_owned(),
                });
            }
            *slot = Some(rec);
        }
        self.header = Some(header);
        Ok(())
    }

    /// The file the finished sweep is written to.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file finished points are appended to while the sweep runs.
    #[must_use]
    pub fn partial_path(&self) -> &Path {
        &self.partial
    }

    /// The declared points.
    #[must_use]
    pub fn points(&self) -> &[P] {
        &self.points
    }

    /// Indices of the points without a result, in declared order.
    pub fn pending(&self) -> impl Iterator<Item = usize> + '_ {
        self.rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.is_none().then_some(i))
    }

    /// Number of points with a result.
    #[must_use]
    pub fn done_count(&self) -> usize {
        self.rows.iter().filter(|r| r.is_some()).count()
    }

    /// Whether point `i` has a result.
    #[must_use]
    pub fn is_done(&self, i: usize) -> bool {
        self.rows.get(i).is_some_and(Option::is_some)
    }

    /// Records the result of `point` (one of the declared points, matched
    /// by its parameters) and appends it to the partial file, flushed.
    ///
    /// # Errors
    /// [`SweepError::UnknownPoint`], [`SweepError::AlreadyDone`],
    /// [`SweepError::HeaderMismatch`] (result columns differ from earlier
    /// rows), [`SweepError::Io`]/[`SweepError::Csv`]. On error nothing is
    /// recorded.
    pub fn append<M: Serialize>(&mut self, point: &P, result: &M) -> Result<(), SweepError> {
        let (_, rec) = to_record(point)?;
        let key = key_of(rec.iter());
        let i = *self
            .index
            .get(&key)
            .ok_or_else(|| SweepError::UnknownPoint {
                key: join(&rec),
                line: None,
            })?;
        self.append_index(i, result)
    }

    /// Records the result of declared point `i`; see [`append`](Self::append).
    ///
    /// # Errors
    /// As [`append`](Self::append).
    pub fn append_index<M: Serialize>(&mut self, i: usize, result: &M) -> Result<(), SweepError> {
        let Some(key) = self.keys.get(i) else {
            return Err(SweepError::UnknownPoint {
                key: format!("index {i}"),
                line: None,
            });
        };
        if self.rows.get(i).is_some_and(Option::is_some) {
            return Err(SweepError::AlreadyDone { key: join(key) });
        }
        let (mh, mrec) = to_record(result)?;
        let mut header = self.point_header.clone();
        header.extend(mh.iter());
        let mut row = key.clone();
        row.extend(mrec.iter());
        match &self.header {
            Some(h) if *h != header => {
                return Err(SweepError::HeaderMismatch {
                    path: self.partial.clone(),
                    expected: join(h),
                    found: join(&header),
                });
            }
            _ => {}
        }
        if row.len() != header.len() {
            return Err(SweepError::HeaderMismatch {
                path: self.partial.clone(),
                expected: join(&header),
                found: join(&row),
            });
        }
        self.write_partial(&header, &row)?;
        self.header = Some(header);
        if let Some(slot) = self.rows.get_mut(i) {
            *slot = Some(row);
        }
        self.appended = true;
        Ok(())
    }

    fn write_partial(
        &mut self,
        header: &StringRecord,
        row: &StringRecord,
    ) -> Result<(), SweepError> {
        let partial = self.partial.clone();
        let csv_err = |source| SweepError::Csv {
            context: format!("cannot write {}", partial.display()),
            source,
        };
        if self.writer.is_none() {
            let io_err = |source| SweepError::Io {
                path: partial.clone(),
                source,
            };
            // Start a fresh partial file unless we resume one that has its
            // header; a resumed finished file is copied in first.
            let resume = self.source == Source::Partial && self.header.is_some();
            let file = if resume {
                OpenOptions::new()
                    .append(true)
                    .open(&partial)
                    .map_err(io_err)?
            } else {
                File::create(&partial).map_err(io_err)?
            };
            let mut w = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(file);
            if !resume {
                w.write_record(header).map_err(csv_err)?;
                for r in self.rows.iter().flatten() {
                    w.write_record(r).map_err(csv_err)?;
                }
            }
            self.source = Source::Partial;
            self.writer = Some(w);
        }
        if let Some(w) = &mut self.writer {
            w.write_record(row).map_err(csv_err)?;
            w.flush().map_err(|source| SweepError::Io {
                path: partial.clone(),
                source,
            })?;
        }
        Ok(())
    }

    /// Writes every row in declared order to the final file (atomically,
    /// with [`write_atomic`]) and removes the partial file.
    /// Returns the final file's path.
    ///
    /// # Errors
    /// [`SweepError::Incomplete`] while points are pending (nothing is
    /// written); [`SweepError::Io`]/[`SweepError::Csv`] for file errors.
    pub fn finish(&mut self) -> Result<&Path, SweepError> {
        let missing = self.rows.iter().filter(|r| r.is_none()).count();
        if missing > 0 {
            return Err(SweepError::Incomplete {
                missing,
                total: self.rows.len(),
            });
        }
        if self.source == Source::Final && !self.appended {
            return Ok(&self.path);
        }
        self.writer = None;
        let path = self.path.clone();
        let csv_err = |source| SweepError::Csv {
            context: format!("cannot write {}", path.display()),
            source,
        };
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        if let Some(h) = &self.header {
            w.write_record(h).map_err(csv_err)?;
        }
        for r in self.rows.iter().flatten() {
            w.write_record(r).map_err(csv_err)?;
        }
        let bytes = w.into_inner().map_err(|e| SweepError::Io {
            path: path.clone(),
            source: io::Error::other(e.to_string()),
        })?;
        write_atomic(&path, &bytes).map_err(|source| SweepError::Io { path, source })?;
        if self.partial.exists() {
            fs::remove_file(&self.partial).map_err(|source| SweepError::Io {
                path: self.partial.clone(),
                source,
            })?;
        }
        self.source = Source::Final;
        self.appended = false;
        Ok(&self.path)
    }
}

/// Why [`Sweep::run_pending`] stopped.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SweepRunError<E> {
    /// Computing a point failed.
    #[error("point {index}: {error}")]
    Point {
        /// The point's index in the declaration.
        index: usize,
        /// The computation's error.
        error: E,
    },
    /// Recording a result failed.
    #[error(transparent)]
    Sweep(#[from] SweepError),
}

impl<P: Serialize + Send + Sync> Sweep<P> {
    /// Computes every pending point with `f` in parallel on rayon's current
    /// pool (in declared order on the calling thread without the `parallel`
    /// feature), appending each result (flushed) as soon as it is ready.
    /// Does not [`finish`](Self::finish) the sweep.
    ///
    /// On the first error no new points are started; the points already
    /// appended stay on disk, so running again resumes. Which error is
    /// reported when several points fail at once depends on timing; the
    /// file's content does not.
    ///
    /// # Errors
    /// [`SweepRunError::Point`] if `f` fails, [`SweepRunError::Sweep`] if a
    /// result cannot be recorded.
    pub fn run_pending<M, E, F>(&mut self, f: F) -> Result<(), SweepRunError<E>>
    where
        M: Serialize,
        E: Send,
        F: Fn(usize, &P) -> Result<M, E> + Sync,
    {
        #[cfg(feature = "parallel")]
        use rayon::prelude::*;
        use std::sync::Mutex;

        let pending: Vec<usize> = self.pending().collect();
        // The points are read by the workers while results are appended,
        // so they are moved out for the run and put back afterwards.
        let points = std::mem::take(&mut self.points);
        let sink = Mutex::new(&mut *self);
        let record = |&i: &usize| {
            let Some(point) = points.get(i) else {
                return Ok(());
            };
            let m = f(i, point).map_err(|error| SweepRunError::Point { index: i, error })?;
            let mut sweep = sink.lock().map_err(|_| {
                SweepRunError::Sweep(SweepError::Io {
                    path: PathBuf::new(),
                    source: io::Error::other("a worker panicked while appending"),
                })
            })?;
            sweep.append_index(i, &m)?;
            Ok(())
        };
        #[cfg(feature = "parallel")]
        let result = pending.par_iter().try_for_each(record);
        #[cfg(not(feature = "parallel"))]
        let result = pending.iter().try_for_each(record);
        self.points = points;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::io::Write as _;

    #[derive(Debug, Clone, Serialize)]
    struct Pt {
        strategy: String,
        load: f64,
    }

    #[derive(Serialize)]
    struct Res {
        mean: f64,
        half_width: Option<f64>,
        n: u64,
    }

    fn points() -> Vec<Pt> {
        let mut v = Vec::new();
        for s in ["buddy", "gray, code", "partner \"p\""] {
            for i in 1..=6 {
                v.push(Pt {
                    strategy: s.to_owned(),
                    load: f64::from(i) / 10.0,
                });
            }
        }
        v
    }

    /// A deterministic stand-in for an expensive simulation of a point.
    fn compute(p: &Pt) -> Res {
        Res {
            mean: p.load / (1.0 - p.load) + p.strategy.len() as f64 / 3.0,
            half_width: if p.load > 0.5 {
                None
            } else {
                Some(p.load / 7.0)
            },
            n: 10,
        }
    }

    fn run_all(path: &Path, stop_after: Option<usize>, reverse: bool) -> Result<bool, SweepError> {
        let mut sweep = Sweep::open(path, points())?;
        let mut todo: Vec<usize> = sweep.pending().collect();
        if reverse {
            todo.reverse();
        }
        for (done, i) in todo.into_iter().enumerate() {
            if stop_after == Some(done) {
                return Ok(false); // "killed": no finish
            }
            let p = sweep.points()[i].clone();
            sweep.append(&p, &compute(&p))?;
        }
        sweep.finish()?;
        Ok(true)
    }

    #[test]
    fn interrupted_and_resumed_equals_uninterrupted() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        assert!(run_all(&a, None, false).unwrap());
        let want = fs::read(&a).unwrap();
        assert!(!dir.path().join("a.csv.partial").exists());

        let b = dir.path().join("b.csv");
        let bp = dir.path().join("b.csv.partial");
        // First run: 5 points, then killed.
        assert!(!run_all(&b, Some(5), true).unwrap());
        assert!(
            !b.exists(),
            "an interrupted sweep must not leave the final file"
        );
        // Simulate a kill in the middle of a write: a torn line.
        let mut f = OpenOptions::new().append(true).open(&bp).unwrap();
        f.write_all(b"partner \"\"p\"\"\",0.1,12.").unwrap();
        drop(f);
        {
            let s = Sweep::open(&b, points()).unwrap();
            assert_eq!(s.done_count(), 5);
        }
        // Second run: 4 more, killed again; third run completes.
        assert!(!run_all(&b, Some(4), false).unwrap());
        assert_eq!(Sweep::open(&b, points()).unwrap().done_count(), 9);
        assert!(run_all(&b, None, false).unwrap());
        assert_eq!(fs::read(&b).unwrap(), want);
        assert!(!bp.exists());
        // Reopening a finished sweep: nothing pending, finish is a no-op.
        let mut s = Sweep::open(&b, points()).unwrap();
        assert_eq!(s.pending().count(), 0);
        s.finish().unwrap();
        assert_eq!(fs::read(&b).unwrap(), want);
    }

    #[test]
    fn parallel_run_with_failure_then_resume() {
        let dir = tempfile::tempdir().unwrap();
        let want = dir.path().join("w.csv");
        run_all(&want, None, false).unwrap();
        let p = dir.path().join("par.csv");
        let pool = crate::thread_pool(3).unwrap();
        // First run: point 7 fails; the others may or may not have run.
        let mut s = Sweep::open(&p, points()).unwrap();
        let e = pool
            .install(|| s.run_pending(|i, q| if i == 7 { Err("boom") } else { Ok(compute(q)) }))
            .unwrap_err();
        assert_eq!(e.to_string(), "point 7: boom");
        assert!(!s.is_done(7));
        assert_eq!(s.points().len(), 18);
        drop(s);
        // Second run completes; the file equals the sequential one.
        let mut s = Sweep::open(&p, points()).unwrap();
        pool.install(|| s.run_pending(|_, q| Ok::<_, String>(compute(q))))
            .unwrap();
        s.finish().unwrap();
        assert_eq!(fs::read(&p).unwrap(), fs::read(&want).unwrap());
    }

    #[test]
    fn final_file_content_and_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("o.csv");
        run_all(&p, None, true).unwrap(); // computed in reverse order
        let text = fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "strategy,load,mean,half_width,n");
        // Rows in declared order, whatever the completion order; floats in
        // shortest round-trip form, `None` as an empty field, quoting only
        // where needed.
        let r = compute(&points()[0]);
        assert_eq!(
            lines[1],
            format!("buddy,0.1,{},{},10", r.mean, r.half_width.unwrap())
        );
        let r = compute(&points()[5]);
        assert_eq!(lines[6], format!("buddy,0.6,{},,10", r.mean));
        let r = compute(&points()[6]);
        assert_eq!(
            lines[7],
            format!("\"gray, code\",0.1,{},{},10", r.mean, r.half_width.unwrap())
        );
        let r = compute(&points()[17]);
        assert_eq!(
            lines[18],
            format!("\"partner \"\"p\"\"\",0.6,{},,10", r.mean)
        );
        assert_eq!(lines.len(), 19);
    }

    #[test]
    fn finished_sweep_extended_with_new_points() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.csv");
        let few: Vec<Pt> = points().into_iter().take(3).collect();
        let mut s = Sweep::open(&p, few.clone()).unwrap();
        for q in &few {
            s.append(q, &compute(q)).unwrap();
        }
        s.finish().unwrap();
        // Same file, more points: the old rows count as done.
        let mut s = Sweep::open(&p, points()).unwrap();
        assert_eq!(s.done_count(), 3);
        assert_eq!(s.pending().next(), Some(3));
        for i in s.pending().collect::<Vec<_>>() {
            let q = s.points()[i].clone();
            s.append_index(i, &compute(&q)).unwrap();
        }
        s.finish().unwrap();
        let q = dir.path().join("y.csv");
        run_all(&q, None, false).unwrap();
        assert_eq!(fs::read(&p).unwrap(), fs::read(&q).unwrap());
    }

    #[test]
    fn errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("e.csv");
        assert!(matches!(
            Sweep::<Pt>::open(&p, vec![]),
            Err(SweepError::NoPoints)
        ));
        let mut dup = points();
        dup.push(dup[2].clone());
        let e = Sweep::open(&p, dup).unwrap_err();
        assert_eq!(
            e.to_string(),
            "points 2 and 18 have the same parameters (buddy,0.3); each point must be distinct"
        );
        let mut s = Sweep::open(&p, points()).unwrap();
        let stranger = Pt {
            strategy: "etc".into(),
            load: 0.5,
        };
        assert_eq!(
            s.append(&stranger, &compute(&stranger))
                .unwrap_err()
                .to_string(),
            "point (etc,0.5) is not part of this sweep"
        );
        let first = points()[0].clone();
        s.append(&first, &compute(&first)).unwrap();
        assert!(matches!(
            s.append(&first, &compute(&first)),
            Err(SweepError::AlreadyDone { .. })
        ));
        // Different result columns for a later point.
        let second = points()[1].clone();
        assert!(matches!(
            s.append(&second, &(1.0, 2.0)),
            Err(SweepError::HeaderMismatch { .. })
        ));
        assert!(matches!(
            s.finish(),
            Err(SweepError::Incomplete {
                missing: 17,
                total: 18
            })
        ));
        assert!(!p.exists());
        drop(s);
        // A sweep with other parameters refuses the partial file.
        #[derive(Debug, Serialize)]
        struct Other {
            size: u32,
        }
        let e = Sweep::open(&p, vec![Other { size: 3 }]).unwrap_err();
        assert!(matches!(e, SweepError::HeaderMismatch { .. }), "{e}");
        // A partial file with a row of a point no longer declared.
        let e = Sweep::open(&p, points().into_iter().skip(1).collect()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "point (buddy,0.1) is not part of this sweep (line 2 of the file on disk)"
        );
        // A damaged row in the middle.
        fs::write(
            dir.path().join("e.csv.partial"),
            "strategy,load,mean,half_width,n\nbuddy,0.1,1,2\nbuddy,0.2,1,2,3\n",
        )
        .unwrap();
        let e = Sweep::open(&p, points()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: line 2: 4 fields, the header has 5",
                dir.path().join("e.csv.partial").display()
            )
        );
    }
}
