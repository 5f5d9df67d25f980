//! The native half of the `partalloc` Python package: thin wrappers over
//! the Rust crates. The Python half (`python/partalloc`) adds NumPy and
//! pandas conversions, the Gymnasium environment and the docstrings users
//! read.

mod alloc;
mod bench;
mod custom;
mod env;
mod errors;
mod sim;
mod sim_generated;
mod swf;

use pyo3::prelude::*;

/// The native module, imported as `partalloc._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    alloc::register(m)?;
    sim::register(m)?;
    swf::register(m)?;
    env::register(m)?;
    custom::register(m)?;
    bench::register(m)?;
    Ok(())
}
