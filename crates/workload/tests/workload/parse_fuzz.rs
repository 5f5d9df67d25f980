//! Randomized input for what this crate reads from users: SWF job lines,
//! SWF headers and whole traces, and the parameters of the workload laws
//! (the numbers behind `--residence`, `--cube-dims`, `--load`, …).
//!
//! Case counts per run (each suite `ProptestConfig::with_cases(10_000)`):
//! - SWF job lines: 10,000 from a grammar of near-valid lines and 10,000
//!   mutations of archive lines;
//! - SWF traces through `SwfReader` (headers, comments, blank, job and
//!   non-UTF-8 lines, strict and lenient): 10,000;
//! - SWF header `Key: value` lines read as integers: 10,000;
//! - workload laws built from arbitrary numbers (NaN, infinities, negative,
//!   subnormal, huge): 10,000.
//!
//! Each input must give either a value (a record that writes back to the
//! same record, a law with a finite mean and non-negative draws) or an error
//! naming its line, field and text, or the parameter at fault — never a
//! panic.

use partalloc_testkit::mutated as mutated_text;
use partalloc_workload::swf::{SwfHeader, SwfReader, SwfRecord};
use partalloc_workload::{
    Constant, CubeDims, CubicShapes, Exponential, HyperExponential, MeanDistribution, MeshSides,
    NoncubicShapes, OfferedLoad, PoissonArrivals, SideLaw, UniformDemand,
};
use proptest::prelude::*;
use proptest::sample::select;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::Distribution;

/// Job lines of real archive traces, the starting points of mutations.
const VALID: &[&str] = &[
    "1 0 -1 1451 128 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1",
    "2 1460 -1 3726 32 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1",
    "17 86400.5 12 0 1 0.25 1024 1 3600 2048 1 7 3 12 1 1 16 30.5",
    "  3\t5 0 1e3 64 -1 -1 64 1e4 -1 0 2 2 -1 -1 -1 -1 -1  ",
];

/// Tokens of the grammar and pieces inserted by mutations: the format's
/// unknown marker, numbers at the edges of `u64` and `f64`, words `f64`
/// would otherwise accept, separators and multi-byte characters.
fn pieces() -> Vec<&'static str> {
    partalloc_testkit::pieces(&[
        "-1",
        "-1.0",
        "-0",
        "-2",
        "0",
        "1",
        "0.5",
        ".5",
        "5.",
        "1e3",
        "1e308",
        "1e309",
        "-1e309",
        "1e-400",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999999999",
        "inf",
        "NaN",
        "+3",
        "--1",
        "e",
        ".",
        "",
        " ",
        "\t",
        ";",
        "\u{a0}",
        "é",
        "🦀",
        "\0",
    ])
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(pieces()).prop_map(str::to_owned),
        2 => any::<u64>().prop_map(|n| n.to_string()),
        2 => any::<f64>().prop_map(|x| x.to_string()),
        1 => "[-+.eE0-9]{1,8}",
    ]
}

/// A job line from the grammar: 16 to 20 tokens (mostly 18) separated by
/// spaces or tabs.
fn grammar_line() -> impl Strategy<Value = String> {
    let count = prop_oneof![6 => Just(18usize), 1 => 16usize..=20];
    count.prop_flat_map(|n| {
        (
            prop::collection::vec(token(), n),
            select(&[" ", "\t", "  ", " \t"][..]),
        )
            .prop_map(|(toks, sep)| toks.join(sep))
    })
}

fn mutated_line() -> impl Strategy<Value = String> {
    mutated_text(VALID, pieces(), 1..6)
}

/// A parsed line writes back to a line that parses to the same record;
/// an error starts with the line number and quotes the field's text.
fn check_line(text: &str, line: u64) -> Result<(), TestCaseError> {
    match SwfRecord::parse_line(text, line) {
        Ok(r) => {
            r.check_writable()
                .map_err(|e| TestCaseError::fail(format!("{text:?} parsed to {r:?}: {e}")))?;
            let again = SwfRecord::parse_line(&r.to_string(), line)
                .map_err(|e| TestCaseError::fail(format!("{r} does not read back: {e}")))?;
            prop_assert_eq!(again, r);
        }
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(
                msg.starts_with(&format!("line {line}: ")),
                "no line in {msg}"
            );
            if msg.contains("field ") {
                let quoted = text
                    .split_ascii_whitespace()
                    .any(|tok| msg.contains(&format!("{:?}", partalloc_topology::echo(tok))));
                prop_assert!(quoted, "{msg} quotes no field of {text:?}");
            }
        }
    }
    Ok(())
}

/// A trace: header comments, blank lines, job lines and raw bytes.
fn trace() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        3 => mutated_line().prop_map(String::into_bytes),
        2 => grammar_line().prop_map(String::into_bytes),
        2 => header_line().prop_map(|h| format!(";{h}").into_bytes()),
        1 => Just(Vec::new()),
        1 => prop::collection::vec(any::<u8>(), 0..30),
    ];
    (
        prop::collection::vec(line, 0..12),
        select(&["\n", "\r\n"][..]),
    )
        .prop_map(|(lines, end)| lines.join(end.as_bytes()))
}

/// A header line body (after the `;`): `Key: value`, continuations and
/// free text.
fn header_line() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        select(&["MaxNodes", "MaxProcs", "MaxJobs", "Note", "Queue", ""][..])
            .prop_map(str::to_owned),
        "[A-Za-z_0-9é]{0,10}",
    ];
    let value = prop_oneof![token(), ".{0,12}"];
    prop_oneof![
        3 => (select(&[" ", "", "\t"][..]), key, select(&[": ", ":", " : ", ":\t"][..]), value)
            .prop_map(|(lead, k, colon, v)| format!("{lead}{k}{colon}{v}")),
        1 => ".{0,20}",
    ]
}

fn law_number() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => select(&[
            0.0, -0.0, 1.0, -1.0, 0.5, 0.999_999, 1.000_001, 2.0, 4.0, 1e-300, 5e-324,
            1e300, f64::MAX, f64::MIN_POSITIVE, f64::NAN, f64::INFINITY, f64::NEG_INFINITY,
        ][..]),
        2 => 0.0..10.0f64,
        1 => any::<f64>(),
    ]
}

/// Draws from a law built without error are non-negative numbers, and its
/// mean is finite and non-negative.
fn check_draws<D: MeanDistribution>(law: &D, what: &str) -> Result<(), TestCaseError> {
    let mean = law.mean();
    // Bounds like (0, 5e-324) have a mean that underflows to 0; the load
    // computation refuses that, so only NaN, ∞ and negatives are wrong here.
    prop_assert!(mean.is_finite() && mean >= 0.0, "{what}: mean {mean}");
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..16 {
        let x = law.sample(&mut rng);
        // A mean near f64::MAX may overflow to +∞ in a draw; never NaN or < 0.
        prop_assert!(x >= 0.0, "{what}: drew {x}");
    }
    Ok(())
}

/// An error names one of `names` or shows one of `values`.
fn names_input(msg: &str, names: &[&str], values: &[f64], what: &str) -> Result<(), TestCaseError> {
    let named = names.iter().any(|n| msg.contains(n))
        || values.iter().any(|v| msg.contains(&v.to_string()));
    prop_assert!(named, "{what}: {msg} names no parameter");
    Ok(())
}

/// An exponent's minus sign does not split a uniform law into a range.
#[test]
fn uniform_laws_keep_exponents_whole() {
    use partalloc_workload::DemandLaw;
    let mean: DemandLaw = "uniform:1e-3".parse().unwrap();
    assert_eq!(mean.to_string(), "uniform:0.001");
    let range: DemandLaw = "uniform:1e-3-3E-3".parse().unwrap();
    assert_eq!(range.to_string(), "uniform:0.001-0.003");
    let e = "uniform:x-2".parse::<DemandLaw>().unwrap_err().to_string();
    assert!(e.contains("uniform:x-2"), "{e}");
}

/// A line with no end (a binary file, a file with no line breaks) stops
/// the read at the bound instead of filling memory, strict or lenient.
#[test]
fn endless_lines_stop_at_the_bound() {
    use partalloc_workload::swf::MAX_LINE_BYTES;
    let long = vec![b'7'; 3 * MAX_LINE_BYTES as usize];
    let header = [b"; MaxNodes: 4\n".as_slice(), &long].concat();
    let e = SwfReader::new(header.as_slice()).unwrap_err().to_string();
    assert!(e.starts_with("line 2: longer than 1048576 bytes"), "{e}");
    let jobs = [VALID[0].as_bytes(), b"\n", &long].concat();
    for lenient in [false, true] {
        let items: Vec<_> = SwfReader::new(jobs.as_slice())
            .unwrap()
            .lenient(lenient)
            .collect();
        assert_eq!(items.len(), 2, "lenient {lenient}");
        let e = items[1].as_ref().unwrap_err().to_string();
        assert!(e.starts_with("line 2: longer than"), "{e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// 10,000 job lines from the grammar.
    #[test]
    fn grammar_lines_parse_or_name_line_and_field(text in grammar_line(), line in 1u64..1_000_000) {
        check_line(&text, line)?;
    }

    /// 10,000 mutated archive lines.
    #[test]
    fn mutated_lines_parse_or_name_line_and_field(text in mutated_line(), line in 1u64..1_000_000) {
        check_line(&text, line)?;
    }

    /// 10,000 traces read strictly and leniently: every error names a
    /// line that exists, a strict read stops at its first error, and the
    /// lenient read returns the strict read's records and skips the rest.
    #[test]
    fn traces_read_or_name_the_line(bytes in trace()) {
        let lines = bytes.split(|&b| b == b'\n').count() as u64;
        let mut strict = SwfReader::new(bytes.as_slice()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut good = Vec::new();
        for item in strict.by_ref() {
            match item {
                Ok(r) => good.push(r),
                Err(e) => {
                    let msg = e.to_string();
                    let n: u64 = msg
                        .strip_prefix("line ")
                        .and_then(|m| m.split(':').next())
                        .and_then(|n| n.parse().ok())
                        .ok_or_else(|| TestCaseError::fail(format!("no line in {msg}")))?;
                    prop_assert!((1..=lines).contains(&n), "line {n} of {lines}: {msg}");
                    break;
                }
            }
        }
        let lenient = SwfReader::new(bytes.as_slice())
            .map_err(|e| TestCaseError::fail(e.to_string()))?
            .lenient(true);
        let all: Vec<SwfRecord> = lenient
            .collect::<Result<_, _>>()
            .map_err(|e| TestCaseError::fail(format!("lenient read failed: {e}")))?;
        prop_assert!(all.starts_with(&good));
    }

    /// 10,000 header lines: a numeric key reads as an integer or as an
    /// error naming the key, its text and its line.
    #[test]
    fn header_values_read_or_name_key_and_line(body in header_line(), line in 1u64..1000) {
        let mut header = SwfHeader::new();
        header.push_line(&body, line);
        prop_assert_eq!(header.lines().len(), 1);
        for key in ["MaxNodes", "MaxProcs", "MaxJobs"] {
            if let Err(e) = header.get_u64(key) {
                let msg = e.to_string();
                let value = header.get(key).unwrap_or_default();
                prop_assert!(
                    msg.contains(key) && msg.contains(&format!("{:?}", partalloc_topology::echo(value)))
                        && msg.starts_with(&format!("line {line}:")),
                    "{msg}"
                );
            }
        }
    }

    /// 10,000 sets of law parameters: each law builds (and then draws
    /// finite, non-negative values) or names the parameter at fault.
    #[test]
    fn laws_build_or_name_the_parameter(
        a in law_number(),
        b in law_number(),
        c in law_number(),
        weights in prop::collection::vec(law_number(), 0..40),
        sides in prop::collection::vec(prop_oneof![0u32..40, any::<u32>()], 0..12),
        nodes in prop_oneof![0u64..5000, any::<u64>()],
        dims in (0u32..40, 0u32..40),
    ) {
        match Exponential::new(a) {
            Ok(l) => check_draws(&l, "exp")?,
            Err(e) => names_input(&e.to_string(), &["mean"], &[a], "exp")?,
        }
        match UniformDemand::new(a, b) {
            Ok(l) => check_draws(&l, "uniform")?,
            Err(e) => names_input(&e.to_string(), &["lower", "upper"], &[a, b], "uniform")?,
        }
        match UniformDemand::with_mean(a) {
            Ok(l) => check_draws(&l, "uniform mean")?,
            Err(e) => names_input(&e.to_string(), &["mean", "uniform demand"], &[a], "uniform mean")?,
        }
        match HyperExponential::new(a, b, c) {
            Ok(l) => check_draws(&l, "hyper")?,
            Err(e) => names_input(&e.to_string(), &["mean", "α", "coefficient of variation"], &[a, b, c], "hyper")?,
        }
        match HyperExponential::from_branches(a, b, c) {
            Ok(l) => check_draws(&l, "hyper branches")?,
            Err(e) => names_input(&e.to_string(), &["mean", "α"], &[a, b, c], "hyper branches")?,
        }
        match Constant::new(a) {
            Ok(l) => check_draws(&l, "const")?,
            Err(e) => names_input(&e.to_string(), &["value"], &[a], "const")?,
        }
        match OfferedLoad::saturating(a, nodes, b, c) {
            // The rate λ = ρN/(mr) can overflow; the arrival process refuses it.
            Ok(l) => match PoissonArrivals::from_load(&l) {
                Ok(p) => prop_assert!(p.rate().is_finite() && p.rate() > 0.0),
                Err(e) => names_input(&e.to_string(), &["arrival rate"], &[], "rate")?,
            },
            Err(e) => names_input(&e.to_string(), &["load", "mean request", "residence", "machine"], &[a, b, c], "load")?,
        }
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        match CubeDims::from_weights(&weights) {
            Ok(l) => {
                let p = l.probabilities();
                prop_assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{p:?}");
                let _ = l.sample(&mut rng);
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(
                    msg.starts_with("probability table: ")
                        || msg.starts_with("cube dimension weights: the weights add up to more"),
                    "{msg}"
                );
            }
        }
        if let Err(e) = CubeDims::uniform(dims.0, dims.1) {
            // Above the largest dimension only the upper bound is at fault.
            let msg = e.to_string();
            let named = if dims.1 > partalloc_topology::MAX_HYPERCUBE_DIM {
                msg.contains(&format!("{} is above the largest supported, 30", dims.1))
            } else {
                msg.contains(&dims.0.to_string()) && msg.contains(&dims.1.to_string())
            };
            prop_assert!(named, "{msg}");
        }
        for (what, built) in [
            ("cubic", CubicShapes::new(&sides).map(|s| s.max_exponents().len())),
            ("noncubic", NoncubicShapes::new(&sides).map(|s| s.max_sides().len())),
            // The normal law's mean sums O(√side) terms; the closed-form
            // laws take the same checks at any size.
            ("sides", MeshSides::new(SideLaw::TruncatedExponential, &sides).map(|s| s.max_sides().len())),
        ] {
            match built {
                Ok(n) => prop_assert_eq!(n, sides.len()),
                Err(e) => {
                    let msg = e.to_string();
                    let named = msg.contains("dimension") || msg.contains("side") || msg.contains("exponent");
                    prop_assert!(named, "{what} {sides:?}: {msg}");
                }
            }
        }
    }
}
