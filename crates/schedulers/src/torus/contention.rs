//! The contention model of Gupta & Srimani §2.2: Definition 2 and
//! Theorem 1.

use super::TorusError;

/// Definition 2 (contention model): a job of duration `t` on a subtorus one
/// of whose links is shared by `others` other subtori for `overlap` time
/// units runs for `t + others · overlap / max_sharing`, where
/// `max_sharing` is the largest number of subtori that can share a link.
///
/// ```
/// use partalloc_schedulers::torus::dilated_duration;
/// // §2.2 example: two 4×4 subtori of T8×8 sharing row links (m = 2).
/// assert_eq!(dilated_duration(3.0, 1, 2.0, 2)?, 4.0);
/// # Ok::<(), partalloc_schedulers::torus::TorusError>(())
/// ```
///
/// # Errors
/// A negative or non-finite time or overlap, or `max_sharing == 0`.
pub fn dilated_duration(
    t: f64,
    others: u32,
    overlap: f64,
    max_sharing: u32,
) -> Result<f64, TorusError> {
    for (what, value) in [("duration", t), ("overlap", overlap)] {
        if !value.is_finite() || value < 0.0 {
            return Err(TorusError::BadParameter { what, value });
        }
    }
    if max_sharing == 0 {
        return Err(TorusError::BadParameter {
            what: "maximum link sharing",
            value: 0.0,
        });
    }
    Ok(t + f64::from(others) * overlap / f64::from(max_sharing))
}

/// Theorem 1: when job J_k becomes active and overlaps each earlier job J_i
/// for `overlaps[i]` time units, all competing for one link shared by at
/// most `max_sharing` subtori, each J_i's load grows by Δ_i/m and J_k's
/// load is Σ Δ_i/m. Returns (the increments, J_k's load).
///
/// ```
/// use partalloc_schedulers::torus::theorem1_loads;
/// let (inc, lk) = theorem1_loads(&[2.0, 4.0], 2)?;
/// assert_eq!(inc, [1.0, 2.0]);
/// assert_eq!(lk, 3.0);
/// # Ok::<(), partalloc_schedulers::torus::TorusError>(())
/// ```
///
/// # Errors
/// A negative or non-finite overlap, or `max_sharing == 0`.
pub fn theorem1_loads(overlaps: &[f64], max_sharing: u32) -> Result<(Vec<f64>, f64), TorusError> {
    let mut inc = Vec::with_capacity(overlaps.len());
    for &d in overlaps {
        inc.push(dilated_duration(0.0, 1, d, max_sharing)?);
    }
    let lk = inc.iter().sum();
    Ok((inc, lk))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contention_model_matches_theorem_1_proof() {
        // Proof of Theorem 1: adding J_k to n competitors adds Δ/m.
        let before = dilated_duration(5.0, 2, 3.0, 4).unwrap();
        let after = dilated_duration(5.0, 3, 3.0, 4).unwrap();
        assert_eq!(after - before, 3.0 / 4.0);
        let (inc, lk) = theorem1_loads(&[1.0, 2.0, 3.0], 4).unwrap();
        assert_eq!(inc, [0.25, 0.5, 0.75]);
        assert_eq!(lk, 1.5);
        assert!(dilated_duration(1.0, 1, f64::NAN, 2).is_err());
        assert!(dilated_duration(1.0, 1, 1.0, 0).is_err());
    }
}
