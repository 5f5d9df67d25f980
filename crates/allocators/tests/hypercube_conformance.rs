//! Random allocate / release / fault scripts against the `Allocator`
//! contract, for every hypercube strategy.

use partalloc_allocators::conformance::{Step, check_script};
use partalloc_allocators::{Request, registry};
use partalloc_topology::Topology;
use proptest::prelude::*;

const NAMES: [&str; 8] = [
    "buddy",
    "buddy-free-list",
    "gray-code",
    "gray-code[g=3,1,4,2,5,6]",
    "multiple-gray-code",
    "partner",
    "partner-ext",
    "partner-ext[delta=1]",
];

fn step(n: u32) -> impl Strategy<Value = Step> {
    let nodes = (1u32 << n) + 2;
    prop_oneof![
        5 => (0..=n + 1).prop_map(|k| Step::Allocate(Request::subcube(k))),
        1 => Just(Step::Allocate(Request::nodes(1))),
        3 => any::<usize>().prop_map(Step::Release),
        1 => any::<usize>().prop_map(Step::ReleaseTwice),
        2 => (0..nodes).prop_map(Step::MarkFaulty),
        1 => (0..nodes).prop_map(Step::Repair),
    ]
}

fn script() -> impl Strategy<Value = (u32, Vec<Step>)> {
    (0u32..=6).prop_flat_map(|n| (Just(n), prop::collection::vec(step(n), 1..60)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn every_hypercube_strategy_keeps_the_contract((n, steps) in script()) {
        for name in NAMES {
            // The custom code has 6 parameters: only for Q_6.
            if name.contains("g=") && n != 6 {
                continue;
            }
            let t: Topology = format!("hypercube:{n}").parse().unwrap();
            let mut a = registry::build(name, &t).unwrap();
            let r = check_script(a.as_mut(), &steps);
            prop_assert!(r.is_ok(), "{} on Q_{}: {}", name, n, r.unwrap_err());
        }
    }
}
