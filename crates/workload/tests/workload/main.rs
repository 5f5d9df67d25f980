//! The integration tests of `partalloc-workload`, one module per former
//! test file, linked into one binary. Proptest keeps each module's
//! regressions in `tests/proptest-regressions/<module>.txt`.

mod parse_fuzz;
mod serde;
mod swf_reader;
