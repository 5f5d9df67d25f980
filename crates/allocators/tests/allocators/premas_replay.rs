//! Replays the PReMAS oracle goldens of the curve and nearest allocators
//! (`data/premas-oracle/*.golden` whose allocator is `linear-first[C]`,
//! `linear-best[C]`, `linear-sorted[C]`, `MC1x1`, `MM` or `genAlg`; made by
//! `scripts/premas-oracle`, docs/premas-oracle.md) without Java, through
//! the one golden reader, `partalloc_allocators::premas_golden`.
//!
//! A golden lists, in the order PReMAS called its allocator, every grant
//! and every release. The same calls are made on partalloc's allocator of
//! the same name, and every grant must have PReMAS's pairwise L1 distance
//! and PReMAS's node set (the FNV-1a fingerprint of the sorted node ids).
//! The linear allocators' curve files were written by partalloc
//! (`examples/premas_curve.rs`), so these goldens pin the curves too.
//! Run: `cargo test -p partalloc-allocators --test allocators premas_replay::`.

#![expect(clippy::unwrap_used, reason = "test of fixed, checked-in files")]

use std::path::{Path, PathBuf};

use partalloc_allocators::premas_golden::Golden;
use partalloc_allocators::registry;

/// What one golden replay found.
struct Outcome {
    allocator: String,
    grants: usize,
    mismatch: Option<String>,
}

/// Replays the golden at `path` if its allocator's registry name (without
/// parameters) is `only`.
fn replay(path: &Path, only: &str) -> Option<Outcome> {
    let name = path.file_name().unwrap().to_string_lossy();
    let g = Golden::parse(&std::fs::read_to_string(path).unwrap(), &name).unwrap();
    let allocator = g.partalloc_name()?;
    if allocator.split('[').next() != Some(only) {
        return None;
    }
    let mut alloc = registry::build(&allocator, &g.topology().unwrap()).unwrap();
    let (grants, mismatch) = match g.replay(alloc.as_mut()) {
        Ok(sum) => {
            assert_eq!(sum.starts, sum.ends, "{name}: jobs never released");
            (sum.starts, None)
        }
        Err(e) => (0, Some(e.to_string())),
    };
    Some(Outcome {
        allocator,
        grants,
        mismatch,
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
