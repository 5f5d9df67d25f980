//! The `topology.yaml` reader (Slurm 23.11 and later, topology.yaml(5)).
//!
//! The file is a list of named topologies, each `block:` (with
//! `block_sizes` and `blocks`, each block a `block` name and its `nodes`),
//! `tree:` (with `switches`, each a `switch` name and its `children` or
//! `nodes`), `ring:` (with `rings`, each a `ring` name and its `nodes`),
//! `torus3d:` (with `toruses`, see [`torus3d`](super::torus3d)) or
//! `flat: true`. The reader understands the part of YAML these files use —
//! block mappings and sequences by indentation, `- key: value` items,
//! `[a, b]` flow lists, `{x: 1, y: 2}` flow mappings of scalars, quoted and
//! plain scalars, `#` comments — and translates the chosen topology into
//! the definitions of `topology.conf` (a torus, which has none, into its
//! own), so both files give the same [`SlurmMachine`] and the same checks.

use super::SlurmMachine;
use super::conf::{self, ConfError, ConfErrorKind, Line, Reader};
use super::torus3d::{PlacementConfig, RegionConfig, TorusConfig};

/// A YAML value with the line it starts on.
#[derive(Debug)]
enum Value {
    Scalar(String, usize),
    Seq(Vec<Value>, usize),
    Map(Vec<(String, Value, usize)>, usize),
}

impl Value {
    fn line(&self) -> usize {
        match self {
            Self::Scalar(_, l) | Self::Seq(_, l) | Self::Map(_, l) => *l,
        }
    }
}

/// A non-blank line: its number, indentation and text without comment.
struct Raw {
    number: usize,
    indent: usize,
    text: String,
}

type YamlResult<T> = Result<T, (usize, String)>;

fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// Cuts a `#` comment that is not inside quotes.
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Splits `key: value` (or `key:`) outside quotes and brackets.
fn split_key(text: &str) -> Option<(&str, &str)> {
    let mut quote = None;
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ':') if depth == 0 => {
                let rest = &text[i + 1..];
                if rest.is_empty() || rest.starts_with(' ') {
                    return Some((text[..i].trim_end(), rest.trim()));
                }
            }
            _ => {}
        }
    }
    None
}

fn unquote(text: &str, line: usize) -> YamlResult<String> {
    let t = text.trim();
    for q in ['"', '\''] {
        if let Some(rest) = t.strip_prefix(q) {
            return rest
                .strip_suffix(q)
                .map(str::to_owned)
                .ok_or_else(|| (line, format!("unterminated quoted text {}", crate::echo(t))));
        }
    }
    Ok(t.to_owned())
}

/// A value written on one line: a scalar or a `[a, b]` flow list.
fn inline(text: &str, line: usize) -> YamlResult<Value> {
    if let Some(body) = text.strip_prefix('[') {
        let body = body
            .strip_suffix(']')
            .ok_or_else(|| (line, format!("unclosed flow list {}", crate::echo(text))))?;
        let items = body
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| unquote(s, line).map(|v| Value::Scalar(v, line)))
            .collect::<YamlResult<_>>()?;
        return Ok(Value::Seq(items, line));
    }
    if let Some(body) = text.strip_prefix('{') {
        let body = body
            .strip_suffix('}')
            .ok_or_else(|| (line, format!("unclosed flow mapping {}", crate::echo(text))))?;
        let mut entries: Vec<(String, Value, usize)> = Vec::new();
        for item in body.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = split_key(item).ok_or_else(|| {
                (
                    line,
                    format!("expected `key: value` in {}", crate::echo(text)),
                )
            })?;
            let key = unquote(k, line)?;
            if v.starts_with(['[', '{']) {
                return Err((
                    line,
                    format!(
                        "nested flow values are not supported in {}",
                        crate::echo(text)
                    ),
                ));
            }
            if entries.iter().any(|(e, _, _)| *e == key) {
                return Err((line, format!("key {:?} is given twice", crate::echo(&key))));
            }
            entries.push((key, Value::Scalar(unquote(v, line)?, line), line));
        }
        return Ok(Value::Map(entries, line));
    }
    Ok(Value::Scalar(unquote(text, line)?, line))
}

struct Parser {
    lines: Vec<Raw>,
    at: usize,
}

impl Parser {
    fn node(&mut self, indent: usize) -> YamlResult<Value> {
        if is_item(&self.lines[self.at].text) {
            self.seq(indent)
        } else {
            self.map(indent)
        }
    }

    /// The value below a line that ended in `:` or `-`: a nested block, or
    /// an empty scalar.
    fn child(&mut self, indent: usize, line: usize, seq_may_align: bool) -> YamlResult<Value> {
        match self.lines.get(self.at) {
            Some(next)
                if next.indent > indent
                    || (seq_may_align && next.indent == indent && is_item(&next.text)) =>
            {
                let ind = next.indent;
                self.node(ind)
            }
            _ => Ok(Value::Scalar(String::new(), line)),
        }
    }

    fn seq(&mut self, indent: usize) -> YamlResult<Value> {
        let first = self.lines[self.at].number;
        let mut items = Vec::new();
        while let Some(l) = self.lines.get_mut(self.at) {
            if l.indent != indent || !is_item(&l.text) {
                break;
            }
            let rest = l.text[1..].to_owned();
            let body = rest.trim_start();
            if body.is_empty() {
                let number = l.number;
                self.at += 1;
                items.push(self.child(indent, number, false)?);
                continue;
            }
            // Read the item's text as a line of its own, indented where it
            // starts, so a `- key: value` item continues as a mapping.
            l.indent = indent + 1 + (rest.len() - body.len());
            l.text = body.to_owned();
            let (ind, number) = (l.indent, l.number);
            if is_item(body) || split_key(body).is_some() {
                items.push(self.node(ind)?);
            } else {
                items.push(inline(body, number)?);
                self.at += 1;
            }
        }
        Ok(Value::Seq(items, first))
    }

    fn map(&mut self, indent: usize) -> YamlResult<Value> {
        let first = self.lines[self.at].number;
        let mut entries: Vec<(String, Value, usize)> = Vec::new();
        // Keys seen, so a repeat is found in constant time (a scan of
        // `entries` would make a mapping of many keys quadratic).
        let mut seen = std::collections::HashSet::new();
        while let Some(l) = self.lines.get(self.at) {
            if l.indent != indent || is_item(&l.text) {
                break;
            }
            let number = l.number;
            let (key, value) = split_key(&l.text).ok_or_else(|| {
                let found = crate::echo(&l.text);
                (number, format!("expected `key: value`, found {found:?}"))
            })?;
            let key = unquote(key, number)?;
            let value = value.to_owned();
            if !seen.insert(key.clone()) {
                return Err((
                    number,
                    format!("key {:?} is given twice", crate::echo(&key)),
                ));
            }
            self.at += 1;
            let v = if value.is_empty() {
                self.child(indent, number, true)?
            } else {
                inline(&value, number)?
            };
            entries.push((key, v, number));
        }
        Ok(Value::Map(entries, first))
    }
}

fn parse_value(text: &str) -> YamlResult<Option<Value>> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let body = strip_comment(raw).trim_end();
        let trimmed = body.trim_start();
        if trimmed == "---" && !lines.is_empty() {
            return Err((
                i + 1,
                "a second YAML document starts here; keep one document in the file".to_owned(),
            ));
        }
        if trimmed.is_empty() || trimmed == "---" {
            continue;
        }
        let lead = &body[..body.len() - trimmed.len()];
        if lead.contains('\t') {
            return Err((i + 1, "indent with spaces, not tabs".to_owned()));
        }
        lines.push(Raw {
            number: i + 1,
            indent: lead.len(),
            text: trimmed.to_owned(),
        });
    }
    let Some(first) = lines.first() else {
        return Ok(None);
    };
    let indent = first.indent;
    let mut p = Parser { lines, at: 0 };
    let v = p.node(indent)?;
    if let Some(l) = p.lines.get(p.at) {
        let text = crate::echo(&l.text);
        return Err((l.number, format!("unexpected indentation at {text:?}")));
    }
    Ok(Some(v))
}

fn scalar(v: &Value, what: &str) -> YamlResult<String> {
    match v {
        Value::Scalar(s, _) => Ok(s.clone()),
        _ => Err((v.line(), format!("{what} must be a single value"))),
    }
}

/// A hostlist given as one expression or as a list of them.
fn hostlist(v: &Value, what: &str) -> YamlResult<String> {
    match v {
        Value::Seq(items, _) => items
            .iter()
            .map(|i| scalar(i, what))
            .collect::<YamlResult<Vec<_>>>()
            .map(|v| v.join(",")),
        _ => scalar(v, what),
    }
}

fn map<'v>(v: &'v Value, what: &str) -> YamlResult<&'v [(String, Value, usize)]> {
    match v {
        Value::Map(e, _) => Ok(e),
        _ => Err((
            v.line(),
            format!("{what} must be a mapping of `key: value` lines"),
        )),
    }
}

fn seq<'v>(v: &'v Value, what: &str) -> YamlResult<&'v [Value]> {
    match v {
        Value::Seq(e, _) => Ok(e),
        _ => Err((v.line(), format!("{what} must be a list of `- ` items"))),
    }
}

fn check_keys(entries: &[(String, Value, usize)], known: &[&str], what: &str) -> YamlResult<()> {
    match entries
        .iter()
        .find(|(k, _, _)| !known.contains(&k.as_str()))
    {
        Some((k, _, line)) => Err((
            *line,
            format!(
                "unknown key {:?} in {what} (known: {})",
                crate::echo(k),
                known.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

fn get<'v>(entries: &'v [(String, Value, usize)], key: &str) -> Option<&'v Value> {
    entries.iter().find(|(k, _, _)| k == key).map(|(_, v, _)| v)
}

fn truthy(v: &Value) -> YamlResult<bool> {
    match scalar(v, "a boolean")?.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => Ok(true),
        "false" | "no" | "off" => Ok(false),
        other => Err((
            v.line(),
            format!("{:?} is not true or false", crate::echo(other)),
        )),
    }
}

/// The chosen topology's definitions.
enum Definitions {
    /// As `topology.conf` lines; true for a tree.
    Conf(Vec<Line>, bool),
    /// Tori.
    Toruses(Vec<TorusConfig>),
}

/// The chosen topology's definitions, as `topology.conf` lines.
fn definitions(root: &Value, wanted: Option<&str>) -> YamlResult<Definitions> {
    let topologies = seq(root, "the file")?;
    let mut chosen = None;
    let mut names = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for t in topologies {
        let e = map(t, "a topology")?;
        check_keys(
            e,
            &[
                "topology",
                "cluster_default",
                "block",
                "tree",
                "flat",
                "ring",
                "torus3d",
            ],
            "a topology",
        )?;
        if e.first().is_none_or(|(k, _, _)| k != "topology") {
            return Err((
                t.line(),
                "a topology must start with `topology: NAME`".to_owned(),
            ));
        }
        let name = scalar(&e[0].1, "topology")?;
        if !seen.insert(name.clone()) {
            let name = crate::echo(&name);
            return Err((t.line(), format!("topology {name:?} is defined twice")));
        }
        names.push(name.clone());
        let default = get(e, "cluster_default")
            .map(truthy)
            .transpose()?
            .unwrap_or(false);
        let pick = match wanted {
            Some(w) => w == name,
            None => default || chosen.is_none(),
        };
        // Without a name, the first `cluster_default: true` wins, else the first.
        let replaces = chosen
            .as_ref()
            .is_none_or(|(_, _, was_default)| wanted.is_none() && default && !was_default);
        if pick && replaces {
            chosen = Some((name, e, default));
        }
    }
    let Some((name, e, _)) = chosen else {
        let why = match wanted {
            Some(w) => format!(
                "no topology named {:?} (the file has: {})",
                crate::echo(w),
                crate::echo(&names.join(", "))
            ),
            None => "the file defines no topology".to_owned(),
        };
        return Err((root.line(), why));
    };
    let kinds: Vec<&(String, Value, usize)> = e
        .iter()
        .filter(|(k, _, _)| matches!(k.as_str(), "block" | "tree" | "flat" | "ring" | "torus3d"))
        .collect();
    let [(kind, body, line)] = kinds.as_slice() else {
        return Err((
            e[0].2,
            format!(
                "topology {:?} must have exactly one of block, tree, ring, torus3d and flat",
                crate::echo(&name)
            ),
        ));
    };
    match kind.as_str() {
        "block" => Ok(Definitions::Conf(block_lines(body)?, false)),
        "tree" => Ok(Definitions::Conf(tree_lines(body)?, true)),
        "ring" => Ok(Definitions::Conf(ring_lines(body)?, false)),
        "torus3d" => Ok(Definitions::Toruses(torus_configs(body)?)),
        _ => Err((
            *line,
            format!(
                "topology {:?} is flat: it has no blocks or switches to place jobs in",
                crate::echo(&name)
            ),
        )),
    }
}

fn block_lines(body: &Value) -> YamlResult<Vec<Line>> {
    let e = map(body, "block")?;
    check_keys(e, &["block_sizes", "blocks"], "block")?;
    let mut lines = Vec::new();
    let blocks = get(e, "blocks").ok_or((body.line(), "block needs a `blocks` list".to_owned()))?;
    for b in seq(blocks, "blocks")? {
        let be = map(b, "a block")?;
        check_keys(be, &["block", "nodes"], "a block")?;
        let name = get(be, "block").ok_or((b.line(), "a block needs `block: NAME`".to_owned()))?;
        let mut pairs = vec![("blockname".to_owned(), scalar(name, "block")?)];
        if let Some(nodes) = get(be, "nodes") {
            pairs.push(("nodes".to_owned(), hostlist(nodes, "nodes")?));
        }
        lines.push(Line {
            number: b.line(),
            pairs,
        });
    }
    if let Some(sizes) = get(e, "block_sizes") {
        let text = hostlist(sizes, "block_sizes")?;
        lines.push(Line {
            number: sizes.line(),
            pairs: vec![("blocksizes".to_owned(), text)],
        });
    }
    Ok(lines)
}

fn tree_lines(body: &Value) -> YamlResult<Vec<Line>> {
    let e = map(body, "tree")?;
    check_keys(e, &["switches"], "tree")?;
    let switches =
        get(e, "switches").ok_or((body.line(), "tree needs a `switches` list".to_owned()))?;
    let mut lines = Vec::new();
    for s in seq(switches, "switches")? {
        let se = map(s, "a switch")?;
        check_keys(se, &["switch", "children", "nodes"], "a switch")?;
        let name =
            get(se, "switch").ok_or((s.line(), "a switch needs `switch: NAME`".to_owned()))?;
        let mut pairs = vec![("switchname".to_owned(), scalar(name, "switch")?)];
        if let Some(c) = get(se, "children") {
            pairs.push(("switches".to_owned(), hostlist(c, "children")?));
        }
        if let Some(n) = get(se, "nodes") {
            pairs.push(("nodes".to_owned(), hostlist(n, "nodes")?));
        }
        lines.push(Line {
            number: s.line(),
            pairs,
        });
    }
    Ok(lines)
}

/// A list of mappings, or one mapping standing for a list of one (Slurm's
/// data parser takes both).
fn items<'v>(v: &'v Value, what: &str) -> YamlResult<Vec<&'v Value>> {
    match v {
        Value::Map(..) => Ok(vec![v]),
        _ => Ok(seq(v, what)?.iter().collect()),
    }
}

fn ring_lines(body: &Value) -> YamlResult<Vec<Line>> {
    let e = map(body, "ring")?;
    check_keys(e, &["rings"], "ring")?;
    let rings = get(e, "rings").ok_or((body.line(), "ring needs a `rings` list".to_owned()))?;
    let mut lines = Vec::new();
    for g in items(rings, "rings")? {
        let ge = map(g, "a ring")?;
        check_keys(ge, &["ring", "nodes"], "a ring")?;
        let name = get(ge, "ring").ok_or((g.line(), "a ring needs `ring: NAME`".to_owned()))?;
        let mut pairs = vec![("ringname".to_owned(), scalar(name, "ring")?)];
        if let Some(n) = get(ge, "nodes") {
            pairs.push(("nodes".to_owned(), hostlist(n, "nodes")?));
        }
        lines.push(Line {
            number: g.line(),
            pairs,
        });
    }
    Ok(lines)
}

/// `{x, y, z}` (each missing one 0).
fn xyz(v: &Value, what: &str) -> YamlResult<[u16; 3]> {
    let e = map(v, what)?;
    check_keys(e, &["x", "y", "z"], what)?;
    let mut out = [0u16; 3];
    for (slot, key) in out.iter_mut().zip(["x", "y", "z"]) {
        if let Some(n) = get(e, key) {
            let t = scalar(n, key)?;
            *slot = t.parse().map_err(|_| {
                (
                    n.line(),
                    format!(
                        "{what}: {key} {:?} is not a whole number from 0 to 65535",
                        crate::echo(&t)
                    ),
                )
            })?;
        }
    }
    Ok(out)
}

fn torus_configs(body: &Value) -> YamlResult<Vec<TorusConfig>> {
    let e = map(body, "torus3d")?;
    check_keys(e, &["toruses"], "torus3d")?;
    let toruses =
        get(e, "toruses").ok_or((body.line(), "torus3d needs a `toruses` list".to_owned()))?;
    let mut out = Vec::new();
    for t in items(toruses, "toruses")? {
        let te = map(t, "a torus")?;
        check_keys(
            te,
            &["name", "nodes", "dims", "placements", "regions"],
            "a torus",
        )?;
        let mut c = TorusConfig {
            line: t.line(),
            ..TorusConfig::default()
        };
        c.name = get(te, "name").map(|n| scalar(n, "name")).transpose()?;
        if let Some(d) = get(te, "dims") {
            c.dims = xyz(d, "dims")?;
        }
        if let Some(n) = get(te, "nodes") {
            c.nodes = Some((hostlist(n, "nodes")?, n.line()));
        }
        if let Some(rs) = get(te, "regions") {
            for g in items(rs, "regions")? {
                let ge = map(g, "a region")?;
                check_keys(ge, &["anchor", "dims", "nodes"], "a region")?;
                let mut r = RegionConfig {
                    line: g.line(),
                    ..RegionConfig::default()
                };
                if let Some(a) = get(ge, "anchor") {
                    r.anchor = xyz(a, "anchor")?;
                }
                if let Some(d) = get(ge, "dims") {
                    r.dims = xyz(d, "dims")?;
                }
                r.nodes = get(ge, "nodes").map(|n| hostlist(n, "nodes")).transpose()?;
                c.regions.push(r);
            }
        }
        if let Some(ps) = get(te, "placements") {
            for p in items(ps, "placements")? {
                let pe = map(p, "a placement")?;
                check_keys(
                    pe,
                    &["dims", "anchor_seed", "anchor_spacing"],
                    "a placement",
                )?;
                let mut pc = PlacementConfig {
                    line: p.line(),
                    ..PlacementConfig::default()
                };
                if let Some(d) = get(pe, "dims") {
                    pc.dims = xyz(d, "dims")?;
                }
                if let Some(d) = get(pe, "anchor_seed") {
                    pc.seed = xyz(d, "anchor_seed")?;
                }
                if let Some(d) = get(pe, "anchor_spacing") {
                    pc.spacing = xyz(d, "anchor_spacing")?;
                }
                c.placements.push(pc);
            }
        }
        out.push(c);
    }
    Ok(out)
}

pub(super) fn parse(
    text: &str,
    source: &str,
    topology: Option<&str>,
) -> Result<SlurmMachine, ConfError> {
    let r = Reader::new(source);
    let yaml_err = |(line, why): (usize, String)| r.err(line, ConfErrorKind::Yaml(why));
    let root = parse_value(text)
        .map_err(yaml_err)?
        .ok_or_else(|| r.err(0, ConfErrorKind::Empty))?;
    match definitions(&root, topology).map_err(yaml_err)? {
        Definitions::Conf(lines, tree) => conf::build(&lines, tree, r),
        Definitions::Toruses(configs) => {
            let mut r = r;
            let shape = super::torus3d::read(&configs, &mut r)?;
            conf::finish(r, shape)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK_YAML: &str = "\
# two racks of four, and the pair
- topology: racks
  cluster_default: true
  block:
    block_sizes: [4, 8]
    blocks:
    - block: r0
      nodes: n[0-3]
    - block: r1
      nodes: \"n[4-7]\"
- topology: everything
  flat: true
";

    #[test]
    fn block_yaml_equals_the_conf_form() {
        let y = parse(BLOCK_YAML, "m", None).unwrap();
        let c = SlurmMachine::parse_conf(
            "BlockName=r0 Nodes=n[0-3]\nBlockName=r1 Nodes=n[4-7]\nBlockSizes=4,8\n",
            "m",
        )
        .unwrap();
        assert_eq!(y, c);
        // Sizes as an indented list and nodes as a list of expressions.
        let y2 = parse(
            "- topology: t\n  block:\n    block_sizes:\n      - 4\n      - 8\n    blocks:\n      - block: r0\n        nodes:\n          - n[0-1]\n          - n[2-3]\n      - block: r1\n        nodes: n[4-7]\n",
            "m",
            None,
        )
        .unwrap();
        assert_eq!(y2, c);
    }

    #[test]
    fn tree_yaml_equals_the_conf_form() {
        let yaml = "- topology: fabric\n  tree:\n    switches:\n    - switch: s0\n      nodes: tux[0-3]\n    - switch: s1\n      nodes: tux[4-7]\n    - switch: top\n      children: s[0-1]  # both leaves\n";
        let conf = "SwitchName=s0 Nodes=tux[0-3]\nSwitchName=s1 Nodes=tux[4-7]\nSwitchName=top Switches=s[0-1]\n";
        assert_eq!(
            parse(yaml, "m", None).unwrap(),
            SlurmMachine::parse_conf(conf, "m").unwrap()
        );
    }

    #[test]
    fn the_topology_is_chosen_by_name_or_cluster_default() {
        let two = "- topology: a\n  block:\n    blocks:\n    - block: x\n      nodes: n[0-1]\n\
                   - topology: b\n  cluster_default: True\n  block:\n    blocks:\n    - block: y\n      nodes: m[0-3]\n";
        assert_eq!(parse(two, "f", None).unwrap().num_nodes(), 4);
        assert_eq!(parse(two, "f", Some("a")).unwrap().num_nodes(), 2);
        let e = parse(two, "f", Some("c")).unwrap_err();
        assert!(
            e.to_string()
                .contains("no topology named \"c\" (the file has: a, b)"),
            "{e}"
        );
        let e = parse(BLOCK_YAML, "f", Some("everything")).unwrap_err();
        assert_eq!(e.line, 12, "{e}");
    }

    #[test]
    fn errors_name_the_line() {
        let cases: [(&str, usize, &str); 8] = [
            (
                "- topology: t\n  block:\n    blocks:\n    - block: r0\n      nodes: n[0-3\n",
                4,
                "unbalanced bracket",
            ),
            (
                "- topology: t\n  block:\n    blocks:\n    - block: r0\n      node: n1\n",
                5,
                "unknown key \"node\"",
            ),
            (
                "- topology: t\n  block:\n    blocks:\n    - block: r0\n      nodes: n[0-1]\n    - block: r1\n      nodes: n[2-4]\n",
                6,
                "has 3 nodes",
            ),
            (
                "- topology: t\n  block:\n    block_sizes: [2, 3]\n    blocks:\n    - block: r0\n      nodes: n[0-1]\n",
                3,
                "not a multiple",
            ),
            (
                "- topology: t\n  tree:\n    switches:\n    - switch: s\n      children: u\n",
                4,
                "not defined",
            ),
            (
                "- topology: t\n  block:\n    blocks:\n\t- block: r0\n",
                4,
                "tabs",
            ),
            (
                "- topology: t\n  block:\n    blocks:\n    - block: r0\n        nodes: n1\n",
                5,
                "unexpected indentation",
            ),
            (
                "- cluster_default: true\n  topology: t\n",
                1,
                "must start with",
            ),
        ];
        for (text, line, says) in cases {
            let e = parse(text, "t.yaml", None).unwrap_err();
            assert_eq!(e.line, line, "{text}: {e}");
            assert!(e.to_string().contains(says), "{text}: {e}");
            assert!(
                e.to_string().starts_with(&format!("t.yaml:{line}: ")),
                "{e}"
            );
        }
        assert_eq!(
            parse("# nothing\n", "t.yaml", None).unwrap_err().kind,
            ConfErrorKind::Empty
        );
    }

    #[test]
    fn the_shipped_yaml_examples_equal_their_conf_twins() {
        let pairs = [
            (
                include_str!("testdata/blocks-8x18.yaml"),
                include_str!("testdata/blocks-8x18.conf"),
            ),
            (
                include_str!("testdata/tree-2level.yaml"),
                include_str!("testdata/tree-2level.conf"),
            ),
        ];
        for (yaml, conf) in pairs {
            let y = parse(yaml, "x", None).unwrap();
            let mut c = SlurmMachine::parse_conf(conf, "x").unwrap();
            // topology.yaml has no link speeds.
            if let super::super::Shape::Tree(t) = &mut c.shape {
                for s in &mut t.switches {
                    s.link_speed = None;
                }
            }
            assert_eq!(y, c);
        }
    }
}

#[cfg(test)]
mod random_machines {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// A random block machine written in both syntaxes reads the same.
        #[test]
        fn conf_and_yaml_forms_agree(racks in 1u32..9, size in 1u32..6, doublings in 0u32..4) {
            let mut conf = String::new();
            let mut yaml = String::from("- topology: t\n  block:\n");
            let levels: Vec<u32> = (0..=doublings).map(|d| size << d).filter(|&s| s <= racks * size).collect();
            let sizes: Vec<String> = levels.iter().map(u32::to_string).collect();
            yaml.push_str(&format!("    block_sizes: [{}]\n    blocks:\n", sizes.join(", ")));
            for r in 0..racks {
                let (lo, hi) = (r * size, r * size + size - 1);
                conf.push_str(&format!("BlockName=b{r} Nodes=h[{lo}-{hi}]\n"));
                yaml.push_str(&format!("    - block: b{r}\n      nodes: h[{lo}-{hi}]\n"));
            }
            conf.push_str(&format!("BlockSizes={}\n", sizes.join(",")));
            prop_assert_eq!(
                parse(&yaml, "m", None).unwrap(),
                SlurmMachine::parse_conf(&conf, "m").unwrap()
            );
        }
    }
}
