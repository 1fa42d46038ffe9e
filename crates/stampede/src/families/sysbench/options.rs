//! sysbench's command-line options: the workload options of `oltp_common.lua` and `sysbench`
//! ([`Options`], `run` only) and the pgsql driver's connection options ([`PgsqlArgs`], `run`
//! and `init oltp`), and what a sysbench test name on `run`'s positional means.
//!
//! The connection options are other spellings of stampede's own (module notes of `oltp`):
//! `--pgsql-host` is `-h`, `--pgsql-port` `-p`, `--pgsql-user` `-U`, `--pgsql-db` `-d`,
//! `--pgsql-password` the password (as PGPASSWORD, but winning over it; a password inside a
//! connection string still wins). sysbench's defaults for them (localhost, 5432, sbtest, sbtest;
//! `drv_pgsql.c`) are *not* applied: what is not given follows libpq's rules, as for `-h -p -U
//! -d`, so a half-given sysbench command line cannot silently reach another server.

use anyhow::Result;

use crate::console::Failure;

macro_rules! bail {
    ($($t:tt)*) => { return Err(Failure::usage(format!($($t)*), "")) };
}
use clap::Args;
use sut::conninfo::Password;

use crate::targeting::TargetArgs;

/// sysbench's options of `oltp_common.lua` and of `sysbench` itself that `run oltp_*` takes (the
/// others map to stampede's own flags: module notes). `None`: sysbench's default.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "sysbench workloads (`run oltp_*`, sysbench's option names)")]
#[group(id = "sysbench_options")]
pub struct Options {
    /// Number of sbtest tables [1].
    #[arg(long = "tables", value_name = "N")]
    pub tables: Option<u32>,
    /// Rows per table [10000].
    #[arg(long = "table-size", value_name = "N")]
    pub table_size: Option<u32>,
    /// Rows per range query [100].
    #[arg(long = "range-size", value_name = "N")]
    pub range_size: Option<u32>,
    /// Point SELECTs per transaction [10].
    #[arg(long = "point-selects", value_name = "N")]
    pub point_selects: Option<u32>,
    /// Simple range SELECTs per transaction [1].
    #[arg(long = "simple-ranges", value_name = "N")]
    pub simple_ranges: Option<u32>,
    /// SELECT SUM() ranges per transaction [1].
    #[arg(long = "sum-ranges", value_name = "N")]
    pub sum_ranges: Option<u32>,
    /// SELECT ORDER BY ranges per transaction [1].
    #[arg(long = "order-ranges", value_name = "N")]
    pub order_ranges: Option<u32>,
    /// SELECT DISTINCT ranges per transaction [1].
    #[arg(long = "distinct-ranges", value_name = "N")]
    pub distinct_ranges: Option<u32>,
    /// UPDATEs of the indexed column per transaction [1].
    #[arg(long = "index-updates", value_name = "N")]
    pub index_updates: Option<u32>,
    /// UPDATEs of a non-indexed column per transaction [1].
    #[arg(long = "non-index-updates", value_name = "N")]
    pub non_index_updates: Option<u32>,
    /// DELETE+INSERT pairs per transaction [1].
    #[arg(long = "delete-inserts", value_name = "N")]
    pub delete_inserts: Option<u32>,
    /// Enable the range SELECTs [on].
    #[arg(long = "range-selects", value_name = "on|off", value_parser = parse_switch,
          num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub range_selects: Option<bool>,
    /// Do not use BEGIN/COMMIT [off].
    #[arg(long = "skip-trx", value_name = "on|off", value_parser = parse_switch,
          num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub skip_trx: Option<bool>,
    /// oltp_insert: let the server assign ids [on].
    #[arg(long = "auto-inc", value_name = "on|off", value_parser = parse_switch,
          num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub auto_inc: Option<bool>,
    /// Distribution of ids: uniform, gaussian, special, pareto, zipfian [special].
    #[arg(long = "rand-type", value_name = "TYPE")]
    pub rand_type: Option<String>,
    /// Iterations of the special distribution [12].
    #[arg(long = "rand-spec-iter", value_name = "N")]
    pub rand_spec_iter: Option<u32>,
    /// Percentage of values treated as special [1].
    #[arg(long = "rand-spec-pct", value_name = "N")]
    pub rand_spec_pct: Option<u32>,
    /// Percentage of draws that hit the special values [75].
    #[arg(long = "rand-spec-res", value_name = "N")]
    pub rand_spec_res: Option<u32>,
    /// The pareto distribution's h [0.2].
    #[arg(long = "rand-pareto-h", value_name = "H")]
    pub rand_pareto_h: Option<f64>,
    /// The zipfian distribution's exponent [0.8].
    #[arg(long = "rand-zipfian-exp", value_name = "E")]
    pub rand_zipfian_exp: Option<f64>,
    /// Total transactions over all clients (each runs ceil(N / clients)); 0: no limit [0].
    #[arg(long = "events", value_name = "N")]
    pub events: Option<u64>,
    /// Seconds at the start left out of the sysbench summary [0].
    #[arg(long = "warmup-time", value_name = "N")]
    pub warmup_time: Option<u64>,
    /// The latency percentile sysbench prints (1-100) [95]; all of stampede's are printed too.
    #[arg(long = "percentile", value_name = "P")]
    pub percentile: Option<f64>,
    /// Prepared statements: auto (server-side, sysbench's default) or disable (values
    /// interpolated into the text, sent with the simple protocol) [auto].
    #[arg(long = "db-ps-mode", value_name = "auto|disable", value_parser = ["auto", "disable"])]
    pub db_ps_mode: Option<String>,
    /// Progress lines (-P/--report-interval) in sysbench's format or stampede's pgbench-style
    /// one (with lag, p99, retries) [sysbench].
    #[arg(long = "progress-style", value_name = "sysbench|pgbench", value_parser = ["sysbench", "pgbench"])]
    pub progress_style: Option<String>,

    #[command(flatten)]
    pub pgsql: PgsqlArgs,
}

impl Options {
    /// The options given, as `--name=value`, for the error when there is no sysbench workload.
    pub fn given(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut add = |set: bool, name: &'static str| {
            if set {
                v.push(name);
            }
        };
        add(self.tables.is_some(), "--tables");
        add(self.table_size.is_some(), "--table-size");
        add(self.range_size.is_some(), "--range-size");
        add(self.point_selects.is_some(), "--point-selects");
        add(self.simple_ranges.is_some(), "--simple-ranges");
        add(self.sum_ranges.is_some(), "--sum-ranges");
        add(self.order_ranges.is_some(), "--order-ranges");
        add(self.distinct_ranges.is_some(), "--distinct-ranges");
        add(self.index_updates.is_some(), "--index-updates");
        add(self.non_index_updates.is_some(), "--non-index-updates");
        add(self.delete_inserts.is_some(), "--delete-inserts");
        add(self.range_selects.is_some(), "--range-selects");
        add(self.skip_trx.is_some(), "--skip-trx");
        add(self.auto_inc.is_some(), "--auto-inc");
        add(self.rand_type.is_some(), "--rand-type");
        add(self.rand_spec_iter.is_some(), "--rand-spec-iter");
        add(self.rand_spec_pct.is_some(), "--rand-spec-pct");
        add(self.rand_spec_res.is_some(), "--rand-spec-res");
        add(self.rand_pareto_h.is_some(), "--rand-pareto-h");
        add(self.rand_zipfian_exp.is_some(), "--rand-zipfian-exp");
        add(self.events.is_some(), "--events");
        add(self.warmup_time.is_some(), "--warmup-time");
        add(self.percentile.is_some(), "--percentile");
        add(self.db_ps_mode.is_some(), "--db-ps-mode");
        add(self.progress_style.is_some(), "--progress-style");
        v
    }

    /// The mix options of `oltp_common.lua` given, which `bulk_insert.lua` does not have.
    pub fn mix_given(&self) -> Vec<&'static str> {
        let keep = [
            "--events",
            "--warmup-time",
            "--percentile",
            "--db-ps-mode",
            "--progress-style",
        ];
        self.given()
            .into_iter()
            .filter(|n| !keep.contains(n))
            .collect()
    }
}

/// sysbench's boolean option values.
fn parse_switch(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("expected on or off, got {s:?}")),
    }
}

/// sysbench's connection options (`drv_pgsql.c`, `drv_mysql.c`) and `--db-driver`, for
/// `run oltp_*` and `init oltp`.
#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "sysbench connection options (sysbench's driver names)")]
pub struct PgsqlArgs {
    /// Database driver: pgsql, or mysql (MySQL/MariaDB, with the --mysql-* options).
    #[arg(long = "db-driver", value_name = "pgsql|mysql")]
    pub db_driver: Option<String>,
    /// MySQL server hosts, comma-separated (clients go round robin over them).
    #[arg(long = "mysql-host", value_name = "HOST[,HOST...]")]
    pub mysql_host: Option<String>,
    /// MySQL server ports, comma-separated, one per host (default 3306).
    #[arg(long = "mysql-port", value_name = "PORT[,PORT...]")]
    pub mysql_port: Option<String>,
    /// MySQL unix sockets, comma-separated (instead of hosts).
    #[arg(long = "mysql-socket", value_name = "PATH[,PATH...]")]
    pub mysql_socket: Option<String>,
    /// MySQL user (default: sysbench's sbtest).
    #[arg(long = "mysql-user", value_name = "USER")]
    pub mysql_user: Option<String>,
    /// MySQL password (never printed; MYSQL_PWD keeps it off the command line).
    #[arg(long = "mysql-password", value_name = "PASSWORD", value_parser = parse_password)]
    pub mysql_password: Option<Password>,
    /// MySQL database (default: sysbench's sbtest).
    #[arg(long = "mysql-db", value_name = "DBNAME")]
    pub mysql_db: Option<String>,
    /// TLS to the MySQL server: on requires it, off (default) disables it.
    #[arg(long = "mysql-ssl", value_name = "on|off", value_parser = parse_switch)]
    pub mysql_ssl: Option<bool>,
    /// Same as -h/--host.
    #[arg(long = "pgsql-host", value_name = "HOST")]
    pub pgsql_host: Option<String>,
    /// Same as -p/--port.
    #[arg(long = "pgsql-port", value_name = "PORT")]
    pub pgsql_port: Option<String>,
    /// Same as -U/--username.
    #[arg(long = "pgsql-user", value_name = "USER")]
    pub pgsql_user: Option<String>,
    /// The password (never printed; PGPASSWORD or ~/.pgpass keep it off the command line).
    #[arg(long = "pgsql-password", value_name = "PASSWORD", value_parser = parse_password)]
    pub pgsql_password: Option<Password>,
    /// Same as -d/--dbname.
    #[arg(long = "pgsql-db", value_name = "DBNAME")]
    pub pgsql_db: Option<String>,
}

impl PgsqlArgs {
    /// `--db-driver=mysql`: the `--mysql-*` options as MySQL endpoints (sysbench's mysql driver:
    /// hosts and ports are lists, paired by position, the ports cycling; sockets instead of
    /// hosts). No host, port or socket at all: the embedded MariaDB.
    fn apply_mysql(&self, t: &mut TargetArgs) -> Result<()> {
        use sut::mysql::{Conninfo, Password as MyPassword, SslMode};
        if let Some(pg) = self.given().iter().find(|n| n.starts_with("--pgsql-")) {
            bail!("{pg} is a pgsql option, but --db-driver=mysql was given: use the --mysql-* options");
        }
        if t.host.is_some() || t.port.is_some() || t.username.is_some() {
            bail!("-h/-p/-U are PostgreSQL's options: with --db-driver=mysql use --mysql-host, --mysql-port and --mysql-user");
        }
        let list = |v: &Option<String>| -> Vec<String> {
            v.as_deref()
                .unwrap_or("")
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        };
        let (hosts, ports, sockets) = (
            list(&self.mysql_host),
            list(&self.mysql_port),
            list(&self.mysql_socket),
        );
        // sysbench's defaults: user and database sbtest.
        let mut base = Conninfo::new();
        base.user = self.mysql_user.clone().unwrap_or_else(|| "sbtest".into());
        base.database = Some("sbtest".into());
        if let Some(p) = &self.mysql_password {
            base.password = Some(MyPassword(p.0.clone()));
        }
        if let Some(db) = self.mysql_db.clone().or(t.dbname.take()) {
            base.database = Some(db);
        }
        if let Some(ssl) = self.mysql_ssl {
            base.ssl_mode = if ssl {
                SslMode::Required
            } else {
                SslMode::Disabled
            };
        }
        let ports: Vec<u16> = ports
            .iter()
            .map(|p| {
                p.parse()
                    .map_err(|_| anyhow::anyhow!("--mysql-port {p:?}: not a port"))
            })
            .collect::<Result<_>>()?;
        let endpoints: Vec<Conninfo> = if !sockets.is_empty() {
            sockets
                .iter()
                .map(|s| Conninfo {
                    host: "localhost".into(),
                    socket: Some(s.into()),
                    ..base.clone()
                })
                .collect()
        } else if !hosts.is_empty() || !ports.is_empty() {
            let hosts = if hosts.is_empty() {
                vec!["127.0.0.1".to_string()]
            } else {
                hosts
            };
            (hosts.iter().enumerate())
                .map(|(i, h)| Conninfo {
                    host: h.clone(),
                    port: ports.get(i % ports.len().max(1)).copied().unwrap_or(3306),
                    socket: None,
                    ..base.clone()
                })
                .collect()
        } else {
            if t.embedded {
                bail!("--embedded is the embedded PostgreSQL; with --db-driver=mysql and no --mysql-host, the embedded MariaDB runs");
            }
            t.mysql_embedded = base.database.clone();
            return Ok(());
        };
        if t.embedded {
            bail!("--embedded and --mysql-host/--mysql-socket name two targets: give one");
        }
        t.mysql = Some(endpoints);
        Ok(())
    }
}

fn parse_password(s: &str) -> Result<Password, String> {
    Ok(Password(s.to_string()))
}

impl PgsqlArgs {
    /// The options given, by name.
    pub fn given(&self) -> Vec<&'static str> {
        [
            (self.db_driver.is_some(), "--db-driver"),
            (self.pgsql_host.is_some(), "--pgsql-host"),
            (self.pgsql_port.is_some(), "--pgsql-port"),
            (self.pgsql_user.is_some(), "--pgsql-user"),
            (self.pgsql_password.is_some(), "--pgsql-password"),
            (self.pgsql_db.is_some(), "--pgsql-db"),
            (self.mysql_host.is_some(), "--mysql-host"),
            (self.mysql_port.is_some(), "--mysql-port"),
            (self.mysql_socket.is_some(), "--mysql-socket"),
            (self.mysql_user.is_some(), "--mysql-user"),
            (self.mysql_password.is_some(), "--mysql-password"),
            (self.mysql_db.is_some(), "--mysql-db"),
            (self.mysql_ssl.is_some(), "--mysql-ssl"),
        ]
        .into_iter()
        .filter_map(|(set, n)| set.then_some(n))
        .collect()
    }

    /// Check `--db-driver` and fold the `--pgsql-*` options into stampede's target flags
    /// (before any I/O). Giving a value both ways is refused rather than resolved silently.
    pub fn apply(&self, t: &mut TargetArgs) -> Result<()> {
        let mysql_given = self.given().iter().any(|n| n.starts_with("--mysql-"));
        match self.db_driver.as_deref() {
            None | Some("pgsql") if mysql_given => bail!(
                "the --mysql-* options need --db-driver=mysql (the default driver here is pgsql)"
            ),
            None | Some("pgsql") => {}
            Some("mysql") => return self.apply_mysql(t),
            Some(d) => bail!("--db-driver={d}: unknown driver (sysbench's are mysql and pgsql)"),
        }
        let remote = self.pgsql_host.is_some()
            || self.pgsql_port.is_some()
            || self.pgsql_user.is_some()
            || self.pgsql_db.is_some()
            || self.pgsql_password.is_some();
        if remote && t.embedded {
            bail!("--embedded and --pgsql-* options name two targets: give one");
        }
        let pairs: [(&Option<String>, &mut Option<String>, &str, &str); 3] = [
            (&self.pgsql_host, &mut t.host, "--pgsql-host", "-h/--host"),
            (&self.pgsql_port, &mut t.port, "--pgsql-port", "-p/--port"),
            (
                &self.pgsql_user,
                &mut t.username,
                "--pgsql-user",
                "-U/--username",
            ),
        ];
        for (ours, theirs, name, flag) in pairs {
            if let Some(v) = ours {
                if theirs.is_some() {
                    bail!("{name} and {flag} give the same setting: give one");
                }
                *theirs = Some(v.clone());
            }
        }
        if let Some(db) = &self.pgsql_db {
            if t.dbname.is_some() || t.positional_dbname.is_some() {
                bail!("--pgsql-db and -d/--dbname give the same setting: give one");
            }
            t.dbname = Some(db.clone());
        }
        if self.pgsql_password.is_some() {
            t.password = self.pgsql_password.clone();
        }
        Ok(())
    }
}
