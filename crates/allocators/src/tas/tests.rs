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
