//! Running a policy's own examples through the real grammar and the driver ([`super::judge`])
//! with the [`Clean`] fact source. Used when an override policy loads, by `tiershim policy
//! check`, and by the test suite for the embedded policy. An example is judged at its rule's
//! tier:
//!
//! Examples may say what stdin holds (`stdin:` text, or `terminal: true`).
//!
//! - `allow` argv: allowed at the rule's tier *by this rule*, and refused one tier below;
//! - `refuse` argv: refused at the rule's tier (tier 3 for `never`); for a `never` rule, refused
//!   by this rule.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::Source;
use crate::decision::{Changes, Decision, Facts, Request, Verdict};
use crate::error::Result;
use crate::grammar::{self, Invocation};
use crate::policy::{Examples, Policy, Required};
use crate::scope::Rules;
use crate::tool::Tool;

/// A policy example's facts: those of a clean call. No skill raises a tier, a scope check finds
/// no changed file (path rules are the skills' business, not the policy examples'), a probe
/// answers that the call is what argv says (a checkout operand is a branch, a push lands where
/// it names), the repository's configuration is the operator's, and no remote host is read.
pub struct Clean;

impl Source for Clean {
    fn facts(&mut self, _inv: &Invocation, _policy: &Policy, _req: &Request, first: &Decision) -> Result<Facts> {
        let mut facts = Facts {
            skill_tiers: Some(Default::default()),
            scope_rules: Some(Arc::new(Rules::empty())),
            remote: Some(Err("a policy example reads no remote host".into())),
            config: Some(Ok(Vec::new())),
            ..Facts::default()
        };
        for i in &first.needs.probes {
            facts.marks.insert(*i, Ok(Default::default()));
        }
        for (i, _) in &first.needs.scope {
            facts.changes.insert(
                *i,
                Ok(Changes {
                    files: std::sync::Arc::from([]),
                    how: "a policy example".into(),
                    repo: None,
                }),
            );
        }
        Ok(facts)
    }
}

/// Every policy an example of `tool`'s policy may need besides its own: for ssh, the policy of
/// each gated tool a remote command can run (`grammar::remote::TOOLS`); for the others, none.
pub fn remote_policies(tool: Tool, override_dir: Option<&Path>) -> Result<BTreeMap<Tool, Policy>> {
    if !tool.spec().remote_commands {
        return Ok(BTreeMap::new());
    }
    super::policies(
        Tool::ALL.into_iter().filter(|t| *t != tool && !t.spec().remote.is_empty()),
        override_dir,
    )
}

/// Every disagreement, one line each (empty when the examples hold).
pub fn run_examples(policy: &Policy) -> Vec<String> {
    run_examples_in(policy, None)
}

/// [`run_examples`] for a policy loaded from `dir`: an ssh policy's examples judge their remote
/// commands with the other tools' policies from the same directory (embedded where it has none).
pub fn run_examples_in(policy: &Policy, dir: Option<&Path>) -> Vec<String> {
    let mut out = Vec::new();
    let mut base = Request {
        ceiling: 3,
        ..Request::default()
    };
    match remote_policies(policy.tool, dir) {
        Ok(p) => base.policies = p,
        Err(e) => out.push(e.to_string()),
    }
    let judge = |argv: &[String], tier: u8, ex: &Examples| judge(policy, &base, argv, tier, ex);
    for (rule, ex) in policy.rules.iter().zip(&policy.examples) {
        if ex.allow.is_empty() && ex.refuse.is_empty() {
            out.push(format!("rule {} has no examples", rule.id));
            continue;
        }
        let tier = match rule.required {
            Required::Tier(n) => n,
            Required::Never => 3,
        };
        for argv in &ex.allow {
            let d = judge(argv, tier, ex);
            if d.verdict != Verdict::Allow || d.rule != rule.id {
                out.push(format!(
                    "rule {}: allow example `{} {}` is {} by rule {} at tier {tier}",
                    rule.id,
                    policy.tool,
                    argv.join(" "),
                    d.verdict.as_str(),
                    d.rule
                ));
            }
            if tier > 1 {
                let below = judge(argv, tier - 1, ex);
                if below.verdict != Verdict::Refuse {
                    out.push(format!(
                        "rule {}: allow example `{} {}` is not refused at tier {}",
                        rule.id,
                        policy.tool,
                        argv.join(" "),
                        tier - 1
                    ));
                }
            }
        }
        for argv in &ex.refuse {
            let d = judge(argv, tier, ex);
            let right_rule = rule.required != Required::Never || d.rule == rule.id;
            if d.verdict != Verdict::Refuse || !right_rule {
                out.push(format!(
                    "rule {}: refuse example `{} {}` is {} by rule {} at tier {tier}",
                    rule.id,
                    policy.tool,
                    argv.join(" "),
                    d.verdict.as_str(),
                    d.rule
                ));
            }
        }
    }
    out
}

/// The examples of the endpoint rules that are calls of this policy's tool (`[curl, …]` for
/// curl, `[gh, …]` for gh), judged the same way as a rule's.
pub fn run_endpoint_examples(policy: &Policy) -> Vec<String> {
    let mut out = Vec::new();
    let base = Request {
        ceiling: 3,
        ..Request::default()
    };
    for (rule, ex) in policy.endpoints.iter().zip(&policy.endpoint_examples) {
        let tier = match rule.required {
            Required::Tier(n) => n,
            Required::Never => 3,
        };
        let mine = |argv: &&Vec<String>| argv.first().map(String::as_str) == Some(policy.tool.name());
        for argv in ex.allow.iter().filter(mine) {
            let d = judge(policy, &base, &argv[1..], tier, &Examples::default());
            if d.verdict != Verdict::Allow || d.rule != rule.id {
                out.push(format!(
                    "endpoint {}: allow example `{}` is {} by rule {} at tier {tier}",
                    rule.id,
                    argv.join(" "),
                    d.verdict.as_str(),
                    d.rule
                ));
            }
            if tier > 1 && judge(policy, &base, &argv[1..], tier - 1, &Examples::default()).verdict != Verdict::Refuse {
                out.push(format!(
                    "endpoint {}: allow example `{}` is not refused at tier {}",
                    rule.id,
                    argv.join(" "),
                    tier - 1
                ));
            }
        }
        for argv in ex.refuse.iter().filter(mine) {
            let d = judge(policy, &base, &argv[1..], tier, &Examples::default());
            let right_rule = rule.required != Required::Never || d.rule == rule.id;
            if d.verdict != Verdict::Refuse || !right_rule {
                out.push(format!(
                    "endpoint {}: refuse example `{}` is {} by rule {} at tier {tier}",
                    rule.id,
                    argv.join(" "),
                    d.verdict.as_str(),
                    d.rule
                ));
            }
        }
    }
    out
}

/// Judge an example as the gate would, with the facts of a clean call ([`Clean`]). `ex` says
/// what the example's stdin and compose file hold and what tiershim.yaml says of its host.
fn judge(policy: &Policy, base: &Request, argv: &[String], tier: u8, ex: &Examples) -> Decision {
    let mut inv = (policy.tool.spec().parse)(argv, &grammar::Contents::new(), &ex.inputs);
    // The example's compose file, as the gate would have read it from /srv/app, and whether
    // the agent could change it.
    if ex.compose.is_some() || ex.compose_changeable {
        let judged = crate::compose::judge_text(ex.compose.as_deref().unwrap_or(""), std::path::Path::new("/srv/app")).map(|escalates| {
            crate::grammar::compose::Judged {
                escalates,
                changeable: if ex.compose_changeable {
                    vec!["the compose file /srv/app/compose.yaml".into()]
                } else {
                    Vec::new()
                },
            }
        });
        for a in inv.actions.iter_mut().filter(|a| a.compose.is_some()) {
            crate::grammar::compose::mark(a, &judged);
        }
    }
    if ex.compose_remote {
        for a in inv.actions.iter_mut().filter(|a| a.compose.is_some()) {
            a.add(crate::grammar::compose::REMOTE);
        }
    }
    let mut req = base.clone();
    req.env_tier = Some(tier.to_string());
    // What tiershim.yaml would say about the example's host.
    if let (Some(h), Some(r)) = (&ex.remote_host, inv.remote.as_deref()) {
        req.remote.insert(r.host.to_ascii_lowercase(), h.clone());
    }
    match super::judge(&inv, policy, &mut req, &mut Clean) {
        Ok(d) => d,
        // `Clean` gathers nothing that can fail; were it to, the example reads as refused.
        Err(e) => {
            let mut d = crate::decision::decide(&inv, policy, &req);
            d.verdict = Verdict::Refuse;
            d.reasons.push(e.to_string());
            d
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::Tool;

    #[test]
    fn every_embedded_policy_loads_and_its_examples_hold() {
        for tool in Tool::ALL {
            let p = Policy::embedded_with_examples(tool).unwrap_or_else(|e| panic!("{e}"));
            let mut failures = run_examples(&p);
            failures.extend(run_endpoint_examples(&p));
            assert!(failures.is_empty(), "{}:\n{}", tool, failures.join("\n"));
        }
    }

    #[test]
    fn every_endpoint_rule_has_an_example_for_each_tool_that_can_reach_it() {
        let curl = Policy::embedded_with_examples(Tool::Curl).unwrap_or_else(|e| panic!("{e}"));
        for (rule, ex) in curl.endpoints.iter().zip(&curl.endpoint_examples) {
            let tools: std::collections::BTreeSet<&str> = ex
                .allow
                .iter()
                .chain(&ex.refuse)
                .filter_map(|a| a.first().map(String::as_str))
                .collect();
            assert!(tools.contains("curl"), "endpoint {} has no curl example", rule.id);
        }
    }

    #[test]
    fn the_runtime_form_has_the_same_rules_as_the_yaml() {
        for tool in Tool::ALL {
            let a = Policy::embedded(tool).unwrap_or_else(|e| panic!("{e}"));
            let b = Policy::embedded_with_examples(tool).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(a.rules, b.rules, "{tool}");
            assert_eq!(a.endpoints, b.endpoints, "{tool}");
            assert_eq!((&a.pass, &a.pinned), (&b.pass, &b.pinned), "{tool}");
            assert_eq!(a.set, b.set, "{tool}");
            assert_eq!(a.set_by_tier, b.set_by_tier, "{tool}");
            assert_eq!(
                (&a.skill, &a.must_match, &a.credentials),
                (&b.skill, &b.must_match, &b.credentials),
                "{tool}"
            );
        }
    }
}
