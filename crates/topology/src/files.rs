//! Files read whole within a bound, and the run's inputs by identity.
//!
//! Every reader of an input file opens it here: it is refused past its
//! kind's size (from its metadata, and again while reading, since a device
//! or a FIFO has no size), so `/dev/zero` or a multi-gigabyte file costs no
//! memory; and it is remembered, by device and inode read from the open
//! file, as an input that no output of the run may replace
//! ([`input_identical_to`]), whatever spelling or link names it later.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use thiserror::Error;

use crate::echo_path;

/// Largest configuration file read whole: an experiment, a pod file, a
/// Slurm `topology.conf` / `topology.yaml`, a Kueue file (16 MiB; the
/// largest real ones are a few hundred KiB).
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Largest `sacct` dump or sweep shard read whole (1 GiB, a few million
/// jobs or points).
pub const MAX_DATA_BYTES: u64 = 1 << 30;

/// Why a file could not be read whole.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FileError {
    /// It could not be opened or read.
    #[error("{}: {source}", echo_path(.path))]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// It is larger than its kind is read.
    #[error("{}: larger than {} MiB, the most read for this kind of file; {advice}", echo_path(.path), .max >> 20)]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The bound in bytes.
        max: u64,
        /// What to do instead.
        advice: &'static str,
    },
    /// A directory was named where a file is read.
    #[error("{}: a directory, not a file", echo_path(.path))]
    Directory {
        /// The path.
        path: PathBuf,
    },
    /// A text file holds bytes that are not UTF-8.
    #[error("{}: not UTF-8 text (byte {byte} is invalid)", echo_path(.path))]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The offset of the first invalid byte.
        byte: usize,
    },
}

impl FileError {
    /// An I/O error on `path`.
    pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// What a file read whole is, for its bound and the message that refuses
/// an oversized one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// An experiment, pod or topology file.
    Config,
    /// A `sacct` dump.
    Sacct,
    /// An OpenB pod list.
    PodList,
    /// A sweep shard's CSV or record.
    Shard,
}

impl FileKind {
    /// The most bytes read for this kind.
    #[must_use]
    pub fn max(self) -> u64 {
        match self {
            Self::Config => MAX_CONFIG_BYTES,
            Self::Sacct | Self::PodList | Self::Shard => MAX_DATA_BYTES,
        }
    }

    fn advice(self) -> &'static str {
        match self {
            Self::Config => "is this the file you meant?",
            Self::Sacct => "split the dump by time (sacct -S/-E) and replay the parts",
            Self::PodList => "split the pod list by creation time and replay the parts",
            Self::Shard => "split the sweep into more shards",
        }
    }
}

/// Reads `path` whole within `kind`'s bound and registers it as an input.
///
/// # Errors
/// [`FileError::Io`], [`FileError::Directory`] or
/// [`FileError::TooLarge`].
pub fn read_bytes(path: &Path, kind: FileKind) -> Result<Vec<u8>, FileError> {
    let max = kind.max();
    let too_big = || FileError::TooLarge {
        path: path.to_path_buf(),
        max,
        advice: kind.advice(),
    };
    let file = std::fs::File::open(path).map_err(FileError::io(path))?;
    register_input(path, &file);
    let meta = file.metadata().map_err(FileError::io(path))?;
    if meta.is_dir() {
        return Err(FileError::Directory {
            path: path.to_path_buf(),
        });
    }
    if meta.len() > max {
        return Err(too_big());
    }
    // The metadata length is a hint for regular files only; cap the
    // initial capacity either way.
    let hint = usize::try_from(meta.len().min(max)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(hint);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(FileError::io(path))?;
    if bytes.len() as u64 > max {
        return Err(too_big());
    }
    Ok(bytes)
}

/// [`read_bytes`] as UTF-8 text.
///
/// # Errors
/// As [`read_bytes`], and [`FileError::NotUtf8`].
pub fn read_text(path: &Path, kind: FileKind) -> Result<String, FileError> {
    let bytes = read_bytes(path, kind)?;
    String::from_utf8(bytes).map_err(|e| FileError::NotUtf8 {
        path: path.to_path_buf(),
        byte: e.utf8_error().valid_up_to(),
    })
}

/// What makes two paths the same file: device and inode where the file
/// exists, else the absolute path it would be created at.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileId {
    /// An existing regular file.
    Inode(u64, u64),
    /// A file not written yet.
    New(PathBuf),
}

impl FileId {
    /// The identity of an existing regular file, following links.
    #[must_use]
    pub fn existing(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let m = std::fs::metadata(path).ok()?;
        m.is_file().then(|| Self::Inode(m.dev(), m.ino()))
    }

    /// The identity of the file at `path`, existing or to be created.
    ///
    /// # Errors
    /// The path cannot be made absolute.
    pub fn of(path: &Path) -> Result<Self, FileError> {
        if let Some(id) = Self::existing(path) {
            return Ok(id);
        }
        std::path::absolute(path)
            .map(Self::New)
            .map_err(FileError::io(path))
    }
}

/// Every file the process has read, with its identity.
static INPUTS: Mutex<Vec<(PathBuf, FileId)>> = Mutex::new(Vec::new());

/// Records `file`, opened from `path`, as an input (by device and inode,
/// read from the open file so a later rename cannot fool it). Every reader
/// of input files calls it; [`read_bytes`] does.
pub fn register_input(path: &Path, file: &std::fs::File) {
    use std::os::unix::fs::MetadataExt as _;
    if let Ok(m) = file.metadata()
        && m.is_file()
    {
        INPUTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((path.to_path_buf(), FileId::Inode(m.dev(), m.ino())));
    }
}

/// The path of an input the process has read that is the file `id`, if
/// any: an output that would replace it must be refused.
#[must_use]
pub fn input_identical_to(id: &FileId) -> Option<PathBuf> {
    INPUTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .find(|(_, i)| i == id)
        .map(|(p, _)| p.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_read_is_an_input_by_identity_and_an_oversized_one_is_refused()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let p = dir.path().join("a.conf");
        std::fs::write(&p, "x")?;
        assert_eq!(read_text(&p, FileKind::Config)?, "x");
        // A link to it is the same input.
        let link = dir.path().join("link.conf");
        std::os::unix::fs::symlink(&p, &link)?;
        let id = FileId::existing(&link).ok_or("no id")?;
        // (Other tests' files, since removed, may share the inode: any
        // match refuses the output.)
        assert!(input_identical_to(&id).is_some());
        let e = read_bytes(Path::new("/dev/zero"), FileKind::Config).unwrap_err();
        assert!(e.to_string().contains("larger than 16 MiB"), "{e}");
        let e = read_text(dir.path(), FileKind::Config).unwrap_err();
        assert!(e.to_string().ends_with("a directory, not a file"), "{e}");
        std::fs::write(&p, [0xff, 0xfe])?;
        let e = read_text(&p, FileKind::Config).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("not UTF-8 text (byte 0 is invalid)"),
            "{e}"
        );
        Ok(())
    }

    /// Each kind's refusal advises what fits that kind: only a sacct dump
    /// is split with sacct's own options.
    #[test]
    fn each_kind_advises_for_its_own_files() {
        for kind in [FileKind::Config, FileKind::PodList, FileKind::Shard] {
            assert!(!kind.advice().contains("sacct"), "{kind:?}");
        }
        assert!(FileKind::Sacct.advice().contains("sacct -S/-E"));
        assert_eq!(FileKind::PodList.max(), FileKind::Sacct.max());
    }
}
