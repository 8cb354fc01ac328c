//! docker and `docker compose`: argv -> [`Invocation`], as the docker 28 CLI and the compose v2
//! plugin parse it (cobra + pflag; `docker/cli` `cli/cobra.go`, `docker/compose` `cmd/compose`).
//!
//! What this grammar owns:
//!
//! - **Root options first.** `-H/--host`, `-c/--context`, `--config`, `-l/--log-level`, `-D`,
//!   `--tls*` are parsed non-interspersed before the subcommand (`HandleGlobalFlags`); after the
//!   subcommand they are unknown options. `-H`, `--context` and `--config` become
//!   [`Claim::Pinned`] (the operator's pinned endpoint or nothing). The `--tls*` options would
//!   override the TLS settings of the pinned daemon: they add the action [`TLS_VERB`], which the
//!   policy never allows.
//! - **One verb per operation.** Management groups and the legacy top-level names resolve to one
//!   canonical verb: `container restart` = `restart`, `container ls|list|ps` = `ps`,
//!   `image ls|list` = `images`, `image rm|remove` = `rmi`, `image build` = `builder build` =
//!   `build`, `system events` = `events`, `system info` = `info`. Verbs with no legacy name keep
//!   their group (`image prune`, `network ls`, `volume rm`).
//! - **Options before the operand** for `run`, `create`, `exec`, `compose run`, `compose exec`
//!   (`SetInterspersed(false)`): `docker run alpine --privileged` is not privileged. On `run` and
//!   `create`, `-h` is `--hostname`, not help.
//! - **compose**: project options (`-f`, `-p`, `--project-directory`, `--env-file`, `--profile`,
//!   …) sit between `compose` and its subcommand; `--dry-run` may also follow it. A compose file
//!   read from stdin or fetched from a remote (git, `oci://`) adds the action [`COMPOSE_STDIN`] or
//!   [`COMPOSE_REMOTE`], never allowed.
//! - **Operands are names.** The client pastes operands into API paths and cleans the result
//!   (`path.Join`), so `network inspect ../swarm` is `GET /swarm`: every operand that reaches a
//!   path must be a name or id, or an image reference where one is meant (`check_operands`).
//! - **Plugins and typos**: any other first word (`buildx`, `scan`, `ai`, …) runs a CLI plugin, so
//!   its verb is the word typed and the policy does not classify it. `compose` is the only plugin
//!   this grammar knows.
//!
//! Marks, for the policy's `when:`: `privileged`, `host-namespace` (`--pid/--ipc/--uts/--userns/
//! --cgroupns/--network host`), `container-namespace` (joining another container's namespace,
//! which may itself be the host's), `cap-add`, `security-opt` (anything but
//! `no-new-privileges`), `device`, `volumes-from`, `docker-socket` (`--use-api-socket`),
//! `bind-mount` (any host path) and `host-mount` (one that exposes a [`PROTECTED`] path, or
//! cannot be judged), `volume-opt` (a local volume with driver options binds any host path),
//! `volumes` (`rm -v`, `compose down -v`), `rmi`, `attach` and `checkpoint` (`start`), `ssh` and
//! `push` (`compose build`), `output-file` (`compose config -o`), `down-project` (`compose
//! wait`), and for `compose up`: `all-services`, `attached` (no `-d`/`--wait`; `--watch` cannot
//! be detached), `build`, `force-recreate`, `renew-anon-volumes`, `remove-orphans`, `scale`,
//! `pull`.
//!
//! What it cannot see: files. Bind sources are judged as written: a symlink the caller planted
//! (`/tmp/l -> /`) passes the path check, and a root container can leave a setuid file in any
//! writable bind, so the policy refuses every host bind, and [`PROTECTED`] names the paths
//! that stay refused if an operator relaxes that. A relative bind source is resolved against a
//! cwd the caller chooses, so it counts as a host mount. The contents of compose files, env
//! files and Dockerfiles (which may ask for `privileged: true` or any bind) are invisible here;
//! for `compose up` the action carries the options that choose its files, and the gate reads
//! them (`crate::compose::file_marks`: `compose-escalates`, `compose-unread`).
//! Unknown options are refused rather than guessed, so flags added by a newer client, and the
//! buildx flags of `docker build` when buildx is the default builder, are refused until added.

use crate::grammar::opts::{self, Opt, Parsed, Style};
use crate::grammar::{Access, Action, Claim, ComposeFiles, Invocation, LocalFile, Project, Target};
use crate::tool::Tool;

/// Nothing to insert: the hardening for docker is the environment and the pinned endpoint.
pub const PREPEND: &[&str] = &[];

/// The verb added when the call overrides TLS settings (`--tls`, `--tlsverify`, `--tlscacert`,
/// `--tlscert`, `--tlskey`).
pub const TLS_VERB: &str = "--tls";
/// The verb added when compose reads its project file (or an env file) from stdin.
pub const COMPOSE_STDIN: &str = "compose -f -";
/// The verb added when compose loads its project from a remote (git URL, `oci://`).
pub const COMPOSE_REMOTE: &str = "compose -f remote";

/// Host paths no container may bind, nor any directory above one of them (binding `/var`
/// exposes `/var/run/docker.sock`): the host root, its configuration and credentials, kernel
/// interfaces, system binaries and libraries, cron, and the container runtimes' sockets and
/// state (`/run` and `/var/run` hold `docker.sock` and `containerd`). A docker data root moved
/// elsewhere is not known here.
pub const PROTECTED: &[&str] = &[
    "/etc",
    "/root",
    "/home",
    "/boot",
    "/dev",
    "/proc",
    "/sys",
    "/run",
    "/var/run",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/var/lib/docker",
    "/var/lib/containerd",
    "/var/lib/kubelet",
    "/var/spool/cron",
];

// ---------------------------------------------------------------------------------------------
// Option tables (from `docker <cmd> --help` of the 28.2 client, hidden flags from the source)

/// Root options (`cli/flags/options.go` `InstallFlags`, `cmd/docker/docker.go`).
const GLOBAL: &[Opt] = &[
    Opt::value("host", &["host"], &['H']),
    Opt::value("context", &["context"], &['c']),
    Opt::value("config", &["config"], &[]),
    Opt::value("log-level", &["log-level"], &['l']),
    Opt::flag("debug", &["debug"], &['D']),
    Opt::flag("tls", &["tls"], &[]),
    Opt::flag("tlsverify", &["tlsverify"], &[]),
    Opt::value("tlscacert", &["tlscacert"], &[]),
    Opt::value("tlscert", &["tlscert"], &[]),
    Opt::value("tlskey", &["tlskey"], &[]),
    Opt::flag("version", &["version"], &['v']),
    Opt::flag("help", &["help"], &['h']),
];

/// cobra's help flag; on `run`/`create` `-h` is `--hostname`, so only the long form.
const HELP: Opt = Opt::flag("help", &["help"], &['h']);
const HELP_LONG: Opt = Opt::flag("help", &["help"], &[]);

const NONE: &[Opt] = &[];
const FORMAT_F: &[Opt] = &[Opt::value("format", &["format"], &['f'])];
const FORMAT_SIZE: &[Opt] = &[Opt::value("format", &["format"], &['f']), Opt::flag("size", &["size"], &['s'])];
const FORMAT_PRETTY: &[Opt] = &[Opt::value("format", &["format"], &['f']), Opt::flag("pretty", &["pretty"], &[])];
const LIST: &[Opt] = &[
    Opt::value("filter", &["filter"], &['f']),
    Opt::value("format", &["format"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
];
const NO_TRUNC: &[Opt] = &[Opt::flag("no-trunc", &["no-trunc"], &[])];
const TASKS: &[Opt] = &[
    Opt::flag("no-resolve", &["no-resolve"], &[]),
    Opt::flag("no-trunc", &["no-trunc"], &[]),
];
const FORCE: &[Opt] = &[Opt::flag("force", &["force"], &['f'])];
const OUTPUT: &[Opt] = &[Opt::value("output", &["output"], &['o'])];
const PLATFORM: &[Opt] = &[Opt::value("platform", &["platform"], &[])];
const CHECKPOINT_DIR: &[Opt] = &[Opt::value("checkpoint-dir", &["checkpoint-dir"], &[])];
/// `restart` and `stop`; `--time` is the deprecated, hidden spelling of `--timeout`.
const STOP: &[Opt] = &[
    Opt::value("signal", &["signal"], &['s']),
    Opt::value("timeout", &["timeout", "time"], &['t']),
];

const ATTACH_OPTS: &[Opt] = &[
    Opt::value("detach-keys", &["detach-keys"], &[]),
    Opt::flag("no-stdin", &["no-stdin"], &[]),
    Opt::flag("sig-proxy", &["sig-proxy"], &[]),
];
const COMMIT_OPTS: &[Opt] = &[
    Opt::value("author", &["author"], &['a']),
    Opt::value("change", &["change"], &['c']),
    Opt::value("message", &["message"], &['m']),
    Opt::flag("pause", &["pause"], &['p']),
];
const CP_OPTS: &[Opt] = &[
    Opt::flag("archive", &["archive"], &['a']),
    Opt::flag("follow-link", &["follow-link"], &['L']),
    Opt::flag("quiet", &["quiet"], &['q']),
];
const EXEC_OPTS: &[Opt] = &[
    Opt::flag("detach", &["detach"], &['d']),
    Opt::value("detach-keys", &["detach-keys"], &[]),
    Opt::value("env", &["env"], &['e']),
    Opt::value("env-file", &["env-file"], &[]),
    Opt::flag("interactive", &["interactive"], &['i']),
    Opt::flag("privileged", &["privileged"], &[]),
    Opt::flag("tty", &["tty"], &['t']),
    Opt::value("user", &["user"], &['u']),
    Opt::value("workdir", &["workdir"], &['w']),
];
const KILL_OPTS: &[Opt] = &[Opt::value("signal", &["signal"], &['s'])];
const LOGS_OPTS: &[Opt] = &[
    Opt::flag("details", &["details"], &[]),
    Opt::flag("follow", &["follow"], &['f']),
    Opt::value("since", &["since"], &[]),
    Opt::value("tail", &["tail"], &['n']),
    Opt::flag("timestamps", &["timestamps"], &['t']),
    Opt::value("until", &["until"], &[]),
];
const PS_OPTS: &[Opt] = &[
    Opt::flag("all", &["all"], &['a']),
    Opt::value("filter", &["filter"], &['f']),
    Opt::value("format", &["format"], &[]),
    Opt::value("last", &["last"], &['n']),
    Opt::flag("latest", &["latest"], &['l']),
    Opt::flag("no-trunc", &["no-trunc"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("size", &["size"], &['s']),
];
const RM_OPTS: &[Opt] = &[
    Opt::flag("force", &["force"], &['f']),
    Opt::flag("link", &["link"], &['l']),
    Opt::flag("volumes", &["volumes"], &['v']),
];
const START_OPTS: &[Opt] = &[
    Opt::flag("attach", &["attach"], &['a']),
    Opt::value("checkpoint", &["checkpoint"], &[]),
    Opt::value("checkpoint-dir", &["checkpoint-dir"], &[]),
    Opt::value("detach-keys", &["detach-keys"], &[]),
    Opt::flag("interactive", &["interactive"], &['i']),
];
const STATS_OPTS: &[Opt] = &[
    Opt::flag("all", &["all"], &['a']),
    Opt::value("format", &["format"], &[]),
    Opt::flag("no-stream", &["no-stream"], &[]),
    Opt::flag("no-trunc", &["no-trunc"], &[]),
];
/// `update`; `--kernel-memory` is hidden.
const UPDATE_OPTS: &[Opt] = &[
    Opt::value("blkio-weight", &["blkio-weight"], &[]),
    Opt::value("cpu-period", &["cpu-period"], &[]),
    Opt::value("cpu-quota", &["cpu-quota"], &[]),
    Opt::value("cpu-rt-period", &["cpu-rt-period"], &[]),
    Opt::value("cpu-rt-runtime", &["cpu-rt-runtime"], &[]),
    Opt::value("cpu-shares", &["cpu-shares"], &['c']),
    Opt::value("cpus", &["cpus"], &[]),
    Opt::value("cpuset-cpus", &["cpuset-cpus"], &[]),
    Opt::value("cpuset-mems", &["cpuset-mems"], &[]),
    Opt::value("kernel-memory", &["kernel-memory"], &[]),
    Opt::value("memory", &["memory"], &['m']),
    Opt::value("memory-reservation", &["memory-reservation"], &[]),
    Opt::value("memory-swap", &["memory-swap"], &[]),
    Opt::value("pids-limit", &["pids-limit"], &[]),
    Opt::value("restart", &["restart"], &[]),
];

/// `create` (and `run`, plus [`RUN_ONLY`]): `cli/command/container/opts.go`. Hidden aliases:
/// `--net` = `--network`, `--net-alias` = `--network-alias`, `--dns-opt` = `--dns-option`.
const CREATE_OPTS: &[Opt] = &[
    Opt::value("add-host", &["add-host"], &[]),
    Opt::value("annotation", &["annotation"], &[]),
    Opt::value("attach", &["attach"], &['a']),
    Opt::value("blkio-weight", &["blkio-weight"], &[]),
    Opt::value("blkio-weight-device", &["blkio-weight-device"], &[]),
    Opt::value("cap-add", &["cap-add"], &[]),
    Opt::value("cap-drop", &["cap-drop"], &[]),
    Opt::value("cgroup-parent", &["cgroup-parent"], &[]),
    Opt::value("cgroupns", &["cgroupns"], &[]),
    Opt::value("cidfile", &["cidfile"], &[]),
    Opt::value("cpu-count", &["cpu-count"], &[]),
    Opt::value("cpu-percent", &["cpu-percent"], &[]),
    Opt::value("cpu-period", &["cpu-period"], &[]),
    Opt::value("cpu-quota", &["cpu-quota"], &[]),
    Opt::value("cpu-rt-period", &["cpu-rt-period"], &[]),
    Opt::value("cpu-rt-runtime", &["cpu-rt-runtime"], &[]),
    Opt::value("cpu-shares", &["cpu-shares"], &['c']),
    Opt::value("cpus", &["cpus"], &[]),
    Opt::value("cpuset-cpus", &["cpuset-cpus"], &[]),
    Opt::value("cpuset-mems", &["cpuset-mems"], &[]),
    Opt::value("device", &["device"], &[]),
    Opt::value("device-cgroup-rule", &["device-cgroup-rule"], &[]),
    Opt::value("device-read-bps", &["device-read-bps"], &[]),
    Opt::value("device-read-iops", &["device-read-iops"], &[]),
    Opt::value("device-write-bps", &["device-write-bps"], &[]),
    Opt::value("device-write-iops", &["device-write-iops"], &[]),
    Opt::flag("disable-content-trust", &["disable-content-trust"], &[]),
    Opt::value("dns", &["dns"], &[]),
    Opt::value("dns-option", &["dns-option", "dns-opt"], &[]),
    Opt::value("dns-search", &["dns-search"], &[]),
    Opt::value("domainname", &["domainname"], &[]),
    Opt::value("entrypoint", &["entrypoint"], &[]),
    Opt::value("env", &["env"], &['e']),
    Opt::value("env-file", &["env-file"], &[]),
    Opt::value("expose", &["expose"], &[]),
    Opt::value("gpus", &["gpus"], &[]),
    Opt::value("group-add", &["group-add"], &[]),
    Opt::value("health-cmd", &["health-cmd"], &[]),
    Opt::value("health-interval", &["health-interval"], &[]),
    Opt::value("health-retries", &["health-retries"], &[]),
    Opt::value("health-start-interval", &["health-start-interval"], &[]),
    Opt::value("health-start-period", &["health-start-period"], &[]),
    Opt::value("health-timeout", &["health-timeout"], &[]),
    Opt::value("hostname", &["hostname"], &['h']),
    Opt::flag("init", &["init"], &[]),
    Opt::flag("interactive", &["interactive"], &['i']),
    Opt::value("io-maxbandwidth", &["io-maxbandwidth"], &[]),
    Opt::value("io-maxiops", &["io-maxiops"], &[]),
    Opt::value("ip", &["ip"], &[]),
    Opt::value("ip6", &["ip6"], &[]),
    Opt::value("ipc", &["ipc"], &[]),
    Opt::value("isolation", &["isolation"], &[]),
    Opt::value("kernel-memory", &["kernel-memory"], &[]),
    Opt::value("label", &["label"], &['l']),
    Opt::value("label-file", &["label-file"], &[]),
    Opt::value("link", &["link"], &[]),
    Opt::value("link-local-ip", &["link-local-ip"], &[]),
    Opt::value("log-driver", &["log-driver"], &[]),
    Opt::value("log-opt", &["log-opt"], &[]),
    Opt::value("mac-address", &["mac-address"], &[]),
    Opt::value("memory", &["memory"], &['m']),
    Opt::value("memory-reservation", &["memory-reservation"], &[]),
    Opt::value("memory-swap", &["memory-swap"], &[]),
    Opt::value("memory-swappiness", &["memory-swappiness"], &[]),
    Opt::value("mount", &["mount"], &[]),
    Opt::value("name", &["name"], &[]),
    Opt::value("network", &["network", "net"], &[]),
    Opt::value("network-alias", &["network-alias", "net-alias"], &[]),
    Opt::flag("no-healthcheck", &["no-healthcheck"], &[]),
    Opt::flag("oom-kill-disable", &["oom-kill-disable"], &[]),
    Opt::value("oom-score-adj", &["oom-score-adj"], &[]),
    Opt::value("pid", &["pid"], &[]),
    Opt::value("pids-limit", &["pids-limit"], &[]),
    Opt::value("platform", &["platform"], &[]),
    Opt::flag("privileged", &["privileged"], &[]),
    Opt::value("publish", &["publish"], &['p']),
    Opt::flag("publish-all", &["publish-all"], &['P']),
    Opt::value("pull", &["pull"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("read-only", &["read-only"], &[]),
    Opt::value("restart", &["restart"], &[]),
    Opt::flag("rm", &["rm"], &[]),
    Opt::value("runtime", &["runtime"], &[]),
    Opt::value("security-opt", &["security-opt"], &[]),
    Opt::value("shm-size", &["shm-size"], &[]),
    Opt::value("stop-signal", &["stop-signal"], &[]),
    Opt::value("stop-timeout", &["stop-timeout"], &[]),
    Opt::value("storage-opt", &["storage-opt"], &[]),
    Opt::value("sysctl", &["sysctl"], &[]),
    Opt::value("tmpfs", &["tmpfs"], &[]),
    Opt::flag("tty", &["tty"], &['t']),
    Opt::value("ulimit", &["ulimit"], &[]),
    Opt::flag("use-api-socket", &["use-api-socket"], &[]),
    Opt::value("user", &["user"], &['u']),
    Opt::value("userns", &["userns"], &[]),
    Opt::value("uts", &["uts"], &[]),
    Opt::value("volume", &["volume"], &['v']),
    Opt::value("volume-driver", &["volume-driver"], &[]),
    Opt::value("volumes-from", &["volumes-from"], &[]),
    Opt::value("workdir", &["workdir"], &['w']),
];
const RUN_ONLY: &[Opt] = &[
    Opt::flag("detach", &["detach"], &['d']),
    Opt::value("detach-keys", &["detach-keys"], &[]),
    Opt::flag("sig-proxy", &["sig-proxy"], &[]),
];

/// The legacy builder's `build` (`docker build --help` without buildx).
const BUILD_OPTS: &[Opt] = &[
    Opt::value("add-host", &["add-host"], &[]),
    Opt::value("build-arg", &["build-arg"], &[]),
    Opt::value("cache-from", &["cache-from"], &[]),
    Opt::value("cgroup-parent", &["cgroup-parent"], &[]),
    Opt::flag("compress", &["compress"], &[]),
    Opt::value("cpu-period", &["cpu-period"], &[]),
    Opt::value("cpu-quota", &["cpu-quota"], &[]),
    Opt::value("cpu-shares", &["cpu-shares"], &['c']),
    Opt::value("cpuset-cpus", &["cpuset-cpus"], &[]),
    Opt::value("cpuset-mems", &["cpuset-mems"], &[]),
    Opt::flag("disable-content-trust", &["disable-content-trust"], &[]),
    Opt::value("file", &["file"], &['f']),
    Opt::flag("force-rm", &["force-rm"], &[]),
    Opt::value("iidfile", &["iidfile"], &[]),
    Opt::value("isolation", &["isolation"], &[]),
    Opt::value("label", &["label"], &[]),
    Opt::value("memory", &["memory"], &['m']),
    Opt::value("memory-swap", &["memory-swap"], &[]),
    Opt::value("network", &["network"], &[]),
    Opt::flag("no-cache", &["no-cache"], &[]),
    Opt::value("platform", &["platform"], &[]),
    Opt::flag("pull", &["pull"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("rm", &["rm"], &[]),
    Opt::value("security-opt", &["security-opt"], &[]),
    Opt::value("shm-size", &["shm-size"], &[]),
    Opt::flag("squash", &["squash"], &[]),
    Opt::value("tag", &["tag"], &['t']),
    Opt::value("target", &["target"], &[]),
    Opt::value("ulimit", &["ulimit"], &[]),
];
const HISTORY_OPTS: &[Opt] = &[
    Opt::value("format", &["format"], &[]),
    Opt::flag("human", &["human"], &['H']),
    Opt::flag("no-trunc", &["no-trunc"], &[]),
    Opt::value("platform", &["platform"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
];
const IMPORT_OPTS: &[Opt] = &[
    Opt::value("change", &["change"], &['c']),
    Opt::value("message", &["message"], &['m']),
    Opt::value("platform", &["platform"], &[]),
];
const LOAD_OPTS: &[Opt] = &[
    Opt::value("input", &["input"], &['i']),
    Opt::value("platform", &["platform"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
];
const IMAGES_OPTS: &[Opt] = &[
    Opt::flag("all", &["all"], &['a']),
    Opt::flag("digests", &["digests"], &[]),
    Opt::value("filter", &["filter"], &['f']),
    Opt::value("format", &["format"], &[]),
    Opt::flag("no-trunc", &["no-trunc"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("tree", &["tree"], &[]),
];
const PULL_OPTS: &[Opt] = &[
    Opt::flag("all-tags", &["all-tags"], &['a']),
    Opt::flag("disable-content-trust", &["disable-content-trust"], &[]),
    Opt::value("platform", &["platform"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
];
const RMI_OPTS: &[Opt] = &[
    Opt::flag("force", &["force"], &['f']),
    Opt::flag("no-prune", &["no-prune"], &[]),
    Opt::value("platform", &["platform"], &[]),
];
const INSPECT_OPTS: &[Opt] = &[
    Opt::value("format", &["format"], &['f']),
    Opt::flag("size", &["size"], &['s']),
    Opt::value("type", &["type"], &[]),
];
const SEARCH_OPTS: &[Opt] = &[
    Opt::value("filter", &["filter"], &['f']),
    Opt::value("format", &["format"], &[]),
    Opt::value("limit", &["limit"], &[]),
    Opt::flag("no-trunc", &["no-trunc"], &[]),
];
const EVENTS_OPTS: &[Opt] = &[
    Opt::value("filter", &["filter"], &['f']),
    Opt::value("format", &["format"], &[]),
    Opt::value("since", &["since"], &[]),
    Opt::value("until", &["until"], &[]),
];
const DF_OPTS: &[Opt] = &[Opt::value("format", &["format"], &[]), Opt::flag("verbose", &["verbose"], &['v'])];
const NETWORK_CONNECT_OPTS: &[Opt] = &[
    Opt::value("alias", &["alias"], &[]),
    Opt::value("driver-opt", &["driver-opt"], &[]),
    Opt::value("gw-priority", &["gw-priority"], &[]),
    Opt::value("ip", &["ip"], &[]),
    Opt::value("ip6", &["ip6"], &[]),
    Opt::value("link", &["link"], &[]),
    Opt::value("link-local-ip", &["link-local-ip"], &[]),
];
const NETWORK_CREATE_OPTS: &[Opt] = &[
    Opt::flag("attachable", &["attachable"], &[]),
    Opt::value("aux-address", &["aux-address"], &[]),
    Opt::value("config-from", &["config-from"], &[]),
    Opt::flag("config-only", &["config-only"], &[]),
    Opt::value("driver", &["driver"], &['d']),
    Opt::value("gateway", &["gateway"], &[]),
    Opt::flag("ingress", &["ingress"], &[]),
    Opt::flag("internal", &["internal"], &[]),
    Opt::value("ip-range", &["ip-range"], &[]),
    Opt::value("ipam-driver", &["ipam-driver"], &[]),
    Opt::value("ipam-opt", &["ipam-opt"], &[]),
    Opt::flag("ipv4", &["ipv4"], &[]),
    Opt::flag("ipv6", &["ipv6"], &[]),
    Opt::value("label", &["label"], &[]),
    Opt::value("opt", &["opt"], &['o']),
    Opt::value("scope", &["scope"], &[]),
    Opt::value("subnet", &["subnet"], &[]),
];
const NETWORK_INSPECT_OPTS: &[Opt] = &[
    Opt::value("format", &["format"], &['f']),
    Opt::flag("verbose", &["verbose"], &['v']),
];
const VOLUME_CREATE_OPTS: &[Opt] = &[
    Opt::value("availability", &["availability"], &[]),
    Opt::value("driver", &["driver"], &['d']),
    Opt::value("group", &["group"], &[]),
    Opt::value("label", &["label"], &[]),
    Opt::value("limit-bytes", &["limit-bytes"], &[]),
    Opt::value("opt", &["opt"], &['o']),
    Opt::value("required-bytes", &["required-bytes"], &[]),
    Opt::value("scope", &["scope"], &[]),
    Opt::value("secret", &["secret"], &[]),
    Opt::value("sharing", &["sharing"], &[]),
    Opt::value("topology-preferred", &["topology-preferred"], &[]),
    Opt::value("topology-required", &["topology-required"], &[]),
    Opt::value("type", &["type"], &[]),
];
const VOLUME_LS_OPTS: &[Opt] = &[
    Opt::flag("cluster", &["cluster"], &[]),
    Opt::value("filter", &["filter"], &['f']),
    Opt::value("format", &["format"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
];
const VOLUME_UPDATE_OPTS: &[Opt] = &[Opt::value("availability", &["availability"], &[])];
const CONTEXT_LS_OPTS: &[Opt] = &[Opt::value("format", &["format"], &[]), Opt::flag("quiet", &["quiet"], &['q'])];
const MANIFEST_INSPECT_OPTS: &[Opt] = &[
    Opt::flag("insecure", &["insecure"], &[]),
    Opt::flag("verbose", &["verbose"], &['v']),
];
const MANIFEST_CREATE_OPTS: &[Opt] = &[Opt::flag("amend", &["amend"], &['a']), Opt::flag("insecure", &["insecure"], &[])];
const MANIFEST_ANNOTATE_OPTS: &[Opt] = &[
    Opt::value("arch", &["arch"], &[]),
    Opt::value("os", &["os"], &[]),
    Opt::value("os-features", &["os-features"], &[]),
    Opt::value("os-version", &["os-version"], &[]),
    Opt::value("variant", &["variant"], &[]),
];
const CHECKPOINT_CREATE_OPTS: &[Opt] = &[
    Opt::value("checkpoint-dir", &["checkpoint-dir"], &[]),
    Opt::flag("leave-running", &["leave-running"], &[]),
];
const SERVICE_LOGS_OPTS: &[Opt] = &[
    Opt::flag("details", &["details"], &[]),
    Opt::flag("follow", &["follow"], &['f']),
    Opt::flag("no-resolve", &["no-resolve"], &[]),
    Opt::flag("no-task-ids", &["no-task-ids"], &[]),
    Opt::flag("no-trunc", &["no-trunc"], &[]),
    Opt::flag("raw", &["raw"], &[]),
    Opt::value("since", &["since"], &[]),
    Opt::value("tail", &["tail"], &['n']),
    Opt::flag("timestamps", &["timestamps"], &['t']),
];

// compose (docker/compose `cmd/compose/*.go`, v2.x to v5; the union where versions differ)

/// Project options, local to `compose` and non-interspersed (`compose.go`); hidden ones too.
const COMPOSE_GLOBAL: &[Opt] = &[
    Opt::flag("all-resources", &["all-resources"], &[]),
    Opt::value("ansi", &["ansi"], &[]),
    Opt::flag("compatibility", &["compatibility"], &[]),
    Opt::flag("dry-run", &["dry-run"], &[]),
    Opt::value("env-file", &["env-file"], &[]),
    Opt::value("file", &["file"], &['f']),
    Opt::value("insecure-registry", &["insecure-registry"], &[]),
    Opt::flag("no-ansi", &["no-ansi"], &[]),
    Opt::value("parallel", &["parallel"], &[]),
    Opt::value("profile", &["profile"], &[]),
    Opt::value("progress", &["progress"], &[]),
    Opt::value("project-directory", &["project-directory"], &[]),
    Opt::value("project-name", &["project-name"], &['p']),
    Opt::flag("verbose", &["verbose"], &[]),
    Opt::flag("version", &["version"], &['v']),
    Opt::value("workdir", &["workdir"], &[]),
    HELP,
];
/// `--dry-run` is persistent: every compose subcommand accepts it.
const DRY_RUN: &[Opt] = &[Opt::flag("dry-run", &["dry-run"], &[])];
const INDEX: &[Opt] = &[Opt::value("index", &["index"], &[])];
const TIMEOUT: &[Opt] = &[Opt::value("timeout", &["timeout"], &['t'])];

const C_BUILD_OPTS: &[Opt] = &[
    Opt::value("build-arg", &["build-arg"], &[]),
    Opt::value("builder", &["builder"], &[]),
    Opt::flag("check", &["check"], &[]),
    Opt::flag("compress", &["compress"], &[]),
    Opt::flag("force-rm", &["force-rm"], &[]),
    Opt::value("memory", &["memory"], &['m']),
    Opt::flag("no-cache", &["no-cache"], &[]),
    Opt::flag("no-rm", &["no-rm"], &[]),
    Opt::flag("parallel", &["parallel"], &[]),
    Opt::flag("print", &["print"], &[]),
    Opt::value("progress", &["progress"], &[]),
    Opt::value("provenance", &["provenance"], &[]),
    Opt::flag("pull", &["pull"], &[]),
    Opt::flag("push", &["push"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::value("sbom", &["sbom"], &[]),
    Opt::value("ssh", &["ssh"], &[]),
    Opt::flag("with-dependencies", &["with-dependencies"], &[]),
];
const C_COMMIT_OPTS: &[Opt] = &[
    Opt::value("author", &["author"], &['a']),
    Opt::value("change", &["change"], &['c']),
    Opt::value("message", &["message"], &['m']),
    Opt::flag("pause", &["pause"], &['p']),
];
const C_CONFIG_OPTS: &[Opt] = &[
    Opt::flag("environment", &["environment"], &[]),
    Opt::value("format", &["format"], &[]),
    Opt::value("hash", &["hash"], &[]),
    Opt::flag("images", &["images"], &[]),
    Opt::flag("lock-image-digests", &["lock-image-digests"], &[]),
    Opt::flag("models", &["models"], &[]),
    Opt::flag("networks", &["networks"], &[]),
    Opt::flag("no-consistency", &["no-consistency"], &[]),
    Opt::flag("no-env-resolution", &["no-env-resolution"], &[]),
    Opt::flag("no-interpolate", &["no-interpolate"], &[]),
    Opt::flag("no-normalize", &["no-normalize"], &[]),
    Opt::flag("no-path-resolution", &["no-path-resolution"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("profiles", &["profiles"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("resolve-image-digests", &["resolve-image-digests"], &[]),
    Opt::flag("services", &["services"], &[]),
    Opt::flag("variables", &["variables"], &[]),
    Opt::flag("volumes", &["volumes"], &[]),
];
const C_CP_OPTS: &[Opt] = &[
    Opt::flag("all", &["all"], &[]),
    Opt::flag("archive", &["archive"], &['a']),
    Opt::flag("follow-link", &["follow-link"], &['L']),
];
const C_CREATE_OPTS: &[Opt] = &[
    Opt::flag("build", &["build"], &[]),
    Opt::flag("force-recreate", &["force-recreate"], &[]),
    Opt::flag("no-build", &["no-build"], &[]),
    Opt::flag("no-recreate", &["no-recreate"], &[]),
    Opt::value("pull", &["pull"], &[]),
    Opt::flag("quiet-pull", &["quiet-pull"], &[]),
    Opt::flag("remove-orphans", &["remove-orphans"], &[]),
    Opt::value("scale", &["scale"], &[]),
    Opt::flag("yes", &["yes"], &['y']),
];
const C_DOWN_OPTS: &[Opt] = &[
    Opt::flag("remove-orphans", &["remove-orphans"], &[]),
    Opt::value("rmi", &["rmi"], &[]),
    Opt::value("timeout", &["timeout"], &['t']),
    Opt::flag("volumes", &["volumes"], &['v']),
];
const C_EVENTS_OPTS: &[Opt] = &[
    Opt::flag("json", &["json"], &[]),
    Opt::value("since", &["since"], &[]),
    Opt::value("until", &["until"], &[]),
];
const C_EXEC_OPTS: &[Opt] = &[
    Opt::flag("detach", &["detach"], &['d']),
    Opt::value("env", &["env"], &['e']),
    Opt::value("index", &["index"], &[]),
    Opt::flag("interactive", &["interactive"], &['i']),
    Opt::flag("no-tty", &["no-tty", "no-TTY"], &['T']),
    Opt::flag("privileged", &["privileged"], &[]),
    Opt::flag("tty", &["tty"], &['t']),
    Opt::value("user", &["user"], &['u']),
    Opt::value("workdir", &["workdir"], &['w']),
];
const C_IMAGES_OPTS: &[Opt] = &[Opt::value("format", &["format"], &[]), Opt::flag("quiet", &["quiet"], &['q'])];
const C_KILL_OPTS: &[Opt] = &[
    Opt::flag("remove-orphans", &["remove-orphans"], &[]),
    Opt::value("signal", &["signal"], &['s']),
];
const C_LOGS_OPTS: &[Opt] = &[
    Opt::flag("follow", &["follow"], &['f']),
    Opt::value("index", &["index"], &[]),
    Opt::flag("no-color", &["no-color"], &[]),
    Opt::flag("no-log-prefix", &["no-log-prefix"], &[]),
    Opt::value("since", &["since"], &[]),
    Opt::value("tail", &["tail"], &['n']),
    Opt::flag("timestamps", &["timestamps"], &['t']),
    Opt::value("until", &["until"], &[]),
];
const C_LS_OPTS: &[Opt] = &[
    Opt::flag("all", &["all"], &['a']),
    Opt::value("filter", &["filter"], &[]),
    Opt::value("format", &["format"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
];
const C_PORT_OPTS: &[Opt] = &[Opt::value("index", &["index"], &[]), Opt::value("protocol", &["protocol"], &[])];
const C_PS_OPTS: &[Opt] = &[
    Opt::flag("all", &["all"], &['a']),
    Opt::value("filter", &["filter"], &[]),
    Opt::value("format", &["format"], &[]),
    Opt::flag("no-trunc", &["no-trunc"], &[]),
    Opt::flag("orphans", &["orphans"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("services", &["services"], &[]),
    Opt::value("status", &["status"], &[]),
];
const C_PULL_OPTS: &[Opt] = &[
    Opt::flag("ignore-buildable", &["ignore-buildable"], &[]),
    Opt::flag("ignore-pull-failures", &["ignore-pull-failures"], &[]),
    Opt::flag("include-deps", &["include-deps"], &[]),
    Opt::flag("no-parallel", &["no-parallel"], &[]),
    Opt::flag("parallel", &["parallel"], &[]),
    Opt::value("policy", &["policy"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
];
const C_RESTART_OPTS: &[Opt] = &[Opt::flag("no-deps", &["no-deps"], &[]), Opt::value("timeout", &["timeout"], &['t'])];
const C_RM_OPTS: &[Opt] = &[
    Opt::flag("all", &["all"], &['a']),
    Opt::flag("force", &["force"], &['f']),
    Opt::flag("stop", &["stop"], &['s']),
    Opt::flag("volumes", &["volumes"], &['v']),
];
/// `compose run`: its normalize function maps `--volumes` to `--volume`, `--labels` to `--label`.
const C_RUN_OPTS: &[Opt] = &[
    Opt::flag("build", &["build"], &[]),
    Opt::value("cap-add", &["cap-add"], &[]),
    Opt::value("cap-drop", &["cap-drop"], &[]),
    Opt::flag("detach", &["detach"], &['d']),
    Opt::value("entrypoint", &["entrypoint"], &[]),
    Opt::value("env", &["env"], &['e']),
    Opt::value("env-from-file", &["env-from-file"], &[]),
    Opt::flag("interactive", &["interactive"], &['i']),
    Opt::value("label", &["label", "labels"], &['l']),
    Opt::value("name", &["name"], &[]),
    Opt::flag("no-deps", &["no-deps"], &[]),
    Opt::flag("no-tty", &["no-TTY", "no-tty"], &['T']),
    Opt::value("publish", &["publish"], &['p']),
    Opt::value("pull", &["pull"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("quiet-build", &["quiet-build"], &[]),
    Opt::flag("quiet-pull", &["quiet-pull"], &[]),
    Opt::flag("remove-orphans", &["remove-orphans"], &[]),
    Opt::flag("rm", &["rm"], &[]),
    Opt::flag("service-ports", &["service-ports"], &['P']),
    Opt::flag("tty", &["tty"], &['t']),
    Opt::flag("use-aliases", &["use-aliases"], &[]),
    Opt::value("user", &["user"], &['u']),
    Opt::value("volume", &["volume", "volumes"], &['v']),
    Opt::value("workdir", &["workdir"], &['w']),
];
const C_START_OPTS: &[Opt] = &[
    Opt::flag("wait", &["wait"], &[]),
    Opt::value("wait-timeout", &["wait-timeout"], &[]),
];
const C_STATS_OPTS: &[Opt] = &[
    Opt::flag("all", &["all"], &['a']),
    Opt::value("format", &["format"], &[]),
    Opt::flag("no-stream", &["no-stream"], &[]),
    Opt::flag("no-trunc", &["no-trunc"], &[]),
];
const C_UP_OPTS: &[Opt] = &[
    Opt::flag("abort-on-container-exit", &["abort-on-container-exit"], &[]),
    Opt::flag("abort-on-container-failure", &["abort-on-container-failure"], &[]),
    Opt::flag("always-recreate-deps", &["always-recreate-deps"], &[]),
    Opt::value("attach", &["attach"], &[]),
    Opt::flag("attach-dependencies", &["attach-dependencies"], &[]),
    Opt::flag("build", &["build"], &[]),
    Opt::flag("detach", &["detach"], &['d']),
    Opt::value("exit-code-from", &["exit-code-from"], &[]),
    Opt::flag("force-recreate", &["force-recreate"], &[]),
    Opt::flag("menu", &["menu"], &[]),
    Opt::value("no-attach", &["no-attach"], &[]),
    Opt::flag("no-build", &["no-build"], &[]),
    Opt::flag("no-color", &["no-color"], &[]),
    Opt::flag("no-deps", &["no-deps"], &[]),
    Opt::flag("no-log-prefix", &["no-log-prefix"], &[]),
    Opt::flag("no-recreate", &["no-recreate"], &[]),
    Opt::flag("no-start", &["no-start"], &[]),
    Opt::value("pull", &["pull"], &[]),
    Opt::flag("quiet-build", &["quiet-build"], &[]),
    Opt::flag("quiet-pull", &["quiet-pull"], &[]),
    Opt::flag("remove-orphans", &["remove-orphans"], &[]),
    Opt::flag("renew-anon-volumes", &["renew-anon-volumes"], &['V']),
    Opt::value("scale", &["scale"], &[]),
    Opt::value("timeout", &["timeout"], &['t']),
    Opt::flag("timestamps", &["timestamps"], &[]),
    Opt::flag("wait", &["wait"], &[]),
    Opt::value("wait-timeout", &["wait-timeout"], &[]),
    Opt::flag("watch", &["watch"], &['w']),
    Opt::flag("yes", &["yes"], &['y']),
];
const C_VERSION_OPTS: &[Opt] = &[Opt::value("format", &["format"], &['f']), Opt::flag("short", &["short"], &[])];
const C_VOLUMES_OPTS: &[Opt] = &[Opt::value("format", &["format"], &[]), Opt::flag("quiet", &["quiet"], &['q'])];
const C_WAIT_OPTS: &[Opt] = &[Opt::flag("down-project", &["down-project"], &[])];
const C_WATCH_OPTS: &[Opt] = &[
    Opt::flag("no-up", &["no-up"], &[]),
    Opt::flag("prune", &["prune"], &[]),
    Opt::flag("quiet", &["quiet"], &[]),
];
const C_ATTACH_OPTS: &[Opt] = &[
    Opt::value("detach-keys", &["detach-keys"], &[]),
    Opt::value("index", &["index"], &[]),
    Opt::flag("no-stdin", &["no-stdin"], &[]),
    Opt::flag("sig-proxy", &["sig-proxy"], &[]),
];

// ---------------------------------------------------------------------------------------------
// The command tree

/// How a subcommand's own arguments are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Args {
    /// Options and operands mix (pflag's default).
    Interspersed,
    /// Options end at the first operand: the container's (or service's) command follows it.
    OptionsFirst,
    /// Not read at all: the verb alone decides, and the policy never allows it.
    Unread,
}

/// What a command marks beyond its verb: the function that adds them, named by a value rather
/// than held as a pointer (see [`TREE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marks {
    None,
    Container,
    Exec,
    ContainerTargets,
    Stop,
    Rm,
    Start,
    Build,
    VolumeCreate,
    ComposeBuild,
    ComposeConfig,
    ServiceTargets,
    ComposeRun,
    ComposeUp,
    ComposeWait,
}

impl Marks {
    /// Adds the marks of one call; an error is a value the grammar cannot place.
    fn add(self, p: &Parsed, a: &mut Action) -> Result<(), String> {
        match self {
            Marks::None => Ok(()),
            Marks::Container => container_marks(p, a),
            Marks::Exec => exec_marks(p, a),
            Marks::ContainerTargets => container_targets(p, a),
            Marks::Stop => stop_marks(p, a),
            Marks::Rm => rm_marks(p, a),
            Marks::Start => start_marks(p, a),
            Marks::Build => build_marks(p, a),
            Marks::VolumeCreate => volume_create_marks(p, a),
            Marks::ComposeBuild => compose_build_marks(p, a),
            Marks::ComposeConfig => compose_config_marks(p, a),
            Marks::ServiceTargets => service_targets(p, a),
            Marks::ComposeRun => compose_run_marks(p, a),
            Marks::ComposeUp => compose_up_marks(p, a),
            Marks::ComposeWait => compose_wait_marks(p, a),
        }
    }
}

/// One subcommand as written in the tables below: its canonical verb, option tables
/// (concatenated), and what it marks.
#[derive(Clone, Copy)]
struct Cmd {
    verb: &'static str,
    opts: &'static [&'static [Opt]],
    args: Args,
    marks: Marks,
}

impl Cmd {
    const fn new(verb: &'static str, opts: &'static [&'static [Opt]]) -> Cmd {
        Cmd {
            verb,
            opts,
            args: Args::Interspersed,
            marks: Marks::None,
        }
    }
    /// A verb the policy never allows: its arguments do not matter.
    const fn unread(verb: &'static str) -> Cmd {
        Cmd {
            verb,
            opts: &[],
            args: Args::Unread,
            marks: Marks::None,
        }
    }
    const fn options_first(self) -> Cmd {
        Cmd {
            args: Args::OptionsFirst,
            ..self
        }
    }
    const fn marks(self, marks: Marks) -> Cmd {
        Cmd { marks, ..self }
    }
}

/// Names (aliases included) and the command they select.
type Sub = (&'static [&'static str], Cmd);

// container (legacy top-level names: the verb)
const ATTACH: Cmd = Cmd::new("attach", &[ATTACH_OPTS]);
const COMMIT: Cmd = Cmd::new("commit", &[COMMIT_OPTS]);
const CP: Cmd = Cmd::new("cp", &[CP_OPTS]);
const CREATE: Cmd = Cmd::new("create", &[CREATE_OPTS]).options_first().marks(Marks::Container);
const DIFF: Cmd = Cmd::new("diff", &[NONE]);
const EXEC: Cmd = Cmd::new("exec", &[EXEC_OPTS]).options_first().marks(Marks::Exec);
const EXPORT: Cmd = Cmd::new("export", &[OUTPUT]);
const KILL: Cmd = Cmd::new("kill", &[KILL_OPTS]).marks(Marks::ContainerTargets);
const LOGS: Cmd = Cmd::new("logs", &[LOGS_OPTS]);
const PAUSE: Cmd = Cmd::new("pause", &[NONE]);
const PORT: Cmd = Cmd::new("port", &[NONE]);
const PS: Cmd = Cmd::new("ps", &[PS_OPTS]);
const RENAME: Cmd = Cmd::new("rename", &[NONE]);
const RESTART: Cmd = Cmd::new("restart", &[STOP]).marks(Marks::Stop);
const RM: Cmd = Cmd::new("rm", &[RM_OPTS]).marks(Marks::Rm);
const RUN: Cmd = Cmd::new("run", &[CREATE_OPTS, RUN_ONLY]).options_first().marks(Marks::Container);
const START: Cmd = Cmd::new("start", &[START_OPTS]).marks(Marks::Start);
const STATS: Cmd = Cmd::new("stats", &[STATS_OPTS]);
const STOP_CMD: Cmd = Cmd::new("stop", &[STOP]).marks(Marks::Stop);
/// `top CONTAINER [ps OPTIONS]`: what follows the container is `ps`'s (`-h` too).
const TOP: Cmd = Cmd::new("top", &[NONE]).options_first();
const UNPAUSE: Cmd = Cmd::new("unpause", &[NONE]);
const UPDATE: Cmd = Cmd::new("update", &[UPDATE_OPTS]);
const WAIT: Cmd = Cmd::new("wait", &[NONE]);

const CONTAINER: &[Sub] = &[
    (&["attach"], ATTACH),
    (&["commit"], COMMIT),
    (&["cp"], CP),
    (&["create"], CREATE),
    (&["diff"], DIFF),
    (&["exec"], EXEC),
    (&["export"], EXPORT),
    (&["inspect"], Cmd::new("container inspect", &[FORMAT_SIZE])),
    (&["kill"], KILL),
    (&["logs"], LOGS),
    (&["ls", "list", "ps"], PS),
    (&["pause"], PAUSE),
    (&["port"], PORT),
    (&["prune"], Cmd::unread("container prune")),
    (&["rename"], RENAME),
    (&["restart"], RESTART),
    (&["rm", "remove"], RM),
    (&["run"], RUN),
    (&["start"], START),
    (&["stats"], STATS),
    (&["stop"], STOP_CMD),
    (&["top"], TOP),
    (&["unpause"], UNPAUSE),
    (&["update"], UPDATE),
    (&["wait"], WAIT),
];

// image
const BUILD: Cmd = Cmd::new("build", &[BUILD_OPTS]).marks(Marks::Build);
const HISTORY: Cmd = Cmd::new("history", &[HISTORY_OPTS]);
const IMPORT: Cmd = Cmd::new("import", &[IMPORT_OPTS]);
const LOAD: Cmd = Cmd::new("load", &[LOAD_OPTS]);
const IMAGES: Cmd = Cmd::new("images", &[IMAGES_OPTS]);
const PULL: Cmd = Cmd::new("pull", &[PULL_OPTS]);
const PUSH: Cmd = Cmd::unread("push");
const RMI: Cmd = Cmd::new("rmi", &[RMI_OPTS]);
const SAVE: Cmd = Cmd::new("save", &[OUTPUT, PLATFORM]);
const TAG: Cmd = Cmd::new("tag", &[NONE]);

const IMAGE: &[Sub] = &[
    (&["build"], BUILD),
    (&["history"], HISTORY),
    (&["import"], IMPORT),
    (&["inspect"], Cmd::new("image inspect", &[FORMAT_F, PLATFORM])),
    (&["load"], LOAD),
    (&["ls", "list"], IMAGES),
    (&["prune"], Cmd::unread("image prune")),
    (&["pull"], PULL),
    (&["push"], PUSH),
    (&["rm", "remove"], RMI),
    (&["save"], SAVE),
    (&["tag"], TAG),
];

const EVENTS: Cmd = Cmd::new("events", &[EVENTS_OPTS]);
const INFO: Cmd = Cmd::new("info", &[FORMAT_F]);

const SYSTEM: &[Sub] = &[
    (&["df"], Cmd::new("system df", &[DF_OPTS])),
    (&["events"], EVENTS),
    (&["info"], INFO),
    (&["prune"], Cmd::unread("system prune")),
    (&["dial-stdio"], Cmd::unread("system dial-stdio")),
];

const NETWORK: &[Sub] = &[
    (&["connect"], Cmd::new("network connect", &[NETWORK_CONNECT_OPTS])),
    (&["create"], Cmd::new("network create", &[NETWORK_CREATE_OPTS])),
    (&["disconnect"], Cmd::new("network disconnect", &[FORCE])),
    (&["inspect"], Cmd::new("network inspect", &[NETWORK_INSPECT_OPTS])),
    (&["ls", "list"], Cmd::new("network ls", &[LIST, NO_TRUNC])),
    (&["prune"], Cmd::unread("network prune")),
    (&["rm", "remove"], Cmd::new("network rm", &[FORCE])),
];

const VOLUME: &[Sub] = &[
    (
        &["create"],
        Cmd::new("volume create", &[VOLUME_CREATE_OPTS]).marks(Marks::VolumeCreate),
    ),
    (&["inspect"], Cmd::new("volume inspect", &[FORMAT_F])),
    (&["ls", "list"], Cmd::new("volume ls", &[VOLUME_LS_OPTS])),
    (&["prune"], Cmd::unread("volume prune")),
    (&["rm", "remove"], Cmd::unread("volume rm")),
    (&["update"], Cmd::new("volume update", &[VOLUME_UPDATE_OPTS])),
];

const CONTEXT: &[Sub] = &[
    (&["create"], Cmd::unread("context create")),
    (&["export"], Cmd::unread("context export")),
    (&["import"], Cmd::unread("context import")),
    (&["inspect"], Cmd::new("context inspect", &[FORMAT_F])),
    (&["ls", "list"], Cmd::new("context ls", &[CONTEXT_LS_OPTS])),
    (&["rm", "remove"], Cmd::unread("context rm")),
    (&["show"], Cmd::new("context show", &[NONE])),
    (&["update"], Cmd::unread("context update")),
    (&["use"], Cmd::unread("context use")),
];

const PLUGIN: &[Sub] = &[
    (&["create"], Cmd::unread("plugin create")),
    (&["disable"], Cmd::unread("plugin disable")),
    (&["enable"], Cmd::unread("plugin enable")),
    (&["inspect"], Cmd::new("plugin inspect", &[FORMAT_F])),
    (&["install"], Cmd::unread("plugin install")),
    (&["ls", "list"], Cmd::new("plugin ls", &[LIST, NO_TRUNC])),
    (&["push"], Cmd::unread("plugin push")),
    (&["rm", "remove"], Cmd::unread("plugin rm")),
    (&["set"], Cmd::unread("plugin set")),
    (&["upgrade"], Cmd::unread("plugin upgrade")),
];

const BUILDER: &[Sub] = &[(&["build"], BUILD), (&["prune"], Cmd::unread("builder prune"))];

const MANIFEST: &[Sub] = &[
    (&["annotate"], Cmd::new("manifest annotate", &[MANIFEST_ANNOTATE_OPTS])),
    (&["create"], Cmd::new("manifest create", &[MANIFEST_CREATE_OPTS])),
    (&["inspect"], Cmd::new("manifest inspect", &[MANIFEST_INSPECT_OPTS])),
    (&["push"], Cmd::unread("manifest push")),
    (&["rm"], Cmd::new("manifest rm", &[NONE])),
];

const CHECKPOINT: &[Sub] = &[
    (&["create"], Cmd::new("checkpoint create", &[CHECKPOINT_CREATE_OPTS])),
    (&["ls", "list"], Cmd::new("checkpoint ls", &[CHECKPOINT_DIR])),
    (&["rm", "remove"], Cmd::new("checkpoint rm", &[CHECKPOINT_DIR])),
];

/// `docker trust inspect [--pretty] IMAGE…` (docker/cli `cli/command/trust/inspect.go`).
const TRUST_INSPECT: &[Opt] = &[Opt::flag("pretty", &["pretty"], &[])];

const TRUST: &[Sub] = &[
    (&["inspect"], Cmd::new("trust inspect", &[TRUST_INSPECT])),
    (&["key"], Cmd::unread("trust key")),
    (&["revoke"], Cmd::unread("trust revoke")),
    (&["sign"], Cmd::unread("trust sign")),
    (&["signer"], Cmd::unread("trust signer")),
];

const SWARM: &[Sub] = &[
    (&["ca"], Cmd::unread("swarm ca")),
    (&["init"], Cmd::unread("swarm init")),
    (&["join"], Cmd::unread("swarm join")),
    (&["join-token"], Cmd::unread("swarm join-token")),
    (&["leave"], Cmd::unread("swarm leave")),
    (&["unlock"], Cmd::unread("swarm unlock")),
    (&["unlock-key"], Cmd::unread("swarm unlock-key")),
    (&["update"], Cmd::unread("swarm update")),
];

const NODE: &[Sub] = &[
    (&["demote"], Cmd::unread("node demote")),
    (&["inspect"], Cmd::new("node inspect", &[FORMAT_PRETTY])),
    (&["ls", "list"], Cmd::new("node ls", &[LIST])),
    (&["promote"], Cmd::unread("node promote")),
    (&["ps"], Cmd::new("node ps", &[LIST, TASKS])),
    (&["rm", "remove"], Cmd::unread("node rm")),
    (&["update"], Cmd::unread("node update")),
];

const SERVICE: &[Sub] = &[
    (&["create"], Cmd::unread("service create")),
    (&["inspect"], Cmd::new("service inspect", &[FORMAT_PRETTY])),
    (&["logs"], Cmd::new("service logs", &[SERVICE_LOGS_OPTS])),
    (&["ls", "list"], Cmd::new("service ls", &[LIST])),
    (&["ps"], Cmd::new("service ps", &[LIST, TASKS])),
    (&["rm", "remove"], Cmd::unread("service rm")),
    (&["rollback"], Cmd::unread("service rollback")),
    (&["scale"], Cmd::unread("service scale")),
    (&["update"], Cmd::unread("service update")),
];

const STACK: &[Sub] = &[
    (&["deploy", "up"], Cmd::unread("stack deploy")),
    (&["ls", "list"], Cmd::new("stack ls", &[&[Opt::value("format", &["format"], &[])]])),
    (&["ps"], Cmd::new("stack ps", &[LIST, TASKS])),
    (&["rm", "remove", "down"], Cmd::unread("stack rm")),
    (&["services"], Cmd::new("stack services", &[LIST])),
];

const SECRET: &[Sub] = &[
    (&["create"], Cmd::unread("secret create")),
    (&["inspect"], Cmd::new("secret inspect", &[FORMAT_PRETTY])),
    (&["ls", "list"], Cmd::new("secret ls", &[LIST])),
    (&["rm", "remove"], Cmd::unread("secret rm")),
];

const CONFIG: &[Sub] = &[
    (&["create"], Cmd::unread("config create")),
    (&["inspect"], Cmd::new("config inspect", &[FORMAT_PRETTY])),
    (&["ls", "list"], Cmd::new("config ls", &[LIST])),
    (&["rm", "remove"], Cmd::unread("config rm")),
];

/// What a top-level word selects.
#[derive(Clone, Copy)]
enum Top {
    Cmd(Cmd),
    Group(&'static [Sub]),
}

/// The builtin top-level commands; `help` and `compose` are handled before this table.
const TOPLEVEL: &[(&str, Top)] = &[
    ("attach", Top::Cmd(ATTACH)),
    ("build", Top::Cmd(BUILD)),
    ("builder", Top::Group(BUILDER)),
    ("checkpoint", Top::Group(CHECKPOINT)),
    ("commit", Top::Cmd(COMMIT)),
    ("config", Top::Group(CONFIG)),
    ("container", Top::Group(CONTAINER)),
    ("context", Top::Group(CONTEXT)),
    ("cp", Top::Cmd(CP)),
    ("create", Top::Cmd(CREATE)),
    ("diff", Top::Cmd(DIFF)),
    ("events", Top::Cmd(EVENTS)),
    ("exec", Top::Cmd(EXEC)),
    ("export", Top::Cmd(EXPORT)),
    ("history", Top::Cmd(HISTORY)),
    ("image", Top::Group(IMAGE)),
    ("images", Top::Cmd(IMAGES)),
    ("import", Top::Cmd(IMPORT)),
    ("info", Top::Cmd(INFO)),
    ("inspect", Top::Cmd(Cmd::new("inspect", &[INSPECT_OPTS]))),
    ("kill", Top::Cmd(KILL)),
    ("load", Top::Cmd(LOAD)),
    ("login", Top::Cmd(Cmd::unread("login"))),
    ("logout", Top::Cmd(Cmd::unread("logout"))),
    ("logs", Top::Cmd(LOGS)),
    ("manifest", Top::Group(MANIFEST)),
    ("network", Top::Group(NETWORK)),
    ("node", Top::Group(NODE)),
    ("pause", Top::Cmd(PAUSE)),
    ("plugin", Top::Group(PLUGIN)),
    ("port", Top::Cmd(PORT)),
    ("ps", Top::Cmd(PS)),
    ("pull", Top::Cmd(PULL)),
    ("push", Top::Cmd(PUSH)),
    ("rename", Top::Cmd(RENAME)),
    ("restart", Top::Cmd(RESTART)),
    ("rm", Top::Cmd(RM)),
    ("rmi", Top::Cmd(RMI)),
    ("run", Top::Cmd(RUN)),
    ("save", Top::Cmd(SAVE)),
    ("search", Top::Cmd(Cmd::new("search", &[SEARCH_OPTS]))),
    ("secret", Top::Group(SECRET)),
    ("service", Top::Group(SERVICE)),
    ("stack", Top::Group(STACK)),
    ("start", Top::Cmd(START)),
    ("stats", Top::Cmd(STATS)),
    ("stop", Top::Cmd(STOP_CMD)),
    ("swarm", Top::Group(SWARM)),
    ("system", Top::Group(SYSTEM)),
    ("tag", Top::Cmd(TAG)),
    ("top", Top::Cmd(TOP)),
    ("trust", Top::Group(TRUST)),
    ("unpause", Top::Cmd(UNPAUSE)),
    ("update", Top::Cmd(UPDATE)),
    ("version", Top::Cmd(Cmd::new("version", &[FORMAT_F]))),
    ("volume", Top::Group(VOLUME)),
    ("wait", Top::Cmd(WAIT)),
];

/// compose subcommands (`config` keeps its old name `convert` as an alias).
const COMPOSE: &[Sub] = &[
    (&["attach"], Cmd::new("compose attach", &[C_ATTACH_OPTS])),
    (&["build"], Cmd::new("compose build", &[C_BUILD_OPTS]).marks(Marks::ComposeBuild)),
    (&["commit"], Cmd::new("compose commit", &[C_COMMIT_OPTS, INDEX])),
    (
        &["config", "convert"],
        Cmd::new("compose config", &[C_CONFIG_OPTS]).marks(Marks::ComposeConfig),
    ),
    (&["cp"], Cmd::new("compose cp", &[C_CP_OPTS, INDEX])),
    (&["create"], Cmd::new("compose create", &[C_CREATE_OPTS])),
    (&["down"], Cmd::new("compose down", &[C_DOWN_OPTS]).marks(Marks::Rm)),
    (&["events"], Cmd::new("compose events", &[C_EVENTS_OPTS])),
    (
        &["exec"],
        Cmd::new("compose exec", &[C_EXEC_OPTS]).options_first().marks(Marks::Exec),
    ),
    (&["export"], Cmd::new("compose export", &[OUTPUT, INDEX])),
    (&["images"], Cmd::new("compose images", &[C_IMAGES_OPTS])),
    (&["kill"], Cmd::new("compose kill", &[C_KILL_OPTS]).marks(Marks::ServiceTargets)),
    (&["logs"], Cmd::new("compose logs", &[C_LOGS_OPTS])),
    (&["ls"], Cmd::new("compose ls", &[C_LS_OPTS])),
    (&["pause"], Cmd::new("compose pause", &[NONE])),
    (&["port"], Cmd::new("compose port", &[C_PORT_OPTS])),
    (&["ps"], Cmd::new("compose ps", &[C_PS_OPTS])),
    (&["publish"], Cmd::unread("compose publish")),
    (&["pull"], Cmd::new("compose pull", &[C_PULL_OPTS])),
    (&["push"], Cmd::unread("compose push")),
    (
        &["restart"],
        Cmd::new("compose restart", &[C_RESTART_OPTS]).marks(Marks::ServiceTargets),
    ),
    (&["rm"], Cmd::new("compose rm", &[C_RM_OPTS]).marks(Marks::Rm)),
    (
        &["run"],
        Cmd::new("compose run", &[C_RUN_OPTS]).options_first().marks(Marks::ComposeRun),
    ),
    (&["scale"], Cmd::new("compose scale", &[&[Opt::flag("no-deps", &["no-deps"], &[])]])),
    (&["start"], Cmd::new("compose start", &[C_START_OPTS]).marks(Marks::ServiceTargets)),
    (&["stats"], Cmd::new("compose stats", &[C_STATS_OPTS])),
    (&["stop"], Cmd::new("compose stop", &[TIMEOUT]).marks(Marks::ServiceTargets)),
    (&["top"], Cmd::new("compose top", &[NONE])),
    (&["unpause"], Cmd::new("compose unpause", &[NONE])),
    (&["up"], Cmd::new("compose up", &[C_UP_OPTS]).marks(Marks::ComposeUp)),
    (&["version"], Cmd::new("compose version", &[C_VERSION_OPTS])),
    (&["volumes"], Cmd::new("compose volumes", &[C_VOLUMES_OPTS])),
    (&["wait"], Cmd::new("compose wait", &[C_WAIT_OPTS]).marks(Marks::ComposeWait)),
    (&["watch"], Cmd::new("compose watch", &[C_WATCH_OPTS])),
];

// ---------------------------------------------------------------------------------------------
// The command tree as the parser reads it

/// The tables above, as the parser reads them: built at compile time ([`Tree::pack`]), without
/// pointers. The gate is a position-independent executable, so each pointer in its static data
/// (a `&str`, a slice, a function) is a relocation written at every start, and every page so
/// written is copied for every call (docs/PERFORMANCE.md); these tables stay in read-only pages
/// shared with the file. The tables above are `const`: read only here, they are not in the
/// binary themselves.
static TREE: Tree<{ BUILT.opts_len }, { BUILT.cmds_len }, { BUILT.entries_len }> = BUILT.shrink();

/// [`TREE`] with room to spare, before it is cut to size.
const BUILT: Tree<2048, 256, 512> = Tree::pack(TOPLEVEL, COMPOSE);

/// Where a run of items lies in one of [`Tree`]'s arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    at: u16,
    len: u16,
}

impl Span {
    const fn new(at: usize, len: usize) -> Span {
        assert!(at + len <= u16::MAX as usize, "a docker table too long for a Span");
        Span {
            at: at as u16,
            len: len as u16,
        }
    }

    fn range(self) -> std::ops::Range<usize> {
        usize::from(self.at)..usize::from(self.at) + usize::from(self.len)
    }
}

/// A [`Cmd`] with its option tables concatenated in [`Tree::opts`].
#[derive(Clone, Copy)]
struct Command {
    verb: opts::Name,
    opts: Span,
    args: Args,
    marks: Marks,
}

/// What a word selects: a command (its index in [`Tree::cmds`]) or a group's subcommands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Cmd(u16),
    Group(Span),
}

/// A word (with its aliases) and what it selects.
#[derive(Clone, Copy)]
struct Entry {
    names: opts::Longs,
    node: Node,
}

/// The command tree: every command once (the same verb under two names is one command), the
/// top-level words, then compose's, then each group's.
struct Tree<const O: usize, const C: usize, const E: usize> {
    opts: [Opt; O],
    cmds: [Command; C],
    entries: [Entry; E],
    top: Span,
    compose: Span,
    opts_len: usize,
    cmds_len: usize,
    entries_len: usize,
}

const NO_OPT: Opt = Opt::flag("", &[], &[]);
const NO_CMD: Command = Command {
    verb: opts::Name::new(""),
    opts: Span { at: 0, len: 0 },
    args: Args::Unread,
    marks: Marks::None,
};
const NO_ENTRY: Entry = Entry {
    names: opts::Longs::new(&[]),
    node: Node::Cmd(0),
};

impl<const O: usize, const C: usize, const E: usize> Tree<O, C, E> {
    const fn pack(top: &[(&str, Top)], compose: &[Sub]) -> Self {
        let mut t = Tree {
            opts: [NO_OPT; O],
            cmds: [NO_CMD; C],
            entries: [NO_ENTRY; E],
            top: Span::new(0, top.len()),
            compose: Span::new(top.len(), compose.len()),
            opts_len: 0,
            cmds_len: 0,
            entries_len: top.len() + compose.len(),
        };
        assert!(t.entries_len <= E, "docker's tables outgrew Tree::pack's room for entries");
        let mut i = 0;
        while i < top.len() {
            let (name, what) = top[i];
            let node = match what {
                Top::Cmd(cmd) => Node::Cmd(t.add(cmd)),
                Top::Group(subs) => Node::Group(t.group(subs)),
            };
            t.entries[i] = Entry {
                names: opts::Longs::new(&[name]),
                node,
            };
            i += 1;
        }
        let mut i = 0;
        while i < compose.len() {
            t.entries[top.len() + i] = t.sub(compose[i]);
            i += 1;
        }
        t
    }

    const fn group(&mut self, subs: &[Sub]) -> Span {
        let at = self.entries_len;
        self.entries_len += subs.len();
        assert!(self.entries_len <= E, "docker's tables outgrew Tree::pack's room for entries");
        let mut i = 0;
        while i < subs.len() {
            self.entries[at + i] = self.sub(subs[i]);
            i += 1;
        }
        Span::new(at, subs.len())
    }

    const fn sub(&mut self, (names, cmd): Sub) -> Entry {
        Entry {
            names: opts::Longs::new(names),
            node: Node::Cmd(self.add(cmd)),
        }
    }

    /// The index of `cmd` in `cmds`, added unless its verb is there already (which must then
    /// be the same command).
    const fn add(&mut self, cmd: Cmd) -> u16 {
        let mut len = 0;
        let mut t = 0;
        while t < cmd.opts.len() {
            len += cmd.opts[t].len();
            t += 1;
        }
        let mut i = 0;
        while i < self.cmds_len {
            let c = self.cmds[i];
            if crate::packed::same(c.verb.as_bytes(), cmd.verb.as_bytes()) {
                assert!(
                    c.opts.len as usize == len && c.args as u8 == cmd.args as u8 && c.marks as u8 == cmd.marks as u8,
                    "two docker commands with one verb"
                );
                return i as u16;
            }
            i += 1;
        }
        assert!(self.cmds_len < C, "docker's tables outgrew Tree::pack's room for commands");
        assert!(self.opts_len + len <= O, "docker's tables outgrew Tree::pack's room for options");
        let at = self.opts_len;
        let mut t = 0;
        while t < cmd.opts.len() {
            let mut k = 0;
            while k < cmd.opts[t].len() {
                self.opts[self.opts_len] = cmd.opts[t][k];
                self.opts_len += 1;
                k += 1;
            }
            t += 1;
        }
        self.cmds[self.cmds_len] = Command {
            verb: opts::Name::new(cmd.verb),
            opts: Span::new(at, len),
            args: cmd.args,
            marks: cmd.marks,
        };
        self.cmds_len += 1;
        (self.cmds_len - 1) as u16
    }

    /// The tree in arrays of its own size.
    const fn shrink<const O2: usize, const C2: usize, const E2: usize>(&self) -> Tree<O2, C2, E2> {
        let mut t = Tree {
            opts: [NO_OPT; O2],
            cmds: [NO_CMD; C2],
            entries: [NO_ENTRY; E2],
            top: self.top,
            compose: self.compose,
            opts_len: O2,
            cmds_len: C2,
            entries_len: E2,
        };
        let mut i = 0;
        while i < O2 {
            t.opts[i] = self.opts[i];
            i += 1;
        }
        let mut i = 0;
        while i < C2 {
            t.cmds[i] = self.cmds[i];
            i += 1;
        }
        let mut i = 0;
        while i < E2 {
            t.entries[i] = self.entries[i];
            i += 1;
        }
        t
    }

    /// What `word` selects among the entries `among`.
    fn find(&self, among: Span, word: &str) -> Option<Node> {
        let entries = self.entries.get(among.range()).unwrap_or_default();
        entries.iter().find(|e| e.names.contains(word)).map(|e| e.node)
    }

    fn command(&self, node: Node) -> Option<&Command> {
        match node {
            Node::Cmd(i) => self.cmds.get(usize::from(i)),
            Node::Group(_) => None,
        }
    }

    fn opts(&self, cmd: &Command) -> &[Opt] {
        self.opts.get(cmd.opts.range()).unwrap_or_default()
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing

/// Parse docker's argv (without the program name).
pub fn parse(args: &[String]) -> Invocation {
    let mut inv = Invocation::new(Tool::Docker, args);
    let mut files = Vec::new();
    match parse_call(args, &mut files) {
        Ok((actions, claims)) => {
            inv.actions = actions;
            inv.claims = claims;
            inv.files = files;
            inv
        }
        Err(problem) => inv.with_problem(problem),
    }
}

/// pflag with parsing stopped at the first operand.
const OPTIONS_FIRST: Style = Style {
    interspersed: false,
    ..Style::PFLAG
};

fn parse_call(args: &[String], files: &mut Vec<LocalFile>) -> Result<(Vec<Action>, Vec<Claim>), String> {
    let root = opts::scan(args, GLOBAL, &OPTIONS_FIRST).map_err(|e| format!("docker: {e}"))?;
    let mut claims = Vec::new();
    let mut tls = false;
    for f in root.opts() {
        let pinned = match f.id.as_str() {
            "host" => Some(("DOCKER_HOST", if f.written.starts_with("--") { "--host" } else { "-H" })),
            "context" => Some(("DOCKER_CONTEXT", if f.written.starts_with("--") { "--context" } else { "-c" })),
            "config" => Some(("DOCKER_CONFIG", "--config")),
            "tls" | "tlsverify" | "tlscacert" | "tlscert" | "tlskey" => {
                tls = true;
                None
            }
            _ => None,
        };
        if let Some((var, flag)) = pinned {
            claims.push(Claim::Pinned {
                var,
                value: f.value.clone().unwrap_or_default(),
                flag: flag.to_string(),
            });
        }
    }
    let words: Vec<String> = root.positionals().into_iter().map(String::from).collect();
    let mut actions = match words.split_first() {
        // `docker -v` prints the version; `docker` alone (or with `-h`, `-D`, …) prints help.
        None if root.has("version") => vec![Action::new("version")],
        None => vec![Action::new("help")],
        Some((first, rest)) => subcommand(first, rest, files)?,
    };
    if tls {
        actions.push(Action::new(TLS_VERB));
    }
    Ok((actions, claims))
}

fn subcommand(word: &str, rest: &[String], files: &mut Vec<LocalFile>) -> Result<Vec<Action>, String> {
    if word == "help" {
        // `docker help X` prints X's help; for a plugin it runs the plugin to ask it.
        return Ok(vec![match rest.first() {
            Some(x) if x != "compose" && toplevel(x).is_none() => Action::new(format!("help {x}")),
            _ => Action::new("help"),
        }]);
    }
    if word == "compose" {
        return compose(rest, files);
    }
    if word == "buildx" {
        return Ok(vec![buildx(rest)]);
    }
    match toplevel(word) {
        Some(Node::Group(subs)) => group(word, subs, rest, files),
        Some(node) => match TREE.command(node) {
            Some(cmd) => Ok(vec![read(cmd, rest, NONE, files)?]),
            None => Ok(vec![Action::new(word)]),
        },
        // A CLI plugin (`docker-<word>`) or a typo: named as typed, so nothing classifies it.
        None => Ok(vec![Action::new(word)]),
    }
}

/// The buildx plugin (`docker-buildx`): its reads of the builders (`ls`, `du`, and `inspect`
/// without `--bootstrap`, which starts one) are verbs of their own; anything else keeps the
/// plugin's name, which the policy does not classify. `--builder <name>` may come first.
fn buildx(rest: &[String]) -> Action {
    let mut words = rest.iter().map(String::as_str).peekable();
    let mut sub = None;
    while let Some(w) = words.next() {
        if w == "--builder" {
            words.next();
        } else if !w.starts_with('-') {
            sub = Some(w);
            break;
        }
    }
    let bootstraps = rest.iter().any(|w| w == "--bootstrap" || w.starts_with("--bootstrap="));
    match sub {
        Some(s @ ("ls" | "du")) => Action::new(format!("buildx {s}")),
        Some("inspect") if !bootstraps => Action::new("buildx inspect"),
        _ => Action::new("buildx"),
    }
}

fn toplevel(word: &str) -> Option<Node> {
    TREE.find(TREE.top, word)
}

/// The command `word` names among `subs`.
fn find(subs: Span, word: &str) -> Option<&'static Command> {
    TREE.command(TREE.find(subs, word)?)
}

/// A management group (`container`, `image`, …): the next word is its subcommand.
fn group(name: &str, subs: Span, args: &[String], files: &mut Vec<LocalFile>) -> Result<Vec<Action>, String> {
    let Some((first, rest)) = args.split_first() else {
        return Ok(vec![Action::new("help")]);
    };
    if first.len() > 1 && first.starts_with('-') {
        if args.len() == 1 && (first == "--help" || first == "-h") {
            return Ok(vec![Action::new("help")]);
        }
        // cobra would parse it as an option of the group itself, which has none but help.
        return Err(format!("docker {name}: option {first} before the subcommand is not understood"));
    }
    Ok(vec![match find(subs, first) {
        Some(cmd) => read(cmd, rest, NONE, files)?,
        None => Action::new(format!("{name} {first}")),
    }])
}

/// Read one subcommand's arguments against its table (plus `extra`, and help). The local files
/// it reads or writes go to `files`.
fn read(cmd: &Command, args: &[String], extra: &[Opt], files: &mut Vec<LocalFile>) -> Result<Action, String> {
    let verb = cmd.verb.as_str();
    if cmd.args == Args::Unread {
        return Ok(Action::new(if unread_help(args) { "help" } else { verb }));
    }
    let mut table: Vec<Opt> = TREE.opts(cmd).iter().chain(extra).copied().collect();
    let h_taken = table.iter().any(|o| o.short.contains(&'h'));
    table.push(if h_taken { HELP_LONG } else { HELP });
    let style = if cmd.args == Args::OptionsFirst {
        OPTIONS_FIRST
    } else {
        Style::PFLAG
    };
    let parsed = opts::scan(args, &table, &style).map_err(|e| format!("docker {verb}: {e}"))?;
    if parsed.has("help") {
        return Ok(Action::new("help"));
    }
    check_operands(verb, &parsed.positionals()).map_err(|e| format!("docker {verb}: {e}"))?;
    let mut action = Action::new(verb);
    cmd.marks.add(&parsed, &mut action).map_err(|e| format!("docker {verb}: {e}"))?;
    files.extend(local_files(verb, &parsed));
    Ok(action)
}

/// The local files a command writes or reads, as the client names them (the local-write
/// model): `-o` of `save`, `export`, `compose export`, `compose config`; `--iidfile` of `build`;
/// `--cidfile` of `run`/`create`; and `cp`'s local side (cli/command/container/cp.go
/// `splitCpArg`: a path starting with `/`, with no `:`, or with a `.` before its `:`): what
/// comes out of a container is an archive whose names the container chooses, what goes in is
/// read here.
fn local_files(verb: &str, p: &Parsed) -> Vec<LocalFile> {
    let flag_of = |f: &opts::Found| f.written.split('=').next().unwrap_or_default().to_string();
    let named = |id: &str| -> Vec<LocalFile> {
        p.all(id)
            .into_iter()
            .filter_map(|f| {
                let v = f.value.as_deref().filter(|v| !v.is_empty() && *v != "-")?;
                Some(LocalFile::write(v, flag_of(f)))
            })
            .collect()
    };
    match verb {
        "save" | "export" | "compose export" | "compose config" => named("output"),
        "build" => named("iidfile"),
        "run" | "create" => named("cidfile"),
        "cp" | "compose cp" => {
            let ops = p.positionals();
            let [src, dst] = ops.as_slice() else { return Vec::new() };
            let local = |a: &str| a.starts_with('/') || a.split_once(':').is_none_or(|(c, _)| c.starts_with('.'));
            let mut out = Vec::new();
            if local(dst) && *dst != "-" {
                out.push(LocalFile::writes(*dst, verb, Access::WriteTree));
            }
            if local(src) && *src != "-" {
                out.push(LocalFile::read(*src, verb, false));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// A verb whose options the grammar does not read prints its help, and sends nothing, when
/// `--help` or `-h` stands where no option before it could take it as a value: every word
/// before it is an operand.
fn unread_help(args: &[String]) -> bool {
    let Some(i) = args.iter().position(|a| matches!(a.as_str(), "--help" | "-h" | "--help=true")) else {
        return false;
    };
    args[..i].iter().all(|a| !a.starts_with('-'))
}

// ---------------------------------------------------------------------------------------------
// Operands

/// What an operand must be. The client pastes operands into API paths
/// (`"/networks/" + name`) and `path.Join` cleans the result, so `docker network inspect
/// ../swarm` is `GET /swarm` and `docker rm ../volumes/data` deletes a volume: an operand that
/// is not a name, id or image reference docker accepts is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A container, network, volume, secret, config, node, service, checkpoint or stack: a
    /// name or id (`[A-Za-z0-9][A-Za-z0-9_.-]*`, a container name also with docker's leading
    /// `/`).
    Name,
    /// An image or plugin reference: `[host[:port]/]path[:tag][@digest]`, segments that start
    /// with a letter or digit and hold only `A-Za-z0-9_.:@+-`.
    Ref,
    /// `inspect`: any object, so a name or a reference.
    NameOrRef,
    /// `cp`: `CONTAINER:PATH` (the container a name) or a local path.
    Cp,
}

/// Which operands of a verb are checked, and as what.
enum Operands {
    /// Every operand.
    All(Kind),
    /// The first operand only (the rest is a command or a local path).
    First(Kind),
    /// By position; operands past the list are not checked.
    Each(&'static [Option<Kind>]),
    /// None reaches an API path (local commands, search terms, build contexts).
    Free,
}

fn operands(verb: &str) -> Operands {
    use Kind::*;
    match verb {
        "run" | "create" => Operands::First(Ref),
        "exec" | "top" | "port" => Operands::First(Name),
        "cp" => Operands::All(Cp),
        "commit" => Operands::Each(&[Some(Name), Some(Ref)]),
        "import" => Operands::Each(&[None, Some(Ref)]),
        "tag" | "pull" | "push" | "rmi" | "history" | "save" | "image inspect" | "manifest inspect" | "manifest create"
        | "manifest annotate" | "manifest push" | "manifest rm" | "plugin inspect" => Operands::All(Ref),
        "inspect" => Operands::All(NameOrRef),
        v if v.starts_with("compose ") || v.starts_with("context ") => Operands::Free,
        "build" | "search" | "load" | "events" | "info" | "version" | "help" | "ps" | "images" | "system df" => Operands::Free,
        _ => Operands::All(Name),
    }
}

fn check_operands(verb: &str, ops: &[&str]) -> Result<(), String> {
    let check = |kind: Kind, op: &str| -> Result<(), String> {
        // A word a remote shell expands (`docker restart $(docker ps -q)`, `{api,db}` over ssh)
        // is judged as the construct it is (`grammar::remote`, tier 3): its value is not known
        // here. What it says literally must still not step out of the path.
        if op.contains(['$', '`', '{', '}', '*', '[', '~']) && !op.contains(['/', '\\', '%', '?', '#']) {
            return Ok(());
        }
        let ok = match kind {
            Kind::Name => is_name(op.strip_prefix('/').unwrap_or(op)),
            Kind::Ref => is_reference(op),
            Kind::NameOrRef => is_name(op.strip_prefix('/').unwrap_or(op)) || is_reference(op),
            Kind::Cp => match op.split_once(':') {
                Some((c, _)) if !c.contains('/') && !c.is_empty() => is_name(c),
                _ => true,
            },
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{op:?} is not a name, id or image reference docker accepts (the client would put it into an API path); name the object plainly"
            ))
        }
    };
    match operands(verb) {
        Operands::Free => Ok(()),
        Operands::All(k) => ops.iter().try_for_each(|o| check(k, o)),
        Operands::First(k) => ops.first().map_or(Ok(()), |o| check(k, o)),
        Operands::Each(kinds) => ops
            .iter()
            .zip(kinds.iter())
            .try_for_each(|(o, k)| k.map_or(Ok(()), |k| check(k, o))),
    }
}

/// A docker object name or id.
fn is_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphanumeric()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// An image reference, read strictly enough that no segment can step out of an API path.
fn is_reference(s: &str) -> bool {
    !s.is_empty()
        && s.split('/').all(|seg| {
            seg.starts_with(|c: char| c.is_ascii_alphanumeric())
                && seg
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'@' | b'+' | b'-'))
        })
}

/// `docker compose [project options] SUBCOMMAND …`
fn compose(args: &[String], files: &mut Vec<LocalFile>) -> Result<Vec<Action>, String> {
    let root = opts::scan(args, COMPOSE_GLOBAL, &OPTIONS_FIRST).map_err(|e| format!("docker compose: {e}"))?;
    let mut extra: Vec<Action> = Vec::new();
    let mut add = |verb: &str| {
        if !extra.iter().any(|a| a.verb == verb) {
            extra.push(Action::new(verb));
        }
    };
    for file in root.values("file") {
        if reads_stdin(file) {
            add(COMPOSE_STDIN);
        } else if is_remote(file) {
            add(COMPOSE_REMOTE);
        }
    }
    if root.values("env-file").into_iter().any(reads_stdin) {
        add(COMPOSE_STDIN);
    }
    let words: Vec<String> = root.positionals().into_iter().map(String::from).collect();
    let mut action = match words.split_first() {
        None if root.has("version") => Action::new("compose version"),
        None => Action::new("help"),
        // compose's own `help [SUBCOMMAND]` prints help.
        Some((sub, _)) if sub == "help" => Action::new("help"),
        Some((sub, rest)) => match find(TREE.compose, sub) {
            Some(cmd) => read(cmd, rest, DRY_RUN, files)?,
            None => Action::new(format!("compose {sub}")),
        },
    };
    // The project a service belongs to: `-p`/`--project-name` (the last one given). Without it
    // compose works the name out from files argv does not show; the gate does the same before
    // `decide()` (`crate::compose`), from the options that steer it.
    let files = ComposeFiles {
        dir: root
            .values("project-directory")
            .into_iter()
            .chain(root.values("workdir"))
            .last()
            .map(String::from),
        files: root.values("file").into_iter().map(String::from).collect(),
        env_files: root.values("env-file").into_iter().map(String::from).collect(),
    };
    let project = match root.values("project-name").last() {
        Some(p) => Project::Named(p.to_string()),
        None => Project::Implied(files.clone()),
    };
    for t in &mut action.targets {
        if let Target::Service { project: p, files: f, .. } = t {
            p.clone_from(&project);
            f.clone_from(&files);
        }
    }
    if action.verb == "compose up" {
        action.compose = Some(files);
    }
    Ok(std::iter::once(action).chain(extra).collect())
}

/// `-` and the stdin device files.
fn reads_stdin(path: &str) -> bool {
    path == "-" || path == "/dev/stdin" || path.starts_with("/dev/fd/") || (path.starts_with("/proc/") && path.contains("/fd/"))
}

/// What compose's remote loaders accept: any `scheme://` (git over http(s)/ssh/git, `oci://`),
/// scp-like `user@host:path`, and buildkit's bare `github.com/…`.
fn is_remote(path: &str) -> bool {
    path.contains("://") || path.contains('@') || path.starts_with("github.com/")
}

// ---------------------------------------------------------------------------------------------
// Marks

/// `run` and `create`: everything that reaches past the container's own isolation.
fn container_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    if p.has("privileged") {
        a.add("privileged");
    }
    if p.has("use-api-socket") {
        a.add("docker-socket");
    }
    for id in ["pid", "ipc", "uts", "userns", "cgroupns"] {
        for v in p.values(id) {
            namespace_marks(v, a);
        }
    }
    network_marks(p, a)?;
    if !p.all("cap-add").is_empty() {
        a.add("cap-add");
    }
    security_opt_marks(p, a);
    if !p.all("device").is_empty() || !p.all("device-cgroup-rule").is_empty() {
        a.add("device");
    }
    if !p.all("volumes-from").is_empty() {
        a.add("volumes-from");
    }
    for v in p.values("volume") {
        volume_marks(v, a);
    }
    for v in p.values("mount") {
        mount_marks(v, a)?;
    }
    Ok(())
}

/// `host` (or the old `host:…` spelling) shares the host's namespace; `container:<id>` joins
/// another container's, which may be the host's. Docker compares case-sensitively; this does
/// not, which only refuses more.
fn namespace_marks(value: &str, a: &mut Action) {
    let v = value.trim().to_ascii_lowercase();
    if v == "host" || v.starts_with("host:") {
        a.add("host-namespace");
    } else if v.starts_with("container:") {
        a.add("container-namespace");
    }
}

/// `--network`/`--net` take a name, `host`, `container:<id>`, or (docker 25+) the CSV form
/// `name=<net>,alias=…`.
fn network_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    for v in p.values("network") {
        namespace_marks(v, a);
        if v.contains('=') {
            for field in csv_fields(v).map_err(|e| format!("--network {v:?}: {e}"))? {
                if let Some((key, name)) = field.split_once('=')
                    && key.eq_ignore_ascii_case("name")
                {
                    namespace_marks(name, a);
                }
            }
        }
    }
    Ok(())
}

/// Only `no-new-privileges` hardens; every other security option (`seccomp=…`, `apparmor=…`,
/// `label=…`, `systempaths=unconfined`) can loosen confinement.
fn security_opt_marks(p: &Parsed, a: &mut Action) {
    let hardening = |v: &str| matches!(v, "no-new-privileges" | "no-new-privileges=true" | "no-new-privileges:true");
    if p.values("security-opt").into_iter().any(|v| !hardening(v)) {
        a.add("security-opt");
    }
}

/// `-v SRC:DST[:OPTS]`: the daemon takes SRC (up to the first `:`) as a host path when it is
/// absolute; the client makes `.`-relative sources absolute against the cwd. One field is a
/// container path only (an anonymous volume).
fn volume_marks(spec: &str, a: &mut Action) {
    let Some((src, _)) = spec.split_once(':') else {
        return;
    };
    if src.starts_with('/') || src.starts_with('.') || src.starts_with('~') {
        a.add("bind-mount");
        if protected_host_path(src) {
            a.add("host-mount");
        }
    }
}

/// `--mount type=bind,source=/,target=/h` (a CSV record, keys case-insensitive, last one wins;
/// every source given is checked). A volume with `volume-opt` is created with driver options,
/// and the local driver's `type=none,o=bind,device=<path>` binds any host path.
fn mount_marks(spec: &str, a: &mut Action) -> Result<(), String> {
    let fields = csv_fields(spec).map_err(|e| format!("--mount {spec:?}: {e}"))?;
    let mut kind = String::from("volume");
    let mut sources = Vec::new();
    for field in &fields {
        let (key, value) = field.split_once('=').unwrap_or((field.as_str(), ""));
        if !key.is_ascii() || (!value.is_ascii() && key.eq_ignore_ascii_case("type")) {
            // Go lower-cases with Unicode rules (`İ` -> `i`); do not guess how it folds.
            return Err(format!("--mount {spec:?}: non-ASCII key or type"));
        }
        match key.to_ascii_lowercase().as_str() {
            "type" => kind = value.to_ascii_lowercase(),
            "source" | "src" => sources.push(value),
            "volume-opt" => a.add("volume-opt"),
            _ => {}
        }
    }
    if kind == "bind" {
        a.add("bind-mount");
        if sources.iter().any(|s| protected_host_path(s)) {
            a.add("host-mount");
        }
    }
    Ok(())
}

/// Whether binding `path` from the host would expose a [`PROTECTED`] path. A path that is not
/// absolute, or climbs with `..`, cannot be judged from argv and counts as protected.
pub fn protected_host_path(path: &str) -> bool {
    if !path.starts_with('/') {
        return true;
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return true,
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return true; // the host's root
    }
    let norm = format!("/{}", parts.join("/"));
    PROTECTED.iter().any(|p| {
        norm == *p
            || norm.strip_prefix(p).is_some_and(|r| r.starts_with('/'))
            || p.strip_prefix(norm.as_str()).is_some_and(|r| r.starts_with('/'))
    })
}

/// One record of Go's `encoding/csv` as docker reads `--mount` and `--network`: comma-separated
/// fields, a field may be quoted with `"` (`""` is a quote). What Go's reader rejects is an
/// error here too; a line break is refused because Go would read only the first line.
fn csv_fields(s: &str) -> Result<Vec<String>, String> {
    if s.contains(['\n', '\r']) {
        return Err("a line break in the value".into());
    }
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("an unterminated quote".into()),
                }
            }
            out.push(field);
            match chars.next() {
                None => return Ok(out),
                Some(',') => {}
                Some(_) => return Err("text after a closing quote".into()),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        out.push(field);
                        return Ok(out);
                    }
                    Some(',') => break,
                    Some('"') => return Err("a quote inside an unquoted field".into()),
                    Some(c) => field.push(c),
                }
            }
            out.push(field);
        }
    }
}

/// `exec` and `compose exec`.
fn exec_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    if p.has("privileged") {
        a.add("privileged");
    }
    Ok(())
}

/// `restart`, `start`, `stop`, `kill`: every operand is a container, by name or id.
fn container_targets(p: &Parsed, a: &mut Action) -> Result<(), String> {
    a.targets = p.positionals().into_iter().map(|c| Target::Container(c.to_string())).collect();
    Ok(())
}

/// `stop` and `restart`: the containers, and `signal` when the call chooses how the process
/// ends instead of the container's own stop sequence: a signal other than SIGTERM (`-s KILL`
/// is `docker kill`; the engine sends it as `?signal=KILL`), or `-t 0` (SIGKILL at once).
fn stop_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    container_targets(p, a)?;
    let term = |s: &str| {
        let s = s.trim().to_ascii_uppercase();
        matches!(s.strip_prefix("SIG").unwrap_or(&s), "TERM" | "15")
    };
    if p.last("signal").is_some_and(|s| !term(s)) || p.last("timeout").is_some_and(|t| t.trim().parse::<i64>() == Ok(0)) {
        a.add("signal");
    }
    Ok(())
}

/// `compose restart|start|stop [SERVICE…]`: no service named means every service of the project.
fn service_targets(p: &Parsed, a: &mut Action) -> Result<(), String> {
    let services = p.positionals();
    a.targets = if services.is_empty() {
        vec![Target::All("every service of the compose project".into())]
    } else {
        services
            .into_iter()
            .map(|s| Target::Service {
                project: Project::Implied(ComposeFiles::default()),
                name: s.to_string(),
                files: ComposeFiles::default(),
                container: None,
            })
            .collect()
    };
    Ok(())
}

/// `start -a/-i` attaches to the main process (stdin with `-i`): an exec equivalent.
fn start_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    container_targets(p, a)?;
    if p.has("attach") || p.has("interactive") {
        a.add("attach");
    }
    if !p.all("checkpoint").is_empty() || !p.all("checkpoint-dir").is_empty() {
        a.add("checkpoint");
    }
    Ok(())
}

/// `rm -v`, `compose down -v`, `compose rm -v` delete volumes.
fn rm_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    if p.has("volumes") {
        a.add("volumes");
    }
    if !p.all("rmi").is_empty() {
        a.add("rmi");
    }
    Ok(())
}

/// Legacy `build`: `--network host` and security options reach the host during `RUN` steps.
fn build_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    for v in p.values("network") {
        namespace_marks(v, a);
    }
    security_opt_marks(p, a);
    Ok(())
}

fn volume_create_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    if !p.all("opt").is_empty() {
        a.add("volume-opt");
    }
    Ok(())
}

fn compose_build_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    if !p.all("ssh").is_empty() {
        a.add("ssh");
    }
    if p.has("push") {
        a.add("push");
    }
    Ok(())
}

fn compose_config_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    if !p.all("output").is_empty() {
        a.add("output-file");
    }
    Ok(())
}

fn compose_wait_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    if p.has("down-project") {
        a.add("down-project");
    }
    Ok(())
}

fn compose_run_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    for v in p.values("volume") {
        volume_marks(v, a);
    }
    if !p.all("cap-add").is_empty() {
        a.add("cap-add");
    }
    Ok(())
}

/// `compose up`: tier 2 only for named services, detached, recreating nothing beyond what
/// changed; each way out of that shape is a mark.
fn compose_up_marks(p: &Parsed, a: &mut Action) -> Result<(), String> {
    service_targets(p, a)?;
    if p.positionals().is_empty() {
        a.add("all-services");
    }
    // `--wait` implies detached mode.
    if !p.has("detach") && !p.has("wait") {
        a.add("attached");
    }
    if p.has("build") {
        a.add("build");
    }
    if p.has("force-recreate") || p.has("always-recreate-deps") {
        a.add("force-recreate");
    }
    if p.has("renew-anon-volumes") {
        a.add("renew-anon-volumes");
    }
    if p.has("remove-orphans") {
        a.add("remove-orphans");
    }
    if !p.all("scale").is_empty() {
        a.add("scale");
    }
    if p.values("pull").into_iter().any(|v| !matches!(v, "missing" | "never" | "policy")) {
        a.add("pull");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;
    use pretty_assertions::assert_eq;

    /// A command as the tables write it and as the parser reads it, side by side.
    fn written(c: &Cmd) -> String {
        let opts: Vec<Opt> = c.opts.iter().flat_map(|t| t.iter().copied()).collect();
        format!("{} {:?} {:?} {:?}", c.verb, c.args, c.marks, opts)
    }

    fn read_as(node: Option<Node>) -> String {
        match TREE.command(node.expect("the word is in the tree")) {
            Some(c) => format!("{} {:?} {:?} {:?}", c.verb, c.args, c.marks, TREE.opts(c)),
            None => "a group".to_string(),
        }
    }

    /// The tree the parser reads is the tables as written: every word (alias included) of
    /// every level selects the command, with the options, that the tables give it.
    #[test]
    fn the_packed_tree_is_the_tables_as_written() {
        let subs = |group: Span, written_subs: &[Sub]| {
            assert_eq!(usize::from(group.len), written_subs.len());
            for (names, cmd) in written_subs {
                for name in *names {
                    assert_eq!(read_as(TREE.find(group, name)), written(cmd), "{name}");
                }
            }
        };
        assert_eq!(usize::from(TREE.top.len), TOPLEVEL.len());
        for (name, top) in TOPLEVEL {
            match (top, TREE.find(TREE.top, name)) {
                (Top::Cmd(cmd), node) => assert_eq!(read_as(node), written(cmd), "{name}"),
                (Top::Group(written_subs), Some(Node::Group(group))) => subs(group, written_subs),
                (Top::Group(_), node) => panic!("{name}: {node:?} for a group"),
            }
        }
        subs(TREE.compose, COMPOSE);
        assert!(TREE.find(TREE.top, "compose").is_none() && TREE.find(TREE.top, "").is_none());
    }

    fn verbs(words: &[&str]) -> Vec<String> {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        inv.actions.iter().map(|a| a.verb.clone()).collect()
    }

    #[test]
    fn local_files_docker_writes_and_reads_are_declared() {
        let files = |words: &[&str]| -> Vec<(String, Access, String)> {
            let inv = parse(&argv(words));
            assert_eq!(inv.problem, None, "{words:?}");
            inv.files.into_iter().map(|f| (f.path, f.access, f.flag)).collect()
        };
        let f = |p: &str, a: Access, flag: &str| (p.to_string(), a, flag.to_string());
        assert_eq!(files(&["save", "-o", "img.tar", "app:1"]), [f("img.tar", Access::Write, "-o")]);
        assert_eq!(files(&["image", "save", "app:1"]), []);
        assert_eq!(
            files(&["container", "export", "--output=c.tar", "web"]),
            [f("c.tar", Access::Write, "--output")]
        );
        assert_eq!(
            files(&["compose", "config", "-o", "full.yaml"]),
            [f("full.yaml", Access::Write, "-o")]
        );
        assert_eq!(
            files(&["build", "--iidfile", "id.txt", "."]),
            [f("id.txt", Access::Write, "--iidfile")]
        );
        assert_eq!(
            files(&["run", "--cidfile", "cid", "alpine"]),
            [f("cid", Access::Write, "--cidfile")]
        );
        assert_eq!(files(&["cp", "web:/etc/nginx", "conf"]), [f("conf", Access::WriteTree, "cp")]);
        assert_eq!(files(&["cp", "./a:b", "web:/tmp"]), [f("./a:b", Access::Read, "cp")]);
        assert_eq!(files(&["cp", "web:/var/log/x", "-"]), []);
        assert_eq!(
            files(&["compose", "cp", "api:/srv/out", "/tmp/out"]),
            [f("/tmp/out", Access::WriteTree, "compose cp")]
        );
    }

    fn action(words: &[&str]) -> Action {
        let inv = parse(&argv(words));
        assert_eq!(inv.problem, None, "{words:?}");
        assert_eq!(inv.actions.len(), 1, "{words:?}");
        inv.actions[0].clone()
    }

    fn marked(verb: &str, marks: &[&str]) -> Action {
        marks.iter().fold(Action::new(verb), |a, m| a.mark(*m))
    }

    fn problem(words: &[&str]) -> String {
        parse(&argv(words)).problem.unwrap_or_default()
    }

    fn on_containers(mut a: Action, names: &[&str]) -> Action {
        a.targets = names.iter().map(|n| Target::Container(n.to_string())).collect();
        a
    }

    fn on_services(mut a: Action, project: Option<&str>, names: &[&str]) -> Action {
        a.targets = names
            .iter()
            .map(|n| Target::Service {
                project: match project {
                    Some(p) => Project::Named(p.to_string()),
                    None => Project::Implied(ComposeFiles::default()),
                },
                name: n.to_string(),
                files: ComposeFiles::default(),
                container: None,
            })
            .collect();
        a
    }

    #[test]
    fn an_operand_the_client_would_paste_into_a_path_must_be_a_name_or_reference() {
        for words in [
            &["network", "inspect", "../swarm"][..],
            &["secret", "inspect", "../swarm/unlockkey"],
            &["start", "../exec/e1"],
            &["rm", "../volumes/data"],
            &["rm", "-f", "web", "../plugins/p1"],
            &["restart", "a/b"],
            &["logs", "web%2F..%2Fswarm"],
            &["inspect", "web?x=1"],
            &["image", "inspect", "ns/../../swarm"],
            &["exec", "../x", "sh"],
            &["top", ".."],
            &["network", "connect", "net", "../x"],
        ] {
            assert!(problem(words).contains("is not a name, id or image reference"), "{words:?}");
        }
        for words in [
            &["rm", "/web"][..],
            &["inspect", "registry.example:5000/ops/app:v2"],
            &["image", "inspect", "app@sha256:0123"],
            &["exec", "web", "cat", "../etc/x"],
            &["run", "--rm", "alpine", "ls", "../x"],
            &["cp", "web:/etc/x", "../out"],
            &["cp", "./a:b", "web:/tmp"],
            &["top", "web", "-h"],
            &["tag", "app:1", "registry.example/app:2"],
        ] {
            assert_eq!(parse(&argv(words)).problem, None, "{words:?}");
        }
    }

    #[test]
    fn help_of_a_verb_whose_options_are_not_read_is_help_when_nothing_can_take_it() {
        assert_eq!(verbs(&["volume", "rm", "--help"]), vec!["help"]);
        assert_eq!(verbs(&["swarm", "join-token", "worker", "-h"]), vec!["help"]);
        assert_eq!(verbs(&["swarm", "join-token", "--rotate", "--help"]), vec!["swarm join-token"]);
        assert_eq!(verbs(&["system", "prune"]), vec!["system prune"]);
        // `top`'s words after the container are ps's: `-h` is not help there.
        assert_eq!(verbs(&["top", "web", "-h"]), vec!["top"]);
    }

    #[test]
    fn container_restart_is_restart() {
        assert_eq!(
            action(&["container", "restart", "api"]),
            on_containers(Action::new("restart"), &["api"])
        );
        assert_eq!(
            action(&["restart", "-t", "5", "api"]),
            on_containers(Action::new("restart"), &["api"])
        );
    }

    #[test]
    fn lifecycle_calls_name_every_container_or_service_they_act_on() {
        for (words, verb, names) in [
            (&["restart", "api", "db"][..], "restart", &["api", "db"][..]),
            (&["container", "stop", "--signal", "SIGTERM", "-t", "5", "api"], "stop", &["api"]),
            (&["-l", "debug", "start", "api"], "start", &["api"]),
            (&["kill", "-s", "HUP", "api"], "kill", &["api"]),
            (&["container", "kill", "3f2a9c1b7d4e"], "kill", &["3f2a9c1b7d4e"]),
        ] {
            assert_eq!(action(words), on_containers(Action::new(verb), names), "{words:?}");
        }
        for (words, verb, project, names) in [
            (&["compose", "restart", "api"][..], "compose restart", None, &["api"][..]),
            (
                &["compose", "-p", "shop", "restart", "api"],
                "compose restart",
                Some("shop"),
                &["api"],
            ),
            (
                &["compose", "--project-name=shop", "stop", "-t", "5", "api", "db"],
                "compose stop",
                Some("shop"),
                &["api", "db"],
            ),
            (
                &["compose", "-p", "a", "-p", "shop", "start", "api"],
                "compose start",
                Some("shop"),
                &["api"],
            ),
            (
                &["compose", "-p", "shop", "up", "-d", "--no-deps", "api"],
                "compose up",
                Some("shop"),
                &["api"],
            ),
        ] {
            let mut want = on_services(Action::new(verb), project, names);
            if verb == "compose up" {
                want.compose = Some(ComposeFiles::default());
            }
            assert_eq!(action(words), want, "{words:?}");
        }
        let all = action(&["compose", "-p", "shop", "restart"]);
        assert_eq!(all.targets, [Target::All("every service of the compose project".into())]);
        assert_eq!(action(&["compose", "up", "-d"]).targets, all.targets);
        assert!(action(&["ps", "-a"]).targets.is_empty());
    }

    #[test]
    fn legacy_and_management_names_share_one_verb() {
        for (words, verb) in [
            (&["container", "ls"][..], "ps"),
            (&["container", "list"], "ps"),
            (&["container", "ps"], "ps"),
            (&["image", "ls"], "images"),
            (&["image", "list"], "images"),
            (&["image", "rm", "x"], "rmi"),
            (&["image", "remove", "x"], "rmi"),
            (&["container", "remove", "x"], "rm"),
            (&["builder", "build", "."], "build"),
            (&["image", "build", "."], "build"),
            (&["system", "events"], "events"),
            (&["system", "info"], "info"),
            (&["stack", "down", "s"], "stack rm"),
        ] {
            assert_eq!(verbs(words), vec![verb.to_string()], "{words:?}");
        }
    }

    #[test]
    fn global_options_come_before_the_subcommand_in_every_form() {
        assert_eq!(verbs(&["-l", "debug", "stop", "api"]), vec!["stop"]);
        assert_eq!(verbs(&["-Dl", "debug", "stop", "api"]), vec!["stop"]);
        assert_eq!(verbs(&["--log-level=debug", "--", "restart", "x"]), vec!["restart"]);
        assert_eq!(problem(&["ps", "-H", "tcp://x"]), "docker ps: unknown option -H");
    }

    #[test]
    fn host_context_and_config_are_claims_in_every_form() {
        let claim = |var: &'static str, value: &str, flag: &str| Claim::Pinned {
            var,
            value: value.into(),
            flag: flag.into(),
        };
        for (words, want) in [
            (&["-H", "tcp://x", "ps"][..], claim("DOCKER_HOST", "tcp://x", "-H")),
            (&["-Htcp://x", "ps"], claim("DOCKER_HOST", "tcp://x", "-H")),
            (&["-H=tcp://x", "ps"], claim("DOCKER_HOST", "tcp://x", "-H")),
            (&["-DHtcp://x", "ps"], claim("DOCKER_HOST", "tcp://x", "-H")),
            (&["--host=tcp://x", "ps"], claim("DOCKER_HOST", "tcp://x", "--host")),
            (&["--host", "tcp://x", "ps"], claim("DOCKER_HOST", "tcp://x", "--host")),
            (&["-c", "prod", "ps"], claim("DOCKER_CONTEXT", "prod", "-c")),
            (&["--context=prod", "ps"], claim("DOCKER_CONTEXT", "prod", "--context")),
            (&["--config", "/tmp/d", "ps"], claim("DOCKER_CONFIG", "/tmp/d", "--config")),
        ] {
            let inv = parse(&argv(words));
            assert_eq!(inv.claims, vec![want], "{words:?}");
            assert_eq!(inv.verb(), "ps");
        }
    }

    #[test]
    fn tls_options_add_an_action_the_policy_refuses() {
        assert_eq!(verbs(&["--tlsverify=false", "ps"]), vec!["ps", TLS_VERB]);
        assert_eq!(verbs(&["--tlscacert", "/tmp/ca.pem", "ps"]), vec!["ps", TLS_VERB]);
    }

    #[test]
    fn run_options_stop_at_the_image() {
        assert_eq!(action(&["run", "alpine", "--privileged"]), Action::new("run"));
        assert_eq!(action(&["run", "--privileged", "alpine"]), marked("run", &["privileged"]));
        assert_eq!(action(&["run", "--privileged=true", "alpine"]), marked("run", &["privileged"]));
        assert_eq!(action(&["run", "--privileged=false", "alpine"]), Action::new("run"));
        assert_eq!(action(&["run", "-h", "box", "alpine"]), Action::new("run"));
        assert_eq!(action(&["run", "--help", "alpine"]), Action::new("help"));
        assert_eq!(action(&["exec", "api", "--privileged", "sh"]), Action::new("exec"));
        assert_eq!(action(&["exec", "--privileged", "api", "sh"]), marked("exec", &["privileged"]));
    }

    #[test]
    fn host_namespaces_are_marked_in_every_spelling() {
        for words in [
            &["run", "--pid=host", "a"][..],
            &["run", "--net=host", "a"],
            &["run", "--network", "host", "a"],
            &["run", "--network=name=host,alias=x", "a"],
            &["create", "--ipc", "host", "a"],
            &["run", "--uts=host", "a"],
            &["run", "--userns=host", "a"],
            &["run", "--cgroupns=host", "a"],
            &["build", "--network=host", "."],
        ] {
            assert!(action(words).has("host-namespace"), "{words:?}");
        }
        assert_eq!(action(&["run", "--pid=container:db", "a"]), marked("run", &["container-namespace"]));
        assert_eq!(action(&["run", "--network=backend", "a"]), Action::new("run"));
    }

    #[test]
    fn dangerous_run_options_are_marked() {
        assert_eq!(action(&["run", "--cap-add=SYS_ADMIN", "a"]), marked("run", &["cap-add"]));
        assert_eq!(
            action(&["run", "--security-opt", "seccomp=unconfined", "a"]),
            marked("run", &["security-opt"])
        );
        assert_eq!(action(&["run", "--security-opt=no-new-privileges", "a"]), Action::new("run"));
        assert_eq!(action(&["run", "--device=/dev/sda", "a"]), marked("run", &["device"]));
        assert_eq!(action(&["run", "--volumes-from", "traefik", "a"]), marked("run", &["volumes-from"]));
        assert_eq!(action(&["run", "--use-api-socket", "a"]), marked("run", &["docker-socket"]));
    }

    #[test]
    fn host_root_and_socket_binds_are_host_mounts_in_every_form() {
        for words in [
            &["run", "-v", "/:/host", "a"][..],
            &["run", "-v=/:/h", "a"],
            &["run", "-v/:/h", "a"],
            &["run", "-itv/:/h", "a"],
            &["run", "--volume", "/:/h", "a"],
            &["run", "--volume=/var/run/docker.sock:/var/run/docker.sock", "a"],
            &["run", "-v", "/run/docker.sock:/s", "a"],
            &["run", "-v", "/etc:/e:ro", "a"],
            &["run", "-v", "//etc/../etc:/e", "a"],
            &["run", "-v", "/var:/v", "a"],
            &["run", "-v", "./x:/x", "a"],
            &["run", "--mount", "type=bind,src=/,dst=/h", "a"],
            &["run", "--mount=type=bind,source=/proc,target=/p", "a"],
            &["run", "--mount", "TYPE=BIND,\"source=/\",target=/h", "a"],
            &["create", "--mount", "type=bind,source=/srv,source=/root,target=/h", "a"],
        ] {
            assert!(action(words).has("host-mount"), "{words:?}");
        }
    }

    #[test]
    fn ordinary_volumes_and_binds_are_not_host_mounts() {
        assert_eq!(action(&["run", "-v", "data:/data", "a"]), Action::new("run"));
        assert_eq!(action(&["run", "-v", "/data", "a"]), Action::new("run"));
        assert_eq!(action(&["run", "-v", "/srv/app:/app", "a"]), marked("run", &["bind-mount"]));
        assert_eq!(action(&["run", "--mount", "type=volume,src=data,dst=/d", "a"]), Action::new("run"));
        assert_eq!(
            action(&["run", "--mount", "type=volume,src=x,dst=/d,volume-opt=device=/", "a"]),
            marked("run", &["volume-opt"])
        );
    }

    #[test]
    fn protected_paths_include_their_parents_and_children() {
        for p in [
            "/",
            "/var",
            "/var/run",
            "/run/docker.sock",
            "/etc/shadow",
            "/home/u/.ssh",
            "/usr/bin",
            "rel",
            "/srv/../etc",
        ] {
            assert!(protected_host_path(p), "{p}");
        }
        for p in ["/srv/app", "/tmp/x", "/var/log/app", "/opt/data", "/variable"] {
            assert!(!protected_host_path(p), "{p}");
        }
    }

    #[test]
    fn a_mount_value_go_would_reject_is_a_problem() {
        assert!(problem(&["run", "--mount", "type=bind,sou\"rce=/,target=/h", "a"]).contains("--mount"));
        assert!(problem(&["run", "--mount", "type=volume\ntype=bind,src=/", "a"]).contains("line break"));
    }

    #[test]
    fn rm_with_volumes_is_marked_in_a_cluster_too() {
        assert_eq!(action(&["rm", "-fv", "api"]), marked("rm", &["volumes"]));
        assert_eq!(action(&["container", "rm", "--volumes", "api"]), marked("rm", &["volumes"]));
        assert_eq!(action(&["rm", "--volumes=false", "api"]), Action::new("rm"));
    }

    #[test]
    fn start_with_attach_or_checkpoint_is_marked() {
        let web = |a| on_containers(a, &["web"]);
        assert_eq!(action(&["start", "-ai", "web"]), web(marked("start", &["attach"])));
        assert_eq!(
            action(&["start", "--checkpoint", "c1", "web"]),
            web(marked("start", &["checkpoint"]))
        );
        assert_eq!(action(&["start", "web"]), web(Action::new("start")));
    }

    #[test]
    fn never_verbs_are_named_without_reading_their_options() {
        assert_eq!(verbs(&["system", "prune", "-af", "--volumes"]), vec!["system prune"]);
        assert_eq!(verbs(&["volume", "remove", "data"]), vec!["volume rm"]);
        assert_eq!(verbs(&["login", "-u", "x", "--password-stdin"]), vec!["login"]);
        assert_eq!(verbs(&["context", "use", "prod"]), vec!["context use"]);
    }

    #[test]
    fn buildx_reads_of_the_builders_are_verbs_of_their_own() {
        assert_eq!(verbs(&["buildx", "ls"]), vec!["buildx ls"]);
        assert_eq!(verbs(&["buildx", "--builder", "b", "du", "--verbose"]), vec!["buildx du"]);
        assert_eq!(verbs(&["buildx", "inspect", "b"]), vec!["buildx inspect"]);
        assert_eq!(verbs(&["buildx", "inspect", "--bootstrap"]), vec!["buildx"]);
        assert_eq!(verbs(&["buildx", "rm", "b"]), vec!["buildx"]);
        assert_eq!(verbs(&["trust", "inspect", "--pretty", "nginx"]), vec!["trust inspect"]);
    }

    #[test]
    fn plugins_and_unknown_words_keep_the_word_typed() {
        assert_eq!(verbs(&["buildx", "build", "."]), vec!["buildx"]);
        assert_eq!(verbs(&["container", "frob"]), vec!["container frob"]);
        assert_eq!(verbs(&["help", "buildx"]), vec!["help buildx"]);
        assert_eq!(verbs(&["help", "run"]), vec!["help"]);
        assert_eq!(verbs(&["compose", "alpha", "viz"]), vec!["compose alpha"]);
    }

    #[test]
    fn help_and_version_without_a_subcommand() {
        assert_eq!(verbs(&[]), vec!["help"]);
        assert_eq!(verbs(&["--help"]), vec!["help"]);
        assert_eq!(verbs(&["-v"]), vec!["version"]);
        assert_eq!(verbs(&["ps", "--help"]), vec!["help"]);
        assert_eq!(verbs(&["ps", "--help=false"]), vec!["ps"]);
        // Root help does not stop the subcommand from running.
        assert_eq!(verbs(&["-h", "stop", "x"]), vec!["stop"]);
        assert_eq!(verbs(&["container"]), vec!["help"]);
    }

    #[test]
    fn unknown_options_and_missing_values_are_problems_naming_the_token() {
        assert_eq!(problem(&["restart", "--bogus", "api"]), "docker restart: unknown option --bogus");
        assert_eq!(problem(&["logs", "--tail"]), "docker logs: option --tail needs a value");
        assert_eq!(problem(&["-H"]), "docker: option -H needs a value");
        assert!(problem(&["container", "--x", "ls"]).contains("--x"));
    }

    #[test]
    fn compose_project_options_precede_the_subcommand() {
        assert_eq!(verbs(&["compose", "-f", "a.yml", "-p", "app", "ps"]), vec!["compose ps"]);
        assert_eq!(verbs(&["compose", "--dry-run", "restart", "web"]), vec!["compose restart"]);
        assert_eq!(verbs(&["compose", "restart", "--dry-run", "web"]), vec!["compose restart"]);
        assert_eq!(problem(&["compose", "up", "-f", "x.yml"]), "docker compose up: unknown option -f");
        assert_eq!(verbs(&["compose", "convert"]), vec!["compose config"]);
        assert_eq!(verbs(&["compose", "-v"]), vec!["compose version"]);
        assert_eq!(verbs(&["compose", "help", "up"]), vec!["help"]);
    }

    #[test]
    fn compose_up_is_marked_by_shape() {
        // `compose up` also carries the options that choose its files, for the gate to read them.
        let web = |a| {
            let mut a = on_services(a, None, &["web"]);
            a.compose = Some(ComposeFiles::default());
            a
        };
        assert_eq!(action(&["compose", "up", "-d", "web"]), web(Action::new("compose up")));
        assert_eq!(action(&["compose", "up", "--wait", "web"]), web(Action::new("compose up")));
        assert_eq!(
            action(&["compose", "up", "-d"]).marks,
            marked("compose up", &["all-services"]).marks
        );
        assert_eq!(action(&["compose", "up", "web"]), web(marked("compose up", &["attached"])));
        assert_eq!(
            action(&["compose", "up", "-dV", "--build", "--force-recreate", "web"]),
            web(marked("compose up", &["build", "force-recreate", "renew-anon-volumes"]))
        );
        assert_eq!(
            action(&["compose", "up", "-d", "--pull", "always", "web"]),
            web(marked("compose up", &["pull"]))
        );
    }

    #[test]
    fn compose_down_and_rm_with_volumes_are_marked() {
        assert_eq!(action(&["compose", "down", "-v"]), marked("compose down", &["volumes"]));
        assert_eq!(action(&["compose", "rm", "-fsv"]), marked("compose rm", &["volumes"]));
        assert_eq!(action(&["compose", "down", "--rmi", "all"]), marked("compose down", &["rmi"]));
    }

    #[test]
    fn compose_files_from_stdin_or_remotes_add_an_action() {
        assert_eq!(verbs(&["compose", "-f", "-", "up", "-d", "web"]), vec!["compose up", COMPOSE_STDIN]);
        assert_eq!(verbs(&["compose", "--file=/dev/stdin", "ps"]), vec!["compose ps", COMPOSE_STDIN]);
        assert_eq!(
            verbs(&["compose", "-f", "oci://reg/app:1", "ps"]),
            vec!["compose ps", COMPOSE_REMOTE]
        );
        assert_eq!(
            verbs(&["compose", "-f", "https://github.com/u/r.git@main", "ps"]),
            vec!["compose ps", COMPOSE_REMOTE]
        );
    }

    #[test]
    fn compose_run_and_exec_stop_options_at_the_service() {
        assert_eq!(action(&["compose", "run", "web", "-v", "/:/h"]), Action::new("compose run"));
        assert_eq!(
            action(&["compose", "run", "--volumes", "/:/h", "web"]),
            marked("compose run", &["bind-mount", "host-mount"])
        );
        assert_eq!(
            action(&["compose", "exec", "--privileged", "web", "sh"]),
            marked("compose exec", &["privileged"])
        );
        assert_eq!(action(&["compose", "exec", "web", "--privileged"]), Action::new("compose exec"));
    }
}
