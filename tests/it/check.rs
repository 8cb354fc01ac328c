//! `tiershim check`, like `visudo -c`: the repository's policy and skills, every fixture under
//! tests/ that the gate could read, and a real installation pass; each kind of fault is named
//! with `file:line:column` and, for an unknown key, the key it is closest to; exit 0 or 78.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{Run, TestEnv, bin};
use crate::installed::{Installed, repo};

fn check(args: &[&str]) -> Run {
    Run {
        out: Command::new(bin()).arg("check").args(args).output().unwrap(),
    }
}

/// What under `dir` the gate could read: tiershim.yaml files, policy directories, skill
/// directories.
fn fixtures(dir: &Path, out: &mut Vec<(&'static str, PathBuf)>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
    entries.sort();
    let mut has_skill = false;
    for p in &entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            if name == "policy" {
                out.push(("--policy", p.clone()));
            } else {
                fixtures(p, out);
            }
        } else if name == "tiershim.yaml" {
            out.push(("--config", p.clone()));
        } else if name.ends_with(".md") && std::fs::read_to_string(p).unwrap_or_default().starts_with("# Skill:") {
            has_skill = true;
        }
    }
    if has_skill || entries.iter().any(|p| p.join("SKILL.md").is_file()) {
        out.push(("--skills", dir.to_path_buf()));
    }
}

#[test]
fn the_repository_policy_skills_and_every_test_fixture_pass_check() {
    let mut args: Vec<String> = vec![
        "--policy".into(),
        repo().join("policy").display().to_string(),
        "--skills".into(),
        repo().join("skills").display().to_string(),
    ];
    let mut found = Vec::new();
    fixtures(&repo().join("tests"), &mut found);
    for (flag, p) in &found {
        args.push(flag.to_string());
        args.push(p.display().to_string());
    }
    // The config the test harness writes for every gate test.
    let env = TestEnv::new(3, "");
    args.push("--config".into());
    args.push(env.config_path().display().to_string());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = check(&argv);
    assert_eq!(r.code(), 0, "{}{}", r.stdout(), r.stderr());
    assert!(r.stdout().ends_with("0 error(s), 0 warning(s)\n"), "{}", r.stdout());
    assert!(r.stdout().contains("checked policy "), "{}", r.stdout());
    assert!(r.stdout().contains("skills/git-pr.md"), "{}", r.stdout());

    // A real installation, every tier of it (as the binary installed there finds it).
    let inst = Installed::new(&[]);
    let out = Command::new(inst.tiershim()).args(["check", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["ok"].as_bool(), v["errors"].as_u64()), (Some(true), Some(0)), "{v}");
    let checked = v["checked"].to_string();
    for n in 1..=3 {
        assert!(checked.contains(&format!("tier{n}/tiershim.yaml")), "{checked}");
    }

    // A relative --config is read from the caller's directory as the file it names: the same
    // findings as its absolute path, the tier directory being the file's.
    let run_in = |dir: &Path, config: &Path| {
        Command::new(inst.tiershim())
            .args(["check", "--json", "--config"])
            .arg(config)
            .current_dir(dir)
            .output()
            .unwrap()
    };
    let tier2 = inst.tier_dir(2);
    let absolute = run_in(Path::new("/"), &tier2.join("tiershim.yaml"));
    for (dir, rel) in [(tier2.clone(), "tiershim.yaml"), (inst.tier_dir(1), "../tier2/tiershim.yaml")] {
        let out = run_in(&dir, Path::new(rel));
        assert_eq!(out.status.code(), Some(0), "{rel}: {}", String::from_utf8_lossy(&out.stdout));
        assert_eq!(out.stdout, absolute.stdout, "{rel}");
    }
}

#[test]
fn each_fault_is_named_with_its_file_line_and_column() {
    let env = TestEnv::new(2, "");
    let cfg = env.config_path();
    let good = std::fs::read_to_string(&cfg).unwrap();
    let run = |args: &[&str]| {
        let mut a = vec!["--config", cfg.to_str().unwrap()];
        a.extend_from_slice(args);
        check(&a)
    };
    // An unknown key, with the key it is closest to.
    env.write_config(&format!("{good}cooldown_stat: /x.json\n"));
    let r = run(&[]);
    assert_eq!(r.code(), 78, "{}", r.stdout());
    let line = good.lines().count() + 1;
    assert!(
        r.stdout().contains(&format!(
            "{}:{line}:1: error: unknown field `cooldown_stat`, expected one of `tier`, `dry_run`,",
            cfg.display()
        )),
        "{}",
        r.stdout()
    );
    assert!(r.stdout().contains("(did you mean `cooldown_state`?)"), "{}", r.stdout());
    // A nested key.
    env.write_config(&format!("{good}skills:\n  baseline: /x\n  repo: /y\n"));
    let r = run(&[]);
    assert!(
        r.stdout().contains(&format!(
            "{}:{}:3: error: skills: unknown field `repo`, expected `baseline` or `repos` (did you mean `repos`?)",
            cfg.display(),
            line + 2
        )),
        "{}",
        r.stdout()
    );
    // A value the gate does not accept: the line of its key.
    env.write_config(&good.replace("tier: 2", "tier: 5"));
    let r = run(&[]);
    assert!(
        r.stdout()
            .contains(&format!("{}:1:1: error: `tier: 5` is not 1, 2 or 3", cfg.display())),
        "{}",
        r.stdout()
    );
    // A file the gate would not trust.
    env.write_config(&good);
    std::fs::set_permissions(&cfg, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    let r = run(&[]);
    assert_eq!(r.code(), 78);
    assert!(
        r.stdout()
            .contains(&format!("{}: error: this file is writable by group or others", cfg.display())),
        "{}",
        r.stdout()
    );
    std::fs::set_permissions(&cfg, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();

    // The policy directory the config names: a misnamed file, a key typo, an example that
    // disagrees (the line of its rule).
    let dir = env.path("policy");
    std::fs::create_dir(&dir).unwrap();
    let docker = std::fs::read_to_string(repo().join("policy/docker.yaml")).unwrap();
    std::fs::write(dir.join("docker.yml"), &docker).unwrap();
    env.write_config(&format!("{good}policy: {}\n", dir.display()));
    let r = run(&[]);
    assert_eq!(r.code(), 78);
    assert!(
        r.stdout().contains(&format!(
            "{}: error: is not a file the policy knows (did you mean `docker.yaml`?)",
            dir.join("docker.yml").display()
        )),
        "{}",
        r.stdout()
    );
    std::fs::remove_file(dir.join("docker.yml")).unwrap();
    let typo = docker.replacen("    tier: 1\n", "    teir: 1\n", 1);
    assert_ne!(typo, docker);
    std::fs::write(dir.join("docker.yaml"), &typo).unwrap();
    let at = typo.lines().position(|l| l == "    teir: 1").unwrap() + 1;
    let r = run(&[]);
    assert!(
        r.stdout()
            .contains(&format!("{}:{at}:5: error: rules[", dir.join("docker.yaml").display()))
            && r.stdout().contains("unknown field `teir`")
            && r.stdout().contains("(did you mean `tier`?)"),
        "{}",
        r.stdout()
    );
    let broken = docker.replacen("        - [ps]\n", "        - [restart, api]\n", 1);
    std::fs::write(dir.join("docker.yaml"), &broken).unwrap();
    let r = run(&["--json"]);
    assert_eq!(r.code(), 78);
    let v: serde_json::Value = serde_json::from_str(&r.stdout()).unwrap();
    let f = &v["findings"][0];
    assert_eq!(f["file"], dir.join("docker.yaml").display().to_string());
    let id_line = f["line"].as_u64().unwrap() as usize;
    assert!(broken.lines().nth(id_line - 1).unwrap().contains("id: docker."), "{f}");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("allow example `docker restart api` is refuse"),
        "{f}"
    );
    std::fs::remove_file(dir.join("docker.yaml")).unwrap();

    // A skill the config reads: its file and line.
    let skills = env.path("skills");
    std::fs::create_dir(&skills).unwrap();
    std::fs::write(skills.join("ops.md"), "# Skill: ops\n\n## Scope Rules\n\n```dney\n*.pem\n```\n").unwrap();
    env.write_config(&format!("{good}skills: {{baseline: {}}}\n", skills.display()));
    let r = run(&[]);
    assert_eq!(r.code(), 78);
    assert!(
        r.stdout().contains(&format!(
            "{}:5: error: a ```dney block in Scope Rules is neither `deny` nor `allow` (did you mean `deny`?)",
            skills.join("ops.md").display()
        )),
        "{}",
        r.stdout()
    );
    assert!(
        r.stdout().contains("warning: required section `## Purpose` is missing"),
        "{}",
        r.stdout()
    );
}
