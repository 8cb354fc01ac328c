//! `Installed`: a real installation made by the real `install.sh` in a temp dir, with stub real
//! tools (one per name in `shims/tools`) that append every run to one log, so a test can tell
//! whether any real tool ran and whether each run came through the gate.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::harness::bin;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The gated tools, as `install.sh` reads them.
pub fn tools() -> Vec<String> {
    std::fs::read_to_string(repo().join("shims/tools"))
        .unwrap()
        .lines()
        .map(|l| l.split('#').next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// A stub real tool: appends `<pid> <tool> <args>` to `log` and exits 0. It names itself and
/// its log by absolute path, because a hardened gate runs it as `/bin/sh /dev/fd/N`.
/// A stub that records each run (pid, tool, args) in `log`. The gate's own git queries (they
/// start `--no-pager --no-replace-objects`) go to `<log>.facts` with the parent's pid instead:
/// they are the gate asking, and are counted as gated only when that parent is a gate process
/// that wrote an audit record.
pub fn stub_text(tool: &str, log: &Path) -> String {
    format!(
        "#!/bin/sh\nif [ \"$1 $2\" = '--no-pager --no-replace-objects' ]; then printf '%s {tool} %s\\n' \"$PPID\" \"$*\" >> '{0}.facts'; exit 0; fi\nprintf '%s {tool} %s\\n' \"$$\" \"$*\" >> '{0}'\necho \"stub {tool} ran\"\n",
        log.display()
    )
}

pub struct Installed {
    pub tmp: tempfile::TempDir,
    pub prefix: PathBuf,
    pub real: PathBuf,
    pub runs: PathBuf,
    pub audit: PathBuf,
}

pub struct Ran {
    pub out: Output,
}

impl Ran {
    pub fn code(&self) -> i32 {
        self.out.status.code().unwrap_or(-1)
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
}

pub fn run_install(args: &[&str]) -> Ran {
    let out = Command::new(repo().join("install.sh"))
        .arg("--binary")
        .arg(bin())
        .args(args)
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .output()
        .unwrap();
    Ran { out }
}

impl Installed {
    /// Stubs for every gated tool in `<tmp>/real`, then `install.sh` with `extra` arguments.
    pub fn new(extra: &[&str]) -> Installed {
        Installed::new_with(extra, |_, _| {})
    }

    /// As [`Installed::new`], with `setup(real_dir, runs_log)` run after the stubs are written
    /// and before install.sh.
    pub fn new_with(extra: &[&str], setup: impl FnOnce(&Path, &Path)) -> Installed {
        let i = Installed::prepared(setup);
        let mut args = vec![
            "--prefix".to_string(),
            i.prefix.display().to_string(),
            "--real-dir".into(),
            i.real.display().to_string(),
            "--audit-log".into(),
            i.audit.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        // These tests call links and shells from the test process; the kernel fence has its own
        // (tests/it/kernel_fence.rs, tests/it/claude.rs).
        if !extra.iter().any(|a| a.starts_with("--kernel-fence")) {
            args.extend(["--kernel-fence".to_string(), "off".to_string()]);
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run_install(&argv);
        assert_eq!(r.code(), 0, "install.sh failed:\n{}{}", r.stdout(), r.stderr());
        i
    }

    /// The stubs and paths of an installation whose install.sh has not run yet: for a test that
    /// runs it another way (the Claude Ops example's entrypoint). `setup` as for `new_with`.
    pub fn prepared(setup: impl FnOnce(&Path, &Path)) -> Installed {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let runs = tmp.path().join("runs.log");
        std::fs::write(&runs, "").unwrap();
        std::fs::set_permissions(&runs, std::fs::Permissions::from_mode(0o666)).unwrap();
        for t in tools() {
            let p = real.join(&t);
            std::fs::write(&p, stub_text(&t, &runs)).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        setup(&real, &runs);
        let prefix = tmp.path().join("p");
        let audit = tmp.path().join("log/audit.jsonl");
        Installed {
            tmp,
            prefix,
            real,
            runs,
            audit,
        }
    }

    pub fn reinstall(&self, extra: &[&str]) -> Ran {
        let mut args = vec![
            "--prefix".to_string(),
            self.prefix.display().to_string(),
            "--real-dir".into(),
            self.real.display().to_string(),
            "--audit-log".into(),
            self.audit.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        if !extra.iter().any(|a| a.starts_with("--kernel-fence")) {
            args.extend(["--kernel-fence".to_string(), "off".to_string()]);
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        run_install(&argv)
    }

    pub fn tier_dir(&self, n: u8) -> PathBuf {
        self.prefix.join(format!("lib/tiershim/tier{n}"))
    }

    pub fn tiershim(&self) -> PathBuf {
        self.prefix.join("bin/tiershim")
    }

    /// `tiershim doctor` of this install for `user`, with an empty directory (`<tmp>/sys`) as the
    /// system path: its exit code and report.
    pub fn doctor_for(&self, user: &str) -> (Option<i32>, String) {
        let sys = self.tmp.path().join("sys");
        std::fs::create_dir_all(&sys).unwrap();
        let out = Command::new(self.tiershim())
            .args(["doctor", "--prefix", self.prefix.to_str().unwrap(), "--user", user, "--system-path"])
            .arg(&sys)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// `tiershim shell --tier N -c CMD` with a small caller environment.
    pub fn shell(&self, tier: u8, cmd: &str) -> Ran {
        let out = self.shell_cmd(tier, cmd).output().unwrap();
        Ran { out }
    }

    pub fn shell_cmd(&self, tier: u8, cmd: &str) -> Command {
        let mut c = Command::new(self.tiershim());
        c.args(["shell", "--tier", &tier.to_string(), "-c", cmd])
            .env_clear()
            .env("HOME", self.tmp.path())
            .env("PATH", "/usr/bin:/bin")
            .current_dir(self.tmp.path());
        c
    }

    /// Every recorded run of a stub real tool: (pid, tool, args).
    pub fn runs(&self) -> Vec<(u32, String, String)> {
        std::fs::read_to_string(&self.runs)
            .unwrap()
            .lines()
            .map(|l| {
                let mut it = l.splitn(3, ' ');
                let pid = it.next().unwrap().parse().unwrap();
                let tool = it.next().unwrap().to_string();
                (pid, tool, it.next().unwrap_or("").to_string())
            })
            .collect()
    }

    pub fn forget_runs(&self) {
        std::fs::write(&self.runs, "").unwrap();
        let _ = std::fs::remove_file(self.runs.with_extension("log.facts"));
    }

    pub fn audit_records(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.audit)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Runs of real tools that no allowing decision of the gate accounts for (same pid, same
    /// tool), and the gate's own git queries whose parent is no gate process that decided: each
    /// one reached a real tool without the gate.
    pub fn ungated_runs(&self) -> Vec<(u32, String, String)> {
        let records = self.audit_records();
        let allowed: BTreeSet<(u64, String)> = records
            .iter()
            .filter(|r| r["verdict"] == "allow")
            .map(|r| (r["pid"].as_u64().unwrap(), r["tool"].as_str().unwrap().to_string()))
            .collect();
        let gates: BTreeSet<u64> = records.iter().map(|r| r["pid"].as_u64().unwrap()).collect();
        let mut out: Vec<(u32, String, String)> = self
            .runs()
            .into_iter()
            .filter(|(pid, tool, _)| !allowed.contains(&(u64::from(*pid), tool.clone())))
            .collect();
        out.extend(
            self.fact_runs()
                .into_iter()
                .filter(|(ppid, _, _)| !gates.contains(&u64::from(*ppid))),
        );
        out
    }

    /// The gate's own git queries: (parent pid, tool, args).
    pub fn fact_runs(&self) -> Vec<(u32, String, String)> {
        std::fs::read_to_string(self.runs.with_extension("log.facts"))
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let mut it = l.splitn(3, ' ');
                let pid = it.next().unwrap().parse().unwrap();
                let tool = it.next().unwrap().to_string();
                (pid, tool, it.next().unwrap_or("").to_string())
            })
            .collect()
    }
}
