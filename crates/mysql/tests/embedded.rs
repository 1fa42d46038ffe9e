//! The embedded MariaDB against the machine's binaries (Debian's `mariadb-server`; as root the
//! server runs as `mysql`): a start that a `Session` reaches over the socket only, the default
//! database usable, the settings in force as the server reports them (SHOW GLOBAL VARIABLES), a
//! user's setting applied, `stop` and `Drop` removing the temporary directory, a kept server
//! left running and stopped later by its data directory, a failed start reporting the error
//! log, and the missing-binaries error naming the package. Closed to others (issue 30): another
//! local user reaches neither the socket nor a TCP port, `load_file` reads nothing outside the
//! server's own directory, and TCP, when asked for, lets in only the random password.
//!
//! Each test starts its own server (about half a second each: mariadb-install-db, then the
//! server); none is shared, since stopping and removing are what is tested.

use std::collections::HashMap;
use std::path::Path;

use mysql::embedded::{EmbeddedMariaDb, EmbeddedMariaDbOptions, DATABASE};
use mysql::{Conninfo, Session};
use pg::embedded::os::{chown, pid_alive, server_account};

/// Why a start with `opts` fails (it must).
fn refused(opts: EmbeddedMariaDbOptions) -> String {
    EmbeddedMariaDb::start(&opts).unwrap_err().to_string()
}

async fn connect(ci: &Conninfo) -> Session {
    Session::connect(ci)
        .await
        .unwrap_or_else(|e| panic!("connect {}: {e}", ci.redacted()))
}

async fn scalar(s: &mut Session, sql: &str) -> String {
    let rows = s
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows[0][0].clone().unwrap_or_default()
}

/// `SHOW GLOBAL VARIABLES` as a map.
async fn variables(s: &mut Session) -> HashMap<String, String> {
    s.simple_query("SHOW GLOBAL VARIABLES")
        .await
        .unwrap()
        .into_iter()
        .map(|r| {
            (
                r[0].clone().unwrap_or_default(),
                r[1].clone().unwrap_or_default(),
            )
        })
        .collect()
}

fn setting<'a>(server: &'a EmbeddedMariaDb, name: &str) -> &'a str {
    server
        .settings()
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no setting {name} in {:?}", server.settings()))
}

#[tokio::test]
async fn starts_on_its_socket_only_with_its_settings_and_drop_removes_everything() {
    let server = EmbeddedMariaDb::start(&EmbeddedMariaDbOptions::default()).expect("start");
    let b = server.binaries();
    assert!(b.version.contains("MariaDB"), "{b:?}");
    assert!(
        b.server.ends_with("mariadbd") || b.server.ends_with("mysqld"),
        "{b:?}"
    );
    assert!(!b.found_by.is_empty());

    // The socket, root, the default database: create a table, insert, select.
    let ci = server.conninfo();
    assert_eq!(ci, server.socket_conninfo());
    assert_eq!(ci.socket.as_deref(), Some(server.socket()));
    assert_eq!(server.port(), None);
    assert_eq!(
        (ci.user.as_str(), ci.database.as_deref()),
        ("root", Some(DATABASE))
    );
    let mut s = connect(&ci).await;
    assert!(s.is_mariadb());
    assert!(scalar(&mut s, "SELECT VERSION()")
        .await
        .starts_with(b.version.trim_end_matches("-MariaDB")));
    assert_eq!(scalar(&mut s, "SELECT DATABASE()").await, DATABASE);
    assert_eq!(
        scalar(&mut s, "SELECT CURRENT_USER()").await,
        "root@localhost"
    );
    s.simple_query("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB")
        .await
        .unwrap();
    s.simple_query("INSERT INTO t VALUES (1, 'één'), (2, 'two')")
        .await
        .unwrap();
    assert_eq!(scalar(&mut s, "SELECT v FROM t WHERE id = 1").await, "één");

    // The settings took effect, as the server reports them.
    let v = variables(&mut s).await;
    let pool_mb: u64 = setting(&server, "innodb_buffer_pool_size")
        .trim_end_matches('M')
        .parse()
        .unwrap();
    assert_eq!(v["innodb_buffer_pool_size"], (pool_mb << 20).to_string());
    assert_eq!(v["innodb_log_file_size"], (1u64 << 30).to_string());
    assert_eq!(v["innodb_flush_log_at_trx_commit"], "1");
    assert_eq!(v["innodb_doublewrite"], "ON");
    assert_eq!(v["max_connections"], "10000");
    assert_eq!(v["skip_name_resolve"], "ON");
    assert_eq!(v["performance_schema"], "ON");
    assert_eq!(v["character_set_server"], "utf8mb4");
    assert_eq!(v["innodb_fast_shutdown"], "2", "a temporary directory's");
    assert_eq!(v["skip_networking"], "ON");
    assert_eq!(Path::new(&v["socket"]), server.socket());
    assert_eq!(Path::new(&v["datadir"]), server.data_dir());
    assert!(
        server.notes().is_empty(),
        "the server lowered something: {:?}",
        server.notes()
    );
    // Its files directory is no database.
    let dbs = s.simple_query("SHOW DATABASES").await.unwrap();
    assert!(
        dbs.iter()
            .all(|r| !r[0].as_deref().unwrap_or("").contains("files")),
        "{dbs:?}"
    );
    s.close().await;

    // Its own process group: a terminal's Ctrl-C (sent to our group) does not reach it.
    let pid = server.pid().unwrap();
    // SAFETY: getpgid/getpgrp have no preconditions.
    assert_eq!(unsafe { libc::getpgid(pid) }, pid);
    assert_ne!(unsafe { libc::getpgrp() }, pid);
    assert_eq!(mysql::embedded::read_pid_file(server.data_dir()), Some(pid));

    let root = server.data_dir().parent().unwrap().to_path_buf();
    assert!(root.exists());
    drop(server);
    assert!(!pid_alive(pid), "mariadbd {pid} still running");
    assert!(!root.exists(), "{} not removed", root.display());
}

#[tokio::test]
async fn a_users_settings_apply_and_stop_removes_the_directory() {
    let opts = EmbeddedMariaDbOptions {
        settings: vec![
            ("innodb-io-capacity".into(), "1234".into()),
            ("max_connections".into(), "77".into()),
            ("skip-log-bin".into(), String::new()),
        ],
        ..Default::default()
    };
    let server = EmbeddedMariaDb::start(&opts).expect("start");
    let mut s = connect(&server.conninfo()).await;
    let v = variables(&mut s).await;
    assert_eq!(v["innodb_io_capacity"], "1234");
    assert_eq!(v["max_connections"], "77");
    assert_eq!(v["log_bin"], "OFF");
    s.close().await;
    // The user's value replaced the default in the printed list, once.
    assert_eq!(setting(&server, "max_connections"), "77");
    assert_eq!(
        server
            .settings()
            .iter()
            .filter(|(k, _)| k.replace('-', "_") == "max_connections")
            .count(),
        1
    );
    let pid = server.pid().unwrap();
    let root = server.data_dir().parent().unwrap().to_path_buf();
    server.stop().expect("stop");
    assert!(!pid_alive(pid));
    assert!(!root.exists(), "{} not removed", root.display());
}

#[tokio::test]
async fn a_kept_server_survives_drop_and_is_stopped_by_its_data_directory() {
    let parent = tempfile::Builder::new()
        .prefix("stampede-keep-")
        .tempdir()
        .unwrap();
    if let Some(u) = server_account("MariaDB", "mysql").unwrap() {
        chown(parent.path(), &u).unwrap();
    }
    // A blank in the path: mariadb-install-db passes some options on unquoted.
    let data_dir = parent.path().join("mariadb data");
    // Over TCP: the password must survive the handle (attach) and a restart.
    let opts = EmbeddedMariaDbOptions {
        data_dir: Some(data_dir.clone()),
        keep: true,
        settings: vec![("bind_address".into(), "127.0.0.1".into())],
        ..Default::default()
    };
    let server = EmbeddedMariaDb::start(&opts).expect("start");
    let pid = server.pid().unwrap();
    let port = server.port();
    assert!(port.is_some());
    let password = server.tcp_password().unwrap().to_string();
    assert_eq!(server.conninfo().user, "stampede");
    let mut s = connect(&server.conninfo()).await;
    s.simple_query("CREATE TABLE kept (x INT)").await.unwrap();
    s.simple_query("INSERT INTO kept VALUES (42)")
        .await
        .unwrap();
    s.close().await;
    drop(server);
    assert!(pid_alive(pid), "a kept server stopped on drop");

    // A second start on the same directory refuses while it runs.
    let again = EmbeddedMariaDb::start(&opts).unwrap_err().to_string();
    assert!(again.contains("already running"), "{again}");

    // Attached: the same server, reached by what stampede.cnf recorded.
    let attached = EmbeddedMariaDb::attach(&data_dir, None)
        .unwrap()
        .expect("attach");
    assert_eq!((attached.pid(), attached.port()), (Some(pid), port));
    assert!(attached
        .settings()
        .iter()
        .any(|(k, v)| k == "max_connections" && v == "10000"));
    let mut s = connect(&attached.conninfo()).await;
    assert_eq!(scalar(&mut s, "SELECT x FROM kept").await, "42");
    s.close().await;
    drop(attached); // an attached handle is kept
    assert!(pid_alive(pid));

    assert!(EmbeddedMariaDb::stop_data_dir(&data_dir).expect("stop"));
    assert!(!pid_alive(pid));
    assert!(
        data_dir.join("mysql").is_dir(),
        "a given data_dir is never removed"
    );
    assert!(!EmbeddedMariaDb::stop_data_dir(&data_dir).unwrap());
    assert!(EmbeddedMariaDb::attach(&data_dir, None).unwrap().is_none());

    // Started again on it (no mariadb-install-db): the data is there; dropped, it stops.
    let server = EmbeddedMariaDb::start(&EmbeddedMariaDbOptions {
        keep: false,
        ..opts
    })
    .expect("restart");
    assert_eq!(server.tcp_password(), Some(password.as_str()));
    let mut s = connect(&server.conninfo()).await;
    assert_eq!(scalar(&mut s, "SELECT x FROM kept").await, "42");
    assert_eq!(scalar(&mut s, "SELECT @@innodb_fast_shutdown").await, "1");
    s.close().await;
    let pid = server.pid().unwrap();
    drop(server);
    assert!(!pid_alive(pid));
    assert!(data_dir.join("mysql").is_dir());
}

#[test]
fn a_failed_start_reports_the_error_log_and_leaves_nothing() {
    let opts = EmbeddedMariaDbOptions {
        settings: vec![("no_such_setting".into(), "1".into())],
        ..Default::default()
    };
    let e = EmbeddedMariaDb::start(&opts).unwrap_err().to_string();
    assert!(e.contains("exited during startup"), "{e}");
    assert!(e.contains("no_such_setting"), "{e}");
    // The message names the log in the temporary directory, which is gone.
    let log = e
        .split_whitespace()
        .find(|w| w.ends_with("stampede-server.log:"))
        .unwrap_or_else(|| panic!("no log named in {e}"));
    let tmp = Path::new(log.trim_end_matches(':'))
        .ancestors()
        .nth(2)
        .unwrap();
    assert!(
        tmp.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("stampede-mariadb-"),
        "{e}"
    );
    assert!(!tmp.exists(), "{} left behind", tmp.display());

    let e = refused(EmbeddedMariaDbOptions {
        settings: vec![("socket".into(), "/tmp/elsewhere.sock".into())],
        ..Default::default()
    });
    assert!(e.contains("stampede's own"), "{e}");
}

#[test]
fn a_port_in_use_is_named() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let e = refused(EmbeddedMariaDbOptions {
        settings: vec![("port".into(), port.to_string())],
        ..Default::default()
    });
    assert!(
        e.contains(&format!("127.0.0.1:{port}: the port is in use")),
        "{e}"
    );
}

/// As root the server runs as `mysql`, which must reach its data directory: a directory above
/// it that this account cannot enter is named, with its mode, before anything is created.
#[test]
fn a_data_directory_the_server_account_cannot_reach_is_named_with_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    if server_account("MariaDB", "mysql").unwrap().is_none() {
        // Not root: the server runs as ourselves, who created the directories.
        return;
    }
    let top = tempfile::tempdir().unwrap();
    let locked = top.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    let data = locked.join("server");
    let e = refused(EmbeddedMariaDbOptions {
        data_dir: Some(data.clone()),
        ..Default::default()
    });
    assert!(
        e.contains(&format!("cannot enter {} (mode 0700)", locked.display())),
        "{e}"
    );
    assert!(!data.exists(), "nothing was created below it");
}

#[test]
fn a_data_directory_too_long_for_the_socket_is_refused() {
    let top = tempfile::tempdir().unwrap();
    let data = top.path().join("d".repeat(110));
    let e = refused(EmbeddedMariaDbOptions {
        data_dir: Some(data.clone()),
        ..Default::default()
    });
    assert!(
        e.contains("too long to hold the server's unix socket"),
        "{e}"
    );
    assert!(!data.exists());
}

#[test]
fn a_missing_binary_directory_names_the_package() {
    let missing = tempfile::tempdir().unwrap();
    let e = refused(EmbeddedMariaDbOptions {
        bindir: Some(missing.path().to_path_buf()),
        ..Default::default()
    });
    assert!(e.contains("apt-get install mariadb-server"), "{e}");
    assert!(e.contains(&missing.path().display().to_string()), "{e}");
    assert!(e.contains("mariadbd"), "{e}");
}

/// `runuser -u nobody -- PROGRAM ARGS`: the output of a program run as an unprivileged local
/// user; None when this process cannot switch users (not root: CI runs as root).
fn as_nobody(program: &str, args: &[String]) -> Option<std::process::Output> {
    // Root or not: `server_account` says whether the server runs as another account.
    server_account("MariaDB", "mysql").unwrap()?;
    let out = std::process::Command::new("runuser")
        .args(["-u", "nobody", "--", program])
        .args(args)
        .output()
        .expect("runuser runs");
    Some(out)
}

/// The TCP ports process `pid` listens on: its sockets (`/proc/PID/fd`) found in the kernel's
/// tables of listening sockets (`/proc/net/tcp` and `tcp6`, state 0A).
fn listening_ports(pid: i32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|l| {
            let l = l.to_string_lossy().into_owned();
            Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
        })
        .collect();
    let mut ports = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in std::fs::read_to_string(table)
            .unwrap_or_default()
            .lines()
            .skip(1)
        {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address (hex ip:port), state, ..., inode (the 10th field).
            if f.len() > 9 && f[3] == "0A" && inodes.iter().any(|i| i == f[9]) {
                let port = f[1].rsplit(':').next().unwrap();
                ports.push(u16::from_str_radix(port, 16).unwrap());
            }
        }
    }
    ports
}

/// Issue 30: an unprivileged account read /etc/passwd through load_file during a run. Now the
/// socket is in a 0700 directory of the server's account, no TCP port is open unless asked, and
/// load_file reads only the server's own files directory.
#[tokio::test]
async fn an_unprivileged_local_user_can_neither_connect_nor_read_files() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let server = EmbeddedMariaDb::start(&EmbeddedMariaDbOptions::default()).expect("start");
    let pid = server.pid().unwrap();
    assert_eq!(
        listening_ports(pid),
        Vec::<u16>::new(),
        "a TCP port is open"
    );
    let socket_dir = server.socket().parent().unwrap();
    let meta = std::fs::metadata(socket_dir).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    if let Some(u) = server_account("MariaDB", "mysql").unwrap() {
        assert_eq!(meta.uid(), u.uid);
        assert_ne!(
            u.name, "nobody",
            "the probe must not be the server's own account"
        );
    }

    // secure_file_priv: the server's own directory, inside its data directory; nothing else.
    let mut s = connect(&server.conninfo()).await;
    let files = scalar(&mut s, "SELECT @@secure_file_priv").await;
    assert_eq!(
        Path::new(&files),
        server.data_dir().join(".files"),
        "secure_file_priv"
    );
    let rows = s
        .simple_query("SELECT load_file('/etc/passwd')")
        .await
        .unwrap();
    assert_eq!(rows[0][0], None, "load_file read /etc/passwd");
    s.simple_query(&format!(
        "SELECT 'inside' INTO OUTFILE '{}/probe.txt'",
        files.trim_end_matches('/')
    ))
    .await
    .expect("the files directory is writable by the server");
    let e = s
        .simple_query("SELECT 'outside' INTO OUTFILE '/tmp/stampede-outside.txt'")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("secure-file-priv"), "{e}");
    s.close().await;

    // Another local user: the socket cannot be reached at all.
    let sock = format!("--socket={}", server.socket().display());
    let probe = [
        "--no-defaults".to_string(),
        sock,
        "-uroot".into(),
        "-e".into(),
        "SELECT load_file('/etc/passwd')".into(),
    ];
    if let Some(out) = as_nobody("mariadb", &probe) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "nobody connected: {stderr}");
        assert!(stderr.contains("ERROR 2002"), "{stderr}");
        assert!(
            stderr.contains("(13)"),
            "not refused for permission: {stderr}"
        );
        assert!(!String::from_utf8_lossy(&out.stdout).contains("root:"));
    }
    drop(server);

    // TCP asked for: the port is open, but only to the random password.
    let server = EmbeddedMariaDb::start(&EmbeddedMariaDbOptions {
        settings: vec![("skip_networking".into(), "OFF".into())],
        ..Default::default()
    })
    .expect("start with TCP");
    let port = server.port().expect("a TCP port");
    assert_eq!(listening_ports(server.pid().unwrap()), vec![port]);
    let ci = server.conninfo();
    assert_eq!(
        (ci.host.as_str(), ci.port, ci.user.as_str()),
        ("127.0.0.1", port, "stampede")
    );
    let mut s = connect(&ci).await;
    assert_eq!(scalar(&mut s, "SELECT CURRENT_USER()").await, "stampede@%");
    s.close().await;
    let password = server.tcp_password().unwrap().to_string();
    assert!(
        server
            .settings()
            .iter()
            .all(|(_, v)| !v.contains(&password)),
        "the password is among the printed settings"
    );
    let record = std::fs::metadata(server.record_file()).unwrap();
    assert_eq!(record.permissions().mode() & 0o777, 0o600);
    assert!(
        !server.data_dir().join("stampede-init.sql").exists(),
        "the init file (with the password) was left in the data directory"
    );
    for user in ["root", "stampede"] {
        // Without the password, and with a wrong one: refused.
        for pw in ["", "-pwrong"] {
            let mut args = vec![
                "--no-defaults".to_string(),
                "-h127.0.0.1".into(),
                format!("-P{port}"),
                format!("-u{user}"),
                "-e".into(),
                "SELECT load_file('/etc/passwd')".into(),
            ];
            if !pw.is_empty() {
                args.insert(4, pw.into());
            }
            let out = as_nobody("mariadb", &args).unwrap_or_else(|| {
                std::process::Command::new("mariadb")
                    .args(&args)
                    .output()
                    .unwrap()
            });
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{user} {pw:?} logged in over TCP");
            assert!(stderr.contains("ERROR 1045"), "{user} {pw:?}: {stderr}");
        }
    }
    // root over TCP with the password: let in (it is the same account's password).
    let root_tcp = Conninfo {
        user: "root".into(),
        ..ci.clone()
    };
    let mut s = connect(&root_tcp).await;
    assert_eq!(
        scalar(&mut s, "SELECT CURRENT_USER()").await,
        "root@127.0.0.1"
    );
    s.close().await;
    // Name resolution would let loopback TCP in as root@localhost (no password): refused.
    let e = refused(EmbeddedMariaDbOptions {
        settings: vec![
            ("port".into(), port.to_string()),
            ("skip_name_resolve".into(), "OFF".into()),
        ],
        ..Default::default()
    });
    assert!(e.contains("root@localhost"), "{e}");
}
