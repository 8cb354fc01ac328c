//! The fence in a `--harden` installation, as the review ran it: the agent an unprivileged user
//! in the tier's restricted shell, the real tools (git, curl, Debian's gh against a TLS server
//! on 127.0.0.1, OpenSSH's ssh, the docker CLI, psql), the credentials pinned in the secrets
//! file. Each chain the review found in this area is replayed, and stops at its first step;
//! where it helps, the same step is run without the gate first, to show it does what the chain
//! needs. Skipped (with a message) when not root, except under CI, where it must run.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::agent::{as_root, which};
use crate::fence::PasswordCatcher;
use crate::harden::Account;
use crate::http_server::{HttpServer, TlsFront};
use crate::installed::Installed;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn must(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", text(&out.stderr));
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// An OpenSSL provider module whose constructor writes `marker`: what an agent-chosen
/// `OPENSSL_CONF` makes a real tool load. Built with the system's C compiler.
fn evil_module(dir: &Path, marker: &Path) -> PathBuf {
    let src = dir.join("evil.c");
    std::fs::write(
        &src,
        format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void mark(void) {{ FILE *f = fopen(\"{}\", \"w\"); if (f) {{ fputs(\"loaded\\n\", f); fclose(f); }} }}\nint OSSL_provider_init(void *h, void *in, void *out, void **ctx) {{ return 0; }}\n",
            marker.display()
        ),
    )
    .unwrap();
    let so = dir.join("evil.so");
    must(Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&so).arg(&src));
    chmod(&so, 0o755);
    let cnf = dir.join("ossl.cnf");
    std::fs::write(
        &cnf,
        format!(
            "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n[provider_sect]\nevil = evil_sect\n[evil_sect]\nmodule = {}\nactivate = 1\n",
            so.display()
        ),
    )
    .unwrap();
    chmod(&cnf, 0o644);
    cnf
}

struct World {
    acct: Account,
    inst: Installed,
    _world: tempfile::TempDir,
    home: PathBuf,
    repos: PathBuf,
    /// `<repos>/app`: a git work tree the agent owns.
    app: PathBuf,
}

impl World {
    /// `CMD` in the tier's restricted shell, as the agent, from `dir`.
    fn shell(&self, tier: u8, dir: &Path, cmd: &str) -> Output {
        self.acct.run_in(
            dir,
            &[
                self.inst.tiershim().to_str().unwrap(),
                "shell",
                "--tier",
                &tier.to_string(),
                "-c",
                cmd,
            ],
            &[("HOME", self.home.to_str().unwrap())],
        )
    }

    fn last_audit(&self) -> serde_json::Value {
        self.inst.audit_records().pop().unwrap()
    }

    /// The last call was allowed, so the real tool ran (and did not do what the chain needs).
    fn ran(&self, out: &Output) {
        let rec = self.last_audit();
        assert_eq!(rec["verdict"], "allow", "{rec}\n{}", text(&out.stderr));
    }
}

fn refused(out: &Output, rule: &str) {
    assert_eq!(out.status.code(), Some(77), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("rule {rule}")) || text(&out.stderr).contains("requires tier"),
        "{rule}: {}",
        text(&out.stderr)
    );
}

#[test]
fn in_a_hardened_install_each_chain_stops_at_its_first_step_for_the_agent_in_the_tier_shell() {
    if !as_root("in_a_hardened_install_each_chain_stops_at_its_first_step_for_the_agent_in_the_tier_shell") {
        return;
    }
    let acct = Account::create_tagged("fl");
    let world = tempfile::tempdir().unwrap();
    chmod(world.path(), 0o755);
    let home = world.path().join("home");
    acct.set_home(&home);
    let repos = world.path().join("repos");
    std::fs::create_dir(&repos).unwrap();
    chmod(&repos, 0o755);
    let app = repos.join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("README.md"), "# app\n").unwrap();
    let git = |dir: &Path, args: &[&str]| {
        must(
            Command::new(which("git"))
                .args(args)
                .current_dir(dir)
                .env("GIT_AUTHOR_NAME", "operator")
                .env("GIT_AUTHOR_EMAIL", "operator@example.com")
                .env("GIT_COMMITTER_NAME", "operator")
                .env("GIT_COMMITTER_EMAIL", "operator@example.com"),
        )
    };
    git(&app, &["init", "-q", "-b", "main"]);
    git(&app, &["add", "-A"]);
    git(&app, &["commit", "-qm", "first"]);
    // A compose project the operator owns, whose build context the agent can write.
    let shop = repos.join("shop");
    std::fs::create_dir_all(shop.join("api")).unwrap();
    std::fs::write(shop.join("compose.yaml"), "services:\n  api: {build: ./api}\n").unwrap();
    chmod(&shop, 0o755);
    let owner = format!("{}:{}", acct.uid, acct.gid);
    must(Command::new("chown").args(["-R", &owner]).arg(&app).arg(shop.join("api")));

    let srv = HttpServer::start();
    let certs = world.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    chmod(&certs, 0o755);
    let tls = TlsFront::start(&srv, &certs);
    chmod(&tls.cert, 0o644);
    let catcher = PasswordCatcher::start();
    let ossl = world.path().join("ossl");
    std::fs::create_dir(&ossl).unwrap();
    chmod(&ossl, 0o755);
    let ossl_marker = home.join("ossl-loaded");
    let cnf = evil_module(&ossl, &ossl_marker);

    let repos_arg = repos.display().to_string();
    let gh_host = format!("GH_HOST=127.0.0.1:{}", tls.port);
    let cert = format!("SSL_CERT_FILE={}", tls.cert.display());
    let inst = Installed::new_with(
        &[
            "--harden",
            "--group",
            &acct.group,
            "--repos",
            &repos_arg,
            "--env",
            &gh_host,
            "--env",
            &cert,
            "--env",
            "PGHOST=127.0.0.1",
            "--env",
            "PGPORT=1",
            "--secret",
            "GH_ENTERPRISE_TOKEN=tok-hardened",
            "--secret",
            "PGPASSWORD=pinned-pw",
        ],
        |real, _| {
            // The real tools, copied as --harden copies them (it takes "others" access off what
            // it copies: these copies, never the machine's own).
            for (t, from) in [
                ("git", which("git")),
                ("curl", which("curl")),
                ("gh", which("gh")),
                ("ssh", which("ssh")),
                ("docker", which("docker")),
                ("psql", PathBuf::from("/usr/lib/postgresql/15/bin/psql")),
            ] {
                let from = if from.is_file() {
                    from
                } else {
                    std::fs::read_dir("/usr/lib/postgresql")
                        .unwrap()
                        .flatten()
                        .map(|e| e.path().join("bin/psql"))
                        .find(|p| p.is_file())
                        .unwrap()
                };
                std::fs::copy(from, real.join(t)).unwrap();
            }
        },
    );
    let w = World {
        acct,
        inst,
        _world: world,
        home: home.clone(),
        repos: repos.clone(),
        app: app.clone(),
    };
    let url = format!("{}/x", srv.url());

    // Cause 1: a tier-1 "read" wrote ~/.gitconfig, and `git help push` ran what it planted.
    let out = w.shell(1, &w.app, "gh release download v1 -p app.tgz -O ~/.gitconfig");
    refused(&out, "gh.local-file");
    let out = w.shell(1, &w.app, "gh release download v1 -p app.tgz");
    assert!(
        text(&out.stderr).contains("REFUSED: gh writing app.tgz (-p) requires tier 2 (this agent is tier 1)"),
        "{}",
        text(&out.stderr)
    );
    let out = w.shell(2, &w.app, "gh run download 42 -D ~");
    refused(&out, "gh.local-file");
    assert!(!w.home.join(".gitconfig").exists());
    assert_eq!(srv.lines(), Vec::<String>::new());

    // Cause 1: one tier-2 curl that builds a bare repository for `git -C bare …` to run.
    let bare = format!("curl -s --create-dirs -o bare/HEAD -o bare/config -o bare/objects/x -o bare/refs/x {url} {url} {url} {url}");
    let out = w.shell(2, &w.app, &bare);
    refused(&out, "curl.local-file");
    assert!(
        text(&out.stderr).contains("HEAD would make bare a git directory"),
        "{}",
        text(&out.stderr)
    );
    assert!(!w.app.join("bare").exists());
    assert_eq!(srv.lines(), Vec::<String>::new());

    // Cause 1: SSLKEYLOGFILE makes git's TLS write a file the caller names. Without the gate it
    // does; through it the variable never reaches git, and the removal is on record.
    let remote = format!("https://127.0.0.1:{}/x", tls.port);
    let direct_keys = w.home.join("direct-keys");
    let _ = Command::new(which("git"))
        .args(["ls-remote", &remote])
        .env("SSLKEYLOGFILE", &direct_keys)
        .env("SSL_CERT_FILE", &tls.cert)
        .env("HOME", "/nonexistent")
        .output()
        .unwrap();
    assert!(
        direct_keys.exists(),
        "the real git did not write SSLKEYLOGFILE, so this step proves nothing"
    );
    let out = w.shell(1, &w.app, &format!("SSLKEYLOGFILE=$HOME/keys git ls-remote {remote}"));
    w.ran(&out);
    assert!(!w.home.join("keys").exists());
    let resets = w.last_audit()["env_resets"].to_string();
    assert!(resets.contains(r#"{"action":"removed","var":"SSLKEYLOGFILE"}"#), "{resets}");

    // Cause 3: the agent's own HOME holds a .gitconfig whose man viewer runs a program, and a
    // docker CLI plugin; the real tools read the operator's tool home instead.
    let git_marker = w.home.join("git-viewer-ran");
    std::fs::write(
        w.home.join(".gitconfig"),
        format!(
            "[help]\n\tformat = man\n[man]\n\tviewer = evil\n[man \"evil\"]\n\tcmd = touch {}\n",
            git_marker.display()
        ),
    )
    .unwrap();
    let plugin_dir = w.app.join("h/.docker/cli-plugins");
    std::fs::create_dir_all(&plugin_dir).unwrap();
    let plugin_marker = w.home.join("plugin-ran");
    let plugin = plugin_dir.join("docker-compose");
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\nif [ \"$1\" = docker-cli-plugin-metadata ]; then echo '{{\"SchemaVersion\":\"0.1.0\",\"Vendor\":\"x\",\"Version\":\"1\",\"ShortDescription\":\"x\"}}'; exit 0; fi\ntouch {}\n",
            plugin_marker.display()
        ),
    )
    .unwrap();
    chmod(&plugin, 0o755);
    must(Command::new("chown").args(["-R", &owner]).arg(&w.home).arg(w.app.join("h")));
    // Without the gate, that HOME runs the plugin.
    let _ = Command::new(which("docker"))
        .args(["compose", "ls"])
        .env_clear()
        .env("HOME", w.app.join("h"))
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(
        plugin_marker.exists(),
        "the real docker did not run the planted plugin, so this step proves nothing"
    );
    std::fs::remove_file(&plugin_marker).unwrap();
    let out = w.shell(1, &w.app, "git help push");
    w.ran(&out);
    assert!(!git_marker.exists(), "git ran the agent's man viewer");
    let out = w.shell(1, &w.app, "HOME=$PWD/h docker compose ls");
    w.ran(&out);
    assert!(!plugin_marker.exists(), "docker ran the agent's plugin");
    let got = w.last_audit();
    assert!(got["env_resets"].to_string().contains(r#""var":"HOME""#), "{got}");

    // Cause 4: OPENSSL_CONF made ssh load a module the agent chose. Without the gate it does.
    let _ = Command::new(which("ssh")).arg("-V").env("OPENSSL_CONF", &cnf).output().unwrap();
    assert!(
        ossl_marker.exists(),
        "the real ssh did not load the module, so this step proves nothing"
    );
    std::fs::remove_file(&ossl_marker).unwrap();
    let out = w.shell(1, &w.app, &format!("OPENSSL_CONF={} ssh -V", cnf.display()));
    w.ran(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("OpenSSH"), "{}", text(&out.stderr));
    assert!(!ossl_marker.exists(), "ssh loaded the agent's OpenSSL module");
    assert!(
        w.last_audit()["env_resets"]
            .to_string()
            .contains(r#"{"action":"removed","var":"OPENSSL_CONF"}"#)
    );

    // Cause 7: an operator-owned compose file whose build context the agent can write.
    let out = w.shell(2, &w.repos.join("shop"), "docker compose up -d api");
    refused(&out, "docker.compose.file-writable");
    assert!(
        text(&out.stderr).contains(&format!("service api: build.context {}", w.repos.join("shop/api").display())),
        "{}",
        text(&out.stderr)
    );

    // Cause 8: tiershim.yaml holds no secret, the secrets file is not the agent's to read, no
    // --jq prints the token, and the pinned password goes to the pinned server only.
    let cfg1 = w.inst.tier_dir(1).join("tiershim.yaml");
    let out = w.shell(1, &w.app, &format!("cat {}", cfg1.display()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains("tok-hardened") && !text(&out.stdout).contains("pinned-pw"));
    let secrets = w.inst.prefix.join("lib/tiershim/secrets.yaml");
    let out = w.shell(1, &w.app, &format!("cat {}", secrets.display()));
    assert!(text(&out.stderr).contains("Permission denied"), "{}", text(&out.stderr));
    let out = w.shell(1, &w.app, "gh api /user --jq '$ENV.GH_ENTERPRISE_TOKEN'");
    refused(&out, "gh.jq-env");
    assert!(!text(&out.stdout).contains("tok-hardened"));
    assert_eq!(srv.lines(), Vec::<String>::new());
    // An allowed call gets the pinned token from the secrets file, read by the gate.
    let out = w.shell(1, &w.app, "gh api /user");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let seen = srv.requests();
    assert_eq!(seen.iter().map(|r| r.line()).collect::<Vec<_>>(), ["GET /api/v3/user"]);
    assert_eq!(seen[0].header("authorization"), Some("token tok-hardened"));
    let port = catcher.port.to_string();
    let out = w.shell(1, &w.app, &format!("psql -h 127.0.0.1 -p {port} -c 'select 1'"));
    refused(&out, "psql.credential-destination");
    let out = w.shell(1, &w.app, &format!("PGPORT={port} psql -c 'select 1'"));
    w.ran(&out);
    assert_eq!(
        catcher.caught(),
        Vec::<String>::new(),
        "the pinned password reached a server the agent chose"
    );

    // The doctor reports each of these properties.
    let (_, report) = w.inst.doctor_for(&w.acct.user);
    for want in [
        format!(
            "the tool home {} is the real tools' HOME, and nothing in it is writable by",
            w.inst.prefix.join("lib/tiershim/home").display()
        ),
        format!("the secrets file {} (640) is read by the gate only", secrets.display()),
        format!("tier 2 writes only below {}", w.repos.display()),
        "gh reads no configuration the agent can change".to_string(),
    ] {
        assert!(report.contains(&want), "{want:?} in {report}");
    }
}
