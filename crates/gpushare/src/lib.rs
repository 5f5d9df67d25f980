//! GPU-sharing clusters and the scheduling experiment of Weng et al.,
//! "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
//! Fragmentation Gradient Descent" (USENIX ATC 2023), reproduced against
//! the results its artifact ships. See `docs/fgd.md`.

pub mod gorand;
