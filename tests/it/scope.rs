//! Skills and path scope through the real binary: real git repositories in a temp directory
//! (the gate works out changed files with the real git), stub gh and tea that record what they
//! received, and skills in a baseline directory and a repository's `.claude-ops/skills/`.

use std::path::{Path, PathBuf};

use crate::harness::{Run, TestEnv};
use crate::real_tools::{GitDaemon, git, pr_config, pr_repository, which};

const SHIPPED_GIT_PR: &str = include_str!("../../skills/git-pr.md");

/// A baseline skill that denies by prose, the way upstream Claude Ops skills are written.
const PROSE_SKILL: &str = "# Skill: Infra Changes

## Purpose

Change infrastructure files.

## Tool Discovery

1. `gh`

## Execution

Run gh.

## Validation

Look.

## Scope Rules

- **Inventory files**: `ie.yaml`, `vms-*.yaml`, or any file matching `**/inventory/*.yaml`
- **Network**: WireGuard configs (`wireguard/`), DNS records
- **Data**: anything under `/volumes/`
- **Secrets**: `.env` files, `*.pem`
- **Prompts**: `prompts/*.md`, `Dockerfile.*`
";

struct Fx {
    env: TestEnv,
    baseline: PathBuf,
    work: PathBuf,
}

/// An install at `ceiling` whose baseline holds `baseline` skills, a repository `infra` under
/// `repos` with `repo_skills` committed on main, `origin/main` and `origin/HEAD` set, and a
/// feature branch `feat` checked out.
fn fixture(ceiling: u8, baseline: &[(&str, &str)], repo_skills: &[(&str, &str)]) -> Fx {
    let env = TestEnv::new(1, "");
    let base_dir = env.path("skills");
    std::fs::create_dir_all(&base_dir).unwrap();
    for (name, text) in baseline {
        write(&base_dir.join(name), text);
    }
    let repos = env.path("repos");
    let work = repos.join("infra");
    let skill_paths: Vec<String> = repo_skills.iter().map(|(n, _)| format!(".claude-ops/skills/{n}")).collect();
    let mut files = vec![("README.md", "infra\n"), ("ie.yaml", "hosts: []\n"), ("CLAUDE.md", "runbook\n")];
    files.extend(skill_paths.iter().map(String::as_str).zip(repo_skills.iter().map(|(_, t)| *t)));
    pr_repository(&work, &files, "https://github.com/ops/infra.git");
    pr_config(&env, ceiling, &base_dir, &repos);
    Fx {
        env,
        baseline: base_dir,
        work,
    }
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

impl Fx {
    /// Commit `files` on the current branch with the real git, not through the gate.
    fn change(&self, files: &[(&str, &str)]) {
        for (f, text) in files {
            write(&self.work.join(f), text);
        }
        git(&self.work, &["add", "-A"]);
        git(&self.work, &["commit", "-q", "-m", "change"]);
    }

    fn run(&self, tool: &str, args: &[&str], tier: &str, extra: &[(&str, &str)]) -> Run {
        self.run_in(&self.work, tool, args, tier, extra)
    }

    fn run_in(&self, dir: &Path, tool: &str, args: &[&str], tier: &str, extra: &[(&str, &str)]) -> Run {
        let mut c = self.env.cmd(tool, args);
        c.current_dir(dir)
            .env("CLAUDEOPS_TIER", tier)
            .env("GIT_AUTHOR_NAME", "agent")
            .env("GIT_AUTHOR_EMAIL", "agent@example.com")
            .env("GIT_COMMITTER_NAME", "agent")
            .env("GIT_COMMITTER_EMAIL", "agent@example.com");
        c.envs(extra.iter().copied());
        Run { out: c.output().unwrap() }
    }
}

fn refused_by_scope(r: &Run, env: &TestEnv, tool: &str) -> String {
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(env.received(tool), None, "the real {tool} ran");
    let line = r.stderr();
    assert!(line.contains("] SCOPE VIOLATION: Refusing to "), "{line}");
    line
}

#[test]
fn a_pull_request_inside_the_allow_list_reaches_gh() {
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    fx.change(&[("checks/http.md", "check\n"), ("playbooks/restart.md", "steps\n")]);
    let r = fx.run("gh", &["pr", "create", "--title", "t", "--body", "b"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.stderr(), "");
    assert_eq!(
        fx.env.received("gh"),
        Some(vec![
            "pr".into(),
            "create".into(),
            "--title".into(),
            "t".into(),
            "--body".into(),
            "b".into()
        ])
    );
    let rec = fx.env.last_audit();
    assert_eq!(rec["scope"]["files"], serde_json::json!(["checks/http.md", "playbooks/restart.md"]));
    assert_eq!(rec["scope"]["check"], "pr");
    assert_eq!(rec["scope"]["violations"], serde_json::json!([]));
}

#[test]
fn a_pull_request_touching_a_denied_file_is_a_scope_violation_naming_pattern_and_file() {
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    fx.change(&[("checks/http.md", "check\n"), ("deploy/app.yaml", "x: 1\n")]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "2", &[]);
    let line = refused_by_scope(&r, &fx.env, "gh");
    let source = fx.baseline.join("git-pr.md");
    assert_eq!(
        line,
        format!(
            "[skill:git-pr] SCOPE VIOLATION: Refusing to create PR modifying deploy/app.yaml — matches denied pattern *.yaml ({})\n",
            source.display()
        )
    );
    let rec = fx.env.last_audit();
    assert_eq!(rec["verdict"], "refuse");
    assert_eq!(rec["rule"], "gh.scope");
    assert_eq!(rec["scope"]["violations"][0]["path"], "deploy/app.yaml");
}

#[test]
fn a_file_outside_the_allow_list_is_refused_even_when_no_pattern_denies_it() {
    let fx = fixture(3, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    fx.change(&[("src/main.rs", "fn main() {}\n")]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "3", &[]);
    let line = refused_by_scope(&r, &fx.env, "gh");
    assert!(line.contains("modifying src/main.rs — matches no allowed pattern ("), "{line}");
    assert!(line.contains("allows only checks/*.md, playbooks/*.md"), "{line}");
}

#[test]
fn prose_scope_rules_of_every_pattern_form_are_enforced_on_nested_paths() {
    let fx = fixture(3, &[("infra.md", PROSE_SKILL)], &[]);
    for (file, pattern) in [
        ("hosts/eu/ie.yaml", "ie.yaml"),
        ("vms-prod.yaml", "vms-*.yaml"),
        ("sites/a/inventory/hosts.yaml", "**/inventory/*.yaml"),
        ("net/wireguard/wg0.conf", "wireguard/"),
        ("volumes/db/PG_VERSION", "/volumes/"),
        ("svc/.env", ".env"),
        ("tls/site.pem", "*.pem"),
        ("prompts/tier1.md", "prompts/*.md"),
        ("Dockerfile.prod", "Dockerfile.*"),
    ] {
        git(&fx.work, &["switch", "-q", "-C", "feat", "main"]);
        fx.change(&[(file, "x\n")]);
        let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "3", &[]);
        let line = refused_by_scope(&r, &fx.env, "gh");
        assert!(
            line.contains(&format!("modifying {file} — matches denied pattern {pattern} (")),
            "{file}: {line}"
        );
    }
    // Not denied: an anchored pattern elsewhere, a similar name.
    git(&fx.work, &["switch", "-q", "-C", "feat", "main"]);
    fx.change(&[("app/volumes/readme.md", "x\n"), ("ie.yaml.md", "x\n")]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "3", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
}

#[test]
fn renamed_and_deleted_denied_files_are_violations() {
    let fx = fixture(3, &[("infra.md", PROSE_SKILL)], &[]);
    git(&fx.work, &["mv", "ie.yaml", "hosts.txt"]);
    git(&fx.work, &["commit", "-q", "-m", "rename"]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "3", &[]);
    let line = refused_by_scope(&r, &fx.env, "gh");
    assert!(line.contains("modifying ie.yaml — matches denied pattern ie.yaml"), "{line}");

    git(&fx.work, &["switch", "-q", "-C", "feat", "main"]);
    git(&fx.work, &["rm", "-q", "ie.yaml"]);
    git(&fx.work, &["commit", "-q", "-m", "delete"]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "3", &[]);
    refused_by_scope(&r, &fx.env, "gh");
}

#[test]
fn a_repository_skill_adds_denies_and_cannot_drop_a_baseline_deny() {
    let repo_skill = "# Skill: Infra Changes\n\n## Scope Rules\n\n```deny\n!*.pem\n!ie.yaml\nREADME.md\n```\n";
    let fx = fixture(3, &[("infra.md", PROSE_SKILL)], &[("infra.md", repo_skill)]);
    fx.change(&[("tls/site.pem", "x\n")]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "3", &[]);
    let line = refused_by_scope(&r, &fx.env, "gh");
    assert!(
        line.contains(&format!("*.pem ({})", fx.baseline.join("infra.md").display())),
        "{line}"
    );

    git(&fx.work, &["switch", "-q", "-C", "feat", "main"]);
    fx.change(&[("README.md", "changed\n")]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "3", &[]);
    let line = refused_by_scope(&r, &fx.env, "gh");
    assert!(
        line.contains(&format!(
            "README.md — matches denied pattern README.md ({}@origin/main)",
            fx.work.join(".claude-ops/skills/infra.md").display()
        )),
        "{line}"
    );
}

#[test]
fn four_files_at_tier_2_are_refused_and_tier_3_may_open_the_pull_request() {
    let fx = fixture(3, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    fx.change(&[
        ("checks/a.md", "a\n"),
        ("checks/b.md", "b\n"),
        ("checks/c.md", "c\n"),
        ("checks/d.md", "d\n"),
    ]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "2", &[]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        "[skill:git-pr] REFUSED: a pull request changing 4 files requires tier 3 (this agent is tier 2) — split it into changes of at most 3 files, or escalate\n"
    );
    assert_eq!(fx.env.received("gh"), None);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "3", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    // Three files at tier 2 are fine.
    git(&fx.work, &["rm", "-q", "checks/d.md"]);
    git(&fx.work, &["commit", "-q", "--amend", "-m", "three"]);
    fx.env.forget("gh");
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
}

#[test]
fn a_pull_request_below_tier_2_is_refused_without_reading_skills_or_git() {
    let fx = fixture(3, &[("git-pr.md", "\u{0}not valid\u{ff}")], &[]);
    std::fs::write(fx.baseline.join("git-pr.md"), b"\xff\xfe broken").unwrap();
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "1", &[]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("requires tier 2 (this agent is tier 1)"), "{}", r.stderr());
}

#[test]
fn dry_run_still_checks_scope_and_reports_the_violation() {
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    fx.change(&[("CLAUDE.md", "edited\n")]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "2", &[("CLAUDEOPS_DRY_RUN", "true")]);
    let line = refused_by_scope(&r, &fx.env, "gh");
    assert!(line.contains("modifying CLAUDE.md — matches denied pattern CLAUDE.md"), "{line}");

    git(&fx.work, &["switch", "-q", "-C", "feat", "main"]);
    fx.change(&[("checks/x.md", "x\n")]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "2", &[("CLAUDEOPS_DRY_RUN", "true")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.stderr(), "[skill:git-pr] DRY RUN: would run: gh pr create -t t -b b\n");
    assert_eq!(fx.env.received("gh"), None);
    assert_eq!(fx.env.last_audit()["scope"]["files"], serde_json::json!(["checks/x.md"]));
}

#[test]
fn tea_pull_requests_are_checked_the_same_way() {
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    fx.change(&[("prompts/tier2.md", "x\n")]);
    let r = fx.run(
        "tea",
        &["pulls", "create", "--title", "t", "--base", "main", "--head", "feat"],
        "2",
        &[],
    );
    let line = refused_by_scope(&r, &fx.env, "tea");
    assert!(
        line.starts_with("[skill:git-pr] SCOPE VIOLATION: Refusing to create PR modifying prompts/tier2.md"),
        "{line}"
    );
    git(&fx.work, &["switch", "-q", "-C", "feat", "main"]);
    fx.change(&[("checks/x.md", "x\n")]);
    let r = fx.run("tea", &["pr", "c", "--title", "t", "--head", "feat"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(
        fx.env.received("tea"),
        Some(vec![
            "pr".into(),
            "c".into(),
            "--title".into(),
            "t".into(),
            "--head".into(),
            "feat".into()
        ])
    );
}

#[test]
fn the_remote_head_branch_is_checked_as_well_as_the_local_one() {
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    // On the remote, `evil` changes a denied file; the local `evil` is a harmless copy of main.
    git(&fx.work, &["switch", "-q", "-c", "remote-evil", "main"]);
    fx.change(&[("ie.yaml", "changed\n")]);
    git(&fx.work, &["update-ref", "refs/remotes/origin/evil", "remote-evil"]);
    git(&fx.work, &["branch", "evil", "main"]);
    git(&fx.work, &["switch", "-q", "feat"]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b", "--head", "evil"], "2", &[]);
    let line = refused_by_scope(&r, &fx.env, "gh");
    assert!(line.contains("ie.yaml"), "{line}");
    // The current branch, pushed with a different commit than the local one: the same.
    fx.change(&[("checks/ok.md", "x\n")]);
    git(&fx.work, &["update-ref", "refs/remotes/origin/feat", "remote-evil"]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "2", &[]);
    refused_by_scope(&r, &fx.env, "gh");
}

#[test]
fn an_explicit_base_and_head_are_diffed_as_the_pull_request_would_be() {
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    fx.change(&[("checks/x.md", "x\n")]);
    git(&fx.work, &["switch", "-q", "-c", "other", "main"]);
    fx.change(&[("ie.yaml", "changed\n")]);
    // The checked-out branch changes a denied file; the named head does not.
    let r = fx.run(
        "gh",
        &["pr", "create", "-t", "t", "-b", "b", "--head", "feat", "--base", "main"],
        "2",
        &[],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    fx.env.forget("gh");
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b", "-H", "ops:other"], "2", &[]);
    refused_by_scope(&r, &fx.env, "gh");
}

#[test]
fn when_the_changed_files_cannot_be_worked_out_the_pull_request_is_refused_saying_why() {
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    fx.change(&[("checks/x.md", "x\n")]);
    for (args, why) in [
        (
            vec!["pr", "create", "-t", "t", "-b", "b", "--base", "release"],
            "the base branch release has no remote-tracking ref origin/release",
        ),
        (
            vec!["pr", "create", "-t", "t", "-b", "b", "--head", "nope"],
            "the head branch nope is neither a local branch nor origin/nope",
        ),
        (
            vec!["pr", "create", "-t", "t", "-b", "b", "-R", "someone/else"],
            "is not a clone of someone/else",
        ),
    ] {
        let r = fx.run("gh", &args, "2", &[]);
        assert_eq!(r.code(), 77, "{args:?}: {}", r.stderr());
        assert!(
            r.stderr().contains("a pull request whose changed files cannot be worked out"),
            "{}",
            r.stderr()
        );
        assert!(r.stderr().contains(why), "{args:?}: {}", r.stderr());
        assert_eq!(fx.env.received("gh"), None);
    }
    // No origin/HEAD and neither main nor master: the default branch is unknown. Outside the
    // repositories directory (whose skills are read from origin/HEAD) that is what refuses.
    let clone = fx.env.path("elsewhere");
    git(
        fx.env.tmp.path(),
        &["clone", "-q", fx.work.to_str().unwrap(), clone.to_str().unwrap()],
    );
    git(&clone, &["update-ref", "refs/remotes/origin/release", "HEAD"]);
    git(&clone, &["update-ref", "-d", "refs/remotes/origin/feat"]);
    git(&clone, &["symbolic-ref", "--delete", "refs/remotes/origin/HEAD"]);
    git(&clone, &["update-ref", "-d", "refs/remotes/origin/main"]);
    git(&clone, &["switch", "-q", "-c", "fix"]);
    let r = fx.run_in(&clone, "gh", &["pr", "create", "-t", "t", "-b", "b"], "2", &[]);
    assert!(r.stderr().contains("the default branch of origin is unknown"), "{}", r.stderr());
    // In a repository under `repos`, the repository's skills cannot be read without it: the
    // call is refused as a skill that cannot be read (78), naming the fix.
    git(&fx.work, &["update-ref", "refs/remotes/origin/release", "main"]);
    git(&fx.work, &["symbolic-ref", "--delete", "refs/remotes/origin/HEAD"]);
    git(&fx.work, &["update-ref", "-d", "refs/remotes/origin/main"]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "2", &[]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr().contains("repository skills are read from refs/remotes/origin/HEAD")
            && r.stderr().contains("git remote set-head origin --auto"),
        "{}",
        r.stderr()
    );
    // No remote-tracking branch at all.
    git(&clone, &["update-ref", "-d", "refs/remotes/origin/release"]);
    let r = fx.run_in(&clone, "gh", &["pr", "create", "-t", "t", "-b", "b"], "2", &[]);
    assert!(
        r.stderr().contains("the repository has no remote-tracking branch"),
        "{}",
        r.stderr()
    );
    // Outside any git work tree.
    let r = fx.run_in(fx.env.tmp.path(), "gh", &["pr", "create", "-t", "t", "-b", "b"], "2", &[]);
    assert!(r.stderr().contains("is not in a git work tree"), "{}", r.stderr());
    assert_eq!(fx.env.received("gh"), None);
}

#[test]
fn commits_are_checked_against_what_they_record() {
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    // Staged denied file.
    write(&fx.work.join("CLAUDE.md"), "edited\n");
    git(&fx.work, &["add", "CLAUDE.md"]);
    let r = fx.run("git", &["commit", "-m", "x"], "2", &[]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr().contains("SCOPE VIOLATION: Refusing to commit modifying CLAUDE.md"),
        "{}",
        r.stderr()
    );
    assert_eq!(git(&fx.work, &["rev-parse", "HEAD"]), git(&fx.work, &["rev-parse", "main"]));
    git(&fx.work, &["reset", "-q"]);
    // Tracked change, not staged: only -a records it.
    write(&fx.work.join("checks/x.md"), "x\n");
    git(&fx.work, &["add", "checks/x.md"]);
    let r = fx.run("git", &["commit", "-m", "ok"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let r = fx.run("git", &["commit", "-am", "all"], "2", &[]);
    assert!(r.stderr().contains("Refusing to commit modifying CLAUDE.md"), "{}", r.stderr());
    // Named paths.
    let r = fx.run("git", &["commit", "-m", "p", "--", "CLAUDE.md"], "2", &[]);
    assert!(r.stderr().contains("Refusing to commit modifying CLAUDE.md"), "{}", r.stderr());
    // From a subdirectory with -C: the index of the same repository.
    git(&fx.work, &["add", "CLAUDE.md"]);
    let r = fx.run_in(
        fx.env.tmp.path(),
        "git",
        &["-C", "repos/infra/checks", "commit", "-m", "x"],
        "2",
        &[],
    );
    assert!(r.stderr().contains("Refusing to commit modifying CLAUDE.md"), "{}", r.stderr());
    // --amend carries the amended commit's files.
    git(&fx.work, &["reset", "-q", "--hard"]);
    git(&fx.work, &["commit", "-q", "--allow-empty", "-m", "empty"]);
    git(&fx.work, &["reset", "-q", "--soft", "HEAD~1"]);
    std::fs::write(fx.work.join("ie.yaml"), "changed\n").unwrap();
    git(&fx.work, &["commit", "-q", "-am", "outside the gate"]);
    let r = fx.run("git", &["commit", "--amend", "-m", "reword"], "2", &[]);
    assert!(r.stderr().contains("Refusing to commit modifying ie.yaml"), "{}", r.stderr());
}

#[test]
fn pushes_are_checked_against_the_commits_they_send_and_refused_ones_never_land() {
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    let remote = fx.env.path("remote.git");
    git(fx.env.tmp.path(), &["init", "-q", "--bare", "-b", "main", remote.to_str().unwrap()]);
    let daemon = GitDaemon::start(fx.env.tmp.path());
    git(&fx.work, &["remote", "set-url", "origin", &format!("{}/remote.git", daemon.url)]);
    git(&fx.work, &["push", "-q", "origin", "main"]);
    git(&fx.work, &["fetch", "-q", "origin"]);
    // A denied file in an earlier commit, then a fix-up: the pushed commits still carry it.
    fx.change(&[("entrypoint.sh", "#!/bin/sh\n")]);
    git(&fx.work, &["rm", "-q", "entrypoint.sh"]);
    fx.change(&[("checks/x.md", "x\n")]);
    let r = fx.run("git", &["push", "origin", "feat"], "2", &[]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(
        r.stderr().contains("SCOPE VIOLATION: Refusing to push modifying entrypoint.sh"),
        "{}",
        r.stderr()
    );
    let on_remote = std::process::Command::new(which("git"))
        .args(["rev-parse", "--verify", "-q", "feat"])
        .current_dir(&remote)
        .output()
        .unwrap();
    assert_eq!(on_remote.status.code(), Some(1), "the refused push reached the remote");
    // A clean branch lands.
    git(&fx.work, &["switch", "-q", "-c", "clean", "main"]);
    fx.change(&[("checks/y.md", "y\n")]);
    let r = fx.run("git", &["push", "origin", "clean:claude-ops/fix/y"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(
        git(&remote, &["rev-parse", "claude-ops/fix/y"]),
        git(&fx.work, &["rev-parse", "clean"])
    );
    assert_eq!(fx.env.last_audit()["scope"]["files"], serde_json::json!(["checks/y.md"]));
}

#[test]
fn a_skill_that_cannot_be_read_refuses_the_calls_that_need_it_and_no_others() {
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR), ("broken.md", "x")], &[]);
    std::fs::write(fx.baseline.join("broken.md"), b"# Skill: b\n\xff\xfe").unwrap();
    fx.change(&[("checks/x.md", "x\n")]);
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "2", &[]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains(&format!("skill {}: is not UTF-8", fx.baseline.join("broken.md").display())),
        "{}",
        r.stderr()
    );
    assert_eq!(fx.env.received("gh"), None);
    // Reads need no skill.
    let r = fx.run("gh", &["pr", "list"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    // A symlink loop and a symlink out of the directory are reported the same way.
    std::fs::remove_file(fx.baseline.join("broken.md")).unwrap();
    std::os::unix::fs::symlink(fx.baseline.join("loop.md"), fx.baseline.join("loop.md")).unwrap();
    let r = fx.run("gh", &["pr", "create", "-t", "t", "-b", "b"], "2", &[]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(r.stderr().contains("loop.md: is a symlink loop"), "{}", r.stderr());
}

#[test]
fn a_skill_tier_requirement_raises_the_changes_of_its_skill_and_never_its_reads() {
    let strict = "# Skill: Container Lifecycle Operations\n\n## Tier Requirement\n\nTier 3 minimum in this repository.\n";
    let fx = fixture(3, &[("git-pr.md", SHIPPED_GIT_PR)], &[("container-ops.md", strict)]);
    let r = fx.run("docker", &["restart", "api"], "2", &[]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("requires tier 3 (this agent is tier 2)"), "{}", r.stderr());
    let reason = fx.env.last_audit()["reasons"][0].as_str().unwrap().to_string();
    assert!(
        reason.ends_with(&format!(
            "; skill container-ops ({}@origin/main) raises it to tier 3",
            fx.work.join(".claude-ops/skills/container-ops.md").display()
        )),
        "{reason}"
    );
    assert_eq!(fx.env.received("docker"), None);
    let r = fx.run("docker", &["restart", "api"], "3", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    // Outside the repository the baseline skill applies.
    fx.env.forget("docker");
    let r = fx.run_in(fx.env.tmp.path(), "docker", &["restart", "api"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    // Reads are never raised.
    let r = fx.run("docker", &["ps"], "1", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    // Repository skills are read from origin/HEAD: a change on disk is not one; a change the
    // remote's default branch brings (here: committed there and fetched) is. A Tier Requirement
    // that names no tier refuses the changes of that skill (exit 78).
    let bob = "# Skill: x\n\n## Tier Requirement\n\nAsk Bob.\n";
    write(&fx.work.join(".claude-ops/skills/container-ops.md"), bob);
    fx.env.forget("docker");
    let r = fx.run("docker", &["restart", "api"], "3", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    git(&fx.work, &["stash", "-q"]);
    git(&fx.work, &["switch", "-q", "main"]);
    write(&fx.work.join(".claude-ops/skills/container-ops.md"), bob);
    git(&fx.work, &["commit", "-qam", "bob"]);
    git(&fx.work, &["update-ref", "refs/remotes/origin/main", "main"]);
    let r = fx.run("docker", &["restart", "api"], "3", &[]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(r.stderr().contains("Tier Requirement names no tier"), "{}", r.stderr());
}

#[test]
fn checking_out_a_branch_without_the_repository_skills_keeps_their_tier_requirement() {
    let strict = "# Skill: Container Lifecycle Operations\n\n## Tier Requirement\n\nTier 3 minimum in this repository.\n";
    let fx = fixture(3, &[("git-pr.md", SHIPPED_GIT_PR)], &[("container-ops.md", strict)]);
    // A branch without .claude-ops/skills, checked out through the gate at tier 2.
    git(&fx.work, &["switch", "-q", "-c", "noskills", "main"]);
    git(&fx.work, &["rm", "-q", "-r", ".claude-ops"]);
    git(&fx.work, &["commit", "-q", "-m", "drop the skills"]);
    git(&fx.work, &["switch", "-q", "feat"]);
    let r = fx.run("git", &["checkout", "noskills"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!fx.work.join(".claude-ops").exists(), "the checkout did not happen");
    // The repository's Tier Requirement still holds: it is read from origin/HEAD.
    let r = fx.run("docker", &["restart", "api"], "2", &[]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("requires tier 3 (this agent is tier 2)"), "{}", r.stderr());
    assert_eq!(fx.env.received("docker"), None);
    // Nor can the agent move origin/HEAD or origin/main below tier 3.
    for (args, rule) in [
        (
            &["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/noskills"][..],
            "git.symbolic-ref.set",
        ),
        (&["fetch", "origin", "+noskills:refs/remotes/origin/main"], "git.fetch.remote-refs"),
        (&["branch", "-f", "-r", "origin/main", "noskills"], "git.branch.remote-tracking"),
        (&["remote", "set-head", "origin", "noskills"], "git.remote.write"),
        (&["update-ref", "refs/remotes/origin/main", "noskills"], "git.unclassified"),
    ] {
        let r = fx.run("git", args, "2", &[]);
        assert_eq!(r.code(), 77, "{args:?}: {}", r.stderr());
        assert_eq!(fx.env.last_audit()["rule"], rule, "{args:?}");
    }
}

#[test]
fn explain_reports_the_scope_check_as_json() {
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    fx.change(&[("checks/x.md", "x\n"), ("ie.yaml", "changed\n")]);
    let out = std::process::Command::new(crate::harness::bin())
        .args(["explain", "--json", "--config"])
        .arg(fx.env.config_path())
        .args(["--tier", "2", "--cwd"])
        .arg(&fx.work)
        .args(["--", "gh", "pr", "create", "-t", "t"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(77), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "refuse");
    assert_eq!(v["rule"], "gh.scope");
    assert_eq!(v["scope"]["files"], serde_json::json!(["checks/x.md", "ie.yaml"]));
    assert_eq!(v["scope"]["violations"][0]["path"], "ie.yaml");
    assert_eq!(v["scope"]["violations"][0]["kind"], "denied");
    assert_eq!(v["scope"]["violations"][0]["pattern"], "*.yaml");
    assert_eq!(
        v["scope"]["violations"][0]["source"],
        fx.baseline.join("git-pr.md").display().to_string()
    );
    assert_eq!(
        v["scope"]["rules_from"],
        serde_json::json!([fx.baseline.join("git-pr.md").display().to_string()])
    );
}

#[test]
fn a_push_to_the_default_branch_the_remote_names_or_through_a_push_mapping_is_refused() {
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    let remote = fx.env.path("remote.git");
    git(
        fx.env.tmp.path(),
        &["init", "-q", "--bare", "-b", "stable", remote.to_str().unwrap()],
    );
    let daemon = GitDaemon::start(fx.env.tmp.path());
    git(&fx.work, &["remote", "set-url", "origin", &format!("{}/remote.git", daemon.url)]);
    git(&fx.work, &["push", "-q", "origin", "main:stable"]);
    git(&fx.work, &["fetch", "-q", "origin"]);
    // The remote's default is `stable`, a name the grammar's list of usual ones does not hold.
    git(&fx.work, &["remote", "set-head", "origin", "stable"]);
    fx.change(&[("checks/x.md", "x\n")]);
    let before = git(&remote, &["rev-parse", "stable"]);
    for spec in ["feat:stable", "feat:refs/heads/stable", "HEAD:Stable"] {
        let r = fx.run("git", &["push", "origin", spec], "2", &[]);
        assert_eq!(r.code(), 77, "{spec}: {}", r.stderr());
        assert!(r.stderr().contains("rule git.push.default-branch"), "{}", r.stderr());
    }
    // A push mapping the agent did not write still decides where `git push origin feat` lands.
    git(&fx.work, &["config", "remote.origin.push", "refs/heads/feat:refs/heads/stable"]);
    let r = fx.run("git", &["push", "origin", "feat"], "2", &[]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("remote.origin.push"), "{}", r.stderr());
    assert_eq!(git(&remote, &["rev-parse", "stable"]), before, "a refused push reached the remote");
    git(&fx.work, &["config", "--unset", "remote.origin.push"]);
    // push.default=upstream sends a branch to its upstream, which the agent can set at tier 2.
    git(&fx.work, &["config", "push.default", "upstream"]);
    let r = fx.run("git", &["push", "origin", "feat"], "2", &[]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("push.default"), "{}", r.stderr());
    git(&fx.work, &["config", "--unset", "push.default"]);
    // Without origin/HEAD the default branch is unknown: any destination may be it (and in a
    // repository under `repos`, its skills cannot be read either: exit 78).
    git(&fx.work, &["symbolic-ref", "--delete", "refs/remotes/origin/HEAD"]);
    let r = fx.run("git", &["push", "origin", "feat:stable"], "2", &[]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(r.stderr().contains("origin/HEAD"), "{}", r.stderr());
    assert_eq!(git(&remote, &["rev-parse", "stable"]), before, "a refused push reached the remote");
    git(&fx.work, &["remote", "set-head", "origin", "stable"]);
    // Otherwise, a feature branch lands.
    let r = fx.run("git", &["push", "origin", "feat"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(git(&remote, &["rev-parse", "stable"]), before);
}

/// `tiershim skills validate` of the fixture's install: its exit and its report.
fn validate(fx: &Fx) -> (i32, String) {
    let out = std::process::Command::new(crate::harness::bin())
        .args(["skills", "validate", "--config"])
        .arg(fx.env.config_path())
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_skill_whose_deny_block_lost_its_closing_fence_refuses_commits_naming_the_file_and_line() {
    // With the shipped skill the allow-list keeps scripts/deploy.sh out.
    let fx = fixture(2, &[("git-pr.md", SHIPPED_GIT_PR)], &[]);
    write(&fx.work.join("scripts/deploy.sh"), "#!/bin/sh\n");
    git(&fx.work, &["add", "scripts/deploy.sh"]);
    let r = fx.run("git", &["commit", "-m", "deploy"], "2", &[]);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert!(r.stderr().contains("matches no allowed pattern"), "{}", r.stderr());

    // The deny block's closing fence deleted: the allow block's opening line and its patterns
    // became deny lines. The gate refuses with the file, the line and the fix, and commits
    // nothing.
    let broken = SHIPPED_GIT_PR.replacen("/volumes/\n```\n", "/volumes/\n\n", 1);
    assert_ne!(broken, SHIPPED_GIT_PR);
    write(&fx.baseline.join("git-pr.md"), &broken);
    let head = git(&fx.work, &["rev-parse", "HEAD"]);
    let r = fx.run("git", &["commit", "-m", "deploy"], "2", &[]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    let file = fx.baseline.join("git-pr.md");
    let want = format!(
        "tiershim: git: skill {}: line 97: ```allow is inside the ```deny block opened at line 70, which was not closed before it; \
         add a line ``` after its last pattern; calls ",
        file.display()
    );
    assert!(r.stderr().starts_with(&want), "{}", r.stderr());
    assert!(
        r.stderr().ends_with(" are refused until it is fixed (tiershim skills validate)\n"),
        "{}",
        r.stderr()
    );
    assert_eq!(git(&fx.work, &["rev-parse", "HEAD"]), head, "the commit was made");
    let (code, out) = validate(&fx);
    assert_eq!(code, 78, "{out}");
    assert!(out.contains(&format!("✗ {}", file.display())), "{out}");
    assert!(
        out.contains("error: line 97: ```allow is inside the ```deny block opened at line 70"),
        "{out}"
    );

    // The closing fence gone at the end of the file: never closed.
    let unclosed = SHIPPED_GIT_PR.replacen("CLAUDE-OPS.md\n```\n", "CLAUDE-OPS.md\n", 1);
    assert_ne!(unclosed, SHIPPED_GIT_PR);
    write(&file, &unclosed);
    let r = fx.run("git", &["commit", "-m", "deploy"], "2", &[]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr().contains("line 97: the ```allow block opened here is never closed"),
        "{}",
        r.stderr()
    );

    // A label typo: all the deny patterns would be dropped.
    write(&file, &SHIPPED_GIT_PR.replacen("```deny\n", "```dney\n", 1));
    let r = fx.run("git", &["commit", "-m", "deploy"], "2", &[]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("line 70: a ```dney block in Scope Rules is neither `deny` nor `allow` (did you mean `deny`?)"),
        "{}",
        r.stderr()
    );
    let (code, out) = validate(&fx);
    assert_eq!(code, 78, "{out}");
    assert!(out.contains("1 error(s)"), "{out}");
    assert_eq!(git(&fx.work, &["rev-parse", "HEAD"]), head, "the commit was made");

    // A call that checks no paths does not need the skill and still runs.
    let r = fx.run("git", &["status", "--short"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
}

#[test]
fn a_prose_rule_naming_a_path_the_gate_cannot_match_refuses_and_unenforceable_items_are_reported() {
    let skill = PROSE_SKILL.replace(
        "- **Data**: anything under `/volumes/`",
        "- **Data**: anything under `$DATA/volumes/`",
    );
    let fx = fixture(2, &[("infra.md", &skill)], &[]);
    write(&fx.work.join("checks/x.md"), "x\n");
    git(&fx.work, &["add", "checks/x.md"]);
    let r = fx.run("git", &["commit", "-m", "x"], "2", &[]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("`$DATA/volumes/` in Scope Rules cannot be a path pattern (it names a variable"),
        "{}",
        r.stderr()
    );
    // The shipped prose form: patterns enforced, "DNS records" reported by validate.
    write(&fx.baseline.join("infra.md"), PROSE_SKILL);
    let (code, out) = validate(&fx);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\"DNS records\" names no path; the gate cannot enforce it"), "{out}");
    let r = fx.run("git", &["commit", "-m", "x"], "2", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
}
