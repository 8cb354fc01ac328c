//! The files generated from the code and committed under `dist/`, so they cannot drift from it:
//! a man page for `tiershim` and for each subcommand (clap_mangen), shell completions for bash,
//! zsh and fish (clap_complete), and the JSON Schema of `tiershim.yaml` (schemars, from the
//! serde mirror in `install.rs`, draft-07 as editors' YAML language servers read it).
//!
//! A test only, so none of it is in the binary: it renders every file and fails when the
//! committed one differs or when `dist/` holds one the code no longer makes. `make generate`
//! (this test with `TIERSHIM_GENERATE=1`) writes them.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::Shell;

/// The CLI as the generated files show it: the crate version alone, so a commit does not make
/// every page stale.
fn command() -> clap::Command {
    super::Cli::command().version(env!("CARGO_PKG_VERSION"))
}

/// `(path under the repository, contents)` of every generated file.
fn generated() -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut cmd = command().disable_help_subcommand(true);
    cmd.build();
    man_pages(&cmd, &mut out);
    for (shell, name) in [
        (Shell::Bash, "tiershim.bash"),
        (Shell::Zsh, "_tiershim"),
        (Shell::Fish, "tiershim.fish"),
    ] {
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut command(), "tiershim", &mut buf);
        out.push((Path::new("dist/completions").join(name), buf));
    }
    let schema = schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<crate::install::InstallFile>();
    let mut text = serde_json::to_string_pretty(&schema).unwrap();
    text.push('\n');
    out.push((PathBuf::from("dist/tiershim.schema.json"), text.into_bytes()));
    out
}

/// One page per command, subcommands first, as `clap_mangen::generate_to` names them
/// (`tiershim-policy-check.1`).
fn man_pages(cmd: &clap::Command, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        man_pages(sub, out);
    }
    let man = clap_mangen::Man::new(cmd.clone())
        .source(concat!("tiershim ", env!("CARGO_PKG_VERSION")))
        .manual("tiershim manual");
    let mut buf = Vec::new();
    man.render(&mut buf).unwrap();
    out.push((Path::new("dist/man").join(man.get_filename()), buf));
}

#[test]
fn the_files_in_dist_are_the_ones_the_code_generates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let write = std::env::var_os("TIERSHIM_GENERATE").is_some_and(|v| !v.is_empty());
    let files = generated();
    let mut stale = Vec::new();
    for (rel, bytes) in &files {
        let path = root.join(rel);
        if std::fs::read(&path).ok().as_deref() != Some(bytes.as_slice()) {
            stale.push(rel.display().to_string());
            if write {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, bytes).unwrap();
            }
        }
    }
    for dir in ["dist/man", "dist/completions"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let rel = Path::new(dir).join(entry.unwrap().file_name());
            if !files.iter().any(|(r, _)| *r == rel) {
                stale.push(format!("{} (no longer generated)", rel.display()));
                if write {
                    std::fs::remove_file(root.join(&rel)).unwrap();
                }
            }
        }
    }
    if !write {
        assert!(
            stale.is_empty(),
            "stale generated files: {}; run `make generate` and commit dist/",
            stale.join(", ")
        );
    }
}

#[test]
fn the_schema_names_every_key_of_tiershim_yaml_and_refuses_others() {
    let (_, text) = generated().into_iter().find(|(r, _)| r.ends_with("tiershim.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_slice(&text).unwrap();
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], serde_json::json!(["tier"]));
    assert_eq!(schema["properties"]["tier"]["minimum"], 1);
    assert_eq!(schema["properties"]["tier"]["maximum"], 3);
    for key in [
        "dry_run",
        "real",
        "real_dirs",
        "audit_log",
        "skills",
        "hosts",
        "workspaces",
        "endpoints",
    ] {
        assert!(
            schema["properties"][key]["description"].is_string(),
            "{key} has no description: {}",
            schema["properties"][key]
        );
    }
}
