//! helm: argv -> [`Invocation`], as helm 3.17 parses it (cobra + pflag, `helm.sh/helm/v3`
//! `cmd/helm`; the persistent flags of `pkg/cli` `EnvSettings.AddFlags` on the root).
//!
//! What this grammar owns:
//!
//! - **The command path as cobra finds it** ([`super::cobra`]), aliases resolved (`ls` =
//!   `list`, `hist` = `history`, `inspect` = `show`, `fetch` = `pull`, `un|delete|del` =
//!   `uninstall`, `dep|dependencies` = `dependency`, `repo ls` = `repo list`). A first word that
//!   is no command runs a plugin: its verb is the word, which the policy does not classify.
//! - **Which cluster, as whom, with which repositories.** Each root flag that overrides a setting
//!   the operator pins is a [`Claim::Pinned`] of the variable helm reads it from
//!   (`--kubeconfig` → `KUBECONFIG`, `--kube-context` → `HELM_KUBECONTEXT`, `--kube-token` →
//!   `HELM_KUBETOKEN`, `--kube-apiserver`, `--kube-as-user`, `--kube-as-group`,
//!   `--kube-ca-file`, `--kube-insecure-skip-tls-verify`, `--kube-tls-server-name`,
//!   `--registry-config`, `--repository-config`, `--repository-cache`): equal to the pin or
//!   refused.
//! - **Release targets**: `upgrade`, `install` and `rollback` name [`Target::Named`]
//!   `release/<name>` (the redeploy budget); `install --generate-name` names none.
//! - **Charts the agent could have written**: a chart argument that exists as a path is the chart
//!   helm installs (`LocateChart` stats it first), so it is a [`Claim::Operator`] (the directory
//!   or archive must be the operator's; when no such path exists the chart is a repository's).
//!   A chart from a URL (`oci://`, `https://`, `file://`) marks `chart-url`; `--repo <url>`
//!   marks `repo-url`; `--post-renderer` marks `post-renderer` (helm runs that program on the
//!   rendered manifests).
//! - **Local files**: values files (`-f`) and `--set-file` values are read into the release
//!   ([`LocalFile::read`]); `pull`, `package`, `create` and `template --output-dir` write.
//!
//! Marks: `all` (`get values --all`), `chart-url`, `repo-url`, `post-renderer`, `dry-run`.

use crate::grammar::cobra::{self, Cmd, Found};
use crate::grammar::opts::{Opt, Parsed};
use crate::grammar::{Access, Action, Claim, Invocation, LocalFile, Target, Understood};
use crate::tool::Tool;

/// Nothing to insert: helm's hardening is the environment and the pinned settings.
pub const PREPEND: &[&str] = &[];

/// The root's persistent flags and the variable each pinned one is read from.
const GLOBAL: &[Opt] = &[
    Opt::value("burst-limit", &["burst-limit"], &[]),
    Opt::flag("debug", &["debug"], &[]),
    Opt::flag("help", &["help"], &['h']),
    Opt::value("kube-apiserver", &["kube-apiserver"], &[]),
    Opt::value("kube-as-group", &["kube-as-group"], &[]),
    Opt::value("kube-as-user", &["kube-as-user"], &[]),
    Opt::value("kube-ca-file", &["kube-ca-file"], &[]),
    Opt::value("kube-context", &["kube-context"], &[]),
    Opt::flag("kube-insecure-skip-tls-verify", &["kube-insecure-skip-tls-verify"], &[]),
    Opt::value("kube-tls-server-name", &["kube-tls-server-name"], &[]),
    Opt::value("kube-token", &["kube-token"], &[]),
    Opt::value("kubeconfig", &["kubeconfig"], &[]),
    Opt::value("namespace", &["namespace"], &['n']),
    Opt::value("qps", &["qps"], &[]),
    Opt::value("registry-config", &["registry-config"], &[]),
    Opt::value("repository-cache", &["repository-cache"], &[]),
    Opt::value("repository-config", &["repository-config"], &[]),
];

/// Root flags that override a pinned setting: the flag and the variable (`pkg/cli/environment.go`).
const PINNED: &[(&str, &str)] = &[
    ("kube-apiserver", "HELM_KUBEAPISERVER"),
    ("kube-as-group", "HELM_KUBEASGROUPS"),
    ("kube-as-user", "HELM_KUBEASUSER"),
    ("kube-ca-file", "HELM_KUBECAFILE"),
    ("kube-context", "HELM_KUBECONTEXT"),
    ("kube-insecure-skip-tls-verify", "HELM_KUBEINSECURE_SKIP_TLS_VERIFY"),
    ("kube-tls-server-name", "HELM_KUBETLS_SERVER_NAME"),
    ("kube-token", "HELM_KUBETOKEN"),
    ("kubeconfig", "KUBECONFIG"),
    ("registry-config", "HELM_REGISTRY_CONFIG"),
    ("repository-cache", "HELM_REPOSITORY_CACHE"),
    ("repository-config", "HELM_REPOSITORY_CONFIG"),
];

macro_rules! opts {
    ($($o:expr),* $(,)?) => { &[$($o),*] };
}

const NONE: &[Opt] = &[];
const OUTPUT: &[Opt] = opts![Opt::value("output", &["output"], &['o'])];
const LIST: &[Opt] = opts![
    Opt::flag("all", &["all"], &['a']),
    Opt::flag("all-namespaces", &["all-namespaces"], &['A']),
    Opt::flag("date", &["date"], &['d']),
    Opt::flag("deployed", &["deployed"], &[]),
    Opt::flag("failed", &["failed"], &[]),
    Opt::value("filter", &["filter"], &['f']),
    Opt::value("max", &["max"], &['m']),
    Opt::flag("no-headers", &["no-headers"], &[]),
    Opt::value("offset", &["offset"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("pending", &["pending"], &[]),
    Opt::flag("reverse", &["reverse"], &['r']),
    Opt::value("selector", &["selector"], &['l']),
    Opt::flag("short", &["short"], &['q']),
    Opt::flag("superseded", &["superseded"], &[]),
    Opt::value("time-format", &["time-format"], &[]),
    Opt::flag("uninstalled", &["uninstalled"], &[]),
    Opt::flag("uninstalling", &["uninstalling"], &[]),
];
const STATUS: &[Opt] = opts![
    Opt::value("output", &["output"], &['o']),
    Opt::value("revision", &["revision"], &[]),
    Opt::flag("show-desc", &["show-desc"], &[]),
    Opt::flag("show-resources", &["show-resources"], &[]),
];
const HISTORY: &[Opt] = opts![Opt::value("max", &["max"], &[]), Opt::value("output", &["output"], &['o']),];
const GET_ALL: &[Opt] = opts![
    Opt::value("revision", &["revision"], &[]),
    Opt::value("template", &["template"], &[]),
];
const GET_VALUES: &[Opt] = opts![
    Opt::flag("all", &["all"], &['a']),
    Opt::value("output", &["output"], &['o']),
    Opt::value("revision", &["revision"], &[]),
];
const REVISION: &[Opt] = opts![Opt::value("revision", &["revision"], &[])];
const GET_METADATA: &[Opt] = opts![
    Opt::value("output", &["output"], &['o']),
    Opt::value("revision", &["revision"], &[]),
];
/// Where a chart comes from (`addChartPathOptionsFlags`).
macro_rules! chart_path {
    ($($o:expr),* $(,)?) => {
        &[
            Opt::value("ca-file", &["ca-file"], &[]),
            Opt::value("cert-file", &["cert-file"], &[]),
            Opt::flag("devel", &["devel"], &[]),
            Opt::flag("insecure-skip-tls-verify", &["insecure-skip-tls-verify"], &[]),
            Opt::value("key-file", &["key-file"], &[]),
            Opt::value("keyring", &["keyring"], &[]),
            Opt::flag("pass-credentials", &["pass-credentials"], &[]),
            Opt::value("password", &["password"], &[]),
            Opt::flag("plain-http", &["plain-http"], &[]),
            Opt::value("repo", &["repo"], &[]),
            Opt::value("username", &["username"], &[]),
            Opt::flag("verify", &["verify"], &[]),
            Opt::value("version", &["version"], &[]),
            $($o),*
        ]
    };
}
const SHOW: &[Opt] = chart_path![];
const SHOW_VALUES: &[Opt] = chart_path![Opt::value("jsonpath", &["jsonpath"], &[])];
/// What install, upgrade and template share (`addInstallFlags`, `addValueOptionsFlags`).
macro_rules! install_common {
    ($($o:expr),* $(,)?) => {
        chart_path![
            Opt::flag("atomic", &["atomic"], &[]),
            Opt::flag("create-namespace", &["create-namespace"], &[]),
            Opt::flag("dependency-update", &["dependency-update"], &[]),
            Opt::value("description", &["description"], &[]),
            Opt::flag("disable-openapi-validation", &["disable-openapi-validation"], &[]),
            Opt::opt_value("dry-run", &["dry-run"], &[]),
            Opt::flag("enable-dns", &["enable-dns"], &[]),
            Opt::flag("force", &["force"], &[]),
            Opt::flag("hide-notes", &["hide-notes"], &[]),
            Opt::value("labels", &["labels"], &['l']),
            Opt::flag("no-hooks", &["no-hooks"], &[]),
            Opt::value("post-renderer", &["post-renderer"], &[]),
            Opt::value("post-renderer-args", &["post-renderer-args"], &[]),
            Opt::flag("render-subchart-notes", &["render-subchart-notes"], &[]),
            Opt::value("set", &["set"], &[]),
            Opt::value("set-file", &["set-file"], &[]),
            Opt::value("set-json", &["set-json"], &[]),
            Opt::value("set-literal", &["set-literal"], &[]),
            Opt::value("set-string", &["set-string"], &[]),
            Opt::flag("skip-crds", &["skip-crds"], &[]),
            Opt::flag("skip-schema-validation", &["skip-schema-validation"], &[]),
            Opt::flag("take-ownership", &["take-ownership"], &[]),
            Opt::value("timeout", &["timeout"], &[]),
            Opt::value("values", &["values"], &['f']),
            Opt::flag("wait", &["wait"], &[]),
            Opt::flag("wait-for-jobs", &["wait-for-jobs"], &[]),
            $($o),*
        ]
    };
}
const INSTALL: &[Opt] = install_common![
    Opt::flag("generate-name", &["generate-name"], &['g']),
    Opt::flag("hide-secret", &["hide-secret"], &[]),
    Opt::value("name-template", &["name-template"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("replace", &["replace"], &[]),
];
const UPGRADE: &[Opt] = install_common![
    Opt::flag("cleanup-on-fail", &["cleanup-on-fail"], &[]),
    Opt::flag("hide-secret", &["hide-secret"], &[]),
    Opt::value("history-max", &["history-max"], &[]),
    Opt::flag("install", &["install"], &['i']),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("reset-then-reuse-values", &["reset-then-reuse-values"], &[]),
    Opt::flag("reset-values", &["reset-values"], &[]),
    Opt::flag("reuse-values", &["reuse-values"], &[]),
];
const TEMPLATE: &[Opt] = install_common![
    Opt::value("api-versions", &["api-versions"], &['a']),
    Opt::flag("generate-name", &["generate-name"], &['g']),
    Opt::flag("include-crds", &["include-crds"], &[]),
    Opt::flag("is-upgrade", &["is-upgrade"], &[]),
    Opt::value("kube-version", &["kube-version"], &[]),
    Opt::value("name-template", &["name-template"], &[]),
    Opt::value("output-dir", &["output-dir"], &[]),
    Opt::flag("release-name", &["release-name"], &[]),
    Opt::flag("replace", &["replace"], &[]),
    Opt::value("show-only", &["show-only"], &['s']),
    Opt::flag("skip-tests", &["skip-tests"], &[]),
    Opt::flag("validate", &["validate"], &[]),
];
const ROLLBACK: &[Opt] = opts![
    Opt::flag("cleanup-on-fail", &["cleanup-on-fail"], &[]),
    Opt::flag("dry-run", &["dry-run"], &[]),
    Opt::flag("force", &["force"], &[]),
    Opt::value("history-max", &["history-max"], &[]),
    Opt::flag("no-hooks", &["no-hooks"], &[]),
    Opt::flag("recreate-pods", &["recreate-pods"], &[]),
    Opt::value("timeout", &["timeout"], &[]),
    Opt::flag("wait", &["wait"], &[]),
    Opt::flag("wait-for-jobs", &["wait-for-jobs"], &[]),
];
const TEST: &[Opt] = opts![
    Opt::value("filter", &["filter"], &[]),
    Opt::flag("hide-notes", &["hide-notes"], &[]),
    Opt::flag("logs", &["logs"], &[]),
    Opt::value("timeout", &["timeout"], &[]),
];
const SEARCH_REPO: &[Opt] = opts![
    Opt::flag("devel", &["devel"], &[]),
    Opt::flag("fail-on-no-result", &["fail-on-no-result"], &[]),
    Opt::value("max-col-width", &["max-col-width"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("regexp", &["regexp"], &['r']),
    Opt::value("version", &["version"], &[]),
    Opt::flag("versions", &["versions"], &['l']),
];
const SEARCH_HUB: &[Opt] = opts![
    Opt::value("endpoint", &["endpoint"], &[]),
    Opt::flag("fail-on-no-result", &["fail-on-no-result"], &[]),
    Opt::flag("list-repo-url", &["list-repo-url"], &[]),
    Opt::value("max-col-width", &["max-col-width"], &[]),
    Opt::value("output", &["output"], &['o']),
];
const LINT: &[Opt] = opts![
    Opt::value("kube-version", &["kube-version"], &[]),
    Opt::flag("quiet", &["quiet"], &[]),
    Opt::value("set", &["set"], &[]),
    Opt::value("set-file", &["set-file"], &[]),
    Opt::value("set-json", &["set-json"], &[]),
    Opt::value("set-literal", &["set-literal"], &[]),
    Opt::value("set-string", &["set-string"], &[]),
    Opt::flag("skip-schema-validation", &["skip-schema-validation"], &[]),
    Opt::flag("strict", &["strict"], &[]),
    Opt::value("values", &["values"], &['f']),
    Opt::flag("with-subcharts", &["with-subcharts"], &[]),
];
const VERSION: &[Opt] = opts![Opt::flag("short", &["short"], &[]), Opt::value("template", &["template"], &[]),];
const REPO_UPDATE: &[Opt] = opts![Opt::flag("fail-on-repo-update-fail", &["fail-on-repo-update-fail"], &[])];
const MAX_COL: &[Opt] = opts![Opt::value("max-col-width", &["max-col-width"], &[])];
const PULL: &[Opt] = chart_path![
    Opt::value("destination", &["destination"], &['d']),
    Opt::flag("prov", &["prov"], &[]),
    Opt::flag("untar", &["untar"], &[]),
    Opt::value("untardir", &["untardir"], &[]),
];
const PACKAGE: &[Opt] = opts![
    Opt::value("app-version", &["app-version"], &[]),
    Opt::value("ca-file", &["ca-file"], &[]),
    Opt::value("cert-file", &["cert-file"], &[]),
    Opt::flag("dependency-update", &["dependency-update"], &['u']),
    Opt::value("destination", &["destination"], &['d']),
    Opt::flag("insecure-skip-tls-verify", &["insecure-skip-tls-verify"], &[]),
    Opt::value("key", &["key"], &[]),
    Opt::value("key-file", &["key-file"], &[]),
    Opt::value("keyring", &["keyring"], &[]),
    Opt::value("passphrase-file", &["passphrase-file"], &[]),
    Opt::value("password", &["password"], &[]),
    Opt::flag("plain-http", &["plain-http"], &[]),
    Opt::flag("sign", &["sign"], &[]),
    Opt::value("username", &["username"], &[]),
    Opt::value("version", &["version"], &[]),
];
const CREATE: &[Opt] = opts![Opt::value("starter", &["starter"], &['p'])];
const VERIFY: &[Opt] = opts![Opt::value("keyring", &["keyring"], &[])];
const UNINSTALL: &[Opt] = opts![
    Opt::value("cascade", &["cascade"], &[]),
    Opt::value("description", &["description"], &[]),
    Opt::flag("dry-run", &["dry-run"], &[]),
    Opt::flag("ignore-not-found", &["ignore-not-found"], &[]),
    Opt::flag("keep-history", &["keep-history"], &[]),
    Opt::flag("no-hooks", &["no-hooks"], &[]),
    Opt::value("timeout", &["timeout"], &[]),
    Opt::flag("wait", &["wait"], &[]),
];

const TREE: &[Cmd] = &[
    Cmd::leaf(&["list", "ls"], LIST),
    Cmd::leaf(&["status"], STATUS),
    Cmd::leaf(&["history", "hist"], HISTORY),
    Cmd::group(
        &["get"],
        &[
            Cmd::leaf(&["all"], GET_ALL),
            Cmd::leaf(&["values"], GET_VALUES),
            Cmd::leaf(&["manifest"], REVISION),
            Cmd::leaf(&["hooks"], REVISION),
            Cmd::leaf(&["notes"], REVISION),
            Cmd::leaf(&["metadata"], GET_METADATA),
        ],
    ),
    Cmd::group(
        &["show", "inspect"],
        &[
            Cmd::leaf(&["all"], SHOW),
            Cmd::leaf(&["chart"], SHOW),
            Cmd::leaf(&["readme"], SHOW),
            Cmd::leaf(&["values"], SHOW_VALUES),
            Cmd::leaf(&["crds"], SHOW),
        ],
    ),
    Cmd::leaf(&["template"], TEMPLATE),
    Cmd::group(&["search"], &[Cmd::leaf(&["repo"], SEARCH_REPO), Cmd::leaf(&["hub"], SEARCH_HUB)]),
    Cmd::leaf(&["lint"], LINT),
    Cmd::leaf(&["version"], VERSION),
    Cmd::leaf(&["completion"], NONE),
    Cmd::leaf(&["verify"], VERIFY),
    Cmd::leaf(&["upgrade"], UPGRADE),
    Cmd::leaf(&["install"], INSTALL),
    Cmd::leaf(&["rollback"], ROLLBACK),
    Cmd::leaf(&["test"], TEST),
    Cmd::leaf(&["uninstall", "un", "delete", "del"], UNINSTALL),
    Cmd::group(
        &["repo"],
        &[
            Cmd::leaf(&["list", "ls"], OUTPUT),
            Cmd::leaf(&["update", "up"], REPO_UPDATE),
            Cmd::named(&["add"]),
            Cmd::named(&["remove", "rm"]),
            Cmd::named(&["index"]),
        ],
    ),
    Cmd::group(
        &["dependency", "dep", "dependencies"],
        &[
            Cmd::leaf(&["list", "ls"], MAX_COL),
            Cmd::named(&["build"]),
            Cmd::named(&["update", "up"]),
        ],
    ),
    Cmd::leaf(&["pull", "fetch"], PULL),
    Cmd::leaf(&["package"], PACKAGE),
    Cmd::leaf(&["create"], CREATE),
    Cmd::named(&["env"]),
    Cmd::named(&["plugin"]),
    Cmd::named(&["push"]),
    Cmd::named(&["registry"]),
    Cmd::named(&["help"]),
];

pub fn parse(args: &[String]) -> Invocation {
    Invocation::new(Tool::Helm, args).understood(parse_call(args).map_err(|problem| format!("helm: {problem}")))
}

fn parse_call(args: &[String]) -> Result<Understood, String> {
    let found = cobra::find(args, GLOBAL, TREE, &cobra::PFLAG)?;
    let mut claims = Vec::new();
    let mut files = Vec::new();
    let (action, parsed) = match found {
        Found::Unknown(word) => return Ok((vec![Action::new(word)], claims, files)),
        Found::Root(p) => (Action::new("help"), p),
        Found::Cmd { path, parsed: None, .. } => return Ok((vec![Action::new(path.join(" "))], claims, files)),
        Found::Cmd {
            path,
            parsed: Some(p),
            operands,
            ..
        } => {
            let verb = path.join(" ");
            let a = command(&verb, &p, &operands, &mut claims, &mut files)?;
            (a, p)
        }
    };
    for f in parsed.opts() {
        if let Some((_, var)) = PINNED.iter().find(|(id, _)| f.id == *id) {
            claims.push(Claim::Pinned {
                var,
                value: f.value.clone().unwrap_or_else(|| "true".into()),
                flag: format!("--{}", f.id),
            });
        }
    }
    let action = if parsed.has("help") { Action::new("help") } else { action };
    Ok((vec![action], claims, files))
}

fn command(verb: &str, p: &Parsed, operands: &[String], claims: &mut Vec<Claim>, files: &mut Vec<LocalFile>) -> Result<Action, String> {
    let mut a = Action::new(verb);
    // Values read into the release (or the rendering) from local files.
    for f in p.all("values") {
        let v = f.value.as_deref().unwrap_or_default();
        for path in v.split(',').filter(|s| !s.is_empty() && !s.contains("://")) {
            files.push(LocalFile::read(path, f.written.clone(), false));
        }
    }
    for f in p.all("set-file") {
        for pair in f.value.as_deref().unwrap_or_default().split(',') {
            if let Some((_, path)) = pair.split_once('=') {
                files.push(LocalFile::read(path, "--set-file", false));
            }
        }
    }
    if p.last("post-renderer").is_some() {
        a.add("post-renderer");
    }
    if p.last("repo").is_some() {
        a.add("repo-url");
    }
    if p.last("dry-run").is_some() || p.all("dry-run").iter().any(|f| f.value.is_none()) {
        a.add("dry-run");
    }
    match verb {
        "get values" if p.has("all") => a.add("all"),
        "upgrade" => {
            let [release, chart] = operands else {
                return Err("upgrade takes a release and a chart".into());
            };
            chart_claim(chart, &mut a, claims);
            a.targets = vec![release_target(release)];
        }
        "install" => {
            let (release, chart) = match operands {
                [chart] if p.has("generate-name") || p.last("name-template").is_some() => (None, chart),
                [release, chart] => (Some(release), chart),
                _ => return Err("install takes a release name and a chart (or --generate-name and a chart)".into()),
            };
            chart_claim(chart, &mut a, claims);
            a.targets = vec![match release {
                Some(r) => release_target(r),
                None => Target::All("a release whose name helm generates".into()),
            }];
        }
        "rollback" => {
            let Some(release) = operands.first() else {
                return Err("rollback takes a release".into());
            };
            a.targets = vec![release_target(release)];
        }
        "template" => {
            if let Some(chart) = operands.last() {
                chart_claim(chart, &mut a, &mut Vec::new());
            }
            if let Some(dir) = p.last("output-dir") {
                files.push(LocalFile::writes(dir, "--output-dir", Access::WriteTree));
            }
        }
        "pull" => {
            let dest = p.last("destination").unwrap_or(".");
            if p.has("untar") {
                let dir = p.last("untardir").unwrap_or(".");
                let joined = if dir.starts_with('/') {
                    dir.to_string()
                } else {
                    format!("{dest}/{dir}")
                };
                files.push(LocalFile::writes(joined, "pull --untar", Access::WriteTree));
            } else {
                files.push(LocalFile::writes(dest, "pull", Access::WriteNamed));
            }
        }
        "package" => files.push(LocalFile::writes(
            p.last("destination").unwrap_or("."),
            "package",
            Access::WriteNamed,
        )),
        "create" => {
            let Some(name) = operands.first() else {
                return Err("create takes a chart name".into());
            };
            files.push(LocalFile::writes(name.clone(), "create", Access::WriteTree));
        }
        _ => {}
    }
    Ok(a)
}

fn release_target(name: &str) -> Target {
    Target::Named {
        kind: "release",
        name: name.to_string(),
        host: None,
    }
}

/// A chart argument: a URL marks `chart-url`; anything else may be a path, which helm takes
/// first when it exists, and which must then be the operator's.
fn chart_claim(chart: &str, a: &mut Action, claims: &mut Vec<Claim>) {
    if chart.contains("://") {
        a.add("chart-url");
        return;
    }
    claims.push(Claim::Operator {
        path: chart.to_string(),
        flag: "the chart".into(),
        tree: true,
        optional: true,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;

    fn verbs(args: &[&str]) -> Vec<String> {
        let inv = parse(&argv(args));
        assert_eq!(inv.problem, None, "{args:?}");
        inv.actions.into_iter().map(Action::shown_with_marks).collect()
    }

    #[test]
    fn aliases_resolve_to_one_verb() {
        assert_eq!(verbs(&["ls", "-A"]), vec!["list"]);
        assert_eq!(verbs(&["hist", "api"]), vec!["history"]);
        assert_eq!(verbs(&["inspect", "values", "bitnami/nginx"]), vec!["show values"]);
        assert_eq!(verbs(&["del", "api"]), vec!["uninstall"]);
        assert_eq!(verbs(&["-n", "prod", "un", "api"]), vec!["uninstall"]);
        assert_eq!(verbs(&["repo", "ls"]), vec!["repo list"]);
    }

    #[test]
    fn get_values_all_is_marked() {
        assert_eq!(verbs(&["get", "values", "api", "--all"]), vec!["get values [all]"]);
        assert_eq!(verbs(&["get", "values", "-a", "api"]), vec!["get values [all]"]);
        assert_eq!(verbs(&["get", "values", "api"]), vec!["get values"]);
    }

    #[test]
    fn upgrade_names_its_release_and_claims_a_local_chart() {
        let inv = parse(&argv(&["upgrade", "--install", "api", "./charts/api", "-n", "prod"]));
        assert_eq!(inv.problem, None);
        assert_eq!(
            inv.actions[0].targets,
            vec![Target::Named {
                kind: "release",
                name: "api".into(),
                host: None
            }]
        );
        assert_eq!(
            inv.claims,
            vec![Claim::Operator {
                path: "./charts/api".into(),
                flag: "the chart".into(),
                tree: true,
                optional: true
            }]
        );
        assert_eq!(verbs(&["upgrade", "api", "oci://r.example/api"]), vec!["upgrade [chart-url]"]);
        assert_eq!(
            verbs(&["upgrade", "api", "x", "--post-renderer", "./pr"]),
            vec!["upgrade [post-renderer]"]
        );
    }

    #[test]
    fn pinned_settings_are_claims() {
        let inv = parse(&argv(&["list", "--kube-context", "prod", "--kube-token=t"]));
        assert_eq!(
            inv.claims,
            vec![
                Claim::Pinned {
                    var: "HELM_KUBECONTEXT",
                    value: "prod".into(),
                    flag: "--kube-context".into()
                },
                Claim::Pinned {
                    var: "HELM_KUBETOKEN",
                    value: "t".into(),
                    flag: "--kube-token".into()
                },
            ]
        );
    }

    #[test]
    fn plugins_are_their_word() {
        assert_eq!(verbs(&["diff", "upgrade", "api", "x"]), vec!["diff"]);
        assert_eq!(verbs(&["plugin", "install", "x"]), vec!["plugin"]);
    }

    #[test]
    fn values_files_are_local_reads() {
        let inv = parse(&argv(&["upgrade", "api", "repo/api", "-f", "v.yaml", "--set-file", "k=cert.pem"]));
        assert_eq!(
            inv.files,
            vec![
                LocalFile::read("v.yaml", "-f", false),
                LocalFile::read("cert.pem", "--set-file", false)
            ]
        );
    }
}
