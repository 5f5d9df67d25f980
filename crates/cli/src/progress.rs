//! Progress bars and worker threads of the long commands.

use std::io::IsTerminal as _;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::CliError;

/// Standard error when it is a terminal and `quiet` is off; nowhere
/// otherwise, so logs and pipes get no control characters.
pub(crate) fn target(quiet: bool) -> ProgressDrawTarget {
    if quiet || !std::io::stderr().is_terminal() {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    }
}

/// A bar of `len` steps named `unit` (e.g. "seeds").
pub(crate) fn bar(len: u64, unit: &str, quiet: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), target(quiet));
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {unit}  {{elapsed}} (eta {{eta}})"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// A rayon pool of `threads` workers (`None` or 0: one per core).
pub(crate) fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool, CliError> {
    if let Some(t) = threads {
        crate::limits::check_count("--threads", t as u64, crate::limits::MAX_THREADS as u64)?;
    }
    partalloc::simkit::thread_pool(threads.unwrap_or(0))
        .map_err(|e| CliError::input(format!("--threads: {e}")))
}
