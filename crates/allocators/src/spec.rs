//! Parsing of strategy names with parameters, e.g. `partner-ext[delta=2]`.

use core::fmt;
use core::str::FromStr;

use thiserror::Error;

/// A strategy name with its parameters: `name` or `name[key=value,…]`.
///
/// A value may itself contain commas when the next item has no `=`:
/// `gray-code[g=2,3,1]` is one parameter `g` with value `2,3,1`.
///
/// ```
/// use partalloc_allocators::StrategySpec;
/// let s: StrategySpec = "gray-code[g=2,3,1]".parse()?;
/// assert_eq!(s.name(), "gray-code");
/// assert_eq!(s.get("g"), Some("2,3,1"));
/// let p: StrategySpec = "partner-ext[delta=inf]".parse()?;
/// assert_eq!(p.get("delta"), Some("inf"));
/// # Ok::<(), partalloc_allocators::SpecError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StrategySpec {
    name: String,
    params: Vec<(String, String)>,
}

/// A malformed or unacceptable strategy description.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The text is not of the form `name` or `name[key=value,…]`.
    #[error("malformed strategy {text:?}: {reason}")]
    Malformed {
        /// The text given.
        text: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A parameter the strategy does not have.
    #[error("{strategy} has no parameter {param:?}; its parameters are: {known}")]
    UnknownParameter {
        /// The strategy.
        strategy: String,
        /// The parameter given.
        param: String,
        /// The parameters it has.
        known: String,
    },
    /// A parameter value that does not parse or is out of range.
    #[error("{strategy}: invalid value {value:?} for {param}: {reason}")]
    InvalidValue {
        /// The strategy.
        strategy: String,
        /// The parameter.
        param: String,
        /// The value given.
        value: String,
        /// What is expected.
        reason: String,
    },
}

impl StrategySpec {
    /// A spec with no parameters.
    #[must_use]
    pub fn bare(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            params: Vec::new(),
        }
    }

    /// This spec with one more parameter, for a spec built in code rather
    /// than parsed from text.
    ///
    /// ```
    /// use partalloc_allocators::StrategySpec;
    /// let s = StrategySpec::bare("partner-ext").with("delta", 2);
    /// assert_eq!(s.to_string(), "partner-ext[delta=2]");
    /// assert_eq!(s, "partner-ext[delta=2]".parse()?);
    /// # Ok::<(), partalloc_allocators::SpecError>(())
    /// ```
    #[must_use]
    pub fn with(mut self, key: &str, value: impl core::fmt::Display) -> Self {
        self.params.push((key.to_owned(), value.to_string()));
        self
    }

    /// The strategy name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parameters in the order given.
    #[must_use]
    pub fn params(&self) -> &[(String, String)] {
        &self.params
    }

    /// The value of parameter `key`, if given.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Fails on any parameter not in `known`.
    ///
    /// # Errors
    /// [`SpecError::UnknownParameter`] naming the known ones.
    pub fn check_known(&self, known: &[&str]) -> Result<(), SpecError> {
        for (k, _) in &self.params {
            if !known.contains(&k.as_str()) {
                return Err(SpecError::UnknownParameter {
                    strategy: partalloc_topology::echo(&self.name),
                    param: partalloc_topology::echo(k),
                    known: if known.is_empty() {
                        "(none)".to_owned()
                    } else {
                        known.join(", ")
                    },
                });
            }
        }
        Ok(())
    }

    /// Parameter `key` parsed as `T`, or `default` if absent.
    ///
    /// # Errors
    /// [`SpecError::InvalidValue`] if present but unparsable.
    pub fn parse_or<T: FromStr>(&self, key: &str, default: T) -> Result<T, SpecError>
    where
        T::Err: fmt::Display,
    {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse()
                .map_err(|e: T::Err| SpecError::InvalidValue {
                    strategy: partalloc_topology::echo(&self.name),
                    param: partalloc_topology::echo(key),
                    value: partalloc_topology::echo(v),
                    reason: e.to_string(),
                }),
        }
    }

    /// Parameter `key` as one of a fixed set of values: `choices` pairs each
    /// accepted text with its value, the first being the default when the
    /// parameter is absent. Surrounding spaces are ignored.
    ///
    /// # Errors
    /// [`SpecError::InvalidValue`] listing the accepted texts.
    pub fn choice<T: Copy>(&self, key: &str, choices: &[(&str, T)]) -> Result<T, SpecError> {
        let Some(v) = self.get(key).map(str::trim) else {
            return choices
                .first()
                .map(|&(_, t)| t)
                .ok_or_else(|| self.invalid(key, "no value is accepted"));
        };
        if let Some(&(_, t)) = choices.iter().find(|(name, _)| *name == v) {
            return Ok(t);
        }
        let mut expected = String::from("expected ");
        for (i, (name, _)) in choices.iter().enumerate() {
            if i > 0 {
                expected.push_str(if i + 1 == choices.len() { " or " } else { ", " });
            }
            expected.push_str(name);
        }
        Err(self.invalid(key, expected))
    }

    /// Parameter `key` as a positive count, or `None` when it is absent
    /// or `none` (the documented default of such a parameter).
    ///
    /// ```
    /// use partalloc_allocators::StrategySpec;
    /// let s: StrategySpec = "block[segment=6,switches=none]".parse()?;
    /// assert_eq!(s.count_or_none("segment")?, Some(6));
    /// assert_eq!(s.count_or_none("switches")?, None);
    /// assert_eq!(s.count_or_none("other")?, None);
    /// assert!("b[segment=0]".parse::<StrategySpec>()?.count_or_none("segment").is_err());
    /// # Ok::<(), partalloc_allocators::SpecError>(())
    /// ```
    ///
    /// # Errors
    /// [`SpecError::InvalidValue`] for anything else.
    pub fn count_or_none(&self, key: &str) -> Result<Option<u32>, SpecError> {
        match self.get(key).map(str::trim) {
            None | Some("none") => Ok(None),
            Some(v) => v
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .map(Some)
                .ok_or_else(|| self.invalid(key, "a positive whole number, or none")),
        }
    }

    /// A [`SpecError::InvalidValue`] for parameter `key`.
    #[must_use]
    pub fn invalid(&self, key: &str, reason: impl Into<String>) -> SpecError {
        SpecError::InvalidValue {
            strategy: partalloc_topology::echo(&self.name),
            param: partalloc_topology::echo(key),
            value: partalloc_topology::echo(self.get(key).unwrap_or_default()),
            reason: reason.into(),
        }
    }
}

impl FromStr for StrategySpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, SpecError> {
        let err = |reason| SpecError::Malformed {
            text: partalloc_topology::echo(s),
            reason,
        };
        let s = s.trim();
        let (name, rest) = match s.split_once('[') {
            None => (s, None),
            Some((n, r)) => (
                n,
                Some(
                    r.strip_suffix(']')
                        .ok_or_else(|| err("missing closing ']'"))?,
                ),
            ),
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(err("empty name"));
        }
        if name.contains([']', '=', ',', ' ']) {
            return Err(err("the name may not contain ']', '=', ',' or spaces"));
        }
        let mut params: Vec<(String, String)> = Vec::new();
        for item in rest.into_iter().flat_map(|r| r.split(',')) {
            let item = item.trim();
            match item.split_once('=') {
                Some((k, v)) => {
                    let k = k.trim();
                    if k.is_empty() {
                        return Err(err("a parameter has an empty name"));
                    }
                    if params.iter().any(|(p, _)| p == k) {
                        return Err(err("a parameter is given twice"));
                    }
                    params.push((k.to_owned(), v.trim().to_owned()));
                }
                // A comma inside a value, as in g=2,3,1.
                None => match params.last_mut() {
                    Some((_, v)) if !item.is_empty() => {
                        v.push(',');
                        v.push_str(item);
                    }
                    _ if item.is_empty() && rest == Some("") => {}
                    _ => return Err(err("expected key=value inside the brackets")),
                },
            }
        }
        Ok(Self {
            name: name.to_owned(),
            params,
        })
    }
}

/// Printed in the form it parses from.
impl fmt::Display for StrategySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if !self.params.is_empty() {
            f.write_str("[")?;
            for (i, (k, v)) in self.params.iter().enumerate() {
                if i > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{k}={v}")?;
            }
            f.write_str("]")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_takes_the_first_by_default_and_lists_the_accepted_values() {
        let choices = [("up", 1), ("down", 2), ("sideways", 3)];
        let pick = |text: &str| {
            text.parse::<StrategySpec>()
                .unwrap()
                .choice("dir", &choices)
        };
        assert_eq!(pick("s"), Ok(1));
        assert_eq!(pick("s[dir= down ]"), Ok(2));
        assert_eq!(pick("s[dir=sideways]"), Ok(3));
        let err = pick("s[dir=Up]").unwrap_err();
        assert_eq!(
            err,
            SpecError::InvalidValue {
                strategy: "s".into(),
                param: "dir".into(),
                value: "Up".into(),
                reason: "expected up, down or sideways".into(),
            }
        );
        let none: [(&str, u8); 0] = [];
        assert!(
            "s".parse::<StrategySpec>()
                .unwrap()
                .choice("dir", &none)
                .is_err()
        );
    }

    #[test]
    fn round_trips() {
        for text in [
            "buddy",
            "partner-ext[delta=2]",
            "gray-code[g=2,3,1]",
            "x[a=1,b=c]",
        ] {
            let s: StrategySpec = text.parse().unwrap();
            assert_eq!(s.to_string(), text);
        }
        let s: StrategySpec = "etc[]".parse().unwrap();
        assert!(s.params().is_empty());
    }

    #[test]
    fn malformed() {
        for bad in ["", "[a=1]", "x[a=1", "x[1]", "x[a=1,a=2]", "x[=3]"] {
            assert!(bad.parse::<StrategySpec>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn typed_values() {
        let s: StrategySpec = "fsl[rf=yes]".parse().unwrap();
        assert!(s.parse_or("rf", true).is_err());
        assert_eq!(s.parse_or("other", 3u32), Ok(3));
        let e = s.check_known(&["mode"]).unwrap_err().to_string();
        assert!(
            e.contains("no parameter \"rf\"") && e.contains("mode"),
            "{e}"
        );
    }
}
