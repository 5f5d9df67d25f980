//! Slurm hostlist expressions: `node[001-018,020]`, `rack[0-3]-n[00-17]`.
//!
//! [`expand`] gives what Slurm 26.05's `scontrol show hostnames` prints and
//! [`compress`] what `scontrol show hostlist` prints (one-dimensional
//! names, as scontrol uses without a multi-dimensional cluster). The rules,
//! each from the part of Slurm's `src/common/hostlist.c` that has it:
//!
//! - **Names** are separated by commas, spaces, tabs and newlines outside
//!   brackets; runs of separators count as one, so `a,,b` is `a b` and an
//!   empty text names no host (`_next_tok`).
//! - **Brackets.** The *last* `[` of a name and the first `]` after it hold
//!   comma-separated numbers and `lo-hi` ranges; every number of a range is
//!   printed zero-padded to the length of its lower bound as written
//!   (`[08-10]` → `08 09 10`, `[8-10]` → `8 9 10`). Text after that `]` is
//!   kept after every number (`n[1-3]a` → `n1a n2a n3a`)
//!   (`_hostlist_create_bracketed`, `_parse_single_range`).
//! - **More brackets** before the last one are expanded one at a time, the
//!   last of them first: with two groups the first varies slowest
//!   (`r[0-1]n[0-1]` → `r0n0 r0n1 r1n0 r1n1`); with three, the middle one
//!   varies slowest, then the first, then the last (`s[1-2]c[1-2]n[1-2]` →
//!   `s1c1n1 s1c1n2 s2c1n1 s2c1n2 s1c2n1 …`) (`_push_range_list`). A bad
//!   bracket anywhere is refused. (With three or more brackets Slurm only
//!   logs an error for a bad one before the second-to-last and prints the
//!   names it got, usually none; [`expand`] refuses.)
//! - **Limits** (refused): a range of more than [`MAX_RANGE`] numbers, a
//!   bracket before the last naming more than [`MAX_PREFIXES`] numbers, a
//!   bracket of more than [`MAX_ITEMS`] items; and, partalloc's own bound
//!   against untrusted input, more than [`MAX_HOSTS`] names or
//!   [`MAX_BYTES`] bytes of names in all.
//! - **Compression** keeps the names in their order. A name is a prefix and
//!   its trailing decimal digits (`hostname_create_dims`). A name extends
//!   the previous run when it has the same prefix and the next number, and
//!   the two paddings print both numbers unchanged (`hostlist_push_range`,
//!   `_width_equiv`). Consecutive runs of one prefix share a bracket, even
//!   when numbers go down, repeat, or are padded differently:
//!   `x0y21,x0y20` → `x0y[21,20]`, `n1,n02` → `n[1,02]`
//!   (`hostlist_ranged_string_dims`, `_get_bracketed_list`).
//!
//! So `expand(compress(names)) == names` (order and duplicates kept) for
//! every list of non-empty names made of printable non-space ASCII other
//! than `[`, `]` and `,` whose trailing number, if any, is below 2^64 − 1
//! (a property test checks it). Slurm gives no such guarantee beyond that:
//! an empty name vanishes, a name with a separator splits, and a trailing
//! number of 20 or more digits is read as 2^64 − 1.
//!
//! ```
//! use partalloc_topology::slurm::hostlist;
//! let names = hostlist::expand("node[001-003,007],login")?;
//! assert_eq!(names, ["node001", "node002", "node003", "node007", "login"]);
//! assert_eq!(hostlist::compress(&names), "node[001-003,007],login");
//! assert_eq!(hostlist::compress(&["x0y21", "x0y20"]), "x0y[21,20]");
//! # Ok::<(), partalloc_topology::slurm::HostlistError>(())
//! ```

use std::borrow::Cow;
use std::fmt::Write as _;

use thiserror::Error;

/// Largest number of names one expression may expand to, so that a typo
/// such as `n[0-9999]x[0-9999]` is refused instead of exhausting memory.
pub const MAX_HOSTS: usize = 1 << 22;

/// Largest total length in bytes of the names one expression may expand to.
pub const MAX_BYTES: usize = 1 << 28;

/// Most numbers one `lo-hi` range may hold (Slurm's `MAX_RANGE`).
pub const MAX_RANGE: u64 = 1 << 16;

/// Most numbers one bracket before the last may hold, over all its items
/// (Slurm's `MAX_PREFIX_CNT`).
pub const MAX_PREFIXES: u64 = 1 << 16;

/// Most comma-separated items in one bracket (Slurm's `MAX_RANGES`).
pub const MAX_ITEMS: usize = 256 * 1024;

/// Why a hostlist expression could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum HostlistError {
    /// A `[` without a `]` after it.
    #[error("unbalanced bracket at column {column} of {text:?}")]
    Unbalanced {
        /// The expression (shortened as [`crate::echo`] does).
        text: String,
        /// 1-based column (in characters) of the `[`.
        column: usize,
    },
    /// A bracket item that is not `N` or `LO-HI` with decimal numbers.
    #[error("{item:?} in {text:?} is not a number or a LO-HI range")]
    BadRange {
        /// The expression (shortened as [`crate::echo`] does).
        text: String,
        /// The offending item.
        item: String,
    },
    /// A range whose upper bound is below its lower bound.
    #[error("range {lo}-{hi} in {text:?} runs backwards")]
    Backwards {
        /// The expression (shortened as [`crate::echo`] does).
        text: String,
        /// Lower bound as read.
        lo: u64,
        /// Upper bound as read.
        hi: u64,
    },
    /// An expression that names no host where one is needed. [`expand`]
    /// itself returns an empty list for an empty text, as Slurm does;
    /// readers that need a host (`Nodes=`) give this error.
    #[error("empty host name in {text:?}")]
    EmptyName {
        /// The expression (shortened as [`crate::echo`] does).
        text: String,
    },
    /// The expression names more than [`MAX_HOSTS`] hosts.
    #[error("{text:?} names more than {max} hosts")]
    TooMany {
        /// The expression (shortened as [`crate::echo`] does).
        text: String,
        /// The limit.
        max: usize,
    },
    /// The names of the expression are longer than [`MAX_BYTES`] in all,
    /// or its brackets would be reparsed for more bytes than that.
    #[error("{text:?} needs more than {max} bytes to expand")]
    TooLong {
        /// The expression (shortened as [`crate::echo`] does).
        text: String,
        /// The limit.
        max: usize,
    },
    /// A range of more than [`MAX_RANGE`] numbers.
    #[error("range {item:?} in {text:?} holds more than {max} numbers")]
    RangeTooLarge {
        /// The expression (shortened as [`crate::echo`] does).
        text: String,
        /// The range as written.
        item: String,
        /// The limit.
        max: u64,
    },
    /// A bracket before the last one with more than [`MAX_PREFIXES`]
    /// numbers.
    #[error("a bracket before the last in {text:?} holds more than {max} numbers")]
    TooManyPrefixes {
        /// The expression (shortened as [`crate::echo`] does).
        text: String,
        /// The limit.
        max: u64,
    },
    /// A bracket of more than [`MAX_ITEMS`] comma-separated items.
    #[error("a bracket in {text:?} has more than {max} items")]
    TooManyItems {
        /// The expression (shortened as [`crate::echo`] does).
        text: String,
        /// The limit.
        max: usize,
    },
    /// A range that runs up to 2^64 − 1 (or `99999999999999999999`, read
    /// as that), which Slurm cannot expand: only a single such number in
    /// the last bracket, with no text after it, is expanded.
    #[error("range {lo}-{hi} in {text:?} reaches the largest number")]
    Overflow {
        /// The expression (shortened as [`crate::echo`] does).
        text: String,
        /// Lower bound.
        lo: u64,
        /// Upper bound.
        hi: u64,
    },
}

/// A run of hosts: `prefix` followed by the numbers `lo..=hi`, each
/// zero-padded to `width`; or, when `single`, the one host `prefix`.
#[derive(Debug)]
struct Run<'a> {
    prefix: Cow<'a, str>,
    lo: u64,
    hi: u64,
    width: usize,
    single: bool,
}

impl Run<'_> {
    fn count(&self) -> u64 {
        if self.single {
            1
        } else {
            // Callers only build runs with lo <= hi.
            (self.hi - self.lo).saturating_add(1)
        }
    }
}

/// C's `isspace` in the C locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Equality of two prefixes under Slurm's natural comparison (`strnatcmp`
/// returning 0): whitespace outside digit runs is skipped.
fn natural_eq(a: &[u8], b: &[u8]) -> bool {
    let at = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    let (mut i, mut j) = (0, 0);
    loop {
        while is_c_space(at(a, i)) {
            i += 1;
        }
        while is_c_space(at(b, j)) {
            j += 1;
        }
        let (ca, cb) = (at(a, i), at(b, j));
        if ca.is_ascii_digit() && cb.is_ascii_digit() {
            // Digit runs compare equal only when they are the same digits.
            let mut k = 0;
            loop {
                let (x, y) = (at(a, i + k), at(b, j + k));
                match (x.is_ascii_digit(), y.is_ascii_digit()) {
                    (false, false) => break,
                    (true, true) if x == y => k += 1,
                    _ => return false,
                }
            }
        }
        if ca == 0 && cb == 0 {
            return true;
        }
        if ca != cb {
            return false;
        }
        i += 1;
        j += 1;
    }
}

/// Zero padding `value` needs to reach `width` (Slurm's `_zero_padded`).
fn zero_padding(value: u64, width: usize) -> usize {
    let digits = value.checked_ilog10().map_or(1, |d| d as usize + 1);
    width.saturating_sub(digits)
}

/// Whether numbers `n` (padded to `wn`) and `m` (padded to `wm`) can share
/// one width without changing how either prints; if so, sets both widths
/// to it (Slurm's `_width_equiv`).
fn width_equiv(n: u64, wn: &mut usize, m: u64, wm: &mut usize) -> bool {
    if *wn == *wm {
        return true;
    }
    let n_same = zero_padding(n, *wn) == zero_padding(n, *wm);
    let m_same = zero_padding(m, *wm) == zero_padding(m, *wn);
    if !n_same && !m_same {
        return false;
    }
    if n_same {
        *wn = *wm;
    } else {
        *wm = *wn;
    }
    true
}

/// Same prefix and both numbered or both not (`hostrange_prefix_cmp == 0`).
fn same_prefix(a: &Run<'_>, b: &Run<'_>) -> bool {
    a.single == b.single && natural_eq(a.prefix.as_bytes(), b.prefix.as_bytes())
}

/// Slurm's hostlist: runs in order, with the bounds of [`expand`].
struct List<'a> {
    runs: Vec<Run<'a>>,
    hosts: usize,
    bytes: usize,
    /// Bytes of brackets parsed while expanding brackets before the last.
    work: usize,
}

impl<'a> List<'a> {
    fn new() -> Self {
        List {
            runs: Vec::new(),
            hosts: 0,
            bytes: 0,
            work: 0,
        }
    }

    /// Appends a run, extending the last one when it continues it
    /// (`hostlist_push_range`).
    fn push(&mut self, mut run: Run<'a>) {
        if let Some(tail) = self.runs.last_mut()
            && tail.hi == run.lo.wrapping_sub(1)
            && same_prefix(tail, &run)
            && width_equiv(tail.lo, &mut tail.width, run.lo, &mut run.width)
        {
            tail.hi = run.hi;
        } else {
            self.runs.push(run);
        }
    }

    /// Appends one name as a host (`hostlist_push_host_dims`, one
    /// dimension): trailing digits make its number.
    fn push_name(&mut self, name: &'a str) {
        let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
        let run = if digits == 0 {
            Run {
                prefix: Cow::Borrowed(name),
                lo: 0,
                hi: 0,
                width: 0,
                single: true,
            }
        } else {
            let (prefix, number) = name.split_at(name.len() - digits);
            let value = strtoul(number).map_or(0, |(v, _)| v);
            Run {
                prefix: Cow::Borrowed(prefix),
                lo: value,
                hi: value,
                width: digits,
                single: false,
            }
        };
        self.push(run);
    }
}

/// C's `strtoul` in base 10: leading whitespace, an optional sign, digits;
/// saturates at `u64::MAX`, negates modulo 2^64 after `-`. Gives the value
/// and the bytes read, or `None` when there are no digits.
fn strtoul(text: &str) -> Option<(u64, usize)> {
    let b = text.as_bytes();
    let mut i = b.iter().take_while(|&&c| is_c_space(c)).count();
    let negative = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let start = i;
    let mut value: u64 = 0;
    let mut overflow = false;
    while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
        match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(c - b'0')))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        return None;
    }
    let value = if overflow {
        u64::MAX
    } else if negative {
        value.wrapping_neg()
    } else {
        value
    };
    Some((value, i))
}

/// Writes `value` zero-padded to `width` digits. Written by hand because
/// the formatting machinery refuses widths above 65,535, and a padding
/// comes from input (`n[000…01]`); its size is counted against
/// [`MAX_BYTES`] before a name is made.
fn push_padded(out: &mut String, value: u64, width: usize) {
    let digits = value.checked_ilog10().map_or(1, |d| d as usize + 1);
    out.extend(std::iter::repeat_n('0', width.saturating_sub(digits)));
    let _ = write!(out, "{value}");
}

/// One bracket item: numbers `lo..=hi`, printed `width` wide.
#[derive(Debug, Clone, Copy)]
struct Item {
    lo: u64,
    hi: u64,
    width: usize,
}

/// The parse of one name of an expression, with its error context.
struct Expr<'t> {
    text: &'t str,
}

impl Expr<'_> {
    fn bad(&self, item: &str) -> HostlistError {
        HostlistError::BadRange {
            text: crate::echo(self.text),
            item: crate::echo(item),
        }
    }

    /// One item: `N` or `LO-HI` (`_parse_single_range`).
    fn item(&self, item: &str) -> Result<Item, HostlistError> {
        if item.contains('x') {
            return Err(self.bad(item));
        }
        let (lo_text, hi_text) = match item.split_once('-') {
            Some((lo, hi)) => (lo, Some(hi)),
            None => (item, None),
        };
        if hi_text.is_some_and(|h| h.starts_with('-')) {
            return Err(self.bad(item));
        }
        let (lo, lo_read) = strtoul(lo_text).ok_or_else(|| self.bad(item))?;
        let hi = match hi_text.filter(|h| !h.is_empty()) {
            Some(h) => match strtoul(h) {
                Some((hi, read)) if read == h.len() => hi,
                _ => return Err(self.bad(item)),
            },
            None if lo_read == lo_text.len() => lo,
            None => return Err(self.bad(item)),
        };
        if hi < lo {
            return Err(HostlistError::Backwards {
                text: crate::echo(self.text),
                lo,
                hi,
            });
        }
        if hi - lo >= MAX_RANGE {
            return Err(HostlistError::RangeTooLarge {
                text: crate::echo(self.text),
                item: crate::echo(item),
                max: MAX_RANGE,
            });
        }
        if lo < hi && hi == u64::MAX {
            return Err(HostlistError::Overflow {
                text: crate::echo(self.text),
                lo,
                hi,
            });
        }
        Ok(Item {
            lo,
            hi,
            width: lo_text.len(),
        })
    }

    /// The items of one bracket (`_parse_range_list`).
    fn items(&self, inner: &str) -> Result<Vec<Item>, HostlistError> {
        let mut out = Vec::new();
        for (k, item) in inner.split(',').enumerate() {
            if k >= MAX_ITEMS {
                return Err(HostlistError::TooManyItems {
                    text: crate::echo(self.text),
                    max: MAX_ITEMS,
                });
            }
            out.push(self.item(item)?);
        }
        Ok(out)
    }

    fn too_many(&self) -> HostlistError {
        HostlistError::TooMany {
            text: crate::echo(self.text),
            max: MAX_HOSTS,
        }
    }

    /// Refuses a number 2^64 − 1 where Slurm would count past it and
    /// never stop: in a bracket before the last, or one with text after it.
    fn no_wrap(&self, it: Item) -> Result<(), HostlistError> {
        if it.hi == u64::MAX {
            return Err(HostlistError::Overflow {
                text: crate::echo(self.text),
                lo: it.lo,
                hi: it.hi,
            });
        }
        Ok(())
    }

    fn too_long(&self) -> HostlistError {
        HostlistError::TooLong {
            text: crate::echo(self.text),
            max: MAX_BYTES,
        }
    }

    /// Pushes `prefix` + each number of `items` (+ `suffix`), after
    /// expanding the brackets left in `prefix`, the last first
    /// (`_push_range_list` and `hostlist_push_hr`).
    fn push_items<'a>(
        &self,
        list: &mut List<'a>,
        prefix: Cow<'a, str>,
        suffix: Option<&'a str>,
        items: &[Item],
    ) -> Result<(), HostlistError> {
        let bracket = prefix
            .rfind('[')
            .and_then(|open| prefix[open..].rfind(']').map(|c| (open, open + c)));
        let Some((open, close)) = bracket else {
            for it in items {
                self.push_numbers(list, prefix.clone(), suffix, *it)?;
            }
            return Ok(());
        };
        let (head, inner, tail) = (
            &prefix[..open],
            &prefix[open + 1..close],
            &prefix[close + 1..],
        );
        let nested = head.contains('[');
        // Every visit reparses this bracket; bound that work too.
        list.work = list.work.saturating_add(1 + inner.len());
        if list.work > MAX_BYTES {
            return Err(self.too_long());
        }
        let numbers = self.items(inner)?;
        let mut seen: u64 = 0;
        let mut name = String::new();
        for it in numbers {
            self.no_wrap(it)?;
            seen = seen.saturating_add(it.hi - it.lo + 1);
            if seen > MAX_PREFIXES {
                return Err(HostlistError::TooManyPrefixes {
                    text: crate::echo(self.text),
                    max: MAX_PREFIXES,
                });
            }
            for v in it.lo..=it.hi {
                name.clear();
                name.push_str(head);
                push_padded(&mut name, v, it.width);
                name.push_str(tail);
                if nested {
                    self.push_items(list, Cow::Owned(name.clone()), suffix, items)?;
                } else {
                    for it in items {
                        self.push_numbers(list, Cow::Owned(name.clone()), suffix, *it)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Pushes the hosts of one item after `prefix` (`hostlist_push_hr`),
    /// counting them against the bounds first.
    fn push_numbers<'a>(
        &self,
        list: &mut List<'a>,
        prefix: Cow<'a, str>,
        suffix: Option<&'a str>,
        it: Item,
    ) -> Result<(), HostlistError> {
        let count = it.hi - it.lo + 1;
        let digits = it.hi.checked_ilog10().map_or(1, |d| d as usize + 1);
        let each = prefix.len() + digits.max(it.width) + suffix.map_or(0, str::len);
        list.hosts = usize::try_from(count)
            .ok()
            .and_then(|c| list.hosts.checked_add(c))
            .filter(|&h| h <= MAX_HOSTS)
            .ok_or_else(|| self.too_many())?;
        list.bytes = usize::try_from(count)
            .ok()
            .and_then(|c| c.checked_mul(each))
            .and_then(|b| list.bytes.checked_add(b))
            .filter(|&b| b <= MAX_BYTES)
            .ok_or_else(|| self.too_long())?;
        match suffix {
            Some(suffix) => {
                self.no_wrap(it)?;
                for v in it.lo..=it.hi {
                    let mut name = String::with_capacity(each);
                    name.push_str(&prefix);
                    push_padded(&mut name, v, it.width);
                    name.push_str(suffix);
                    list.push(Run {
                        prefix: Cow::Owned(name),
                        lo: 0,
                        hi: 0,
                        width: 0,
                        single: true,
                    });
                }
            }
            None => list.push(Run {
                prefix,
                lo: it.lo,
                hi: it.hi,
                width: it.width,
                single: false,
            }),
        }
        Ok(())
    }

    /// One name of the expression (a token of `_next_tok`).
    fn push_token<'a>(
        &self,
        list: &mut List<'a>,
        start: usize,
        token: &'a str,
    ) -> Result<(), HostlistError> {
        let Some(open) = token.rfind('[') else {
            list.hosts += 1;
            if list.hosts > MAX_HOSTS {
                return Err(self.too_many());
            }
            list.push_name(token);
            return Ok(());
        };
        let Some(close) = token[open..].find(']').map(|c| open + c) else {
            return Err(HostlistError::Unbalanced {
                text: crate::echo(self.text),
                column: self.text[..start + open].chars().count() + 1,
            });
        };
        let after = &token[close + 1..];
        let suffix = (!after.is_empty() && !after.starts_with(',')).then_some(after);
        let items = self.items(&token[open + 1..close])?;
        self.push_items(list, Cow::Borrowed(&token[..open]), suffix, &items)
    }
}

/// Separators between names outside brackets.
fn is_separator(b: u8) -> bool {
    matches!(b, b'\t' | b',' | b' ' | b'\n')
}

/// The names of an expression: split at separators, a bracket pair
/// keeping separators inside it (`_next_tok`).
fn tokens(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let b = text.as_bytes();
    // The next `[` and `]` at or after where a search starts. Searches
    // start at positions that never go back, so each search resumes from
    // the last answer and the whole text is scanned once per byte kind
    // (a search from every name's start would make a long list of names
    // quadratic).
    let mut next = [Next::default(), Next::default()];
    let mut find = move |from: usize, c: u8| next[usize::from(c == b']')].find(b, from, c);
    let mut pos = 0;
    std::iter::from_fn(move || {
        while b.get(pos).is_some_and(|&c| is_separator(c)) {
            pos += 1;
        }
        if pos >= b.len() {
            return None;
        }
        let start = pos;
        let mut parse = pos;
        'token: loop {
            while b.get(pos).is_some_and(|&c| !is_separator(c)) {
                pos += 1;
            }
            loop {
                let Some(open) = find(parse, b'[').filter(|&o| o <= pos) else {
                    break 'token;
                };
                let Some(close) = find(parse, b']').filter(|&c| c >= open) else {
                    break 'token;
                };
                if close < pos {
                    parse = close + 1;
                } else {
                    pos = close;
                    continue 'token;
                }
            }
        }
        // Separators and brackets are ASCII, so these are char boundaries.
        text.get(start..pos).map(|t| (start, t))
    })
}

/// A memo of the next position of one byte: searched from `from`, found
/// at `at` (`None`: not in the rest of the text).
#[derive(Debug, Default, Clone, Copy)]
struct Next {
    searched: Option<(usize, Option<usize>)>,
}

impl Next {
    /// The first `c` at or after `from`.
    fn find(&mut self, b: &[u8], from: usize, c: u8) -> Option<usize> {
        if let Some((start, at)) = self.searched
            && start <= from
            && at.is_none_or(|a| a >= from)
        {
            return at;
        }
        let at = b
            .get(from..)
            .and_then(|rest| rest.iter().position(|&x| x == c))
            .map(|p| from + p);
        self.searched = Some((from, at));
        at
    }
}

/// Builds Slurm's hostlist of an expression (`hostlist_create_client`).
fn parse(text: &str) -> Result<List<'_>, HostlistError> {
    let expr = Expr { text };
    let mut list = List::new();
    for (start, token) in tokens(text) {
        expr.push_token(&mut list, start, token)?;
    }
    Ok(list)
}

/// Expands a hostlist expression into host names, in the order
/// `scontrol show hostnames` prints them (see the module documentation).
/// An empty text, or one of separators only, names no host.
///
/// # Errors
/// A `[` without `]`, a bracket item that is not a number or range, a
/// backwards range, a range reaching 2^64 − 1, or an expression over one
/// of the limits ([`MAX_RANGE`], [`MAX_PREFIXES`], [`MAX_ITEMS`],
/// [`MAX_HOSTS`], [`MAX_BYTES`]).
pub fn expand(text: &str) -> Result<Vec<String>, HostlistError> {
    let list = parse(text)?;
    if let Some(r) = list
        .runs
        .iter()
        .find(|r| !r.single && r.lo < r.hi && r.hi == u64::MAX)
    {
        return Err(HostlistError::Overflow {
            text: crate::echo(text),
            lo: r.lo,
            hi: r.hi,
        });
    }
    let mut out = Vec::with_capacity(list.hosts);
    for run in list.runs {
        if run.single {
            out.push(run.prefix.into_owned());
            continue;
        }
        for v in run.lo..=run.hi {
            let mut name = String::with_capacity(run.prefix.len() + run.width.max(20));
            name.push_str(&run.prefix);
            push_padded(&mut name, v, run.width);
            out.push(name);
        }
    }
    Ok(out)
}

/// How many names `text` expands to, without making them: a reader can
/// check a whole file's total against its limit before any name exists.
///
/// ```
/// use partalloc_topology::slurm::hostlist;
/// assert_eq!(hostlist::count("n[0-99],s[1-2]c[1-3]")?, 106);
/// # Ok::<(), partalloc_topology::slurm::HostlistError>(())
/// ```
///
/// # Errors
/// As [`expand`], whose limits apply to each expression.
pub fn count(text: &str) -> Result<u64, HostlistError> {
    Ok(parse(text)?.hosts as u64)
}

/// Writes the numbers of a run: `lo` or `lo-hi` (`hostrange_numstr`).
fn write_numbers(out: &mut String, run: &Run<'_>) {
    if run.single {
        return;
    }
    push_padded(out, run.lo, run.width);
    if run.lo < run.hi {
        out.push('-');
        push_padded(out, run.hi, run.width);
    }
}

/// Compresses host names into one hostlist expression, as
/// `scontrol show hostlist` prints the list of the names in this order (see
/// the module documentation): names keep their order and repeats.
///
/// Each name is taken as one host, as Slurm takes a name without brackets;
/// a name holding a separator (`,`, space, tab, newline) or a bracket is
/// copied as is and does not expand back to itself.
#[must_use]
pub fn compress<S: AsRef<str>>(names: &[S]) -> String {
    let mut list = List::new();
    for name in names {
        list.push_name(name.as_ref());
    }
    let runs = &list.runs;
    let mut out = String::new();
    let mut i = 0;
    while let Some(first) = runs.get(i) {
        if i > 0 {
            out.push(',');
        }
        let joins = |a: &Run<'_>, b: &Run<'_>| !a.single && !b.single && same_prefix(a, b);
        let bracket = first.count() > 1 || runs.get(i + 1).is_some_and(|next| joins(first, next));
        out.push_str(&first.prefix);
        if bracket {
            out.push('[');
        }
        write_numbers(&mut out, first);
        i += 1;
        while let Some(run) = runs.get(i).filter(|r| joins(r, &runs[i - 1])) {
            out.push(',');
            write_numbers(&mut out, run);
            i += 1;
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
    fn count_agrees_with_expand_without_making_names() {
        for text in [
            "a,b[1-3]x[08-10]",
            "n[0-99],s[1-2]c[1-3]",
            "",
            "x,,y",
            "n[1-3]a",
        ] {
            assert_eq!(
                count(text),
                Ok(expand(text).map_or(0, |v| v.len() as u64)),
                "{text}"
            );
        }
        let huge = "n[0-9999999999999999999][0-9999999999999999999][0-9999999999999999999]";
        assert!(count(huge).is_err());
        assert_eq!(count("n[0-2]").ok(), Some(3));
    }

    fn ex(text: &str) -> Vec<String> {
        expand(text).unwrap()
    }

    #[test]
    fn documented_forms_expand_as_slurm_does() {
        assert_eq!(
            ex("node[001-003,020]"),
            ["node001", "node002", "node003", "node020"]
        );
        assert_eq!(
            ex("rack[0-1]-n[00-02]"),
            [
                "rack0-n00",
                "rack0-n01",
                "rack0-n02",
                "rack1-n00",
                "rack1-n01",
                "rack1-n02"
            ]
        );
        assert_eq!(ex("tux[8-10]"), ["tux8", "tux9", "tux10"]);
        assert_eq!(ex("tux[08-10]"), ["tux08", "tux09", "tux10"]);
        assert_eq!(ex("s[0-2,4-5,12]").len(), 6);
    }

    #[test]
    fn separators_are_commas_and_whitespace_and_runs_count_once() {
        assert_eq!(ex(" a , b[1]"), ["a", "b1"]);
        assert_eq!(ex("a,,b\tc\nd e"), ["a", "b", "c", "d", "e"]);
        assert!(ex("").is_empty());
        assert!(ex(" ,, ").is_empty());
        // Inside a bracket a space is part of the item: width 2.
        assert_eq!(ex("n[1, 2]"), ["n1", "n02"]);
    }

    #[test]
    fn three_brackets_vary_middle_then_first_then_last() {
        assert_eq!(
            ex("s[1-2]c[1-2]n[1-2]"),
            [
                "s1c1n1", "s1c1n2", "s2c1n1", "s2c1n2", "s1c2n1", "s1c2n2", "s2c2n1", "s2c2n2"
            ]
        );
        // Four: the third slowest, then the second, then the first, the last fastest.
        assert_eq!(
            ex("a[1-2]b[1-2]c[1-2]d[1]"),
            [
                "a1b1c1d1", "a2b1c1d1", "a1b2c1d1", "a2b2c1d1", "a1b1c2d1", "a2b1c2d1", "a1b2c2d1",
                "a2b2c2d1"
            ]
        );
    }

    #[test]
    fn text_after_the_last_bracket_follows_every_number() {
        assert_eq!(ex("n[1-3]a"), ["n1a", "n2a", "n3a"]);
        assert_eq!(
            ex("r[1-2]n[1-2].x"),
            ["r1n1.x", "r1n2.x", "r2n1.x", "r2n2.x"]
        );
        // Names given with their text after do not join into runs.
        assert_eq!(compress(&ex("n[1-3]a")), "n1a,n2a,n3a");
    }

    #[test]
    fn items_are_read_as_strtoul_reads_them() {
        assert_eq!(ex("n[1-]"), ["n1"]);
        assert_eq!(ex("n[+2]"), ["n02"]);
        assert_eq!(ex("n[1a-3]"), ["n01", "n02", "n03"]);
        assert_eq!(ex("n[0-65535]").len(), 65536);
        assert_eq!(ex("n99999999999999999999"), ["n18446744073709551615"]);
        assert_eq!(ex("n[1[2]"), ["n[12"]);
        assert_eq!(ex("n1]"), ["n1]"]);
        assert_eq!(ex("n[[1]]"), ["n[1]"]);
    }

    #[test]
    fn a_bad_bracket_anywhere_is_refused() {
        for bad in ["a[x]c[1-2]", "a[x]b[1-2]c[1-2]", "a[1]b[2-1]c[1]d[1]"] {
            assert!(expand(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn compression_keeps_order_repeats_and_paddings() {
        assert_eq!(compress(&["x0y21", "x0y20"]), "x0y[21,20]");
        assert_eq!(compress(&["n3", "n1"]), "n[3,1]");
        assert_eq!(compress(&["n1", "n1"]), "n[1,1]");
        assert_eq!(compress(&["n1", "n02", "n3"]), "n[1,02,3]");
        assert_eq!(compress(&["n8", "n9", "n10", "n11"]), "n[8-11]");
        assert_eq!(compress(&["n08", "n09", "n10"]), "n[08-10]");
        assert_eq!(compress(&["n9", "n010"]), "n[9,010]");
        assert_eq!(compress(&["a", "n1", "n2", "a", "n3"]), "a,n[1-2],a,n3");
        assert_eq!(compress(&["n1", "m1", "n2"]), "n1,m1,n2");
        assert_eq!(compress(&["7", "8"]), "[7-8]");
        assert_eq!(compress::<&str>(&[]), "");
        let racks = ex("rack[0-3]-n[00-17]");
        assert_eq!(
            compress(&racks),
            "rack0-n[00-17],rack1-n[00-17],rack2-n[00-17],rack3-n[00-17]"
        );
        assert_eq!(compress(&ex("node[001-018,020]")), "node[001-018,020]");
    }

    #[test]
    fn malformed_expressions_are_refused_with_a_typed_error() {
        assert_eq!(
            expand("a,node[1-3").unwrap_err(),
            HostlistError::Unbalanced {
                text: "a,node[1-3".into(),
                column: 7
            }
        );
        for bad in [
            "n[a-3]", "n[]", "n[1,]", "n[1x2]", "n[1--3]", "n[-3]", "n[1a]", "n[1-3b]",
        ] {
            assert!(
                matches!(expand(bad), Err(HostlistError::BadRange { .. })),
                "{bad}"
            );
        }
        assert!(matches!(
            expand("n[5-3]"),
            Err(HostlistError::Backwards { lo: 5, hi: 3, .. })
        ));
        assert!(matches!(
            expand("n[0-65536]"),
            Err(HostlistError::RangeTooLarge { max: 65536, .. })
        ));
        assert!(matches!(
            expand("n[0-99999999999]"),
            Err(HostlistError::RangeTooLarge { .. })
        ));
        assert!(matches!(
            expand("a[0-65535,0]b[1]"),
            Err(HostlistError::TooManyPrefixes { .. })
        ));
        assert!(matches!(
            expand("n[0-4095]x[0-1024]"),
            Err(HostlistError::TooMany { .. })
        ));
        assert!(matches!(
            expand("n[18446744073709551614-18446744073709551615]"),
            Err(HostlistError::Overflow { .. })
        ));
        assert_eq!(
            expand("n[5-3]").unwrap_err().to_string(),
            "range 5-3 in \"n[5-3]\" runs backwards"
        );
    }

    #[test]
    fn huge_names_are_refused_before_they_are_made() {
        let text = format!("n[{}-65535]x[0-9]", "0".repeat(5000));
        assert!(matches!(
            expand(&text),
            Err(HostlistError::TooLong { max: MAX_BYTES, .. })
        ));
    }

    fn name() -> impl Strategy<Value = String> {
        (
            prop::sample::select(vec!["n", "node", "rack1-n", "gpu-", "x0y", ""]),
            0u64..40,
            prop::sample::select(vec![0usize, 1, 2, 3]),
            prop::sample::select(vec!["", "", "", "a", ".x"]),
        )
            .prop_map(|(p, v, w, s)| format!("{p}{v:0w$}{s}"))
    }

    proptest! {
        #[test]
        fn expand_after_compress_is_identity(names in prop::collection::vec(name(), 0..40)) {
            let text = compress(&names);
            prop_assert_eq!(expand(&text).unwrap(), names, "{}", text);
        }

        #[test]
        fn any_text_expands_or_is_refused_without_panicking(
            text in "[\\[\\]0-9ax, +\t-]{0,40}",
            names in prop::collection::vec("[\\[\\]0-9ax, -]{0,8}", 0..8),
        ) {
            if let Ok(got) = expand(&text) {
                prop_assert!(got.iter().all(|n| !n.is_empty()));
            }
            let _ = compress(&names);
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
