//! What `dist/` ships, used as operators use it: the man pages read by groff and man, the shell
//! completions loaded by the real bash, zsh and fish, and the schema of `tiershim.yaml` applied
//! by check-jsonschema (pinned, installed by scripts/test-deps.sh) to the files install.sh
//! writes, agreeing with the gate on what is a valid file. And `tiershim --version`.
//! (That dist/ is what the code generates is a unit test: src/admin/generate.rs.)

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::bin;
use crate::installed::{Installed, repo};

fn need(tool: &str) -> PathBuf {
    for dir in ["/usr/bin", "/bin", "/usr/sbin"] {
        let p = Path::new(dir).join(tool);
        if p.exists() {
            return p;
        }
    }
    panic!("{tool} is not installed; scripts/test-deps.sh installs it")
}

fn check_jsonschema() -> PathBuf {
    let p = repo().join("target/test-deps/venv/bin/check-jsonschema");
    assert!(
        p.exists(),
        "{} is missing: run `make test-deps` (scripts/test-deps.sh)",
        p.display()
    );
    p
}

fn subcommands() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(repo().join("dist/man"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_prefix("tiershim-").and_then(|n| n.strip_suffix(".1")).map(str::to_string))
        .filter(|n| !n.contains('-'))
        .collect();
    out.sort();
    out
}

#[test]
fn every_man_page_renders_without_a_groff_warning() {
    let pages: Vec<PathBuf> = std::fs::read_dir(repo().join("dist/man"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(pages.len() > 10, "{pages:?}");
    for page in &pages {
        let out = Command::new(need("groff"))
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(page)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", page.display());
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{}", page.display());
    }
    // man reads the page of a subcommand with its options.
    let out = Command::new(need("man"))
        .arg("-l")
        .arg(repo().join("dist/man/tiershim-explain.1"))
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("tiershim-explain"), "{text}");
    assert!(text.contains("--config <FILE>"), "{text}");
    // The top page lists every subcommand, each of which has a page.
    let top = std::fs::read_to_string(repo().join("dist/man/tiershim.1")).unwrap();
    for sub in subcommands() {
        assert!(top.contains(&format!("tiershim\\-{sub}(1)")), "tiershim.1 does not list {sub}");
    }
}

#[test]
fn bash_completes_subcommands_and_their_options() {
    let script = format!(
        "source {}\n\
         COMP_WORDS=(tiershim ex); COMP_CWORD=1; COMP_LINE='tiershim ex'; COMP_POINT=${{#COMP_LINE}}\n\
         _tiershim tiershim ex tiershim; printf '%s\\n' \"${{COMPREPLY[@]}}\"; echo --\n\
         COMP_WORDS=(tiershim doctor --); COMP_CWORD=2; COMP_LINE='tiershim doctor --'; COMP_POINT=${{#COMP_LINE}}\n\
         _tiershim tiershim -- doctor; printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        repo().join("dist/completions/tiershim.bash").display()
    );
    let out = Command::new(need("bash")).args(["--norc", "-c", &script]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let (subs, doctor) = text.split_once("--\n").unwrap();
    assert_eq!(subs.lines().collect::<Vec<_>>(), ["explain"], "{text}");
    for opt in ["--config", "--prefix", "--user", "--json"] {
        assert!(doctor.lines().any(|l| l == opt), "{opt} not offered: {doctor}");
    }
}

#[test]
fn fish_completes_subcommands_and_zsh_reads_its_completion() {
    let script = format!(
        "source {}; complete -C 'tiershim co'; echo ==; complete -C 'tiershim explain --'",
        repo().join("dist/completions/tiershim.fish").display()
    );
    let out = Command::new(need("fish")).args(["--no-config", "-c", &script]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let (subs, explain) = text.split_once("==\n").unwrap();
    let names: Vec<&str> = subs.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(names, ["cooldown"], "{text}");
    for opt in ["--config", "--tier", "--dry-run", "--json"] {
        assert!(
            explain.lines().any(|l| l.split('\t').next() == Some(opt)),
            "{opt} not offered: {explain}"
        );
    }
    // zsh: the file parses, and compinit takes it from $fpath as `_tiershim`.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo().join("dist/completions/_tiershim"), dir.path().join("_tiershim")).unwrap();
    let out = Command::new(need("zsh"))
        .args(["-n"])
        .arg(dir.path().join("_tiershim"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let script = format!(
        "fpath=({} $fpath); autoload -Uz compinit; compinit -u -D; print -r -- ${{_comps[tiershim]}}",
        dir.path().display()
    );
    let out = Command::new(need("zsh")).args(["-f", "-c", &script]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "_tiershim",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// check-jsonschema's verdict on `file`: true when it validates.
fn schema_accepts(schema: &Path, file: &Path) -> (bool, String) {
    let out = Command::new(check_jsonschema())
        .arg("--schemafile")
        .arg(schema)
        .arg(file)
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn the_files_install_sh_writes_name_the_installed_schema_and_validate_against_it() {
    let inst = Installed::new(&[
        "--dry-run-pin",
        "--host",
        "ie01",
        "--env",
        "DOCKER_HOST=unix:///run/docker.sock",
        "--cooldown-state",
        "state/cooldown.json",
    ]);
    let lib = inst.prefix.join("lib/tiershim");
    for n in 1..=3u8 {
        let cfg = inst.tier_dir(n).join("tiershim.yaml");
        let text = std::fs::read_to_string(&cfg).unwrap();
        let first = text.lines().next().unwrap();
        let rel = first
            .strip_prefix("# yaml-language-server: $schema=")
            .unwrap_or_else(|| panic!("{text}"));
        // The editor resolves the path against the file's directory.
        let schema = inst.tier_dir(n).join(rel);
        assert_eq!(
            schema.canonicalize().unwrap(),
            lib.join("tiershim.schema.json").canonicalize().unwrap()
        );
        let (ok, why) = schema_accepts(&schema, &cfg);
        assert!(ok, "{why}\n{text}");
    }
}

#[test]
fn the_schema_and_the_gate_agree_on_what_is_a_valid_tiershim_yaml() {
    let schema = repo().join("dist/tiershim.schema.json");
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, bool)] = &[
        ("tier: 2\n", true),
        (
            "tier: 1\ndry_run: true\nskills:\n  baseline: /app/.claude/skills\n  repos: /repos\nreal:\n  gh: /usr/bin/gh\nreal_dirs: [/usr/bin]\n\
             audit_log: /var/log/tiershim/audit.jsonl\nhosts: [ie01]\nenv:\n  DOCKER_HOST: unix:///var/run/docker.sock\n\
             endpoints:\n  - id: http.ops.deploy\n    methods: [POST]\n    path: /api/deploy/**\n    tier: 3\n",
            true,
        ),
        (
            "tier: 3\nkernel_fence: {abi: 3, writable: [/srv/scratch]}\nannounce: stderr\n",
            true,
        ),
        ("tier: 2\nkernel_fence: sometimes\n", false),
        ("tier: 2\nannounce: loudly\n", false),
        ("tier: 4\n", false),
        ("dry_run: true\n", false),
        ("tier: 2\ntiers: 3\n", false),
        ("tier: 2\nreal:\n  dockr: /usr/bin/docker\n", false),
        ("tier: 2\nskills:\n  baseline: /s\n  extra: /x\n", false),
        ("tier: 2\nendpoints:\n  - id: http.x\n    path: /x\n    tier: sometimes\n", false),
        ("tier: 2\nendpoints:\n  - id: deploy\n    path: /x\n    tier: 3\n", false),
    ];
    for (i, (text, valid)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("case{i}.yaml"));
        std::fs::write(&file, text).unwrap();
        let (ok, why) = schema_accepts(&schema, &file);
        assert_eq!(ok, *valid, "schema on:\n{text}\n{why}");
        // The gate's reading of the same file (explain --config loads it as the gate does,
        // without the ownership checks).
        let out = Command::new(bin())
            .args(["explain", "--config"])
            .arg(&file)
            .args(["--", "git", "status"])
            .output()
            .unwrap();
        let gate_ok = out.status.code() != Some(78);
        assert_eq!(gate_ok, *valid, "gate on:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn version_names_the_commit_and_the_build_date() {
    let out = Command::new(bin()).arg("--version").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let re = regex::Regex::new(r"^tiershim (\d+\.\d+\.\d+) \(commit ([0-9a-f]{12}|unknown), built (\d{4}-\d{2}-\d{2})\)\n$").unwrap();
    let caps = re.captures(&text).unwrap_or_else(|| panic!("{text:?}"));
    assert_eq!(&caps[1], env!("CARGO_PKG_VERSION"));
    // Built from a git work tree, it is the commit checked out.
    let head = Command::new("git")
        .current_dir(repo())
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .unwrap();
    if head.status.success() {
        assert_eq!(&caps[2], String::from_utf8_lossy(&head.stdout).trim());
    }
}

#[test]
fn a_git_archive_tarball_carries_its_commit_for_the_build() {
    // build.rs reads .git-archive-commit when there is no .git: git archive fills it in.
    let out = Command::new("git")
        .current_dir(repo())
        .args(["archive", "HEAD", ".git-archive-commit"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let head = Command::new("git")
        .current_dir(repo())
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
    let tar = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(tar.contains(&format!("\n{head}\n")), "{tar}");
}

#[test]
fn nothing_tiershim_prints_to_a_pipe_carries_colour_codes() {
    // clap colours help and usage errors only on a terminal; the gate and the admin commands
    // print plain text. TERM names a colour terminal, and every stream here is a pipe.
    let env = crate::harness::TestEnv::new(1, "");
    let mut runs: Vec<std::process::Output> = Vec::new();
    for args in [
        &["--help"][..],
        &["explain", "--help"],
        &["explain", "--no-such-option"],
        &["no-such-command"],
        &["doctor", "--config", "/nonexistent/tiershim.yaml"],
        &["explain", "--tier", "1", "--", "docker", "restart", "api"],
    ] {
        runs.push(Command::new(bin()).args(args).env("TERM", "xterm-256color").output().unwrap());
    }
    runs.push(
        env.cmd("docker", &["restart", "api"])
            .env("TERM", "xterm-256color")
            .output()
            .unwrap(),
    );
    runs.push(env.cmd("git", &["status"]).env("TERM", "xterm-256color").output().unwrap());
    for out in &runs {
        for stream in [&out.stdout, &out.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(!text.contains('\x1b'), "{text:?}");
        }
    }
    // The usage error did say what was wrong.
    assert!(String::from_utf8_lossy(&runs[2].stderr).contains("--no-such-option"));
}
