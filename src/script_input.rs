//! The scripts a call reads (`psql -f FILE`, `psql -f -`, psql or mysql reading stdin), read by
//! the gate before the decision, and handed to the real tool as exactly the bytes that were
//! judged.
//!
//! Reading: each file named by the grammar's [`Sources`] is opened once (it must be a regular
//! file, at most [`MAX_SCRIPT`] bytes of UTF-8); stdin is read to its end under the same bound,
//! unless it is a terminal (then the call is an interactive session). What was read goes back to
//! the grammar as [`Inputs`] for the decision.
//!
//! Handing over (only for an allowed call, just before exec): every script is copied into a
//! memfd that is then sealed (no write, grow, shrink, or new seals), so neither the caller nor
//! anyone else can change it between the check and the run. This is the one declared rewrite of
//! the call besides a grammar's `PREPEND`: the word holding each `-f FILE` value gets
//! `/dev/fd/N` in place of `FILE` (the same option spelling, only the path changes), and a
//! script on stdin is replaced by its memfd as fd 0. Nothing else is changed.
//!
//! The files a call reads into its request (`curl -d @f`, `--data-binary @f`, `-H @f`,
//! `--data-urlencode n@f`, `gh api --input f`, `-F k=@f`) are read by `crate::files` before the
//! decision; [`seal_contents`] hands the tool the same bytes the same way (the word that ends
//! with the path, [`LocalFile::at`], gets `/dev/fd/N` for it), so a file changed between the
//! check and the run changes nothing. A content file the gate read but whose word it does not
//! know fails the call rather than letting the tool read it again.
//!
//! This module reads and copies; it decides nothing.

use std::ffi::CString;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::{Error, Result};
use crate::grammar::{self, Contents, Input, Inputs, Invocation, LocalFile, Sources};
use crate::tool::Tool;

/// The largest script the gate reads (1 MiB). A health check is far smaller; a bigger one is
/// refused rather than judged in part.
pub const MAX_SCRIPT: u64 = 1 << 20;

/// The scripts of one call, as read.
#[derive(Debug)]
pub struct Gathered {
    sources: Sources,
    pub inputs: Inputs,
}

/// Read the scripts `args` would make `tool` read, and parse the call again with them. Calls
/// that read no script cost nothing here: `None`, and `inv` unchanged.
pub fn gather(tool: Tool, args: &[String], inv: Invocation, cwd: &Path) -> (Invocation, Option<Gathered>) {
    if inv.problem.is_some() {
        return (inv, None);
    }
    let spec = tool.spec();
    let sources = (spec.sources)(args);
    if !sources.stdin && sources.files.is_empty() {
        return (inv, None);
    }
    let stdin = if sources.stdin { read_stdin() } else { Input::Unread };
    let files = sources.files.iter().map(|(path, _)| read_file(path, cwd)).collect();
    let inputs = Inputs { stdin, files };
    let inv = (spec.parse)(args, &grammar::Contents::new(), &inputs);
    (inv, Some(Gathered { sources, inputs }))
}

fn read_stdin() -> Input {
    // SAFETY: isatty has no preconditions; fd 0 may be closed, which it reports as false.
    if unsafe { libc::isatty(0) } == 1 {
        return Input::Terminal;
    }
    let mut buf = Vec::new();
    match std::io::stdin().lock().take(MAX_SCRIPT + 1).read_to_end(&mut buf) {
        Ok(_) => text(buf, "the script on stdin"),
        Err(e) => Input::Failed(format!("the script on stdin cannot be read: {e}")),
    }
}

fn read_file(path: &str, cwd: &Path) -> Input {
    let full = if Path::new(path).is_absolute() {
        Path::new(path).to_path_buf()
    } else {
        cwd.join(path)
    };
    let shown = format!("-f {path}");
    // O_NONBLOCK: a FIFO must not hang the gate; it is refused below as not a regular file.
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&full)
    {
        Ok(f) => f,
        Err(e) => return Input::Failed(format!("{shown}: cannot be read: {e}")),
    };
    match file.metadata() {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Input::Failed(format!("{shown}: not a regular file (the gate reads scripts from files only)")),
        Err(e) => return Input::Failed(format!("{shown}: cannot be read: {e}")),
    }
    let mut buf = Vec::new();
    match file.take(MAX_SCRIPT + 1).read_to_end(&mut buf) {
        Ok(_) => text(buf, &shown),
        Err(e) => Input::Failed(format!("{shown}: cannot be read: {e}")),
    }
}

fn text(buf: Vec<u8>, what: &str) -> Input {
    if buf.len() as u64 > MAX_SCRIPT {
        return Input::Failed(format!("{what} is larger than {} KiB, the most the gate reads", MAX_SCRIPT / 1024));
    }
    match String::from_utf8(buf) {
        Ok(s) if s.contains('\0') => Input::Failed(format!("{what} holds a NUL byte")),
        Ok(s) => Input::Text(s),
        Err(_) => Input::Failed(format!("{what} is not UTF-8 text")),
    }
}

/// The scripts in sealed memfds, ready for exec.
#[derive(Debug)]
pub struct Sealed {
    /// argv with each `-f FILE` pointing at its memfd.
    pub args: Vec<String>,
    stdin: Option<OwnedFd>,
    /// Kept open (and inherited) until exec.
    _files: Vec<OwnedFd>,
}

impl Gathered {
    /// Copy every script into a sealed memfd and rewrite argv to use them.
    pub fn seal(&self, args: &[String]) -> Result<Sealed> {
        let mut out = args.to_vec();
        let mut files = Vec::with_capacity(self.sources.files.len());
        for ((path, at), input) in self.sources.files.iter().zip(&self.inputs.files) {
            let Input::Text(t) = input else {
                return Err(Error::Internal(format!("-f {path} was not read, yet the call was allowed")));
            };
            let fd = sealed_memfd(t, false)?;
            let word = out
                .get(*at)
                .filter(|w| w.ends_with(path.as_str()))
                .ok_or_else(|| Error::Internal(format!("argv word {at} does not end with -f {path}")))?;
            let prefix = &word[..word.len() - path.len()];
            out[*at] = format!("{prefix}/dev/fd/{}", fd.as_raw_fd());
            files.push(fd);
        }
        let stdin = match &self.inputs.stdin {
            Input::Text(t) if self.sources.stdin => Some(sealed_memfd(t, true)?),
            _ => None,
        };
        Ok(Sealed {
            args: out,
            stdin,
            _files: files,
        })
    }
}

impl Sealed {
    /// Put the stdin script in place as fd 0. Call right before exec.
    pub fn install(&self) -> Result<()> {
        if let Some(fd) = &self.stdin {
            nix::unistd::dup2_stdin(fd).map_err(|e| Error::Internal(format!("cannot replace stdin with the checked script: {e}")))?;
        }
        Ok(())
    }
}

/// argv with every file the gate read for its contents replaced by a sealed copy of what it
/// read, and the copies (kept open, and inherited, until exec).
#[derive(Debug)]
pub struct SealedContents {
    pub args: Vec<String>,
    _files: Vec<OwnedFd>,
}

/// Copy each file of `files` that the gate read for its contents (an `Ok` in `contents`) into
/// a sealed memfd and point its argv word at it. A file that was not read (refused, not text,
/// too large) is not the decision's: the body was judged as unknown, and the tool reads it.
pub fn seal_contents(args: &[String], files: &[LocalFile], contents: &Contents) -> Result<SealedContents> {
    let mut out = args.to_vec();
    let mut fds = Vec::new();
    let mut done = std::collections::BTreeSet::new();
    for f in files.iter().filter(|f| f.content) {
        let Some(Ok(text)) = contents.get(&f.path) else {
            continue;
        };
        if f.at.is_some_and(|at| !done.insert(at)) {
            continue;
        }
        let at =
            f.at.ok_or_else(|| Error::Internal(format!("{} {}: read by the gate, but its argv word is not known", f.flag, f.path)))?;
        let word = out
            .get(at)
            .filter(|w| w.ends_with(f.path.as_str()))
            .ok_or_else(|| Error::Internal(format!("argv word {at} does not end with {} {}", f.flag, f.path)))?;
        let fd = sealed_memfd(text, false)?;
        let prefix = &word[..word.len() - f.path.len()];
        out[at] = format!("{prefix}/dev/fd/{}", fd.as_raw_fd());
        fds.push(fd);
    }
    Ok(SealedContents { args: out, _files: fds })
}

/// A memfd holding `text`, sealed against any change, positioned at its start. Not
/// close-on-exec unless `cloexec` (stdin's copy is dup'ed onto fd 0, which is inherited).
fn sealed_memfd(text: &str, cloexec: bool) -> Result<OwnedFd> {
    let fail = |what: &str, e: std::io::Error| Error::Internal(format!("sealed script copy: {what}: {e}"));
    let name = CString::new("tiershim-script").map_err(|e| Error::Internal(e.to_string()))?;
    let mut flags = libc::MFD_ALLOW_SEALING;
    if cloexec {
        flags |= libc::MFD_CLOEXEC;
    }
    // SAFETY: name is a valid C string; memfd_create returns a new fd or -1.
    let raw = unsafe { libc::memfd_create(name.as_ptr(), flags) };
    if raw < 0 {
        return Err(fail("memfd_create", std::io::Error::last_os_error()));
    }
    // SAFETY: raw is a fresh fd that nothing else owns.
    let fd: OwnedFd = unsafe { std::os::fd::FromRawFd::from_raw_fd(raw) };
    let mut file = std::fs::File::from(fd);
    file.write_all(text.as_bytes()).map_err(|e| fail("write", e))?;
    file.seek(SeekFrom::Start(0)).map_err(|e| fail("seek", e))?;
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_GROW | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on an fd we own with an integer argument.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
        return Err(fail("seal", std::io::Error::last_os_error()));
    }
    Ok(OwnedFd::from(file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;

    #[test]
    fn a_file_is_read_and_handed_over_sealed_under_a_new_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("q.sql"), "select 1;\n").unwrap();
        let args = argv(&["-Xfq.sql", "-l"]);
        let inv = Tool::Psql.spec().parse(&args);
        let (inv, g) = gather(Tool::Psql, &args, inv, dir.path());
        let g = g.unwrap();
        assert_eq!(inv.problem, None);
        assert_eq!(g.inputs.files, vec![Input::Text("select 1;\n".into())]);
        // The original changes after the check; the copy does not.
        std::fs::write(dir.path().join("q.sql"), "drop table t;\n").unwrap();
        let sealed = g.seal(&args).unwrap();
        let path = sealed.args[0].strip_prefix("-Xf").unwrap().to_string();
        assert!(path.starts_with("/dev/fd/"), "{path}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "select 1;\n");
        assert!(
            std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .and_then(|mut f| f.write_all(b"drop table t;"))
                .is_err()
        );
        assert_eq!(sealed.args[1], "-l");
    }

    #[test]
    fn files_the_gate_cannot_judge_are_failures_that_name_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big.sql"), vec![b' '; (MAX_SCRIPT + 1) as usize]).unwrap();
        std::fs::write(dir.path().join("bin.sql"), [0xffu8, 0xfe]).unwrap();
        for (name, want) in [
            ("missing.sql", "-f missing.sql: cannot be read"),
            ("big.sql", "larger than 1024 KiB"),
            ("bin.sql", "not UTF-8"),
            (".", "not a regular file"),
        ] {
            match read_file(name, dir.path()) {
                Input::Failed(why) => assert!(why.contains(want), "{name}: {why}"),
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn calls_without_scripts_read_nothing() {
        let args = argv(&["-c", "select 1"]);
        let inv = Tool::Psql.spec().parse(&args);
        let (_, g) = gather(Tool::Psql, &args, inv, Path::new("/nonexistent"));
        assert!(g.is_none());
    }
}
