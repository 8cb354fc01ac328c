//! Program name -> gated tool or the admin CLI. Exact names only: `docker.exe`, `Docker` or
//! `tiershim-gh` are the admin CLI, never a guess at a tool.

use std::path::Path;

use crate::tool::Tool;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Gate(Tool),
    Admin,
}

pub fn entry(exec_path: &Path) -> Entry {
    match exec_path.file_name().and_then(|n| n.to_str()).and_then(Tool::from_name) {
        Some(t) => Entry::Gate(t),
        None => Entry::Admin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_tool_names_are_gated() {
        assert_eq!(entry(Path::new("/p/tier1/docker")), Entry::Gate(Tool::Docker));
        assert_eq!(entry(Path::new("/p/tier1/gh")), Entry::Gate(Tool::Gh));
        for n in ["/p/tiershim", "/p/Docker", "/p/docker.exe", "/p/tiershim-gh", "/"] {
            assert_eq!(entry(Path::new(n)), Entry::Admin, "{n}");
        }
    }
}
