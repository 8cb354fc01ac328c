//! psql through the gate against a real PostgreSQL server, connected as a superuser (the worst
//! case: nothing on the database side stops a write). Every read-only escape of the reference
//! (5.3) and the other ways of writing are tried at tiers 1 and 2; after each, the table, the
//! sequence, the large objects and the list of tables are what they were, and no file was
//! created. Reads return their rows; tier 3 writes land; DROP TABLE is refused at every tier.

use std::path::{Path, PathBuf};

use crate::dbserver::{Pg, pg};
use crate::harness::{Run, TestEnv, run_with_stdin, write_exec};

/// Debian's psql (pg_wrapper, as an agent's PATH would have it).
const REAL_PSQL: &str = "/usr/bin/psql";

/// A tier directory whose psql is the real one, plus a database of its own.
struct Db {
    env: TestEnv,
    pg: &'static Pg,
    db: String,
}

impl Db {
    fn new(ceiling: u8, extra: &str) -> Db {
        let pg = pg();
        let db = pg.fresh_db();
        let env = TestEnv::new(ceiling, &format!("real: {{psql: {REAL_PSQL}}}\n{extra}"));
        Db { env, pg, db }
    }

    /// psql through the gate at `tier`, with `stdin` piped in (or /dev/null).
    fn psql(&self, tier: u8, args: &[&str], stdin: Option<&str>, extra_env: &[(&str, &str)]) -> Run {
        let mut cmd = self.env.cmd("psql", args);
        cmd.envs(self.pg.env(&self.db)).env("CLAUDEOPS_TIER", tier.to_string());
        cmd.envs(extra_env.iter().copied());
        run_with_stdin(&mut cmd, stdin)
    }

    /// Everything a write could change: the rows, the sequence, large objects, the tables.
    fn state(&self) -> String {
        self.pg.sql(
            &self.db,
            "select (select string_agg(id || '=' || v, ',' order by id) from t) \
             || ' | seq ' || (select last_value || '/' || is_called from s) \
             || ' | lo ' || (select count(*) from pg_largeobject_metadata) \
             || ' | tables ' || (select string_agg(relname, ',' order by relname) from pg_class \
                                 where relnamespace = 'public'::regnamespace and relkind = 'r')",
        )
    }

    fn marker(&self, name: &str) -> PathBuf {
        self.env.path(name)
    }
}

const UNCHANGED: &str = "1=one,2=two,3=three | seq 1/false | lo 0 | tables t";

#[test]
fn reads_through_the_gate_return_their_rows_at_tier_1() {
    let d = Db::new(3, "");
    let r = d.psql(1, &["-At", "-c", "select v from t order by id"], None, &[]);
    assert_eq!((r.code(), r.stdout()), (0, "one\ntwo\nthree\n".into()), "{}", r.stderr());
    assert_eq!(r.stderr(), "");

    let r = d.psql(
        1,
        &["-At", "-c", "select count(*), pg_database_size(current_database()) > 0 from t"],
        None,
        &[],
    );
    assert_eq!((r.code(), r.stdout()), (0, "3|t\n".into()), "{}", r.stderr());

    // A script on stdin, with a meta-command, is read, judged and run.
    let r = d.psql(
        1,
        &["-At"],
        Some("\\pset footer off\nselect v from t where id = 2;\nselect 'x' || 'y'\n\\g\n"),
        &[],
    );
    assert_eq!((r.code(), r.stdout()), (0, "two\nxy\n".into()), "{}", r.stderr());

    // A script file.
    std::fs::write(d.env.path("check.sql"), "select count(*) from t;\n").unwrap();
    let r = d.psql(2, &["-At", "-f", "check.sql"], None, &[]);
    assert_eq!((r.code(), r.stdout()), (0, "3\n".into()), "{}", r.stderr());
    assert_eq!(d.state(), UNCHANGED);
}

#[test]
fn coalesce_and_the_other_call_shaped_constructs_are_tier_1_reads_that_return_rows() {
    let d = Db::new(3, "");
    let r = d.psql(
        1,
        &[
            "-At",
            "-c",
            "select coalesce(sum(id), 0), greatest(1, 2), least(1, 2), nullif(v, 'one') is null, \
             array(select id from t order by id), row(1, 'x') = row(1, 'x') \
             from t where id = 1 group by v",
        ],
        None,
        &[],
    );
    assert_eq!((r.code(), r.stdout()), (0, "1|2|1|t|{1,2,3}|t\n".into()), "{}", r.stderr());
}

#[test]
fn user_code_reached_without_call_syntax_is_refused_or_read_only_below_tier_3() {
    let d = Db::new(3, "");
    d.pg.sql(
        &d.db,
        "create function public.lt_and_write(int, int) returns boolean language sql \
           as $$ insert into t values (9, 'op'); select $1 < $2 $$; \
         create operator public.<<< (leftarg = int, rightarg = int, function = public.lt_and_write); \
         create function public.writes(t) returns text language sql \
           as $$ insert into t values (8, 'attr') returning 'wrote' $$",
    );
    // An operator outside pg_catalog is a user operator: refused before psql runs.
    for args in [
        &["-c", "select 1 operator(public.<<<) 2"][..],
        &["-c", "select * from t where id <<< 2"],
        &["-c", "select * from t order by id using operator(public.<<<)"],
    ] {
        for tier in [1u8, 2] {
            let r = d.psql(tier, args, None, &[]);
            assert_eq!(
                (r.code(), d.env.last_audit()["rule"].as_str().unwrap_or("?")),
                (77, "psql.operator.user"),
                "tier {tier}: {args:?}: {}",
                r.stderr()
            );
        }
    }
    // Attribute notation calls writes(t) and looks like a column to the gate: the read-only
    // session is what stops it.
    for sql in ["select t.writes from t", "select (t).writes from t"] {
        let r = d.psql(1, &["-At", "-c", sql], None, &[]);
        assert_ne!(r.code(), 0, "{sql}: {}", r.stdout());
        assert!(r.stderr().contains("read-only transaction"), "{sql}: {}", r.stderr());
    }
    assert_eq!(d.state(), UNCHANGED);
    // At tier 3 the operator runs, and writes.
    let r = d.psql(3, &["-At", "-c", "select 1 operator(public.<<<) 2"], None, &[]);
    assert_eq!((r.code(), r.stdout()), (0, "t\n".into()), "{}", r.stderr());
    assert_eq!(d.pg.sql(&d.db, "select v from t where id = 9"), "op");
}

#[test]
fn every_read_only_escape_and_write_is_refused_at_tiers_1_and_2_and_changes_nothing() {
    let d = Db::new(3, "");
    std::fs::write(d.env.path("write.sql"), "select 1;\ndelete from t;\n").unwrap();
    std::fs::write(d.env.path("hidden.sql"), "delete from t;\n").unwrap();
    let mark = d.marker("created");
    let m = mark.display().to_string();
    let copy_program = format!("COPY t TO PROGRAM 'touch {m}'");
    let copy_file = format!("COPY t TO '{m}'");
    let meta_shell = format!("\\! touch {m}");
    let client_program = format!("\\copy t to program 'touch {m}'");
    let pipe = format!("|touch {m}");
    let backquote = format!("\\set x `touch {m}`");
    let script_shell = format!("select 1;\n\\! touch {m}\n");
    let script_pipe = format!("select 1 \\g |touch {m}\n");
    let script_o = format!("\\o |touch {m}\nselect 1;\n");
    let cases: Vec<(Vec<&str>, Option<&str>, &str)> = vec![
        // The reference's read-only escapes (5.3).
        (
            vec!["-c", "SET default_transaction_read_only = off; COMMIT; DELETE FROM t"],
            None,
            "psql.sql.change",
        ),
        (
            vec!["-c", "SET default_transaction_read_only = off", "-c", "DELETE FROM t"],
            None,
            "psql.sql.change",
        ),
        (
            vec!["-c", "BEGIN READ WRITE; INSERT INTO t VALUES (9, 'x'); COMMIT;"],
            None,
            "psql.sql.change",
        ),
        (
            vec!["-c", "SET transaction_read_only = off; INSERT INTO t VALUES (9, 'x')"],
            None,
            "psql.sql.change",
        ),
        (
            vec![
                "-c",
                "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
                "-c",
                "INSERT INTO t VALUES (9, 'x')",
            ],
            None,
            "psql.sql.change",
        ),
        (
            vec![
                "-c",
                "SELECT set_config('default_transaction_read_only','off',false)",
                "-c",
                "INSERT INTO t VALUES (9, 'x')",
            ],
            None,
            "psql.function.escape",
        ),
        (
            vec!["-d", "options='-c default_transaction_read_only=off'", "-c", "select 1"],
            None,
            "psql.conninfo.options",
        ),
        (
            vec!["postgresql:///?options=-c%20default_transaction_read_only%3Doff", "-c", "select 1"],
            None,
            "psql.conninfo.options",
        ),
        (vec!["-c", "SELECT lo_from_bytea(0, 'x')"], None, "psql.function.escape"),
        (
            vec!["-c", "SELECT pg_cancel_backend(pid) FROM pg_stat_activity"],
            None,
            "psql.function.escape",
        ),
        // Writes hidden in reads.
        (vec!["-c", "EXPLAIN ANALYZE DELETE FROM t"], None, "psql.sql.change"),
        (vec!["-c", "EXPLAIN (ANALYZE) DELETE FROM t"], None, "psql.sql.change"),
        (
            vec!["-c", "WITH d AS (DELETE FROM t RETURNING *) SELECT count(*) FROM d"],
            None,
            "psql.query.writes",
        ),
        (vec!["-c", "SELECT * INTO t_copy FROM t"], None, "psql.query.into"),
        (vec!["-c", "SELECT nextval('s')"], None, "psql.function.volatile"),
        (vec!["-c", "SELECT * FROM setval('s', 42)"], None, "psql.function.volatile"),
        (vec!["-c", "SELECT txid_current()"], None, "psql.function.side-effect"),
        (vec!["-c", "SELECT * FROM t FOR UPDATE"], None, "psql.query.row-lock"),
        (vec!["-c", "DO $$ BEGIN DELETE FROM t; END $$"], None, "psql.grammar"),
        (vec!["-c", "select 1; delete from t"], None, "psql.sql.change"),
        (vec!["-c", "select 'a\\'; delete from t; --'"], None, "psql.grammar"),
        (vec!["-c", "TRUNCATE t"], None, "psql.sql.destroy"),
        (vec!["-c", "DROP TABLE t"], None, "psql.sql.destroy"),
        // Shells, client and server.
        (vec!["-c", &copy_program], None, "psql.sql.copy-program"),
        (vec!["-c", &copy_file], None, "psql.sql.copy-server-file"),
        (vec!["-c", &meta_shell], None, "psql.meta.shell"),
        (vec!["-c", &client_program], None, "psql.meta.copy-program"),
        (vec!["-o", &pipe, "-c", "select 1"], None, "psql.output.pipe"),
        (vec!["-c", &backquote], None, "psql.backquote"),
        // Scripts: stdin, -f, -f -, and a script that includes one the gate cannot see.
        (vec![], Some("select 1;\ndelete from t;\n"), "psql.sql.change"),
        (vec!["-f", "-"], Some("update t set v = 'x';"), "psql.sql.change"),
        (vec![], Some(&script_shell), "psql.meta.shell"),
        (vec![], Some(&script_pipe), "psql.meta.pipe"),
        (vec![], Some(&script_o), "psql.meta.pipe"),
        (vec!["-f", "write.sql"], None, "psql.sql.change"),
        (vec![], Some("\\i hidden.sql\n"), "psql.meta.hidden"),
        (vec![], Some("\\set q 'delete from t'\n:q;\n"), "psql.grammar"),
        (vec!["-S"], Some("select 1\n"), "psql.grammar"),
    ];
    for tier in [1u8, 2] {
        for (args, stdin, rule) in &cases {
            let r = d.psql(tier, args, *stdin, &[]);
            let rec = d.env.last_audit();
            assert_eq!(
                (r.code(), rec["rule"].as_str().unwrap_or("?")),
                (77, *rule),
                "tier {tier}: psql {args:?} stdin {stdin:?}\nstdout: {}\nstderr: {}",
                r.stdout(),
                r.stderr()
            );
            assert_eq!(
                d.state(),
                UNCHANGED,
                "tier {tier}: psql {args:?} stdin {stdin:?} changed the database"
            );
            assert!(!mark.exists(), "tier {tier}: psql {args:?} stdin {stdin:?} created a file");
        }
    }
}

#[test]
fn below_tier_3_every_session_is_read_only_whatever_the_caller_sets() {
    let d = Db::new(3, "env: {PGOPTIONS: \"-c default_transaction_read_only=off\"}\n");
    let off = [("PGOPTIONS", "-c default_transaction_read_only=off")];
    for (tier, want) in [(1, "on"), (2, "on"), (3, "off")] {
        let r = d.psql(tier, &["-At", "-c", "show default_transaction_read_only"], None, &off);
        assert_eq!((r.code(), r.stdout()), (0, format!("{want}\n")), "tier {tier}: {}", r.stderr());
    }
}

/// In SJIS the bytes of `Á` (UTF-8 C3 81) are a half-width kana and the lead byte 0x81, which
/// swallows the backslash after it: to a server reading SJIS, `E'Á\'` is a closed string and the
/// rest of the text runs. The gate reads UTF-8, where the whole text is one string.
const SJIS_SET: &str = "select E'Á\\'; set default_transaction_read_only = off; --'";
const SJIS_DELETE: &str = "select E'Á\\'; delete from t; --'";

#[test]
fn a_non_utf8_client_encoding_cannot_split_sql_behind_the_gate() {
    let d = Db::new(3, "");
    // The caller's PGCLIENTENCODING is replaced by UTF8 (at tier 1 without that, the server ran
    // the SET and the DELETE).
    for tier in [1u8, 2] {
        let r = d.psql(
            tier,
            &["-At", "-c", SJIS_SET, "-c", SJIS_DELETE],
            None,
            &[("PGCLIENTENCODING", "SJIS")],
        );
        assert_eq!(r.code(), 0, "tier {tier}: {}", r.stderr());
        assert_eq!(
            r.stdout(),
            "Á'; set default_transaction_read_only = off; --\nÁ'; delete from t; --\n",
            "tier {tier}: the server read each -c as one string"
        );
        assert_eq!(d.state(), UNCHANGED, "tier {tier}: the SJIS split ran");
    }
    let r = d.psql(1, &["-At", "-c", "show client_encoding"], None, &[("PGCLIENTENCODING", "SJIS")]);
    assert_eq!((r.code(), r.stdout()), (0, "UTF8\n".into()), "{}", r.stderr());

    // Every other way to ask for SJIS is refused before psql runs.
    let mark = d.marker("created");
    let script = format!("\\encoding SJIS\nselect E'Á\\'; \\! touch {}\n--';\n", mark.display());
    let dbname = format!("dbname={} client_encoding=SJIS", d.db);
    let uri = format!("postgresql:///{}?client%5Fencoding=SJIS", d.db);
    let cases: Vec<(Vec<&str>, Option<&str>, &str)> = vec![
        (vec!["-d", &dbname, "-c", SJIS_DELETE], None, "psql.conninfo.charset"),
        (vec![&uri, "-c", SJIS_DELETE], None, "psql.conninfo.charset"),
        (vec![], Some(&script), "psql.meta.encoding"),
        (
            vec!["-c", "set client_encoding = 'SJIS'", "-c", SJIS_DELETE],
            None,
            "psql.sql.charset",
        ),
    ];
    for tier in [1u8, 2] {
        for (args, stdin, rule) in &cases {
            let r = d.psql(tier, args, *stdin, &[]);
            assert_eq!(
                (r.code(), d.env.last_audit()["rule"].as_str().unwrap_or("?")),
                (77, *rule),
                "tier {tier}: psql {args:?} stdin {stdin:?}\nstderr: {}",
                r.stderr()
            );
            assert_eq!(d.state(), UNCHANGED, "tier {tier}: psql {args:?} changed the database");
            assert!(!mark.exists(), "tier {tier}: psql {args:?} stdin {stdin:?} created a file");
        }
    }
}

#[test]
fn tier_3_writes_land_and_drop_table_is_refused_at_every_tier() {
    let d = Db::new(3, "");
    let r = d.psql(
        3,
        &["-c", "insert into t values (4, 'four')", "-c", "select nextval('s')"],
        None,
        &[],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(d.pg.sql(&d.db, "select v from t where id = 4"), "four");
    assert_eq!(d.pg.sql(&d.db, "select last_value from s"), "1");
    let r = d.psql(3, &[], Some("update t set v = 'FOUR' where id = 4;\n"), &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(d.pg.sql(&d.db, "select v from t where id = 4"), "FOUR");
    for tier in [1, 2, 3] {
        for args in [
            &["-c", "DROP TABLE t"][..],
            &["-c", "select 1; drop table t"],
            &["-c", "drop table if exists t cascade"],
        ] {
            let r = d.psql(tier, args, None, &[]);
            assert_eq!(r.code(), 77, "tier {tier} {args:?}: {}", r.stderr());
            assert_eq!(d.env.last_audit()["rule"], "psql.sql.destroy");
        }
        let r = d.psql(tier, &[], Some("select 1;\nDROP TABLE t;\n"), &[]);
        assert_eq!(r.code(), 77, "tier {tier}: {}", r.stderr());
    }
    assert_eq!(d.pg.sql(&d.db, "select count(*) from t"), "4");
}

#[test]
fn a_script_file_changed_after_the_check_runs_as_it_was_checked() {
    // The "real" psql is a wrapper that rewrites the script in the window between the gate's
    // check and psql reading it, then runs Debian's psql with what it was given.
    let d = Db::new(3, "");
    let script = d.env.path("check.sql");
    std::fs::write(&script, "select v from t where id = 1;\n").unwrap();
    let wrapper = d.env.real.join("psql-swapping");
    write_exec(
        &wrapper,
        &format!(
            "#!/bin/sh\nprintf 'delete from t;\\n' > '{}'\nprintf '%s\\n' \"$@\" > '{}'\nexec {REAL_PSQL} \"$@\"\n",
            script.display(),
            d.env.path("argv").display()
        ),
    );
    d.env.write_config(&format!(
        "tier: 3\nreal: {{psql: {}}}\naudit_log: {}\n",
        wrapper.display(),
        d.env.audit.display()
    ));
    for args in [&["-At", "-f", "check.sql"][..], &["-At", "--file=check.sql"], &["-Atfcheck.sql"]] {
        std::fs::write(&script, "select v from t where id = 1;\n").unwrap();
        let r = d.psql(1, args, None, &[]);
        assert_eq!((r.code(), r.stdout()), (0, "one\n".into()), "{args:?}: {}", r.stderr());
        assert_eq!(
            std::fs::read_to_string(&script).unwrap(),
            "delete from t;\n",
            "the wrapper did swap the file"
        );
        assert_eq!(d.state(), UNCHANGED);
        let argv = std::fs::read_to_string(d.env.path("argv")).unwrap();
        assert!(argv.contains("/dev/fd/") && !argv.contains("check.sql"), "{argv}");
    }
}

#[test]
fn a_pinned_role_is_the_only_role() {
    let d = Db::new(3, "env: {PGUSER: monitor}\n");
    d.pg.sql(
        &d.db,
        "do $$ begin if not exists (select from pg_roles where rolname = 'monitor') then create role monitor login; end if; end $$",
    );
    d.pg.sql(&d.db, "grant select on t to monitor");
    // The caller's PGUSER (the superuser) is replaced by the pinned role.
    let r = d.psql(1, &["-At", "-c", "select current_user"], None, &[]);
    assert_eq!((r.code(), r.stdout()), (0, "monitor\n".into()), "{}", r.stderr());
    let r = d.psql(1, &["-At", "-U", "monitor", "-c", "select count(*) from t"], None, &[]);
    assert_eq!((r.code(), r.stdout()), (0, "3\n".into()), "{}", r.stderr());
    let db = d.db.clone();
    for args in [
        vec!["-U", "postgres", "-c", "select 1"],
        vec!["--username=postgres", "-c", "select 1"],
        vec![db.as_str(), "postgres", "-c", "select 1"],
        vec!["-d", "user=postgres", "-c", "select 1"],
        vec!["postgresql://postgres@/", "-c", "select 1"],
    ] {
        let r = d.psql(3, &args, None, &[]);
        assert_eq!(r.code(), 77, "{args:?}: {}", r.stderr());
        assert_eq!(d.env.last_audit()["rule"], "psql.pinned", "{args:?}");
    }
    // As the read-only role, even a tier 3 write is stopped by the database.
    let r = d.psql(3, &["-c", "delete from t"], None, &[]);
    assert_ne!(r.code(), 0);
    assert!(r.stderr().contains("permission denied"), "{}", r.stderr());
    assert_eq!(d.state(), UNCHANGED);
}

#[test]
fn an_interactive_psql_is_refused_below_tier_3() {
    let env = TestEnv::new(3, "");
    // A pseudo-terminal as stdin: what an agent's shell would give an interactive psql.
    // SAFETY: plain libc calls on a fresh pty master; the slave path is copied out at once.
    let slave = unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0);
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        std::ffi::CStr::from_ptr(libc::ptsname(master)).to_string_lossy().into_owned()
    };
    for tier in [1, 2] {
        let tty = std::fs::OpenOptions::new().read(true).write(true).open(&slave).unwrap();
        let out = env
            .cmd("psql", &["-h", "db.internal", "app"])
            .env("CLAUDEOPS_TIER", tier.to_string())
            .stdin(tty)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(77), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(env.last_audit()["rule"], "psql.interactive");
        assert!(env.received("psql").is_none());
    }
}

#[test]
fn the_built_in_operator_names_match_the_server() {
    let live = pg().sql(
        "postgres",
        "select string_agg(oprname, ' ' order by oprname collate \"C\") from \
           (select distinct oprname from pg_operator where oprnamespace = 'pg_catalog'::regnamespace) x",
    );
    assert_eq!(
        tiershim::grammar::sql::PG_OPERATORS.join(" "),
        live,
        "PG_OPERATORS in src/grammar/sql.rs drifted from the server's pg_operator"
    );
}

#[test]
fn the_shipped_function_catalog_matches_the_server() {
    let pg = pg();
    let live = pg.sql(
        "postgres",
        "select string_agg(proname || E'\\t' || vol, E'\\n' order by proname collate \"C\") from ( \
           select proname, case when bool_or(provolatile = 'v') then 'v' \
                                when bool_or(provolatile = 's') then 's' else 'i' end as vol \
           from pg_proc p join pg_namespace n on n.oid = p.pronamespace \
           where n.nspname = 'pg_catalog' group by proname) x",
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("policy/pg_catalog_functions.tsv");
    let shipped: Vec<&str> = tiershim::grammar::sql::PG_CATALOG
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    let live: Vec<&str> = live.lines().collect();
    let missing: Vec<&&str> = live.iter().filter(|l| !shipped.contains(l)).take(10).collect();
    let extra: Vec<&&str> = shipped.iter().filter(|l| !live.contains(l)).take(10).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{} drifted from the server's pg_proc: on the server only {missing:?}, shipped only {extra:?}; regenerate it with the query in this test",
        path.display()
    );
}
