//! An operator's everyday mistakes, each tried through the real binary and links: the gate
//! refuses (78) with a message that names the file and the fix, and the operator's tools
//! (`doctor`, `policy check`, `check`) report the same. docs/troubleshooting.md's table of mistakes lists them.

use std::path::Path;
use std::process::Command;

use crate::harness::{Run, TestEnv, bin};

fn admin(args: &[&str]) -> Run {
    Run {
        out: Command::new(bin()).args(args).output().unwrap(),
    }
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn a_policy_directory_that_does_not_exist_refuses_every_call() {
    let env = TestEnv::new(2, "");
    let missing = env.path("etc/policy");
    env.write_config(&format!(
        "tier: 2\nreal_dirs: [{}]\naudit_log: {}\npolicy: {}\n",
        env.real.display(),
        env.audit.display(),
        missing.display()
    ));
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        format!(
            "tiershim: docker: policy {}: the override directory `policy:` in tiershim.yaml names does not exist; \
             create it with the files to override, or remove the key to use the embedded policy\n",
            missing.display()
        )
    );
    assert_eq!(env.received("docker"), None);
    let r = admin(&["doctor", "--config", env.config_path().to_str().unwrap(), "--user", "0"]);
    assert_eq!(r.code(), 78, "{}", r.stdout());
    assert!(
        r.stdout()
            .contains(&format!("✗ policy {}: the override directory", missing.display())),
        "{}",
        r.stdout()
    );
    let r = admin(&["policy", "check", missing.to_str().unwrap()]);
    assert_eq!(r.code(), 78, "{}", r.stdout());
    assert!(r.stdout().contains("does not exist"), "{}", r.stdout());
}

#[test]
fn a_policy_file_that_is_a_link_to_nothing_refuses_instead_of_the_embedded_rules() {
    let env = TestEnv::new(2, "");
    let dir = env.path("policy");
    std::fs::create_dir_all(&dir).unwrap();
    env.write_config(&format!(
        "tier: 2\nreal_dirs: [{}]\naudit_log: {}\npolicy: {}\n",
        env.real.display(),
        env.audit.display(),
        dir.display()
    ));
    // The operator's docker rules (and budgets) are a link whose target went away: the gate
    // must not fall back to the embedded rules, which the operator meant to replace.
    for file in ["docker.yaml", "cooldown.yaml"] {
        let link = dir.join(file);
        std::os::unix::fs::symlink(env.path("gone.yaml"), &link).unwrap();
        if file == "docker.yaml" {
            let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
            assert_eq!(r.code(), 78, "{file}: {}", r.stderr());
            assert!(
                r.stderr().contains(&format!("{}: is a symbolic link to", link.display())),
                "{file}: {}",
                r.stderr()
            );
            assert_eq!(env.received("docker"), None, "{file}");
        }
        let r = admin(&["check", "--policy", dir.to_str().unwrap()]);
        assert_eq!(r.code(), 78, "{file}: {}", r.stdout());
        assert!(r.stdout().contains("is a symbolic link to"), "{file}: {}", r.stdout());
        std::fs::remove_file(&link).unwrap();
    }
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
}

#[test]
fn a_policy_file_the_policy_does_not_know_refuses_every_call_with_a_suggestion() {
    let env = TestEnv::new(2, "");
    let dir = env.path("policy");
    // The operator meant to override docker's rules; `.yml` is not read.
    let docker = std::fs::read_to_string(crate::installed::repo().join("policy/docker.yaml")).unwrap();
    write(&dir.join("docker.yml"), &docker);
    env.write_config(&format!(
        "tier: 2\nreal_dirs: [{}]\naudit_log: {}\npolicy: {}\n",
        env.real.display(),
        env.audit.display(),
        dir.display()
    ));
    let r = env.run("git", &["status"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    let file = dir.join("docker.yml");
    assert!(
        r.stderr().starts_with(&format!(
            "tiershim: git: policy {}: is not a file the policy knows (did you mean `docker.yaml`?), so the gate would \
             not read it and its rules would not apply; rename or remove it (the files: gh.yaml, tea.yaml, docker.yaml,",
            file.display()
        )),
        "{}",
        r.stderr()
    );
    let r = admin(&["doctor", "--config", env.config_path().to_str().unwrap(), "--user", "0"]);
    assert_eq!(r.code(), 78, "{}", r.stdout());
    assert!(r.stdout().contains("(did you mean `docker.yaml`?)"), "{}", r.stdout());

    // Renamed, it is read; hidden files (an editor's swap file) are not the policy's business.
    std::fs::rename(&file, dir.join("docker.yaml")).unwrap();
    write(&dir.join(".docker.yaml.swp"), "x");
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());

    // A copy of the repository's policy/ is a valid override, the built-in PostgreSQL list
    // included; a changed list is not (the gate reads only its own).
    let tsv = crate::installed::repo().join("policy/pg_catalog_functions.tsv");
    std::fs::copy(&tsv, dir.join("pg_catalog_functions.tsv")).unwrap();
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let mut changed = std::fs::read_to_string(&tsv).unwrap();
    changed.push_str("zz_mine\tvolatile\n");
    std::fs::write(dir.join("pg_catalog_functions.tsv"), changed).unwrap();
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr().contains("differs from the built-in PostgreSQL function list"),
        "{}",
        r.stderr()
    );
}

#[test]
fn audit_and_cooldown_with_a_config_that_names_no_file_say_what_to_add() {
    let env = TestEnv::new(2, "");
    env.write_config(&format!("tier: 2\nreal_dirs: [{}]\n", env.real.display()));
    let cfg = env.config_path();
    let r = admin(&["audit", "--config", cfg.to_str().unwrap()]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        format!(
            "tiershim audit: {} names no `audit_log:`, so that install keeps no audit log to read; add `audit_log: FILE` \
             to it (install.sh --audit-log FILE), or name a log: tiershim audit FILE\n",
            cfg.display()
        )
    );
    let r = admin(&["cooldown", "--config", cfg.to_str().unwrap()]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert_eq!(
        r.stderr(),
        format!(
            "tiershim cooldown: {} names no `cooldown_state:`, so that install keeps no restart or redeploy budget; \
             add `cooldown_state: FILE` to it (install.sh --cooldown-state FILE)\n",
            cfg.display()
        )
    );
    // Without a config or a file, audit asks for one of them.
    let r = admin(&["audit"]);
    assert_eq!(r.code(), 2, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("name the audit log (tiershim audit FILE), or an install's config"),
        "{}",
        r.stderr()
    );
}

#[test]
fn an_override_common_yaml_applies_to_every_tool_not_only_those_with_their_own_file() {
    let env = TestEnv::new(2, "");
    let dir = env.path("policy");
    let common = std::fs::read_to_string(crate::installed::repo().join("policy/common.yaml")).unwrap();
    write(&dir.join("common.yaml"), &format!("{common}    - MY_HOOK\n"));
    env.write_config(&format!(
        "tier: 2\nreal_dirs: [{}]\naudit_log: {}\npolicy: {}\n",
        env.real.display(),
        env.audit.display(),
        dir.display()
    ));
    // docker's rules are the embedded ones; the directory's common part still applies.
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1"), ("MY_HOOK", "/tmp/x")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!env.received_env("docker").unwrap().contains_key("MY_HOOK"));
    let resets = env.last_audit()["env_resets"].to_string();
    assert!(resets.contains("MY_HOOK"), "{resets}");
}

#[test]
fn a_rule_whose_when_names_a_mark_no_grammar_sets_refuses_every_call_with_a_suggestion() {
    let env = TestEnv::new(2, "");
    let dir = env.path("policy");
    // The operator meant `privileged`; as written, the rule would never match anything.
    let docker = std::fs::read_to_string(crate::installed::repo().join("policy/docker.yaml"))
        .unwrap()
        .replacen("when: [privileged]", "when: [priviliged]", 1);
    assert!(docker.contains("priviliged"));
    write(&dir.join("docker.yaml"), &docker);
    env.write_config(&format!(
        "tier: 2\nreal_dirs: [{}]\naudit_log: {}\npolicy: {}\n",
        env.real.display(),
        env.audit.display(),
        dir.display()
    ));
    let r = env.run("docker", &["ps"], &[("CLAUDEOPS_TIER", "1")]);
    assert_eq!(r.code(), 78, "{}", r.stderr());
    assert!(
        r.stderr()
            .contains(&format!("policy {}: rule docker.", dir.join("docker.yaml").display()))
            && r.stderr().contains(
                "`when:` names `priviliged`, which the docker grammar never sets (did you mean `privileged`?); \
                 `tiershim policy doc docker` lists its marks"
            ),
        "{}",
        r.stderr()
    );
    assert_eq!(env.received("docker"), None);
    let r = admin(&["policy", "check", dir.to_str().unwrap()]);
    assert_eq!(r.code(), 78, "{}", r.stdout());
    assert!(r.stdout().contains("(did you mean `privileged`?)"), "{}", r.stdout());

    // What it could have said, with what each word means.
    let r = admin(&["policy", "doc", "docker"]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(
        r.stdout()
            .lines()
            .any(|l| l.trim_start().starts_with("privileged ") && l.contains("a privileged container")),
        "{}",
        r.stdout()
    );
    assert!(r.stdout().contains("docker.unclassified"), "{}", r.stdout());
    let r = admin(&["policy", "doc", "dokcer"]);
    assert_eq!(r.code(), 2);
    assert!(r.stderr().contains("(did you mean `docker`?)"), "{}", r.stderr());
}
