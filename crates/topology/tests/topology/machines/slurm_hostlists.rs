//! `hostlist::expand` and `hostlist::compress` against files of what Slurm
//! printed (format: `/work/coord/golden-format.md`, "Hostlist goldens"):
//!
//! ```text
//! slurm 26.05.3
//! expand <expression>\t<name> <name> ...   # scontrol show hostnames
//! compress <name>,<name>,...\t<hostlist>   # scontrol show hostlist
//! refuse <expression>                      # scontrol refuses it
//! ```
//!
//! Every case is checked; all mismatches are reported with their line, then
//! the test fails if there was any, or if the file has too few cases.

#![expect(
    clippy::panic,
    reason = "a failed golden check is reported by panicking with its report"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use partalloc_topology::slurm::hostlist;

/// One line of a golden file.
enum Case<'a> {
    Expand(&'a str, Vec<&'a str>),
    Compress(Vec<&'a str>, &'a str),
    Refuse(&'a str),
}

/// Parses one non-header line, or says what is wrong with it.
fn case(line: &str) -> Result<Case<'_>, String> {
    let (word, rest) = line
        .split_once(' ')
        .ok_or("expected `expand`, `compress` or `refuse` and a space")?;
    match word {
        "expand" => {
            let (expr, names) = rest.split_once('\t').ok_or("expand line without a TAB")?;
            Ok(Case::Expand(
                expr,
                names.split(' ').filter(|n| !n.is_empty()).collect(),
            ))
        }
        "compress" => {
            let (list, out) = rest.split_once('\t').ok_or("compress line without a TAB")?;
            Ok(Case::Compress(list.split(',').collect(), out))
        }
        "refuse" if !rest.contains('\t') => Ok(Case::Refuse(rest)),
        "refuse" => Err("refuse line with a TAB".to_owned()),
        _ => Err(format!("unknown case kind {word:?}")),
    }
}

/// Case counts of a checked file.
#[derive(Debug, Default)]
struct Counts {
    expand: usize,
    compress: usize,
    refuse: usize,
}

impl Counts {
    fn total(&self) -> usize {
        self.expand + self.compress + self.refuse
    }
}

/// Checks every case of `text`; `Err` lists each malformed line or
/// mismatch with its line number, and the counts.
fn check(text: &str, min_cases: usize) -> Result<Counts, String> {
    let mut counts = Counts::default();
    let mut problems = String::new();
    let mut bad = 0usize;
    let mut header = false;
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if !header {
            header = true;
            if line.starts_with("slurm ") {
                continue;
            }
            let _ = writeln!(
                problems,
                "line {number}: expected the `slurm VERSION` header"
            );
            bad += 1;
        }
        let c = match case(line) {
            Ok(c) => c,
            Err(why) => {
                let _ = writeln!(problems, "line {number}: malformed: {why}: {line:?}");
                bad += 1;
                continue;
            }
        };
        let mismatch = match c {
            Case::Expand(expr, want) => {
                counts.expand += 1;
                match hostlist::expand(expr) {
                    Ok(got) if got == want => None,
                    Ok(got) => Some(format!(
                        "expand {expr:?}: got {} names {:?}, scontrol {} names {:?}",
                        got.len(),
                        got.join(" "),
                        want.len(),
                        want.join(" ")
                    )),
                    Err(e) => Some(format!(
                        "expand {expr:?}: refused ({e}), scontrol expands it"
                    )),
                }
            }
            Case::Compress(names, want) => {
                counts.compress += 1;
                let got = hostlist::compress(&names);
                (got != want).then(|| format!("compress {names:?}: got {got:?}, scontrol {want:?}"))
            }
            Case::Refuse(expr) => {
                counts.refuse += 1;
                match hostlist::expand(expr) {
                    Err(e) if !e.to_string().is_empty() => None,
                    Err(_) => Some(format!("refuse {expr:?}: the error has no message")),
                    Ok(got) => Some(format!(
                        "refuse {expr:?}: expanded to {} names {:?}, scontrol refuses it",
                        got.len(),
                        got.join(" ")
                    )),
                }
            }
        };
        if let Some(m) = mismatch {
            let _ = writeln!(problems, "line {number}: {m}");
            bad += 1;
        }
    }
    if counts.total() < min_cases {
        let _ = writeln!(
            problems,
            "only {} cases, need at least {min_cases}",
            counts.total()
        );
        bad += 1;
    }
    if bad == 0 {
        Ok(counts)
    } else {
        Err(format!(
            "{problems}{bad} problems in {} cases ({} expand, {} compress, {} refuse)",
            counts.total(),
            counts.expand,
            counts.compress,
            counts.refuse
        ))
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The golden made by the real `scontrol` of Slurm 26.05.3.
#[test]
fn hostlists_agree_with_scontrol() {
    let path = manifest().join("../../data/slurm-oracle/hostlists.golden");
    match check(&read(&path), 1000) {
        Ok(c) => eprintln!("{}: {} cases agree ({c:?})", path.display(), c.total()),
        Err(report) => panic!("{}:\n{report}", path.display()),
    }
}

/// Cases made by Slurm 26.05.3's own `src/common/hostlist.c`, driven as
/// scontrol drives it (`hostlist_create_client`, then `hostlist_shift_dims`
/// or `hostlist_ranged_string_xmalloc`), on random expressions and lists:
/// whitespace inside brackets, `strtoul` quirks, bad items, limits.
#[test]
fn hostlists_agree_with_slurms_hostlist_c() {
    let path = manifest().join("tests/topology/data/hostlists-libslurm.golden");
    match check(&read(&path), 1000) {
        Ok(c) => eprintln!("{}: {} cases agree ({c:?})", path.display(), c.total()),
        Err(report) => panic!("{}:\n{report}", path.display()),
    }
}

#[test]
fn malformed_golden_lines_are_reported_with_their_number() {
    let text = "slurm 26.05.3\nexpand n[1-2]\tn1 n2\nexpand n[1-2] n1 n2\nfrob x\nrefuse n[1-\n";
    let err = check(text, 0).unwrap_err();
    assert!(
        err.contains("line 3: malformed: expand line without a TAB"),
        "{err}"
    );
    assert!(
        err.contains("line 4: malformed: unknown case kind \"frob\""),
        "{err}"
    );
    assert!(err.contains("2 problems in 2 cases"), "{err}");
    let err = check(
        "slurm 26.05.3\nexpand n[1-2]\tn1 n3\ncompress n1,n2\tn[1-2]\n",
        3,
    )
    .unwrap_err();
    assert!(err.contains("line 2: expand \"n[1-2]\""), "{err}");
    assert!(err.contains("only 2 cases, need at least 3"), "{err}");
    assert!(check("slurm 26.05.3\nrefuse n[1\ncompress a,a\ta,a\n", 2).is_ok());
}
