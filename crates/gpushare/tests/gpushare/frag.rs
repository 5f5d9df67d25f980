//! FGD's fragmentation measure on worked examples.

#![expect(clippy::unwrap_used, reason = "fixtures are valid by construction")]

use partalloc_gpushare::frag::{ExactSum, Q3, frag_of, node_frag, typical_pods};
use partalloc_gpushare::model::{NodeSpec, NodeState, Placement, Request};
use partalloc_gpushare::openb::Pod;

fn pod(name: &str, cpu: u32, gpus: u8, milli: u32) -> Pod {
    let request = if gpus == 0 {
        Request::cpu(cpu, 0)
    } else {
        Request::gpu(cpu, 0, gpus, milli).unwrap()
    };
    Pod {
        name: name.into(),
        request,
        spec: String::new(),
    }
}

#[test]
fn typical_pods_cover_the_threshold_most_frequent_first() {
    // 5 × (4 CPU, 500m), 3 × (8 CPU, 1 GPU), 1 × (2 CPU, no GPU), 1 × (4 CPU, 250m).
    let mut pods = Vec::new();
    for i in 0..5 {
        pods.push(pod(&format!("a{i}"), 4000, 1, 500));
    }
    for i in 0..3 {
        pods.push(pod(&format!("b{i}"), 8000, 1, 1000));
    }
    pods.push(pod("c", 2000, 0, 0));
    pods.push(pod("d", 4000, 1, 250));
    // 80 % is reached after the first two (8 of 10 pods).
    let t = typical_pods(&pods, 80);
    assert_eq!(t.len(), 2);
    assert_eq!((t[0].cpu_milli, t[0].gpu_milli, t[0].count), (4000, 500, 5));
    assert!((t[0].freq - 5.0 / 8.0).abs() < 1e-15 && (t[1].freq - 3.0 / 8.0).abs() < 1e-15);
    // At 95 % all four are taken; the two singletons tie on count and the
    // larger CPU request comes first; no renormalisation is needed.
    let t = typical_pods(&pods, 95);
    assert_eq!(
        t.iter().map(|x| x.cpu_milli).collect::<Vec<_>>(),
        [4000, 8000, 4000, 2000]
    );
    assert_eq!(t[2].gpu_milli, 250);
    assert!((t.iter().map(|x| x.freq).sum::<f64>() - 1.0).abs() < 1e-12);
}

#[test]
fn node_fragmentation_by_hand() {
    let pods = vec![
        pod("a", 4000, 1, 500),
        pod("b", 8000, 1, 1000),
        pod("c", 2000, 0, 0),
        pod("d", 4000, 2, 1000),
    ];
    let t = typical_pods(&pods, 100); // four pods, a quarter each
    let mut n = NodeState::new(&NodeSpec {
        name: "n".into(),
        cpu_milli: 10_000,
        memory_mib: 1 << 20,
        gpus: 2,
        model: 0,
        max_pods: 100,
    });
    // Take 700m of GPU 0 and 4 CPUs: GPUs left 300 and 1000, CPU 6000.
    n.place(
        &Request::gpu(4000, 0, 1, 700).unwrap(),
        Placement {
            gpus: 1,
            milli: 700,
        },
    )
    .unwrap();
    let f = node_frag(&n, &t);
    // a (4 CPU, 500m): fits GPU 1 → Q3; GPU 0's 300 is too small → Q2 300/4, Q3 1000/4.
    // b (8 CPU, 1 GPU): a GPU fits, CPU does not → Q4 1300/4.
    // c (2 CPU, no GPU): XL 1300/4.  d (4 CPU, 2 GPUs): one GPU fits → Q2 1300/4.
    let want = [
        0.0,
        300.0 / 4.0 + 1300.0 / 4.0,
        1000.0 / 4.0,
        1300.0 / 4.0,
        1300.0 / 4.0,
        0.0,
        0.0,
    ];
    for (i, (g, w)) in f.iter().zip(want).enumerate() {
        assert!((g - w).abs() < 1e-9, "class {i}: {g} vs {w}");
    }
    assert!(
        (frag_of(&f) - (1300.0 - 250.0)).abs() < 1e-9,
        "all idle GPU but a's satisfied 1000/4"
    );
    assert!(
        (f.iter().sum::<f64>() - 1300.0).abs() < 1e-9,
        "the classes split the idle GPUs"
    );
    assert_eq!(Q3, 2);
}

#[test]
fn exact_sums_do_not_depend_on_order() {
    let parts: Vec<[f64; 7]> = (1..200)
        .map(|i| {
            let x = f64::from(i);
            [x / 3.0, x * 0.1, 1e3 / x, 0.0, x.sqrt(), 7.0 / x, x * 1e-3]
        })
        .collect();
    let mut a = ExactSum::default();
    for p in &parts {
        a.add(p);
    }
    let mut b = ExactSum::default();
    for p in parts.iter().rev() {
        b.add(p);
    }
    assert_eq!(a, b);
    for p in &parts[..100] {
        a.sub(p);
    }
    let mut c = ExactSum::default();
    for p in &parts[100..] {
        c.add(p);
    }
    assert_eq!(a.total(), c.total());
}
