//! The integration tests of `partalloc-allocators`, one module per former
//! test file, linked into one binary (one link instead of seven). Run one
//! part with a filter: `cargo test -p partalloc-allocators --test
//! allocators kary::`. Proptest keeps each module's regressions in
//! `tests/proptest-regressions/<module>.txt`.

mod clone_grants;
mod gpushare;
mod hypercube;
mod hypercube_conformance;
mod kary;
mod kueue_tas;
mod mesh;
mod premas_replay;
mod registry_conformance;
mod slurm;
mod spec_fuzz;
mod support;
mod tas_allocator;
mod tas_oracle;
