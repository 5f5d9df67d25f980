//! Readers of a Kueue `Topology` and of a Kubernetes node list.
//!
//! Both are parsed with `yaml-rust2` into a small tree that keeps the line
//! each value starts on, so every error names `file:line`.

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

use super::{CapacityError, CapacityMachineBuilder};

/// A YAML value with the (1-based) line it starts on.
#[derive(Debug)]
enum Value {
    Scalar(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

#[derive(Debug)]
struct Node {
    value: Value,
    line: usize,
}

impl Node {
    fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Builds [`Node`]s from parser events; the first problem is kept.
#[derive(Debug, Default)]
struct TreeBuilder {
    stack: Vec<(Node, Option<String>)>,
    root: Option<Node>,
    error: Option<(usize, String)>,
    documents: usize,
}

impl TreeBuilder {
    fn attach(&mut self, node: Node) {
        let Some((parent, key)) = self.stack.last_mut() else {
            if self.root.is_none() {
                self.root = Some(node);
            }
            return;
        };
        match &mut parent.value {
            Value::Seq(items) => items.push(node),
            Value::Map(entries) => match key.take() {
                Some(k) => entries.push((k, node)),
                None => match node.value {
                    Value::Scalar(k) => *key = Some(k),
                    _ => {
                        self.error.get_or_insert((
                            node.line,
                            "mapping keys must be plain scalars".to_owned(),
                        ));
                    }
                },
            },
            Value::Scalar(_) => {}
        }
    }
}

impl MarkedEventReceiver for TreeBuilder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let line = mark.line();
        match ev {
            Event::Scalar(text, ..) => self.attach(Node {
                value: Value::Scalar(text),
                line,
            }),
            Event::SequenceStart(..) => self.stack.push((
                Node {
                    value: Value::Seq(Vec::new()),
                    line,
                },
                None,
            )),
            Event::MappingStart(..) => self.stack.push((
                Node {
                    value: Value::Map(Vec::new()),
                    line,
                },
                None,
            )),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((node, _)) = self.stack.pop() {
                    self.attach(node);
                }
            }
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents == 2 {
                    self.error.get_or_insert((
                        line,
                        "a second YAML document starts here; keep one document in the file"
                            .to_owned(),
                    ));
                }
            }
            Event::Alias(_) => {
                self.error
                    .get_or_insert((line, "aliases are not supported".to_owned()));
            }
            _ => {}
        }
    }
}

fn parse(text: &str, source: &str) -> Result<Node, CapacityError> {
    let mut builder = TreeBuilder::default();
    let mut parser = Parser::new_from_str(text);
    if let Err(e) = parser.load(&mut builder, true) {
        return Err(CapacityError::Yaml {
            file: source.to_owned(),
            line: e.marker().line(),
            message: e.info().to_owned(),
        });
    }
    if let Some((line, message)) = builder.error {
        return Err(CapacityError::Yaml {
            file: source.to_owned(),
            line,
            message,
        });
    }
    builder.root.ok_or_else(|| CapacityError::Yaml {
        file: source.to_owned(),
        line: 1,
        message: "the document is empty".to_owned(),
    })
}

fn field<'a>(
    node: &'a Node,
    key: &str,
    path: &str,
    source: &str,
    expected: &'static str,
) -> Result<&'a Node, CapacityError> {
    node.get(key).ok_or_else(|| CapacityError::Field {
        file: source.to_owned(),
        line: node.line,
        field: path.to_owned(),
        expected,
    })
}

fn scalar<'a>(node: &'a Node, path: &str, source: &str) -> Result<&'a str, CapacityError> {
    match &node.value {
        Value::Scalar(s) => Ok(s),
        _ => Err(CapacityError::Field {
            file: source.to_owned(),
            line: node.line,
            field: path.to_owned(),
            expected: "a scalar",
        }),
    }
}

fn seq<'a>(node: &'a Node, path: &str, source: &str) -> Result<&'a [Node], CapacityError> {
    match &node.value {
        Value::Seq(items) => Ok(items),
        _ => Err(CapacityError::Field {
            file: source.to_owned(),
            line: node.line,
            field: path.to_owned(),
            expected: "a list",
        }),
    }
}

fn map<'a>(
    node: &'a Node,
    path: &str,
    source: &str,
) -> Result<Vec<(&'a str, &'a str)>, CapacityError> {
    match &node.value {
        Value::Map(entries) => entries
            .iter()
            .map(|(k, v)| Ok((k.as_str(), scalar(v, &format!("{path}.{k}"), source)?)))
            .collect(),
        _ => Err(CapacityError::Field {
            file: source.to_owned(),
            line: node.line,
            field: path.to_owned(),
            expected: "a mapping",
        }),
    }
}

/// Refuses a document whose `kind` is given and is none of `kinds`: the
/// wrong file in the wrong place (a node list as the Topology, a Pod).
fn check_kind(root: &Node, kinds: &[&str], source: &str) -> Result<(), CapacityError> {
    let Some(kind) = root.get("kind") else {
        return Ok(());
    };
    match &kind.value {
        Value::Scalar(k) if kinds.contains(&k.as_str()) => Ok(()),
        Value::Scalar(k) => Err(CapacityError::Kind {
            file: source.to_owned(),
            line: kind.line,
            kind: crate::echo(k),
            expected: kinds.join(" or "),
        }),
        _ => Err(CapacityError::Field {
            file: source.to_owned(),
            line: kind.line,
            field: "kind".to_owned(),
            expected: "a scalar",
        }),
    }
}

/// The level labels of a Kueue `Topology` (`spec.levels[].nodeLabel`).
pub(super) fn read_levels(text: &str, source: &str) -> Result<Vec<String>, CapacityError> {
    let root = parse(text, source)?;
    check_kind(&root, &["Topology"], source)?;
    let spec = field(&root, "spec", "spec", source, "a mapping")?;
    let levels = field(spec, "levels", "spec.levels", source, "a list")?;
    let mut out = Vec::new();
    for item in seq(levels, "spec.levels", source)? {
        let label = field(
            item,
            "nodeLabel",
            "spec.levels[].nodeLabel",
            source,
            "a scalar",
        )?;
        out.push(scalar(label, "spec.levels[].nodeLabel", source)?.to_owned());
    }
    if out.is_empty() {
        return Err(CapacityError::NoLevels {
            file: source.to_owned(),
        });
    }
    Ok(out)
}

/// Adds the nodes of a node list (`items[]`) to the builder.
pub(super) fn read_nodes(
    text: &str,
    source: &str,
    builder: &mut CapacityMachineBuilder,
) -> Result<(), CapacityError> {
    let root = parse(text, source)?;
    check_kind(&root, &["List", "NodeList"], source)?;
    let items = field(&root, "items", "items", source, "a list")?;
    for item in seq(items, "items", source)? {
        let meta = field(item, "metadata", "items[].metadata", source, "a mapping")?;
        let name = scalar(
            field(meta, "name", "metadata.name", source, "a scalar")?,
            "metadata.name",
            source,
        )?;
        let labels = match meta.get("labels") {
            Some(l) => map(l, "metadata.labels", source)?,
            None => Vec::new(),
        };
        let status = field(item, "status", "items[].status", source, "a mapping")?;
        let alloc_node = field(
            status,
            "allocatable",
            "status.allocatable",
            source,
            "a mapping",
        )?;
        let alloc = map(alloc_node, "status.allocatable", source)?;
        builder.add_node(item.line, name, &labels, &alloc)?;
        if !alloc.iter().any(|(k, _)| *k == super::PODS_RESOURCE) {
            return Err(CapacityError::NoPods {
                file: source.to_owned(),
                line: alloc_node.line,
                node: crate::echo(name),
            });
        }
    }
    Ok(())
}
