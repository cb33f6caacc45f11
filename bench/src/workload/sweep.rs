//! The oracle sweep's command line: which fixed search budgets to run
//! (`--budgets`) and which protocols get them (`--oracle`). bench-report
//! and rayon-bench parse both with the same [`FromStr`] impls, so that the
//! two tools take the same lists and name the variants alike.

use std::fmt;
use std::str::FromStr;

/// Fixed search budgets in µs: each becomes a variant of a protocol whose
/// policy is `IdlePolicy::fixed_budget(b)`.
///
/// ```
/// use eventcount_bench::workload::sweep::Budgets;
///
/// assert_eq!(Budgets::default().us(), &Budgets::ALL);
/// let some: Budgets = "25, 0,25".parse().unwrap();
/// assert_eq!(some.us(), &[0, 25]);
/// assert_eq!(some.to_string(), "0,25");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budgets(Vec<u32>);

impl Budgets {
    /// The sweep's budgets, from a search that ends at once to one longer
    /// than the default's upper bound (200 µs).
    pub const ALL: [u32; 7] = [0, 10, 25, 50, 100, 200, 500];

    /// The largest budget an idle policy takes: one second.
    pub const MAX_US: u32 = 1_000_000;

    /// The budgets, smallest first, each once.
    pub fn us(&self) -> &[u32] {
        &self.0
    }
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets(Self::ALL.to_vec())
    }
}

impl FromStr for Budgets {
    type Err = String;

    /// `0,10,25`: whole microseconds, comma-separated, at most one second
    /// each; sorted, and a repeated one kept once.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut budgets = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let us: u32 = part.parse().map_err(|_| {
                format!("budget '{part}' is not a whole number of microseconds, like 0,10,25")
            })?;
            if us > Self::MAX_US {
                return Err(format!(
                    "budget {us} us is above the largest an idle policy takes, {} us",
                    Self::MAX_US
                ));
            }
            budgets.push(us);
        }
        if budgets.is_empty() {
            return Err("expected at least one budget in microseconds, like 0,10,25".into());
        }
        budgets.sort_unstable();
        budgets.dedup();
        Ok(Budgets(budgets))
    }
}

impl fmt::Display for Budgets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u32::to_string).collect();
        f.write_str(&parts.join(","))
    }
}

/// A protocol the sweep can give the budgets to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Protocol {
    /// `JecSleep`.
    Jec,
    /// `NotifierSleep`.
    Notifier,
}

impl Protocol {
    /// Both, in the order the tools list them.
    pub const ALL: [Protocol; 2] = [Protocol::Jec, Protocol::Notifier];

    /// The name on the command line, and the stem of the variants' names.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Jec => "jec",
            Protocol::Notifier => "notifier",
        }
    }

    /// The name of this protocol's variant with a fixed budget of `us`:
    /// `jec@25us`.
    ///
    /// ```
    /// use eventcount_bench::workload::sweep::Protocol;
    /// assert_eq!(Protocol::Notifier.variant(0), "notifier@0us");
    /// ```
    pub fn variant(self, us: u32) -> String {
        format!("{}@{us}us", self.name())
    }
}

/// The protocols that get the budgets (`--oracle jec,notifier`).
///
/// ```
/// use eventcount_bench::workload::sweep::{Protocol, Protocols};
///
/// let jec: Protocols = "jec".parse().unwrap();
/// assert_eq!(jec.list(), &[Protocol::Jec]);
/// assert_eq!(Protocols::default().list(), &Protocol::ALL);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protocols(Vec<Protocol>);

impl Protocols {
    /// The protocols, in [`Protocol::ALL`]'s order, each once.
    pub fn list(&self) -> &[Protocol] {
        &self.0
    }
}

impl Default for Protocols {
    fn default() -> Self {
        Protocols(Protocol::ALL.to_vec())
    }
}

impl FromStr for Protocols {
    type Err = String;

    /// `jec,notifier`, `jec` or `notifier`.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut protocols = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let protocol = Protocol::ALL
                .into_iter()
                .find(|p| p.name() == part)
                .ok_or_else(|| format!("unknown protocol '{part}': expected jec or notifier"))?;
            protocols.push(protocol);
        }
        if protocols.is_empty() {
            return Err("expected jec, notifier or both, like jec,notifier".into());
        }
        protocols.sort_unstable();
        protocols.dedup();
        Ok(Protocols(protocols))
    }
}

/// The file a recorded run's idle gaps go to (`rayon-bench --record`), and
/// that `policy-sim calibrate` reads: bench, case and run, with every
/// character but letters, digits, `-` and `.` as `_`.
pub fn gap_trace_name(bench: &str, case: &str, run: &str) -> String {
    format!("{bench}-{case}-{run}.gaps")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_parse_sorted_and_once_each() {
        let b: Budgets = " 500,0 ,10,0".parse().unwrap();
        assert_eq!(b.us(), &[0, 10, 500]);
        assert_eq!(b.to_string().parse::<Budgets>().unwrap(), b);
        assert_eq!(Budgets::default().us(), &Budgets::ALL);
    }

    #[test]
    fn bad_budgets_say_what_is_wrong() {
        for (text, expected) in [
            ("", "at least one budget"),
            (",", "at least one budget"),
            ("25us", "'25us' is not a whole number"),
            ("-1", "'-1' is not a whole number"),
            ("1000001", "above the largest"),
        ] {
            let err = text.parse::<Budgets>().unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err:?}");
        }
        assert!("1000000".parse::<Budgets>().is_ok());
    }

    #[test]
    fn protocols_parse_in_a_fixed_order() {
        let p: Protocols = "notifier, jec,notifier".parse().unwrap();
        assert_eq!(p.list(), &[Protocol::Jec, Protocol::Notifier]);
        let err = "rayon".parse::<Protocols>().unwrap_err();
        assert!(err.contains("unknown protocol 'rayon'"), "{err}");
        assert!("".parse::<Protocols>().is_err());
    }

    #[test]
    fn variants_are_named_by_protocol_and_budget() {
        assert_eq!(Protocol::Jec.variant(25), "jec@25us");
    }
}
