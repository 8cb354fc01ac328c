//! One SQL statement -> actions, with `sqlparser` (PostgreSQL or MySQL dialect) and its visitor.
//!
//! The classification is a default-deny allowlist: a statement is a plain read (`sql select`,
//! `sql show`, `sql explain`) only when it is a query with no data-modifying CTE, no
//! `SELECT … INTO`, no row locks, or `EXPLAIN` without `ANALYZE` over such a query, or `SHOW`.
//! `COPY` is `sql copy to` or `sql copy from`. Anything else becomes `sql <first keyword>`
//! (`sql insert`, `sql drop`, `sql set`, …) for the policy to place, with marks for what makes it
//! worse (`program`, `server-file`, `role`, and `charset` for a `SET` that moves the client to a
//! character set the gate's UTF-8 lexers cannot follow, see [`safe_client_charset`]).
//!
//! Every function call becomes an action of its own, `function <schema>.<name>`, whose fallback
//! verb is its class: for PostgreSQL the volatility that `pg_catalog` gives it
//! (`function immutable|stable|volatile`, from `policy/pg_catalog_functions.tsv`), or
//! `function user` for anything outside `pg_catalog`; for MySQL `function unknown`. The policy
//! names single functions by their verb and classes by the fallback. PostgreSQL syntax that
//! only looks like a call (`COALESCE`, `ROW(…)`, `ARRAY(subquery)`, …, see [`PG_CONSTRUCTS`]) is
//! not one. An operator that is not a `pg_catalog` one (`OPERATOR(public.<<<)`, a user's `<<<`,
//! `ORDER BY … USING` either) is `operator <schema>.<op>`, class `operator user`.
//!
//! What the text alone cannot show, and so is not seen here: attribute notation (`t.f` and
//! `(t).f` are calls of `f(t)` when `t` has no column `f`), and an unqualified name or operator
//! that an overload outside `pg_catalog` wins because its argument types fit better
//! (CVE-2018-1058). docs/databases.md says what the database must guarantee instead.
//!
//! The caller splits text into statements with a lexer that follows the server's own; this
//! module is handed one statement and refuses text that parses as anything but one. It does no
//! I/O and decides nothing.

use std::ops::ControlFlow;
use std::sync::LazyLock;

use sqlparser::ast::{
    BinaryOperator, CopyTarget, Expr, Function, FunctionArguments, ObjectName, ObjectNamePart, OrderByExpr, OrderBySort, Query, Select,
    Set, SetExpr, Statement, TableFactor, Visit, Visitor,
};
use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect};
use sqlparser::parser::Parser;

use crate::grammar::Action;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    MySql,
}

/// Deep enough for real queries, shallow enough that hostile nesting is refused, not a crash.
const RECURSION_LIMIT: usize = 64;

/// The actions of one statement (`text` holds exactly one, or only comments and white space,
/// which yields nothing).
pub fn statement(text: &str, dialect: Dialect) -> Result<Vec<Action>, String> {
    let parsed = match dialect {
        Dialect::Postgres => parse(&PostgreSqlDialect {}, text),
        Dialect::MySql => parse(&MySqlDialect {}, text),
    }?;
    match parsed.as_slice() {
        [] => Ok(Vec::new()),
        [one] => classify(one, dialect),
        _ => Err("the SQL parser sees more statements here than the server's lexer does".into()),
    }
}

fn parse(d: &dyn sqlparser::dialect::Dialect, text: &str) -> Result<Vec<Statement>, String> {
    Parser::new(d)
        .with_recursion_limit(RECURSION_LIMIT)
        .try_with_sql(text)
        .and_then(|mut p| p.parse_statements())
        .map_err(|e| format!("SQL the gate cannot parse ({e})"))
}

fn classify(stmt: &Statement, dialect: Dialect) -> Result<Vec<Action>, String> {
    let mut out = Vec::new();
    let mut main = match stmt {
        Statement::Query(_) => Action::new("sql select"),
        Statement::Explain {
            analyze,
            options,
            statement,
            ..
        } => {
            let mut a = Action::new("sql explain");
            let analyze_option = options.iter().flatten().any(|o| {
                let n = o.name.value.to_ascii_lowercase();
                n == "analyze" || n == "analyse"
            });
            if *analyze || analyze_option {
                a.add("analyze");
            }
            // The explained statement is judged as if it ran: EXPLAIN is a read only over a read.
            out.extend(classify(statement, dialect)?);
            out.push(a);
            return Ok(out);
        }
        Statement::ExplainTable { .. } => Action::new("sql show"),
        Statement::Copy { to, target, .. } => {
            let mut a = Action::new(if *to { "sql copy to" } else { "sql copy from" });
            match target {
                CopyTarget::Stdin | CopyTarget::Stdout => {}
                CopyTarget::File { .. } => a.add("server-file"),
                CopyTarget::Program { .. } => a.add("program"),
            }
            a
        }
        other => {
            let shown = other.to_string();
            let mut words = shown.split_whitespace().map(str::to_ascii_lowercase);
            let first = words.next().unwrap_or_default();
            let mut a = Action::new(format!("sql {first}"));
            let rest: Vec<String> = words.take(4).collect();
            if matches!(first.as_str(), "create" | "alter" | "drop") && rest.iter().any(|w| matches!(w.as_str(), "role" | "user" | "group"))
            {
                a.add("role");
            }
            if let Statement::Set(set) = other
                && sets_unsafe_charset(set, dialect)
            {
                a.add("charset");
            }
            a
        }
    };
    let mut v = Walk {
        dialect,
        depth: 0,
        marks: Vec::new(),
        functions: Vec::new(),
    };
    if let ControlFlow::Break(problem) = stmt.visit(&mut v) {
        return Err(problem);
    }
    for m in v.marks {
        main.add(m);
    }
    // Calls first: among findings of the same tier the first explains the decision, and a
    // statement's own rule is the general one.
    out.extend(v.functions);
    out.push(main);
    Ok(out)
}

/// Collects what a statement contains: nested statements (a data-modifying CTE), `INTO`, row
/// locks, and every function call.
struct Walk {
    dialect: Dialect,
    depth: usize,
    marks: Vec<&'static str>,
    functions: Vec<Action>,
}

impl Visitor for Walk {
    type Break = String;

    fn pre_visit_statement(&mut self, _s: &Statement) -> ControlFlow<String> {
        if self.depth > 0 {
            self.marks.push("writes");
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_statement(&mut self, _s: &Statement) -> ControlFlow<String> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<String> {
        if !q.locks.is_empty() {
            self.marks.push("row-lock");
        }
        if matches!(
            *q.body,
            SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Merge(_)
        ) {
            self.marks.push("writes");
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, s: &Select) -> ControlFlow<String> {
        if s.into.is_some() {
            self.marks.push("into");
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<String> {
        match e {
            // Without parentheses it is a SQL keyword such as CURRENT_TIMESTAMP, not a call.
            Expr::Function(f) if !matches!(f.args, FunctionArguments::None) && !self.is_construct(f) => {
                self.function(&f.name)?;
            }
            Expr::BinaryOp { op, .. } | Expr::AnyOp { compare_op: op, .. } | Expr::AllOp { compare_op: op, .. } => {
                self.binary_operator(op);
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_order_by_expr(&mut self, o: &OrderByExpr) -> ControlFlow<String> {
        // `ORDER BY x USING op` sorts with whatever function the operator names.
        if let Some(OrderBySort::Using(name)) = &o.options.sort {
            let mut parts = Vec::with_capacity(name.0.len());
            for p in &name.0 {
                match p {
                    ObjectNamePart::Identifier(id) => parts.push(id.value.clone()),
                    ObjectNamePart::Function(_) => {
                        return ControlFlow::Break(format!("a computed operator name ({name})"));
                    }
                }
            }
            self.operator(&parts);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<String> {
        match t {
            TableFactor::Table { name, args, .. } => {
                if args.is_some() {
                    self.function(name)?;
                }
            }
            TableFactor::Function { name, .. } => self.function(name)?,
            TableFactor::Derived { .. }
            | TableFactor::TableFunction { .. }
            | TableFactor::UNNEST { .. }
            | TableFactor::NestedJoin { .. } => {}
            other => {
                return ControlFlow::Break(format!(
                    "a FROM item the gate does not classify ({})",
                    other.to_string().chars().take(40).collect::<String>()
                ));
            }
        }
        ControlFlow::Continue(())
    }
}

/// Character sets a client may talk in without the server splitting text differently from the
/// gate's lexers, which read the text as UTF-8. In GBK, Big5, Shift-JIS and their kin the second
/// byte of a character can be `\` (0x5C) or another ASCII byte, so `E'Á\'` ends somewhere
/// else on the server: a backslash the gate saw is gone. `auto` (the client's locale) and
/// anything else is unsafe.
///
/// PostgreSQL (`pg_char_to_encoding`) ignores case and every character but letters and digits,
/// so `UTF-8`, `utf_8` and `Unicode` are UTF8; only UTF8 is allowed. MySQL/MariaDB names are
/// exact but case-insensitive; the allowed ones are UTF-8 or one byte per character.
pub fn safe_client_charset(name: &str, dialect: Dialect) -> bool {
    if !name.is_ascii() {
        return false;
    }
    match dialect {
        Dialect::Postgres => {
            let clean: String = name
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .collect();
            matches!(clean.as_str(), "utf8" | "unicode")
        }
        Dialect::MySql => ["utf8", "utf8mb3", "utf8mb4", "latin1", "ascii", "binary"]
            .iter()
            .any(|safe| name.eq_ignore_ascii_case(safe)),
    }
}

/// Whether a `SET` moves the session's client character set (PostgreSQL `client_encoding` or
/// `NAMES`; MySQL `NAMES` or `character_set_client`, `_connection`, `_results`) to anything but
/// a [`safe_client_charset`]. `SET NAMES DEFAULT` counts: the default is the server's.
fn sets_unsafe_charset(set: &Set, dialect: Dialect) -> bool {
    let names: &[&str] = match dialect {
        Dialect::Postgres => &["client_encoding", "names"],
        Dialect::MySql => &["names", "character_set_client", "character_set_connection", "character_set_results"],
    };
    let unsafe_value = |variable: &ObjectName, value: String| {
        let shown = variable.to_string();
        let last = shown.rsplit('.').next().unwrap_or_default();
        let last = last.trim_start_matches('@').trim_matches(['`', '"']).to_ascii_lowercase();
        if !names.contains(&last.as_str()) {
            return false;
        }
        let value = value.trim();
        let bare = ['\'', '"', '`']
            .iter()
            .find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)))
            .unwrap_or(value);
        !safe_client_charset(bare, dialect)
    };
    match set {
        Set::SingleAssignment { variable, values, .. } => {
            let value = values.iter().map(ToString::to_string).collect::<Vec<_>>().join(",");
            unsafe_value(variable, value)
        }
        Set::MultipleAssignments { assignments } => assignments.iter().any(|a| unsafe_value(&a.name, a.value.to_string())),
        Set::ParenthesizedAssignments { variables, values } => {
            let value = values.iter().map(ToString::to_string).collect::<Vec<_>>().join(",");
            variables.iter().any(|v| unsafe_value(v, value.clone()))
        }
        Set::SetNames { charset_name, .. } => !safe_client_charset(&charset_name.value, dialect),
        Set::SetNamesDefault {} => true,
        _ => false,
    }
}

/// PostgreSQL syntax that looks like a call but is not one: `COALESCE`, `GREATEST`, `LEAST`,
/// `NULLIF`, `GROUPING`, `ROW(…)` and `ARRAY(subquery)` are parsed by the server's grammar
/// itself (they are keywords, so no function, in any schema, can be called this way without
/// quotes). Their arguments are still walked like any other expression.
const PG_CONSTRUCTS: &[&str] = &["array", "coalesce", "greatest", "grouping", "least", "nullif", "row"];

/// The operator names `pg_catalog` defines (`pg_operator.oprname`, PostgreSQL 15; a live test
/// fails on drift). Any other operator is a user's: the function behind it is unknown.
pub const PG_OPERATORS: &[&str] = &[
    "!!", "!~", "!~*", "!~~", "!~~*", "#", "##", "#-", "#>", "#>>", "%", "&", "&&", "&<", "&<|", "&>", "*", "*<", "*<=", "*<>", "*=", "*>",
    "*>=", "+", "-", "->", "->>", "-|-", "/", "<", "<->", "<<", "<<=", "<<|", "<=", "<>", "<@", "<^", "=", ">", ">=", ">>", ">>=", ">^",
    "?", "?#", "?&", "?-", "?-|", "?|", "?||", "@", "@-@", "@>", "@?", "@@", "@@@", "^", "^@", "|", "|&>", "|/", "|>>", "||", "||/", "~",
    "~*", "~<=~", "~<~", "~=", "~>=~", "~>~", "~~", "~~*",
];

impl Walk {
    /// Whether a PostgreSQL "call" is one of the [`PG_CONSTRUCTS`]: an unquoted, unqualified
    /// keyword. Quoted (`"coalesce"(x)`) or qualified (`public.coalesce(x)`) it is a real call.
    fn is_construct(&self, f: &Function) -> bool {
        self.dialect == Dialect::Postgres
            && matches!(f.name.0.as_slice(), [ObjectNamePart::Identifier(id)]
                if id.quote_style.is_none() && PG_CONSTRUCTS.iter().any(|c| id.value.eq_ignore_ascii_case(c)))
    }

    /// The operators sqlparser does not model itself: `OPERATOR(schema.op)` and symbols it has
    /// no variant for (`-|-`, or a user's `<<<`). Its own variants are built-in names.
    fn binary_operator(&mut self, op: &BinaryOperator) {
        match op {
            BinaryOperator::Custom(name) => self.operator(std::slice::from_ref(name)),
            BinaryOperator::PGCustomBinaryOperator(parts) => self.operator(parts),
            _ => {}
        }
    }

    /// An operator outside `pg_catalog` becomes `operator <schema>.<op>` with the fallback
    /// `operator user`: like a user function, it runs code the gate cannot see. sqlparser keeps
    /// each part of an operator name as written (`"PG_CATALOG"` with its quotes), so the parts
    /// are folded here as the server folds them.
    fn operator(&mut self, raw: &[String]) {
        if self.dialect != Dialect::Postgres {
            return;
        }
        let parts: Vec<String> = raw
            .iter()
            .map(|p| match p.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
                Some(quoted) => quoted.replace("\"\"", "\""),
                None => p.to_ascii_lowercase(),
            })
            .collect();
        let parts = parts.as_slice();
        let builtin = match parts {
            [op] => PG_OPERATORS.contains(&op.as_str()),
            [schema, op] if schema == "pg_catalog" => PG_OPERATORS.contains(&op.as_str()),
            _ => false,
        };
        if !builtin {
            let shown = match parts.split_last() {
                Some((op, [])) => op.clone(),
                Some((op, schema)) => format!("{}.{op}", render(schema)),
                None => String::new(),
            };
            self.functions
                .push(Action::new(format!("operator {shown}")).fallback("operator user"));
        }
    }

    fn function(&mut self, name: &ObjectName) -> ControlFlow<String> {
        let mut parts = Vec::with_capacity(name.0.len());
        for p in &name.0 {
            match p {
                ObjectNamePart::Identifier(id) => parts.push(match (self.dialect, id.quote_style) {
                    // PostgreSQL folds unquoted names to lower case; MySQL function names are
                    // case-insensitive whether quoted or not.
                    (Dialect::Postgres, Some(_)) => id.value.clone(),
                    _ => id.value.to_ascii_lowercase(),
                }),
                ObjectNamePart::Function(_) => {
                    return ControlFlow::Break(format!("a computed function name ({name})"));
                }
            }
        }
        self.functions.push(match self.dialect {
            Dialect::Postgres => pg_function(&parts),
            Dialect::MySql => Action::new(format!("function {}", render(&parts))).fallback("function unknown"),
        });
        ControlFlow::Continue(())
    }
}

/// `function pg_catalog.<name>` with its volatility class when the name is a built-in;
/// `function user` for anything else. An unqualified name is taken for the built-in:
/// `pg_catalog` is searched first, but that only settles a tie between identical argument
/// types, and a function of the same name elsewhere on the `search_path` whose argument types
/// fit better wins. The gate cannot see types; the database must keep such functions out of
/// the agent's `search_path` (docs/databases.md, "A read-only database role").
fn pg_function(parts: &[String]) -> Action {
    let builtin = match parts {
        [name] => Some(name),
        [schema, name] if schema == "pg_catalog" => Some(name),
        _ => None,
    };
    if let Some(name) = builtin
        && let Some(vol) = pg_volatility(name)
    {
        let class = match vol {
            'i' => "function immutable",
            's' => "function stable",
            _ => "function volatile",
        };
        return Action::new(format!("function pg_catalog.{}", render(std::slice::from_ref(name)))).fallback(class);
    }
    Action::new(format!("function {}", render(parts))).fallback("function user")
}

/// Dotted name; a part that is not a plain lower-case identifier is shown double-quoted, so
/// `"a.b"` and `a.b` are different verbs.
fn render(parts: &[String]) -> String {
    parts
        .iter()
        .map(|p| {
            let plain = !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'$')
                && !p.as_bytes()[0].is_ascii_digit();
            if plain {
                p.clone()
            } else {
                format!("\"{}\"", p.replace('"', "\"\""))
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The shipped catalog: `name<TAB>i|s|v`, sorted by byte order, `#` comments.
pub const PG_CATALOG: &str = include_str!("../../policy/pg_catalog_functions.tsv");

static PG_INDEX: LazyLock<Vec<(&'static str, char)>> = LazyLock::new(|| {
    PG_CATALOG
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let (name, vol) = l.split_once('\t')?;
            Some((name, vol.chars().next()?))
        })
        .collect()
});

/// The volatility of a `pg_catalog` function, or None if there is no such built-in.
pub fn pg_volatility(name: &str) -> Option<char> {
    let idx = &*PG_INDEX;
    idx.binary_search_by(|(n, _)| (*n).cmp(name)).ok().map(|i| idx[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn pg(text: &str) -> Vec<(String, Vec<String>, Option<String>)> {
        statement(text, Dialect::Postgres)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .into_iter()
            .map(|a| (a.verb, a.marks.into_iter().collect(), a.fallback))
            .collect()
    }

    fn verbs(text: &str) -> Vec<String> {
        pg(text)
            .into_iter()
            .map(|(v, m, _)| if m.is_empty() { v } else { format!("{v} [{}]", m.join(",")) })
            .collect()
    }

    #[test]
    fn the_catalog_is_sorted_and_knows_the_common_functions() {
        let idx = &*PG_INDEX;
        assert!(
            idx.windows(2).all(|w| w[0].0 < w[1].0),
            "policy/pg_catalog_functions.tsv is not sorted"
        );
        assert_eq!(pg_volatility("now"), Some('s'));
        assert_eq!(pg_volatility("count"), Some('i'));
        assert_eq!(pg_volatility("nextval"), Some('v'));
        assert_eq!(pg_volatility("txid_current"), Some('s'));
        assert_eq!(pg_volatility("no_such_function"), None);
    }

    #[test]
    fn plain_queries_are_reads() {
        assert_eq!(verbs("select 1"), vec!["sql select"]);
        assert_eq!(verbs("with a as (select 1) select * from a"), vec!["sql select"]);
        assert_eq!(verbs("values (1)"), vec!["sql select"]);
        assert_eq!(verbs("show server_version"), vec!["sql show"]);
        assert_eq!(verbs("explain select 1"), vec!["sql select", "sql explain"]);
        assert_eq!(verbs("  -- nothing\n"), Vec::<String>::new());
    }

    #[test]
    fn reads_that_write_or_lock_are_marked() {
        assert_eq!(verbs("select * into t2 from t"), vec!["sql select [into]"]);
        assert_eq!(verbs("select * from t for update"), vec!["sql select [row-lock]"]);
        assert_eq!(verbs("select * from t for share skip locked"), vec!["sql select [row-lock]"]);
        assert_eq!(
            verbs("with d as (delete from t returning *) select * from d"),
            vec!["sql select [writes]"]
        );
        assert_eq!(
            verbs("with i as (insert into t values (1) returning 1) select 1"),
            vec!["sql select [writes]"]
        );
        assert_eq!(verbs("explain analyze select 1"), vec!["sql select", "sql explain [analyze]"]);
        assert_eq!(
            verbs("EXPLAIN (ANALYZE) DELETE FROM t"),
            vec!["sql delete", "sql explain [analyze]"]
        );
        assert_eq!(
            verbs("explain (analyse false) select 1"),
            vec!["sql select", "sql explain [analyze]"]
        );
    }

    #[test]
    fn other_statements_are_named_by_their_first_keyword() {
        assert_eq!(verbs("insert into t values (1)"), vec!["sql insert"]);
        assert_eq!(verbs("update t set a = 1"), vec!["sql update"]);
        assert_eq!(verbs("drop table t"), vec!["sql drop"]);
        assert_eq!(verbs("truncate t"), vec!["sql truncate"]);
        assert_eq!(verbs("set default_transaction_read_only = off"), vec!["sql set"]);
        assert_eq!(verbs("begin read write"), vec!["sql begin"]);
        assert_eq!(verbs("create role x superuser"), vec!["sql create [role]"]);
        assert_eq!(verbs("copy t to program 'id'"), vec!["sql copy to [program]"]);
        assert_eq!(verbs("copy t from '/etc/passwd'"), vec!["sql copy from [server-file]"]);
        assert_eq!(
            verbs("copy (select now()) to stdout"),
            vec!["function pg_catalog.now", "sql copy to"]
        );
    }

    #[test]
    fn a_set_to_a_client_encoding_other_than_utf8_is_marked() {
        for sql in [
            "set client_encoding = 'SJIS'",
            "SET client_encoding TO sjis",
            "set session client_encoding = 'BIG5'",
            "set local client_encoding to 'GBK'",
            "set client_encoding = 'auto'",
            "set client_encoding to default",
            "set client_encoding = 'UTF8', 'SJIS'",
        ] {
            assert_eq!(verbs(sql), vec!["sql set [charset]"], "{sql}");
        }
        for sql in [
            "set client_encoding = 'UTF8'",
            "SET client_encoding TO 'utf-8'",
            "set client_encoding = unicode",
        ] {
            assert_eq!(verbs(sql), vec!["sql set"], "{sql}");
        }
        // PostgreSQL's SET NAMES is SET client_encoding.
        assert_eq!(verbs("set names 'SJIS'"), vec!["sql set [charset]"]);
        assert_eq!(verbs("SET NAMES 'UTF8'"), vec!["sql set"]);
    }

    #[test]
    fn a_mysql_set_to_an_unsafe_client_charset_is_marked() {
        let my = |sql: &str| -> Vec<String> {
            statement(sql, Dialect::MySql)
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
                .into_iter()
                .map(Action::shown_with_marks)
                .collect()
        };
        for sql in [
            "SET NAMES gbk",
            "set names 'sjis' collate 'sjis_japanese_ci'",
            "SET NAMES DEFAULT",
            "set character_set_client = big5",
            "SET @@session.character_set_client = 'gb18030'",
            "set autocommit = 0, character_set_connection = cp932",
        ] {
            assert_eq!(my(sql), vec!["sql set [charset]"], "{sql}");
        }
        for sql in [
            "SET NAMES utf8mb4",
            "set names 'latin1'",
            "set character_set_client = UTF8",
            "set autocommit = 0",
        ] {
            assert_eq!(my(sql), vec!["sql set"], "{sql}");
        }
    }

    #[test]
    fn only_utf8_and_single_byte_charsets_are_safe_for_a_client() {
        for name in ["UTF8", "utf-8", "Utf_8", "unicode"] {
            assert!(safe_client_charset(name, Dialect::Postgres), "{name}");
        }
        for name in [
            "SJIS",
            "sjis",
            "BIG5",
            "GBK",
            "GB18030",
            "EUC_JP",
            "LATIN1",
            "SQL_ASCII",
            "auto",
            "",
            "ｕｔｆ８",
        ] {
            assert!(!safe_client_charset(name, Dialect::Postgres), "{name}");
        }
        for name in ["utf8", "UTF8MB4", "utf8mb3", "latin1", "ascii", "binary"] {
            assert!(safe_client_charset(name, Dialect::MySql), "{name}");
        }
        for name in [
            "gbk", "sjis", "cp932", "big5", "gb2312", "gb18030", "ujis", "eucjpms", "auto", "utf-8", "default",
        ] {
            assert!(!safe_client_charset(name, Dialect::MySql), "{name}");
        }
    }

    #[test]
    fn function_calls_are_actions_with_their_catalog_class() {
        assert_eq!(
            pg("select now(), pg_catalog.nextval('s')"),
            vec![
                ("function pg_catalog.now".into(), vec![], Some("function stable".into())),
                ("function pg_catalog.nextval".into(), vec![], Some("function volatile".into())),
                ("sql select".into(), vec![], None),
            ]
        );
        assert_eq!(
            verbs("select * from nextval('s')"),
            vec!["function pg_catalog.nextval", "sql select"]
        );
        assert_eq!(
            verbs("select (select lo_from_bytea(0, 'x'))"),
            vec!["function pg_catalog.lo_from_bytea", "sql select"]
        );
        assert_eq!(
            verbs("select count(*) filter (where a > 1) from t"),
            vec!["function pg_catalog.count", "sql select"]
        );
        // Keywords without parentheses are not calls.
        assert_eq!(verbs("select current_timestamp, current_user"), vec!["sql select"]);
    }

    #[test]
    fn names_outside_pg_catalog_are_user_functions() {
        for (sql, verb) in [
            ("select public.now()", "function public.now"),
            ("select \"NOW\"()", "function \"NOW\""),
            ("select my_check()", "function my_check"),
            ("select \"pg_catalog\".\"a.b\"()", "function pg_catalog.\"a.b\""),
        ] {
            let got = pg(sql);
            assert_eq!(got[0].0, verb, "{sql}");
            assert_eq!(got[0].2.as_deref(), Some("function user"), "{sql}");
        }
    }

    #[test]
    fn coalesce_greatest_least_nullif_grouping_row_and_array_are_syntax_not_calls() {
        assert_eq!(
            verbs("select coalesce(sum(id), 0), greatest(1, 2), least(1, 2), nullif(v, '') from t"),
            vec!["function pg_catalog.sum", "sql select"]
        );
        assert_eq!(
            verbs("select array(select id from t), row(1, 'x'), grouping(id) from t group by rollup (id)"),
            vec!["sql select"]
        );
        assert_eq!(verbs("select COALESCE(1, 2), Row(1)"), vec!["sql select"]);
        // Their arguments are still checked.
        assert_eq!(
            verbs("select coalesce(nextval('s'), 0), array(select my_check())"),
            vec!["function pg_catalog.nextval", "function my_check", "sql select"]
        );
        // Quoted or qualified, the name is a real call (a user function can have it).
        for (sql, verb) in [
            ("select \"coalesce\"(1, 2)", "function coalesce"),
            ("select public.greatest(1, 2)", "function public.greatest"),
            ("select pg_catalog.nullif(1, 2)", "function pg_catalog.nullif"),
        ] {
            let got = pg(sql);
            assert_eq!((got[0].0.as_str(), got[0].2.as_deref()), (verb, Some("function user")), "{sql}");
        }
        // MySQL has no such syntax: its COALESCE is a function the policy names.
        let my = statement("select coalesce(1, 2)", Dialect::MySql).unwrap();
        assert_eq!(my[0].verb, "function coalesce");
    }

    #[test]
    fn operators_outside_pg_catalog_are_user_operators() {
        for (sql, verb) in [
            ("select 1 operator(public.<<<) 2", "operator public.<<<"),
            ("select 1 <<< 2", "operator <<<"),
            ("select (select 1 from t where (id, 1) operator(app.=) (1, 2))", "operator app.="),
            ("select 1 operator(\"PG_CATALOG\".+) 2", "operator \"PG_CATALOG\".+"),
            ("select 1 operator(PUBLIC.<<<) 2", "operator public.<<<"),
            ("select 1 operator(pg_catalog.<<<) 2", "operator pg_catalog.<<<"),
            ("select * from t order by id using operator(public.<<<)", "operator public.<<<"),
            ("select * from t order by id using <<<", "operator <<<"),
            (
                "select array_agg(id order by id using operator(public.<)) from t",
                "operator public.<",
            ),
            ("select 1 operator(a.b.<) 2", "operator a.b.<"),
        ] {
            let users: Vec<String> = pg(sql)
                .into_iter()
                .filter(|(_, _, fallback)| fallback.as_deref() == Some("operator user"))
                .map(|(v, _, _)| v)
                .collect();
            assert_eq!(users, vec![verb.to_string()], "{sql}");
        }
        // Built-in operators, however written, are not actions.
        for sql in [
            "select 1 + 2, 'a' || 'b', '[1,2)'::int4range -|- '[2,3)'::int4range, 'a' ~>=~ 'b'",
            "select 1 operator(pg_catalog.+) 2, 1 operator(<) 2, 1 operator(PG_CATALOG.-) 2",
            "select 1 operator(\"pg_catalog\".*) 2",
            "select * from t order by id using <, v using operator(pg_catalog.>)",
            "select '{}'::jsonb @> '{}', '{}'::jsonb ->> 'a', 'a' ~~* 'b'",
        ] {
            assert_eq!(verbs(sql), vec!["sql select"], "{sql}");
        }
        assert!(PG_OPERATORS.windows(2).all(|w| w[0] < w[1]), "PG_OPERATORS is not sorted");
    }

    #[test]
    fn what_does_not_parse_or_is_not_one_statement_is_refused() {
        assert!(statement("do $$ begin delete from t; end $$", Dialect::Postgres).is_err());
        assert!(statement("select 1; select 2", Dialect::Postgres).is_err());
        assert!(statement("select (((", Dialect::Postgres).is_err());
        // Valid PostgreSQL that sqlparser 0.63 does not parse: refused, as docs/databases.md says.
        for sql in [
            "TABLE t",
            "select * from t for no key update",
            "select * from t fetch first (select 1) rows only",
        ] {
            assert!(statement(sql, Dialect::Postgres).is_err(), "{sql}");
        }
        let deep = format!("select {}1{}", "(".repeat(200), ")".repeat(200));
        assert!(statement(&deep, Dialect::Postgres).is_err());
    }

    #[test]
    fn mysql_functions_fall_back_to_unknown() {
        let got = statement("SELECT SLEEP(1), Count(*) FROM t", Dialect::MySql).unwrap();
        let v: Vec<(&str, Option<&str>)> = got.iter().map(|a| (a.verb.as_str(), a.fallback.as_deref())).collect();
        assert_eq!(
            v,
            vec![
                ("function sleep", Some("function unknown")),
                ("function count", Some("function unknown")),
                ("sql select", None),
            ]
        );
    }
}
