//! The only place exit numbers live. Nothing else in the crate names a number; `main` turns an
//! [`Exit`] into the process status.

/// How a tiershim process ends when it does not exec a real tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Allowed in explain, or a dry run that printed what it would have run.
    Ok,
    /// Refused by tier, rule, or path scope (sysexits `EX_NOPERM`).
    Refused,
    /// Bad install config, policy, or skill (sysexits `EX_CONFIG`).
    Config,
    /// Internal error (sysexits `EX_SOFTWARE`).
    Internal,
    /// The real tool is not installed where the config says (the shell's "not found").
    NotFound,
    /// Bad usage of the admin CLI.
    Usage,
    /// What a shell's failed command returns (`tiershim shell` declining a snapshot, or unable
    /// to write the working-directory file a harness asked for, as bash would fail at `>|`).
    Failure,
}

impl Exit {
    pub fn code(self) -> i32 {
        match self {
            Exit::Ok => 0,
            Exit::Failure => 1,
            Exit::Usage => 2,
            Exit::Internal => 70,
            Exit::Refused => 77,
            Exit::Config => 78,
            Exit::NotFound => 127,
        }
    }
}
