//! `tiershim shell --tier N [--prefix DIR] [-c CMD]`: the restricted shell of an installed tier.
//!
//! Starts `rbash` with a clean environment (an allow-list, as sudo's `env_reset`), `PATH` = the
//! tier directory only, `CLAUDEOPS_TIER` = N, `SHELL` = rbash, and the tier's `profile` as its
//! startup file (read before rbash enforces its restrictions; it makes `PATH`, `SHELL` and
//! `CLAUDEOPS_TIER` read-only and unsets `BASH_ENV`/`ENV` for every later shell).
//!
//! It checks the installation it is about to trust (the tier's `tiershim.yaml` and `profile`)
//! and refuses with 78 when either is missing, wrong or writable by others. It runs nothing but
//! rbash, and only by absolute path.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::claude;
use crate::context::Context;
use crate::error::Error;
use crate::exit::Exit;
use crate::install::{self, InstallConfig};
use crate::sanitize::escape;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tier whose directory becomes the shell's whole PATH.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=3))]
    tier: u8,
    /// The installation (default: the one this binary belongs to, `<prefix>/bin/tiershim`).
    #[arg(long, value_name = "DIR")]
    prefix: Option<PathBuf>,
    /// Also pass this variable from the caller's environment (repeatable). PATH, SHELL, ENV,
    /// BASH_ENV, CLAUDEOPS_TIER, loader (LD_*) and shell-behaviour variables cannot be kept.
    #[arg(long = "keep-env", value_name = "VAR")]
    keep_env: Vec<String>,
    /// Accepted for harnesses that start a login shell (`-l -c CMD`). The tier profile is
    /// always read; /etc/profile and ~/.bash_profile never are.
    #[arg(short = 'l', long = "login")]
    login: bool,
    /// Run the first argument as a command line and exit with its status (as `bash -c`). Claude
    /// Code's wrapped form of a Bash tool call is unwrapped first (see docs/claude-code.md).
    #[arg(short = 'c')]
    command: bool,
    /// Print rbash's version and exit (what a harness runs to check that this is a shell).
    #[arg(long)]
    version: bool,
    /// With -c: the command line, then `$0` and the positional parameters.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "CMD")]
    args: Vec<String>,
}

/// Where rbash is looked for: absolute paths only, never the caller's PATH.
const RBASH: &[&str] = &["/usr/bin/rbash", "/bin/rbash"];

/// Variables passed from the caller when set (sudo's `env_reset` keeps the same kind: who the
/// user is, the terminal, the locale), plus the gate's own inputs that can only lower rights.
const KEEP: &[&str] = &[
    "HOME",
    "USER",
    "LOGNAME",
    "USERNAME",
    "MAIL",
    "TERM",
    "COLORTERM",
    "COLUMNS",
    "LINES",
    "LANG",
    "LANGUAGE",
    "TZ",
    "CLAUDEOPS_DRY_RUN",
    "CLAUDEOPS_SKILL",
];

/// Names `--keep-env` refuses: what the shell sets itself, and what changes how a shell or the
/// dynamic loader behaves.
fn never_kept(var: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "SHELL",
        "ENV",
        "BASH_ENV",
        "CLAUDEOPS_TIER",
        "SHELLOPTS",
        "BASHOPTS",
        "HISTFILE",
        "CDPATH",
        "GLOBIGNORE",
        "IFS",
        "PS4",
        "PROMPT_COMMAND",
        "POSIXLY_CORRECT",
        "GCONV_PATH",
        "LOCPATH",
        "NLSPATH",
        "MALLOC_TRACE",
        "GLIBC_TUNABLES",
        "TMPDIR",
    ];
    EXACT.contains(&var) || var.starts_with("LD_") || var.starts_with("BASH_") || var.starts_with("MALLOC_")
}

/// sudo's `env_check`: a locale or terminal value holding `/` or `%` could name a file to load.
pub(crate) fn safe_value(var: &str, value: &[u8]) -> bool {
    if value.iter().any(|b| b.is_ascii_control()) {
        return false;
    }
    match var {
        "TZ" => !value.starts_with(b"/") && !value.windows(2).any(|w| w == b".."),
        "HOME" | "MAIL" | "USER" | "LOGNAME" | "USERNAME" | "COLUMNS" | "LINES" => true,
        "CLAUDEOPS_DRY_RUN" | "CLAUDEOPS_SKILL" => true,
        _ => !value.iter().any(|b| *b == b'/' || *b == b'%'),
    }
}

/// `CLAUDEOPS_DRY_RUN` as passed on: never dropped (a dropped variable would turn a dry run
/// off), and as it was when it is a plain word; a value with control characters (`true\r`) or
/// not UTF-8 becomes `1` or `0` as the gate reads it (`tier::dry_run_on`: anything but a
/// clear false is on).
pub(crate) fn dry_run_value(v: &std::ffi::OsStr) -> OsString {
    match v.to_str() {
        Some(s) if safe_value("CLAUDEOPS_DRY_RUN", s.as_bytes()) => v.to_owned(),
        s => {
            let on = crate::tier::dry_run_on(false, Some(s.unwrap_or("on")));
            OsString::from(if on { "1" } else { "0" })
        }
    }
}

fn config_error(e: &Error) -> Exit {
    eprintln!("tiershim shell: {}", escape(&e.to_string()));
    e.exit()
}

/// The prefix this binary is installed in: `<prefix>/bin/tiershim`.
pub(crate) fn own_prefix() -> Option<PathBuf> {
    let exe = std::fs::read_link("/proc/self/exe").ok()?;
    Some(exe.parent()?.parent()?.to_path_buf())
}

pub fn run(ctx: &Context, a: Args) -> Exit {
    let _ = a.login; // accepted for compatibility; see the field's doc
    if a.version {
        return match find_rbash() {
            Some(rbash) => exec(rbash, &["rbash".into(), "--version".into()], &[]),
            None => rbash_missing(),
        };
    }
    if !a.command && !a.args.is_empty() {
        eprintln!("tiershim shell: arguments need -c (tiershim shell --tier N -c 'CMD'); scripts are not run");
        return Exit::Usage;
    }
    if a.command && a.args.is_empty() {
        eprintln!("tiershim shell: -c needs a command line");
        return Exit::Usage;
    }
    for v in &a.keep_env {
        if v.is_empty() || v.contains('=') || never_kept(v) {
            eprintln!(
                "tiershim shell: --keep-env {}: this variable is set by the shell or changes how programs load; it cannot be kept",
                escape(v)
            );
            return Exit::Usage;
        }
    }
    let Some(prefix) = a.prefix.clone().or_else(own_prefix) else {
        eprintln!("tiershim shell: cannot tell where this binary is installed; pass --prefix DIR");
        return Exit::Usage;
    };
    let dir = prefix.join("lib/tiershim").join(format!("tier{}", a.tier));
    let cfg = match InstallConfig::load(&dir.join(install::FILE_NAME), true) {
        Ok(c) => c,
        Err(e) => return config_error(&e),
    };
    if cfg.tier != a.tier {
        return config_error(&Error::ConfigInvalid {
            path: cfg.path.clone(),
            msg: format!("`tier: {}` in the directory of tier {}; re-run install.sh", cfg.tier, a.tier),
        });
    }
    let profile = dir.join("profile");
    match std::fs::metadata(&profile) {
        Ok(m) if m.is_file() && m.mode() & 0o022 == 0 => {}
        Ok(m) if m.is_file() => {
            return config_error(&Error::ConfigUnsafe {
                path: profile,
                msg: format!(
                    "writable by group or others (mode {:o}); chmod go-w it, or re-run install.sh",
                    m.mode() & 0o7777
                ),
            });
        }
        _ => {
            return config_error(&Error::ConfigInvalid {
                path: profile,
                msg: "the tier's restricted profile is missing; re-run install.sh".into(),
            });
        }
    }
    let Some(rbash) = find_rbash() else {
        return rbash_missing();
    };
    let home = agent_home(ctx);
    let fenced = match fence(&cfg, &home) {
        Ok(f) => f,
        Err(e) => return config_error(&e),
    };
    // Claude Code's wrapper around a Bash tool call, unwrapped (crate::claude): the model's
    // command runs as `eval '<command>'` under every rbash restriction, and the working directory
    // the wrapper would have written with `pwd -P >|` (which rbash refuses) is written here.
    let mut args = a.args.clone();
    if a.command {
        match args.first().and_then(|t| claude::recognise(t)) {
            None => {}
            Some(claude::Form::EnvProbe) => args[0] = "printenv".into(),
            Some(claude::Form::Snapshot(_)) => {
                eprintln!("tiershim shell: the restricted shell makes no shell snapshot; each command starts from the tier's profile");
                return Exit::Failure;
            }
            Some(claude::Form::Call(call)) => {
                if let Err(e) = write_cwd(&call.cwd_file, &ctx.cwd) {
                    eprintln!("tiershim shell: {}: {e}", call.cwd_file.display());
                    return Exit::Failure;
                }
                let redirect = if call.stdin_null { " < /dev/null" } else { "" };
                args[0] = format!("eval {}{redirect}", claude::quote(&call.command));
            }
        }
    }

    let mut env: Vec<(OsString, OsString)> = Vec::new();
    for (k, v) in &ctx.env {
        let name = k.to_string_lossy();
        let keep = KEEP.contains(&name.as_ref()) || name.starts_with("LC_") || a.keep_env.iter().any(|x| x == name.as_ref());
        if name == "CLAUDEOPS_DRY_RUN" {
            env.push((k.clone(), dry_run_value(v)));
        } else if keep && safe_value(&name, v.as_bytes()) {
            env.push((k.clone(), v.clone()));
        }
    }
    env.push(("PATH".into(), dir.clone().into_os_string()));
    env.push(("SHELL".into(), rbash.as_os_str().to_owned()));
    env.push(("CLAUDEOPS_TIER".into(), a.tier.to_string().into()));
    // Inside the fence the agent's temporary files go to its private directory (bash's large
    // here-documents, Claude Code's background output), the only temporary place it may write.
    if fenced && crate::fence::tmp_dir(&home).is_dir() {
        env.push(("TMPDIR".into(), crate::fence::tmp_dir(&home).into_os_string()));
    }

    let mut argv: Vec<OsString> = vec!["rbash".into(), "--restricted".into(), "--noprofile".into()];
    if a.command {
        // A non-interactive shell reads BASH_ENV; the profile unsets it for everything later.
        env.push(("BASH_ENV".into(), profile.clone().into_os_string()));
        argv.push("--norc".into());
        argv.push("-c".into());
        argv.extend(args.iter().map(OsString::from));
    } else {
        argv.extend(["--rcfile".into(), profile.clone().into_os_string(), "-i".into()]);
    }
    exec(rbash, &argv, &env)
}

/// The home directory of the caller's account (`/etc/passwd`, by uid), where the fence keeps the
/// agent's state writable; `HOME` only when the account has no entry.
fn agent_home(ctx: &Context) -> PathBuf {
    let uid = nix::unistd::getuid().as_raw().to_string();
    match crate::access::account(&uid) {
        Ok(a) => a.home,
        Err(_) => ctx.var("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/nonexistent")),
    }
}

/// Was this binary installed setgid (a hardened install)? The admin CLI has already dropped the
/// group, so the file's mode tells.
fn hardened_binary() -> bool {
    std::fs::metadata("/proc/self/exe").is_ok_and(|m| m.mode() & 0o2000 != 0)
}

/// The kernel fence for this shell (crate::fence). A shell already inside a Landlock domain (as
/// `tiershim launch` starts Claude Code) inherits it. Otherwise the shell makes the tier's
/// domain itself, except where that would weaken the install or leave part of the fence out:
/// a hardened install refuses (the `no_new_privs` an unprivileged domain needs would stop the
/// setgid gate from getting its group), and a tier whose ruleset has read-only bind mounts
/// refuses unless running as root. Returns whether the fence is on.
fn fence(cfg: &InstallConfig, home: &Path) -> Result<bool, Error> {
    use crate::fence;
    let Some(mut rs) = fence::plan(cfg, home, &fence::repos(cfg), &|p| p.exists())? else {
        return Ok(false);
    };
    match fence::domain_tier(&fence::lib_dir(cfg))? {
        Some(t) if t == rs.tier => return Ok(true),
        // Another tier's domain: its gate would refuse every call (and this shell cannot widen
        // the domain, nor should it narrow it unasked).
        Some(t) => {
            return Err(Error::Fence(format!(
                "this shell of tier {} runs inside the Landlock domain of tier {t}; start it with `tiershim launch --tier {}`",
                rs.tier, rs.tier
            )));
        }
        None => {}
    }
    if hardened_binary() {
        return Err(Error::Fence(format!(
            "this shell is not inside a Landlock domain, and a hardened install's shell cannot make one (the no_new_privs it \
             needs would stop the setgid gate from getting its group); start the agent with `tiershim launch --tier {} --user USER -- …` as root",
            rs.tier
        )));
    }
    let root = nix::unistd::geteuid().is_root();
    if !root {
        rs.without_private();
    }
    if !rs.read_only.is_empty() || !rs.pinned.is_empty() || !rs.private.is_empty() {
        if !root {
            let shown: Vec<String> = rs.read_only.iter().map(|e| e.path.display().to_string()).collect();
            return Err(Error::Fence(format!(
                "tier {} keeps {} read-only with bind mounts, which only root can make; start the agent with `tiershim launch` as root",
                rs.tier,
                shown.join(", ")
            )));
        }
        fence::private_namespace()?;
        fence::private_tmpfs(&rs.private)?;
        fence::pin(&rs.pinned)?;
        fence::bind_read_only(&rs.read_only)?;
    }
    fence::restrict(&rs, !root)?;
    Ok(true)
}

fn find_rbash() -> Option<&'static Path> {
    RBASH
        .iter()
        .map(Path::new)
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))
}

fn rbash_missing() -> Exit {
    eprintln!(
        "tiershim shell: rbash is not installed (looked for {}); install bash, which provides it",
        RBASH.join(", ")
    );
    Exit::NotFound
}

/// What Claude Code's `pwd -P >| FILE` would write: the physical working directory. The
/// restricted shell refuses `cd`, so the command cannot move it, and it is known before the
/// command runs. Written without following a link at FILE, with the caller's own rights.
fn write_cwd(file: &Path, cwd: &Path) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let physical = std::fs::canonicalize(cwd)?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(file)?;
    let mut line = physical.into_os_string().into_vec();
    line.push(b'\n');
    f.write_all(&line)
}

pub(crate) fn exec(path: &Path, argv: &[OsString], env: &[(OsString, OsString)]) -> Exit {
    let cstr = |b: &[u8]| CString::new(b).ok();
    let Some(p) = cstr(path.as_os_str().as_bytes()) else {
        return Exit::Internal;
    };
    let args: Option<Vec<CString>> = argv.iter().map(|a| cstr(a.as_bytes())).collect();
    let envp: Option<Vec<CString>> = env
        .iter()
        .map(|(k, v)| {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            cstr(&kv)
        })
        .collect();
    let (Some(args), Some(envp)) = (args, envp) else {
        eprintln!("tiershim shell: an argument or variable contains a NUL byte");
        return Exit::Usage;
    };
    match nix::unistd::execve(&p, &args, &envp) {
        Err(e) => {
            eprintln!("tiershim shell: exec {}: {e}", path.display());
            Exit::Internal
        }
        Ok(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locale_and_terminal_values_that_could_name_a_file_are_dropped() {
        assert!(safe_value("LANG", b"C.UTF-8"));
        assert!(!safe_value("LANG", b"/tmp/evil"));
        assert!(!safe_value("TERM", b"../../x"));
        assert!(!safe_value("LC_ALL", b"%s"));
        assert!(safe_value("TZ", b"Europe/Berlin"));
        assert!(!safe_value("TZ", b"/etc/passwd"));
        assert!(!safe_value("TZ", b"Europe/../../x"));
        assert!(safe_value("HOME", b"/home/agent"));
        assert!(!safe_value("HOME", b"/home/a\ngent"));
    }

    #[test]
    fn variables_that_steer_the_shell_or_the_loader_cannot_be_kept() {
        for v in [
            "PATH",
            "BASH_ENV",
            "BASH_FUNC_ls%%",
            "LD_PRELOAD",
            "CLAUDEOPS_TIER",
            "SHELLOPTS",
            "MALLOC_PERTURB_",
        ] {
            assert!(never_kept(v), "{v}");
        }
        for v in ["GIT_AUTHOR_NAME", "PGHOST", "http_proxy"] {
            assert!(!never_kept(v), "{v}");
        }
    }
}
