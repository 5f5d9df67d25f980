//! The Hilbert order, generalised to boxes of any sides.
//!
//! On sides that are powers of two the walk is a Hilbert curve: it starts
//! at the origin, every step goes to a neighbour, and every aligned
//! 2^j-sided sub-square (sub-cube) is one interval of ranks. Other sides
//! use the generalisation of Červený's "gilbert" curves (2019; written
//! here from the construction's description): a box is cut recursively the way the Hilbert
//! curve cuts a square, but the cuts fall near the middle at an even
//! offset, and a box much longer than wide is first cut across its long
//! side. Each part is walked from one corner to the neighbouring corner
//! along its main axis, so the parts join up. The walk is a bijection on
//! any sides; it takes only unit steps except where the parity of the
//! sides makes that impossible (a box with an odd main side and an even
//! other side cannot be walked from one corner to the next along the main
//! axis), and there it takes a diagonal step. docs/baselines.md#curve-orders
//! says why this generalisation rather than SST's embedding in the
//! enclosing power-of-two square.
//!
//! A machine with at most two sides above 1 gets the two-dimensional
//! curve in the plane of those sides; three sides above 1 get the
//! three-dimensional one, whose cuts are the 2-D ones on two of the three
//! axes where the box is flat (a side at most three quarters of another)
//! and otherwise the eight-octant cut of a Hilbert cube, in five parts.
//! Both start at the origin and run along the longest side (the first of
//! equal ones).

use super::{Cell, Sides};

/// One box to walk: its first cell and its three axes as vectors whose
/// lengths are the box's sides (`c` is zero for a flat box).
#[derive(Debug, Clone, Copy)]
struct Part {
    at: Cell,
    a: Cell,
    b: Cell,
    c: Cell,
}

fn len(v: Cell) -> i64 {
    v[0].abs() + v[1].abs() + v[2].abs()
}

fn unit(v: Cell) -> Cell {
    v.map(i64::signum)
}

fn along(v: Cell, n: i64) -> Cell {
    unit(v).map(|u| u * n)
}

fn add(p: Cell, q: Cell) -> Cell {
    [p[0] + q[0], p[1] + q[1], p[2] + q[2]]
}

fn sub(p: Cell, q: Cell) -> Cell {
    [p[0] - q[0], p[1] - q[1], p[2] - q[2]]
}

fn neg(p: Cell) -> Cell {
    p.map(|x| -x)
}

/// The last cell of a vector's span, relative to its first: `v` minus one
/// unit step along it.
fn last(v: Cell) -> Cell {
    sub(v, unit(v))
}

/// Where a side of `n` cells is cut: about half, moved up to an even
/// number when the half is odd (and the side long enough), so that the
/// first part can end next to where the second begins.
fn cut(n: i64) -> i64 {
    let half = n / 2;
    if half % 2 == 1 && n > 2 {
        half + 1
    } else {
        half
    }
}

/// Calls `visit` with every cell of the box in the generalised Hilbert
/// order.
pub(super) fn walk(sides: Sides, visit: &mut dyn FnMut(Cell)) {
    let axis = |d: usize| {
        let mut v = [0; 3];
        v[d] = i64::from(sides[d]);
        v
    };
    let long: Vec<usize> = (0..3).filter(|&d| sides[d] > 1).collect();
    let start = match long.as_slice() {
        [] => {
            visit([0, 0, 0]);
            return;
        }
        [d] => Part {
            at: [0; 3],
            a: axis(*d),
            b: [0; 3],
            c: [0; 3],
        },
        [i, j] => {
            let (a, b) = if sides[*i] >= sides[*j] {
                (*i, *j)
            } else {
                (*j, *i)
            };
            Part {
                at: [0; 3],
                a: axis(a),
                b: axis(b),
                c: [0; 3],
            }
        }
        _ => {
            let [w, h, d] = sides;
            let (a, b, c) = if w >= h && w >= d {
                (0, 1, 2)
            } else if h >= d {
                (1, 0, 2)
            } else {
                (2, 0, 1)
            };
            Part {
                at: [0; 3],
                a: axis(a),
                b: axis(b),
                c: axis(c),
            }
        }
    };
    // Parts still to walk, the next one last.
    let mut todo = vec![start];
    while let Some(p) = todo.pop() {
        let first = todo.len();
        if len(p.c) == 0 {
            split_flat(p, visit, &mut todo);
        } else {
            split_solid(p, visit, &mut todo);
        }
        todo[first..].reverse();
    }
}

/// Walks `v` from `at`, one unit step at a time.
fn line(at: Cell, v: Cell, visit: &mut dyn FnMut(Cell)) {
    let u = unit(v);
    let mut p = at;
    for _ in 0..len(v).max(1) {
        visit(p);
        p = add(p, u);
    }
}

/// A box with two axes (`c` zero): walks it if it is a line, otherwise
/// pushes its parts in walking order.
fn split_flat(p: Part, visit: &mut dyn FnMut(Cell), todo: &mut Vec<Part>) {
    let Part { at, a, b, .. } = p;
    let (w, h) = (len(a), len(b));
    if h <= 1 {
        return line(at, a, visit);
    }
    if w <= 1 {
        return line(at, b, visit);
    }
    let flat = |at, a, b| Part {
        at,
        a,
        b,
        c: [0; 3],
    };
    if 2 * w > 3 * h {
        // Long: two halves across the main axis, walked the same way.
        let a2 = along(a, cut(w));
        todo.push(flat(at, a2, b));
        todo.push(flat(add(at, a2), sub(a, a2), b));
    } else {
        // Up the first half of the cross axis, across the far band, and
        // back down to the corner next to the box's end.
        let b2 = along(b, cut(h));
        let a2 = along(a, w / 2);
        todo.push(flat(at, b2, a2));
        todo.push(flat(add(at, b2), a, sub(b, b2)));
        todo.push(flat(
            add(at, add(last(a), last(b2))),
            neg(b2),
            neg(sub(a, a2)),
        ));
    }
}

/// A box with three axes: walks it if it is a line, otherwise pushes its
/// parts in walking order.
fn split_solid(p: Part, visit: &mut dyn FnMut(Cell), todo: &mut Vec<Part>) {
    let Part { at, a, b, c } = p;
    let (w, h, d) = (len(a), len(b), len(c));
    // A part one cell thick is walked as the flat box of its other two
    // axes (the main one first when it is one of them).
    let flat = |at, a, b| Part {
        at,
        a,
        b,
        c: [0; 3],
    };
    match (w, h, d) {
        (_, _, 1) => return split_flat(flat(at, a, b), visit, todo),
        (_, 1, _) => return split_flat(flat(at, a, c), visit, todo),
        (1, _, _) => return split_flat(flat(at, b, c), visit, todo),
        _ => {}
    }
    let (a2, b2, c2) = (along(a, cut(w)), along(b, cut(h)), along(c, cut(d)));
    let part = |at, a, b, c| Part { at, a, b, c };
    if 2 * w > 3 * h && 2 * w > 3 * d {
        // Long: two halves across the main axis.
        todo.push(part(at, a2, b, c));
        todo.push(part(add(at, a2), sub(a, a2), b, c));
    } else if 3 * h > 4 * d {
        // Flat in c: the flat cut in the (a, b) plane, each part the full
        // depth of c.
        todo.push(part(at, b2, c, a2));
        todo.push(part(add(at, b2), a, sub(b, b2), c));
        todo.push(part(
            add(at, add(last(a), last(b2))),
            neg(b2),
            c,
            neg(sub(a, a2)),
        ));
    } else if 3 * d > 4 * h {
        // Flat in b: the flat cut in the (a, c) plane.
        todo.push(part(at, c2, a2, b));
        todo.push(part(add(at, c2), a, b, sub(c, c2)));
        todo.push(part(
            add(at, add(last(a), last(c2))),
            neg(c2),
            neg(sub(a, a2)),
            b,
        ));
    } else {
        // The Hilbert cube's cut: the near-low block, the whole near
        // column up c, across a along the top, down the far column, and
        // the far-low block back to the box's end.
        let (ra, rb, rc) = (sub(a, a2), sub(b, b2), sub(c, c2));
        todo.push(part(at, b2, c2, a2));
        todo.push(part(add(at, b2), c, a2, rb));
        todo.push(part(add(at, add(last(b2), last(c))), a, neg(b2), neg(rc)));
        todo.push(part(
            add(at, add(last(a), add(b2, last(c)))),
            neg(c),
            neg(ra),
            rb,
        ));
        todo.push(part(add(at, add(last(a), last(b2))), neg(b2), c2, neg(ra)));
    }
}
