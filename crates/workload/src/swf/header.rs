//! The comment header of a trace.

use super::SwfError;

/// The comment header of a trace: its lines verbatim, and the
/// `; Key: value` pairs parsed from them (continuation lines appended to
/// the previous value with a newline).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SwfHeader {
    lines: Vec<String>,
    pub(super) fields: Vec<(String, String, u64)>,
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
            key: partalloc_topology::echo(key),
            value: partalloc_topology::echo(v),
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
