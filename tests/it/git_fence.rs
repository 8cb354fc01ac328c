//! The git parts of the fence (issue 16), with the real git: configuration the agent could
//! have written that runs a program is refused before git starts (naming file and key),
//! judged for the agent's real uid; a directory laid out as a bare repository is never
//! discovered; the scope check sees what git will commit or send, whatever replace refs and
//! pathspec switches say; commit-making verbs are scope-checked; `git am` commits exactly the
//! mailbox the gate read.

use crate::harness::{Run, TestEnv, write_exec};
use crate::real_tools::{git, pr_config, pr_repository};
use std::path::{Path, PathBuf};

const SHIPPED_GIT_PR: &str = include_str!("../../skills/git-pr.md");

struct Fx {
    env: TestEnv,
    work: PathBuf,
}

/// An install at ceiling 3 with the real git, the shipped git-pr skill as the baseline (it
/// denies `*.yaml` and allows `checks/*.md`), and a repository `infra` under `repos` with
/// `origin/main` and `origin/HEAD` set and a branch `feat` checked out.
fn fixture() -> Fx {
    let env = TestEnv::new(3, "");
    let skills = env.path("skills");
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::write(skills.join("git-pr.md"), SHIPPED_GIT_PR).unwrap();
    let work = env.path("repos/infra");
    std::fs::create_dir_all(work.join("checks")).unwrap();
    pr_repository(
        &work,
        &[("README.md", "infra\n"), ("ie.yaml", "hosts: []\n")],
        "https://example.com/ops/infra.git",
    );
    pr_config(&env, 3, &skills, &env.path("repos"));
    Fx { env, work }
}

impl Fx {
    fn commit(&self, files: &[(&str, &str)], msg: &str) -> String {
        for (f, text) in files {
            std::fs::write(self.work.join(f), text).unwrap();
        }
        git(&self.work, &["add", "-A"]);
        git(&self.work, &["commit", "-q", "-m", msg]);
        git(&self.work, &["rev-parse", "HEAD"])
    }

    fn run(&self, args: &[&str], tier: &str, extra: &[(&str, &str)]) -> Run {
        run_in(&self.env, &self.work, args, tier, extra)
    }
}

fn run_in(env: &TestEnv, dir: &Path, args: &[&str], tier: &str, extra: &[(&str, &str)]) -> Run {
    let mut c = env.cmd("git", args);
    c.current_dir(dir)
        .env("CLAUDEOPS_TIER", tier)
        .env("GIT_AUTHOR_NAME", "agent")
        .env("GIT_AUTHOR_EMAIL", "agent@example.com")
        .env("GIT_COMMITTER_NAME", "agent")
        .env("GIT_COMMITTER_EMAIL", "agent@example.com");
    c.envs(extra.iter().copied());
    Run { out: c.output().unwrap() }
}

fn refused_by(env: &TestEnv, r: &Run, rule: &str) {
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(env.last_audit()["rule"], rule, "{}", r.stderr());
}

/// A program that leaves a marker when it runs.
fn planted(env: &TestEnv) -> (PathBuf, PathBuf) {
    let marker = env.path("pwned");
    let prog = env.path("prog.sh");
    write_exec(&prog, &format!("#!/bin/sh\ntouch {}\n", marker.display()));
    (prog, marker)
}

#[test]
fn configuration_in_files_the_agent_could_write_that_runs_a_program_refuses_the_call_naming_file_and_key() {
    let fx = fixture();
    let (prog, marker) = planted(&fx.env);
    // ~/.gitconfig of the HOME the real git runs with (the install's tool home; the test runs
    // as root, who can write it, as an agent could write a tool home it owned): `git help
    // push` runs man.<viewer>.cmd. The caller's own HOME is never the real git's.
    let home = fx.env.tool_home();
    std::fs::write(
        home.join(".gitconfig"),
        format!(
            "[help]\n\tformat = man\n[man]\n\tviewer = x\n[man \"x\"]\n\tcmd = {}\n",
            prog.display()
        ),
    )
    .unwrap();
    let r = fx.run(&["help", "push"], "1", &[]);
    refused_by(&fx.env, &r, "git.agent-config");
    assert!(
        r.stderr().contains("man.x.cmd in") && r.stderr().contains(&home.join(".gitconfig").display().to_string()),
        "{}",
        r.stderr()
    );
    std::fs::remove_file(home.join(".gitconfig")).unwrap();
    std::fs::write(
        fx.env.tmp.path().join(".gitconfig"),
        format!("[core]\n\tpager = {}\n", prog.display()),
    )
    .unwrap();
    let r = fx.run(&["help", "push"], "1", &[]);
    assert_ne!(
        fx.env.last_audit()["rule"],
        "git.agent-config",
        "the caller's HOME was read: {}",
        r.stderr()
    );
    std::fs::remove_file(fx.env.tmp.path().join(".gitconfig")).unwrap();
    // An include in .git/config: the included file is named, and the include itself.
    std::fs::write(fx.env.path("inc"), format!("[diff]\n\texternal = {}\n", prog.display())).unwrap();
    git(&fx.work, &["config", "include.path", fx.env.path("inc").to_str().unwrap()]);
    let r = fx.run(&["diff"], "1", &[]);
    refused_by(&fx.env, &r, "git.agent-config");
    assert!(
        r.stderr().contains("diff.external") && r.stderr().contains("include.path"),
        "{}",
        r.stderr()
    );
    git(&fx.work, &["config", "--unset", "include.path"]);
    // The chains of issue 16: a value planted through `git config <name> <value> --get` never
    // lands (the write is refused), and one planted otherwise is refused before it runs.
    for (key, value) in [
        ("diff.external", prog.to_str().unwrap()),
        ("core.worktree", "/"),
        ("remote.origin.pushurl", "https://evil.example/x"),
        ("url.https://evil.example/.insteadOf", "https://example.com/"),
        ("alias.st", "!sh -c id"),
        ("filter.x.smudge", prog.to_str().unwrap()),
        ("core.pager", prog.to_str().unwrap()),
    ] {
        let r = fx.run(&["config", key, value, "--get"], "3", &[]);
        refused_by(&fx.env, &r, "git.config.write");
        git(&fx.work, &["config", key, value]);
        let r = fx.run(&["status"], "1", &[]);
        refused_by(&fx.env, &r, "git.agent-config");
        assert!(
            r.stderr().contains(&key.to_ascii_lowercase()) || r.stderr().contains(key),
            "{key}: {}",
            r.stderr()
        );
        git(&fx.work, &["config", "--unset", key]);
    }
    let r = fx.run(&["status"], "1", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!marker.exists(), "a planted program ran");
}

#[test]
fn a_directory_laid_out_as_a_bare_repository_is_never_discovered() {
    let fx = fixture();
    let (prog, marker) = planted(&fx.env);
    // What `curl --create-dirs -o bare/HEAD -o bare/config …` can build at tier 2 (outside any
    // work tree: inside one, discovery goes on up to that repository).
    let bare = fx.env.path("bare");
    for d in ["objects", "refs/heads"] {
        std::fs::create_dir_all(bare.join(d)).unwrap();
    }
    std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        bare.join("config"),
        format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tpager = {}\n[alias]\n\tl = !{}\n",
            prog.display(),
            prog.display()
        ),
    )
    .unwrap();
    let r = run_in(&fx.env, &bare, &["log"], "1", &[]);
    assert_ne!(r.code(), 0, "git used the bare repository: {}", r.stderr());
    let r = run_in(&fx.env, fx.env.tmp.path(), &["-C", "bare", "-p", "log"], "1", &[]);
    assert_ne!(r.code(), 0, "git used the bare repository: {}", r.stderr());
    let r = run_in(&fx.env, fx.env.tmp.path(), &["--bare", "-C", "bare", "log"], "3", &[]);
    refused_by(&fx.env, &r, "git.retarget");
    assert!(!marker.exists(), "the bare repository's configuration ran a program");
}

#[test]
fn the_configuration_check_judges_files_for_the_agents_real_uid() {
    if !nix::unistd::getuid().is_root() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("this test must run as root under CI (it creates a user)");
        }
        eprintln!("SKIPPED the_configuration_check_judges_files_for_the_agents_real_uid: not root");
        return;
    }
    let fx = fixture();
    let agent = crate::harden::Account::create();
    // The operator's global config (root-owned) trusts the repositories: git itself refuses a
    // repository another user owns otherwise.
    let global = fx.env.path("operator.gitconfig");
    std::fs::write(&global, "[safe]\n\tdirectory = *\n").unwrap();
    let cfg = std::fs::read_to_string(fx.env.config_path()).unwrap();
    fx.env
        .write_config(&format!("{cfg}env:\n  GIT_CONFIG_GLOBAL: {}\n", global.display()));
    // The agent appends to the audit log (an unhardened install).
    std::fs::write(&fx.env.audit, "").unwrap();
    std::fs::set_permissions(&fx.env.audit, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    // An operator-owned repository (root, not writable by the agent) with a credential helper.
    git(&fx.work, &["config", "credential.helper", "store"]);
    let link = fx.env.dir.join("git");
    let status = |tier: &str| {
        agent.run_in(
            &fx.work,
            &[link.to_str().unwrap(), "status", "--short"],
            &[("CLAUDEOPS_TIER", tier), ("HOME", "/nonexistent")],
        )
    };
    let out = status("1");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // The same key in a file the agent owns refuses the call.
    let cfg_file = fx.work.join(".git/config");
    nix::unistd::chown(&cfg_file, Some(nix::unistd::Uid::from_raw(agent_uid(&agent))), None).unwrap();
    let out = status("1");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(77), "{err}");
    assert!(err.contains("credential.helper") && err.contains("rule git.agent-config"), "{err}");
    let reasons = fx.env.last_audit()["reasons"].to_string();
    assert!(reasons.contains(&format!("uid {} can write", agent_uid(&agent))), "{reasons}");
}

fn agent_uid(a: &crate::harden::Account) -> u32 {
    let out = a.run_in(Path::new("/"), &["/usr/bin/id", "-u"], &[]);
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn the_scope_check_sees_what_git_commits_whatever_pathspec_switches_say() {
    let fx = fixture();
    std::fs::write(fx.work.join("ie.yaml"), "hosts: [evil]\n").unwrap();
    // `IE.YAML` names nothing for a case-sensitive check; with --icase-pathspecs git commits
    // ie.yaml, and so does the gate's git.
    let r = fx.run(&["--icase-pathspecs", "commit", "-m", "x", "IE.YAML"], "2", &[]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr().contains("SCOPE VIOLATION: Refusing to commit modifying ie.yaml"),
        "{}",
        r.stderr()
    );
    let r = fx.run(&["commit", "-m", "x", ":(icase)IE.YAML"], "2", &[]);
    assert!(
        r.stderr().contains("SCOPE VIOLATION: Refusing to commit modifying ie.yaml"),
        "{}",
        r.stderr()
    );
    assert_eq!(git(&fx.work, &["rev-parse", "HEAD"]), git(&fx.work, &["rev-parse", "main"]));
}

#[test]
fn replace_refs_do_not_hide_from_the_scope_check_what_a_push_sends() {
    let fx = fixture();
    // The real commit changes ie.yaml; a replace ref shows a harmless one in its place.
    let evil = fx.commit(&[("ie.yaml", "hosts: [evil]\n")], "evil");
    git(&fx.work, &["switch", "-q", "-c", "decoy", "main"]);
    std::fs::write(fx.work.join("checks/x.md"), "x\n").unwrap();
    let decoy = fx.commit(&[], "decoy");
    git(&fx.work, &["switch", "-q", "feat"]);
    git(&fx.work, &["replace", &evil, &decoy]);
    assert_eq!(
        git(&fx.work, &["log", "--format=", "--name-only", "-1", "feat"]),
        "checks/x.md",
        "the replace ref does not fool a plain git log"
    );
    let r = fx.run(&["push", "origin", "feat"], "2", &[]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr().contains("SCOPE VIOLATION: Refusing to push modifying ie.yaml"),
        "{}",
        r.stderr()
    );
    // And the fetch that would plant such a ref is tier 3.
    let r = fx.run(&["fetch", "origin", &format!("+feat:refs/replace/{evil}")], "2", &[]);
    refused_by(&fx.env, &r, "git.fetch.special-refs");
}

#[test]
fn commit_making_verbs_are_scope_checked() {
    let fx = fixture();
    let evil = fx.commit(&[("ie.yaml", "hosts: [evil]\n")], "evil");
    git(&fx.work, &["switch", "-q", "-c", "work", "main"]);
    for args in [
        vec!["cherry-pick", evil.as_str()],
        vec!["cherry-pick", "-n", "main..feat"],
        vec!["merge", "--no-edit", "feat"],
    ] {
        let r = fx.run(&args, "2", &[]);
        assert_eq!(r.code(), 77, "{args:?}: {}", r.stderr());
        assert!(r.stderr().contains("modifying ie.yaml"), "{args:?}: {}", r.stderr());
    }
    // Reverting the commit changes ie.yaml again.
    git(&fx.work, &["switch", "-q", "feat"]);
    let r = fx.run(&["revert", "--no-edit", "HEAD"], "2", &[]);
    assert!(
        r.stderr().contains("SCOPE VIOLATION: Refusing to commit modifying ie.yaml"),
        "{}",
        r.stderr()
    );
    // A rebase replays it (and the base commit, with README.md, which git-pr does not allow).
    let r = fx.run(&["rebase", "--root"], "2", &[]);
    assert!(
        r.stderr().contains("SCOPE VIOLATION: Refusing to commit modifying"),
        "{}",
        r.stderr()
    );
    assert!(fx.env.last_audit()["scope"]["files"].to_string().contains("ie.yaml"));
    assert_eq!(git(&fx.work, &["rev-parse", "HEAD"]), evil, "a refused verb moved the branch");
    // A commit whose files the skill allows is picked.
    git(&fx.work, &["switch", "-q", "-c", "ok", "main"]);
    let good = fx.commit(&[("checks/ok.md", "ok\n")], "ok");
    git(&fx.work, &["switch", "-q", "work"]);
    let r = fx.run(&["cherry-pick", &good], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(fx.work.join("checks/ok.md").exists());
}

#[test]
fn am_commits_exactly_the_mailbox_the_gate_read() {
    let fx = fixture();
    // Two mailboxes made by the real git: one touching a runbook check, one touching ie.yaml.
    git(&fx.work, &["switch", "-q", "-c", "src", "main"]);
    fx.commit(&[("checks/ok.md", "ok\n")], "ok");
    let ok = git(&fx.work, &["format-patch", "-1", "--stdout"]);
    fx.commit(&[("ie.yaml", "hosts: [evil]\n")], "evil");
    let evil = git(&fx.work, &["format-patch", "-1", "--stdout"]);
    git(&fx.work, &["switch", "-q", "feat"]);
    std::fs::write(fx.work.join("evil.mbox"), format!("{evil}\n")).unwrap();
    std::fs::write(fx.work.join("ok.mbox"), format!("{ok}\n")).unwrap();
    let r = fx.run(&["am", "evil.mbox"], "2", &[]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr().contains("SCOPE VIOLATION: Refusing to commit modifying ie.yaml"),
        "{}",
        r.stderr()
    );
    // From stdin too.
    let mut c = fx.env.cmd("git", &["am"]);
    c.current_dir(&fx.work).env("CLAUDEOPS_TIER", "2");
    let r = crate::harness::run_with_stdin(&mut c, Some(&evil));
    assert_eq!(r.code(), 77, "{}", r.stderr());
    // The allowed mailbox is applied from the sealed copy the gate judged.
    let r = fx.run(&["am", "ok.mbox"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(git(&fx.work, &["log", "--format=", "--name-only", "-1"]), "checks/ok.md");
}

#[test]
fn a_push_lands_where_the_remote_says_through_a_url_or_a_remote_name_with_a_slash() {
    let fx = fixture();
    let remote = fx.env.path("up.git");
    git(
        fx.env.tmp.path(),
        &["init", "-q", "--bare", "-b", "stable", remote.to_str().unwrap()],
    );
    let daemon = crate::real_tools::GitDaemon::start(fx.env.tmp.path());
    let url = format!("{}/up.git", daemon.url);
    git(&fx.work, &["remote", "add", "gh/up", &url]);
    git(&fx.work, &["push", "-q", "gh/up", "main:stable"]);
    git(&fx.work, &["fetch", "-q", "gh/up"]);
    git(&fx.work, &["remote", "set-head", "gh/up", "stable"]);
    fx.commit(&[("checks/x.md", "x\n")], "x");
    let before = git(&remote, &["rev-parse", "stable"]);
    for target in ["gh/up", url.as_str()] {
        let r = fx.run(&["push", target, "feat:stable"], "2", &[]);
        refused_by(&fx.env, &r, "git.push.default-branch");
    }
    let r = fx.run(&["push", "git://127.0.0.1:1/nowhere.git", "feat:stable"], "2", &[]);
    refused_by(&fx.env, &r, "git.target");
    assert_eq!(git(&remote, &["rev-parse", "stable"]), before, "a refused push reached the remote");
    let r = fx.run(&["push", &url, "feat"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(git(&remote, &["rev-parse", "feat"]), git(&fx.work, &["rev-parse", "feat"]));
}

#[test]
fn the_operators_rebase_update_refs_makes_a_rebase_rewrite_other_branches_so_it_is_tier_3() {
    if !nix::unistd::getuid().is_root() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("this test must run as root under CI (it creates a user)");
        }
        eprintln!("SKIPPED the_operators_rebase_update_refs_…: not root");
        return;
    }
    let fx = fixture();
    let agent = crate::harden::Account::create();
    let global = fx.env.path("operator.gitconfig");
    std::fs::write(&global, "[safe]\n\tdirectory = *\n").unwrap();
    let cfg = std::fs::read_to_string(fx.env.config_path()).unwrap();
    fx.env
        .write_config(&format!("{cfg}env:\n  GIT_CONFIG_GLOBAL: {}\n", global.display()));
    // feat is one commit ahead of main, and `other` points at that commit; main moves on.
    fx.commit(&[("checks/a.md", "a\n")], "feat");
    git(&fx.work, &["branch", "other"]);
    git(&fx.work, &["switch", "-q", "main"]);
    fx.commit(&[("b.txt", "b\n")], "main moves");
    git(&fx.work, &["switch", "-q", "feat"]);
    let explain = |tier: &str| {
        let out = agent.run_in(
            &fx.work,
            &[
                crate::harness::bin().to_str().unwrap(),
                "explain",
                "--json",
                "--config",
                fx.env.config_path().to_str().unwrap(),
                "--tier",
                tier,
                "--",
                "git",
                "rebase",
                "main",
            ],
            &[("HOME", "/nonexistent")],
        );
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
        (
            v["verdict"].as_str().unwrap_or("").to_string(),
            v["rule"].as_str().unwrap_or("").to_string(),
        )
    };
    assert_eq!(explain("2").0, "allow");
    // The operator's repository configuration (root's, the agent cannot write it).
    git(&fx.work, &["config", "rebase.updateRefs", "true"]);
    assert_eq!(explain("2"), ("refuse".to_string(), "git.rebase.update-refs".to_string()));
    assert_eq!(explain("3").0, "allow");
    // And that is what the real git does: `other` is rewritten along with feat.
    let before = git(&fx.work, &["rev-parse", "other"]);
    git(&fx.work, &["rebase", "-q", "main"]);
    let after = git(&fx.work, &["rev-parse", "other"]);
    assert_ne!(before, after, "rebase.updateRefs moved no other branch");
}

#[test]
fn archive_format_patch_and_bundle_create_write_their_files_only_where_the_local_write_model_allows() {
    let fx = fixture();
    let w = |f: &str| fx.work.join(f);
    let writes: &[(&[&str], &str)] = &[
        (&["archive", "-o", "a.tar", "HEAD"], "a.tar"),
        (&["format-patch", "-o", "patches", "-1"], "patches"),
        (&["format-patch", "--output=all.patch", "-1"], "all.patch"),
        (&["bundle", "create", "-q", "x.bundle", "HEAD"], "x.bundle"),
    ];
    // Tier 1 writes no file: refused before git runs.
    for (args, file) in writes {
        let r = fx.run(args, "1", &[]);
        refused_by(&fx.env, &r, "git.local-write");
        assert!(!w(file).exists(), "{args:?} wrote {file} at tier 1");
    }
    // Tier 2, below the workspace: git runs and writes.
    for (args, file) in writes {
        let r = fx.run(args, "2", &[]);
        assert_eq!(r.code(), 0, "{args:?}: {}", r.stderr());
        assert!(w(file).exists(), "{args:?} did not write {file}");
    }
    let listed = std::process::Command::new("tar").arg("tf").arg(w("a.tar")).output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("README.md"));
    let patches: Vec<_> = std::fs::read_dir(w("patches")).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(patches.len(), 1, "{patches:?}");
    assert!(std::fs::read_to_string(w("all.patch")).unwrap().starts_with("From "));
    git(&fx.work, &["bundle", "verify", "-q", "x.bundle"]);
    // format-patch without -o writes into the working directory: judged as a write there.
    let r = fx.run(&["format-patch", "-1"], "1", &[]);
    refused_by(&fx.env, &r, "git.local-write");

    // A repository outside the workspaces: tier 2 may not write there, tier 3 may.
    let elsewhere = fx.env.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    git(&elsewhere, &["init", "-q", "-b", "main"]);
    std::fs::write(elsewhere.join("f"), "f\n").unwrap();
    git(&elsewhere, &["add", "-A"]);
    git(&elsewhere, &["commit", "-q", "-m", "base"]);
    for (args, file) in writes {
        let r = run_in(&fx.env, &elsewhere, args, "2", &[]);
        refused_by(&fx.env, &r, "git.local-write");
        assert!(r.stderr().contains("outside the workspaces"), "{}", r.stderr());
        assert!(
            !elsewhere.join(file).exists(),
            "{args:?} wrote {file} outside the workspaces at tier 2"
        );
    }
    let r = run_in(&fx.env, &elsewhere, &["bundle", "create", "-q", "x.bundle", "HEAD"], "3", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(elsewhere.join("x.bundle").exists());

    // Never, at any tier: out of the working directory, into a git directory, a suffix that
    // reaches into another directory.
    let never: &[(&[&str], &str)] = &[
        (&["archive", "-o", "../escape.tar", "HEAD"], "git.local-file"),
        (&["archive", "--output=.git/hooks/pre-commit", "HEAD"], "git.local-file"),
        (&["-C", ".git", "bundle", "create", "x.bundle", "HEAD"], "git.local-file"),
        (&["format-patch", "-ko", ".git", "-1"], "git.local-file"),
        (&["format-patch", "--suffix=/../../escape", "-1"], "git.writes-file"),
    ];
    for (args, rule) in never {
        let r = fx.run(args, "3", &[]);
        refused_by(&fx.env, &r, rule);
    }
    assert!(!fx.env.path("repos/escape.tar").exists());
    assert!(!w(".git/hooks/pre-commit").exists());
    assert!(!w(".git/x.bundle").exists());
}
