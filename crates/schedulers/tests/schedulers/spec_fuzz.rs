//! Randomized input for `registry::build`, the path of every
//! `--scheduler` flag and `schedulers = […]` list.
//!
//! 10,000 policy descriptions per run (`ProptestConfig::with_cases(10_000)`)
//! from a grammar over the registered names, their parameters and the
//! values their documentation names, edge numbers and garbage, plus
//! mutations of valid descriptions, on 8 small machines. Each must give
//! either a policy with an empty queue whose canonical name builds the
//! same policy again, or an error naming the policy and the parameter at
//! fault — never a panic.

use partalloc_allocators::SpecError;
use partalloc_schedulers::registry::{self, PolicyBuildError};
use partalloc_testkit::{
    SMALL_MACHINES, doc_words as doc_words_of, escaped, mutated as mutated_text, sorted_unique,
    spec_grammar,
};
use partalloc_topology::{Topology, echo};
use proptest::prelude::*;
use proptest::sample::select;

const VALID: &[&str] = &[
    "fcfs",
    "scan[direction=down,arrivals=same-pass]",
    "lazy[threshold=3]",
    "m-fcfs[threshold=dynamic]",
    "fcfs[rotate=true]",
    "easy",
];

/// Pieces of the grammar and of mutations: the spec syntax and the
/// numbers policies take, then every suite's edge pieces.
fn pieces() -> Vec<&'static str> {
    partalloc_testkit::pieces(&[
        "[", "]", "=", ",", "-0", "-2", "0.5", "NaN", "inf", "never", "true", "false",
    ])
}

fn doc_words() -> Vec<String> {
    doc_words_of(
        registry::policies()
            .flat_map(|s| s.params)
            .map(|p| (p.doc, p.default)),
        |c| c.is_alphanumeric() || c == '-' || c == '.',
    )
}

fn param_names() -> Vec<&'static str> {
    sorted_unique(
        registry::policies()
            .flat_map(|s| s.params)
            .map(|p| p.name)
            .chain(["bogus", ""]),
    )
}

fn policy_names() -> Vec<&'static str> {
    registry::policies()
        .map(|s| s.name)
        .chain(["sjf", "FCFS", ""])
        .collect()
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(doc_words()),
        2 => select(pieces()).prop_map(str::to_owned),
        1 => any::<f64>().prop_map(|x| x.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => ".{0,6}",
    ]
}

/// The registries' one grammar over registered names and parameters.
fn grammar() -> impl Strategy<Value = String> {
    spec_grammar(policy_names(), param_names(), value())
}

fn mutated() -> impl Strategy<Value = String> {
    mutated_text(VALID, pieces(), 1..5)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// 10,000 descriptions (3 in 4 from the grammar, 1 in 4 mutated).
    #[test]
    fn policies_build_or_name_what_is_wrong(
        text in prop_oneof![3 => grammar(), 1 => mutated()],
        machine in select(SMALL_MACHINES),
    ) {
        let topo: Topology = machine.parse().map_err(|e| TestCaseError::fail(format!("{e}")))?;
        match registry::build(&text, &topo) {
            Ok(s) => {
                prop_assert_eq!(s.queue_len(), 0);
                let again = registry::build(&s.name(), &topo)
                    .map_err(|e| TestCaseError::fail(format!("{} does not build again: {e}", s.name())))?;
                prop_assert_eq!(again.name(), s.name());
            }
            Err(e) => {
                let msg = e.to_string();
                match &e {
                    // Errors repeat at most 40 characters of the input.
                    PolicyBuildError::Spec(SpecError::Malformed { text: t, .. }) => {
                        prop_assert_eq!(t, &echo(&text));
                        prop_assert!(msg.contains(&format!("{:?}", echo(&text))), "{}", msg);
                    }
                    PolicyBuildError::Spec(SpecError::UnknownParameter { param, .. }) => {
                        prop_assert!(msg.contains(&format!("{param:?}")), "{msg}");
                    }
                    PolicyBuildError::Spec(SpecError::InvalidValue { param, value, .. }) => {
                        prop_assert!(msg.contains(param.as_str()) && msg.contains(&format!("{value:?}")), "{msg}");
                    }
                    _ => {}
                }
                if let Ok(spec) = text.parse::<partalloc_allocators::StrategySpec>() {
                    prop_assert!(msg.contains(&escaped(&echo(spec.name()))), "{text:?} on {machine}: {msg}");
                }
            }
        }
    }
}
