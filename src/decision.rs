//! The one decision function. The live gate, `tiershim explain`, dry-run and the policy examples
//! all call [`decide`]; there is no second matcher anywhere.
//!
//! `decide` is pure: everything that needs I/O (the install config, the caller's environment,
//! the real gh's path) is gathered before and passed in as [`Request`]. A refusal is a value.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::Serialize;

use crate::cooldown::{self, Charge, Standing};
use crate::grammar::remote::Part;
use crate::grammar::{Access, Action, Claim, Invocation};
use crate::policy::cooldown::Class;
use crate::policy::endpoints::{Endpoint, HttpRequest};
use crate::policy::{Builtin, Policy, Required, Rule, ScopeKind};
use crate::sanitize::{escape, redact};
use crate::scope::{Rules, Violation};
use crate::tier::{dry_run_of, tier_and_why};
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
    /// The tool's credential the operator pinned (in `env:` or the secrets file), if any: then
    /// the call may only connect where the pins say ([`Claim::Destination`]).
    pub pinned_credential: Option<String>,
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
    /// `remote:` in `tiershim.yaml`: per ssh host (lower case), its workspaces, vouched-for
    /// compose projects and restartable units.
    pub remote: BTreeMap<String, crate::remote_fence::RemoteHost>,
    /// The working directory and where the call's local files really are (`files::gather`).
    pub local: crate::files::LocalFacts,
    /// Where the call may write: the install's workspaces and its own files (`files::Fence`).
    pub fence: crate::files::Fence,
    /// Configuration the real tool would read from a place the agent can write, each with the
    /// key that runs a program or redirects the call (`tool_config::agent_written`).
    pub agent_config: Vec<String>,
    /// Who could have written each file the call claims as the operator's
    /// ([`Claim::Operator`], `crate::operator_files`); None when not looked at (a policy example,
    /// the inventory), and then such a claim stands.
    pub operator_files: Option<crate::operator_files::Owners>,
    /// `cooldown_state:` in `tiershim.yaml`: restart and redeploy budgets are enforced.
    pub cooldown: bool,
    /// What I/O found out for this call (skills, changed files), when the decision asked.
    pub facts: Facts,
}

/// Facts gathered by I/O before `decide()` (see `facts.rs`). Empty until a first decision says
/// what it [`Needs`]; a decision that lacks a fact it needs refuses.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// Per skill name consulted, the Tier Requirement that binds (the highest of its files).
    /// `Some` once skills were consulted (a name without a requirement is absent).
    pub skill_tiers: Option<BTreeMap<String, SkillTier>>,
    /// The path patterns of every skill, when a scope check needs them.
    pub scope_rules: Option<Arc<Rules>>,
    /// Per action index: the files the action changes, or why they could not be worked out.
    pub changes: BTreeMap<usize, Result<Changes, String>>,
    /// The cooldown budgets and counts, read under the state file's lock; or why the state
    /// file cannot be used (the call is then refused).
    pub cooldown: Option<Result<cooldown::Facts, String>>,
    /// What was read over ssh about the remote host of an ssh call (`crate::remote_facts`), or
    /// why it could not be read.
    pub remote: Option<Result<RemoteFacts, String>>,
    /// Per action index with a probe: the marks the real git's answer adds, or why it could not
    /// answer (the call is then refused).
    pub marks: BTreeMap<usize, Result<BTreeSet<String>, String>>,
    /// The configuration the real tool will read that runs a program or redirects a write and
    /// comes from a file the agent could have written; or why it could not be read.
    pub config: Option<Result<Vec<ConfigHit>, String>>,
}

/// What the gate read on the remote host of an ssh call, with a fixed read-only command over the
/// same connection (`crate::remote_facts`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteFacts {
    /// Per (part, action) of a remote `compose up`: what its files come to, or why they could
    /// not be read or understood.
    pub compose: BTreeMap<(usize, usize), Result<crate::grammar::compose::Judged, String>>,
    /// Per remote path a part writes (as located from the command): where it really leads.
    pub paths: BTreeMap<String, Result<String, String>>,
}

/// One key of the configuration a real tool reads that runs a program or redirects a write,
/// from a file the agent could have written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigHit {
    /// The file it comes from, as the tool names it.
    pub file: String,
    pub key: String,
    /// What the key does (`runs a program`).
    pub why: String,
    /// Why the agent could have written the file.
    pub writable: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillTier {
    pub tier: u8,
    /// The skill file that asks for it.
    pub file: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Shared with the decision's [`ScopeReport`]: there can be many thousands.
    pub files: Arc<[String]>,
    /// How they were worked out (`git diff --name-only origin/main...HEAD`).
    pub how: String,
    /// The repository under `skills.repos` they belong to, if any.
    pub repo: Option<String>,
}

/// The facts a decision lacked. Empty when the decision is final.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Needs {
    /// Skills whose Tier Requirement applies to a call that changes something.
    pub skills: BTreeSet<String>,
    /// Actions (by index) whose changed files a scope check needs.
    pub scope: Vec<(usize, ScopeKind)>,
    /// The call counts against a cooldown budget: the budgets and the state file.
    pub cooldown: bool,
    /// A part of an ssh remote command needs what only the remote host can tell: the files of a
    /// `compose up`, where a write really leads.
    pub remote: bool,
    /// Actions (by index) whose probe the real git must answer ([`crate::grammar::Probe`]).
    pub probes: Vec<usize>,
    /// The configuration the real tool will read, judged for keys the agent could have written.
    pub config: bool,
}

impl Needs {
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty() && self.scope.is_empty() && !self.cooldown && !self.remote && self.probes.is_empty() && !self.config
    }
}

/// What the scope check of a decision looked at and found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScopeReport {
    pub check: ScopeKind,
    /// How the files were worked out.
    pub how: String,
    pub files: Arc<[String]>,
    /// The skill files whose patterns were applied.
    pub rules_from: Arc<[String]>,
    pub violations: Vec<Violation>,
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
    /// The built-in rule that decided, when the engine's own rule did (not a policy's).
    #[serde(skip)]
    pub builtin: Option<Builtin>,
    /// The marks the deciding policy rule matched on (its `when:`); empty for a built-in rule.
    #[serde(skip)]
    pub matched: Vec<String>,
    pub reasons: Vec<String>,
    /// What was refused, in words (`docker run`, `force-pushing`).
    pub what: String,
    /// What to do instead; only for refusals.
    pub instead: Option<String>,
    /// Why the effective tier is what it is, when the environment asked for something odd.
    pub tier_note: Option<String>,
    /// Why the tier is below what `CLAUDEOPS_TIER` says, when it is set but not obeyed
    /// (`CLAUDEOPS_TIER=banana is not 1, 2 or 3`): the refusal line says it.
    #[serde(skip)]
    pub tier_why: Option<String>,
    /// Why dry-run is on (or stays on) though `CLAUDEOPS_DRY_RUN` did not clearly say so.
    pub dry_run_note: Option<String>,
    /// The path-scope check, when one ran.
    pub scope: Option<ScopeReport>,
    /// Facts the decision lacked; when not empty the verdict is a provisional refusal, and the
    /// gate gathers them and decides again.
    #[serde(skip)]
    pub needs: Needs,
    /// For an ssh call: the judgement of each part of the remote command, in text order (the
    /// same order as `Invocation::remote.parts`).
    pub parts: Vec<PartDecision>,
    /// The index in `parts` of the part that decided, when a part did.
    pub deciding_part: Option<usize>,
    /// The cooldown budgets the call counts against and how they stand (judged once the
    /// counts were read; empty when no budget applies).
    pub cooldown: Vec<Standing>,
    /// The services the call would count against (`ie01:jellyfin` for a remote part), one per
    /// target named; what the gate records when it runs the call.
    #[serde(skip)]
    pub charges: Vec<Charge>,
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
    /// The built-in rule it comes from, when the engine's own rule made it.
    builtin: Option<Builtin>,
    /// The marks of the policy rule it comes from (`when:`).
    matched: Vec<String>,
    skill: String,
    what: String,
    reason: String,
    instead: Option<String>,
    /// The action it judges, for findings from a rule (not claims).
    action: Option<usize>,
    /// Scope checks the matching rules ask for, and their file limits per tier.
    scope: Option<ScopeKind>,
    max_files: BTreeMap<u8, usize>,
    /// The cooldown class the matching rules give the action (the strongest).
    cooldown: Option<Class>,
}

impl Finding {
    /// The finding of a built-in rule.
    fn by(mut self, rule: Builtin) -> Finding {
        self.builtin = Some(rule);
        self
    }

    /// A finding that asks for no scope check, file limit or cooldown, and judges no action of
    /// its own (a rule's match sets those afterwards).
    fn new(required: Required, rule: String, skill: String, what: String, reason: String, instead: Option<String>) -> Finding {
        Finding {
            required,
            rule,
            builtin: None,
            matched: Vec::new(),
            skill,
            what,
            reason,
            instead,
            action: None,
            scope: None,
            max_files: BTreeMap::new(),
            cooldown: None,
        }
    }
}

/// `rule <id>: <what> is never allowed`, or `… requires tier N`; `id` may carry a detail
/// (`http.merge (PUT /repos/o/r/pulls/1/merge)`).
fn rule_reason(required: Required, id: &str, what: &str) -> String {
    match required {
        Required::Never => format!("rule {id}: {what} is never allowed"),
        Required::Tier(n) => format!("rule {id}: {what} requires tier {n}"),
    }
}

fn matches(rule: &Rule, verb: &str, action: &Action) -> bool {
    rule.verbs.contains(verb) && rule.when.iter().all(|m| action.has(m))
}

fn from_rule(tool: Tool, rule: &Rule, action: &Action) -> Finding {
    let mut what = rule.what.as_deref().map_or_else(|| format!("{tool} {}", action.verb), String::from);
    // A mark `<m>: <detail>` says what made the action `<m>` (the file and key a compose
    // judgement found): a refusal by a rule on `<m>` names it.
    let details: Vec<String> = rule
        .when
        .iter()
        .flat_map(|m| {
            let prefix = format!("{m}: ");
            action
                .marks
                .iter()
                .filter_map(move |x| x.strip_prefix(&prefix).map(|d| escape(d).into_owned()))
        })
        .collect();
    if !details.is_empty() {
        what = format!("{what} ({})", details.join("; "));
    }
    let reason = rule_reason(rule.required, &rule.id, &what);
    let mut f = Finding::new(
        rule.required,
        rule.id.to_string(),
        rule.skill.to_string(),
        what,
        reason,
        rule.instead.as_deref().map(String::from),
    );
    f.matched = rule.when.iter().map(|m| m.to_string()).collect();
    f
}

fn never(tool: Tool, policy: &Policy, rule: Builtin, what: String, reason: String, instead: &str) -> Finding {
    Finding::new(
        Required::Never,
        rule.id(tool),
        policy.skill.clone(),
        what,
        reason,
        Some(instead.to_string()),
    )
    .by(rule)
}

fn from_endpoint(rule: &Endpoint, action: &Action) -> Finding {
    let request = action.http.as_ref().map_or_else(String::new, |h| match &h.mutation {
        Some(m) => format!("GraphQL mutation {}", escape(m)),
        None => format!("{} {}", escape(&h.method), escape(&redact(&h.path))),
    });
    let what = rule.what.as_deref().map_or_else(|| request.clone(), String::from);
    let reason = rule_reason(rule.required, &format!("{} ({request})", rule.id), &what);
    Finding::new(
        rule.required,
        rule.id.to_string(),
        rule.skill.to_string(),
        what,
        reason,
        rule.instead.as_deref().map(String::from),
    )
}

/// The strictest rule matching one action, the policy's endpoint rules included for an HTTP
/// request; unclassified verbs are never allowed. Rules that name the action's own verb are used
/// when there are any, else those naming its fallback (class) verb.
fn classify(tool: Tool, policy: &Policy, action: &Action) -> Finding {
    let mut verb = action.verb.as_str();
    if !policy.rules.iter().any(|r| r.verbs.contains(verb))
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
    // Every matching rule's scope check applies, whichever rule sets the tier: the tool's
    // rules and, for an HTTP request, the endpoint rules.
    let scoping = policy.rules.iter().filter(|r| matches(r, verb, action) && r.scope.is_some());
    let mut scope = None;
    let mut max_files = BTreeMap::new();
    let request = action.http.as_ref().map(HttpRequest::of);
    let endpoint_scoping = request
        .as_ref()
        .map(|r| {
            policy
                .endpoints
                .iter()
                .filter(|e| e.scope.is_some() && e.matches(r))
                .map(|e| (e.scope, &e.max_files))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    for (s, limits) in scoping.map(|r| (r.scope, &r.max_files)).chain(endpoint_scoping) {
        scope = scope.or(s);
        for (t, n) in limits {
            let e = max_files.entry(*t).or_insert(*n);
            *e = (*e).min(*n);
        }
    }
    let Some((rule, specificity)) = best else {
        return never(
            tool,
            policy,
            Builtin::Unclassified,
            format!("{tool} {}", escape(&action.verb)),
            format!(
                "`{tool} {}` is not classified by the policy ({}), and what is not classified is refused",
                escape(&action.verb),
                policy.source
            ),
            "ask an operator to add a rule for it to the policy if it is needed",
        );
    };
    // An endpoint rule can only make a classified request stricter; among equals it explains
    // the decision, being the more specific.
    let endpoint = action.http.as_ref().zip(request.as_ref()).and_then(|(h, r)| {
        let matched: Vec<&Endpoint> = policy.endpoints.iter().filter(|e| e.matches(r)).collect();
        // `mutations: ["*"]` is the fallback for mutations no other rule names.
        let named = matched.iter().any(|e| e.names_mutation(h));
        matched
            .into_iter()
            .filter(|e| !(named && e.is_mutation_fallback()))
            .max_by_key(|e| (e.required, e.specificity()))
    });
    let mut f = match endpoint {
        Some(e) if e.required > rule.required || (e.required == rule.required && e.specificity() > specificity) => from_endpoint(e, action),
        _ => from_rule(tool, rule, action),
    };
    f.scope = scope;
    f.max_files = max_files;
    f.cooldown = policy
        .rules
        .iter()
        .filter(|r| matches(r, verb, action))
        .filter_map(|r| r.cooldown)
        .max();
    f
}

/// The call's local files against the fence (`files::check`): every write needs tier 2, one
/// outside the workspaces or of names the server chooses tier 3; hidden paths, git directories,
/// the install's own files, and reads outside the working directory or of credentials, never.
/// On a remote host only the files a call reads are judged here; where it writes is the remote
/// side of the model's (`judge_part`, `remote_fence`).
fn check_files(tool: Tool, policy: &Policy, inv: &Invocation, req: &Request, out: &mut Vec<Finding>) {
    let remote = req.remote_host.is_some();
    for j in crate::files::check(inv, &req.local, &req.fence)
        .into_iter()
        .filter(|j| !(remote && j.file.access.writes()))
    {
        let path = escape(&redact(&j.file.path)).into_owned();
        let flag = escape(&j.file.flag).into_owned();
        let why = escape(&j.why).into_owned();
        let (verb, rule, instead) = match (j.file.access, j.required) {
            (Access::Read, _) => (
                "reading",
                Builtin::LocalFile,
                "send only files inside the working directory that are neither hidden nor credentials".to_string(),
            ),
            (_, Required::Never) => (
                "writing",
                Builtin::LocalFile,
                format!("{why}; write to a plain name below a workspace, or read the output from standard output"),
            ),
            (_, Required::Tier(2)) => (
                "writing",
                Builtin::LocalWrite,
                "tier 1 writes no file; read the output from standard output, or escalate to a tier 2 agent".to_string(),
            ),
            (_, Required::Tier(_)) => (
                "writing",
                Builtin::LocalWrite,
                format!("{why}; name each file the call writes, below a workspace, or escalate to a tier 3 agent"),
            ),
        };
        let id = rule.id(tool);
        let what = format!("{tool} {verb} {path} ({flag})");
        out.push(
            Finding::new(
                j.required,
                id.clone(),
                policy.skill.clone(),
                what.clone(),
                format!("{}: {flag} {path}: {why}", rule_reason(j.required, &id, &what)),
                Some(instead),
            )
            .by(rule),
        );
    }
}

/// Under the kernel fence, tier 1 writes no repository: a git verb that writes its own (a
/// fetch's objects and refs) would fail there with "Permission denied", so it needs tier 2,
/// said before it runs rather than by the kernel after.
fn check_repository_writes(tool: Tool, policy: &Policy, inv: &Invocation, req: &Request, out: &mut Vec<Finding>) {
    if tool != Tool::Git || !req.fence.kernel_fence || req.remote_host.is_some() {
        return;
    }
    for a in &inv.actions {
        if !crate::grammar::git::WRITES_REPOSITORY.contains(&a.verb.as_str()) {
            continue;
        }
        let id = Builtin::LocalWrite.id(tool);
        let what = format!("git {} (writes the repository: objects, remote-tracking refs, FETCH_HEAD)", a.verb);
        out.push(
            Finding::new(
                Required::Tier(2),
                id.clone(),
                policy.skill.clone(),
                what.clone(),
                format!(
                    "{}: the kernel fence of tier 1 lets no repository be written",
                    rule_reason(Required::Tier(2), &id, &what)
                ),
                Some("fetch as the operator (the entrypoint or a timer), or escalate to a tier 2 agent".to_string()),
            )
            .by(Builtin::LocalWrite),
        );
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
                    Builtin::RemoteEndpoint,
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
                        Builtin::Pinned,
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
                            Builtin::Pinned,
                            format!("{tool} {shown}"),
                            format!("{shown} does not match the pinned {var}={}", escape(p)),
                            &format!("drop {} and use the {var} this install pins", escape(flag)),
                        ));
                    }
                } else if let Some(x) = exclusive.iter().find(|x| req.pinned.contains_key(**x)) {
                    out.push(never(
                        tool,
                        policy,
                        Builtin::Pinned,
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
                        Builtin::CredentialHelper,
                        "git -c credential.helper".to_string(),
                        format!("credential.helper=!{} is not this install's real gh", escape(path)),
                        "let gh run git itself (gh pr create pushes for you)",
                    ));
                }
            }
            Claim::Destination { var, value, flag } => {
                // On a remote host the operator's pins mean nothing; nothing pinned goes there.
                if req.remote_host.is_some() {
                    continue;
                }
                if let Some(cred) = &req.pinned_credential
                    && req.pinned.get(*var) != Some(value)
                {
                    let pinned = match req.pinned.get(*var) {
                        Some(p) => format!("the pinned {var}={}", escape(&redact(p))),
                        None => format!("{var}, which this install does not pin"),
                    };
                    let value = escape(&redact(value)).into_owned();
                    out.push(never(
                        tool,
                        policy,
                        Builtin::CredentialDestination,
                        format!("{tool} {} {value}", escape(flag)),
                        format!(
                            "{} {value}: the pinned {cred} is only ever sent to the pinned destination, and this is not {pinned}",
                            escape(flag),
                        ),
                        &format!(
                            "drop {}: the pinned credential goes to the pinned {var} only (or ask the operator to pin {var})",
                            escape(flag)
                        ),
                    ));
                }
            }
            Claim::AllHosts { via } => {
                if req.hosts.is_some() {
                    out.push(never(
                        tool,
                        policy,
                        Builtin::Host,
                        format!("{tool} to hosts it does not name ({})", escape(via)),
                        format!(
                            "{}: the call reaches hosts it does not name one by one, and tiershim.yaml lists the only hosts allowed in `hosts:`",
                            escape(via)
                        ),
                        "name each host (ansible-playbook --limit web01,web02) from tiershim.yaml `hosts:`",
                    ));
                }
            }
            Claim::Operator { path, flag, .. } => {
                let shown = escape(path).into_owned();
                let why = match (&req.remote_host, &req.operator_files) {
                    (Some(host), _) => Some(format!("who can write {shown} on {} cannot be checked from here", escape(host))),
                    (None, None) => None,
                    (None, Some(owners)) => match owners.get(path) {
                        Some(Ok(None)) => None,
                        Some(Ok(Some(why))) => Some(escape(why).into_owned()),
                        Some(Err(e)) => Some(format!("who can write it could not be checked: {}", escape(e))),
                        None => Some("who can write it was not checked".to_string()),
                    },
                };
                if let Some(why) = why {
                    out.push(never(
                        tool,
                        policy,
                        Builtin::AgentFile,
                        format!("{tool} with {shown} ({})", escape(flag)),
                        format!(
                            "{shown} ({}): {tool} takes it as instructions, and the agent could have written it: {why}",
                            escape(flag)
                        ),
                        "use files only the operator can write (owned by the operator, not writable by the agent, nor in a directory it can write)",
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
                        Builtin::Host,
                        format!("{tool} to {} ({via})", escape(host)),
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
                        Builtin::Nested,
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
                Builtin::PinnedEnv,
                format!("{var}={}", escape(v)),
                format!("{var}={} in the environment does not match what this install pins", escape(v)),
                &format!("unset {var}"),
            ));
        }
    }
}

/// Configuration the real tool will read that the agent could have written and that runs a
/// program or redirects a write: never (DESIGN §3.2, "configuration the agent can write is
/// data").
fn check_config(tool: Tool, policy: &Policy, req: &Request, out: &mut Vec<Finding>) {
    match &req.facts.config {
        Some(Ok(hits)) if !hits.is_empty() => {
            // One finding names every key and file; the reasons say why each counts.
            let named: Vec<String> = hits.iter().map(|h| format!("{} in {}", escape(&h.key), escape(&h.file))).collect();
            let why: Vec<String> = hits
                .iter()
                .map(|h| {
                    format!(
                        "{} in {} {}, and {}",
                        escape(&h.key),
                        escape(&h.file),
                        escape(&h.why),
                        escape(&h.writable)
                    )
                })
                .collect();
            out.push(never(
                tool,
                policy,
                Builtin::AgentConfig,
                format!("{tool} with configuration the agent could have written ({})", named.join(", ")),
                why.join("; "),
                "an operator removes the key (or makes the file theirs); the agent's files configure nothing that runs",
            ));
        }
        Some(Ok(_)) | None => {}
        Some(Err(why)) => out.push(never(
            tool,
            policy,
            Builtin::AgentConfig,
            format!("{tool} whose configuration cannot be read ({})", escape(why)),
            format!("the configuration {tool} would read cannot be judged: {}", escape(why)),
            "fix what the message names and try again",
        )),
    }
}

/// The decision for one call. Pure. It runs in phases, each of which refuses the call or passes
/// it on:
///
/// 1. [`findings`]: what every part of the call requires (the parts of an ssh remote command,
///    each action's strictest rule, the claims, the local files, the configuration, the
///    cooldown targets), raised by the skills' Tier Requirements ([`raise_by_skills`]);
/// 2. the strictest finding decides the verdict; a refusal there is final (no fact can lower a
///    requirement, so a call refused without facts stays refused);
/// 3. [`Judging::scope`]: the path-scope checks the matching rules ask for;
/// 4. [`Judging::cooldown`]: the budgets, judged with the counts read under the lock;
/// 5. [`Judging::lacking`]: facts still missing make the answer a provisional refusal, with
///    the [`Needs`] the driver (`crate::judge`) gathers before it decides again.
pub fn decide(inv: &Invocation, policy: &Policy, req: &Request) -> Decision {
    let tool = inv.tool;
    let (effective, why) = tier_and_why(req.ceiling, req.env_tier.as_deref());
    let tier_note = why.as_ref().map(|w| format!("{w}, so tier {effective}"));
    let tier_why = why.filter(|_| req.env_tier.is_some());
    let (dry_run, dry_run_note) = dry_run_of(req.dry_run_pinned, req.env_dry_run.as_deref());
    let mut j = Judging {
        inv,
        policy,
        req,
        effective,
        reasons: Vec::new(),
        needs: Needs::default(),
    };

    // Phase 1: every finding, raised by the skills.
    let (mut findings, parts, charges) = j.findings(dry_run);
    j.raise_by_skills(&mut findings);
    j.reasons = findings
        .iter()
        .map(|f| f.reason.clone())
        .chain(tier_note.clone())
        .chain(dry_run_note.clone())
        .collect();

    // Phase 2: the strictest decides; among equals the first (the remote command's parts come
    // first, then the actions in argv order).
    let worst = strictest(&findings);
    let decider = &findings[worst];
    let deciding_part = (worst < parts.len()).then_some(worst);
    let mut d = Decision {
        verdict: verdict_for(decider.required, effective, dry_run),
        tool,
        verb: match deciding_part {
            Some(i) => parts[i].shown.clone(),
            None => inv.verb(),
        },
        skill: decider.skill.clone(),
        required_tier: decider.required,
        effective_tier: effective,
        dry_run,
        rule: decider.rule.clone(),
        builtin: decider.builtin,
        matched: decider.matched.clone(),
        reasons: Vec::new(),
        what: decider.what.clone(),
        instead: None,
        tier_note,
        tier_why,
        dry_run_note,
        scope: None,
        needs: Needs::default(),
        parts,
        deciding_part,
        cooldown: Vec::new(),
        charges: Vec::new(),
    };
    if d.verdict == Verdict::Refuse {
        d.instead = Some(instead_text(decider));
        d.reasons = std::mem::take(&mut j.reasons);
        return d;
    }

    // Phases 3 to 5: each refuses or passes.
    let mut refusal = j.scope(&findings, &mut d);
    if refusal.is_none() {
        d.charges = charges;
        refusal = j.cooldown(&mut d).or_else(|| j.lacking(&d));
    }
    if let Some(r) = refusal {
        // Only a provisional answer says what it lacks.
        if r.rule == Builtin::Facts {
            d.needs = std::mem::take(&mut j.needs);
        }
        r.apply(tool, &mut d);
    }
    d.reasons = j.reasons;
    d
}

/// A refusal by one of the later phases: the built-in rule and its words. The rest of the
/// decision (tiers, the finding's skill, what was judged) stays as the strictest finding left it.
struct Refusal {
    rule: Builtin,
    what: String,
    instead: String,
    /// The skill whose rule asked for the check, when it is named.
    skill: Option<String>,
    /// The tier it needs, when it is not the strictest finding's.
    required: Option<Required>,
}

impl Refusal {
    fn apply(self, tool: Tool, d: &mut Decision) {
        d.verdict = Verdict::Refuse;
        d.rule = self.rule.id(tool);
        d.builtin = Some(self.rule);
        d.matched = Vec::new();
        d.what = self.what;
        d.instead = Some(self.instead);
        if let Some(s) = self.skill {
            d.skill = s;
        }
        if let Some(r) = self.required {
            d.required_tier = r;
        }
    }
}

/// One decision in progress: the call, what it is judged with, and what has been said so far.
struct Judging<'a> {
    inv: &'a Invocation,
    policy: &'a Policy,
    req: &'a Request,
    effective: u8,
    /// Every reason, in the order the phases found them.
    reasons: Vec<String>,
    /// The facts the decision lacks so far.
    needs: Needs,
}

impl Judging<'_> {
    /// Phase 1: what each part of the call requires, with the parts of an ssh remote command
    /// first (so that among equally strict findings the remote command, not the ssh call
    /// around it, explains the decision); the parts' judgements; and what the call would count
    /// against cooldown budgets.
    fn findings(&mut self, dry_run: bool) -> (Vec<Finding>, Vec<PartDecision>, Vec<Charge>) {
        let (tool, inv, policy, req) = (self.inv.tool, self.inv, self.policy, self.req);
        let mut findings = Vec::new();
        let mut parts = Vec::new();
        let mut charges = Vec::new();
        if let Some(remote) = inv.remote.as_deref() {
            for (i, part) in remote.parts.iter().enumerate() {
                let j = judge_part(tool, remote, i, part, policy, req, self.effective, dry_run);
                findings.push(j.finding);
                parts.push(j.part);
                // The parts' own skills were raised inside their decisions; what they still
                // lack is ours.
                self.needs.skills.extend(j.skills);
                charges.extend(j.charges);
                self.needs.remote |= j.needs_remote;
            }
        }
        if let Some(problem) = &inv.problem {
            findings.push(never(
                tool,
                policy,
                Builtin::Grammar,
                format!("a {tool} call tiershim cannot parse ({})", escape(&redact(problem))),
                format!("tiershim cannot understand this {tool} call: {}", escape(&redact(problem))),
                "write the call in a form the gate understands, or ask an operator",
            ));
        } else if inv.actions.is_empty() {
            findings.push(never(
                tool,
                policy,
                Builtin::Grammar,
                tool.to_string(),
                "the call does nothing the gate can name".into(),
                "name a command",
            ));
        } else {
            findings.extend(inv.actions.iter().enumerate().map(|(i, a)| {
                // What the real git answered about the action adds to its marks.
                let marked;
                let a = match req.facts.marks.get(&i) {
                    Some(Ok(m)) if !m.is_empty() => {
                        let mut x = a.clone();
                        x.marks.extend(m.iter().cloned());
                        marked = x;
                        &marked
                    }
                    _ => a,
                };
                let mut f = classify(tool, policy, a);
                f.action = Some(i);
                f
            }));
            for (i, r) in &req.facts.marks {
                if let (Err(why), Some(a)) = (r, inv.actions.get(*i)) {
                    findings.push(never(
                        tool,
                        policy,
                        Builtin::Target,
                        format!("{tool} {} whose target cannot be worked out ({})", escape(&a.verb), escape(why)),
                        format!("{tool} {}: {}", escape(&a.verb), escape(why)),
                        "fix what the message names and try again",
                    ));
                }
            }
        }
        check_config(tool, policy, req, &mut findings);
        check_claims(tool, policy, inv, req, &mut findings);
        check_files(tool, policy, inv, req, &mut findings);
        check_repository_writes(tool, policy, inv, req, &mut findings);
        for c in &req.agent_config {
            let c = escape(c).into_owned();
            findings.push(never(
                tool,
                policy,
                Builtin::AgentConfig,
                format!("{tool} with configuration the agent can change ({c})"),
                format!("{c}: {tool} would read this from a file the agent can write, and it runs a program or redirects the call"),
                "ask the operator to make the tool home's files theirs (writable by their owner only; root's in a hardened install), or to remove the key",
            ));
        }
        if req.cooldown {
            check_targets(tool, inv, req, &mut findings, &mut charges);
        }
        (findings, parts, charges)
    }

    /// A skill's Tier Requirement raises the calls of that skill that change something; reads
    /// (tier 1 rules) are never raised, so observing needs no skill file. Without the skills'
    /// tiers, the skills to read are what the decision lacks.
    fn raise_by_skills(&mut self, findings: &mut [Finding]) {
        for f in findings.iter_mut().filter(|f| f.action.is_some()) {
            let Required::Tier(n) = f.required else { continue };
            if n < 2 {
                continue;
            }
            match self.req.facts.skill_tiers.as_ref() {
                None => {
                    self.needs.skills.insert(f.skill.clone());
                }
                Some(tiers) => {
                    if let Some(t) = tiers.get(&f.skill).filter(|t| t.tier > n) {
                        f.required = Required::Tier(t.tier);
                        f.reason = format!("{}; skill {} ({}) raises it to tier {}", f.reason, f.skill, t.file, t.tier);
                        f.instead = None;
                    }
                }
            }
        }
    }

    /// Phase 3: the path-scope check of every action whose rules ask for one: a file the
    /// skills deny, more files than the tier may change, or changed files that cannot be worked
    /// out refuse; without the changed files, they are what the decision lacks.
    fn scope(&mut self, findings: &[Finding], d: &mut Decision) -> Option<Refusal> {
        for f in findings.iter().filter(|f| f.scope.is_some()) {
            let (Some(i), Some(kind)) = (f.action, f.scope) else { continue };
            match (self.req.facts.changes.get(&i), self.req.facts.scope_rules.as_ref()) {
                (Some(Ok(changes)), Some(rules)) => {
                    let violations = rules.check(&f.skill, &changes.files);
                    let report = ScopeReport {
                        check: kind,
                        how: changes.how.clone(),
                        files: changes.files.clone(),
                        rules_from: rules.files.clone(),
                        violations,
                    };
                    if let Some(v) = report.violations.first() {
                        for v in &report.violations {
                            self.reasons.push(format!("scope: {} {}", escape(&v.path), escape(&v.describe())));
                        }
                        let refusal = Refusal {
                            rule: Builtin::Scope,
                            what: format!("{} modifying {}", kind.doing(), escape(&v.path)),
                            instead: "leave these files to a human, or change only files the skill allows".into(),
                            skill: Some(f.skill.clone()),
                            required: Some(Required::Never),
                        };
                        d.scope = Some(report);
                        return Some(refusal);
                    }
                    let effective = self.effective;
                    if let Some(max) = f.max_files.get(&effective).filter(|m| changes.files.len() > **m) {
                        let n = changes.files.len();
                        self.reasons
                            .push(format!("{n} files changed; tier {effective} may change at most {max}"));
                        d.scope = Some(report);
                        return Some(Refusal {
                            rule: Builtin::MaxFiles,
                            what: format!("{} changing {n} files", kind.noun()),
                            instead: format!("split it into changes of at most {max} files, or escalate"),
                            skill: Some(f.skill.clone()),
                            required: Some(if effective < 3 {
                                Required::Tier(effective + 1)
                            } else {
                                Required::Never
                            }),
                        });
                    }
                    d.scope = Some(report);
                }
                (Some(Err(why)), _) => {
                    self.reasons.push(format!("scope: {}", escape(why)));
                    return Some(Refusal {
                        rule: Builtin::Scope,
                        what: format!("{} whose changed files cannot be worked out ({})", kind.noun(), escape(why)),
                        instead: "fix what the message names and try again".into(),
                        skill: Some(f.skill.clone()),
                        required: Some(Required::Never),
                    });
                }
                _ => self.needs.scope.push((i, kind)),
            }
        }
        None
    }

    /// Phase 4: the cooldown budgets, judged once for the whole call (a remote part's charges
    /// are the ssh call's) with the counts read under the state file's lock. A spent budget
    /// refuses, except a dry run, which stays one (DESIGN §4: exit 0) and whose line says the
    /// budget would refuse the call (`cooldown::dry_run_line`).
    fn cooldown(&mut self, d: &mut Decision) -> Option<Refusal> {
        if !self.req.cooldown || self.req.remote_host.is_some() || d.charges.is_empty() {
            return None;
        }
        match &self.req.facts.cooldown {
            None => {
                self.needs.cooldown = true;
                None
            }
            Some(Err(why)) => {
                self.reasons.push(format!("cooldown state {}", escape(why)));
                Some(Refusal {
                    rule: Builtin::CooldownState,
                    what: format!("cooldown state {}", escape(why)),
                    instead: "the call is refused until an operator fixes the file (tiershim doctor shows its health)".into(),
                    skill: None,
                    required: None,
                })
            }
            Some(Ok(f)) => {
                let standings = cooldown::evaluate(&d.charges, &f.budgets, &f.state, f.now);
                for s in &standings {
                    self.reasons.push(format!(
                        "cooldown {} for {}: {}{}",
                        s.class,
                        escape(&s.key),
                        s.counts(),
                        if s.allowed { "" } else { ", spent" }
                    ));
                }
                let spent = standings.iter().find(|s| !s.allowed).map(|s| escape(&s.key).into_owned());
                d.cooldown = standings;
                match spent {
                    Some(key) if d.verdict != Verdict::DryRun => Some(Refusal {
                        rule: Builtin::Cooldown,
                        what: format!("cooldown for {key}"),
                        instead: "escalate or wait".into(),
                        skill: None,
                        required: None,
                    }),
                    _ => None,
                }
            }
        }
    }

    /// Phase 5: the facts still lacking (probe answers, the configuration the real tool will
    /// read, and whatever the earlier phases asked for) make the answer a provisional refusal.
    fn lacking(&mut self, d: &Decision) -> Option<Refusal> {
        let (inv, req) = (self.inv, self.req);
        for (i, a) in inv.actions.iter().enumerate() {
            if a.probe.is_some() && !req.facts.marks.contains_key(&i) {
                self.needs.probes.push(i);
            }
        }
        // `git --version` reads no configuration, so neither does the gate; `git help` and
        // `--help` do (a viewer or browser the configuration names runs).
        let version_only = inv.actions.iter().all(|a| a.verb == "version");
        if inv.tool.spec().git_config && !version_only && req.remote_host.is_none() && inv.problem.is_none() && req.facts.config.is_none() {
            self.needs.config = true;
        }
        if self.needs.is_empty() {
            return None;
        }
        self.reasons
            .push("the facts this decision needs (skills, changed files, probes, configuration, cooldown counts) were not gathered".into());
        Some(Refusal {
            rule: Builtin::Facts,
            what: format!("{} without the facts its decision needs", d.what),
            instead: "this is a provisional answer; the gate gathers the facts and decides again".into(),
            skill: None,
            required: Some(Required::Never),
        })
    }
}

/// The targets of every action a cooldown budget counts, keyed (with the remote host in front
/// for a remote part). A target the gate cannot name (a container id, everything of a compose
/// project, an expansion) cannot be counted: below tier 3 the call is refused.
fn check_targets(tool: Tool, inv: &Invocation, req: &Request, findings: &mut Vec<Finding>, charges: &mut Vec<Charge>) {
    let budgets = match &req.facts.cooldown {
        Some(Ok(f)) => Some(&*f.budgets),
        _ => None,
    };
    let mut unnamed = Vec::new();
    for f in findings.iter() {
        let (Some(i), Some(class)) = (f.action, f.cooldown) else { continue };
        let Some(action) = inv.actions.get(i) else { continue };
        for t in &action.targets {
            match cooldown::key_of(t, req.remote_host.as_deref(), budgets) {
                Ok(key) => charges.push(Charge { key, class }),
                Err(why) => unnamed.push(
                    Finding::new(
                        Required::Tier(3),
                        Builtin::CooldownTarget.id(tool),
                        f.skill.clone(),
                        format!("{} whose {} budget cannot count it ({why})", f.what, class),
                        format!("cooldown: {why}, so the {class} budget cannot count it"),
                        Some(tool.spec().name_targets.into()),
                    )
                    .by(Builtin::CooldownTarget),
                ),
            }
        }
    }
    findings.extend(unnamed);
}

/// The strictest finding; the first of equals (argv order) explains it.
fn strictest(findings: &[Finding]) -> usize {
    let mut worst = 0;
    for (i, f) in findings.iter().enumerate() {
        if f.required > findings[worst].required {
            worst = i;
        }
    }
    worst
}

fn verdict_for(required: Required, effective: u8, dry_run: bool) -> Verdict {
    match required {
        Required::Never => Verdict::Refuse,
        Required::Tier(n) if n > effective => Verdict::Refuse,
        r if dry_run && r.mutates() => Verdict::DryRun,
        _ => Verdict::Allow,
    }
}

/// How one part of an ssh remote command came out, for the ssh call's decision.
struct PartJudgement {
    /// The finding for the ssh call.
    finding: Finding,
    part: PartDecision,
    /// Skills whose Tier Requirement the part still needs (on the first pass).
    skills: BTreeSet<String>,
    charges: Vec<Charge>,
    /// The part needs facts only the remote host can give (`Needs::remote`).
    needs_remote: bool,
}

/// One part of an ssh remote command, judged by `decide()` with the policy of the tool it runs
/// (the ssh policy for remote programs and shell constructs) at the caller's effective tier, and
/// then by the remote side of the local-write model (`crate::remote_fence`).
///
/// What the operator says about the host (`remote.<host>` in `tiershim.yaml`) and what was read
/// on it over ssh change the part before it is judged: the list of restartable units
/// (`systemd::apply_list`), and the compose files of a `compose up` (without them it is
/// `compose-remote`; on the first pass below tier 3 they are asked for instead).
///
/// A scope check of a part cannot be made: the files it changes are on the remote host. The part
/// is given that as the fact, so a rule that asks for one refuses it as its tool's `scope` rule.
#[allow(clippy::too_many_arguments)]
fn judge_part(
    tool: Tool,
    remote: &crate::grammar::remote::Remote,
    index: usize,
    part: &Part,
    policy: &Policy,
    req: &Request,
    effective: u8,
    dry_run: bool,
) -> PartJudgement {
    let host = remote.host.as_str();
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
            Builtin::Policy,
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
        return PartJudgement {
            finding: f,
            part: p,
            skills: BTreeSet::new(),
            charges: Vec::new(),
            needs_remote: false,
        };
    };
    let host_cfg = req.remote.get(&host.to_ascii_lowercase());
    let mut needs_remote = false;
    let mut inv = part.inv.clone();
    // The operator's restartable units for this host.
    if let Some(units) = host_cfg.and_then(|h| h.units.as_ref()) {
        for a in &mut inv.actions {
            crate::grammar::systemd::apply_list(a, units);
        }
    }
    // The files of a remote `compose up`, as read over ssh.
    let mut compose_found: Vec<String> = Vec::new();
    let mut compose_unread: Option<String> = None;
    let mut compose_read = false;
    for (j, a) in inv
        .actions
        .iter_mut()
        .enumerate()
        .filter(|(_, a)| a.has(crate::grammar::compose::REMOTE))
    {
        match &req.facts.remote {
            Some(Ok(f)) => match f.compose.get(&(index, j)) {
                Some(Ok(judged)) => {
                    a.marks.remove(crate::grammar::compose::REMOTE);
                    crate::grammar::compose::mark(a, &Ok(judged.clone()));
                    compose_found.extend(judged.escalates.iter().chain(&judged.changeable).cloned());
                    compose_read = true;
                }
                Some(Err(why)) => compose_unread = Some(why.clone()),
                None => compose_unread = Some("they were not read".into()),
            },
            Some(Err(why)) => compose_unread = Some(why.clone()),
            None if effective < 3 => {
                // First pass: judge the rest as if the files were harmless, and ask for them.
                a.marks.remove(crate::grammar::compose::REMOTE);
                needs_remote = true;
            }
            None => {}
        }
    }
    let remote_changes = format!("the repository is on {}, where the gate cannot list what it changes", escape(host));
    let mut sub = Request {
        ceiling: effective,
        env_tier: Some(effective.to_string()),
        env_dry_run: req.env_dry_run.clone(),
        dry_run_pinned: req.dry_run_pinned,
        parents: req.parents.clone(),
        remote_host: Some(host.to_string()),
        cooldown: req.cooldown,
        facts: Facts {
            skill_tiers: Some(req.facts.skill_tiers.clone().unwrap_or_default()),
            scope_rules: None,
            changes: (0..inv.actions.len()).map(|i| (i, Err(remote_changes.clone()))).collect(),
            cooldown: req.facts.cooldown.clone(),
            remote: None,
            // The remote repository cannot be asked: a checkout operand may be paths (the worse
            // reading); a push is refused by its scope rule anyway.
            marks: inv
                .actions
                .iter()
                .enumerate()
                .filter_map(|(i, a)| match &a.probe {
                    Some(crate::grammar::Probe::CheckoutArg { .. }) => Some((i, Ok(BTreeSet::from(["discard".to_string()])))),
                    Some(crate::grammar::Probe::PushTarget { .. }) => Some((i, Ok(BTreeSet::new()))),
                    None => None,
                })
                .collect(),
            config: None,
        },
        ..Request::default()
    };
    let mut d = decide(&inv, part_policy, &sub);
    let charges = std::mem::take(&mut d.charges);
    let mut skills = BTreeSet::new();
    if req.facts.skill_tiers.is_none() && d.verdict != Verdict::Refuse {
        // Which skills could still raise this part: ask as the first pass of a local call would.
        sub.facts.skill_tiers = None;
        skills = decide(&inv, part_policy, &sub).needs.skills;
    }
    let host_shown = escape(host);
    // An unclassified remote program reads better by its name (`rm`) than as `ssh run rm`, and
    // a construct by what it is and its text than by the list in its rule.
    let mut what = match shown.strip_prefix("construct ") {
        Some(kind) if d.tool == tool => {
            let text = part.words.first().map(|w| redact(w).into_owned()).unwrap_or_default();
            let text: String = match text.char_indices().nth(60) {
                Some((cut, _)) => format!("{}…", &text[..cut]),
                None => text,
            };
            format!("{} `{}`", kind.replace('-', " "), escape(&text))
        }
        _ if d.builtin == Some(Builtin::Unclassified) && d.tool == tool => escape(&shown).into_owned(),
        _ => d.what.clone(),
    };
    let mut reasons = d.reasons.clone();
    // Name what the compose files come to, or why they are unknown, when a rule on what they
    // come to decided.
    if d.matched.iter().any(|m| crate::grammar::compose::FILE_MARKS.contains(&m.as_str())) {
        if !compose_found.is_empty() {
            what = format!("{what} ({})", escape(&compose_found.join("; ")));
        } else if let Some(why) = &compose_unread {
            what = format!("{what} ({})", escape(why));
        }
    }
    if let Some(why) = &compose_unread {
        reasons.push(format!("the compose files could not be read over ssh: {}", escape(why)));
    } else if compose_read && compose_found.is_empty() {
        reasons
            .push("the compose files were read over ssh: the login user can change none of them, and they ask for nothing tier 3".into());
    }
    let mut f = Finding::new(
        d.required_tier,
        d.rule.clone(),
        d.skill.clone(),
        format!("{what} on {host_shown}"),
        format!("on {host_shown}: {}", reasons.join("; ")),
        d.instead.clone(),
    );
    f.builtin = d.builtin;
    f.matched.clone_from(&d.matched);
    // Where the part writes on the remote host (the remote side of the local-write model).
    let changes = matches!(d.required_tier, Required::Tier(n) if n >= 2);
    let workspaces: &[String] = host_cfg.map_or(&[], |h| h.workspaces.as_slice());
    for w in part.writes.iter().filter(|w| !w.repository || changes) {
        let (required, why) = remote_write(w, remote.cd.as_deref(), workspaces, req, effective, &mut needs_remote);
        if required > f.required {
            let path = escape(&redact(&w.path)).into_owned();
            let doing = if w.repository {
                format!("{} changing {path}", escape(&shown))
            } else {
                format!("{} writing {path} ({})", escape(&shown), escape(&w.what))
            };
            f = Finding::new(
                required,
                Builtin::RemoteWrite.id(tool),
                d.skill.clone(),
                format!("{doing} on {host_shown} ({})", escape(&why)),
                rule_reason(
                    required,
                    &Builtin::RemoteWrite.id(tool),
                    &format!("{doing} on {host_shown}: {}", escape(&why)),
                ),
                Some(if required == Required::Tier(2) {
                    "tier 1 writes no file; read the output from standard output, or escalate to a tier 2 agent".to_string()
                } else {
                    format!(
                        "write only inside {host_shown}'s workspaces (tiershim.yaml `remote.{host_shown}.workspaces`), below no hidden name, or escalate to tier 3"
                    )
                }),
            )
            .by(Builtin::RemoteWrite);
        }
    }
    let p = PartDecision {
        host: host.to_string(),
        tool: d.tool,
        verb: d.verb,
        shown,
        verdict: verdict_for(f.required, effective, dry_run),
        required_tier: f.required,
        rule: f.rule.clone(),
        skill: d.skill,
    };
    PartJudgement {
        finding: f,
        part: p,
        skills,
        charges,
        needs_remote,
    }
}

/// The tier a remote write needs, and why: 2 inside one of the host's workspaces (where the
/// path was found to really lead, once it was read over ssh), 3 anywhere else or when the gate
/// cannot tell. Below tier 3, a write inside a workspace asks for where it really leads.
fn remote_write(
    w: &crate::grammar::remote::Write,
    cd: Option<&str>,
    workspaces: &[String],
    req: &Request,
    effective: u8,
    needs_remote: &mut bool,
) -> (Required, String) {
    use crate::remote_fence::{judge, locate};
    let abs = match locate(&w.path, cd) {
        Ok(a) => a,
        Err(why) => return (Required::Tier(3), why),
    };
    if w.named {
        return (
            Required::Tier(3),
            format!("{abs}: the server chooses the names of the files written there"),
        );
    }
    if let Err(why) = judge(&abs, workspaces, w.repository) {
        return (Required::Tier(3), format!("{abs}: {why}"));
    }
    let inside = (Required::Tier(2), format!("{abs} is inside a workspace, and tier 1 writes no file"));
    if effective >= 3 {
        // Tier 3 may write anywhere: where it leads changes nothing.
        return inside;
    }
    match &req.facts.remote {
        Some(Ok(f)) => match f.paths.get(&abs) {
            Some(Ok(real)) => match judge(real, workspaces, w.repository) {
                Ok(_) => inside,
                Err(why) => (Required::Tier(3), format!("{abs} really is {real}: {why}")),
            },
            Some(Err(why)) => (
                Required::Tier(3),
                format!("where {abs} really leads could not be read over ssh: {why}"),
            ),
            None => (Required::Tier(3), format!("where {abs} really leads was not read")),
        },
        Some(Err(why)) => (
            Required::Tier(3),
            format!("where {abs} really leads could not be read over ssh: {why}"),
        ),
        None => {
            *needs_remote = true;
            inside
        }
    }
}

fn instead_text(f: &Finding) -> String {
    match (&f.instead, f.required) {
        (Some(s), _) => s.clone(),
        (None, Required::Tier(n)) => format!("escalate to a tier {n} agent or an operator"),
        (None, Required::Never) => "this is never done by an agent; ask a human operator".to_string(),
    }
}

/// The line of an allowed call whose real tool is not installed where the install says (DESIGN
/// §4; exit 127): `why` is the error that says where it looked.
pub fn not_found_line(skill: &str, tool: Tool, why: &str) -> String {
    format!(
        "[skill:{}] ERROR: No suitable tool found for {} ({})",
        escape(skill),
        tool.spec().capability,
        escape(why)
    )
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
            if d.builtin == Some(Builtin::Cooldown)
                && let Some(spent) = d.cooldown.iter().find(|c| !c.allowed)
            {
                return cooldown::refusal_line(skill, spent);
            }
            if d.builtin == Some(Builtin::CooldownState) {
                return format!("[skill:{s}] REFUSED: {} — {instead}", d.what);
            }
            if let Some(v) = d.scope.as_ref().and_then(|r| r.violations.first().map(|v| (r.check, v))) {
                let (kind, v) = v;
                return format!(
                    "[skill:{s}] SCOPE VIOLATION: Refusing to {} modifying {} — {}",
                    kind.doing(),
                    escape(&v.path),
                    escape(&v.describe())
                );
            }
            match d.required_tier {
                Required::Never => {
                    format!(
                        "[skill:{s}] REFUSED: {} is never allowed (this agent is tier {}; rule {}) — {instead}",
                        d.what, d.effective_tier, d.rule
                    )
                }
                Required::Tier(n) => {
                    let why = d.tier_why.as_ref().map(|w| format!(": {w}")).unwrap_or_default();
                    format!(
                        "[skill:{s}] REFUSED: {} requires tier {n} (this agent is tier {}{why}) — {instead}",
                        d.what, d.effective_tier
                    )
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;

    fn parse(tool: Tool, args: &[String]) -> Invocation {
        tool.spec().parse(args)
    }

    fn ssh(words: &[&str]) -> Invocation {
        parse(Tool::Ssh, &argv(words))
    }

    fn policies(tools: &[Tool]) -> BTreeMap<Tool, Policy> {
        tools.iter().map(|t| (*t, Policy::embedded(*t).unwrap())).collect()
    }

    fn at(tier: u8) -> Request {
        Request {
            ceiling: 3,
            env_tier: Some(tier.to_string()),
            policies: policies(&[Tool::Docker, Tool::Git, Tool::Curl]),
            ..Request::default()
        }
    }

    #[test]
    fn each_part_is_judged_with_its_tools_policy_and_the_strictest_decides() {
        let p = Policy::embedded(Tool::Ssh).unwrap();
        let d = decide(&ssh(&["ie01", "uptime; docker restart api"]), &p, &at(1));
        assert_eq!(
            (d.verdict, d.rule.as_str(), d.verb.as_str()),
            (Verdict::Refuse, "docker.restart", "docker restart")
        );
        assert_eq!(d.deciding_part, Some(1));
        let parts: Vec<(Tool, &str, Verdict)> = d.parts.iter().map(|p| (p.tool, p.rule.as_str(), p.verdict)).collect();
        assert_eq!(
            parts,
            [
                (Tool::Ssh, "ssh.remote.read", Verdict::Allow),
                (Tool::Docker, "docker.restart", Verdict::Refuse)
            ]
        );
        assert_eq!(d.parts[1].host, "ie01");
        assert_eq!(d.what, "restarting, starting or stopping a container on ie01");
    }

    #[test]
    fn with_a_credential_pinned_a_call_connects_only_where_the_pins_say() {
        let judge = |tool: Tool, words: &[&str], cred: Option<&str>, pins: &[(&str, &str)]| {
            let req = Request {
                pinned_credential: cred.map(str::to_string),
                pinned: pins.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
                facts: Facts {
                    skill_tiers: Some(BTreeMap::new()),
                    ..Facts::default()
                },
                ..at(3)
            };
            let d = decide(&parse(tool, &argv(words)), &Policy::embedded(tool).unwrap(), &req);
            (d.verdict, d.rule)
        };
        let refused = |t: Tool| (Verdict::Refuse, format!("{t}.credential-destination"));
        let mysql = ["-h", "10.9.9.9", "-e", "select 1"];
        assert_eq!(judge(Tool::Mysql, &mysql, None, &[]).0, Verdict::Allow);
        assert_eq!(judge(Tool::Mysql, &mysql, Some("MYSQL_PWD"), &[]), refused(Tool::Mysql));
        let pinned_host = [("MYSQL_HOST", "10.9.9.9")];
        assert_eq!(judge(Tool::Mysql, &mysql, Some("MYSQL_PWD"), &pinned_host).0, Verdict::Allow);
        let psql = ["-h", "db", "-p", "6432", "-c", "select 1"];
        assert_eq!(
            judge(Tool::Psql, &psql, Some("PGPASSWORD"), &[("PGHOST", "db"), ("PGPORT", "5432")]),
            refused(Tool::Psql)
        );
        let curl = ["-x", "http://10.9.9.9:3128", "http://example.com/"];
        assert_eq!(judge(Tool::Curl, &curl, None, &[]).0, Verdict::Allow);
        assert_eq!(judge(Tool::Curl, &curl, Some("HTTPS_PROXY"), &[]), refused(Tool::Curl));
        // gh sends its token only to github.com or the pinned host, whatever option names it.
        let gh = ["attestation", "download", "a.tgz", "-R", "o/r", "--hostname", "evil.example"];
        assert_eq!(
            judge(Tool::Gh, &gh, None, &[("GH_HOST", "ghe.example")]),
            (Verdict::Refuse, "gh.pinned".to_string())
        );
    }

    #[test]
    fn a_part_whose_policy_was_not_loaded_is_refused() {
        let p = Policy::embedded(Tool::Ssh).unwrap();
        let req = Request {
            policies: BTreeMap::new(),
            ..at(3)
        };
        let d = decide(&ssh(&["ie01", "docker ps"]), &p, &req);
        assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Refuse, "ssh.policy"));
    }

    #[test]
    fn a_parts_skill_tier_is_a_need_of_the_ssh_call_and_then_raises_the_part() {
        let p = Policy::embedded(Tool::Ssh).unwrap();
        let inv = ssh(&["ie01", "docker restart api"]);
        let mut req = at(2);
        let first = decide(&inv, &p, &req);
        assert_eq!((first.verdict, first.rule.as_str()), (Verdict::Refuse, "ssh.facts"));
        assert_eq!(first.needs.skills, BTreeSet::from(["container-ops".to_string()]));
        let tier3 = SkillTier {
            tier: 3,
            file: "container-ops.md".into(),
        };
        req.facts.skill_tiers = Some(BTreeMap::from([("container-ops".to_string(), tier3)]));
        let second = decide(&inv, &p, &req);
        assert_eq!((second.verdict, second.required_tier), (Verdict::Refuse, Required::Tier(3)));
        assert!(second.needs.is_empty());
        // A read needs no skill at all.
        assert!(decide(&ssh(&["ie01", "docker ps"]), &p, &at(1)).needs.is_empty());
    }

    #[test]
    fn a_remote_part_that_asks_for_a_scope_check_is_refused_by_its_scope_rule() {
        let p = Policy::embedded(Tool::Ssh).unwrap();
        let d = decide(&ssh(&["ie01", "cd /srv/app && git push origin feat"]), &p, &at(3));
        assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Refuse, "git.scope"));
        assert!(d.what.contains("the repository is on ie01"), "{}", d.what);
    }

    fn host(workspaces: &[&str], units: Option<&[&str]>) -> BTreeMap<String, crate::remote_fence::RemoteHost> {
        BTreeMap::from([(
            "ie01".to_string(),
            crate::remote_fence::RemoteHost {
                workspaces: workspaces.iter().map(|w| w.to_string()).collect(),
                compose: Vec::new(),
                units: units.map(|u| u.iter().map(|x| crate::grammar::systemd::listed_unit(x).unwrap()).collect()),
            },
        )])
    }

    #[test]
    fn a_remote_write_needs_tier_2_inside_a_workspace_and_asks_where_it_really_leads() {
        let p = Policy::embedded(Tool::Ssh).unwrap();
        let mut req = Request {
            remote: host(&["/srv/work"], None),
            policies: policies(&[Tool::Curl]),
            ..at(2)
        };
        let inside = ssh(&["ie01", "cd /srv/work && curl -s -o out.json http://127.0.0.1/x"]);
        let first = decide(&inside, &p, &req);
        assert_eq!((first.verdict, first.rule.as_str()), (Verdict::Refuse, "ssh.facts"));
        assert!(first.needs.remote);
        // Where it leads, as read over ssh: inside, allowed; through a symlink out, tier 3.
        let facts = |real: &str| {
            Some(Ok(RemoteFacts {
                paths: BTreeMap::from([("/srv/work/out.json".to_string(), Ok(real.to_string()))]),
                ..RemoteFacts::default()
            }))
        };
        req.facts.skill_tiers = Some(BTreeMap::new());
        req.facts.remote = facts("/srv/work/out.json");
        assert_eq!(decide(&inside, &p, &req).verdict, Verdict::Allow);
        req.facts.remote = facts("/home/ops/out.json");
        let d = decide(&inside, &p, &req);
        assert_eq!(
            (d.verdict, d.rule.as_str(), d.required_tier),
            (Verdict::Refuse, "ssh.remote-write", Required::Tier(3))
        );
        assert!(d.what.contains("really is /home/ops/out.json"), "{}", d.what);
        // Outside, or from an unknown directory: tier 3 without asking.
        for cmd in [
            "curl -s -o /etc/x http://h/",
            "curl -s -o out.json http://h/",
            "cd /srv/work && curl -o .profile http://h/",
        ] {
            let d = decide(&ssh(&["ie01", cmd]), &p, &at(2));
            assert_eq!((d.rule.as_str(), d.required_tier), ("ssh.remote-write", Required::Tier(3)), "{cmd}");
            assert!(!d.needs.remote, "{cmd}");
        }
    }

    #[test]
    fn a_hosts_list_of_units_leaves_only_those_restartable_at_tier_2() {
        let p = Policy::embedded(Tool::Ssh).unwrap();
        let listed = Request {
            remote: host(&[], Some(&["jellyfin", "tailscaled"])),
            ..at(2)
        };
        let rule = |cmd: &str, req: &Request| {
            let mut req = req.clone();
            req.facts.skill_tiers = Some(BTreeMap::new());
            let d = decide(&ssh(&["ie01", cmd]), &p, &req);
            (d.verdict, d.rule)
        };
        assert_eq!(
            rule("systemctl restart jellyfin", &listed),
            (Verdict::Allow, "ssh.systemctl.lifecycle".into())
        );
        assert_eq!(
            rule("systemctl restart tailscaled", &listed),
            (Verdict::Allow, "ssh.systemctl.lifecycle".into())
        );
        assert_eq!(
            rule("systemctl restart tailscaled", &at(2)),
            (Verdict::Refuse, "ssh.systemctl.lifecycle.plumbing".into())
        );
        assert_eq!(
            rule("systemctl restart nginx", &listed),
            (Verdict::Refuse, "ssh.systemctl.lifecycle.unlisted".into())
        );
        assert_eq!(
            rule("systemctl restart nginx", &at(2)),
            (Verdict::Allow, "ssh.systemctl.lifecycle".into())
        );
        assert_eq!(
            rule("systemctl restart sshd", &listed),
            (Verdict::Refuse, "ssh.systemctl.lifecycle.plumbing".into())
        );
        // Reads are not restarts.
        assert_eq!(
            rule("systemctl status nginx", &listed),
            (Verdict::Allow, "ssh.systemctl.read".into())
        );
    }

    #[test]
    fn a_remote_compose_up_asks_for_its_files_and_is_judged_by_what_they_come_to() {
        let p = Policy::embedded(Tool::Ssh).unwrap();
        let inv = ssh(&["ie01", "cd /srv/jellyfin && docker compose up -d jellyfin"]);
        let mut req = at(2);
        let first = decide(&inv, &p, &req);
        assert!(first.needs.remote);
        req.facts.skill_tiers = Some(BTreeMap::new());
        let with = |judged: Result<crate::grammar::compose::Judged, String>| {
            Some(Ok(RemoteFacts {
                compose: BTreeMap::from([((0, 0), judged)]),
                ..RemoteFacts::default()
            }))
        };
        req.facts.remote = with(Ok(Default::default()));
        let d = decide(&inv, &p, &req);
        assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Allow, "docker.compose.up"));
        req.facts.remote = with(Ok(crate::grammar::compose::Judged {
            escalates: vec!["service jellyfin: privileged".into()],
            changeable: Vec::new(),
        }));
        let d = decide(&inv, &p, &req);
        assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Refuse, "docker.compose.file-escalates"));
        assert!(d.what.contains("(service jellyfin: privileged)"), "{}", d.what);
        req.facts.remote = with(Err("ssh failed".into()));
        let d = decide(&inv, &p, &req);
        assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Refuse, "docker.compose.file-remote"));
        assert!(d.what.contains("ssh failed"), "{}", d.what);
        // Tier 1 is refused by the rule itself: nothing to read.
        assert!(!decide(&inv, &p, &at(1)).needs.remote);
    }

    #[test]
    fn hosts_and_parents_are_checked_against_the_request() {
        let p = Policy::embedded(Tool::Ssh).unwrap();
        let listed = Request {
            hosts: Some(vec!["IE01".into()]),
            ..at(1)
        };
        assert_eq!(decide(&ssh(&["ops@ie01", "uptime"]), &p, &listed).verdict, Verdict::Allow);
        let d = decide(&ssh(&["-J", "bastion", "ops@ie01", "uptime"]), &p, &listed);
        assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Refuse, "ssh.host"));
        let hop = ssh(&["-W", "[ie01]:22", "bastion"]);
        assert_eq!(decide(&hop, &p, &at(1)).rule, "ssh.nested");
        let from_ssh = Request {
            parents: vec![Tool::Ssh],
            ..at(1)
        };
        assert_eq!(
            (decide(&hop, &p, &from_ssh).verdict, decide(&hop, &p, &from_ssh).rule.as_str()),
            (Verdict::Allow, "ssh.jump")
        );
        let push = ssh(&["git@github.com", "git-receive-pack 'o/r.git'"]);
        assert_eq!(decide(&push, &p, &from_ssh).rule, "ssh.nested");
        let from_git = Request {
            parents: vec![Tool::Git],
            ..at(1)
        };
        assert_eq!(decide(&push, &p, &from_git).rule, "ssh.git.receive-pack");
    }
}
