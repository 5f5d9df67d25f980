//! `SwfReader` and `SwfJobs` against a reference reader: the line loop
//! of the general path alone (each line copied, decoded and trimmed, job
//! lines through `SwfRecord::parse_line`). The reader reads plain job
//! lines in place from its input's buffer; whatever the buffer size, the
//! lines and their bytes, it must return the same items (records to the
//! bit, errors with the same text), count the same skipped lines and end
//! on the same line number.

use std::io::{BufRead, BufReader, Read};

use partalloc_topology::Topology;
use partalloc_workload::ShapeMapping;
use partalloc_workload::swf::{MAX_LINE_BYTES, SwfError, SwfReader, SwfRecord};
use proptest::prelude::*;
use proptest::sample::select;

/// An item as compared: a record's fields as bits, or an error's text.
type Item = Result<Vec<Option<u64>>, String>;

fn bits(r: &SwfRecord) -> Vec<Option<u64>> {
    r.field_bits().to_vec()
}

/// What the reference reader returns: the header's lines, the items, the
/// lines skipped, the last line number.
#[derive(Debug, PartialEq)]
struct Outcome {
    header: Vec<String>,
    items: Vec<Item>,
    skipped: u64,
    line: u64,
}

/// The reference reader: every line through `read_until`, UTF-8 decoding
/// (lossy for the header), `str::trim` and `SwfRecord::parse_line`; a
/// strict read stops after its first error, as callers do.
fn reference(bytes: &[u8], lenient: bool) -> Result<Outcome, String> {
    let mut input = bytes;
    let mut line = 0u64;
    let mut header = Vec::new();
    let mut in_header = true;
    let (mut items, mut skipped) = (Vec::new(), 0u64);
    let mut raw = Vec::new();
    loop {
        raw.clear();
        let n = (&mut input)
            .take(MAX_LINE_BYTES)
            .read_until(b'\n', &mut raw)
            .map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        if n as u64 == MAX_LINE_BYTES && raw.last() != Some(&b'\n') {
            let e = SwfError::LineTooLong {
                line: line + 1,
                max: MAX_LINE_BYTES,
            };
            if in_header {
                return Err(e.to_string());
            }
            items.push(Err(e.to_string()));
            break;
        }
        line += 1;
        let utf8 = core::str::from_utf8(&raw).is_ok();
        let text = String::from_utf8_lossy(&raw).into_owned();
        if in_header {
            let t = text.trim_start();
            if let Some(rest) = t.strip_prefix(';') {
                header.push(rest.trim_end_matches(['\r', '\n']).to_owned());
                continue;
            }
            if t.trim().is_empty() && utf8 {
                continue;
            }
            in_header = false;
        }
        let t = text.trim();
        if t.starts_with(';') || (t.is_empty() && utf8) {
            continue;
        }
        let parsed = if utf8 {
            SwfRecord::parse_line(t, line)
        } else {
            Err(SwfError::NotUtf8 { line })
        };
        match parsed {
            Ok(r) => items.push(Ok(bits(&r))),
            Err(_) if lenient => skipped += 1,
            Err(e) => {
                items.push(Err(e.to_string()));
                break;
            }
        }
    }
    Ok(Outcome {
        header,
        items,
        skipped,
        line,
    })
}

/// The reader on `bytes` through a buffer of `capacity` bytes, strict
/// reads stopped after their first error.
fn read(bytes: &[u8], capacity: usize, lenient: bool) -> Result<Outcome, String> {
    let mut r = SwfReader::new(BufReader::with_capacity(capacity, bytes))
        .map_err(|e| e.to_string())?
        .lenient(lenient);
    let header = r.header().lines().to_vec();
    let mut items = Vec::new();
    for item in r.by_ref() {
        match item {
            Ok(rec) => items.push(Ok(bits(&rec))),
            Err(e) => {
                items.push(Err(e.to_string()));
                if !lenient {
                    break;
                }
            }
        }
    }
    Ok(Outcome {
        header,
        items,
        skipped: r.skipped(),
        line: r.line(),
    })
}

/// Job fields: plain numbers the fast path takes and everything around
/// its limits it hands on.
fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[0-9]{1,7}",
        3 => "[0-9]{1,7}\\.[0-9]{1,7}",
        4 => Just("-1".to_owned()),
        1 => "[0-9]{14,21}",
        1 => "[0-9]{1,3}\\.?[0-9]{0,3}([eE][+-]?[0-9]{1,3})?",
        1 => select(&[
            "-1.0", "-0", "-2", "+3", "5.", ".5", "1e3", "inf", "1099511627777",
            "1000000000001", "18446744073709551616", "x", "é", "\u{a0}",
        ][..]).prop_map(str::to_owned),
    ]
}

/// One line of a trace, without its break.
fn trace_line() -> impl Strategy<Value = Vec<u8>> {
    let sep = select(&[" ", " ", "\t", "  ", " \t", "\r", "\u{b}", "\u{c}"][..]);
    let job = (
        prop_oneof![12 => Just(18usize), 1 => 16usize..=20],
        sep,
        select(&["", "", " ", "\t", "\r"][..]),
    )
        .prop_flat_map(|(n, sep, pad)| {
            prop::collection::vec(field(), n)
                .prop_map(move |f| format!("{pad}{}{pad}", f.join(sep)).into_bytes())
        });
    prop_oneof![
        12 => job,
        2 => "; ?[A-Za-z]{0,8}(: [0-9a-z ]{0,8})?".prop_map(String::into_bytes),
        1 => select(&["", " ", "\t", "\r", "\u{a0}"][..]).prop_map(|s| s.as_bytes().to_vec()),
        1 => prop::collection::vec(any::<u8>().prop_filter("one line", |&b| b != b'\n'), 0..24),
    ]
}

/// A trace: lines joined by `\n` or `\r\n`, with or without a last break.
fn trace() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(trace_line(), 0..24),
        select(&["\n", "\r\n"][..]),
        any::<bool>(),
    )
        .prop_map(|(lines, end, last)| {
            let mut out = lines.join(end.as_bytes());
            if last {
                out.extend_from_slice(end.as_bytes());
            }
            out
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4_000))]

    /// Strict and lenient reads agree with the reference for buffers from
    /// one byte (every line copied out) to larger than the trace (every
    /// plain line read in place).
    #[test]
    fn reader_agrees_with_the_reference(bytes in trace(), capacity in prop_oneof![1usize..120, Just(1 << 16)]) {
        for lenient in [false, true] {
            prop_assert_eq!(read(&bytes, capacity, lenient), reference(&bytes, lenient));
        }
    }

    /// Jobs (and the errors of records that are no jobs) agree with the
    /// records of the reference mapped one by one, with the same skips.
    #[test]
    fn jobs_agree_with_records_mapped(bytes in trace(), capacity in 1usize..300, lenient in any::<bool>()) {
        let topology: Topology = "mesh:16x16".parse().unwrap();
        for mapping in [ShapeMapping::for_topology(&topology), ShapeMapping::nodes_of(&topology)] {
            let mut jobs = SwfReader::new(BufReader::with_capacity(capacity, bytes.as_slice()))
                .unwrap()
                .lenient(lenient)
                .jobs(mapping);
            let got: Vec<String> = jobs.by_ref().map(|j| format!("{j:?}")).collect();
            let mut records = SwfReader::new(bytes.as_slice()).unwrap().lenient(lenient);
            let mut want = Vec::new();
            let mut skipped = 0;
            for rec in records.by_ref() {
                match rec.and_then(|r| r.to_job(&mapping)) {
                    Err(SwfError::Unusable { .. } | SwfError::Mapping { .. }) if lenient => skipped += 1,
                    j => want.push(format!("{j:?}")),
                }
            }
            prop_assert_eq!(got, want);
            prop_assert_eq!(jobs.reader().skipped(), records.skipped() + skipped);
        }
    }
}

/// Lines in place and lines copied out, one after the other: a buffer
/// that ends inside a plain line, a last line without a break, a line
/// break as `\r\n`.
#[test]
fn buffer_ends_inside_lines() {
    let line = "12 3600.25 -1 86400 64 -1 -1 64 90000 -1 1 3 2 -1 -1 -1 -1 -1";
    let text = format!("; MaxProcs: 64\n{line}\r\n\n{line}\n;c\n{line}");
    for capacity in 1..=text.len() + 1 {
        let got = read(text.as_bytes(), capacity, false).unwrap();
        assert_eq!(
            got,
            reference(text.as_bytes(), false).unwrap(),
            "{capacity}"
        );
        assert_eq!((got.items.len(), got.line), (3, 6));
    }
}
