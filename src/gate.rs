//! The live path of a gated call: config beside the link -> policy -> grammar -> facts ->
//! `decide()` -> audit line -> stderr line -> exec, dry-run, or refuse.
//!
//! Any error on the way refuses: nothing is executed after an error, and the audit record is
//! written (and synced) before exec. This is the only place that execs.

use std::collections::BTreeMap;
use std::path::Path;

use crate::audit::{self, AuditRecord, Tiers};
use crate::context::Context;
use crate::cooldown;
use crate::decision::{self, Decision, Request, Verdict};
use crate::error::{Error, Result};
use crate::exec;
use crate::exit::Exit;
use crate::facts::{self, Git};
use crate::grammar::{self, Claim, Invocation};
use crate::install::{self, InstallConfig};
use crate::inventory::{self, Fallback};
use crate::policy::Policy;
use crate::sanitize::{escape, redact_args};
use crate::script_input;
use crate::skill::Sources;
use crate::tool::Tool;

/// Run a gated call. Returns only when the tool was not executed.
pub fn run(ctx: &Context, tool: Tool) -> Exit {
    match gate(ctx, tool) {
        Ok(exit) => exit,
        Err(e) => {
            eprintln!("tiershim: {tool}: {}", escape(&e.to_string()));
            e.exit()
        }
    }
}

/// argv as UTF-8; a word that is not is a call the gate cannot read, so it is refused.
fn utf8_args(ctx: &Context, tool: Tool) -> std::result::Result<Vec<String>, Box<Invocation>> {
    let mut out = Vec::with_capacity(ctx.args.len());
    for a in &ctx.args {
        match a.to_str() {
            Some(s) => out.push(s.to_string()),
            None => {
                let shown: Vec<String> = ctx.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
                return Err(Box::new(
                    Invocation::new(tool, &shown).with_problem(format!("argument {:?} is not UTF-8", a.to_string_lossy())),
                ));
            }
        }
    }
    Ok(out)
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
    let agent_config = match cfg.tool_home.as_deref() {
        Some(home) if matches!(inv.tool, Tool::Gh | Tool::Docker) => {
            crate::tool_config::agent_written(inv.tool, home, &cfg.env, cfg.hardened)
        }
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
            Default::default()
        } else {
            crate::files::Fence::of(cfg)
        },
        facts: decision::Facts::default(),
        ..Request::default()
    }
}

/// Parse the call, and when it names local files, find out where they are (and read the ones
/// whose contents change what the call does, then parse again with them), fill the
/// placeholders of a `gh api` call as gh would (with the install's real git), and work out the
/// compose project of a service argv does not name (`crate::compose`). Calls that name no file
/// and no placeholder pay for nothing more than the parse.
pub fn understand(cfg: &InstallConfig, tool: Tool, args: &[String], cwd: &Path) -> (Invocation, crate::files::LocalFacts) {
    let inv = grammar::parse(tool, args);
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
            (grammar::parse_with(tool, args, &contents), facts, contents)
        }
    };
    if tool == Tool::Gh && inv.actions.iter().any(|a| a.has(grammar::gh::PLACEHOLDER)) {
        inv = gh_filled(cfg, args, &contents, cwd, inv);
    }
    // What the compose files of a `compose up` ask for (privileged services, host binds, …).
    for a in &mut inv.actions {
        if let Some(files) = a.compose.clone() {
            crate::compose::mark(a, &crate::compose::file_marks(cwd, &files));
        }
    }
    // A compose service's project, when argv does not name it, from the files compose reads.
    crate::compose::resolve_targets(&mut inv, &|f| crate::compose::resolve_local(cwd, f));
    // A service's `container_name:`, which makes it one budget with that container.
    crate::compose::name_containers(&mut inv, cwd);
    (inv, facts)
}

/// The real git as the gate runs it for facts: with the install's tool home as HOME, so it
/// reads the same global config as the real git of the agent's calls.
fn gate_git(cfg: &InstallConfig) -> Option<Git> {
    let home: Vec<(std::ffi::OsString, std::ffi::OsString)> = cfg
        .tool_home()
        .ok()
        .map(exec::home_vars)
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k.into(), v.into_os_string()))
        .collect();
    exec::resolve_real(cfg, Tool::Git).ok().map(|bin| Git::new(bin, &home))
}

/// The environment the real tool of this call would run with (`exec::child_env` with the
/// install's pins and tool home), for the gate's own git to read the configuration the real
/// git reads. Without a trusted tool home the real tool does not run at all; the gate's git
/// then reads no global configuration.
pub fn real_env(
    cfg: &InstallConfig,
    caller: &[(std::ffi::OsString, std::ffi::OsString)],
    policy: &Policy,
    tier: u8,
) -> (Vec<(std::ffi::OsString, std::ffi::OsString)>, Vec<crate::audit::EnvReset>) {
    let pins = cfg.pins().unwrap_or_default();
    exec::child_env(caller, policy, &pins, cfg.tool_home().ok(), tier)
}

/// A `gh api` call with its placeholders filled, once for every repository gh could pick: the
/// actions of all of them, so the strictest decides. A fill that fails, or a filled call the
/// grammar cannot read, is the call's problem.
fn gh_filled(cfg: &InstallConfig, args: &[String], contents: &grammar::Contents, cwd: &Path, first: Invocation) -> Invocation {
    let git = gate_git(cfg);
    let pinned = cfg.env.get("GH_REPO").map(String::as_str);
    let mut out: Option<Invocation> = None;
    for fill in facts::gh_fills(git.as_ref(), cwd, pinned) {
        let inv = grammar::gh::parse_filled(args, contents, Some(&fill));
        if inv.problem.is_some() {
            return inv;
        }
        match &mut out {
            None => out = Some(inv),
            Some(o) => {
                for a in inv.actions {
                    if !o.actions.contains(&a) {
                        o.actions.push(a);
                    }
                }
            }
        }
    }
    out.unwrap_or(first)
}

/// Gather the facts a first decision asked for: skills from the install's sources (a
/// repository's from its remote's default branch), changed files, probe answers and the
/// configuration with the install's real git. `env` is the environment the real tool would
/// run with (`exec::child_env`), so the gate's git reads the configuration the real git reads.
pub fn gather(
    cfg: &InstallConfig,
    cwd: &Path,
    inv: &Invocation,
    needs: &decision::Needs,
    env: &[(std::ffi::OsString, std::ffi::OsString)],
) -> Result<decision::Facts> {
    let sources = Sources::from_config(cfg.skills.as_ref());
    let git = exec::resolve_real(cfg, Tool::Git).ok().map(|bin| Git::new(bin, env));
    facts::gather(&sources, git.as_ref(), cwd, inv, needs)
}

/// The state file's lock (when taken) and the cooldown facts for `decide()`.
pub type CooldownFacts = (
    Option<cooldown::store::Locked>,
    Option<std::result::Result<cooldown::Facts, String>>,
);

/// The cooldown facts a decision asked for: the budgets (the install's policy) and the state
/// file's counts. With `lock`, the state file's lock is taken (within `cooldown_lock_wait`) and
/// returned, to be held until the count is recorded; without, the file is read as it is
/// (`explain`). A state file that cannot be used is a fact (the decision refuses), not an error.
pub fn cooldown(cfg: &InstallConfig, needs: &decision::Needs, now: std::time::SystemTime, lock: bool) -> Result<CooldownFacts> {
    let (true, Some(path)) = (needs.cooldown, &cfg.cooldown_state) else {
        return Ok((None, None));
    };
    let budgets = std::sync::Arc::new(crate::policy::cooldown::Budgets::load(cfg.policy.as_deref())?);
    let (locked, state) = if lock {
        match cooldown::store::lock(path, cfg.cooldown_lock_wait) {
            Ok(l) => {
                let s = l.state.clone();
                (Some(l), Ok(s))
            }
            Err(e) => (None, Err(e)),
        }
    } else {
        (None, cooldown::store::read(path))
    };
    let file = path.display().to_string();
    let facts = state
        .map(|s| cooldown::Facts {
            budgets,
            state: std::sync::Arc::new(s),
            file: file.clone(),
            now,
        })
        .map_err(|e| format!("{file} {e}"));
    Ok((locked, Some(facts)))
}

/// What a decision asked to read on the remote host of an ssh call: a gate-built read-only
/// command over the call's own connection, with the environment the real ssh gets for the call
/// (`crate::remote_facts`). Failing to read is a fact (the decision refuses below tier 3).
fn remote_facts(
    cfg: &InstallConfig,
    ctx: &Context,
    policy: &Policy,
    args: &[String],
    inv: &Invocation,
    tier: u8,
) -> std::result::Result<decision::RemoteFacts, String> {
    let Some(remote) = inv.remote.as_deref() else {
        return Err("the call has no remote command".into());
    };
    let real = exec::resolve_real(cfg, Tool::Ssh).map_err(|e| e.to_string())?;
    let home = cfg.tool_home().map_err(|e| e.to_string())?;
    let pins = cfg.pins().map_err(|e| e.to_string())?;
    let (env, _) = exec::child_env(&ctx.env, policy, &pins, Some(home), tier);
    let conn = crate::remote_facts::Connection::of(real, args, remote, env);
    crate::remote_facts::facts(&conn, remote, &cfg.remote)
}

/// The line after `Using:` when the session inventory says the call falls back from MCP, or
/// cannot be read (DESIGN §4, SPEC-0023 REQ-5).
fn mcp_line(f: &Fallback, skill: &str, tool: Tool) -> Option<String> {
    let s = escape(skill);
    match f {
        Fallback::Silent | Fallback::HasMcp => None,
        Fallback::NoMcp(domain) => Some(format!(
            "[skill:{s}] WARNING: MCP tools not found for {domain}, falling back to {tool} (CLI)"
        )),
        Fallback::Unreadable(e) => Some(format!(
            "[skill:{s}] WARNING: the session inventory could not be read ({}); MCP fallback is not reported",
            escape(e)
        )),
    }
}

/// The policies of the gated tools an ssh remote command runs, from the same place as the
/// call's own policy. Only the tools the command names are loaded.
pub fn remote_policies(cfg: &InstallConfig, inv: &Invocation) -> Result<BTreeMap<Tool, Policy>> {
    let tools = inv
        .remote
        .iter()
        .flat_map(|r| r.parts.iter().map(|p| p.inv.tool))
        .filter(|t| *t != inv.tool);
    let mut all = Policy::load_all(tools, cfg.policy.as_deref())?;
    for p in all.values_mut() {
        *p = p.clone().with_install_endpoints(cfg)?;
    }
    Ok(all)
}

/// Which of the real tools named by the call's [`Claim::Parent`] claims the parent process is:
/// the same file (device and inode) as that tool's real binary in this install. Looked up only
/// for calls that make such a claim (git's nested `git-receive-pack`, ssh's own `-J` hop).
pub fn parents(cfg: &InstallConfig, inv: &Invocation, ppid: u32) -> Vec<Tool> {
    use std::os::unix::fs::MetadataExt;
    let parts = inv.remote.iter().flat_map(|r| r.parts.iter().map(|p| &p.inv));
    let wanted: Vec<Tool> = std::iter::once(inv)
        .chain(parts)
        .flat_map(|i| i.claims.iter())
        .filter_map(|c| match c {
            Claim::Parent { tool, .. } => Some(*tool),
            _ => None,
        })
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let Ok(parent) = std::fs::metadata(format!("/proc/{ppid}/exe")) else {
        return Vec::new();
    };
    wanted
        .into_iter()
        .filter(|t| {
            exec::resolve_real(cfg, *t)
                .ok()
                .and_then(|p| std::fs::metadata(p).ok())
                .is_some_and(|m| m.dev() == parent.dev() && m.ino() == parent.ino())
        })
        .collect()
}

/// argv as shown in logs: redacted, and for an ssh call the remote command as one word with the
/// secrets in its parts redacted too (they hide inside one argument, where word redaction misses
/// `-u user:password` and the like).
pub fn shown_args(args: &[String], inv: &Invocation) -> Vec<String> {
    let shown = match inv.remote.as_deref() {
        Some(r) if r.command_words > 0 && r.command_words <= args.len() => {
            let mut out = redact_args(&args[..args.len() - r.command_words]);
            out.push(crate::grammar::remote::redacted(r));
            out
        }
        _ => redact_args(args),
    };
    // A tool's own secret-bearing forms (mysql's attached `-pSECRET`).
    grammar::redact(inv.tool, shown)
}

/// The name shown in `[skill:…]`: `CLAUDEOPS_SKILL` renames it in the log only.
fn shown_skill(d: &Decision, var: &dyn Fn(&str) -> Option<String>) -> String {
    var("CLAUDEOPS_SKILL").filter(|s| !s.is_empty()).unwrap_or_else(|| d.skill.clone())
}

/// Where the install requires the kernel fence, a call from a process outside a Landlock domain
/// (a real tool started by something that left the shell, or a caller that was never fenced) is
/// refused before anything else. Returns what the audit record says of the fence.
fn fence_check(cfg: &InstallConfig, tool: Tool) -> Result<String> {
    if cfg.kernel_fence == install::KernelFence::Off {
        return Ok("off".into());
    }
    if crate::fence::fenced(&crate::fence::lib_dir(cfg).join(crate::fence::PROBE))? {
        return Ok(format!("landlock abi {}", crate::fence::kernel_abi()));
    }
    Err(Error::Fence(format!(
        "this {tool} call comes from a process outside the Landlock domain that {} requires, so it is refused; \
         start the agent with `tiershim launch` (or its shell with `tiershim shell`), or opt out with `kernel_fence: off`",
        cfg.path.display()
    )))
}

/// The audit record of a call refused because it came from outside the kernel fence: nothing of
/// it was parsed or decided, so it names the call, the tier and the refusal only.
fn outside_record(ctx: &Context, tool: Tool, cfg: &InstallConfig, e: &Error) -> AuditRecord {
    let shown: Vec<String> = ctx.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let requested = ctx.var("CLAUDEOPS_TIER");
    let (effective, note) = decision::effective_tier(cfg.tier, requested.as_deref());
    let message = escape(&format!("tiershim: {tool}: {e}")).into_owned();
    AuditRecord {
        time: audit::rfc3339(ctx.now),
        pid: ctx.pid,
        ppid: ctx.ppid,
        cwd: audit::path_string(&ctx.cwd),
        exe: audit::path_string(&audit::self_exe()),
        link: audit::path_string(&ctx.exec_path),
        tool: tool.name().into(),
        argv: redact_args(&shown).iter().map(|a| escape(a).into_owned()).collect(),
        verb: String::new(),
        skill: String::new(),
        tier: Tiers {
            requested: requested.as_deref().map(|t| escape(t).into_owned()),
            ceiling: cfg.tier,
            effective,
            note,
        },
        dry_run: false,
        verdict: "refuse".into(),
        required_tier: crate::policy::Required::Never,
        rule: "kernel-fence".into(),
        message: message.clone(),
        reasons: vec![message],
        real: None,
        scope: None,
        mcp: None,
        notices: Vec::new(),
        env_resets: Vec::new(),
        duration_us: ctx.started.elapsed().as_micros() as u64,
        fence: "outside".into(),
        remote: None,
        cooldown: None,
    }
}

fn gate(ctx: &Context, tool: Tool) -> Result<Exit> {
    let dir = ctx.exec_path.parent().unwrap_or(Path::new("/"));
    let cfg = InstallConfig::load(&dir.join(install::FILE_NAME), true)?;
    let fence = match fence_check(&cfg, tool) {
        Ok(f) => f,
        Err(e) => {
            // Recorded: a call from outside the fence is what an escape looks like.
            if cfg.audit_log.is_some() || audit::journald_present() {
                let rec = outside_record(ctx, tool, &cfg, &e);
                if let Some(log) = &cfg.audit_log {
                    audit::append(log, &rec)?;
                }
                audit::journald(&rec);
            }
            return Err(e);
        }
    };
    let policy = Policy::load(tool, cfg.policy.as_deref())?.with_install_endpoints(&cfg)?;
    let var = |name: &str| ctx.var(name);
    let (args, inv, local) = match utf8_args(ctx, tool) {
        Ok(args) => {
            let (inv, local) = understand(&cfg, tool, &args, &ctx.cwd);
            (args, inv, local)
        }
        Err(inv) => (inv.args.clone(), *inv, Default::default()),
    };
    // Scripts the call reads (psql -f, stdin) are read now and judged with the call.
    let (inv, scripts) = script_input::gather(tool, &args, inv, &ctx.cwd);
    let mut req = request(&cfg, &policy, &inv, &var);
    req.local = local;
    if inv.remote.is_some() {
        req.policies = remote_policies(&cfg, &inv)?;
    }
    req.parents = parents(&cfg, &inv, ctx.ppid);
    let mut d = decision::decide(&inv, &policy, &req);
    // The cooldown state's lock, when the call counts against a budget: held from the read the
    // decision is made on until the count and the audit line are written, and released before
    // anything goes to the agent's stderr (which the agent can keep from draining).
    let mut locked = None;
    if !d.needs.is_empty() {
        // The environment the real git would get, for the gate's git to read the same config.
        let (real_env, _) = real_env(&cfg, &ctx.env, &policy, d.effective_tier);
        req.facts = gather(&cfg, &ctx.cwd, &inv, &d.needs, &real_env)?;
        // Read before the cooldown lock is taken: the read waits on the network.
        if d.needs.remote {
            req.facts.remote = Some(remote_facts(&cfg, ctx, &policy, &args, &inv, d.effective_tier));
        }
        (locked, req.facts.cooldown) = cooldown(&cfg, &d.needs, ctx.now, true)?;
        d = decision::decide(&inv, &policy, &req);
    }
    let skill = shown_skill(&d, &var);

    let mut real = None;
    let mut failure = None;
    let mut env = Vec::new();
    let mut resets = Vec::new();
    if d.verdict == Verdict::Allow {
        // The real tool, the operator's tool home and pins (the secrets file is read only now,
        // for a call that runs).
        let ready = exec::resolve_real(&cfg, tool).and_then(|p| Ok((p, cfg.tool_home()?, cfg.pins()?)));
        match ready {
            Ok((p, home, pins)) => {
                (env, resets) = exec::child_env(&ctx.env, &policy, &pins, Some(home), d.effective_tier);
                real = Some(p);
            }
            Err(e) => failure = Some(e),
        }
    }
    // An allowed call is counted now, before the audit line and the exec (the gate is gone
    // afterwards); a refused, dry-run or failing call records nothing.
    let mut recorded = None;
    if d.verdict == Verdict::Allow
        && failure.is_none()
        && !d.cooldown.is_empty()
        && let (Some(mut l), Some(Ok(f)), Some(path)) = (locked.take(), &req.facts.cooldown, &cfg.cooldown_state)
    {
        match l.record(&d.cooldown, &f.budgets, ctx.now) {
            Ok(()) => recorded = Some(l),
            Err(msg) => failure = Some(Error::Cooldown { path: path.clone(), msg }),
        }
    }

    // The session inventory is read only for a call that will run.
    let mcp = if d.verdict == Verdict::Allow && failure.is_none() {
        // An ssh call falls back from the MCP server of what it runs (`ssh → docker ps`: Docker).
        let domain_tool = d.deciding_part.and_then(|i| d.parts.get(i)).map_or(tool, |p| p.tool);
        inventory::fallback(cfg.inventory.as_deref(), domain_tool)
    } else {
        Fallback::Silent
    };
    let shown_args = shown_args(&args, &inv);
    let line = match &failure {
        Some(e @ Error::RealMissing { .. }) => format!(
            "[skill:{}] ERROR: No suitable tool found for {} ({})",
            escape(&skill),
            tool.capability(),
            escape(&e.to_string())
        ),
        Some(e) => escape(&e.to_string()).into_owned(),
        None => decision::render(&d, &skill, &shown_args),
    };
    let notice = mcp_line(&mcp, &skill, tool);
    // One record per decision: to the audit log when the install names one, and to journald
    // when its socket exists (DESIGN §8), whichever are there.
    if cfg.audit_log.is_some() || audit::journald_present() {
        let mut reasons = d.reasons.clone();
        if let Some(e) = &failure {
            reasons.push(e.to_string());
        }
        let rec = AuditRecord {
            time: audit::rfc3339(ctx.now),
            pid: ctx.pid,
            ppid: ctx.ppid,
            cwd: audit::path_string(&ctx.cwd),
            exe: audit::path_string(&audit::self_exe()),
            link: audit::path_string(&ctx.exec_path),
            tool: tool.name().into(),
            argv: shown_args.iter().map(|a| escape(a).into_owned()).collect(),
            verb: escape(&d.verb).into_owned(),
            skill: escape(&skill).into_owned(),
            tier: Tiers {
                requested: req.env_tier.as_deref().map(|t| escape(t).into_owned()),
                ceiling: cfg.tier,
                effective: d.effective_tier,
                note: d.tier_note.clone(),
            },
            dry_run: d.dry_run,
            verdict: if failure.is_some() {
                "error".into()
            } else {
                AuditRecord::verdict_of(&d)
            },
            required_tier: d.required_tier,
            rule: d.rule.clone(),
            message: line.clone(),
            reasons,
            real: real.as_deref().map(audit::path_string),
            scope: d.scope.as_ref().map(audit::AuditScope::from),
            mcp: match &mcp {
                Fallback::Silent => None,
                Fallback::HasMcp => Some("mcp-available".into()),
                Fallback::NoMcp(_) => Some("cli-fallback".into()),
                Fallback::Unreadable(e) => Some(format!("inventory unreadable: {}", escape(e))),
            },
            notices: notice.iter().cloned().collect(),
            env_resets: resets.clone(),
            duration_us: ctx.started.elapsed().as_micros() as u64,
            fence: fence.clone(),
            remote: inv.remote.as_deref().map(|r| AuditRecord::remote_of(r, &d)),
            cooldown: match (&cfg.cooldown_state, d.cooldown.is_empty()) {
                (Some(path), false) => Some(audit::CooldownRecord {
                    state: audit::path_string(path),
                    budgets: d.cooldown.clone(),
                    recorded: recorded.is_some(),
                }),
                _ => None,
            },
        };
        if let Some(log) = &cfg.audit_log
            && let Err(e) = audit::append(log, &rec)
        {
            // Not logged, not run, not counted.
            if let Some(mut r) = recorded.take() {
                let _ = r.rollback();
            }
            return Err(e);
        }
        audit::journald(&rec);
    }
    // Nothing below may hold the lock: the lines go to the agent's stderr, which can block. A
    // count already written is taken back under the lock again if the call does not run.
    drop(locked);
    let taken = recorded.take().map(|l| l.release(cfg.cooldown_lock_wait));

    if let Some(e) = failure {
        return match e {
            Error::RealMissing { .. } => {
                eprintln!("{line}");
                Ok(Exit::NotFound)
            }
            other => Err(other),
        };
    }
    // Quiet on success (DESIGN §4): an allowed call's lines go to the record only, unless the
    // install asks for them on stderr, where the agent reads them merged into the tool's output.
    let announce = cfg.announce == install::Announce::Stderr;
    if d.verdict != Verdict::Allow || announce {
        eprintln!("{line}");
    }
    if d.verdict == Verdict::DryRun {
        // Why it is a dry run, when the environment did not clearly ask for one.
        if let Some(note) = &d.dry_run_note {
            eprintln!("[skill:{}] DRY RUN: {note}", escape(&skill));
        }
        if let Some(line) = cooldown::dry_run_line(&skill, &d.cooldown) {
            eprintln!("{line}");
        }
    }
    if let (Some(line), true) = (&notice, announce) {
        eprintln!("{line}");
    }
    match (d.verdict, real) {
        (Verdict::Allow, Some(real)) => {
            // The real tool reads the scripts exactly as they were judged (script_input).
            let failed = (|| {
                let sealed = scripts.map(|g| g.seal(&args)).transpose()?;
                if let Some(s) = &sealed {
                    s.install()?;
                }
                let args = sealed.as_ref().map_or(&args, |s| &s.args);
                // A remote git runs with the git gate's forced settings (grammar::remote).
                let sent = inv.remote.as_deref().map(|r| crate::grammar::remote::sent_args(args, r));
                let args = sent.as_ref().unwrap_or(args);
                Err(exec::exec(&real, tool, grammar::prepend(tool), args, env))
            })();
            // The real tool did not start: take the count back.
            if let Some(t) = taken {
                let _ = t.take_back();
            }
            failed
        }
        (Verdict::Allow, None) => Err(Error::Internal("allowed without a real tool".into())),
        (Verdict::DryRun, _) => Ok(Exit::Ok),
        (Verdict::Refuse, _) => Ok(Exit::Refused),
    }
}
