//! The audit log under rotation by rename, done by the real logrotate with the shipped
//! configuration (examples/logrotate/tiershim), and the log-shipping examples: every record a
//! gate writes ends up in exactly one file, whole.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::TestEnv;
use crate::installed::repo;

fn logrotate() -> PathBuf {
    for p in ["/usr/sbin/logrotate", "/sbin/logrotate", "/usr/bin/logrotate"] {
        if Path::new(p).exists() {
            return PathBuf::from(p);
        }
    }
    panic!("logrotate is not installed; scripts/test-deps.sh installs it")
}

/// The shipped configuration with this test's log path and a `create` for this test's user.
/// `back_to_back`: for rotations faster than the shipped file assumes, without compression
/// (delaycompress defers it one rotation, not one call) and keeping every rotated file.
fn config(env: &TestEnv, back_to_back: bool) -> PathBuf {
    let shipped = std::fs::read_to_string(repo().join("examples/logrotate/tiershim")).unwrap();
    assert!(shipped.contains("/var/log/tiershim/audit.jsonl {"), "{shipped}");
    let mut text = String::new();
    for line in shipped.lines() {
        let line = match line.split_whitespace().next().unwrap_or("") {
            "create" => "    create 0640".to_string(),
            "compress" | "delaycompress" if back_to_back => continue,
            "rotate" if back_to_back => "    rotate 100000".to_string(),
            _ => line.replace("/var/log/tiershim/audit.jsonl", &env.audit.display().to_string()),
        };
        text.push_str(&line);
        text.push('\n');
    }
    let path = env.path("logrotate.conf");
    std::fs::write(&path, text).unwrap();
    path
}

fn rotate(env: &TestEnv, conf: &Path) {
    let out = Command::new(logrotate())
        .arg("--force")
        .arg("--state")
        .arg(env.path("logrotate.state"))
        .arg(conf)
        .output()
        .unwrap();
    assert!(out.status.success(), "logrotate: {}", String::from_utf8_lossy(&out.stderr));
}

/// Every record in the log and its rotated copies (gzip ones through gzip -dc), by file name.
fn records(env: &TestEnv) -> Vec<(String, serde_json::Value)> {
    let dir = env.audit.parent().unwrap();
    let base = env.audit.file_name().unwrap().to_string_lossy().into_owned();
    let mut out = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&base))
        .collect();
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let text = if name.ends_with(".gz") {
            let o = Command::new("gzip").arg("-dc").arg(&path).output().unwrap();
            String::from_utf8(o.stdout).unwrap()
        } else {
            std::fs::read_to_string(&path).unwrap()
        };
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}: {e}: {line:?}"));
            out.push((name.clone(), v));
        }
    }
    out
}

#[test]
fn a_rotation_between_two_calls_loses_no_record() {
    let env = TestEnv::new(1, "");
    let conf = config(&env, false);
    env.run("docker", &["ps"], &[]);
    rotate(&env, &conf);
    env.run("docker", &["inspect", "api"], &[]);
    rotate(&env, &conf);
    env.run("docker", &["restart", "api"], &[]);
    let got: Vec<(String, String, String)> = records(&env)
        .into_iter()
        .map(|(f, v)| (f, v["argv"].to_string(), v["verdict"].as_str().unwrap().to_string()))
        .collect();
    let base = env.audit.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        got,
        [
            (base.clone(), r#"["restart","api"]"#.to_string(), "refuse".to_string()),
            (format!("{base}.1"), r#"["inspect","api"]"#.to_string(), "allow".to_string()),
            // Compressed one rotation later (delaycompress).
            (format!("{base}.2.gz"), r#"["ps"]"#.to_string(), "allow".to_string()),
        ]
    );
    // tiershim audit reads the live file; each rotated one is read by name.
    let out = Command::new(crate::harness::bin())
        .arg("audit")
        .arg(env.audit.with_file_name(format!("{base}.1")))
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["decisions"], 1, "{report}");
}

#[test]
fn rotations_during_concurrent_calls_lose_or_split_no_record() {
    let env = std::sync::Arc::new(TestEnv::new(1, ""));
    let conf = config(&env, true);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let env = env.clone();
            std::thread::spawn(move || {
                for i in 0..15 {
                    let name = format!("c{t}x{i}");
                    let r = env.run("docker", &["inspect", &name], &[]);
                    assert_eq!(r.code(), 0, "{}", r.stderr());
                }
            })
        })
        .collect();
    // Rotate until every caller is done (at least a few times), keeping every file.
    let mut rotations = 0;
    while rotations < 3 || threads.iter().any(|t| !t.is_finished()) {
        rotate(&env, &conf);
        rotations += 1;
    }
    for t in threads {
        t.join().unwrap();
    }
    let mut names: Vec<String> = records(&env)
        .into_iter()
        .map(|(_, v)| v["argv"][1].as_str().unwrap().to_string())
        .collect();
    names.sort();
    let mut want: Vec<String> = (0..4).flat_map(|t| (0..15).map(move |i| format!("c{t}x{i}"))).collect();
    want.sort();
    assert_eq!(names, want, "after {rotations} rotations");
}

#[test]
fn the_log_shipping_examples_parse_and_read_the_log_logrotate_rotates() {
    // Vector and Fluent Bit are not in the registries this project installs from, so their
    // examples are checked as YAML only, and for naming the same log as the logrotate example.
    for (file, path_key) in [("vector.yaml", "include"), ("fluent-bit.yaml", "path")] {
        let text = std::fs::read_to_string(repo().join("examples/log-shipping").join(file)).unwrap();
        let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let shown = serde_json::to_string(&doc).unwrap();
        assert!(
            shown.contains("\"/var/log/tiershim/audit.jsonl\""),
            "{file} does not read the audit log"
        );
        assert!(text.contains(&format!("{path_key}:")), "{file}");
    }
}
