//! `policy/cooldown.yaml`: how often the agent may restart or redeploy one service. The file
//! mirror ([`BudgetsFile`], unknown keys refused) and the validated [`Budgets`]: a budget per
//! [`Class`] (`max` calls in any `window`), per-service overrides by key (`api`, `shop/api`,
//! `ie01:jellyfin`), and how a container id is told from a name.
//!
//! Which calls belong to a class is said by the tool policies (`cooldown: restart` on a rule).
//! This module reads and validates; counting and judging live in `crate::cooldown`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The kinds of remediation a budget limits. They are the two lists Claude Ops keeps per
/// service (`restart_timestamps`, `redeployment_timestamps`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Restarting, starting, stopping or killing a container, compose service or unit.
    Restart,
    /// Rebuilding, recreating or pulling it anew (`compose up --build`, `--force-recreate`).
    Redeploy,
}

impl Class {
    pub const ALL: [Class; 2] = [Class::Restart, Class::Redeploy];

    pub fn name(self) -> &'static str {
        match self {
            Class::Restart => "restart",
            Class::Redeploy => "redeploy",
        }
    }

    /// The plural noun in messages: `2/2 restarts`.
    pub fn plural(self) -> &'static str {
        match self {
            Class::Restart => "restarts",
            Class::Redeploy => "redeployments",
        }
    }

    /// The noun for a count of `n`: `1 redeployment`, `2 restarts`.
    pub fn noun(self, n: usize) -> &'static str {
        match (self, n) {
            (Class::Restart, 1) => "restart",
            (Class::Redeploy, 1) => "redeployment",
            _ => self.plural(),
        }
    }

    /// The key of this class's list in Claude Ops' state file.
    pub fn state_key(self) -> &'static str {
        match self {
            Class::Restart => "restart_timestamps",
            Class::Redeploy => "redeployment_timestamps",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// At most `max` calls in any `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Budget {
    pub max: u32,
    #[serde(serialize_with = "ser_window")]
    pub window: Duration,
}

fn ser_window<S: serde::Serializer>(w: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&window_text(*w))
}

/// `4h`, `24h`, `90m`, `45s`, `2d`: the largest unit that divides the window.
pub fn window_text(w: Duration) -> String {
    let s = w.as_secs();
    // Days only past 48 hours: `24h` reads better than `1d` next to Claude Ops' own wording.
    for (unit, n) in [("d", 86_400), ("h", 3600), ("m", 60)] {
        if s > 0 && s.is_multiple_of(n) && (unit != "d" || s > 48 * 3600) {
            return format!("{}{unit}", s / n);
        }
    }
    format!("{s}s")
}

/// `<n>s`, `<n>m`, `<n>h` or `<n>d`, more than zero.
pub fn parse_window(s: &str) -> std::result::Result<Duration, String> {
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("window {s:?} is not a number and a unit (4h, 30m, 1d)"))?;
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("window {s:?}: the unit is s, m, h or d")),
    };
    match n.checked_mul(secs) {
        Some(0) => Err(format!("window {s:?} is empty")),
        Some(t) if t <= 366 * 86_400 => Ok(Duration::from_secs(t)),
        _ => Err(format!("window {s:?} is longer than a year")),
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetFile {
    pub max: u32,
    pub window: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdsFile {
    #[serde(default)]
    pub min_length: Option<usize>,
    #[serde(default)]
    pub names: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetsFile {
    pub budgets: BTreeMap<Class, BudgetFile>,
    #[serde(default)]
    pub services: BTreeMap<String, BTreeMap<Class, BudgetFile>>,
    #[serde(default)]
    pub ids: IdsFile,
}

/// The validated budgets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budgets {
    pub source: String,
    pub default: BTreeMap<Class, Budget>,
    /// Per service key, the classes it overrides.
    pub services: BTreeMap<String, BTreeMap<Class, Budget>>,
    /// A container word of at least this many lower-case hexadecimal digits is an id.
    pub id_min_length: usize,
    /// Words that look like ids but are container names in this install.
    pub id_names: Vec<String>,
}

/// The shortest container id prefix taken as an id when the policy does not say.
pub const ID_MIN_LENGTH: usize = 4;

const EMBEDDED_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/policy/cooldown.json"));
/// The shipped budgets, as YAML (for `tiershim policy check` and the tests).
#[cfg(test)]
pub const YAML: &str = include_str!("../../policy/cooldown.yaml");
pub const FILE_NAME: &str = "cooldown.yaml";

fn err(source: &str, msg: impl Into<String>) -> Error {
    Error::Policy {
        source_name: source.to_string(),
        msg: msg.into(),
    }
}

impl Budgets {
    pub fn embedded() -> Result<Budgets> {
        let source = format!("(embedded)/{FILE_NAME}");
        let f: BudgetsFile = serde_json::from_str(EMBEDDED_JSON).map_err(|e| err(&source, e.to_string()))?;
        Budgets::validate(f, source)
    }

    pub fn from_yaml(text: &str, source: String) -> Result<Budgets> {
        let f: BudgetsFile = serde_yaml_ng::from_str(text).map_err(|e| err(&source, super::serde_msg(&e)))?;
        Budgets::validate(f, source)
    }

    /// `<dir>/cooldown.yaml` from the install's override policy directory when it has one,
    /// else the embedded budgets.
    pub fn load(override_dir: Option<&Path>) -> Result<Budgets> {
        let Some(dir) = override_dir else {
            return Budgets::embedded();
        };
        super::check_dir(dir)?;
        let path = dir.join(FILE_NAME);
        match std::fs::read_to_string(&path) {
            Ok(t) => Budgets::from_yaml(&t, path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && std::fs::symlink_metadata(&path).is_err() => Budgets::embedded(),
            // A link to nothing is refused, as in `Policy::load`.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(err(
                &path.display().to_string(),
                "is a symbolic link to a file that does not exist; point it at the file, or remove it to use the embedded budgets",
            )),
            Err(e) => Err(err(&path.display().to_string(), format!("cannot read: {e}"))),
        }
    }

    fn validate(f: BudgetsFile, source: String) -> Result<Budgets> {
        let budget = |at: &str, b: &BudgetFile| -> Result<Budget> {
            let window = parse_window(&b.window).map_err(|e| err(&source, format!("{at}: {e}")))?;
            Ok(Budget { max: b.max, window })
        };
        let mut default = BTreeMap::new();
        for class in Class::ALL {
            let b = f
                .budgets
                .get(&class)
                .ok_or_else(|| err(&source, format!("`budgets.{class}` is missing (max and window)")))?;
            default.insert(class, budget(&format!("budgets.{class}"), b)?);
        }
        let mut services = BTreeMap::new();
        for (key, classes) in &f.services {
            if key.is_empty() || key.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(err(
                    &source,
                    format!("`services`: {key:?} is not a service key (api, shop/api, ie01:jellyfin)"),
                ));
            }
            let mut m = BTreeMap::new();
            for (class, b) in classes {
                m.insert(*class, budget(&format!("services.{key}.{class}"), b)?);
            }
            services.insert(key.clone(), m);
        }
        let id_min_length = f.ids.min_length.unwrap_or(ID_MIN_LENGTH);
        if !(1..=64).contains(&id_min_length) {
            return Err(err(&source, format!("`ids.min_length: {id_min_length}` is not 1 to 64")));
        }
        Ok(Budgets {
            source,
            default,
            services,
            id_min_length,
            id_names: f.ids.names,
        })
    }

    /// The budget of `class` for the service `key`: its own when the policy names one, else the
    /// class default.
    pub fn budget(&self, key: &str, class: Class) -> Budget {
        self.services
            .get(key)
            .and_then(|m| m.get(&class))
            .or_else(|| self.default.get(&class))
            .copied()
            .unwrap_or(Budget {
                max: 0,
                window: Duration::from_secs(86_400),
            })
    }

    /// Whether a container word may name a container by id (docker takes any unique prefix of
    /// one): lower-case hexadecimal digits only, with a decimal digit among them or at least
    /// `ids.min_length` long, and not listed in `ids.names`. A short word of the letters a–f
    /// alone (`db`, `cafe`) is taken as the name it reads as.
    pub fn is_id(&self, word: &str) -> bool {
        !word.is_empty()
            && word.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            && (word.len() >= self.id_min_length || word.bytes().any(|b| b.is_ascii_digit()))
            && !self.id_names.iter().any(|n| n == word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_budgets_are_two_restarts_in_4h_and_one_redeploy_in_24h() {
        let b = Budgets::embedded().unwrap();
        assert_eq!(b, Budgets::from_yaml(YAML, b.source.clone()).unwrap());
        assert_eq!(
            b.budget("anything", Class::Restart),
            Budget {
                max: 2,
                window: Duration::from_secs(4 * 3600)
            }
        );
        assert_eq!(
            b.budget("anything", Class::Redeploy),
            Budget {
                max: 1,
                window: Duration::from_secs(24 * 3600)
            }
        );
    }

    #[test]
    fn a_service_overrides_only_the_classes_it_names() {
        let b = Budgets::from_yaml(
            "budgets: {restart: {max: 2, window: 4h}, redeploy: {max: 1, window: 1d}}\n\
             services: {\"ie01:jellyfin\": {restart: {max: 5, window: 30m}}}\n",
            "t".into(),
        )
        .unwrap();
        assert_eq!(b.budget("ie01:jellyfin", Class::Restart).max, 5);
        assert_eq!(b.budget("ie01:jellyfin", Class::Restart).window, Duration::from_secs(1800));
        assert_eq!(b.budget("ie01:jellyfin", Class::Redeploy).max, 1);
        assert_eq!(b.budget("jellyfin", Class::Restart).max, 2);
    }

    #[test]
    fn bad_budget_files_are_refused_naming_the_key() {
        for (text, want) in [
            ("budgets: {restart: {max: 2, window: 4h}}\n", "`budgets.redeploy` is missing"),
            (
                "budgets: {restart: {max: 2, window: 4x}, redeploy: {max: 1, window: 1d}}\n",
                "budgets.restart: window \"4x\"",
            ),
            (
                "budgets: {restart: {max: 2, window: 0h}, redeploy: {max: 1, window: 1d}}\n",
                "is empty",
            ),
            ("budgets: {restart: {max: -1, window: 4h}, redeploy: {max: 1, window: 1d}}\n", "t"),
            ("budgets: {reboot: {max: 1, window: 4h}}\n", "unknown variant `reboot`"),
            (
                "budgets: {restart: {max: 2, window: 4h}, redeploy: {max: 1, window: 1d}}\ntypo: 1\n",
                "unknown field `typo`",
            ),
            (
                "budgets: {restart: {max: 2, window: 4h}, redeploy: {max: 1, window: 1d}}\nservices: {\"a b\": {}}\n",
                "is not a service key",
            ),
            (
                "budgets: {restart: {max: 2, window: 4h}, redeploy: {max: 1, window: 1d}}\nids: {min_length: 0}\n",
                "`ids.min_length: 0`",
            ),
        ] {
            let e = Budgets::from_yaml(text, "t".into()).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn windows_read_and_print_in_their_largest_unit() {
        for (text, secs, shown) in [
            ("4h", 14_400, "4h"),
            ("24h", 86_400, "24h"),
            ("1d", 86_400, "24h"),
            ("3d", 259_200, "3d"),
            ("90m", 5400, "90m"),
            ("45s", 45, "45s"),
        ] {
            let w = parse_window(text).unwrap();
            assert_eq!(w.as_secs(), secs, "{text}");
            assert_eq!(window_text(w), shown, "{text}");
        }
        for bad in ["", "h", "4", "-4h", "4 h", "4H", "400d"] {
            assert!(parse_window(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_id_is_lower_case_hex_with_a_digit_or_of_the_minimum_length_unless_named() {
        let mut b = Budgets::embedded().unwrap();
        for (w, id) in [
            ("3f2a9c1b7d4e", true),
            ("3f2a", true),
            // Docker takes any unique prefix: short ones with a digit are ids too.
            ("3f2", true),
            ("3f", true),
            ("3", true),
            ("db1", true),
            ("db", false),
            ("add", false),
            ("", false),
            ("api", false),
            ("3F2A9C1B7D4E", false),
            ("cafe", true),
        ] {
            assert_eq!(b.is_id(w), id, "{w}");
        }
        b.id_names = vec!["cafe".into(), "db1".into()];
        assert!(!b.is_id("cafe"));
        assert!(!b.is_id("db1"));
    }
}
