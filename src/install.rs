//! `tiershim.yaml`: the file mirror ([`InstallFile`], unknown keys refused) and the validated
//! [`InstallConfig`]. The gate reads it from the directory holding the link the kernel executed,
//! never from a path the caller names. Relative paths resolve against the file's directory.
//!
//! This module reads one file and checks who could have written it; it decides nothing else.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::remote_fence::{RemoteHost, RemoteHostFile};
use crate::tool::Tool;

pub const FILE_NAME: &str = "tiershim.yaml";

// The JSON Schema in `dist/tiershim.schema.json` is generated from this mirror, doc comments
// included (a test fails when it is stale: `make generate`). Every type a key holds derives
// `JsonSchema` in tests, as here.

/// `tiershim.yaml`: the install config of one tier directory, read by the gate from the
/// directory holding the link it was executed through. Unknown keys are an error; relative paths
/// resolve against the file's directory.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema), schemars(title = "tiershim.yaml"))]
#[serde(deny_unknown_fields)]
pub struct InstallFile {
    /// The tier ceiling of this directory: 1 observe, 2 safe remediation, 3 full remediation.
    /// CLAUDEOPS_TIER may lower it, never raise it.
    #[cfg_attr(test, schemars(required, with = "u8", range(min = 1, max = 3)))]
    pub tier: Option<serde_yaml_ng::Value>,
    /// true pins dry-run on: mutating calls print what they would run and run nothing, whatever
    /// CLAUDEOPS_DRY_RUN says.
    #[serde(default)]
    pub dry_run: Option<bool>,
    /// An override policy directory (files named as in the shipped policy/); default: the
    /// policy embedded in the binary.
    #[serde(default)]
    pub policy: Option<PathBuf>,
    /// The real tool to execute, per gated tool (gh, tea, docker, psql, mysql, curl, git, ssh):
    /// an absolute path, never a PATH lookup.
    #[serde(default)]
    #[cfg_attr(test, schemars(schema_with = "real_schema"))]
    pub real: BTreeMap<String, PathBuf>,
    /// Directories searched for the real tools `real:` does not name.
    #[serde(default)]
    pub real_dirs: Vec<PathBuf>,
    /// The JSONL audit log: one record per decision, appended with one write before exec.
    #[serde(default)]
    pub audit_log: Option<PathBuf>,
    /// Pinned values of hardened variables (DOCKER_HOST, GH_HOST, PGSERVICEFILE, …), set for
    /// the real tool whatever the caller's environment holds.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Where the skills come from.
    #[serde(default)]
    pub skills: Option<SkillsFile>,
    /// The session tool inventory (`tiershim inventory --write`), read for the MCP fallback lines.
    #[serde(default)]
    pub inventory: Option<PathBuf>,
    /// Claude Code MCP configs whose servers the inventory lists.
    #[serde(default)]
    pub mcp_configs: Vec<PathBuf>,
    /// The only hosts an ssh call may reach (destination and jump hosts); absent: any host.
    #[serde(default)]
    pub hosts: Option<Vec<String>>,
    /// Claude Ops' cooldown state file, where restarts and redeployments are counted against
    /// the budgets of policy/cooldown.yaml; absent: no budget is enforced.
    #[serde(default)]
    pub cooldown_state: Option<PathBuf>,
    /// Seconds a gate waits for the cooldown state's lock before it refuses the call (above 0,
    /// at most 600; default 10). Needs `cooldown_state`.
    #[serde(default)]
    pub cooldown_lock_wait: Option<f64>,
    /// The directories holding the repositories' work trees: the only places a tier-2 call may
    /// write. Default: `skills.repos`.
    #[serde(default)]
    pub workspaces: Option<Vec<PathBuf>>,
    /// Endpoint rules for the operator's own services, as in `policy/endpoints.yaml`.
    #[serde(default)]
    pub endpoints: Vec<crate::policy::endpoints::EndpointFile>,
    /// The operator-owned directory every real tool runs with as HOME (and the XDG directories
    /// below it), so the tools' own configuration is the operator's. Absent: no real tool runs.
    #[serde(default)]
    pub tool_home: Option<PathBuf>,
    /// A file of pinned values only the gate can read (NAME=VALUE lines, or YAML NAME: VALUE),
    /// added to `env:` when a tool runs: credentials belong here, not in tiershim.yaml.
    #[serde(default)]
    pub secrets: Option<PathBuf>,
    /// Where the line naming the skill and tool of an allowed call goes: `audit` (the audit
    /// record and journald only; the default) or `stderr` as well.
    #[serde(default)]
    pub announce: Option<Announce>,
    /// The kernel fence (Landlock) of `tiershim launch` and `tiershim shell`: `on` (the
    /// default), `off`, or `{abi: N, writable: [DIR…]}`.
    #[serde(default)]
    pub kernel_fence: Option<KernelFenceFile>,
    /// Per ssh host: its remote workspaces, the compose projects the operator vouches for, and
    /// the systemd units restartable at tier 2.
    #[serde(default)]
    pub remote: BTreeMap<String, RemoteHostFile>,
}

/// `kernel_fence:` as written: `off`, `on`, or `{abi: N, writable: [DIR…]}`.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum KernelFenceFile {
    #[cfg_attr(test, schemars(with = "KernelFenceWord"))]
    Word(String),
    Table(KernelFenceTable),
}

/// The words `kernel_fence:` takes, for the schema.
#[cfg(test)]
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum KernelFenceWord {
    On,
    Off,
}

#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct KernelFenceTable {
    /// The lowest Landlock ABI the fence accepts (1 or more).
    #[serde(default)]
    pub abi: Option<u8>,
    /// Directories the agent may also write (tier 3 only).
    #[serde(default)]
    pub writable: Vec<PathBuf>,
}

/// The kernel fence an install asks for (`crate::fence`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelFence {
    /// `kernel_fence: off`: the operator opted out; no Landlock domain is made or checked.
    Off,
    /// The default: `launch` and `shell` put the agent in a Landlock domain of at least this
    /// ABI, and the gate refuses calls from outside one. `writable` (tier 3 only) adds the
    /// operator's writable roots.
    On { abi: u8, writable: Vec<PathBuf> },
}

/// The lowest Landlock ABI the fence accepts unless `kernel_fence.abi` says otherwise: ABI 3
/// (Linux 6.2) is the first that stops `truncate(2)` outside the writable paths.
pub const FENCE_ABI: u8 = 3;

/// `announce:`: where an allowed call's lines (`Using: …`, the MCP fallback warning) go
/// besides the audit record and journald. Refusals, dry runs and errors always reach stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Announce {
    /// The audit record and journald only: the agent's output is the tool's own (the default).
    #[default]
    Audit,
    /// Also stderr, where an agent reads them merged with the tool's output.
    Stderr,
}

/// `real:` in the schema: its keys are the gated tools' names.
#[cfg(test)]
fn real_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
    schemars::json_schema!({
        "type": "object",
        "propertyNames": { "enum": names },
        "additionalProperties": { "type": "string" }
    })
}

/// `skills:` in tiershim.yaml.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SkillsFile {
    /// The baseline skills directory (default: the skills shipped with tiershim).
    #[serde(default)]
    pub baseline: Option<PathBuf>,
    /// The directory holding the repositories; each `<repos>/<repo>/.claude-ops/skills/` adds skills.
    #[serde(default)]
    pub repos: Option<PathBuf>,
}

/// Where an install's skills come from; relative paths already resolved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillsConfig {
    pub baseline: Option<PathBuf>,
    pub repos: Option<PathBuf>,
}

/// The validated install config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallConfig {
    /// The file it came from.
    pub path: PathBuf,
    pub tier: u8,
    pub dry_run: bool,
    pub policy: Option<PathBuf>,
    pub real: BTreeMap<Tool, PathBuf>,
    pub real_dirs: Vec<PathBuf>,
    pub audit_log: Option<PathBuf>,
    pub env: BTreeMap<String, String>,
    /// `None`: the shipped skills, and no repository skills.
    pub skills: Option<SkillsConfig>,
    /// The session inventory file: written once by `tiershim inventory --write`, read by the
    /// gate for the MCP fallback line.
    pub inventory: Option<PathBuf>,
    /// Claude Code MCP configs whose servers the inventory lists.
    pub mcp_configs: Vec<PathBuf>,
    /// `hosts:`: the only hosts an ssh call may reach (destination and jump hosts), compared
    /// without regard to case. None: the key is absent and any host may be reached.
    pub hosts: Option<Vec<String>>,
    /// `cooldown_state:`: Claude Ops' cooldown state file, where the gate counts restarts and
    /// redeployments. None: no budget is enforced.
    pub cooldown_state: Option<PathBuf>,
    /// `cooldown_lock_wait:` (seconds): how long a gate waits for the state file's lock before
    /// it refuses the call.
    pub cooldown_lock_wait: std::time::Duration,
    /// `workspaces:`: the directories holding the repositories' work trees, the only places a
    /// tier-2 call may write. Absent: `skills.repos`, when that is set; else none.
    pub workspaces: Vec<PathBuf>,
    /// `announce:`: whether an allowed call's lines also go to stderr.
    pub announce: Announce,
    /// `kernel_fence:`: on (the default) or off.
    pub kernel_fence: KernelFence,
    /// `endpoints:`: the operator's endpoint rules, each with the line of the file it starts
    /// on. Validated here; their examples are run when curl or gh load their policy.
    pub endpoints: Vec<(crate::policy::endpoints::EndpointFile, usize)>,
    /// `tool_home:`: the operator-owned directory every real tool runs with as `HOME` (and the
    /// XDG directories below it), so `~/.gitconfig`, `~/.docker/`, `~/.config/gh/` are the
    /// operator's. Absent: the gate runs no real tool (exit 78).
    pub tool_home: Option<PathBuf>,
    /// `secrets:`: a file of pinned values only the gate can read (`NAME=VALUE` lines, or
    /// YAML `NAME: VALUE`), added to `env:` when a tool runs.
    pub secrets: Option<PathBuf>,
    /// Loaded with the trust rules of a hardened install's gate (root-owned files, the secrets
    /// file readable by the gate's group only).
    pub hardened: bool,
    /// `remote:`: per ssh host (lower case), its remote workspaces, vouched-for compose projects
    /// and restartable units.
    pub remote: BTreeMap<String, RemoteHost>,
}

impl InstallConfig {
    /// What the admin commands judge with when no `--config` is given: ceiling 3, the embedded
    /// policy, the shipped skills, and the real tools found on `path` (the admin's PATH).
    pub fn admin_default(path: Option<&str>) -> InstallConfig {
        InstallConfig {
            path: PathBuf::from("(none)"),
            tier: 3,
            dry_run: false,
            policy: None,
            real: BTreeMap::new(),
            real_dirs: path.map(|p| std::env::split_paths(p).collect()).unwrap_or_default(),
            audit_log: None,
            env: BTreeMap::new(),
            skills: None,
            inventory: None,
            mcp_configs: Vec::new(),
            hosts: None,
            cooldown_state: None,
            cooldown_lock_wait: crate::cooldown::store::LOCK_WAIT,
            workspaces: Vec::new(),
            announce: Announce::Audit,
            kernel_fence: KernelFence::Off,
            endpoints: Vec::new(),
            tool_home: None,
            secrets: None,
            hardened: false,
            remote: BTreeMap::new(),
        }
    }

    /// Read and validate `path`. `check_owner` applies the trust rules of `check_trust` (the gate
    /// always does; `explain --config` does not, as it executes nothing).
    pub fn load(path: &Path, check_owner: bool) -> Result<InstallConfig> {
        let hardened = nix::unistd::getegid() != nix::unistd::getgid();
        InstallConfig::load_with(path, check_owner.then_some(hardened))
    }

    /// Read and validate `path` as the gate of an install would: with the trust rules of a
    /// hardened install when `hardened` (`tiershim explain`, which runs without the setgid group,
    /// judges from the install's binary whether its gate would be hardened).
    pub fn load_as_gate(path: &Path, hardened: bool) -> Result<InstallConfig> {
        InstallConfig::load_with(path, Some(hardened))
    }

    fn load_with(path: &Path, trust: Option<bool>) -> Result<InstallConfig> {
        // Relative to the caller's directory (`check --config tiershim.yaml`), made absolute
        // first: the directory holding the file is the tier directory, and relative paths in it
        // are read from there.
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let path = absolute.as_path();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
                return Err(Error::ConfigMissing { dir });
            }
            Err(e) => {
                return Err(Error::ConfigRead {
                    path: path.to_path_buf(),
                    source: e,
                });
            }
        };
        if let Some(hardened) = trust {
            check_trust(path, hardened)?;
        }
        let mut cfg = InstallConfig::parse(path, &text)?;
        cfg.hardened = trust.unwrap_or(false);
        Ok(cfg)
    }

    pub fn parse(path: &Path, text: &str) -> Result<InstallConfig> {
        let invalid = |msg: String| Error::ConfigInvalid {
            path: path.to_path_buf(),
            msg,
        };
        let file: InstallFile = serde_yaml_ng::from_str(text).map_err(|e| {
            let hint = crate::suggest::for_serde(&e.to_string());
            invalid(format!(
                "{e}{hint}; the keys are listed in docs/configuration.md and in tiershim.schema.json"
            ))
        })?;
        let tier = match &file.tier {
            None => {
                return Err(invalid("`tier:` is required (the ceiling, 1, 2 or 3)".into()));
            }
            Some(serde_yaml_ng::Value::Number(n)) => match n.as_u64() {
                Some(t @ 1..=3) => t as u8,
                _ => return Err(invalid(format!("`tier: {n}` is not 1, 2 or 3"))),
            },
            Some(_) => return Err(invalid("`tier:` must be the number 1, 2 or 3".into())),
        };
        let base = path.parent().unwrap_or(Path::new("/"));
        let abs = |p: &Path| {
            if p.is_absolute() { p.to_path_buf() } else { base.join(p) }
        };
        let mut real = BTreeMap::new();
        for (name, p) in &file.real {
            let tool =
                Tool::from_name(name).ok_or_else(|| invalid(format!("`real.{name}`: {name} is not a gated tool ({})", Tool::names())))?;
            real.insert(tool, abs(p));
        }
        for (var, value) in &file.env {
            if var.is_empty() || var.contains('=') || var.contains('\0') {
                return Err(invalid(format!("`env.{var}` is not a variable name")));
            }
            // The agent's shell reads this file: a credential here is the agent's.
            if is_secret_name(var) || has_url_password(value) {
                return Err(invalid(format!(
                    "`env.{var}` holds a credential, and the agent can read tiershim.yaml: move it to the secrets file \
                     (`secrets:`; install.sh --secret {var}=…)"
                )));
            }
        }
        // libpq looks a service up in PGSERVICEFILE, else in ~/.pg_service.conf, which the agent
        // can write; its section may set `user=` and `options=-c default_transaction_read_only=off`.
        if file.env.contains_key("PGSERVICE") {
            match file.env.get("PGSERVICEFILE") {
                None => {
                    return Err(invalid(
                        "`env.PGSERVICE` is pinned without `env.PGSERVICEFILE`, so libpq would read the service from \
                         ~/.pg_service.conf, which the agent can write: pin `env.PGSERVICEFILE` to the absolute path of a \
                         service file only the operator can write"
                            .into(),
                    ));
                }
                Some(f) if !Path::new(f).is_absolute() => {
                    return Err(invalid(format!(
                        "`env.PGSERVICEFILE: {f}` is not an absolute path (libpq would resolve it against the agent's working directory)"
                    )));
                }
                Some(_) => {}
            }
        }
        let cooldown_lock_wait = match file.cooldown_lock_wait {
            None => crate::cooldown::store::LOCK_WAIT,
            Some(w) if w > 0.0 && w <= 600.0 => std::time::Duration::from_secs_f64(w),
            Some(w) => {
                return Err(invalid(format!(
                    "`cooldown_lock_wait: {w}` is not a number of seconds above 0 and at most 600"
                )));
            }
        };
        if file.cooldown_lock_wait.is_some() && file.cooldown_state.is_none() {
            return Err(invalid(
                "`cooldown_lock_wait` needs `cooldown_state` (the file whose lock it waits for)".into(),
            ));
        }
        if let Some(hosts) = &file.hosts {
            for h in hosts {
                check_host(h).map_err(|why| invalid(format!("`hosts:` entry {h:?} {why}")))?;
            }
        }
        let workspaces: Vec<PathBuf> = match &file.workspaces {
            Some(dirs) => dirs.iter().map(|p| abs(p)).collect(),
            None => file.skills.as_ref().and_then(|s| s.repos.as_deref()).map(abs).into_iter().collect(),
        };
        for w in &workspaces {
            if w.components().any(|c| matches!(c, std::path::Component::ParentDir)) || w == Path::new("/") {
                return Err(invalid(format!(
                    "`workspaces:` entry {} is `/` or holds `..`: name the directory that holds the work trees",
                    w.display()
                )));
            }
        }
        let kernel_fence = match &file.kernel_fence {
            None => KernelFence::On {
                abi: FENCE_ABI,
                writable: Vec::new(),
            },
            Some(KernelFenceFile::Word(w)) if w == "off" => KernelFence::Off,
            Some(KernelFenceFile::Word(w)) if w == "on" => KernelFence::On {
                abi: FENCE_ABI,
                writable: Vec::new(),
            },
            Some(KernelFenceFile::Word(w)) => {
                return Err(invalid(format!(
                    "`kernel_fence: {w}` is not `off`, `on` or {{abi: N, writable: [DIR…]}}"
                )));
            }
            Some(KernelFenceFile::Table(t)) => {
                let abi = t.abi.unwrap_or(FENCE_ABI);
                if abi == 0 {
                    return Err(invalid("`kernel_fence.abi: 0` is not a Landlock ABI (1 or more)".into()));
                }
                if !t.writable.is_empty() && tier != 3 {
                    return Err(invalid(format!(
                        "`kernel_fence.writable` is for tier 3 only (this is tier {tier}): tiers 1 and 2 write only the agent's own state, what the gate writes and (tier 2) the workspaces; remove the key"
                    )));
                }
                let mut writable = Vec::new();
                for w in &t.writable {
                    let w = abs(w);
                    if w.components().any(|c| matches!(c, std::path::Component::ParentDir)) || w == Path::new("/") {
                        return Err(invalid(format!(
                            "`kernel_fence.writable` entry {} is `/` or holds `..`: name the directories tier 3 may write",
                            w.display()
                        )));
                    }
                    writable.push(w);
                }
                KernelFence::On { abi, writable }
            }
        };
        let mut endpoints = Vec::with_capacity(file.endpoints.len());
        for e in file.endpoints {
            let line = line_of_rule(text, &e.id);
            crate::policy::endpoints::validate_one(e.clone()).map_err(|msg| invalid(format!("line {line}: endpoint {}: {msg}", e.id)))?;
            endpoints.push((e, line));
        }
        let tool_home = file.tool_home.as_deref().map(abs);
        if let Some(h) = &tool_home
            && h == Path::new("/")
        {
            return Err(invalid(
                "`tool_home: /` is the root directory: name a directory of its own, owned by the operator".into(),
            ));
        }
        let remote = remote_hosts(&file.remote, file.hosts.as_deref()).map_err(invalid)?;
        Ok(InstallConfig {
            path: path.to_path_buf(),
            tier,
            dry_run: file.dry_run.unwrap_or(false),
            policy: file.policy.as_deref().map(abs),
            real,
            real_dirs: file.real_dirs.iter().map(|p| abs(p)).collect(),
            audit_log: file.audit_log.as_deref().map(abs),
            env: file.env,
            skills: file.skills.map(|s| SkillsConfig {
                baseline: s.baseline.as_deref().map(abs),
                repos: s.repos.as_deref().map(abs),
            }),
            inventory: file.inventory.as_deref().map(abs),
            mcp_configs: file.mcp_configs.iter().map(|p| abs(p)).collect(),
            hosts: file.hosts,
            cooldown_state: file.cooldown_state.as_deref().map(abs),
            cooldown_lock_wait,
            workspaces,
            announce: file.announce.unwrap_or_default(),
            kernel_fence,
            endpoints,
            tool_home,
            secrets: file.secrets.as_deref().map(abs),
            hardened: false,
            remote,
        })
    }

    /// The directory holding this config (and the links).
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("/"))
    }

    /// The tool home the real tools run with, trusted as the config is: a directory writable by
    /// its owner only, owned by root in a hardened install. Without one the gate runs no real
    /// tool: it would read the agent's `~/.gitconfig`, `~/.docker/` and `~/.config/gh/`.
    pub fn tool_home(&self) -> Result<&Path> {
        let Some(home) = self.tool_home.as_deref() else {
            return Err(Error::ConfigInvalid {
                path: self.path.clone(),
                msg: "names no `tool_home:`, so the real tool would run with the agent's HOME (its ~/.gitconfig, \
                      ~/.docker/, ~/.config/gh/): add `tool_home:` (an operator-owned directory), or re-run install.sh, \
                      which always writes one"
                    .into(),
            });
        };
        let meta = std::fs::metadata(home).map_err(|e| Error::ConfigRead {
            path: home.to_path_buf(),
            source: e,
        })?;
        let unsafe_home = |msg: String| Error::ConfigUnsafe {
            path: home.to_path_buf(),
            msg,
        };
        if !meta.is_dir() {
            return Err(unsafe_home("`tool_home` is not a directory".into()));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(unsafe_home(format!(
                "the tool home is writable by group or others (mode {:o}); make it writable by its owner only (chmod go-w)",
                meta.mode() & 0o7777
            )));
        }
        if self.hardened && meta.uid() != 0 {
            return Err(unsafe_home(format!(
                "the tool home must be owned by root in a hardened install (owner uid {})",
                meta.uid()
            )));
        }
        Ok(home)
    }

    /// The operator's pinned values: `env:`, and the secrets file when there is one (read now;
    /// trusted only when no one but its owner and, hardened, the gate's group can read it).
    pub fn pins(&self) -> Result<BTreeMap<String, String>> {
        let mut pins = self.env.clone();
        let Some(path) = &self.secrets else {
            return Ok(pins);
        };
        for (k, v) in read_secrets(path, self.hardened)? {
            if pins.contains_key(&k) {
                return Err(Error::ConfigInvalid {
                    path: self.path.clone(),
                    msg: format!(
                        "`{k}` is pinned both in `env:` and in the secrets file {}; keep one",
                        path.display()
                    ),
                });
            }
            pins.insert(k, v);
        }
        Ok(pins)
    }
}

/// Names whose values are credentials: they belong in the secrets file, never in tiershim.yaml,
/// which the agent's shell can read.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    ["TOKEN", "PASSWORD", "PASSWD", "SECRET"].iter().any(|w| n.contains(w)) || n.ends_with("_PWD") || n == "DOCKER_AUTH_CONFIG"
}

/// A value that carries a password (`scheme://user:password@host`).
fn has_url_password(value: &str) -> bool {
    value.split_once("://").is_some_and(|(_, rest)| {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        authority.rsplit_once('@').is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

/// The secrets file: a YAML mapping of variable names to values, as `env:` is. Only the gate
/// (its owner, or its group in a hardened install) may read it.
pub fn read_secrets(path: &Path, hardened: bool) -> Result<BTreeMap<String, String>> {
    let invalid = |msg: String| Error::ConfigInvalid {
        path: path.to_path_buf(),
        msg,
    };
    let file = std::fs::File::open(path).map_err(|e| Error::ConfigRead {
        path: path.to_path_buf(),
        source: e,
    })?;
    let meta = file.metadata().map_err(|e| Error::ConfigRead {
        path: path.to_path_buf(),
        source: e,
    })?;
    let unsafe_file = |msg: String| Error::ConfigUnsafe {
        path: path.to_path_buf(),
        msg,
    };
    if !meta.is_file() {
        return Err(unsafe_file("the secrets file is not a regular file".into()));
    }
    if meta.mode() & 0o007 != 0 {
        return Err(unsafe_file(format!(
            "the secrets file can be read or written by others (mode {:o}); chmod 0640 it (0600 without --harden)",
            meta.mode() & 0o7777
        )));
    }
    if meta.mode() & 0o020 != 0 {
        return Err(unsafe_file(format!(
            "the secrets file is writable by its group (mode {:o}); chmod g-w it",
            meta.mode() & 0o7777
        )));
    }
    if hardened && (meta.uid() != 0 || meta.gid() != nix::unistd::getegid().as_raw()) {
        return Err(unsafe_file(format!(
            "in a hardened install the secrets file must be owned by root and the gate's group (owner {}:{})",
            meta.uid(),
            meta.gid()
        )));
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(file, 1 << 20), &mut text)
        .map_err(|e| invalid(format!("cannot be read as text: {e}")))?;
    let map: BTreeMap<String, String> =
        serde_yaml_ng::from_str(&text).map_err(|e| invalid(format!("is not a mapping of NAME: VALUE ({e})")))?;
    for k in map.keys() {
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') || k.as_bytes()[0].is_ascii_digit() {
            return Err(invalid(format!("`{k}` is not a variable name")));
        }
    }
    Ok(map)
}

/// The line (from 1) where the rule with `id` starts: the line naming its id, or 0.
fn line_of_rule(text: &str, id: &str) -> usize {
    text.lines()
        .position(|l| {
            let t = l.trim_start().trim_start_matches("- ").trim_start_matches('{').trim_start();
            t.strip_prefix("id:")
                .is_some_and(|v| v.trim().trim_matches(['"', '\'', ',']).split(',').next().map(str::trim) == Some(id))
        })
        .map_or(0, |i| i + 1)
}

/// Whether the gate reached through the tier directory of `cfg_path` runs hardened (setgid): the
/// binary its links point at, else the installation's `bin/tiershim`. For the admin commands,
/// which drop the group, to judge a config as that gate would.
pub fn hardened_gate(cfg_path: &Path) -> bool {
    let dir = cfg_path.parent().unwrap_or(Path::new("/"));
    Tool::ALL
        .iter()
        .map(|t| dir.join(t.name()))
        .chain(std::iter::once(dir.join("../../../bin/tiershim")))
        .find_map(|p| std::fs::metadata(p).ok())
        .is_some_and(|m| m.mode() & 0o2000 != 0)
}

/// `remote:` validated: each key a host (listed in `hosts:` when that is set), each path
/// absolute without `..`, no vouched-for compose project inside a workspace (the agent could
/// write it at tier 2), and no unit that takes the host down.
fn remote_hosts(
    file: &BTreeMap<String, RemoteHostFile>,
    hosts: Option<&[String]>,
) -> std::result::Result<BTreeMap<String, RemoteHost>, String> {
    let mut out = BTreeMap::new();
    for (host, h) in file {
        check_host(host).map_err(|why| format!("`remote:` key {host:?} {why}"))?;
        if let Some(list) = hosts
            && !list.iter().any(|l| l.eq_ignore_ascii_case(host))
        {
            return Err(format!(
                "`remote.{host}` names a host that `hosts:` does not list, so ssh could never reach it: add it to `hosts:` or fix the name"
            ));
        }
        let h = crate::remote_fence::remote_host(h).map_err(|e| format!("`remote.{host}.{e}"))?;
        out.insert(host.to_ascii_lowercase(), h);
    }
    Ok(out)
}

/// A `hosts:` entry is a host name or an IP address as an ssh destination names it: no user, no
/// port, no scheme, nothing a pattern could read more widely than written.
fn check_host(h: &str) -> std::result::Result<(), &'static str> {
    if h.is_empty() {
        return Err("is empty");
    }
    if h.contains('@') || h.contains('/') {
        return Err("is not a host name: list bare host names (ie01, not ops@ie01 or ssh://ie01)");
    }
    if h.starts_with('-') {
        return Err("starts with `-`");
    }
    let name = h.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_'));
    let v6 = h.contains(':') && h.bytes().all(|c| c.is_ascii_hexdigit() || matches!(c, b':' | b'.'));
    if !(name || v6) {
        return Err("is not a host name or address (a port, a pattern or a space is not allowed)");
    }
    Ok(())
}

/// Trust: the file and its directory must not be writable by anyone but the owner; in a
/// hardened install (tiershim running setgid) both must be owned by root.
fn check_trust(path: &Path, hardened: bool) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    for (what, p) in [("file", path), ("directory", dir)] {
        let meta = std::fs::metadata(p).map_err(|e| Error::ConfigRead {
            path: p.to_path_buf(),
            source: e,
        })?;
        if meta.mode() & 0o022 != 0 {
            return Err(Error::ConfigUnsafe {
                path: p.to_path_buf(),
                msg: format!(
                    "this {what} is writable by group or others (mode {:o}); make it writable by its owner only (chmod go-w)",
                    meta.mode() & 0o7777
                ),
            });
        }
        if hardened && meta.uid() != 0 {
            return Err(Error::ConfigUnsafe {
                path: p.to_path_buf(),
                msg: format!("this {what} must be owned by root in a hardened install (owner uid {})", meta.uid()),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<InstallConfig> {
        InstallConfig::parse(Path::new("/i/tier1/tiershim.yaml"), text)
    }

    #[test]
    fn relative_paths_resolve_against_the_file() {
        let c = parse("tier: 2\nreal: {gh: real/gh}\naudit_log: ../a.jsonl\nreal_dirs: [/usr/bin]\n").unwrap();
        assert_eq!(c.real[&Tool::Gh], PathBuf::from("/i/tier1/real/gh"));
        let c2 = parse("tier: 2\ncooldown_state: ../state/cooldown.json\ncooldown_lock_wait: 0.5\n").unwrap();
        assert_eq!(c2.cooldown_state, Some(PathBuf::from("/i/tier1/../state/cooldown.json")));
        assert_eq!(c2.cooldown_lock_wait, std::time::Duration::from_millis(500));
        assert_eq!(c.audit_log, Some(PathBuf::from("/i/tier1/../a.jsonl")));
        assert_eq!(c.tier, 2);
    }

    #[test]
    fn a_pinned_service_comes_with_its_pinned_file() {
        let c = parse("tier: 1\nenv: {PGSERVICE: monitor, PGSERVICEFILE: /etc/tiershim/pg_service.conf}\n").unwrap();
        assert_eq!(c.env["PGSERVICEFILE"], "/etc/tiershim/pg_service.conf");
        assert!(parse("tier: 1\nenv: {PGUSER: monitor}\n").is_ok());
    }

    #[test]
    fn workspaces_default_to_the_repositories_directory() {
        assert_eq!(
            parse("tier: 2\nskills: {repos: /repos}\n").unwrap().workspaces,
            [PathBuf::from("/repos")]
        );
        assert_eq!(parse("tier: 2\n").unwrap().workspaces, Vec::<PathBuf>::new());
        let c = parse("tier: 2\nskills: {repos: /repos}\nworkspaces: [/srv/work, trees]\n").unwrap();
        assert_eq!(c.workspaces, [PathBuf::from("/srv/work"), PathBuf::from("/i/tier1/trees")]);
        assert!(
            parse("tier: 2\nworkspaces: []\nskills: {repos: /repos}\n")
                .unwrap()
                .workspaces
                .is_empty()
        );
    }

    #[test]
    fn operator_endpoint_rules_are_checked_when_the_file_loads_and_name_their_line() {
        let text = "tier: 2\nendpoints:\n  - id: http.billing.refund\n    methods: [POST]\n    path: \"**/refunds\"\n    tier: never\n  - id: http.billing.bad\n    path: \"refunds\"\n    tier: 3\n";
        let e = parse(text).unwrap_err().to_string();
        assert!(
            e.contains("line 7") && e.contains("http.billing.bad") && e.contains("must start with"),
            "{e}"
        );
        let c = parse("tier: 2\nendpoints:\n  - {id: http.billing.refund, path: \"**/refunds\", tier: never}\n").unwrap();
        assert_eq!(c.endpoints.len(), 1);
        assert_eq!(c.endpoints[0].1, 3);
        let e = parse("tier: 2\nendpoints:\n  - {id: billing, path: /a, tier: 3}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 3") && e.contains("http."), "{e}");
    }

    #[test]
    fn credentials_are_refused_in_env_and_belong_in_the_secrets_file() {
        for text in [
            "tier: 1\nenv: {GH_TOKEN: x}\n",
            "tier: 1\nenv: {PGPASSWORD: x}\n",
            "tier: 1\nenv: {MYSQL_PWD: x}\n",
            "tier: 1\nenv: {GITEA_TOKEN: x}\n",
            "tier: 1\nenv: {HTTPS_PROXY: 'http://ops:s3cret@proxy:3128'}\n",
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains("holds a credential") && e.contains("--secret"), "{text}: {e}");
        }
        assert!(parse("tier: 1\nenv: {HTTPS_PROXY: 'http://proxy:3128', GH_HOST: ghe.example}\n").is_ok());
        let c = parse("tier: 1\nsecrets: ../secrets.yaml\ntool_home: ../home\n").unwrap();
        assert_eq!(c.secrets, Some(PathBuf::from("/i/tier1/../secrets.yaml")));
        assert_eq!(c.tool_home, Some(PathBuf::from("/i/tier1/../home")));
    }

    #[test]
    fn a_secrets_file_others_can_read_is_not_used() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("secrets.yaml");
        std::fs::write(&f, "GH_TOKEN: 'ghp_x'\nPGPASSWORD: pw\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(
            read_secrets(&f, false)
                .unwrap_err()
                .to_string()
                .contains("can be read or written by others")
        );
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        let got = read_secrets(&f, false).unwrap();
        assert_eq!(got["GH_TOKEN"], "ghp_x");
        std::fs::write(&f, "not a name: x\n").unwrap();
        assert!(read_secrets(&f, false).unwrap_err().to_string().contains("is not a variable name"));
    }

    #[test]
    fn hosts_are_bare_names_or_addresses() {
        let c = parse("tier: 1\nhosts: [ie01, ie02.internal, 10.0.0.5, \"fe80::1\"]\n").unwrap();
        assert_eq!(c.hosts.unwrap(), ["ie01", "ie02.internal", "10.0.0.5", "fe80::1"]);
        assert_eq!(parse("tier: 1\n").unwrap().hosts, None);
        assert_eq!(parse("tier: 1\nhosts: []\n").unwrap().hosts, Some(vec![]));
    }

    #[test]
    fn remote_hosts_name_their_workspaces_vouched_projects_and_restartable_units() {
        let c = parse(
            "tier: 2\nhosts: [ie01]\nremote:\n  IE01:\n    workspaces: [/srv/work/]\n    compose: [/srv/jellyfin]\n    units: [jellyfin, nginx.service]\n",
        )
        .unwrap();
        assert_eq!(
            c.remote["ie01"],
            RemoteHost {
                workspaces: vec!["/srv/work".into()],
                compose: vec!["/srv/jellyfin".into()],
                units: Some(vec!["jellyfin.service".into(), "nginx.service".into()]),
            }
        );
        assert!(parse("tier: 2\n").unwrap().remote.is_empty());
        for (text, want) in [
            (
                "tier: 2\nhosts: [ie02]\nremote: {ie01: {}}\n",
                "`remote.ie01` names a host that `hosts:` does not list",
            ),
            (
                "tier: 2\nremote: {ie01: {workspaces: [work]}}\n",
                "`remote.ie01.workspaces` entry \"work\" is not an absolute path",
            ),
            ("tier: 2\nremote: {ie01: {workspaces: [/]}}\n", "is `/`"),
            (
                "tier: 2\nremote: {ie01: {workspaces: [/srv], compose: [/srv/app]}}\n",
                "`remote.ie01.compose` entry /srv/app is inside the workspace /srv",
            ),
            ("tier: 2\nremote: {ie01: {units: [reboot.target]}}\n", "never does"),
            ("tier: 2\nremote: {ie01: {units: [\"nginx*\"]}}\n", "is a pattern"),
            ("tier: 2\nremote: {ops@ie01: {}}\n", "is not a host name"),
            ("tier: 2\nremote: {ie01: {hosts: [x]}}\n", "unknown field `hosts`"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn bad_configs_are_refused_with_the_reason() {
        for (text, want) in [
            ("tier: 4\n", "`tier: 4` is not 1, 2 or 3"),
            ("tier: 0\n", "`tier: 0` is not 1, 2 or 3"),
            ("tier: '2'\n", "must be the number"),
            ("dry_run: true\n", "`tier:` is required"),
            ("tier: 1\ntypo: 1\n", "unknown field `typo`"),
            (
                "tier: 1\nreal: {scp: /usr/bin/scp}\n",
                "scp is not a gated tool (gh, tea, docker, psql, mysql, curl, git, ssh, kubectl, helm, ansible-playbook, ansible, ansible-inventory, ansible-galaxy)",
            ),
            ("tier: 1\nhosts: [ops@ie01]\n", "`hosts:` entry \"ops@ie01\" is not a host name"),
            ("tier: 1\nhosts: [\"ie01:22\"]\n", "is not a host name or address"),
            ("tier: 1\nhosts: [\"*.internal\"]\n", "is not a host name or address"),
            ("tier: 1\nhosts: [\"\"]\n", "is empty"),
            ("tier: 1\nhosts: [-oProxyCommand=x]\n", "starts with `-`"),
            ("tier: 1\nhosts: ie01\n", "tiershim.yaml"),
            ("tier: 1\ncooldown_lock_wait: 2\n", "needs `cooldown_state`"),
            (
                "tier: 1\ncooldown_state: s.json\ncooldown_lock_wait: 0\n",
                "`cooldown_lock_wait: 0`",
            ),
            ("tier: 1\ncooldown_state: s.json\ncooldown_lock_wait: x\n", "tiershim.yaml"),
            ("tier: [1\n", "tiershim.yaml"),
            ("tier: 2\nworkspaces: [/]\n", "`workspaces:` entry / is `/` or holds `..`"),
            ("tier: 2\nworkspaces: [/repos/../etc]\n", "holds `..`"),
            ("tier: 2\ntool_home: /\n", "`tool_home: /` is the root directory"),
            (
                "tier: 1\nenv: {PGSERVICE: monitor}\n",
                "`env.PGSERVICE` is pinned without `env.PGSERVICEFILE`",
            ),
            (
                "tier: 1\nenv: {PGSERVICE: monitor, PGSERVICEFILE: pg_service.conf}\n",
                "`env.PGSERVICEFILE: pg_service.conf` is not an absolute path",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
