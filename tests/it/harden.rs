//! `install.sh --harden`, as root: a group and an unprivileged user made for the test, a real
//! hardened installation, and proof that the user cannot run a real tool directly but can
//! through the gate, which runs it without the group. Skipped (with a message) when not root,
//! except under CI, where it must run.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::installed::{Installed, stub_text};

/// A group and a user created for one test, removed on drop.
pub struct Account {
    pub user: String,
    pub group: String,
    pub uid: u32,
    pub gid: u32,
}

fn must(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn id_of(flag: &str, name: &str) -> u32 {
    let out = Command::new("id").args([flag, name]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

impl Account {
    pub fn create() -> Account {
        // Unique per test in this process: the harden tests run at the same time.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Account::create_tagged(&format!("x{n}"))
    }

    /// As [`Account::create`], with `tag` in the names (unique per account in this process).
    pub fn create_tagged(tag: &str) -> Account {
        let tag = format!("ts{}{tag}", std::process::id());
        let group = format!("{tag}g");
        let user = format!("{tag}u");
        must(Command::new("groupadd").args(["--system", &group]));
        must(Command::new("useradd").args([
            "--system",
            "--no-create-home",
            "--user-group",
            "--shell",
            "/usr/sbin/nologin",
            &user,
        ]));
        let uid = id_of("-u", &user);
        let gid = id_of("-g", &user);
        Account { user, group, uid, gid }
    }

    /// Run `argv` as the user (its own groups only), with a small environment.
    fn run(&self, argv: &[&str], env: &[(&str, &str)]) -> Output {
        self.run_in(Path::new("/"), argv, env)
    }

    pub fn run_in(&self, dir: &Path, argv: &[&str], env: &[(&str, &str)]) -> Output {
        // By absolute path: `env` may set PATH for the child, and Command would search that.
        Command::new("/usr/bin/setpriv")
            .arg(format!("--reuid={}", self.uid))
            .arg(format!("--regid={}", self.gid))
            .arg("--init-groups")
            .arg("--")
            .args(argv)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .envs(env.iter().copied())
            .current_dir(dir)
            .output()
            .unwrap()
    }

    /// Give the user `home` (made for it, mode 0700) as its home directory.
    pub fn set_home(&self, home: &Path) {
        std::fs::create_dir_all(home).unwrap();
        must(Command::new("usermod").args(["-d", home.to_str().unwrap(), &self.user]));
        must(Command::new("chown").args([format!("{}:{}", self.uid, self.gid).as_str(), home.to_str().unwrap()]));
        std::fs::set_permissions(home, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    }

    pub fn group_gid(&self) -> u32 {
        let text = std::fs::read_to_string("/etc/group").unwrap();
        text.lines()
            .find_map(|l| {
                let f: Vec<&str> = l.split(':').collect();
                (f[0] == self.group).then(|| f[2].parse().unwrap())
            })
            .unwrap()
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.user).output();
        let _ = Command::new("groupdel").arg(&self.user).output();
        let _ = Command::new("groupdel").arg(&self.group).output();
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_hardened_install_keeps_real_tools_from_the_agent_and_runs_them_through_the_gate_without_the_group() {
    if !nix::unistd::getuid().is_root() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("the --harden test must run as root under CI (it creates a group and a user)");
        }
        eprintln!("SKIPPED a_hardened_install_…: not root; run the tests as root to check --harden");
        return;
    }
    let acct = Account::create();
    let tsg = acct.group_gid();

    // Stub real tools (made by Installed::new before install.sh runs): gh records the gids its
    // process holds; tea is a copy of the ELF `echo`, to show binaries run from a descriptor too.
    // git is a script that records the gids it runs with, then runs the system's git: the gate
    // runs it itself to work out the files a pull request changes.
    let git_gids = std::env::temp_dir().join(format!("tiershim-harden-git-{}.log", std::process::id()));
    std::fs::write(&git_gids, "").unwrap();
    std::fs::set_permissions(&git_gids, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    let system_git = ["/usr/bin/git", "/usr/local/bin/git"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .unwrap();
    let repos = tempfile::tempdir().unwrap();
    std::fs::set_permissions(repos.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let repos_arg = repos.path().display().to_string();
    // The cooldown state, in a directory of its own that install.sh makes.
    let state_root = tempfile::tempdir().unwrap();
    std::fs::set_permissions(state_root.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let state = state_root.path().join("cooldown/cooldown.json");
    let state_arg = state.display().to_string();
    let hardening = [
        "--harden",
        "--group",
        &acct.group,
        "--repos",
        &repos_arg,
        "--cooldown-state",
        &state_arg,
    ];
    let inst = Installed::new_with(&hardening, |real, runs| {
        let git = format!(
            "#!/bin/sh\n/bin/grep '^Gid:' /proc/$$/status >> '{}'\nexec {system_git} \"$@\"\n",
            git_gids.display()
        );
        std::fs::write(real.join("git"), git).unwrap();
        let gh = format!(
            "{}/bin/grep '^Gid:' /proc/$$/status >> '{}'\n",
            stub_text("gh", runs),
            runs.display()
        );
        std::fs::write(real.join("gh"), gh).unwrap();
        std::fs::copy("/bin/echo", real.join("tea")).unwrap();
    });
    let lib = inst.prefix.join("lib/tiershim");
    let real_dir = lib.join("real");

    // The layout: setgid binary, 0710 root:group real directory, root-owned tiers, audit log.
    let m = std::fs::metadata(inst.tiershim()).unwrap();
    assert_eq!((m.mode() & 0o7777, m.uid(), m.gid()), (0o2755, 0, tsg));
    let m = std::fs::metadata(&real_dir).unwrap();
    assert_eq!((m.mode() & 0o7777, m.uid(), m.gid()), (0o710, 0, tsg));
    for n in 1..=3u8 {
        let cfg = inst.tier_dir(n).join("tiershim.yaml");
        assert_eq!(std::fs::metadata(&cfg).unwrap().uid(), 0);
        assert!(
            std::fs::read_to_string(&cfg)
                .unwrap()
                .contains(&format!("  docker: '{}'", real_dir.join("docker").display()))
        );
    }
    let m = std::fs::metadata(&inst.audit).unwrap();
    assert_eq!((m.mode() & 0o7777, m.uid(), m.gid()), (0o660, 0, tsg));
    // The originals lost "others" access, and their old modes are on record.
    assert_eq!(std::fs::metadata(inst.real.join("docker")).unwrap().mode() & 0o7777, 0o750);
    let modes = std::fs::read_to_string(real_dir.join("ORIGINAL-MODES")).unwrap();
    assert!(modes.contains(&format!("755 {}", inst.real.join("docker").display())), "{modes}");

    // Directly: neither the copy nor the original runs, and nothing is read or written.
    let copy = real_dir.join("docker");
    let original = inst.real.join("docker");
    for argv in [
        vec![copy.to_str().unwrap(), "ps"],
        vec![original.to_str().unwrap(), "ps"],
        vec!["/bin/sh", "-c", &format!("{} ps", copy.display())],
        vec!["/bin/cat", copy.to_str().unwrap()],
        vec!["/bin/ls", real_dir.to_str().unwrap()],
        vec!["/bin/sh", "-c", &format!("echo forged >> {}", inst.audit.display())],
    ] {
        let out = acct.run(&argv, &[]);
        assert!(!out.status.success(), "{argv:?} succeeded: {}", text(&out.stdout));
        assert!(text(&out.stderr).contains("Permission denied"), "{argv:?}: {}", text(&out.stderr));
    }
    assert_eq!(inst.runs(), vec![]);

    // Through the gate: the real tool runs, as the user, with the group gone.
    let tier1 = inst.tier_dir(1);
    let path = tier1.display().to_string();
    let out = acct.run(&[tier1.join("docker").to_str().unwrap(), "ps"], &[("PATH", &path)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "stub docker ran\n");
    assert_eq!(inst.ungated_runs(), vec![]);
    assert_eq!(inst.runs().len(), 1);

    inst.forget_runs();
    let out = acct.run(&[tier1.join("gh").to_str().unwrap(), "pr", "list"], &[("PATH", &path)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let log = std::fs::read_to_string(&inst.runs).unwrap();
    let gid_line = log.lines().find(|l| l.starts_with("Gid:")).unwrap_or_else(|| panic!("{log}"));
    let gids: Vec<u32> = gid_line.split_whitespace().skip(1).map(|g| g.parse().unwrap()).collect();
    assert_eq!(gids, vec![acct.gid; 4], "real, effective, saved and fs gid: {gid_line}");

    let out = acct.run(&[tier1.join("tea").to_str().unwrap(), "issues", "list"], &[("PATH", &path)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "issues list\n");

    // The gate still refuses what the tier does not allow, and logs every decision.
    let out = acct.run(&[tier1.join("docker").to_str().unwrap(), "restart", "api"], &[("PATH", &path)]);
    assert_eq!(out.status.code(), Some(77), "{}", text(&out.stderr));
    let records = inst.audit_records();
    let verdicts: Vec<&str> = records.iter().map(|r| r["verdict"].as_str().unwrap()).collect();
    assert_eq!(verdicts, vec!["allow", "allow", "allow", "refuse"]);

    // The restricted shell does not hand the group to the agent's shell.
    inst.forget_runs();
    let out = acct.run(
        &[
            inst.tiershim().to_str().unwrap(),
            "shell",
            "--tier",
            "1",
            "-c",
            "(CLAUDEOPS_TIER=3); id -G; docker ps",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The profile was read (bash skips startup files while it holds a group it was not given).
    assert!(
        text(&out.stderr).contains("CLAUDEOPS_TIER: readonly variable"),
        "{}",
        text(&out.stderr)
    );
    let stdout = text(&out.stdout);
    let groups: Vec<u32> = stdout
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .map(|g| g.parse().unwrap())
        .collect();
    assert!(!groups.contains(&tsg), "{stdout}");
    assert!(stdout.ends_with("stub docker ran\n"), "{stdout}");
    assert_eq!(inst.ungated_runs(), vec![]);

    // The doctor agrees, for this user.
    let sys = inst.tmp.path().join("sys");
    std::fs::create_dir(&sys).unwrap();
    let doctor = || {
        let out = Command::new(inst.tiershim())
            .args([
                "doctor",
                "--prefix",
                inst.prefix.to_str().unwrap(),
                "--user",
                &acct.user,
                "--system-path",
            ])
            .arg(&sys)
            .output()
            .unwrap();
        (out.status.code(), text(&out.stdout))
    };
    let (code, report) = doctor();
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report.contains(&format!("is setgid {}, owned by root (hardened)", acct.group)),
        "{report}"
    );
    assert!(report.contains("is appended by the gate only"), "{report}");

    // A config the user owns: the hardened gate refuses it, and the doctor says so.
    let cfg = tier1.join("tiershim.yaml");
    std::os::unix::fs::chown(&cfg, Some(acct.uid), None).unwrap();
    let out = acct.run(&[tier1.join("docker").to_str().unwrap(), "ps"], &[("PATH", &path)]);
    assert_eq!(out.status.code(), Some(78), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("must be owned by root in a hardened install"),
        "{}",
        text(&out.stderr)
    );
    let (code, report) = doctor();
    assert_eq!(code, Some(78));
    assert!(
        report.contains("is not owned by root, so the hardened gate refuses every call"),
        "{report}"
    );
    std::os::unix::fs::chown(&cfg, Some(0), None).unwrap();

    // The agent's user in the group: it could reach everything.
    must(Command::new("gpasswd").args(["-a", &acct.user, &acct.group]));
    let (code, report) = doctor();
    assert_eq!(code, Some(78));
    assert!(
        report.contains(&format!(
            "is in group {}, so it reaches the real tools without the gate",
            acct.group
        )),
        "{report}"
    );
    must(Command::new("gpasswd").args(["-d", &acct.user, &acct.group]));

    // A pull request: the gate runs the real git itself (as the user, without the group) to
    // find the files it changes, and refuses the one that touches a Dockerfile.
    let work = repos.path().join("infra");
    std::fs::create_dir_all(&work).unwrap();
    let g = |args: &[&str]| {
        must(
            Command::new(system_git)
                .args(args)
                .current_dir(&work)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@example.com")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@example.com"),
        )
    };
    g(&["init", "-q", "-b", "main"]);
    std::fs::write(work.join("README.md"), "infra\n").unwrap();
    g(&["add", "-A"]);
    g(&["commit", "-q", "-m", "base"]);
    g(&["remote", "add", "origin", "https://github.com/ops/infra.git"]);
    g(&["update-ref", "refs/remotes/origin/main", "main"]);
    g(&["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]);
    g(&["switch", "-q", "-c", "feat"]);
    std::fs::write(work.join("Dockerfile"), "FROM scratch\n").unwrap();
    g(&["add", "-A"]);
    g(&["commit", "-q", "-m", "change"]);
    must(
        Command::new("chown")
            .args(["-R", &format!("{}:{}", acct.uid, acct.gid)])
            .arg(repos.path()),
    );
    inst.forget_runs();
    let tier2 = inst.tier_dir(2);
    let path2 = tier2.display().to_string();
    let out = acct.run_in(
        &work,
        &[tier2.join("gh").to_str().unwrap(), "pr", "create", "-t", "t", "-b", "b"],
        &[("PATH", &path2), ("CLAUDEOPS_TIER", "2")],
    );
    assert_eq!(out.status.code(), Some(77), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("SCOPE VIOLATION: Refusing to create PR modifying Dockerfile"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(inst.runs(), vec![]);
    let gid_lines = std::fs::read_to_string(&git_gids).unwrap();
    let _ = std::fs::remove_file(&git_gids);
    assert!(!gid_lines.is_empty(), "the gate did not run git");
    for l in gid_lines.lines() {
        let gids: Vec<u32> = l.split_whitespace().skip(1).map(|g| g.parse().unwrap()).collect();
        assert_eq!(gids, vec![acct.gid; 4], "git ran with: {l}");
    }

    // The cooldown state: only root and the gate's group reach it. The agent's user can neither
    // read nor reset it, directly or with the admin CLI (which drops the group); the gate counts
    // an allowed restart in it.
    let state_dir = state.parent().unwrap();
    let m = std::fs::metadata(state_dir).unwrap();
    assert_eq!((m.mode() & 0o7777, m.uid(), m.gid()), (0o2770, 0, tsg));
    for f in [state.clone(), tiershim::cooldown::store::lock_path(&state)] {
        let m = std::fs::metadata(&f).unwrap();
        assert_eq!((m.mode() & 0o7777, m.uid(), m.gid()), (0o660, 0, tsg), "{}", f.display());
    }
    let out = acct.run(
        &[tier2.join("docker").to_str().unwrap(), "restart", "api"],
        &[("PATH", &path2), ("CLAUDEOPS_TIER", "2")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let counted: serde_json::Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    assert_eq!(counted["services"]["api"]["restart_timestamps"].as_array().unwrap().len(), 1);
    for argv in [
        vec!["/bin/cat", state.to_str().unwrap()],
        vec!["/bin/sh", "-c", &format!("echo '{{}}' > {}", state.display())],
        vec!["/bin/sh", "-c", &format!("echo '{{}}' > {}/new", state_dir.display())],
    ] {
        let out = acct.run(&argv, &[]);
        assert!(!out.status.success(), "{argv:?} succeeded");
        assert!(text(&out.stderr).contains("Permission denied"), "{argv:?}: {}", text(&out.stderr));
    }
    let cfg2 = tier2.join("tiershim.yaml");
    let out = acct.run(
        &[
            inst.tiershim().to_str().unwrap(),
            "cooldown",
            "--config",
            cfg2.to_str().unwrap(),
            "reset",
            "api",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(78), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("Permission denied"), "{}", text(&out.stderr));
    let after: serde_json::Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    assert_eq!(after, counted);
    let (code, report) = doctor();
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report.contains(&format!("cooldown state {} is written by the gate only", state.display())),
        "{report}"
    );

    // Re-running the hardened install changes nothing.
    let before = crate::install::snapshot(&inst.prefix);
    let r = inst.reinstall(&hardening);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(crate::install::snapshot(&inst.prefix), before);
    assert!(Path::new(&inst.audit).exists());
}

#[test]
fn uninstall_puts_back_every_owner_and_mode_harden_changed_and_removes_what_it_made() {
    if !nix::unistd::getuid().is_root() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("the --harden test must run as root under CI (it creates a group)");
        }
        eprintln!("SKIPPED uninstall_puts_back_…: not root");
        return;
    }
    // A group install.sh makes (so --uninstall removes it), an owner for what existed before.
    let group = format!("ts{}h", std::process::id());
    // Removed if the test stops before --uninstall does it.
    struct Cleanup(String);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = Command::new("groupdel").arg(&self.0).output();
        }
    }
    let _cleanup = Cleanup(group.clone());
    let acct = Account::create();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let prefix = tmp.path().join("p");
    // The prefix's bin/ existed, the operator's, group-writable; an audit log existed too.
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::os::unix::fs::chown(prefix.join("bin"), Some(acct.uid), Some(acct.gid)).unwrap();
    std::fs::set_permissions(prefix.join("bin"), std::os::unix::fs::PermissionsExt::from_mode(0o775)).unwrap();
    let logs = tmp.path().join("log");
    std::fs::create_dir(&logs).unwrap();
    let audit = logs.join("audit.jsonl");
    std::fs::write(&audit, "").unwrap();
    std::os::unix::fs::chown(&audit, Some(acct.uid), Some(acct.gid)).unwrap();
    std::fs::set_permissions(&audit, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    // Real tools, readable and runnable by everyone.
    let real = tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    for t in crate::installed::tools() {
        crate::harness::write_exec(&real.join(&t), "#!/bin/sh\necho real\n");
    }
    let state = tmp.path().join("state/cooldown.json");
    // The operator's own tool home, with a file in it: --harden makes both root's.
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join(".gitconfig"), "[user]\n").unwrap();
    for (p, mode) in [(&home, 0o775), (&home.join(".gitconfig"), 0o664)] {
        std::os::unix::fs::chown(p, Some(acct.uid), Some(acct.gid)).unwrap();
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    }
    let before_bin = std::fs::metadata(prefix.join("bin")).unwrap();
    let r = crate::installed::run_install(&[
        "--prefix",
        prefix.to_str().unwrap(),
        "--real-dir",
        real.to_str().unwrap(),
        "--audit-log",
        audit.to_str().unwrap(),
        "--cooldown-state",
        state.to_str().unwrap(),
        "--tool-home",
        home.to_str().unwrap(),
        "--harden",
        "--group",
        &group,
    ]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    // What --harden changed.
    assert_eq!(std::fs::metadata(real.join("docker")).unwrap().mode() & 0o7777, 0o750);
    let m = std::fs::metadata(prefix.join("bin")).unwrap();
    assert_eq!((m.uid(), m.mode() & 0o022), (0, 0));
    assert_eq!(std::fs::metadata(&audit).unwrap().mode() & 0o7777, 0o660);
    assert_eq!(std::fs::metadata(home.join(".gitconfig")).unwrap().uid(), 0);
    // A second run records nothing new: the first run's owners and modes are what comes back.
    let r2 = crate::installed::run_install(&[
        "--prefix",
        prefix.to_str().unwrap(),
        "--real-dir",
        real.to_str().unwrap(),
        "--audit-log",
        audit.to_str().unwrap(),
        "--cooldown-state",
        state.to_str().unwrap(),
        "--tool-home",
        home.to_str().unwrap(),
        "--harden",
        "--group",
        &group,
    ]);
    assert_eq!(r2.code(), 0, "{}", r2.stderr());

    let r = crate::installed::run_install(&["--uninstall", "--prefix", prefix.to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(r.stdout().contains(&format!("and group {group}")), "{}", r.stdout());
    // Every mode and owner it changed is back.
    for t in crate::installed::tools() {
        assert_eq!(std::fs::metadata(real.join(&t)).unwrap().mode() & 0o7777, 0o755, "{t}");
    }
    let m = std::fs::metadata(prefix.join("bin")).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (before_bin.uid(), before_bin.gid(), 0o775));
    let m = std::fs::metadata(&audit).unwrap();
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (acct.uid, acct.gid, 0o644));
    for (p, mode) in [(&home, 0o775), (&home.join(".gitconfig"), 0o664)] {
        let m = std::fs::metadata(p).unwrap();
        assert_eq!((m.uid(), m.gid(), m.mode() & 0o7777), (acct.uid, acct.gid, mode), "{}", p.display());
    }
    // What it made is gone (bin/ was the operator's and stays, empty); the group too; the
    // cooldown state it made is data: kept, and root's.
    assert_eq!(std::fs::read_dir(prefix.join("bin")).unwrap().count(), 0);
    assert!(!prefix.join("lib").exists());
    assert!(
        !std::fs::read_to_string("/etc/group")
            .unwrap()
            .lines()
            .any(|l| l.starts_with(&format!("{group}:")))
    );
    let m = std::fs::metadata(&state).unwrap();
    assert_eq!(m.gid(), 0);
    assert!(
        r.stderr()
            .contains(&format!("kept (data, not installation): {}", state.parent().unwrap().display())),
        "{}",
        r.stderr()
    );
}
