//! The Debian package, made by cargo-deb from Cargo.toml's `[package.metadata.deb]` as `make deb`
//! makes it, installed on this machine with dpkg: what it holds, that it runs nothing on install
//! and so never hardens (no maintainer scripts, nothing setgid), that `tiershim doctor` says what
//! to do next, that the packaged install kit lays out a tier whose gate runs the real curl and refuses a call above the tier, and
//! that `dpkg --purge` leaves nothing behind.
//!
//! It packages the binary these tests run (the dev profile) instead of a release build: the
//! package's contents and life cycle are under test, and a release build would add minutes to
//! every run. `make deb` packages the release binary with the same metadata.
//!
//! As root only (dpkg); skipped with a message otherwise, except under CI, where it must run.
//! Runs of this test from several work trees on one machine take turns (a lock file), and it
//! will not touch a machine that already has a tiershim package or /usr/bin/tiershim.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::harness::bin;
use crate::installed::repo;

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// dpkg, retried while another dpkg or apt holds its lock (a bounded number of times).
fn dpkg(args: &[&str]) -> Output {
    for _ in 0..120 {
        let out = Command::new("dpkg").args(args).output().unwrap();
        if out.status.success() || !text(&out).contains("lock") {
            return out;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    panic!("dpkg {args:?}: the dpkg lock stayed taken")
}

/// Purges the package when the test ends, however it ends.
struct Purge;

impl Drop for Purge {
    fn drop(&mut self) {
        let _ = dpkg(&["--purge", "tiershim"]);
    }
}

#[test]
fn the_debian_package_installs_runs_and_purges_cleanly() {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let is_root = nix::unistd::geteuid().is_root();
    let has_dpkg = Path::new("/usr/bin/dpkg").exists();
    if !is_root || !has_dpkg {
        assert!(!ci, "the package test must run under CI, as root on a Debian-based machine");
        eprintln!("skipped: the package test needs root and dpkg");
        return;
    }
    let cargo_deb = repo().join("target/test-deps/cargo-deb/bin/cargo-deb");
    assert!(
        cargo_deb.exists(),
        "{} is missing: run `make test-deps` (scripts/test-deps.sh)",
        cargo_deb.display()
    );
    // Take turns with this test in other work trees on the same machine.
    let lock = std::fs::File::create(std::env::temp_dir().join("tiershim-package-test.lock")).unwrap();
    let _turn = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive).unwrap();
    assert!(
        !dpkg(&["-s", "tiershim"]).status.success() && !Path::new("/usr/bin/tiershim").exists(),
        "this machine already has a tiershim package or /usr/bin/tiershim; the test would replace it"
    );

    // The package, from the binary under test. Its directory names the target tuple.
    let tmp = tempfile::tempdir().unwrap();
    let deb = tmp.path().join("tiershim.deb");
    let triple = bin().parent().and_then(Path::parent).unwrap().file_name().unwrap().to_owned();
    let out = Command::new(&cargo_deb)
        .current_dir(repo())
        .args(["--no-build", "--quiet", "--fast", "--profile", "dev", "--target"])
        .arg(&triple)
        .arg("--output")
        .arg(&deb)
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo-deb: {}", text(&out));

    // Its Maintainer is the project's role, the one SECURITY.md names, never a person.
    let control = Command::new("dpkg-deb").args(["-f"]).arg(&deb).arg("Maintainer").output().unwrap();
    let maintainer = String::from_utf8_lossy(&control.stdout).trim().to_string();
    assert!(maintainer.starts_with("tiershim maintainers <security@"), "{maintainer}");
    let security = std::fs::read_to_string(repo().join("SECURITY.md")).unwrap();
    assert!(
        security.contains(&format!("`{maintainer}`")),
        "SECURITY.md does not name {maintainer}"
    );

    // It runs nothing when installed: its control part holds no maintainer script and no
    // conffiles, only the description and the checksums.
    let members = Command::new("sh")
        .arg("-c")
        .arg("dpkg-deb --ctrl-tarfile \"$1\" | tar -t")
        .arg("sh")
        .arg(&deb)
        .output()
        .unwrap();
    assert!(members.status.success(), "{}", text(&members));
    let mut members: Vec<String> = String::from_utf8_lossy(&members.stdout)
        .lines()
        .map(|l| l.trim_start_matches("./").to_string())
        .filter(|l| !l.is_empty())
        .collect();
    members.retain(|m| m != "control" && m != "md5sums");
    assert_eq!(members, Vec::<String>::new(), "control members besides control and md5sums");
    let info = text(&Command::new("dpkg-deb").arg("--field").arg(&deb).output().unwrap());
    assert!(info.contains("Package: tiershim"), "{info}");
    assert!(info.contains("Section: admin"), "{info}");

    let _purge = Purge;
    let out = dpkg(&["-i", deb.to_str().unwrap()]);
    assert!(out.status.success(), "dpkg -i: {}", text(&out));
    let listed = dpkg(&["-L", "tiershim"]);
    let files: Vec<PathBuf> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(PathBuf::from)
        .filter(|p| p.symlink_metadata().is_ok_and(|m| !m.is_dir()))
        .collect();
    for want in [
        "/usr/bin/tiershim",
        "/usr/share/tiershim/install.sh",
        "/usr/share/tiershim/shims/tools",
        "/usr/share/tiershim/shims/passthrough",
        "/usr/share/tiershim/shims/profile",
        "/usr/share/tiershim/skills/git-pr.md",
        "/usr/share/tiershim/dist/tiershim.schema.json",
        "/usr/share/man/man1/tiershim.1.gz",
        "/usr/share/man/man1/tiershim-doctor.1.gz",
        "/usr/share/bash-completion/completions/tiershim",
        "/usr/share/zsh/vendor-completions/_tiershim",
        "/usr/share/fish/vendor_completions.d/tiershim.fish",
        "/usr/share/doc/tiershim/copyright",
        "/usr/share/doc/tiershim/SECURITY.md",
        "/usr/share/doc/tiershim/examples/logrotate/tiershim",
    ] {
        assert!(files.contains(&PathBuf::from(want)), "the package lacks {want}: {files:?}");
    }
    // Nothing it installs is setgid or setuid, or writable by others: it never hardens.
    for f in &files {
        let m = f.symlink_metadata().unwrap();
        assert_eq!(m.mode() & 0o6002, 0, "{} has mode {:o}", f.display(), m.mode());
        assert_eq!(m.uid(), 0, "{}", f.display());
    }
    let out = Command::new("/usr/bin/tiershim").arg("--version").output().unwrap();
    assert!(
        text(&out).starts_with(&format!("tiershim {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{}",
        text(&out)
    );
    let out = Command::new("man").args(["-w", "tiershim-explain"]).output().unwrap();
    assert_eq!(text(&out).trim(), "/usr/share/man/man1/tiershim-explain.1.gz");

    // The doctor of a fresh package says what to do next.
    let out = Command::new("/usr/bin/tiershim").arg("doctor").output().unwrap();
    let report = text(&out);
    assert_eq!(out.status.code(), Some(78), "{report}");
    assert!(report.contains("no tier directories under /usr/lib/tiershim"), "{report}");
    assert!(report.contains("/usr/share/tiershim/install.sh"), "{report}");

    // The packaged install kit lays out a tier with the packaged binary (no --binary).
    let prefix = tmp.path().join("p");
    let audit = tmp.path().join("audit.jsonl");
    let out = Command::new("/usr/share/tiershim/install.sh")
        .arg("--prefix")
        .arg(&prefix)
        .args(["--tiers", "1", "--audit-log"])
        .arg(&audit)
        // The calls below come straight from the test, outside any Landlock domain (the kernel
        // fence has tests of its own: tests/it/kernel_fence.rs).
        .args(["--kernel-fence", "off"])
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .output()
        .unwrap();
    assert!(out.status.success(), "install.sh: {}", text(&out));
    assert_eq!(
        std::fs::read(prefix.join("bin/tiershim")).unwrap(),
        std::fs::read("/usr/bin/tiershim").unwrap()
    );
    let tier1 = prefix.join("lib/tiershim/tier1");
    let cfg = std::fs::read_to_string(tier1.join("tiershim.yaml")).unwrap();
    assert!(
        cfg.starts_with("# yaml-language-server: $schema=../tiershim.schema.json\n"),
        "{cfg}"
    );
    assert!(prefix.join("lib/tiershim/tiershim.schema.json").exists());

    // A gated call runs the real curl; one above the tier is refused.
    let out = Command::new(tier1.join("curl"))
        .arg("--version")
        .env("CLAUDEOPS_TIER", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("curl "), "{}", text(&out));
    let out = Command::new(tier1.join("docker"))
        .args(["restart", "api"])
        .env("CLAUDEOPS_TIER", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(77), "{}", text(&out));
    assert!(text(&out).contains("requires tier 2 (this agent is tier 1)"), "{}", text(&out));
    let records: Vec<serde_json::Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let verdicts: Vec<&str> = records.iter().map(|r| r["verdict"].as_str().unwrap()).collect();
    assert_eq!(verdicts, ["allow", "refuse"]);

    // The doctor of that installation: what the package supplied holds; what it leaves to the
    // operator (hardening, an audit log the agent's user can write) is reported with the fix.
    let out = Command::new("/usr/bin/tiershim")
        .arg("doctor")
        .arg("--prefix")
        .arg(&prefix)
        .output()
        .unwrap();
    let report = text(&out);
    assert!(matches!(out.status.code(), Some(0 | 78)), "{report}");
    for part in ["binary", "links", "config", "profile", "passthrough", "policy", "skills"] {
        assert!(
            report.lines().any(|l| l.starts_with(&format!("✓ {part} "))),
            "{part} does not hold:\n{report}"
        );
    }
    assert!(report.contains("real curl /usr/bin/curl"), "{report}");

    // The packaged kit removes the layout it made; purged, the package leaves nothing behind.
    let out = Command::new("/usr/share/tiershim/install.sh")
        .arg("--uninstall")
        .arg("--prefix")
        .arg(&prefix)
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .output()
        .unwrap();
    assert!(out.status.success(), "install.sh --uninstall: {}", text(&out));
    assert!(!prefix.exists(), "{}", text(&out));
    let out = dpkg(&["--purge", "tiershim"]);
    assert!(out.status.success(), "dpkg --purge: {}", text(&out));
    assert!(!dpkg(&["-s", "tiershim"]).status.success());
    for f in &files {
        assert!(f.symlink_metadata().is_err(), "{} is still there", f.display());
    }
    for dir in ["/usr/share/tiershim", "/usr/share/doc/tiershim"] {
        assert!(!Path::new(dir).exists(), "{dir} is still there");
    }
}
