//! The integration tests of `partalloc-schedulers`, one module per
//! subject. Proptest keeps each module's regressions in
//! `tests/proptest-regressions/<module>.txt`.

// Test code for clippy's unwrap-in-tests allowance.
#[cfg(test)]
mod premas_schedules;
mod spec_fuzz;
