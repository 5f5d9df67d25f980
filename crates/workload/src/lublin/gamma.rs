//! The Gamma-distribution functions the model needs in closed form: the
//! regularized incomplete gamma functions (for the daily cycle's weights
//! and the acceptance of the capped draws) and the truncated exponential
//! moments E\[e^{sX}; X ≤ c\] (for the mean run time and the mean gap,
//! since the model draws the *logarithms* of run times and gaps).
//!
//! P(a, x) is summed from its power series below x = a + 1 and Q(a, x)
//! from its continued fraction (evaluated by the modified Lentz method)
//! above, the usual split in which each converges quickly.

/// Relative accuracy at which the series and continued fractions stop.
const EPS: f64 = 1e-15;
/// Iteration bound; the sums converge far sooner for the model's
/// parameters (a few hundred terms for a shape of 600).
const MAX_ITER: u32 = 100_000;
/// Stands for zero in the Lentz recurrences.
const TINY: f64 = 1e-300;

/// ln Γ(a) for a > 0.
pub(crate) fn ln_gamma(a: f64) -> f64 {
    libm::lgamma(a)
}

/// (P(a, x), Q(a, x)), the regularized lower and upper incomplete gamma
/// functions, for a > 0 and x ≥ 0 (x ≤ 0 gives (0, 1)).
pub(crate) fn gamma_pq(a: f64, x: f64) -> (f64, f64) {
    if x <= 0.0 {
        return (0.0, 1.0);
    }
    if x.is_infinite() {
        return (1.0, 0.0);
    }
    // x^a e^{-x} / Γ(a), in logarithms.
    let front = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        // P = front · Σ_{n≥0} x^n / (a (a+1) … (a+n)).
        let mut term = 1.0 / a;
        let mut sum = term;
        let mut denom = a;
        for _ in 0..MAX_ITER {
            denom += 1.0;
            term *= x / denom;
            sum += term;
            if term < sum * EPS {
                break;
            }
        }
        let p = (sum * front.exp()).min(1.0);
        (p, 1.0 - p)
    } else {
        // Q = front · 1/(x+1−a− 1·(1−a)/(x+3−a− 2·(2−a)/(x+5−a− …))).
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..MAX_ITER {
            let i = f64::from(i);
            let an = -i * (i - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < TINY {
                d = TINY;
            }
            c = b + an / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < EPS {
                break;
            }
        }
        let q = (h * front.exp()).clamp(0.0, 1.0);
        (1.0 - q, q)
    }
}

/// P(X ≤ c) for X ~ Gamma(shape `a`, scale `b`).
pub(crate) fn gamma_cdf(a: f64, b: f64, c: f64) -> f64 {
    gamma_pq(a, c / b).0
}

/// E\[e^{sX}; X ≤ c\] for X ~ Gamma(shape `a`, scale `b`), s ≥ 0, c > 0:
/// ∫₀^c e^{sx} x^{a−1} e^{−x/b} dx / (Γ(a) b^a).
///
/// With r = 1/b − s > 0 the integrand is another Gamma density up to a
/// factor: the moment is (1 − s·b)^{−a} · P(a, r·c). With r ≤ 0 (the
/// untruncated moment would be infinite) it is (c/b)^a / Γ(a) ·
/// Σ_{n≥0} u^n / (n! (a+n)) with u = −r·c, a sum of positive terms.
pub(crate) fn exp_moment(a: f64, b: f64, s: f64, c: f64) -> f64 {
    let r = 1.0 / b - s;
    if r > 0.0 {
        (-a * (b * r).ln()).exp() * gamma_pq(a, r * c).0
    } else {
        let u = -r * c;
        let mut term = 1.0 / a;
        let mut sum = term;
        for n in 1..MAX_ITER {
            let n = f64::from(n);
            term *= u * (a + n - 1.0) / (n * (a + n));
            sum += term;
            if term < sum * EPS {
                break;
            }
        }
        (a * (c / b).ln() - ln_gamma(a) + sum.ln()).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Simpson's rule on [0, c] with `n` (even) panels of g(x) = e^{sx}
    /// times the Gamma(a, b) density: an independent oracle for
    /// `exp_moment`.
    fn simpson(a: f64, b: f64, s: f64, c: f64, n: u32) -> f64 {
        let norm = ln_gamma(a) + a * b.ln();
        let g = |x: f64| {
            if x <= 0.0 {
                0.0
            } else {
                (s * x + (a - 1.0) * x.ln() - x / b - norm).exp()
            }
        };
        let h = c / f64::from(n);
        let mut sum = g(0.0) + g(c);
        for i in 1..n {
            let w = if i % 2 == 1 { 4.0 } else { 2.0 };
            sum += w * g(h * f64::from(i));
        }
        sum * h / 3.0
    }

    #[test]
    fn incomplete_gamma_agrees_with_statrs() {
        // The model's shapes (0.5 … 640) over both branches of the split.
        for &a in &[0.5, 1.0, 3.8351, 6.1271, 8.9186, 10.46, 312.0, 639.1] {
            for &f in &[0.01, 0.3, 0.9, 1.0, 1.1, 1.5, 3.0, 10.0] {
                let x = a * f;
                let (p, q) = gamma_pq(a, x);
                let want = statrs::function::gamma::gamma_lr(a, x);
                assert!((p - want).abs() < 1e-12, "P({a}, {x}) = {p}, statrs {want}");
                assert!((p + q - 1.0).abs() < 1e-15);
            }
        }
        assert_eq!(gamma_pq(2.0, 0.0), (0.0, 1.0));
        assert_eq!(gamma_pq(2.0, f64::INFINITY), (1.0, 0.0));
        // P(1, x) = 1 − e^{−x} exactly.
        assert!((gamma_pq(1.0, 2.0).0 - (1.0 - (-2.0f64).exp())).abs() < 1e-15);
    }

    #[test]
    fn truncated_exponential_moments_agree_with_quadrature() {
        // (a, b, s, c): r > 0, r = 0 and r < 0, at the model's caps.
        let cases = [
            (6.57, 0.823, 1.0, 12.0),
            (639.1, 0.0156, 1.0, 12.0),
            (639.1, 0.0156, 2.0, 12.0),
            (6.355, 0.8531, 1.0, 13.0),
            (6.355, 0.8531, 2.0, 13.0),
            (2.0, 0.5, 2.0, 10.0),
            (10.46, 0.4871, 2.0, 13.0),
            (4.2, 0.94, 2.0, 12.0),
            (3.0, 1.5, 1.0, 8.0),
        ];
        for (a, b, s, c) in cases {
            let got = exp_moment(a, b, s, c);
            let want = simpson(a, b, s, c, 200_000);
            assert!(
                (got - want).abs() <= 1e-9 * want,
                "E[e^({s}X); X <= {c}] for Gamma({a}, {b}): {got}, quadrature {want}"
            );
        }
        // s = 0 is the distribution function.
        assert!((exp_moment(6.57, 0.823, 0.0, 12.0) - gamma_cdf(6.57, 0.823, 12.0)).abs() < 1e-15);
    }
}
