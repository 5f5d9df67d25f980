//! Compares a few reproduced curves with the artifact's expected results:
//! `cargo run --release -p partalloc-gpushare --example fgd_check -- WORKLOAD POLICY SEED…`
use std::path::Path;

use partalloc_gpushare::analysis::curves;
use partalloc_gpushare::experiment::{Workload, run};
use partalloc_gpushare::golden::{Expected, Measure, agreement};
use partalloc_gpushare::openb::{Unplaceable, read_nodes, read_pods};
use partalloc_gpushare::policy::Policy;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/openb");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let wname = args
        .first()
        .map_or("openb_pod_list_default", String::as_str);
    let policy: Policy = args.get(1).map_or("FGD", String::as_str).parse()?;
    let seeds: Vec<i64> = if args.len() > 2 {
        args[2..]
            .iter()
            .map(|s| s.parse())
            .collect::<Result<_, _>>()?
    } else {
        vec![42]
    };
    let cluster = read_nodes(&dir.join("openb_node_list_gpu_node.csv"))?;
    let pods = read_pods(
        &dir.join(format!("{wname}.csv")),
        &cluster,
        Unplaceable::Keep,
    )?;
    let w = Workload::new(wname, pods);
    println!("typical pods: {}", w.typical.len());
    let exp: Vec<Expected> = Measure::ALL
        .iter()
        .map(|m| Expected::read(&dir.join(m.file_name())))
        .collect::<Result<_, _>>()?;
    for seed in seeds {
        let t = std::time::Instant::now();
        let steps = run(&cluster, &w, policy, seed);
        let el = t.elapsed();
        let c = curves(&steps, cluster.gpus());
        for (m, e) in Measure::ALL.iter().zip(&exp) {
            let got = match m {
                Measure::Alloc => &c.alloc,
                Measure::Frag => &c.frag,
                _ => &c.frag_ratio,
            };
            let want = e.curve(wname, &policy.dir_name(), seed).ok_or("no curve")?;
            let (same, first) = agreement(got, want);
            print!("seed {seed} {m:?}: {same}/131");
            if let Some(x) = first {
                print!(" first diff at {x}: got {:?} want {:?}", got[x], want[x]);
            }
            println!();
        }
        println!("  {} pods, {:?}", steps.len(), el);
    }
    Ok(())
}
