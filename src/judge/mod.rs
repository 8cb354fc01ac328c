//! The one decision driver: understand the call → build the request → [`decide`] → gather the
//! facts it asked for → decide again. The gate, `tiershim explain`, `tiershim inventory` and the
//! policy examples all come here; they differ only in where the facts come from, a [`Source`]:
//!
//! - [`live::Live`]: the gate's. Skills, the real git, the remote host over ssh, and the cooldown
//!   counts read under the state file's lock, which it keeps for the gate to count the call.
//! - [`live::Unlocked`]: `explain`'s. The same, but the counts are read without the lock, and no
//!   remote host is asked (what only it can tell is unknown).
//! - [`examples::Clean`]: a policy example's. No skill raises a tier, a scope check finds no
//!   file, a probe adds nothing, the configuration is the operator's.
//! - the inventory's (`crate::inventory`): the install's skills; the rest as for an example,
//!   except that a scope check stays unanswered (it reports "allowed when the files pass").
//!
//! Owns: the order of the steps, the request from the install and the caller's environment,
//! and loading a policy with its examples checked (an override whose examples fail does not
//! load). Must not: match calls against rules (`decision.rs` does), exec, or write anything.

pub mod examples;
pub mod live;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

use crate::decision::{self, Decision, Facts, Request};
use crate::error::{Error, Result};
use crate::exec;
use crate::grammar::{self, Claim, Invocation};
use crate::install::InstallConfig;
use crate::policy::Policy;
use crate::script_input;
use crate::tool::Tool;

/// Where the facts of a decision come from (see the module documentation).
pub trait Source {
    /// The real tools of the install that the parent process is, for a call that claims one
    /// ([`Claim::Parent`]). Only the gate can tell; the others answer none.
    fn parents(&mut self, _inv: &Invocation) -> Vec<Tool> {
        Vec::new()
    }

    /// The facts `first` (a decision made without them) asked for in its `needs`.
    fn facts(&mut self, inv: &Invocation, policy: &Policy, req: &Request, first: &Decision) -> Result<Facts>;
}

/// Decide, and when the decision lacks facts, gather them from `source` and decide again. A
/// call refused without facts stays refused (the first answer is final); a read such as `docker
/// ps` never gets past the first decision.
pub fn judge(inv: &Invocation, policy: &Policy, req: &mut Request, source: &mut dyn Source) -> Result<Decision> {
    let first = decision::decide(inv, policy, req);
    if first.needs.is_empty() {
        return Ok(first);
    }
    req.facts = source.facts(inv, policy, req, &first)?;
    Ok(decision::decide(inv, policy, req))
}

/// A call as the gate and `explain` see it.
pub struct Call<'a> {
    pub tool: Tool,
    /// argv after the program name, or the call the gate refuses without reading (a word that
    /// is not UTF-8).
    pub args: std::result::Result<Vec<String>, Box<Invocation>>,
    /// The working directory the call runs in.
    pub cwd: &'a Path,
    /// The caller's environment.
    pub env: &'a [(OsString, OsString)],
    /// `explain --tier N`: the tier to judge at, in place of `CLAUDEOPS_TIER`.
    pub tier: Option<u8>,
    /// `explain --dry-run`: judge as if dry-run were pinned on.
    pub dry_run: bool,
}

impl Call<'_> {
    /// The caller's value of `name`.
    pub fn var(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    }
}

/// argv as UTF-8; a word that is not is a call the gate cannot read, so it is refused.
pub fn utf8_args(tool: Tool, args: &[OsString]) -> std::result::Result<Vec<String>, Box<Invocation>> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        match a.to_str() {
            Some(s) => out.push(s.to_string()),
            None => {
                let shown: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
                return Err(Box::new(
                    Invocation::new(tool, &shown).with_problem(format!("argument {:?} is not UTF-8", a.to_string_lossy())),
                ));
            }
        }
    }
    Ok(out)
}

/// What the driver made of a call: the call as understood, the request it was judged with
/// (its facts included), the decision, and the scripts the real tool is to read as judged.
pub struct Judged {
    pub args: Vec<String>,
    pub inv: Invocation,
    pub req: Request,
    pub decision: Decision,
    pub scripts: Option<script_input::Gathered>,
}

/// Judge a call as the gate does: understand it (local files, scripts, placeholders, compose
/// projects), build the request from the install and the caller's environment, and [`judge`]
/// it with `source`'s facts.
pub fn call(cfg: &InstallConfig, policy: &Policy, call: &Call, source: &mut dyn Source) -> Result<Judged> {
    let (args, inv, local) = match &call.args {
        Ok(args) => {
            let (inv, local) = understand(cfg, call.tool, args, call.cwd);
            (args.clone(), inv, local)
        }
        Err(inv) => (inv.args.clone(), (**inv).clone(), Default::default()),
    };
    // Scripts the call reads (psql -f, stdin) are read now and judged with the call.
    let (inv, scripts) = script_input::gather(call.tool, &args, inv, call.cwd);
    // What a script names may be local files too (the paths `git apply`'s patch writes): where
    // they really are is looked at now, with the rest.
    let local = if scripts.is_some() && !inv.files.is_empty() {
        crate::files::gather(&inv, call.cwd).0
    } else {
        local
    };
    let var = |name: &str| call.var(name);
    let mut req = request(cfg, policy, &inv, &var);
    req.local = local;
    // Who could have written the files the tool takes as instructions (playbooks, manifests).
    req.operator_files = crate::operator_files::check(&inv, call.cwd, &crate::access::Principal::current());
    if inv.remote.is_some() {
        req.policies = remote_policies(cfg, &inv)?;
    }
    req.parents = source.parents(&inv);
    if let Some(t) = call.tier {
        req.env_tier = Some(t.to_string());
    }
    if call.dry_run {
        req.dry_run_pinned = true;
    }
    let decision = judge(&inv, policy, &mut req, source)?;
    Ok(Judged {
        args,
        inv,
        req,
        decision,
        scripts,
    })
}

/// The facts a decision needs from the environment and the install, gathered before `decide`.
pub fn request(cfg: &InstallConfig, policy: &Policy, inv: &Invocation, var: &dyn Fn(&str) -> Option<String>) -> Request {
    let mut caller_env = BTreeMap::new();
    for v in &policy.must_match {
        if let Some(val) = var(v) {
            caller_env.insert(v.clone(), val);
        }
    }
    let mut real_gh = Vec::new();
    if inv.claims.iter().any(|c| matches!(c, Claim::GhCredentialHelper { .. }))
        && let Ok(p) = exec::resolve_real(cfg, Tool::Gh)
    {
        if let Ok(c) = std::fs::canonicalize(&p) {
            real_gh.push(c.display().to_string());
        }
        real_gh.push(p.display().to_string());
    }
    // Whether one of the tool's credentials is pinned, for a call that names where it connects:
    // the secrets file is read for that (a file the caller cannot read counts as pinned).
    let pinned_credential = if inv.claims.iter().any(|c| matches!(c, Claim::Destination { .. })) {
        match cfg.pins() {
            Ok(pins) => policy.pinned_credential(|v| pins.contains_key(v)).map(str::to_string),
            Err(_) => policy
                .credentials
                .secrets
                .first()
                .map(|s| format!("{s} (the secrets file cannot be read here)")),
        }
    } else {
        None
    };
    // gh and docker read per-user configuration that can run programs: from the tool home, or
    // a pinned GH_CONFIG_DIR / DOCKER_CONFIG. What of it the agent can write refuses the call.
    let agent_config = match (cfg.tool_home.as_deref(), &inv.tool.spec().user_config) {
        (Some(home), Some(user)) => user.agent_written(home, &cfg.env, cfg.hardened),
        _ => Vec::new(),
    };
    Request {
        ceiling: cfg.tier,
        pinned_credential,
        agent_config,
        env_tier: var("CLAUDEOPS_TIER"),
        env_dry_run: var("CLAUDEOPS_DRY_RUN"),
        dry_run_pinned: cfg.dry_run,
        pinned: cfg.env.clone(),
        caller_env,
        real_gh,
        hosts: cfg.hosts.clone(),
        remote: cfg.remote.clone(),
        cooldown: cfg.cooldown_state.is_some(),
        local: Default::default(),
        // The install's workspaces and own files, made canonical only for a call naming files.
        fence: if inv.files.is_empty() {
            crate::files::Fence {
                kernel_fence: cfg.kernel_fence != crate::install::KernelFence::Off,
                ..Default::default()
            }
        } else {
            crate::files::Fence::of(cfg)
        },
        facts: Facts::default(),
        ..Request::default()
    }
}

/// Parse the call, and when it names local files, find out where they are (and read the ones
/// whose contents change what the call does, then parse again with them), fill the
/// placeholders of a `gh api` call as gh would (with the install's real git), and work out the
/// compose project of a service argv does not name (`crate::compose`). Calls that name no file
/// and no placeholder pay for nothing more than the parse.
pub fn understand(cfg: &InstallConfig, tool: Tool, args: &[String], cwd: &Path) -> (Invocation, crate::files::LocalFacts) {
    let spec = tool.spec();
    let inv = spec.parse(args);
    let (mut inv, facts, contents) = if inv.files.is_empty() {
        let facts = crate::files::LocalFacts {
            workdir: Some(cwd.to_path_buf()),
            ..Default::default()
        };
        (inv, facts, grammar::Contents::new())
    } else {
        let (facts, contents) = crate::files::gather(&inv, cwd);
        if contents.is_empty() {
            (inv, facts, contents)
        } else {
            ((spec.parse)(args, &contents, &grammar::Inputs::default()), facts, contents)
        }
    };
    if let Some(fill) = spec.fill
        && inv.actions.iter().any(|a| a.has(grammar::gh::PLACEHOLDER))
    {
        inv = live::gh_filled(cfg, args, &contents, cwd, inv, fill);
    }
    // What the compose files of a `compose up` ask for (privileged services, host binds, …).
    for a in &mut inv.actions {
        if let Some(files) = a.compose.clone() {
            crate::grammar::compose::mark(a, &crate::compose::file_marks(cwd, &files));
        }
    }
    // A compose service's project, when argv does not name it, from the files compose reads.
    crate::grammar::compose::resolve_targets(&mut inv, &|f| crate::compose::resolve_local(cwd, f));
    // A service's `container_name:`, which makes it one budget with that container.
    crate::compose::name_containers(&mut inv, cwd);
    (inv, facts)
}

/// The policy a call of `tool` is judged with: the install's override of it (its examples must
/// hold, or it does not load; the directory's endpoint rules' examples too), else the embedded
/// one; and the operator's endpoint rules of tiershim.yaml, whose examples must hold (an error
/// names the line of the first that fails).
pub fn policy(tool: Tool, cfg: &InstallConfig) -> Result<Policy> {
    let policy = policy_in(tool, cfg.policy.as_deref())?;
    let (policy, lines) = policy.add_install_endpoints(&cfg.endpoints, &cfg.path)?;
    if lines.is_empty() {
        return Ok(policy);
    }
    if let Some(first) = examples::run_endpoint_examples(&policy).first() {
        let id = first
            .strip_prefix("endpoint ")
            .and_then(|r| r.split(':').next())
            .unwrap_or_default();
        return Err(Error::ConfigInvalid {
            path: cfg.path.clone(),
            msg: format!(
                "line {}: an example disagrees with the rules: {first}",
                lines.get(id).copied().unwrap_or(0)
            ),
        });
    }
    Ok(policy)
}

/// The policy of `tool` from `override_dir` (or embedded), with the examples of what the
/// directory overrides checked: its endpoint rules' for this tool, and its rules' when it has
/// this tool's file.
pub fn policy_in(tool: Tool, override_dir: Option<&Path>) -> Result<Policy> {
    let (policy, overridden) = Policy::read(tool, override_dir)?;
    let Some(dir) = override_dir else {
        return Ok(policy);
    };
    let mut failures = examples::run_endpoint_examples(&policy);
    if overridden {
        failures.extend(examples::run_examples_in(&policy, Some(dir)));
    }
    if !failures.is_empty() {
        return Err(policy.examples_fail(dir, &failures));
    }
    Ok(policy)
}

/// The policies of `tools` (each once), from the same place as the call's own
/// ([`policy_in`]).
pub fn policies(tools: impl IntoIterator<Item = Tool>, override_dir: Option<&Path>) -> Result<BTreeMap<Tool, Policy>> {
    let mut out = BTreeMap::new();
    for t in tools {
        if let std::collections::btree_map::Entry::Vacant(e) = out.entry(t) {
            e.insert(policy_in(t, override_dir)?);
        }
    }
    Ok(out)
}

/// The policies of the gated tools an ssh remote command runs, from the same place as the
/// call's own policy, with the install's endpoint rules. Only the tools the command names are
/// loaded.
pub fn remote_policies(cfg: &InstallConfig, inv: &Invocation) -> Result<BTreeMap<Tool, Policy>> {
    let tools = inv
        .remote
        .iter()
        .flat_map(|r| r.parts.iter().map(|p| p.inv.tool))
        .filter(|t| *t != inv.tool);
    let mut out = BTreeMap::new();
    for t in tools {
        if let std::collections::btree_map::Entry::Vacant(e) = out.entry(t) {
            e.insert(policy(t, cfg)?);
        }
    }
    Ok(out)
}
