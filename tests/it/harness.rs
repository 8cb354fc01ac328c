//! `TestEnv`: a tier directory in a temp dir with links named after the gated tools pointing at
//! the built tiershim, a `tiershim.yaml`, stub real tools that record what they received, and an
//! audit log.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The gated tools' names, from the crate's table of tools (`tiershim::spec`).
pub const TOOLS: [&str; tiershim::tool::Tool::ALL.len()] = {
    let mut names = [""; tiershim::tool::Tool::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = tiershim::tool::Tool::ALL[i].name();
        i += 1;
    }
    names
};

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tiershim"))
}

/// A recording stub: writes its argv (NUL-separated) and environment, then exits 0. It uses no
/// PATH lookup (the gate hands the real tool the caller's PATH, which is the tier directory).
pub const STUB: &str = "#!/bin/sh\nd=\"${0%/*}\"\nn=\"${0##*/}\"\n: > \"$d/$n.argv\"\nfor a in \"$@\"; do printf '%s\\0' \"$a\" >> \"$d/$n.argv\"; done\n/usr/bin/env -0 > \"$d/$n.env\"\necho \"stub $n ran\"\nexit 0\n";

pub struct TestEnv {
    pub tmp: tempfile::TempDir,
    /// The tier directory: links and tiershim.yaml.
    pub dir: PathBuf,
    /// Where the stub real tools live.
    pub real: PathBuf,
    pub audit: PathBuf,
}

pub struct Run {
    pub out: Output,
}

impl Run {
    pub fn code(&self) -> i32 {
        self.out.status.code().unwrap_or(-1)
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
}

/// Run `cmd` with `stdin` piped in (or /dev/null), its output captured.
pub fn run_with_stdin(cmd: &mut Command, stdin: Option<&str>) -> Run {
    use std::io::Write;
    use std::process::Stdio;
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let out = match stdin {
        None => cmd.stdin(Stdio::null()).output().expect("spawn"),
        Some(text) => {
            let mut child = cmd.stdin(Stdio::piped()).spawn().expect("spawn");
            let mut input = child.stdin.take().expect("stdin");
            let _ = input.write_all(text.as_bytes());
            drop(input);
            child.wait_with_output().expect("wait")
        }
    };
    Run { out }
}

impl TestEnv {
    /// Links for every gated tool, stubs for every real tool, and a config with `extra` lines
    /// after `tier: <ceiling>`, `real_dirs` and `audit_log`.
    pub fn new(ceiling: u8, extra: &str) -> TestEnv {
        let env = TestEnv::bare();
        for t in TOOLS {
            env.stub(t);
        }
        // The temp dir is the workspace (where tier-2 calls may write) unless the test says.
        let workspaces = if extra.contains("workspaces:") {
            String::new()
        } else {
            format!("workspaces: [{}]\n", env.tmp.path().display())
        };
        // The operator's tool home, the real tools' HOME.
        let tool_home = if extra.contains("tool_home:") {
            String::new()
        } else {
            let home = env.tmp.path().join("toolhome");
            std::fs::create_dir_all(&home).expect("mkdir");
            std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            format!("tool_home: {}\n", home.display())
        };
        env.write_config(&format!(
            "tier: {ceiling}\nreal_dirs: [{}]\naudit_log: {}\n{workspaces}{tool_home}{extra}",
            env.real.display(),
            env.audit.display()
        ));
        env
    }

    /// Links only: no config, no stubs.
    pub fn bare() -> TestEnv {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("tier");
        let real = tmp.path().join("real");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::create_dir_all(&real).expect("mkdir");
        for d in [&dir, &real, &tmp.path().to_path_buf()] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        for t in TOOLS {
            std::os::unix::fs::symlink(bin(), dir.join(t)).expect("symlink");
        }
        let audit = tmp.path().join("audit.jsonl");
        TestEnv { tmp, dir, real, audit }
    }

    pub fn stub(&self, tool: &str) -> PathBuf {
        let p = self.real.join(tool);
        std::fs::write(&p, STUB).expect("write stub");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        p
    }

    /// Write `tiershim.yaml`; a config that names no `tool_home:` gets the test's tool home
    /// (the gate runs no real tool without one), so tests need not repeat it. The calls of these
    /// tests come straight from the test process, outside any Landlock domain, so the kernel
    /// fence is off unless `text` says otherwise (tests/it/kernel_fence.rs drives it).
    pub fn write_config(&self, text: &str) {
        if text.contains("tool_home:") || !text.contains("tier:") {
            return self.write_config_exact(text);
        }
        let home = self.tool_home();
        std::fs::create_dir_all(&home).expect("mkdir");
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let sep = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
        self.write_config_exact(&format!("{text}{sep}tool_home: {}\n", home.display()));
    }

    /// Write `tiershim.yaml` as given, with `kernel_fence: off` added unless it names
    /// `kernel_fence` (these calls come from outside any Landlock domain).
    pub fn write_config_exact(&self, text: &str) {
        let p = self.dir.join("tiershim.yaml");
        let text = if text.contains("kernel_fence") {
            text.to_string()
        } else {
            format!(
                "{text}{}kernel_fence: off\n",
                if text.is_empty() || text.ends_with('\n') { "" } else { "\n" }
            )
        };
        std::fs::write(&p, text).expect("write config");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.join("tiershim.yaml")
    }

    /// A command for `tool` through its link, with a minimal environment: PATH = the tier dir.
    pub fn cmd(&self, tool: &str, args: &[&str]) -> Command {
        let mut c = Command::new(self.dir.join(tool));
        c.args(args)
            .env_clear()
            .env("PATH", &self.dir)
            .env("HOME", self.tmp.path())
            .current_dir(self.tmp.path());
        c
    }

    pub fn run(&self, tool: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut c = self.cmd(tool, args);
        c.envs(env.iter().copied());
        Run {
            out: c.output().expect("spawn"),
        }
    }

    /// The argv the stub for `tool` received, or None if it never ran.
    pub fn received(&self, tool: &str) -> Option<Vec<String>> {
        let raw = std::fs::read(self.real.join(format!("{tool}.argv"))).ok()?;
        Some(
            raw.split(|b| *b == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect(),
        )
    }

    /// The environment the stub for `tool` ran with.
    pub fn received_env(&self, tool: &str) -> Option<BTreeMap<String, String>> {
        let raw = std::fs::read(self.real.join(format!("{tool}.env"))).ok()?;
        Some(
            raw.split(|b| *b == 0)
                .filter_map(|kv| {
                    let s = String::from_utf8_lossy(kv);
                    s.split_once('=').map(|(k, v)| (k.to_string(), v.to_string()))
                })
                .collect(),
        )
    }

    pub fn forget(&self, tool: &str) {
        let _ = std::fs::remove_file(self.real.join(format!("{tool}.argv")));
        let _ = std::fs::remove_file(self.real.join(format!("{tool}.env")));
    }

    /// Every audit record, parsed.
    pub fn audit_records(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(&self.audit).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("audit line {l:?}: {e}")))
            .collect()
    }

    pub fn last_audit(&self) -> serde_json::Value {
        self.audit_records().pop().expect("an audit record")
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    /// Pin credentials in a secrets file (mode 0600, as install.sh makes it without --harden)
    /// named by `secrets:` in the config.
    pub fn pin_secrets(&self, pairs: &[(&str, &str)]) {
        let path = self.path("secrets.yaml");
        let text: String = pairs.iter().map(|(k, v)| format!("{k}: '{v}'\n")).collect();
        std::fs::write(&path, text).expect("write secrets");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let cfg = std::fs::read_to_string(self.config_path()).expect("read config");
        self.write_config(&format!("{cfg}secrets: {}\n", path.display()));
    }

    /// The tool home `TestEnv::new` made: the real tools' HOME.
    pub fn tool_home(&self) -> PathBuf {
        self.tmp.path().join("toolhome")
    }
}

pub fn write_exec(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}
