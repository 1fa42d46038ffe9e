//! Several hosts in one target, checked against libpq (psql) on the same servers: a primary and
//! two streaming standbys (testkit's `Cluster`). For every `target_session_attrs` value and
//! every order of the host list, stampede's session lands on the server psql lands on, or both
//! refuse; `load_balance_hosts=random` reaches every host; `starting_at` rotates the order.

use std::collections::HashSet;
use std::process::Command;

use pg::conninfo::{ConnFlags, HostSpec};
use pg::{ConnConfig, Session};
use testkit::{block_on, Cluster};

/// The server a session is on: its socket directory (all members listen on the same port).
fn where_is(s: &Session) -> String {
    s.host().host.clone()
}

fn conninfo(hosts: &[HostSpec], db: &str, extra: &str) -> String {
    let h: Vec<&str> = hosts.iter().map(|h| h.host.as_str()).collect();
    let p: Vec<String> = hosts.iter().map(|h| h.port.to_string()).collect();
    format!(
        "host={} port={} user=postgres dbname={db} {extra}",
        h.join(","),
        p.join(",")
    )
}

fn resolve(conn: &str) -> ConnConfig {
    ConnConfig::resolve(
        &ConnFlags {
            dbname: Some(conn.to_string()),
            ..Default::default()
        },
        &|_| None,
    )
    .unwrap()
}

/// psql's answer: the socket directory of the server it connected to, or None when it could not.
fn psql_lands_on(cluster: &Cluster, conn: &str) -> Option<String> {
    let out = Command::new(cluster.primary.bin("psql"))
        .args(["-X", "-A", "-t", "-c", "SHOW unix_socket_directories", conn])
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn target_session_attrs_match_libpq() {
    let cluster = Cluster::start(2, &[]);
    // A database whose sessions are read-only by default, on every member.
    cluster.primary.psql("CREATE DATABASE ro");
    cluster
        .primary
        .psql("ALTER DATABASE ro SET default_transaction_read_only = on");
    cluster.wait_replayed();
    let all = cluster.hosts();
    let (p, s1, s2) = (all[0].clone(), all[1].clone(), all[2].clone());
    let orders: Vec<(&str, Vec<HostSpec>)> = vec![
        ("primary first", vec![p.clone(), s1.clone(), s2.clone()]),
        ("standby first", vec![s1.clone(), p.clone(), s2.clone()]),
        ("standbys only", vec![s1.clone(), s2.clone()]),
        ("primary only", vec![p.clone()]),
    ];
    let mut cases = 0;
    for attrs in [
        "any",
        "read-write",
        "read-only",
        "primary",
        "standby",
        "prefer-standby",
    ] {
        for db in ["postgres", "ro"] {
            for (name, hosts) in &orders {
                let conn = conninfo(hosts, db, &format!("target_session_attrs={attrs}"));
                let libpq = psql_lands_on(&cluster, &conn);
                let ours = block_on(async {
                    match Session::connect(&resolve(&conn)).await {
                        Ok(s) => {
                            let w = where_is(&s);
                            s.close().await;
                            Ok(w)
                        }
                        Err(e) => Err(e.to_string()),
                    }
                });
                match (&libpq, &ours) {
                    (Some(a), Ok(b)) => assert_eq!(a, b, "{attrs} on {db}, {name}"),
                    (None, Err(e)) => {
                        // The refusal says why, in libpq's words.
                        assert!(
                            e.contains("read-only") || e.contains("hot standby mode"),
                            "{attrs} on {db}, {name}: {e}"
                        );
                    }
                    _ => panic!("{attrs} on {db}, {name}: psql {libpq:?}, stampede {ours:?}"),
                }
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 48);

    // load_balance_hosts=random: over 40 connections every host is chosen first at least once.
    let conn = conninfo(&all, "postgres", "load_balance_hosts=random");
    let cfg = resolve(&conn);
    let seen: HashSet<String> = (0..40)
        .map(|_| {
            block_on(async {
                let s = Session::connect(&cfg).await.unwrap();
                let w = where_is(&s);
                s.close().await;
                w
            })
        })
        .collect();
    assert_eq!(seen.len(), 3, "{seen:?}");

    // starting_at: client k starts at host k (mod 3); with read-write it still finds the
    // primary.
    let cfg = resolve(&conninfo(&all, "postgres", ""));
    for (k, host) in all.iter().enumerate() {
        let w = block_on(async {
            let s = Session::connect(&cfg.starting_at(k)).await.unwrap();
            let w = where_is(&s);
            s.close().await;
            w
        });
        assert_eq!(w, host.host);
    }
    let rw = resolve(&conninfo(
        &all,
        "postgres",
        "target_session_attrs=read-write",
    ));
    for k in 0..3 {
        let w = block_on(async {
            let s = Session::connect(&rw.starting_at(k)).await.unwrap();
            let w = where_is(&s);
            s.close().await;
            w
        });
        assert_eq!(w, p.host, "read-write from host {k}");
    }
}
