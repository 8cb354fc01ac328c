//! ssh through the real linked binary: the log lines, the audit record of a parsed remote
//! command, the environment the real ssh gets, and the nested calls the real tools make through
//! the gate: the real git's `git-upload-pack`/`git-receive-pack` over ssh (with a "remote host"
//! that is this machine: a stub ssh that records its argv and runs the remote command with
//! /bin/sh), and the real OpenSSH's own `-J` hop (`ssh -W '[host]:port' jumphost`).
//! The case table (`tests/cases/ssh.yaml`) is run by `corpus.rs`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{TestEnv, write_exec};
use crate::real_tools::{git, which};

/// The pinned config every exec of the real ssh starts with.
const PREPEND: [&str; 2] = ["-F", "/etc/ssh/ssh_config"];

fn with_prepend(args: &[&str]) -> Vec<String> {
    PREPEND.iter().chain(args).map(|s| s.to_string()).collect()
}

#[test]
fn an_allowed_remote_command_reaches_the_real_ssh_behind_the_pinned_config() {
    let env = TestEnv::new(1, "hosts: [ie01]\n");
    let r = env.run("ssh", &["ops@ie01", "docker ps -a"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.stderr(), "");
    assert_eq!(env.last_audit()["message"], "[skill:container-health] Using: ssh → docker ps (CLI)");
    assert_eq!(r.stdout(), "stub ssh ran\n");
    assert_eq!(env.received("ssh"), Some(with_prepend(&["ops@ie01", "docker ps -a"])));
}

#[test]
fn a_refused_part_names_the_host_and_the_real_ssh_never_runs() {
    let env = TestEnv::new(3, "");
    let r = env.run("ssh", &["ops@ie01", "docker restart api"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        "[skill:container-ops] REFUSED: restarting, starting or stopping a container on ie01 requires tier 2 \
         (this agent is tier 1) — escalate to a tier 2 agent or an operator\n"
    );
    let r = env.run("ssh", &["ie01", "docker restart api; rm -rf /"], &[("CLAUDEOPS_TIER", "3")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr()
            .starts_with("[skill:container-health] REFUSED: rm on ie01 is never allowed (this agent is tier 3; rule ssh.unclassified)"),
        "{}",
        r.stderr()
    );
    let r = env.run("ssh", &["ie01", "docker restart $(docker ps -q)"], &[("CLAUDEOPS_TIER", "2")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr().starts_with(
            "[skill:container-ops] REFUSED: command substitution `$(docker ps -q)` on ie01 requires tier 3 (this agent is tier 2)"
        ),
        "{}",
        r.stderr()
    );
    assert_eq!(env.received("ssh"), None);
}

#[test]
fn an_unlisted_host_is_refused_by_name() {
    let env = TestEnv::new(3, "hosts: [ie01, bastion]\n");
    let r = env.run("ssh", &["-J", "evil", "ie01", "uptime"], &[("CLAUDEOPS_TIER", "3")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        "[skill:container-health] REFUSED: ssh to evil (jump host) is never allowed (this agent is tier 3; rule ssh.host) \
         — use a host listed in tiershim.yaml `hosts:`, or ask an operator to add it\n"
    );
    assert_eq!(env.received("ssh"), None);
}

#[test]
fn a_dry_run_shows_the_ssh_call_with_its_remote_command_as_one_word() {
    let env = TestEnv::new(2, "");
    let r = env.run(
        "ssh",
        &["ops@ie01", "docker", "restart", "jellyfin"],
        &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", "1")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        "[skill:container-ops] DRY RUN: would run: ssh ops@ie01 'docker restart jellyfin'\n"
    );
    assert_eq!(env.received("ssh"), None);
    // A read still runs in dry-run mode.
    let r = env.run(
        "ssh",
        &["ops@ie01", "docker ps"],
        &[("CLAUDEOPS_TIER", "2"), ("CLAUDEOPS_DRY_RUN", "1")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(env.received("ssh").is_some());
}

#[test]
fn the_audit_record_carries_the_host_and_the_parsed_remote_command_with_secrets_redacted() {
    let env = TestEnv::new(2, "");
    let command = "cd /srv/app && docker compose restart api && curl -su bob:hunter2 http://127.0.0.1/health";
    let r = env.run("ssh", &["-p", "2222", "ops@ie01", command], &[("CLAUDEOPS_TIER", "2")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.stderr(), "");
    let rec = env.last_audit();
    assert_eq!(rec["message"], "[skill:container-ops] Using: ssh → docker compose restart (CLI)");
    assert_eq!(rec["tool"], "ssh");
    assert_eq!(rec["verb"], "docker compose restart");
    assert_eq!(rec["rule"], "docker.compose.restart");
    assert_eq!(
        rec["remote"],
        serde_json::json!({
            "host": "ie01",
            "user": "ops",
            "port": "2222",
            "jump": [],
            "command": "cd /srv/app && docker compose restart api && curl -su 'bob:[REDACTED]' http://127.0.0.1/health",
            "cd": "/srv/app",
            "parts": [
                {
                    "tool": "docker",
                    "argv": ["docker", "compose", "restart", "api"],
                    "verb": "compose restart",
                    "shown": "docker compose restart",
                    "verdict": "allow",
                    "required_tier": 2,
                    "rule": "docker.compose.restart",
                    "skill": "container-ops"
                },
                {
                    "tool": "curl",
                    "argv": ["curl", "-su", "bob:[REDACTED]", "http://127.0.0.1/health"],
                    "verb": "GET",
                    "shown": "curl GET",
                    "verdict": "allow",
                    "required_tier": 1,
                    "rule": "curl.read",
                    "skill": "http-request"
                }
            ]
        })
    );
    let line = std::fs::read_to_string(&env.audit).unwrap();
    assert!(!line.contains("hunter2"), "{line}");
    // The real ssh still got the command exactly as written.
    assert_eq!(env.received("ssh"), Some(with_prepend(&["-p", "2222", "ops@ie01", command])));
}

#[test]
fn variables_that_make_ssh_run_a_local_program_or_change_the_remote_encoding_are_removed() {
    let env = TestEnv::new(1, "");
    let r = env.run(
        "ssh",
        &["ie01", "uptime"],
        &[
            ("CLAUDEOPS_TIER", "1"),
            ("SSH_ASKPASS", "/tmp/evil"),
            ("SSH_ASKPASS_REQUIRE", "force"),
            ("SSH_SK_PROVIDER", "/tmp/evil.so"),
            ("SHELL", "/bin/rbash"),
            ("SSH_AUTH_SOCK", "/tmp/agent.sock"),
            // ssh would send these on (SendEnv LANG LC_*): a remote psql would speak SJIS.
            ("LANG", "ja_JP.SJIS"),
            ("LC_ALL", "ja_JP.SJIS"),
            ("LC_CTYPE", "zh_CN.GBK"),
        ],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let got = env.received_env("ssh").unwrap();
    for var in ["SSH_ASKPASS", "SSH_ASKPASS_REQUIRE", "SSH_SK_PROVIDER", "LC_ALL", "LC_CTYPE"] {
        assert!(!got.contains_key(var), "{var} reached the real ssh");
    }
    assert_eq!(got.get("SHELL").map(String::as_str), Some("/bin/sh"));
    assert_eq!(got.get("LANG").map(String::as_str), Some("C.UTF-8"));
    assert_eq!(got.get("SSH_AUTH_SOCK").map(String::as_str), Some("/tmp/agent.sock"));
}

#[test]
fn explain_shows_the_remote_host_and_each_part() {
    let out = Command::new(crate::harness::bin())
        .args([
            "explain",
            "--tier",
            "3",
            "--",
            "ssh",
            "-J",
            "bastion",
            "ops@ie01",
            "docker restart $(docker ps -q)",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "verdict:        allow\n",
        "rule:           ssh.shell.opaque\n",
        "remote:         ops@ie01 via bastion\n",
        "command:        docker restart $(docker ps -q)\n",
        "part:           docker restart $(docker ps -q) → docker restart (rule docker.restart, tier 2)\n",
        "part:           $(docker ps -q) → construct command-substitution (rule ssh.shell.opaque, tier 3)\n",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}

// ---------------------------------------------------------------------------------------------
// git over ssh: the real git runs `ssh` from PATH (core.sshCommand=ssh is part of the git gate's
// hardening), which in a tier directory is the gate again.

/// A stub real ssh for a "remote host" that is this machine: it records argv and environment
/// like the other stubs, then runs the remote command (its last argument) with /bin/sh, as the
/// remote user's shell would. git-upload-pack and git-receive-pack come from git's exec path,
/// which git puts first on the PATH it hands ssh.
const LOOPBACK_SSH: &str = "#!/bin/sh\nd=\"${0%/*}\"\n: > \"$d/ssh.argv\"\nfor a in \"$@\"; do printf '%s\\0' \"$a\" >> \"$d/ssh.argv\"; done\n/usr/bin/env -0 > \"$d/ssh.env\"\nfor last; do :; done\nexec /bin/sh -c \"$last\"\n";

/// An install with the real git and the loopback ssh, a bare repository, and a clone of it with
/// `main` pushed and a feature branch `feat` checked out. The remote is `ssh://git@localhost…`.
fn git_over_ssh() -> (TestEnv, PathBuf, PathBuf) {
    let env = TestEnv::new(3, &format!("real:\n  git: {}\nhosts: [localhost]\n", which("git").display()));
    write_exec(&env.real.join("ssh"), LOOPBACK_SSH);
    let remote = env.path("remote.git");
    let work = env.path("work");
    git(env.tmp.path(), &["init", "-q", "--bare", "-b", "main", remote.to_str().unwrap()]);
    git(env.tmp.path(), &["init", "-q", "-b", "main", work.to_str().unwrap()]);
    std::fs::write(work.join("README.md"), "hello\n").unwrap();
    git(&work, &["add", "README.md"]);
    git(&work, &["commit", "-q", "-m", "first"]);
    git(&work, &["push", "-q", remote.to_str().unwrap(), "main"]);
    git(
        &work,
        &["remote", "add", "origin", &format!("ssh://git@localhost{}", remote.display())],
    );
    // As if fetched: the push scope check counts the commits not on a remote-tracking branch.
    git(&work, &["update-ref", "refs/remotes/origin/main", "main"]);
    // As a clone has it: the remote's default branch (a push is refused without it).
    git(&work, &["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]);
    git(&work, &["checkout", "-q", "-b", "feat"]);
    // A file the shipped git-pr skill lets an agent change (the push is scope-checked).
    std::fs::create_dir(work.join("checks")).unwrap();
    std::fs::write(work.join("checks/disk.md"), "check\n").unwrap();
    git(&work, &["add", "checks/disk.md"]);
    git(&work, &["commit", "-q", "-m", "second"]);
    (env, work, remote)
}

fn git_in(env: &TestEnv, dir: &Path, args: &[&str], tier: &str) -> (i32, String) {
    let out = env
        .cmd("git", args)
        .current_dir(dir)
        .env("CLAUDEOPS_TIER", tier)
        .env("GIT_AUTHOR_NAME", "agent")
        .env("GIT_AUTHOR_EMAIL", "agent@example.com")
        .env("GIT_COMMITTER_NAME", "agent")
        .env("GIT_COMMITTER_EMAIL", "agent@example.com")
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_real_git_push_over_ssh_passes_the_ssh_gate_as_its_nested_call_and_lands() {
    let (env, work, remote) = git_over_ssh();
    let (code, err) = git_in(&env, &work, &["push", "origin", "feat"], "2");
    assert_eq!(code, 0, "{err}");
    assert_eq!(git(&remote, &["rev-parse", "feat"]), git(&work, &["rev-parse", "feat"]));
    let messages: Vec<String> = env
        .audit_records()
        .iter()
        .map(|r| r["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(messages.contains(&"[skill:git-pr] Using: git (CLI)".to_string()), "{messages:?}");
    assert!(
        messages.contains(&"[skill:git-pr] Using: ssh → git-receive-pack (CLI)".to_string()),
        "{messages:?}\n{err}"
    );
    // Exactly what git asked the ssh gate for, behind the pinned config.
    let quoted = format!("git-receive-pack '{}'", remote.display());
    assert_eq!(env.received("ssh"), Some(with_prepend(&["git@localhost", &quoted])));
    let records = env.audit_records();
    let nested = records
        .iter()
        .find(|r| r["tool"] == "ssh")
        .expect("an audit record of the nested ssh");
    assert_eq!(
        (nested["verdict"].as_str(), nested["rule"].as_str()),
        (Some("allow"), Some("ssh.git.receive-pack"))
    );
    assert_eq!(
        nested["remote"]["parts"][0]["argv"],
        serde_json::json!(["git-receive-pack", remote.display().to_string()])
    );
}

#[test]
fn a_real_git_fetch_over_ssh_is_an_upload_pack_at_tier_1() {
    let (env, work, remote) = git_over_ssh();
    git(&remote, &["update-ref", "refs/heads/other", "main"]);
    let (code, err) = git_in(&env, &work, &["fetch", "origin"], "1");
    assert_eq!(code, 0, "{err}");
    assert_eq!(git(&work, &["rev-parse", "origin/other"]), git(&remote, &["rev-parse", "main"]));
    let got = env.received("ssh").unwrap();
    assert_eq!(got[..PREPEND.len()], PREPEND.map(String::from));
    assert_eq!(got.last(), Some(&format!("git-upload-pack '{}'", remote.display())));
    let nested = env.audit_records().into_iter().find(|r| r["tool"] == "ssh").unwrap();
    assert_eq!(nested["rule"], "ssh.git.fetch");
}

#[test]
fn receive_pack_asked_for_by_anyone_but_the_real_git_is_refused() {
    let (env, _, remote) = git_over_ssh();
    let quoted = format!("git-receive-pack '{}'", remote.display());
    let r = env.run("ssh", &["git@localhost", &quoted], &[("CLAUDEOPS_TIER", "3")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("rule ssh.nested"), "{}", r.stderr());
    assert_eq!(env.received("ssh"), None);
}

#[test]
fn a_hostile_repository_config_cannot_smuggle_a_remote_command_through_git_fetch() {
    let (env, work, _) = git_over_ssh();
    // The agent can write .git/config; remote.<name>.uploadpack is put in front of the path.
    // The git gate reads the configuration first and refuses a key from a file the agent could
    // have written, naming it; git never starts, so neither does ssh.
    git(
        &work,
        &["config", "remote.origin.uploadpack", "docker system prune -af; git-upload-pack"],
    );
    let (code, err) = git_in(&env, &work, &["fetch", "origin"], "3");
    assert_eq!(code, 77, "{err}");
    assert!(
        err.contains("rule git.agent-config") && err.contains("remote.origin.uploadpack"),
        "{err}"
    );
    assert_eq!(env.received("ssh"), None, "the remote command reached ssh: {err}");
    assert!(env.audit_records().iter().all(|r| r["tool"] != "ssh"));
}

#[test]
fn a_push_git_refuses_never_reaches_the_ssh_gate() {
    let (env, work, remote) = git_over_ssh();
    let before = git(&remote, &["rev-parse", "main"]);
    let (code, err) = git_in(&env, &work, &["push", "--force", "origin", "feat:main"], "3");
    assert_eq!(code, 77, "{err}");
    assert_eq!(git(&remote, &["rev-parse", "main"]), before);
    assert!(env.audit_records().iter().all(|r| r["tool"] != "ssh"));
}

// ---------------------------------------------------------------------------------------------
// -J with the real OpenSSH: it runs its hop as `$SHELL -c "exec ssh … -W '[host]:port' jump"`,
// and `ssh` there is found on PATH, which is the tier directory.

/// A port on 127.0.0.1 where nothing listens (connections are refused at once).
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn the_real_ssh_jump_hop_comes_back_through_the_gate_and_is_allowed_as_its_nested_call() {
    let env = TestEnv::new(3, &format!("real:\n  ssh: {}\nhosts: [ie01, 127.0.0.1]\n", which("ssh").display()));
    let port = closed_port().to_string();
    let jump = format!("jumper@127.0.0.1:{port}");
    let r = env.run(
        "ssh",
        &["-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-J", &jump, "ops@ie01", "uptime"],
        &[("CLAUDEOPS_TIER", "1")],
    );
    // Nothing listens on the jump host, so the connection fails after both gates allowed it.
    assert_eq!(r.code(), 255, "{}", r.stderr());
    let records = env.audit_records();
    assert_eq!(records.len(), 2, "{records:#?}\n{}", r.stderr());
    assert_eq!(
        (records[0]["verdict"].as_str(), records[0]["rule"].as_str()),
        (Some("allow"), Some("ssh.remote.read"))
    );
    assert_eq!(records[0]["remote"]["jump"], serde_json::json!(["127.0.0.1"]));
    // The hop, exactly as OpenSSH wrote it, with the pinned config passed on.
    assert_eq!(
        (records[1]["verdict"].as_str(), records[1]["rule"].as_str()),
        (Some("allow"), Some("ssh.jump"))
    );
    assert_eq!(
        records[1]["argv"],
        serde_json::json!([
            "-l",
            "jumper",
            "-p",
            port,
            "-F",
            "/etc/ssh/ssh_config",
            "-W",
            "[ie01]:22",
            "127.0.0.1"
        ])
    );
    assert_eq!(records[0]["message"], "[skill:container-health] Using: ssh → uptime (CLI)");
    assert!(!r.stderr().contains("Using:"), "{}", r.stderr());
}

#[test]
fn a_jump_through_an_unlisted_host_is_refused_before_the_real_ssh_runs() {
    let env = TestEnv::new(3, &format!("real:\n  ssh: {}\nhosts: [ie01]\n", which("ssh").display()));
    let jump = format!("jumper@127.0.0.1:{}", closed_port());
    let r = env.run("ssh", &["-J", &jump, "ops@ie01", "uptime"], &[("CLAUDEOPS_TIER", "3")]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    let records = env.audit_records();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["rule"], "ssh.host");
}
