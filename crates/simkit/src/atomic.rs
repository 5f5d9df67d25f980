//! Files that appear complete or not at all.
//!
//! [`write_atomic`] writes to a temporary file in the target's own
//! directory, syncs it and renames it onto the target. A rename within one
//! directory replaces the target in one step, so a reader (or a run
//! resumed after a crash) sees either the old content or the whole new
//! content, never a prefix. An interrupted write leaves at most a hidden
//! `.<name>.<pid>.<n>.tmp` file, never a file under the target's name.
//!
//! ```
//! use partalloc_simkit::atomic::write_atomic;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("result.csv");
//! write_atomic(&path, b"x,y\n1,2\n")?;
//! assert_eq!(std::fs::read(&path)?, b"x,y\n1,2\n");
//! # Ok::<(), std::io::Error>(())
//! ```

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes the temporary files of concurrent writes in one process.
static NEXT_TMP: AtomicU64 = AtomicU64::new(0);

/// The temporary file for `path`: hidden, in the same directory (a rename
/// across file systems would not be atomic), and unique to this process
/// and call.
fn temporary_for(path: &Path) -> io::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a file name; give a path that ends in a file name",
        )
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        NEXT_TMP.fetch_add(1, Ordering::Relaxed)
    ));
    Ok(dir.join(tmp))
}

/// Writes `bytes` to `path` atomically: through a temporary file in the
/// same directory, synced and renamed onto `path`, which is replaced if it
/// exists.
///
/// # Errors
/// The error of the failed file operation (the directory does not exist
/// or is not writable, the disk is full, …), or
/// [`io::ErrorKind::InvalidInput`] if `path` has no file name. On error
/// `path` is unchanged and the temporary file is removed.
pub fn write_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    let path = path.as_ref();
    let tmp = temporary_for(path)?;
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        // Best effort: the temporary file is ours, and the first error is
        // the one worth reporting.
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// A file written piece by piece that appears under its name only when
/// [`commit`](Self::commit)ted: the streaming form of [`write_atomic`], for
/// output too long to hold in memory (per-job records of a long replay).
/// Dropped without a commit, it removes its temporary file.
///
/// ```
/// use std::io::Write as _;
/// use partalloc_simkit::atomic::AtomicFile;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("jobs.csv");
/// let mut f = AtomicFile::create(&path)?;
/// f.write_all(b"id\n1\n")?;
/// assert!(!path.exists());
/// f.commit()?;
/// assert_eq!(std::fs::read(&path)?, b"id\n1\n");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct AtomicFile {
    file: Option<io::BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
}

impl AtomicFile {
    /// Starts writing `path` through a temporary file beside it.
    ///
    /// # Errors
    /// As [`write_atomic`]: the temporary file cannot be created, or
    /// `path` has no file name.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let tmp = temporary_for(&path)?;
        let file = File::create(&tmp)?;
        Ok(Self {
            file: Some(io::BufWriter::with_capacity(1 << 16, file)),
            tmp,
            path,
        })
    }

    /// Flushes, syncs and renames the file onto its path.
    ///
    /// # Errors
    /// The failed file operation; `path` is then unchanged and the
    /// temporary file removed.
    pub fn commit(mut self) -> io::Result<()> {
        let result = (|| {
            let file = self.file.take().map(io::BufWriter::into_inner);
            if let Some(f) = file {
                let f = f.map_err(io::IntoInnerError::into_error)?;
                f.sync_all()?;
            }
            fs::rename(&self.tmp, &self.path)
        })();
        // On success the temporary name is gone; on error `Drop` removes it.
        if result.is_ok() {
            self.tmp = PathBuf::new();
        }
        result
    }
}

impl io::Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(io::Error::other("the file was already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), io::Write::flush)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            drop(self.file.take());
            // Best effort: the file is ours and unfinished.
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap_or_else(|e| unreachable!("{e}"))
            .map(|e| {
                e.unwrap_or_else(|e| unreachable!("{e}"))
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_and_replaces_leaving_only_the_target() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let p = dir.path().join("out.txt");
        write_atomic(&p, b"one")?;
        assert_eq!(fs::read(&p)?, b"one");
        write_atomic(&p, b"two, longer")?;
        assert_eq!(fs::read(&p)?, b"two, longer");
        write_atomic(&p, b"")?;
        assert_eq!(fs::read(&p)?, b"");
        assert_eq!(entries(dir.path()), ["out.txt"]);
        Ok(())
    }

    #[test]
    fn a_failed_write_leaves_the_target_and_no_temporary() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let p = dir.path().join("out.txt");
        write_atomic(&p, b"old")?;
        // The target is a directory: the rename fails after the temporary
        // file was written in full.
        let d = dir.path().join("sub");
        fs::create_dir(&d)?;
        fs::write(d.join("inside"), b"x")?;
        assert!(write_atomic(&d, b"new").is_err());
        assert_eq!(fs::read(d.join("inside"))?, b"x");
        // The directory does not exist: nothing can be created.
        let missing = dir.path().join("missing/out.txt");
        assert_eq!(
            write_atomic(&missing, b"x").map_err(|e| e.kind()),
            Err(io::ErrorKind::NotFound)
        );
        assert_eq!(fs::read(&p)?, b"old");
        assert_eq!(entries(dir.path()), ["out.txt", "sub"]);
        Ok(())
    }

    #[test]
    fn a_streamed_file_appears_only_when_committed() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let p = dir.path().join("out.txt");
        write_atomic(&p, b"old")?;
        let mut f = AtomicFile::create(&p)?;
        f.write_all(b"new, ")?;
        f.write_all(b"streamed")?;
        assert_eq!(fs::read(&p)?, b"old");
        f.commit()?;
        assert_eq!(fs::read(&p)?, b"new, streamed");
        // Dropped unfinished: the target keeps its content, no temporary.
        let mut g = AtomicFile::create(&p)?;
        g.write_all(b"lost")?;
        drop(g);
        assert_eq!(fs::read(&p)?, b"new, streamed");
        assert_eq!(entries(dir.path()), ["out.txt"]);
        Ok(())
    }

    #[test]
    fn a_path_without_a_file_name_is_refused() {
        let e = write_atomic("..", b"x").map_err(|e| e.kind());
        assert_eq!(e, Err(io::ErrorKind::InvalidInput));
    }

    #[test]
    fn temporaries_sit_beside_the_target_and_differ_per_call() -> io::Result<()> {
        let a = temporary_for(Path::new("dir/f.csv"))?;
        let b = temporary_for(Path::new("dir/f.csv"))?;
        assert_ne!(a, b);
        assert_eq!(a.parent(), Some(Path::new("dir")));
        let name = a.file_name().map(|n| n.to_string_lossy().into_owned());
        assert!(name.is_some_and(|n| n.starts_with(".f.csv.") && n.ends_with(".tmp")));
        assert_eq!(
            temporary_for(Path::new("f.csv"))?.parent(),
            Some(Path::new("."))
        );
        Ok(())
    }
}
