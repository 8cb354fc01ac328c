//! `tiershim audit [FILE] [--config FILE] [--since T] [--json]`: the post-hoc report of an audit
//! log. Counts by verdict, tool, skill and tier; every refusal with its reason; scope
//! violations; cooldown refusals and the counts the gate recorded per service; environment
//! resets; dry runs; calls whose tier the environment lowered; and
//! anything odd (a line that does not parse, a decision made by another binary).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;

use crate::context::Context;
use crate::exit::Exit;
use crate::install::InstallConfig;
use crate::sanitize::escape;
use crate::time::rfc3339;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The audit log (JSON lines). Default: the `audit_log:` of --config.
    file: Option<PathBuf>,
    /// A tiershim.yaml whose audit_log to read, and whose installed binary is the expected decider.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Only decisions at or after T: an RFC 3339 time (2026-11-22T10:00:00Z) or an age (90m, 4h, 2d).
    #[arg(long, value_name = "T")]
    since: Option<String>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Default, Serialize)]
struct Report {
    file: String,
    since: Option<String>,
    decisions: usize,
    by_verdict: BTreeMap<String, usize>,
    by_tool: BTreeMap<String, usize>,
    by_skill: BTreeMap<String, usize>,
    by_tier: BTreeMap<String, usize>,
    refusals: Vec<Entry>,
    scope_violations: Vec<Entry>,
    /// Calls refused by a cooldown budget: spent, a target it cannot count, or a state file
    /// the gate could not use.
    cooldown_refusals: Vec<Entry>,
    /// Per service and class, the calls the gate counted in the state file.
    cooldown_recorded: BTreeMap<String, usize>,
    dry_runs: Vec<Entry>,
    env_resets: BTreeMap<String, usize>,
    tier_lowered: Vec<Entry>,
    /// Records cut short (a write the gate did not finish: it refused that call). A record
    /// written right behind one on the same line (a log from before records started on a line of
    /// their own) is read, not lost.
    torn: usize,
    odd: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Entry {
    time: String,
    tool: String,
    call: String,
    rule: String,
    detail: String,
}

pub fn run(ctx: &Context, a: Args) -> Exit {
    let cfg = match &a.config {
        Some(p) => match InstallConfig::load(p, false) {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("tiershim audit: {}", escape(&e.to_string()));
                return e.exit();
            }
        },
        None => None,
    };
    let Some(file) = a.file.clone().or_else(|| cfg.as_ref().and_then(|c| c.audit_log.clone())) else {
        return match &cfg {
            Some(c) => {
                eprintln!(
                    "tiershim audit: {} names no `audit_log:`, so that install keeps no audit log to read; add `audit_log: FILE` to it (install.sh --audit-log FILE), or name a log: tiershim audit FILE",
                    escape(&c.path.display().to_string())
                );
                Exit::Config
            }
            None => {
                eprintln!(
                    "tiershim audit: name the audit log (tiershim audit FILE), or an install's config (--config FILE) whose `audit_log:` names it"
                );
                Exit::Usage
            }
        };
    };
    let since = match a.since.as_deref().map(|s| parse_since(s, ctx.now)) {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => {
            eprintln!("tiershim audit: --since {}: {e}", escape(a.since.as_deref().unwrap_or("")));
            return Exit::Usage;
        }
    };
    let text = match std::fs::read(&file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("tiershim audit: cannot read {}: {e}", escape(&file.display().to_string()));
            return Exit::Config;
        }
    };
    // The binary that should have decided: the install's when a config is given, else this one.
    let expected = cfg
        .as_ref()
        .and_then(|c| c.dir().parent()?.parent()?.parent().map(|p| p.join("bin").join("tiershim")))
        .and_then(|p| std::fs::canonicalize(p).ok())
        .or_else(|| std::fs::read_link("/proc/self/exe").ok())
        .map(|p| p.display().to_string());
    let r = report(&file.display().to_string(), &text, since.as_deref(), expected.as_deref());
    if a.json {
        match serde_json::to_string(&r) {
            Ok(t) => println!("{t}"),
            Err(e) => {
                eprintln!("tiershim audit: {e}");
                return Exit::Internal;
            }
        }
    } else {
        print_report(&r);
    }
    Exit::Ok
}

/// An RFC 3339 UTC time as written by the gate, or an age before `now`.
fn parse_since(s: &str, now: SystemTime) -> Result<String, String> {
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    if !num.is_empty() && matches!(unit, "s" | "m" | "h" | "d") {
        let n: u64 = num.parse().map_err(|e| format!("{e}"))?;
        let unit_secs = match unit {
            "s" => 1,
            "m" => 60,
            "h" => 3600,
            _ => 86_400,
        };
        let secs = n.checked_mul(unit_secs).ok_or("the age reaches before 1970")?;
        let t = now.checked_sub(Duration::from_secs(secs)).ok_or("the age reaches before 1970")?;
        return Ok(rfc3339(t));
    }
    match crate::time::parse_time(s) {
        Ok(_) => Ok(s.to_string()),
        Err(_) => Err("not an RFC 3339 time (2026-11-22T10:00:00Z) or an age (90m, 4h, 2d)".into()),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn entry(v: &Value, detail: String) -> Entry {
    let call: Vec<&str> = v["argv"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    Entry {
        time: str_of(v, "time").to_string(),
        tool: str_of(v, "tool").to_string(),
        call: std::iter::once(str_of(v, "tool"))
            .chain(call)
            .map(|w| shell_words::quote(w).into_owned())
            .collect::<Vec<_>>()
            .join(" "),
        rule: str_of(v, "rule").to_string(),
        detail,
    }
}

fn report(file: &str, text: &[u8], since: Option<&str>, expected_exe: Option<&str>) -> Report {
    let mut r = Report {
        file: file.to_string(),
        since: since.map(str::to_string),
        ..Report::default()
    };
    let since_time = since.and_then(|s| crate::time::parse_time(s).ok());
    for (i, raw) in text.split(|b| *b == b'\n').enumerate() {
        if raw.is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_slice(raw) {
            Ok(v @ Value::Object(_)) => v,
            Err(e) if e.is_eof() && raw.starts_with(b"{") => {
                r.torn += 1;
                r.odd.push(format!(
                    "line {}: a torn record ({} bytes; the gate refused that call)",
                    i + 1,
                    raw.len()
                ));
                continue;
            }
            _ => match after_torn(raw) {
                Some((cut, v)) => {
                    r.torn += 1;
                    r.odd.push(format!(
                        "line {}: a torn record ({cut} bytes; the gate refused that call), and a record after it on the same line",
                        i + 1
                    ));
                    v
                }
                None => {
                    r.odd.push(format!("line {}: not a JSON decision record", i + 1));
                    continue;
                }
            },
        };
        // Compared as times, not text (`10:00:00.5Z` is after `10:00:00Z`); a record whose time
        // cannot be placed is odd, and left out of a report from a given time.
        if let Some(s) = since_time {
            match crate::time::parse_time(str_of(&v, "time")) {
                Ok(t) if t < s => continue,
                Ok(_) => {}
                Err(_) => {
                    r.odd.push(format!("line {}: the record's `time` is not an RFC 3339 time", i + 1));
                    continue;
                }
            }
        }
        r.decisions += 1;
        let verdict = str_of(&v, "verdict").to_string();
        *r.by_verdict.entry(verdict.clone()).or_default() += 1;
        *r.by_tool.entry(str_of(&v, "tool").to_string()).or_default() += 1;
        *r.by_skill.entry(str_of(&v, "skill").to_string()).or_default() += 1;
        let effective = v["tier"]["effective"].as_u64();
        let ceiling = v["tier"]["ceiling"].as_u64();
        *r.by_tier
            .entry(effective.map(|t| t.to_string()).unwrap_or_else(|| "?".into()))
            .or_default() += 1;
        // What the gate said (without its `[skill:…]` tag); a log from before `message` has only
        // the reasons, whose first is the first action's.
        let first_reason = match v.get("message").and_then(Value::as_str) {
            Some(m) => m.split_once("] ").map_or(m, |(_, rest)| rest).to_string(),
            None => v["reasons"]
                .as_array()
                .and_then(|a| a.first())
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        };
        match verdict.as_str() {
            "refuse" | "error" => r.refusals.push(entry(&v, first_reason.clone())),
            "dry-run" => r.dry_runs.push(entry(&v, first_reason.clone())),
            _ => {}
        }
        let rule = str_of(&v, "rule");
        use crate::policy::Builtin;
        if verdict == "refuse"
            && matches!(
                Builtin::of_id(rule),
                Some(Builtin::Cooldown | Builtin::CooldownState | Builtin::CooldownTarget)
            )
        {
            let spent: Vec<String> = v["cooldown"]["budgets"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter(|b| b["allowed"] == Value::Bool(false))
                        .map(|b| {
                            format!(
                                "{} {}/{} {} in {}; next allowed at {}",
                                str_of(b, "key"),
                                b["used"],
                                b["max"],
                                str_of(b, "class"),
                                str_of(b, "window"),
                                b["next_allowed"].as_str().unwrap_or("never")
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let detail = if spent.is_empty() { first_reason.clone() } else { spent.join(", ") };
            r.cooldown_refusals.push(entry(&v, detail));
        }
        if v["cooldown"]["recorded"] == Value::Bool(true)
            && let Some(budgets) = v["cooldown"]["budgets"].as_array()
        {
            for b in budgets {
                *r.cooldown_recorded
                    .entry(format!("{} ({})", str_of(b, "key"), str_of(b, "class")))
                    .or_default() += b["adding"].as_u64().unwrap_or(0) as usize;
            }
        }
        if let Some(vs) = v["scope"]["violations"].as_array() {
            for viol in vs {
                r.scope_violations
                    .push(entry(&v, format!("{} {}", str_of(viol, "path"), str_of(viol, "why"))));
            }
        }
        if let Some(resets) = v["env_resets"].as_array() {
            for reset in resets {
                *r.env_resets
                    .entry(format!("{} ({})", str_of(reset, "var"), str_of(reset, "action")))
                    .or_default() += 1;
            }
        }
        if let (Some(e), Some(c)) = (effective, ceiling)
            && e < c
        {
            let asked = v["tier"]["requested"].as_str().unwrap_or("unset");
            r.tier_lowered
                .push(entry(&v, format!("tier {e} of ceiling {c} (CLAUDEOPS_TIER={asked})")));
        }
        let exe = str_of(&v, "exe");
        if let Some(want) = expected_exe
            && !exe.is_empty()
            && exe != want
        {
            r.odd.push(format!("line {}: decided by {exe}, not the installed {want}", i + 1));
        }
        for key in ["time", "tool", "verdict", "rule"] {
            if str_of(&v, key).is_empty() {
                r.odd.push(format!("line {}: the record has no `{key}`", i + 1));
            }
        }
    }
    r
}

/// A torn record with a whole one right behind it on the same line: the length of the torn part
/// and the record.
fn after_torn(raw: &[u8]) -> Option<(usize, Value)> {
    const START: &[u8] = b"{\"time\":";
    if !raw.starts_with(b"{") {
        return None;
    }
    (1..raw.len())
        .filter(|&at| raw[at..].starts_with(START))
        .find_map(|at| match serde_json::from_slice(&raw[at..]) {
            Ok(v @ Value::Object(_)) => Some((at, v)),
            _ => None,
        })
}

fn print_report(r: &Report) {
    println!(
        "{}: {} decision(s){}",
        escape(&r.file),
        r.decisions,
        r.since.as_deref().map(|s| format!(" since {s}")).unwrap_or_default()
    );
    for (title, map) in [
        ("verdict", &r.by_verdict),
        ("tool", &r.by_tool),
        ("skill", &r.by_skill),
        ("tier", &r.by_tier),
    ] {
        let parts: Vec<String> = map.iter().map(|(k, n)| format!("{} {n}", escape(k))).collect();
        println!("  by {title:<8} {}", parts.join(", "));
    }
    let section = |title: &str, list: &[Entry]| {
        if list.is_empty() {
            return;
        }
        println!("\n{title} ({}):", list.len());
        for e in list {
            println!("  {} {}  [{}] {}", e.time, escape(&e.call), e.rule, escape(&e.detail));
        }
    };
    section("refusals", &r.refusals);
    section("scope violations", &r.scope_violations);
    section("cooldown refusals", &r.cooldown_refusals);
    if !r.cooldown_recorded.is_empty() {
        println!("\ncooldown counted:");
        for (k, n) in &r.cooldown_recorded {
            println!("  {} ×{n}", escape(k));
        }
    }
    section("dry runs", &r.dry_runs);
    section("tier lowered by the environment", &r.tier_lowered);
    if !r.env_resets.is_empty() {
        println!("\nenvironment resets:");
        for (k, n) in &r.env_resets {
            println!("  {} ×{n}", escape(k));
        }
    }
    if r.torn > 0 {
        println!(
            "\ntorn records: {} (writes the gate did not finish; it refused those calls)",
            r.torn
        );
    }
    if !r.odd.is_empty() {
        println!("\nodd ({}):", r.odd.len());
        for o in &r.odd {
            println!("  {}", escape(o));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn since_takes_a_time_or_an_age() {
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(parse_since("1h", now).unwrap(), rfc3339(now - Duration::from_secs(3600)));
        assert_eq!(parse_since("2d", now).unwrap(), rfc3339(now - Duration::from_secs(172_800)));
        assert_eq!(parse_since("2026-11-22T10:00:00Z", now).unwrap(), "2026-11-22T10:00:00Z");
        assert_eq!(parse_since("2026-11-22T10:00:00+01:00", now).unwrap(), "2026-11-22T10:00:00+01:00");
        for bad in [
            "yesterday",
            "10x",
            "2026-11-22",
            "2026-11-22 10:00:00Z",
            "300000000000000d",
            "99999999999999999999s",
        ] {
            assert!(parse_since(bad, now).is_err(), "{bad}");
        }
    }

    #[test]
    fn since_compares_times_not_text() {
        let line = |t: &str| format!("{{\"time\":\"{t}\",\"tool\":\"docker\",\"verdict\":\"allow\",\"rule\":\"r\"}}\n");
        let text = [
            line("2026-11-22T09:59:59.900000Z"),
            line("2026-11-22T10:00:00.500000Z"),
            line("2026-11-22T11:30:00+01:00"),
            line("garbage"),
            "{\"tool\":\"docker\"}\n".to_string(),
        ]
        .concat();
        let r = report("f", text.as_bytes(), Some("2026-11-22T10:00:00Z"), None);
        // The fraction after the second is after it; 11:30+01:00 is 10:30Z; 09:59:59.9 is before.
        assert_eq!(r.decisions, 2);
        assert!(
            r.odd.contains(&"line 4: the record's `time` is not an RFC 3339 time".to_string()),
            "{:?}",
            r.odd
        );
        assert!(
            r.odd.contains(&"line 5: the record's `time` is not an RFC 3339 time".to_string()),
            "{:?}",
            r.odd
        );
    }

    #[test]
    fn torn_records_are_counted_and_never_hide_the_next() {
        let rec = |t: &str| format!("{{\"time\":\"{t}\",\"tool\":\"docker\",\"verdict\":\"allow\",\"rule\":\"r\"}}");
        let whole = rec("2026-01-01T00:00:00.000000Z");
        let torn = &whole[..30];
        // As the gate writes now (the next record on a line of its own), and as an older log
        // has it (the next record right behind the torn one).
        let text = format!("{whole}\n{torn}\n{whole}\n{torn}{whole}\n");
        let r = report("f", text.as_bytes(), None, None);
        assert_eq!(r.decisions, 3);
        assert_eq!(r.torn, 2);
        assert_eq!(
            r.odd,
            vec![
                "line 2: a torn record (30 bytes; the gate refused that call)".to_string(),
                "line 4: a torn record (30 bytes; the gate refused that call), and a record after it on the same line".to_string(),
            ]
        );
    }

    #[test]
    fn odd_lines_and_other_binaries_are_reported() {
        let text = b"{\"time\":\"2026-01-01T00:00:00.000000Z\",\"tool\":\"docker\",\"verdict\":\"allow\",\"rule\":\"r\",\"exe\":\"/other\",\"argv\":[\"ps\"],\"tier\":{\"effective\":1,\"ceiling\":2,\"requested\":\"1\"}}\nnot json\n[1]\n";
        let r = report("f", text, None, Some("/bin/tiershim"));
        assert_eq!(r.decisions, 1);
        assert_eq!(
            r.odd,
            vec![
                "line 1: decided by /other, not the installed /bin/tiershim".to_string(),
                "line 2: not a JSON decision record".to_string(),
                "line 3: not a JSON decision record".to_string()
            ]
        );
        assert_eq!(r.tier_lowered.len(), 1);
        assert_eq!(r.tier_lowered[0].detail, "tier 1 of ceiling 2 (CLAUDEOPS_TIER=1)");
    }
}
