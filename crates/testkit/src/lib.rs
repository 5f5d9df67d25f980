//! Generators shared by the randomized input suites of the partalloc
//! crates: valid inputs edited at random character boundaries, so that
//! every parser meets text that is almost right.
//!
//! ```
//! use partalloc_testkit::{escaped, mutate};
//! use proptest::sample::Index;
//! use proptest::strategy::{Strategy, ValueTree};
//! use proptest::test_runner::TestRunner;
//!
//! let mut text = String::from("mesh:8x8");
//! // An index drawn by proptest picks the boundary; op 0 inserts.
//! let at = proptest::arbitrary::any::<Index>()
//!     .new_tree(&mut TestRunner::deterministic())
//!     .map_err(|e| e.to_string())?
//!     .current();
//! mutate(&mut text, 0, at, "é");
//! assert_eq!(text.chars().count(), 9);
//! assert_eq!(escaped("a\tb"), "a\\tb");
//! # Ok::<(), String>(())
//! ```

use core::ops::Range;

use proptest::prelude::*;
use proptest::sample::{Index, select};

/// One edit of `text` at the character boundary chosen by `at`: `op % 3`
/// is 0 to insert `piece`, 1 to delete the character there, 2 to replace
/// it by `piece`; at the end of the text, where there is nothing to delete
/// or replace, both append `piece`.
pub fn mutate(text: &mut String, op: u8, at: Index, piece: &str) {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let i = bounds[at.index(bounds.len())];
    let next = bounds.iter().copied().find(|&b| b > i);
    match (op % 3, next) {
        (0, _) => text.insert_str(i, piece),
        (1, Some(j)) => text.replace_range(i..j, ""),
        (_, Some(j)) => text.replace_range(i..j, piece),
        (_, None) => text.push_str(piece),
    }
}

/// One of `valid`, changed by a number of [`mutate`] edits drawn from
/// `edits`, each inserting or replacing with one of `pieces`.
///
/// # Panics
/// When `valid` or `pieces` is empty (a mistake in the test itself).
pub fn mutated(
    valid: &'static [&'static str],
    pieces: impl Into<Vec<&'static str>>,
    edits: Range<usize>,
) -> impl Strategy<Value = String> {
    (
        select(valid),
        prop::collection::vec((any::<u8>(), any::<Index>(), select(pieces.into())), edits),
    )
        .prop_map(|(base, edits)| {
            let mut text = base.to_owned();
            for (op, at, piece) in edits {
                mutate(&mut text, op, at, piece);
            }
            text
        })
}

/// Pieces that break parsers whatever their grammar: whitespace, control,
/// multi-byte and bidirectional characters, numbers at and past the edges
/// of the integer types, and the empty piece. Each suite adds the
/// separators of its own grammar ([`pieces`]).
pub const EDGE_PIECES: &[&str] = &[
    " ",
    "\t",
    "\n",
    "\0",
    "0",
    "1",
    "2",
    "-1",
    "4294967295",
    "4294967296",
    "99999999999999999999",
    "1e400",
    "é",
    "🦀",
    "\u{202e}",
    "",
];

/// A suite's own pieces followed by [`EDGE_PIECES`], each once.
pub fn pieces(own: &[&'static str]) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = own.to_vec();
    for p in EDGE_PIECES {
        if !v.contains(p) {
            v.push(p);
        }
    }
    v
}

/// Small machines of every family with a text form, single-node ones
/// included: the machines the randomized suites build strategies and
/// policies on (file-based families are each suite's own).
pub const SMALL_MACHINES: &[&str] = &[
    "gpushare:3x4gpu",
    "gpushare:1x0gpu",
    "hypercube:0",
    "hypercube:1",
    "hypercube:3",
    "hypercube:6",
    "mesh:1",
    "mesh:1x1",
    "mesh:3x5",
    "mesh:4x4",
    "mesh:8x8",
    "mesh:2x2x2",
    "mesh:4x4x4",
    "kary:3^3",
    "torus:4x4",
    "torus:8x8",
    "kary-torus:4^3",
    "torus:2x2x2x2",
    "racks:1x1x1gpu",
    "racks:2x2x2x2gpu",
    "pod:tpu-v5e:4x4",
];

/// The one grammar of descriptions every registry parses:
/// `name`, `name[]` or `name[key=value,…]`, over `names` and `params`
/// with values from `value`, and now and then a stray or doubled bracket
/// or another separator, so the parser meets text that is almost right.
///
/// ```
/// use proptest::prelude::*;
/// use proptest::strategy::ValueTree;
/// use proptest::test_runner::TestRunner;
/// let g = partalloc_testkit::spec_grammar(vec!["fcfs"], vec!["rotate"], Just("true".to_owned()));
/// let mut runner = TestRunner::deterministic();
/// for _ in 0..50 {
///     let text = g.new_tree(&mut runner).map_err(|e| e.to_string())?.current();
///     assert!(text.starts_with("fcfs"), "{text}");
/// }
/// # Ok::<(), String>(())
/// ```
pub fn spec_grammar(
    names: Vec<&'static str>,
    params: Vec<&'static str>,
    value: impl Strategy<Value = String>,
) -> impl Strategy<Value = String> {
    (
        select(names),
        prop::collection::vec((select(params), value), 0..4),
        almost("[", &["", "[[", " ["]),
        almost("]", &["", "]]", "] "]),
        almost(",", &[", ", ",,", ";"]),
    )
        .prop_map(|(name, params, open, close, sep)| {
            if params.is_empty() && open.is_empty() {
                return name.to_owned();
            }
            let items: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{name}{open}{}{close}", items.join(sep))
        })
}

/// `right` three times in four, else one of `wrong`.
fn almost(
    right: &'static str,
    wrong: &'static [&'static str],
) -> impl Strategy<Value = &'static str> {
    prop_oneof![3 => Just(right), 1 => select(wrong)]
}

/// `text` as an error message shows it: with `{:?}`'s escapes, no quotes.
pub fn escaped(text: &str) -> String {
    let quoted = format!("{text:?}");
    quoted[1..quoted.len() - 1].to_owned()
}

/// `items` sorted, each once.
pub fn sorted_unique<T: Ord>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = items.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The words of parameter documentation, as (doc, default) pairs: each doc
/// cut at every character `keep` rejects, with its default, sorted and
/// each once (the accepted values and their near misses, for fuzzing).
pub fn doc_words<'a>(
    docs: impl IntoIterator<Item = (&'a str, &'a str)>,
    keep: impl Fn(char) -> bool,
) -> Vec<String> {
    sorted_unique(docs.into_iter().flat_map(|(doc, default)| {
        doc.split(|c: char| !keep(c))
            .chain([default])
            .map(str::to_owned)
            .collect::<Vec<_>>()
    }))
}

/// The property every parsed text must meet: a value prints to text that
/// parses back to it; an error message contains `quoted` (how it should
/// quote the text).
///
/// # Errors
/// A failed case when either half does not hold.
pub fn parses_back_or_quotes<T, E>(
    text: &str,
    parsed: Result<T, E>,
    quoted: &str,
) -> Result<(), TestCaseError>
where
    T: core::fmt::Display + core::str::FromStr + PartialEq + core::fmt::Debug,
    T::Err: core::fmt::Display,
    E: core::fmt::Display,
{
    match parsed {
        Ok(value) => {
            let again: T = value
                .to_string()
                .parse()
                .map_err(|e| TestCaseError::fail(format!("{value} does not parse back: {e}")))?;
            prop_assert_eq!(again, value);
        }
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(
                msg.contains(quoted),
                "the error for {text:?} does not quote it (up to 40 characters): {msg}"
            );
        }
    }
    Ok(())
}

/// Fails unless `value` written as JSON reads back equal.
///
/// # Panics
/// When it does not (this is a test assertion).
#[expect(clippy::panic, reason = "a failed round trip fails the calling test")]
pub fn json_round_trip<T>(value: &T)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + core::fmt::Debug,
{
    let text = serde_json::to_string(value).unwrap_or_else(|e| panic!("{value:?}: {e}"));
    let back: T = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(&back, value, "{text}");
}

/// Fails unless reading `text` as JSON of a `T` is refused.
///
/// # Panics
/// When it is accepted (this is a test assertion).
pub fn json_rejects<T: serde::de::DeserializeOwned + core::fmt::Debug>(text: &str) {
    let r = serde_json::from_str::<T>(text);
    assert!(r.is_err(), "{text} gave {r:?}");
}

/// Brute-force dispersal of `n` nodes, the oracle of the dispersal
/// measures: `distance(i, j)` for every pair gives the distance sum and the
/// diameter, and a flood fill over the pairs at distance 1 (neighbours)
/// counts the contiguous pieces. Returns (sum, diameter, pieces); O(n²).
///
/// ```
/// // Nodes 0, 1, 2 and 5 on a line: pieces {0, 1, 2} and {5}.
/// let x = [0i64, 1, 2, 5];
/// let d = |i: usize, j: usize| (x[i] - x[j]).unsigned_abs() as u32;
/// assert_eq!(partalloc_testkit::brute_dispersal(4, d), (1 + 2 + 5 + 1 + 4 + 3, 5, 2));
/// ```
pub fn brute_dispersal(n: usize, distance: impl Fn(usize, usize) -> u32) -> (u128, u32, u32) {
    let (mut sum, mut diameter) = (0u128, 0u32);
    for i in 0..n {
        for j in i + 1..n {
            let t = distance(i, j);
            sum += u128::from(t);
            diameter = diameter.max(t);
        }
    }
    let mut seen = vec![false; n];
    let mut pieces = 0;
    for s in 0..n {
        if seen[s] {
            continue;
        }
        pieces += 1;
        seen[s] = true;
        let mut stack = vec![s];
        while let Some(v) = stack.pop() {
            for (j, done) in seen.iter_mut().enumerate() {
                if !*done && distance(v, j) == 1 {
                    *done = true;
                    stack.push(j);
                }
            }
        }
    }
    (sum, diameter, pieces)
}

#[cfg(test)]
mod tests {
    use proptest::strategy::ValueTree as _;

    use super::*;

    fn index(pick: usize, len: usize) -> Index {
        // `Index` maps a uniform draw onto a length; build one that lands
        // on a chosen position by searching the deterministic runner.
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        loop {
            let Ok(tree) = any::<Index>().new_tree(&mut runner) else {
                continue;
            };
            let at = tree.current();
            if at.index(len) == pick {
                return at;
            }
        }
    }

    #[test]
    fn each_edit_acts_at_the_chosen_boundary() {
        let mut text = String::from("abc");
        mutate(&mut text, 0, index(1, 4), "X");
        assert_eq!(text, "aXbc");
        let mut text = String::from("abc");
        mutate(&mut text, 1, index(1, 4), "X");
        assert_eq!(text, "ac");
        let mut text = String::from("abc");
        mutate(&mut text, 2, index(1, 4), "XY");
        assert_eq!(text, "aXYc");
        // At the end there is nothing to delete or replace: both append.
        let mut text = String::from("abc");
        mutate(&mut text, 1, index(3, 4), "X");
        assert_eq!(text, "abcX");
        let mut text = String::from("abc");
        mutate(&mut text, 2, index(3, 4), "Y");
        assert_eq!(text, "abcY");
    }

    #[test]
    fn edits_respect_multibyte_characters() {
        let mut text = String::from("é√");
        mutate(&mut text, 1, index(1, 3), "");
        assert_eq!(text, "é");
    }

    proptest! {
        #[test]
        fn mutations_start_from_a_valid_text(text in mutated(&["abc"], &["x"], 0..1)) {
            prop_assert_eq!(text, "abc");
        }

        #[test]
        fn one_edit_changes_the_length_by_at_most_the_piece(
            text in mutated(&["abcdef"], &["xy"], 1..2),
        ) {
            prop_assert!((5..=8).contains(&text.len()), "{text:?}");
        }
    }
}
