//! The integration tests of `partalloc-topology`, one module per former
//! test file, linked into one binary (one link instead of six). Run one
//! part with a filter: `cargo test -p partalloc-topology --test topology
//! products::`. Proptest keeps each module's regressions in
//! `tests/proptest-regressions/<module>.txt`.

mod aldhelaan_notation;
mod guards;
mod machines;
mod parse_fuzz;
mod products;
mod serde;
mod subtorus;
