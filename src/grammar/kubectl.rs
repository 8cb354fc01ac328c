//! kubectl: argv -> [`Invocation`], as kubectl 1.31 parses it (cobra + pflag, `k8s.io/kubectl`
//! `pkg/cmd`; the persistent flags of `cli-runtime`'s `ConfigFlags` on the root).
//!
//! What this grammar owns:
//!
//! - **The command path as cobra finds it** ([`super::cobra`]): global flags anywhere, the
//!   leaf's flags parsed with them. A first word that is no command runs a plugin
//!   (`kubectl-<word>` on PATH): its verb is the word, which the policy does not classify.
//! - **Which cluster, as whom.** `--kubeconfig` is a [`Claim::Pinned`] of `KUBECONFIG`. Every
//!   other way to pick the cluster, the user or the credentials over the pinned kubeconfig's
//!   (`--context`, `--cluster`, `--user`, `-s/--server`, `--token`, `--as`, `--as-group`,
//!   `--as-uid`, `--username`, `--password`, `--client-certificate`, `--client-key`,
//!   `--certificate-authority`, `--insecure-skip-tls-verify`, `--tls-server-name`) adds the action
//!   [`CONNECTION_VERB`], which the policy never allows: the operator pins the whole connection
//!   in the kubeconfig.
//! - **Resources as the API server reads them**: `TYPE[.version][.group] [NAME…]`,
//!   `TYPE/NAME…`, `TYPE1,TYPE2`, case-insensitive (the REST mapper lower-cases). A type whose
//!   name has `secret` in it marks the call `secret` (the policy never lets a secret be
//!   printed); `--raw` paths likewise.
//! - **Restart targets**: `rollout restart` of a deployment, statefulset or daemonset names
//!   [`Target::Named`] `deployment/api` (short names, plurals, `.apps` and `.v1.apps` resolved);
//!   anything else it restarts (a selector, `--all`, files, another kind) is [`Target::All`].
//! - **Files kubectl reads as instructions** (`apply|scale|patch|set|exec -f`, `-k`,
//!   `--patch-file`) are [`Claim::Operator`]: the agent must not have been able to write them.
//!   `-f -` (stdin) and `-f <URL>` mark the call `stdin` / `remote-file`. `kubectl cp` declares
//!   the local side as a read or a write ([`LocalFile`]), `--cache-dir` and `--profile-output`
//!   as writes, and a template file (`-o go-template-file=F`, `jsonpath-file`) as a read.
//!
//! Marks: `secret`, `raw` (`get --raw`), `from-file` (`get -f/-k`: a file can name a secret),
//! `stdin`, `remote-file`, `prune` (`apply --prune` deletes what the files do not name),
//! `selector` (`cordon|uncordon -l`: every node it matches), `resolve` (`set env --resolve`
//! prints secret values), `raw-config` (`config view --raw` prints credentials), and for
//! `delete`: verb `delete pod` when every type named is a pod, else `delete`.

use crate::grammar::cobra::{self, Cmd, Found};
use crate::grammar::opts::{Opt, Parsed};
use crate::grammar::{Access, Action, Claim, Invocation, LocalFile, Target, Understood};
use crate::tool::Tool;

/// Nothing to insert: the hardening for kubectl is the environment and the pinned kubeconfig.
pub const PREPEND: &[&str] = &[];

/// The verb added when the call picks the cluster, user or credentials itself.
pub const CONNECTION_VERB: &str = "--connection";

/// The root's persistent flags (`kubectl options`, 1.31).
const GLOBAL: &[Opt] = &[
    Opt::value("as", &["as"], &[]),
    Opt::value("as-group", &["as-group"], &[]),
    Opt::value("as-uid", &["as-uid"], &[]),
    Opt::value("cache-dir", &["cache-dir"], &[]),
    Opt::value("certificate-authority", &["certificate-authority"], &[]),
    Opt::value("client-certificate", &["client-certificate"], &[]),
    Opt::value("client-key", &["client-key"], &[]),
    Opt::value("cluster", &["cluster"], &[]),
    Opt::value("context", &["context"], &[]),
    Opt::flag("disable-compression", &["disable-compression"], &[]),
    Opt::flag("insecure-skip-tls-verify", &["insecure-skip-tls-verify"], &[]),
    Opt::value("kubeconfig", &["kubeconfig"], &[]),
    Opt::value("log-flush-frequency", &["log-flush-frequency"], &[]),
    Opt::flag("match-server-version", &["match-server-version"], &[]),
    Opt::value("namespace", &["namespace"], &['n']),
    Opt::value("password", &["password"], &[]),
    Opt::value("profile", &["profile"], &[]),
    Opt::value("profile-output", &["profile-output"], &[]),
    Opt::value("request-timeout", &["request-timeout"], &[]),
    Opt::value("server", &["server"], &['s']),
    Opt::value("tls-server-name", &["tls-server-name"], &[]),
    Opt::value("token", &["token"], &[]),
    Opt::value("user", &["user"], &[]),
    Opt::value("username", &["username"], &[]),
    Opt::value("v", &["v"], &['v']),
    Opt::value("vmodule", &["vmodule"], &[]),
    Opt::flag("warnings-as-errors", &["warnings-as-errors"], &[]),
    Opt::flag("help", &["help"], &['h']),
];

/// Global flags that pick the cluster, the user or the credentials over the kubeconfig's.
const CONNECTION: &[&str] = &[
    "as",
    "as-group",
    "as-uid",
    "certificate-authority",
    "client-certificate",
    "client-key",
    "cluster",
    "context",
    "insecure-skip-tls-verify",
    "password",
    "server",
    "tls-server-name",
    "token",
    "user",
    "username",
];

macro_rules! opts {
    ($($o:expr),* $(,)?) => { &[$($o),*] };
}

const GET: &[Opt] = opts![
    Opt::flag("all-namespaces", &["all-namespaces"], &['A']),
    Opt::flag("allow-missing-template-keys", &["allow-missing-template-keys"], &[]),
    Opt::value("chunk-size", &["chunk-size"], &[]),
    Opt::value("field-selector", &["field-selector"], &[]),
    Opt::value("filename", &["filename"], &['f']),
    Opt::flag("ignore-not-found", &["ignore-not-found"], &[]),
    Opt::value("kustomize", &["kustomize"], &['k']),
    Opt::value("label-columns", &["label-columns"], &['L']),
    Opt::flag("no-headers", &["no-headers"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("output-watch-events", &["output-watch-events"], &[]),
    Opt::value("raw", &["raw"], &[]),
    Opt::flag("recursive", &["recursive"], &['R']),
    Opt::value("selector", &["selector"], &['l']),
    Opt::flag("server-print", &["server-print"], &[]),
    Opt::flag("show-kind", &["show-kind"], &[]),
    Opt::flag("show-labels", &["show-labels"], &[]),
    Opt::flag("show-managed-fields", &["show-managed-fields"], &[]),
    Opt::value("sort-by", &["sort-by"], &[]),
    Opt::value("subresource", &["subresource"], &[]),
    Opt::value("template", &["template"], &[]),
    Opt::flag("watch", &["watch"], &['w']),
    Opt::flag("watch-only", &["watch-only"], &[]),
];
const DESCRIBE: &[Opt] = opts![
    Opt::flag("all-namespaces", &["all-namespaces"], &['A']),
    Opt::value("chunk-size", &["chunk-size"], &[]),
    Opt::value("filename", &["filename"], &['f']),
    Opt::value("kustomize", &["kustomize"], &['k']),
    Opt::flag("recursive", &["recursive"], &['R']),
    Opt::value("selector", &["selector"], &['l']),
    Opt::flag("show-events", &["show-events"], &[]),
];
const LOGS: &[Opt] = opts![
    Opt::flag("all-containers", &["all-containers"], &[]),
    Opt::flag("all-pods", &["all-pods"], &[]),
    Opt::value("container", &["container"], &['c']),
    Opt::flag("follow", &["follow"], &['f']),
    Opt::flag("ignore-errors", &["ignore-errors"], &[]),
    Opt::flag("insecure-skip-tls-verify-backend", &["insecure-skip-tls-verify-backend"], &[]),
    Opt::value("limit-bytes", &["limit-bytes"], &[]),
    Opt::value("max-log-requests", &["max-log-requests"], &[]),
    Opt::value("pod-running-timeout", &["pod-running-timeout"], &[]),
    Opt::flag("prefix", &["prefix"], &[]),
    Opt::flag("previous", &["previous"], &['p']),
    Opt::value("selector", &["selector"], &['l']),
    Opt::value("since", &["since"], &[]),
    Opt::value("since-time", &["since-time"], &[]),
    Opt::value("tail", &["tail"], &[]),
    Opt::flag("timestamps", &["timestamps"], &[]),
];
const TOP_POD: &[Opt] = opts![
    Opt::flag("all-namespaces", &["all-namespaces"], &['A']),
    Opt::flag("containers", &["containers"], &[]),
    Opt::value("field-selector", &["field-selector"], &[]),
    Opt::flag("no-headers", &["no-headers"], &[]),
    Opt::value("selector", &["selector"], &['l']),
    Opt::value("sort-by", &["sort-by"], &[]),
    Opt::flag("sum", &["sum"], &[]),
    Opt::flag("use-protocol-buffers", &["use-protocol-buffers"], &[]),
];
const TOP_NODE: &[Opt] = opts![
    Opt::flag("no-headers", &["no-headers"], &[]),
    Opt::value("selector", &["selector"], &['l']),
    Opt::flag("show-capacity", &["show-capacity"], &[]),
    Opt::value("sort-by", &["sort-by"], &[]),
    Opt::flag("use-protocol-buffers", &["use-protocol-buffers"], &[]),
];
const EVENTS: &[Opt] = opts![
    Opt::flag("all-namespaces", &["all-namespaces"], &['A']),
    Opt::flag("allow-missing-template-keys", &["allow-missing-template-keys"], &[]),
    Opt::value("chunk-size", &["chunk-size"], &[]),
    Opt::value("for", &["for"], &[]),
    Opt::flag("no-headers", &["no-headers"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("show-managed-fields", &["show-managed-fields"], &[]),
    Opt::value("template", &["template"], &[]),
    Opt::value("types", &["types"], &[]),
    Opt::flag("watch", &["watch"], &['w']),
];
const CAN_I: &[Opt] = opts![
    Opt::flag("all-namespaces", &["all-namespaces"], &['A']),
    Opt::flag("list", &["list"], &[]),
    Opt::flag("no-headers", &["no-headers"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::value("subresource", &["subresource"], &[]),
];
const PRINT: &[Opt] = opts![
    Opt::flag("allow-missing-template-keys", &["allow-missing-template-keys"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("show-managed-fields", &["show-managed-fields"], &[]),
    Opt::value("template", &["template"], &[]),
];
/// `rollout restart|pause|resume|history|undo` share these (printing, files, selectors).
const ROLLOUT: &[Opt] = opts![
    Opt::flag("allow-missing-template-keys", &["allow-missing-template-keys"], &[]),
    Opt::opt_value("dry-run", &["dry-run"], &[]),
    Opt::value("field-manager", &["field-manager"], &[]),
    Opt::value("filename", &["filename"], &['f']),
    Opt::value("kustomize", &["kustomize"], &['k']),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("recursive", &["recursive"], &['R']),
    Opt::value("revision", &["revision"], &[]),
    Opt::value("selector", &["selector"], &['l']),
    Opt::flag("show-managed-fields", &["show-managed-fields"], &[]),
    Opt::value("template", &["template"], &[]),
    Opt::value("to-revision", &["to-revision"], &[]),
];
const ROLLOUT_STATUS: &[Opt] = opts![
    Opt::value("filename", &["filename"], &['f']),
    Opt::value("kustomize", &["kustomize"], &['k']),
    Opt::flag("recursive", &["recursive"], &['R']),
    Opt::value("revision", &["revision"], &[]),
    Opt::value("selector", &["selector"], &['l']),
    Opt::value("timeout", &["timeout"], &[]),
    Opt::flag("watch", &["watch"], &['w']),
];
const SCALE: &[Opt] = opts![
    Opt::flag("all", &["all"], &[]),
    Opt::flag("allow-missing-template-keys", &["allow-missing-template-keys"], &[]),
    Opt::value("current-replicas", &["current-replicas"], &[]),
    Opt::opt_value("dry-run", &["dry-run"], &[]),
    Opt::value("filename", &["filename"], &['f']),
    Opt::value("kustomize", &["kustomize"], &['k']),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("recursive", &["recursive"], &['R']),
    Opt::value("replicas", &["replicas"], &[]),
    Opt::value("resource-version", &["resource-version"], &[]),
    Opt::value("selector", &["selector"], &['l']),
    Opt::flag("show-managed-fields", &["show-managed-fields"], &[]),
    Opt::value("template", &["template"], &[]),
    Opt::value("timeout", &["timeout"], &[]),
];
const APPLY: &[Opt] = opts![
    Opt::flag("all", &["all"], &[]),
    Opt::flag("allow-missing-template-keys", &["allow-missing-template-keys"], &[]),
    Opt::opt_value("cascade", &["cascade"], &[]),
    Opt::opt_value("dry-run", &["dry-run"], &[]),
    Opt::value("field-manager", &["field-manager"], &[]),
    Opt::value("filename", &["filename"], &['f']),
    Opt::flag("force", &["force"], &[]),
    Opt::flag("force-conflicts", &["force-conflicts"], &[]),
    Opt::value("grace-period", &["grace-period"], &[]),
    Opt::value("kustomize", &["kustomize"], &['k']),
    Opt::flag("openapi-patch", &["openapi-patch"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("overwrite", &["overwrite"], &[]),
    Opt::flag("prune", &["prune"], &[]),
    Opt::value("prune-allowlist", &["prune-allowlist"], &[]),
    Opt::flag("recursive", &["recursive"], &['R']),
    Opt::value("selector", &["selector"], &['l']),
    Opt::flag("server-side", &["server-side"], &[]),
    Opt::flag("show-managed-fields", &["show-managed-fields"], &[]),
    Opt::value("template", &["template"], &[]),
    Opt::value("timeout", &["timeout"], &[]),
    Opt::opt_value("validate", &["validate"], &[]),
    Opt::flag("wait", &["wait"], &[]),
];
const PATCH: &[Opt] = opts![
    Opt::flag("allow-missing-template-keys", &["allow-missing-template-keys"], &[]),
    Opt::opt_value("dry-run", &["dry-run"], &[]),
    Opt::value("field-manager", &["field-manager"], &[]),
    Opt::value("filename", &["filename"], &['f']),
    Opt::value("kustomize", &["kustomize"], &['k']),
    Opt::flag("local", &["local"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::value("patch", &["patch"], &['p']),
    Opt::value("patch-file", &["patch-file"], &[]),
    Opt::flag("recursive", &["recursive"], &['R']),
    Opt::flag("show-managed-fields", &["show-managed-fields"], &[]),
    Opt::value("subresource", &["subresource"], &[]),
    Opt::value("template", &["template"], &[]),
    Opt::value("type", &["type"], &[]),
];
const SET_IMAGE: &[Opt] = opts![
    Opt::flag("all", &["all"], &[]),
    Opt::flag("allow-missing-template-keys", &["allow-missing-template-keys"], &[]),
    Opt::opt_value("dry-run", &["dry-run"], &[]),
    Opt::value("field-manager", &["field-manager"], &[]),
    Opt::value("filename", &["filename"], &['f']),
    Opt::value("kustomize", &["kustomize"], &['k']),
    Opt::flag("local", &["local"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("recursive", &["recursive"], &['R']),
    Opt::value("selector", &["selector"], &['l']),
    Opt::flag("show-managed-fields", &["show-managed-fields"], &[]),
    Opt::value("template", &["template"], &[]),
];
const SET_ENV: &[Opt] = opts![
    Opt::flag("all", &["all"], &[]),
    Opt::flag("allow-missing-template-keys", &["allow-missing-template-keys"], &[]),
    Opt::value("containers", &["containers"], &['c']),
    Opt::opt_value("dry-run", &["dry-run"], &[]),
    Opt::value("env", &["env"], &['e']),
    Opt::value("field-manager", &["field-manager"], &[]),
    Opt::value("filename", &["filename"], &['f']),
    Opt::value("from", &["from"], &[]),
    Opt::value("keys", &["keys"], &[]),
    Opt::value("kustomize", &["kustomize"], &['k']),
    Opt::flag("list", &["list"], &[]),
    Opt::flag("local", &["local"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("overwrite", &["overwrite"], &[]),
    Opt::value("prefix", &["prefix"], &[]),
    Opt::flag("recursive", &["recursive"], &['R']),
    Opt::flag("resolve", &["resolve"], &[]),
    Opt::value("selector", &["selector"], &['l']),
    Opt::flag("show-managed-fields", &["show-managed-fields"], &[]),
    Opt::value("template", &["template"], &[]),
];
const SET_RESOURCES: &[Opt] = opts![
    Opt::flag("all", &["all"], &[]),
    Opt::flag("allow-missing-template-keys", &["allow-missing-template-keys"], &[]),
    Opt::value("containers", &["containers"], &['c']),
    Opt::opt_value("dry-run", &["dry-run"], &[]),
    Opt::value("field-manager", &["field-manager"], &[]),
    Opt::value("filename", &["filename"], &['f']),
    Opt::value("kustomize", &["kustomize"], &['k']),
    Opt::value("limits", &["limits"], &[]),
    Opt::flag("local", &["local"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("recursive", &["recursive"], &['R']),
    Opt::value("requests", &["requests"], &[]),
    Opt::value("selector", &["selector"], &['l']),
    Opt::flag("show-managed-fields", &["show-managed-fields"], &[]),
    Opt::value("template", &["template"], &[]),
];
const EXEC: &[Opt] = opts![
    Opt::value("container", &["container"], &['c']),
    Opt::value("filename", &["filename"], &['f']),
    Opt::value("pod-running-timeout", &["pod-running-timeout"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("stdin", &["stdin"], &['i']),
    Opt::flag("tty", &["tty"], &['t']),
];
const ATTACH: &[Opt] = opts![
    Opt::value("container", &["container"], &['c']),
    Opt::value("pod-running-timeout", &["pod-running-timeout"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("stdin", &["stdin"], &['i']),
    Opt::flag("tty", &["tty"], &['t']),
];
const CP: &[Opt] = opts![
    Opt::value("container", &["container"], &['c']),
    Opt::flag("no-preserve", &["no-preserve"], &[]),
    Opt::value("retries", &["retries"], &[]),
];
const PORT_FORWARD: &[Opt] = opts![
    Opt::value("address", &["address"], &[]),
    Opt::value("pod-running-timeout", &["pod-running-timeout"], &[]),
];
const DELETE: &[Opt] = opts![
    Opt::flag("all", &["all"], &[]),
    Opt::flag("all-namespaces", &["all-namespaces"], &['A']),
    Opt::opt_value("cascade", &["cascade"], &[]),
    Opt::opt_value("dry-run", &["dry-run"], &[]),
    Opt::value("field-selector", &["field-selector"], &[]),
    Opt::value("filename", &["filename"], &['f']),
    Opt::flag("force", &["force"], &[]),
    Opt::value("grace-period", &["grace-period"], &[]),
    Opt::flag("ignore-not-found", &["ignore-not-found"], &[]),
    Opt::flag("interactive", &["interactive"], &['i']),
    Opt::value("kustomize", &["kustomize"], &['k']),
    Opt::flag("now", &["now"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::value("raw", &["raw"], &[]),
    Opt::flag("recursive", &["recursive"], &['R']),
    Opt::value("selector", &["selector"], &['l']),
    Opt::value("timeout", &["timeout"], &[]),
    Opt::flag("wait", &["wait"], &[]),
];
const CORDON: &[Opt] = opts![
    Opt::opt_value("dry-run", &["dry-run"], &[]),
    Opt::value("selector", &["selector"], &['l']),
];
const API_RESOURCES: &[Opt] = opts![
    Opt::value("api-group", &["api-group"], &[]),
    Opt::flag("cached", &["cached"], &[]),
    Opt::value("categories", &["categories"], &[]),
    Opt::flag("namespaced", &["namespaced"], &[]),
    Opt::flag("no-headers", &["no-headers"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::value("sort-by", &["sort-by"], &[]),
    Opt::value("verbs", &["verbs"], &[]),
];
const VERSION: &[Opt] = opts![Opt::flag("client", &["client"], &[]), Opt::value("output", &["output"], &['o']),];
const EXPLAIN: &[Opt] = opts![
    Opt::value("api-version", &["api-version"], &[]),
    Opt::value("output", &["output"], &[]),
    Opt::flag("recursive", &["recursive"], &[]),
];
const CONFIG_VIEW: &[Opt] = opts![
    Opt::flag("allow-missing-template-keys", &["allow-missing-template-keys"], &[]),
    Opt::flag("flatten", &["flatten"], &[]),
    Opt::flag("merge", &["merge"], &[]),
    Opt::flag("minify", &["minify"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("raw", &["raw"], &[]),
    Opt::flag("show-managed-fields", &["show-managed-fields"], &[]),
    Opt::value("template", &["template"], &[]),
];
const GET_CONTEXTS: &[Opt] = opts![
    Opt::flag("no-headers", &["no-headers"], &[]),
    Opt::value("output", &["output"], &['o']),
];
const WAIT: &[Opt] = opts![
    Opt::flag("all", &["all"], &[]),
    Opt::flag("all-namespaces", &["all-namespaces"], &['A']),
    Opt::flag("allow-missing-template-keys", &["allow-missing-template-keys"], &[]),
    Opt::value("field-selector", &["field-selector"], &[]),
    Opt::value("filename", &["filename"], &['f']),
    Opt::value("for", &["for"], &[]),
    Opt::flag("local", &["local"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("recursive", &["recursive"], &['R']),
    Opt::value("selector", &["selector"], &['l']),
    Opt::flag("show-managed-fields", &["show-managed-fields"], &[]),
    Opt::value("template", &["template"], &[]),
    Opt::value("timeout", &["timeout"], &[]),
];
const NONE: &[Opt] = &[];

/// The command tree (1.31). Commands with no option table are known by name only: the policy
/// never allows them, so their options need not be read.
const TREE: &[Cmd] = &[
    Cmd::leaf(&["get"], GET),
    Cmd::leaf(&["describe"], DESCRIBE),
    Cmd::leaf(&["logs"], LOGS),
    Cmd::group(
        &["top"],
        &[
            Cmd::leaf(&["pod", "pods", "po"], TOP_POD),
            Cmd::leaf(&["node", "nodes", "no"], TOP_NODE),
        ],
    ),
    Cmd::leaf(&["events", "event", "ev"], EVENTS),
    Cmd::group(
        &["auth"],
        &[
            Cmd::leaf(&["can-i"], CAN_I),
            Cmd::leaf(&["whoami"], PRINT),
            Cmd::named(&["reconcile"]),
        ],
    ),
    Cmd::leaf(&["api-resources"], API_RESOURCES),
    Cmd::leaf(&["api-versions"], NONE),
    Cmd::leaf(&["cluster-info"], NONE),
    Cmd::leaf(&["version"], VERSION),
    Cmd::leaf(&["explain"], EXPLAIN),
    Cmd::leaf(&["completion"], NONE),
    Cmd::leaf(&["wait"], WAIT),
    Cmd::group(
        &["config"],
        &[
            Cmd::leaf(&["view"], CONFIG_VIEW),
            Cmd::leaf(&["get-contexts"], GET_CONTEXTS),
            Cmd::leaf(&["get-clusters"], NONE),
            Cmd::leaf(&["get-users"], NONE),
            Cmd::leaf(&["current-context"], NONE),
            Cmd::named(&["use-context", "use"]),
            Cmd::named(&["set-context"]),
            Cmd::named(&["set-cluster"]),
            Cmd::named(&["set-credentials"]),
            Cmd::named(&["delete-context"]),
            Cmd::named(&["delete-cluster"]),
            Cmd::named(&["delete-user"]),
            Cmd::named(&["rename-context"]),
            Cmd::named(&["set"]),
            Cmd::named(&["unset"]),
        ],
    ),
    Cmd::group(
        &["rollout"],
        &[
            Cmd::leaf(&["restart"], ROLLOUT),
            Cmd::leaf(&["status"], ROLLOUT_STATUS),
            Cmd::leaf(&["history"], ROLLOUT),
            Cmd::leaf(&["undo"], ROLLOUT),
            Cmd::leaf(&["pause"], ROLLOUT),
            Cmd::leaf(&["resume"], ROLLOUT),
        ],
    ),
    Cmd::leaf(&["scale"], SCALE),
    Cmd::leaf(&["apply"], APPLY),
    Cmd::leaf(&["patch"], PATCH),
    Cmd::group(
        &["set"],
        &[
            Cmd::leaf(&["image"], SET_IMAGE),
            Cmd::leaf(&["env"], SET_ENV),
            Cmd::leaf(&["resources"], SET_RESOURCES),
            Cmd::named(&["selector"]),
            Cmd::named(&["serviceaccount", "sa"]),
            Cmd::named(&["subject"]),
        ],
    ),
    Cmd::leaf(&["exec"], EXEC),
    Cmd::leaf(&["attach"], ATTACH),
    Cmd::leaf(&["cp"], CP),
    Cmd::leaf(&["port-forward"], PORT_FORWARD),
    Cmd::leaf(&["delete"], DELETE),
    Cmd::named(&["drain"]),
    Cmd::leaf(&["cordon"], CORDON),
    Cmd::leaf(&["uncordon"], CORDON),
    Cmd::named(&["taint"]),
    Cmd::named(&["create"]),
    Cmd::named(&["expose"]),
    Cmd::named(&["run"]),
    Cmd::named(&["edit"]),
    Cmd::named(&["autoscale"]),
    Cmd::named(&["certificate"]),
    Cmd::named(&["proxy"]),
    Cmd::named(&["debug"]),
    Cmd::named(&["diff"]),
    Cmd::named(&["replace"]),
    Cmd::named(&["kustomize"]),
    Cmd::named(&["label"]),
    Cmd::named(&["annotate"]),
    Cmd::named(&["plugin"]),
    Cmd::named(&["alpha"]),
    Cmd::named(&["options"]),
    Cmd::named(&["help"]),
];

pub fn parse(args: &[String]) -> Invocation {
    Invocation::new(Tool::Kubectl, args).understood(parse_call(args).map_err(|problem| format!("kubectl: {problem}")))
}

fn parse_call(args: &[String]) -> Result<Understood, String> {
    let found = cobra::find(args, GLOBAL, TREE, &cobra::PFLAG)?;
    let mut claims = Vec::new();
    let mut files = Vec::new();
    let (mut action, parsed) = match found {
        Found::Unknown(word) => return Ok((vec![Action::new(word)], claims, files)),
        Found::Root(p) => (Action::new("help"), p),
        Found::Cmd { path, parsed: None, .. } => {
            // Known by name only: its verb, unread (the policy never allows these). `help X` is help.
            let verb = path.join(" ");
            let verb = if verb == "help" || verb == "options" {
                "help".to_string()
            } else {
                verb
            };
            return Ok((vec![Action::new(verb)], claims, files));
        }
        Found::Cmd {
            path,
            parsed: Some(p),
            operands,
            after_dash,
        } => {
            let verb = path.join(" ");
            let a = command(&verb, &p, &operands, &after_dash, &mut claims, &mut files)?;
            (a, p)
        }
    };
    let mut actions = Vec::new();
    let mut connection = Vec::new();
    for f in parsed.opts() {
        match f.id.as_str() {
            "kubeconfig" => claims.push(Claim::Pinned {
                var: "KUBECONFIG",
                value: f.value.clone().unwrap_or_default(),
                flag: "--kubeconfig".into(),
            }),
            "cache-dir" => files.push(LocalFile::writes(
                f.value.clone().unwrap_or_default(),
                "--cache-dir",
                Access::WriteTree,
            )),
            // Marked by the flag's name only: a value may be a token.
            id if CONNECTION.contains(&id) => connection.push(format!("--{id}")),
            _ => {}
        }
    }
    // `-o go-template-file=F`, `jsonpath-file=F`, `templatefile=F` (or the bare format with
    // `--template F`) read a local file.
    if let Some(out) = parsed.last("output") {
        match out.split_once('=') {
            Some(("go-template-file" | "jsonpath-file" | "templatefile", f)) => files.push(LocalFile::read(f, "-o", false)),
            None if matches!(out, "go-template-file" | "jsonpath-file" | "templatefile") => {
                if let Some(f) = parsed.last("template") {
                    files.push(LocalFile::read(f, "--template", false));
                }
            }
            _ => {}
        }
    }
    if parsed.last("profile").is_some_and(|p| p != "none") {
        let out = parsed.last("profile-output").unwrap_or("profile.pprof");
        files.push(LocalFile::write(out, "--profile-output"));
    }
    if parsed.has("help") {
        action = Action::new("help");
    }
    actions.push(action);
    if !connection.is_empty() {
        let mut a = Action::new(CONNECTION_VERB);
        for c in connection {
            a.add(c);
        }
        actions.push(a);
    }
    Ok((actions, claims, files))
}

/// One resource argument as the API server reads it: its type (lower case, as the REST mapper
/// compares it) and its name, when it has one.
fn resource_words(operands: &[String]) -> Vec<(String, Option<String>)> {
    // `TYPE/NAME …` (every word has a slash) or `TYPE[,TYPE] [NAME …]`.
    if operands.iter().any(|o| o.contains('/')) {
        return operands
            .iter()
            .map(|o| match o.split_once('/') {
                Some((t, n)) => (t.to_ascii_lowercase(), Some(n.to_string())),
                None => (o.to_ascii_lowercase(), None),
            })
            .collect();
    }
    let Some((types, names)) = operands.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for t in types.split(',') {
        if names.is_empty() {
            out.push((t.to_ascii_lowercase(), None));
        }
        for n in names {
            out.push((t.to_ascii_lowercase(), Some(n.clone())));
        }
    }
    out
}

/// The resource of a type word without its version and group (`deployments.v1.apps` →
/// `deployments`).
fn resource(t: &str) -> &str {
    t.split('.').next().unwrap_or(t)
}

/// What a `--raw` path reaches, read as the API server reads it: percent-escapes decoded once
/// (Go's URL parsing does, so `%73ecrets` is `secrets`) and any case. A path through a
/// `proxy` subresource reaches a pod's, service's or node's own HTTP endpoints, which no rule
/// here judges.
fn raw_path_marks(raw: &str, a: &mut Action) {
    let path = crate::grammar::http::percent_decode(raw).to_ascii_lowercase();
    if is_secret(&path) {
        a.add("secret");
    }
    if path.split(['/', '?']).any(|seg| seg == "proxy") {
        a.add("raw-proxy");
    }
}

fn is_secret(t: &str) -> bool {
    t.contains("secret")
}

fn is_pod(t: &str) -> bool {
    matches!(resource(t), "pod" | "pods" | "po") && group_is_core(t)
}

/// `pods`, `pods.v1`, `pods.` and `pods.v1.` are the core group; `pods.metrics.k8s.io` is not.
fn group_is_core(t: &str) -> bool {
    let mut parts = t.split('.').skip(1);
    matches!(
        (parts.next(), parts.next()),
        (None, _) | (Some(""), None) | (Some("v1"), None) | (Some("v1"), Some(""))
    )
}

/// The workload kind a restart budget is kept for: `deploy`, `deployments.apps`,
/// `Deployment.v1.apps` → `deployment`.
fn workload(t: &str) -> Option<&'static str> {
    let mut parts = t.split('.');
    let kind = parts.next()?;
    let rest: Vec<&str> = parts.collect();
    let group_ok = matches!(
        rest.as_slice(),
        [] | [""] | ["apps"] | ["apps", ""] | ["v1", "apps"] | ["v1", "apps", ""]
    );
    if !group_ok {
        return None;
    }
    match kind {
        "deploy" | "deployment" | "deployments" => Some("deployment"),
        "sts" | "statefulset" | "statefulsets" => Some("statefulset"),
        "ds" | "daemonset" | "daemonsets" => Some("daemonset"),
        _ => None,
    }
}

/// Files the command reads as instructions (`-f`, `-k`): each must be the operator's.
fn instruction_files(verb: &str, p: &Parsed, a: &mut Action, claims: &mut Vec<Claim>) {
    for f in p.all("filename") {
        let v = f.value.clone().unwrap_or_default();
        if v == "-" {
            a.add("stdin");
        } else if v.contains("://") {
            a.add("remote-file");
        } else {
            claims.push(Claim::Operator {
                path: v,
                flag: format!("{verb} {}", f.written),
                tree: p.has("recursive"),
                optional: false,
            });
        }
    }
    for f in p.all("kustomize") {
        let v = f.value.clone().unwrap_or_default();
        if v.contains("://") || v.starts_with("github.com/") || v.starts_with("git@") {
            a.add("remote-file");
        } else {
            claims.push(Claim::Operator {
                path: v,
                flag: format!("{verb} {}", f.written),
                tree: true,
                optional: false,
            });
        }
    }
}

fn command(
    verb: &str,
    p: &Parsed,
    operands: &[String],
    after_dash: &[String],
    claims: &mut Vec<Claim>,
    files: &mut Vec<LocalFile>,
) -> Result<Action, String> {
    let mut a = Action::new(verb);
    match verb {
        "get" => {
            if p.all("filename").len() + p.all("kustomize").len() > 0 {
                a.add("from-file");
            }
            if let Some(raw) = p.last("raw") {
                a.add("raw");
                raw_path_marks(raw, &mut a);
            }
            if resource_words(operands).iter().any(|(t, _)| is_secret(t)) {
                a.add("secret");
            }
        }
        "describe" => instruction_files(verb, p, &mut a, claims),
        "rollout restart" | "rollout undo" | "rollout pause" | "rollout resume" => {
            instruction_files(verb, p, &mut a, claims);
            if verb == "rollout restart" {
                a.targets = restart_targets(p, operands);
            }
        }
        "scale" | "apply" | "patch" | "set image" | "set env" | "set resources" | "exec" => {
            instruction_files(verb, p, &mut a, claims);
            if verb == "apply" && p.has("prune") {
                a.add("prune");
            }
            if verb == "set env" && p.has("resolve") {
                a.add("resolve");
            }
            if let Some(f) = p.all("patch-file").last() {
                claims.push(Claim::Operator {
                    path: f.value.clone().unwrap_or_default(),
                    flag: "patch --patch-file".into(),
                    tree: false,
                    optional: false,
                });
            }
            if verb == "exec" && after_dash.is_empty() && operands.len() > 1 {
                // `kubectl exec pod cmd` without `--` was removed; kubectl refuses it.
                return Err("exec needs `--` before the command".into());
            }
        }
        "delete" => {
            let words = resource_words(operands);
            let from_files = p.all("filename").len() + p.all("kustomize").len() > 0;
            if p.last("raw").is_some() {
                a.add("raw");
            }
            if !from_files && !words.is_empty() && words.iter().all(|(t, _)| is_pod(t)) && p.last("raw").is_none() {
                a = Action::new("delete pod");
            }
        }
        "cordon" | "uncordon" if p.last("selector").is_some() || operands.is_empty() => a.add("selector"),
        "cp" => {
            if operands.len() != 2 {
                return Err("cp takes a source and a destination".into());
            }
            let (src, dst) = (&operands[0], &operands[1]);
            match (is_remote(src), is_remote(dst)) {
                (true, false) => files.push(LocalFile::writes(dst.clone(), "cp", Access::WriteTree)),
                (false, true) => files.push(LocalFile::read(src.clone(), "cp", false)),
                _ => return Err("cp copies between a pod and a local path".into()),
            }
        }
        "config view" if p.has("raw") => a.add("raw-config"),
        _ => {}
    }
    Ok(a)
}

/// kubectl cp's `[namespace/]pod:path` (a word with a colon before any slash-free local path).
fn is_remote(spec: &str) -> bool {
    match spec.split_once(':') {
        Some((pod, _)) => !pod.is_empty() && !spec.starts_with('/') && !spec.starts_with('.'),
        None => false,
    }
}

fn restart_targets(p: &Parsed, operands: &[String]) -> Vec<Target> {
    if p.has("all") || p.last("selector").is_some() || !p.all("filename").is_empty() || !p.all("kustomize").is_empty() {
        return vec![Target::All("a rollout restart by selector, --all or file names no workload".into())];
    }
    let words = resource_words(operands);
    if words.is_empty() {
        return vec![Target::All("a rollout restart naming no workload".into())];
    }
    words
        .into_iter()
        .map(|(t, n)| match (workload(&t), n) {
            (Some(kind), Some(name)) => Target::Named { kind, name, host: None },
            (_, None) => Target::All(format!("every {t} in the namespace")),
            (None, Some(n)) => Target::All(format!("{t}/{n}, which is not a deployment, statefulset or daemonset")),
        })
        .collect()
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

    fn targets(args: &[&str]) -> Vec<Target> {
        parse(&argv(args)).actions.remove(0).targets
    }

    #[test]
    fn reads_are_their_command() {
        assert_eq!(verbs(&["get", "pods", "-A"]), vec!["get"]);
        assert_eq!(verbs(&["-n", "prod", "get", "deploy", "api", "-o", "yaml"]), vec!["get"]);
        assert_eq!(verbs(&["top", "nodes"]), vec!["top node"]);
        assert_eq!(verbs(&["top", "po", "-A"]), vec!["top pod"]);
        assert_eq!(verbs(&["auth", "can-i", "get", "pods"]), vec!["auth can-i"]);
        assert_eq!(verbs(&["logs", "-f", "api-0", "--tail", "50"]), vec!["logs"]);
    }

    #[test]
    fn a_secret_is_marked_whatever_its_spelling() {
        for args in [
            &["get", "secrets"][..],
            &["get", "secret", "db"],
            &["get", "Secret/db", "-o", "yaml"],
            &["get", "secrets.v1.", "-o", "json"],
            &["get", "configmaps,secrets"],
            &["get", "--raw", "/api/v1/namespaces/x/secrets/db"],
            &["get", "-o", "jsonpath={.data}", "SECRETS"],
        ] {
            assert!(verbs(args)[0].contains("secret"), "{args:?}");
        }
        assert_eq!(verbs(&["get", "configmaps"]), vec!["get"]);
    }

    #[test]
    fn rollout_restart_names_each_workload_as_its_kind() {
        let d = |k: &'static str, n: &str| Target::Named {
            kind: k,
            name: n.into(),
            host: None,
        };
        assert_eq!(targets(&["rollout", "restart", "deploy/api"]), vec![d("deployment", "api")]);
        assert_eq!(
            targets(&["rollout", "restart", "deployment.apps/api"]),
            vec![d("deployment", "api")]
        );
        assert_eq!(
            targets(&["rollout", "restart", "Deployments.v1.apps", "api", "web"]),
            vec![d("deployment", "api"), d("deployment", "web")]
        );
        assert_eq!(targets(&["rollout", "restart", "sts", "db"]), vec![d("statefulset", "db")]);
        assert_eq!(
            targets(&["-n", "x", "rollout", "restart", "ds/agent"]),
            vec![d("daemonset", "agent")]
        );
        assert!(matches!(targets(&["rollout", "restart", "deploy"])[0], Target::All(_)));
        assert!(matches!(
            targets(&["rollout", "restart", "deploy", "-l", "app=x"])[0],
            Target::All(_)
        ));
        assert!(matches!(
            targets(&["rollout", "restart", "deployment.example.com/api"])[0],
            Target::All(_)
        ));
    }

    #[test]
    fn delete_of_pods_only_is_delete_pod() {
        assert_eq!(verbs(&["delete", "pod", "api-0"]), vec!["delete pod"]);
        assert_eq!(verbs(&["delete", "po/api-0", "pods/api-1", "--force"]), vec!["delete pod"]);
        assert_eq!(verbs(&["delete", "pod,svc", "api"]), vec!["delete"]);
        assert_eq!(verbs(&["delete", "deploy", "api"]), vec!["delete"]);
        assert_eq!(verbs(&["delete", "-f", "pod.yaml"]), vec!["delete"]);
        assert_eq!(verbs(&["delete", "pods.metrics.k8s.io", "x"]), vec!["delete"]);
    }

    #[test]
    fn connection_flags_add_their_own_action() {
        assert_eq!(
            verbs(&["get", "pods", "--context", "prod"]),
            vec!["get", "--connection [--context]"]
        );
        assert_eq!(verbs(&["--token=abc", "get", "pods"]), vec!["get", "--connection [--token]"]);
        let inv = parse(&argv(&["--kubeconfig", "/tmp/k", "get", "pods"]));
        assert_eq!(
            inv.claims,
            vec![Claim::Pinned {
                var: "KUBECONFIG",
                value: "/tmp/k".into(),
                flag: "--kubeconfig".into()
            }]
        );
    }

    #[test]
    fn an_unknown_command_is_a_plugin_and_unknown_flags_are_problems() {
        assert_eq!(verbs(&["ctx", "prod"]), vec!["ctx"]);
        assert!(parse(&argv(&["get", "pods", "--bogus"])).problem.is_some());
    }

    #[test]
    fn apply_files_must_be_the_operators() {
        let inv = parse(&argv(&["apply", "-f", "/srv/k8s/api.yaml"]));
        assert_eq!(
            inv.claims,
            vec![Claim::Operator {
                path: "/srv/k8s/api.yaml".into(),
                flag: "apply -f".into(),
                tree: false,
                optional: false
            }]
        );
        assert_eq!(verbs(&["apply", "-f", "-"]), vec!["apply [stdin]"]);
        assert_eq!(verbs(&["apply", "--prune", "-f", "x.yaml", "-l", "a=b"]), vec!["apply [prune]"]);
    }

    #[test]
    fn cp_declares_its_local_side() {
        let inv = parse(&argv(&["cp", "api-0:/etc/x", "out"]));
        assert_eq!(inv.files, vec![LocalFile::writes("out", "cp", Access::WriteTree)]);
        let inv = parse(&argv(&["cp", "in.txt", "prod/api-0:/tmp/in.txt"]));
        assert_eq!(inv.files, vec![LocalFile::read("in.txt", "cp", false)]);
        let inv = parse(&argv(&["get", "pods", "-o", "go-template-file=/etc/shadow"]));
        assert_eq!(inv.files, vec![LocalFile::read("/etc/shadow", "-o", false)]);
        let inv = parse(&argv(&["get", "pods", "-o", "jsonpath-file", "--template", "t.txt"]));
        assert_eq!(inv.files, vec![LocalFile::read("t.txt", "--template", false)]);
    }

    #[test]
    fn cordon_by_selector_is_marked() {
        assert_eq!(verbs(&["cordon", "node-1"]), vec!["cordon"]);
        assert_eq!(verbs(&["cordon", "-l", "role=worker"]), vec!["cordon [selector]"]);
    }
}
