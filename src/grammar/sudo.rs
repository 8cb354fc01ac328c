//! `sudo` in front of a remote command, read as sudo 1.9 reads its command line
//! (`src/parse_args.c`): `getopt_long` with the optstring `+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv`
//! (no permutation: options end at the first word that is not one, or at `--`), long options
//! abbreviated to any unique prefix, `VAR=value` words taken as environment settings between
//! the options, and `-h` followed by a word that is neither an option nor a setting taking that
//! word as a host.
//!
//! Owns: the option table, the mode sudo runs in (a command, a shell, an editor, or only
//! listing, validating or printing), the user it runs as, and the marks the ssh policy judges
//! the `as-root` part by (`env`: `-E`, `--preserve-env`, `VAR=value`; `moved`: `-b`, `-D`, `-R`,
//! `-A`, `--host`, which change where, when or how the command runs).
//!
//! Must not: decide, or read anything. What the command after sudo is, is `remote.rs`'s.

/// How sudo runs, as its options say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The command after the options, as the target user.
    Run,
    /// A shell (`-s`, `-i`, or no command at all): the command, if any, is run by that shell.
    Shell,
    /// `-e`/`sudoedit`: an editor on files, as the target user.
    Edit,
    /// Nothing runs: `-l` (list, or check a command), `-v`, `-k`/`-K` alone, `-V`, `-h`.
    Info,
}

/// What sudo makes of its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sudo {
    /// How many words (`sudo` included) come before the command.
    pub prefix: usize,
    pub mode: Mode,
    /// `-u USER`, as written; None is root.
    pub user: Option<String>,
    /// `-g GROUP`, as written.
    pub group: Option<String>,
    /// What the policy judges besides the program: `env`, `moved`, `other-user`.
    pub marks: Vec<&'static str>,
}

impl Sudo {
    fn mark(&mut self, m: &'static str) {
        if !self.marks.contains(&m) {
            self.marks.push(m);
        }
    }
}

/// A long option: its name, whether it takes a value (`Some(true)` required, `Some(false)`
/// optional and only after `=`, None none), and its short letter.
const LONG: &[(&str, Option<bool>, char)] = &[
    ("background", None, 'b'),
    ("preserve-env", Some(false), 'E'),
    ("edit", None, 'e'),
    ("set-home", None, 'H'),
    ("login", None, 'i'),
    ("remove-timestamp", None, 'K'),
    ("list", None, 'l'),
    ("preserve-groups", None, 'P'),
    ("shell", None, 's'),
    ("other-user", Some(true), 'U'),
    ("validate", None, 'v'),
    ("askpass", None, 'A'),
    ("auth-type", Some(true), 'a'),
    ("bell", None, 'B'),
    ("close-from", Some(true), 'C'),
    ("login-class", Some(true), 'c'),
    ("chdir", Some(true), 'D'),
    ("group", Some(true), 'g'),
    ("help", None, 'h'),
    // OPT_HOSTNAME in sudo; `H` is taken, so the table uses `@`.
    ("host", Some(true), '@'),
    ("reset-timestamp", None, 'k'),
    ("no-update", None, 'N'),
    ("non-interactive", None, 'n'),
    ("prompt", Some(true), 'p'),
    ("chroot", Some(true), 'R'),
    ("role", Some(true), 'r'),
    ("stdin", None, 'S'),
    ("command-timeout", Some(true), 'T'),
    ("type", Some(true), 't'),
    ("user", Some(true), 'u'),
    ("version", None, 'V'),
];

/// Short options that take a value (`h` takes one only attached: `-hhost`).
const SHORT_VALUE: &str = "aCcDgpRrTtUu";
/// Short options without a value.
const SHORT_FLAG: &str = "AbBEeHiKklNnPSsVv";

/// sudo's `is_envar`: not starting with `/` or `=`, holding a `=`.
fn is_envar(w: &str) -> bool {
    !w.starts_with('/') && !w.starts_with('=') && w.contains('=')
}

/// The user value means root: `root`, or uid 0 written as `#0`.
fn is_root(user: &str) -> bool {
    user == "root" || user == "#0"
}

/// Read `words` (`words[0]` is `sudo`). Err for what sudo would reject (an unknown or ambiguous
/// option, a missing value) or the gate does not follow.
pub fn parse(words: &[String]) -> Result<Sudo, String> {
    let mut s = Sudo {
        prefix: 1,
        mode: Mode::Run,
        user: None,
        group: None,
        marks: Vec::new(),
    };
    let mut shell = false;
    let mut edit = false;
    let mut info = false;
    let mut reset_ticket = false;
    let mut i = 1;
    while let Some(w) = words.get(i) {
        let w = w.as_str();
        if w == "--" {
            i += 1;
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let (full, takes, letter) = long_option(name)?;
            i += 1;
            let value = match (takes, attached) {
                (None, Some(_)) => return Err(format!("sudo option --{full} takes no value")),
                (None, None) | (Some(false), None) => None,
                (Some(_), Some(v)) => Some(v.to_string()),
                (Some(true), None) => {
                    let v = words.get(i).ok_or_else(|| format!("sudo option --{full} needs a value"))?;
                    i += 1;
                    Some(v.clone())
                }
            };
            apply(letter, value, &mut s, &mut shell, &mut edit, &mut info, &mut reset_ticket);
            continue;
        }
        if w.len() > 1 && w.starts_with('-') {
            i += 1;
            let letters: Vec<char> = w[1..].chars().collect();
            let mut k = 0;
            while k < letters.len() {
                let c = letters[k];
                k += 1;
                if c == 'h' {
                    let attached: String = letters[k..].iter().collect();
                    if !attached.is_empty() {
                        apply('@', Some(attached), &mut s, &mut shell, &mut edit, &mut info, &mut reset_ticket);
                        break;
                    }
                    // `-h word`: the word is a host when it is neither an option nor a setting.
                    if w == "-h"
                        && let Some(next) = words.get(i)
                        && !next.starts_with('-')
                        && !is_envar(next)
                    {
                        i += 1;
                        apply('@', Some(next.clone()), &mut s, &mut shell, &mut edit, &mut info, &mut reset_ticket);
                        break;
                    }
                    apply('h', None, &mut s, &mut shell, &mut edit, &mut info, &mut reset_ticket);
                } else if SHORT_VALUE.contains(c) {
                    let attached: String = letters[k..].iter().collect();
                    let value = if attached.is_empty() {
                        let v = words.get(i).ok_or_else(|| format!("sudo option -{c} needs a value"))?;
                        i += 1;
                        v.clone()
                    } else {
                        attached
                    };
                    apply(c, Some(value), &mut s, &mut shell, &mut edit, &mut info, &mut reset_ticket);
                    break;
                } else if SHORT_FLAG.contains(c) {
                    apply(c, None, &mut s, &mut shell, &mut edit, &mut info, &mut reset_ticket);
                } else {
                    return Err(format!("sudo has no option -{c}"));
                }
            }
            continue;
        }
        if is_envar(w) {
            s.mark("env");
            i += 1;
            continue;
        }
        break;
    }
    s.prefix = i;
    let command = i < words.len();
    s.mode = if edit {
        Mode::Edit
    } else if info || (reset_ticket && !command && !shell) {
        Mode::Info
    } else if shell || !command {
        Mode::Shell
    } else {
        Mode::Run
    };
    Ok(s)
}

/// A long option by its name or a unique prefix of it (an exact name wins).
fn long_option(name: &str) -> Result<(&'static str, Option<bool>, char), String> {
    if let Some((n, t, c)) = LONG.iter().find(|(n, _, _)| *n == name) {
        return Ok((n, *t, *c));
    }
    let matches: Vec<&(&str, Option<bool>, char)> = LONG.iter().filter(|(n, _, _)| !name.is_empty() && n.starts_with(name)).collect();
    match matches[..] {
        [(n, t, c)] => Ok((n, *t, *c)),
        [] => Err(format!("sudo has no option --{name}")),
        _ => Err(format!("sudo option --{name} is ambiguous")),
    }
}

#[allow(clippy::too_many_arguments)]
fn apply(c: char, value: Option<String>, s: &mut Sudo, shell: &mut bool, edit: &mut bool, info: &mut bool, reset_ticket: &mut bool) {
    match c {
        'E' => s.mark("env"),
        'b' | 'D' | 'R' | 'A' | '@' => s.mark("moved"),
        'i' | 's' => *shell = true,
        'e' => *edit = true,
        'l' | 'v' | 'V' | 'K' | 'h' => *info = true,
        'k' => *reset_ticket = true,
        'u' => {
            if value.as_deref().is_some_and(|u| !is_root(u)) {
                s.mark("other-user");
            }
            s.user = value;
        }
        'g' => {
            s.mark("other-user");
            s.group = value;
        }
        // -a -B -C -c -H -N -n -P -p -r -S -T -t -U: authentication, prompts, limits, labels.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;
    use pretty_assertions::assert_eq;

    fn p(words: &[&str]) -> Sudo {
        parse(&argv(words)).unwrap_or_else(|e| panic!("{words:?}: {e}"))
    }

    #[test]
    fn options_end_at_the_command_or_at_double_dash() {
        let s = p(&["sudo", "-n", "-u", "postgres", "psql", "-u", "x"]);
        assert_eq!((s.prefix, s.mode, s.user.as_deref()), (4, Mode::Run, Some("postgres")));
        assert_eq!(s.marks, ["other-user"]);
        let s = p(&["sudo", "-nuroot", "--", "-x"]);
        assert_eq!(
            (s.prefix, s.mode, s.user.as_deref(), s.marks.len()),
            (3, Mode::Run, Some("root"), 0)
        );
        assert_eq!(p(&["sudo", "--user=#0", "docker", "ps"]).marks, Vec::<&str>::new());
        assert_eq!(p(&["sudo", "--us", "ops", "id"]).user.as_deref(), Some("ops"));
    }

    #[test]
    fn settings_between_options_are_the_environment() {
        let s = p(&["sudo", "GIT_DIR=/x", "-n", "git", "status"]);
        assert_eq!((s.prefix, s.mode), (3, Mode::Run));
        assert_eq!(s.marks, ["env"]);
        assert_eq!(p(&["sudo", "-E", "docker", "ps"]).marks, ["env"]);
        assert_eq!(p(&["sudo", "--preserve-env=PATH", "docker", "ps"]).marks, ["env"]);
        // After `--`, and for a path, a `=` is part of the command.
        assert_eq!(p(&["sudo", "--", "A=1", "x"]).marks, Vec::<&str>::new());
        assert_eq!(p(&["sudo", "/opt/a=b"]).prefix, 1);
    }

    #[test]
    fn shells_editors_and_listings_are_their_own_modes() {
        assert_eq!(p(&["sudo", "-i"]).mode, Mode::Shell);
        assert_eq!(p(&["sudo"]).mode, Mode::Shell);
        assert_eq!(p(&["sudo", "-s", "docker", "ps"]).mode, Mode::Shell);
        assert_eq!(p(&["sudo", "--login", "id"]).mode, Mode::Shell);
        assert_eq!(p(&["sudo", "-e", "/etc/hosts"]).mode, Mode::Edit);
        assert_eq!(p(&["sudo", "-l"]).mode, Mode::Info);
        assert_eq!(p(&["sudo", "-l", "docker", "ps"]).mode, Mode::Info);
        assert_eq!(p(&["sudo", "-nv"]).mode, Mode::Info);
        assert_eq!(p(&["sudo", "-k"]).mode, Mode::Info);
        assert_eq!(p(&["sudo", "-k", "id"]).mode, Mode::Run);
        assert_eq!(p(&["sudo", "-V"]).mode, Mode::Info);
    }

    #[test]
    fn options_that_move_the_command_are_marked() {
        for words in [
            &["sudo", "-b", "docker", "ps"][..],
            &["sudo", "-D", "/srv", "docker", "ps"],
            &["sudo", "--chdir=/srv", "docker", "ps"],
            &["sudo", "-R/mnt", "docker", "ps"],
            &["sudo", "-A", "docker", "ps"],
            &["sudo", "-h", "other", "docker", "ps"],
            &["sudo", "-hother", "docker", "ps"],
            &["sudo", "--host", "other", "docker", "ps"],
        ] {
            assert_eq!(p(words).marks, ["moved"], "{words:?}");
        }
        // `-h` followed by an option is help.
        assert_eq!(p(&["sudo", "-h", "-n"]).mode, Mode::Info);
        assert_eq!(p(&["sudo", "-g", "docker", "id"]).marks, ["other-user"]);
    }

    #[test]
    fn what_sudo_rejects_is_an_error() {
        for words in [
            &["sudo", "-Z", "x"][..],
            &["sudo", "-u"],
            &["sudo", "--frob", "x"],
            &["sudo", "--pr", "x"],
            &["sudo", "--edit=x", "y"],
            &["sudo", "--user"],
        ] {
            assert!(parse(&argv(words)).is_err(), "{words:?}");
        }
    }
}
