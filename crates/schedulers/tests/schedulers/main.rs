//! The schedulers crate's integration tests (one binary, one module each).

#[cfg(test)]
mod premas_schedules;
