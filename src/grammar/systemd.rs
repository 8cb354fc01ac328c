//! `systemctl` and `journalctl` as they are run on a remote host (systemd 252, Debian 12), for
//! the ssh policy: both parse with glibc `getopt_long` (abbreviations, clusters, options after
//! arguments).
//!
//! Owns: the option tables, systemctl's verbs and their aliases (`condrestart` is
//! `try-restart`), and the facts the policy matches: `systemctl <verb>` actions, a separate
//! `systemctl --host` action for `-H`/`-M` (which would act on another machine), the units a
//! start, stop or restart names (its cooldown targets) and their marks (`power`, `wide`, and
//! `plumbing` for the host's access paths and plumbing), how an operator's list of restartable
//! units changes those marks ([`apply_list`]: `unlisted`), and the `writes` mark on a
//! journalctl call that deletes, rotates or writes files.
//!
//! Must not: decide, or read anything. An option not in the tables is a problem (refused), and a
//! verb not in the list keeps its name so the policy refuses it as unclassified.

use crate::grammar::opts::{self, Item, Opt, Style};
use crate::grammar::{Action, Invocation, Target};
use crate::packed::{pairs, words};
use crate::tool::Tool;

/// `systemctl.c` `systemctl_parse_argv`.
const SYSTEMCTL: &[Opt] = &[
    Opt::flag("help", &["help"], &['h']),
    Opt::flag("version", &["version"], &[]),
    Opt::value("type", &["type"], &['t']),
    Opt::value("property", &["property"], &['p']),
    Opt::value("property-value", &[], &['P']),
    Opt::flag("all", &["all"], &['a']),
    Opt::flag("reverse", &["reverse"], &[]),
    Opt::flag("after", &["after"], &[]),
    Opt::flag("before", &["before"], &[]),
    Opt::flag("show-types", &["show-types"], &[]),
    Opt::flag("failed", &["failed"], &[]),
    Opt::flag("full", &["full"], &['l']),
    Opt::value("job-mode", &["job-mode"], &[]),
    Opt::flag("fail", &["fail"], &[]),
    Opt::flag("irreversible", &["irreversible"], &[]),
    Opt::flag("ignore-dependencies", &["ignore-dependencies"], &[]),
    Opt::flag("ignore-inhibitors", &["ignore-inhibitors"], &['i']),
    Opt::value("check-inhibitors", &["check-inhibitors"], &[]),
    Opt::flag("value", &["value"], &[]),
    Opt::flag("user", &["user"], &[]),
    Opt::flag("system", &["system"], &[]),
    Opt::flag("global", &["global"], &[]),
    Opt::flag("wait", &["wait"], &[]),
    Opt::flag("no-block", &["no-block"], &[]),
    Opt::value("legend", &["legend"], &[]),
    Opt::flag("no-legend", &["no-legend"], &[]),
    Opt::flag("no-pager", &["no-pager"], &[]),
    Opt::flag("no-wall", &["no-wall"], &[]),
    Opt::flag("dry-run", &["dry-run"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("no-warn", &["no-warn"], &[]),
    Opt::value("root", &["root"], &[]),
    Opt::value("image", &["image"], &[]),
    Opt::value("image-policy", &["image-policy"], &[]),
    Opt::flag("force", &["force"], &['f']),
    Opt::flag("no-reload", &["no-reload"], &[]),
    Opt::value("kill-whom", &["kill-whom"], &[]),
    Opt::value("kill-value", &["kill-value"], &[]),
    Opt::value("signal", &["signal"], &['s']),
    Opt::flag("no-ask-password", &["no-ask-password"], &[]),
    Opt::value("host", &["host"], &['H']),
    Opt::value("machine", &["machine"], &['M']),
    Opt::flag("runtime", &["runtime"], &[]),
    Opt::value("lines", &["lines"], &['n']),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("plain", &["plain"], &[]),
    Opt::value("state", &["state"], &[]),
    Opt::flag("recursive", &["recursive"], &['r']),
    Opt::flag("with-dependencies", &["with-dependencies"], &[]),
    Opt::value("preset-mode", &["preset-mode"], &[]),
    Opt::flag("firmware-setup", &["firmware-setup"], &[]),
    Opt::value("boot-loader-menu", &["boot-loader-menu"], &[]),
    Opt::value("boot-loader-entry", &["boot-loader-entry"], &[]),
    Opt::flag("now", &["now"], &[]),
    Opt::value("message", &["message"], &[]),
    Opt::flag("show-transaction", &["show-transaction"], &['T']),
    Opt::value("what", &["what"], &[]),
    Opt::value("reboot-argument", &["reboot-argument"], &[]),
    Opt::value("timestamp", &["timestamp"], &[]),
    Opt::flag("read-only", &["read-only"], &[]),
    Opt::flag("mkdir", &["mkdir"], &[]),
    Opt::flag("marked", &["marked"], &[]),
    Opt::value("drop-in", &["drop-in"], &[]),
    Opt::value("when", &["when"], &[]),
];

pairs! {
    /// systemctl verbs as `systemctl.c` names them, with aliases resolved.
    static SYSTEMCTL_VERBS = &[
        ("list-units", "list-units"),
        ("list-sockets", "list-sockets"),
        ("list-timers", "list-timers"),
        ("list-automounts", "list-automounts"),
        ("list-paths", "list-paths"),
        ("list-jobs", "list-jobs"),
        ("list-machines", "list-machines"),
        ("list-unit-files", "list-unit-files"),
        ("list-dependencies", "list-dependencies"),
        ("is-active", "is-active"),
        ("check", "is-active"),
        ("is-failed", "is-failed"),
        ("is-enabled", "is-enabled"),
        ("is-system-running", "is-system-running"),
        ("status", "status"),
        ("show", "show"),
        ("cat", "cat"),
        ("help", "help"),
        ("show-environment", "show-environment"),
        ("get-default", "get-default"),
        ("whoami", "whoami"),
        ("start", "start"),
        ("stop", "stop"),
        ("condstop", "stop"),
        ("reload", "reload"),
        ("restart", "restart"),
        ("try-restart", "try-restart"),
        ("condrestart", "try-restart"),
        ("reload-or-restart", "reload-or-restart"),
        ("try-reload-or-restart", "try-reload-or-restart"),
        ("reload-or-try-restart", "try-reload-or-restart"),
        ("force-reload", "try-reload-or-restart"),
        ("condreload", "try-reload-or-restart"),
        ("isolate", "isolate"),
        ("kill", "kill"),
        ("clean", "clean"),
        ("freeze", "freeze"),
        ("thaw", "thaw"),
        ("reset-failed", "reset-failed"),
        ("set-property", "set-property"),
        ("bind", "bind"),
        ("mount-image", "mount-image"),
        ("daemon-reload", "daemon-reload"),
        ("daemon-reexec", "daemon-reexec"),
        ("log-level", "log-level"),
        ("log-target", "log-target"),
        ("service-log-level", "service-log-level"),
        ("service-log-target", "service-log-target"),
        ("service-watchdogs", "service-watchdogs"),
        ("set-environment", "set-environment"),
        ("unset-environment", "unset-environment"),
        ("import-environment", "import-environment"),
        ("enable", "enable"),
        ("disable", "disable"),
        ("reenable", "reenable"),
        ("preset", "preset"),
        ("preset-all", "preset-all"),
        ("mask", "mask"),
        ("unmask", "unmask"),
        ("link", "link"),
        ("revert", "revert"),
        ("add-wants", "add-wants"),
        ("add-requires", "add-requires"),
        ("edit", "edit"),
        ("set-default", "set-default"),
        ("default", "default"),
        ("rescue", "rescue"),
        ("emergency", "emergency"),
        ("halt", "halt"),
        ("poweroff", "poweroff"),
        ("reboot", "reboot"),
        ("kexec", "kexec"),
        ("soft-reboot", "soft-reboot"),
        ("exit", "exit"),
        ("switch-root", "switch-root"),
        ("suspend", "suspend"),
        ("hibernate", "hibernate"),
        ("hybrid-sleep", "hybrid-sleep"),
        ("suspend-then-hibernate", "suspend-then-hibernate"),
        ("sleep", "sleep"),
    ];
}

words! {
    /// The verbs that start, stop or restart units: their arguments are the units a cooldown budget
    /// counts.
    pub static RESTART_VERBS = &[
        "start",
        "stop",
        "restart",
        "try-restart",
        "reload-or-restart",
        "try-reload-or-restart",
    ];
}

words! {
    /// Units that reboot, power off, suspend or otherwise take the whole host down (systemd's
    /// `special` targets and the services behind them).
    static POWER_UNITS = &[
        "reboot.target",
        "poweroff.target",
        "halt.target",
        "kexec.target",
        "soft-reboot.target",
        "shutdown.target",
        "final.target",
        "exit.target",
        "rescue.target",
        "emergency.target",
        "ctrl-alt-del.target",
        "initrd-switch-root.target",
        "sleep.target",
        "suspend.target",
        "hibernate.target",
        "hybrid-sleep.target",
        "suspend-then-hibernate.target",
        "systemd-reboot.service",
        "systemd-poweroff.service",
        "systemd-halt.service",
        "systemd-kexec.service",
        "systemd-soft-reboot.service",
        "systemd-exit.service",
        "systemd-suspend.service",
        "systemd-hibernate.service",
        "systemd-hybrid-sleep.service",
        "systemd-suspend-then-hibernate.service",
        "rescue.service",
        "emergency.service",
        // SysV runlevel aliases: 0 is poweroff, 1 rescue, 6 reboot.
        "runlevel0.target",
        "runlevel1.target",
        "runlevel6.target",
    ];
}

words! {
    /// Units whose stop or restart reaches far beyond one service (mark `plumbing`). Two classes:
    /// the host's access paths, where stopping one can lock the operators out (ssh, VPNs and mesh
    /// networks, cloud and remote-access agents, consoles, logind, directory services); and its own
    /// plumbing, where every service or the record of what happened goes with it (dbus, the
    /// journal, syslog and audit, udev, time, cron, the network and the firewall, the container
    /// engines and the security agents). Compared in lower case.
    static PLUMBING = &[
        // how people reach the host
        "ssh.service",
        "sshd.service",
        "ssh.socket",
        "sshd.socket",
        "dropbear.service",
        "systemd-logind.service",
        "tailscaled.service",
        "zerotier-one.service",
        "teleport.service",
        "netbird.service",
        "nebula.service",
        "cloudflared.service",
        "openvpn.service",
        "strongswan.service",
        "strongswan-starter.service",
        "ipsec.service",
        "xl2tpd.service",
        "amazon-ssm-agent.service",
        "snap.amazon-ssm-agent.amazon-ssm-agent.service",
        "google-guest-agent.service",
        "google-osconfig-agent.service",
        "walinuxagent.service",
        "waagent.service",
        "qemu-guest-agent.service",
        "xrdp.service",
        "cockpit.service",
        "cockpit.socket",
        "console-getty.service",
        "sssd.service",
        "nslcd.service",
        "winbind.service",
        "polkit.service",
        // the host's own plumbing
        "dbus.service",
        "dbus.socket",
        "dbus-broker.service",
        "systemd-journald.service",
        "systemd-journald.socket",
        "systemd-journald-dev-log.socket",
        "systemd-journald-audit.socket",
        "rsyslog.service",
        "syslog.socket",
        "syslog-ng.service",
        "auditd.service",
        "systemd-udevd.service",
        "systemd-timesyncd.service",
        "chrony.service",
        "chronyd.service",
        "ntp.service",
        "ntpd.service",
        "cron.service",
        "crond.service",
        "networking.service",
        "systemd-networkd.service",
        "systemd-networkd.socket",
        "systemd-resolved.service",
        "networkmanager.service",
        "wpa_supplicant.service",
        "nftables.service",
        "iptables.service",
        "ip6tables.service",
        "netfilter-persistent.service",
        "ufw.service",
        "firewalld.service",
        "fail2ban.service",
        "apparmor.service",
        "docker.service",
        "docker.socket",
        "containerd.service",
        "podman.service",
        "podman.socket",
        "crio.service",
        "kubelet.service",
        "k3s.service",
        "libvirtd.service",
        "osqueryd.service",
        "wazuh-agent.service",
        "falcon-sensor.service",
    ];
}

words! {
    /// Template units whose every instance is an access path (a VPN, a tunnel, a console).
    static PLUMBING_TEMPLATES = &[
        "wg-quick",
        "openvpn",
        "openvpn-client",
        "openvpn-server",
        "strongswan",
        "ifup",
        "getty",
        "serial-getty",
        "autovt",
        "container-getty",
    ];
}

/// A unit as systemctl reads it: lower case, a name without a type is a service.
fn full_name(u: &str) -> String {
    let lower = u.to_ascii_lowercase();
    if lower.contains('.') { lower } else { format!("{lower}.service") }
}

/// An access path or a piece of the host's plumbing ([`PLUMBING`], [`PLUMBING_TEMPLATES`]).
fn is_plumbing(full: &str) -> bool {
    let template = full.split_once('@').map(|(t, _)| t);
    PLUMBING.contains(full) || template.is_some_and(|t| PLUMBING_TEMPLATES.contains(t))
}

/// A unit an operator lists as restartable (`remote.<host>.units`), as the gate compares it:
/// the full name in lower case. Err for a pattern (it would stand for units nobody named) or a
/// unit that takes the host down (never restartable by an agent).
pub fn listed_unit(u: &str) -> Result<String, String> {
    if u.is_empty() || u.starts_with('-') {
        return Err("is not a unit name".into());
    }
    if u.contains(['*', '?', '[', '\\', ' ', '/']) {
        return Err("is a pattern or not a unit name: list each unit by its name".into());
    }
    let full = full_name(u);
    if POWER_UNITS.contains(&full) {
        return Err("reboots, powers off or isolates the host, which an agent never does".into());
    }
    Ok(full)
}

/// Marks for the units of a start, stop or restart: `power` for one that takes the host down
/// (never); `wide` for any other target (it starts or stops whatever it pulls in), a slice or
/// scope (every process in it: user sessions), or a glob; `plumbing` for an access path or a
/// piece of the host's plumbing ([`PLUMBING`]).
fn unit_marks(units: &[&str], a: &mut Action) {
    for u in units {
        let full = full_name(u);
        if POWER_UNITS.contains(&full) {
            a.add("power");
        } else if full.ends_with(".target") || full.ends_with(".slice") || full.ends_with(".scope") {
            a.add("wide");
        }
        if u.contains(['*', '?', '[', '\\']) {
            a.add("wide");
        }
        if is_plumbing(&full) {
            a.add("plumbing");
        }
    }
}

/// Judge a start, stop or restart against a host's list of restartable units (`listed`, full
/// names): a listed unit is restartable at tier 2 even if it is one of the host's access paths
/// or plumbing; any unit not listed (a pattern included) is marked `unlisted`. Targets, slices,
/// scopes and power units keep their marks.
pub fn apply_list(a: &mut Action, listed: &[String]) {
    if !RESTART_VERBS.iter().any(|v| a.verb == format!("systemctl {v}")) {
        return;
    }
    a.marks.remove("plumbing");
    let units: Vec<String> = a
        .targets
        .iter()
        .filter_map(|t| match t {
            crate::grammar::Target::Unit(u) => Some(full_name(u)),
            _ => None,
        })
        .collect();
    for full in units {
        if listed.contains(&full) {
            continue;
        }
        a.add("unlisted");
        if is_plumbing(&full) {
            a.add("plumbing");
        }
    }
}

/// `systemctl [OPTIONS] [VERB [ARGS]]`: one `systemctl <verb>` action (no verb is
/// `list-units`), plus `systemctl --host` when `-H`/`-M` points it at another machine.
pub fn systemctl(args: &[String]) -> Invocation {
    let mut argv = vec!["systemctl".to_string()];
    argv.extend(args.iter().cloned());
    let inv = Invocation::new(Tool::Ssh, &argv);
    let p = match opts::scan(args, SYSTEMCTL, &Style::GETOPT_LONG) {
        Ok(p) => p,
        Err(e) => return inv.with_problem(format!("systemctl: {e}")),
    };
    let verb = match p.positionals().first() {
        None => "list-units".to_string(),
        Some(v) => match SYSTEMCTL_VERBS.get(v) {
            Some(canonical) => canonical.to_string(),
            None => v.to_string(),
        },
    };
    let mut action = Action::new(format!("systemctl {verb}"));
    if RESTART_VERBS.contains(&verb) {
        let units: Vec<&str> = p.positionals().iter().skip(1).copied().collect();
        action.targets = units.iter().map(|u| Target::Unit(u.to_string())).collect();
        unit_marks(&units, &mut action);
        // Flags that leave dependencies half-done or make the job impossible to undo.
        if p.has("ignore-dependencies") || p.has("irreversible") {
            action.add("wide");
        }
    }
    // `--job-mode=isolate` stops everything the unit does not pull in: `start --job-mode=isolate
    // rescue.target` is `isolate`; modes other than the default's leave units half-started.
    match p.last("job-mode") {
        None | Some("fail" | "replace") => {}
        Some("isolate") => action.add("power"),
        Some(_) => action.add("wide"),
    }
    let mut inv = inv.with_action(action);
    if p.has("host") || p.has("machine") {
        inv = inv.with_action(Action::new("systemctl --host"));
    }
    inv
}

/// `journalctl.c` `parse_argv`. `-n`/`--lines` and `-b`/`--boot` take an optional value that may
/// also be the next word (see [`stick_optional`]).
const JOURNALCTL: &[Opt] = &[
    Opt::flag("help", &["help"], &['h']),
    Opt::flag("version", &["version"], &[]),
    Opt::flag("no-pager", &["no-pager"], &[]),
    Opt::flag("pager-end", &["pager-end"], &['e']),
    Opt::flag("follow", &["follow"], &['f']),
    Opt::flag("force", &["force"], &[]),
    Opt::value("output", &["output"], &['o']),
    Opt::flag("all", &["all"], &['a']),
    Opt::flag("full", &["full"], &['l']),
    Opt::flag("no-full", &["no-full"], &[]),
    Opt::opt_value("lines", &["lines"], &['n']),
    Opt::flag("truncate-newline", &["truncate-newline"], &[]),
    Opt::flag("no-tail", &["no-tail"], &[]),
    Opt::flag("new-id128", &["new-id128"], &[]),
    Opt::flag("quiet", &["quiet"], &['q']),
    Opt::flag("merge", &["merge"], &['m']),
    Opt::flag("this-boot", &["this-boot"], &[]),
    Opt::opt_value("boot", &["boot"], &['b']),
    Opt::flag("list-boots", &["list-boots"], &[]),
    Opt::flag("dmesg", &["dmesg"], &['k']),
    Opt::flag("system", &["system"], &[]),
    Opt::flag("user", &["user"], &[]),
    Opt::value("directory", &["directory"], &['D']),
    Opt::value("file", &["file"], &['i']),
    Opt::value("root", &["root"], &[]),
    Opt::value("image", &["image"], &[]),
    Opt::value("image-policy", &["image-policy"], &[]),
    Opt::flag("header", &["header"], &[]),
    Opt::value("identifier", &["identifier"], &['t']),
    Opt::value("exclude-identifier", &["exclude-identifier"], &['T']),
    Opt::value("priority", &["priority"], &['p']),
    Opt::value("facility", &["facility"], &[]),
    Opt::value("grep", &["grep"], &['g']),
    Opt::opt_value("case-sensitive", &["case-sensitive"], &[]),
    Opt::flag("setup-keys", &["setup-keys"], &[]),
    Opt::value("interval", &["interval"], &[]),
    Opt::flag("verify", &["verify"], &[]),
    Opt::value("verify-key", &["verify-key"], &[]),
    Opt::flag("disk-usage", &["disk-usage"], &[]),
    Opt::value("cursor", &["cursor"], &['c']),
    Opt::value("cursor-file", &["cursor-file"], &[]),
    Opt::value("after-cursor", &["after-cursor"], &[]),
    Opt::flag("show-cursor", &["show-cursor"], &[]),
    Opt::value("since", &["since"], &['S']),
    Opt::value("until", &["until"], &['U']),
    Opt::value("unit", &["unit"], &['u']),
    Opt::value("user-unit", &["user-unit"], &[]),
    Opt::value("field", &["field"], &['F']),
    Opt::flag("fields", &["fields"], &['N']),
    Opt::flag("catalog", &["catalog"], &['x']),
    Opt::flag("list-catalog", &["list-catalog"], &[]),
    Opt::flag("dump-catalog", &["dump-catalog"], &[]),
    Opt::flag("update-catalog", &["update-catalog"], &[]),
    Opt::flag("reverse", &["reverse"], &['r']),
    Opt::value("machine", &["machine"], &['M']),
    Opt::flag("utc", &["utc"], &[]),
    Opt::flag("flush", &["flush"], &[]),
    Opt::flag("relinquish-var", &["relinquish-var"], &[]),
    Opt::flag("smart-relinquish-var", &["smart-relinquish-var"], &[]),
    Opt::flag("sync", &["sync"], &[]),
    Opt::flag("rotate", &["rotate"], &[]),
    Opt::value("vacuum-size", &["vacuum-size"], &[]),
    Opt::value("vacuum-files", &["vacuum-files"], &[]),
    Opt::value("vacuum-time", &["vacuum-time"], &[]),
    Opt::flag("no-hostname", &["no-hostname"], &[]),
    Opt::value("output-fields", &["output-fields"], &[]),
    Opt::value("namespace", &["namespace"], &[]),
    Opt::flag("list-namespaces", &["list-namespaces"], &[]),
];

words! {
    /// Options that delete journal files, write files, or change how journald stores them.
    static JOURNAL_WRITES = &[
        "setup-keys",
        "update-catalog",
        "cursor-file",
        "flush",
        "relinquish-var",
        "smart-relinquish-var",
        "sync",
        "rotate",
        "vacuum-size",
        "vacuum-files",
        "vacuum-time",
    ];
}

/// `journalctl [OPTIONS] [MATCHES]`: one `journalctl` action, marked `writes` when it would
/// change files. Matches only narrow what is read.
pub fn journalctl(args: &[String]) -> Invocation {
    let mut argv = vec!["journalctl".to_string()];
    argv.extend(args.iter().cloned());
    let inv = Invocation::new(Tool::Ssh, &argv);
    let p = match opts::scan(&stick_optional(args), JOURNALCTL, &Style::GETOPT_LONG) {
        Ok(p) => p,
        Err(e) => return inv.with_problem(format!("journalctl: {e}")),
    };
    let mut action = Action::new("journalctl");
    if p.items.iter().any(|i| matches!(i, Item::Opt(f) if JOURNAL_WRITES.contains(&f.id))) {
        action.add("writes");
    }
    inv.with_action(action)
}

/// journalctl reads the next word as the value of a bare `-n`/`--lines` or `-b`/`--boot` when
/// it parses as one (`-n 50`, `-n all`, `-b -1`, `-b <boot id>`), so join such a pair into the
/// stuck form the scanner reads (`--lines=50`). Anything else stays a word of its own.
fn stick_optional(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let next = args.get(i + 1).map(String::as_str);
        let long = |full: &str| a.len() > 3 && a.starts_with("--") && full.starts_with(&a[2..]);
        let joined = match (a, next) {
            (_, Some(n)) if (a == "-n" || long("lines")) && is_lines(n) => Some(format!("--lines={n}")),
            (_, Some(n)) if (a == "-b" || long("boot")) && is_boot(n) => Some(format!("--boot={n}")),
            _ => None,
        };
        match joined {
            Some(j) => {
                out.push(j);
                i += 2;
            }
            None => {
                out.push(a.to_string());
                i += 1;
            }
        }
    }
    out
}

/// `parse_lines`: `all`, `N` or `+N`.
fn is_lines(s: &str) -> bool {
    let n = s.strip_prefix('+').unwrap_or(s);
    s == "all" || (!n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

/// `parse_boot_descriptor`: an offset (`-1`, `+2`, `0`), or a 32-digit boot id with an optional
/// offset.
fn is_boot(s: &str) -> bool {
    let offset = |t: &str| {
        let n = t.strip_prefix(['+', '-']).unwrap_or(t);
        !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit())
    };
    if offset(s) {
        return true;
    }
    let id = s.get(..32).unwrap_or("");
    id.len() == 32 && id.bytes().all(|c| c.is_ascii_hexdigit()) && (s.len() == 32 || offset(&s[32..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;
    use pretty_assertions::assert_eq;

    fn verbs(inv: &Invocation) -> Vec<String> {
        assert_eq!(inv.problem, None);
        inv.actions.iter().map(|a| a.verb.clone()).collect()
    }

    #[test]
    fn systemctl_verbs_resolve_their_aliases_wherever_the_options_are() {
        assert_eq!(verbs(&systemctl(&argv(&["restart", "nginx"]))), ["systemctl restart"]);
        assert_eq!(
            verbs(&systemctl(&argv(&["--no-pager", "condrestart", "nginx"]))),
            ["systemctl try-restart"]
        );
        assert_eq!(
            verbs(&systemctl(&argv(&["status", "nginx", "-l", "--no-pag"]))),
            ["systemctl status"]
        );
        assert_eq!(verbs(&systemctl(&argv(&["-p", "ActiveState", "show", "x"]))), ["systemctl show"]);
        assert_eq!(verbs(&systemctl(&argv(&["--failed"]))), ["systemctl list-units"]);
        assert_eq!(
            verbs(&systemctl(&argv(&["force-reload", "x"]))),
            ["systemctl try-reload-or-restart"]
        );
        assert_eq!(verbs(&systemctl(&argv(&["frobnicate"]))), ["systemctl frobnicate"]);
    }

    #[test]
    fn systemctl_on_another_machine_is_its_own_action() {
        assert_eq!(
            verbs(&systemctl(&argv(&["-H", "other", "status"]))),
            ["systemctl status", "systemctl --host"]
        );
        assert_eq!(
            verbs(&systemctl(&argv(&["status", "--machine=c1"]))),
            ["systemctl status", "systemctl --host"]
        );
    }

    #[test]
    fn systemctl_unknown_options_are_problems() {
        assert!(systemctl(&argv(&["--frob", "status"])).problem.is_some());
        assert!(systemctl(&argv(&["status", "-Z"])).problem.is_some());
    }

    #[test]
    fn journalctl_marks_only_calls_that_change_files() {
        for a in [
            &["-u", "nginx", "-n", "50", "--no-pager"][..],
            &["-b", "-1", "-p", "err"],
            &["-n", "all", "-f"],
            &["--lines=10", "_SYSTEMD_UNIT=x.service"],
            &["-b", "0123456789abcdef0123456789abcdef-1"],
            &["-fu", "nginx"],
            &["--since", "-1h"],
        ] {
            let inv = journalctl(&argv(a));
            assert_eq!(inv.problem, None, "{a:?}");
            assert!(!inv.actions[0].has("writes"), "{a:?}");
        }
        for a in [
            &["--vacuum-size=1G"][..],
            &["--rotate"],
            &["--vacuum-t", "1d"],
            &["--cursor-file", "/tmp/c", "-u", "x"],
            &["-n", "5", "--flush"],
        ] {
            let inv = journalctl(&argv(a));
            assert_eq!(inv.problem, None, "{a:?}");
            assert!(inv.actions[0].has("writes"), "{a:?}");
        }
        assert!(journalctl(&argv(&["--frob"])).problem.is_some());
        // `-b` followed by an option that is not a boot offset leaves the option alone.
        assert!(journalctl(&argv(&["-b", "--vacuum-size=1G"])).actions[0].has("writes"));
    }
}
