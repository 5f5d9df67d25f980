//! The node state: placing and undoing are exact, and refusals leave the
//! state as it was.

#![expect(clippy::unwrap_used, reason = "fixtures are valid by construction")]

use partalloc_gpushare::ModelError;
use partalloc_gpushare::model::{MILLI, NodeSpec, NodeState, Placement, Request};
use proptest::prelude::*;

fn spec(gpus: u8) -> NodeSpec {
    NodeSpec {
        name: "n".into(),
        cpu_milli: 64_000,
        memory_mib: 262_144,
        gpus,
        model: 1,
        max_pods: 3,
    }
}

#[test]
fn a_share_and_whole_gpus_take_what_they_ask() {
    let mut n = NodeState::new(&spec(4));
    assert_eq!(n.gpu_left_total(), 4 * MILLI);
    let share = Request::gpu(8000, 1024, 1, 300).unwrap();
    n.place(
        &share,
        Placement {
            gpus: 0b10,
            milli: 300,
        },
    )
    .unwrap();
    assert_eq!(n.gpu_left(), &[1000, 700, 1000, 1000]);
    assert_eq!(
        (n.cpu_left, n.memory_left, n.pods_left),
        (56_000, 261_120, 2)
    );
    let two = Request::gpu(1000, 0, 2, 1000).unwrap();
    let at = n.lowest_free(2).unwrap();
    assert_eq!(at.gpus, 0b101, "the lowest-numbered free GPUs");
    n.place(&two, at).unwrap();
    assert_eq!(n.gpu_left(), &[0, 700, 0, 1000]);
    assert_eq!(n.free_gpus(), 1);
    assert_eq!(n.kind_count(), 2, "a share and a two-GPU pod");
    assert!(n.is_used());
}

#[test]
fn refusals_change_nothing() {
    let mut n = NodeState::new(&spec(2));
    let before = n.clone();
    let big = Request::gpu(1000, 0, 1, 600).unwrap();
    n.place(
        &big,
        Placement {
            gpus: 0b1,
            milli: 600,
        },
    )
    .unwrap();
    let after_one = n.clone();
    // GPU 0 has 400 left: a second 600 does not fit there.
    assert_eq!(
        n.place(
            &big,
            Placement {
                gpus: 0b1,
                milli: 600
            }
        ),
        Err(ModelError::DoesNotFit)
    );
    // A GPU past the node's last.
    assert_eq!(
        n.place(
            &big,
            Placement {
                gpus: 0b100,
                milli: 600
            }
        ),
        Err(ModelError::DoesNotFit)
    );
    // Too much CPU.
    let hungry = Request::cpu(70_000, 0);
    assert_eq!(
        n.place(&hungry, Placement { gpus: 0, milli: 0 }),
        Err(ModelError::DoesNotFit)
    );
    assert_eq!(n, after_one);
    // Giving back what was never placed.
    let other = Request::gpu(1000, 0, 1, 900).unwrap();
    assert_eq!(
        n.remove(
            &other,
            Placement {
                gpus: 0b10,
                milli: 900
            }
        ),
        Err(ModelError::NotPlaced)
    );
    assert_eq!(n, after_one);
    n.remove(
        &big,
        Placement {
            gpus: 0b1,
            milli: 600,
        },
    )
    .unwrap();
    assert_eq!(n, before);
}

#[test]
fn requests_are_shares_of_one_gpu_or_whole_gpus() {
    assert!(Request::gpu(0, 0, 1, 1000).is_ok());
    assert!(Request::gpu(0, 0, 8, 1000).is_ok());
    assert!(matches!(
        Request::gpu(0, 0, 2, 500),
        Err(ModelError::BadGpuRequest { .. })
    ));
    assert!(matches!(
        Request::gpu(0, 0, 1, 1001),
        Err(ModelError::BadGpuRequest { .. })
    ));
    assert!(matches!(
        Request::gpu(0, 0, 1, 0),
        Err(ModelError::BadGpuRequest { .. })
    ));
    assert!(matches!(
        Request::gpu(0, 0, 17, 1000),
        Err(ModelError::BadGpuRequest { .. })
    ));
    let r = Request::gpu(0, 0, 1, 500).unwrap().with_models(0b100);
    assert!(r.allows(2) && !r.allows(1));
    assert!(Request::cpu(1, 1).allows(5), "no models: any");
}

fn request() -> impl Strategy<Value = Request> {
    (0_u32..20_000, 0_u64..40_000, 0_u8..=3, 1_u32..=1000).prop_map(|(cpu, mem, gpus, milli)| {
        match gpus {
            0 => Request::cpu(cpu, mem),
            1 => Request::gpu(cpu, mem, 1, milli).unwrap(),
            g => Request::gpu(cpu, mem, g, MILLI).unwrap(),
        }
    })
}

proptest! {
    /// Any sequence of placements, undone in any order, gives back the
    /// empty node; every placement that succeeds is one `fits` allows.
    #[test]
    fn placing_then_removing_in_any_order_restores_the_node(
        reqs in proptest::collection::vec(request(), 1..12),
        undo_order in proptest::collection::vec(any::<prop::sample::Index>(), 12),
    ) {
        let mut n = NodeState::new(&NodeSpec { max_pods: 1001, ..spec(4) });
        let empty = n.clone();
        let mut placed = Vec::new();
        for r in &reqs {
            let fits = n.fits(r);
            let at = if r.is_share() {
                n.gpu_left().iter().position(|&g| u32::from(g) >= r.gpu_milli)
                    .map(|i| Placement { gpus: 1 << i, milli: r.gpu_milli })
            } else if r.gpus == 0 {
                Some(Placement { gpus: 0, milli: 0 })
            } else {
                n.lowest_free(r.gpus)
            };
            let before = n.clone();
            match at {
                Some(at) if n.place(r, at).is_ok() => {
                    prop_assert!(fits);
                    placed.push((*r, at));
                }
                _ => {
                    prop_assert!(!fits || r.memory_mib > n.memory_left);
                    prop_assert_eq!(&n, &before);
                }
            }
        }
        let total: u32 = placed.iter().map(|(_, at)| at.gpus.count_ones() * at.milli).sum();
        prop_assert_eq!(n.gpu_left_total() + total, 4 * MILLI);
        for ix in undo_order {
            if placed.is_empty() { break; }
            let (r, at) = placed.remove(ix.index(placed.len()));
            n.remove(&r, at).unwrap();
        }
        for (r, at) in placed.drain(..).rev() {
            n.remove(&r, at).unwrap();
        }
        prop_assert_eq!(n, empty);
    }
}
