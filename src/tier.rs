//! The effective tier and dry-run of a call, from the install's ceiling and pin and the
//! caller's `CLAUDEOPS_TIER` and `CLAUDEOPS_DRY_RUN` (DESIGN §3): the environment may lower the
//! tier, never raise it, and may turn dry-run on, never off a pinned one. Pure: the values are
//! passed in.

use crate::sanitize::escape;

/// The effective tier and, when the environment asked for something odd, why.
pub fn effective_tier(ceiling: u8, env: Option<&str>) -> (u8, Option<String>) {
    let (tier, why) = tier_and_why(ceiling, env);
    (tier, why.map(|w| format!("{w}, so tier {tier}")))
}

/// The effective tier, and why it is not what the environment says (unset, above the ceiling,
/// or not a tier at all).
pub(crate) fn tier_and_why(ceiling: u8, env: Option<&str>) -> (u8, Option<String>) {
    match env {
        None => (1, Some("CLAUDEOPS_TIER is unset".to_string())),
        Some(v @ ("1" | "2" | "3")) => {
            let asked = v.as_bytes()[0] - b'0';
            if asked > ceiling {
                (
                    ceiling,
                    Some(format!("CLAUDEOPS_TIER={asked} is above this install's ceiling {ceiling}")),
                )
            } else {
                (asked, None)
            }
        }
        Some(v) => (1, Some(format!("CLAUDEOPS_TIER={} is not 1, 2 or 3", shown_value(v)))),
    }
}

/// A caller's value as a message shows it: quoted when it is empty or has spaces, escaped.
fn shown_value(v: &str) -> String {
    escape(&shell_words::quote(v)).into_owned()
}

/// Whether dry-run is on: pinned by `tiershim.yaml`, or `CLAUDEOPS_DRY_RUN` set to anything but
/// a clear false. A clear false is `false`, `0`, `no`, `off` or the empty string, compared
/// without regard to case or to spaces around it; every other value turns dry-run on (a
/// misspelt "yes" must not run the call). The note says why when the value was not a clear
/// true (`true`, `1`, `yes`, `on`, `y`) either, or when the environment asked to turn off a
/// pinned dry run.
pub fn dry_run_of(pinned: bool, env: Option<&str>) -> (bool, Option<String>) {
    let Some(v) = env else {
        return (pinned, None);
    };
    let word = v.trim_matches(|c: char| c.is_ascii_whitespace()).to_ascii_lowercase();
    let clear_false = matches!(word.as_str(), "" | "0" | "false" | "no" | "off");
    let clear_true = matches!(word.as_str(), "1" | "true" | "yes" | "on" | "y");
    if pinned {
        let note = clear_false.then(|| {
            format!(
                "CLAUDEOPS_DRY_RUN={} cannot turn off the dry run tiershim.yaml pins",
                shown_value(v)
            )
        });
        return (true, note);
    }
    if clear_false {
        return (false, None);
    }
    let note = (!clear_true).then(|| {
        format!(
            "CLAUDEOPS_DRY_RUN={} is not a clear false (false, 0, no, off, empty), so dry-run is on",
            shown_value(v)
        )
    });
    (true, note)
}

pub fn dry_run_on(pinned: bool, env: Option<&str>) -> bool {
    dry_run_of(pinned, env).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dry_run_is_off_only_for_a_clear_false() {
        for v in ["", " ", "0", "false", "FALSE", " no ", "Off"] {
            assert_eq!(dry_run_of(false, Some(v)), (false, None), "{v:?}");
        }
        for v in ["1", "true", "Yes", "on", "y", " true"] {
            assert_eq!(dry_run_of(false, Some(v)), (true, None), "{v:?}");
        }
        let (on, note) = dry_run_of(false, Some("enabled"));
        assert!(on);
        assert_eq!(
            note.as_deref(),
            Some("CLAUDEOPS_DRY_RUN=enabled is not a clear false (false, 0, no, off, empty), so dry-run is on")
        );
        assert_eq!(dry_run_of(false, None), (false, None));
        assert_eq!(dry_run_of(true, None), (true, None));
        assert_eq!(dry_run_of(true, Some("yes")), (true, None));
        assert!(dry_run_of(true, Some("0")).1.is_some_and(|n| n.contains("cannot turn off")));
    }
}
