//! Writing a header and records as a trace.

use std::io::{self, Write};

use super::{SwfError, SwfHeader, SwfRecord};

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
    /// break (nothing is written then); [`SwfError::Write`] for an error of
    /// `out`.
    pub fn new(mut out: W, header: &SwfHeader) -> Result<Self, SwfError> {
        if let Some(l) = header.lines().iter().find(|l| l.contains(['\n', '\r'])) {
            return Err(SwfError::HeaderLineBreak {
                text: partalloc_topology::echo(l),
            });
        }
        for (i, l) in header.lines().iter().enumerate() {
            writeln!(out, ";{l}").map_err(|source| SwfError::Write {
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
    /// then); [`SwfError::Write`] for an error of the output.
    pub fn write(&mut self, record: &SwfRecord) -> Result<(), SwfError> {
        record.check_writable()?;
        self.line.clear();
        let line = self.written + 1;
        record
            .write_line(&mut self.line)
            .map_err(|_| SwfError::Write {
                line,
                source: io::Error::other("cannot format an SWF record"),
            })?;
        self.line.push('\n');
        self.out
            .write_all(self.line.as_bytes())
            .map_err(|source| SwfError::Write { line, source })?;
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
