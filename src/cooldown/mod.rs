//! Cooldown budgets, the pure part: the service key of a target named by a parsed call
//! ([`key_of`]), Claude Ops' state file as data ([`State`]: read tolerantly, written back with
//! every key it did not touch), and judging a call's charges against the budgets at a given
//! time ([`evaluate`]). Times are plain values here, so the window is exercised by data.
//!
//! Must not: do I/O (the file, its lock and the atomic write are [`store`]), or read the clock.
//! `decide()` calls [`key_of`] and [`evaluate`]; the gate records what it allowed.

pub mod store;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::grammar::{Project, Target};
use crate::policy::cooldown::{Budgets, Class, window_text};
use crate::sanitize::escape;
use crate::time::{format_time, parse_time};

/// What the gate read for a call that counts against a budget: the budgets, the state file's
/// counts, and the time of the call (read once, in `Context`).
#[derive(Debug, Clone)]
pub struct Facts {
    pub budgets: Arc<Budgets>,
    pub state: Arc<State>,
    /// The state file, for messages.
    pub file: String,
    pub now: SystemTime,
}

/// One use of a budget: a target of an allowed call, keyed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    pub key: String,
    pub class: Class,
}

/// How one service's budget stands for a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Standing {
    pub key: String,
    pub class: Class,
    /// Calls of this class in the window before this one.
    pub used: usize,
    /// What this call would add.
    pub adding: usize,
    pub max: u32,
    #[serde(serialize_with = "ser_window")]
    pub window: Duration,
    pub allowed: bool,
    /// When the call would fit again; None when it fits now, or never will (it alone needs
    /// more than the budget).
    #[serde(serialize_with = "ser_time")]
    pub next_allowed: Option<SystemTime>,
}

fn ser_window<S: serde::Serializer>(w: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&window_text(*w))
}

fn ser_time<S: serde::Serializer>(t: &Option<SystemTime>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_str(&format_time(*t)),
        None => s.serialize_none(),
    }
}

impl Standing {
    /// `2/2 restarts in the last 4h`.
    pub fn counts(&self) -> String {
        format!(
            "{}/{} {} in the last {}",
            self.used,
            self.max,
            self.class.plural(),
            window_text(self.window)
        )
    }
}

/// A docker container or compose name: what docker accepts (`[a-zA-Z0-9][a-zA-Z0-9_.-]*`).
/// Anything else (`$(docker ps -q)` arriving over ssh, a glob, `/api`) names nothing the gate
/// can count.
fn is_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next().is_some_and(|c| c.is_ascii_alphanumeric()) && b.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

/// A systemd unit name without globs (`nginx`, `getty@tty1.service`); `.service` is implied.
fn unit_key(u: &str) -> Option<&str> {
    let ok = !u.is_empty()
        && !u.starts_with('-')
        && u.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b':' | b'_' | b'.' | b'@' | b'-' | b'\\'));
    ok.then(|| u.strip_suffix(".service").unwrap_or(u)).filter(|k| !k.is_empty())
}

/// The service key of one target (`api`, `shop/api`, `nginx`), with `host:` in front on a
/// remote host; or, when the target cannot be named, why. Container ids are recognised only
/// with the budgets at hand (`ids:` in `policy/cooldown.yaml`).
pub fn key_of(target: &Target, host: Option<&str>, budgets: Option<&Budgets>) -> Result<String, String> {
    let key = match target {
        Target::Container(c) => {
            if !is_name(c) {
                return Err(format!("`{}` is not a container name", escape(c)));
            }
            if budgets.is_some_and(|b| b.is_id(c)) {
                return Err(format!("`{}` names a container by id", escape(c)));
            }
            c.clone()
        }
        Target::Service {
            project, name, container, ..
        } => {
            if !is_name(name) {
                return Err(format!("`{}` is not a compose service name", escape(name)));
            }
            // A service the compose files give a `container_name:` is that container: one budget
            // with `docker restart <container_name>`.
            if let Some(c) = container {
                if !is_name(c) {
                    return Err(format!(
                        "the `container_name: {}` of compose service `{}` is not a container name",
                        escape(c),
                        escape(name)
                    ));
                }
                return Ok(match host {
                    Some(h) => format!("{}:{c}", h.to_ascii_lowercase()),
                    None => c.clone(),
                });
            }
            match project {
                Project::Named(p) if !is_name(p) => return Err(format!("`{}` is not a compose project name", escape(p))),
                Project::Named(p) => format!("{p}/{name}"),
                Project::Unknown(why) => return Err(format!("the compose project of `{}` is not known: {why}", escape(name))),
                Project::Implied(_) => return Err(format!("the compose project of `{}` was not worked out", escape(name))),
            }
        }
        Target::Unit(u) => match unit_key(u) {
            Some(k) => k.to_string(),
            None => return Err(format!("`{}` is not a unit name (a pattern names no unit)", escape(u))),
        },
        Target::Named { kind, name, host: own } => {
            if !is_name(name) {
                return Err(format!("`{}` is not a {kind} name", escape(name)));
            }
            let key = format!("{kind}/{name}");
            // A playbook's host is its own; a remote call's host is the ssh host.
            match (own.as_deref(), host) {
                (Some(h), _) | (None, Some(h)) => return with_host(h, key),
                (None, None) => return Ok(key),
            }
        }
        Target::All(what) => return Err(what.clone()),
    };
    match host {
        Some(h) => with_host(h, key),
        None => Ok(key),
    }
}

/// `host:key`, the host lower-cased; a host that is no host name cannot be a key.
fn with_host(h: &str, key: String) -> Result<String, String> {
    if !h.is_empty()
        && h.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b':'))
    {
        Ok(format!("{}:{key}", h.to_ascii_lowercase()))
    } else {
        Err(format!("the host `{}` is not a host name", escape(h)))
    }
}

/// The host part (`ie01:`, or empty) and the rest of a key.
fn split_host(key: &str) -> (&str, &str) {
    match key.rfind(':') {
        // A unit name may hold `:`; a container or compose key never does.
        Some(i) => key.split_at(i + 1),
        None => ("", key),
    }
}

/// Whether a compose key (`[host:]project/service`) and a container key (`[host:]name`), in
/// either order, name the same container by compose's naming (`project-service-1`).
fn same_container(a: &str, b: &str) -> bool {
    let ((ha, ra), (hb, rb)) = (split_host(a), split_host(b));
    if ha != hb {
        return false;
    }
    let (service, container) = match (ra.split_once('/'), rb.split_once('/')) {
        (Some(s), None) => (s, rb),
        (None, Some(s)) => (s, ra),
        _ => return false,
    };
    let (project, name) = service;
    // docker-compose v1 before 1.21 also dropped `-` and `_` from the project (`myshop_api_1`).
    let squeezed: String = project.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    [(project, '-'), (project, '_'), (squeezed.as_str(), '_')].iter().any(|(p, sep)| {
        container
            .strip_prefix(p)
            .and_then(|r| r.strip_prefix(*sep))
            .and_then(|r| r.strip_prefix(name))
            .and_then(|r| r.strip_prefix(*sep))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
    })
}

/// Judge the charges of one call: per (service, class), how many calls are in the window
/// before this one, and whether this one fits.
pub fn evaluate(charges: &[Charge], budgets: &Budgets, state: &State, now: SystemTime) -> Vec<Standing> {
    let mut adding: BTreeMap<(String, Class), usize> = BTreeMap::new();
    for c in charges {
        *adding.entry((c.key.clone(), c.class)).or_default() += 1;
    }
    adding
        .into_iter()
        .map(|((key, class), adding)| {
            let b = budgets.budget(&key, class);
            let mut times = state.in_window_shared(&key, class, b.window, now);
            times.sort();
            let used = times.len();
            let max = b.max as usize;
            let allowed = used + adding <= max;
            let next_allowed = if allowed || adding > max {
                None
            } else {
                // The call fits once enough of the oldest calls have left the window.
                times.get(used + adding - max - 1).map(|t| *t + b.window)
            };
            Standing {
                key,
                class,
                used,
                adding,
                max: b.max,
                window: b.window,
                allowed,
                next_allowed,
            }
        })
        .collect()
}

/// The stderr line of a call refused by a spent budget (DESIGN §4, the issue's format).
pub fn refusal_line(skill: &str, s: &Standing) -> String {
    let when = match s.next_allowed {
        Some(t) => format!("next allowed at {}", format_time(t)),
        None => format!("this call alone would make {} and the budget allows {}", s.adding, s.max),
    };
    format!(
        "[skill:{}] REFUSED: cooldown for {} — {}; {when}. Escalate or wait.",
        escape(skill),
        escape(&s.key),
        s.counts()
    )
}

/// The line a dry run adds: whether the budget would allow the call. A dry run past the budget
/// is still a dry run (exit 0); this line says the call itself would be refused, and when.
pub fn dry_run_line(skill: &str, standings: &[Standing]) -> Option<String> {
    if standings.is_empty() {
        return None;
    }
    let each: Vec<String> = standings.iter().map(|s| format!("{} {}", escape(&s.key), s.counts())).collect();
    let verdict = match standings.iter().find(|s| !s.allowed) {
        None => "the budget would allow this call".to_string(),
        Some(spent) => {
            let when = match spent.next_allowed {
                Some(t) => format!("next allowed at {}", format_time(t)),
                None => format!("this call alone would make {} and the budget allows {}", spent.adding, spent.max),
            };
            format!(
                "the budget of {} would refuse this call without dry-run ({when})",
                escape(&spent.key)
            )
        }
    };
    Some(format!(
        "[skill:{}] DRY RUN: cooldown: {}; {verdict} (nothing recorded)",
        escape(skill),
        each.join(", ")
    ))
}

// ---------------------------------------------------------------------------------------------
// The state file

/// Claude Ops' cooldown state: `{"services": {"<svc>": {"restart_timestamps": [RFC 3339],
/// "redeployment_timestamps": [...]}}}`. Every other key (its dashboard's `last_run`,
/// `consecutive_healthy`, …) is kept as read and written back unchanged.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct State {
    doc: Map<String, Value>,
    /// Per service, per class, the parsed times.
    times: BTreeMap<String, BTreeMap<Class, Vec<SystemTime>>>,
}

impl State {
    /// Parse the file's bytes. Fails on anything the gate cannot count with: not JSON, not an
    /// object, `services` or a service not an object, a list that is not a list of strings, a
    /// time that does not parse. A missing list (or `null`) is an empty one.
    pub fn parse(bytes: &[u8]) -> Result<State, String> {
        if bytes.iter().all(|b| b.is_ascii_whitespace()) {
            return Err("the file is empty (a state file holds at least {\"services\": {}})".into());
        }
        let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON ({e})"))?;
        let Value::Object(doc) = v else {
            return Err("the top level is not a JSON object".into());
        };
        let mut times = BTreeMap::new();
        match doc.get("services") {
            None | Some(Value::Null) => {}
            Some(Value::Object(services)) => {
                for (name, svc) in services {
                    let svc = match svc {
                        Value::Object(m) => m,
                        _ => return Err(format!("services.{name} is not a JSON object")),
                    };
                    let mut per = BTreeMap::new();
                    for class in Class::ALL {
                        let list = match svc.get(class.state_key()) {
                            None | Some(Value::Null) => Vec::new(),
                            Some(Value::Array(a)) => a
                                .iter()
                                .map(|t| match t {
                                    Value::String(s) => parse_time(s).map_err(|e| format!("services.{name}.{}: {e}", class.state_key())),
                                    _ => Err(format!("services.{name}.{}: {t} is not a time", class.state_key())),
                                })
                                .collect::<Result<Vec<_>, _>>()?,
                            Some(_) => return Err(format!("services.{name}.{} is not a list", class.state_key())),
                        };
                        per.insert(class, list);
                    }
                    times.insert(name.clone(), per);
                }
            }
            Some(_) => return Err("`services` is not a JSON object".into()),
        }
        Ok(State { doc, times })
    }

    /// The document as written: two-space indented JSON and a final newline, as people and
    /// `jq` read it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(&Value::Object(self.doc.clone())).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// The services the file knows, with their lists.
    pub fn services(&self) -> &BTreeMap<String, BTreeMap<Class, Vec<SystemTime>>> {
        &self.times
    }

    /// The times of `class` for `key` within `window` before `now` (later ones included: a
    /// clock that was ahead still counts).
    pub fn in_window(&self, key: &str, class: Class, window: Duration, now: SystemTime) -> Vec<SystemTime> {
        let since = now.checked_sub(window).unwrap_or(UNIX_EPOCH);
        self.times
            .get(key)
            .and_then(|m| m.get(&class))
            .map(|l| l.iter().copied().filter(|t| *t > since).collect())
            .unwrap_or_default()
    }

    /// [`State::in_window`] of `key` and of every key that names the same container: compose
    /// names a service's containers `<project>-<service>-<n>` (`<project>_<service>_<n>` before
    /// v2), so `shop/api` and `shop-api-1` (on the same host) share one budget.
    pub fn in_window_shared(&self, key: &str, class: Class, window: Duration, now: SystemTime) -> Vec<SystemTime> {
        let mut times = self.in_window(key, class, window, now);
        for other in self.times.keys().filter(|k| *k != key && same_container(key, k)) {
            times.extend(self.in_window(other, class, window, now));
        }
        times
    }

    /// Change the object of service `key` (made when missing), keeping everything else.
    fn with_service(&mut self, key: &str, f: impl FnOnce(&mut Map<String, Value>)) {
        let mut services = match self.doc.remove("services") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let mut svc = match services.remove(key) {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        f(&mut svc);
        services.insert(key.to_string(), Value::Object(svc));
        self.doc.insert("services".into(), Value::Object(services));
    }

    /// Add `n` calls of `class` for `key` at `now`, dropping the times that have left `window`
    /// (Claude Ops' tools count the list's length). Both lists are present afterwards.
    pub fn record(&mut self, key: &str, class: Class, n: usize, window: Duration, now: SystemTime) {
        let kept = self.in_window(key, class, window, now);
        self.with_service(key, |svc| {
            let mut list: Vec<Value> = match svc.get(class.state_key()) {
                // Kept entries stay exactly as they were written.
                Some(Value::Array(a)) => a
                    .iter()
                    .filter(|v| v.as_str().and_then(|s| parse_time(s).ok()).is_some_and(|t| kept.contains(&t)))
                    .cloned()
                    .collect(),
                _ => Vec::new(),
            };
            list.extend((0..n).map(|_| Value::String(format_time(now))));
            svc.insert(class.state_key().to_string(), Value::Array(list));
            for c in Class::ALL {
                svc.entry(c.state_key()).or_insert_with(|| Value::Array(Vec::new()));
            }
        });
        let per = self.times.entry(key.to_string()).or_default();
        let mut times = kept;
        times.extend((0..n).map(|_| now));
        per.insert(class, times);
        for c in Class::ALL {
            per.entry(c).or_default();
        }
    }

    /// Remove up to `n` times `at` of `class` from `key` (a count taken back). False when there
    /// was none.
    pub fn take_back(&mut self, key: &str, class: Class, n: usize, at: SystemTime) -> bool {
        let Some(times) = self.times.get_mut(key).and_then(|m| m.get_mut(&class)) else {
            return false;
        };
        // Times are kept to the second in the file: compare them as written.
        let at_text = format_time(at);
        let mut left = n;
        times.retain(|t| {
            if left > 0 && format_time(*t) == at_text {
                left -= 1;
                false
            } else {
                true
            }
        });
        let removed = n - left;
        if removed == 0 {
            return false;
        }
        self.with_service(key, |svc| {
            if let Some(Value::Array(list)) = svc.get_mut(class.state_key()) {
                let mut left = removed;
                list.retain(|v| {
                    let same = v.as_str().and_then(|s| parse_time(s).ok()).map(format_time).as_deref() == Some(at_text.as_str());
                    if left > 0 && same {
                        left -= 1;
                        false
                    } else {
                        true
                    }
                });
            }
        });
        true
    }

    /// Empty both lists of `key`; the service's other keys stay. False when the file has no
    /// such service.
    pub fn reset(&mut self, key: &str) -> bool {
        if !self.times.contains_key(key) {
            return false;
        }
        self.with_service(key, |svc| {
            for c in Class::ALL {
                svc.insert(c.state_key().to_string(), Value::Array(Vec::new()));
            }
        });
        self.times
            .insert(key.to_string(), Class::ALL.iter().map(|c| (*c, Vec::new())).collect());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn at(s: &str) -> SystemTime {
        parse_time(s).unwrap()
    }

    fn budgets() -> Budgets {
        Budgets::embedded().unwrap()
    }

    fn state(json: &str) -> State {
        State::parse(json.as_bytes()).unwrap()
    }

    fn restart(key: &str) -> Charge {
        Charge {
            key: key.into(),
            class: Class::Restart,
        }
    }

    #[test]
    fn times_parse_as_rfc_3339_with_fractions_and_offsets() {
        assert_eq!(at("1970-01-01T00:00:00Z"), UNIX_EPOCH);
        assert_eq!(at("2026-03-21T14:00:00Z"), at("2026-03-21T15:30:00+01:30"));
        assert_eq!(
            at("2026-03-21t14:00:00.250z"),
            at("2026-03-21T14:00:00Z") + Duration::from_millis(250)
        );
        assert_eq!(at("2000-02-29T23:59:59-00:00"), UNIX_EPOCH + Duration::from_secs(951_868_799));
        assert_eq!(format_time(at("2026-03-21T14:00:00.999Z")), "2026-03-21T14:00:00Z");
        for bad in [
            "",
            "2026-03-21",
            "2026-03-21 14:00:00Z",
            "2026-03-21T14:00:00",
            "2026-02-30T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-03-21T24:00:00Z",
            "2026-03-21T14:00:00.Z",
            "2026-03-21T14:00:00+0100",
            "yesterday",
            "1969-12-31T23:59:59Z",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn keys_name_containers_services_and_units_with_the_host_in_front() {
        let b = budgets();
        let key = |t: Target, host| key_of(&t, host, Some(&b));
        assert_eq!(key(Target::Container("api".into()), None), Ok("api".into()));
        assert_eq!(
            key(
                Target::Service {
                    project: Project::Named("shop".into()),
                    name: "api".into(),
                    files: Default::default(),
                    container: None,
                },
                None
            ),
            Ok("shop/api".into())
        );
        assert_eq!(
            key(Target::Unit("jellyfin.service".into()), Some("IE01")),
            Ok("ie01:jellyfin".into())
        );
        assert_eq!(key(Target::Unit("getty@tty1".into()), Some("ie01")), Ok("ie01:getty@tty1".into()));
        assert_eq!(key(Target::Container("jellyfin".into()), Some("ie01")), Ok("ie01:jellyfin".into()));
        for (t, why) in [
            (Target::Container("3f2a9c1b7d4e".into()), "names a container by id"),
            (Target::Container("$(docker ps -q)".into()), "is not a container name"),
            (Target::Container("/api".into()), "is not a container name"),
            (Target::Unit("nginx*".into()), "is not a unit name"),
            (Target::All("every service of the compose project".into()), "every service"),
        ] {
            let e = key(t.clone(), None).unwrap_err();
            assert!(e.contains(why), "{t:?}: {e}");
        }
        // Without the budgets at hand an id cannot be told from a name.
        assert_eq!(
            key_of(&Target::Container("3f2a9c1b7d4e".into()), None, None),
            Ok("3f2a9c1b7d4e".into())
        );
    }

    #[test]
    fn the_third_restart_in_the_window_is_refused_until_the_oldest_leaves_it() {
        let s = state(r#"{"services": {"api": {"restart_timestamps": ["2026-03-21T14:00:00Z", "2026-03-21T14:22:00Z"]}}}"#);
        let b = budgets();
        let now = at("2026-03-21T15:00:00Z");
        let got = evaluate(&[restart("api")], &b, &s, now);
        assert_eq!(
            got,
            [Standing {
                key: "api".into(),
                class: Class::Restart,
                used: 2,
                adding: 1,
                max: 2,
                window: Duration::from_secs(14_400),
                allowed: false,
                next_allowed: Some(at("2026-03-21T18:00:00Z")),
            }]
        );
        assert_eq!(
            refusal_line("container-ops", &got[0]),
            "[skill:container-ops] REFUSED: cooldown for api — 2/2 restarts in the last 4h; next allowed at \
             2026-03-21T18:00:00Z. Escalate or wait."
        );
        // The window slides: at 18:00 the first restart has left it, at 17:59:59 it has not.
        assert!(!evaluate(&[restart("api")], &b, &s, at("2026-03-21T17:59:59Z"))[0].allowed);
        let later = evaluate(&[restart("api")], &b, &s, at("2026-03-21T18:00:00Z"));
        assert_eq!((later[0].used, later[0].allowed), (1, true));
        // Another service has its own budget.
        assert!(evaluate(&[restart("db")], &b, &s, now)[0].allowed);
    }

    #[test]
    fn one_call_naming_a_service_twice_needs_two_and_waits_for_the_second_oldest() {
        let s = state(r#"{"services": {"api": {"restart_timestamps": ["2026-03-21T14:00:00Z", "2026-03-21T14:30:00Z"]}}}"#);
        let got = evaluate(&[restart("api"), restart("api")], &budgets(), &s, at("2026-03-21T15:00:00Z"));
        assert_eq!((got[0].used, got[0].adding, got[0].allowed), (2, 2, false));
        assert_eq!(got[0].next_allowed, Some(at("2026-03-21T18:30:00Z")));
        let three = evaluate(
            &[restart("db"), restart("db"), restart("db")],
            &budgets(),
            &s,
            at("2026-03-21T15:00:00Z"),
        );
        assert_eq!((three[0].allowed, three[0].next_allowed), (false, None));
        assert!(refusal_line("s", &three[0]).contains("this call alone would make 3 and the budget allows 2"));
    }

    #[test]
    fn a_compose_service_and_its_containers_share_one_budget() {
        let s = state(
            r#"{"services": {"shop/api": {"restart_timestamps": ["2026-03-21T14:00:00Z"]},
                             "shop-api-1": {"restart_timestamps": ["2026-03-21T14:10:00Z"]},
                             "ie01:shop_api_2": {"restart_timestamps": ["2026-03-21T14:20:00Z"]},
                             "shop-api-x": {"restart_timestamps": ["2026-03-21T14:30:00Z"]},
                             "shop-apiary-1": {"restart_timestamps": ["2026-03-21T14:30:00Z"]}}}"#,
        );
        let now = at("2026-03-21T15:00:00Z");
        let used = |k: &str| evaluate(&[restart(k)], &budgets(), &s, now)[0].used;
        assert_eq!(used("shop/api"), 2);
        assert_eq!(used("shop-api-1"), 2);
        assert_eq!(used("shop-api-2"), 1);
        // Another host, another name, or not compose's pattern: separate budgets.
        assert_eq!(used("ie01:shop/api"), 1);
        assert_eq!(used("shop-api-x"), 1);
        assert_eq!(used("other/api"), 0);
        assert!(!same_container("shop/api", "shop-api-"));
        assert!(!same_container("shop/api", "ie01:shop-api-1"));
        assert!(same_container("ie01:shop_api_2", "ie01:shop/api"));
        assert!(same_container("my-shop/api", "myshop_api_1"));
        assert!(!same_container("my-shop/api", "myshop-api-1"));
    }

    #[test]
    fn a_compose_project_that_could_not_be_worked_out_names_nothing() {
        let t = |project| Target::Service {
            project,
            name: "api".into(),
            files: Default::default(),
            container: None,
        };
        let e = key_of(&t(Project::Unknown("no compose file in /x or above it".into())), None, None).unwrap_err();
        assert!(e.contains("the compose project of `api` is not known: no compose file"), "{e}");
        let implied = Project::Implied(Default::default());
        assert!(key_of(&t(implied), None, None).unwrap_err().contains("was not worked out"));
    }

    #[test]
    fn a_time_ahead_of_the_clock_counts() {
        let s = state(r#"{"services": {"api": {"restart_timestamps": ["2099-01-01T00:00:00Z", "2099-01-01T01:00:00Z"]}}}"#);
        assert!(!evaluate(&[restart("api")], &budgets(), &s, at("2026-03-21T15:00:00Z"))[0].allowed);
    }

    #[test]
    fn claude_ops_state_is_read_tolerantly_and_written_back_with_its_other_keys() {
        let text = r#"{
          "services": {
            "nginx": {"restart_timestamps": ["2026-03-21T14:00:00Z", "2026-03-21T10:00:00.123Z"],
                      "redeployment_timestamps": [], "consecutive_healthy": 0},
            "postgres": {"redeployment_timestamps": ["2026-03-20T22:00:00Z"], "restart_timestamps": null}
          },
          "last_run": "2026-03-21T10:00:00Z",
          "last_daily_digest": null
        }"#;
        let mut s = state(text);
        let now = at("2026-03-21T15:00:00Z");
        assert_eq!(s.in_window("nginx", Class::Restart, Duration::from_secs(14_400), now).len(), 1);
        assert_eq!(s.in_window("postgres", Class::Redeploy, Duration::from_secs(86_400), now).len(), 1);
        s.record("nginx", Class::Restart, 1, Duration::from_secs(14_400), now);
        s.record("shop/api", Class::Redeploy, 1, Duration::from_secs(86_400), now);
        let back: Value = serde_json::from_slice(&s.to_bytes()).unwrap();
        assert_eq!(
            back,
            serde_json::json!({
                "services": {
                    "nginx": {"restart_timestamps": ["2026-03-21T14:00:00Z", "2026-03-21T15:00:00Z"],
                              "redeployment_timestamps": [], "consecutive_healthy": 0},
                    "postgres": {"redeployment_timestamps": ["2026-03-20T22:00:00Z"], "restart_timestamps": null},
                    "shop/api": {"restart_timestamps": [], "redeployment_timestamps": ["2026-03-21T15:00:00Z"]}
                },
                "last_run": "2026-03-21T10:00:00Z",
                "last_daily_digest": null
            })
        );
        assert_eq!(State::parse(&s.to_bytes()).unwrap(), s);
        assert!(s.reset("nginx"));
        assert!(!s.reset("nobody"));
        assert_eq!(s.services()["nginx"][&Class::Restart], Vec::<SystemTime>::new());
    }

    #[test]
    fn a_state_the_gate_cannot_count_with_is_an_error_naming_the_place() {
        for (text, want) in [
            ("", "the file is empty"),
            ("  \n", "the file is empty"),
            (
                "{\"services\": {\"api\": {\"restart_timestamps\": [\"2026-03-21T1",
                "not valid JSON",
            ),
            ("[]", "not a JSON object"),
            ("{\"services\": []}", "`services` is not a JSON object"),
            ("{\"services\": {\"api\": 1}}", "services.api is not a JSON object"),
            (
                "{\"services\": {\"api\": {\"restart_timestamps\": \"x\"}}}",
                "services.api.restart_timestamps is not a list",
            ),
            ("{\"services\": {\"api\": {\"restart_timestamps\": [1]}}}", "1 is not a time"),
            (
                "{\"services\": {\"api\": {\"redeployment_timestamps\": [\"last tuesday\"]}}}",
                "services.api.redeployment_timestamps: \"last tuesday\" is not an RFC 3339 time",
            ),
        ] {
            let e = State::parse(text.as_bytes()).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        assert_eq!(state("{}").services().len(), 0);
    }
}
