//! Tidy checks that keep the documentation and the packages true to the
//! code: every path and every type `docs/ARCHITECTURE.md` names exists,
//! every path any other document names exists, the documents name the
//! workspace's Rust version, and no crate's source reaches outside its
//! directory for a file it compiles in (its published package would not
//! build). The documents' commands and samples are run against the tool by
//! the CLI's tests (`crates/cli/tests/cli/docs.rs`).

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

    /// Whether the repository path a document names in backticks exists:
    /// `None` when the token is not such a path (or a placeholder like
    /// `data/<name>.golden`). A command line counts by its first word,
    /// `{a,b}` stands for both names, and `*` must match at least one.
    fn named_path_exists(token: &str) -> Option<bool> {
        const ROOTS: &[&str] = &[
            "crates/",
            "docs/",
            "xtask/",
            "scripts/",
            "examples/",
            "data/",
            ".ci/",
            ".cargo/",
        ];
        let path = token.split_whitespace().next()?;
        if !ROOTS.iter().any(|r| path.starts_with(r)) || path.contains('<') {
            return None;
        }
        let expanded: Vec<String> = match (path.find('{'), path.find('}')) {
            (Some(open), Some(close)) if open < close => path[open + 1..close]
                .split(',')
                .map(|alt| format!("{}{alt}{}", &path[..open], &path[close + 1..]))
                .collect(),
            _ => vec![path.to_owned()],
        };
        Some(expanded.iter().all(|p| {
            let parts: Vec<&str> = p.split('/').filter(|c| !c.is_empty()).collect();
            matches_somewhere(&root(), &parts)
        }))
    }

    /// Whether the path `parts` (components, `*` a wildcard) names
    /// something below `dir`.
    fn matches_somewhere(dir: &Path, parts: &[&str]) -> bool {
        let Some((first, rest)) = parts.split_first() else {
            return dir.exists();
        };
        if !first.contains('*') {
            return matches_somewhere(&dir.join(first), rest);
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return false;
        };
        entries.flatten().any(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|name| wildcard(first, name))
                && matches_somewhere(&e.path(), rest)
        })
    }

    /// `pattern` with `*` for any run of characters matches `name`.
    fn wildcard(pattern: &str, name: &str) -> bool {
        match pattern.split_once('*') {
            None => pattern == name,
            Some((head, tail)) => {
                name.starts_with(head)
                    && (head.len()..=name.len())
                        .any(|i| name.is_char_boundary(i) && wildcard(tail, &name[i..]))
            }
        }
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
            if let Some(exists) = named_path_exists(token) {
                checked += 1;
                if !exists {
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

    /// Every Markdown file of the repository that is not ARCHITECTURE.md
    /// (checked above with the names too).
    fn documents() -> Vec<PathBuf> {
        let mut docs = vec![root().join("README.md"), root().join("data/README.md")];
        for dir in [root().join("docs"), root().join("crates")] {
            for e in fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "md") {
                    docs.push(p);
                } else if p.join("README.md").is_file() {
                    docs.push(p.join("README.md"));
                }
            }
        }
        docs.retain(|p| !p.ends_with("ARCHITECTURE.md"));
        docs.sort();
        docs
    }

    #[test]
    fn every_path_the_documents_name_exists() {
        assert!(wildcard("*.golden", "ring-hand.golden"));
        assert!(!wildcard("*.golden", "ring-hand.scn"));
        assert_eq!(named_path_exists("crates/*/Cargo.toml"), Some(true));
        assert_eq!(named_path_exists("crates/nowhere.rs"), Some(false));
        assert_eq!(named_path_exists("data/slurm-oracle/<name>.golden"), None);
        let mut missing = Vec::new();
        let mut checked = 0;
        for doc in documents() {
            let text = fs::read_to_string(&doc).unwrap();
            for (i, span) in text.split('`').enumerate() {
                if i % 2 == 1
                    && let Some(exists) = named_path_exists(span.trim())
                {
                    checked += 1;
                    if !exists {
                        let name = doc.strip_prefix(root()).unwrap_or(&doc).display();
                        missing.push(format!("{name}: {}", span.trim()));
                    }
                }
            }
        }
        assert!(
            checked > 100,
            "only {checked} paths checked: did the format change?"
        );
        assert!(
            missing.is_empty(),
            "documents name paths that do not exist: {missing:?}"
        );
    }

    /// The fenced blocks of `lang` in a Markdown text, as lines.
    fn fenced(md: &str, lang: &str) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        // Inside a block: `Some(lines)` for one of `lang`, `None` for another.
        let mut inside: Option<Option<Vec<String>>> = None;
        for line in md.lines() {
            if let Some(l) = line.strip_prefix("```") {
                match inside.take() {
                    Some(Some(b)) => out.push(b),
                    Some(None) => {}
                    None => inside = Some((l.trim() == lang).then(Vec::new)),
                }
            } else if let Some(Some(b)) = inside.as_mut() {
                b.push(line.trim().to_owned());
            }
        }
        out
    }

    /// The doctests of the workspace's sources: each `//!` or `///` fenced
    /// block, its lines trimmed, hidden `# ` lines left out.
    fn doctests() -> Vec<Vec<String>> {
        let mut files = Vec::new();
        sources(&root().join("crates"), &mut files);
        let mut out = Vec::new();
        for f in files {
            let text = fs::read_to_string(&f).unwrap_or_default();
            let mut open: Option<Vec<String>> = None;
            for line in text.lines() {
                let t = line.trim_start();
                let Some(doc) = t.strip_prefix("//!").or_else(|| t.strip_prefix("///")) else {
                    if let Some(b) = open.take() {
                        out.push(b);
                    }
                    continue;
                };
                let doc = doc.strip_prefix(' ').unwrap_or(doc);
                if doc.starts_with("```") {
                    match open.take() {
                        Some(b) => out.push(b),
                        None => open = Some(Vec::new()),
                    }
                } else if let Some(b) = open.as_mut()
                    && !(doc == "#" || doc.starts_with("# "))
                {
                    b.push(doc.trim().to_owned());
                }
            }
        }
        out
    }

    /// A Rust example in a document is a doctest's text (a whole doctest
    /// or a run of its lines), so `cargo test` compiles and runs it.
    #[test]
    fn every_rust_block_of_the_documents_is_a_doctest() {
        let tests = doctests();
        assert!(tests.len() > 100, "only {} doctests found", tests.len());
        let mut checked = 0;
        let mut missing = Vec::new();
        let mut docs = documents();
        docs.push(root().join("docs/ARCHITECTURE.md"));
        for doc in docs {
            let text = fs::read_to_string(&doc).unwrap();
            for block in fenced(&text, "rust") {
                checked += 1;
                let found = !block.is_empty()
                    && tests
                        .iter()
                        .any(|t| t.windows(block.len()).any(|w| w == block.as_slice()));
                if !found {
                    let name = doc.strip_prefix(root()).unwrap_or(&doc).display();
                    missing.push(format!(
                        "{name}: {}",
                        block.first().map_or("", String::as_str)
                    ));
                }
            }
        }
        assert!(checked >= 1, "no Rust block found: did the format change?");
        assert!(
            missing.is_empty(),
            "Rust blocks of the documents that no doctest runs (copy them from a doctest): {missing:?}"
        );
    }

    /// The workspace's `rust-version`.
    fn rust_version() -> String {
        let manifest = fs::read_to_string(root().join("Cargo.toml")).unwrap();
        manifest
            .lines()
            .find_map(|l| l.strip_prefix("rust-version = "))
            .unwrap()
            .trim_matches('"')
            .to_owned()
    }

    #[test]
    fn the_documents_name_the_workspace_rust_version() {
        let want = rust_version();
        let mut found = Vec::new();
        for doc in documents() {
            let text = fs::read_to_string(&doc).unwrap();
            // "the Rust toolchain (1.89 or newer)", "Rust 1.89".
            for (at, _) in text.match_indices("Rust") {
                let after = &text[at + 4..];
                let after = after.strip_prefix(" toolchain").unwrap_or(after);
                let after = after.trim_start_matches([' ', '(']);
                let version: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                let version = version.trim_end_matches('.');
                if version.starts_with("1.") {
                    found.push((doc.clone(), version.to_owned()));
                }
            }
        }
        let names: Vec<String> = found
            .iter()
            .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for must in ["README.md", "guide.md"] {
            assert!(
                names.iter().any(|n| n == must),
                "{must} names no Rust version: {names:?}"
            );
        }
        for (doc, version) in &found {
            assert_eq!(
                version,
                &want,
                "{} says Rust {version}; the workspace needs {want}",
                doc.display()
            );
        }
        // The Python bindings are a workspace of their own.
        let python = fs::read_to_string(root().join("crates/python/Cargo.toml")).unwrap();
        assert!(python.contains(&format!("rust-version = \"{want}\"")));
    }

    /// A file one of the crate's sources compiles in: the argument of
    /// `include_str!`/`include_bytes!` or of a `#[path]` attribute,
    /// resolved as rustc resolves it. `Err` for a form this check cannot
    /// read.
    fn compiled_in(file: &Path, crate_dir: &Path, line: &str) -> Vec<Result<PathBuf, String>> {
        let mut out = Vec::new();
        let literal = |s: &str| -> Option<String> {
            let s = s.trim_start().strip_prefix('"')?;
            Some(s[..s.find('"')?].to_owned())
        };
        for key in ["include_str!(", "include_bytes!(", "#[path ="] {
            for (at, _) in line.match_indices(key) {
                let arg = &line[at + key.len()..];
                let here = file.parent().unwrap_or(crate_dir);
                let resolved = if let Some(lit) = literal(arg) {
                    Ok(here.join(lit))
                } else if let Some(rest) = arg
                    .trim_start()
                    .strip_prefix("concat!(env!(\"CARGO_MANIFEST_DIR\"),")
                    && let Some(lit) = literal(rest)
                {
                    Ok(crate_dir.join(lit.trim_start_matches('/')))
                } else {
                    Err(format!("{}: cannot read `{}`", file.display(), line.trim()))
                };
                out.push(resolved);
            }
        }
        out
    }

    /// `..` and `.` removed without touching the file system (a link in
    /// the crate stays in the crate: `cargo package` copies its target).
    fn normalized(p: &Path) -> PathBuf {
        let mut out = PathBuf::new();
        for c in p.components() {
            match c {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::CurDir => {}
                c => out.push(c),
            }
        }
        out
    }

    #[test]
    fn no_crate_compiles_in_a_file_outside_its_directory() {
        // xtask is not published: it reads the repository by design.
        let mut bad = Vec::new();
        let mut checked = 0;
        for e in fs::read_dir(root().join("crates")).unwrap().flatten() {
            let crate_dir = normalized(&e.path());
            if !crate_dir.join("Cargo.toml").is_file() {
                continue;
            }
            let mut files = Vec::new();
            sources(&crate_dir, &mut files);
            for file in files {
                let text = fs::read_to_string(&file).unwrap();
                for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                    for r in compiled_in(&file, &crate_dir, line) {
                        checked += 1;
                        match r.map(|p| normalized(&p)) {
                            Ok(p) if p.starts_with(&crate_dir) && p.is_file() => {}
                            Ok(p) => bad.push(format!("{}: {}", file.display(), p.display())),
                            Err(e) => bad.push(e),
                        }
                    }
                }
            }
        }
        assert!(
            checked >= 20,
            "only {checked} includes found: did the check break?"
        );
        assert!(
            bad.is_empty(),
            "sources compile in files outside their crate (its package would not build): {bad:?}"
        );
    }

    #[test]
    fn the_include_check_resolves_as_rustc_does() {
        let dir = Path::new("/w/crates/topology");
        let file = dir.join("src/slurm/ring.rs");
        let got = |line: &str| -> Vec<PathBuf> {
            compiled_in(&file, dir, line)
                .into_iter()
                .map(|r| normalized(&r.unwrap()))
                .collect()
        };
        assert_eq!(
            got(r#"parse(include_str!("../../../../examples/a.conf"))"#),
            [PathBuf::from("/w/examples/a.conf")]
        );
        assert_eq!(
            got(r#"#[path = "testdata/b.rs"]"#),
            [PathBuf::from("/w/crates/topology/src/slurm/testdata/b.rs")]
        );
        assert_eq!(
            got(r#"include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/data/c"))"#),
            [PathBuf::from("/w/crates/topology/data/c")]
        );
        assert!(compiled_in(&file, dir, "include_str!(NAME)")[0].is_err());
    }

    /// What the code map claims is kept: every strategy and policy of the
    /// registries is named in `docs/ARCHITECTURE.md` (by its registry name
    /// or its module's), so a strategy added without a place in the map
    /// fails here.
    #[test]
    fn every_registry_entry_is_on_the_code_map() {
        let map = fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
        let named = |word: &str| {
            map.match_indices(word).any(|(at, _)| {
                let before = map[..at].chars().next_back();
                let after = map[at + word.len()..].chars().next();
                let edge = |c: Option<char>| {
                    c.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-'))
                };
                edge(before) && edge(after)
            })
        };
        let names = partalloc_allocators::registry::ALLOCATORS
            .names()
            .chain(partalloc_schedulers::registry::POLICIES.names());
        let missing: Vec<&str> = names
            .filter(|n| !named(n) && !named(&n.replace('-', "_")))
            .collect();
        assert!(
            missing.is_empty(),
            "not on the code map of docs/ARCHITECTURE.md: {missing:?}"
        );
    }

    /// README's scope is current: its crate table names every crate of
    /// `crates/`, and it names every registered scheduling policy.
    #[test]
    fn the_readme_names_every_crate_and_policy() {
        let readme = fs::read_to_string(root().join("README.md")).unwrap();
        let mut missing: Vec<String> = Vec::new();
        for e in fs::read_dir(root().join("crates")).unwrap().flatten() {
            let manifest = e.path().join("Cargo.toml");
            let Ok(text) = fs::read_to_string(&manifest) else {
                continue;
            };
            let name = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("name = \""))
                .and_then(|l| l.strip_suffix('"'))
                .unwrap_or_default()
                .to_owned();
            if !readme.contains(&format!("[`{name}`]")) {
                missing.push(name);
            }
        }
        for policy in partalloc_schedulers::registry::POLICIES.names() {
            if !readme.contains(&format!("`{policy}`")) {
                missing.push(policy.to_owned());
            }
        }
        assert!(missing.is_empty(), "README.md does not name {missing:?}");
    }

    /// Whether `line` indexes a word slice by a bit position (`[i / 64]`,
    /// `[i >> 6]`, `[lo / 64..]`): the mark of a hand-rolled bitset.
    fn indexes_a_word_by_bit(line: &str) -> bool {
        let code = line.trim_start();
        if code.starts_with("//") {
            return false;
        }
        let by_bit = |inner: &str| {
            ["/ 64", "/64", ">> 6", ">>6"].iter().any(|op| {
                inner.match_indices(op).any(|(at, _)| {
                    !inner[at + op.len()..].starts_with(|c: char| c.is_ascii_digit())
                })
            })
        };
        let mut rest = code;
        while let Some(open) = rest.find('[') {
            rest = &rest[open + 1..];
            if let Some(close) = rest.find(']')
                && by_bit(&rest[..close])
            {
                return true;
            }
        }
        false
    }

    #[test]
    fn the_bitset_rule_sees_word_indexing() {
        assert!(indexes_a_word_by_bit("    words[i / 64] |= 1 << (i % 64);"));
        assert!(indexes_a_word_by_bit("if w[lo >> 6] & m != 0 {"));
        assert!(indexes_a_word_by_bit(
            "words[lo / 64..(lo + size) / 64].iter()"
        ));
        assert!(!indexes_a_word_by_bit("let x = [a / 640, b >> 63];"));
        assert!(!indexes_a_word_by_bit("// words[i / 64] in a comment"));
        assert!(!indexes_a_word_by_bit("let w = n / 64; v[w]"));
    }

    /// One flat bitset: the single bits of a word slice are read and
    /// written only in `NodeSet`'s and `FreeSet`'s files, as the "one home
    /// per concept" table of ARCHITECTURE.md says; other code goes through
    /// them (or `nodeset::{word_bit, set_word_bit}` for words it keeps).
    #[test]
    fn no_bitset_outside_nodeset_and_freeset() {
        let homes = [
            Path::new("crates/topology/src/nodeset.rs"),
            Path::new("crates/topology/src/freeset.rs"),
        ];
        let mut files = Vec::new();
        sources(&root().join("crates"), &mut files);
        let mut found = Vec::new();
        for f in &files {
            let rel = f.strip_prefix(root()).unwrap_or(f);
            if homes.contains(&rel) {
                continue;
            }
            let text = fs::read_to_string(f).unwrap();
            for (n, line) in text.lines().enumerate() {
                if indexes_a_word_by_bit(line) {
                    found.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "bits of a word slice handled outside NodeSet/FreeSet (use \
             NodeSet, FreeSet or nodeset::word_bit/set_word_bit):\n{}",
            found.join("\n")
        );
        let map = fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
        for home in homes {
            assert!(
                map.contains(&*home.to_string_lossy()),
                "ARCHITECTURE.md does not name {}",
                home.display()
            );
        }
    }

    /// One YAML reader: `yaml-rust2` is the workspace's only YAML crate,
    /// and only `partalloc-topology` (its Slurm and Kueue files) reads YAML
    /// in its library; other crates' tests may read their YAML goldens
    /// with the same crate.
    #[test]
    fn one_crate_reads_yaml() {
        let mut manifests: Vec<PathBuf> = fs::read_dir(root().join("crates"))
            .unwrap()
            .flatten()
            .map(|e| e.path().join("Cargo.toml"))
            .filter(|m| m.is_file())
            .collect();
        manifests.push(root().join("xtask/Cargo.toml"));
        manifests.push(root().join("Cargo.toml"));
        let mut library = Vec::new();
        for m in &manifests {
            let text = fs::read_to_string(m).unwrap();
            let mut section = "";
            for l in text.lines().map(str::trim) {
                if l.starts_with('[') {
                    section = l;
                    continue;
                }
                let key = l.split(['=', '.']).next().unwrap_or("").trim();
                if !key.contains("yaml") || l.starts_with('#') {
                    continue;
                }
                assert_eq!(key, "yaml-rust2", "{}: a second YAML crate", m.display());
                if section == "[dependencies]" {
                    library.push(
                        m.parent()
                            .unwrap()
                            .file_name()
                            .unwrap()
                            .to_string_lossy()
                            .into_owned(),
                    );
                }
            }
        }
        assert_eq!(
            library,
            ["topology"],
            "crates reading YAML in their library"
        );
    }
}
