//! Randomized input for `Topology::from_str`, the parser behind every
//! `--topology` flag and `topology = "…"` line of an experiment file.
//!
//! Two suites of 10,000 cases each (20,000 inputs per run): strings drawn
//! from a grammar of near-valid descriptions (families in any case, sizes
//! from 0 to far past `u32::MAX`, odd separators), and valid descriptions
//! mutated by inserting, deleting or replacing characters. Each input must
//! give either a machine that prints back to itself and has at most
//! `MAX_NODES` nodes, or an error whose message quotes the input — never a
//! panic.

use partalloc_testkit::{mutated as mutated_text, parses_back_or_quotes};
use partalloc_topology::{MAX_NODES, Topology};
use proptest::prelude::*;
use proptest::sample::select;

/// Valid descriptions the mutation suite starts from.
const VALID: &[&str] = &[
    "hypercube:10",
    "cube:0",
    "mesh:64x64",
    "mesh:40000x40000",
    "torus:8x8x8",
    "kary:16^3",
    "kary-mesh:4^2",
    "kary-torus:4^3",
    "mesh:1",
    "torus:2X3×5",
    "hypercube:31",
    "pod:tpu-v4",
    "pod:tpu-v5e:8x8",
    "pod:tpu-v4:8x8x8:wiring=static",
    "pod:8x8:cube=4x4:wiring=reconfigurable:rotate=true:shapes=4x4+8x8",
];

/// Pieces inserted by mutations and used as sizes by the grammar: the
/// separators the parser splits on, numbers at the edges of `u32`, signs,
/// exponents, whitespace, control and multi-byte characters.
fn pieces() -> Vec<&'static str> {
    partalloc_testkit::pieces(&[
        ":",
        "x",
        "X",
        "×",
        "^",
        "-",
        "+",
        "=",
        ".",
        " ",
        "\t",
        "\n",
        "\0",
        "0",
        "1",
        "2",
        "31",
        "32",
        "4294967295",
        "4294967296",
        "2147483648",
        "99999999999999999999999999",
        "-1",
        "1e3",
        "é",
        "🦀",
        "\u{202e}",
        "\u{ffff}",
        "",
    ])
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..70).prop_map(|n| n.to_string()),
        any::<u32>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        select(pieces()).prop_map(str::to_owned),
        "[0-9]{0,30}",
    ]
}

fn family() -> impl Strategy<Value = String> {
    prop_oneof![
        select(
            &[
                "hypercube",
                "cube",
                "mesh",
                "torus",
                "kary",
                "kary-mesh",
                "kary-torus",
                "MESH",
                "Torus",
                " kary ",
            ][..]
        )
        .prop_map(str::to_owned),
        "[a-zA-Z-]{0,12}",
        ".{0,4}",
    ]
}

/// A description from the grammar `family ':' size`, where size is a list
/// of numbers joined by a side separator or `K^N`.
fn grammar() -> impl Strategy<Value = String> {
    let sides = (
        prop::collection::vec(number(), 1..20),
        select(&["x", "X", "×", ",", "^", ""][..]),
    )
        .prop_map(|(nums, sep)| nums.join(sep));
    (
        family(),
        select(&[":", "", "::", " : "][..]),
        prop_oneof![
            sides,
            (number(), number()).prop_map(|(k, n)| format!("{k}^{n}"))
        ],
    )
        .prop_map(|(f, colon, size)| format!("{f}{colon}{size}"))
}

fn mutated() -> impl Strategy<Value = String> {
    mutated_text(VALID, pieces(), 1..6)
}

/// The property every input must meet.
fn check(text: &str) -> Result<(), TestCaseError> {
    let parsed = text.parse::<Topology>();
    if let Ok(t) = &parsed {
        prop_assert!(t.num_nodes() as u64 <= MAX_NODES, "{text:?} gave {t}");
    }
    parses_back_or_quotes(
        text,
        parsed,
        &format!("{:?}", partalloc_topology::echo(text)),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// 10,000 descriptions from the grammar.
    #[test]
    fn grammar_inputs_parse_or_name_the_input(text in grammar()) {
        check(&text)?;
    }

    /// 10,000 mutations of valid descriptions.
    #[test]
    fn mutated_inputs_parse_or_name_the_input(text in mutated()) {
        check(&text)?;
    }
}

/// The checks above are not vacuous: these inputs reach both outcomes.
#[test]
fn edges_of_the_grammar() {
    check("mesh:40000x40000").unwrap();
    assert!("mesh:65536x65536".parse::<Topology>().is_err());
    // 65536^8 = 2^128 overflowed the node count before it was compared.
    for bad in [
        "mesh:0x4",
        "hypercube:40",
        "kary:2^4000000000",
        "torus:3×",
        "kary:65536^8",
    ] {
        let msg = bad.parse::<Topology>().unwrap_err().to_string();
        assert!(msg.contains(&format!("{bad:?}")), "{msg}");
    }
}
