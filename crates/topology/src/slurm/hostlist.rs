//! Slurm hostlist expressions: `node[001-018,020]`, `rack[0-3]-n[00-17]`.
//!
//! The forms are those of Slurm's `scontrol show hostnames` (expand) and
//! `scontrol show hostlist` (compress): names separated by top-level commas;
//! inside brackets, comma-separated numbers and `lo-hi` ranges; a range keeps
//! the zero padding of its lower bound (`[08-10]` gives `08 09 10`); several
//! bracket groups in one name expand as a product, the first varying
//! slowest. Compression keeps the order of the names, so
//! `expand(compress(names)) == names` for any list of names.
//!
//! ```
//! use partalloc_topology::slurm::hostlist;
//! let names = hostlist::expand("node[001-003,007],login")?;
//! assert_eq!(names, ["node001", "node002", "node003", "node007", "login"]);
//! assert_eq!(hostlist::compress(&names), "node[001-003,007],login");
//! # Ok::<(), partalloc_topology::slurm::HostlistError>(())
//! ```

use thiserror::Error;

/// Largest number of names one expression may expand to, so that a typo
/// such as `n[0-999999999]` is refused instead of exhausting memory.
pub const MAX_HOSTS: usize = 1 << 22;

/// Why a hostlist expression could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum HostlistError {
    /// A `[` without its `]`, a `]` without its `[`, or nested brackets.
    #[error("unbalanced bracket at column {column} of {text:?}")]
    Unbalanced {
        /// The expression.
        text: String,
        /// 1-based column of the offending bracket.
        column: usize,
    },
    /// A bracket item that is not `N` or `LO-HI` with decimal numbers.
    #[error("{item:?} in {text:?} is not a number or a LO-HI range")]
    BadRange {
        /// The expression.
        text: String,
        /// The offending item.
        item: String,
    },
    /// A range whose upper bound is below its lower bound.
    #[error("range {lo}-{hi} in {text:?} runs backwards")]
    Backwards {
        /// The expression.
        text: String,
        /// Lower bound as written.
        lo: u64,
        /// Upper bound as written.
        hi: u64,
    },
    /// An empty name between commas, or an empty expression.
    #[error("empty host name in {text:?}")]
    EmptyName {
        /// The expression.
        text: String,
    },
    /// The expression names more than [`MAX_HOSTS`] hosts.
    #[error("{text:?} names more than {max} hosts")]
    TooMany {
        /// The expression.
        text: String,
        /// The limit.
        max: usize,
    },
}

/// One piece of a host name pattern: literal text or a bracket of ranges.
enum Piece<'a> {
    Literal(&'a str),
    /// (lo, hi, width) ranges; width is the padding of the lower bound.
    Ranges(Vec<(u64, u64, usize)>),
}

/// Splits at commas outside brackets, checking bracket balance.
fn split_top(text: &str) -> Result<Vec<(usize, &str)>, HostlistError> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '[' if depth == 0 => depth = 1,
            '[' | ']' if c == '[' || depth == 0 => {
                return Err(HostlistError::Unbalanced {
                    text: text.to_owned(),
                    column: text[..i].chars().count() + 1,
                });
            }
            ']' => depth = 0,
            ',' if depth == 0 => {
                out.push((start, &text[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        let open = text.rfind('[').unwrap_or(0);
        return Err(HostlistError::Unbalanced {
            text: text.to_owned(),
            column: text[..open].chars().count() + 1,
        });
    }
    out.push((start, &text[start..]));
    Ok(out)
}

fn parse_ranges(text: &str, inner: &str) -> Result<Vec<(u64, u64, usize)>, HostlistError> {
    let bad = |item: &str| HostlistError::BadRange {
        text: text.to_owned(),
        item: item.to_owned(),
    };
    let number = |t: &str| -> Option<u64> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    inner
        .split(',')
        .map(|item| {
            let item = item.trim();
            let (lo_t, hi_t) = item.split_once('-').unwrap_or((item, item));
            let lo = number(lo_t).ok_or_else(|| bad(item))?;
            let hi = number(hi_t).ok_or_else(|| bad(item))?;
            if hi < lo {
                return Err(HostlistError::Backwards {
                    text: text.to_owned(),
                    lo,
                    hi,
                });
            }
            Ok((lo, hi, lo_t.len()))
        })
        .collect()
}

fn pieces<'a>(text: &str, item: &'a str) -> Result<Vec<Piece<'a>>, HostlistError> {
    let mut out = Vec::new();
    let mut rest = item;
    while let Some(open) = rest.find('[') {
        if open > 0 {
            out.push(Piece::Literal(&rest[..open]));
        }
        // split_top has checked that every '[' has its ']'.
        let close = rest[open..].find(']').map_or(rest.len(), |c| open + c);
        let inner = rest.get(open + 1..close).unwrap_or("");
        out.push(Piece::Ranges(parse_ranges(text, inner)?));
        rest = rest.get(close + 1..).unwrap_or("");
    }
    if !rest.is_empty() {
        out.push(Piece::Literal(rest));
    }
    Ok(out)
}

fn push_number(name: &mut String, value: u64, width: usize) {
    use core::fmt::Write;
    // Writing to a String cannot fail.
    let _ = write!(name, "{value:0width$}");
}

fn expand_pieces(pieces: &[Piece<'_>], prefix: &mut String, out: &mut Vec<String>) {
    match pieces.split_first() {
        None => out.push(prefix.clone()),
        Some((Piece::Literal(t), rest)) => {
            let len = prefix.len();
            prefix.push_str(t);
            expand_pieces(rest, prefix, out);
            prefix.truncate(len);
        }
        Some((Piece::Ranges(ranges), rest)) => {
            for &(lo, hi, width) in ranges {
                for v in lo..=hi {
                    let len = prefix.len();
                    push_number(prefix, v, width);
                    expand_pieces(rest, prefix, out);
                    prefix.truncate(len);
                }
            }
        }
    }
}

fn count_pieces(pieces: &[Piece<'_>]) -> u128 {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Literal(_) => 1,
            Piece::Ranges(r) => r
                .iter()
                .map(|&(lo, hi, _)| u128::from(hi - lo) + 1)
                .fold(0u128, u128::saturating_add),
        })
        // Several brackets of 10^19 names each overflow even u128.
        .fold(1u128, u128::saturating_mul)
}

/// Expands a hostlist expression into host names, in written order
/// (`scontrol show hostnames`). Whitespace around names is ignored.
///
/// # Errors
/// Unbalanced or nested brackets, a bracket item that is not a number or
/// range, a backwards range, an empty name, or more than [`MAX_HOSTS`]
/// names.
pub fn expand(text: &str) -> Result<Vec<String>, HostlistError> {
    let mut out = Vec::new();
    let mut total: u128 = 0;
    for (_, item) in split_top(text)? {
        let item = item.trim();
        if item.is_empty() {
            return Err(HostlistError::EmptyName {
                text: text.to_owned(),
            });
        }
        let p = pieces(text, item)?;
        total += count_pieces(&p);
        if total > MAX_HOSTS as u128 {
            return Err(HostlistError::TooMany {
                text: text.to_owned(),
                max: MAX_HOSTS,
            });
        }
        expand_pieces(&p, &mut String::new(), &mut out);
    }
    Ok(out)
}

/// How many names `text` expands to, without expanding it: a reader can
/// check a file's total against its limit before any name is made.
///
/// ```
/// use partalloc_topology::slurm::hostlist;
/// assert_eq!(hostlist::count("n[0-4194303],s[1-2]c[1-3]")?, (1 << 22) + 6);
/// # Ok::<(), partalloc_topology::slurm::HostlistError>(())
/// ```
///
/// # Errors
/// The syntax errors of [`expand`]; no limit on the count (it saturates at
/// `u64::MAX`).
pub fn count(text: &str) -> Result<u64, HostlistError> {
    let mut total: u128 = 0;
    for (_, item) in split_top(text)? {
        let item = item.trim();
        if item.is_empty() {
            return Err(HostlistError::EmptyName {
                text: text.to_owned(),
            });
        }
        total = total.saturating_add(count_pieces(&pieces(text, item)?));
    }
    Ok(u64::try_from(total).unwrap_or(u64::MAX))
}

/// A run of names `prefix` + number, numbers increasing.
struct Group<'a> {
    prefix: &'a str,
    width: usize,
    ranges: Vec<(u64, u64)>,
}

/// Splits a name into prefix and trailing decimal number with its padding
/// width (0 = unpadded). Names without a trailing number, or with one too
/// long for `u64`, have none.
fn split_number(name: &str) -> (&str, Option<(u64, usize)>) {
    let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (prefix, num) = name.split_at(name.len() - digits);
    match num.parse::<u64>() {
        Ok(v) if num.len() <= 19 => {
            let width = if num.len() > 1 && num.starts_with('0') {
                num.len()
            } else {
                0
            };
            (prefix, Some((v, width)))
        }
        _ => (name, None),
    }
}

fn padded_len(value: u64, width: usize) -> usize {
    let digits = value.checked_ilog10().map_or(1, |d| d as usize + 1);
    digits.max(width)
}

/// Compresses host names into one hostlist expression
/// (`scontrol show hostlist`), keeping their order: consecutive names with
/// the same prefix and increasing numbers share one bracket.
///
/// A name containing `[`, `]` or `,` cannot be written in a hostlist and is
/// copied as is (expansion will not give it back).
#[must_use]
pub fn compress<S: AsRef<str>>(names: &[S]) -> String {
    let mut groups: Vec<Group<'_>> = Vec::new();
    let mut plain: Vec<Option<&str>> = Vec::new();
    for name in names {
        let name = name.as_ref();
        let (prefix, num) = split_number(name);
        let Some((v, w)) = num else {
            plain.push(Some(name));
            groups.push(Group {
                prefix: name,
                width: 0,
                ranges: Vec::new(),
            });
            continue;
        };
        let digits_len = name.len() - prefix.len();
        if let (Some(g), Some(None)) = (groups.last_mut(), plain.last()) {
            let fits = g.prefix == prefix && padded_len(v, g.width) == digits_len;
            if let Some(last) = g.ranges.last_mut().filter(|_| fits) {
                if v == last.1 + 1 {
                    last.1 = v;
                    continue;
                }
                if v > last.1 {
                    g.ranges.push((v, v));
                    continue;
                }
            }
        }
        plain.push(None);
        groups.push(Group {
            prefix,
            width: w,
            ranges: vec![(v, v)],
        });
    }
    let mut out = String::new();
    for (g, p) in groups.iter().zip(&plain) {
        if !out.is_empty() {
            out.push(',');
        }
        if let Some(name) = p {
            out.push_str(name);
            continue;
        }
        out.push_str(g.prefix);
        let bracket = g.ranges.len() > 1 || g.ranges.iter().any(|r| r.0 != r.1);
        if bracket {
            out.push('[');
        }
        for (i, &(lo, hi)) in g.ranges.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_number(&mut out, lo, g.width);
            if hi != lo {
                out.push('-');
                push_number(&mut out, hi, g.width);
            }
        }
        if bracket {
            out.push(']');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn documented_forms_expand_as_slurm_does() {
        let n = expand("node[001-003,020]").unwrap();
        assert_eq!(n, ["node001", "node002", "node003", "node020"]);
        let r = expand("rack[0-1]-n[00-02]").unwrap();
        assert_eq!(
            r,
            [
                "rack0-n00",
                "rack0-n01",
                "rack0-n02",
                "rack1-n00",
                "rack1-n01",
                "rack1-n02"
            ]
        );
        assert_eq!(expand("tux[8-10]").unwrap(), ["tux8", "tux9", "tux10"]);
        assert_eq!(expand("tux[08-10]").unwrap(), ["tux08", "tux09", "tux10"]);
        assert_eq!(expand(" a , b[1]").unwrap(), ["a", "b1"]);
        assert_eq!(expand("s[0-2,4-5,12]").unwrap().len(), 6);
    }

    #[test]
    fn documented_forms_compress_as_slurm_does() {
        let names = expand("node[001-018,020]").unwrap();
        assert_eq!(compress(&names), "node[001-018,020]");
        let racks = expand("rack[0-3]-n[00-17]").unwrap();
        assert_eq!(
            compress(&racks),
            "rack0-n[00-17],rack1-n[00-17],rack2-n[00-17],rack3-n[00-17]"
        );
        assert_eq!(compress(&["tux9", "tux10", "tux11"]), "tux[9-11]");
        assert_eq!(compress(&["n3", "n1"]), "n3,n1");
        assert_eq!(compress::<&str>(&[]), "");
    }

    #[test]
    fn malformed_expressions_are_refused_with_the_place() {
        let e = expand("node[1-3").unwrap_err();
        assert_eq!(
            e,
            HostlistError::Unbalanced {
                text: "node[1-3".into(),
                column: 5
            }
        );
        assert!(matches!(
            expand("n1]"),
            Err(HostlistError::Unbalanced { column: 3, .. })
        ));
        assert!(matches!(
            expand("n[[1]]"),
            Err(HostlistError::Unbalanced { .. })
        ));
        assert!(matches!(
            expand("n[a-3]"),
            Err(HostlistError::BadRange { .. })
        ));
        assert!(matches!(
            expand("n[5-3]"),
            Err(HostlistError::Backwards { lo: 5, hi: 3, .. })
        ));
        assert!(matches!(
            expand("a,,b"),
            Err(HostlistError::EmptyName { .. })
        ));
        assert!(matches!(
            expand("n[0-99999999999]"),
            Err(HostlistError::TooMany { .. })
        ));
        let huge = "n[0-9999999999999999999][0-9999999999999999999][0-9999999999999999999]";
        assert!(matches!(expand(huge), Err(HostlistError::TooMany { .. })));
        assert_eq!(count(huge), Ok(u64::MAX));
        assert_eq!(count("a,b[1-3]x[08-10]"), Ok(10));
        assert_eq!(
            expand("n[5-3]").unwrap_err().to_string(),
            "range 5-3 in \"n[5-3]\" runs backwards"
        );
    }

    fn name() -> impl Strategy<Value = String> {
        (
            prop::sample::select(vec!["n", "node", "rack1-n", "gpu-", "x0y"]),
            0u64..40,
            prop::sample::select(vec![0usize, 1, 2, 3]),
        )
            .prop_map(|(p, v, w)| format!("{p}{v:0w$}"))
    }

    proptest! {
        #[test]
        fn expand_after_compress_is_identity(names in prop::collection::vec(name(), 0..40)) {
            let text = compress(&names);
            let back = if names.is_empty() { Vec::new() } else { expand(&text).unwrap() };
            prop_assert_eq!(back, names, "{}", text);
        }

        #[test]
        fn compress_after_expand_expands_the_same(
            lo in 0u64..50, len in 0u64..30, w in 0usize..4, gap in 1u64..5,
        ) {
            let text = format!("r[{lo:0w$}-{:0w$},{:0w$}]", lo + len, lo + len + gap);
            let names = expand(&text).unwrap();
            prop_assert_eq!(names.len() as u64, len + 2);
            prop_assert_eq!(expand(&compress(&names)).unwrap(), names);
        }
    }
}
