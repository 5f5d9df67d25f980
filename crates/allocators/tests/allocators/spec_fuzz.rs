//! Randomized input for strategy descriptions: `StrategySpec::from_str`
//! and `registry::build` on small machines of every family, the path of
//! every `--allocator` flag and `allocators = […]` list.
//!
//! Case counts per run (each suite `ProptestConfig::with_cases(10_000)`):
//! 10,000 spec strings from a grammar and 10,000 mutations of valid specs
//! for the parser; 10,000 registry builds from the grammar (registered
//! names, their real parameters, values from their documentation, edge
//! numbers and garbage; 4 in 5 on a machine of a family the strategy
//! accepts) on 16 machines of 1 to 64 nodes. Each input must
//! give either a value (a spec that prints back to itself; a strategy with
//! every node free) or an error naming the text, the strategy and the
//! parameter at fault — never a panic.

use partalloc_allocators::registry;
use partalloc_allocators::{BuildError, SpecError, StrategySpec};
use partalloc_testkit::{
    doc_words as doc_words_of, escaped, mutated as mutated_text, parses_back_or_quotes,
    sorted_unique,
};
use partalloc_topology::slurm::SlurmMachine;
use partalloc_topology::{Topology, echo};
use proptest::prelude::*;
use proptest::sample::{Index, select};

/// Valid specs, the starting points of mutations.
const VALID: &[&str] = &[
    "buddy",
    "partner-ext[delta=2]",
    "partner-ext[delta=inf]",
    "gray-code[g=2,3,1]",
    "etc[search=literal,mapping=block]",
    "fsl[dealloc=incremental]",
    "busy-list[candidates=aligned]",
    "x[a=1,b=c]",
    "etc[]",
];

/// Pieces of the grammar and of mutations.
const PIECES: &[&str] = &[
    "[",
    "]",
    "=",
    ",",
    " ",
    "\t",
    "\n",
    "\0",
    "0",
    "1",
    "2",
    "-1",
    "inf",
    "∞",
    "true",
    "false",
    "4294967296",
    "99999999999999999999",
    "1e9",
    "é",
    "🦀",
    "\u{202e}",
    "",
];

/// Small machines of every family, including the single-node ones.
const MACHINES: &[&str] = &[
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

/// Words the parameters' documentation uses: the accepted values, and
/// near misses.
fn doc_words() -> Vec<String> {
    doc_words_of(
        registry::strategies()
            .flat_map(|s| s.params)
            .map(|p| (p.doc, p.default)),
        |c| c.is_alphanumeric() || c == '-' || c == ',',
    )
}

fn param_names() -> Vec<&'static str> {
    sorted_unique(
        registry::strategies()
            .flat_map(|s| s.params)
            .map(|p| p.name)
            .chain(["bogus", "", "DELTA"]),
    )
}

fn strategy_names() -> Vec<&'static str> {
    registry::strategies()
        .map(|s| s.name)
        .chain(["no-such", "BUDDY", ""])
        .collect()
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(doc_words()),
        2 => select(PIECES).prop_map(str::to_owned),
        2 => any::<i64>().prop_map(|n| n.to_string()),
        1 => prop::collection::vec(0u32..12, 0..8)
            .prop_map(|g| g.iter().map(u32::to_string).collect::<Vec<_>>().join(",")),
        1 => ".{0,6}",
    ]
}

/// `name`, `name[]` or `name[key=value,…]` over registered names and
/// parameters, with the occasional stray piece.
fn grammar() -> impl Strategy<Value = String> {
    (
        select(strategy_names()),
        prop::collection::vec((select(param_names()), value()), 0..4),
        select(&["[", "", "[[", " ["][..]),
        select(&["]", "", "]]", "] "][..]),
        select(&[",", ", ", ",,", ";"][..]),
    )
        .prop_map(|(name, params, open, close, sep)| {
            if params.is_empty() && open.is_empty() {
                return name.to_owned();
            }
            let items: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{name}{open}{}{close}", items.join(sep))
        })
}

/// A block, a tree, a ring and a torus3d machine (read from topology.conf
/// or topology.yaml text, as they have no text form of their own).
fn slurm_machines() -> Vec<Topology> {
    let torus = "- topology: t\n  torus3d:\n    toruses:\n      - name: a\n        dims: {x: 2, y: 2, z: 1}\n        nodes: p[0-3]\n        placements:\n          - dims: {x: 1, y: 1, z: 1}\n          - dims: {x: 2, y: 1, z: 1}\n";
    [
        "BlockName=r0 Nodes=n[0-3]\nBlockName=r1 Nodes=n[4-7]\nBlockSizes=4,8\n",
        "SwitchName=a Nodes=t[0-3]\nSwitchName=b Nodes=t[4-5]\nSwitchName=c Switches=a,b\n",
        "RingName=a Nodes=r[0-3]\nRingName=b Nodes=r[4-6]\n",
    ]
    .iter()
    .filter_map(|conf| SlurmMachine::parse_conf(conf, "m.conf").ok())
    .chain(SlurmMachine::parse_yaml(torus, "m.yaml", None).ok())
    .map(Topology::from)
    .collect()
}

/// A well-formed spec for the registry: a registered strategy with some of
/// its own parameters (values from their documentation, numbers and
/// garbage), or now and then another strategy's parameter.
fn registry_grammar() -> impl Strategy<Value = String> {
    let infos: Vec<_> = registry::strategies().collect();
    (
        select(infos),
        prop::collection::vec((any::<Index>(), any::<bool>(), value()), 0..3),
    )
        .prop_map(|(info, picks)| {
            let mut items: Vec<String> = Vec::new();
            for (at, own, v) in picks {
                let key = match info.params {
                    [] => "bogus",
                    ps if own => ps[at.index(ps.len())].name,
                    _ => param_names()[at.index(param_names().len())],
                };
                if !items.iter().any(|i| i.starts_with(&format!("{key}="))) {
                    items.push(format!("{key}={v}"));
                }
            }
            if items.is_empty() {
                info.name.to_owned()
            } else {
                format!("{}[{}]", info.name, items.join(","))
            }
        })
}

fn mutated() -> impl Strategy<Value = String> {
    mutated_text(VALID, PIECES, 1..6)
}

fn check_parse(text: &str) -> Result<(), TestCaseError> {
    parses_back_or_quotes(
        text,
        text.parse::<StrategySpec>(),
        &format!("{:?}", echo(text)),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// 10,000 spec strings from the grammar.
    #[test]
    fn grammar_specs_parse_or_quote_the_text(text in grammar()) {
        check_parse(&text)?;
    }

    /// 10,000 mutations of valid specs.
    #[test]
    fn mutated_specs_parse_or_quote_the_text(text in mutated()) {
        check_parse(&text)?;
    }

    /// 10,000 registry builds: a strategy starts with every node free; an
    /// error names the strategy, and the parameter and value at fault.
    #[test]
    fn registry_builds_or_names_what_is_wrong(
        text in prop_oneof![6 => registry_grammar(), 1 => grammar(), 1 => mutated()],
        pick in any::<Index>(),
        fitting in prop::bool::weighted(0.8),
    ) {
        let Ok(spec) = text.parse::<StrategySpec>() else {
            // The parser's errors are the suites above.
            return Ok(());
        };
        // Mostly a machine of a family the strategy accepts, so that the
        // parameters are checked; otherwise any.
        let machines: Vec<Topology> = MACHINES
            .iter()
            .map(|m| m.parse::<Topology>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| TestCaseError::fail(e.to_string()))?
            .into_iter()
            .chain(slurm_machines())
            .collect();
        let accepted: Vec<Topology> = match registry::find(spec.name()) {
            Some(e) if fitting => machines
                .iter()
                .filter(|t| e.info.topologies.contains(&t.kind()))
                .cloned()
                .collect(),
            _ => machines,
        };
        let topo = &accepted[pick.index(accepted.len())];
        let machine = topo.to_string();
        match registry::build_spec(&spec, topo) {
            Ok(a) => prop_assert_eq!(a.free_nodes(), topo.num_nodes(), "{} on {}", spec, machine),
            Err(e) => {
                let msg = e.to_string();
                match &e {
                    // Names the code and the machine, not the strategy.
                    BuildError::CodeWidth { .. } => prop_assert!(msg.contains("gray code"), "{msg}"),
                    _ => prop_assert!(msg.contains(&escaped(&echo(spec.name()))), "{spec} on {machine}: {msg}"),
                }
                match &e {
                    BuildError::Spec(SpecError::UnknownParameter { param, .. }) => {
                        let given = spec.params().iter().any(|(k, _)| echo(k) == *param);
                        prop_assert!(given && msg.contains(&format!("{param:?}")), "{msg}");
                    }
                    BuildError::Spec(SpecError::InvalidValue { param, value, .. }) => {
                        let given = spec.params().iter().find(|(k, _)| echo(k) == *param);
                        prop_assert_eq!(given.map(|(_, v)| echo(v)), Some(value.clone()), "{}", msg);
                        prop_assert!(msg.contains(param.as_str()) && msg.contains(&format!("{value:?}")), "{msg}");
                    }
                    BuildError::UnsupportedTopology(_) | BuildError::UnsuitableTopology { .. } => {
                        prop_assert!(msg.contains(&topo.to_string()), "{msg}");
                    }
                    _ => {}
                }
            }
        }
    }
}
