//! The session tool inventory (SPEC-0023 REQ-3): per domain, the MCP servers the Claude Code
//! configs name, the CLIs whose real binaries are present, and which of the domain's
//! operations the gate allows at the session's tier. Built once at session start by
//! `tiershim inventory --write`; the gate only reads it, to say when a call falls back from MCP
//! to a CLI (REQ-5).
//!
//! The JSON form is stable (`version: 1`); docs/claude-code.md documents it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::decision::{self, Request, Verdict};
use crate::error::{Error, Result};
use crate::exec;
use crate::grammar;
use crate::install::InstallConfig;
use crate::policy::Policy;
use crate::tool::Tool;

/// One domain of operations and what serves it.
pub struct DomainSpec {
    pub id: &'static str,
    /// The name in `WARNING: MCP tools not found for <name>`.
    pub name: &'static str,
    /// An MCP server belongs to the domain when its name contains one of these (any case).
    pub mcp_keywords: &'static [&'static str],
    pub clis: &'static [Tool],
    /// Representative operations, judged by the gate at the session's tier.
    pub operations: &'static [(&'static str, Tool, &'static [&'static str])],
}

pub const DOMAINS: &[DomainSpec] = &[
    DomainSpec {
        id: "git-github",
        name: "GitHub",
        mcp_keywords: &["github"],
        clis: &[Tool::Gh, Tool::Git],
        operations: &[
            ("list pull requests", Tool::Gh, &["pr", "list"]),
            ("create a pull request", Tool::Gh, &["pr", "create", "--title", "t", "--body", "b"]),
            ("merge a pull request", Tool::Gh, &["pr", "merge", "1"]),
            ("push a feature branch", Tool::Git, &["push", "origin", "claude-ops/fix/x"]),
        ],
    },
    DomainSpec {
        id: "git-gitea",
        name: "Gitea",
        mcp_keywords: &["gitea", "forgejo"],
        clis: &[Tool::Tea, Tool::Git],
        operations: &[
            ("list pull requests", Tool::Tea, &["pulls", "list"]),
            ("create a pull request", Tool::Tea, &["pulls", "create", "--title", "t"]),
            ("merge a pull request", Tool::Tea, &["pulls", "merge", "1"]),
        ],
    },
    DomainSpec {
        id: "container",
        name: "Docker",
        mcp_keywords: &["docker", "container", "podman"],
        clis: &[Tool::Docker],
        operations: &[
            ("list containers", Tool::Docker, &["ps"]),
            ("read logs", Tool::Docker, &["logs", "--tail", "50", "app"]),
            ("restart a container", Tool::Docker, &["restart", "app"]),
            ("run a container", Tool::Docker, &["run", "--rm", "alpine", "true"]),
            ("prune", Tool::Docker, &["system", "prune", "-f"]),
        ],
    },
    DomainSpec {
        id: "database",
        name: "databases",
        mcp_keywords: &["postgres", "mysql", "mariadb", "sqlite", "database", "sql"],
        clis: &[Tool::Psql, Tool::Mysql],
        operations: &[
            ("read-only query", Tool::Psql, &["-c", "SELECT 1"]),
            ("write", Tool::Psql, &["-c", "UPDATE t SET x = 1"]),
            ("read-only query", Tool::Mysql, &["-e", "SELECT 1"]),
            ("write", Tool::Mysql, &["-e", "UPDATE t SET x = 1"]),
        ],
    },
    DomainSpec {
        id: "http",
        name: "HTTP",
        mcp_keywords: &["fetch", "http"],
        clis: &[Tool::Curl],
        operations: &[
            ("GET", Tool::Curl, &["-s", "https://service.example/health"]),
            ("POST", Tool::Curl, &["-s", "-d", "x=1", "https://service.example/api"]),
            ("DELETE", Tool::Curl, &["-s", "-X", "DELETE", "https://service.example/api/1"]),
        ],
    },
    DomainSpec {
        id: "issue-tracking",
        name: "issue tracking",
        mcp_keywords: &["github", "gitea", "linear", "jira"],
        clis: &[Tool::Gh, Tool::Tea],
        operations: &[
            ("list issues", Tool::Gh, &["issue", "list"]),
            ("create an issue", Tool::Gh, &["issue", "create", "--title", "t", "--body", "b"]),
            ("comment on an issue", Tool::Gh, &["issue", "comment", "1", "--body", "b"]),
        ],
    },
    DomainSpec {
        id: "kubernetes",
        name: "Kubernetes",
        mcp_keywords: &["kubernetes", "k8s", "kubectl", "helm"],
        clis: &[Tool::Kubectl, Tool::Helm],
        operations: &[
            ("list pods", Tool::Kubectl, &["get", "pods"]),
            ("read a secret", Tool::Kubectl, &["get", "secret", "app", "-o", "yaml"]),
            ("restart a deployment", Tool::Kubectl, &["rollout", "restart", "deployment/app"]),
            ("list releases", Tool::Helm, &["list"]),
            ("upgrade a release", Tool::Helm, &["upgrade", "app", "repo/app"]),
            ("uninstall a release", Tool::Helm, &["uninstall", "app"]),
        ],
    },
    DomainSpec {
        id: "automation",
        name: "Ansible",
        mcp_keywords: &["ansible"],
        clis: &[Tool::AnsiblePlaybook, Tool::Ansible, Tool::AnsibleInventory, Tool::AnsibleGalaxy],
        operations: &[
            ("check a playbook's syntax", Tool::AnsiblePlaybook, &["--syntax-check", "site.yml"]),
            ("run a playbook", Tool::AnsiblePlaybook, &["--limit", "web01", "site.yml"]),
            ("install a role", Tool::AnsibleGalaxy, &["install", "some.role"]),
        ],
    },
    DomainSpec {
        id: "browser",
        name: "browser",
        mcp_keywords: &["chrome", "browser", "playwright", "puppeteer"],
        clis: &[],
        operations: &[],
    },
];

/// The domain a gated tool's calls belong to, for the fallback line; `None` when no MCP server
/// does what the tool does (git works on the local repository; an ssh call belongs to the
/// domain of the remote command that decided it, which the gate passes instead).
pub fn domain_of(tool: Tool) -> Option<&'static DomainSpec> {
    let id = tool.spec().domain?;
    DOMAINS.iter().find(|d| d.id == id)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServer {
    pub name: String,
    /// `mcp__<server>__*`, the names Claude Code gives the server's tools.
    pub tools: String,
    /// The config file that names it.
    pub config: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cli {
    pub tool: String,
    /// The real binary, when present.
    pub path: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Operation {
    pub name: String,
    pub call: String,
    /// `allow`, `dry-run`, `refuse`, or `allow-scoped` (allowed when the changed files pass
    /// the skills' path rules).
    pub verdict: String,
    pub required_tier: String,
    pub rule: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Domain {
    pub id: String,
    pub name: String,
    pub mcp: Vec<McpServer>,
    pub cli: Vec<Cli>,
    pub operations: Vec<Operation>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inventory {
    pub version: u32,
    pub generated: String,
    pub config: String,
    pub ceiling: u8,
    pub tier: u8,
    pub dry_run: bool,
    pub domains: Vec<Domain>,
    /// MCP config files that could not be read, with why.
    pub problems: Vec<String>,
}

/// The `mcpServers` of one Claude Code MCP config (`.mcp.json`, `~/.claude.json`).
#[derive(Debug, Deserialize)]
struct McpFile {
    #[serde(default, rename = "mcpServers")]
    mcp_servers: BTreeMap<String, serde_json::Value>,
}

fn servers(configs: &[PathBuf], problems: &mut Vec<String>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for path in configs {
        let parsed = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<McpFile>(&t).map_err(|e| e.to_string()));
        match parsed {
            Ok(f) => out.extend(f.mcp_servers.into_keys().map(|k| (k, path.display().to_string()))),
            Err(e) => problems.push(format!("{}: {e}", path.display())),
        }
    }
    out
}

/// Build the inventory for an install at the tier and dry-run the environment gives.
pub fn build(cfg: &InstallConfig, env_tier: Option<&str>, env_dry_run: Option<&str>, now: &str) -> Result<Inventory> {
    let (tier, _) = crate::tier::effective_tier(cfg.tier, env_tier);
    let dry_run = crate::tier::dry_run_on(cfg.dry_run, env_dry_run);
    let mut problems = Vec::new();
    let all_servers = servers(&cfg.mcp_configs, &mut problems);
    let mut policies: BTreeMap<Tool, Policy> = BTreeMap::new();
    let mut domains = Vec::new();
    for spec in DOMAINS {
        let mcp = all_servers
            .iter()
            .filter(|(name, _)| {
                let lower = name.to_ascii_lowercase();
                spec.mcp_keywords.iter().any(|k| lower.contains(k))
            })
            .map(|(name, config)| McpServer {
                name: name.clone(),
                tools: format!("mcp__{name}__*"),
                config: config.clone(),
            })
            .collect();
        let cli = spec
            .clis
            .iter()
            .map(|t| Cli {
                tool: t.name().to_string(),
                path: exec::resolve_real(cfg, *t).ok().map(|p| p.display().to_string()),
            })
            .collect();
        let mut operations = Vec::new();
        for (name, tool, argv) in spec.operations {
            if !policies.contains_key(tool) {
                policies.insert(*tool, crate::judge::policy_in(*tool, cfg.policy.as_deref())?);
            }
            let Some(policy) = policies.get(tool) else {
                return Err(Error::Internal(format!("no policy for {tool}")));
            };
            operations.push(judge(cfg, policy, *tool, name, argv, tier, dry_run)?);
        }
        domains.push(Domain {
            id: spec.id.to_string(),
            name: spec.name.to_string(),
            mcp,
            cli,
            operations,
        });
    }
    Ok(Inventory {
        version: 1,
        generated: now.to_string(),
        config: cfg.path.display().to_string(),
        ceiling: cfg.tier,
        tier,
        dry_run,
        domains,
        problems,
    })
}

/// A representative call's facts: the install's skills (a Tier Requirement applies as it would
/// to the call), and, as for a policy example, probes that add nothing and configuration that is
/// the operator's. A scope check stays unanswered: the operation is allowed when the files it
/// changes pass the path rules (`allow-scoped`).
struct Representative<'a> {
    cfg: &'a InstallConfig,
}

impl crate::judge::Source for Representative<'_> {
    fn facts(
        &mut self,
        inv: &grammar::Invocation,
        _policy: &Policy,
        _req: &Request,
        first: &decision::Decision,
    ) -> Result<decision::Facts> {
        let only_skills = decision::Needs {
            skills: first.needs.skills.clone(),
            ..decision::Needs::default()
        };
        let mut facts = if only_skills.skills.is_empty() {
            decision::Facts::default()
        } else {
            crate::judge::live::gather(self.cfg, Path::new("/"), inv, &only_skills, &[])?
        };
        // Probes and the repository's configuration are the repository's business: as for the
        // path rules, the representative call assumes they add nothing.
        for i in &first.needs.probes {
            facts.marks.insert(*i, Ok(Default::default()));
        }
        if first.needs.config {
            facts.config = Some(Ok(Vec::new()));
        }
        Ok(facts)
    }
}

/// The gate's answer for one representative call, with skill tiers applied and path rules
/// reported as a condition rather than run against a repository.
fn judge(cfg: &InstallConfig, policy: &Policy, tool: Tool, name: &str, argv: &[&str], tier: u8, dry_run: bool) -> Result<Operation> {
    let args = grammar::argv(argv);
    let inv = tool.spec().parse(&args);
    let mut req = Request {
        ceiling: cfg.tier,
        env_tier: Some(tier.to_string()),
        dry_run_pinned: dry_run,
        ..Request::default()
    };
    let d = crate::judge::judge(&inv, policy, &mut req, &mut Representative { cfg })?;
    let verdict = match d.verdict {
        Verdict::Refuse if !d.needs.scope.is_empty() => "allow-scoped",
        v => v.as_str(),
    };
    Ok(Operation {
        name: name.to_string(),
        call: format!("{tool} {}", argv.join(" ")),
        verdict: verdict.to_string(),
        required_tier: d.required_tier.to_string(),
        rule: d.rule,
    })
}

/// What the gate says about MCP for one allowed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fallback {
    /// No inventory file: say nothing.
    Silent,
    /// The domain has an MCP server: only the `Using:` line.
    HasMcp,
    /// The domain has no MCP server: warn that the call falls back to the CLI.
    NoMcp(&'static str),
    /// The file exists but cannot be read: say so, and run the call.
    Unreadable(String),
}

impl Fallback {
    /// What the audit record says of it (`mcp`); None without an inventory.
    pub fn audit(&self) -> Option<String> {
        match self {
            Fallback::Silent => None,
            Fallback::HasMcp => Some("mcp-available".into()),
            Fallback::NoMcp(_) => Some("cli-fallback".into()),
            Fallback::Unreadable(e) => Some(format!("inventory unreadable: {}", crate::sanitize::escape(e))),
        }
    }
}

/// Read the session inventory (when the install names one and it exists) for `tool`'s domain.
pub fn fallback(path: Option<&Path>, tool: Tool) -> Fallback {
    let (Some(path), Some(spec)) = (path, domain_of(tool)) else {
        return Fallback::Silent;
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Fallback::Silent,
        Err(e) => return Fallback::Unreadable(format!("{}: {e}", path.display())),
    };
    let inv: Inventory = match serde_json::from_str(&text) {
        Ok(i) => i,
        Err(e) => return Fallback::Unreadable(format!("{}: {e}", path.display())),
    };
    match inv.domains.iter().find(|d| d.id == spec.id) {
        Some(d) if !d.mcp.is_empty() => Fallback::HasMcp,
        _ => Fallback::NoMcp(spec.name),
    }
}

/// Write the inventory with a temporary file and a rename, so a reader never sees half of it.
pub fn write(path: &Path, inv: &Inventory) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(inv).map_err(std::io::Error::other)?;
    text.push('\n');
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_gated_tool_but_git_and_ssh_has_a_domain_and_every_operation_parses() {
        for t in Tool::ALL {
            assert_eq!(domain_of(t).is_some(), !matches!(t, Tool::Git | Tool::Ssh), "{t}");
            // A tool's domain is one the inventory has, and lists it among its CLIs.
            if let Some(id) = t.spec().domain {
                let d = DOMAINS.iter().find(|d| d.id == id);
                assert!(d.is_some_and(|d| d.clis.contains(&t)), "{t}: domain {id}");
            }
        }
        for d in DOMAINS {
            for (name, tool, argv) in d.operations {
                let inv = tool.spec().parse(&grammar::argv(argv));
                assert_eq!(inv.problem, None, "{} {name}", d.id);
            }
        }
    }
}
