//! The repository's documents show what the tool really does. In
//! `README.md`, `data/README.md`, `docs/*.md`, `crates/*/README.md` and
//! `scripts/*/README.md`:
//!
//! - a ```` ```sh ```` block whose commands are all `partalloc …` runs here,
//!   its commands in order in one scratch directory (files it names under
//!   `examples/` or `data/` copied in), and each must succeed; when a
//!   ```` ```text ```` block follows it after one blank line, what the
//!   commands print must be that text (or, when the text opens with a line
//!   `…`, contain the rest of it as one run of lines);
//! - every `$ partalloc …` line of a ```` ```text ```` block must print the
//!   lines after it;
//! - any other command is one CI runs itself ([`RUN_BY_CI`] says where), or
//!   its block is preceded by `<!-- docs-test: skip: REASON -->` with the reason;
//! - a ```` ```toml ```` block is a file of `examples/`, whole.
//!
//! Rust blocks are doctests' text (`xtask/src/tidy.rs` checks that).
//!
//! `docs/python.md` is the Python package's, and so are ```` ```python ````,
//! ```` ```pycon ```` and ```` ```console ```` blocks anywhere: they run in
//! the Python suite (`crates/python/tests/test_docs.py`), which reads the
//! same `docs-test` markers. Only wall-clock numbers (the search time)
//! are exempt from comparison. The command lines take backslash
//! continuations, single quotes, a trailing `# comment` and a `*` in a
//! file name; no other shell syntax.
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "the checks of a block sit outside #[test] functions and fail by panicking; the test collects every block's failure"
)]

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{bin, repo};

/// A fenced block of a Markdown text.
#[derive(Debug)]
struct Block {
    lang: String,
    body: Vec<String>,
    /// Lines of the file where it opens and closes (0-based).
    open: usize,
    close: usize,
    /// The reason of a `<!-- docs-test: skip: … -->` line just before it.
    not_run: Option<String>,
}

fn blocks(md: &str) -> Vec<Block> {
    let lines: Vec<&str> = md.lines().collect();
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (n, line) in lines.iter().enumerate() {
        if let Some(lang) = line.strip_prefix("```") {
            match open.take() {
                Some(mut b) => {
                    b.close = n;
                    out.push(b);
                }
                None => {
                    let before = lines[..n].iter().rev().find(|l| !l.trim().is_empty());
                    let not_run = before
                        .and_then(|l| l.trim().strip_prefix("<!-- docs-test: skip:"))
                        .and_then(|l| l.strip_suffix("-->"))
                        .map(|r| r.trim().to_owned());
                    open = Some(Block {
                        lang: lang.trim().to_owned(),
                        body: Vec::new(),
                        open: n,
                        close: n,
                        not_run,
                    });
                }
            }
        } else if let Some(b) = open.as_mut() {
            b.body.push((*line).to_owned());
        }
    }
    out
}

/// The commands of a shell block: continuations joined, comments and
/// blank lines dropped.
fn commands(body: &[String]) -> Vec<String> {
    let joined = body.join("\n").replace("\\\n", " ");
    joined
        .lines()
        .map(|l| strip_comment(l).trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

/// A line without its trailing `# comment` (a `#` outside quotes that
/// starts a word).
fn strip_comment(line: &str) -> &str {
    let mut quoted = false;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            '#' if !quoted && prev.is_whitespace() => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

/// A command line split into words (single quotes group), `partalloc`
/// dropped.
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in command.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    if out.first().is_some_and(|w| w == "partalloc") {
        out.remove(0);
    }
    out
}

/// Shell syntax this runner does not model: such a command needs a
/// `docs-test: skip` reason.
fn is_plain(command: &str) -> bool {
    !command.contains(['|', '>', '<', '$', ';', '&', '`', '"'])
}

/// Commands the documents show that CI runs itself: the command, the file
/// that runs it and the text there that does.
const RUN_BY_CI: &[(&str, &str, &str)] = &[
    (
        "cargo test --workspace",
        "xtask/src/ci.rs",
        r#"Step::run(&["test", "--workspace"])"#,
    ),
    // CI runs the same command at reduced scale (`--quick`), and checks
    // its CSVs and SVGs.
    (
        "cargo xtask reproduce-fig10",
        "xtask/src/ci.rs",
        r#""xtask", "reproduce-fig10", "--quick""#,
    ),
    ("cargo xtask ci", ".ci/run", "exec cargo xtask ci"),
    (
        "pip install ./crates/python",
        "crates/python/ci.sh",
        r#"pip install --quiet --disable-pip-version-check "$here""#,
    ),
];

/// The documents whose blocks this test owns.
fn documents() -> Vec<PathBuf> {
    let root = repo();
    let mut docs = vec![root.join("README.md"), root.join("data/README.md")];
    let mut listed = |dir: &Path, nested: bool| {
        let mut found: Vec<PathBuf> = fs::read_dir(dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| {
                if nested {
                    e.path().join("README.md")
                } else {
                    e.path()
                }
            })
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "md"))
            .collect();
        found.sort();
        docs.extend(found);
    };
    listed(&root.join("docs"), false);
    listed(&root.join("crates"), true);
    listed(&root.join("scripts"), true);
    docs.retain(|p| !p.ends_with("docs/python.md"));
    docs
}

/// Copies the files a command names under `examples/` or `data/` (alone
/// or inside a word) into `dir` and expands a `*` in a word against the files of `dir`.
fn prepare(args: Vec<String>, dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        // `blocks:examples/x.conf` and `kueue:A,B` name files inside a word.
        for part in a.split([':', ',', '=']) {
            if (part.starts_with("examples/") || part.starts_with("data/"))
                && repo().join(part).is_file()
            {
                let to = dir.join(part);
                fs::create_dir_all(to.parent().unwrap()).unwrap();
                fs::copy(repo().join(part), to).unwrap();
                // An experiment file names files of its own (a trace).
                if part.ends_with(".toml") {
                    let text = fs::read_to_string(repo().join(part)).unwrap();
                    let here = Path::new(part).parent().unwrap();
                    for named in text.split('"').map(|w| here.join(w)) {
                        if !named.as_os_str().is_empty() && repo().join(&named).is_file() {
                            fs::copy(repo().join(&named), dir.join(&named)).unwrap();
                        }
                    }
                }
            }
        }
        match a.split_once('*') {
            Some((head, tail)) if !a.contains('/') => {
                let mut matched: Vec<String> = fs::read_dir(dir)
                    .unwrap()
                    .filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with(head) && n.ends_with(tail) && n.len() >= a.len() - 1)
                    .collect();
                matched.sort();
                assert!(!matched.is_empty(), "`{a}` matches no file");
                out.extend(matched);
            }
            _ => out.push(a),
        }
    }
    out
}

/// Every file below `dir`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Runs a command in `dir`; standard output then standard error, and
/// whether it succeeded.
fn run_command(command: &str, dir: &Path) -> (String, bool) {
    let args = prepare(words(command), dir);
    let o = bin().current_dir(dir).args(&args).output().unwrap();
    let mut s = String::from_utf8(o.stdout).unwrap();
    s.push_str(&String::from_utf8(o.stderr).unwrap());
    (s, o.status.success())
}

/// Lines with wall-clock numbers are compared up to their label.
fn comparable(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            if l.starts_with("search time") {
                "search time (wall clock)".to_owned()
            } else {
                l.trim_end().to_owned()
            }
        })
        .collect()
}

/// How `printed` differs from a document's sample, if it does. A sample
/// that opens with a line `…` is an excerpt: its other lines must stand
/// together somewhere in what was printed. Any other sample is all of it.
fn differs(printed: &str, sample: &[String]) -> Option<String> {
    let got = comparable(printed);
    let want = comparable(&sample.join("\n"));
    if want.first().is_some_and(|l| l == "…") {
        let part = &want[1..];
        let found = !part.is_empty() && got.windows(part.len()).any(|w| w == part);
        return (!found).then(|| {
            format!(
                "the excerpt beginning {:?} is not in its output:\n{}",
                part.first().map_or("", String::as_str),
                got.join("\n")
            )
        });
    }
    let n = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
    (got != want).then(|| {
        format!(
            "line {}: printed {:?}, the document has {:?}",
            n + 1,
            got.get(n).map_or("(nothing)", String::as_str),
            want.get(n).map_or("(nothing)", String::as_str)
        )
    })
}

fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // The malformed trace the guide's errors section replays: line 3 has a
    // word for its run time.
    fs::write(
        dir.path().join("bad.swf"),
        "; a trace with a bad line\n1 0 0 10 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n2 5 0 ten 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    dir
}

/// What one document's blocks came to.
#[derive(Debug, Default)]
struct Tally {
    ran: usize,
    compared: usize,
    by_ci: usize,
    not_run: usize,
}

/// Checks every block of one document; its tally and its failures.
fn check_document(path: &Path) -> (Tally, Vec<String>) {
    let name = path
        .strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string();
    let md = fs::read_to_string(path).unwrap();
    let all = blocks(&md);
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for i in 0..all.len() {
        // Every block is checked, and every failure reported at the end.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check_block(&name, &all, i, &mut tally);
        }));
        if let Err(e) = run {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            failures.push(msg);
        }
    }
    (tally, failures)
}

fn check_block(name: &str, all: &[Block], i: usize, tally: &mut Tally) {
    let block = &all[i];
    {
        let line = block.open + 1;
        if ["sh", "bash", "shell"].contains(&block.lang.as_str()) {
            if let Some(reason) = &block.not_run {
                assert!(
                    !reason.is_empty(),
                    "{name}:{line}: a skipped block must say why"
                );
                tally.not_run += 1;
                return;
            }
            let cmds = commands(&block.body);
            let (ours, others): (Vec<&String>, Vec<&String>) =
                cmds.iter().partition(|c| c.starts_with("partalloc "));
            if ours.is_empty() {
                for c in &others {
                    // One crate's tests (`cargo test -p partalloc-x …`) are
                    // part of CI's `cargo test --workspace`.
                    if let Some(krate) = c.strip_prefix("cargo test -p partalloc-") {
                        let dir = krate.split_whitespace().next().unwrap_or_default();
                        assert!(
                            repo().join("crates").join(dir).is_dir(),
                            "{name}:{line}: `{c}` names no crate of the workspace"
                        );
                        tally.by_ci += 1;
                        continue;
                    }
                    let Some((_, file, needle)) =
                        RUN_BY_CI.iter().find(|(cmd, ..)| c.as_str() == *cmd)
                    else {
                        panic!(
                            "{name}:{line}: `{c}` is neither run by this test nor by CI: run it, or put `<!-- docs-test: skip: REASON -->` before the block"
                        );
                    };
                    let text = fs::read_to_string(repo().join(file)).unwrap();
                    assert!(
                        text.contains(needle),
                        "{name}:{line}: `{c}` is said to run in {file}, which no longer has {needle}"
                    );
                    tally.by_ci += 1;
                }
                return;
            }
            assert!(
                others.is_empty(),
                "{name}:{line}: a block mixes `partalloc` with {others:?}: split it, or put `<!-- docs-test: skip: REASON -->` before it"
            );
            let dir = scratch();
            let mut printed = String::new();
            for c in &ours {
                assert!(
                    is_plain(c),
                    "{name}:{line}: `{c}` uses shell syntax this test does not run: write it plainly, or put `<!-- docs-test: skip: REASON -->` before the block"
                );
                let (out, ok) = run_command(c, dir.path());
                assert!(ok, "{name}:{line}: `{c}` failed:\n{out}");
                printed.push_str(&out);
                tally.ran += 1;
            }
            if let Some(next) = all.get(i + 1)
                && next.lang == "text"
                && next.open == block.close + 2
            {
                if let Some(diff) = differs(&printed, &next.body) {
                    panic!(
                        "{name}:{line}: `{}` prints something else: {diff}",
                        ours.iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join("; ")
                    );
                }
                tally.compared += 1;
            }
        } else if block.lang == "toml" {
            // An experiment file shown in full is one of `examples/`, which
            // the tests run.
            let shown = block.body.join("\n") + "\n";
            let mut files = Vec::new();
            walk(&repo().join("examples"), &mut files);
            assert!(
                files
                    .iter()
                    .any(|f| fs::read_to_string(f).is_ok_and(|t| t == shown)),
                "{name}:{line}: this TOML block is no file of examples/: copy it from one"
            );
            tally.compared += 1;
        } else if block.lang == "text" {
            let body = &block.body;
            let mut i = 0;
            while i < body.len() {
                let Some(cmd) = body[i].strip_prefix("$ partalloc ") else {
                    i += 1;
                    continue;
                };
                let end = (i + 1..body.len())
                    .find(|&j| body[j].starts_with("$ "))
                    .unwrap_or(body.len());
                let dir = scratch();
                let (got, _) = run_command(cmd, dir.path());
                if let Some(diff) = differs(&got, &body[i + 1..end]) {
                    panic!(
                        "{name}:{}: `partalloc {cmd}` prints something else: {diff}",
                        block.open + 2 + i
                    );
                }
                tally.compared += 1;
                i = end;
            }
        }
    }
}

#[test]
fn every_command_of_the_documents_runs_or_says_why_not() {
    let docs = documents();
    assert!(docs.len() >= 20, "only {} documents found", docs.len());
    let mut total = Tally::default();
    let mut failures = Vec::new();
    for d in &docs {
        let (t, f) = check_document(d);
        failures.extend(f);
        if d.ends_with("docs/guide.md") {
            assert!(
                t.compared >= 8,
                "only {} samples of the guide compared: did its format change?",
                t.compared
            );
        }
        total.ran += t.ran;
        total.compared += t.compared;
        total.by_ci += t.by_ci;
        total.not_run += t.not_run;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        total.ran >= 30 && total.compared >= 15,
        "too few commands checked: {total:?}"
    );
}

#[test]
fn the_block_reader_finds_commands_reasons_and_comments() {
    let md = "text\n\n<!-- docs-test: skip: needs root -->\n```sh\nscripts/x all\n```\n\n```sh\npartalloc a \\\n  --b 'c d'   # note\n# only a comment\n```\n";
    let all = blocks(md);
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].not_run.as_deref(), Some("needs root"));
    assert_eq!(all[1].not_run, None);
    let cmds = commands(&all[1].body);
    assert_eq!(cmds, ["partalloc a    --b 'c d'"]);
    assert_eq!(words(&cmds[0]), ["a", "--b", "c d"]);
    assert!(!is_plain("partalloc a > b") && is_plain("partalloc a --b c"));
}
