//! `AgentInstall`: what `tiershim launch` needs, made for one test as root: a hardened
//! installation (real `install.sh --harden`) with the kernel fence on, an unprivileged agent
//! account with a home of its own, and a workspace holding one git work tree the agent owns.
//! Used by the kernel-fence tests and the real Claude Code tests.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::harden::Account;
use crate::installed::Installed;

/// True when the test may run: as root. Not root: a SKIPPED line, except under CI, where it fails.
pub fn as_root(test: &str) -> bool {
    if nix::unistd::getuid().is_root() {
        return true;
    }
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "{test} must run as root under CI (it creates a user and starts an agent with tiershim launch)"
    );
    eprintln!("SKIPPED {test}: not root; run the tests as root to check tiershim launch");
    false
}

/// A real program's absolute path on this machine's PATH.
pub fn which(program: &str) -> PathBuf {
    for d in ["/usr/local/bin", "/usr/bin", "/bin"] {
        let p = Path::new(d).join(program);
        if p.is_file() {
            return p;
        }
    }
    panic!("{program} is not installed (scripts/test-deps.sh installs it)");
}

pub struct AgentInstall {
    pub acct: Account,
    pub inst: Installed,
    /// Holds the home and the workspace: root-owned, mode 0755.
    pub world: tempfile::TempDir,
    pub home: PathBuf,
    pub repos: PathBuf,
    /// `<repos>/app`: a git work tree the agent owns, with `.claude-ops/skills/`.
    pub app: PathBuf,
}

/// The docker stand-in: a table for `ps`, JSON for `inspect`, the container for `restart`.
const DOCKER: &str = "#!/bin/sh\ncase \"$1\" in\nps) printf 'CONTAINER ID   NAMES   STATUS\\nabc123         api     Up 2 hours\\ndef456         db      Up 3 hours\\n' ;;\ninspect) printf '[{\"Name\": \"/%s\", \"State\": {\"Status\": \"running\"}}]\\n' \"$2\" ;;\nrestart) echo \"$2\" ;;\n*) echo \"stub docker $*\" ;;\nesac\n";

fn run_ok(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The agent's world: account, home, and `<repos>/app` (a git work tree the agent owns, with
/// `skills` committed under `.claude-ops/skills/` and `origin/HEAD` set as a clone has it).
struct World {
    acct: Account,
    world: tempfile::TempDir,
    home: PathBuf,
    repos: PathBuf,
    app: PathBuf,
}

fn world(tag: &str, skills: &[(&str, &[u8])]) -> World {
    let acct = Account::create_tagged(tag);
    let world = tempfile::tempdir().unwrap();
    std::fs::set_permissions(world.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = world.path().join("home");
    acct.set_home(&home);
    let repos = world.path().join("repos");
    std::fs::create_dir(&repos).unwrap();
    std::fs::set_permissions(&repos, std::fs::Permissions::from_mode(0o755)).unwrap();
    let app = repos.join("app");
    std::fs::create_dir_all(app.join(".claude-ops/skills")).unwrap();
    std::fs::write(app.join("README.md"), "# app\n").unwrap();
    std::fs::write(app.join(".claude-ops/skills/.keep"), "").unwrap();
    for (name, text) in skills {
        std::fs::write(app.join(".claude-ops/skills").join(name), text).unwrap();
    }
    let git = |args: &[&str]| {
        run_ok(
            Command::new(which("git"))
                .args(args)
                .current_dir(&app)
                .env("GIT_AUTHOR_NAME", "operator")
                .env("GIT_AUTHOR_EMAIL", "operator@example.com")
                .env("GIT_COMMITTER_NAME", "operator")
                .env("GIT_COMMITTER_EMAIL", "operator@example.com"),
        )
    };
    git(&["init", "-q", "-b", "main"]);
    // Who commits: the operator's setting in the repository's config (read-only at tier 2).
    git(&["config", "user.name", "agent"]);
    git(&["config", "user.email", "agent@example.com"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "first"]);
    // As a clone has it: the remote's default branch, which repository skills are read from.
    git(&["update-ref", "refs/remotes/origin/main", "HEAD"]);
    git(&["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]);
    run_ok(Command::new("chown").args(["-R", &format!("{}:{}", acct.uid, acct.gid), app.to_str().unwrap()]));
    World {
        acct,
        world,
        home,
        repos,
        app,
    }
}

/// The real tools of these tests: the docker stand-in, and copies of the real git and curl (as
/// install.sh --harden copies them).
fn real_tools(real: &Path, _runs: &Path) {
    std::fs::write(real.join("docker"), DOCKER).unwrap();
    for t in ["git", "curl"] {
        std::fs::copy(which(t), real.join(t)).unwrap();
    }
}

impl AgentInstall {
    /// `extra`: more install.sh arguments.
    pub fn new(tag: &str, extra: &[&str]) -> AgentInstall {
        AgentInstall::new_with(tag, extra, |_| {})
    }

    /// As [`AgentInstall::new`], with `setup(real_dir)` run after the real tools are written
    /// and before install.sh (more real tools).
    pub fn new_with(tag: &str, extra: &[&str], setup: impl FnOnce(&Path)) -> AgentInstall {
        let w = world(tag, &[]);
        let repos_arg = w.repos.display().to_string();
        let mut args = vec!["--harden", "--group", &w.acct.group, "--repos", &repos_arg, "--kernel-fence", "on"];
        args.extend_from_slice(extra);
        let inst = Installed::new_with(&args, |real, runs| {
            real_tools(real, runs);
            setup(real);
        });
        AgentInstall {
            acct: w.acct,
            inst,
            world: w.world,
            home: w.home,
            repos: w.repos,
            app: w.app,
        }
    }

    /// For the Claude Ops example (`examples/claude-ops/`): the same world, the work tree
    /// carrying the example's repository skills, and an installation not made yet: the example's
    /// entrypoint makes it (`example_cmd`).
    pub fn for_example(tag: &str) -> AgentInstall {
        let dir = crate::installed::repo().join("examples/claude-ops/repository-skills");
        let mut skills: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
            .collect();
        skills.sort();
        let refs: Vec<(&str, &[u8])> = skills.iter().map(|(n, t)| (n.as_str(), t.as_slice())).collect();
        let w = world(tag, &refs);
        let inst = Installed::prepared(real_tools);
        std::fs::create_dir(inst.tmp.path().join("state")).unwrap();
        AgentInstall {
            acct: w.acct,
            inst,
            world: w.world,
            home: w.home,
            repos: w.repos,
            app: w.app,
        }
    }

    /// `examples/claude-ops/entrypoint.sh PROMPT` as root, configured through its variables for
    /// this world: it installs (hardened, kernel fence on), writes the inventory and starts
    /// `claude` with `tiershim launch` at `tier`, in the work tree. `env` is set in the caller's
    /// environment (the entrypoint passes on the Anthropic variables it names).
    pub fn example_cmd(&self, tier: u8, claude: &Path, prompt: &str, env: &[(&str, &str)]) -> Command {
        let state = self.inst.tmp.path().join("state");
        let mut c = Command::new(crate::installed::repo().join("examples/claude-ops/entrypoint.sh"));
        c.arg(prompt)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .env("TIER", tier.to_string())
            .env("AGENT_USER", &self.acct.user)
            .env("PREFIX", &self.inst.prefix)
            .env("REPOS", &self.repos)
            .env("WORKDIR", &self.app)
            .env("AUDIT_LOG", &self.inst.audit)
            .env("COOLDOWN_STATE", state.join("cooldown/cooldown.json"))
            .env("INVENTORY", state.join("inventory.json"))
            .env("CLAUDE", claude)
            .env("BINARY", crate::harness::bin())
            // The stand-ins and this test's group (tests run side by side, each with its own).
            .env(
                "INSTALL_ARGS",
                format!("--real-dir {} --group {}", self.inst.real.display(), self.acct.group),
            )
            // As `launch_cmd`: copies of the real tools outside the install are this machine's.
            .env("LAUNCH_ARGS", "--system-path /nonexistent")
            .envs(env.iter().copied())
            .current_dir("/");
        c
    }

    pub fn tier_config(&self, tier: u8) -> PathBuf {
        self.inst.tier_dir(tier).join("tiershim.yaml")
    }

    /// `tiershim launch --tier N --user <agent> … -- cmd…` as root, from `cwd`, with `env` set in
    /// the caller's environment and `keep` passed on. The machine's own git, curl and gh are
    /// executable by every user (a developer's machine), which doctor rightly reports; the
    /// launch's install check looks for copies of the real tools in no directory but the
    /// install's (`--system-path`), as an operator whose system is hardened would see it.
    pub fn launch_cmd(&self, tier: u8, cwd: &Path, keep: &[&str], cmd: &[&str]) -> Command {
        let mut c = Command::new(self.inst.tiershim());
        c.args(["launch", "--tier", &tier.to_string(), "--user", &self.acct.user])
            .args(["--system-path", "/nonexistent", "--cwd"])
            .arg(cwd);
        for k in keep {
            c.args(["--keep-env", k]);
        }
        c.arg("--").args(cmd).env_clear().env("PATH", "/usr/bin:/bin").current_dir("/");
        c
    }

    pub fn launch(&self, tier: u8, cmd: &[&str]) -> Output {
        self.launch_cmd(tier, &self.app, &[], cmd).output().unwrap()
    }

    /// Run `argv` as the agent's user directly (outside any launch), from the work tree.
    pub fn as_agent(&self, argv: &[&str]) -> Output {
        Command::new("/usr/bin/setpriv")
            .arg(format!("--reuid={}", self.acct.uid))
            .arg(format!("--regid={}", self.acct.gid))
            .arg("--clear-groups")
            .arg("--")
            .args(argv)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &self.home)
            .current_dir(&self.app)
            .output()
            .unwrap()
    }
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
