//! Random: any free nodes, chosen uniformly at random — the floor every
//! non-contiguous allocation study reports (PReMAS's and SST's
//! `RandomAllocator`), made reproducible by a seed.
//!
//! A request for k nodes gets a k-subset of the F available nodes, every
//! subset equally likely (Floyd's sampling of k distinct ranks in 0..F,
//! then the nodes of those ranks in id order). The random stream of one
//! allocation is seeded from the strategy's `seed`, the request's size and
//! the available nodes, so the grant is a function of the state, like every
//! other strategy's: the same seed gives the same grants in any run,
//! releasing everything gives a fresh allocator back (the contract), and
//! nothing depends on how many allocations came before. PReMAS draws from
//! an unseeded `java.util.Random`, SST from its Mersenne twister; neither
//! can be replayed, so only the distribution is theirs
//! (docs/baselines.md#random).
//!
//! Any machine; O(N/64 + k) per allocation without allocating beyond the
//! grant.
//!
//! ```
//! use partalloc_allocators::{noncontig::RandomNodes, Allocator, Request};
//! let topo = "mesh:8x8".parse()?;
//! let mut a = RandomNodes::new(topo, 7)?;
//! let mut b = RandomNodes::new("mesh:8x8".parse()?, 7)?;
//! let (ga, gb) = (a.allocate(&Request::nodes(5))?, b.allocate(&Request::nodes(5))?);
//! assert_eq!(ga.partition(), gb.partition());
//! assert_eq!(ga.granted_nodes(), 5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use partalloc_topology::nodeset::{set_word_bit, word_bit};
use partalloc_topology::{NodeId, Topology};

use crate::entry::{ANY_TOPOLOGY, AllocatorEntry, Entry, ParamInfo, StrategyInfo};
use crate::{AllocError, BuildError, Managed, Occupancy, Partition, Request, Strategy, View};

const NAME: &str = "random";

/// How a random rank is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum RandomDraw {
    /// Exactly uniform (PReMAS: `Random.nextInt`): Floyd's sampling with
    /// unbiased draws.
    #[default]
    Uniform,
    /// SST's arithmetic: the nodes one after another, each the free node
    /// of rank x mod (nodes left) in id order, x a signed 32-bit draw
    /// widened to an unsigned 64-bit one (a bias below 2^−31 per node).
    Modulo,
}

/// Uniformly random free nodes, reproducible by seed.
#[derive(Debug, Clone)]
pub struct RandomNodes {
    seed: u64,
    draw: RandomDraw,
    /// Scratch: the chosen ranks, one bit each.
    chosen: Vec<u64>,
}

/// SplitMix64 (Steele, Lea & Flood 2014): small, fast and fixed, so a
/// seed means the same grants on every platform.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n ≥ 1), without modulo bias (Lemire 2019).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        // The division only when the low half is small enough to matter.
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }
}

impl RandomNodes {
    /// A random allocator for any machine.
    ///
    /// # Errors
    /// None today (every strategy constructor returns a `Result`).
    pub fn new(topology: Topology, seed: u64) -> Result<Managed<Self>, BuildError> {
        Self::with_draw(topology, seed, RandomDraw::Uniform)
    }

    /// As [`RandomNodes::new`], with SST's draw or PReMAS's.
    ///
    /// # Errors
    /// None today.
    pub fn with_draw(
        topology: Topology,
        seed: u64,
        draw: RandomDraw,
    ) -> Result<Managed<Self>, BuildError> {
        let strategy = Self {
            seed,
            draw,
            chosen: Vec::new(),
        };
        Ok(Managed::new(topology, strategy))
    }

    /// The seed.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The random stream for a request of `want` nodes in the current
    /// state: the seed, the size and every word of the blocked set mixed.
    fn stream(&self, occupancy: &Occupancy, want: u64) -> SplitMix {
        let mut h = SplitMix(self.seed ^ want.rotate_left(32));
        let mut acc = h.next_u64();
        for &w in occupancy.blocked().words() {
            acc = SplitMix(acc ^ w).next_u64();
        }
        SplitMix(acc)
    }

    /// The available nodes as words (bits past the machine clear).
    fn free_word(occupancy: &Occupancy, i: usize) -> u64 {
        let len = occupancy.len();
        let w = !occupancy.blocked().words()[i];
        let inside = len - i * 64;
        if inside >= 64 {
            w
        } else {
            w & ((1u64 << inside) - 1)
        }
    }

    /// Chooses `want` of the `free` available nodes: Floyd's algorithm
    /// marks `want` distinct ranks in 0..free, each subset equally likely.
    fn choose_ranks(&mut self, want: u64, free: u64, rng: &mut SplitMix) {
        let words = (free as usize).div_ceil(64);
        self.chosen.clear();
        self.chosen.resize(words, 0);
        if self.draw == RandomDraw::Modulo {
            for left in (free - want + 1..=free).rev() {
                let x = rng.next_u64() as u32 as i32;
                let mut r = (i64::from(x) as u64) % left;
                // The r-th rank not chosen yet.
                for (w, bits) in self.chosen.iter_mut().enumerate() {
                    let valid = free - w as u64 * 64;
                    let mask = if valid >= 64 {
                        u64::MAX
                    } else {
                        (1u64 << valid) - 1
                    };
                    let open = !*bits & mask;
                    let n = u64::from(open.count_ones());
                    if r < n {
                        *bits |= 1 << select_bit(open, r as u32);
                        break;
                    }
                    r -= n;
                }
            }
            return;
        }
        for j in free - want..free {
            let t = rng.below(j + 1) as usize;
            let pick = if word_bit(&self.chosen, t) {
                j as usize
            } else {
                t
            };
            set_word_bit(&mut self.chosen, pick);
        }
    }
}

/// The position of the `j`-th set bit of `w` (from 0; `w` has more than
/// `j` set bits), by halving: six popcounts.
fn select_bit(w: u64, mut j: u32) -> u32 {
    let (mut pos, mut width, mut w) = (0u32, 32u32, w);
    while width > 0 {
        let low = (w & ((1u64 << width) - 1)).count_ones();
        if j >= low {
            j -= low;
            pos += width;
            w >>= width;
        }
        width /= 2;
    }
    pos
}

pub(crate) const ENTRY: AllocatorEntry = Entry {
    info: StrategyInfo {
        name: NAME,
        summary: "uniformly random free nodes, reproducible by seed: the non-contiguous floor",
        source: "PReMAS and SST RandomAllocator, seeded; docs/baselines.md#random",
        params: &[
            ParamInfo {
                name: "seed",
                default: "0",
                doc: "seed of the random choice (an unsigned 64-bit integer); same seed, same grants",
            },
            ParamInfo {
                name: "draw",
                default: "uniform",
                doc: "uniform (exactly, as PReMAS) or modulo (SST: a 32-bit draw modulo the free nodes left, one node at a time)",
            },
        ],
        topologies: ANY_TOPOLOGY,
    },
    build: |t, spec| {
        let seed = spec.parse_or("seed", 0u64)?;
        let draw = spec.choice(
            "draw",
            &[
                ("uniform", RandomDraw::Uniform),
                ("modulo", RandomDraw::Modulo),
            ],
        )?;
        Ok(Box::new(RandomNodes::with_draw(t.clone(), seed, draw)?))
    },
};

impl Strategy for RandomNodes {
    type Record = Partition;

    fn name(&self) -> String {
        match (self.seed, self.draw) {
            (0, RandomDraw::Uniform) => NAME.to_owned(),
            (s, RandomDraw::Uniform) => format!("{NAME}[seed={s}]"),
            (0, RandomDraw::Modulo) => format!("{NAME}[draw=modulo]"),
            (s, RandomDraw::Modulo) => format!("{NAME}[seed={s},draw=modulo]"),
        }
    }

    fn choose(
        &mut self,
        view: &View<'_>,
        request: &Request,
    ) -> Result<Option<Partition>, AllocError> {
        let want = view.wanted_nodes(request)?;
        let occupancy = view.occupancy();
        let free = occupancy.free_count() as u64;
        if want > free {
            return Ok(None);
        }
        let mut rng = self.stream(occupancy, want);
        self.choose_ranks(want, free, &mut rng);
        // Walk the chosen ranks in order beside the available words.
        let mut nodes = Vec::with_capacity(want as usize);
        let (mut word, mut before) = (0usize, 0u64);
        let mut avail = Self::free_word(occupancy, 0);
        for (cw, &bits) in self.chosen.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let rank = cw as u64 * 64 + u64::from(bits.trailing_zeros());
                bits &= bits - 1;
                // Skip whole words of available nodes below the rank.
                while before + u64::from(avail.count_ones()) <= rank {
                    before += u64::from(avail.count_ones());
                    word += 1;
                    avail = Self::free_word(occupancy, word);
                }
                let bit = 1u64 << select_bit(avail, (rank - before) as u32);
                // Machines have at most 2^31 nodes.
                nodes.push((word * 64) as NodeId + bit.trailing_zeros());
            }
        }
        Ok(Some(Partition::Nodes(nodes)))
    }

    fn fits(&self, view: &View<'_>, request: &Request) -> Result<Option<bool>, AllocError> {
        let want = view.wanted_nodes(request)?;
        Ok(Some(want <= view.occupancy().free_count() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Allocator, Grant};

    /// The literal version: the available ids in a list, Floyd's ranks
    /// drawn from the same stream, the ids at those ranks.
    fn literal(a: &Managed<RandomNodes>, want: u64) -> Vec<NodeId> {
        let free: Vec<NodeId> = (0..a.topology().num_nodes() as NodeId)
            .filter(|&n| a.is_available(n))
            .collect();
        let mut rng = a.stream(a.view().occupancy(), want);
        let f = free.len() as u64;
        let mut ranks = std::collections::BTreeSet::new();
        for j in f - want..f {
            let t = rng.below(j + 1);
            if !ranks.insert(t) {
                ranks.insert(j);
            }
        }
        ranks.iter().map(|&r| free[r as usize]).collect()
    }

    #[test]
    fn word_walk_picks_the_literal_ranks() {
        let mut a = RandomNodes::new("mesh:13x11".parse().unwrap(), 99).unwrap();
        let mut rng = SplitMix(5);
        let mut live = Vec::new();
        for step in 0..400 {
            if step % 3 == 2 && !live.is_empty() {
                let i = rng.below(live.len() as u64) as usize;
                let g: Grant = live.swap_remove(i);
                a.release(&g).unwrap();
                continue;
            }
            if step % 17 == 5 {
                let _ = a.mark_faulty(rng.below(143) as NodeId);
            }
            let want = 1 + rng.below(40);
            if want > a.free_nodes() as u64 {
                continue;
            }
            let expect = literal(&a, want);
            let g = a.allocate(&Request::nodes(want as u32)).unwrap();
            assert_eq!(g.partition(), &Partition::Nodes(expect), "step {step}");
            live.push(g);
        }
    }

    /// Σ (observed − expected)² / expected.
    fn chi_square(counts: &[u32], expected: f64) -> f64 {
        counts
            .iter()
            .map(|&c| (f64::from(c) - expected).powi(2) / expected)
            .sum()
    }

    #[test]
    fn every_node_is_equally_likely() {
        // 8×8 with 24 faulty nodes: 40 available, requests of 5. Over 8,000
        // seeds each available node is expected 1,000 times; a chi-square
        // with 39 degrees of freedom stays below 80 (p ≈ 1e-4) unless the
        // choice is biased. Faulty nodes are never chosen.
        let topo: Topology = "mesh:8x8".parse().unwrap();
        let faulty: Vec<NodeId> = (0..64).filter(|n| n % 8 < 3).collect();
        let mut counts = [0u32; 64];
        for seed in 0..8000u64 {
            let mut a = RandomNodes::new(topo.clone(), seed).unwrap();
            for &n in &faulty {
                a.mark_faulty(n).unwrap();
            }
            let g = a.allocate(&Request::nodes(5)).unwrap();
            for n in g.partition().node_list(&topo).unwrap() {
                counts[n as usize] += 1;
            }
        }
        assert!(faulty.iter().all(|&n| counts[n as usize] == 0));
        let free: Vec<u32> = (0..64).filter(|n| n % 8 >= 3).map(|n| counts[n]).collect();
        let chi = chi_square(&free, 1000.0);
        assert!(
            chi < 80.0,
            "chi-square {chi} over 39 degrees of freedom: {free:?}"
        );
    }

    #[test]
    fn every_subset_is_equally_likely() {
        // 2 of 6 nodes: 15 subsets, 15,000 seeds, about 1,000 each;
        // chi-square with 14 degrees of freedom below 40 (p ≈ 2e-4).
        let topo: Topology = "mesh:3x2".parse().unwrap();
        let mut counts = [0u32; 64];
        for seed in 0..15_000u64 {
            let mut a = RandomNodes::new(topo.clone(), seed).unwrap();
            let ids = a
                .allocate(&Request::nodes(2))
                .unwrap()
                .partition()
                .node_list(&topo)
                .unwrap();
            counts[(ids[0] * 6 + ids[1]) as usize] += 1;
        }
        let pairs: Vec<u32> = (0..6)
            .flat_map(|i| (i + 1..6).map(move |j| (i, j)))
            .map(|(i, j)| counts[i * 6 + j])
            .collect();
        assert_eq!(pairs.iter().sum::<u32>(), 15_000);
        let chi = chi_square(&pairs, 1000.0);
        assert!(
            chi < 40.0,
            "chi-square {chi} over 14 degrees of freedom: {pairs:?}"
        );
    }

    #[test]
    fn modulo_draw_takes_sst_ranks_one_at_a_time() {
        // The literal SST procedure: a list of free ids, each draw removes
        // the id at x mod (ids left).
        let topo: Topology = "mesh:9x7".parse().unwrap();
        let mut a = RandomNodes::with_draw(topo.clone(), 5, RandomDraw::Modulo).unwrap();
        let mut live = Vec::new();
        for want in [5u32, 17, 1, 30, 9] {
            let mut free: Vec<NodeId> = (0..63).filter(|&n| a.is_available(n)).collect();
            let mut rng = a.stream(a.view().occupancy(), u64::from(want));
            let mut expect: Vec<NodeId> = (0..want)
                .map(|_| {
                    let x = rng.next_u64() as u32 as i32;
                    free.remove(((i64::from(x) as u64) % free.len() as u64) as usize)
                })
                .collect();
            expect.sort_unstable();
            let g = a.allocate(&Request::nodes(want)).unwrap();
            assert_eq!(g.partition(), &Partition::Nodes(expect));
            live.push(g);
        }
        // From the same fresh state and stream, uniform draws differently.
        let mut u = RandomNodes::new(topo, 5).unwrap();
        assert_ne!(
            u.allocate(&Request::nodes(5)).unwrap().partition(),
            live[0].partition()
        );
    }

    #[test]
    fn select_bit_finds_the_jth_set_bit() {
        let mut rng = SplitMix(11);
        for _ in 0..2000 {
            let w = rng.next_u64() | 1 << 63;
            let ones: Vec<u32> = (0..64).filter(|&b| w >> b & 1 == 1).collect();
            for (j, &b) in ones.iter().enumerate() {
                assert_eq!(select_bit(w, j as u32), b);
            }
        }
    }

    #[test]
    fn seeds_reproduce_and_differ() {
        let topo: Topology = "torus:6x6".parse().unwrap();
        let run = |seed| {
            let mut a = RandomNodes::new(topo.clone(), seed).unwrap();
            let g1 = a.allocate(&Request::nodes(7)).unwrap();
            let g2 = a.allocate(&Request::nodes(9)).unwrap();
            a.release(&g1).unwrap();
            let g3 = a.allocate(&Request::nodes(4)).unwrap();
            (
                g1.partition().clone(),
                g2.partition().clone(),
                g3.partition().clone(),
            )
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
        let a = RandomNodes::new(topo, 3).unwrap();
        assert_eq!(a.name(), "random[seed=3]");
        for name in [
            "random[seed=3]",
            "random[draw=modulo]",
            "random[seed=3,draw=modulo]",
        ] {
            assert_eq!(
                crate::registry::build(name, a.topology()).unwrap().name(),
                name
            );
        }
    }
}
