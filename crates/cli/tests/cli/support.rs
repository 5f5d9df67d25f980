//! Running the `partalloc` binary and reading its answer: the helpers the
//! test modules share.
#![expect(
    clippy::unwrap_used,
    reason = "the helpers running the binary sit outside #[test] functions"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test.
pub(crate) fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_partalloc"))
}

/// Runs the binary in `dir`.
pub(crate) fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().unwrap()
}

/// Runs the binary here.
pub(crate) fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

/// Standard output as text.
pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// Standard error as text.
pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Asserts success and returns standard output.
pub(crate) fn ok(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", stderr(o));
    stdout(o)
}

/// Asserts a one-line error with exit code 1 and no output, and returns it.
pub(crate) fn fails(o: &Output) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(1), "stderr: {e}");
    assert!(o.stdout.is_empty(), "stdout on failure: {}", stdout(o));
    assert_eq!(e.lines().count(), 1, "not one line: {e}");
    assert!(e.starts_with("error: "), "{e}");
    e
}

/// The repository's root.
pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The NASA iPSC/860 trace shipped in `data/traces`.
pub(crate) fn nasa() -> String {
    repo()
        .join("data/traces/NASA-iPSC-1993-3.1-cln.swf")
        .display()
        .to_string()
}

/// A command line written as one string: its words, split at single
/// spaces (for arguments without spaces).
pub(crate) fn words(line: &str) -> Vec<&str> {
    line.split(' ').collect()
}
