//! Files read whole within a bound, and the run's inputs by identity: the
//! one reader of input files, `partalloc_topology::files`, re-exported
//! (it sits in the lowest crate so that every crate reading a user's file,
//! the Slurm scheduling policy's inputs among them, reads through it).

pub use partalloc_topology::files::*;
