//! The gate in front of the real git: real repositories in temp dirs, served by a real git
//! daemon. Proves that allowed calls do what the tool does, and refused ones leave no trace
//! where it matters (the remote). curl and gh against a real server are in `http`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::TestEnv;

pub fn which(tool: &str) -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).map(|d| d.join(tool)).find(|p| p.is_file()))
        .unwrap_or_else(|| panic!("{tool} is not installed; the test setup installs it"))
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(which("git"))
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The repository a pull request is made from: at `work`, `files` committed on `main`, a remote
/// `origin` at `origin_url` (never contacted), `origin/main` and `origin/HEAD` set as a fetch
/// would set them, and a branch `feat` checked out.
pub fn pr_repository(work: &Path, files: &[(&str, &str)], origin_url: &str) {
    std::fs::create_dir_all(work).unwrap();
    git(work, &["init", "-q", "-b", "main"]);
    for (name, text) in files {
        let p = work.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    git(work, &["add", "-A"]);
    git(work, &["commit", "-q", "-m", "base"]);
    git(work, &["remote", "add", "origin", origin_url]);
    git(work, &["update-ref", "refs/remotes/origin/main", "main"]);
    git(work, &["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]);
    git(work, &["switch", "-q", "-c", "feat"]);
}

/// The `tiershim.yaml` of an install around such repositories: ceiling `tier`, the real git, the
/// skills `baseline` directory, and `repos` (the skills' repositories, so the workspaces).
pub fn pr_config(env: &TestEnv, tier: u8, baseline: &Path, repos: &Path) {
    env.write_config(&format!(
        "tier: {tier}\nreal_dirs: [{}]\nreal:\n  git: {}\naudit_log: {}\nskills:\n  baseline: {}\n  repos: {}\n",
        env.real.display(),
        which("git").display(),
        env.audit.display(),
        baseline.display(),
        repos.display()
    ));
}

/// A real `git daemon` serving `base` on 127.0.0.1 with pushes enabled, stopped on drop. The
/// gate turns git's `file` transport off (a push to a local path would run that repository's
/// hooks as the caller), so remotes in these tests are reached over `git://`, as a real remote.
pub struct GitDaemon {
    child: std::process::Child,
    pub url: String,
}

impl GitDaemon {
    pub fn start(base: &Path) -> GitDaemon {
        for _ in 0..20 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            // The daemon binary itself, not `git daemon`: git would run it as a child that
            // outlives a kill of `git` and keeps the test's output pipes open.
            let exec_path = git(base, &["--exec-path"]);
            let mut child = Command::new(Path::new(&exec_path).join("git-daemon"))
                .args(["--reuseaddr", "--export-all", "--enable=receive-pack", "--listen=127.0.0.1"])
                .arg(format!("--port={port}"))
                .arg(format!("--base-path={}", base.display()))
                .arg(base)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            for _ in 0..100 {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return GitDaemon {
                        child,
                        url: format!("git://127.0.0.1:{port}"),
                    };
                }
                if child.try_wait().unwrap().is_some() {
                    break; // the port was taken meanwhile; try another
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("git daemon did not start");
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A work tree with a bare remote served by `git daemon`, `main` pushed, and a feature branch
/// checked out.
fn repo(env: &TestEnv) -> (PathBuf, PathBuf, GitDaemon) {
    let remote = env.path("remote.git");
    let work = env.path("work");
    git(env.tmp.path(), &["init", "-q", "--bare", "-b", "main", remote.to_str().unwrap()]);
    git(env.tmp.path(), &["init", "-q", "-b", "main", work.to_str().unwrap()]);
    std::fs::write(work.join("README.md"), "hello\n").unwrap();
    git(&work, &["add", "README.md"]);
    git(&work, &["commit", "-q", "-m", "first"]);
    let daemon = GitDaemon::start(env.tmp.path());
    git(&work, &["remote", "add", "origin", &format!("{}/remote.git", daemon.url)]);
    git(&work, &["push", "-q", "origin", "main"]);
    // As a clone has it: the remote's default branch, read from the remote.
    git(&work, &["remote", "set-head", "origin", "--auto"]);
    git(&work, &["checkout", "-q", "-b", "feat"]);
    std::fs::create_dir_all(work.join("checks")).unwrap();
    std::fs::write(work.join("checks/http.md"), "check\n").unwrap();
    git(&work, &["add", "checks/http.md"]);
    git(&work, &["commit", "-q", "-m", "second"]);
    (work, remote, daemon)
}

fn real_env(tool: &str) -> TestEnv {
    TestEnv::new(3, &format!("real:\n  {tool}: {}\n", which(tool).display()))
}

fn in_dir(env: &TestEnv, dir: &Path, tool: &str, args: &[&str], tier: &str) -> (i32, String, String) {
    let out = env
        .cmd(tool, args)
        .current_dir(dir)
        .env("CLAUDEOPS_TIER", tier)
        .env("GIT_AUTHOR_NAME", "agent")
        .env("GIT_AUTHOR_EMAIL", "agent@example.com")
        .env("GIT_COMMITTER_NAME", "agent")
        .env("GIT_COMMITTER_EMAIL", "agent@example.com")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn real_git_reads_run_and_a_feature_branch_push_lands_at_tier_2() {
    let env = real_env("git");
    let (work, remote, _daemon) = repo(&env);
    let (code, out, err) = in_dir(&env, &work, "git", &["status", "--short", "--branch"], "1");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("## feat"), "{out}");
    assert_eq!(err, "");

    let (code, _, err) = in_dir(&env, &work, "git", &["push", "origin", "feat"], "1");
    assert_eq!(code, 77, "{err}");
    assert_eq!(
        Command::new(which("git"))
            .args(["rev-parse", "--verify", "-q", "feat"])
            .current_dir(&remote)
            .output()
            .unwrap()
            .status
            .code(),
        Some(1)
    );

    let (code, _, err) = in_dir(&env, &work, "git", &["push", "origin", "feat"], "2");
    assert_eq!(code, 0, "{err}");
    assert_eq!(git(&remote, &["rev-parse", "feat"]), git(&work, &["rev-parse", "feat"]));
}

#[test]
fn real_git_force_pushes_and_pushes_to_main_never_reach_the_remote() {
    let env = real_env("git");
    let (work, remote, _daemon) = repo(&env);
    let before = git(&remote, &["rev-parse", "main"]);
    for args in [
        &["push", "origin", "feat:main"][..],
        &["push", "--force-w", "origin", "feat:main"],
        &["push", "-uf", "origin", "feat:main"],
        &["push", "origin", "+feat:main"],
        &["push", "origin", "feat:main", "--force"],
        &["push", "--mirror", "origin"],
        &["-c", "remote.origin.mirror=true", "push", "origin"],
    ] {
        let (code, _, err) = in_dir(&env, &work, "git", args, "3");
        assert_eq!(code, 77, "{args:?}: {err}");
        assert_eq!(git(&remote, &["rev-parse", "main"]), before, "{args:?} moved main");
    }
}

#[test]
fn real_git_refuses_a_repository_fsmonitor_the_agent_could_have_written_naming_file_and_key() {
    let env = real_env("git");
    let (work, _, _daemon) = repo(&env);
    let marker = env.path("pwned");
    let hook = env.path("hook.sh");
    crate::harness::write_exec(&hook, &format!("#!/bin/sh\ntouch {}\n", marker.display()));
    git(&work, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
    let (code, _, err) = in_dir(&env, &work, "git", &["status"], "1");
    assert_eq!(code, 77, "{err}");
    assert!(
        err.contains("rule git.agent-config")
            && err.contains("core.fsmonitor")
            && err.contains(&work.join(".git/config").display().to_string()),
        "{err}"
    );
    assert!(!marker.exists(), "the repository's core.fsmonitor ran through the gate");
}
