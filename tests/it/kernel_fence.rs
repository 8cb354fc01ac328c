//! The kernel fence on the real kernel, as root, through `tiershim launch`: an unprivileged agent
//! at tier 1 writes nothing outside its own state whatever program it runs; at tier 2 its writes
//! land in the work tree but never in `.git/config`, hooks or skills; a call from outside the
//! fence is refused; and without the Landlock ABI the ruleset needs, nothing starts.

use std::path::Path;

use crate::agent::{AgentInstall, as_root, text};

/// A script for /bin/sh: each attempt prints `NAME ok`, or `NAME denied` when it failed with
/// the kernel's refusal (`Permission denied`, or `Read-only file system` for a bind mount,
/// `Device or resource busy` for a mount point renamed or removed), or
/// `NAME failed: <error>` for any other failure, which the tests treat as a broken test.
fn attempts(cases: &[(&str, String)]) -> String {
    let mut s = String::from("PATH=/usr/bin:/bin\n");
    for (name, cmd) in cases {
        s.push_str(&format!(
            "if err=$( ( {cmd} ) 2>&1 ); then echo '{name} ok'; else case $err in *'Permission denied'*|*'Read-only file system'*|*'Operation not permitted'*|*'Device or resource busy'*) echo '{name} denied' ;; *) echo \"{name} failed: $err\" ;; esac; fi\n"
        ));
    }
    s
}

fn verdicts(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| l.split_once(' ').map(|(a, b)| (a.to_string(), b.to_string())))
        .collect()
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
                out.push((p.display().to_string(), Vec::new()));
            } else {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_tier_1_agent_writes_nothing_outside_its_own_state_whatever_program_it_runs() {
    if !as_root("a_tier_1_agent_writes_nothing…") {
        return;
    }
    let a = AgentInstall::new("f1", &[]);
    let app = a.app.display().to_string();
    let home = a.home.display().to_string();
    // Every way a program writes a file, on files and directories the agent's user owns: only
    // the kernel stands in the way. (An unrestricted /bin/sh as the agent's command: the
    // restricted shell is not what holds here.)
    let mut cases: Vec<(&str, String)> = vec![
        ("create", format!("echo x > {home}/notes")),
        ("append", format!("echo x >> {app}/README.md")),
        ("truncate-open", format!(": > {app}/README.md")),
        ("truncate", format!("truncate -s 0 {app}/README.md")),
        ("mkdir", format!("mkdir {app}/d")),
        ("remove", format!("rm {app}/README.md")),
        ("rename", format!("mv {app}/README.md {app}/R.md")),
        ("symlink", format!("ln -s x {app}/l")),
        ("hardlink", format!("ln {app}/README.md {app}/h")),
        ("fifo", format!("mkfifo {app}/f")),
        ("touch", format!("touch {app}/new")),
        ("copy", format!("cp /etc/hostname {app}/c")),
        ("git-config", format!("echo '[core] fsmonitor = x' >> {app}/.git/config")),
        ("hook", format!("echo 'exit 0' > {app}/.git/hooks/pre-commit")),
        ("bashrc", format!("echo x > {home}/.bashrc")),
    ];
    let before = snapshot(&a.app);
    cases.push(("state", format!("echo x > {home}/.claude/notes")));
    cases.push(("tmp", format!("echo x > {home}/.claude/tmp/scratch")));
    let script = attempts(&cases);
    let out = a.launch(1, &["/bin/sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = verdicts(&text(&out.stdout));
    for (name, _) in &cases {
        let want = if matches!(*name, "state" | "tmp") { "ok" } else { "denied" };
        assert!(got.contains(&(name.to_string(), want.to_string())), "{name}: {got:?}");
    }
    assert_eq!(snapshot(&a.app), before, "the work tree changed");
    assert!(!a.home.join("notes").exists() && !a.home.join(".bashrc").exists());
    assert!(a.home.join(".claude/tmp/scratch").is_file());

    // The same writes by the same user without launch do land: the fence, not file modes, stopped them.
    let out = a.as_agent(&["/bin/sh", "-c", &format!("echo x > {home}/notes && touch {app}/new")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(a.home.join("notes").exists() && a.app.join("new").exists());
}

#[test]
fn a_fetch_at_tier_1_is_refused_by_the_gate_and_would_write_nothing_past_it() {
    if !as_root("a_fetch_at_tier_1_is_refused…") {
        return;
    }
    let a = AgentInstall::new("f2", &[]);
    // A remote served on 127.0.0.1 with one commit the work tree has not fetched.
    let remote_base = a.world.path().join("remote");
    std::fs::create_dir(&remote_base).unwrap();
    let git = |dir: &Path, args: &[&str]| {
        let out = std::process::Command::new(crate::agent::which("git"))
            .args(args)
            // The work tree is the agent's; root reads it here as the operator would.
            .env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_KEY_0", "safe.directory")
            .env("GIT_CONFIG_VALUE_0", "*")
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "o")
            .env("GIT_AUTHOR_EMAIL", "o@example.com")
            .env("GIT_COMMITTER_NAME", "o")
            .env("GIT_COMMITTER_EMAIL", "o@example.com")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    git(&remote_base, &["init", "-q", "--bare", "-b", "main", "app.git"]);
    let scratch = a.world.path().join("scratch");
    git(a.world.path(), &["init", "-q", "-b", "main", scratch.to_str().unwrap()]);
    git(&scratch, &["commit", "-q", "--allow-empty", "-m", "upstream"]);
    git(&scratch, &["push", "-q", remote_base.join("app.git").to_str().unwrap(), "main"]);
    let daemon = crate::real_tools::GitDaemon::start(&remote_base);
    git(&a.app, &["remote", "add", "origin", &format!("{}/app.git", daemon.url)]);
    let before = snapshot(&a.app.join(".git"));

    let shell = a.inst.prefix.join("bin/rbash-tier1");
    // The gate says so before the kernel would: under the fence tier 1 writes no repository.
    let out = a.launch(1, &[shell.to_str().unwrap(), "-c", "git fetch origin"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(77), "{err}");
    assert!(
        err.contains("REFUSED: git fetch (writes the repository: objects, remote-tracking refs, FETCH_HEAD) requires tier 2")
            && err.contains("fetch as the operator"),
        "{err}"
    );
    let rec = a.inst.audit_records().into_iter().rev().find(|r| r["verb"] == "fetch").unwrap();
    assert_eq!(
        (rec["verdict"].as_str(), rec["rule"].as_str(), rec["fence"].as_str()),
        (
            Some("refuse"),
            Some("git.local-write"),
            Some(format!(
                "landlock abi {} tier 1",
                tiershim::fence::applied_abi(tiershim::fence::kernel_abi())
            ))
            .as_deref()
        )
    );
    // Had it run, the kernel would have stopped it: the real git in the tier-1 domain.
    let out = a.launch(1, &[crate::agent::which("git").to_str().unwrap(), "fetch", "origin"]);
    let err = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("Permission denied"), "{err}");
    assert_eq!(
        snapshot(&a.app.join(".git")),
        before,
        "git fetch wrote into the repository at tier 1"
    );
    // At tier 2 the same call fetches.
    let shell = a.inst.prefix.join("bin/rbash-tier2");
    let out = a.launch(
        2,
        &[
            shell.to_str().unwrap(),
            "-c",
            "git fetch -q origin && git log --format=%s origin/main",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "upstream\n");
}

#[test]
fn at_tier_2_writes_land_in_the_work_tree_but_never_in_git_config_hooks_or_skills() {
    if !as_root("at_tier_2_writes_land_in_the_work_tree…") {
        return;
    }
    let a = AgentInstall::new("f3", &[]);
    let app = a.app.display().to_string();
    let home = a.home.display().to_string();
    let cases: Vec<(&str, String)> = vec![
        (
            "work-tree",
            format!("echo x > {app}/new.md && mkdir {app}/checks && mv {app}/new.md {app}/checks/"),
        ),
        ("git-objects", format!("touch {app}/.git/objects/x && rm {app}/.git/objects/x")),
        ("git-config", format!("echo '[core] fsmonitor = x' >> {app}/.git/config")),
        ("git-config-replace", format!("cp /etc/hostname {app}/.git/config")),
        ("hook", format!("echo 'exit 0' > {app}/.git/hooks/pre-commit")),
        ("info", format!("echo x > {app}/.git/info/attributes")),
        ("skills", format!("echo x > {app}/.claude-ops/skills/evil.md")),
        ("outside", format!("echo x > {home}/notes")),
    ];
    let config = std::fs::read(a.app.join(".git/config")).unwrap();
    let out = a.launch(2, &["/bin/sh", "-c", &attempts(&cases)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = verdicts(&text(&out.stdout));
    for (name, _) in &cases {
        let want = if matches!(*name, "work-tree" | "git-objects") {
            "ok"
        } else {
            "denied"
        };
        assert!(got.contains(&(name.to_string(), want.to_string())), "{name}: {got:?}");
    }
    assert!(a.app.join("checks/new.md").is_file());
    assert_eq!(std::fs::read(a.app.join(".git/config")).unwrap(), config);
    assert!(!a.app.join(".git/hooks/pre-commit").exists());
    assert!(!a.app.join(".claude-ops/skills/evil.md").exists());
    assert!(!a.home.join("notes").exists());
    // The bind mounts were made in a namespace of the agent's own: the system sees none.
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&app), "{mounts}");

    // A commit through the restricted shell and the gate works inside the fence.
    let shell = a.inst.prefix.join("bin/rbash-tier2");
    let out = a
        .launch_cmd(
            2,
            &a.app,
            &[],
            &[
                shell.to_str().unwrap(),
                "-c",
                "git add checks/new.md && git commit -qm 'a check' && git log --oneline",
            ],
        )
        .env("GIT_AUTHOR_NAME", "agent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("a check"), "{}", text(&out.stdout));
}

#[test]
fn at_tier_2_repository_metadata_stays_read_only_and_the_gate_refuses_a_repository_it_does_not_hold() {
    if !as_root("at_tier_2_repository_metadata_stays_read_only…") {
        return;
    }
    let a = AgentInstall::new("f9", &[]);
    let git_bin = crate::agent::which("git");
    let root_git = |dir: &Path, args: &[&str]| {
        let out = std::process::Command::new(&git_bin)
            .args(["-c", "safe.directory=*"])
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "o")
            .env("GIT_AUTHOR_EMAIL", "o@example.com")
            .env("GIT_COMMITTER_NAME", "o")
            .env("GIT_COMMITTER_EMAIL", "o@example.com")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    };
    // A nested repository and a linked work tree, made before the launch; one without hooks.
    let sub = a.app.join("lib/sub");
    std::fs::create_dir_all(&sub).unwrap();
    root_git(&sub, &["init", "-q", "-b", "main"]);
    std::fs::remove_dir_all(sub.join(".git/hooks")).unwrap();
    root_git(&a.app, &["worktree", "add", "-q", "../wt"]);
    for d in [&a.app, &a.repos.join("wt")] {
        let st = std::process::Command::new("chown")
            .args(["-R", &format!("{}:{}", a.acct.uid, a.acct.gid)])
            .arg(d)
            .status()
            .unwrap();
        assert!(st.success());
    }
    let app = a.app.display().to_string();
    let repos = a.repos.display().to_string();
    let sub_s = sub.display().to_string();
    let gated = a.inst.tier_dir(2).join("git").display().to_string();
    let gh = a.inst.tier_dir(2).join("gh").display().to_string();
    let g = git_bin.display().to_string();
    let cases: Vec<(&str, String)> = vec![
        ("rename-git", format!("mv {app}/.git {app}/.git-old")),
        ("remove-hooks", format!("rm -r {app}/.git/hooks")),
        ("rename-config", format!("mv {app}/.git/config {app}/.git/config-old")),
        ("nested-config", format!("echo x >> {sub_s}/.git/config")),
        ("nested-hook", format!("echo x > {sub_s}/.git/hooks/pre-commit")),
        ("worktree-commondir", format!("echo /tmp > {app}/.git/worktrees/wt/commondir")),
        ("worktree-gitfile", format!("echo 'gitdir: /tmp' > {repos}/wt/.git")),
        // The gate's git works in every repository the launch found.
        (
            "gated-bound",
            format!("{gated} -C {app} status --short && {gated} -C {sub_s} status --short && {gated} -C {repos}/wt status --short"),
        ),
        // A repository made after the launch: the kernel lets it be made, the gate refuses it.
        ("late-init", format!("{g} init -q {app}/late")),
        ("gated-late", format!("{gated} -C {app}/late status")),
        // gh runs git in its working directory: judged the same way.
        ("gh-bound", format!("cd {app} && {gh} pr list")),
        ("gh-late", format!("cd {app}/late && {gh} pr list")),
        // A commondir written into a held git directory names a copy whose config is the agent's.
        (
            "plant-commondir",
            format!(
                "mkdir {app}/evil && cp -r {app}/.git/objects {app}/.git/refs {app}/evil/ && printf '[core]\\n\\trepositoryformatversion = 0\\n' > {app}/evil/config && mkdir {app}/evil/hooks && echo {app}/evil > {app}/.git/commondir"
            ),
        ),
        ("gated-retargeted", format!("{gated} -C {app} log --oneline")),
    ];
    let script = attempts(&cases);
    let out = a.launch(2, &["/bin/sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = verdicts(&text(&out.stdout));
    let verdict = |name: &str| got.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default();
    for name in [
        "rename-git",
        "remove-hooks",
        "rename-config",
        "nested-config",
        "nested-hook",
        "worktree-commondir",
        "worktree-gitfile",
    ] {
        assert_eq!(verdict(name), "denied", "{name}: {got:?}");
    }
    for name in ["gated-bound", "late-init", "plant-commondir", "gh-bound"] {
        assert_eq!(verdict(name), "ok", "{name}: {got:?}");
    }
    // The gate's refusals (78) come back as failures naming the repository it does not hold.
    for name in ["gated-late", "gated-retargeted", "gh-late"] {
        let v = verdict(name);
        assert!(
            v.starts_with("failed: ") && v.contains("is not one the kernel fence holds"),
            "{name}: {v}"
        );
    }
    let recs = a.inst.audit_records();
    let refused: Vec<_> = recs.iter().filter(|r| r["verdict"] == "refuse").collect();
    assert_eq!(refused.len(), 3, "{recs:#?}");
    assert!(
        refused.iter().all(|r| r["fence"] == "landlock tier 2 (repository not held)"),
        "{refused:#?}"
    );
    // The launch made the missing hooks directory, so it is held too.
    assert!(sub.join(".git/hooks").is_dir());
}

#[test]
fn a_call_from_outside_the_fence_is_refused_and_a_hardened_shell_will_not_start_unfenced() {
    if !as_root("a_call_from_outside_the_fence…") {
        return;
    }
    let a = AgentInstall::new("f4", &[]);
    let docker = a.inst.tier_dir(1).join("docker");
    // The agent's user runs a gated link directly, as an escaped process would.
    let out = a.as_agent(&[docker.to_str().unwrap(), "ps"]);
    assert_eq!(out.status.code(), Some(78), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("outside the Landlock domain"), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    // And recorded, as the escape it is.
    let rec = a.inst.audit_records().pop().unwrap();
    assert_eq!(
        (rec["verdict"].as_str(), rec["rule"].as_str(), rec["fence"].as_str(), &rec["argv"]),
        (Some("refuse"), Some("kernel-fence"), Some("outside"), &serde_json::json!(["ps"]))
    );
    // Inside the fence the same call runs.
    let out = a.launch(1, &[docker.to_str().unwrap(), "ps"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("api"));
    // A hardened install's shell cannot make the domain itself (no_new_privs would stop the
    // setgid gate), so it refuses rather than run unfenced.
    let shell = a.inst.prefix.join("bin/rbash-tier1");
    let out = a.as_agent(&[shell.to_str().unwrap(), "-c", "docker ps"]);
    assert_eq!(out.status.code(), Some(78), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("tiershim launch"), "{}", text(&out.stderr));
}

#[test]
fn the_gate_of_a_tier_runs_only_inside_that_tier_s_domain() {
    if !as_root("the_gate_of_a_tier_runs_only_inside_that_tier_s_domain") {
        return;
    }
    let a = AgentInstall::new("f8", &[]);
    let abi = tiershim::fence::applied_abi(tiershim::fence::kernel_abi());
    // (domain's tier, link's tier): a process fenced at one tier runs another tier's link
    // directly, as one that left its restricted shell would.
    for (domain, link) in [(1, 1), (2, 2), (3, 3), (2, 1), (3, 2), (3, 1), (1, 3), (1, 2), (2, 3)] {
        let docker = a.inst.tier_dir(link).join("docker");
        let out = a.launch(domain, &[docker.to_str().unwrap(), "ps"]);
        let rec = a.inst.audit_records().pop().unwrap();
        if domain == link {
            assert_eq!(out.status.code(), Some(0), "{domain}->{link}: {}", text(&out.stderr));
            assert_eq!(rec["fence"], format!("landlock abi {abi} tier {link}"));
            continue;
        }
        assert_eq!(out.status.code(), Some(78), "{domain}->{link}: {}", text(&out.stdout));
        assert!(
            text(&out.stderr).contains(&format!("inside the Landlock domain of tier {domain}, not the one of tier {link}")),
            "{domain}->{link}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), "", "{domain}->{link}: the real tool ran");
        assert_eq!(
            (rec["verdict"].as_str(), rec["rule"].as_str(), rec["fence"].as_str()),
            (
                Some("refuse"),
                Some("kernel-fence"),
                Some(format!("landlock tier {domain}").as_str())
            ),
            "{domain}->{link}"
        );
    }
    // The tier shell of one tier inside another tier's domain refuses to start.
    let shell = a.inst.prefix.join("bin/rbash-tier2");
    let out = a.launch(1, &[shell.to_str().unwrap(), "-c", "docker ps"]);
    assert_eq!(out.status.code(), Some(78), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("this shell of tier 2 runs inside the Landlock domain of tier 1"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn launch_passes_the_dry_run_on_whatever_it_holds() {
    if !as_root("launch_passes_the_dry_run_on_whatever_it_holds") {
        return;
    }
    let a = AgentInstall::new("fa", &[]);
    let shell = a.inst.prefix.join("bin/rbash-tier2");
    for (value, dry) in [("true\r", true), ("1", true), ("yes please", true), ("false", false)] {
        let out = a
            .launch_cmd(2, &a.app, &[], &[shell.to_str().unwrap(), "-c", "docker restart api"])
            .env("CLAUDEOPS_DRY_RUN", value)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{value:?}: {}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr).contains("DRY RUN: would run: docker restart api"),
            dry,
            "{value:?}: {}",
            text(&out.stderr)
        );
        // The stub prints the container it restarted only when it ran.
        assert_eq!(text(&out.stdout) == "api\n", !dry, "{value:?}: {}", text(&out.stdout));
    }
}

#[test]
fn without_the_landlock_abi_the_ruleset_needs_launch_refuses_and_the_opt_out_is_explicit() {
    if !as_root("without_the_landlock_abi…") {
        return;
    }
    let a = AgentInstall::new("f5", &[]);
    let cfg = a.tier_config(1);
    let original = std::fs::read_to_string(&cfg).unwrap();
    let above = tiershim::fence::kernel_abi() + 1;
    std::fs::write(&cfg, format!("{original}kernel_fence: {{abi: {above}}}\n")).unwrap();
    let out = a.launch(1, &["/bin/sh", "-c", &format!("echo started > {}/notes", a.home.display())]);
    assert_eq!(out.status.code(), Some(78));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("asks for Landlock ABI {above}")) && err.contains("kernel_fence: off"),
        "{err}"
    );
    assert!(!a.home.join("notes").exists(), "the agent started");

    // `kernel_fence: off`: no domain, so the same write lands, and the gate's records say so.
    std::fs::write(&cfg, format!("{original}kernel_fence: off\n")).unwrap();
    let docker = a.inst.tier_dir(1).join("docker");
    let out = a.launch(
        1,
        &[
            "/bin/sh",
            "-c",
            &format!("echo started > {}/notes && {} ps", a.home.display(), docker.display()),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(a.home.join("notes").exists());
    assert_eq!(a.inst.audit_records().last().unwrap()["fence"], "off");
}

#[test]
fn doctor_explain_and_launch_check_show_the_ruleset() {
    if !as_root("doctor_and_launch_check_show_the_ruleset") {
        return;
    }
    let a = AgentInstall::new("f6", &[]);
    let out = std::process::Command::new(a.inst.tiershim())
        .args(["doctor", "--user", &a.acct.user, "--system-path", "/nonexistent"])
        .output()
        .unwrap();
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(
        report.contains("kernel fence") && report.contains("Landlock ABI 3 or later (this kernel: "),
        "{report}"
    );
    // The ABI whose rights the domains handle, which the audit records name, not the kernel's.
    let applied = tiershim::fence::applied_abi(tiershim::fence::kernel_abi());
    assert!(
        report.contains(&format!("domains made with the rights of ABI {applied})")),
        "{report}"
    );
    assert!(report.contains("✓ claude shell"), "{report}");
    assert!(
        report.contains(&format!("tier2, tier3: read-only: {}/.git/config", a.app.display())),
        "{report}"
    );
    assert!(
        report.contains(&format!("tier1, tier2, tier3: writable: {}/.claude ", a.home.display())),
        "{report}"
    );
    let out = std::process::Command::new(a.inst.tiershim())
        .args(["explain", "--fence", "--json", "--user", &a.acct.user, "--config"])
        .arg(a.tier_config(1))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rs["tier"], 1);
    assert_eq!(rs["writable"][0]["path"], a.home.join(".claude").display().to_string());
    assert_eq!(rs["read_only"], serde_json::json!([]));
    let out = std::process::Command::new(a.inst.tiershim())
        .args([
            "launch",
            "--check",
            "--tier",
            "2",
            "--user",
            &a.acct.user,
            "--system-path",
            "/nonexistent",
            "--",
            "/bin/true",
        ])
        .output()
        .unwrap();
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}{}", text(&out.stderr));
    assert!(
        shown.contains(&format!("kernel fence: read-only: {}/.claude-ops", a.app.display())),
        "{shown}"
    );
    assert!(shown.contains("Edit(//**/.git/**)"), "{shown}");
    assert!(
        shown.contains(&format!(
            "env: CLAUDE_CODE_SHELL={}",
            a.inst.prefix.join("bin/rbash-tier2").display()
        )),
        "{shown}"
    );
}

#[test]
fn an_unhardened_tier_1_shell_makes_its_own_domain_and_a_tier_2_one_needs_launch() {
    if !as_root("an_unhardened_tier_1_shell…") {
        return;
    }
    let acct = crate::harden::Account::create_tagged("f7");
    let world = tempfile::tempdir().unwrap();
    std::fs::set_permissions(world.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let home = world.path().join("home");
    acct.set_home(&home);
    let repos = world.path().join("repos");
    std::fs::create_dir_all(repos.join("app/.git")).unwrap();
    std::fs::write(repos.join("app/.git/config"), "").unwrap();
    let repos_arg = repos.display().to_string();
    let inst = crate::installed::Installed::new(&["--kernel-fence", "on", "--repos", &repos_arg]);
    // Not hardened: the gate runs with the agent's rights, so the audit log's directory is its.
    std::fs::create_dir_all(inst.audit.parent().unwrap()).unwrap();
    std::fs::set_permissions(inst.audit.parent().unwrap(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let run = |shell: &str, cmd: &str| {
        std::process::Command::new("/usr/bin/setpriv")
            .arg(format!("--reuid={}", acct.uid))
            .arg(format!("--regid={}", acct.gid))
            .args(["--clear-groups", "--"])
            .arg(inst.prefix.join("bin").join(shell))
            .args(["-c", cmd])
            .env_clear()
            .env("HOME", &home)
            .current_dir(&home)
            .output()
            .unwrap()
    };
    let notes = home.join("notes");
    let out = run("rbash-tier1", "docker ps");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("stub docker ran\n"), "{}", text(&out.stdout));
    let rec = inst.audit_records().pop().unwrap();
    assert_eq!(
        rec["fence"],
        format!(
            "landlock abi {} tier 1",
            tiershim::fence::applied_abi(tiershim::fence::kernel_abi())
        )
    );
    // The stub real tool, inside the domain, could not append to its log outside it.
    assert!(text(&out.stderr).contains("Permission denied"), "{}", text(&out.stderr));
    assert!(!notes.exists());
    // Tier 2 would need read-only bind mounts, which only root can make.
    let out = run("rbash-tier2", "docker ps");
    assert_eq!(out.status.code(), Some(78));
    assert!(text(&out.stderr).contains("only root can make"), "{}", text(&out.stderr));
}

#[test]
fn at_tier_3_dev_shm_is_writable_and_private_to_the_session() {
    if !as_root("at_tier_3_dev_shm_is_writable_and_private_to_the_session") {
        return;
    }
    if !Path::new("/dev/shm").is_dir() {
        eprintln!("SKIPPED: this machine has no /dev/shm");
        return;
    }
    let a = AgentInstall::new("shm3", &[]);
    let name = format!("tiershim-test-{}", std::process::id());
    let machine = Path::new("/dev/shm").join(format!("{name}-machine"));
    std::fs::write(&machine, "the machine's").unwrap();
    // Inside: the agent writes /dev/shm (ansible's semaphores live there) and does not see the
    // machine's; outside, nothing it wrote is left.
    let script = format!("echo x > /dev/shm/{name} && cat /dev/shm/{name} && test ! -e {}", machine.display());
    let out = a.launch(3, &["/bin/sh", "-c", &script]);
    let _ = std::fs::remove_file(&machine);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "x");
    assert!(
        !Path::new("/dev/shm").join(&name).exists(),
        "the agent's file reached the machine's /dev/shm"
    );
    // At tier 2 /dev/shm is not the agent's to write.
    let out = a.launch(2, &["/bin/sh", "-c", &format!("echo x > /dev/shm/{name}")]);
    assert_ne!(out.status.code(), Some(0));
    assert!(!Path::new("/dev/shm").join(&name).exists());
}
