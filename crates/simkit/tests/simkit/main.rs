//! The integration tests of `partalloc-simkit`, one module per former test
//! file, linked into one binary. Run one part with a filter: `cargo test
//! -p partalloc-simkit --test simkit run_loop::`.

// Thread-count independence needs rayon's pool.
#[cfg(feature = "parallel")]
mod determinism;
mod dispersal;
mod mohapatra_trends;
mod preemption;
mod rlscheduler_oracle;
mod run_loop;
