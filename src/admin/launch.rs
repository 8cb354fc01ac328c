//! `tiershim launch --tier N --user NAME [--keep-env VAR]… [--env NAME=VALUE]… [--cwd DIR] --
//! COMMAND [ARGS…]`: start an agent (Claude Code) inside its tier, as root, in a way that cannot
//! fall open.
//!
//! Every step fails closed (exit 78, naming what is wrong and the fix), before anything starts:
//!
//! 1. the install's checks for this tier (`tiershim doctor`'s, for the agent's user) all hold;
//! 2. the agent's user is not root, and keeps no group but its own primary group;
//! 3. the tier's shell, `<prefix>/bin/rbash-tier<N>`, is one Claude Code will take as
//!    `CLAUDE_CODE_SHELL` (its path contains `bash`, the agent's user can execute it, and its
//!    `--version` exits 0 when the agent's user runs it): Claude Code silently falls back to an
//!    unrestricted bash otherwise. `SHELL` is set to it too, the first fallback;
//! 4. the kernel fence (crate::fence) can be made with the ABI the tier asks for.
//!
//! 5. no Claude Code settings file the agent's user could have written (its user settings, the
//!    working directory's `.claude/settings*.json` and `.mcp.json`) holds a key that runs a
//!    program or names a server (crate::admin::claude_files).
//!
//! Then, still as root: a private mount namespace, with the tier's read-only bind mounts,
//! Claude Code's settings files the agent could write made read-only too, and Claude Code's
//! managed settings for the tier on `/etc/claude-code` (the operator's own files there are
//! kept; in their managed settings the launch's values win on every key that holds the fence:
//! `claude_files::managed_settings`); the Landlock domain (root needs no `no_new_privs`, so the
//! setgid gate of a hardened install still gets its group); then the agent's user and group,
//! and the agent's command with a clean environment.
//!
//! It executes nothing but the tier's shell (`--version`, as the agent's user) and the agent's
//! command, both by absolute path.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::claude_files;
use crate::access::{self, Account, Principal};
use crate::context::Context;
use crate::error::Error;
use crate::exit::Exit;
use crate::fence;
use crate::install::{self, InstallConfig};
use crate::sanitize::escape;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tier the agent runs at (its directory's tiershim.yaml must say the same).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=3))]
    tier: u8,
    /// The agent's account (name or uid): not root; it keeps its primary group only.
    #[arg(long, value_name = "USER")]
    user: String,
    /// The installation (default: the one this binary belongs to, `<prefix>/bin/tiershim`).
    #[arg(long, value_name = "DIR")]
    prefix: Option<PathBuf>,
    /// Pass this variable from the caller's environment (repeatable), e.g. ANTHROPIC_API_KEY.
    /// What the launch sets itself, and loader and shell variables, cannot be kept.
    #[arg(long = "keep-env", value_name = "VAR")]
    keep_env: Vec<String>,
    /// Set this variable for the agent (repeatable), with the same limits as --keep-env.
    #[arg(long = "env", value_name = "NAME=VALUE")]
    set_env: Vec<String>,
    /// As `tiershim doctor --system-path`: the directories searched for other copies of the real
    /// tools the agent's user could run without the gate (default: the standard PATH and
    /// PostgreSQL's directories).
    #[arg(long, value_name = "DIRS")]
    system_path: Option<String>,
    /// The agent's working directory (default: the caller's).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Make every check and print the fence, the managed settings and the environment the
    /// agent would get; start nothing.
    #[arg(long)]
    check: bool,
    /// The agent's command and its arguments (the program is looked up on the caller's PATH).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Where Claude Code reads managed settings on Linux (permission rules users cannot override).
pub const MANAGED_DIR: &str = "/etc/claude-code";
const MANAGED_FILE: &str = "managed-settings.json";

/// What the caller's environment may pass (as sudo's `env_reset`: the terminal and the locale).
/// `CLAUDEOPS_DRY_RUN` is passed too, whatever it holds (see `shell::dry_run_value`).
const KEEP: &[&str] = &["TERM", "COLORTERM", "COLUMNS", "LINES", "LANG", "LANGUAGE", "TZ"];

/// What the launch sets itself, so neither `--keep-env` nor `--env` may name it.
const SET: &[&str] = &[
    "HOME",
    "USER",
    "LOGNAME",
    "PATH",
    "SHELL",
    "CLAUDE_CODE_SHELL",
    "CLAUDE_CODE_SHELL_PREFIX",
    "CLAUDEOPS_TIER",
    "TMPDIR",
    "CLAUDE_CONFIG_DIR",
    "DISABLE_AUTOUPDATER",
];

fn refused(msg: impl AsRef<str>) -> Exit {
    eprintln!("tiershim launch: {}", escape(msg.as_ref()));
    Exit::Config
}

pub fn run(ctx: &Context, a: Args) -> Exit {
    if !nix::unistd::geteuid().is_root() {
        return refused(
            "must run as root: it makes a mount namespace and a Landlock domain, then becomes the agent's user (run it from the container's entrypoint)",
        );
    }
    // Arguments first: nothing below may depend on a variable the launch will not pass.
    let mut extra: Vec<(String, OsString)> = Vec::new();
    for v in &a.keep_env {
        if let Some(e) = bad_name(v) {
            return refused(format!("--keep-env {v}: {e}"));
        }
        if let Some(val) = ctx.env.iter().find(|(k, _)| k.to_str() == Some(v.as_str())).map(|(_, v)| v.clone()) {
            extra.push((v.clone(), val));
        }
    }
    for kv in &a.set_env {
        let Some((k, v)) = kv.split_once('=') else {
            return refused(format!("--env {kv}: not NAME=VALUE"));
        };
        if let Some(e) = bad_name(k) {
            return refused(format!("--env {k}: {e}"));
        }
        extra.push((k.to_string(), v.into()));
    }
    let Some(prefix) = a.prefix.clone().or_else(super::shell::own_prefix) else {
        return refused("cannot tell where this binary is installed; pass --prefix DIR");
    };
    let dir = prefix.join("lib/tiershim").join(format!("tier{}", a.tier));
    let cfg = match InstallConfig::load(&dir.join(install::FILE_NAME), true) {
        Ok(c) if c.tier == a.tier => c,
        Ok(c) => {
            return refused(format!(
                "{}: `tier: {}` in the directory of tier {}; re-run install.sh",
                c.path.display(),
                c.tier,
                a.tier
            ));
        }
        Err(e) => return refused(e.to_string()),
    };
    let account = match access::account(&a.user) {
        Ok(acc) if acc.uid == 0 => {
            return refused(format!(
                "--user {}: the agent's user is root, which every file mode and the fence's bind mounts give way to; make an unprivileged user for the agent",
                a.user
            ));
        }
        Ok(acc) => acc,
        Err(e) => return refused(format!("--user {}: {e}", a.user)),
    };
    // The agent keeps its primary group only; the install is checked for exactly that.
    let agent = Principal {
        uid: account.uid,
        gids: vec![account.gid],
        label: format!("user {} (uid {})", account.name, account.uid),
    };
    let faults = super::doctor::failures(&prefix, a.tier, agent.clone(), a.system_path.as_deref());
    if !faults.is_empty() {
        for f in &faults {
            eprintln!("{f}");
        }
        return refused(format!(
            "{} check(s) of tier {} fail; nothing was started (tiershim doctor --prefix {} --user {} shows every check)",
            faults.len(),
            a.tier,
            prefix.display(),
            account.name
        ));
    }
    let shell = prefix.join("bin").join(format!("rbash-tier{}", a.tier));
    if let Err(e) = check_shell(&shell, &account, &agent) {
        return refused(e);
    }
    let Some(program) = resolve(&a.command[0], ctx.var("PATH").as_deref()) else {
        return refused(format!(
            "{}: no such program on the caller's PATH; give its absolute path",
            a.command[0]
        ));
    };
    if access::can_execute(&agent, &program) != Some(true) {
        return refused(format!("{} cannot execute {}", agent.label, program.display()));
    }
    let cwd = a.cwd.clone().unwrap_or_else(|| ctx.cwd.clone());

    let repos = fence::repos(&cfg);
    let ruleset = match fence::plan(&cfg, &account.home, &repos, &|p| p.exists()) {
        Ok(r) => r,
        Err(e) => return refused(e.to_string()),
    };
    if let Some(rs) = &ruleset
        && let Err(e) = fence::check_kernel(rs)
    {
        return refused(e.to_string());
    }
    let existing = match read_managed() {
        Ok(v) => v,
        Err(e) => return refused(e),
    };
    let env = environment(ctx, &a, &cfg, &account, &shell, extra);
    // Every variable the launch sets is pinned in the managed settings' env too: Claude Code
    // applies settings' env over its own environment, and the managed layer over every other.
    let pins: Vec<(String, String)> = env
        .iter()
        .filter(|(k, _)| SET.contains(&k.as_str()) || k == "CLAUDEOPS_DRY_RUN")
        .map(|(k, v)| (k.clone(), v.to_string_lossy().into_owned()))
        .collect();
    let launched = match claude_files::command_line_servers(&a.command[1..], &agent) {
        Ok(l) => l,
        Err(e) => return refused(e),
    };
    let (settings, merged) = claude_files::managed_settings(&cfg, &prefix, &account.home, existing.settings, &pins, &bad_name, &launched);
    let guards = claude_files::guards(&cfg, &account.home, &cwd, &repos.work_trees);
    if let Err(e) = claude_files::check_planted(&guards, &agent) {
        return refused(e);
    }

    if a.check {
        println!(
            "tiershim launch: tier {} as {} would run {}",
            a.tier,
            agent.label,
            program.display()
        );
        match &ruleset {
            Some(rs) => fence::describe(rs).iter().for_each(|l| println!("kernel fence: {l}")),
            None => println!("kernel fence: off (kernel_fence: off)"),
        }
        for g in &guards {
            println!("read-only for the session: {} ({})", g.path.display(), g.why);
        }
        println!(
            "{MANAGED_DIR}/{MANAGED_FILE}: {}",
            serde_json::to_string(&settings).unwrap_or_default()
        );
        for n in &merged {
            println!("managed settings merged: {}", escape(n));
        }
        for (k, v) in &env {
            let shown = if SET.contains(&k.as_str()) {
                v.to_string_lossy().into_owned()
            } else {
                "(passed)".into()
            };
            println!("env: {k}={}", escape(&shown));
        }
        return Exit::Ok;
    }

    if let Err(e) = prepare_state(&account).and_then(|()| claude_files::make_missing(&guards)) {
        return refused(e);
    }
    // Each git directory's hooks and info made where missing, so they are mounted read-only
    // too; the ruleset made again with them.
    let ruleset = match &ruleset {
        Some(_) if cfg.tier >= 2 => {
            match fence::make_git_metadata(&repos).and_then(|()| fence::plan(&cfg, &account.home, &repos, &|p| p.exists())) {
                Ok(r) => r,
                Err(e) => return refused(e.to_string()),
            }
        }
        _ => ruleset,
    };
    if let Err(e) = enter(&ruleset, &settings, &existing.others, &claude_files::read_only(&guards)) {
        return refused(e.to_string());
    }
    if let Err(e) = become_agent(&account) {
        return refused(e);
    }
    if let Err(e) = std::env::set_current_dir(&cwd) {
        return refused(format!("--cwd {}: {e} (as {})", cwd.display(), agent.label));
    }
    let mut argv: Vec<OsString> = vec![program.clone().into_os_string()];
    argv.extend(a.command[1..].iter().map(OsString::from));
    let env: Vec<(OsString, OsString)> = env.into_iter().map(|(k, v)| (k.into(), v)).collect();
    super::shell::exec(&program, &argv, &env)
}

/// Why `name` may not be passed or set (`None`: it may).
fn bad_name(name: &str) -> Option<&'static str> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Some("not a variable name");
    }
    if SET.contains(&name) {
        return Some("the launch sets this variable itself");
    }
    if name == "CLAUDEOPS_DRY_RUN" {
        return None;
    }
    if name.starts_with("LD_")
        || name.starts_with("BASH_")
        || ["ENV", "BASH_ENV", "SHELLOPTS", "IFS", "GCONV_PATH", "NODE_OPTIONS"].contains(&name)
    {
        return Some("it changes how programs load or how a shell behaves; it cannot be passed");
    }
    None
}

/// The program on `path` (the caller's PATH), or the path itself when it names one.
fn resolve(program: &str, path: Option<&str>) -> Option<PathBuf> {
    let is_exe = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0);
    if program.contains('/') {
        // As given (a gated link stays the link its tier is found from), made absolute.
        let p = std::path::absolute(program).ok()?;
        return is_exe(&p).then_some(p);
    }
    std::env::split_paths(path?)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(program))
        .find(|p| is_exe(p))
}

/// Claude Code takes `CLAUDE_CODE_SHELL` only when its path contains `bash` or `zsh` and the
/// agent's user can execute it (otherwise it runs `--version` and wants exit 0): check all
/// three, the last by running it as the agent's user.
fn check_shell(shell: &Path, account: &Account, agent: &Principal) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let shown = shell.display().to_string();
    if !shown.contains("bash") {
        return Err(format!(
            "the tier's shell {shown} has no `bash` in its path, so Claude Code would ignore CLAUDE_CODE_SHELL and start an unrestricted bash; install into a prefix whose bin/rbash-tier<N> it is"
        ));
    }
    if access::can_execute(agent, shell) != Some(true) {
        return Err(format!(
            "{} cannot execute the tier's shell {shown}, so Claude Code would fall back to an unrestricted bash; re-run install.sh (it writes the shell mode 0755)",
            agent.label
        ));
    }
    let out = std::process::Command::new(shell)
        .arg("--version")
        .env_clear()
        .current_dir("/")
        .uid(account.uid)
        // From root, std also clears the supplementary groups when it sets the uid.
        .gid(account.gid)
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "`{shown} --version` as {} exits {}: {}; Claude Code would not take it as a shell",
            agent.label,
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("cannot run `{shown} --version` as {}: {e}", agent.label)),
    }
}

/// The agent's environment: the terminal and locale from the caller, what the operator passed,
/// and what the launch sets (the tier's shell as CLAUDE_CODE_SHELL and SHELL, the tier
/// directory as PATH, the tier, the agent's home, state and temporary directories).
fn environment(
    ctx: &Context,
    a: &Args,
    cfg: &InstallConfig,
    account: &Account,
    shell: &Path,
    extra: Vec<(String, OsString)>,
) -> Vec<(String, OsString)> {
    use std::os::unix::ffi::OsStrExt;
    let mut env: Vec<(String, OsString)> = Vec::new();
    for (k, v) in &ctx.env {
        let Some(name) = k.to_str() else { continue };
        if name == "CLAUDEOPS_DRY_RUN" {
            // Passed on whatever it holds (a dropped value would turn the dry run off), unless
            // the operator set it with --env.
            if !extra.iter().any(|(k, _)| k == name) {
                env.push((name.to_string(), super::shell::dry_run_value(v)));
            }
            continue;
        }
        let keep = KEEP.contains(&name) || name.starts_with("LC_");
        if keep && super::shell::safe_value(name, v.as_bytes()) {
            env.push((name.to_string(), v.clone()));
        }
    }
    env.extend(extra.into_iter().map(|(k, v)| {
        let v = if k == "CLAUDEOPS_DRY_RUN" {
            super::shell::dry_run_value(&v)
        } else {
            v
        };
        (k, v)
    }));
    let shell: OsString = shell.as_os_str().to_owned();
    for (k, v) in [
        ("HOME", account.home.clone().into_os_string()),
        ("USER", account.name.clone().into()),
        ("LOGNAME", account.name.clone().into()),
        ("PATH", cfg.dir().as_os_str().to_owned()),
        ("SHELL", shell.clone()),
        ("CLAUDE_CODE_SHELL", shell),
        ("CLAUDEOPS_TIER", a.tier.to_string().into()),
        ("CLAUDE_CONFIG_DIR", fence::state_dir(&account.home).into_os_string()),
        ("TMPDIR", fence::tmp_dir(&account.home).into_os_string()),
        ("DISABLE_AUTOUPDATER", "1".into()),
    ] {
        env.push((k.to_string(), v));
    }
    env
}

/// The agent's state and temporary directories, made for it when missing. Refused when they
/// are links, or someone else's.
fn prepare_state(account: &Account) -> Result<(), String> {
    let home = std::fs::symlink_metadata(&account.home)
        .map_err(|e| format!("the home directory {} of {}: {e}; create it", account.home.display(), account.name))?;
    if !home.is_dir() || home.uid() != account.uid {
        return Err(format!(
            "the home directory {} of {} is not a directory it owns; chown it to the agent's user",
            account.home.display(),
            account.name
        ));
    }
    for d in [fence::state_dir(&account.home), fence::tmp_dir(&account.home)] {
        match std::fs::symlink_metadata(&d) {
            Ok(m) if m.is_dir() && m.uid() == account.uid => {}
            Ok(_) => {
                return Err(format!(
                    "{} is not a directory owned by {} (a link, a file, or someone else's); move it away",
                    d.display(),
                    account.name
                ));
            }
            Err(_) => {
                std::fs::create_dir(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
                nix::unistd::chown(&d, Some(account.uid.into()), Some(account.gid.into()))
                    .map_err(|e| format!("cannot chown {}: {e}", d.display()))?;
                std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o700))
                    .map_err(|e| format!("cannot chmod {}: {e}", d.display()))?;
            }
        }
    }
    Ok(())
}

/// The operator's managed settings (parsed) and the other files in `/etc/claude-code`, which the
/// tier's copy of the directory keeps.
struct Existing {
    settings: Option<Value>,
    others: Vec<(PathBuf, Vec<u8>)>,
}

fn read_managed() -> Result<Existing, String> {
    let dir = Path::new(MANAGED_DIR);
    let mut out = Existing {
        settings: None,
        others: Vec::new(),
    };
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    let mut stack: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    while let Some(p) = stack.pop() {
        let meta = std::fs::symlink_metadata(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                stack.extend(rd.filter_map(|e| e.ok()).map(|e| e.path()));
            }
            continue;
        }
        let bytes = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let rel = p.strip_prefix(dir).unwrap_or(&p).to_path_buf();
        if rel == Path::new(MANAGED_FILE) {
            let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
                format!(
                    "{}: {e}; Claude Code would ignore it too: fix it, so the tier's rules can be added to yours",
                    p.display()
                )
            })?;
            out.settings = Some(v);
        } else {
            out.others.push((rel, bytes));
        }
    }
    Ok(out)
}

/// Still root: a private mount namespace with the tier's read-only binds and its managed
/// settings on /etc/claude-code, then the Landlock domain (without `no_new_privs`).
fn enter(
    ruleset: &Option<fence::Ruleset>,
    settings: &Value,
    others: &[(PathBuf, Vec<u8>)],
    claude_read_only: &[fence::Entry],
) -> Result<(), Error> {
    use nix::mount::{MsFlags, mount};
    fence::private_namespace()?;
    let dir = Path::new(MANAGED_DIR);
    if !dir.is_dir() {
        // The mount point: an empty directory, which Claude Code reads as no managed settings.
        std::fs::create_dir_all(dir).map_err(|e| Error::Fence(format!("cannot create {MANAGED_DIR}: {e}")))?;
    }
    let fail = |what: &str, e: &dyn std::fmt::Display| Error::Fence(format!("{MANAGED_DIR}: {what}: {e}"));
    mount(
        Some("tmpfs"),
        dir,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("mode=0755"),
    )
    .map_err(|e| fail("cannot mount a tmpfs", &e))?;
    for (rel, bytes) in others {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| fail("cannot copy the operator's files", &e))?;
        }
        std::fs::write(&p, bytes).map_err(|e| fail("cannot copy the operator's files", &e))?;
    }
    let text = serde_json::to_vec_pretty(settings).map_err(|e| fail("cannot write the settings", &e))?;
    std::fs::write(dir.join(MANAGED_FILE), text).map_err(|e| fail("cannot write the settings", &e))?;
    mount(
        None::<&str>,
        dir,
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("mode=0755"),
    )
    .map_err(|e| fail("cannot make it read-only", &e))?;
    // Claude Code's settings files the agent could write (crate::admin::claude_files).
    fence::bind_read_only(claude_read_only)?;
    if let Some(rs) = ruleset {
        fence::private_tmpfs(&rs.private)?;
        fence::pin(&rs.pinned)?;
        fence::bind_read_only(&rs.read_only)?;
        fence::restrict(rs, false)?;
    }
    Ok(())
}

/// The agent's user, with its primary group as its only group; checked after the change.
fn become_agent(account: &Account) -> Result<(), String> {
    use nix::unistd::{Gid, Uid};
    let gid = Gid::from_raw(account.gid);
    let uid = Uid::from_raw(account.uid);
    nix::unistd::setgroups(&[gid]).map_err(|e| format!("setgroups: {e}"))?;
    nix::unistd::setresgid(gid, gid, gid).map_err(|e| format!("setresgid: {e}"))?;
    nix::unistd::setresuid(uid, uid, uid).map_err(|e| format!("setresuid: {e}"))?;
    let ids = (nix::unistd::getresuid(), nix::unistd::getresgid(), nix::unistd::getgroups());
    match ids {
        (Ok(u), Ok(g), Ok(groups))
            if [u.real, u.effective, u.saved].iter().all(|x| *x == uid)
                && [g.real, g.effective, g.saved].iter().all(|x| *x == gid)
                && groups.iter().all(|x| *x == gid) =>
        {
            Ok(())
        }
        _ => Err(format!(
            "the agent's ids did not stick (wanted uid {} gid {} and no other group)",
            account.uid, account.gid
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_the_launch_sets_or_that_steer_loading_cannot_be_passed() {
        for v in [
            "PATH",
            "CLAUDE_CODE_SHELL",
            "SHELL",
            "LD_PRELOAD",
            "BASH_ENV",
            "NODE_OPTIONS",
            "A=B",
            "",
        ] {
            assert!(bad_name(v).is_some(), "{v}");
        }
        for v in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        ] {
            assert_eq!(bad_name(v), None, "{v}");
        }
    }
}
