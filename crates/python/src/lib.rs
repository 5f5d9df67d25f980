//! The native half of the `partalloc` Python package: thin wrappers over
//! the Rust crates. The Python half (`python/partalloc`) adds NumPy and
//! pandas conversions, the Gymnasium environment and the docstrings users
//! read.

mod alloc;
mod bench;
mod custom;
mod env;
mod errors;
mod fgd;
mod lublin;
mod placement;
mod sim;
mod sim_generated;
mod swf;
mod vecenv;

use pyo3::prelude::*;

/// The native module, imported as `partalloc._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    alloc::register(m)?;
    sim::register(m)?;
    swf::register(m)?;
    lublin::register(m)?;
    env::register(m)?;
    custom::register(m)?;
    bench::register(m)?;
    vecenv::register(m)?;
    fgd::register(m)?;
    Ok(())
}
