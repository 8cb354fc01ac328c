//! The audit record of one decision, and where it goes: one JSON line appended to the audit log
//! with a single `write` on an `O_APPEND` file (so concurrent gates never interleave), synced
//! before exec, and the same event to journald when its socket exists.
//!
//! Everything in a record that the caller supplied is already redacted here; nothing is printed.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::context::Context;
use crate::decision::{Decision, ScopeReport};
use crate::error::{Error, Result};
use crate::grammar::remote::{self, Remote};
use crate::policy::{Required, ScopeKind};
use crate::sanitize::{escape, redact_args};
use crate::time::rfc3339;
use crate::tool::Tool;

/// A variable the gate changed before exec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvReset {
    pub var: String,
    /// `removed`, `set` (forced by the policy) or `pinned` (by the operator).
    pub action: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tiers {
    /// The raw `CLAUDEOPS_TIER`, escaped, if set.
    pub requested: Option<String>,
    pub ceiling: u8,
    pub effective: u8,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord {
    pub time: String,
    pub pid: u32,
    pub ppid: u32,
    pub cwd: String,
    /// The tiershim binary that decided (`/proc/self/exe`).
    pub exe: String,
    /// The link it was executed through.
    pub link: String,
    pub tool: String,
    pub argv: Vec<String>,
    pub verb: String,
    pub skill: String,
    pub tier: Tiers,
    pub dry_run: bool,
    pub verdict: String,
    pub required_tier: Required,
    pub rule: String,
    /// The line the gate printed for this decision (`Using:`, `REFUSED: …`, `SCOPE VIOLATION:
    /// …`), or the error that stopped the call.
    pub message: String,
    pub reasons: Vec<String>,
    /// The real binary that will be executed (allowed calls only).
    pub real: Option<String>,
    /// The path-scope check, when one ran.
    pub scope: Option<AuditScope>,
    /// What the session inventory said about MCP for an allowed call (`mcp-available`,
    /// `cli-fallback`, or why it could not be read); absent without an inventory.
    pub mcp: Option<String>,
    /// The other REQ-5 lines of an allowed call (the MCP fallback warning), which reach stderr
    /// only with `announce: stderr`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    pub env_resets: Vec<EnvReset>,
    pub duration_us: u64,
    /// The kernel fence the call ran in: `landlock abi N tier T` (the ABI whose rights the
    /// domain handles, and the domain's tier), or `off` where `kernel_fence: off` opts out; a
    /// refused call says where it came from (`outside`, `landlock tier T`, `unknown`).
    pub fence: String,
    /// For an ssh call with a remote command: the host and the command as the gate read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteRecord>,
    /// For a call that counts against a cooldown budget: how each budget stood, and whether
    /// this call was recorded in the state file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cooldown: Option<CooldownRecord>,
}

/// The cooldown budgets of one call in the audit log.
#[derive(Debug, Clone, Serialize)]
pub struct CooldownRecord {
    /// The state file.
    pub state: String,
    /// Per service and class: the calls before this one in the window, the budget, and whether
    /// it allowed this one.
    pub budgets: Vec<crate::cooldown::Standing>,
    /// The call was counted in the state file (allowed, not a dry run).
    pub recorded: bool,
}

/// The remote command of an ssh call, parsed: what runs where, and how each part was judged.
#[derive(Debug, Clone, Serialize)]
pub struct RemoteRecord {
    pub host: String,
    pub user: Option<String>,
    pub port: Option<String>,
    pub jump: Vec<String>,
    /// The command as the caller wrote it, secrets redacted.
    pub command: String,
    /// The settings put after each remote `git` word when the command is sent
    /// (`grammar::remote::git_forced`); absent when the command runs no git.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_forced: Option<Vec<String>>,
    pub cd: Option<String>,
    pub parts: Vec<PartRecord>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartRecord {
    pub tool: String,
    /// The words the remote program receives, secrets redacted.
    pub argv: Vec<String>,
    pub verb: String,
    /// As log lines name it: `docker restart`, `uptime`.
    pub shown: String,
    pub verdict: String,
    pub required_tier: Required,
    pub rule: String,
    pub skill: String,
}

/// A scope check in the audit log: the files (at most [`AUDIT_FILES`] of them, escaped), how
/// many there were, and every violation.
#[derive(Debug, Clone, Serialize)]
pub struct AuditScope {
    pub check: ScopeKind,
    pub how: String,
    pub files_count: usize,
    pub files: Vec<String>,
    pub rules_from: Vec<String>,
    pub violations: Vec<AuditViolation>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AuditViolation {
    pub path: String,
    pub why: String,
}

/// The most changed files one audit line lists (the count is always there).
pub const AUDIT_FILES: usize = 1000;

impl From<&ScopeReport> for AuditScope {
    fn from(r: &ScopeReport) -> AuditScope {
        let esc = |s: &str| crate::sanitize::escape(s).into_owned();
        AuditScope {
            check: r.check,
            how: esc(&r.how),
            files_count: r.files.len(),
            files: r.files.iter().take(AUDIT_FILES).map(|f| esc(f)).collect(),
            rules_from: r.rules_from.iter().map(|f| esc(f)).collect(),
            violations: r
                .violations
                .iter()
                .map(|v| AuditViolation {
                    path: esc(&v.path),
                    why: esc(&v.describe()),
                })
                .collect(),
        }
    }
}

impl AuditRecord {
    pub fn verdict_of(d: &Decision) -> String {
        d.verdict.as_str().to_string()
    }

    /// The audit form of an ssh call's remote command and the judgement of its parts.
    pub fn remote_of(r: &Remote, d: &Decision) -> RemoteRecord {
        let e = |s: &str| escape(s).into_owned();
        RemoteRecord {
            host: e(&r.host),
            user: r.user.as_deref().map(e),
            port: r.port.as_deref().map(e),
            jump: r.jump.iter().map(|h| e(h)).collect(),
            command: e(&remote::redacted(r)),
            git_forced: remote::sent_command(r).map(|_| remote::git_forced().iter().map(|a| a.to_string()).collect()),
            cd: r.cd.as_deref().map(e),
            parts: r
                .parts
                .iter()
                .zip(&d.parts)
                .map(|(p, pd)| PartRecord {
                    tool: pd.tool.name().to_string(),
                    argv: redact_args(&p.words).iter().map(|w| e(w)).collect(),
                    verb: e(&pd.verb),
                    shown: e(&pd.shown),
                    verdict: pd.verdict.as_str().to_string(),
                    required_tier: pd.required_tier,
                    rule: pd.rule.clone(),
                    skill: e(&pd.skill),
                })
                .collect(),
        }
    }
}

/// What every record of a call says of where it came from: the process, the tool, the tier it
/// asked for, and the kernel fence it ran in.
pub struct Origin<'a> {
    pub ctx: &'a Context,
    pub tool: Tool,
    /// The install's ceiling.
    pub ceiling: u8,
    /// What the audit record says of the fence (`landlock abi N tier T`, `off`, `outside`,
    /// `landlock tier T` for another tier's domain, `unknown`).
    pub fence: &'a str,
}

/// What the gate did with a decided call, beyond the decision.
pub struct Outcome<'a> {
    /// argv as shown in logs (`shown_args`).
    pub argv: &'a [String],
    /// The skill as shown (`CLAUDEOPS_SKILL` renames it).
    pub skill: &'a str,
    /// The line the gate prints for the decision, or the error that stopped the call.
    pub message: &'a str,
    /// Why an allowed call could not run (the real tool, the tool home, the count).
    pub failure: Option<&'a Error>,
    /// The real binary that will be executed.
    pub real: Option<&'a Path>,
    /// What the session inventory said about MCP (`mcp-available`, `cli-fallback`, …).
    pub mcp: Option<String>,
    pub notices: Vec<String>,
    pub env_resets: Vec<EnvReset>,
    /// The ssh call's remote command.
    pub remote: Option<&'a Remote>,
    pub cooldown: Option<CooldownRecord>,
}

impl Origin<'_> {
    /// The fields every record shares, with the tier the caller asked for.
    fn record(&self, argv: Vec<String>, effective: u8, note: Option<String>) -> AuditRecord {
        let ctx = self.ctx;
        AuditRecord {
            time: rfc3339(ctx.now),
            pid: ctx.pid,
            ppid: ctx.ppid,
            cwd: path_string(&ctx.cwd),
            exe: path_string(&self_exe()),
            link: path_string(&ctx.exec_path),
            tool: self.tool.name().into(),
            argv,
            verb: String::new(),
            skill: String::new(),
            tier: Tiers {
                requested: ctx.var("CLAUDEOPS_TIER").as_deref().map(|t| escape(t).into_owned()),
                ceiling: self.ceiling,
                effective,
                note,
            },
            dry_run: false,
            verdict: String::new(),
            required_tier: Required::Never,
            rule: String::new(),
            message: String::new(),
            reasons: Vec::new(),
            real: None,
            scope: None,
            mcp: None,
            notices: Vec::new(),
            env_resets: Vec::new(),
            duration_us: ctx.started.elapsed().as_micros() as u64,
            fence: self.fence.to_string(),
            remote: None,
            cooldown: None,
        }
    }

    /// The record of a call refused because it came from outside the kernel fence: nothing of
    /// it was parsed or decided, so it names the call, the tier and the refusal only.
    pub fn outside(&self, message: String) -> AuditRecord {
        let shown: Vec<String> = self.ctx.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        let (effective, note) = crate::tier::effective_tier(self.ceiling, self.ctx.var("CLAUDEOPS_TIER").as_deref());
        AuditRecord {
            verdict: "refuse".into(),
            rule: crate::policy::Builtin::KernelFence.id(self.tool),
            message: message.clone(),
            reasons: vec![message],
            ..self.record(
                redact_args(&shown).iter().map(|a| escape(a).into_owned()).collect(),
                effective,
                note,
            )
        }
    }

    /// The record of a decided call.
    pub fn decided(&self, d: &Decision, out: Outcome) -> AuditRecord {
        let mut reasons = d.reasons.clone();
        if let Some(e) = out.failure {
            reasons.push(e.to_string());
        }
        AuditRecord {
            verb: escape(&d.verb).into_owned(),
            skill: escape(out.skill).into_owned(),
            dry_run: d.dry_run,
            verdict: if out.failure.is_some() {
                "error".into()
            } else {
                AuditRecord::verdict_of(d)
            },
            required_tier: d.required_tier,
            rule: d.rule.clone(),
            message: out.message.to_string(),
            reasons,
            real: out.real.map(path_string),
            scope: d.scope.as_ref().map(AuditScope::from),
            mcp: out.mcp,
            notices: out.notices,
            env_resets: out.env_resets,
            remote: out.remote.map(|r| AuditRecord::remote_of(r, d)),
            cooldown: out.cooldown,
            ..self.record(
                out.argv.iter().map(|a| escape(a).into_owned()).collect(),
                d.effective_tier,
                d.tier_note.clone(),
            )
        }
    }
}

/// One record to wherever the install keeps them: the audit log when it names one (an error
/// there is the call's error), and journald when its socket exists. The record is built only
/// when one of them is there.
pub fn write(log: Option<&Path>, rec: impl FnOnce() -> AuditRecord) -> Result<()> {
    if log.is_none() && !journald_present() {
        return Ok(());
    }
    let rec = rec();
    if let Some(log) = log {
        append(log, &rec)?;
    }
    journald(&rec);
    Ok(())
}

/// argv as shown in logs: redacted, and for an ssh call the remote command as one word with the
/// secrets in its parts redacted too (they hide inside one argument, where word redaction misses
/// `-u user:password` and the like).
pub fn shown_args(args: &[String], inv: &crate::grammar::Invocation) -> Vec<String> {
    let shown = match inv.remote.as_deref() {
        Some(r) if r.command_words > 0 && r.command_words <= args.len() => {
            let mut out = redact_args(&args[..args.len() - r.command_words]);
            out.push(remote::redacted(r));
            out
        }
        _ => redact_args(args),
    };
    // A tool's own secret-bearing forms (mysql's attached `-pSECRET`).
    (inv.tool.spec().redact)(shown)
}

/// Append one record as one line. Opened `O_APPEND`, written with a single `write`, synced.
pub fn append(path: &Path, rec: &AuditRecord) -> Result<()> {
    let line = serde_json::to_vec(rec).map_err(|e| Error::Internal(format!("audit record: {e}")))?;
    append_line(path, &line)
}

/// Append one record line to `path` with one `write`: whole, or an error (the call is then
/// refused). A write cut short (a file size limit, a full disk) leaves a torn line; the next
/// record starts on a line of its own: when the file does not end in a newline, the record is
/// written with one in front, so a torn line never hides the record after it.
pub fn append_line(path: &Path, record: &[u8]) -> Result<()> {
    let err = |e: std::io::Error| Error::Audit {
        path: path.to_path_buf(),
        source: e,
    };
    // Read access tells whether the file ends in a newline; without it, every record starts
    // with one (an empty line between records, never one record hidden in another).
    let (mut f, readable) = match std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o640)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => (f, true),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            let f = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o640)
                .custom_flags(libc::O_CLOEXEC)
                .open(path)
                .map_err(err)?;
            (f, false)
        }
        Err(e) => return Err(err(e)),
    };
    if !f.metadata().map_err(err)?.is_file() {
        return Err(err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file")));
    }
    // Whether the file ends in a newline, and the write, under a brief exclusive lock: another
    // gate's append in progress would otherwise look like a torn line (and earn an empty line).
    // The lock is only ever held for that; if it cannot be had at once and soon, the record is
    // written anyway (at worst after an empty line).
    let locked = lock_briefly(&f);
    let size = f.metadata().map_err(err)?.len();
    let lead = if size == 0 {
        false
    } else if readable {
        use std::os::unix::fs::FileExt;
        let mut last = [0u8; 1];
        f.read_exact_at(&mut last, size - 1).map_err(err)?;
        last[0] != b'\n'
    } else {
        true
    };
    let mut line = Vec::with_capacity(record.len() + 2);
    if lead {
        line.push(b'\n');
    }
    line.extend_from_slice(record);
    line.push(b'\n');
    // Past a file size limit the kernel sends SIGXFSZ, which would end the gate with no word:
    // ignored for this write, it is the error EFBIG, and the call is refused with a message.
    let n = without_sigxfsz(|| f.write(&line)).map_err(err)?;
    drop(locked);
    if n != line.len() {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::WriteZero,
            format!("short write ({n} of {} bytes), so the record is torn", line.len()),
        )));
    }
    f.sync_data().map_err(err)?;
    Ok(())
}

/// How long a gate waits for another gate's append to the audit log to finish.
const APPEND_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// An exclusive `flock` on the log's open file (through a second descriptor of it, which the
/// guard owns and unlocks on drop), waiting at most [`APPEND_LOCK_WAIT`]; None when it could
/// not be had.
fn lock_briefly(f: &std::fs::File) -> Option<nix::fcntl::Flock<std::fs::File>> {
    use nix::errno::Errno;
    use nix::fcntl::{Flock, FlockArg};
    let mut dup = f.try_clone().ok()?;
    let deadline = std::time::Instant::now() + APPEND_LOCK_WAIT;
    let mut pause = std::time::Duration::from_micros(100);
    loop {
        match Flock::lock(dup, FlockArg::LockExclusiveNonblock) {
            Ok(l) => return Some(l),
            Err((back, Errno::EWOULDBLOCK | Errno::EINTR)) => {
                let now = std::time::Instant::now();
                if now >= deadline {
                    return None;
                }
                std::thread::sleep(pause.min(deadline - now));
                pause = (pause * 2).min(std::time::Duration::from_millis(10));
                dup = back;
            }
            Err(_) => return None,
        }
    }
}

/// Run `f` with SIGXFSZ ignored, and put its disposition back afterwards (the real tool
/// inherits whatever the gate leaves).
fn without_sigxfsz<T>(f: impl FnOnce() -> T) -> T {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
    // SAFETY: installing SIG_IGN runs no handler code; the previous action is restored below.
    let old = unsafe { sigaction(Signal::SIGXFSZ, &ignore) };
    let out = f();
    if let Ok(old) = old {
        // SAFETY: restoring the action that was in place before.
        let _ = unsafe { sigaction(Signal::SIGXFSZ, &old) };
    }
    out
}

const JOURNAL_SOCKET: &str = "/run/systemd/journal/socket";

/// Whether journald's socket exists (containers usually have none).
pub fn journald_present() -> bool {
    Path::new(JOURNAL_SOCKET).exists()
}

/// Send the record to journald when its socket exists (containers usually have none; then the
/// JSONL file is the record). Failures here are not fatal: the file is the authoritative trail.
pub fn journald(rec: &AuditRecord) {
    if !journald_present() {
        return;
    }
    let Ok(layer) = tracing_journald::layer() else {
        return;
    };
    use tracing_subscriber::layer::SubscriberExt;
    let subscriber = tracing_subscriber::registry().with(layer.with_syslog_identifier("tiershim".into()));
    let json = serde_json::to_string(rec).unwrap_or_default();
    tracing::subscriber::with_default(subscriber, || {
        tracing::info!(tool = %rec.tool, verdict = %rec.verdict, rule = %rec.rule, skill = %rec.skill, record = %json, "tiershim decision");
    });
}

pub fn path_string(p: &Path) -> String {
    crate::sanitize::escape(&p.to_string_lossy()).into_owned()
}

pub fn self_exe() -> PathBuf {
    std::fs::read_link("/proc/self/exe").unwrap_or_default()
}
