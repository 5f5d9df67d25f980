//! Python exceptions and the guard that keeps Rust panics from crossing
//! into the interpreter.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    partalloc,
    AllocationError,
    PyException,
    "An allocator refused an operation on its machine."
);
create_exception!(
    partalloc,
    ReleaseError,
    AllocationError,
    "A grant could not be released (released twice, or issued by another allocator)."
);
create_exception!(
    partalloc,
    FaultError,
    AllocationError,
    "A node could not be marked faulty or repaired."
);
create_exception!(
    partalloc,
    UnsupportedRequestError,
    AllocationError,
    "The strategy cannot serve this kind of request on this machine."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("AllocationError", py.get_type::<AllocationError>())?;
    m.add("ReleaseError", py.get_type::<ReleaseError>())?;
    m.add("FaultError", py.get_type::<FaultError>())?;
    m.add(
        "UnsupportedRequestError",
        py.get_type::<UnsupportedRequestError>(),
    )?;
    m.add_function(wrap_pyfunction!(panic_for_tests, m)?)?;
    Ok(())
}

/// Panics inside [`guard`], so the test suite can check that a panic
/// reaches Python as a `RuntimeError`. Undocumented for users.
#[pyfunction]
#[pyo3(name = "_panic_for_tests")]
#[expect(clippy::panic, reason = "the panic is what this function tests")]
fn panic_for_tests() -> PyResult<()> {
    guard(|| panic!("deliberate panic for the test suite"))
}

/// Bad input: a `ValueError` with the error's one-line message, in
/// Python's words ([`pythonic`]).
pub(crate) fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(pythonic(&e.to_string()))
}

/// A message of the Rust core with the Rust requests it names written as
/// the Python arguments that make them (`Request::boxed(&[a, b])` is
/// `shape=(a, b)`).
pub(crate) fn pythonic(message: &str) -> String {
    const NAMES: [(&str, &str); 4] = [
        ("Request::boxed(&[a, b])", "shape=(a, b)"),
        ("Request::boxed", "shape=(a, b, …)"),
        ("Request::subcube(k)", "subcube=k"),
        ("Request::nodes", "nodes=count"),
    ];
    NAMES.iter().fold(message.to_owned(), |m, (rust, python)| {
        m.replace(rust, python)
    })
}

/// Runs `f`, turning a panic into a `RuntimeError` instead of unwinding
/// into the interpreter.
pub(crate) fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown cause".to_owned());
            Err(PyRuntimeError::new_err(format!(
                "internal error in partalloc: {what}; please report it with the call that caused it"
            )))
        }
    }
}
