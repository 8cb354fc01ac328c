//! Resolving the real tool (absolute path only, never tiershim itself), building the child's
//! environment (hardened variables reset to the pinned value or removed), and the exec itself.
//! Nothing here decides whether to run: the gate calls [`exec`] only for an allowed decision.

use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::audit::EnvReset;
use crate::error::{Error, Result};
use crate::install::InstallConfig;
use crate::policy::Policy;
use crate::tool::Tool;

/// Where `tool` was looked for, for the "not installed at" message: each `real_dirs` entry
/// joined with the tool's name, or what to configure when there is none.
fn missing_candidates(dirs: &[PathBuf], tool: Tool) -> String {
    let names: Vec<String> = dirs.iter().map(|d| d.join(tool.name()).display().to_string()).collect();
    match names.as_slice() {
        [] => format!("any path (tiershim.yaml names no `real.{}` and no `real_dirs`)", tool.name()),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The real binary for `tool`: `real.<tool>` from the config, else the first `real_dirs` entry
/// that has it. A path that is tiershim itself is an error (no exec loop).
pub fn resolve_real(cfg: &InstallConfig, tool: Tool) -> Result<PathBuf> {
    let candidate = match cfg.real.get(&tool) {
        Some(p) => {
            if !is_executable_file(p) {
                return Err(Error::RealMissing {
                    tool: tool.name().into(),
                    path: p.display().to_string(),
                });
            }
            p.clone()
        }
        None => {
            let found = cfg.real_dirs.iter().map(|d| d.join(tool.name())).find(|p| is_executable_file(p));
            match found {
                Some(p) => p,
                None => {
                    let path = missing_candidates(&cfg.real_dirs, tool);
                    return Err(Error::RealMissing {
                        tool: tool.name().into(),
                        path,
                    });
                }
            }
        }
    };
    if is_self(&candidate) {
        return Err(Error::RealIsSelf {
            tool: tool.name().into(),
            path: candidate,
            config: cfg.path.clone(),
        });
    }
    Ok(candidate)
}

fn is_executable_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0)
}

/// Same file as the running binary (by device and inode, so hard links count too).
pub fn is_self(p: &Path) -> bool {
    match (std::fs::metadata(p), std::fs::metadata("/proc/self/exe")) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Where the real tool's per-user files are: `HOME` and the XDG base directories below
/// `tool_home`, in the layout the tools expect (`~/.config/gh`, `~/.docker`, `~/.gitconfig`).
pub fn home_vars(home: &Path) -> Vec<(&'static str, PathBuf)> {
    vec![
        ("HOME", home.to_path_buf()),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_STATE_HOME", home.join(".local/state")),
        ("XDG_CACHE_HOME", home.join(".cache")),
    ]
}

/// The child's environment, by allow-list (DESIGN §3.2): of the caller's variables only those
/// the policy `pass`es; then the policy's forced values, the operator's pins of the variables
/// this tool takes (`pass` or `pinned`), the values the policy forces at the effective `tier`,
/// and last `HOME` and the XDG directories of `home` (the operator's tool home). With one of the
/// tool's credentials pinned, the caller's values of its destinations are not passed. Every caller
/// variable that does not reach the tool as it was is logged: `removed` (not allowed), or
/// replaced (`set`, `pinned`, `home`).
pub fn child_env(
    caller: &[(OsString, OsString)],
    policy: &Policy,
    pins: &BTreeMap<String, String>,
    home: Option<&Path>,
    tier: u8,
) -> (Vec<(OsString, OsString)>, Vec<EnvReset>) {
    // What is set, by precedence: the policy's forced values, then the operator's pins, then
    // the policy's values for this tier, then the tool home.
    let mut forced: BTreeMap<&str, (OsString, &'static str)> = BTreeMap::new();
    for (k, v) in &policy.set {
        forced.insert(k, (v.into(), "set"));
    }
    for (k, v) in pins.iter().filter(|(k, _)| policy.takes_pin(k)) {
        forced.insert(k, (v.into(), "pinned"));
    }
    for (k, v) in policy.set_by_tier.get(&tier).into_iter().flatten() {
        forced.insert(k, (v.into(), "set"));
    }
    let home_vars = home.map(home_vars).unwrap_or_default();
    for (k, v) in &home_vars {
        forced.insert(k, (v.as_os_str().to_owned(), "home"));
    }
    // With a credential pinned, only the operator says where the tool connects.
    let guarded = policy.pinned_credential(|v| pins.contains_key(v)).is_some();
    let mut resets = Vec::new();
    let mut env: Vec<(OsString, OsString)> = Vec::with_capacity(caller.len() + forced.len());
    for (k, v) in caller {
        let name = k.to_string_lossy();
        if forced.contains_key(name.as_ref()) {
            continue; // replaced below
        }
        let destination = guarded && policy.credentials.destination.iter().any(|d| *d == name);
        if !policy.passes(&name) || destination {
            resets.push(EnvReset {
                var: name.into_owned(),
                action: "removed",
            });
            continue;
        }
        env.push((k.clone(), v.clone()));
    }
    for (k, (v, action)) in forced {
        let was = caller.iter().find(|(ck, _)| ck == k).map(|(_, cv)| cv);
        // The tool home is set on every call: logged only where it replaces the caller's value.
        let changed = match was {
            None => action != "home",
            Some(cv) => *cv != v,
        };
        if changed {
            resets.push(EnvReset {
                var: k.to_string(),
                action,
            });
        }
        env.push((k.into(), v));
    }
    (env, resets)
}

/// Set `vars` in the child's environment `env` over whatever it held (a caller's value that
/// passed, an operator's pin), and log each one whose value is not the caller's as `set`.
pub fn force(
    env: &mut Vec<(OsString, OsString)>,
    resets: &mut Vec<EnvReset>,
    caller: &[(OsString, OsString)],
    vars: &[(&'static str, String)],
) {
    for (k, v) in vars {
        env.retain(|(ek, _)| ek != k);
        env.push((OsString::from(k), OsString::from(v)));
        resets.retain(|r| r.var != *k);
        if caller
            .iter()
            .find(|(ck, _)| ck == k)
            .is_none_or(|(_, cv)| cv.as_os_str() != v.as_str())
        {
            resets.push(EnvReset {
                var: k.to_string(),
                action: "set",
            });
        }
    }
}

/// Replace this process with the real tool. Returns only on failure.
///
/// `execve` itself, not `Command::exec`: std's exec falls back to running the file with
/// `/bin/sh` when the kernel refuses its format (ENOEXEC), and the gate must run exactly the
/// binary it resolved or nothing.
pub fn exec(real: &Path, tool: Tool, prepend: &[&str], args: &[String], env: Vec<(OsString, OsString)>) -> Error {
    let fail = |source: std::io::Error| Error::Exec {
        path: real.to_path_buf(),
        source,
    };
    let cstr = |b: &[u8]| CString::new(b).map_err(|_| fail(std::io::Error::other("argument contains NUL")));
    let build = || -> Result<(CString, Vec<CString>, Vec<CString>)> {
        let path = cstr(real.as_os_str().as_bytes())?;
        let mut argv = Vec::with_capacity(1 + prepend.len() + args.len());
        argv.push(cstr(tool.name().as_bytes())?);
        for a in prepend.iter().copied().chain(args.iter().map(String::as_str)) {
            argv.push(cstr(a.as_bytes())?);
        }
        let mut envp = Vec::with_capacity(env.len());
        for (k, v) in &env {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            envp.push(cstr(&kv)?);
        }
        Ok((path, argv, envp))
    };
    let (path, argv, envp) = match build() {
        Ok(x) => x,
        Err(e) => return e,
    };
    if crate::harden::held() {
        // Hardened install: the real tool is only reachable while the group is held.
        return crate::harden::exec_as_caller(real, &argv, &envp);
    }
    let mut tries = 0;
    loop {
        match nix::unistd::execve(&path, &argv, &envp) {
            // The file is open for writing somewhere (being installed, or inherited by a child
            // another thread forked mid-write): the same binary, briefly. Wait, then try again.
            Err(nix::errno::Errno::ETXTBSY) if tries < crate::harden::BUSY_RETRIES => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(errno) => return fail(std::io::Error::from(errno)),
            Ok(never) => match never {},
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(vars: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        vars.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }

    fn run(tool: Tool, vars: &[(&str, &str)], pins: &[(&str, &str)]) -> (BTreeMap<String, String>, Vec<(String, &'static str)>) {
        let policy = Policy::embedded(tool).unwrap();
        let pins: BTreeMap<String, String> = pins.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let (env, resets) = child_env(&caller(vars), &policy, &pins, Some(Path::new("/opt/ts/home")), 1);
        (
            env.into_iter()
                .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
                .collect(),
            resets.into_iter().map(|r| (r.var, r.action)).collect(),
        )
    }

    #[test]
    fn a_missing_tool_names_each_place_it_was_looked_for() {
        let dirs = [PathBuf::from("/usr/local/bin"), PathBuf::from("/usr/bin"), PathBuf::from("/bin")];
        assert_eq!(
            missing_candidates(&dirs, Tool::Helm),
            "/usr/local/bin/helm, /usr/bin/helm or /bin/helm"
        );
        assert_eq!(missing_candidates(&dirs[1..2], Tool::Docker), "/usr/bin/docker");
        assert!(missing_candidates(&[], Tool::Git).contains("no `real.git` and no `real_dirs`"));
    }

    #[test]
    fn only_allowed_variables_pass_and_pins_reach_only_the_tools_that_take_them() {
        let (env, resets) = run(
            Tool::Ssh,
            &[
                ("OPENSSL_CONF", "./x.cnf"),
                ("PATH", "/t"),
                ("LC_ALL", "ja_JP.SJIS"),
                ("HOME", "/home/agent"),
            ],
            &[("PGPASSWORD", "pw"), ("SSH_ASKPASS", "/usr/bin/true")],
        );
        assert_eq!(env.get("OPENSSL_CONF"), None);
        assert_eq!(env.get("LC_ALL"), None);
        assert_eq!(env.get("PGPASSWORD"), None);
        assert_eq!(env.get("SSH_ASKPASS").map(String::as_str), Some("/usr/bin/true"));
        assert_eq!(env.get("PATH").map(String::as_str), Some("/t"));
        assert_eq!(env.get("HOME").map(String::as_str), Some("/opt/ts/home"));
        assert_eq!(env.get("XDG_DATA_HOME").map(String::as_str), Some("/opt/ts/home/.local/share"));
        for r in [("OPENSSL_CONF", "removed"), ("LC_ALL", "removed"), ("HOME", "home")] {
            assert!(resets.contains(&(r.0.to_string(), r.1)), "{r:?} in {resets:?}");
        }
        // The tool home replaces nothing the caller did not set, and is not logged then.
        assert!(!resets.iter().any(|(v, _)| v == "XDG_DATA_HOME"), "{resets:?}");
    }

    #[test]
    fn a_forced_variable_replaces_a_pin_and_is_logged_only_where_it_differs_from_the_callers() {
        let caller = caller(&[("ANSIBLE_SSH_EXECUTABLE", "/tmp/evil"), ("ANSIBLE_TRANSPORT", "ssh")]);
        let mut env = vec![(OsString::from("ANSIBLE_SSH_EXECUTABLE"), OsString::from("/pinned/ssh"))];
        let mut resets = vec![EnvReset {
            var: "ANSIBLE_SSH_EXECUTABLE".into(),
            action: "pinned",
        }];
        let vars = [
            ("ANSIBLE_SSH_EXECUTABLE", "/usr/bin/ssh".to_string()),
            ("ANSIBLE_TRANSPORT", "ssh".to_string()),
        ];
        force(&mut env, &mut resets, &caller, &vars);
        assert_eq!(
            env,
            vec![
                (OsString::from("ANSIBLE_SSH_EXECUTABLE"), OsString::from("/usr/bin/ssh")),
                (OsString::from("ANSIBLE_TRANSPORT"), OsString::from("ssh")),
            ]
        );
        let logged: Vec<(String, &str)> = resets.into_iter().map(|r| (r.var, r.action)).collect();
        assert_eq!(logged, vec![("ANSIBLE_SSH_EXECUTABLE".to_string(), "set")]);
    }

    #[test]
    fn with_a_credential_pinned_the_callers_destination_does_not_pass() {
        let vars = [("PGHOST", "10.9.9.9"), ("PGPORT", "5433"), ("PGDATABASE", "app")];
        let (env, _) = run(Tool::Psql, &vars, &[]);
        assert_eq!(env.get("PGHOST").map(String::as_str), Some("10.9.9.9"));
        let (env, resets) = run(Tool::Psql, &vars, &[("PGPASSWORD", "pw")]);
        assert_eq!(env.get("PGHOST"), None);
        assert_eq!(env.get("PGPORT"), None);
        assert_eq!(env.get("PGDATABASE").map(String::as_str), Some("app"));
        assert_eq!(env.get("PGPASSWORD").map(String::as_str), Some("pw"));
        assert!(resets.contains(&("PGHOST".to_string(), "removed")), "{resets:?}");
    }
}
