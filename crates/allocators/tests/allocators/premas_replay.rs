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

fn replay(path: &Path, only: &str) -> Option<Outcome> {
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
    if allocator.split('[').next() != Some(only) {
        return None;
    }
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

/// Replays every golden of the allocator `name` (its registry name without
/// parameters): all must agree, on at least `min_files` goldens and
/// `min_grants` grants.
fn agree(name: &str, min_files: usize, min_grants: usize) {
    let mut report = Vec::new();
    let (mut files, mut grants) = (0, 0);
    for path in goldens() {
        let Some(o) = replay(&path, name) else {
            continue;
        };
        files += 1;
        grants += o.grants;
        if let Some(m) = o.mismatch {
            let file = path.file_name().unwrap().to_string_lossy();
            report.push(format!("{file} ({}): {m}", o.allocator));
        }
    }
    assert!(
        report.is_empty(),
        "{} of {files} goldens of {name} disagree:\n{}",
        report.len(),
        report.join("\n")
    );
    assert!(
        files >= min_files && grants >= min_grants,
        "{name}: {files} goldens, {grants} grants"
    );
}

// Ten goldens each: Hilbert on all six machines, snake on 16×8 and 8×4×4,
// row-major on 12×11 and 6×5×5; 7,800 grants.
#[test]
fn curve_first_fit_agrees_with_premas_linear_first() {
    agree("curve-first-fit", 10, 7_800);
}

#[test]
fn curve_best_fit_agrees_with_premas_linear_best() {
    agree("curve-best-fit", 10, 7_800);
}

#[test]
fn curve_sorted_free_list_agrees_with_premas_linear_sorted() {
    agree("curve-sorted-free-list", 10, 7_800);
}

// Six goldens each (one per machine), 4,200 grants.
#[test]
fn mc1x1_premas_agrees_with_premas_mc1x1() {
    agree("mc1x1", 6, 4_200);
}

#[test]
fn mm_agrees_with_premas_mm() {
    agree("mm", 6, 4_200);
}

#[test]
fn gen_alg_agrees_with_premas_gen_alg() {
    agree("gen-alg", 6, 4_200);
}
