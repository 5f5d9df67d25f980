//! Two runs of a quick figure with the same seed give byte-identical CSVs,
//! whatever the number of threads; a rerun resumes from the finished file.

#![expect(
    clippy::expect_used,
    reason = "the helper running the binary sits outside #[test] functions"
)]

use std::path::Path;
use std::process::Command;

fn reproduce(id: &str, out: &Path, threads: &str) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["reproduce", id, "--quick", "--threads", threads, "--out"])
        .arg(out)
        .output()
        .expect("the xtask binary runs");
    assert!(
        output.status.success(),
        "xtask failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn quick_fig10_is_byte_identical_across_thread_counts() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    reproduce("kang-fig10", one.path(), "1");
    reproduce("kang-fig10", two.path(), "2");
    for panel in ["kang-fig10a", "kang-fig10b", "kang-fig10c"] {
        let a = std::fs::read(one.path().join(format!("{panel}.csv"))).unwrap();
        let b = std::fs::read(two.path().join(format!("{panel}.csv"))).unwrap();
        assert!(!a.is_empty());
        assert_eq!(a, b, "{panel}.csv differs between 1 and 2 threads");
        let svg = std::fs::read_to_string(one.path().join(format!("{panel}.svg"))).unwrap();
        assert!(svg.starts_with("<svg"));
        // 2 strategies × 9 loads, plus the header.
        assert_eq!(String::from_utf8(a).unwrap().lines().count(), 19);
    }
    // No partial file is left behind once a figure is finished.
    assert!(!one.path().join("kang-fig10a.csv.partial").exists());
    // A rerun resumes: nothing to simulate, same bytes.
    let before = std::fs::read(one.path().join("kang-fig10c.csv")).unwrap();
    reproduce("kang-fig10c", one.path(), "2");
    assert_eq!(
        before,
        std::fs::read(one.path().join("kang-fig10c.csv")).unwrap()
    );
}

#[test]
fn a_cpu_time_figure_keeps_wall_clock_out_of_the_deterministic_csv() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    reproduce("kimyoon-fig14a", one.path(), "1");
    reproduce("kimyoon-fig14a", two.path(), "2");
    let a = std::fs::read(one.path().join("kimyoon-fig14a.csv")).unwrap();
    let b = std::fs::read(two.path().join("kimyoon-fig14a.csv")).unwrap();
    assert_eq!(a, b);
    let cpu = std::fs::read_to_string(one.path().join("kimyoon-fig14a-cputime.csv")).unwrap();
    assert!(
        cpu.lines()
            .next()
            .unwrap()
            .ends_with("search_us_mean,search_us_ci95")
    );
}

#[test]
fn unknown_ids_are_refused_with_a_hint() {
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["reproduce", "kang-fig99", "--quick", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--list"));
}
