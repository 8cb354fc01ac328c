//! Vetting passthrough tools: the table of programs that can run another program or write a
//! file (`shims/exec-capable.yaml`, embedded), the passthrough list format (`shims/passthrough`,
//! embedded as the shipped default), and the checks `tiershim policy check` and
//! `tiershim doctor` apply to a list and to what a tier directory really holds.
//!
//! Only the admin CLI uses this module; the gate never loads the table.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::tool::Tool;

/// The shipped table of exec-capable programs.
pub const EXEC_CAPABLE_YAML: &str = include_str!("../shims/exec-capable.yaml");
/// The shipped passthrough list.
pub const PASSTHROUGH: &str = include_str!("../shims/passthrough");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFile {
    names: Vec<String>,
    how: String,
    source: String,
}

/// Why a program is refused as passthrough, and where that is documented.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capability {
    pub how: String,
    pub source: String,
}

/// The table: program name -> capability.
#[derive(Debug)]
pub struct ExecCapable {
    by_name: BTreeMap<String, Capability>,
}

impl ExecCapable {
    pub fn embedded() -> Result<ExecCapable, String> {
        ExecCapable::parse(EXEC_CAPABLE_YAML)
    }

    pub fn parse(text: &str) -> Result<ExecCapable, String> {
        let entries: Vec<EntryFile> = serde_yaml_ng::from_str(text).map_err(|e| format!("shims/exec-capable.yaml: {e}"))?;
        let mut by_name = BTreeMap::new();
        for e in entries {
            for n in e.names {
                let cap = Capability {
                    how: e.how.clone(),
                    source: e.source.clone(),
                };
                if by_name.insert(n.clone(), cap).is_some() {
                    return Err(format!("shims/exec-capable.yaml: `{n}` is listed twice"));
                }
            }
        }
        Ok(ExecCapable { by_name })
    }

    /// The entry for a program name: the name itself, the name without a version suffix
    /// (`python3.11`, `pip3`, `gawk-5.1`), or the name before its first dot (`vim.basic`).
    pub fn lookup(&self, name: &str) -> Option<(&str, &Capability)> {
        let unversioned = name.trim_end_matches(|c: char| c.is_ascii_digit() || matches!(c, '.' | '-' | '_'));
        let stem = name.split('.').next().unwrap_or(name);
        [name, unversioned, stem]
            .into_iter()
            .filter(|n| !n.is_empty())
            .find_map(|n| self.by_name.get_key_value(n))
            .map(|(k, v)| (k.as_str(), v))
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }
}

/// One line of a passthrough list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passthrough {
    pub name: String,
    pub tiers: Vec<u8>,
    pub line: usize,
}

/// Parse a passthrough list: `NAME TIERS` per line (`TIERS` like `1,2,3`), `#` comments.
/// Every malformed line is a finding; the lines that parse are returned too.
pub fn parse_list(text: &str) -> (Vec<Passthrough>, Vec<String>) {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let fields: Vec<&str> = content.split_whitespace().collect();
        let [name, tiers] = fields[..] else {
            bad.push(format!("line {line}: `{content}` is not `NAME TIERS` (for example `cat 1,2,3`)"));
            continue;
        };
        let mut parsed = Vec::new();
        for t in tiers.split(',') {
            match t {
                "1" => parsed.push(1),
                "2" => parsed.push(2),
                "3" => parsed.push(3),
                _ => {
                    bad.push(format!("line {line}: tier `{t}` of {name} is not 1, 2 or 3"));
                    parsed.clear();
                    break;
                }
            }
        }
        if parsed.is_empty() {
            continue;
        }
        out.push(Passthrough {
            name: name.to_string(),
            tiers: parsed,
            line,
        });
    }
    (out, bad)
}

/// Everything wrong with a passthrough list, one line each (empty when it is vetted): a
/// program from the table, a gated tool's name (those are links to tiershim), a name with a
/// slash, a duplicate, or a malformed line.
pub fn vet_list(text: &str, table: &ExecCapable) -> Vec<String> {
    let (list, mut findings) = parse_list(text);
    let mut seen = BTreeMap::new();
    for p in &list {
        if let Some(first) = seen.insert(p.name.as_str(), p.line) {
            findings.push(format!("line {}: {} is already listed on line {first}", p.line, p.name));
        }
        findings.extend(vet_name(&p.name, table).into_iter().map(|f| format!("line {}: {f}", p.line)));
    }
    findings
}

/// What is wrong with a passthrough tool by its name alone.
pub fn vet_name(name: &str, table: &ExecCapable) -> Option<String> {
    if name.contains('/') || name.is_empty() || name.starts_with('.') {
        return Some(format!("`{name}` is not a program name"));
    }
    if Tool::from_name(name).is_some() {
        return Some(format!(
            "{name} is a gated tool: the tier directory links it to tiershim, never to the real program"
        ));
    }
    table.lookup(name).map(|(matched, cap)| refused(name, matched, cap))
}

fn refused(name: &str, matched: &str, cap: &Capability) -> String {
    let as_ = if name == matched {
        String::new()
    } else {
        format!(" (as {matched})")
    };
    format!("{name}{as_} can run a program or write a file: {} [{}]", cap.how, cap.source)
}

/// What is wrong with a passthrough entry of a tier directory: its name, the program it really
/// is (a link named `cat` that points at bash is bash), a script (it runs an interpreter), or a
/// set-id program.
pub fn vet_program(name: &str, target: &Path, table: &ExecCapable) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    if let Some(f) = vet_name(name, table) {
        out.push(f);
    }
    let real = match std::fs::canonicalize(target) {
        Ok(r) => r,
        Err(e) => {
            out.push(format!("{name} -> {}: {e}", target.display()));
            return out;
        }
    };
    let real_name = real.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if real_name != name
        && let Some((matched, cap)) = table.lookup(&real_name)
    {
        out.push(format!("{name} is {}: {}", real.display(), refused(&real_name, matched, cap)));
    }
    match std::fs::metadata(&real) {
        Ok(m) if !m.is_file() => out.push(format!("{name} -> {} is not a regular file", real.display())),
        Ok(m) if m.mode() & 0o6000 != 0 => out.push(format!("{name} -> {} is set-user-ID or set-group-ID", real.display())),
        Ok(_) => {}
        Err(e) => out.push(format!("{name} -> {}: {e}", real.display())),
    }
    if crate::access::is_script(&real) {
        out.push(format!(
            "{name} -> {} is a script: it runs an interpreter, which can run anything",
            real.display()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> ExecCapable {
        ExecCapable::embedded().unwrap()
    }

    #[test]
    fn the_shipped_table_loads_and_names_each_program_once() {
        let t = table();
        assert!(t.len() > 100, "{}", t.len());
        for n in [
            "sh", "bash", "env", "xargs", "find", "tar", "awk", "sed", "python3", "perl", "vi", "less", "sort",
        ] {
            assert!(t.lookup(n).is_some(), "{n}");
        }
    }

    #[test]
    fn the_shipped_passthrough_list_is_vetted() {
        assert_eq!(vet_list(PASSTHROUGH, &table()), Vec::<String>::new());
        let (list, bad) = parse_list(PASSTHROUGH);
        assert!(bad.is_empty());
        assert!(list.iter().any(|p| p.name == "cat" && p.tiers == vec![1, 2, 3]));
    }

    #[test]
    fn versioned_and_suffixed_names_match_their_program() {
        let t = table();
        for (name, want) in [
            ("python3.11", "python"),
            ("pip3.11", "pip"),
            ("perl5.36.0", "perl"),
            ("vim.basic", "vim"),
            ("gawk-5.1", "gawk"),
            ("mawk", "mawk"),
            ("ld-linux-x86-64.so.2", "ld-linux-x86-64.so.2"),
        ] {
            assert_eq!(t.lookup(name).map(|(m, _)| m), Some(want), "{name}");
        }
        for harmless in ["cat", "ls", "base64", "sha256sum", "jq", "date", "od", "grep"] {
            assert_eq!(t.lookup(harmless).map(|(m, _)| m), None, "{harmless}");
        }
    }

    #[test]
    fn a_list_with_an_exec_capable_program_is_refused_with_how_and_source() {
        let text = "cat 1,2,3\nawk 1\nenv 2,3\ngit 1\nls 1,4\ncat 2\n../x 1\nwc\n";
        let f = vet_list(text, &table());
        let want = [
            "line 2: awk can run a program or write a file",
            "line 3: env can run a program",
            "line 4: git is a gated tool",
            "line 5: tier `4` of ls is not 1, 2 or 3",
            "line 6: cat is already listed on line 1",
            "line 7: `../x` is not a program name",
            "line 8: `wc` is not `NAME TIERS`",
        ];
        for w in want {
            assert!(f.iter().any(|x| x.contains(w)), "missing {w:?} in {f:#?}");
        }
        assert!(f.iter().any(|x| x.contains("POSIX.1-2017 awk")), "{f:#?}");
        assert_eq!(f.len(), want.len(), "{f:#?}");
    }

    #[test]
    fn a_harmless_name_linked_to_a_shell_or_a_script_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let t = table();
        let bash = dir.path().join("bash");
        std::fs::write(&bash, b"\x7fELF").unwrap();
        let f = vet_program("cat", &bash, &t);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(f[0].starts_with("cat is "), "{f:#?}");
        assert!(f[0].contains("bash can run a program"), "{f:#?}");

        let script = dir.path().join("tool");
        std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        let f = vet_program("tool", &script, &t);
        assert!(f.iter().any(|x| x.contains("is a script")), "{f:#?}");

        let elf = dir.path().join("cat");
        std::fs::write(&elf, b"\x7fELF").unwrap();
        assert_eq!(vet_program("cat", &elf, &t), Vec::<String>::new());
    }
}
