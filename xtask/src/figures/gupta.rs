//! Gupta.
use super::{Ctx, FigError, Figure, FigureKind};
pub(crate) const EXAMPLES: Figure = Figure {
    id: "gupta-examples",
    paper: "Gupta",
    summary: "",
    kind: FigureKind::Custom(run),
};
fn run(_: &Ctx) -> Result<(), FigError> {
    Ok(())
}
