//! `partalloc strategies`: the registries of allocators and schedulers.

use std::fmt::Write as _;

use partalloc::allocators::registry::{self as alloc_registry, ParamInfo};
use partalloc::schedulers::registry as sched_registry;
use serde::Serialize;

use crate::error::CliError;
use crate::output::{emit, json_text};

/// Output formats of the listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ListFormat {
    /// Text for the terminal.
    Text,
    /// One JSON document.
    Json,
}

/// Options of `partalloc strategies`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    format: ListFormat,
    /// Only the strategies and policies that run on this machine (with
    /// their default parameters); the others are listed with the reason.
    #[arg(long, short, long_help = partalloc_experiment::forms::topology_help())]
    topology: Option<String>,
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
    /// With `--topology`: the names that do not run there, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    refused: Vec<Refusal>,
}

#[derive(Debug, Serialize)]
struct Refusal {
    name: &'static str,
    reason: String,
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
        refused: Vec::new(),
    }
}

/// Keeps what builds on `topology` with default parameters.
fn restrict(l: &mut Listing, topology: &partalloc::topology::Topology) {
    keep_buildable(&mut l.allocators, &mut l.refused, |name| {
        alloc_registry::build(name, topology).map(drop)
    });
    keep_buildable(&mut l.schedulers, &mut l.refused, |name| {
        sched_registry::build(name, topology).map(drop)
    });
}

/// Keeps the items `build` accepts; the others go to `refused` with its reason.
fn keep_buildable<E: ToString>(
    items: &mut Vec<Item>,
    refused: &mut Vec<Refusal>,
    build: impl Fn(&'static str) -> Result<(), E>,
) {
    items.retain(|it| match build(it.name) {
        Ok(()) => true,
        Err(e) => {
            refused.push(Refusal {
                name: it.name,
                reason: e.to_string(),
            });
            false
        }
    });
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
    if !l.refused.is_empty() {
        let _ = writeln!(s, "\nNot on this machine:");
        for r in &l.refused {
            let _ = writeln!(s, "  {:<20} {}", r.name, r.reason);
        }
    }
    s
}

/// Runs `partalloc strategies`.
pub(crate) fn run(args: &Args) -> Result<(), CliError> {
    let mut l = listing();
    if let Some(t) = &args.topology {
        restrict(&mut l, &crate::limits::machine("strategies --topology", t)?);
    }
    if args.format == ListFormat::Json {
        emit(&json_text(&l)?)
    } else {
        emit(&text(&l))
    }
}
