//! Mohapatra et al.: Figs. 2–5.
use super::{Ctx, FigError, Figure, FigureKind, Panel};
pub(crate) const FIG2: Figure = Figure {
    id: "mohapatra-fig2",
    paper: "Mohapatra",
    summary: "",
    kind: FigureKind::Panels(none),
};
pub(crate) const FIG3: Figure = FIG2;
pub(crate) const FIG4: Figure = FIG2;
pub(crate) const FIG5: Figure = FIG2;
fn none(_: &Ctx) -> Result<Vec<Panel>, FigError> {
    Ok(Vec::new())
}
