//! Partition-step addressing of Kang, Yu, Youn, Lee & Kim, "Isomorphic
//! Strategy for Processor Allocation in k-Ary n-Cube Systems" (IEEE TC
//! 2003), §4.1 and §4.3.
//!
//! A 2^k-ary n-cube is the dot product H_n ⊙ … ⊙ H_n of k binary n-cubes
//! (§3), so a node (a_{n−1}, …, a_0) can be written as a sequence of k
//! n-tuples: the j-th tuple holds bit j (most significant first) of every
//! coordinate and names the child chosen at the j-th *partition step* of
//! the isomorphic partitioning. A subcube Q_n^{2^a} is a truncated sequence
//! of k − a tuples, printed per dimension with `*` for the free low bits.
//!
//! For cubic systems 2^{k_{n−1}} × … × 2^{k_0} with unequal sides (§4.3)
//! the longest dimensions are partitioned first: with K = max k_i, dimension
//! i takes part in steps K − k_i + 1 … K, so early steps halve only the
//! longest dimensions (1-bit bitmaps when one dimension is longest) and the
//! last min k_i steps split all n dimensions.
//!
//! ```
//! use partalloc_topology::PartitionSteps;
//! // Kang Fig. 3: node (3, 5) of the 8-ary 2-cube.
//! let q = PartitionSteps::new(&[8, 8])?;
//! let a = q.node_address(&[5, 3])?; // dimension 0 first
//! assert_eq!(a.to_string(), "((0,1),(1,0),(1,1))");
//! // Subcube B = ((1,0),(1,1)) = (11*, 01*).
//! let b = q.parse_address("((1,0),(1,1))")?;
//! assert_eq!(b.to_star_string(), "(11*,01*)");
//! assert_eq!(q.parse_address("(11*,01*)")?, b);
//! let bx = q.box_of(&b);
//! assert_eq!(bx.base().as_slice(), &[2, 6]);
//! assert_eq!(bx.extents().as_slice(), &[2, 2]);
//! # Ok::<(), partalloc_topology::TopologyError>(())
//! ```

use core::fmt;

use crate::{Coords, GridBox, MAX_NODES, TopologyError};

/// The partition-step structure of a machine whose sides are powers of two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "PartitionStepsRepr", try_from = "PartitionStepsRepr")
)]
pub struct PartitionSteps {
    /// log2 of each side, dimension 0 first.
    logs: Coords,
    /// The number of steps, max log2 side.
    steps: u32,
}

/// A partition-step address: the digits chosen at the first
/// [`len`](StepAddress::len) steps. Digit bit t is the bit of the t-th
/// dimension (in increasing dimension order) taking part in that step.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "StepAddressRepr", try_from = "StepAddressRepr")
)]
pub struct StepAddress {
    shape: PartitionSteps,
    digits: Vec<u32>,
}

/// The serialized form of a [`PartitionSteps`]: the sides, validated by
/// [`PartitionSteps::new`] on the way in.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct PartitionStepsRepr {
    sides: Coords,
}

#[cfg(feature = "serde")]
impl From<PartitionSteps> for PartitionStepsRepr {
    fn from(p: PartitionSteps) -> Self {
        let mut sides = p.logs;
        for s in sides.iter_mut() {
            *s = 1 << *s;
        }
        Self { sides }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<PartitionStepsRepr> for PartitionSteps {
    type Error = TopologyError;
    fn try_from(r: PartitionStepsRepr) -> Result<Self, TopologyError> {
        Self::new(&r.sides)
    }
}

/// The serialized form of a [`StepAddress`]; deserializing checks the
/// machine and that there are at most K digits, each within its step.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct StepAddressRepr {
    shape: PartitionSteps,
    digits: Vec<u32>,
}

#[cfg(feature = "serde")]
impl From<StepAddress> for StepAddressRepr {
    fn from(a: StepAddress) -> Self {
        Self {
            shape: a.shape,
            digits: a.digits,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<StepAddressRepr> for StepAddress {
    type Error = TopologyError;
    fn try_from(r: StepAddressRepr) -> Result<Self, TopologyError> {
        let text = || format!("{:?}", r.digits);
        if r.digits.len() > r.shape.steps as usize {
            return Err(TopologyError::InvalidAddress {
                text: text(),
                reason: "more steps than the machine has",
            });
        }
        for (k, &d) in r.digits.iter().enumerate() {
            let w = r.shape.step_dims(k as u32 + 1).count_ones();
            if u64::from(d) >> w != 0 {
                return Err(TopologyError::InvalidAddress {
                    text: text(),
                    reason: "a step digit has more bits than dimensions take part in that step",
                });
            }
        }
        Ok(Self {
            shape: r.shape,
            digits: r.digits,
        })
    }
}

fn bad(text: &str, reason: &'static str) -> TopologyError {
    TopologyError::InvalidAddress {
        text: crate::echo(text),
        reason,
    }
}

impl PartitionSteps {
    /// The structure for a machine with these sides (dimension 0 first),
    /// each a power of two.
    ///
    /// # Errors
    /// No or too many dimensions, a side that is not a power of two
    /// ([`TopologyError::InvalidTopology`]), or more than [`MAX_NODES`]
    /// nodes ([`TopologyError::TooManyNodes`]), so that every block index
    /// and address fits the 31 bits of a node id.
    pub fn new(sides: &[u32]) -> Result<Self, TopologyError> {
        let mut logs = Coords::new(sides)?;
        for (dim, l) in logs.iter_mut().enumerate() {
            if *l == 0 {
                return Err(TopologyError::ZeroSide { dim });
            }
            if !l.is_power_of_two() {
                return Err(TopologyError::InvalidTopology {
                    text: format!("{sides:?}"),
                    reason: format!(
                        "side {dim} is {l}; isomorphic partitioning needs powers of two"
                    ),
                });
            }
            *l = l.trailing_zeros();
        }
        let bits = logs.sum();
        if bits > u64::from(MAX_NODES.trailing_zeros()) {
            return Err(TopologyError::TooManyNodes {
                nodes: u32::try_from(bits)
                    .ok()
                    .and_then(|b| 1u128.checked_shl(b))
                    .unwrap_or(u128::MAX),
                max: MAX_NODES,
            });
        }
        let steps = logs.iter().copied().max().unwrap_or(0);
        Ok(Self { logs, steps })
    }

    /// Number of dimensions n.
    #[must_use]
    pub fn dims(&self) -> usize {
        self.logs.len()
    }

    /// log2 of every side, dimension 0 first.
    #[must_use]
    pub fn side_logs(&self) -> &Coords {
        &self.logs
    }

    /// Number of partition steps, K = max log2 side.
    #[must_use]
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// Bit mask of the dimensions that take part in step `s` (1-based;
    /// 0 outside 1..=K).
    #[must_use]
    pub fn step_dims(&self, s: u32) -> u32 {
        if s == 0 || s > self.steps {
            return 0;
        }
        let mut m = 0;
        for (i, &l) in self.logs.iter().enumerate() {
            if l + s > self.steps {
                m |= 1 << i;
            }
        }
        m
    }

    /// log2 of the extents of a block after `level` steps (a block at
    /// level 0 is the whole machine).
    #[must_use]
    pub fn level_extent_logs(&self, level: u32) -> Coords {
        let mut e = self.logs;
        let rem = self.steps.saturating_sub(level);
        for x in e.iter_mut() {
            *x = (*x).min(rem);
        }
        e
    }

    /// Number of address bits fixed after `level` steps: blocks at that
    /// level number 2^bits.
    #[must_use]
    pub fn level_bits(&self, level: u32) -> u32 {
        (1..=level.min(self.steps))
            .map(|s| self.step_dims(s).count_ones())
            .sum()
    }

    /// The partition-step address of the node at `coords` (dimension 0
    /// first), with all K steps.
    ///
    /// # Errors
    /// Wrong number of coordinates or one outside its side.
    pub fn node_address(&self, coords: &[u32]) -> Result<StepAddress, TopologyError> {
        if coords.len() != self.dims() {
            return Err(TopologyError::DimensionMismatch {
                expected: self.dims(),
                got: coords.len(),
            });
        }
        for (dim, (&c, &l)) in coords.iter().zip(self.logs.iter()).enumerate() {
            if u64::from(c) >= 1u64 << l {
                return Err(TopologyError::CoordinateOutOfRange {
                    dim,
                    value: c,
                    side: 1 << l,
                });
            }
        }
        let digits = (1..=self.steps).map(|s| self.digit_of(coords, s)).collect();
        Ok(StepAddress {
            shape: *self,
            digits,
        })
    }

    /// The digit of step `s` for in-range `coords`.
    fn digit_of(&self, coords: &[u32], s: u32) -> u32 {
        let dims = self.step_dims(s);
        let bit = self.steps - s;
        let mut d = 0;
        let mut t = 0;
        for (i, &c) in coords.iter().enumerate() {
            if dims & (1 << i) != 0 {
                d |= ((c >> bit) & 1) << t;
                t += 1;
            }
        }
        d
    }

    /// The index of the level-`level` block containing `coords`: the
    /// digits of the first `level` steps, first step most significant
    /// (the order of the 2^n-ary tree of Kang Fig. 3b). Coordinates are not
    /// range checked.
    #[must_use]
    pub fn block_index(&self, level: u32, coords: &[u32]) -> u64 {
        let mut idx = 0u64;
        for s in 1..=level.min(self.steps) {
            let w = self.step_dims(s).count_ones();
            idx = (idx << w) | u64::from(self.digit_of(coords, s));
        }
        idx
    }

    /// The lowest corner of block `index` at `level` (the inverse of
    /// [`PartitionSteps::block_index`]); high bits beyond the level's
    /// block count are ignored.
    #[must_use]
    pub fn block_base(&self, level: u32, index: u64) -> Coords {
        let mut base = self.logs;
        base.as_mut_slice().fill(0);
        let level = level.min(self.steps);
        let mut shift = self.level_bits(level);
        for s in 1..=level {
            let dims = self.step_dims(s);
            let w = dims.count_ones();
            shift -= w;
            let d = (index >> shift) as u32;
            let bit = self.steps - s;
            let mut t = 0;
            for (i, b) in base.iter_mut().enumerate() {
                if dims & (1 << i) != 0 {
                    *b |= ((d >> t) & 1) << bit;
                    t += 1;
                }
            }
        }
        base
    }

    /// The box of block `index` at `level`.
    #[must_use]
    pub fn block_box(&self, level: u32, index: u64) -> GridBox {
        let mut ext = self.level_extent_logs(level);
        for e in ext.iter_mut() {
            *e = 1 << *e;
        }
        GridBox::from_parts(self.block_base(level, index), ext)
    }

    /// The box a (possibly truncated) address names.
    #[must_use]
    pub fn box_of(&self, a: &StepAddress) -> GridBox {
        self.block_box(a.len() as u32, a.index())
    }

    /// The address of block `index` at `level` (clamped to K steps).
    #[must_use]
    pub fn address_of_block(&self, level: u32, index: u64) -> StepAddress {
        let level = level.min(self.steps);
        let mut shift = self.level_bits(level);
        let digits = (1..=level)
            .map(|s| {
                let w = self.step_dims(s).count_ones();
                shift -= w;
                ((index >> shift) & ((1u64 << w) - 1)) as u32
            })
            .collect();
        StepAddress {
            shape: *self,
            digits,
        }
    }

    /// Parses an address in either of the paper's notations: a sequence of
    /// step tuples `((0,1),(1,0))` (each tuple high dimension first), or
    /// per-dimension bit strings with stars `(11*,01*)` (high dimension
    /// first). A machine with one dimension also accepts `(1,0)` as two
    /// one-digit steps only in the tuple form `((1),(0))`.
    ///
    /// # Errors
    /// [`TopologyError::InvalidAddress`] for text that does not parse or
    /// does not fit this machine.
    pub fn parse_address(&self, text: &str) -> Result<StepAddress, TopologyError> {
        let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let inner = t
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .ok_or_else(|| bad(text, "an address is enclosed in parentheses"))?;
        if inner.starts_with('(') || inner.is_empty() {
            self.parse_tuples(text, inner)
        } else {
            self.parse_stars(text, inner)
        }
    }

    fn parse_tuples(&self, text: &str, inner: &str) -> Result<StepAddress, TopologyError> {
        let mut digits = Vec::new();
        if !inner.is_empty() {
            let body = inner
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| bad(text, "step tuples are enclosed in parentheses"))?;
            for (k, tuple) in body.split("),(").enumerate() {
                let s = k as u32 + 1;
                if s > self.steps {
                    return Err(bad(text, "more steps than the machine has"));
                }
                let dims = self.step_dims(s);
                let w = dims.count_ones() as usize;
                let bits: Vec<&str> = tuple.split(',').collect();
                if bits.len() != w {
                    return Err(bad(
                        text,
                        "a step tuple needs one bit per dimension taking part in that step",
                    ));
                }
                let mut d = 0;
                // Printed high dimension first.
                for (t, b) in bits.iter().rev().enumerate() {
                    match *b {
                        "0" => {}
                        "1" => d |= 1 << t,
                        _ => return Err(bad(text, "step digits are 0 or 1")),
                    }
                }
                digits.push(d);
            }
        }
        Ok(StepAddress {
            shape: *self,
            digits,
        })
    }

    fn parse_stars(&self, text: &str, inner: &str) -> Result<StepAddress, TopologyError> {
        let parts: Vec<&str> = inner.split(',').collect();
        if parts.len() != self.dims() {
            return Err(bad(text, "one bit string per dimension is needed"));
        }
        let mut coords = self.logs;
        let mut frees = self.logs;
        // Printed high dimension first.
        for (i, p) in parts.iter().rev().enumerate() {
            if p.len() != self.logs[i] as usize {
                return Err(bad(
                    text,
                    "a bit string needs one character per bit of its side",
                ));
            }
            let known = p.trim_end_matches('*');
            if !known.chars().all(|c| c == '0' || c == '1') {
                return Err(bad(text, "bit strings are 0s and 1s followed by stars"));
            }
            let free = (p.len() - known.len()) as u32;
            frees[i] = free;
            coords[i] = if known.is_empty() {
                0
            } else {
                u32::from_str_radix(known, 2).map_err(|_| bad(text, "bad bit string"))? << free
            };
        }
        // The longest side always has steps - level free bits.
        let level = self.steps - frees.iter().copied().max().unwrap_or(0);
        let expect = self.level_extent_logs(level);
        if frees != expect {
            return Err(bad(
                text,
                "the stars do not describe the same partition step in every dimension",
            ));
        }
        let digits = (1..=level).map(|s| self.digit_of(&coords, s)).collect();
        Ok(StepAddress {
            shape: *self,
            digits,
        })
    }
}

impl StepAddress {
    /// Number of steps the address fixes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.digits.len()
    }

    /// Whether no step is fixed (the whole machine).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.digits.is_empty()
    }

    /// The digit chosen at each step, first step first.
    #[must_use]
    pub fn digits(&self) -> &[u32] {
        &self.digits
    }

    /// The block index at level [`len`](StepAddress::len) (see
    /// [`PartitionSteps::block_index`]).
    #[must_use]
    pub fn index(&self) -> u64 {
        let mut idx = 0u64;
        for (k, &d) in self.digits.iter().enumerate() {
            let w = self.shape.step_dims(k as u32 + 1).count_ones();
            idx = (idx << w) | u64::from(d);
        }
        idx
    }

    /// Per-dimension bit strings with `*` for free bits, high dimension
    /// first, e.g. `(11*,01*)`.
    #[must_use]
    pub fn to_star_string(&self) -> String {
        let b = self.shape.box_of(self);
        let mut out = String::from("(");
        for i in (0..self.shape.dims()).rev() {
            let l = self.shape.logs[i];
            let free = b.extents()[i].trailing_zeros();
            for bit in (0..l).rev() {
                if bit < free {
                    out.push('*');
                } else {
                    out.push(if (b.base()[i] >> bit) & 1 == 1 {
                        '1'
                    } else {
                        '0'
                    });
                }
            }
            if i > 0 {
                out.push(',');
            }
        }
        out.push(')');
        out
    }
}

/// The step-tuple notation, `((0,1),(1,0),(1,1))`, each tuple high
/// dimension first.
impl fmt::Display for StepAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (k, &d) in self.digits.iter().enumerate() {
            if k > 0 {
                f.write_str(",")?;
            }
            let w = self.shape.step_dims(k as u32 + 1).count_ones();
            f.write_str("(")?;
            for t in (0..w).rev() {
                write!(f, "{}", (d >> t) & 1)?;
                if t > 0 {
                    f.write_str(",")?;
                }
            }
            f.write_str(")")?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn refuses_shapes_wider_than_node_ids() {
        let huge = PartitionSteps::new(&[1 << 31; 8]);
        assert!(
            matches!(huge, Err(TopologyError::TooManyNodes { .. })),
            "{huge:?}"
        );
        assert!(matches!(
            PartitionSteps::new(&[1 << 16, 1 << 16]),
            Err(TopologyError::TooManyNodes { .. })
        ));
        // 2^31 nodes is the largest machine; its last block is addressable.
        let q = PartitionSteps::new(&[1 << 16, 1 << 15]).unwrap();
        let last = (1u64 << 31) - 1;
        let a = q.address_of_block(q.steps(), last);
        assert_eq!(a.index(), last);
        assert_eq!(q.box_of(&a).volume(), 1);
    }

    #[test]
    fn bad_address_message_names_partition_steps() {
        let q = PartitionSteps::new(&[8, 8]).unwrap();
        let e = q.parse_address("((1,0),(2,1))").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("partition-step address"), "{msg}");
    }

    #[test]
    fn kang_fig3_node_and_subcube() {
        let q = PartitionSteps::new(&[8, 8]).unwrap();
        let a = q.node_address(&[5, 3]).unwrap();
        assert_eq!(a.digits(), &[0b01, 0b10, 0b11]);
        assert_eq!(a.to_string(), "((0,1),(1,0),(1,1))");
        assert_eq!(a.to_star_string(), "(011,101)");
        let b = q.parse_address("((1,0),(1,1))").unwrap();
        assert_eq!(b.to_star_string(), "(11*,01*)");
        // B holds nodes a1 ∈ {6,7}, a0 ∈ {2,3}.
        assert_eq!(q.box_of(&b), GridBox::new(&[2, 6], &[2, 2]).unwrap());
        assert_eq!(q.parse_address("(11*,01*)").unwrap(), b);
        assert!(q.parse_address("(11*,0**)").is_err());
        assert!(q.parse_address("((1,0,1))").is_err());
        assert!(q.parse_address("((2,0))").is_err());
        assert!(q.parse_address("1,0").is_err());
    }

    #[test]
    fn kang_sec43_unequal_sides() {
        // 2^2 × 2^2 × 2^4: a_2, a_1 ∈ Σ^{2^2}, a_0 ∈ Σ^{2^4}; dimension 0
        // first here, so sides [16, 4, 4].
        let q = PartitionSteps::new(&[16, 4, 4]).unwrap();
        assert_eq!(q.steps(), 4);
        assert_eq!(q.step_dims(1), 0b001);
        assert_eq!(q.step_dims(2), 0b001);
        assert_eq!(q.step_dims(3), 0b111);
        assert_eq!(q.step_dims(4), 0b111);
        // ((a0^(1)), (a0^(2)), (a2^(3), a1^(3), a0^(3)), (a2^(4), a1^(4), a0^(4))).
        let a = q.node_address(&[0b1011, 0b10, 0b01]).unwrap();
        assert_eq!(a.to_string(), "((1),(0),(0,1,1),(1,0,1))");
        assert_eq!(a.to_star_string(), "(01,10,1011)");
        // After two 1-bit steps the blocks are 4×4×4.
        assert_eq!(q.level_extent_logs(2).as_slice(), &[2, 2, 2]);
        assert_eq!(q.level_bits(2), 2);
        assert_eq!(q.level_bits(4), 8);
        let h = q.parse_address("((1),(0))").unwrap();
        assert_eq!(q.box_of(&h), GridBox::new(&[8, 0, 0], &[4, 4, 4]).unwrap());
        assert_eq!(h.to_star_string(), "(**,**,10**)");
        assert_eq!(q.parse_address("(**,**,10**)").unwrap(), h);
        assert!(PartitionSteps::new(&[6, 4]).is_err());
    }

    proptest! {
        #[test]
        fn round_trips(logs in proptest::collection::vec(0u32..4, 1..4), seed in any::<u64>()) {
            let sides: Vec<u32> = logs.iter().map(|&l| 1 << l).collect();
            let q = PartitionSteps::new(&sides).unwrap();
            let coords: Vec<u32> = sides.iter().enumerate()
                .map(|(i, &s)| ((seed >> (8 * i)) as u32) % s).collect();
            let a = q.node_address(&coords).unwrap();
            prop_assert_eq!(q.parse_address(&a.to_string()).unwrap(), a.clone());
            prop_assert_eq!(q.parse_address(&a.to_star_string()).unwrap(), a.clone());
            for level in 0..=q.steps() {
                let idx = q.block_index(level, &coords);
                let b = q.block_box(level, idx);
                prop_assert!(b.contains_point(&coords));
                let addr = q.address_of_block(level, idx);
                prop_assert_eq!(addr.index(), idx);
                prop_assert_eq!(q.box_of(&addr), b);
                prop_assert_eq!(q.parse_address(&addr.to_star_string()).unwrap(), addr.clone());
                prop_assert_eq!(addr.digits(), &a.digits()[..level as usize]);
            }
        }
    }
}
