//! The one decision function. The live gate, `tiershim explain`, dry-run and the policy examples
//! all call [`decide`]; there is no second matcher anywhere.
//!
//! `decide` is pure: everything that needs I/O (the install config, the caller's environment,
//! the real gh's path) is gathered before and passed in as [`Request`]. A refusal is a value.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::grammar::{Action, Claim, Invocation};
use crate::policy::{Policy, Required, Rule};
use crate::sanitize::escape;
use crate::tool::Tool;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Allow,
    DryRun,
    Refuse,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::DryRun => "dry-run",
            Verdict::Refuse => "refuse",
        }
    }
}

/// What the decision needs besides the call and the policy. Plain data.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The install's ceiling (`tier:` in `tiershim.yaml`).
    pub ceiling: u8,
    /// The raw value of `CLAUDEOPS_TIER`, if set.
    pub env_tier: Option<String>,
    /// The raw value of `CLAUDEOPS_DRY_RUN`, if set.
    pub env_dry_run: Option<String>,
    /// `dry_run: true` in `tiershim.yaml`.
    pub dry_run_pinned: bool,
    /// `env:` in `tiershim.yaml`.
    pub pinned: BTreeMap<String, String>,
    /// The caller's values of the policy's `must_match` variables that are set.
    pub caller_env: BTreeMap<String, String>,
    /// The paths this install's real gh is known by (as configured, and canonical).
    pub real_gh: Vec<String>,
}

/// The effective tier and, when the environment asked for something odd, why.
pub fn effective_tier(ceiling: u8, env: Option<&str>) -> (u8, Option<String>) {
    match env {
        None => (1, Some("CLAUDEOPS_TIER is unset, so tier 1".to_string())),
        Some(v @ ("1" | "2" | "3")) => {
            let asked = v.as_bytes()[0] - b'0';
            if asked > ceiling {
                (
                    ceiling,
                    Some(format!(
                        "CLAUDEOPS_TIER={asked} is above this install's ceiling {ceiling}, so tier {ceiling}"
                    )),
                )
            } else {
                (asked, None)
            }
        }
        Some(v) => (1, Some(format!("CLAUDEOPS_TIER={} is not 1, 2 or 3, so tier 1", escape(v)))),
    }
}

pub fn dry_run_on(pinned: bool, env: Option<&str>) -> bool {
    pinned || env.is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub verdict: Verdict,
    pub tool: Tool,
    pub verb: String,
    pub skill: String,
    pub required_tier: Required,
    pub effective_tier: u8,
    pub dry_run: bool,
    pub rule: String,
    pub reasons: Vec<String>,
    /// What was refused, in words (`docker run`, `force-pushing`).
    pub what: String,
    /// What to do instead; only for refusals.
    pub instead: Option<String>,
    /// Why the effective tier is what it is, when the environment asked for something odd.
    pub tier_note: Option<String>,
}

/// One candidate: the requirement and where it came from.
struct Finding {
    required: Required,
    rule: String,
    skill: String,
    what: String,
    reason: String,
    instead: Option<String>,
}

fn matches(rule: &Rule, verb: &str, action: &Action) -> bool {
    rule.verbs.iter().any(|v| v == verb) && rule.when.iter().all(|m| action.has(m))
}

fn from_rule(tool: Tool, rule: &Rule, action: &Action) -> Finding {
    let what = rule.what.clone().unwrap_or_else(|| format!("{tool} {}", action.verb));
    let reason = match rule.required {
        Required::Never => format!("rule {}: {what} is never allowed", rule.id),
        Required::Tier(n) => format!("rule {}: {what} requires tier {n}", rule.id),
    };
    Finding {
        required: rule.required,
        rule: rule.id.clone(),
        skill: rule.skill.clone(),
        what,
        reason,
        instead: rule.instead.clone(),
    }
}

fn never(tool: Tool, policy: &Policy, rule: &str, what: String, reason: String, instead: &str) -> Finding {
    Finding {
        required: Required::Never,
        rule: format!("{tool}.{rule}"),
        skill: policy.skill.clone(),
        what,
        reason,
        instead: Some(instead.to_string()),
    }
}

/// The strictest rule matching one action; unclassified verbs are never allowed. Rules that
/// name the action's own verb are used when there are any, else those naming its fallback
/// (class) verb.
fn classify(tool: Tool, policy: &Policy, action: &Action) -> Finding {
    let mut verb = action.verb.as_str();
    if !policy.rules.iter().any(|r| r.verbs.iter().any(|v| v == verb))
        && let Some(f) = &action.fallback
    {
        verb = f;
    }
    let mut best: Option<(&Rule, usize)> = None;
    for rule in policy.rules.iter().filter(|r| matches(r, verb, action)) {
        // Strictest wins; among equals, the more specific rule (more `when` marks) explains it.
        let better = match best {
            None => true,
            Some((b, _)) => rule.required > b.required || (rule.required == b.required && rule.when.len() > b.when.len()),
        };
        if better {
            best = Some((rule, rule.when.len()));
        }
    }
    match best {
        Some((rule, _)) => from_rule(tool, rule, action),
        None => never(
            tool,
            policy,
            "unclassified",
            format!("{tool} {}", escape(&action.verb)),
            format!(
                "`{tool} {}` is not classified by the policy ({}), and what is not classified is refused",
                escape(&action.verb),
                policy.source
            ),
            "ask an operator to add a rule for it to the policy if it is needed",
        ),
    }
}

fn check_claims(tool: Tool, policy: &Policy, inv: &Invocation, req: &Request, out: &mut Vec<Finding>) {
    for claim in &inv.claims {
        match claim {
            Claim::Pinned { var, value, flag } => {
                if req.pinned.get(*var) != Some(value) {
                    let pinned = match req.pinned.get(*var) {
                        Some(p) => format!("the pinned {var}={}", escape(p)),
                        None => format!("no pinned {var} (tiershim.yaml `env:`)"),
                    };
                    out.push(never(
                        tool,
                        policy,
                        "pinned",
                        format!("{tool} {} {}", escape(flag), escape(value)),
                        format!("{} {} does not match {pinned}", escape(flag), escape(value)),
                        &format!("drop {} and use the endpoint this install pins", escape(flag)),
                    ));
                }
            }
            Claim::PinnedIfSet {
                var,
                value,
                flag,
                exclusive,
            } => {
                // `-uroot` and `--user=root` already carry the value.
                let shown = if flag.ends_with(value.as_str()) {
                    escape(flag).into_owned()
                } else {
                    format!("{} {}", escape(flag), escape(value))
                };
                if let Some(p) = req.pinned.get(*var) {
                    if p != value {
                        out.push(never(
                            tool,
                            policy,
                            "pinned",
                            format!("{tool} {shown}"),
                            format!("{shown} does not match the pinned {var}={}", escape(p)),
                            &format!("drop {} and use the {var} this install pins", escape(flag)),
                        ));
                    }
                } else if let Some(x) = exclusive.iter().find(|x| req.pinned.contains_key(**x)) {
                    out.push(never(
                        tool,
                        policy,
                        "pinned",
                        format!("{tool} {shown}"),
                        format!("{shown} overrides the pinned {x}"),
                        &format!("drop {} and use the {x} this install pins", escape(flag)),
                    ));
                }
            }
            Claim::GhCredentialHelper { path } => {
                if !req.real_gh.iter().any(|p| p == path) {
                    out.push(never(
                        tool,
                        policy,
                        "credential-helper",
                        "git -c credential.helper".to_string(),
                        format!("credential.helper=!{} is not this install's real gh", escape(path)),
                        "let gh run git itself (gh pr create pushes for you)",
                    ));
                }
            }
        }
    }
    for var in &policy.must_match {
        if let Some(v) = req.caller_env.get(var)
            && req.pinned.get(var) != Some(v)
        {
            out.push(never(
                tool,
                policy,
                "pinned-env",
                format!("{var}={}", escape(v)),
                format!("{var}={} in the environment does not match what this install pins", escape(v)),
                &format!("unset {var}"),
            ));
        }
    }
}

/// The decision for one call. Pure.
pub fn decide(inv: &Invocation, policy: &Policy, req: &Request) -> Decision {
    let tool = inv.tool;
    let (effective, tier_note) = effective_tier(req.ceiling, req.env_tier.as_deref());
    let dry_run = dry_run_on(req.dry_run_pinned, req.env_dry_run.as_deref());

    let mut findings = Vec::new();
    if let Some(problem) = &inv.problem {
        findings.push(never(
            tool,
            policy,
            "grammar",
            format!("a {tool} call tiershim cannot parse ({})", escape(problem)),
            format!("tiershim cannot understand this {tool} call: {}", escape(problem)),
            "write the call in a form the gate understands, or ask an operator",
        ));
    } else if inv.actions.is_empty() {
        findings.push(never(
            tool,
            policy,
            "grammar",
            tool.to_string(),
            "the call does nothing the gate can name".into(),
            "name a command",
        ));
    } else {
        findings.extend(inv.actions.iter().map(|a| classify(tool, policy, a)));
    }
    check_claims(tool, policy, inv, req, &mut findings);

    // Strictest finding decides; the first of equals (argv order) explains it.
    let mut worst = 0;
    for (i, f) in findings.iter().enumerate() {
        if f.required > findings[worst].required {
            worst = i;
        }
    }
    let reasons: Vec<String> = findings.iter().map(|f| f.reason.clone()).chain(tier_note.clone()).collect();
    let f = &findings[worst];
    let verdict = match f.required {
        Required::Never => Verdict::Refuse,
        Required::Tier(n) if n > effective => Verdict::Refuse,
        r if dry_run && r.mutates() => Verdict::DryRun,
        _ => Verdict::Allow,
    };
    Decision {
        verdict,
        tool,
        verb: inv.verb(),
        skill: f.skill.clone(),
        required_tier: f.required,
        effective_tier: effective,
        dry_run,
        rule: f.rule.clone(),
        reasons,
        what: f.what.clone(),
        instead: if verdict == Verdict::Refuse { Some(instead_text(f)) } else { None },
        tier_note,
    }
}

fn instead_text(f: &Finding) -> String {
    match (&f.instead, f.required) {
        (Some(s), _) => s.clone(),
        (None, Required::Tier(n)) => format!("escalate to a tier {n} agent or an operator"),
        (None, Required::Never) => "this is never done by an agent; ask a human operator".to_string(),
    }
}

/// The stderr line for a decision (DESIGN §4). `skill` is the name to show (the decision's skill,
/// or `CLAUDEOPS_SKILL` when set); `shown_args` is the redacted argv for a dry run.
pub fn render(d: &Decision, skill: &str, shown_args: &[String]) -> String {
    let s = escape(skill);
    match d.verdict {
        Verdict::Allow => format!("[skill:{s}] Using: {} (CLI)", d.tool),
        Verdict::DryRun => {
            let quoted: Vec<String> = shown_args.iter().map(|a| escape(&shell_words::quote(a)).into_owned()).collect();
            let sep = if quoted.is_empty() { "" } else { " " };
            format!("[skill:{s}] DRY RUN: would run: {}{sep}{}", d.tool, quoted.join(" "))
        }
        Verdict::Refuse => {
            let instead = d.instead.as_deref().unwrap_or("ask an operator");
            match d.required_tier {
                Required::Never => {
                    format!(
                        "[skill:{s}] REFUSED: {} is never allowed (this agent is tier {}; rule {}) — {instead}",
                        d.what, d.effective_tier, d.rule
                    )
                }
                Required::Tier(n) => {
                    format!(
                        "[skill:{s}] REFUSED: {} requires tier {n} (this agent is tier {}) — {instead}",
                        d.what, d.effective_tier
                    )
                }
            }
        }
    }
}
