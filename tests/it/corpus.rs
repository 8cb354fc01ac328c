//! The data-driven corpus: `tests/cases/<tool>.yaml`, each case an argv with a tier, optional
//! caller env, pinned env and dry-run, and the verdict and rule expected. Every case runs through
//! the real linked binary with stub real tools: an allowed case must reach the stub with exactly
//! the expected argv; a refused or dry-run case must never reach it. Every case also runs through
//! `tiershim explain --config` of the same tier, with the same environment, working directory and
//! stdin, which must reach the gate's verdict, rule and exit.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::harness::TestEnv;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    #[serde(default)]
    name: Option<String>,
    argv: Vec<String>,
    tier: u8,
    #[serde(default)]
    ceiling: Option<u8>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    pinned: BTreeMap<String, String>,
    #[serde(default)]
    dry_run: bool,
    /// `hosts:` for tiershim.yaml (ssh).
    #[serde(default)]
    hosts: Option<Vec<String>>,
    /// `remote:` for tiershim.yaml (ssh): per host, workspaces, compose projects, units.
    #[serde(default)]
    remote: Option<serde_yaml_ng::Value>,
    verdict: String,
    rule: String,
    #[serde(default)]
    received: Option<Vec<String>>,
    /// What the call reads on stdin (a script); without it stdin is empty.
    #[serde(default)]
    stdin: Option<String>,
    /// Run in a real git repository (see [`repo_fixture`]): calls with a path-scope check need
    /// one, because the gate works out what they change with git.
    #[serde(default)]
    repo: bool,
    /// Run the call (and its `explain`) as an unprivileged user, not root: the files a tool
    /// takes as instructions (playbooks, manifests, charts) are the operator's only when the
    /// agent is not root, who can write anything.
    #[serde(default)]
    agent: bool,
}

/// The git stub of a git case: it records the calls the gate execs and hands the gate's own
/// fact queries (they start `--no-pager --no-replace-objects`) to the real git, so scope
/// checks, probes and the configuration check see the case's directory as it is.
fn fact_passing_git_stub(env: &TestEnv) {
    let stub = format!(
        "#!/bin/sh\nif [ \"$1\" = --no-pager ] && [ \"$2\" = --no-replace-objects ]; then exec {} \"$@\"; fi\n{}",
        crate::real_tools::which("git").display(),
        crate::harness::STUB.trim_start_matches("#!/bin/sh\n")
    );
    crate::harness::write_exec(&env.real.join("git"), &stub);
}

/// A repository at `<tmp>/repo`: `main` with a README, `origin/main` and `origin/HEAD` set,
/// branches `fix/restart` and `feat` one commit ahead (a runbook check), the tag `v1.2`, a
/// staged runbook change, and `fix/restart` checked out.
fn repo_fixture(env: &TestEnv) -> std::path::PathBuf {
    use crate::real_tools::git;
    let repo = env.path("repo");
    std::fs::create_dir_all(repo.join("checks")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README.md"), "app\n").unwrap();
    git(&repo, &["add", "README.md"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    git(&repo, &["remote", "add", "origin", "https://example.com/ops/app.git"]);
    git(&repo, &["update-ref", "refs/remotes/origin/main", "main"]);
    git(&repo, &["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]);
    git(&repo, &["switch", "-q", "-c", "fix/restart"]);
    std::fs::write(repo.join("checks/http.md"), "check\n").unwrap();
    git(&repo, &["add", "checks/http.md"]);
    git(&repo, &["commit", "-q", "-m", "check"]);
    git(&repo, &["branch", "feat"]);
    git(&repo, &["tag", "v1.2"]);
    std::fs::write(repo.join("checks/http.md"), "check 2\n").unwrap();
    git(&repo, &["add", "checks/http.md"]);
    repo
}

fn load(tool: &str) -> Vec<Case> {
    let path = format!("{}/tests/cases/{tool}.yaml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn expand(s: &str, env: &TestEnv) -> String {
    s.replace("${REAL}", &env.real.display().to_string())
        .replace("${TMP}", &env.tmp.path().display().to_string())
}

/// Run one case; Err describes the disagreement.
/// The lines a case adds to tiershim.yaml for ssh: `hosts:` and `remote:`.
fn ssh_config(case: &Case) -> String {
    let mut extra = String::new();
    if let Some(hosts) = &case.hosts {
        extra.push_str(&format!("hosts: {}\n", serde_json::to_string(hosts).unwrap_or_default()));
    }
    if let Some(remote) = &case.remote {
        extra.push_str(&format!("remote: {}\n", serde_json::to_string(remote).unwrap_or_default()));
    }
    extra
}

/// `cmd` run as `agent` (its own groups), with the same arguments, environment and directory.
fn as_agent(cmd: &std::process::Command, agent: &crate::harden::Account) -> std::process::Command {
    let mut c = std::process::Command::new("/usr/bin/setpriv");
    c.arg(format!("--reuid={}", agent.uid))
        .arg(format!("--regid={}", agent.gid))
        .arg("--init-groups")
        .arg("--")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_clear();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    if let Some(d) = cmd.get_current_dir() {
        c.current_dir(d);
    }
    c
}

fn run_case(tool: &str, case: &Case, agent: Option<&crate::harden::Account>) -> Result<(), String> {
    let mut extra = ssh_config(case);
    if !case.pinned.is_empty() {
        extra.push_str("env:\n");
        for (k, v) in &case.pinned {
            extra.push_str(&format!("  {k}: {}\n", serde_json::to_string(v).unwrap_or_default()));
        }
    }
    let env = TestEnv::new(case.ceiling.unwrap_or(3), &extra);
    let argv: Vec<String> = case.argv.iter().map(|a| expand(a, &env)).collect();
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let tier = case.tier.to_string();
    let mut vars: Vec<(String, String)> = vec![("CLAUDEOPS_TIER".into(), tier)];
    if case.dry_run {
        vars.push(("CLAUDEOPS_DRY_RUN".into(), "1".into()));
    }
    for (k, v) in &case.env {
        vars.push((k.clone(), expand(v, &env)));
    }
    let mut cmd = env.cmd(tool, &args);
    cmd.envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    if tool == "git" || case.repo {
        fact_passing_git_stub(&env);
    }
    let cwd = if case.repo {
        repo_fixture(&env)
    } else {
        env.tmp.path().to_path_buf()
    };
    cmd.current_dir(&cwd);
    let agent = if case.agent {
        let a = agent.ok_or("an agent case needs root to make the agent's user")?;
        // The agent appends to the audit log (an unhardened install), and its stubs record what
        // they received beside themselves.
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(&env.audit, "").map_err(|e| e.to_string())?;
        std::fs::set_permissions(&env.audit, std::fs::Permissions::from_mode(0o666)).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&env.real, std::fs::Permissions::from_mode(0o1777)).map_err(|e| e.to_string())?;
        Some(a)
    } else {
        None
    };
    let cmd = match agent {
        Some(a) => as_agent(&cmd, a),
        None => cmd,
    };
    let out = output(cmd, case.stdin.as_deref())?;
    // The same call through `tiershim explain --config` of that tier, with the same
    // environment, working directory and stdin: the same verdict, rule and exit.
    let mut ex = std::process::Command::new(crate::harness::bin());
    ex.args(["explain", "--json", "--config"])
        .arg(env.config_path())
        .arg("--")
        .arg(tool)
        .args(&args)
        .env_clear()
        .env("PATH", &env.dir)
        .env("HOME", env.tmp.path())
        .current_dir(&cwd)
        .envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let ex = match agent {
        Some(a) => as_agent(&ex, a),
        None => ex,
    };
    let explained = output(ex, case.stdin.as_deref())?;
    let code = out.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let record = env
        .audit_records()
        .pop()
        .ok_or_else(|| format!("no audit record; exit {code}; stderr: {stderr}"))?;
    let got_verdict = record["verdict"].as_str().unwrap_or("?").to_string();
    let got_rule = record["rule"].as_str().unwrap_or("?").to_string();
    // The gate's own read-only look at a remote host (src/remote_facts.rs) runs the stub ssh
    // too; that is not the call running.
    let received = env
        .received(tool)
        .filter(|r| !r.last().is_some_and(|w| w.contains("tiershim-remote-facts")));
    let mut problems = Vec::new();
    if got_verdict != case.verdict || got_rule != case.rule {
        problems.push(format!("got {got_verdict} by {got_rule}, want {} by {}", case.verdict, case.rule));
    }
    match serde_json::from_slice::<serde_json::Value>(&explained.stdout) {
        Ok(v) => {
            let (ev, er) = (v["verdict"].as_str().unwrap_or("?"), v["rule"].as_str().unwrap_or("?"));
            let ecode = explained.status.code().unwrap_or(-1);
            if ev != got_verdict || er != got_rule || ecode != code {
                problems.push(format!(
                    "explain says {ev} by {er} (exit {ecode}), the gate {got_verdict} by {got_rule} (exit {code})"
                ));
            }
        }
        Err(e) => problems.push(format!(
            "explain printed no JSON ({e}), exit {:?}: {}",
            explained.status.code(),
            String::from_utf8_lossy(&explained.stderr)
        )),
    }
    match case.verdict.as_str() {
        "allow" => {
            let mut want: Vec<String> = tiershim::tool::Tool::from_name(tool)
                .ok_or("tool")?
                .spec()
                .prepend
                .iter()
                .map(|s| s.to_string())
                .collect();
            want.extend(argv.iter().cloned());
            if let Some(r) = &case.received {
                want = r.iter().map(|a| expand(a, &env)).collect();
            }
            if code != 0 {
                problems.push(format!("exit {code}, want the stub's 0"));
            }
            if received.as_ref() != Some(&want) {
                problems.push(format!("real tool received {received:?}, want {want:?}"));
            }
            if !record["message"].as_str().unwrap_or("").contains("] Using: ") {
                problems.push("no `Using:` line in the audit record".into());
            }
            if !stderr.is_empty() {
                problems.push(format!("the gate wrote to stderr for an allowed call: {stderr}"));
            }
        }
        "refuse" => {
            if code != 77 {
                problems.push(format!("exit {code}, want 77"));
            }
            if received.is_some() {
                problems.push("the real tool ran for a refused call".into());
            }
            if !stderr.contains("] REFUSED: ") {
                problems.push("no `REFUSED:` line".into());
            }
        }
        "dry-run" => {
            if code != 0 {
                problems.push(format!("exit {code}, want 0"));
            }
            if received.is_some() {
                problems.push("the real tool ran for a dry run".into());
            }
            if !stderr.contains("] DRY RUN: would run: ") {
                problems.push("no `DRY RUN:` line".into());
            }
        }
        other => problems.push(format!("unknown verdict {other} in the case file")),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n      stderr: {}", problems.join("; "), stderr.trim()))
    }
}

/// Run `cmd` with `stdin` piped in (or nothing), its output captured.
fn output(mut cmd: std::process::Command, stdin: Option<&str>) -> Result<std::process::Output, String> {
    use std::io::Write;
    use std::process::Stdio;
    match stdin {
        None => cmd.stdin(Stdio::null()).output().map_err(|e| format!("spawn: {e}")),
        Some(text) => {
            let mut child = cmd
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("spawn: {e}"))?;
            let mut input = child.stdin.take().ok_or("stdin")?;
            // The gate may refuse before reading all of it; a broken pipe is fine.
            let _ = input.write_all(text.as_bytes());
            drop(input);
            child.wait_with_output().map_err(|e| format!("wait: {e}"))
        }
    }
}

fn run_tool(tool: &str) -> usize {
    let cases = load(tool);
    let mut failures = Vec::new();
    // One unprivileged user for the cases that run as the agent.
    let agent = if cases.iter().any(|c| c.agent) {
        if nix::unistd::getuid().is_root() {
            Some(crate::harden::Account::create())
        } else if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("the {tool} corpus must run as root under CI (its agent cases make a user)");
        } else {
            eprintln!("SKIPPED the {tool} corpus's agent cases: not root");
            None
        }
    } else {
        None
    };
    for (i, case) in cases.iter().enumerate() {
        if case.agent && agent.is_none() {
            continue;
        }
        if let Err(e) = run_case(tool, case, agent.as_ref()) {
            let name = case.name.clone().unwrap_or_else(|| format!("#{i}"));
            failures.push(format!("  {tool} {} [{name}, tier {}]: {e}", case.argv.join(" "), case.tier));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} {tool} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    cases.len()
}

#[test]
fn corpus_gh() {
    run_tool("gh");
}
#[test]
fn corpus_tea() {
    run_tool("tea");
}
#[test]
fn corpus_docker() {
    run_tool("docker");
}
#[test]
fn corpus_psql() {
    run_tool("psql");
}
#[test]
fn corpus_mysql() {
    run_tool("mysql");
}
#[test]
fn corpus_curl() {
    run_tool("curl");
}
#[test]
fn corpus_git() {
    run_tool("git");
}

#[test]
fn corpus_ssh() {
    run_tool("ssh");
}
#[test]
fn corpus_kubectl() {
    run_tool("kubectl");
}
#[test]
fn corpus_helm() {
    run_tool("helm");
}
#[test]
fn corpus_ansible_playbook() {
    run_tool("ansible-playbook");
}
#[test]
fn corpus_ansible() {
    run_tool("ansible");
}
#[test]
fn corpus_ansible_inventory() {
    run_tool("ansible-inventory");
}
#[test]
fn corpus_ansible_galaxy() {
    run_tool("ansible-galaxy");
}

#[test]
fn the_corpus_has_at_least_250_cases() {
    let n: usize = crate::harness::TOOLS.iter().map(|t| load(t).len()).sum();
    assert!(n >= 250, "only {n} cases");
}
