//! Reading Standard Workload Format traces as jobs.

use std::path::Path;

use partalloc::simkit::TraceError;
use partalloc::workload::Job;
use partalloc::workload::ShapeMapping;
use partalloc::workload::swf::SwfHeader;

use crate::error::CliError;

/// Reads a whole trace as jobs on `mapping`, sorted by arrival, with
/// line-numbered errors (`partalloc_simkit::trace`).
pub(crate) fn read_trace(
    path: &Path,
    mapping: ShapeMapping,
    lenient: bool,
) -> Result<(Vec<Job>, SwfHeader, u64), CliError> {
    let trace = partalloc::simkit::read_trace(path, mapping, lenient).map_err(|e| match e {
        TraceError::Io { path, source } => CliError::Io { path, source },
        TraceError::Swf { path, source } => CliError::Swf { path, source },
        e => CliError::input(e.to_string()),
    })?;
    Ok((trace.jobs, trace.header, trace.skipped))
}
