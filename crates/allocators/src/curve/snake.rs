//! The snake (boustrophedon) order: rows along x alternate direction, and
//! in three dimensions the planes' row order alternates too, so that
//! consecutive ranks are always neighbours.
//!
//! The t-th row visited (counted over the whole machine from 0) runs
//! towards +x when t is even and towards −x when t is odd; plane z visits
//! its rows towards +y when z is even and towards −y when z is odd. On a
//! W×H mesh this is row 0 left to right, row 1 right to left, and so on;
//! at a plane boundary the walk steps up in z from the cell where the
//! previous plane ended. It is the snake of SST's linear allocators
//! (docs/baselines.md#curve-orders).

use super::{Cell, Sides};

/// Calls `visit` with every cell of the box in snake order.
pub(super) fn walk(sides: Sides, visit: &mut dyn FnMut(Cell)) {
    let [nx, ny, nz] = sides.map(i64::from);
    let mut row = 0u64;
    for z in 0..nz {
        for j in 0..ny {
            let y = if z % 2 == 0 { j } else { ny - 1 - j };
            for i in 0..nx {
                let x = if row.is_multiple_of(2) { i } else { nx - 1 - i };
                visit([x, y, z]);
            }
            row += 1;
        }
    }
}
