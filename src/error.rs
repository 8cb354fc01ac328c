//! Every failure on the way to a decision, with the context that explains it (file, key, line).
//! An [`Error`] never leads to exec: the gate turns it into exit 78, 70 or 127 and stops.

use std::path::PathBuf;

use thiserror::Error;

use crate::exit::Exit;

#[derive(Debug, Error)]
pub enum Error {
    #[error("no tiershim.yaml in {dir}: this link is not part of an installation; run install.sh or put a tiershim.yaml beside the link")]
    ConfigMissing { dir: PathBuf },

    #[error("cannot read {path}: {source}")]
    ConfigRead { path: PathBuf, source: std::io::Error },

    #[error("{path}: {msg}")]
    ConfigInvalid { path: PathBuf, msg: String },

    #[error("{path}: {msg}")]
    ConfigUnsafe { path: PathBuf, msg: String },

    #[error("policy {source_name}: {msg}")]
    Policy { source_name: String, msg: String },

    #[error("skill {path}: {msg}")]
    Skill { path: String, msg: String },

    #[error("audit log {path}: {source}; the call is refused rather than run unlogged ({})", audit_fix(source))]
    Audit { path: PathBuf, source: std::io::Error },

    #[error("real {tool} at {path} is tiershim itself; point `real.{tool}` in {config} at the real binary")]
    RealIsSelf { tool: String, path: PathBuf, config: PathBuf },

    #[error("{tool} is not installed at {path}")]
    RealMissing { tool: String, path: String },

    #[error("cooldown state {path}: {msg}; the call is refused rather than run uncounted")]
    Cooldown { path: PathBuf, msg: String },

    #[error("exec {path}: {source}")]
    Exec { path: PathBuf, source: std::io::Error },

    /// The kernel fence cannot be made, or this process is not inside it.
    #[error("kernel fence: {0}")]
    Fence(String),

    #[error("{0}")]
    Internal(String),
}

/// What to do about an audit log the gate could not append to, by what went wrong.
fn audit_fix(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind;
    match (e.kind(), e.raw_os_error()) {
        (ErrorKind::PermissionDenied, _) => "give the gate write access to it, or change `audit_log:` in tiershim.yaml",
        (ErrorKind::NotFound, _) => "its directory does not exist: create it, or change `audit_log:` in tiershim.yaml",
        (ErrorKind::IsADirectory, _) => "it is a directory: point `audit_log:` in tiershim.yaml at a file",
        (_, Some(libc::EFBIG)) | (ErrorKind::StorageFull, _) | (ErrorKind::FileTooLarge, _) | (ErrorKind::QuotaExceeded, _) => {
            "a file size limit or a full disk stopped the write: free space, raise the limit, or rotate the log"
        }
        (ErrorKind::WriteZero, _) => "a file size limit or a full disk cut the write short: free space, raise the limit, or rotate the log",
        _ => "fix the file, or change `audit_log:` in tiershim.yaml",
    }
}

impl Error {
    pub fn exit(&self) -> Exit {
        match self {
            Error::ConfigMissing { .. }
            | Error::ConfigRead { .. }
            | Error::ConfigInvalid { .. }
            | Error::ConfigUnsafe { .. }
            | Error::Policy { .. }
            | Error::Skill { .. }
            | Error::Audit { .. }
            | Error::Cooldown { .. }
            | Error::Fence(_)
            | Error::RealIsSelf { .. } => Exit::Config,
            Error::RealMissing { .. } => Exit::NotFound,
            Error::Exec { .. } | Error::Internal(_) => Exit::Internal,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
