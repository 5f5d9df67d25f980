//! Mohapatra et al.: Figs. 2–5.
use super::{Ctx, FigError, Figure, FigureKind, Panel};
pub(crate) const FIG10: Figure = Figure {
    id: "kimyoon-fig10",
    paper: "Mohapatra",
    summary: "",
    kind: FigureKind::Panels(none),
};
pub(crate) const FIG11: Figure = FIG10;
pub(crate) const FIG12: Figure = FIG10;
pub(crate) const FIG13: Figure = FIG10;
fn none(_: &Ctx) -> Result<Vec<Panel>, FigError> {
    Ok(Vec::new())
}
pub(crate) const FIG14: Figure = FIG10;
pub(crate) const FIG15: Figure = FIG10;
pub(crate) const FIG16: Figure = FIG10;
pub(crate) const FIG17: Figure = FIG10;
