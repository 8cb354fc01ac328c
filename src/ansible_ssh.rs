//! ansible's ssh connection and its local temporary directory, pinned by the gate
//! (docs/ansible.md, "Connections", and its paragraph on the environment).
//!
//! Under the kernel fence (`kernel_fence` on), every ansible tool runs with `ANSIBLE_LOCAL_TEMP`
//! and `TMPDIR` set to the agent's private temporary directory (`~/.claude/tmp`, which every
//! tier's Landlock domain may write): the domain does not let it write the policy's `/tmp`, where
//! ansible makes its `ansible-local-*` directory at start-up, nor the other places Python's
//! `tempfile` tries, and ansible stops when it cannot. An operator's pin of
//! `ANSIBLE_LOCAL_TEMP` stays. Without the fence the policy's `/tmp` stays and `TMPDIR` is not
//! passed.
//!
//! ansible runs
//! `ssh` from `PATH`, which in a tier directory is the gate's ssh; so an allowed `ansible-playbook`
//! or `ansible` call runs with ansible's ssh settings set by the gate, over any pin of the same
//! variable:
//!
//! - `ANSIBLE_SSH_EXECUTABLE`: the real ssh of `tiershim.yaml` (`real.ssh` or `real_dirs`).
//!   In a hardened install the agent's user cannot reach it, so the gate opens it while it holds
//!   the group, at descriptor [`FD`], open across exec, and names it `/proc/<pid>/fd/<FD>`:
//!   the pid is the gate's, which the real ansible keeps (exec keeps the pid), and ansible's
//!   workers and the ssh they start find it there although they close their own descriptors.
//! - `ANSIBLE_SSH_TRANSFER_METHOD=piped`: files go over the same ssh (`dd` on the remote side),
//!   never through `sftp` or `scp` from `PATH`.
//! - `ANSIBLE_SSH_ARGS`: `-F /etc/ssh/ssh_config` (as the gate's own ssh calls: never the
//!   agent's `~/.ssh/config`, which names programs to run) before the operator's pin, or
//!   ansible's default (`-C -o ControlMaster=auto -o ControlPersist=60s`).
//! - `ANSIBLE_TRANSPORT=ssh`, unless pinned: ansible's default connection, `smart`, asks
//!   `ssh -o ControlPersist` from `PATH` (the gate's ssh) whether ssh can keep a connection open.
//! - `ANSIBLE_SSH_CONTROL_PATH_DIR`, unless pinned: the agent's own temporary directory
//!   (`~/.claude/tmp/ansible-cp`, which the kernel fence lets every tier write), since ansible's
//!   default lies in the tool home, the operator's.
//!
//! Must not: decide (the call was allowed before this runs), or run anything.

use std::collections::BTreeMap;
use std::os::fd::{OwnedFd, RawFd};

use crate::error::{Error, Result};
use crate::install::{InstallConfig, KernelFence};
use crate::tool::Tool;

/// The descriptor the real ssh is kept open at for a hardened ansible.
pub const FD: RawFd = 100;

/// ansible-core's own default of `ANSIBLE_SSH_ARGS`.
pub const DEFAULT_ARGS: &str = "-C -o ControlMaster=auto -o ControlPersist=60s";

/// The tools whose ssh connection this pins.
pub fn connects(tool: Tool) -> bool {
    matches!(tool, Tool::AnsiblePlaybook | Tool::Ansible)
}

/// The variables the gate sets for ansible's ssh connection, and the descriptor that must stay
/// open until exec (hardened). None when no real ssh is installed: ansible's ssh connection
/// then reaches the gate's ssh link, which says so.
pub struct Pinned {
    pub vars: Vec<(&'static str, String)>,
    pub kept: Option<OwnedFd>,
}

/// The variables for ansible's ssh connection (see the module doc), with `pins` the operator's
/// pinned variables and `home` the agent's home directory (from the account database).
pub fn pin(cfg: &InstallConfig, pins: &BTreeMap<String, String>, home: Option<&std::path::Path>) -> Result<Option<Pinned>> {
    let real = match crate::exec::resolve_real(cfg, Tool::Ssh) {
        Ok(p) => p,
        Err(Error::RealMissing { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let (executable, kept) = if crate::harden::held() {
        let fd = crate::harden::open_kept(&real, FD)?;
        (format!("/proc/{}/fd/{FD}", std::process::id()), Some(fd))
    } else {
        (real.display().to_string(), None)
    };
    let args = pins.get("ANSIBLE_SSH_ARGS").map_or(DEFAULT_ARGS, String::as_str);
    let mut vars = vec![
        ("ANSIBLE_SSH_EXECUTABLE", executable),
        ("ANSIBLE_SSH_TRANSFER_METHOD", "piped".to_string()),
        (
            "ANSIBLE_SSH_ARGS",
            format!("-F {} {args}", crate::grammar::ssh::PINNED_CONFIG).trim_end().to_string(),
        ),
    ];
    if !pins.contains_key("ANSIBLE_TRANSPORT") {
        vars.push(("ANSIBLE_TRANSPORT", "ssh".to_string()));
    }
    if !pins.contains_key("ANSIBLE_SSH_CONTROL_PATH_DIR")
        && let Some(home) = home
    {
        let dir = crate::fence::tmp_dir(home).join("ansible-cp");
        vars.push(("ANSIBLE_SSH_CONTROL_PATH_DIR", dir.display().to_string()));
    }
    Ok(Some(Pinned { vars, kept }))
}

/// The ansible tools (their policies set `ANSIBLE_LOCAL_TEMP`).
pub fn is_ansible(tool: Tool) -> bool {
    matches!(
        tool,
        Tool::AnsiblePlaybook | Tool::Ansible | Tool::AnsibleInventory | Tool::AnsibleGalaxy
    )
}

/// The temporary directories of an ansible tool under the kernel fence (see the module doc):
/// `TMPDIR`, and `ANSIBLE_LOCAL_TEMP` unless the operator pinned it, both the agent's private
/// temporary directory, with `home` the agent's home directory. Nothing without the fence, for
/// another tool, or when the agent's home is unknown.
pub fn temp_dirs(
    tool: Tool,
    cfg: &InstallConfig,
    pins: &BTreeMap<String, String>,
    home: Option<&std::path::Path>,
) -> Vec<(&'static str, String)> {
    let Some(home) = home.filter(|_| is_ansible(tool) && matches!(cfg.kernel_fence, KernelFence::On { .. })) else {
        return Vec::new();
    };
    let dir = crate::fence::tmp_dir(home).display().to_string();
    let mut vars = vec![("TMPDIR", dir.clone())];
    if !pins.contains_key(LOCAL_TEMP) {
        vars.push((LOCAL_TEMP, dir));
    }
    vars
}

/// The variable of ansible's local temporary directory.
pub const LOCAL_TEMP: &str = "ANSIBLE_LOCAL_TEMP";

/// The agent's home directory: the caller's account by real uid.
pub fn agent_home() -> Option<std::path::PathBuf> {
    let uid = nix::unistd::getuid().as_raw().to_string();
    crate::access::account(&uid).ok().map(|a| a.home)
}
