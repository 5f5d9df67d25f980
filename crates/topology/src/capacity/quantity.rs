//! Kubernetes resource quantities (`4`, `500m`, `1.5`, `16Gi`, `2e3`).

/// The one resource whose quantities are counted in thousandths, as
/// Kubernetes schedulers count CPU.
pub(crate) const MILLI_RESOURCE: &str = "cpu";

/// Parses a quantity into the unit the schedulers compare: thousandths
/// for `cpu`, whole units (rounded up) for every other resource. `None`
/// for a negative, malformed or out-of-range quantity.
pub(crate) fn parse_quantity(resource: &str, text: &str) -> Option<i64> {
    let milli = parse_milli(text.trim())?;
    if resource == MILLI_RESOURCE {
        i64::try_from(milli).ok()
    } else {
        i64::try_from(milli.div_ceil(1000)).ok()
    }
}

/// The quantity in thousandths of a unit (rounded up), non-negative.
fn parse_milli(text: &str) -> Option<u128> {
    let suffix_at = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(suffix_at);
    let number = number.strip_prefix('+').unwrap_or(number);
    // (multiplier numerator, divisor) applied to thousandths.
    let (mul, div): (u128, u128) = match suffix {
        "" => (1000, 1),
        "m" => (1, 1),
        "k" => (1000 * 1000, 1),
        "M" => (1000 * 1000u128.pow(2), 1),
        "G" => (1000 * 1000u128.pow(3), 1),
        "T" => (1000 * 1000u128.pow(4), 1),
        "P" => (1000 * 1000u128.pow(5), 1),
        "Ki" => (1000 << 10, 1),
        "Mi" => (1000 << 20, 1),
        "Gi" => (1000 << 30, 1),
        "Ti" => (1000 << 40, 1),
        "Pi" => (1000 << 50, 1),
        s if s.starts_with(['e', 'E']) => {
            let exp: u32 = s[1..].parse().ok().filter(|e| *e <= 18)?;
            (1000 * 10u128.pow(exp), 1)
        }
        _ => return None,
    };
    let (whole, frac) = match number.split_once('.') {
        Some((w, f)) => (w, f),
        None => (number, ""),
    };
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    if !whole.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if whole.len() > 19 || frac.len() > 18 {
        return None;
    }
    let whole_v: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let frac_v: u128 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    let scale = 10u128.pow(frac.len() as u32);
    let total = whole_v.checked_mul(scale)?.checked_add(frac_v)?;
    let value = total.checked_mul(mul)?.div_ceil(scale * div);
    (value <= i64::MAX as u128).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::parse_quantity;

    #[test]
    fn kubernetes_forms() {
        assert_eq!(parse_quantity("cpu", "1"), Some(1000));
        assert_eq!(parse_quantity("cpu", "500m"), Some(500));
        assert_eq!(parse_quantity("cpu", "1.5"), Some(1500));
        assert_eq!(parse_quantity("memory", "1Gi"), Some(1 << 30));
        assert_eq!(parse_quantity("memory", "4k"), Some(4000));
        assert_eq!(parse_quantity("pods", "110"), Some(110));
        assert_eq!(parse_quantity("nvidia.com/gpu", "8"), Some(8));
        assert_eq!(parse_quantity("memory", "1.5"), Some(2), "rounded up");
        assert_eq!(parse_quantity("memory", "2e3"), Some(2000));
    }

    #[test]
    fn refused_forms() {
        for bad in [
            "",
            "-1",
            "abc",
            "1x",
            "1.2.3",
            ".",
            "1Zi",
            "99999999999999999999",
        ] {
            assert_eq!(parse_quantity("cpu", bad), None, "{bad}");
        }
    }
}
