//! The setgid group of a hardened install (`install.sh --harden`): tiershim is installed
//! setgid `tiershim`, and the real tools live in a directory only that group can search. This
//! module owns the two moments the group matters:
//!
//! - [`exec_as_caller`]: open the real tool while the group is held, drop the group completely
//!   (real, effective and saved gid), then execute the opened file (`execveat` with
//!   `AT_EMPTY_PATH`, i.e. fexecve). The real tool runs with the caller's identity only. A
//!   binary real tool is installed readable by the group only (0751), so the caller cannot read
//!   the program it now runs and the kernel makes the process non-dumpable: its `/proc/<pid>/`
//!   environment and memory are closed to the caller's other processes.
//! - [`command`]: a child the gate itself starts (the real git that works out the files a pull
//!   request changes) gets the same treatment: opened with the group, run without it.
//! - [`open_kept`]: a real tool the exec'd tool must run itself (ansible's ssh connection,
//!   `crate::ansible_ssh`): opened while the group is held, at a fixed descriptor that stays open
//!   across exec, so the tool reaches it as `/proc/<its pid>/fd/<N>`.
//! - [`drop_group`]: the admin CLI (`tiershim shell`, `doctor`, …) never needs the group, so it
//!   drops it before doing anything else.
//!
//! It decides nothing and reads no config; without the setgid bit every function here is a
//! no-op or an ordinary exec.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use nix::fcntl::{AtFlags, FdFlag, OFlag};
use nix::sys::stat::Mode;
use nix::unistd::Gid;

use crate::error::{Error, Result};

/// How often an exec that fails with ETXTBSY is tried again, 10 ms apart.
pub const BUSY_RETRIES: u32 = 50;

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
    let mut tries = 0;
    loop {
        match nix::unistd::execveat(&file, empty, argv, envp, AtFlags::AT_EMPTY_PATH) {
            // As in `exec::exec`: a file briefly open for writing elsewhere.
            Err(nix::errno::Errno::ETXTBSY) if tries < BUSY_RETRIES => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(errno) => return fail(std::io::Error::from(errno)),
            Ok(never) => match never {},
        }
    }
}

/// Open `real` (while the group is held) at descriptor `target`, open across exec (not
/// close-on-exec), for a real tool that runs it by `/proc/<pid>/fd/<target>` after the gate has
/// become that tool. A `target` the gate itself holds (a close-on-exec descriptor: the audit
/// log, the cooldown state's lock) is an error rather than closed under the gate; one inherited
/// from the caller is replaced.
pub fn open_kept(real: &Path, target: std::os::fd::RawFd) -> Result<OwnedFd> {
    let fail = |source: std::io::Error| Error::Exec {
        path: real.to_path_buf(),
        source,
    };
    // SAFETY: F_GETFD only reads the descriptor's flags; an unused number fails with EBADF.
    let flags = unsafe { libc::fcntl(target, libc::F_GETFD) };
    if flags >= 0 && flags & libc::FD_CLOEXEC != 0 {
        return Err(Error::Internal(format!(
            "descriptor {target}, where the gate keeps {} open for the real tool, is in use by the gate",
            real.display()
        )));
    }
    let fd: OwnedFd = nix::fcntl::open(real, OFlag::O_RDONLY | OFlag::O_CLOEXEC, Mode::empty()).map_err(|e| fail(e.into()))?;
    if fd.as_raw_fd() == target {
        nix::fcntl::fcntl(&fd, nix::fcntl::FcntlArg::F_SETFD(FdFlag::empty())).map_err(|e| fail(e.into()))?;
        return Ok(fd);
    }
    // SAFETY: `target` is not one of the gate's own descriptors (checked above: everything the
    // gate opens is close-on-exec), so no other owner closes or uses it; dup2 clears
    // close-on-exec on the copy.
    unsafe { nix::unistd::dup2_raw(&fd, target) }.map_err(|e| fail(e.into()))
}

/// A [`Command`] that runs the real tool at `real` as the caller. Without the group this is
/// `Command::new(real)`. With it, the file is opened now (while the group is held) and the
/// child, after dropping the group completely, executes it through `/proc/self/fd/N`, a path
/// that needs no search permission on the directory the file lives in. Keep the returned
/// descriptor alive until the command has been spawned.
pub fn command(real: &Path, argv0: &std::ffi::OsStr) -> std::io::Result<(Command, Option<OwnedFd>)> {
    if !held() {
        let mut c = Command::new(real);
        c.arg0(argv0);
        return Ok((c, None));
    }
    let fd: OwnedFd = nix::fcntl::open(real, OFlag::O_RDONLY | OFlag::O_CLOEXEC, Mode::empty())?;
    let file = std::fs::File::from(fd);
    let mut head = [0u8; 2];
    if file.read_exact_at(&mut head, 0).is_ok() && &head == b"#!" {
        // The interpreter opens /proc/self/fd/N after exec.
        nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFD(FdFlag::empty()))?;
    }
    let real_gid = nix::unistd::getgid();
    let mut c = Command::new(format!("/proc/self/fd/{}", file.as_raw_fd()));
    c.arg0(argv0);
    // SAFETY: the closure runs in the forked child before exec and only makes the setresgid and
    // getresgid system calls, which are async-signal-safe; it allocates nothing.
    unsafe {
        c.pre_exec(move || {
            nix::unistd::setresgid(real_gid, real_gid, real_gid)?;
            match nix::unistd::getresgid() {
                Ok(r) if r.real == real_gid && r.effective == real_gid && r.saved == real_gid => Ok(()),
                _ => Err(std::io::Error::other("the tiershim group is still held")),
            }
        });
    }
    Ok((c, Some(OwnedFd::from(file))))
}
