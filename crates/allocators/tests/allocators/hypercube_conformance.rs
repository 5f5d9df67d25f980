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

#[derive(Debug, Clone)]
enum Op {
    Allocate(u32),
    Release(usize),
    Fault(u32),
    Repair(u32),
}

fn ops() -> impl Strategy<Value = (u32, Vec<Op>)> {
    (1u32..=6).prop_flat_map(|n| {
        let nodes = 1u32 << n;
        let op = prop_oneof![
            5 => (0..=n).prop_map(Op::Allocate),
            4 => any::<usize>().prop_map(Op::Release),
            1 => (0..nodes).prop_map(Op::Fault),
            1 => (0..nodes).prop_map(Op::Repair),
        ];
        (Just(n), prop::collection::vec(op, 1..80))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// After any history of grants, releases and faults, each strategy
    /// grants exactly the first cube of its search order (`recognizable`)
    /// whose nodes are all available, and refuses only when there is none.
    /// The free-list buddy may pick another block, but succeeds exactly
    /// when an aligned block is free.
    #[test]
    fn grants_follow_the_literal_search_after_any_history((n, steps) in ops()) {
        for name in &NAMES[..] {
            if name.contains("g=") {
                continue;
            }
            let t: Topology = format!("hypercube:{n}").parse().unwrap();
            let mut a = registry::build(name, &t).unwrap();
            let mut live = Vec::new();
            for op in &steps {
                match *op {
                    Op::Allocate(k) => {
                        let busy = a.busy_nodes();
                        let faulty = a.faulty_nodes();
                        let free = |p: &partalloc_allocators::Partition| {
                            p.node_list(&t)
                                .unwrap()
                                .iter()
                                .all(|&v| !busy.contains(v) && !faulty.contains(v))
                        };
                        let order = a.recognizable(&Request::subcube(k)).unwrap();
                        let first = order.iter().find(|p| free(p)).cloned();
                        match a.allocate(&Request::subcube(k)) {
                            Ok(g) => {
                                prop_assert!(first.is_some(), "{} granted nothing listed", name);
                                if *name != "buddy-free-list" {
                                    prop_assert_eq!(Some(g.partition().clone()), first, "{}", name);
                                } else {
                                    prop_assert!(free(g.partition()));
                                }
                                live.push(g);
                            }
                            Err(e) => prop_assert!(first.is_none(), "{} refused: {}", name, e),
                        }
                    }
                    Op::Release(i) => {
                        if !live.is_empty() {
                            let g = live.swap_remove(i % live.len());
                            a.release(&g).unwrap();
                        }
                    }
                    Op::Fault(v) => {
                        let _ = a.mark_faulty(v);
                    }
                    Op::Repair(v) => a.repair(v).unwrap(),
                }
            }
        }
    }
}
