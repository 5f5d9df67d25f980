//! Each policy's score and GPU choice on worked examples from the
//! artifact's formulas.

#![expect(clippy::unwrap_used, reason = "fixtures are valid by construction")]

use partalloc_gpushare::frag::{node_frag_score, typical_pods};
use partalloc_gpushare::model::{NodeSpec, NodeState, Placement, Request};
use partalloc_gpushare::openb::Pod;
use partalloc_gpushare::policy::{
    Policy, best_fit_raw, best_gpus, dot_prod_score, fgd_score, gpu_clustering_score,
    gpu_packing_score, normalize,
};

fn node(cpu: u32, gpus: u8) -> NodeState {
    NodeState::new(&NodeSpec {
        name: "n".into(),
        cpu_milli: cpu,
        memory_mib: 1 << 20,
        gpus,
        model: 0,
        max_pods: 1001,
    })
}

fn share(cpu: u32, milli: u32) -> Request {
    Request::gpu(cpu, 0, 1, milli).unwrap()
}

#[test]
fn names_parse_back() {
    for p in Policy::ALL {
        assert_eq!(p.name().parse::<Policy>().unwrap(), p);
        assert_eq!(p.dir_name().parse::<Policy>().unwrap(), p);
    }
    assert_eq!(Policy::Fgd.dir_name(), "06-FGD");
    let e = "Tetris".parse::<Policy>().unwrap_err().to_string();
    assert_eq!(
        e,
        "unknown policy \"Tetris\"; known: Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD"
    );
}

#[test]
fn best_fit_and_dot_product_by_hand() {
    let n = node(64_000, 8);
    let r = share(8000, 500);
    // s = (56000/128000)/2 + (7500/8000)/2 = 0.21875 + 0.46875 = 0.6875 → 31.
    assert_eq!(best_fit_raw(&n, &r), 31);
    // dot = (64000/128000)(8000/128000) + (8000/8000)(500/8000) = 0.03125 + 0.0625 → 100(1 − 0.046875) = 95.
    assert_eq!(dot_prod_score(&n, &r), 95);
    assert_eq!(normalize(31, 31, 31), 0);
    assert_eq!(normalize(40, 31, 50), 47, "(40-31)*100/19 in integers");
}

#[test]
fn gpu_packing_prefers_shared_then_used_then_empty_nodes() {
    let r = share(1000, 300);
    let empty = node(64_000, 4);
    assert_eq!(gpu_packing_score(&empty, &r), 29, "max(33 - 4, 4)");
    let mut used = node(64_000, 4);
    used.place(
        &Request::gpu(0, 0, 1, 1000).unwrap(),
        Placement {
            gpus: 1,
            milli: 1000,
        },
    )
    .unwrap();
    assert_eq!(
        gpu_packing_score(&used, &r),
        49,
        "one free GPU taken: max(50 - 1, 33)"
    );
    let mut shared = node(64_000, 4);
    shared
        .place(
            &share(0, 600),
            Placement {
                gpus: 0b10,
                milli: 600,
            },
        )
        .unwrap();
    assert_eq!(
        gpu_packing_score(&shared, &r),
        96,
        "100 - (400*100/1000)/10"
    );
    assert_eq!(gpu_packing_score(&shared, &Request::cpu(1, 1)), 0);
}

#[test]
fn gpu_clustering_groups_pods_of_one_kind() {
    let s = share(1000, 300);
    let mut n = node(64_000, 8);
    // Empty: no kinds, 25·(8000 − 8000)/8000 + 25.
    assert_eq!(gpu_clustering_score(&n, &s), 25);
    n.place(
        &share(0, 500),
        Placement {
            gpus: 1,
            milli: 500,
        },
    )
    .unwrap();
    // Only shares: 25·500/8000 (= 1) + 75.
    assert_eq!(gpu_clustering_score(&n, &s), 76);
    let one = Request::gpu(0, 0, 1, 1000).unwrap();
    assert_eq!(gpu_clustering_score(&n, &one), 1, "only other kinds");
    n.place(
        &one,
        Placement {
            gpus: 0b10,
            milli: 1000,
        },
    )
    .unwrap();
    assert_eq!(
        gpu_clustering_score(&n, &s),
        54,
        "its kind among others: 25·1500/8000 + 50"
    );
    assert_eq!(gpu_clustering_score(&n, &Request::cpu(1, 1)), 0);
}

#[test]
fn best_gpu_choice_takes_the_first_tightest_gpu() {
    let mut n = node(64_000, 4);
    n.place(
        &share(0, 600),
        Placement {
            gpus: 0b10,
            milli: 600,
        },
    )
    .unwrap();
    n.place(
        &share(0, 600),
        Placement {
            gpus: 0b1000,
            milli: 600,
        },
    )
    .unwrap();
    assert_eq!(
        best_gpus(&n, &share(0, 300)).unwrap().gpus,
        0b10,
        "GPUs 1 and 3 tie at 400 left"
    );
    assert_eq!(
        best_gpus(&n, &share(0, 500)).unwrap().gpus,
        0b1,
        "only full GPUs fit"
    );
    assert_eq!(
        best_gpus(&n, &Request::gpu(0, 0, 2, 1000).unwrap())
            .unwrap()
            .gpus,
        0b101
    );
    assert!(best_gpus(&n, &Request::gpu(0, 0, 3, 1000).unwrap()).is_none());
}

#[test]
fn fgd_places_a_share_where_fragmentation_grows_least() {
    // Workload: half 500m shares, half whole GPUs.
    let mk = |name: &str, milli| Pod {
        name: name.into(),
        request: share(1000, milli),
        spec: String::new(),
    };
    let pods = vec![mk("a", 500), mk("b", 1000)];
    let t = typical_pods(&pods, 100);
    let mut n = node(64_000, 2);
    n.place(
        &share(0, 500),
        Placement {
            gpus: 0b10,
            milli: 500,
        },
    )
    .unwrap();
    let f = node_frag_score(&n, &t);
    // GPU 1 has 500 left: filling it with another 500m leaves GPU 0 whole,
    // which both typical pods can use (no fragmentation); putting it on
    // GPU 0 would strand two halves for whole-GPU pods.
    let (s, at) = fgd_score(&n, &share(1000, 500), &t, f);
    assert_eq!(at.gpus, 0b10);
    // F before: GPU 1's 500 is fragmentation for the whole-GPU pod (½·500) = 250;
    // after: 0. Score ⌊100·σ(0.25)⌋ = 56.
    assert!((f - 250.0).abs() < 1e-9, "{f}");
    assert_eq!(s, 56);
}

proptest::proptest! {
    /// BestFit's normalisation never changes its choice: the first node
    /// with the highest normalised score is the first with the highest raw
    /// score (the engine skips the normalisation on that ground).
    #[test]
    fn best_fit_normalisation_keeps_the_first_best_node(raws in proptest::collection::vec(-5_i64..120, 1..40)) {
        let lo = *raws.iter().min().unwrap();
        let hi = *raws.iter().max().unwrap();
        let first_best = |v: &[i64]| {
            let mut best = 0;
            for (i, &x) in v.iter().enumerate() {
                if x > v[best] {
                    best = i;
                }
            }
            best
        };
        let normalized: Vec<i64> = raws.iter().map(|&r| normalize(r, lo, hi)).collect();
        proptest::prop_assert_eq!(first_best(&normalized), first_best(&raws));
    }
}
