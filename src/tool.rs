//! The gated tools, by name. What the crate knows about each is in its `ToolSpec`
//! (`crate::spec`, [`Tool::spec`]), reached through the one exhaustive match on [`Tool`]: adding
//! a tool is a compile error there until its entry exists.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tool {
    Gh,
    Tea,
    Docker,
    Psql,
    Mysql,
    Curl,
    Git,
    Ssh,
    Kubectl,
    Helm,
    AnsiblePlaybook,
    Ansible,
    AnsibleInventory,
    AnsibleGalaxy,
}

impl Tool {
    pub const ALL: [Tool; 14] = [
        Tool::Gh,
        Tool::Tea,
        Tool::Docker,
        Tool::Psql,
        Tool::Mysql,
        Tool::Curl,
        Tool::Git,
        Tool::Ssh,
        Tool::Kubectl,
        Tool::Helm,
        Tool::AnsiblePlaybook,
        Tool::Ansible,
        Tool::AnsibleInventory,
        Tool::AnsibleGalaxy,
    ];

    /// The program name the tool is linked under. Exact names only.
    pub const fn name(self) -> &'static str {
        match self {
            Tool::Gh => "gh",
            Tool::Tea => "tea",
            Tool::Docker => "docker",
            Tool::Psql => "psql",
            Tool::Mysql => "mysql",
            Tool::Curl => "curl",
            Tool::Git => "git",
            Tool::Ssh => "ssh",
            Tool::Kubectl => "kubectl",
            Tool::Helm => "helm",
            Tool::AnsiblePlaybook => "ansible-playbook",
            Tool::Ansible => "ansible",
            Tool::AnsibleInventory => "ansible-inventory",
            Tool::AnsibleGalaxy => "ansible-galaxy",
        }
    }

    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Every tool name, for messages (`gh, tea, docker, …`).
    pub fn names() -> String {
        Tool::ALL.map(Tool::name).join(", ")
    }
}

impl serde::Serialize for Tool {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
