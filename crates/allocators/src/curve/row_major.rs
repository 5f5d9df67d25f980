//! The row-major order: node ids in increasing order (dimension 0
//! fastest), the order a scan of the machine's rows takes.

use super::{Cell, Sides};

/// Calls `visit` with every cell of the box, x fastest, then y, then z.
pub(super) fn walk(sides: Sides, visit: &mut dyn FnMut(Cell)) {
    let [nx, ny, nz] = sides.map(i64::from);
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                visit([x, y, z]);
            }
        }
    }
}
