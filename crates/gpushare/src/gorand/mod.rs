//! Go's `math/rand` generator, value for value.
//!
//! The FGD artifact draws every random choice (pod shuffle, workload tuning,
//! node naming, the Random policy) from Go's global `math/rand` source, so
//! reproducing its experiments needs that exact stream. [`GoRand`] is the
//! additive lagged Fibonacci generator of Go's `rngSource` (lags 607 and
//! 273, seeded by the Park–Miller sequence `seedrand` mixed with 607
//! precomputed words) and the derived draws of Go's `*Rand` as of Go 1.20
//! (the same from Go 1.10, which added `Shuffle`, to 1.20): [`GoRand::int63`],
//! [`GoRand::int`], [`GoRand::int31n`], [`GoRand::intn`],
//! [`GoRand::int63n`], [`GoRand::float64`], [`GoRand::perm`] and
//! [`GoRand::shuffle`] (which uses Lemire's multiply-shift bound).

mod cooked;

const LEN: usize = 607;
const TAP: usize = 273;
const INT32_MAX: i64 = (1 << 31) - 1;

/// Go's `math/rand` source seeded with `rand.Seed(seed)`.
#[derive(Clone)]
pub struct GoRand {
    tap: usize,
    feed: usize,
    vec: [i64; LEN],
}

impl std::fmt::Debug for GoRand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoRand")
            .field("tap", &self.tap)
            .field("feed", &self.feed)
            .finish_non_exhaustive()
    }
}

/// One step of the Park–Miller minimal standard generator
/// x ← 48271·x mod (2³¹ − 1), in Schrage's overflow-free form as Go writes it.
fn seed_step(x: i32) -> i32 {
    const A: i32 = 48271;
    const Q: i32 = 44488;
    const R: i32 = 3399;
    let hi = x / Q;
    let lo = x % Q;
    let mut x = A * lo - R * hi;
    if x < 0 {
        x += INT32_MAX as i32;
    }
    x
}

impl GoRand {
    /// The state after Go's `rand.Seed(seed)`.
    #[must_use]
    pub fn new(seed: i64) -> Self {
        let mut seed = seed % INT32_MAX;
        if seed < 0 {
            seed += INT32_MAX;
        }
        if seed == 0 {
            seed = 89_482_311;
        }
        // In range 1..2^31-1 after the reduction above.
        let mut x = i32::try_from(seed).unwrap_or(1);
        let mut vec = [0_i64; LEN];
        for i in -20_i32..LEN as i32 {
            x = seed_step(x);
            if let Ok(i) = usize::try_from(i) {
                let mut u = i64::from(x) << 40;
                x = seed_step(x);
                u ^= i64::from(x) << 20;
                x = seed_step(x);
                u ^= i64::from(x);
                u ^= cooked::COOKED[i];
                vec[i] = u;
            }
        }
        GoRand {
            tap: 0,
            feed: LEN - TAP,
            vec,
        }
    }

    /// The next 64 bits of the register (Go's `rngSource.Uint64`).
    pub fn uint64(&mut self) -> u64 {
        self.tap = if self.tap == 0 { LEN - 1 } else { self.tap - 1 };
        self.feed = if self.feed == 0 {
            LEN - 1
        } else {
            self.feed - 1
        };
        let x = self.vec[self.feed].wrapping_add(self.vec[self.tap]);
        self.vec[self.feed] = x;
        x as u64
    }

    /// A non-negative 63-bit integer (`Int63`).
    pub fn int63(&mut self) -> i64 {
        (self.uint64() & (u64::MAX >> 1)) as i64
    }

    /// `Int` on a 64-bit platform: `Int63` as an `int`.
    pub fn int(&mut self) -> i64 {
        self.int63()
    }

    /// The high 31 bits of `Int63` (`Int31`).
    pub fn int31(&mut self) -> i32 {
        (self.int63() >> 32) as i32
    }

    /// The high 32 bits of `Int63` (`Uint32`).
    pub fn uint32(&mut self) -> u32 {
        (self.int63() >> 31) as u32
    }

    /// `Int63n`: uniform in `0..n` by rejection of the top partial range.
    /// Returns 0 for `n <= 0`, where Go panics.
    pub fn int63n(&mut self, n: i64) -> i64 {
        if n <= 0 {
            return 0;
        }
        if n & (n - 1) == 0 {
            return self.int63() & (n - 1);
        }
        let max = i64::MAX - ((1_u64 << 63) % n as u64) as i64;
        let mut v = self.int63();
        while v > max {
            v = self.int63();
        }
        v % n
    }

    /// `Int31n`: uniform in `0..n` by rejection (the form `Intn` uses).
    /// Returns 0 for `n <= 0`, where Go panics.
    pub fn int31n(&mut self, n: i32) -> i32 {
        if n <= 0 {
            return 0;
        }
        if n & (n - 1) == 0 {
            return self.int31() & (n - 1);
        }
        let max = i32::MAX - ((1_u32 << 31) % n as u32) as i32;
        let mut v = self.int31();
        while v > max {
            v = self.int31();
        }
        v % n
    }

    /// Lemire's multiply-shift bound (Go's unexported `int31n`, used by
    /// `Shuffle`). Returns 0 for `n <= 0`.
    pub fn int31n_lemire(&mut self, n: i32) -> i32 {
        if n <= 0 {
            return 0;
        }
        let n = n as u32;
        let mut prod = u64::from(self.uint32()) * u64::from(n);
        let mut low = prod as u32;
        if low < n {
            let thresh = n.wrapping_neg() % n;
            while low < thresh {
                prod = u64::from(self.uint32()) * u64::from(n);
                low = prod as u32;
            }
        }
        (prod >> 32) as i32
    }

    /// `Intn`: `Int31n` below 2³¹, else `Int63n`. Returns 0 for `n == 0`.
    pub fn intn(&mut self, n: usize) -> usize {
        if n <= i32::MAX as usize {
            self.int31n(n as i32) as usize
        } else {
            self.int63n(i64::try_from(n).unwrap_or(i64::MAX)) as usize
        }
    }

    /// `Float64`: `Int63 / 2⁶³`, drawn again on the (unreachable in
    /// practice) value 1.
    pub fn float64(&mut self) -> f64 {
        loop {
            let f = self.int63() as f64 / 9_223_372_036_854_775_808.0;
            if f < 1.0 {
                return f;
            }
        }
    }

    /// `Perm(n)`: the inside-out Fisher–Yates permutation of `0..n`.
    pub fn perm(&mut self, n: usize) -> Vec<usize> {
        let mut m = vec![0; n];
        for i in 0..n {
            let j = self.intn(i + 1);
            m[i] = m[j];
            m[j] = i;
        }
        m
    }

    /// `Shuffle(n, swap)`: Fisher–Yates from the last index down, with
    /// `Int63n` above 2³¹ − 2 and Lemire's bound below.
    pub fn shuffle<F: FnMut(usize, usize)>(&mut self, n: usize, mut swap: F) {
        if n == 0 {
            return;
        }
        let mut i = n - 1;
        while i > (i32::MAX - 1) as usize {
            let j = self.int63n(i as i64 + 1) as usize;
            swap(i, j);
            i -= 1;
        }
        while i > 0 {
            let j = self.int31n_lemire(i as i32 + 1) as usize;
            swap(i, j);
            i -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::GoRand;

    // Values printed by go1.19.8 linux/amd64 running
    // scripts/fgd-gorand-golden/main.go (math/rand is the same in Go 1.20,
    // the artifact's Docker image). One line per seed: Int, Int63 ×2,
    // Intn(100), Intn(8152), Intn(1<<20), Intn(3e9), Int63n(1e15+7),
    // Float64 ×2, Perm(12), Shuffle of 0..12, Perm(1213)[0, 606, 1212].
    struct Golden {
        seed: i64,
        int: i64,
        int63: [i64; 2],
        intn: [usize; 4],
        int63n: i64,
        float: [f64; 2],
        perm: [usize; 12],
        shuffle: [usize; 12],
        perm1213: [usize; 3],
    }

    const GOLDEN: [Golden; 4] = [
        Golden {
            seed: 42,
            int: 3440579354231278675,
            int63: [608747136543856411, 5571782338101878760],
            intn: [50, 887, 817761, 1883513247],
            int63n: 887102062589393,
            float: [0.3830446530497163, 0.6463763506057989],
            perm: [3, 7, 4, 6, 9, 2, 11, 1, 8, 10, 0, 5],
            shuffle: [9, 11, 5, 4, 1, 10, 8, 7, 0, 6, 2, 3],
            perm1213: [1026, 586, 862],
        },
        Golden {
            seed: 0,
            int: 8717895732742165505,
            int63: [2259404117704393152, 6050128673802995827],
            intn: [6, 4899, 897504, 286980153],
            int63n: 372234677380148,
            float: [0.897169713149801, 0.16735444255905835],
            perm: [11, 8, 7, 6, 9, 3, 0, 4, 10, 2, 1, 5],
            shuffle: [8, 5, 7, 0, 9, 4, 1, 3, 11, 10, 2, 6],
            perm1213: [878, 877, 404],
        },
        Golden {
            seed: -7,
            int: 747107023976529931,
            int63: [7084732931963018726, 6995717851144434728],
            intn: [56, 3083, 343306, 77599753],
            int63n: 507135134322885,
            float: [0.9778292511803884, 0.3383255918017162],
            perm: [3, 7, 6, 9, 10, 0, 5, 4, 11, 8, 1, 2],
            shuffle: [7, 3, 5, 9, 8, 1, 0, 4, 11, 6, 10, 2],
            perm1213: [550, 130, 888],
        },
        Golden {
            seed: 1 << 40,
            int: 5470237361722394362,
            int63: [6322525149314491254, 1177463506020107830],
            intn: [73, 1277, 975798, 946297451],
            int63n: 136678859664547,
            float: [0.21287917289821717, 0.3553390949801088],
            perm: [10, 1, 11, 0, 6, 5, 9, 2, 3, 8, 7, 4],
            shuffle: [9, 5, 1, 4, 10, 7, 11, 3, 0, 8, 2, 6],
            perm1213: [1034, 1116, 1193],
        },
    ];

    #[test]
    fn streams_match_go() {
        for g in &GOLDEN {
            let mut r = GoRand::new(g.seed);
            assert_eq!(r.int(), g.int, "seed {}", g.seed);
            assert_eq!([r.int63(), r.int63()], g.int63, "seed {}", g.seed);
            let intn = [
                r.intn(100),
                r.intn(8152),
                r.intn(1 << 20),
                r.intn(3_000_000_000),
            ];
            assert_eq!(intn, g.intn, "seed {}", g.seed);
            assert_eq!(r.int63n(1_000_000_000_000_007), g.int63n, "seed {}", g.seed);
            assert_eq!([r.float64(), r.float64()], g.float, "seed {}", g.seed);
            assert_eq!(r.perm(12), g.perm, "seed {}", g.seed);
            let mut s: Vec<usize> = (0..12).collect();
            r.shuffle(s.len(), |i, j| s.swap(i, j));
            assert_eq!(s, g.shuffle, "seed {}", g.seed);
            let p = r.perm(1213);
            assert_eq!([p[0], p[606], p[1212]], g.perm1213, "seed {}", g.seed);
        }
    }

    #[test]
    fn seeds_equal_modulo_the_park_miller_modulus_give_one_stream() {
        // Go reduces the seed modulo 2^31 - 1 and maps 0 to a fixed value.
        let mut a = GoRand::new(5);
        let mut b = GoRand::new(5 + (1 << 31) - 1);
        for _ in 0..1000 {
            assert_eq!(a.uint64(), b.uint64());
        }
    }

    #[test]
    fn bounded_draws_stay_in_range() {
        let mut r = GoRand::new(1);
        for n in [1_usize, 2, 3, 7, 100, 1213, 1 << 31, 3_000_000_000] {
            for _ in 0..200 {
                assert!(r.intn(n) < n);
            }
        }
        for n in [1_i32, 3, 1000, i32::MAX] {
            for _ in 0..200 {
                let v = r.int31n_lemire(n);
                assert!((0..n).contains(&v));
            }
        }
        let p = r.perm(1000);
        let mut seen = vec![false; 1000];
        for &x in &p {
            assert!(!seen[x]);
            seen[x] = true;
        }
    }
}
