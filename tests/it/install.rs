//! install.sh: the layout it writes, that running it again changes nothing, that it never
//! deletes or overwrites what it did not create, and that it refuses bad arguments and a bad
//! passthrough list before changing anything.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::bin;
use crate::installed::{Installed, repo, run_install, tools};

/// Every path under `root` with its type, mode, owner, link target, and for files the inode,
/// size and modification time: two equal snapshots mean nothing was written or replaced.
pub fn snapshot(root: &Path) -> Vec<String> {
    fn walk(p: &Path, out: &mut Vec<String>) {
        let m = std::fs::symlink_metadata(p).unwrap();
        let what = if m.file_type().is_symlink() {
            format!("-> {}", std::fs::read_link(p).unwrap().display())
        } else if m.is_dir() {
            let mut names: Vec<PathBuf> = std::fs::read_dir(p).unwrap().map(|e| e.unwrap().path()).collect();
            names.sort();
            for n in &names {
                walk(n, out);
            }
            "dir".into()
        } else {
            let bytes = std::fs::read(p).unwrap();
            let sum: u64 = bytes
                .iter()
                .fold(1469598103934665603u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(1099511628211));
            format!("file {sum:x} mtime {}.{}", m.mtime(), m.mtime_nsec())
        };
        out.push(format!("{} {:o} {}:{} {what}", p.display(), m.mode() & 0o7777, m.uid(), m.gid()));
    }
    let mut out = Vec::new();
    walk(root, &mut out);
    out
}

fn passthrough_names(tier: u8) -> Vec<String> {
    std::fs::read_to_string(repo().join("shims/passthrough"))
        .unwrap()
        .lines()
        .filter_map(|l| {
            let l = l.split('#').next().unwrap().trim();
            let mut f = l.split_whitespace();
            let name = f.next()?;
            let tiers = f.next()?;
            tiers.split(',').any(|t| t == tier.to_string()).then(|| name.to_string())
        })
        .collect()
}

fn system_program(name: &str) -> Option<PathBuf> {
    ["/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

#[test]
fn install_lays_out_binary_tiers_links_passthrough_config_and_profile() {
    let inst = Installed::new(&["--env", "DOCKER_HOST=unix:///run/it's.sock", "--dry-run-pin"]);
    let bin_meta = std::fs::metadata(inst.tiershim()).unwrap();
    assert_eq!(bin_meta.mode() & 0o7777, 0o755);
    assert_eq!(std::fs::read(inst.tiershim()).unwrap(), std::fs::read(bin()).unwrap());
    for n in 1..=3u8 {
        let dir = inst.tier_dir(n);
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o7777, 0o755);
        for t in tools() {
            assert_eq!(
                std::fs::read_link(dir.join(&t)).unwrap(),
                PathBuf::from("../../../bin/tiershim"),
                "{t}"
            );
        }
        let mut linked = 0;
        for name in passthrough_names(n) {
            match system_program(&name) {
                Some(p) => {
                    assert_eq!(std::fs::read_link(dir.join(&name)).unwrap(), p, "{name}");
                    linked += 1;
                }
                None => assert!(!dir.join(&name).exists(), "{name}"),
            }
        }
        assert!(linked > 20, "{linked}");

        let cfg = std::fs::read_to_string(dir.join("tiershim.yaml")).unwrap();
        let mut want = format!(
            "# yaml-language-server: $schema=../tiershim.schema.json\n# Written by install.sh; re-running it rewrites this file.\ntier: {n}\ndry_run: true\naudit_log: '{}'\nkernel_fence: off\ntool_home: '{}'\nskills:\n  baseline: '{}'\nreal:\n",
            inst.audit.display(),
            inst.prefix.join("lib/tiershim/home").display(),
            inst.prefix.join("lib/tiershim/skills").display()
        );
        for t in tools() {
            want.push_str(&format!("  {t}: '{}'\n", inst.real.join(&t).display()));
        }
        want.push_str("env:\n  DOCKER_HOST: 'unix:///run/it''s.sock'\n");
        assert_eq!(cfg, want);

        let profile = std::fs::read_to_string(dir.join("profile")).unwrap();
        assert!(profile.contains(&format!("PATH='{}'\n", dir.display())), "{profile}");
        assert!(profile.contains(&format!("CLAUDEOPS_TIER={n}\n")), "{profile}");
        assert!(!profile.contains('@'), "{profile}");

        let wrapper = std::fs::read_to_string(inst.prefix.join(format!("bin/rbash-tier{n}"))).unwrap();
        assert!(
            wrapper.ends_with(&format!("exec {}/bin/tiershim shell --tier {n} \"$@\"\n", inst.prefix.display())),
            "{wrapper}"
        );
    }
    // The schema each tiershim.yaml names, for editors.
    assert_eq!(
        std::fs::read(inst.prefix.join("lib/tiershim/tiershim.schema.json")).unwrap(),
        std::fs::read(repo().join("dist/tiershim.schema.json")).unwrap()
    );
    // The shipped skills, installed as the baseline.
    let shipped: Vec<String> = std::fs::read_dir(repo().join("skills"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(shipped.len() >= 6);
    for f in &shipped {
        assert_eq!(
            std::fs::read(inst.prefix.join("lib/tiershim/skills").join(f)).unwrap(),
            std::fs::read(repo().join("skills").join(f)).unwrap(),
            "{f}"
        );
    }
    // The pinned values are what the gate uses.
    let out = Command::new(inst.tiershim())
        .args(["explain", "--config"])
        .arg(inst.tier_dir(2).join("tiershim.yaml"))
        .args(["--tier", "2", "--", "docker", "restart", "api"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("verdict:        dry-run"));
}

#[test]
fn running_install_again_changes_nothing() {
    let inst = Installed::new(&["--tiers", "1,2"]);
    let before = snapshot(&inst.prefix);
    let r = inst.reinstall(&["--tiers", "1,2"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(snapshot(&inst.prefix), before);
}

#[test]
fn install_converges_and_never_removes_what_it_did_not_create() {
    let inst = Installed::new(&[]);
    // Someone else's files inside the installation.
    let note = inst.tier_dir(1).join("NOTES.txt");
    std::fs::write(&note, "operator notes\n").unwrap();
    let keep3 = inst.tier_dir(3).join("keep-me");
    std::fs::write(&keep3, "x").unwrap();
    // A tool link removed by hand comes back; a changed config is rewritten.
    std::fs::remove_file(inst.tier_dir(2).join("docker")).unwrap();
    std::fs::write(inst.tier_dir(2).join("tiershim.yaml"), "tier: 3\n").unwrap();

    let r = inst.reinstall(&["--tiers", "1,2"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "operator notes\n");
    assert!(std::fs::read_link(inst.tier_dir(2).join("docker")).is_ok());
    assert!(
        std::fs::read_to_string(inst.tier_dir(2).join("tiershim.yaml"))
            .unwrap()
            .contains("tier: 2\n")
    );
    // tier3 is no longer wanted: what install.sh made there is gone, the rest stays.
    let left: Vec<String> = std::fs::read_dir(inst.tier_dir(3))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["keep-me".to_string()]);
    assert!(!inst.prefix.join("bin/rbash-tier3").exists());
    assert!(r.stderr().contains("left "), "{}", r.stderr());

    // Without the foreign file, the directory goes too.
    std::fs::remove_file(&keep3).unwrap();
    let r = inst.reinstall(&["--tiers", "1,2,3"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let r = inst.reinstall(&["--tiers", "1"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!inst.tier_dir(3).exists());
    assert!(!inst.tier_dir(2).exists());
    assert!(inst.tier_dir(1).join("NOTES.txt").exists());
}

#[test]
fn install_refuses_to_overwrite_a_path_it_did_not_create_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("p");
    let tier1 = prefix.join("lib/tiershim/tier1");
    std::fs::create_dir_all(&tier1).unwrap();
    std::fs::write(tier1.join("tiershim.yaml"), "tier: 1\n# hand-written\n").unwrap();
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    let p = prefix.display().to_string();
    let r = run_install(&["--prefix", &p]);
    assert_eq!(r.code(), 1, "{}", r.stderr());
    assert!(
        r.stderr().contains(&format!(
            "{} exists and was not made by install.sh",
            tier1.join("tiershim.yaml").display()
        )),
        "{}",
        r.stderr()
    );
    assert_eq!(
        std::fs::read_to_string(tier1.join("tiershim.yaml")).unwrap(),
        "tier: 1\n# hand-written\n"
    );
    assert!(!prefix.join("bin/tiershim").exists());
    assert_eq!(std::fs::read_dir(&tier1).unwrap().count(), 1);
}

#[test]
fn install_refuses_bad_arguments_before_changing_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p").display().to_string();
    let spaced = tmp.path().join("my prefix").display().to_string();
    for (args, want) in [
        (vec!["--prefix", &spaced], "use letters, digits and . _ / + - only"),
        (vec!["--prefix", &p, "--tiers", "1,4"], "tier 4 is not 1, 2 or 3"),
        (vec!["--prefix", &p, "--env", "1X=y"], "not NAME=VALUE"),
        (vec!["--prefix", &p, "--env", "NOVALUE"], "not NAME=VALUE"),
        (vec!["--prefix", &p, "--group", "Bad Group"], "--group Bad Group"),
        (
            vec!["--prefix", &p, "--skills", "/nonexistent"],
            "--skills /nonexistent is not a directory",
        ),
        (
            vec!["--prefix", &p, "--repos", "/nonexistent"],
            "--repos /nonexistent is not a directory",
        ),
        (
            vec!["--prefix", &p, "--host", "-oProxyCommand=x"],
            "--host -oProxyCommand=x: a host name",
        ),
        (vec!["--prefix", &p, "--host", "a b"], "--host a b: a host name"),
        (
            vec!["--prefix", &p, "--cooldown-lock-wait", "ten"],
            "--cooldown-lock-wait ten: a whole number",
        ),
        (vec!["--prefix", &p, "--bogus"], "unknown argument --bogus"),
        (vec!["--prefix", &p, "--env", "GH_TOKEN=ghp_x"], "--env GH_TOKEN=…: a credential"),
        (
            vec!["--prefix", &p, "--env", "HTTPS_PROXY=http://u:pw@proxy:3128"],
            "holds a URL password",
        ),
        (vec!["--prefix", &p, "--secret", "bad name=x"], "is not a variable name"),
        (
            vec!["--prefix", &p, "--tool-home", "/"],
            "--tool-home /: name a directory of its own",
        ),
        (vec!["--tiers", "1"], "--prefix is required"),
        (vec!["--prefix"], "--prefix needs a value"),
    ] {
        let r = run_install(&args);
        assert_eq!(r.code(), 2, "{args:?}: {}", r.stderr());
        assert!(r.stderr().contains(want), "{args:?}: {}", r.stderr());
    }
    assert!(!tmp.path().join("p").exists());
}

#[test]
fn install_harden_refuses_to_run_without_root() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("p").display().to_string();
    let mut c = Command::new(repo().join("install.sh"));
    c.args(["--binary", bin().to_str().unwrap(), "--prefix", &p, "--harden"]);
    if nix::unistd::getuid().is_root() {
        // As root, ask as an unprivileged user, with a copy of install.sh it can read.
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let script = tmp.path().join("install.sh");
        std::fs::copy(repo().join("install.sh"), &script).unwrap();
        let mut s = Command::new("setpriv");
        s.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/bin/sh"])
            .arg(&script);
        s.args(["--binary", bin().to_str().unwrap(), "--prefix", &p, "--harden"]);
        c = s;
    }
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--harden must run as root"));
    assert!(!tmp.path().join("p").exists());
}

#[test]
fn a_passthrough_list_with_an_exec_capable_program_stops_the_install() {
    // A copy of the repository's install inputs, with awk added to the passthrough list.
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(src.join("shims")).unwrap();
    std::fs::copy(repo().join("install.sh"), src.join("install.sh")).unwrap();
    std::fs::set_permissions(src.join("install.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    for f in ["tools", "profile", "passthrough"] {
        std::fs::copy(repo().join("shims").join(f), src.join("shims").join(f)).unwrap();
    }
    let mut list = std::fs::read_to_string(src.join("shims/passthrough")).unwrap();
    list.push_str("awk         1,2,3\n");
    std::fs::write(src.join("shims/passthrough"), list).unwrap();
    let prefix = tmp.path().join("p");
    // Through sh, not executed itself: a copy made a moment ago can still be open for writing in
    // a child another test thread is forking, and exec would fail with ETXTBSY.
    let out = Command::new("sh")
        .arg(src.join("install.sh"))
        .args(["--binary", bin().to_str().unwrap(), "--prefix", prefix.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("awk can run a program or write a file"), "{stderr}");
    assert!(stderr.contains("nothing was installed"), "{stderr}");
    assert!(!prefix.exists());
}

#[test]
fn skills_and_repos_name_the_baseline_and_the_repositories_instead_of_the_shipped_skills() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base");
    let repos = tmp.path().join("repos");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::create_dir_all(&repos).unwrap();
    let inst = Installed::new(&[
        "--skills",
        base.to_str().unwrap(),
        "--repos",
        repos.to_str().unwrap(),
        "--tiers",
        "1",
    ]);
    let cfg = std::fs::read_to_string(inst.tier_dir(1).join("tiershim.yaml")).unwrap();
    assert!(
        cfg.contains(&format!(
            "skills:\n  baseline: '{}'\n  repos: '{}'\n",
            base.display(),
            repos.display()
        )),
        "{cfg}"
    );
    assert!(!inst.prefix.join("lib/tiershim/skills").exists());
    let out = Command::new(inst.tiershim())
        .args(["skills", "list", "--config"])
        .arg(inst.tier_dir(1).join("tiershim.yaml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn hosts_inventory_mcp_configs_and_the_lock_wait_are_written_and_load() {
    let tmp = tempfile::tempdir().unwrap();
    let mcp = tmp.path().join("mcp.json");
    std::fs::write(&mcp, r#"{"mcpServers": {"docker": {"command": "npx"}}}"#).unwrap();
    let inventory = tmp.path().join("inventory.json");
    let state = tmp.path().join("state/cooldown.json");
    std::fs::create_dir_all(state.parent().unwrap()).unwrap();
    let inst = Installed::new(&[
        "--cooldown-state",
        state.to_str().unwrap(),
        "--host",
        "ie01",
        "--host",
        "10.0.0.7",
        "--inventory",
        inventory.to_str().unwrap(),
        "--mcp-config",
        mcp.to_str().unwrap(),
        "--cooldown-lock-wait",
        "5",
        "--tiers",
        "2",
    ]);
    let cfg = inst.tier_dir(2).join("tiershim.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    for want in [
        "cooldown_lock_wait: 5\n".to_string(),
        format!("inventory: '{}'\n", inventory.display()),
        format!("mcp_configs:\n  - '{}'\n", mcp.display()),
        "hosts:\n  - 'ie01'\n  - '10.0.0.7'\n".to_string(),
    ] {
        assert!(text.contains(&want), "{want:?} in {text}");
    }
    // The gate's own loader takes the file: the inventory it writes lists the MCP server.
    let out = Command::new(inst.tiershim())
        .args(["inventory", "--write", "--config"])
        .arg(&cfg)
        .env("CLAUDEOPS_TIER", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let inv: serde_json::Value = serde_json::from_slice(&std::fs::read(&inventory).unwrap()).unwrap();
    let container = inv["domains"].as_array().unwrap().iter().find(|d| d["id"] == "container").unwrap();
    assert_eq!(container["mcp"][0]["name"], "docker");
}

#[test]
fn secrets_go_to_a_file_only_the_gate_reads_and_every_tier_names_it_and_a_tool_home() {
    let tmp = tempfile::tempdir().unwrap();
    let more = tmp.path().join("more-secrets");
    std::fs::write(&more, "# pinned\nPGPASSWORD=pw with 'quote'\n").unwrap();
    let inst = Installed::new(&[
        "--secret",
        "GH_TOKEN=ghp_secret",
        "--secrets-file",
        more.to_str().unwrap(),
        "--env",
        "GH_HOST=ghe.example",
    ]);
    let lib = inst.prefix.join("lib/tiershim");
    let secrets = lib.join("secrets.yaml");
    let meta = std::fs::metadata(&secrets).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::mode(&meta) & 0o777, 0o600);
    let got = tiershim::install::read_secrets(&secrets, false).unwrap();
    assert_eq!(got["GH_TOKEN"], "ghp_secret");
    assert_eq!(got["PGPASSWORD"], "pw with 'quote'");
    let home = lib.join("home");
    assert!(home.is_dir());
    for n in 1..=3u8 {
        let text = std::fs::read_to_string(inst.tier_dir(n).join("tiershim.yaml")).unwrap();
        assert!(text.contains(&format!("secrets: '{}'\n", secrets.display())), "{text}");
        assert!(text.contains(&format!("tool_home: '{}'\n", home.display())), "{text}");
        assert!(!text.contains("ghp_secret") && !text.contains("pw with"), "{text}");
        assert!(text.contains("GH_HOST: 'ghe.example'"), "{text}");
    }
    // Without secrets the file goes, as anything install.sh made and would not make now.
    let r = inst.reinstall(&[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!secrets.exists());
    assert!(home.is_dir());
}

#[test]
fn uninstall_removes_what_install_created_and_keeps_what_it_did_not() {
    let inst = Installed::new(&[]);
    let note = inst.tier_dir(1).join("NOTES.txt");
    std::fs::write(&note, "operator notes\n").unwrap();
    let p = inst.prefix.display().to_string();
    let r = run_install(&["--uninstall", "--prefix", &p]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(
        r.stdout()
            .starts_with(&format!("uninstalled tiershim from {p}: put back 0 owner(s) and mode(s), removed ")),
        "{}",
        r.stdout()
    );
    // Only the operator's file and the directories that hold it are left.
    assert_eq!(
        snapshot(&inst.prefix)
            .iter()
            .map(|l| l.split(' ').next().unwrap().to_string())
            .collect::<Vec<_>>(),
        vec![
            note.display().to_string(),
            inst.tier_dir(1).display().to_string(),
            inst.prefix.join("lib/tiershim").display().to_string(),
            inst.prefix.join("lib").display().to_string(),
            p.clone(),
        ]
    );
    assert!(r.stderr().contains(&format!(
        "left {} (it holds files install.sh did not create)",
        inst.tier_dir(1).display()
    )));
    // The audit log is data: kept.
    assert!(inst.audit.parent().unwrap().is_dir());
    // Nothing left to uninstall: refused, nothing changed.
    let before = snapshot(&inst.prefix);
    let r = run_install(&["--uninstall", "--prefix", &p]);
    assert_eq!(r.code(), 1);
    assert!(r.stderr().contains("no installation made by install.sh at "), "{}", r.stderr());
    assert_eq!(snapshot(&inst.prefix), before);
    // Without the operator's file, the prefix install.sh made goes entirely.
    let inst = Installed::new(&[]);
    let r = run_install(&["--uninstall", "--prefix", inst.prefix.to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!inst.prefix.exists());
}

#[test]
fn make_install_records_every_decision_in_an_audit_log_by_default() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("p");
    // The built test binary stands in for the release build (`CARGO=true` skips building it).
    let out = Command::new("make")
        .arg("-C")
        .arg(repo())
        .arg("install")
        .arg(format!("PREFIX={}", prefix.display()))
        .arg(format!("BIN={}", bin().display()))
        .arg("CARGO=true")
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let log = prefix.join("var/log/tiershim/audit.jsonl");
    let cfg = std::fs::read_to_string(prefix.join("lib/tiershim/tier1/tiershim.yaml")).unwrap();
    assert!(cfg.contains(&format!("audit_log: '{}'", log.display())), "{cfg}");
    // A call through a tier link is recorded there.
    let r = Command::new(prefix.join("lib/tiershim/tier1/docker"))
        .arg("--version")
        .env_clear()
        .env("CLAUDEOPS_TIER", "1")
        .output()
        .unwrap();
    let rec: serde_json::Value = serde_json::from_str(std::fs::read_to_string(&log).unwrap().lines().last().unwrap()).unwrap();
    assert_eq!(rec["tool"], "docker", "{}", String::from_utf8_lossy(&r.stderr));
    // `make uninstall` undoes it and keeps the log.
    let out = Command::new("make")
        .arg("-C")
        .arg(repo())
        .arg("uninstall")
        .arg(format!("PREFIX={}", prefix.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!prefix.join("lib").exists() && !prefix.join("bin").exists());
    assert!(log.is_file());
}
