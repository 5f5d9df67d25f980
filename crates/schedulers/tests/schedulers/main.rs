//! The schedulers crate's integration tests (one binary, one module each).

mod premas_schedules;
