//! Tests of partalloc-gpushare: one module per subject.

mod artifact;
mod capacity;
mod frag;
mod fuzz;
mod golden;
mod model;
mod openb;
mod policy;

use std::path::PathBuf;

/// The shipped OpenB data and the artifact's expected results.
pub(crate) fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/openb")
}
