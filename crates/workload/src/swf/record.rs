//! One job line: parsing, printing and conversion to a job.

use core::fmt;

use super::{SwfError, SwfField};
use crate::{Job, ShapeMapping};

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
        // `split_ascii_whitespace` by hand: the byte loop is the hot part of
        // reading a trace. Both ends of a token are at ASCII bytes or the
        // end of the text, so the slices fall on character boundaries.
        let b = text.as_bytes();
        let mut i = 0;
        loop {
            while b.get(i).is_some_and(u8::is_ascii_whitespace) {
                i += 1;
            }
            if i >= b.len() {
                break;
            }
            let start = i;
            while b.get(i).is_some_and(|c| !c.is_ascii_whitespace()) {
                i += 1;
            }
            if let Some(slot) = toks.get_mut(found) {
                *slot = text.get(start..i).unwrap_or_default();
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
        let above = |field, t: &str, reason| SwfError::Field {
            line,
            field,
            value: partalloc_topology::echo(t),
            reason,
        };
        // Times and counts whose products with each other would overflow
        // are refused here, with the line, rather than as infinite sums.
        let time = |field, t| match real(field, t)? {
            Some(v) if v > super::MAX_SECONDS => Err(above(
                field,
                t,
                "is above 1e12 seconds (about 31,700 years), the largest time accepted",
            )),
            v => Ok(v),
        };
        let count = |field, t| match int(field, t)? {
            Some(v) if v > super::MAX_PROCESSORS => Err(above(
                field,
                t,
                "is above 2^40 (1099511627776), the largest processor count accepted",
            )),
            v => Ok(v),
        };
        let job_number = int(SwfField::JobNumber, t1)?.ok_or_else(|| SwfError::Field {
            line,
            field: SwfField::JobNumber,
            value: partalloc_topology::echo(t1),
            reason: "must be known: every job needs a number",
        })?;
        Ok(Self {
            job_number,
            submit_time: time(SwfField::SubmitTime, t2)?,
            wait_time: time(SwfField::WaitTime, t3)?,
            run_time: time(SwfField::RunTime, t4)?,
            allocated_processors: count(SwfField::AllocatedProcessors, t5)?,
            average_cpu_time: time(SwfField::AverageCpuTime, t6)?,
            used_memory: real(SwfField::UsedMemory, t7)?,
            requested_processors: count(SwfField::RequestedProcessors, t8)?,
            requested_time: time(SwfField::RequestedTime, t9)?,
            requested_memory: real(SwfField::RequestedMemory, t10)?,
            status: int(SwfField::Status, t11)?,
            user_id: int(SwfField::UserId, t12)?,
            group_id: int(SwfField::GroupId, t13)?,
            executable: int(SwfField::Executable, t14)?,
            queue: int(SwfField::Queue, t15)?,
            partition: int(SwfField::Partition, t16)?,
            preceding_job: int(SwfField::PrecedingJob, t17)?,
            think_time: time(SwfField::ThinkTime, t18)?,
        })
    }

    /// The 18 fields in SWF order, exactly: counts as they are, times and
    /// sizes as the bits of their `f64` (so 0 and −0, or two NaNs, are told
    /// apart), `None` for an unknown field. Two records read from the same
    /// line by different paths compare equal here exactly when every field
    /// is the same value.
    ///
    /// ```
    /// use partalloc_workload::swf::SwfRecord;
    /// let a = SwfRecord::parse_line("1 0 -1 10 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1", 1)?;
    /// let b = SwfRecord::parse_line("1 -0 -1 10 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1", 1)?;
    /// assert_eq!(a.field_bits()[0], Some(1));
    /// assert_ne!(a.field_bits(), b.field_bits());
    /// # Ok::<(), partalloc_workload::swf::SwfError>(())
    /// ```
    #[must_use]
    pub fn field_bits(&self) -> [Option<u64>; 18] {
        let real = |v: Option<f64>| v.map(f64::to_bits);
        [
            Some(self.job_number),
            real(self.submit_time),
            real(self.wait_time),
            real(self.run_time),
            self.allocated_processors,
            real(self.average_cpu_time),
            real(self.used_memory),
            self.requested_processors,
            real(self.requested_time),
            real(self.requested_memory),
            self.status,
            self.user_id,
            self.group_id,
            self.executable,
            self.queue,
            self.partition,
            self.preceding_job,
            real(self.think_time),
        ]
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
    #[inline(always)]
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
        Ok(Job::new(job, arrival, shape, service).with_estimate(self.requested_time))
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
    /// back as this record: every known real value finite and at least 0,
    /// times at most [`MAX_SECONDS`](super::MAX_SECONDS) and processor
    /// counts at most [`MAX_PROCESSORS`](super::MAX_PROCESSORS).
    ///
    /// # Errors
    /// [`SwfError::Unwritable`] for the first value that is not.
    pub fn check_writable(&self) -> Result<(), SwfError> {
        let counts = [
            (SwfField::AllocatedProcessors, self.allocated_processors),
            (SwfField::RequestedProcessors, self.requested_processors),
        ];
        for (field, count) in counts {
            if let Some(c) = count.filter(|&c| c > super::MAX_PROCESSORS) {
                return Err(SwfError::Unwritable {
                    job: self.job_number,
                    field,
                    value: c as f64,
                    reason: "counts above 2^40 are refused when read",
                });
            }
        }
        for (field, value) in self.reals() {
            let Some(v) = value else { continue };
            let is_time = !matches!(field, SwfField::UsedMemory | SwfField::RequestedMemory);
            let reason = if v.is_nan() || v.is_infinite() {
                "only finite numbers can be written"
            } else if v < 0.0 {
                "a negative value would read back as unknown (-1) or be refused; use None for unknown"
            } else if is_time && v > super::MAX_SECONDS {
                "times above 1e12 seconds are refused when read"
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

/// The value of `t` if it is 1 to `max_digits` ASCII digits and nothing
/// else: the common case of an SWF field, read without the general
/// parsers. Callers pick `max_digits` so the value cannot overflow (and,
/// for real fields, stays below 2^53, where every integer is an `f64`).
#[inline]
fn plain_digits(t: &str, max_digits: usize) -> Option<u64> {
    let b = t.as_bytes();
    if b.is_empty() || b.len() > max_digits {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    Some(v)
}

/// Digits below 10^19 < 2^64.
const INT_FAST_DIGITS: usize = 19;
/// Digits below 10^15 < 2^53.
const REAL_FAST_DIGITS: usize = 15;

fn int_field(t: &str, field: SwfField, line: u64) -> Result<Option<u64>, SwfError> {
    if let Some(v) = plain_digits(t, INT_FAST_DIGITS) {
        return Ok(Some(v));
    }
    let err = |reason| SwfError::Field {
        line,
        field,
        value: partalloc_topology::echo(t),
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
    // Whole seconds and −1 are most of an archive trace: read them as
    // integers. Below 2^53 the integer is exactly the `f64` that
    // `f64::from_str` gives for the same digits.
    if let Some(v) = plain_digits(t, REAL_FAST_DIGITS) {
        return Ok(Some(v as f64));
    }
    if t == "-1" {
        return Ok(None);
    }
    let err = |reason| SwfError::Field {
        line,
        field,
        value: partalloc_topology::echo(t),
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The field parsers as they were before the integer fast paths: every
    /// integer field through `u64::from_str`, every real field through
    /// `f64::from_str`. The oracle for the fast paths.
    fn int_field_reference(t: &str) -> Result<Option<u64>, &'static str> {
        if t == "-1" {
            return Ok(None);
        }
        if t.starts_with('-') {
            return Err("is negative; only -1 marks an unknown value");
        }
        t.parse::<u64>()
            .map(Some)
            .map_err(|_| "is not a whole number")
    }

    fn real_field_reference(t: &str) -> Result<Option<f64>, &'static str> {
        if !t
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            return Err("is not a number");
        }
        let v: f64 = t.parse().map_err(|_| "is not a number")?;
        if !v.is_finite() {
            return Err("is not a finite number");
        }
        if v == -1.0 {
            return Ok(None);
        }
        if v < 0.0 {
            return Err("is negative; only -1 marks an unknown value");
        }
        Ok(Some(v))
    }

    /// The reason of a field error, to compare with the reference.
    fn reason<T>(r: Result<T, SwfError>) -> Result<T, &'static str> {
        r.map_err(|e| match e {
            SwfError::Field { reason, .. } => reason,
            _ => "another error",
        })
    }

    /// Field text: mostly digits (up to 25, around the fast paths' limits
    /// and past `u64`), with signs, points, exponents, letters and
    /// multi-byte characters mixed in.
    fn field_text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[0-9]{1,25}",
            "-?[0-9]{0,20}",
            "[+-]?[0-9]{0,17}(\\.[0-9]{0,17})?([eE][+-]?[0-9]{1,3})?",
            "[0-9+.eE-]{0,12}",
            "(-1|-1\\.0|-0|0|00|-|\\+|\\+1|1e400|inf|NaN|18446744073709551615|18446744073709551616|9007199254740993)",
            "[0-9a-zé.+-]{0,8}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// The integer fast paths accept and refuse exactly what the
        /// general parsers did, with the same values and reasons.
        #[test]
        fn fast_paths_agree_with_the_reference_parsers(t in field_text()) {
            let int = reason(int_field(&t, SwfField::Status, 1));
            prop_assert_eq!(int, int_field_reference(&t));
            let real = reason(real_field(&t, SwfField::RunTime, 1));
            let expected = real_field_reference(&t);
            // Compare bits: -0 and 0 must stay apart.
            prop_assert_eq!(real.map(|v| v.map(f64::to_bits)), expected.map(|v| v.map(f64::to_bits)));
        }
    }

    #[test]
    fn fast_path_limits_read_exactly() {
        let big = "999999999999999"; // 15 digits: the last real fast-path length
        assert_eq!(
            real_field(big, SwfField::RunTime, 1).ok(),
            Some(Some(999_999_999_999_999.0))
        );
        let past = "9007199254740993"; // 2^53 + 1: rounds as f64::from_str does
        assert_eq!(
            real_field(past, SwfField::RunTime, 1).ok(),
            Some(Some(9_007_199_254_740_992.0))
        );
        assert_eq!(
            int_field("18446744073709551615", SwfField::Status, 1).ok(),
            Some(Some(u64::MAX))
        );
        assert!(int_field("18446744073709551616", SwfField::Status, 1).is_err());
        assert_eq!(
            int_field("0000000000000000000000007", SwfField::Status, 1).ok(),
            Some(Some(7))
        );
    }
}
