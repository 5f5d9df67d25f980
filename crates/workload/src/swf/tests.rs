//! Reading, writing and mapping traces, end to end.

use super::*;
use crate::{Job, ShapeMapping};
use partalloc_topology::Topology;
use proptest::prelude::*;
use std::io::{self, BufReader, Read};

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

/// Processor counts the reader accepts (at most 2^40).
fn opt_count() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![Just(None), (0u64..=MAX_PROCESSORS).prop_map(Some)]
}

prop_compose! {
    fn record()(
        job_number in 0u64..u64::MAX,
        reals in proptest::collection::vec(opt_real(), 8),
        ints in proptest::collection::vec(opt_int(), 9),
        counts in proptest::collection::vec(opt_count(), 2),
    ) -> SwfRecord {
        SwfRecord {
            job_number,
            submit_time: reals[0],
            wait_time: reals[1],
            run_time: reals[2],
            allocated_processors: counts[0],
            average_cpu_time: reals[3],
            used_memory: reals[4],
            requested_processors: counts[1],
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
        (1.5e12, SwfField::RunTime),
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

/// Times and counts whose sums or products would overflow are refused at
/// read time with the line and field, not later as infinite results.
#[test]
fn times_and_counts_above_the_bounds_are_refused_with_line_and_field() {
    let line = |run: &str, procs: &str| {
        format!("; MaxNodes: 4\n1 0 -1 {run} {procs} -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n")
    };
    let first = |text: String| {
        SwfReader::new(text.as_bytes())
            .unwrap()
            .next()
            .unwrap()
            .map(|r| r.run_time)
    };
    assert_eq!(first(line("1e12", "4")).unwrap(), Some(1e12));
    let e = first(line("1e308", "4")).unwrap_err().to_string();
    assert_eq!(
        e,
        "line 2: field 4 (run time): \"1e308\" is above 1e12 seconds (about 31,700 years), the largest time accepted"
    );
    let e = first(line("1000000000001", "4")).unwrap_err().to_string();
    assert!(
        e.starts_with("line 2: field 4 (run time): \"1000000000001\" is above 1e12"),
        "{e}"
    );
    assert!(first(line("5", "1099511627776")).is_ok());
    let e = first(line("5", "1099511627777")).unwrap_err().to_string();
    assert_eq!(
        e,
        "line 2: field 5 (number of allocated processors): \"1099511627777\" is above 2^40 (1099511627776), the largest processor count accepted"
    );
    let submit = "; x\n1 2e12 -1 5 4 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n";
    let e = first(submit.to_owned()).unwrap_err().to_string();
    assert!(
        e.starts_with("line 2: field 2 (submit time): \"2e12\""),
        "{e}"
    );
}
