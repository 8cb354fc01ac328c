//! Claude Code's settings as `tiershim launch` fixes them for a tier: the managed settings it
//! writes (merged with the operator's, the launch's values winning on every key that holds the
//! fence), and the settings files the agent could write (its user settings, a project's
//! `.claude/` and `.mcp.json`), which Claude Code would otherwise obey at its next start or at
//! once (it watches them): an `env` naming an unrestricted `CLAUDE_CODE_SHELL`, hooks,
//! `apiKeyHelper`, `statusLine`, MCP servers — each a program run outside the restricted shell.
//!
//! Two walls, as for git's configuration (DESIGN §3.2):
//! - at start, a settings file the agent's user could have written that holds anything but the
//!   keys that run nothing ([`SAFE_KEYS`]), or an `.mcp.json` naming a server, refuses the launch
//!   (78, naming the file and key): it is data the agent planted, never configuration;
//! - for the session, those files are bind-mounted read-only in the agent's mount namespace
//!   ([`guards`]): the user settings (made `{}` when missing), and at tier 2 and above a
//!   `.claude` directory and an `.mcp.json` in the working directory and in each repository's
//!   work tree (made when missing: an empty root-owned directory, which git does not list), so
//!   no tool, the gate's or Claude Code's own, can write them while the agent runs.
//!
//! The managed layer then takes what it can away from every other source: only managed hooks,
//! no skill shell execution, no MCP server but the organisation's (`managed-mcp.json`, and the
//! operator's allow-list entries that name a command or a URL), no project server approved by
//! default, no plugin marketplace the operator did not list.
//!
//! Must not: start anything, or write outside the agent's state and the mount points it names.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::access::{self, Principal};
use crate::fence;
use crate::install::InstallConfig;

/// Keys of an agent-writable settings file that run nothing and point nowhere: anything else
/// there refuses the launch.
pub const SAFE_KEYS: &[&str] = &[
    "$schema",
    "permissions",
    "model",
    "outputStyle",
    "includeCoAuthoredBy",
    "attribution",
    "cleanupPeriodDays",
    "language",
    "alwaysThinkingEnabled",
    "spinnerTipsEnabled",
    "theme",
];

/// Claude Code's settings for the tier: the operator's managed settings with the launch's fence
/// keys set over them, and what was merged, as lines for `launch --check`.
///
/// The launch's values win on:
/// - `env`: every variable the launch sets (`pins`: the tier's shell as `CLAUDE_CODE_SHELL`
///   and `SHELL`, `PATH`, `HOME`, the state and temporary directories, the tier, the dry run);
///   the operator's other variables are kept, except those the launch refuses to pass
///   (`CLAUDE_CODE_SHELL_PREFIX`, loader and shell variables), which are dropped;
/// - `permissions.deny`: the tier's rules are added to the operator's (deny rules only add up);
/// - `allowManagedHooksOnly`, `disableSkillShellExecution`, `allowManagedMcpServersOnly`: true;
///   `enableAllProjectMcpServers`: false;
/// - `allowedMcpServers`: the operator's entries that name a `serverCommand` or `serverUrl`
///   (a `serverName` entry would admit any command under that name), and the servers the
///   agent's own command line names (`launched`: [`command_line_servers`]), else none;
/// - `strictKnownMarketplaces`: the operator's list, else none.
///
/// Every other key of the operator's is kept as written (their own managed hooks, model,
/// `apiKeyHelper`: the operator's file, which the agent cannot write).
pub fn managed_settings(
    cfg: &InstallConfig,
    prefix: &Path,
    home: &Path,
    existing: Option<Value>,
    pins: &[(String, String)],
    refused_name: &dyn Fn(&str) -> Option<&'static str>,
    launched: &[Value],
) -> (Value, Vec<String>) {
    let mut notes = Vec::new();
    let mut m = match existing {
        Some(Value::Object(m)) => m,
        Some(_) => {
            notes.push("the operator's managed settings are not a JSON object: replaced".into());
            Map::new()
        }
        None => Map::new(),
    };
    // env: the operator's, less what the launch refuses, then the launch's pins.
    let mut env = match m.remove("env") {
        Some(Value::Object(e)) => e,
        Some(_) => {
            notes.push("env: not an object in the operator's file: replaced".into());
            Map::new()
        }
        None => Map::new(),
    };
    let names: Vec<String> = env.keys().cloned().collect();
    for k in names {
        if pins.iter().any(|(p, _)| *p == k) {
            notes.push(format!("env.{k}: the launch's value replaces the operator's"));
        } else if let Some(why) = refused_name(&k) {
            env.remove(&k);
            notes.push(format!("env.{k}: the operator's value dropped ({why})"));
        }
    }
    for (k, v) in pins {
        env.insert(k.clone(), Value::String(v.clone()));
    }
    m.insert("env".into(), Value::Object(env));

    let perms = m.entry("permissions").or_insert_with(|| json!({}));
    if !perms.is_object() {
        notes.push("permissions: not an object in the operator's file: replaced".into());
        *perms = json!({});
    }
    if let Some(p) = perms.as_object_mut() {
        let list = p.entry("deny").or_insert_with(|| json!([]));
        if !list.is_array() {
            *list = json!([]);
        }
        if let Some(arr) = list.as_array_mut() {
            for d in deny_rules(cfg, prefix, home) {
                if !arr.iter().any(|x| x.as_str() == Some(&d)) {
                    arr.push(Value::String(d));
                }
            }
        }
    }
    for (key, value) in [
        ("allowManagedHooksOnly", true),
        ("disableSkillShellExecution", true),
        ("allowManagedMcpServersOnly", true),
        ("enableAllProjectMcpServers", false),
    ] {
        if m.get(key).is_some_and(|v| *v != Value::Bool(value)) {
            notes.push(format!("{key}: the launch's {value} replaces the operator's value"));
        }
        m.insert(key.into(), Value::Bool(value));
    }
    let mut allowed: Vec<Value> = match m.get("allowedMcpServers") {
        Some(Value::Array(list)) => list
            .iter()
            .filter(|e| {
                let keep = e.get("serverCommand").is_some() || e.get("serverUrl").is_some();
                if !keep {
                    notes.push(format!(
                        "allowedMcpServers: {e} dropped (only entries naming a serverCommand or serverUrl are kept)"
                    ));
                }
                keep
            })
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    for e in launched {
        if !allowed.contains(e) {
            notes.push(format!("allowedMcpServers: {e} added (a server the agent's command line names)"));
            allowed.push(e.clone());
        }
    }
    m.insert("allowedMcpServers".into(), Value::Array(allowed));
    if !matches!(m.get("strictKnownMarketplaces"), Some(Value::Array(_))) {
        m.insert("strictKnownMarketplaces".into(), json!([]));
    }
    (Value::Object(m), notes)
}

/// The MCP servers the agent's command line names with Claude Code's `--mcp-config CONFIG…`
/// (each a JSON text or a file): the operator's, so each is allowed by its exact command and
/// arguments (`serverCommand`) or its URL (`serverUrl`). A file the agent's user could have
/// written is refused (what it names would be the agent's choice at the next start), as is one
/// that cannot be read.
pub fn command_line_servers(command: &[String], agent: &Principal) -> Result<Vec<Value>, String> {
    let mut configs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < command.len() {
        let a = &command[i];
        if let Some(v) = a.strip_prefix("--mcp-config=") {
            configs.push(v.to_string());
        } else if a == "--mcp-config" {
            while let Some(next) = command.get(i + 1).filter(|n| !n.starts_with('-')) {
                configs.push(next.clone());
                i += 1;
            }
        }
        i += 1;
    }
    let mut out = Vec::new();
    for c in configs {
        let text = if c.trim_start().starts_with('{') {
            c.clone()
        } else {
            let path = Path::new(&c);
            if let Some(why) = access::writable_by(agent, path) {
                return Err(format!(
                    "--mcp-config {c}: the agent could have written this file ({why}), so the servers it names would be the agent's choice; keep it where only root can write"
                ));
            }
            std::fs::read_to_string(path).map_err(|e| format!("--mcp-config {c}: {e}"))?
        };
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("--mcp-config {c}: not JSON: {e}"))?;
        let Some(servers) = v.get("mcpServers").and_then(Value::as_object) else {
            continue;
        };
        for server in servers.values() {
            if let Some(cmd) = server.get("command").and_then(Value::as_str) {
                let mut words = vec![Value::String(cmd.to_string())];
                if let Some(args) = server.get("args").and_then(Value::as_array) {
                    words.extend(args.iter().cloned());
                }
                out.push(json!({"serverCommand": words}));
            } else if let Some(url) = server.get("url").and_then(Value::as_str) {
                out.push(json!({"serverUrl": url}));
            }
        }
    }
    Ok(out)
}

/// The tier's deny rules (Claude Code's permission-rule syntax; paths written `//absolute`, as
/// Claude Code reads `/x` relative to the settings file):
///
/// - tier 1: no Write, Edit or NotebookEdit at all;
/// - tiers 2 and 3: no edit under any `.git/`, of Claude Code's own settings files anywhere
///   (`.claude/`, `.mcp.json`, `.claude.json`), of a dotfile or dot-directory inside a
///   workspace (a repository's `.claude-ops/`, `.env`, `.github/`), of the agent's own state
///   (`~/.claude`), nor in the skills, policy or install directories. Writes outside the work
///   trees are refused by the kernel fence (a deny rule cannot subtract from everywhere), and
///   the settings files are read-only mounts besides (a rule is matched against the path as
///   written, which a symbolic link can change).
pub fn deny_rules(cfg: &InstallConfig, prefix: &Path, home: &Path) -> Vec<String> {
    let mut deny: Vec<String> = Vec::new();
    let rule = |p: &Path, tail: &str| format!("Edit(/{}{tail})", p.display().to_string().trim_end_matches('/'));
    if cfg.tier == 1 {
        deny.extend(["Write", "Edit", "NotebookEdit"].map(String::from));
        return deny;
    }
    deny.extend(
        [
            "Edit(//**/.git)",
            "Edit(//**/.git/**)",
            "Edit(//**/.claude)",
            "Edit(//**/.claude/**)",
            "Edit(//**/.mcp.json)",
            "Edit(//**/.claude.json)",
        ]
        .map(String::from),
    );
    for ws in &cfg.workspaces {
        deny.push(rule(ws, "/**/.*"));
        deny.push(rule(ws, "/**/.*/**"));
    }
    deny.push(rule(&fence::state_dir(home), "/**"));
    deny.push(rule(home, "/.claude.json"));
    let mut dirs = vec![prefix.to_path_buf()];
    dirs.extend(cfg.skills.as_ref().and_then(|s| s.baseline.clone()));
    dirs.extend(cfg.policy.clone());
    for d in dirs {
        deny.push(rule(&d, "/**"));
    }
    deny
}

/// What a guarded path is, and what the launch makes when it is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Make {
    /// A file holding `{}` (the user settings).
    EmptySettings,
    /// An empty directory (a project's `.claude`, or in place of a missing `.mcp.json`: Claude
    /// Code reads no servers from it, and git does not list an empty directory).
    Dir,
}

/// A settings path kept read-only for the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub path: PathBuf,
    pub make: Make,
    pub why: &'static str,
}

/// The settings paths of an agent whose home is `home`, started in `cwd`: the user settings at
/// every tier; at tier 2 and above (where the work trees are writable) also each project
/// directory's `.claude` and `.mcp.json` (the working directory, and each repository `repos`
/// found under the workspaces).
pub fn guards(cfg: &InstallConfig, home: &Path, cwd: &Path, repos: &[PathBuf]) -> Vec<Guard> {
    let mut out = vec![Guard {
        path: fence::state_dir(home).join("settings.json"),
        make: Make::EmptySettings,
        why: "Claude Code's user settings",
    }];
    if cfg.tier >= 2 {
        let mut dirs: Vec<PathBuf> = vec![cwd.to_path_buf()];
        for r in repos {
            if !dirs.contains(r) {
                dirs.push(r.clone());
            }
        }
        for d in dirs {
            out.push(Guard {
                path: d.join(".claude"),
                make: Make::Dir,
                why: "a project's Claude Code settings, commands, skills and agents",
            });
            out.push(Guard {
                path: d.join(".mcp.json"),
                make: Make::Dir,
                why: "a project's MCP servers",
            });
        }
    }
    out
}

/// The settings files Claude Code reads at start among `guards`, whose contents the launch
/// checks: the user settings, and each project's `.claude/settings.json`,
/// `.claude/settings.local.json` and `.mcp.json`.
fn settings_files(guards: &[Guard]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for g in guards {
        match g.path.file_name().and_then(|n| n.to_str()) {
            Some(".claude") => {
                out.push(g.path.join("settings.json"));
                out.push(g.path.join("settings.local.json"));
            }
            _ => out.push(g.path.clone()),
        }
    }
    out
}

/// Refuse a settings file the agent's user could have written that holds what runs a program
/// or names a server: the first such file and key, with the fix.
pub fn check_planted(guards: &[Guard], agent: &Principal) -> Result<(), String> {
    for f in settings_files(guards) {
        let Ok(meta) = std::fs::symlink_metadata(&f) else { continue };
        if meta.is_dir() {
            continue; // the launch's own placeholder for a missing .mcp.json
        }
        let Some(why) = access::writable_by(agent, &f) else { continue };
        let fix = "move what the operator means into the managed settings (/etc/claude-code), or remove the file";
        let bytes = std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "{}: not JSON Claude Code would read as settings ({e}), in a file the agent could have written ({why}); {fix}",
                f.display()
            )
        })?;
        let Some(obj) = v.as_object() else {
            return Err(format!("{}: not a JSON object ({why}); {fix}", f.display()));
        };
        let is_mcp = f.file_name().is_some_and(|n| n == ".mcp.json");
        for (k, val) in obj {
            let harmless = if is_mcp {
                k == "mcpServers" && val.as_object().is_some_and(Map::is_empty)
            } else {
                SAFE_KEYS.contains(&k.as_str())
            };
            if !harmless {
                return Err(format!(
                    "{}: `{k}` in a Claude Code settings file the agent could have written ({why}): Claude Code would obey it outside the restricted shell (a program to run, a server, an environment); {fix}",
                    f.display()
                ));
            }
        }
    }
    Ok(())
}

/// Make the missing guarded paths (as root, before the mount namespace): the user settings as
/// `{}` owned by root (mode 0644), a missing `.claude` or `.mcp.json` as an empty directory
/// owned by root (mode 0755). A path that is a symbolic link is refused: a bind mount would
/// follow it.
pub fn make_missing(guards: &[Guard]) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    for g in guards {
        match std::fs::symlink_metadata(&g.path) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "{} ({}) is a symbolic link; the launch keeps it read-only with a bind mount, which would follow it: remove the link",
                    g.path.display(),
                    g.why
                ));
            }
            Ok(_) => continue,
            Err(_) => {}
        }
        if !g.path.parent().is_some_and(Path::is_dir) {
            continue; // no project directory there (a repository removed meanwhile)
        }
        let made = match g.make {
            Make::EmptySettings => {
                std::fs::write(&g.path, "{}\n").and_then(|()| std::fs::set_permissions(&g.path, std::fs::Permissions::from_mode(0o644)))
            }
            Make::Dir => {
                std::fs::create_dir(&g.path).and_then(|()| std::fs::set_permissions(&g.path, std::fs::Permissions::from_mode(0o755)))
            }
        };
        made.map_err(|e| format!("cannot make {} ({}): {e}", g.path.display(), g.why))?;
        // Root's: the agent's user cannot change it even outside the namespace.
        if std::fs::metadata(&g.path).is_ok_and(|m| m.uid() != 0) {
            nix::unistd::chown(&g.path, Some(0.into()), Some(0.into())).map_err(|e| format!("cannot chown {}: {e}", g.path.display()))?;
        }
    }
    Ok(())
}

/// The guarded paths that exist, as read-only bind mounts for `fence::bind_read_only`.
pub fn read_only(guards: &[Guard]) -> Vec<fence::Entry> {
    guards
        .iter()
        .filter(|g| std::fs::symlink_metadata(&g.path).is_ok_and(|m| !m.file_type().is_symlink()))
        .map(|g| fence::Entry {
            path: g.path.clone(),
            why: g.why.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(tier: u8) -> InstallConfig {
        InstallConfig::parse(
            Path::new(&format!("/opt/ts/lib/tiershim/tier{tier}/tiershim.yaml")),
            &format!("tier: {tier}\nskills: {{baseline: /app/skills, repos: /repos}}\npolicy: /etc/ts/policy\n"),
        )
        .unwrap()
    }

    fn refused(name: &str) -> Option<&'static str> {
        (name.starts_with("LD_") || name == "CLAUDE_CODE_SHELL_PREFIX").then_some("refused")
    }

    fn pins() -> Vec<(String, String)> {
        vec![
            ("CLAUDE_CODE_SHELL".into(), "/opt/ts/bin/rbash-tier1".into()),
            ("SHELL".into(), "/opt/ts/bin/rbash-tier1".into()),
        ]
    }

    #[test]
    fn tier_1_settings_take_every_file_tool_and_keep_the_operator_s_rules() {
        let theirs = json!({"permissions": {"deny": ["WebFetch"], "allow": ["Bash"]}, "model": "x"});
        let (v, _) = managed_settings(
            &cfg(1),
            Path::new("/opt/ts"),
            Path::new("/home/agent"),
            Some(theirs),
            &pins(),
            &refused,
            &[],
        );
        assert_eq!(
            v["permissions"],
            json!({"deny": ["WebFetch", "Write", "Edit", "NotebookEdit"], "allow": ["Bash"]})
        );
        assert_eq!(v["model"], "x");
        assert_eq!(v["allowManagedHooksOnly"], true);
    }

    #[test]
    fn the_launch_s_values_win_on_every_fence_key_and_the_rest_of_the_operator_s_is_kept() {
        let theirs = json!({
            "env": {"CLAUDE_CODE_SHELL": "/bin/bash", "CLAUDE_CODE_SHELL_PREFIX": "/bin/bash -c", "LD_PRELOAD": "/x.so", "ANTHROPIC_MODEL": "m"},
            "allowManagedHooksOnly": false,
            "enableAllProjectMcpServers": true,
            "allowedMcpServers": [{"serverName": "skills"}, {"serverCommand": ["/usr/bin/tiershim", "mcp"]}],
            "hooks": {"Stop": []},
            "apiKeyHelper": "/etc/ops/key.sh"
        });
        let (v, notes) = managed_settings(
            &cfg(2),
            Path::new("/opt/ts"),
            Path::new("/home/agent"),
            Some(theirs),
            &pins(),
            &refused,
            &[json!({"serverCommand": ["/opt/ts/bin/tiershim", "mcp"]})],
        );
        assert_eq!(
            v["env"],
            json!({"ANTHROPIC_MODEL": "m", "CLAUDE_CODE_SHELL": "/opt/ts/bin/rbash-tier1", "SHELL": "/opt/ts/bin/rbash-tier1"})
        );
        assert_eq!(
            (
                &v["allowManagedHooksOnly"],
                &v["enableAllProjectMcpServers"],
                &v["allowManagedMcpServersOnly"],
                &v["disableSkillShellExecution"]
            ),
            (&json!(true), &json!(false), &json!(true), &json!(true))
        );
        assert_eq!(
            v["allowedMcpServers"],
            json!([{"serverCommand": ["/usr/bin/tiershim", "mcp"]}, {"serverCommand": ["/opt/ts/bin/tiershim", "mcp"]}])
        );
        assert_eq!(v["strictKnownMarketplaces"], json!([]));
        assert_eq!((&v["hooks"], &v["apiKeyHelper"]), (&json!({"Stop": []}), &json!("/etc/ops/key.sh")));
        for want in [
            "env.CLAUDE_CODE_SHELL: the launch's value replaces the operator's",
            "env.LD_PRELOAD: the operator's value dropped (refused)",
            "env.CLAUDE_CODE_SHELL_PREFIX: the operator's value dropped (refused)",
            "allowManagedHooksOnly: the launch's true replaces the operator's value",
        ] {
            assert!(notes.iter().any(|n| n == want), "{want}: {notes:#?}");
        }
    }

    #[test]
    fn the_servers_the_command_line_names_are_allowed_by_command_or_url() {
        let root = Principal {
            uid: 0,
            gids: vec![0],
            label: "root".into(),
        };
        let agent = Principal {
            uid: 4242,
            gids: vec![4242],
            label: "user a (uid 4242)".into(),
        };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("gh.json");
        std::fs::write(&file, r#"{"mcpServers": {"gh": {"url": "https://mcp.example.com/gh"}}}"#).unwrap();
        let words: Vec<String> = [
            "-p",
            "x",
            "--mcp-config",
            r#"{"mcpServers": {"skills": {"command": "/opt/ts/bin/tiershim", "args": ["mcp", "--config", "/c.yaml"]}}}"#,
            file.to_str().unwrap(),
            "--verbose",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            command_line_servers(&words, &agent).unwrap(),
            [
                json!({"serverCommand": ["/opt/ts/bin/tiershim", "mcp", "--config", "/c.yaml"]}),
                json!({"serverUrl": "https://mcp.example.com/gh"})
            ]
        );
        // A file the agent could write names the agent's servers: refused (root writes all).
        let e = command_line_servers(&words, &root).unwrap_err();
        assert!(e.contains("the agent could have written this file"), "{e}");
    }

    #[test]
    fn tier_2_settings_keep_edits_out_of_git_claude_s_files_dotfiles_skills_policy_and_the_install() {
        assert_eq!(
            deny_rules(&cfg(2), Path::new("/opt/ts"), Path::new("/home/agent")),
            [
                "Edit(//**/.git)",
                "Edit(//**/.git/**)",
                "Edit(//**/.claude)",
                "Edit(//**/.claude/**)",
                "Edit(//**/.mcp.json)",
                "Edit(//**/.claude.json)",
                "Edit(//repos/**/.*)",
                "Edit(//repos/**/.*/**)",
                "Edit(//home/agent/.claude/**)",
                "Edit(//home/agent/.claude.json)",
                "Edit(//opt/ts/**)",
                "Edit(//app/skills/**)",
                "Edit(//etc/ts/policy/**)"
            ]
        );
    }

    #[test]
    fn the_user_settings_at_every_tier_and_each_project_s_files_from_tier_2_are_guarded() {
        let shown = |g: Vec<Guard>| g.into_iter().map(|g| g.path.display().to_string()).collect::<Vec<_>>();
        let repos = [PathBuf::from("/repos/app"), PathBuf::from("/repos/lib")];
        assert_eq!(
            shown(guards(&cfg(1), Path::new("/home/a"), Path::new("/repos/app"), &repos)),
            ["/home/a/.claude/settings.json"]
        );
        assert_eq!(
            shown(guards(&cfg(2), Path::new("/home/a"), Path::new("/repos/app"), &repos)),
            [
                "/home/a/.claude/settings.json",
                "/repos/app/.claude",
                "/repos/app/.mcp.json",
                "/repos/lib/.claude",
                "/repos/lib/.mcp.json"
            ]
        );
    }
}
