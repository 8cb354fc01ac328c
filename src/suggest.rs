//! "Did you mean …?": the closest of a few known words to one that is not known, for the
//! messages about a typo (a fence label, a policy file name, a config key).
//!
//! Pure: strings in, a string out.

/// The edit distance (insertions, deletions, substitutions) between `a` and `b`, by character.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The known word closest to `word` (case aside), when it is close enough to be a typo of it:
/// at most one edit for words of three letters or fewer, two for longer ones, or the same word in another case.
pub fn closest<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_lowercase();
    let limit = if word.chars().count() <= 3 { 1 } else { 2 };
    known
        .into_iter()
        .map(|k| (distance(&lower, &k.to_lowercase()), k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// ` (did you mean `deny`?)`, or nothing.
pub fn did_you_mean<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    match closest(word, known) {
        Some(k) => format!(" (did you mean `{k}`?)"),
        None => String::new(),
    }
}

/// For a serde error about an unknown key or value (`unknown field `audit_logs`, expected one
/// of `tier`, `audit_log`, …`, `unknown variant …`, `expected `baseline` or `repos``), the
/// did-you-mean for the closest of the expected ones; else nothing.
pub fn for_serde(msg: &str) -> String {
    let Some(rest) = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|p| msg.split_once(p).map(|(_, r)| r))
    else {
        return String::new();
    };
    let Some((word, expected)) = rest.split_once('`') else {
        return String::new();
    };
    // The expected names: every backticked word up to the location, if any.
    let expected = expected.split(" at line ").next().unwrap_or(expected);
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    did_you_mean(word, known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_the_word_it_was_meant_to_be() {
        assert_eq!(distance("dney", "deny"), 2);
        assert_eq!(closest("dney", ["deny", "allow"]), Some("deny"));
        assert_eq!(closest("alow", ["deny", "allow"]), Some("allow"));
        assert_eq!(closest("DENY", ["deny", "allow"]), Some("deny"));
        assert_eq!(closest("docker.yml", ["docker.yaml", "gh.yaml"]), Some("docker.yaml"));
        assert_eq!(closest("audit_logs", ["audit_log", "inventory"]), Some("audit_log"));
        assert_eq!(closest("text", ["deny", "allow"]), None);
        assert_eq!(did_you_mean("bash", ["deny", "allow"]), "");
    }

    #[test]
    fn a_serde_unknown_key_gets_the_expected_key_it_is_closest_to() {
        assert_eq!(
            for_serde("unknown field `audit_logs`, expected one of `tier`, `dry_run`, `audit_log` at line 3 column 1"),
            " (did you mean `audit_log`?)"
        );
        assert_eq!(
            for_serde("skills: unknown field `repo`, expected `baseline` or `repos` at line 4 column 3"),
            " (did you mean `repos`?)"
        );
        assert_eq!(for_serde("unknown field `zzz`, expected `baseline` or `repos`"), "");
        assert_eq!(for_serde("invalid type: string, expected u8"), "");
    }
}
