//! The distinct orientations of a box: its sides assigned to the
//! dimensions in every distinct way, the given assignment first.

use crate::{Coords, MAX_DIMS};

/// The order in which [`Orientations`] lists the orientations of a box.
///
/// Both orders start with the given sides and agree on two sides ((a, b),
/// then (b, a)); they differ from three sides on. Allocators that try the
/// orientations one after another choose by this order, so each keeps the
/// order it was specified with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum OrientationOrder {
    /// The permutations of the side indices in lexicographic order: for
    /// sides (a, b, c), abc, acb, bac, bca, cab, cba.
    #[default]
    Lexicographic,
    /// The last side is placed in the last position, then in each earlier
    /// one down to the first; for each of its places the other sides run
    /// through this same order: for (a, b, c), abc, bac, acb, bca, cab,
    /// cba.
    Insertion,
    /// The given sides first, then every other orientation in increasing
    /// lexicographic order of its sides (not of side indices): for sides
    /// (4, 2, 8), 428, 248, 284, 482, 824, 842. The pod allocators' order.
    Sorted,
}

/// The distinct orientations of a box with the given sides, in an
/// [`OrientationOrder`], the given orientation first.
///
/// An orientation is a reordering of the sides; repeated sides give
/// repeated orientations, and only the first of each is listed (among the
/// permutations giving one orientation, that is the one keeping equal
/// sides in their given relative order), so a box with side multiplicities
/// m₁, m₂, … has n! / (m₁!·m₂!·…) orientations. No allocation: the state
/// is a fixed array of at most [`MAX_DIMS`] entries.
///
/// ```
/// use partalloc_topology::{Coords, OrientationOrder, Orientations};
/// let sides = Coords::new(&[2, 2, 5])?;
/// let lex: Vec<Vec<u32>> = Orientations::new(sides, OrientationOrder::Lexicographic)
///     .map(|o| o.to_vec())
///     .collect();
/// assert_eq!(lex, [vec![2, 2, 5], vec![2, 5, 2], vec![5, 2, 2]]);
/// let sides = Coords::new(&[1, 2, 3])?;
/// let ins: Vec<Vec<u32>> = Orientations::new(sides, OrientationOrder::Insertion)
///     .map(|o| o.to_vec())
///     .collect();
/// assert_eq!(ins[..3], [vec![1, 2, 3], vec![2, 1, 3], vec![1, 3, 2]]);
/// # Ok::<(), partalloc_topology::TopologyError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Orientations {
    sides: Coords,
    order: OrientationOrder,
    /// Lexicographic: the current permutation. Insertion: the counters,
    /// entry j ≥ 1 saying how many places before position j side j goes.
    state: [u8; MAX_DIMS],
    /// Sorted: the sides of the orientation listed next after the given
    /// one (the given one comes first, while `given` is still true).
    cur: Coords,
    given: bool,
    done: bool,
}

impl Orientations {
    /// The orientations of `sides` in `order`.
    #[must_use]
    pub fn new(sides: Coords, order: OrientationOrder) -> Self {
        let mut state = [0u8; MAX_DIMS];
        if order == OrientationOrder::Lexicographic {
            for (i, s) in state.iter_mut().enumerate() {
                // MAX_DIMS is far below 256.
                *s = i as u8;
            }
        }
        let mut cur = sides;
        cur.as_mut_slice().sort_unstable();
        Self {
            sides,
            order,
            state,
            cur,
            given: true,
            done: false,
        }
    }

    /// The permutation of side indices the current state stands for.
    fn permutation(&self) -> [u8; MAX_DIMS] {
        let n = self.sides.len();
        match self.order {
            OrientationOrder::Lexicographic | OrientationOrder::Sorted => self.state,
            OrientationOrder::Insertion => {
                let mut perm = [0u8; MAX_DIMS];
                for j in 1..n {
                    let at = j - usize::from(self.state[j]);
                    perm.copy_within(at..j, at + 1);
                    perm[at] = j as u8;
                }
                perm
            }
        }
    }

    /// Moves to the next permutation; false after the last.
    fn advance(&mut self) -> bool {
        let n = self.sides.len();
        match self.order {
            OrientationOrder::Lexicographic | OrientationOrder::Sorted => {
                next_permutation(&mut self.state[..n])
            }
            OrientationOrder::Insertion => {
                // Mixed-radix counter, entry 1 fastest, entry j in 0..=j.
                for j in 1..n {
                    if usize::from(self.state[j]) < j {
                        self.state[j] += 1;
                        return true;
                    }
                    self.state[j] = 0;
                }
                false
            }
        }
    }
}

/// Whether `perm` keeps every pair of equal sides in their given order,
/// i.e. is the first permutation producing its orientation.
fn keeps_equal_sides_in_order(sides: &[u32], perm: &[u8]) -> bool {
    (0..perm.len()).all(|i| {
        (i + 1..perm.len()).all(|j| {
            let (p, q) = (usize::from(perm[i]), usize::from(perm[j]));
            sides[p] != sides[q] || p < q
        })
    })
}

/// The next permutation in lexicographic order; false after the last.
/// With repeated values it steps over equal arrangements, so it lists
/// each distinct arrangement once.
fn next_permutation<T: Ord>(p: &mut [T]) -> bool {
    let n = p.len();
    if n < 2 {
        return false;
    }
    let mut i = n - 1;
    while i > 0 && p[i - 1] >= p[i] {
        i -= 1;
    }
    if i == 0 {
        return false;
    }
    let mut j = n - 1;
    while p[j] <= p[i - 1] {
        j -= 1;
    }
    p.swap(i - 1, j);
    p[i..].reverse();
    true
}

impl Iterator for Orientations {
    type Item = Coords;

    fn next(&mut self) -> Option<Coords> {
        let n = self.sides.len();
        if self.order == OrientationOrder::Sorted {
            if std::mem::take(&mut self.given) {
                return Some(self.sides);
            }
            while !self.done {
                let o = self.cur;
                self.done = !next_permutation(self.cur.as_mut_slice());
                if o != self.sides {
                    return Some(o);
                }
            }
            return None;
        }
        while !self.done {
            let perm = self.permutation();
            let first = keeps_equal_sides_in_order(&self.sides, &perm[..n]);
            self.done = !self.advance();
            if first {
                let mut o = self.sides;
                for (v, &p) in o.iter_mut().zip(&perm[..n]) {
                    *v = self.sides[usize::from(p)];
                }
                return Some(o);
            }
        }
        None
    }
}

impl core::iter::FusedIterator for Orientations {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn list(sides: &[u32], order: OrientationOrder) -> Vec<Vec<u32>> {
        Orientations::new(Coords::new(sides).unwrap(), order)
            .map(|o| o.to_vec())
            .collect()
    }

    /// Every permutation of `0..n` in `order`, built independently of the
    /// iterator: lexicographic by sorting, insertion by recursion.
    fn all_permutations(n: usize, order: OrientationOrder) -> Vec<Vec<usize>> {
        match order {
            OrientationOrder::Insertion => {
                if n == 0 {
                    return vec![vec![]];
                }
                let shorter = all_permutations(n - 1, order);
                let mut out = Vec::new();
                for at in (0..n).rev() {
                    for p in &shorter {
                        let mut q = p.clone();
                        q.insert(at, n - 1);
                        out.push(q);
                    }
                }
                out
            }
            _ => {
                let mut out = all_permutations(n, OrientationOrder::Insertion);
                out.sort();
                out
            }
        }
    }

    /// The oracle: every permutation in order, repeats dropped; for the
    /// sorted order, the given sides, then the rest sorted by value.
    fn oracle(sides: &[u32], order: OrientationOrder) -> Vec<Vec<u32>> {
        if order == OrientationOrder::Sorted {
            let mut rest = oracle(sides, OrientationOrder::Lexicographic);
            rest.retain(|o| o != sides);
            rest.sort();
            rest.insert(0, sides.to_vec());
            return rest;
        }
        let mut out: Vec<Vec<u32>> = Vec::new();
        for p in all_permutations(sides.len(), order) {
            let o: Vec<u32> = p.iter().map(|&i| sides[i]).collect();
            if !out.contains(&o) {
                out.push(o);
            }
        }
        out
    }

    fn factorial(n: usize) -> usize {
        (1..=n).product()
    }

    const ORDERS: [OrientationOrder; 3] = [
        OrientationOrder::Lexicographic,
        OrientationOrder::Insertion,
        OrientationOrder::Sorted,
    ];

    #[test]
    fn three_distinct_sides_in_each_order() {
        assert_eq!(
            list(&[1, 2, 3], OrientationOrder::Lexicographic),
            [
                [1, 2, 3],
                [1, 3, 2],
                [2, 1, 3],
                [2, 3, 1],
                [3, 1, 2],
                [3, 2, 1]
            ]
        );
        assert_eq!(
            list(&[1, 2, 3], OrientationOrder::Insertion),
            [
                [1, 2, 3],
                [2, 1, 3],
                [1, 3, 2],
                [2, 3, 1],
                [3, 1, 2],
                [3, 2, 1]
            ]
        );
    }

    #[test]
    fn the_sorted_order_lists_by_value_after_the_given_sides() {
        assert_eq!(
            list(&[4, 2, 8], OrientationOrder::Sorted),
            [
                [4, 2, 8],
                [2, 4, 8],
                [2, 8, 4],
                [4, 8, 2],
                [8, 2, 4],
                [8, 4, 2]
            ]
        );
        assert_eq!(
            list(&[2, 1, 1], OrientationOrder::Sorted),
            [[2, 1, 1], [1, 1, 2], [1, 2, 1]]
        );
    }

    #[test]
    fn two_sides_agree_in_every_order() {
        for order in ORDERS {
            assert_eq!(list(&[4, 7], order), [[4, 7], [7, 4]]);
            assert_eq!(list(&[5, 5], order), [[5, 5]]);
            assert_eq!(list(&[9], order), [[9]]);
        }
    }

    #[test]
    fn repeated_sides_keep_the_first_occurrence() {
        // (a, b, a): the insertion order meets b a a before a a b.
        assert_eq!(
            list(&[1, 2, 1], OrientationOrder::Insertion),
            [[1, 2, 1], [2, 1, 1], [1, 1, 2]]
        );
        assert_eq!(
            list(&[1, 2, 1], OrientationOrder::Lexicographic),
            [[1, 2, 1], [1, 1, 2], [2, 1, 1]]
        );
        assert_eq!(list(&[3, 3, 3, 3], OrientationOrder::Insertion).len(), 1);
    }

    #[test]
    fn eight_distinct_sides_give_every_permutation() {
        let sides: Vec<u32> = (1..=8).collect();
        for order in ORDERS {
            assert_eq!(list(&sides, order).len(), factorial(8));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn matches_the_oracle(sides in prop::collection::vec(1u32..4, 1..=6)) {
            for order in ORDERS {
                let got = list(&sides, order);
                prop_assert_eq!(&got, &oracle(&sides, order));
                // Requested first.
                prop_assert_eq!(&got[0], &sides);
                // Distinct.
                for (i, o) in got.iter().enumerate() {
                    prop_assert!(!got[..i].contains(o));
                }
                // The multinomial count n! / Π m!.
                let mut expected = factorial(sides.len());
                for v in 1u32..4 {
                    expected /= factorial(sides.iter().filter(|&&s| s == v).count());
                }
                prop_assert_eq!(got.len(), expected);
            }
        }
    }
}
