//! Tidy checks that keep the documentation true to the code: every path
//! and every type `docs/ARCHITECTURE.md` names must exist. (The guide's
//! samples are checked against the tool by the CLI's tests.)

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::fs;
    use std::path::{Path, PathBuf};

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    /// Every `.rs` file below `dir`.
    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "target") {
                    sources(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// Names the workspace declares: items (`struct X`, `fn x`, …), enum
    /// variants and fields (a line that starts with a name followed by
    /// `,`, `(`, ` {`, `:` or ` =`), and macros.
    fn declared() -> BTreeSet<String> {
        let mut files = Vec::new();
        for d in ["crates", "xtask/src"] {
            sources(&root().join(d), &mut files);
        }
        let mut names = BTreeSet::new();
        let ident = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        for f in files {
            let text = fs::read_to_string(&f).unwrap_or_default();
            for line in text.lines() {
                let t = line.trim_start();
                let t = t
                    .strip_prefix("pub(crate) ")
                    .or_else(|| t.strip_prefix("pub(super) "))
                    .or_else(|| t.strip_prefix("pub "))
                    .unwrap_or(t);
                for kw in [
                    "struct ",
                    "enum ",
                    "trait ",
                    "type ",
                    "const ",
                    "static ",
                    "fn ",
                    "mod ",
                    "macro_rules! ",
                    "unsafe fn ",
                    "const fn ",
                ] {
                    if let Some(rest) = t.strip_prefix(kw) {
                        names.insert(ident(rest));
                    }
                }
                let name = ident(t);
                if !name.is_empty() {
                    let after = &t[name.len()..];
                    if [",", "(", " {", ":", " ="]
                        .iter()
                        .any(|p| after.starts_with(p))
                    {
                        names.insert(name);
                    }
                }
            }
        }
        names
    }

    /// Names the document may use that are not the workspace's.
    const OUTSIDE: &[&str] = &[
        "Clone",
        "Copy",
        "Display",
        "FromStr",
        "RuntimeError",
        "ChaCha8Rng",
        "Arc",
        "Pod",
        "Option",
        "Result",
        "Self",
        "BuildError",
        "seed_from_u64",
    ];

    #[test]
    fn every_path_and_type_the_architecture_names_exists() {
        let doc = fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap_or_default();
        let names = declared();
        let mut missing = Vec::new();
        let mut checked = 0;
        for (i, span) in doc.split('`').enumerate() {
            if i % 2 == 0 {
                continue;
            }
            let token = span.trim();
            let is_path = [
                "crates/",
                "docs/",
                "xtask/",
                "scripts/",
                "examples/",
                "data/",
                ".ci/",
                ".cargo/",
            ]
            .iter()
            .any(|p| token.starts_with(p));
            if is_path {
                checked += 1;
                if !root().join(token).exists() {
                    missing.push(format!("path {token}"));
                }
                continue;
            }
            // `Type`, `Type::item`, `crate_name::Type`, `Type<T>`: each
            // segment that reads as a Rust name must be declared.
            if token.contains(' ')
                || token.contains('"')
                || token.contains(':') && !token.contains("::")
            {
                continue;
            }
            let head = token.split(['<', '(', '[']).next().unwrap_or("");
            let segments: Vec<&str> = head.split("::").collect();
            let rusty =
                |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
            if !segments.iter().all(|s| rusty(s))
                || !segments
                    .iter()
                    .any(|s| s.starts_with(|c: char| c.is_ascii_uppercase()))
            {
                continue;
            }
            for s in segments {
                if s.starts_with("partalloc_") || s == "crate" || OUTSIDE.contains(&s) {
                    continue;
                }
                checked += 1;
                if !names.contains(s) {
                    missing.push(format!("name {s} (in `{token}`)"));
                }
            }
        }
        assert!(
            checked > 50,
            "only {checked} names checked: did the format change?"
        );
        assert!(
            missing.is_empty(),
            "docs/ARCHITECTURE.md names what the code does not have: {missing:?}"
        );
    }
}
