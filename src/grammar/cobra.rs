//! The command tree of a cobra CLI (kubectl, helm), walked the way cobra walks it.
//!
//! cobra finds the command first (`Command.Find`): at each level it drops the flags it knows
//! (a flag that takes a value drops the next word too), assumes an unknown `--name` or `-x`
//! without `=` takes the next word (`stripFlags`), and takes the first word left as the
//! subcommand. Then it parses the whole argv with the leaf command's flags, its own and the
//! persistent ones of the root, interspersed, and an unknown flag is an error. This module does
//! the same with the grammars' tables: [`find`] for the path, [`leaf`] for the options and
//! operands. It owns no command names and decides nothing.

use crate::grammar::opts::{self, Opt, Parsed, Style, Unknown};

/// One node of a command tree: its name and aliases, the options it adds to the root's, and
/// its subcommands (empty for a leaf). A node without `opts` is known only by name: its
/// options are not read, so the grammar must not allow it.
#[derive(Debug, Clone, Copy)]
pub struct Cmd {
    pub names: &'static [&'static str],
    pub opts: Option<&'static [Opt]>,
    pub subs: &'static [Cmd],
}

impl Cmd {
    pub const fn leaf(names: &'static [&'static str], opts: &'static [Opt]) -> Cmd {
        Cmd {
            names,
            opts: Some(opts),
            subs: &[],
        }
    }
    /// A command known by name only (never allowed, so its options need not be read).
    pub const fn named(names: &'static [&'static str]) -> Cmd {
        Cmd {
            names,
            opts: None,
            subs: &[],
        }
    }
    pub const fn group(names: &'static [&'static str], subs: &'static [Cmd]) -> Cmd {
        Cmd {
            names,
            opts: Some(&[]),
            subs,
        }
    }
}

/// What cobra makes of argv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A known command: its canonical path (first names), and argv parsed with its options
    /// (None for a command known by name only), operands without the command words (those
    /// after `--` included, as cobra passes them).
    Cmd {
        path: Vec<&'static str>,
        parsed: Option<Parsed>,
        operands: Vec<String>,
        /// The operands after `--` (kubectl exec's command), also at the end of `operands`.
        after_dash: Vec<String>,
    },
    /// The first word is no command: a plugin (`kubectl-<word>`, a helm plugin) or a typo.
    Unknown(String),
    /// No command word at all: the root (help, or `--version`).
    Root(Parsed),
}

/// Walk `tree` as cobra does. `global` are the root's persistent options; `style` the pflag
/// style. Errors name the word that could not be placed.
pub fn find(args: &[String], global: &'static [Opt], tree: &'static [Cmd], style: &Style) -> Result<Found, String> {
    let assume = Style {
        unknown: Unknown::AssumeValue,
        ..*style
    };
    let mut level = tree;
    let mut path: Vec<&'static Cmd> = Vec::new();
    loop {
        let own: Vec<Opt> = global
            .iter()
            .chain(path.last().and_then(|c| c.opts).unwrap_or(&[]).iter())
            .copied()
            .collect();
        let scanned = opts::scan(args, &own, &assume)?;
        let words: Vec<&str> = scanned.positionals();
        let Some(word) = words.get(path.len()) else { break };
        match level.iter().find(|c| c.names.contains(word)) {
            Some(c) => {
                path.push(c);
                level = c.subs;
                if c.subs.is_empty() {
                    break;
                }
            }
            None if path.is_empty() => return Ok(Found::Unknown((*word).to_string())),
            // A group's unknown subcommand: cobra prints the group's help (an error).
            None => {
                return Err(format!(
                    "unknown command {word:?} for {:?}",
                    path.iter().map(|c| c.names[0]).collect::<Vec<_>>().join(" ")
                ));
            }
        }
    }
    let Some(last) = path.last() else {
        return Ok(Found::Root(opts::scan(args, global, style)?));
    };
    let names: Vec<&'static str> = path.iter().map(|c| c.names[0]).collect();
    let Some(own) = last.opts else {
        return Ok(Found::Cmd {
            path: names,
            parsed: None,
            operands: Vec::new(),
            after_dash: Vec::new(),
        });
    };
    if !last.subs.is_empty() {
        // A group named alone prints its help.
        let mut p = names.clone();
        p.push("help");
        return Ok(Found::Cmd {
            path: p,
            parsed: None,
            operands: Vec::new(),
            after_dash: Vec::new(),
        });
    }
    let table: Vec<Opt> = global.iter().chain(own.iter()).copied().collect();
    let parsed = opts::scan(args, &table, style)?;
    let mut operands = Vec::new();
    let mut after_dash = Vec::new();
    let mut words = 0;
    for (i, item) in parsed.items.iter().enumerate() {
        let opts::Item::Pos(p) = item else { continue };
        if parsed.double_dash_at.is_some_and(|d| i >= d) {
            // cobra hands the words after `--` to the command as arguments like any other
            // (`kubectl get -- secrets` gets secrets); only `ArgsLenAtDash` tells them apart.
            after_dash.push(p.clone());
            operands.push(p.clone());
        } else if words < path.len() {
            if path[words].names.contains(&p.as_str()) {
                words += 1;
            } else {
                return Err(format!("cannot place {p:?} before the command {}", names.join(" ")));
            }
        } else {
            operands.push(p.clone());
        }
    }
    Ok(Found::Cmd {
        path: names,
        parsed: Some(parsed),
        operands,
        after_dash,
    })
}

/// pflag as cobra uses it.
pub const PFLAG: Style = Style::PFLAG;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::argv;

    const G: &[Opt] = &[Opt::value("namespace", &["namespace"], &['n'])];
    const GET: &[Opt] = &[Opt::flag("watch", &["watch"], &['w'])];
    const TREE: &[Cmd] = &[Cmd::leaf(&["get"], GET), Cmd::group(&["rollout"], &[Cmd::leaf(&["restart"], &[])])];

    fn path(args: &[&str]) -> Result<Found, String> {
        find(&argv(args), G, TREE, &PFLAG)
    }

    #[test]
    fn global_flags_before_the_command_are_skipped_with_their_values() {
        let Ok(Found::Cmd { path: p, operands, .. }) = path(&["-n", "get", "get", "pods"]) else {
            panic!("not a command")
        };
        assert_eq!(p, vec!["get"]);
        assert_eq!(operands, vec!["pods"]);
    }

    #[test]
    fn a_nested_command_is_found_through_flags() {
        let Ok(Found::Cmd { path: p, operands, .. }) = path(&["rollout", "-n", "x", "restart", "deploy/a"]) else {
            panic!("not a command")
        };
        assert_eq!(p, vec!["rollout", "restart"]);
        assert_eq!(operands, vec!["deploy/a"]);
    }

    #[test]
    fn operands_after_a_double_dash_are_operands() {
        let Ok(Found::Cmd { operands, after_dash, .. }) = path(&["get", "--", "secrets"]) else {
            panic!("not a command")
        };
        assert_eq!(operands, vec!["secrets"]);
        assert_eq!(after_dash, vec!["secrets"]);
    }

    #[test]
    fn an_unknown_first_word_is_a_plugin() {
        assert_eq!(path(&["foo", "bar"]), Ok(Found::Unknown("foo".into())));
    }

    #[test]
    fn an_unknown_flag_of_the_leaf_is_an_error() {
        assert!(path(&["get", "--bogus", "pods"]).is_err());
    }
}
