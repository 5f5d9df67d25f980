//! The PReMAS goldens of the multiple-buddy family
//! (`data/premas-oracle/*.golden` whose allocator is MBS, GranularMBS or
//! OctetMBS, made by `scripts/premas-oracle` from PReMAS's own logs)
//! replayed on partalloc's strategies: every job of every file must get
//! PReMAS's node set, so its pairwise L1 distance too. The curve and
//! nearest goldens are replayed by the allocators test binary
//! (`tests/allocators/premas_replay.rs`).

use std::path::PathBuf;

use crate::premas_golden::{Golden, GoldenError, fingerprint};
use crate::registry;

/// PReMAS's names of the multiple-buddy family.
const FAMILY: [&str; 3] = ["MBS", "GranularMBS", "OctetMBS"];

fn goldens() -> Vec<(String, Golden)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/premas-oracle");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "golden"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let g = Golden::parse(&std::fs::read_to_string(&p).unwrap(), &name).unwrap();
            (name, g)
        })
        .filter(|(_, g)| FAMILY.contains(&g.allocator.as_str()))
        .collect()
}

#[test]
fn every_premas_golden_replays_at_full_agreement() {
    let mut starts = 0;
    let mut files = 0;
    let mut seen = std::collections::BTreeSet::new();
    for (name, g) in goldens() {
        let Some(strategy) = g.partalloc_name() else {
            panic!(
                "{name}: PReMAS allocator {:?} has no partalloc strategy in PREMAS_NAMES",
                g.allocator
            );
        };
        let topo = g.topology().unwrap();
        let mut a = registry::build(&strategy, &topo).unwrap();
        let sum = g
            .replay(a.as_mut())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(sum.starts > 0 && sum.starts == sum.ends, "{name}: {sum:?}");
        // A plane is also the 3-D mesh of depth 1: the same grants.
        if g.machine[2] == 1 {
            let [x, y, _] = g.machine;
            let mut a =
                registry::build(&strategy, &format!("mesh:{x}x{y}x1").parse().unwrap()).unwrap();
            g.replay(a.as_mut())
                .unwrap_or_else(|e| panic!("{name} as {x}x{y}x1: {e}"));
        }
        starts += sum.starts;
        files += 1;
        seen.insert((g.allocator.clone(), g.machine[2] > 1));
    }
    // MBS, GranularMBS and OctetMBS, each on 2-D and 3-D meshes.
    for alloc in FAMILY {
        for three_d in [false, true] {
            assert!(
                seen.contains(&(alloc.to_owned(), three_d)),
                "no golden for {alloc} (3-D: {three_d})"
            );
        }
    }
    assert!(
        files >= 18 && starts >= 12_000,
        "{files} files, {starts} starts"
    );
}

#[test]
fn a_changed_grant_is_reported_with_its_line() {
    let (name, g) = goldens()
        .into_iter()
        .find(|(n, _)| n == "mbs-16x8-nasa.golden")
        .unwrap();
    // MBS's goldens do not replay on granular MBS.
    let mut a = registry::build("granular-mbs", &g.topology().unwrap()).unwrap();
    let e = g.replay(a.as_mut()).unwrap_err().to_string();
    assert!(e.starts_with("line "), "{name}: {e}");
    assert!(e.contains("PReMAS") && e.contains("partalloc"), "{e}");
}

#[test]
fn malformed_goldens_are_typed_errors_with_lines() {
    let head = "premas-oracle 1\npremas c\nmachine 4x4x1\nallocator MBS\nscheduler s\ntrace t\n";
    let bad = [
        (
            format!("{head}b 1 2 3\n"),
            "x:7: expected `b JOB START PROCS L1 HASH`, got \"b 1 2 3\"",
        ),
        (
            format!("{head}b 1 2 3 4 zz\n"),
            "x:7: the fingerprint is not 8 hex digits in \"b 1 2 3 4 zz\"",
        ),
        (
            format!("{head}b -1 2 3 4 00\n"),
            "x:7: the job is negative in \"b -1 2 3 4 00\"",
        ),
        (format!("{head}q 1\n"), "x:7: unknown record \"q\""),
        (
            format!("{head}machine 4x4\n"),
            "x:7: a second `machine` line",
        ),
        (
            head.replace("machine 4x4x1", "machine 4x4"),
            "x:3: the machine \"4x4\" is not XxYxZ",
        ),
        (
            head.replace("premas-oracle 1", "premas-oracle 2"),
            "x:1: this reader knows format 1 (`premas-oracle 1`)",
        ),
        (head.replace("trace t\n", ""), "x:0: no `trace` line"),
    ];
    for (text, want) in bad {
        let e: GoldenError = Golden::parse(&text, "x").unwrap_err();
        assert_eq!(e.to_string(), want);
    }
    // An end without a start is refused at replay.
    let g = Golden::parse(&format!("{head}e 3 9\n"), "x").unwrap();
    let mut a = registry::build("mbs", &g.topology().unwrap()).unwrap();
    assert_eq!(
        g.replay(a.as_mut()).unwrap_err().to_string(),
        "line 7: job 3 ends but is not running"
    );
    // The fingerprint is order-free FNV-1a over little-endian u32s.
    assert_eq!(fingerprint(&[]), 0x811C_9DC5);
    assert_eq!(fingerprint(&[2, 1]), fingerprint(&[1, 2]));
}
