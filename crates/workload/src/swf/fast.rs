//! One pass over a job line of plain numbers.
//!
//! Nearly every line of an archive or generated trace is 18 fields of
//! ASCII digits, `-1` and decimals such as `86400.5`, separated by spaces
//! or tabs. [`scan`] reads such a line in one pass over its bytes, each
//! field's digits accumulated as they are met, and gives up on anything
//! else; the reader then reads the line through the general path
//! ([`SwfRecord::parse_line`] on the UTF-8 text), which alone reports
//! errors. So the fast path only ever returns the record the general path
//! would have returned, and every refusal, message and skip count is the
//! general path's.
//!
//! What the fast path takes, field by field (anything else is handed on):
//! - `-1` (unknown) in every field but the job number;
//! - integer fields: 1 to 19 digits (below 10^19 < 2^64);
//! - real fields: 1 to 15 digits, optionally with one point inside them
//!   (`12`, `12.5`; not `12.` or `.5`). The digits without the point are an
//!   integer m < 10^15 < 2^53 and the point stands for a division by 10^k
//!   with k ≤ 15 ≤ 22; m and 10^k are exact `f64` values and one IEEE
//!   division is correctly rounded, so m / 10^k is the correctly rounded
//!   value of the decimal (Clinger's fast path), the `f64` that
//!   `f64::from_str` gives. Decimals of 16 to 19 digits with a point (as
//!   shortest round-trip printing writes an `f64`) are rounded exactly
//!   from an integer division (`ratio`);
//! - times at most [`MAX_SECONDS`](super::MAX_SECONDS), processor counts at
//!   most [`MAX_PROCESSORS`](super::MAX_PROCESSORS).
//!
//! Separators are spaces, tabs and carriage returns, which are ASCII
//! whitespace for the token split and whitespace for the trim of the
//! general path; any other byte (a form feed, a non-ASCII byte, `;`, `+`,
//! an exponent) sends the line to the general path. A line of these bytes
//! only is ASCII, hence UTF-8.

use super::{MAX_PROCESSORS, MAX_SECONDS, SwfRecord};

/// 10^k for the k digits after a point (k ≤ 15): exact `f64` values.
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// Integer fields with at most this many digits are below 10^19 < 2^64.
const INT_DIGITS: u32 = 19;
/// Real fields with at most this many digits are below 10^15 < 2^53.
const REAL_DIGITS: u32 = 15;

/// One field as scanned: its digits as an integer (the point left out),
/// how many digits, how many of them after the point, or `-1`.
#[derive(Clone, Copy)]
struct Num {
    mantissa: u64,
    digits: u32,
    frac: u32,
    unknown: bool,
}

/// A byte that separates fields (and may end the line before its break).
#[inline(always)]
fn is_separator(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r')
}

/// Whether a field may end before `c` (`None`: the end of the bytes).
#[inline(always)]
fn ends_field(c: Option<&u8>) -> bool {
    // Bits 9 (tab), 10 (line feed), 13 (carriage return), 32 (space).
    const ENDS: u64 = 1 << b'\t' | 1 << b'\n' | 1 << b'\r' | 1 << b' ';
    c.is_none_or(|&c| c < 64 && ENDS >> c & 1 == 1)
}

/// The next field of `b` from `*i` (separators skipped), or `None` if it
/// is not a field the fast path takes.
#[inline(always)]
fn field(b: &[u8], i: &mut usize) -> Option<Num> {
    const UNKNOWN: Num = Num {
        mantissa: 0,
        digits: 0,
        frac: 0,
        unknown: true,
    };
    let mut j = *i;
    // The usual field: one space, then `-1` or a digit, read from four
    // bytes at once.
    match b.get(j..).and_then(<[u8]>::first_chunk::<4>) {
        Some(&[b' ', b'-', b'1', end]) if ends_field(Some(&end)) => {
            *i = j + 3;
            return Some(UNKNOWN);
        }
        Some(&[b' ', first, _, _]) if first.is_ascii_digit() => j += 1,
        _ => {
            while b.get(j).copied().is_some_and(is_separator) {
                j += 1;
            }
            let first = *b.get(j)?;
            if first == b'-' {
                if b.get(j + 1) == Some(&b'1') && ends_field(b.get(j + 2)) {
                    *i = j + 2;
                    return Some(UNKNOWN);
                }
                return None;
            }
        }
    }
    let (mut v, end, int_digits) = digits(b, j, 0);
    if int_digits == 0 {
        return None;
    }
    j = end;
    let mut frac = 0;
    if b.get(j) == Some(&b'.') {
        let (with_frac, end, n) = digits(b, j + 1, v);
        if n == 0 {
            return None;
        }
        (v, j, frac) = (with_frac, end, n);
    }
    if !ends_field(b.get(j)) {
        return None;
    }
    *i = j;
    Some(Num {
        mantissa: v,
        digits: u32::try_from(int_digits + frac).unwrap_or(u32::MAX),
        frac: u32::try_from(frac).unwrap_or(u32::MAX),
        unknown: false,
    })
}

/// 10^k for k ≤ 8 digits.
const POW10_U64: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Each byte's high bit set.
const HIGH: u64 = 0x8080_8080_8080_8080;
/// `b'0'` in each byte.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// The value of the 8 digits of `x` (digit values, not ASCII; the first
/// digit in the lowest byte): pairs, then quadruples, then the whole in
/// three multiplications.
#[inline(always)]
fn eight_digits(x: u64) -> u64 {
    const MASK: u64 = 0x0000_00ff_0000_00ff;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    // Bytes hold at most 9: ×10 and the neighbour's add stay within bytes.
    let pairs = x.wrapping_mul(10).wrapping_add(x >> 8);
    (pairs & MASK)
        .wrapping_mul(MUL1)
        .wrapping_add(((pairs >> 16) & MASK).wrapping_mul(MUL2))
        >> 32
}

/// Reads the run of ASCII digits of `b` from `j` onto `v` (v·10^n + the
/// run's value, wrapping past 2^64: callers refuse more than 19 digits).
/// Returns the new value, the index after the run and the run's length.
/// Eight bytes at a time while eight are left: the run's length within
/// them from a mask of non-digit bytes, its value by `eight_digits`.
#[inline(always)]
fn digits(b: &[u8], mut j: usize, mut v: u64) -> (u64, usize, usize) {
    let start = j;
    while let Some(chunk) = b.get(j..).and_then(<[u8]>::first_chunk::<8>) {
        let x = u64::from_le_bytes(*chunk) ^ ZEROS;
        // A byte is a digit when x < 10: no high bit in x, and none after
        // adding 0x76 to its low seven bits (which carries into no other).
        let non_digits = (((x & !HIGH) + 0x7676_7676_7676_7676) | x) & HIGH;
        let n = (non_digits.trailing_zeros() / 8) as usize;
        if n > 0 {
            // The run in the top n bytes, zeros (leading zeros) below.
            let run = eight_digits(x << (64 - 8 * n as u32));
            v = v
                .wrapping_mul(POW10_U64.get(n).copied().unwrap_or(0))
                .wrapping_add(run);
        }
        j += n;
        if n < 8 {
            return (v, j, j - start);
        }
    }
    // Fewer than eight bytes left.
    while let Some(d) = b.get(j).map(|c| c.wrapping_sub(b'0')).filter(|&d| d <= 9) {
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        j += 1;
    }
    (v, j, j - start)
}

/// An integer field: `-1` or whole digits.
#[inline(always)]
fn int(n: Num) -> Option<Option<u64>> {
    if n.unknown {
        Some(None)
    } else if n.frac == 0 && n.digits <= INT_DIGITS {
        Some(Some(n.mantissa))
    } else {
        None
    }
}

/// A processor count: an integer field of at most `MAX_PROCESSORS`.
#[inline(always)]
fn count(n: Num) -> Option<Option<u64>> {
    match int(n)? {
        Some(v) if v > MAX_PROCESSORS => None,
        v => Some(v),
    }
}

/// A real field: `-1`, or digits with at most one point among them.
#[inline(always)]
fn real(n: Num) -> Option<Option<f64>> {
    if n.unknown {
        return Some(None);
    }
    if n.digits <= REAL_DIGITS {
        // Exact below 2^53; divided by an exact power of ten, correctly
        // rounded.
        let m = n.mantissa as f64;
        let scale = *POW10.get(n.frac as usize)?;
        return Some(Some(if n.frac == 0 { m } else { m / scale }));
    }
    if n.frac == 0 || n.digits > INT_DIGITS {
        return None;
    }
    Some(Some(ratio(n.mantissa, n.frac)))
}

/// `m / 10^k` correctly rounded to an `f64` (ties to even, as
/// `f64::from_str` rounds), for `1 ≤ k ≤ 19` and `0 < m < 2^64`: the
/// decimals of 16 to 19 digits that shortest round-trip printing writes
/// (`0.21021326605757568`).
///
/// `m` is shifted left so that its integer quotient by 10^k < 2^64 has 63
/// or 64 bits; rounding that quotient to 53 bits, with a non-zero
/// remainder as a sticky bit, is the exact rounding of the ratio. The
/// result lies between 10^-19 and 10^19, far from the subnormal and
/// infinite ranges, so scaling the 53-bit mantissa by a power of two is
/// exact.
#[inline(never)]
fn ratio(m: u64, k: u32) -> f64 {
    const POW10_INT: [u64; 20] = {
        let mut t = [1u64; 20];
        let mut i = 1;
        while i < 20 {
            t[i] = t[i - 1] * 10;
            i += 1;
        }
        t
    };
    if m == 0 {
        return 0.0;
    }
    let d = POW10_INT.get(k as usize).copied().unwrap_or(1);
    // bits(m << shift) = 63 + bits(d), so the quotient has 63 or 64 bits
    // (shift ≥ 0: bits(m) ≤ 64 and bits(d) ≥ 4).
    let shift = 63 + (64 - d.leading_zeros()) - (64 - m.leading_zeros());
    let n = u128::from(m) << shift;
    let q = (n / u128::from(d)) as u64;
    let drop = 64 - q.leading_zeros() - 53;
    let mantissa = q >> drop;
    let low = q & ((1 << drop) - 1);
    let half = 1 << (drop - 1);
    // Above half, or a tie broken by a remainder or by an odd mantissa.
    let up =
        low > half || (low == half && (n != u128::from(q) * u128::from(d) || (mantissa & 1) == 1));
    // The bits of mantissa · 2^exp, exp the exponent of its last bit: the
    // biased exponent of its first bit above 52 bits of fraction; a carry
    // of the rounding out of 53 bits moves into the exponent, as it must.
    let exp = i64::from(drop) - i64::from(shift);
    let bits = (((exp + 1075) as u64) << 52) + (mantissa - (1 << 52)) + u64::from(up);
    f64::from_bits(bits)
}

/// A time: a real field of at most `MAX_SECONDS`.
#[inline(always)]
fn time(n: Num) -> Option<Option<f64>> {
    match real(n)? {
        Some(v) if v > MAX_SECONDS => None,
        v => Some(v),
    }
}

/// Reads the job line at the start of `b` into `out` if the fast path
/// takes it, and returns the bytes the line took, its `\n` included.
///
/// The line ends at its first `\n`, or, when `whole` (the bytes are the
/// line), at the end of `b`; when not `whole` and `b` has no `\n` after
/// the fields, the line may go on past `b` and `None` is returned.
/// `None` means the general path must read the line: it is a comment, a
/// blank or malformed line, or a job line with a field the fast path does
/// not take; `out` then holds part of the line and must not be used.
/// The record is written in place, field by field, so that a reader
/// keeping it does not copy it again.
#[inline(always)]
pub(super) fn scan(b: &[u8], whole: bool, out: &mut SwfRecord) -> Option<usize> {
    let mut i = 0;
    let mut next = || field(b, &mut i);
    out.job_number = int(next()?)??;
    out.submit_time = time(next()?)?;
    out.wait_time = time(next()?)?;
    out.run_time = time(next()?)?;
    out.allocated_processors = count(next()?)?;
    out.average_cpu_time = time(next()?)?;
    out.used_memory = real(next()?)?;
    out.requested_processors = count(next()?)?;
    out.requested_time = time(next()?)?;
    out.requested_memory = real(next()?)?;
    out.status = int(next()?)?;
    out.user_id = int(next()?)?;
    out.group_id = int(next()?)?;
    out.executable = int(next()?)?;
    out.queue = int(next()?)?;
    out.partition = int(next()?)?;
    out.preceding_job = int(next()?)?;
    out.think_time = time(next()?)?;
    while b.get(i).copied().is_some_and(is_separator) {
        i += 1;
    }
    match b.get(i) {
        Some(b'\n') => Some(i + 1),
        None if whole => Some(i),
        // A 19th field (the general path counts them), or the line goes on.
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use proptest::sample::select;

    /// `scan` into a fresh record.
    fn scan(b: &[u8], whole: bool) -> Option<(SwfRecord, usize)> {
        let mut r = SwfRecord::unknown(0);
        super::scan(b, whole, &mut r).map(|n| (r, n))
    }

    /// What the reader's general path makes of a whole line: `None` for a
    /// comment or blank line, else the record or the error's text. A line
    /// that is not UTF-8 is an error.
    fn general(line: &[u8]) -> Option<Result<SwfRecord, String>> {
        let Ok(text) = core::str::from_utf8(line) else {
            return Some(Err("not UTF-8".to_owned()));
        };
        let t = text.trim();
        if t.starts_with(';') || t.is_empty() {
            return None;
        }
        Some(SwfRecord::parse_line(t, 7).map_err(|e| e.to_string()))
    }

    /// A record's fields as bits, so that 0 and −0 stay apart.
    fn bits(r: &SwfRecord) -> Vec<Option<u64>> {
        r.field_bits().to_vec()
    }

    /// Field text around the fast path's limits: plain digits up to 25
    /// long, decimals up to 22 digits, `-1` and its look-alikes, signs,
    /// exponents, points at either end, non-ASCII and non-UTF-8 bytes.
    fn field_bytes() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => "[0-9]{1,25}".prop_map(String::into_bytes),
            3 => "[0-9]{1,11}\\.[0-9]{1,11}".prop_map(String::into_bytes),
            3 => Just(b"-1".to_vec()),
            1 => "0{0,3}[0-9]{13,16}(\\.[0-9]{0,3})?".prop_map(String::into_bytes),
            1 => "[0-9]{0,3}\\.?[0-9]{0,3}([eE][+-]?[0-9]{1,3})?".prop_map(String::into_bytes),
            1 => select(&[
                "-1.0", "-1e0", "-0", "-01", "-12", "+3", "+1", "-", "+", ".", "5.", ".5",
                "1..2", "1.2.3", "1e5", "1E-2", "inf", "NaN", "1099511627776", "1099511627777",
                "1000000000000", "1000000000000.5", "1000000000001", "999999999999.99",
                "18446744073709551615", "18446744073709551616", "9007199254740993",
                "0000000000000000000000007", ";", "x", "\u{a0}", "é", "1\u{a0}", "\u{b}", "\u{c}",
                "\0", "1;2",
            ][..])
            .prop_map(|s| s.as_bytes().to_vec()),
            1 => prop::collection::vec(any::<u8>().prop_filter("a line break ends the line", |&b| b != b'\n'), 1..4),
        ]
    }

    /// Whitespace between, before and after fields: the separators the
    /// fast path takes, and others (vertical tab, form feed, no-break
    /// space) it leaves to the general path.
    fn space() -> impl Strategy<Value = &'static [u8]> {
        select(vec![
            b" ".as_slice(),
            b" ",
            b" ",
            b"\t",
            b"  ",
            b" \t ",
            b"\r",
            b"\x0b",
            b"\x0c",
            "\u{a0}".as_bytes(),
            "\u{3000}".as_bytes(),
        ])
    }

    /// A job line of 16 to 20 fields (mostly 18), without its line break.
    fn line() -> impl Strategy<Value = Vec<u8>> {
        let n = prop_oneof![8 => Just(18usize), 1 => 16usize..=20];
        let lead = select(vec![
            b"".as_slice(),
            b"",
            b" ",
            b"\t",
            b"   ",
            b"\r",
            b";",
            b"\x0c",
        ]);
        let tail = select(vec![
            b"".as_slice(),
            b"",
            b" ",
            b"\r",
            b"\t ",
            b"\x0b",
            "\u{a0}".as_bytes(),
        ]);
        n.prop_flat_map(move |n| {
            (
                lead.clone(),
                prop::collection::vec((field_bytes(), space()), n),
                tail.clone(),
            )
        })
        .prop_map(|(lead, fields, tail)| {
            let mut out = lead.to_vec();
            for (k, (f, sep)) in fields.iter().enumerate() {
                if k > 0 {
                    out.extend_from_slice(sep);
                }
                out.extend_from_slice(f);
            }
            out.extend_from_slice(tail);
            out
        })
    }

    /// The same law, but only fields the fast path takes: it must take
    /// every such line.
    fn plain_line() -> impl Strategy<Value = Vec<u8>> {
        let int = prop_oneof!["[0-9]{1,6}", Just("-1".to_owned())];
        let real = prop_oneof![
            "[0-9]{1,11}",
            "[0-9]{1,7}\\.[0-9]{1,8}",
            "0\\.[0-9]{1,14}",
            // Shortest round-trip printing: 16 to 19 digits.
            "[0-9]{1,3}\\.[0-9]{13,16}",
            Just("-1".to_owned())
        ];
        (
            "[1-9][0-9]{0,18}",
            prop::collection::vec(real, 8),
            prop::collection::vec(int, 9),
            select(&[" ", "\t", "  ", " \t"][..]),
            select(&["", " ", "\r", "\t"][..]),
        )
            .prop_map(|(job, reals, ints, sep, end)| {
                // File order: job, 3 reals, count, 2 reals, count, 2 reals, 6 ints, real.
                let mut r = reals.into_iter();
                let mut i = ints.into_iter();
                let mut next_real = || r.next().unwrap_or_default();
                let mut next_int = || i.next().unwrap_or_default();
                let fields = [
                    job,
                    next_real(),
                    next_real(),
                    next_real(),
                    next_int(),
                    next_real(),
                    next_real(),
                    next_int(),
                    next_real(),
                    next_real(),
                    next_int(),
                    next_int(),
                    next_int(),
                    next_int(),
                    next_int(),
                    next_int(),
                    next_int(),
                    next_real(),
                ];
                format!("{}{end}", fields.join(sep)).into_bytes()
            })
    }

    /// Checks `scan` on `line` (no line break in it) against the general
    /// path, whole, and in a buffer followed by `\n` and more text, and in
    /// a buffer that ends before the line does.
    fn agrees(line: &[u8]) -> Result<Option<SwfRecord>, TestCaseError> {
        let fast = scan(line, true);
        if let Some((r, taken)) = fast {
            prop_assert_eq!(taken, line.len());
            match general(line) {
                Some(Ok(g)) => prop_assert_eq!(bits(&r), bits(&g)),
                other => prop_assert!(false, "fast path read {r:?}, the general path {other:?}"),
            }
        }
        for end in [&b"\n"[..], b"\r\n"] {
            let mut buffered = line.to_vec();
            buffered.extend_from_slice(end);
            buffered.extend_from_slice(b"2 0 -1 1 1 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n");
            let in_buffer = scan(&buffered, false);
            prop_assert_eq!(
                in_buffer.map(|(r, n)| (bits(&r), n)),
                fast.map(|(r, n)| (bits(&r), n + end.len()))
            );
        }
        // Without its break the buffer may end inside the line.
        prop_assert!(scan(line, false).is_none());
        Ok(fast.map(|(r, _)| r))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// On random lines the fast path either hands the line on or
        /// reads the record the general path reads, to the bit.
        #[test]
        fn fast_path_reads_what_the_general_path_reads(line in line()) {
            agrees(&line)?;
        }

        /// Lines of plain fields are all read by the fast path.
        #[test]
        fn fast_path_takes_plain_lines(line in plain_line()) {
            let r = agrees(&line)?;
            prop_assert!(r.is_some(), "{:?} was handed on", String::from_utf8_lossy(&line));
        }
    }

    /// The field as the fast path reads it in a real field, if it does.
    fn fast_real(t: &str) -> Option<f64> {
        let mut i = 0;
        real(field(t.as_bytes(), &mut i)?)?
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Decimals of up to 19 digits round as `f64::from_str` rounds.
        #[test]
        fn decimals_round_as_from_str(int in "[0-9]{1,12}", frac in "[0-9]{1,18}") {
            let t = format!("{int}.{frac}");
            let want = t.parse::<f64>().map(f64::to_bits).ok();
            match fast_real(&t) {
                Some(v) => prop_assert_eq!(Some(v.to_bits()), want, "{}", t),
                None => prop_assert!(int.len() + frac.len() > 19, "{} handed on", t),
            }
        }

        /// Every `f64` as shortest round-trip printing writes it (most
        /// have 16 or 17 digits) reads back to itself when the fast path
        /// takes it.
        #[test]
        fn printed_doubles_read_back(x in 0.0f64..1e12, scale in -12i32..12) {
            let x = x * 10f64.powi(scale);
            let t = x.to_string();
            if let Some(v) = fast_real(&t) {
                prop_assert_eq!(v.to_bits(), x.to_bits(), "{}", t);
            }
        }
    }

    #[test]
    fn ties_round_to_even() {
        // Between 2^52 and 2^53 the spacing is 1: x.5 is a tie.
        for (t, want) in [
            ("4503599627370496.5", 4_503_599_627_370_496.0),
            ("4503599627370497.5", 4_503_599_627_370_498.0),
            ("4503599627370497.50", 4_503_599_627_370_498.0),
            ("4503599627370497.51", 4_503_599_627_370_498.0),
            ("4503599627370496.49", 4_503_599_627_370_496.0),
            ("9007199254740993.0", 9_007_199_254_740_992.0),
            ("9007199254740995.0", 9_007_199_254_740_996.0),
            ("0.1000000000000000055", 0.1),
            ("0.0000000000000000001", 1e-19),
            ("999999999999999999.9", 1e18),
            // The remainder decides: just above a tie, rounded up.
            ("1.692627005084231695", 1.692_627_005_084_231_8),
            // Exact ties of 19 digits: to the even neighbour, up and down.
            ("676706824341035.9375", 676_706_824_341_036.0),
            ("792110337626158.5625", 792_110_337_626_158.5),
        ] {
            assert_eq!(t.parse::<f64>().ok(), Some(want), "{t}");
            let fast = fast_real(t);
            assert!(fast.is_none() || fast == Some(want), "{t}: {fast:?}");
        }
        assert_eq!(
            fast_real("4503599627370497.5"),
            Some(4_503_599_627_370_498.0)
        );
        assert_eq!(
            fast_real("0.21021326605757568"),
            Some(0.210_213_266_057_575_68)
        );
    }

    #[test]
    fn limits_and_hand_offs() {
        let with = |k: usize, v: &str| {
            let mut f = ["-1"; 18];
            f[0] = "1";
            f[k] = v;
            f.join(" ")
        };
        let take = |s: &str| scan(s.as_bytes(), true).map(|(r, _)| r);
        // Reals: 15 digits taken, 16 handed on; the time bound is the general path's.
        assert_eq!(
            take(&with(3, "999999999999.999")).and_then(|r| r.run_time),
            Some(999_999_999_999.999)
        );
        assert!(take(&with(3, "1000000000000")).is_some());
        assert!(take(&with(3, "1000000000001")).is_none());
        assert!(take(&with(6, "1000000000001")).is_some()); // memory: no bound
        assert!(take(&with(6, "1000000000000000")).is_none()); // 16 digits
        assert_eq!(take(&with(1, "0.1")).and_then(|r| r.submit_time), Some(0.1));
        // Integers: 19 digits taken; counts bounded by 2^40.
        assert_eq!(
            take(&with(10, "9999999999999999999")).and_then(|r| r.status),
            Some(9_999_999_999_999_999_999)
        );
        assert!(take(&with(10, "10000000000000000000")).is_none());
        assert!(take(&with(4, "1099511627776")).is_some());
        assert!(take(&with(4, "1099511627777")).is_none());
        assert!(take(&with(10, "1.0")).is_none());
        // The job number must be known.
        assert!(take(&with(0, "-1")).is_none());
        // Signs, bare points, exponents, comments, blank lines: handed on.
        for v in ["+1", "-0", "-1.0", "5.", ".5", "1e3", "-2"] {
            assert!(take(&with(1, v)).is_none(), "{v}");
        }
        assert!(take("; 1 2").is_none());
        assert!(take("   \r").is_none());
        assert!(take("").is_none());
        // 17 and 19 fields: the general path counts them.
        assert!(take(&with(0, "1").replacen(" -1", "", 1)).is_none());
        assert!(take(&format!("{} 5", with(0, "1"))).is_none());
    }
}
