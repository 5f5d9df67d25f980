//! The integration tests of `partalloc-schedulers`, one module per
//! subject. Proptest keeps each module's regressions in
//! `tests/proptest-regressions/<module>.txt`.

mod spec_fuzz;
