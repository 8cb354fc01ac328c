//! The one decision function. The live gate, `tiershim explain`, dry-run and the policy examples
//! all call [`decide`]; there is no second matcher anywhere.
//!
//! `decide` is pure: everything that needs I/O (the install config, the caller's environment,
//! the real gh's path) is gathered before and passed in as [`Request`]. A refusal is a value.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::grammar::remote::Part;
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
    /// `hosts:` in `tiershim.yaml`: the only hosts an ssh call may reach (destination, jump
    /// hosts). None: the install lists none, and any host may be reached.
    pub hosts: Option<Vec<String>>,
    /// The real tools of this install that the parent process was found to be. Looked up only
    /// for a call that makes a [`Claim::Parent`].
    pub parents: Vec<Tool>,
    /// The policies of the gated tools an ssh remote command runs (docker, git, …), loaded for
    /// exactly the tools it names.
    pub policies: BTreeMap<Tool, Policy>,
    /// Set while judging one part of an ssh remote command: the host it runs on.
    pub remote_host: Option<String>,
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
    /// For an ssh call: the judgement of each part of the remote command, in text order (the
    /// same order as `Invocation::remote.parts`).
    pub parts: Vec<PartDecision>,
    /// The index in `parts` of the part that decided, when a part did.
    pub deciding_part: Option<usize>,
}

/// How one part of an ssh remote command was judged: by the same `decide()` and the policy of
/// the tool it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartDecision {
    /// The host it runs on.
    pub host: String,
    pub tool: Tool,
    pub verb: String,
    /// As log lines name it: `docker restart`, `uptime`, `systemctl restart`.
    pub shown: String,
    pub verdict: Verdict,
    pub required_tier: Required,
    pub rule: String,
    pub skill: String,
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

fn matches(rule: &Rule, action: &Action) -> bool {
    rule.verbs.contains(&action.verb) && rule.when.iter().all(|m| action.has(m))
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

/// The strictest rule matching one action; unclassified verbs are never allowed.
fn classify(tool: Tool, policy: &Policy, action: &Action) -> Finding {
    let mut best: Option<(&Rule, usize)> = None;
    for rule in policy.rules.iter().filter(|r| matches(r, action)) {
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
            Claim::Pinned { .. } | Claim::GhCredentialHelper { .. } if req.remote_host.is_some() => {
                // On a remote host, the operator's pins mean nothing: whatever it names is refused.
                let host = escape(req.remote_host.as_deref().unwrap_or_default()).into_owned();
                let (flag, value) = match claim {
                    Claim::Pinned { flag, value, .. } => (flag.as_str(), value.as_str()),
                    Claim::GhCredentialHelper { path } => ("-c credential.helper", path.as_str()),
                    _ => ("", ""),
                };
                out.push(never(
                    tool,
                    policy,
                    "remote-endpoint",
                    format!("{tool} {} {} on {host}", escape(flag), escape(value)),
                    format!(
                        "{} {} on {host}: an endpoint or helper on the remote host is the remote's, and this install pins none there",
                        escape(flag),
                        escape(value)
                    ),
                    &format!("drop {} and use the remote host's default", escape(flag)),
                ));
            }
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
            Claim::SshHost { host, via } => {
                if let Some(list) = &req.hosts
                    && !list.iter().any(|h| h.eq_ignore_ascii_case(host))
                {
                    out.push(never(
                        tool,
                        policy,
                        "host",
                        format!("ssh to {} ({via})", escape(host)),
                        format!("{via} {} is not one of the hosts tiershim.yaml lists in `hosts:`", escape(host)),
                        "use a host listed in tiershim.yaml `hosts:`, or ask an operator to add it",
                    ));
                }
            }
            Claim::Parent { tool: parent, what } => {
                if !req.parents.contains(parent) {
                    out.push(never(
                        tool,
                        policy,
                        "nested",
                        escape(what).into_owned(),
                        format!(
                            "{} is only run by this install's real {parent} for a call the gate already judged, and the parent process is not it",
                            escape(what)
                        ),
                        &format!("run the {parent} command that makes this call (git push, ssh -J) instead"),
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

    // Each part of an ssh remote command first, so that among equally strict findings the
    // remote command, not the ssh call around it, explains the decision.
    let mut findings = Vec::new();
    let mut parts = Vec::new();
    if let Some(remote) = inv.remote.as_deref() {
        for part in &remote.parts {
            let (f, p) = judge_part(tool, &remote.host, part, policy, req, effective);
            findings.push(f);
            parts.push(p);
        }
    }
    let n_parts = parts.len();
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
    let deciding_part = (worst < n_parts).then_some(worst);
    let verdict = match f.required {
        Required::Never => Verdict::Refuse,
        Required::Tier(n) if n > effective => Verdict::Refuse,
        r if dry_run && r.mutates() => Verdict::DryRun,
        _ => Verdict::Allow,
    };
    Decision {
        verdict,
        tool,
        verb: match deciding_part {
            Some(i) => parts[i].shown.clone(),
            None => inv.verb(),
        },
        skill: f.skill.clone(),
        required_tier: f.required,
        effective_tier: effective,
        dry_run,
        rule: f.rule.clone(),
        reasons,
        what: f.what.clone(),
        instead: if verdict == Verdict::Refuse { Some(instead_text(f)) } else { None },
        tier_note,
        parts,
        deciding_part,
    }
}

/// One part of an ssh remote command, judged by `decide()` with the policy of the tool it runs
/// (the ssh policy for remote programs and shell constructs) at the caller's effective tier.
fn judge_part(tool: Tool, host: &str, part: &Part, policy: &Policy, req: &Request, effective: u8) -> (Finding, PartDecision) {
    let shown = part.shown();
    let part_policy = if part.inv.tool == tool {
        Some(policy)
    } else {
        req.policies.get(&part.inv.tool)
    };
    let Some(part_policy) = part_policy else {
        // The gate loads every policy a remote command needs; without one, nothing is allowed.
        let f = never(
            tool,
            policy,
            "policy",
            format!("{} on {}", escape(&shown), escape(host)),
            format!(
                "no {} policy was loaded to judge `{}` on {}",
                part.inv.tool,
                escape(&shown),
                escape(host)
            ),
            "ask an operator: this is a fault in the gate",
        );
        let p = PartDecision {
            host: host.to_string(),
            tool: part.inv.tool,
            verb: part.inv.verb(),
            shown,
            verdict: Verdict::Refuse,
            required_tier: Required::Never,
            rule: f.rule.clone(),
            skill: f.skill.clone(),
        };
        return (f, p);
    };
    let sub = Request {
        ceiling: effective,
        env_tier: Some(effective.to_string()),
        env_dry_run: req.env_dry_run.clone(),
        dry_run_pinned: req.dry_run_pinned,
        parents: req.parents.clone(),
        remote_host: Some(host.to_string()),
        ..Request::default()
    };
    let d = decide(&part.inv, part_policy, &sub);
    let host_shown = escape(host);
    // An unclassified remote program reads better by its name (`rm`) than as `ssh run rm`.
    let what = if d.rule == format!("{}.unclassified", d.tool) && d.tool == tool {
        escape(&shown).into_owned()
    } else {
        d.what.clone()
    };
    let f = Finding {
        required: d.required_tier,
        rule: d.rule.clone(),
        skill: d.skill.clone(),
        what: format!("{what} on {host_shown}"),
        reason: format!("on {host_shown}: {}", d.reasons.join("; ")),
        instead: d.instead.clone(),
    };
    let p = PartDecision {
        host: host.to_string(),
        tool: d.tool,
        verb: d.verb,
        shown,
        verdict: d.verdict,
        required_tier: d.required_tier,
        rule: d.rule,
        skill: d.skill,
    };
    (f, p)
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
        Verdict::Allow => match d.deciding_part.and_then(|i| d.parts.get(i)) {
            // `ssh → docker ps`: the remote command that decided, as the skill would name it.
            Some(p) => format!("[skill:{s}] Using: {} → {} (CLI)", d.tool, escape(&p.shown)),
            None => format!("[skill:{s}] Using: {} (CLI)", d.tool),
        },
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
