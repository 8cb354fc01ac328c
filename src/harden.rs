//! The setgid group of a hardened install (`install.sh --harden`): tiershim is installed
//! setgid `tiershim`, and the real tools live in a directory only that group can search. This
//! module owns the two moments the group matters:
//!
//! - [`exec_as_caller`]: open the real tool while the group is held, drop the group completely
//!   (real, effective and saved gid), then execute the opened file (`execveat` with
//!   `AT_EMPTY_PATH`, i.e. fexecve). The real tool runs with the caller's identity only.
//! - [`drop_group`]: the admin CLI (`tiershim shell`, `doctor`, …) never needs the group, so it
//!   drops it before doing anything else.
//!
//! It decides nothing and reads no config; without the setgid bit every function here is a
//! no-op or an ordinary exec.

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use nix::fcntl::{AtFlags, FdFlag, OFlag};
use nix::sys::stat::Mode;
use nix::unistd::Gid;

use crate::error::{Error, Result};

/// Does this process hold a group its caller does not have (effective or saved gid differs
/// from the real gid)? True only when tiershim was executed through its setgid bit.
pub fn held() -> bool {
    match nix::unistd::getresgid() {
        Ok(r) => r.effective != r.real || r.saved != r.real,
        // Cannot tell: assume held, so callers take the careful path.
        Err(_) => true,
    }
}

/// Set real, effective and saved gid to the caller's real gid, and check that it stuck.
pub fn drop_group() -> Result<()> {
    let res = nix::unistd::getresgid().map_err(|e| Error::Internal(format!("getresgid: {e}")))?;
    let real: Gid = res.real;
    if res.effective == real && res.saved == real {
        return Ok(());
    }
    nix::unistd::setresgid(real, real, real).map_err(|e| Error::Internal(format!("cannot drop the tiershim group: {e}")))?;
    match nix::unistd::getresgid() {
        Ok(r) if r.real == real && r.effective == real && r.saved == real => Ok(()),
        _ => Err(Error::Internal("the tiershim group is still held after setresgid".into())),
    }
}

/// Open `real` while the group is held, drop the group, and execute the opened file.
/// Returns only on failure, and never executes anything after a failure.
///
/// A script (`#!`) is run by the kernel as `interpreter /dev/fd/N`, so its descriptor must stay
/// open across exec; an ELF binary's descriptor is close-on-exec, so the real tool's own
/// children do not inherit a handle on it.
pub fn exec_as_caller(real: &Path, argv: &[CString], envp: &[CString]) -> Error {
    let fail = |source: std::io::Error| Error::Exec {
        path: real.to_path_buf(),
        source,
    };
    let fd: OwnedFd = match nix::fcntl::open(real, OFlag::O_RDONLY | OFlag::O_CLOEXEC, Mode::empty()) {
        Ok(fd) => fd,
        Err(e) => return fail(e.into()),
    };
    let file = std::fs::File::from(fd);
    let mut head = [0u8; 2];
    let script = file.read_exact_at(&mut head, 0).is_ok() && &head == b"#!";
    if script && let Err(e) = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFD(FdFlag::empty())) {
        return fail(e.into());
    }
    if let Err(e) = drop_group() {
        return e;
    }
    let empty = c"";
    match nix::unistd::execveat(&file, empty, argv, envp, AtFlags::AT_EMPTY_PATH) {
        Err(errno) => fail(std::io::Error::from(errno)),
        Ok(never) => match never {},
    }
}
