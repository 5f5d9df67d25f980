//! The samples of `docs/guide.md` are the tool's real output: every
//! ```` ```sh ```` block that is followed by a ```` ```text ```` block is
//! run and must print that text, and every `$ partalloc …` line of a text
//! block must print the lines after it. Only wall-clock numbers (the
//! search time) are exempt.

use std::fs;
use std::path::{Path, PathBuf};

use super::bin;

fn guide() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guide.md");
    fs::read_to_string(path).unwrap()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fenced block of a Markdown text.
#[derive(Debug)]
struct Block {
    lang: String,
    body: Vec<String>,
    /// Lines of the file where it opens and closes.
    open: usize,
    close: usize,
}

fn blocks(md: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (n, line) in md.lines().enumerate() {
        if let Some(lang) = line.strip_prefix("```") {
            match open.take() {
                Some(mut b) => {
                    b.close = n;
                    out.push(b);
                }
                None => {
                    open = Some(Block {
                        lang: lang.trim().to_owned(),
                        body: Vec::new(),
                        open: n,
                        close: n,
                    });
                }
            }
        } else if let Some(b) = open.as_mut() {
            b.body.push(line.to_owned());
        }
    }
    out
}

/// A command line as the guide writes it (backslash continuations, single
/// quotes, no other shell syntax), split into words, `partalloc` dropped.
fn words(command: &str) -> Vec<String> {
    let joined = command.replace("\\\n", " ");
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in joined.chars() {
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
    assert_eq!(
        out.first().map(String::as_str),
        Some("partalloc"),
        "{command}"
    );
    out.remove(0);
    out
}

/// Runs the guide's command in a scratch directory (files the guide names
/// under `examples/` or `data/` are copied there from the repository) and
/// returns what it printed, standard output then standard error.
fn run_sample(args: &[String], dir: &Path) -> String {
    for a in args {
        if a.starts_with("examples/") || a.starts_with("data/") {
            let to = dir.join(a);
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::copy(repo().join(a), to).unwrap();
        }
    }
    let o = bin().current_dir(dir).args(args).output().unwrap();
    let mut s = String::from_utf8(o.stdout).unwrap();
    s.push_str(&String::from_utf8(o.stderr).unwrap());
    s
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

fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // The malformed trace the errors section replays: line 3 has a word
    // for its run time.
    fs::write(
        dir.path().join("bad.swf"),
        "; a trace with a bad line\n1 0 0 10 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n2 5 0 ten 4 -1 -1 4 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    dir
}

#[test]
fn every_sample_of_the_guide_is_what_the_tool_prints() {
    let all = blocks(&guide());
    let mut checked = 0;
    for pair in all.windows(2) {
        let [command, expected] = pair else {
            continue;
        };
        // A command block and, after one blank line, its output.
        if command.lang != "sh" || expected.lang != "text" || expected.open != command.close + 2 {
            continue;
        }
        let dir = scratch();
        let got = run_sample(&words(&command.body.join("\n")), dir.path());
        assert_eq!(
            comparable(&got),
            comparable(&expected.body.join("\n")),
            "docs/guide.md: `{}` prints something else",
            command.body.join(" ")
        );
        checked += 1;
    }
    for Block { lang, body, .. } in &all {
        if lang != "text" {
            continue;
        }
        let mut i = 0;
        while i < body.len() {
            let Some(cmd) = body[i].strip_prefix("$ ") else {
                i += 1;
                continue;
            };
            let end = (i + 1..body.len())
                .find(|&j| body[j].starts_with("$ "))
                .unwrap_or(body.len());
            let dir = scratch();
            let got = run_sample(&words(cmd), dir.path());
            assert_eq!(
                comparable(&got),
                comparable(&body[i + 1..end].join("\n")),
                "docs/guide.md: `{cmd}` prints something else"
            );
            checked += 1;
            i = end;
        }
    }
    assert!(
        checked >= 8,
        "only {checked} samples found: did the guide's format change?"
    );
}
