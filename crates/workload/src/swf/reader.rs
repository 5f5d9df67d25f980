//! Streaming records and jobs out of a trace.

use std::io::{BufRead, Read as _};

use super::{MAX_LINE_BYTES, SwfError, SwfHeader, SwfRecord};
use crate::{Job, ShapeMapping};

/// A streaming reader of SWF records; see the [module docs](crate::swf).
///
/// A job line of plain numbers is read in one pass where the input's
/// buffer holds it (`super::fast`); every other line (comments, blank and
/// malformed lines, exponents, signs) is copied out and read as text by
/// [`SwfRecord::parse_line`], which gives the same record for a line both
/// paths read.
#[derive(Debug)]
pub struct SwfReader<R> {
    input: R,
    header: SwfHeader,
    // The bytes of the last line read by `read_line`.
    bytes: Vec<u8>,
    // Those bytes as text (decoded lossily when they are not UTF-8).
    buf: String,
    // A job line read while scanning the header, not yet returned.
    pending: bool,
    line: u64,
    lenient: bool,
    skipped: u64,
    done: bool,
    // The last line read is not UTF-8.
    invalid_utf8: bool,
    // The record of the last line read by the fast path.
    record: SwfRecord,
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
            record: SwfRecord::unknown(0),
        };
        loop {
            if !r.read_line()? {
                r.done = true;
                break;
            }
            r.decode();
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

    /// Reads the next line into `bytes`; `Ok(false)` at the end.
    fn read_line(&mut self) -> Result<bool, SwfError> {
        self.bytes.clear();
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
        Ok(true)
    }

    /// The line in `bytes` as text in `buf`. A line that is not UTF-8 is
    /// decoded lossily and sets `invalid_utf8`: a comment keeps its
    /// readable part, a job line is malformed (not a read error).
    fn decode(&mut self) {
        self.buf.clear();
        match core::str::from_utf8(&self.bytes) {
            Ok(s) => {
                self.invalid_utf8 = false;
                self.buf.push_str(s);
            }
            Err(_) => {
                self.invalid_utf8 = true;
                self.buf.push_str(&String::from_utf8_lossy(&self.bytes));
            }
        }
    }

    /// Reads the next line into `record` if it is a job line of plain
    /// numbers that the input's buffer holds whole, in place: `Ok(true)`;
    /// `Ok(false)`: read the line the general way, nothing consumed.
    #[inline]
    fn fast_record(&mut self) -> Result<bool, SwfError> {
        let avail = match self.input.fill_buf() {
            Ok(b) => b,
            // `read_until` retries.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(false),
            Err(source) => {
                return Err(SwfError::Io {
                    line: self.line + 1,
                    source,
                });
            }
        };
        match super::fast::scan(avail, false, &mut self.record) {
            // A line `read_line` would refuse as too long is left to it.
            Some(taken) if taken as u64 <= MAX_LINE_BYTES => {
                self.input.consume(taken);
                self.line += 1;
                Ok(true)
            }
            _ => Ok(false),
        }
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
            // A plain job line in the buffer becomes a job without passing
            // through the record iterator (what `SwfReader::next` would do
            // first).
            if !self.reader.pending && !self.reader.done {
                match self.reader.fast_record() {
                    Ok(true) => match self.reader.record.to_job(&self.mapping) {
                        Ok(j) => return Some(Ok(j)),
                        Err(_) if self.reader.lenient => {
                            self.reader.skipped += 1;
                            continue;
                        }
                        Err(e) => return Some(Err(e)),
                    },
                    Ok(false) => {}
                    Err(e) => {
                        self.reader.done = true;
                        return Some(Err(e));
                    }
                }
            }
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
                match self.fast_record() {
                    Ok(true) => return Some(Ok(self.record)),
                    Ok(false) => {}
                    Err(e) => {
                        self.done = true;
                        return Some(Err(e));
                    }
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
                // A plain line the buffer held only in part.
                if super::fast::scan(&self.bytes, true, &mut self.record).is_some() {
                    return Some(Ok(self.record));
                }
                self.decode();
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
