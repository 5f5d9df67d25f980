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
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// Distinguishes the temporary files of concurrent writes in one process.
static NEXT_TMP: AtomicU64 = AtomicU64::new(0);

/// The temporary files of this process that exist now, for
/// [`remove_temporaries`].
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Removes every temporary file this process is writing now, for a signal
/// handler that ends the process (an interrupted `partalloc` leaves no
/// `.NAME.<pid>.<n>.tmp` behind). The targets are left as they were.
pub fn remove_temporaries() {
    remove_temporaries_where(|_| true);
}

fn remove_temporaries_where(pick: impl Fn(&Path) -> bool) {
    live().retain(|tmp| {
        if pick(tmp) {
            // Best effort: the process is ending.
            let _ = fs::remove_file(tmp);
            false
        } else {
            true
        }
    });
}

fn forget(tmp: &Path) {
    let mut l = live();
    if let Some(i) = l.iter().position(|p| p == tmp) {
        l.swap_remove(i);
    }
}

/// Where the bytes for a path go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// A regular file, new or existing, replaced atomically through a
    /// temporary file beside it. A symbolic link to a regular file is
    /// followed: the file it points to is replaced and the link kept.
    Replace(PathBuf),
    /// Something that is not a regular file and is written in place,
    /// never replaced: a device (`/dev/null`), a FIFO, a socket, or
    /// standard output or error named as `/dev/stdout`, `/dev/stderr`,
    /// `/dev/fd/N` or `/proc/self/fd/N`.
    Stream(PathBuf),
}

/// Names that stand for an open descriptor of this process.
fn names_a_descriptor(path: &Path) -> bool {
    ["/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/fd/"]
        .iter()
        .any(|p| path.as_os_str().to_string_lossy().starts_with(p))
}

/// Decides where a write to `path` goes, without writing: the check every
/// output path gets before any work is done.
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] if `path` is or points to a directory,
/// has no file name, or is a symbolic link whose target does not exist;
/// [`io::ErrorKind::NotFound`] if its directory does not exist; the error
/// of the failed metadata look-up otherwise.
pub fn destination(path: impl AsRef<Path>) -> io::Result<Destination> {
    let path = path.as_ref();
    let invalid = |what: &str| io::Error::new(io::ErrorKind::InvalidInput, what.to_owned());
    if names_a_descriptor(path) {
        return Ok(Destination::Stream(path.to_path_buf()));
    }
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if path.file_name().is_none() {
                return Err(invalid(
                    "not a file name; give a path that ends in a file name",
                ));
            }
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            match fs::metadata(dir) {
                Ok(m) if m.is_dir() => Ok(Destination::Replace(path.to_path_buf())),
                Ok(_) => Err(invalid("its directory is not a directory")),
                Err(_) => Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    "its directory does not exist; create it first",
                )),
            }
        }
        Err(e) => Err(e),
        Ok(m) if m.file_type().is_symlink() => match fs::metadata(path) {
            Ok(t) if t.is_file() => Ok(Destination::Replace(fs::canonicalize(path)?)),
            Ok(t) if t.is_dir() => Err(invalid("a link to a directory, not a file")),
            Ok(_) => Ok(Destination::Stream(path.to_path_buf())),
            Err(_) => Err(invalid(
                "a symbolic link to nothing; remove it or name another file",
            )),
        },
        Ok(m) if m.is_file() => {
            if path.file_name().is_none() {
                return Err(invalid(
                    "not a file name; give a path that ends in a file name",
                ));
            }
            Ok(Destination::Replace(path.to_path_buf()))
        }
        Ok(m) if m.is_dir() => Err(invalid("a directory, not a file")),
        Ok(_) => Ok(Destination::Stream(path.to_path_buf())),
    }
}

/// Removes temporaries of earlier writes to `name` in `dir` whose process
/// no longer runs (it was killed mid-write), so they do not pile up.
#[cfg(target_os = "linux")]
fn remove_orphans(dir: &Path, name: &std::ffi::OsStr) {
    let Some(name) = name.to_str() else { return };
    let prefix = format!(".{name}.");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(f) = file.to_str() else { continue };
        let Some(rest) = f.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".tmp")) else {
            continue;
        };
        let mut parts = rest.split('.');
        let (Some(pid), Some(n), None) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if pid.parse::<u32>().is_err() || n.parse::<u64>().is_err() {
            continue;
        }
        if !Path::new("/proc").join(pid).exists() {
            // Best effort: a stale temporary of a dead writer.
            let _ = fs::remove_file(e.path());
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn remove_orphans(_dir: &Path, _name: &std::ffi::OsStr) {}

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

/// Creates the temporary file for `path` and registers it for
/// [`remove_temporaries`].
fn create_temporary(path: &Path) -> io::Result<(PathBuf, File)> {
    let tmp = temporary_for(path)?;
    if let (Some(dir), Some(name)) = (tmp.parent(), path.file_name()) {
        remove_orphans(dir, name);
    }
    let mut l = live();
    let f = File::create(&tmp)?;
    l.push(tmp.clone());
    Ok((tmp, f))
}

/// Opens something that is not a regular file for writing, in place.
fn open_stream(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).open(path)
}

/// Writes `bytes` to `path` atomically: through a temporary file in the
/// same directory, synced and renamed onto `path`, which is replaced if it
/// is a regular file. What is not a regular file is never replaced (see
/// [`destination`]): a device, FIFO or socket is written in place, and a
/// symbolic link to a regular file has that file replaced.
///
/// # Errors
/// The error of the failed file operation (the directory does not exist
/// or is not writable, the disk is full, …), or
/// [`io::ErrorKind::InvalidInput`] as [`destination`] says. On error
/// `path` is unchanged and the temporary file is removed.
pub fn write_atomic(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    let bytes = bytes.as_ref();
    let path = match destination(path)? {
        Destination::Stream(p) => {
            let mut f = open_stream(&p)?;
            return f.write_all(bytes).and_then(|()| f.flush());
        }
        Destination::Replace(p) => p,
    };
    let (tmp, mut f) = create_temporary(&path)?;
    let result = (|| {
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, &path)
    })();
    if result.is_err() {
        // Best effort: the temporary file is ours, and the first error is
        // the one worth reporting.
        let _ = fs::remove_file(&tmp);
    }
    forget(&tmp);
    result
}

/// A file written piece by piece that appears under its name only when
/// [`commit`](Self::commit)ted: the streaming form of [`write_atomic`], for
/// output too long to hold in memory (per-job records of a long replay).
/// Dropped without a commit, it removes its temporary file. Like
/// [`write_atomic`], it writes a device or FIFO in place.
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
    /// Empty when writing in place or once committed.
    tmp: PathBuf,
    path: PathBuf,
}

impl AtomicFile {
    /// Starts writing `path` through a temporary file beside it (or in
    /// place, for what is not a regular file).
    ///
    /// # Errors
    /// As [`write_atomic`]: the temporary file cannot be created, or
    /// [`destination`] refuses `path`.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let (path, tmp, file) = match destination(path)? {
            Destination::Stream(p) => {
                let f = open_stream(&p)?;
                (p, PathBuf::new(), f)
            }
            Destination::Replace(p) => {
                let (tmp, f) = create_temporary(&p)?;
                (p, tmp, f)
            }
        };
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
        let in_place = self.tmp.as_os_str().is_empty();
        let result = (|| {
            let file = self.file.take().map(io::BufWriter::into_inner);
            if let Some(f) = file {
                let f = f.map_err(io::IntoInnerError::into_error)?;
                if !in_place {
                    f.sync_all()?;
                }
            }
            if in_place {
                return Ok(());
            }
            fs::rename(&self.tmp, &self.path)
        })();
        // On success the temporary name is gone; on error `Drop` removes it.
        if result.is_ok() {
            forget(&self.tmp);
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
            forget(&self.tmp);
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
        // The target is a directory: refused before anything is written.
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

    #[cfg(unix)]
    #[test]
    fn what_is_not_a_regular_file_is_never_replaced() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        // A device is written in place.
        write_atomic("/dev/null", b"gone")?;
        assert!(!fs::metadata("/dev/null")?.is_file());
        // A link to a regular file: the file is replaced, the link kept.
        let real = dir.path().join("real.csv");
        fs::write(&real, b"old")?;
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink(&real, &link)?;
        write_atomic(&link, b"new")?;
        assert!(fs::symlink_metadata(&link)?.file_type().is_symlink());
        assert_eq!(fs::read(&real)?, b"new");
        let mut f = AtomicFile::create(&link)?;
        f.write_all(b"streamed")?;
        f.commit()?;
        assert!(fs::symlink_metadata(&link)?.file_type().is_symlink());
        assert_eq!(fs::read(&real)?, b"streamed");
        // A dangling link and a directory are refused, nothing created.
        let dangling = dir.path().join("dangling.csv");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling)?;
        assert_eq!(
            write_atomic(&dangling, b"x").map_err(|e| e.kind()),
            Err(io::ErrorKind::InvalidInput)
        );
        assert!(!dir.path().join("nowhere").exists());
        assert_eq!(
            entries(dir.path()),
            ["dangling.csv", "link.csv", "real.csv"]
        );
        Ok(())
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_in_place() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return Ok(()); // No mkfifo on this system: nothing to check.
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo))
        };
        write_atomic(&fifo, b"through the pipe")?;
        let got = reader
            .join()
            .map_err(|_| io::Error::other("reader panicked"))??;
        assert_eq!(got, b"through the pipe");
        assert!(!fs::metadata(&fifo)?.is_file());
        assert_eq!(entries(dir.path()), ["pipe"]);
        Ok(())
    }

    #[test]
    fn temporaries_are_registered_until_done_and_orphans_removed() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let p = dir.path().join("out.csv");
        let mut f = AtomicFile::create(&p)?;
        f.write_all(b"x")?;
        let tmp = f.tmp.clone();
        assert!(live().contains(&tmp));
        f.commit()?;
        assert!(!live().contains(&tmp));
        // A temporary left by a process that no longer runs (pid 0 is
        // never a user process) goes with the next write of the target;
        // another file's temporary stays.
        fs::write(dir.path().join(".out.csv.4194304.7.tmp"), b"stale")?;
        fs::write(dir.path().join(".other.csv.4194304.7.tmp"), b"stale")?;
        write_atomic(&p, b"y")?;
        assert_eq!(entries(dir.path()), [".other.csv.4194304.7.tmp", "out.csv"]);
        // A signal handler's clean-up removes unfinished temporaries only.
        let mut g = AtomicFile::create(&p)?;
        g.write_all(b"unfinished")?;
        let gtmp = g.tmp.clone();
        assert!(gtmp.exists());
        // (Only this test's: other tests write files concurrently.)
        remove_temporaries_where(|t| t.starts_with(dir.path()));
        assert!(!gtmp.exists());
        assert_eq!(fs::read(&p)?, b"y");
        drop(g);
        Ok(())
    }
}
