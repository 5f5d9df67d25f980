//! Replays the PReMAS oracle goldens of the curve and nearest allocators
//! (`data/premas-oracle/*.golden` whose allocator is `linear-first[C]`,
//! `linear-best[C]`, `linear-sorted[C]`, `MC1x1`, `MM` or `genAlg`; made by
//! `scripts/premas-oracle`, docs/premas-oracle.md) without Java.
//!
//! A golden lists, in the order PReMAS called its allocator, every grant
//! (`b job start procs pairwiseL1 fnv32`) and every release (`e job end`).
//! The same calls are made on partalloc's allocator of the same name, and
//! every grant must have PReMAS's pairwise L1 distance and PReMAS's node
//! set (the FNV-1a fingerprint of the sorted node ids). The linear
//! allocators' curve files were written by partalloc
//! (`examples/premas_curve.rs`), so these goldens pin the curves too.
//! Run: `cargo test -p partalloc-allocators --test allocators premas_replay::`.

#![expect(clippy::unwrap_used, reason = "test of fixed, checked-in files")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use partalloc_allocators::{Grant, Partition, Request, registry};
use partalloc_topology::{NodeId, Topology};

/// partalloc's registry name for a PReMAS allocator, if it is one of the
/// curve or nearest allocators.
fn partalloc_name(premas: &str) -> Option<String> {
    let linear = |fit: &str| {
        let curve = premas.split_once('[')?.1.strip_suffix(']')?;
        Some(format!("curve-{fit}[order={curve}]"))
    };
    match premas.split_once('[').map_or(premas, |(name, _)| name) {
        "linear-first" => linear("first-fit"),
        "linear-best" => linear("best-fit"),
        "linear-sorted" => linear("sorted-free-list"),
        "MC1x1" => Some("mc1x1[outer=premas]".to_owned()),
        "MM" => Some("mm".to_owned()),
        "genAlg" => Some("gen-alg".to_owned()),
        _ => None,
    }
}

/// Sum of L1 distances over every pair of nodes (test-local brute force).
fn pairwise_l1(ids: &[NodeId], sides: [u32; 3]) -> u64 {
    let p = |n: NodeId| {
        [
            n % sides[0],
            n / sides[0] % sides[1],
            n / (sides[0] * sides[1]),
        ]
    };
    let mut sum = 0;
    for (i, &a) in ids.iter().enumerate() {
        for &b in &ids[i + 1..] {
            let (pa, pb) = (p(a), p(b));
            sum += u64::from((0..3).map(|d| pa[d].abs_diff(pb[d])).sum::<u32>());
        }
    }
    sum
}

/// FNV-1a (32 bit) of the sorted ids as little-endian u32s, as the script
/// computes it.
fn fnv32(ids: &[NodeId]) -> u32 {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    let mut h: u32 = 0x811C_9DC5;
    for n in sorted {
        for b in n.to_le_bytes() {
            h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
    }
    h
}

/// What one golden replay found.
struct Outcome {
    allocator: String,
    grants: usize,
    mismatch: Option<String>,
}

fn replay(path: &Path) -> Option<Outcome> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(lines.next(), Some("premas-oracle 1"), "{}", path.display());
    let mut header = HashMap::new();
    let mut body = Vec::new();
    for line in lines {
        match line.split_once(' ') {
            Some((k @ ("premas" | "machine" | "allocator" | "scheduler" | "trace"), v)) => {
                header.insert(k, v);
            }
            _ => body.push(line),
        }
    }
    let allocator = partalloc_name(header["allocator"])?;
    let sides: Vec<u32> = header["machine"]
        .split('x')
        .map(|s| s.parse().unwrap())
        .collect();
    let sides = [sides[0], sides[1], sides[2]];
    let machine = if sides[2] == 1 {
        format!("mesh:{}x{}", sides[0], sides[1])
    } else {
        format!("mesh:{}x{}x{}", sides[0], sides[1], sides[2])
    };
    let topology: Topology = machine.parse().unwrap();
    let mut alloc = registry::build(&allocator, &topology).unwrap();
    let mut live: HashMap<&str, Grant> = HashMap::new();
    let mut grants = 0;
    for line in body {
        let f: Vec<&str> = line.split(' ').collect();
        match f.as_slice() {
            ["b", job, _start, procs, l1, fnv] => {
                let g = alloc.allocate(&Request::nodes(procs.parse().unwrap()));
                let g = match g {
                    Ok(g) => g,
                    Err(e) => {
                        let mismatch = Some(format!("job {job}: PReMAS granted, partalloc: {e}"));
                        return Some(Outcome {
                            allocator,
                            grants,
                            mismatch,
                        });
                    }
                };
                let Partition::Nodes(ids) = g.partition() else {
                    let mismatch = Some(format!("job {job}: not a node list: {}", g.partition()));
                    return Some(Outcome {
                        allocator,
                        grants,
                        mismatch,
                    });
                };
                let (got_l1, got_fnv) = (pairwise_l1(ids, sides), format!("{:08x}", fnv32(ids)));
                if got_l1.to_string() != *l1 || got_fnv != *fnv {
                    let mismatch = Some(format!(
                        "job {job} ({procs} nodes): PReMAS pairwise L1 {l1} set {fnv}, partalloc {got_l1} set {got_fnv} {ids:?}"
                    ));
                    return Some(Outcome {
                        allocator,
                        grants,
                        mismatch,
                    });
                }
                grants += 1;
                live.insert(job, g);
            }
            ["e", job, _end] => alloc.release(&live.remove(job).unwrap()).unwrap(),
            _ => {
                let mismatch = Some(format!("unreadable line {line:?}"));
                return Some(Outcome {
                    allocator,
                    grants,
                    mismatch,
                });
            }
        }
    }
    assert!(live.is_empty(), "{}: jobs never released", path.display());
    Some(Outcome {
        allocator,
        grants,
        mismatch: None,
    })
}

fn goldens() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/premas-oracle");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "golden"))
        .collect();
    files.sort();
    files
}

#[test]
fn curve_and_nearest_allocators_agree_with_every_premas_golden() {
    let mut report = Vec::new();
    let (mut files, mut grants, mut failed) = (0, 0, 0);
    let mut per_allocator: HashMap<String, usize> = HashMap::new();
    for path in goldens() {
        let Some(o) = replay(&path) else { continue };
        files += 1;
        grants += o.grants;
        *per_allocator.entry(o.allocator.clone()).or_default() += o.grants;
        if let Some(m) = o.mismatch {
            failed += 1;
            let name = path.file_name().unwrap().to_string_lossy();
            report.push(format!("{name} ({}): {m}", o.allocator));
        }
    }
    assert!(
        report.is_empty(),
        "{failed} of {files} goldens disagree:\n{}",
        report.join("\n")
    );
    // Every allocator of the family is covered, on enough grants.
    for name in [
        "curve-first-fit",
        "curve-best-fit",
        "curve-sorted-free-list",
        "mc1x1",
        "mm",
        "gen-alg",
    ] {
        let n: usize = per_allocator
            .iter()
            .filter(|(k, _)| k.split('[').next() == Some(name))
            .map(|(_, v)| v)
            .sum();
        assert!(n >= 1000, "{name}: only {n} grants replayed");
    }
    assert!(
        files >= 40 && grants >= 20_000,
        "{files} goldens, {grants} grants"
    );
}
