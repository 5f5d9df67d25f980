//! No input makes the readers or the engine panic or hang: mutated trace
//! files are read or refused with `FILE:LINE:`, and whatever is read runs.

use std::sync::atomic::{AtomicUsize, Ordering};

use partalloc_gpushare::experiment::{Workload, run, setup};
use partalloc_gpushare::openb::{Unplaceable, parse_nodes, parse_pods};
use partalloc_gpushare::policy::Policy;
use partalloc_testkit::mutated;
use proptest::prelude::*;

const NODES: &[&str] = &[
    "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,96000,786432,8,G2\nn2,32000,65536,0,\n",
    "model,gpu,sn,memory_mib,cpu_milli\nT4,1,a,1000,4000\nT4,4,b,4000,16000\n",
];
const PODS: &[&str] = &[
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,1000,10,1,500,\np1,1000,10,2,1000,G2\np2,500,1,0,0,\np3,1,1,1,1000,G2|P100\n",
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,4000,100,1,250\np1,8000,100,1,1000\np2,100,100,4,1000\n",
];
fn pieces() -> Vec<&'static str> {
    partalloc_testkit::pieces(&[
        ",",
        "\n",
        "-",
        "0",
        "1000",
        "99999999999",
        "|",
        "G2",
        "T4",
        "é",
        "\r\n",
        "",
        " ",
        "x",
    ])
}

fn nodes_then_pods() -> impl Strategy<Value = (String, String)> {
    (
        mutated(NODES, pieces(), 0..4),
        mutated(PODS, pieces(), 0..4),
    )
}

/// Mutated inputs that were read and run (the property is not vacuous).
static RAN: AtomicUsize = AtomicUsize::new(0);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn mutated_traces_are_read_or_refused_and_then_run((nodes, pods) in nodes_then_pods()) {
        let cluster = match parse_nodes(&nodes, "n.csv") {
            Ok(c) => c,
            Err(e) => {
                let m = e.to_string();
                prop_assert!(m.starts_with("n.csv:") && !m.contains('\n'), "{m}");
                return Ok(());
            }
        };
        for keep in [Unplaceable::Refuse, Unplaceable::Keep] {
            match parse_pods(&pods, "p.csv", &cluster, keep) {
                Ok(list) => {
                    let w = Workload::new("w", list);
                    RAN.fetch_add(1, Ordering::Relaxed);
                    let submitted = setup(&cluster, &w, 42).order.len();
                    for p in Policy::ALL {
                        let steps = run(&cluster, &w, p, 42);
                        prop_assert_eq!(steps.len(), submitted);
                        for s in &steps {
                            prop_assert!(s.used <= s.arrived.max(u64::from(cluster.gpus()) * 1000));
                        }
                    }
                }
                Err(e) => {
                    let m = e.to_string();
                    prop_assert!(m.starts_with("p.csv:") && !m.contains('\n'), "{m}");
                }
            }
        }
    }
}

#[test]
fn the_fuzzed_inputs_include_runs() {
    // The unmutated inputs (zero edits) are read and run.
    for n in NODES {
        let cluster = parse_nodes(n, "n.csv").unwrap();
        for p in PODS {
            if let Ok(list) = parse_pods(p, "p.csv", &cluster, Unplaceable::Keep) {
                let w = Workload::new("w", list);
                assert!(!run(&cluster, &w, Policy::Fgd, 1).is_empty());
                RAN.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    assert!(RAN.load(Ordering::Relaxed) > 0);
}
