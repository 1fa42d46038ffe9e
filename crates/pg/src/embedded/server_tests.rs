//! Tests against a real server (the binaries must be installed; as root the server runs as
//! `postgres`/`nobody`). Connections are checked with `psql` over the private socket.

use super::*;
use std::os::unix::fs::PermissionsExt;

fn psql(server: &EmbeddedServer, sql: &str) -> Result<String, String> {
    let psql = server.binaries().bindir.join("psql");
    let out = Command::new(psql)
        .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h"])
        .arg(server.socket_dir())
        .args([
            "-p",
            &server.port().to_string(),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-c",
            sql,
        ])
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).to_string())
    }
}

#[test]
fn start_connect_drop_removes_everything() {
    let server = EmbeddedServer::start(&EmbeddedOptions::default()).expect("start");
    assert_eq!(psql(&server, "SELECT 1").unwrap(), "1");
    // Settings took effect, and the server listens on no TCP address.
    assert_eq!(psql(&server, "SHOW max_connections").unwrap(), "1100");
    assert_eq!(psql(&server, "SHOW listen_addresses").unwrap(), "");
    assert_eq!(psql(&server, "SHOW fsync").unwrap(), "on");
    if server
        .settings()
        .iter()
        .any(|(k, _)| k == "shared_preload_libraries")
    {
        assert_eq!(
            psql(&server, "SHOW shared_preload_libraries").unwrap(),
            "pg_stat_statements"
        );
    }
    let cfg = server.conn_config();
    assert_eq!(cfg.hosts[0].host, server.socket_dir().display().to_string());
    assert_eq!(cfg.user, "postgres");
    assert_eq!(cfg.sslmode, SslMode::Disable);
    assert!(!server.binaries().version.is_empty());
    let pid = server.pid().unwrap();
    // Its own process group: a terminal's Ctrl-C (sent to our group) does not reach it.
    // SAFETY: getpgid/getpgrp have no preconditions.
    assert_eq!(unsafe { libc::getpgid(pid) }, pid);
    assert_ne!(unsafe { libc::getpgrp() }, pid);
    let root = server.data_dir().parent().unwrap().to_path_buf();
    assert!(root.exists());
    drop(server);
    assert!(!pid_alive(pid), "postmaster {pid} still running");
    assert!(!root.exists(), "{} not removed", root.display());
}

#[test]
fn user_settings_override_defaults_and_port_is_configurable() {
    let opts = EmbeddedOptions {
        settings: vec![
            ("max_connections".into(), "50".into()),
            ("port".into(), "6543".into()),
            ("work_mem".into(), "64MB".into()),
        ],
        ..Default::default()
    };
    let server = EmbeddedServer::start(&opts).expect("start");
    assert_eq!(server.port(), 6543);
    assert_eq!(psql(&server, "SHOW max_connections").unwrap(), "50");
    assert_eq!(psql(&server, "SHOW work_mem").unwrap(), "64MB");
    server.stop().unwrap();
}

#[test]
fn kept_server_survives_drop_then_attach_and_stop() {
    let parent = tempfile::Builder::new()
        .prefix("stampede-keep-")
        .tempdir()
        .unwrap();
    if let Some(u) = run_as_account().unwrap() {
        chown(parent.path(), &u).unwrap();
    }
    let data_dir = parent.path().join("pgdata");
    let opts = EmbeddedOptions {
        data_dir: Some(data_dir.clone()),
        keep: true,
        ..Default::default()
    };
    let server = EmbeddedServer::start(&opts).expect("start");
    let pid = server.pid().unwrap();
    drop(server);
    assert!(pid_alive(pid), "kept server stopped on drop");
    assert!(data_dir.join("PG_VERSION").exists());

    // A second start on the same directory refuses while it runs.
    let again = EmbeddedServer::start(&opts).unwrap_err().to_string();
    assert!(again.contains("already running"), "{again}");

    let attached = EmbeddedServer::attach(&data_dir, None)
        .unwrap()
        .expect("attach");
    assert_eq!(attached.pid(), Some(pid));
    assert_eq!(psql(&attached, "SELECT 40+2").unwrap(), "42");
    assert!(attached
        .settings()
        .iter()
        .any(|(k, v)| k == "max_connections" && v == "1100"));
    drop(attached); // attached handles are kept
    assert!(pid_alive(pid));
    let attached = EmbeddedServer::attach(&data_dir, None)
        .unwrap()
        .expect("attach");
    attached.stop().unwrap();
    assert!(!pid_alive(pid));
    assert!(
        data_dir.join("PG_VERSION").exists(),
        "a given data_dir is never removed"
    );
    assert!(EmbeddedServer::attach(&data_dir, None).unwrap().is_none());

    // Restart on the initialised directory (initdb skipped); data survives.
    let server = EmbeddedServer::start(&EmbeddedOptions {
        keep: false,
        ..opts
    })
    .expect("restart");
    psql(&server, "CREATE TABLE t(x int)").unwrap();
    let pid = server.pid().unwrap();
    drop(server);
    assert!(!pid_alive(pid));
    assert!(data_dir.join("PG_VERSION").exists());
}

#[test]
fn startup_failure_reports_the_log() {
    let opts = EmbeddedOptions {
        settings: vec![("shared_buffers".into(), "nonsense".into())],
        ..Default::default()
    };
    let e = EmbeddedServer::start(&opts).unwrap_err().to_string();
    assert!(e.contains("exited during startup"), "{e}");
    assert!(e.contains("shared_buffers"), "{e}");
}

/// As root the server runs as another account, which must be able to reach its data
/// directory: a directory above it that this account cannot enter is named, with its mode,
/// before initdb runs (`stampede server start` under /root failed with initdb's "Permission
/// denied" before).
#[test]
fn a_data_directory_the_server_account_cannot_reach_is_named_with_its_mode() {
    if !is_root() {
        // Not root: the server runs as ourselves, who created the directories.
        return;
    }
    let top = tempfile::tempdir().unwrap();
    let locked = top.path().join("locked");
    fs::create_dir(&locked).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o700)).unwrap();
    let data = locked.join("server");
    let opts = EmbeddedOptions {
        data_dir: Some(data.clone()),
        ..Default::default()
    };
    let e = match EmbeddedServer::start(&opts) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("started under a 0700 root directory"),
    };
    assert!(
        e.contains(&format!("cannot enter {} (mode 0700)", locked.display())),
        "{e}"
    );
    assert!(!data.exists(), "nothing was created below it");
}
