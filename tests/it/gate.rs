//! The live gate's trust rules, environment hardening, log lines and audit trail, through the
//! real binary and real links.

use std::process::Command;

use crate::harness::TestEnv;

#[test]
fn an_allowed_call_reaches_the_real_tool_with_argv_unchanged_and_says_using_in_the_record_only() {
    let env = TestEnv::new(1, "");
    let r = env.run("docker", &["ps", "-a", "--format", "{{.Names}}"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    // Quiet on success: the agent reads stderr merged into the tool's output.
    assert_eq!(r.stderr(), "");
    assert_eq!(env.last_audit()["message"], "[skill:container-health] Using: docker (CLI)");
    assert_eq!(r.stdout(), "stub docker ran\n");
    assert_eq!(
        env.received("docker"),
        Some(vec!["ps".into(), "-a".into(), "--format".into(), "{{.Names}}".into()])
    );
}

#[test]
fn the_environment_can_lower_the_tier_but_never_raise_it() {
    let env = TestEnv::new(1, "");
    let r = env.run("docker", &["restart", "api"], &[("CLAUDEOPS_TIER", "3")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("requires tier 2 (this agent is tier 1: CLAUDEOPS_TIER=3 is above this install's ceiling 1)"),
        "{}",
        r.stderr()
    );
    assert!(
        env.last_audit()["tier"]["note"]
            .as_str()
            .unwrap_or("")
            .contains("above this install's ceiling 1")
    );
    assert_eq!(env.received("docker"), None);

    let env = TestEnv::new(3, "");
    let r = env.run("docker", &["restart", "api"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    let r = env.run("docker", &["restart", "api"], &[("CLAUDEOPS_TIER", "2")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(env.received("docker"), Some(vec!["restart".into(), "api".into()]));
}

#[test]
fn dry_run_prints_the_call_and_runs_nothing() {
    let env = TestEnv::new(2, "");
    for v in ["1", "true", "TRUE", "yes", "Yes", "on", "y", " true", "true\n"] {
        let r = env.run(
            "docker",
            &["restart", "-s", "SIGTERM ", "api"],
            &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", v)],
        );
        assert_eq!(r.code(), 0, "{v:?}: {}", r.stderr());
        assert_eq!(
            r.stderr(),
            "[skill:container-ops] DRY RUN: would run: docker restart -s 'SIGTERM ' api\n",
            "{v:?}"
        );
        assert_eq!(env.received("docker"), None, "{v:?}");
        assert_eq!(env.last_audit()["verdict"], "dry-run");
    }
    // Reads still run under dry-run.
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(env.received("docker").is_some());
}

#[test]
fn any_dry_run_value_but_a_clear_false_turns_dry_run_on_and_says_so() {
    let env = TestEnv::new(2, "");
    for v in ["enabled", "ture", "2", "-1", "nope", "n", "dry"] {
        let r = env.run("docker", &["restart", "api"], &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", v)]);
        assert_eq!(r.code(), 0, "{v:?}: {}", r.stderr());
        assert_eq!(env.received("docker"), None, "{v:?}: the restart ran");
        assert_eq!(
            r.stderr(),
            format!(
                "[skill:container-ops] DRY RUN: would run: docker restart api\n\
                 [skill:container-ops] DRY RUN: CLAUDEOPS_DRY_RUN={v} is not a clear false (false, 0, no, off, empty), so dry-run is on\n"
            ),
            "{v:?}"
        );
        let rec = env.last_audit();
        assert_eq!(rec["verdict"], "dry-run");
        assert!(
            rec["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r.as_str().unwrap().contains("is not a clear false")),
            "{rec}"
        );
    }
    // A value with spaces is shown quoted.
    let r = env.run(
        "docker",
        &["restart", "api"],
        &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", "dry run")],
    );
    assert!(
        r.stderr().contains("CLAUDEOPS_DRY_RUN='dry run' is not a clear false"),
        "{}",
        r.stderr()
    );
    // A clear false, in any case and with spaces around it, runs the call.
    for v in ["false", "FALSE", "0", "no", " No ", "off", "Off", "", " "] {
        env.forget("docker");
        let r = env.run("docker", &["restart", "api"], &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", v)]);
        assert_eq!(r.code(), 0, "{v:?}: {}", r.stderr());
        assert!(env.received("docker").is_some(), "{v:?}: {}", r.stderr());
        assert_eq!(env.last_audit()["verdict"], "allow", "{v:?}");
    }
}

#[test]
fn a_pinned_dry_run_cannot_be_turned_off_by_the_environment() {
    let env = TestEnv::new(2, "dry_run: true\n");
    let r = env.run(
        "docker",
        &["restart", "api"],
        &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", "false")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        "[skill:container-ops] DRY RUN: would run: docker restart api\n\
         [skill:container-ops] DRY RUN: CLAUDEOPS_DRY_RUN=false cannot turn off the dry run tiershim.yaml pins\n"
    );
    assert_eq!(env.received("docker"), None);
}

#[test]
fn the_environment_is_an_allow_list_pins_reach_only_their_tools_and_each_removal_is_logged() {
    let env = TestEnv::new(1, "env:\n  GIT_CONFIG_NOSYSTEM: \"1\"\n  DOCKER_HOST: unix:///run/docker.sock\n");
    let r = env.run(
        "git",
        &["status"],
        &[
            ("CLAUDEOPS_TIER", "1"),
            ("LD_PRELOAD", "/tmp/evil.so"),
            ("OPENSSL_CONF", "/tmp/evil.cnf"),
            ("GIT_SSH_COMMAND", "sh -c evil"),
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "core.pager"),
            ("GIT_CONFIG_VALUE_0", "sh"),
            ("GIT_CONFIG_NOSYSTEM", "0"),
            ("XDG_CONFIG_HOME", "/tmp/agent-config"),
            ("UNLISTED", "x"),
            ("LANG", "C.UTF-8"),
            ("TERM", "xterm"),
        ],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let got = env.received_env("git").unwrap();
    for gone in [
        "LD_PRELOAD",
        "OPENSSL_CONF",
        "GIT_SSH_COMMAND",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_KEY_0",
        "GIT_CONFIG_VALUE_0",
        "UNLISTED",
        // Pinned, but for docker only.
        "DOCKER_HOST",
    ] {
        assert!(!got.contains_key(gone), "{gone} reached git");
    }
    assert_eq!(got.get("GIT_CONFIG_NOSYSTEM").map(String::as_str), Some("1"));
    for (k, v) in [("LANG", "C.UTF-8"), ("TERM", "xterm"), ("CLAUDEOPS_TIER", "1")] {
        assert_eq!(got.get(k).map(String::as_str), Some(v), "{k}");
    }
    // The operator's tool home, whatever the caller said.
    let home = env.tool_home().display().to_string();
    assert_eq!(got.get("HOME"), Some(&home));
    assert_eq!(got.get("XDG_CONFIG_HOME"), Some(&format!("{home}/.config")));
    assert_eq!(got.get("XDG_CACHE_HOME"), Some(&format!("{home}/.cache")));
    let resets = env.last_audit()["env_resets"].clone();
    let logged: Vec<(String, String)> = resets
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["var"].as_str().unwrap().to_string(), r["action"].as_str().unwrap().to_string()))
        .collect();
    for (v, action) in [
        ("LD_PRELOAD", "removed"),
        ("OPENSSL_CONF", "removed"),
        ("GIT_SSH_COMMAND", "removed"),
        ("GIT_CONFIG_COUNT", "removed"),
        ("UNLISTED", "removed"),
        ("GIT_CONFIG_NOSYSTEM", "pinned"),
        ("HOME", "home"),
        ("XDG_CONFIG_HOME", "home"),
    ] {
        assert!(
            logged.contains(&(v.to_string(), action.to_string())),
            "{v} ({action}) not logged in {resets}"
        );
    }
    assert!(!logged.iter().any(|(v, _)| v == "LANG" || v == "TERM"), "{resets}");
}

#[test]
fn without_a_tool_home_no_real_tool_runs() {
    let env = TestEnv::new(1, "");
    let text = std::fs::read_to_string(env.config_path()).unwrap();
    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("tool_home:"))
        .map(|l| format!("{l}\n"))
        .collect();
    env.write_config_exact(&without);
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(r.stderr().contains("names no `tool_home:`"), "{}", r.stderr());
    assert_eq!(env.received("docker"), None);
    // A refusal needs no tool home.
    let r = env.run("docker", &["restart", "api"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    // A tool home others can write is no operator's.
    env.write_config(&without);
    std::fs::set_permissions(env.tool_home(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr().contains("the tool home is writable by group or others"),
        "{}",
        r.stderr()
    );
    assert_eq!(env.received("docker"), None);
}

#[test]
fn a_retargeted_docker_daemon_is_refused_not_silently_corrected() {
    let env = TestEnv::new(1, "env:\n  DOCKER_HOST: unix:///var/run/docker.sock\n");
    let r = env.run(
        "docker",
        &["ps"],
        &[("CLAUDEOPS_TIER", "1"), ("DOCKER_HOST", "tcp://10.0.0.9:2375")],
    );
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(env.last_audit()["rule"], "docker.pinned-env");
    let r = env.run("docker", &["-H", "tcp://10.0.0.9:2375", "ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(env.last_audit()["rule"], "docker.pinned");
    assert_eq!(env.received("docker"), None);
    // The pinned value itself is fine, and it is what the real docker gets.
    let r = env.run("docker", &["--host=unix:///var/run/docker.sock", "ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(
        env.received_env("docker").unwrap().get("DOCKER_HOST").map(String::as_str),
        Some("unix:///var/run/docker.sock")
    );
}

#[test]
fn the_tool_comes_from_the_executed_link_not_a_forged_argv0() {
    use std::os::unix::process::CommandExt;
    let env = TestEnv::new(3, "");
    // Executed through the `git` link, claiming to be docker.
    let out = env.cmd("git", &["ps"]).arg0("docker").env("CLAUDEOPS_TIER", "3").output().unwrap();
    assert_eq!(out.status.code(), Some(77), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(env.last_audit()["tool"], "git");
    assert_eq!(env.received("docker"), None);
    assert_eq!(env.received("git"), None);
}

#[test]
fn a_relative_exec_path_finds_the_config_beside_the_link() {
    let env = TestEnv::new(1, "");
    let out = Command::new("./docker")
        .arg("ps")
        .current_dir(&env.dir)
        .env_clear()
        .env("CLAUDEOPS_TIER", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(env.last_audit()["link"].as_str().unwrap().ends_with("/docker"));
}

#[test]
fn a_link_outside_an_installation_is_refused_even_if_the_caller_has_a_config_elsewhere() {
    let env = TestEnv::new(3, "");
    let other = env.path("elsewhere");
    std::fs::create_dir(&other).unwrap();
    std::os::unix::fs::symlink(crate::harness::bin(), other.join("docker")).unwrap();
    let out = Command::new(other.join("docker"))
        .arg("ps")
        .current_dir(&env.dir) // a tiershim.yaml in the cwd is not the config
        .env("CLAUDEOPS_TIER", "3")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(78));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("no tiershim.yaml in {}", other.display())));
}

#[test]
fn claudeops_skill_renames_the_skill_in_the_log_only() {
    let env = TestEnv::new(1, "");
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1"), ("CLAUDEOPS_SKILL", "nightly-check")]);
    assert_eq!(r.stderr(), "");
    assert_eq!(env.last_audit()["message"], "[skill:nightly-check] Using: docker (CLI)");
    assert_eq!(env.last_audit()["skill"], "nightly-check");
}

#[test]
fn announce_stderr_puts_an_allowed_call_s_line_back_on_stderr() {
    let env = TestEnv::new(1, "announce: stderr\n");
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.stderr(), "[skill:container-health] Using: docker (CLI)\n");
    // Refusals and dry runs reach stderr either way.
    for extra in ["", "announce: stderr\n", "announce: audit\n"] {
        let env = TestEnv::new(1, extra);
        let r = env.run("docker", &["restart", "api"], &[("CLAUDEOPS_TIER", "1")]);
        assert_eq!(r.code(), 77);
        assert!(r.stderr().starts_with("[skill:container-ops] REFUSED: "), "{extra}: {}", r.stderr());
        let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1"), ("CLAUDEOPS_DRY_RUN", "1")]);
        assert_eq!(r.code(), 0);
    }
    let env = TestEnv::new(2, "");
    let r = env.run(
        "docker",
        &["restart", "api"],
        &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", "1")],
    );
    assert_eq!(r.stderr(), "[skill:container-ops] DRY RUN: would run: docker restart api\n");
    let env = TestEnv::new(1, "announce: loud\n");
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78);
    assert!(r.stderr().contains("unknown variant `loud`"), "{}", r.stderr());
}

#[test]
fn control_characters_from_the_caller_never_reach_the_terminal_raw() {
    let env = TestEnv::new(2, "");
    let r = env.run(
        "docker",
        &["restart", "api\x1b[2J\u{202e}"],
        &[
            ("CLAUDEOPS_TIER", "2"),
            ("CLAUDEOPS_DRY_RUN", "1"),
            ("CLAUDEOPS_SKILL", "x\x1b]0;pwn\x07"),
        ],
    );
    let err = r.stderr();
    assert!(
        !err.contains('\x1b') && !err.contains('\u{202e}') && !err.contains('\x07'),
        "{err:?}"
    );
    assert!(err.contains("\\u{1b}[2J\\u{202e}"), "{err}");
}

#[test]
fn secrets_are_redacted_in_the_dry_run_line_and_the_audit_log() {
    let env = TestEnv::new(2, "");
    let r = env.run(
        "curl",
        &[
            "-H",
            "Authorization: Bearer supersecretvalue123",
            "-d",
            "x=1",
            "https://bob:hunter2@127.0.0.1/api",
        ],
        &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", "1")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let log = std::fs::read_to_string(&env.audit).unwrap();
    for text in [r.stderr(), log] {
        assert!(!text.contains("supersecretvalue123") && !text.contains("hunter2"), "{text}");
        assert!(text.contains("[REDACTED]"), "{text}");
    }
}

#[test]
fn every_decision_is_one_audit_line_with_the_contract_fields() {
    let env = TestEnv::new(2, "");
    env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "2")]);
    env.run("docker", &["system", "prune", "-af"], &[("CLAUDEOPS_TIER", "2")]);
    let recs = env.audit_records();
    assert_eq!(recs.len(), 2);
    for key in [
        "time",
        "pid",
        "ppid",
        "cwd",
        "tool",
        "argv",
        "verb",
        "skill",
        "tier",
        "dry_run",
        "verdict",
        "rule",
        "reasons",
        "env_resets",
        "duration_us",
    ] {
        assert!(recs[1].get(key).is_some(), "missing {key} in {}", recs[1]);
    }
    assert_eq!(recs[0]["verdict"], "allow");
    assert_eq!(recs[1]["verdict"], "refuse");
    assert_eq!(recs[1]["tier"]["ceiling"], 2);
    assert_eq!(recs[1]["argv"], serde_json::json!(["system", "prune", "-af"]));
}

#[test]
fn concurrent_gates_appending_to_one_log_leave_only_whole_lines() {
    let env = TestEnv::new(1, "");
    let long = "x".repeat(3000); // records of several KiB, well past a pipe buffer's atomic size
    let n = 64;
    let children: Vec<_> = (0..n)
        .map(|i| {
            let mut c = env.cmd("docker", &["ps", "--filter", &format!("name={i}{long}")]);
            c.env("CLAUDEOPS_TIER", "1")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            c.spawn().unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let text = std::fs::read_to_string(&env.audit).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), n);
    let mut seen = std::collections::BTreeSet::new();
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("torn line ({e}): {}", &l[..80.min(l.len())]));
        seen.insert(v["argv"][2].as_str().unwrap().split_once(&*long).unwrap().0.to_string());
    }
    assert_eq!(seen.len(), n, "every call logged exactly once");
}

#[test]
fn the_admin_cli_answers_to_its_own_name_only() {
    let out = Command::new(crate::harness::bin()).arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("explain"));
    let out = Command::new(crate::harness::bin()).arg("frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_real_tool_starts_with_sigpipe_at_its_default_so_a_closed_pipe_ends_it_quietly() {
    let env = TestEnv::new(1, "");
    // The stub writes the signals it inherited as ignored (the SigIgn mask of /proc/self/status).
    let stub = format!(
        "#!/bin/sh\nwhile read -r k v; do [ \"$k\" = SigIgn: ] && echo \"$v\" > {}; done < /proc/$$/status\nexit 0\n",
        env.real.join("sigign").display()
    );
    crate::harness::write_exec(&env.real.join("docker"), &stub);
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let mask = u64::from_str_radix(std::fs::read_to_string(env.real.join("sigign")).unwrap().trim(), 16).unwrap();
    assert_eq!(
        mask & (1 << (libc::SIGPIPE - 1)),
        0,
        "SIGPIPE is ignored in the real tool (mask {mask:x})"
    );
}

#[test]
fn the_admin_cli_ends_quietly_when_its_reader_goes_away() {
    let env = TestEnv::new(1, "");
    for _ in 0..50 {
        env.run("docker", &["restart", "api"], &[("CLAUDEOPS_TIER", "1")]);
    }
    let mut child = Command::new(crate::harness::bin())
        .arg("audit")
        .arg(&env.audit)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

/// `compose up` at tier 2 reads the compose files the way compose finds them. What they ask for
/// that `docker run` needs tier 3 for, or files the agent can change, refuse the call, and the
/// real docker never runs. The agent here is `nobody` (run through setpriv when the tests run as
/// root; root can change every file, so as root every one of these is the agent's own).
#[test]
fn a_compose_file_that_asks_for_more_than_tier_2_refuses_compose_up() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new(3, "");
    let root = nix::unistd::getuid().is_root();
    // The operator's project: readable, not writable, by the agent.
    let app = env.path("app");
    std::fs::create_dir_all(app.join("sub")).unwrap();
    for d in [&app, &app.join("sub")] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    if root {
        // The stub records what it received in the real directory; the gate appends the audit log.
        std::fs::set_permissions(&env.real, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::write(&env.audit, "").unwrap();
        std::fs::set_permissions(&env.audit, std::fs::Permissions::from_mode(0o666)).unwrap();
    }
    let up = |dir: &std::path::Path, args: &[&str], tier: &str| {
        let mut c = if root {
            let mut c = Command::new("/usr/bin/setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .arg(env.dir.join("docker"))
                .args(args)
                .env_clear()
                .env("PATH", &env.dir);
            c
        } else {
            env.cmd("docker", args)
        };
        c.current_dir(dir).env("CLAUDEOPS_TIER", tier);
        crate::harness::Run { out: c.output().unwrap() }
    };
    let write = |p: &std::path::Path, text: &str| {
        std::fs::write(p, text).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
    };
    write(
        &app.join("compose.yaml"),
        "services:\n  web:\n    image: nginx\n    volumes: [./html:/html:ro]\n",
    );
    let r = up(&app, &["compose", "up", "-d", "web"], "2");
    if !root {
        // The tests' own files are the caller's: compose up of them is the caller's container.
        assert_eq!(r.code(), 77, "{}", r.stderr());
        assert_eq!(env.last_audit()["rule"], "docker.compose.file-writable");
        return;
    }
    assert_eq!(r.code(), 0, "{}", r.stderr());
    env.forget("docker");
    for (file, text) in [
        ("compose.yaml", "services:\n  web: {image: nginx, privileged: true}\n"),
        (
            "compose.yaml",
            "services:\n  web:\n    image: x\n    volumes: [/var/run/docker.sock:/s]\n",
        ),
        ("compose.yaml", "services:\n  web: {image: x, pid: host}\n"),
        ("compose.yaml", "x-p: &p {privileged: true}\nservices:\n  web: {<<: *p, image: x}\n"),
        // The override file compose adds beside it counts too.
        ("compose.override.yaml", "services:\n  web: {cap_add: [SYS_ADMIN]}\n"),
    ] {
        write(&app.join("compose.yaml"), "services:\n  web: {image: nginx}\n");
        let _ = std::fs::remove_file(app.join("compose.override.yaml"));
        write(&app.join(file), text);
        // From a directory below, compose finds the files in a parent: so does the gate.
        let r = up(&app.join("sub"), &["compose", "up", "-d", "web"], "2");
        assert_eq!(r.code(), 77, "{text}: {}", r.stderr());
        assert!(r.stderr().contains("requires tier 3"), "{}", r.stderr());
        assert_eq!(env.last_audit()["rule"], "docker.compose.file-escalates");
        assert_eq!(env.received("docker"), None, "{text}");
    }
    let _ = std::fs::remove_file(app.join("compose.override.yaml"));
    write(&app.join("compose.yaml"), "services:\n  web: {image: nginx}\n");
    // What the agent can change: its own compose file, a directory where it could add an
    // override, a bind source it could fill with setuid files or swap for a symlink.
    let agent_dir = env.path("mine");
    std::fs::create_dir_all(&agent_dir).unwrap();
    std::fs::set_permissions(&agent_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    write(&agent_dir.join("compose.yaml"), "services:\n  web: {image: nginx}\n");
    let r = up(&agent_dir, &["compose", "up", "-d", "web"], "2");
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(env.last_audit()["rule"], "docker.compose.file-writable");
    write(
        &app.join("compose.yaml"),
        &format!(
            "services:\n  web:\n    image: nginx\n    volumes: [{}:/data]\n",
            agent_dir.display()
        ),
    );
    let r = up(&app, &["compose", "up", "-d", "web"], "2");
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(env.last_audit()["rule"], "docker.compose.file-writable");
    // Named with -f from elsewhere, and a file that is not YAML.
    write(&env.path("evil.yml"), "services:\n  web: {image: x, network_mode: host}\n");
    let r = up(&app, &["compose", "-f", "../evil.yml", "up", "-d", "web"], "2");
    assert_eq!(r.code(), 77, "{}", r.stderr());
    write(&app.join("compose.yaml"), "services: [\n");
    let r = up(&app, &["compose", "up", "-d", "web"], "2");
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(env.last_audit()["rule"], "docker.compose.file-unread");
    assert_eq!(env.received("docker"), None);
    // Tier 3 may.
    let r = up(&app, &["compose", "-f", "../evil.yml", "up", "-d", "web"], "3");
    assert_eq!(r.code(), 0, "{}", r.stderr());
}

#[test]
fn a_pinned_pgservice_without_a_pinned_service_file_refuses_the_call() {
    let env = TestEnv::new(3, "env: {PGSERVICE: monitor}\n");
    let out = env.cmd("psql", &["-c", "select 1"]).env("CLAUDEOPS_TIER", "1").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(78), "{stderr}");
    assert!(
        stderr.contains("tiershim.yaml") && stderr.contains("`env.PGSERVICEFILE`"),
        "{stderr}"
    );
    assert!(env.received("psql").is_none());
}

/// A command for `tool` through its link whose files may grow to `limit` bytes (RLIMIT_FSIZE, as
/// `ulimit -f` sets it), with the tier given.
fn limited(env: &TestEnv, tool: &str, args: &[&str], limit: u64) -> crate::harness::Run {
    use std::os::unix::process::CommandExt;
    let mut c = env.cmd(tool, args);
    c.env("CLAUDEOPS_TIER", "1");
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    crate::harness::Run { out: c.output().unwrap() }
}

#[test]
fn an_audit_record_is_written_whole_or_the_call_is_refused_and_a_torn_line_hides_nothing() {
    let env = TestEnv::new(1, "");
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    env.forget("docker");
    let size = std::fs::metadata(&env.audit).unwrap().len();
    // `(ulimit -f …; docker ps --filter name=aaaa…)`: room for part of the record only.
    let long = format!("name={}", "a".repeat(2000));
    let r = limited(&env, "docker", &["ps", "--filter", &long], size + 100);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr().contains("short write (100 of ")
            && r.stderr().contains(
                "so the record is torn; the call is refused rather than run unlogged (a file size limit or a full disk cut the write short"
            ),
        "{}",
        r.stderr()
    );
    assert_eq!(env.received("docker"), None, "the call ran unlogged");
    // No room at all: the kernel's SIGXFSZ does not end the gate silently; it refuses.
    let size = std::fs::metadata(&env.audit).unwrap().len();
    let r = limited(&env, "docker", &["ps"], size);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(r.stderr().contains("File too large"), "{}", r.stderr());
    assert_eq!(env.received("docker"), None);
    // The next record starts on a line of its own and reads whole.
    let r = env.run("docker", &["ps", "-a"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let text = std::fs::read_to_string(&env.audit).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(serde_json::from_str::<serde_json::Value>(lines[1]).is_err());
    let last: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(last["argv"], serde_json::json!(["ps", "-a"]));
    // `tiershim audit` counts the torn line.
    let out = Command::new(crate::harness::bin())
        .args(["audit", "--json"])
        .arg(&env.audit)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["decisions"].as_u64(), v["torn"].as_u64()), (Some(2), Some(1)), "{v}");
    let out = Command::new(crate::harness::bin()).arg("audit").arg(&env.audit).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("torn records: 1 (writes the gate did not finish; it refused those calls)"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn git_version_reads_no_configuration_and_every_other_git_call_does() {
    let env = TestEnv::new(1, "");
    // The real git, behind a script that notes each call (the gate's own and the agent's).
    let git = crate::real_tools::which("git");
    crate::harness::write_exec(
        &env.real.join("git"),
        &format!("#!/bin/sh\necho \"$*\" >> \"${{0%/*}}/git.calls\"\nexec {} \"$@\"\n", git.display()),
    );
    let calls = || std::fs::read_to_string(env.real.join("git.calls")).unwrap_or_default();
    let r = env.run("git", &["--version"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(r.stdout().starts_with("git version"), "{}", r.stdout());
    let seen = calls();
    assert_eq!(seen.lines().count(), 1, "{seen}");
    assert!(!seen.contains("config --list"), "{seen}");
    let _ = std::fs::remove_file(env.real.join("git.calls"));
    let r = env.run("git", &["help", "-a"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(calls().contains("config --list"), "{}", calls());
}
