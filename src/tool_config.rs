//! The per-user configuration gh and docker read that can run a program or send a call
//! elsewhere (DESIGN §3.2, "configuration the agent can write is data"): gh's `config.yml` and
//! `hosts.yml` (`browser`, `pager`, `editor`, `http_unix_socket`, `aliases`), docker's
//! `config.json` (`credsStore`, `credHelpers`, `cliPluginsExtraDirs`, `plugins`, `features`,
//! `currentContext`, `aliases`) and its `cli-plugins/` and `contexts/` directories.
//!
//! With the tool home they are the operator's. What is still writable by anyone but its owner
//! (or, in a hardened install, not owned by root), the same rule the gate applies to
//! `tiershim.yaml` and the tool home, the agent could have written: each key of it that runs a
//! program or redirects a call is reported, with its file, and `decide()` refuses the call
//! (`<tool>.agent-config`). git's configuration is judged by the git grammar and its facts.
//!
//! kubectl's kubeconfig (credential plugins, servers) and helm's plugin directory are judged the
//! same way, as a whole.
//!
//! I/O, gathered before `decide()`; it decides nothing. Only the calls of tools with a
//! `ToolSpec::user_config` look, and only a file in an untrusted place is read.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// gh keys that run a program or route its requests (`pkg/config`), at the top level or under a
/// host in `hosts:`.
const GH_KEYS: &[&str] = &["browser", "pager", "editor", "http_unix_socket"];
/// docker `config.json` keys (cli/config/configfile) that run programs (credential helpers, CLI
/// plugins and their hooks), retarget the daemon (`currentContext`) or rename commands.
const DOCKER_KEYS: &[&str] = &[
    "credsStore",
    "credHelpers",
    "cliPluginsExtraDirs",
    "plugins",
    "features",
    "currentContext",
    "aliases",
];

/// Writable by someone but its owner, or (hardened) not root's: someone else's, maybe the agent's.
fn untrusted(p: &Path, hardened: bool) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.mode() & 0o022 != 0 || (hardened && m.uid() != 0))
}

/// A file the agent could have written: the file itself, or the directory it is in (where it
/// could be replaced).
fn agents(file: &Path, hardened: bool) -> bool {
    file.exists() && (untrusted(file, hardened) || file.parent().is_some_and(|d| untrusted(d, hardened)))
}

fn read(file: &Path) -> Option<String> {
    let f = std::fs::File::open(file).ok()?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(f, 1 << 20), &mut text).ok()?;
    Some(text)
}

/// What of gh's configuration directory the agent could have written that runs a program or
/// routes a request, one `file: key` line each (`ToolSpec::user_config`).
pub fn gh(dir: &Path, hardened: bool) -> Vec<String> {
    let mut out = Vec::new();
    for name in ["config.yml", "hosts.yml"] {
        let file = dir.join(name);
        if !agents(&file, hardened) {
            continue;
        }
        let Some(doc) = read(&file).and_then(|t| serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&t).ok()) else {
            out.push(format!("{}: (not readable YAML)", file.display()));
            continue;
        };
        let mut keys = Vec::new();
        let mut look = |v: &serde_yaml_ng::Value, at: &str| {
            for k in GH_KEYS {
                if v.get(k).is_some_and(|x| !x.as_str().is_some_and(str::is_empty) && !x.is_null()) {
                    keys.push(format!("{at}{k}"));
                }
            }
        };
        look(&doc, "");
        // hosts.yml is keyed by host; config.yml has `hosts:`.
        let hosts = if name == "hosts.yml" { Some(&doc) } else { doc.get("hosts") };
        if let Some(serde_yaml_ng::Value::Mapping(m)) = hosts {
            for (h, v) in m {
                look(v, &format!("{}.", h.as_str().unwrap_or("?")));
            }
        }
        if doc.get("aliases").is_some_and(|a| a.as_mapping().is_some_and(|m| !m.is_empty())) {
            keys.push("aliases".into());
        }
        out.extend(keys.into_iter().map(|k| format!("{}: {k}", file.display())));
    }
    out
}

/// What of docker's configuration directory the agent could have written that runs a program,
/// retargets the daemon or renames a command, one `file: key` line each.
pub fn docker(dir: &Path, hardened: bool) -> Vec<String> {
    let mut out = Vec::new();
    let file = dir.join("config.json");
    if agents(&file, hardened) {
        match read(&file).and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok()) {
            Some(doc) => {
                for k in DOCKER_KEYS {
                    if doc.get(k).is_some_and(|v| !v.is_null()) {
                        out.push(format!("{}: {k}", file.display()));
                    }
                }
            }
            None => out.push(format!("{}: (not readable JSON)", file.display())),
        }
    }
    // Programs docker runs (`docker compose` is `cli-plugins/docker-compose`) and endpoints it
    // connects to: a directory the agent can write is the agent's choice.
    for (sub, what) in [
        ("cli-plugins", "CLI plugins docker runs"),
        ("contexts", "contexts that name the daemon"),
    ] {
        let d = dir.join(sub);
        if d.exists() && (untrusted(&d, hardened) || untrusted(dir, hardened)) {
            out.push(format!("{}: {what}", d.display()));
        }
    }
    out
}

/// kubectl's kubeconfig (`KUBECONFIG` pinned, a file or a colon-separated list, or
/// `.kube/config` in the tool home): a kubeconfig the agent could have written runs any program
/// (`users[].user.exec`, an auth provider's `cmd-path`) and names any server, so the whole file
/// is reported.
pub fn kubeconfig(path: &Path, hardened: bool) -> Vec<String> {
    path.to_string_lossy()
        .split(':')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .filter(|f| agents(f, hardened))
        .map(|f| format!("{}: the kubeconfig (credential plugins it runs, the servers it names)", f.display()))
        .collect()
}

/// helm's plugin directory (`HELM_PLUGINS` pinned, or `.local/share/helm/plugins` in the tool
/// home): helm loads every plugin in it as a command, and runs getter and post-renderer plugins.
pub fn helm_plugins(dir: &Path, hardened: bool) -> Vec<String> {
    let parent_untrusted = dir.parent().is_some_and(|p| p.exists() && untrusted(p, hardened));
    if dir.exists() && (untrusted(dir, hardened) || parent_untrusted) {
        return vec![format!("{}: plugins helm loads and runs", dir.display())];
    }
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if untrusted(&e.path(), hardened) {
                out.push(format!("{}: a plugin helm loads and runs", e.path().display()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::Tool;
    use std::collections::BTreeMap;

    /// What the gate would find for `tool`, through its table (`ToolSpec::user_config`).
    fn agent_written(tool: Tool, home: &Path, pins: &BTreeMap<String, String>, hardened: bool) -> Vec<String> {
        tool.spec()
            .user_config
            .as_ref()
            .map(|u| u.agent_written(home, pins, hardened))
            .unwrap_or_default()
    }
    use std::os::unix::fs::PermissionsExt;

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_kubeconfig_or_a_helm_plugin_others_can_write_is_named() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path();
        chmod(home, 0o755);
        let kube = home.join(".kube");
        std::fs::create_dir_all(&kube).unwrap();
        chmod(&kube, 0o755);
        let cfg = kube.join("config");
        std::fs::write(&cfg, "apiVersion: v1\nkind: Config\n").unwrap();
        chmod(&cfg, 0o600);
        let none = BTreeMap::new();
        assert_eq!(agent_written(Tool::Kubectl, home, &none, false), Vec::<String>::new());
        chmod(&cfg, 0o666);
        assert_eq!(agent_written(Tool::Kubectl, home, &none, false).len(), 1);
        // A pinned list: each file judged.
        let other = home.join("other.conf");
        std::fs::write(&other, "").unwrap();
        chmod(&other, 0o644);
        let pins = BTreeMap::from([("KUBECONFIG".to_string(), format!("{}:{}", other.display(), cfg.display()))]);
        assert_eq!(
            agent_written(Tool::Kubectl, home, &pins, false),
            [format!(
                "{}: the kubeconfig (credential plugins it runs, the servers it names)",
                cfg.display()
            )]
        );
        let plugins = home.join(".local/share/helm/plugins");
        std::fs::create_dir_all(plugins.join("diff")).unwrap();
        for d in [
            ".local",
            ".local/share",
            ".local/share/helm",
            ".local/share/helm/plugins",
            ".local/share/helm/plugins/diff",
        ] {
            chmod(&home.join(d), 0o755);
        }
        assert_eq!(agent_written(Tool::Helm, home, &none, false), Vec::<String>::new());
        chmod(&plugins.join("diff"), 0o777);
        assert_eq!(
            agent_written(Tool::Helm, home, &none, false),
            [format!("{}: a plugin helm loads and runs", plugins.join("diff").display())]
        );
    }

    #[test]
    fn keys_that_run_programs_in_a_file_others_can_write_are_named() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path();
        let gh_dir = home.join(".config/gh");
        std::fs::create_dir_all(&gh_dir).unwrap();
        let cfg = gh_dir.join("config.yml");
        std::fs::write(
            &cfg,
            "git_protocol: https\nbrowser: /tmp/x\naliases:\n  co: '!sh -c id'\nhosts:\n  ghe.example:\n    pager: less\n",
        )
        .unwrap();
        chmod(&gh_dir, 0o755);
        chmod(&cfg, 0o644);
        let none = BTreeMap::new();
        assert_eq!(agent_written(Tool::Gh, home, &none, false), Vec::<String>::new());
        chmod(&cfg, 0o666);
        let shown = cfg.display().to_string();
        assert_eq!(
            agent_written(Tool::Gh, home, &none, false),
            [
                format!("{shown}: browser"),
                format!("{shown}: ghe.example.pager"),
                format!("{shown}: aliases")
            ]
        );
        // A directory others can write: they could have replaced the file.
        chmod(&cfg, 0o644);
        chmod(&gh_dir, 0o777);
        assert_eq!(agent_written(Tool::Gh, home, &none, false).len(), 3);

        let docker = home.join("elsewhere");
        std::fs::create_dir_all(docker.join("cli-plugins")).unwrap();
        std::fs::write(
            docker.join("config.json"),
            r#"{"auths": {}, "credsStore": "evil", "cliPluginsExtraDirs": ["/tmp"]}"#,
        )
        .unwrap();
        chmod(&docker, 0o755);
        chmod(&docker.join("config.json"), 0o644);
        chmod(&docker.join("cli-plugins"), 0o777);
        let pins = BTreeMap::from([("DOCKER_CONFIG".to_string(), docker.display().to_string())]);
        assert_eq!(
            agent_written(Tool::Docker, home, &pins, false),
            [format!("{}: CLI plugins docker runs", docker.join("cli-plugins").display())]
        );
        chmod(&docker.join("config.json"), 0o664);
        let got = agent_written(Tool::Docker, home, &pins, false);
        assert!(
            got.contains(&format!("{}: credsStore", docker.join("config.json").display())),
            "{got:?}"
        );
        assert!(
            got.contains(&format!("{}: cliPluginsExtraDirs", docker.join("config.json").display())),
            "{got:?}"
        );
        assert_eq!(agent_written(Tool::Curl, home, &pins, false), Vec::<String>::new());
    }
}
