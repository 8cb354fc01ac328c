//! Lists of strings in static tables, packed at compile time into one text and where each
//! string ends, so the tables hold no pointers. The gate is a position-independent executable:
//! each pointer in its static data (a `&str` in a `&[&str]`) is a relocation it writes at every
//! start, and each page so written is a page the kernel copies for every call
//! (docs/PERFORMANCE.md, "Where the time goes"). A packed list stays in read-only pages shared
//! with the file.
//!
//! A table is written as it reads, and packed by a `const fn` where it is declared:
//!
//! ```ignore
//! words! {
//!     /// What the list is.
//!     static PLUMBING = &["dbus.service", "sshd.service"];
//! }
//! ```
//!
//! Also the few `const fn`s every table built at compile time needs (copy and compare bytes),
//! which `grammar::opts` (inline option names) and `grammar::docker` (its command tree) use.
//!
//! Must not: hold anything but the lists and the `const fn`s that pack tables.

/// A list of `K` strings, `N` bytes together.
pub struct Words<const N: usize, const K: usize> {
    text: [u8; N],
    /// Where each string ends in `text`.
    ends: [u16; K],
}

/// Copy `from` into `to` at `at` (a `const fn` cannot use `copy_from_slice`).
pub const fn put(to: &mut [u8], at: usize, from: &[u8]) {
    let mut i = 0;
    while i < from.len() {
        to[at + i] = from[i];
        i += 1;
    }
}

/// Whether two byte strings are the same, in a `const fn`.
pub const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The text of `bytes`, copied by a `const fn` from `&str`s whole: always UTF-8.
pub fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// The length of `list`'s strings together: a [`Words`]' `N`.
pub const fn text_len(list: &[&str]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < list.len() {
        n += list[i].len();
        i += 1;
    }
    n
}

/// The length of `pairs`' strings together: a [`Pairs`]' `N`.
pub const fn pairs_len(pairs: &[(&str, &str)]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < pairs.len() {
        n += pairs[i].0.len() + pairs[i].1.len();
        i += 1;
    }
    n
}

impl<const N: usize, const K: usize> Words<N, K> {
    /// `list` packed; `N` and `K` must be its [`text_len`] and its length.
    pub const fn new(list: &[&str]) -> Self {
        assert!(list.len() == K && text_len(list) == N, "Words::new: N or K is not the list's");
        let mut w = Words {
            text: [0; N],
            ends: [0; K],
        };
        let mut at = 0;
        let mut i = 0;
        while i < K {
            at = w.put(i, at, list[i]);
            i += 1;
        }
        w
    }

    /// Write `s` as string `i`, from `at`; where it ends.
    const fn put(&mut self, i: usize, at: usize, s: &str) -> usize {
        let b = s.as_bytes();
        put(&mut self.text, at, b);
        assert!(at + b.len() <= u16::MAX as usize, "a packed list longer than u16::MAX bytes");
        self.ends[i] = (at + b.len()) as u16;
        at + b.len()
    }

    fn bytes(&self, i: usize) -> &[u8] {
        let start = match i.checked_sub(1) {
            Some(p) => self.ends.get(p).map_or(0, |&e| usize::from(e)),
            None => 0,
        };
        let end = self.ends.get(i).map_or(0, |&e| usize::from(e));
        self.text.get(start..end).unwrap_or_default()
    }

    /// String `i` (empty past the end).
    pub fn get(&self, i: usize) -> &str {
        // The text is the list's strings whole, one after another.
        text(self.bytes(i))
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..K).map(|i| self.get(i))
    }

    /// Whether `s` is in the list.
    pub fn contains(&self, s: &str) -> bool {
        (0..K).any(|i| self.bytes(i) == s.as_bytes())
    }
}

/// `K` pairs of strings, `N` bytes together: string `2i` is pair `i`'s first, `2i + 1` its
/// second.
pub struct Pairs<const N: usize, const K2: usize> {
    words: Words<N, K2>,
}

impl<const N: usize, const K2: usize> Pairs<N, K2> {
    /// `pairs` packed; `N` and `K2` must be its [`pairs_len`] and twice its length.
    pub const fn new(pairs: &[(&str, &str)]) -> Self {
        assert!(
            pairs.len() * 2 == K2 && pairs_len(pairs) == N,
            "Pairs::new: N or K2 is not the list's"
        );
        let mut words = Words {
            text: [0; N],
            ends: [0; K2],
        };
        let mut at = 0;
        let mut i = 0;
        while i < pairs.len() {
            at = words.put(2 * i, at, pairs[i].0);
            at = words.put(2 * i + 1, at, pairs[i].1);
            i += 1;
        }
        Pairs { words }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        (0..K2 / 2).map(|i| (self.words.get(2 * i), self.words.get(2 * i + 1)))
    }

    /// The second of the first pair whose first is `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

/// `static NAME = &["a", "b"];` as a packed [`Words`].
macro_rules! words {
    ($(#[$meta:meta])* $vis:vis static $name:ident = $list:expr;) => {
        $(#[$meta])*
        $vis static $name: $crate::packed::Words<{ $crate::packed::text_len($list) }, { $list.len() }> =
            $crate::packed::Words::new($list);
    };
}

/// `static NAME = &[("a", "b")];` as packed [`Pairs`].
macro_rules! pairs {
    ($(#[$meta:meta])* $vis:vis static $name:ident = $list:expr;) => {
        $(#[$meta])*
        $vis static $name: $crate::packed::Pairs<{ $crate::packed::pairs_len($list) }, { 2 * $list.len() }> =
            $crate::packed::Pairs::new($list);
    };
}

pub(crate) use {pairs, words};

#[cfg(test)]
mod tests {

    const LIST: &[&str] = &["", "dbus.service", "é", "", "x"];
    words! {
        static PACKED = LIST;
    }
    const PAIRS: &[(&str, &str)] = &[("reload", "reload"), ("", "x"), ("try-restart", "")];
    pairs! {
        static PACKED_PAIRS = PAIRS;
    }
    const NONE: &[&str] = &[];
    words! {
        static EMPTY = NONE;
    }

    #[test]
    fn a_packed_list_reads_back_as_written_empty_strings_included() {
        assert_eq!(PACKED.iter().collect::<Vec<_>>(), LIST);
        assert_eq!(PACKED.get(2), "é");
        assert_eq!(PACKED.get(LIST.len()), "");
        assert!(LIST.iter().all(|s| PACKED.contains(s)));
        assert!(!PACKED.contains("dbus") && !PACKED.contains("dbus.service ") && !PACKED.contains("y"));
        assert!(EMPTY.iter().next().is_none() && !EMPTY.contains(""));
    }

    #[test]
    fn packed_pairs_read_back_as_written() {
        assert_eq!(PACKED_PAIRS.iter().collect::<Vec<_>>(), PAIRS);
        assert_eq!(PACKED_PAIRS.get("reload"), Some("reload"));
        assert_eq!(PACKED_PAIRS.get(""), Some("x"));
        assert_eq!(PACKED_PAIRS.get("try-restart"), Some(""));
        assert_eq!(PACKED_PAIRS.get("restart"), None);
    }
}
