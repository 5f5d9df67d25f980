//! The fields of an SWF job line.

use core::fmt;

/// The 18 fields of an SWF job line, in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum SwfField {
    /// 1: job number.
    JobNumber,
    /// 2: submit time (seconds).
    SubmitTime,
    /// 3: wait time (seconds).
    WaitTime,
    /// 4: run time (seconds).
    RunTime,
    /// 5: number of allocated processors.
    AllocatedProcessors,
    /// 6: average CPU time used (seconds).
    AverageCpuTime,
    /// 7: used memory (KB).
    UsedMemory,
    /// 8: requested number of processors.
    RequestedProcessors,
    /// 9: requested time (seconds).
    RequestedTime,
    /// 10: requested memory (KB).
    RequestedMemory,
    /// 11: status.
    Status,
    /// 12: user id.
    UserId,
    /// 13: group id.
    GroupId,
    /// 14: executable (application) number.
    Executable,
    /// 15: queue number.
    Queue,
    /// 16: partition number.
    Partition,
    /// 17: preceding job number.
    PrecedingJob,
    /// 18: think time from the preceding job (seconds).
    ThinkTime,
}

impl SwfField {
    /// All fields in file order.
    pub const ALL: [Self; 18] = [
        Self::JobNumber,
        Self::SubmitTime,
        Self::WaitTime,
        Self::RunTime,
        Self::AllocatedProcessors,
        Self::AverageCpuTime,
        Self::UsedMemory,
        Self::RequestedProcessors,
        Self::RequestedTime,
        Self::RequestedMemory,
        Self::Status,
        Self::UserId,
        Self::GroupId,
        Self::Executable,
        Self::Queue,
        Self::Partition,
        Self::PrecedingJob,
        Self::ThinkTime,
    ];

    /// The 1-based field number of the format.
    #[must_use]
    pub fn number(self) -> usize {
        self as usize + 1
    }

    /// The field's name in the format description.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::JobNumber => "job number",
            Self::SubmitTime => "submit time",
            Self::WaitTime => "wait time",
            Self::RunTime => "run time",
            Self::AllocatedProcessors => "number of allocated processors",
            Self::AverageCpuTime => "average CPU time used",
            Self::UsedMemory => "used memory",
            Self::RequestedProcessors => "requested number of processors",
            Self::RequestedTime => "requested time",
            Self::RequestedMemory => "requested memory",
            Self::Status => "status",
            Self::UserId => "user id",
            Self::GroupId => "group id",
            Self::Executable => "executable number",
            Self::Queue => "queue number",
            Self::Partition => "partition number",
            Self::PrecedingJob => "preceding job number",
            Self::ThinkTime => "think time from preceding job",
        }
    }
}

impl fmt::Display for SwfField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field {} ({})", self.number(), self.name())
    }
}
