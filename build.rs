//! Turns `policy/*.yaml` into the compact form embedded in the binary: JSON without the rule
#![allow(clippy::expect_used, clippy::panic)]
//! examples. A gated call then parses a small JSON document instead of YAML. The YAML itself is
//! also embedded (for `tiershim policy check` and the tests, which run the examples).

use std::fs;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=policy");
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo")).join("policy");
    fs::create_dir_all(&out).expect("create OUT_DIR/policy");
    let mut entries: Vec<_> = fs::read_dir("policy").expect("read policy/").filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        println!("cargo:rerun-if-changed={}", path.display());
        let text = fs::read_to_string(&path).expect("read policy file");
        let mut value: serde_json::Value = match serde_yaml_ng::from_str(&text) {
            Ok(v) => v,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        for key in ["rules", "endpoints"] {
            if let Some(rules) = value.get_mut(key).and_then(|r| r.as_array_mut()) {
                for rule in rules {
                    if let Some(obj) = rule.as_object_mut() {
                        obj.remove("examples");
                    }
                }
            }
        }
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 file name");
        fs::write(out.join(format!("{stem}.json")), value.to_string()).expect("write policy json");
    }
}
