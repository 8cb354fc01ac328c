//! mysql through the gate against a real MariaDB server, as `root` (the worst case: nothing on
//! the database side stops a write). The ways of writing or reaching a shell are tried at tiers
//! 1 and 2; after each the table and the list of tables are what they were and no file was
//! created. Reads return their rows; tier 3 writes land; DROP TABLE is refused at every tier.

use std::path::PathBuf;

use crate::dbserver::{Maria, maria};
use crate::harness::{Run, TestEnv, run_with_stdin};

fn real_client() -> PathBuf {
    ["/usr/bin/mysql", "/usr/bin/mariadb"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .expect("the mariadb client; `make test` installs mariadb-server")
}

struct Db {
    env: TestEnv,
    m: &'static Maria,
    db: String,
}

impl Db {
    fn new(extra: &str) -> Db {
        let m = maria();
        let db = m.fresh_db();
        let env = TestEnv::new(3, &format!("real: {{mysql: {}}}\n{extra}", real_client().display()));
        Db { env, m, db }
    }

    /// mysql through the gate at `tier`, as root, in this test's database.
    fn mysql(&self, tier: u8, args: &[&str], stdin: Option<&str>) -> Run {
        let mut all = vec!["-uroot", "-N", "-B"];
        all.extend_from_slice(args);
        all.push(&self.db);
        let mut cmd = self.env.cmd("mysql", &all);
        cmd.env("MYSQL_UNIX_PORT", &self.m.socket).env("CLAUDEOPS_TIER", tier.to_string());
        run_with_stdin(&mut cmd, stdin)
    }

    fn state(&self) -> String {
        self.m.sql(
            &self.db,
            "select concat((select group_concat(id, '=', v order by id) from t), ' | tables ', \
             (select group_concat(table_name order by table_name) from information_schema.tables where table_schema = database()))",
        )
    }
}

const UNCHANGED: &str = "1=one,2=two,3=three | tables t";

#[test]
fn mysql_reads_through_the_gate_return_their_rows_at_tier_1() {
    let d = Db::new("");
    let r = d.mysql(1, &["-e", "select v from t order by id"], None);
    assert_eq!((r.code(), r.stdout()), (0, "one\ntwo\nthree\n".into()), "{}", r.stderr());
    assert_eq!(r.stderr(), "");
    let r = d.mysql(1, &[], Some("select count(*) from t;\nselect upper(v) from t where id = 2;\n"));
    assert_eq!((r.code(), r.stdout()), (0, "3\nTWO\n".into()), "{}", r.stderr());
    assert_eq!(d.state(), UNCHANGED);
}

#[test]
fn mysql_writes_and_shells_are_refused_at_tiers_1_and_2_and_change_nothing() {
    let d = Db::new("");
    let mark = d.env.path("created");
    let m = mark.display().to_string();
    std::fs::write(d.env.path("hidden.sql"), "delete from t;\n").unwrap();
    let hidden = d.env.path("hidden.sql").display().to_string();
    let shell = format!("\\! touch {m}");
    let system = format!("system touch {m}");
    let system_then = "system true; delete from t".to_string();
    let pager = format!("--pager=touch {m}");
    let outfile = format!("select * from t into outfile '{m}'");
    let source = format!("source {hidden}");
    let script_shell = format!("select 1;\n\\! touch {m}\n");
    let cases: Vec<(Vec<&str>, Option<&str>, &str)> = vec![
        (vec!["-e", "select 1; delete from t"], None, "mysql.sql.change"),
        (
            vec!["-e", "SET SESSION TRANSACTION READ WRITE; DELETE FROM t"],
            None,
            "mysql.sql.change",
        ),
        (
            vec!["-e", "start transaction read write; insert into t values (9, 'x'); commit"],
            None,
            "mysql.sql.change",
        ),
        (vec!["-e", "create table t2 as select * from t"], None, "mysql.sql.change"),
        (vec!["-e", "select * from t for update"], None, "mysql.query.row-lock"),
        (vec!["-e", "select 1 into @x"], None, "mysql.query.into"),
        (vec!["-e", "select 1 /*! ; delete from t */"], None, "mysql.grammar"),
        (vec!["-e", "select 'a\\'; delete from t; -- '"], None, "mysql.grammar"),
        (vec!["-e", &outfile], None, "mysql.grammar"),
        (vec!["-e", "truncate t"], None, "mysql.sql.destroy"),
        (vec!["-e", "drop table t"], None, "mysql.sql.destroy"),
        (vec!["-e", &shell], None, "mysql.command.shell"),
        (vec!["-e", &system], None, "mysql.command.shell"),
        (vec!["-e", &system_then], None, "mysql.command.shell"),
        (vec!["-e", &source], None, "mysql.command.hidden"),
        (vec!["--init-command=delete from t", "-e", "select 1"], None, "mysql.sql.change"),
        (vec![&pager, "-e", "select 1"], None, "mysql.option.escape"),
        (vec!["--delimiter=//", "-e", "delete from t//"], None, "mysql.grammar"),
        (vec![], Some("select 1;\ndelete from t;\n"), "mysql.sql.change"),
        (vec![], Some(&script_shell), "mysql.command.shell"),
        (vec![], Some("delimiter //\ndelete from t//\n"), "mysql.grammar"),
    ];
    for tier in [1u8, 2] {
        for (args, stdin, rule) in &cases {
            let r = d.mysql(tier, args, *stdin);
            let rec = d.env.last_audit();
            assert_eq!(
                (r.code(), rec["rule"].as_str().unwrap_or("?")),
                (77, *rule),
                "tier {tier}: mysql {args:?} stdin {stdin:?}\nstdout: {}\nstderr: {}",
                r.stdout(),
                r.stderr()
            );
            assert_eq!(
                d.state(),
                UNCHANGED,
                "tier {tier}: mysql {args:?} stdin {stdin:?} changed the database"
            );
            assert!(!mark.exists(), "tier {tier}: mysql {args:?} stdin {stdin:?} created a file");
        }
    }
}

#[test]
fn mysql_tier_3_writes_land_and_drop_table_is_refused_at_every_tier() {
    let d = Db::new("");
    let r = d.mysql(3, &["-e", "insert into t values (4, 'four')"], None);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let r = d.mysql(3, &[], Some("update t set v = 'FOUR' where id = 4;\n"));
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(d.m.sql(&d.db, "select v from t where id = 4"), "FOUR");
    for tier in [1, 2, 3] {
        let r = d.mysql(tier, &["-e", "DROP TABLE t"], None);
        assert_eq!(r.code(), 77, "tier {tier}: {}", r.stderr());
        assert_eq!(d.env.last_audit()["rule"], "mysql.sql.destroy");
        let r = d.mysql(tier, &[], Some("select 1;\ndrop table t;\n"));
        assert_eq!(r.code(), 77, "tier {tier}: {}", r.stderr());
    }
    assert_eq!(d.m.sql(&d.db, "select count(*) from t"), "4");
}

#[test]
fn mysql_with_a_pinned_user_refuses_another() {
    let d = Db::new("env: {MYSQL_USER: monitor}\n");
    // Db::mysql logs in with -uroot, which is not the pinned user.
    let r = d.mysql(3, &["-e", "select 1"], None);
    assert_eq!(r.code(), 77, "{}", r.stderr());
    assert_eq!(d.env.last_audit()["rule"], "mysql.pinned");
    assert!(r.stderr().contains("REFUSED: mysql -uroot is never allowed"), "{}", r.stderr());
    let reasons = d.env.last_audit()["reasons"].to_string();
    assert!(reasons.contains("-uroot does not match the pinned MYSQL_USER=monitor"), "{reasons}");
}
