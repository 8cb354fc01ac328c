//! One table per gated tool: everything the crate knows about a tool besides its grammar's
//! insides, reached through the one exhaustive match on [`Tool`] ([`Tool::spec`]). Adding a
//! tool is a compile error here until its entry exists; `docs/adding-a-tool.md` is the
//! checklist for the rest (policy, skill, corpus, install, doctor, the remote side).
//!
//! Owns: the tool's capability (the "No suitable tool found" line), the session inventory's
//! domain, its grammar's entry points (argv with what the gate read → `Invocation`; the scripts
//! it reads; argv for logs), the hardening arguments put in front of argv at exec, the shipped
//! policy (whose `env:` is its environment allow-list), whether endpoint rules judge it, the
//! names it runs under in an ssh remote command, and which configuration of the real tool the
//! gate reads before it runs (git's, gh's, docker's).
//!
//! Must not: decide, read anything, or hold behaviour of its own. A field is data or a pointer
//! to the module that does the work.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::grammar::{self, Contents, Inputs, Invocation, Sources};
use crate::tool::Tool;

/// What the crate knows about one gated tool.
pub struct ToolSpec {
    pub tool: Tool,
    /// The capability named in the "No suitable tool found for <capability>" line.
    pub capability: &'static str,
    /// The session inventory's domain (`crate::inventory::DOMAINS`) its calls belong to, for
    /// the MCP fallback line; None when no MCP server does what it does (git works on the local
    /// repository; an ssh call belongs to the domain of what it runs).
    pub domain: Option<&'static str>,
    /// argv (without the program name) → what the call is, with the contents of the files the
    /// call reads into its request and the scripts it runs, as the gate read them (empty: not
    /// read, as for a policy example).
    pub parse: fn(&[String], &Contents, &Inputs) -> Invocation,
    /// The scripts a call reads (`psql -f`, stdin), for the gate to read and seal first.
    pub sources: fn(&[String]) -> Sources,
    /// argv for logs after the shared redaction: the tool's own secret-bearing forms
    /// (mysql's attached `-pSECRET`).
    pub redact: fn(Vec<String>) -> Vec<String>,
    /// A `gh api` call with placeholders filled as the tool fills them (`{owner}`, `{repo}`,
    /// `{branch}`), for each fill the gate works out.
    pub fill: Option<Fill>,
    /// Hardening arguments put in front of the caller's argv at exec (curl's `-q`).
    pub prepend: &'static [&'static str],
    /// The shipped policy, `policy/<tool>.yaml` (examples included). Its `env:` is the tool's
    /// environment allow-list.
    pub policy: &'static str,
    /// The same policy without examples, compiled at build time into static tables (what a
    /// gated call reads: `crate::tables`).
    pub compiled: &'static crate::tables::Policy,
    /// Its calls send HTTP requests that the endpoint rules (`policy/endpoints.yaml`) judge.
    pub endpoints: bool,
    /// The program names it runs under in an ssh remote command, each with the words put in
    /// front of its arguments (`docker-compose x` is `docker compose x`); they must match
    /// `grammar::remote::TOOLS` (a test checks).
    pub remote: &'static [(&'static str, &'static [&'static str])],
    /// Its calls carry an ssh remote command, whose parts other tools' policies judge.
    pub remote_commands: bool,
    /// The real tool reads git's configuration, which the gate reads first with its own git
    /// and judges (`git.agent-config`).
    pub git_config: bool,
    /// The per-user configuration the real tool reads that can run a program, judged for
    /// what the agent could have written (`<tool>.agent-config`).
    pub user_config: Option<UserConfig>,
    /// The words its policy may use besides the tool's own commands: verbs its grammar makes
    /// and every mark it sets, with their meanings (`grammar::vocab`).
    pub vocabulary: &'static grammar::vocab::Vocabulary,
    /// What to do instead when a restart or redeploy names nothing a budget can count
    /// (`<tool>.cooldown-target`).
    pub name_targets: &'static str,
}

/// A grammar's reading of a call with its placeholders filled as the tool fills them.
pub type Fill = fn(&[String], &Contents, Option<&grammar::gh::Fill>) -> Invocation;

/// Where a tool keeps its per-user configuration, and what reads it.
pub struct UserConfig {
    /// The variable an operator pins to name the directory (`GH_CONFIG_DIR`).
    pub pinned: &'static str,
    /// The directory under the tool home otherwise (`.config/gh`).
    pub default: &'static str,
    /// What of the directory the agent could have written that runs a program or redirects the
    /// call, one `file: key` line each (`crate::tool_config`).
    pub read: fn(&Path, bool) -> Vec<String>,
}

impl UserConfig {
    /// The lines of `read` for the directory the install's pins or tool home give.
    pub fn agent_written(&self, home: &Path, pins: &BTreeMap<String, String>, hardened: bool) -> Vec<String> {
        let dir = pins.get(self.pinned).map(PathBuf::from).unwrap_or_else(|| home.join(self.default));
        (self.read)(&dir, hardened)
    }
}

/// argv unchanged: the tool has no secret-bearing form of its own.
fn as_is(args: Vec<String>) -> Vec<String> {
    args
}

/// The tool reads no script.
fn no_scripts(_: &[String]) -> Sources {
    Sources::default()
}

static GH: ToolSpec = ToolSpec {
    tool: Tool::Gh,
    capability: "GitHub",
    domain: Some("git-github"),
    parse: |args, contents, _| grammar::gh::parse_with(args, contents),
    sources: no_scripts,
    redact: as_is,
    fill: Some(grammar::gh::parse_filled),
    prepend: grammar::gh::PREPEND,
    policy: include_str!("../policy/gh.yaml"),
    compiled: &crate::tables::GH,
    endpoints: true,
    remote: &[],
    remote_commands: false,
    git_config: false,
    user_config: Some(UserConfig {
        pinned: "GH_CONFIG_DIR",
        default: ".config/gh",
        read: crate::tool_config::gh,
    }),
    vocabulary: &grammar::vocab::GH,
    name_targets: "name each container or service (docker restart api), or escalate to tier 3",
};

static TEA: ToolSpec = ToolSpec {
    tool: Tool::Tea,
    capability: "Gitea",
    domain: Some("git-gitea"),
    parse: |args, _, _| grammar::tea::parse(args),
    sources: no_scripts,
    redact: as_is,
    fill: None,
    prepend: grammar::tea::PREPEND,
    policy: include_str!("../policy/tea.yaml"),
    compiled: &crate::tables::TEA,
    endpoints: false,
    remote: &[],
    remote_commands: false,
    git_config: false,
    user_config: None,
    vocabulary: &grammar::vocab::TEA,
    name_targets: "name each container or service (docker restart api), or escalate to tier 3",
};

static DOCKER: ToolSpec = ToolSpec {
    tool: Tool::Docker,
    capability: "containers",
    domain: Some("container"),
    parse: |args, _, _| grammar::docker::parse(args),
    sources: no_scripts,
    redact: as_is,
    fill: None,
    prepend: grammar::docker::PREPEND,
    policy: include_str!("../policy/docker.yaml"),
    compiled: &crate::tables::DOCKER,
    endpoints: false,
    remote: &[("docker", &[]), ("docker-compose", &["compose"])],
    remote_commands: false,
    git_config: false,
    user_config: Some(UserConfig {
        pinned: "DOCKER_CONFIG",
        default: ".docker",
        read: crate::tool_config::docker,
    }),
    vocabulary: &grammar::vocab::DOCKER,
    name_targets: "name each container or service (docker restart api), or escalate to tier 3",
};

static PSQL: ToolSpec = ToolSpec {
    tool: Tool::Psql,
    capability: "databases",
    domain: Some("database"),
    parse: |args, _, inputs| grammar::psql::parse_with(args, inputs),
    sources: grammar::psql::sources,
    redact: as_is,
    fill: None,
    prepend: grammar::psql::PREPEND,
    policy: include_str!("../policy/psql.yaml"),
    compiled: &crate::tables::PSQL,
    endpoints: false,
    remote: &[("psql", &[])],
    remote_commands: false,
    git_config: false,
    user_config: None,
    vocabulary: &grammar::vocab::PSQL,
    name_targets: "name each container or service (docker restart api), or escalate to tier 3",
};

static MYSQL: ToolSpec = ToolSpec {
    tool: Tool::Mysql,
    capability: "databases",
    domain: Some("database"),
    parse: |args, _, inputs| grammar::mysql::parse_with(args, inputs),
    sources: grammar::mysql::sources,
    redact: |args| grammar::mysql::redact(&args),
    fill: None,
    prepend: grammar::mysql::PREPEND,
    policy: include_str!("../policy/mysql.yaml"),
    compiled: &crate::tables::MYSQL,
    endpoints: false,
    remote: &[("mysql", &[]), ("mariadb", &[])],
    remote_commands: false,
    git_config: false,
    user_config: None,
    vocabulary: &grammar::vocab::MYSQL,
    name_targets: "name each container or service (docker restart api), or escalate to tier 3",
};

static CURL: ToolSpec = ToolSpec {
    tool: Tool::Curl,
    capability: "HTTP",
    domain: Some("http"),
    parse: |args, contents, _| grammar::curl::parse_with(args, contents),
    sources: no_scripts,
    redact: as_is,
    fill: None,
    prepend: grammar::curl::PREPEND,
    policy: include_str!("../policy/curl.yaml"),
    compiled: &crate::tables::CURL,
    endpoints: true,
    remote: &[("curl", &[])],
    remote_commands: false,
    git_config: false,
    user_config: None,
    vocabulary: &grammar::vocab::CURL,
    name_targets: "name each container or service (docker restart api), or escalate to tier 3",
};

static GIT: ToolSpec = ToolSpec {
    tool: Tool::Git,
    capability: "git repositories",
    domain: None,
    parse: |args, _, inputs| grammar::git::parse_with(args, inputs),
    sources: grammar::git::sources,
    redact: as_is,
    fill: None,
    prepend: grammar::git::PREPEND,
    policy: include_str!("../policy/git.yaml"),
    compiled: &crate::tables::GIT,
    endpoints: false,
    remote: &[("git", &[])],
    remote_commands: false,
    git_config: true,
    user_config: None,
    vocabulary: &grammar::vocab::GIT,
    name_targets: "name each container or service (docker restart api), or escalate to tier 3",
};

static SSH: ToolSpec = ToolSpec {
    tool: Tool::Ssh,
    capability: "remote hosts",
    domain: None,
    parse: |args, _, _| grammar::ssh::parse(args),
    sources: no_scripts,
    redact: as_is,
    fill: None,
    prepend: grammar::ssh::PREPEND,
    policy: include_str!("../policy/ssh.yaml"),
    compiled: &crate::tables::SSH,
    endpoints: false,
    remote: &[],
    remote_commands: true,
    git_config: false,
    user_config: None,
    vocabulary: &grammar::vocab::SSH,
    name_targets: "name each container or service (docker restart api), or escalate to tier 3",
};

static KUBECTL: ToolSpec = ToolSpec {
    tool: Tool::Kubectl,
    capability: "Kubernetes",
    domain: Some("kubernetes"),
    parse: |args, _, _| grammar::kubectl::parse(args),
    sources: no_scripts,
    redact: as_is,
    fill: None,
    prepend: grammar::kubectl::PREPEND,
    policy: include_str!("../policy/kubectl.yaml"),
    compiled: &crate::tables::KUBECTL,
    endpoints: false,
    remote: &[("kubectl", &[])],
    remote_commands: false,
    git_config: false,
    user_config: Some(UserConfig {
        pinned: "KUBECONFIG",
        default: ".kube/config",
        read: crate::tool_config::kubeconfig,
    }),
    vocabulary: &grammar::vocab::KUBECTL,
    name_targets: "name each deployment, statefulset or daemonset (kubectl rollout restart deploy/api), or escalate to tier 3",
};

static HELM: ToolSpec = ToolSpec {
    tool: Tool::Helm,
    capability: "Kubernetes releases",
    domain: Some("kubernetes"),
    parse: |args, _, _| grammar::helm::parse(args),
    sources: no_scripts,
    redact: as_is,
    fill: None,
    prepend: grammar::helm::PREPEND,
    policy: include_str!("../policy/helm.yaml"),
    compiled: &crate::tables::HELM,
    endpoints: false,
    remote: &[("helm", &[])],
    remote_commands: false,
    git_config: false,
    user_config: Some(UserConfig {
        pinned: "HELM_PLUGINS",
        default: ".local/share/helm/plugins",
        read: crate::tool_config::helm_plugins,
    }),
    vocabulary: &grammar::vocab::HELM,
    name_targets: "name the release (helm install <release> <chart>), or escalate to tier 3",
};

static ANSIBLE_PLAYBOOK: ToolSpec = ToolSpec {
    tool: Tool::AnsiblePlaybook,
    capability: "Ansible playbooks",
    domain: Some("automation"),
    parse: |args, _, _| grammar::ansible::parse_playbook(args),
    sources: no_scripts,
    redact: as_is,
    fill: None,
    prepend: grammar::ansible::PREPEND,
    policy: include_str!("../policy/ansible-playbook.yaml"),
    compiled: &crate::tables::ANSIBLE_PLAYBOOK,
    endpoints: false,
    remote: &[],
    remote_commands: false,
    git_config: false,
    user_config: None,
    vocabulary: &grammar::vocab::ANSIBLE_PLAYBOOK,
    name_targets: "name the hosts with --limit (ansible-playbook --limit web01 site.yml), or escalate to tier 3",
};

static ANSIBLE: ToolSpec = ToolSpec {
    tool: Tool::Ansible,
    capability: "Ansible",
    domain: Some("automation"),
    parse: |args, _, _| grammar::ansible::parse_adhoc(args),
    sources: no_scripts,
    redact: as_is,
    fill: None,
    prepend: grammar::ansible::PREPEND,
    policy: include_str!("../policy/ansible.yaml"),
    compiled: &crate::tables::ANSIBLE,
    endpoints: false,
    remote: &[],
    remote_commands: false,
    git_config: false,
    user_config: None,
    vocabulary: &grammar::vocab::ANSIBLE,
    name_targets: "name the hosts, or escalate to tier 3",
};

static ANSIBLE_INVENTORY: ToolSpec = ToolSpec {
    tool: Tool::AnsibleInventory,
    capability: "Ansible inventories",
    domain: Some("automation"),
    parse: |args, _, _| grammar::ansible::parse_inventory(args),
    sources: no_scripts,
    redact: as_is,
    fill: None,
    prepend: grammar::ansible::PREPEND,
    policy: include_str!("../policy/ansible-inventory.yaml"),
    compiled: &crate::tables::ANSIBLE_INVENTORY,
    endpoints: false,
    remote: &[],
    remote_commands: false,
    git_config: false,
    user_config: None,
    vocabulary: &grammar::vocab::ANSIBLE_INVENTORY,
    name_targets: "name the hosts, or escalate to tier 3",
};

static ANSIBLE_GALAXY: ToolSpec = ToolSpec {
    tool: Tool::AnsibleGalaxy,
    capability: "Ansible roles and collections",
    domain: Some("automation"),
    parse: |args, _, _| grammar::ansible::parse_galaxy(args),
    sources: no_scripts,
    redact: as_is,
    fill: None,
    prepend: grammar::ansible::PREPEND,
    policy: include_str!("../policy/ansible-galaxy.yaml"),
    compiled: &crate::tables::ANSIBLE_GALAXY,
    endpoints: false,
    remote: &[],
    remote_commands: false,
    git_config: false,
    user_config: None,
    vocabulary: &grammar::vocab::ANSIBLE_GALAXY,
    name_targets: "name the hosts, or escalate to tier 3",
};

impl Tool {
    /// This tool's table. The one exhaustive match on [`Tool`]: a new tool does not compile
    /// until it has an entry.
    pub fn spec(self) -> &'static ToolSpec {
        match self {
            Tool::Gh => &GH,
            Tool::Tea => &TEA,
            Tool::Docker => &DOCKER,
            Tool::Psql => &PSQL,
            Tool::Mysql => &MYSQL,
            Tool::Curl => &CURL,
            Tool::Git => &GIT,
            Tool::Ssh => &SSH,
            Tool::Kubectl => &KUBECTL,
            Tool::Helm => &HELM,
            Tool::AnsiblePlaybook => &ANSIBLE_PLAYBOOK,
            Tool::Ansible => &ANSIBLE,
            Tool::AnsibleInventory => &ANSIBLE_INVENTORY,
            Tool::AnsibleGalaxy => &ANSIBLE_GALAXY,
        }
    }
}

impl ToolSpec {
    /// Parse argv alone (nothing read for it).
    pub fn parse(&self, args: &[String]) -> Invocation {
        (self.parse)(args, &Contents::new(), &Inputs::default())
    }
}

/// The tools linked in every tier directory, one name a line (`shims/tools`, read by
/// `install.sh`).
pub const SHIMS_TOOLS: &str = include_str!("../shims/tools");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_its_own_entry() {
        for t in Tool::ALL {
            assert_eq!(t.spec().tool, t);
        }
    }

    #[test]
    fn shims_tools_lists_every_gated_tool_in_order() {
        let listed: Vec<&str> = SHIMS_TOOLS
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .collect();
        let tools: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(listed, tools);
    }

    #[test]
    fn the_remote_tool_list_is_the_specs() {
        let mut from_specs: Vec<(&str, Tool, &[&str])> = Tool::ALL
            .iter()
            .flat_map(|t| t.spec().remote.iter().map(move |(n, p)| (*n, *t, *p)))
            .collect();
        let mut from_remote: Vec<(&str, Tool, &[&str])> = grammar::remote::TOOLS.iter().map(|(n, t, p, _)| (*n, *t, *p)).collect();
        from_specs.sort();
        from_remote.sort();
        assert_eq!(from_specs, from_remote);
        // Each remote program is parsed by its tool's grammar.
        for (name, tool, prefix, parse) in grammar::remote::TOOLS {
            let mut argv = grammar::argv(prefix);
            argv.push("--version".into());
            assert_eq!(parse(&argv), tool.spec().parse(&argv), "{name}");
        }
    }

    #[test]
    fn the_grammars_entry_points_parse_what_they_are_given() {
        for t in Tool::ALL {
            let inv = t.spec().parse(&grammar::argv(&["--version"]));
            assert_eq!(inv.tool, t);
            assert_eq!(inv.args, grammar::argv(&["--version"]));
        }
    }
}
