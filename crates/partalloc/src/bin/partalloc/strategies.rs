//! `partalloc strategies`: the registries of allocators and schedulers.

use std::fmt::Write as _;

use partalloc::allocators::registry::{self as alloc_registry, ParamInfo};
use partalloc::schedulers::registry as sched_registry;
use serde::Serialize;

use crate::common::{CliError, emit};

/// Options of `partalloc strategies`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct Param {
    name: &'static str,
    default: &'static str,
    doc: &'static str,
}

#[derive(Debug, Serialize)]
struct Item {
    name: &'static str,
    summary: &'static str,
    source: &'static str,
    params: Vec<Param>,
    #[serde(skip_serializing_if = "Option::is_none")]
    topologies: Option<Vec<String>>,
}

#[derive(Debug, Serialize)]
struct Listing {
    allocators: Vec<Item>,
    schedulers: Vec<Item>,
}

fn params(ps: &[ParamInfo]) -> Vec<Param> {
    ps.iter()
        .map(|p| Param {
            name: p.name,
            default: p.default,
            doc: p.doc,
        })
        .collect()
}

fn listing() -> Listing {
    Listing {
        allocators: alloc_registry::strategies()
            .map(|s| Item {
                name: s.name,
                summary: s.summary,
                source: s.source,
                params: params(s.params),
                topologies: Some(s.topologies.iter().map(ToString::to_string).collect()),
            })
            .collect(),
        schedulers: sched_registry::policies()
            .map(|s| Item {
                name: s.name,
                summary: s.summary,
                source: s.source,
                params: params(s.params),
                topologies: None,
            })
            .collect(),
    }
}

fn text(l: &Listing) -> String {
    let mut s = String::new();
    let section = |s: &mut String, title: &str, items: &[Item]| {
        let _ = writeln!(s, "{title}");
        for it in items {
            let _ = writeln!(s, "  {}", it.name);
            let _ = writeln!(s, "      {}", it.summary);
            let _ = writeln!(s, "      source: {}", it.source);
            if let Some(t) = &it.topologies {
                let _ = writeln!(s, "      machines: {}", t.join(", "));
            }
            for p in &it.params {
                let _ = writeln!(s, "      [{}={}]  {}", p.name, p.default, p.doc);
            }
        }
    };
    section(
        &mut s,
        "Allocation strategies (--allocator NAME[key=value,...]):",
        &l.allocators,
    );
    s.push('\n');
    section(
        &mut s,
        "Scheduling policies (--scheduler NAME[key=value,...]):",
        &l.schedulers,
    );
    s
}

/// Runs `partalloc strategies`.
pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let l = listing();
    if args.json {
        let mut j = serde_json::to_string_pretty(&l)
            .map_err(|e| CliError::input(format!("cannot format JSON: {e}")))?;
        j.push('\n');
        emit(&j)
    } else {
        emit(&text(&l))
    }
}
