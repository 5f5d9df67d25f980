use std::sync::Arc;

use partalloc_topology::capacity::{CapacityMachine, CapacityMachineBuilder, HOSTNAME_LABEL};

use super::*;

/// One block, racks r1 (x1: 2 cpu) and r2 (x2: 1 cpu, x3: 1 cpu).
fn small() -> Arc<CapacityMachine> {
    let mut b = CapacityMachineBuilder::new("t", &["block", "rack", HOSTNAME_LABEL]).unwrap();
    for (host, rack, cpu) in [("x1", "r1", "2"), ("x2", "r2", "1"), ("x3", "r2", "1")] {
        b.add_node(
            0,
            host,
            &[("block", "b1"), ("rack", rack), (HOSTNAME_LABEL, host)],
            &[("cpu", cpu), ("pods", "10")],
        )
        .unwrap();
    }
    Arc::new(b.build().unwrap())
}

#[test]
fn best_fit_takes_the_tightest_rack_that_holds_the_request() {
    let m = small();
    let mut tas = Tas::new(Arc::clone(&m));
    let pod = m.pod_request(&[("cpu", 1000)]).unwrap();
    // Both racks hold 2 pods and x1 is tighter (2 pods in 1 node): r1.
    let req = TasRequest::new(2, pod.clone(), TasMode::Required, 1, TasAlgorithm::BestFit);
    assert_eq!(tas.place(&req).unwrap().entries(), &[(0, 2)]);
    // 3 pods: no rack holds them; required fails with Kueue's numbers.
    let req3 = TasRequest::new(3, pod.clone(), TasMode::Required, 1, TasAlgorithm::BestFit);
    assert_eq!(
        tas.place(&req3),
        Err(TasError::NoFit {
            fit: 2,
            total: 3,
            unit: "pod"
        })
    );
    // Preferred widens to the block.
    let pref = TasRequest::new(3, pod.clone(), TasMode::Preferred, 1, TasAlgorithm::BestFit);
    assert_eq!(tas.place(&pref).unwrap().total(), 3);
}

#[test]
fn least_free_capacity_takes_the_fullest_node_that_holds_a_pod() {
    let m = small();
    let mut tas = Tas::new(Arc::clone(&m));
    let pod = m.pod_request(&[("cpu", 1000)]).unwrap();
    let req = TasRequest::new(
        1,
        pod.clone(),
        TasMode::Unconstrained,
        0,
        TasAlgorithm::LeastFreeCapacity,
    );
    // x2 and x3 hold one pod each, x1 two: the first of the fullest is x2.
    assert_eq!(tas.place(&req).unwrap().entries(), &[(1, 1)]);
    let wrong = TasRequest::new(
        1,
        pod,
        TasMode::Required,
        0,
        TasAlgorithm::LeastFreeCapacity,
    );
    assert!(matches!(
        tas.place(&wrong),
        Err(TasError::AlgorithmMode { .. })
    ));
}

#[test]
fn commit_and_release_restore_the_state() {
    let m = small();
    let mut tas = Tas::new(Arc::clone(&m));
    let pod = m.pod_request(&[("cpu", 1000)]).unwrap();
    let req = TasRequest::new(4, pod.clone(), TasMode::Preferred, 1, TasAlgorithm::BestFit);
    let a = tas.place(&req).unwrap();
    assert_eq!(a.total(), 4);
    tas.commit(&a, &pod);
    assert!(matches!(
        tas.place(&TasRequest::new(
            1,
            pod.clone(),
            TasMode::Preferred,
            1,
            TasAlgorithm::BestFit
        )),
        Err(TasError::NoFit { .. })
    ));
    tas.release(&a, &pod);
    assert_eq!(tas.place(&req).unwrap(), a);
}

/// Machine of blocks → racks → hosts with these free pod counts.
fn blocks(capacities: &[&[&[u32]]]) -> Arc<CapacityMachine> {
    let mut b = CapacityMachineBuilder::new("kep", &["block", "rack", HOSTNAME_LABEL]).unwrap();
    for (bi, racks) in capacities.iter().enumerate() {
        for (ri, hosts) in racks.iter().enumerate() {
            for (hi, &c) in hosts.iter().enumerate() {
                let host = format!("b{bi}r{ri}h{hi}");
                let rack = format!("b{bi}r{ri}");
                b.add_node(
                    0,
                    &host,
                    &[
                        ("block", &format!("b{bi}")),
                        ("rack", &rack),
                        (HOSTNAME_LABEL, &host),
                    ],
                    &[("cpu", &c.to_string()), ("pods", "110")],
                )
                .unwrap();
            }
        }
    }
    Arc::new(b.build().unwrap())
}

/// The worked examples of KEP 2724's "Balanced placement" section
/// (capacities, request, slice size, assignment per host), run through
/// the v0.19.2 code path: the code gives the KEP's answer in all seven.
#[test]
fn kep_balanced_placement_examples() {
    type Case<'a> = (&'a [&'a [&'a [u32]]], u32, u32, &'a [u32]);
    let cases: [Case<'_>; 7] = [
        (&[&[&[15], &[15]]], 25, 1, &[13, 12]),
        (&[&[&[15, 13, 10]]], 23, 1, &[12, 11, 0]),
        (&[&[&[20, 10], &[15, 15]]], 22, 1, &[0, 0, 11, 11]),
        (&[&[&[20, 10], &[15, 15]]], 20, 1, &[20, 0, 0, 0]),
        (&[&[&[10, 5], &[5, 5, 5]]], 15, 1, &[0, 0, 5, 5, 5]),
        (&[&[&[15], &[15]], &[&[15, 15]]], 25, 1, &[0, 0, 13, 12]),
        (&[&[&[15], &[15], &[15, 15]]], 25, 5, &[0, 0, 15, 10]),
    ];
    for (caps, count, slice, kep) in cases {
        // The KEP writes racks of hosts; its sixth row has two blocks.
        let m = blocks(caps);
        let mut tas = Tas::new(Arc::clone(&m));
        let pod = m.pod_request(&[("cpu", 1000)]).unwrap();
        let mut req = TasRequest::new(count, pod, TasMode::Preferred, 1, TasAlgorithm::Balanced);
        if slice > 1 {
            req = req.with_slices(slice, 2);
        }
        let a = tas.place(&req).unwrap();
        let mut per_host = vec![0u32; m.num_leaves()];
        for &(leaf, c) in a.entries() {
            per_host[leaf as usize] = c;
        }
        assert_eq!(per_host, kep, "{caps:?} {count}");
    }
}

/// KEP 2724's example of the two greedy algorithms: one rack of nodes
/// holding 3, 3, 2 and 1 pods, 7 pods asked for.
#[test]
fn kep_best_fit_and_least_free_capacity_example() {
    let m = blocks(&[&[&[3, 3, 2, 1]]]);
    let mut tas = Tas::new(Arc::clone(&m));
    let pod = m.pod_request(&[("cpu", 1000)]).unwrap();
    // BestFit: the two nodes of 3, then the node that holds exactly 1.
    let bf = TasRequest::new(7, pod.clone(), TasMode::Required, 1, TasAlgorithm::BestFit);
    assert_eq!(tas.place(&bf).unwrap().entries(), &[(0, 3), (1, 3), (3, 1)]);
    // LeastFreeCapacity: 1, 2 and 3 from the fullest, then 1 more.
    let lfc = TasRequest::new(
        7,
        pod,
        TasMode::Unconstrained,
        0,
        TasAlgorithm::LeastFreeCapacity,
    );
    // Of the two nodes of 3 the first by name is taken first.
    assert_eq!(
        tas.place(&lfc).unwrap().entries(),
        &[(0, 3), (1, 1), (2, 2), (3, 1)]
    );
}

mod kept_counts {
    use partalloc_topology::capacity::{BLOCK_LABEL, RACK_LABEL};
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The counts kept between placements (only changed leaves
        /// recounted) give the placements a fresh state gives.
        #[test]
        fn kept_counts_place_as_fresh_counts(
            steps in prop::collection::vec((1u32..=24, 0u8..6, any::<bool>()), 1..40),
        ) {
            let m = Arc::new(CapacityMachine::racks(2, 3, 6, &[("nvidia.com/gpu", 4)]).unwrap());
            let one = m.pod_request(&[("nvidia.com/gpu", 1)]).unwrap();
            let two = m.pod_request(&[("nvidia.com/gpu", 2)]).unwrap();
            let rack = m.level_index(RACK_LABEL).unwrap();
            let block = m.level_index(BLOCK_LABEL).unwrap();
            let mut kept = Tas::new(Arc::clone(&m));
            let mut live: Vec<(TasAssignment, PodRequest)> = Vec::new();
            for (count, kind, release) in steps {
                if release && !live.is_empty() {
                    let (a, pod) = live.remove(count as usize % live.len());
                    kept.release(&a, &pod);
                }
                let (pod, mode, level, algorithm) = match kind {
                    0 => (&one, TasMode::Required, rack, TasAlgorithm::BestFit),
                    1 => (&one, TasMode::Preferred, rack, TasAlgorithm::BestFit),
                    2 => (&one, TasMode::Unconstrained, 0, TasAlgorithm::LeastFreeCapacity),
                    3 => (&two, TasMode::Required, block, TasAlgorithm::BestFit),
                    4 => (&one, TasMode::Preferred, rack, TasAlgorithm::Balanced),
                    _ => (&one, TasMode::Preferred, block, TasAlgorithm::BestFit),
                };
                let mut req = TasRequest::new(count, pod.clone(), mode, level, algorithm);
                if kind == 5 && count % 2 == 0 {
                    req = req.with_slices(2, rack);
                }
                let mut fresh = Tas::new(Arc::clone(&m));
                for (a, p) in &live {
                    fresh.commit(a, p);
                }
                let got = kept.place(&req);
                prop_assert_eq!(&got, &fresh.place(&req));
                if let Ok(a) = got {
                    kept.commit(&a, pod);
                    live.push((a, pod.clone()));
                }
            }
        }
    }
}

mod least_free_capacity_spread {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// An unconstrained LeastFreeCapacity placement of one-GPU pods is
        /// the least (free, leaf) node that holds them all, else the nodes
        /// with free GPUs in ascending (free, leaf) order until the pods
        /// are placed, the last one taking what is left: the definition,
        /// against the engine's bounded scan (and the selection it falls
        /// back to beyond 256 nodes).
        #[test]
        fn lfc_spreads_fullest_nodes_first(
            busy in prop::collection::vec(0i64..=4, 18..=300),
            count in 1u32..=300,
        ) {
            let leaves = busy.len() as u32;
            let m = Arc::new(CapacityMachine::racks(1, 1, leaves, &[("nvidia.com/gpu", 4)]).unwrap());
            let pod = m.pod_request(&[("nvidia.com/gpu", 1)]).unwrap();
            let mut tas = Tas::new(Arc::clone(&m));
            for (leaf, &b) in busy.iter().enumerate() {
                tas.add_usage(leaf, &pod, b);
            }
            let req = TasRequest::new(count, pod.clone(), TasMode::Unconstrained, 0, TasAlgorithm::LeastFreeCapacity);
            let mut free: Vec<(i64, u32)> = busy
                .iter()
                .enumerate()
                .map(|(leaf, &b)| (4 - b, leaf as u32))
                .filter(|&(f, _)| f > 0)
                .collect();
            free.sort_unstable();
            let want: Option<Vec<(u32, u32)>> = match free.iter().find(|&&(f, _)| f >= i64::from(count)) {
                Some(&(_, leaf)) => Some(vec![(leaf, count)]),
                None => {
                    let mut left = i64::from(count);
                    let mut out = Vec::new();
                    for &(f, leaf) in &free {
                        if left == 0 {
                            break;
                        }
                        let take = f.min(left);
                        out.push((leaf, take as u32));
                        left -= take;
                    }
                    out.sort_unstable();
                    (left == 0).then_some(out)
                }
            };
            let got = tas.place(&req).ok().map(|a| a.entries().to_vec());
            prop_assert_eq!(got, want);
        }
    }
}
