//! Runs the whole FGD evaluation (17 workloads × 6 policies × 10 seeds)
//! and compares it with the artifact's expected CSVs:
//! `cargo run --release -p partalloc-gpushare --example fgd_all [THREADS]`.
//! It fails when a deterministic policy's curve differs anywhere (CI runs
//! it); Random's are reported, not judged (docs/fgd.md says why).
use std::path::Path;
use std::time::Instant;

use partalloc_gpushare::policy::Policy;
use partalloc_gpushare::reproduce::{OpenB, WORKLOADS, all_jobs, compare, read_expected, run_jobs};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let t0 = Instant::now();
    let threads: usize = std::env::args().nth(1).map_or(Ok(2), |s| s.parse())?;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/openb");
    let data = OpenB::read(&dir, &WORKLOADS)?;
    let expected = read_expected(&dir)?;
    let jobs = all_jobs(&data, &Policy::ALL);
    let got = run_jobs(&data, &jobs, threads);
    let mut differ = Vec::new();
    for row in compare(&data, &jobs, &got, &expected) {
        let t = &row.tally;
        if !row.policy.is_random() && t.curves_equal != t.curves {
            differ.push(format!("{} {:?}", row.policy.name(), row.measure));
        }
        println!(
            "{:13} {:9} curves {:3}/{:3} points {:5}/{:5} {}",
            row.policy.name(),
            format!("{:?}", row.measure),
            t.curves_equal,
            t.curves,
            t.points_equal,
            t.points,
            row.first_difference.unwrap_or_default()
        );
    }
    println!("{} experiments in {:.1?}", jobs.len(), t0.elapsed());
    if differ.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "deterministic curves differ from the artifact's: {}",
            differ.join(", ")
        )
        .into())
    }
}
