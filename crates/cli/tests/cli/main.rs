//! The integration tests of `partalloc-cli`: the `partalloc` binary run as
//! a user runs it, one module per subject, linked into one binary. Run one
//! part with a filter: `cargo test -p partalloc-cli --test cli shard::`.

mod adversarial;
mod benchmark;
mod cases;
mod cli;
mod docs;
mod everywhere;
mod gpushare;
mod kueue;
mod limits;
mod lublin;
mod measures;
mod pods;
mod report;
mod shard;
mod slowdown;
mod support;
mod whatif;
