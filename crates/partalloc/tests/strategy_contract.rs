//! A strategy written outside the library on the `Strategy` trait (the
//! example's `first-free`) keeps the allocator contract under `Managed`:
//! refusals, faults, repairs, double and foreign releases, determinism and
//! the fresh state after everything is released.

use partalloc::allocators::Request;
use partalloc::allocators::conformance::{Step, check_script_in, check_spec};
use partalloc::allocators::registry;
use partalloc::topology::Topology;

#[path = "../examples/custom_strategy/first_free.rs"]
mod first_free;

fn script(nodes: u32) -> Vec<Step> {
    let mut script = Vec::new();
    for k in 0..60u32 {
        script.push(Step::Allocate(Request::nodes(1 + (k * 7) % 11)));
        if k % 3 == 2 {
            script.push(Step::Release(k as usize));
        }
        if k % 5 == 4 {
            script.push(Step::ReleaseTwice(0));
            script.push(Step::MarkFaulty((k * 13) % nodes));
        }
        if k % 7 == 6 {
            script.push(Step::Repair((k * 13) % nodes));
        }
    }
    script.push(Step::Allocate(Request::nodes(nodes + 1)));
    script.push(Step::Allocate(Request::nodes(0)));
    script
}

#[test]
fn a_strategy_on_the_trait_keeps_the_allocator_contract() {
    let mut strategies = registry::builtin();
    strategies.register(first_free::ENTRY).unwrap();
    for machine in ["hypercube:5", "mesh:6x5", "kary:4^3"] {
        let topology: Topology = machine.parse().unwrap();
        let nodes = topology.num_nodes() as u32;
        for text in ["first-free", "first-free[from=high]"] {
            let mut alloc = strategies.build(text, &topology).unwrap();
            assert_eq!(alloc.name(), text, "the name is the spec it was built from");
            let summary = check_script_in(&strategies, alloc.as_mut(), &script(nodes)).unwrap();
            assert!(
                summary.granted > 0 && summary.no_room > 0,
                "{text}: {summary:?}"
            );
            assert_eq!(summary.rejected, 2, "{text} on {machine}: {summary:?}");
            check_spec(&strategies.spec(text).unwrap(), &topology, &script(nodes)).unwrap();
        }
    }
}

#[test]
fn managed_answers_probes_by_choosing_on_a_copy() {
    let mut strategies = registry::builtin();
    strategies.register(first_free::ENTRY).unwrap();
    let topology: Topology = "hypercube:3".parse().unwrap();
    let mut a = strategies.build("first-free", &topology).unwrap();
    let g = a.allocate(&Request::nodes(6)).unwrap();
    assert_eq!(a.can_allocate(&Request::nodes(2)), Ok(true));
    assert_eq!(a.can_allocate(&Request::nodes(3)), Ok(false));
    assert!(a.can_allocate(&Request::nodes(9)).is_err());
    assert_eq!((a.free_nodes(), a.live_grants()), (2, 1));
    a.release(&g).unwrap();
    assert!(a.release(&g).is_err());
    assert_eq!(a.free_nodes(), 8);
}
