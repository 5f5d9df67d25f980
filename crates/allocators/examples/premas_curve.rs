//! Prints a curve order in the file format of PReMAS's and SST's linear
//! allocators, so that `scripts/premas-oracle` can run PReMAS on exactly
//! partalloc's curve: one line `index rank` per node, in increasing index,
//! where index = x + y·X + z·X·Y (x fastest, as partalloc's node ids).
//!
//! Run: `cargo run -q -p partalloc-allocators --example premas_curve -- hilbert 16 8 1`

use std::io::Write as _;
use std::process::ExitCode;

use partalloc_allocators::curve::{Curve, CurveOrder};
use partalloc_topology::Grid;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("premas_curve: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [order, sides @ ..] = args.as_slice() else {
        return Err(
            "usage: premas_curve ORDER X [Y [Z]] (ORDER: row-major, snake, hilbert)".into(),
        );
    };
    let order: CurveOrder = order.parse()?;
    let sides = sides
        .iter()
        .map(|s| s.parse::<u32>())
        .collect::<Result<Vec<_>, _>>()?;
    let curve = Curve::new(order, &Grid::mesh(&sides)?)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for node in 0..curve.len() as u32 {
        let rank = curve.rank_of(node).ok_or("a node without a rank")?;
        writeln!(out, "{node} {rank}")?;
    }
    out.flush()?;
    Ok(())
}
