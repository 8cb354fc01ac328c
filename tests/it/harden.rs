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
        self.command_in(dir, argv, env).output().unwrap()
    }

    /// The command [`Account::run_in`] runs, to spawn: `setpriv` execs `argv` in the same
    /// process, so the child's pid is the program's (and, through the gate, the real tool's).
    pub fn command_in(&self, dir: &Path, argv: &[&str], env: &[(&str, &str)]) -> Command {
        // By absolute path: `env` may set PATH for the child, and Command would search that.
        let mut c = Command::new("/usr/bin/setpriv");
        c.arg(format!("--reuid={}", self.uid))
            .arg(format!("--regid={}", self.gid))
            .arg("--init-groups")
            .arg("--")
            .args(argv)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .envs(env.iter().copied())
            .current_dir(dir);
        c
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
    let doctor = || inst.doctor_for(&acct.user);
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

/// A PostgreSQL server on 127.0.0.1 that takes each connection as far as the startup message,
/// says so, and holds it until released; then asks for the password in clear text (recording
/// it), lets the client in and answers one query with the single row `1`.
struct HeldPostgres {
    port: u16,
    connected: std::sync::mpsc::Receiver<()>,
    release: std::sync::mpsc::Sender<()>,
    passwords: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl HeldPostgres {
    fn start() -> HeldPostgres {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (connected_tx, connected) = std::sync::mpsc::channel();
        let (release, release_rx) = std::sync::mpsc::channel::<()>();
        let passwords = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = std::sync::Arc::clone(&passwords);
        std::thread::spawn(move || {
            let msg = |tag: u8, body: &[u8]| -> Vec<u8> {
                let mut m = vec![tag];
                m.extend_from_slice(&u32::try_from(body.len() + 4).unwrap().to_be_bytes());
                m.extend_from_slice(body);
                m
            };
            fn read_n(s: &mut std::net::TcpStream, n: usize) -> Option<Vec<u8>> {
                let mut b = vec![0u8; n];
                s.read_exact(&mut b).ok().map(|_| b)
            }
            fn read_msg(s: &mut std::net::TcpStream) -> Option<(u8, Vec<u8>)> {
                let head = read_n(s, 5)?;
                let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
                Some((head[0], read_n(s, len.saturating_sub(4))?))
            }
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { continue };
                if !crate::fence::pg_startup(&mut s) {
                    continue;
                }
                let _ = connected_tx.send(());
                if release_rx.recv().is_err() {
                    return;
                }
                let _ = s.write_all(&msg(b'R', &3u32.to_be_bytes()));
                let Some((b'p', pw)) = read_msg(&mut s) else { continue };
                log.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&pw).trim_end_matches('\0').to_string());
                let mut out = msg(b'R', &0u32.to_be_bytes());
                for (k, v) in [
                    ("server_version", "16.0"),
                    ("client_encoding", "UTF8"),
                    ("standard_conforming_strings", "on"),
                ] {
                    out.extend(msg(b'S', format!("{k}\0{v}\0").as_bytes()));
                }
                out.extend(msg(b'K', &[0, 0, 0, 1, 0, 0, 0, 2]));
                out.extend(msg(b'Z', b"I"));
                let _ = s.write_all(&out);
                while let Some((tag, _)) = read_msg(&mut s) {
                    if tag != b'Q' {
                        break;
                    }
                    let mut row = Vec::new();
                    row.extend_from_slice(&1u16.to_be_bytes());
                    row.extend_from_slice(b"?column?\0");
                    row.extend_from_slice(&0u32.to_be_bytes());
                    row.extend_from_slice(&0u16.to_be_bytes());
                    row.extend_from_slice(&23u32.to_be_bytes());
                    row.extend_from_slice(&4u16.to_be_bytes());
                    row.extend_from_slice(&(-1i32).to_be_bytes());
                    row.extend_from_slice(&0u16.to_be_bytes());
                    let mut out = msg(b'T', &row);
                    out.extend(msg(b'D', &[0, 1, 0, 0, 0, 1, b'1']));
                    out.extend(msg(b'C', b"SELECT 1\0"));
                    out.extend(msg(b'Z', b"I"));
                    let _ = s.write_all(&out);
                }
            }
        });
        HeldPostgres {
            port,
            connected,
            release,
            passwords,
        }
    }

    /// Wait until a client has sent its startup message (a guard against a hang, not a timing).
    fn wait_connected(&self) {
        self.connected
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("psql did not connect to the held server");
    }
}

/// What the agent's user gets reading `/proc/<pid>/<file>` of another of its processes.
fn agent_reads(acct: &Account, pid: u32, file: &str) -> (bool, String) {
    let out = acct.run(&["/usr/bin/head", "-c", "4096", &format!("/proc/{pid}/{file}")], &[]);
    (
        out.status.success(),
        format!("{}{}", text(&out.stdout).replace('\0', " "), text(&out.stderr)),
    )
}

#[test]
fn a_hardened_real_tool_holding_a_pinned_secret_keeps_its_environment_and_memory_from_the_agents_other_processes() {
    if !nix::unistd::getuid().is_root() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("the --harden test must run as root under CI (it creates a group and a user)");
        }
        eprintln!("SKIPPED a_hardened_real_tool_…: not root; run the tests as root to check --harden");
        return;
    }
    let acct = Account::create_tagged("env");
    let tsg = acct.group_gid();
    let pg = HeldPostgres::start();
    let port = format!("PGPORT={}", pg.port);
    let user = format!("PGUSER={}", acct.user);
    // The real psql (an ELF binary), and the stubs of the other tools (scripts).
    let psql = ["/usr/lib/postgresql"]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|rd| rd.flatten().map(|e| e.path().join("bin/psql")))
        .find(|p| p.is_file());
    let Some(psql) = psql else {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "no real psql under /usr/lib/postgresql (scripts/test-deps.sh installs it)"
        );
        eprintln!("SKIPPED a_hardened_real_tool_…: no real psql");
        return;
    };
    let inst = Installed::new_with(
        &[
            "--harden",
            "--group",
            &acct.group,
            "--env",
            "PGHOST=127.0.0.1",
            "--env",
            &port,
            "--env",
            &user,
            "--env",
            "PGDATABASE=app",
            "--secret",
            "PGPASSWORD=pinned-secret-pw",
        ],
        |real, _| {
            std::fs::copy(&psql, real.join("psql")).unwrap();
        },
    );
    let real_dir = inst.prefix.join("lib/tiershim/real");
    // The layout: a binary is executable by others and readable by the group only; a script
    // stays readable (its interpreter opens it again as the caller).
    let m = std::fs::metadata(real_dir.join("psql")).unwrap();
    assert_eq!((m.mode() & 0o7777, m.uid(), m.gid()), (0o751, 0, tsg));
    let m = std::fs::metadata(real_dir.join("docker")).unwrap();
    assert_eq!((m.mode() & 0o7777, m.uid(), m.gid()), (0o755, 0, 0));

    let tier1 = inst.tier_dir(1);
    let path = tier1.display().to_string();
    let gated_psql = |pg: &HeldPostgres| -> (std::process::Child, u32) {
        let child = acct
            .command_in(
                Path::new("/"),
                &[tier1.join("psql").to_str().unwrap(), "-c", "select 1"],
                &[("PATH", &path)],
            )
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        pg.wait_connected();
        let pid = child.id();
        (child, pid)
    };

    // psql holds the pinned password in its environment and waits on the server.
    let (child, pid) = gated_psql(&pg);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let uid_line = status.lines().find(|l| l.starts_with("Uid:")).unwrap().to_string();
    assert_eq!(
        uid_line.split_whitespace().skip(1).collect::<Vec<_>>(),
        vec![acct.uid.to_string(); 4],
        "the real tool runs as the agent's user: {uid_line}"
    );
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    assert!(
        text(&environ).split('\0').any(|v| v == "PGPASSWORD=pinned-secret-pw"),
        "root sees the secret the gate handed psql"
    );
    // The agent's user, from another of its processes: environment, memory and descriptors
    // closed; the command line (which holds no secret) open, as for any process.
    for file in ["environ", "mem", "fd/0", "maps"] {
        let (ok, said) = agent_reads(&acct, pid, file);
        assert!(!ok && said.contains("Permission denied"), "{file}: {said}");
        assert!(!said.contains("pinned-secret-pw"), "{file}: {said}");
    }
    let (ok, said) = agent_reads(&acct, pid, "cmdline");
    assert!(ok && said.contains("select 1") && !said.contains("pinned-secret-pw"), "{said}");
    let out = acct.run(&["/usr/bin/cat", real_dir.join("psql").to_str().unwrap()], &[]);
    assert!(!out.status.success());
    // And the same psql works: the server gets the pinned password and psql its row.
    pg.release.send(()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("(1 row)"), "{}", text(&out.stdout));
    assert_eq!(*pg.passwords.lock().unwrap(), ["pinned-secret-pw"]);

    // The same call with the copy readable by the agent (as it was before): the kernel leaves
    // psql dumpable, and the agent reads the secret out of its environment.
    std::fs::set_permissions(real_dir.join("psql"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (child, pid) = gated_psql(&pg);
    let (ok, said) = agent_reads(&acct, pid, "environ");
    assert!(ok && said.contains("PGPASSWORD=pinned-secret-pw"), "{said}");
    pg.release.send(()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // The doctor fails that install, naming the file and the fix; re-running install.sh mends it.
    let doctor = || inst.doctor_for(&acct.user);
    let (code, report) = doctor();
    assert_eq!(code, Some(78), "{report}");
    assert!(
        report.contains(&format!("{} can be read by user {}", real_dir.join("psql").display(), acct.user)) && report.contains("chmod 0751"),
        "{report}"
    );
    let r = inst.reinstall(&[
        "--harden",
        "--group",
        &acct.group,
        "--env",
        "PGHOST=127.0.0.1",
        "--env",
        &port,
        "--env",
        &user,
        "--env",
        "PGDATABASE=app",
        "--secret",
        "PGPASSWORD=pinned-secret-pw",
    ]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let (code, report) = doctor();
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report.contains("nor read it (so its environment and memory are closed to the agent while it runs)"),
        "{report}"
    );
    assert!(
        report.contains("is a script, which its interpreter opens again as the caller"),
        "{report}"
    );
}

/// An HTTP server on 127.0.0.1 serving one repository the dumb way (`info/refs`): it holds the
/// first request until released, records every request's head, and answers 404 to the rest.
struct HeldGitHttp {
    port: u16,
    connected: std::sync::mpsc::Receiver<()>,
    release: std::sync::mpsc::Sender<()>,
    heads: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl HeldGitHttp {
    const REFS: &'static str = "1111111111111111111111111111111111111111\trefs/heads/main\n";

    fn start() -> HeldGitHttp {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (connected_tx, connected) = std::sync::mpsc::channel();
        let (release, release_rx) = std::sync::mpsc::channel::<()>();
        let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = std::sync::Arc::clone(&heads);
        std::thread::spawn(move || {
            let mut held = false;
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { continue };
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && s.read_exact(&mut b).is_ok() {
                    head.push(b[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                log.lock().unwrap().push(head.clone());
                if !held {
                    held = true;
                    let _ = connected_tx.send(());
                    if release_rx.recv().is_err() {
                        return;
                    }
                }
                let reply = if head.starts_with("GET /r.git/info/refs") {
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                        Self::REFS.len(),
                        Self::REFS
                    )
                } else {
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string()
                };
                let _ = s.write_all(reply.as_bytes());
            }
        });
        HeldGitHttp {
            port,
            connected,
            release,
            heads,
        }
    }
}

/// The processes whose parent is `pid` (from /proc, as root).
fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|st| {
                // `pid (comm) state ppid …`: comm may hold spaces, so split after the last ')'.
                st.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

#[test]
fn a_hardened_git_and_its_http_helper_keep_a_pinned_header_from_the_agents_other_processes() {
    if !nix::unistd::getuid().is_root() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("the --harden test must run as root under CI (it creates a group and a user)");
        }
        eprintln!("SKIPPED a_hardened_git_…: not root; run the tests as root to check --harden");
        return;
    }
    let acct = Account::create_tagged("gitenv");
    let tsg = acct.group_gid();
    let srv = HeldGitHttp::start();
    let git = crate::real_tools::which("git");
    let inst = Installed::new_with(
        &[
            "--harden",
            "--group",
            &acct.group,
            "--env",
            "GIT_CONFIG_COUNT=1",
            "--env",
            "GIT_CONFIG_KEY_0=http.extraheader",
            "--secret",
            "GIT_CONFIG_VALUE_0=Authorization: Bearer pinned-git-token",
        ],
        |real, _| {
            std::fs::copy(&git, real.join("git")).unwrap();
        },
    );
    // git's exec path is copied beside the real tools, its helpers closed as git is, and pinned.
    let git_core = inst.prefix.join("lib/tiershim/git-core");
    let m = std::fs::metadata(git_core.join("git-remote-http")).unwrap();
    assert_eq!((m.mode() & 0o7777, m.uid(), m.gid()), (0o751, 0, tsg));
    let cfg = std::fs::read_to_string(inst.tier_dir(1).join("tiershim.yaml")).unwrap();
    assert!(cfg.contains(&format!("GIT_EXEC_PATH: '{}'", git_core.display())), "{cfg}");
    assert!(!cfg.contains("pinned-git-token"));

    let tier1 = inst.tier_dir(1);
    let path = tier1.display().to_string();
    let url = format!("http://127.0.0.1:{}/r.git", srv.port);
    let child = acct
        .command_in(
            Path::new("/"),
            &[tier1.join("git").to_str().unwrap(), "ls-remote", &url],
            &[("PATH", &path)],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    srv.connected
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("git did not reach the held server");
    let pid = child.id();
    // git runs `git remote-http`, which runs git-remote-http: every process under git.
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        tree.extend(children_of(tree[i]));
        i += 1;
    }
    let exes: Vec<_> = tree.iter().map(|p| std::fs::read_link(format!("/proc/{p}/exe")).unwrap()).collect();
    assert!(exes.contains(&git_core.join("git-remote-http")), "{exes:?}");
    for &p in &tree {
        let environ = std::fs::read(format!("/proc/{p}/environ")).unwrap();
        assert!(text(&environ).contains("pinned-git-token"), "root sees the pinned header in {p}");
        for file in ["environ", "mem", "fd/0"] {
            let (ok, said) = agent_reads(&acct, p, file);
            assert!(!ok && said.contains("Permission denied"), "{p} {file}: {said}");
            assert!(!said.contains("pinned-git-token"), "{p} {file}: {said}");
        }
    }
    // And git works: the server got the pinned header, git its refs.
    srv.release.send(()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), HeldGitHttp::REFS);
    let heads = srv.heads.lock().unwrap().clone();
    assert!(
        heads[0].starts_with("GET /r.git/info/refs") && heads[0].contains("Authorization: Bearer pinned-git-token"),
        "{heads:?}"
    );

    // The doctor checks the copy: closed, and a helper the agent can read is a failure.
    let doctor = || inst.doctor_for(&acct.user);
    let (code, report) = doctor();
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report.contains(&format!(
            "git runs its helpers from {} (GIT_EXEC_PATH), whose binaries",
            git_core.display()
        )),
        "{report}"
    );
    let helper = git_core.join("git-remote-http");
    std::fs::set_permissions(&helper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (code, report) = doctor();
    assert_eq!(code, Some(78), "{report}");
    assert!(
        report.contains(&format!("{} can be read by user {}", helper.display(), acct.user)),
        "{report}"
    );

    // Uninstalled, the copy is gone with the rest.
    let r = crate::installed::run_install(&["--uninstall", "--prefix", inst.prefix.to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!git_core.exists());
}
