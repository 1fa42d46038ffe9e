use super::*;

/// The first piece of `secret` (3 characters or more) found in `out`.
fn leak(out: &str, secret: &str) -> Option<String> {
    let chars: Vec<char> = secret.chars().collect();
    (3..=chars.len())
        .flat_map(|len| (0..=chars.len() - len).map(move |s| (s, len)))
        .map(|(s, len)| chars[s..s + len].iter().collect::<String>())
        .find(|piece| out.contains(piece.as_str()))
}

/// Percent-encoding of everything but RFC 3986's unreserved characters.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|c| match c {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (c as char).to_string()
            }
            _ => format!("%{c:02X}"),
        })
        .collect()
}

// The passwords are made of letters that appear nowhere else in the texts (Z, q, W, k, 9), so
// a piece found in the output can only be the password's.

#[test]
fn no_piece_of_a_password_survives_any_spelling() {
    // (text, the password as it is, as it is spelled there, what must remain)
    let mut cases: Vec<(String, String, String, &str)> = Vec::new();
    for c in ":/?#[]@!$&'()*+,;=%\" ".chars() {
        let pw = format!("Zq{c}Wk{c}9");
        let enc = encode(&pw);
        for (url, keep) in [
            (
                format!("postgresql://bench:{enc}@db1:5432/bench?sslmode=disable"),
                "@db1:5432/bench?sslmode=disable",
            ),
            (
                format!("mysql://bench:{enc}@db1:3306/sbtest x"),
                "@db1:3306/sbtest x",
            ),
            (format!("error: postgres://bench:{enc}@db1"), "@db1"),
            (
                format!("postgresql://db1/bench?password={enc}&sslmode=disable"),
                "&sslmode=disable",
            ),
        ] {
            cases.push((url, pw.clone(), enc.clone(), keep));
        }
        // Raw: a URL cannot hold a blank unencoded outside one command-line argument.
        if c != ' ' {
            for (url, keep) in [
                (
                    format!("postgresql://bench:{pw}@db1:5432/bench?sslmode=disable"),
                    "@db1:5432/bench?sslmode=disable",
                ),
                (
                    format!("x mysql://bench:{pw}@db1,db2:3306/sbtest y"),
                    "@db1,db2:3306/sbtest y",
                ),
                (format!("-d postgres://bench:{pw}@db1"), "@db1"),
            ] {
                cases.push((url, pw.clone(), pw.clone(), keep));
            }
        }
    }
    let plain = |text: &str, pw: &str, keep: &'static str| {
        (text.to_string(), pw.to_string(), pw.to_string(), keep)
    };
    cases.extend([
        plain("host=db1 password=ZqWk9 user=u", "ZqWk9", "user=u"),
        plain("password=ZqWk9", "ZqWk9", "password=***"),
        plain("PGPASSWORD=ZqWk9 pgbench -h db1", "ZqWk9", "pgbench -h db1"),
        plain(
            "MYSQL_PWD=Zq#Wk9 stampede run x --db-driver=mysql",
            "Zq#Wk9",
            "stampede run",
        ),
        plain("sslpassword=ZqWk9 host=db1", "ZqWk9", "host=db1"),
        plain(
            "stampede run --mysql-password Zq?Wk9 --mysql-host db1",
            "Zq?Wk9",
            "--mysql-host db1",
        ),
        plain(
            "stampede run --mysql-password=Zq?Wk9 --mysql-host db1",
            "Zq?Wk9",
            "--mysql-host db1",
        ),
        plain(
            "stampede run --pgsql-password Zq?Wk9",
            "Zq?Wk9",
            "--pgsql-password",
        ),
        plain(
            "stampede run --pgsql-password=Zq'Wk9",
            "Zq'Wk9",
            "--pgsql-password=",
        ),
        plain(
            "mysql -uroot -pZq?Wk9 -e 'SHUTDOWN'",
            "Zq?Wk9",
            "-e 'SHUTDOWN'",
        ),
        plain(
            "/usr/bin/mariadb-admin -uroot -pZq?Wk9",
            "Zq?Wk9",
            "-uroot -p",
        ),
    ]);
    cases.push((
        "host=db1 password = 'Zq Wk\\'9' user=u".into(),
        "Zq Wk'9".into(),
        "'Zq Wk\\'9'".into(),
        "user=u",
    ));
    cases.push((
        "host=db1 password='Zq''Wk9' user=u".into(),
        "Zq'Wk9".into(),
        "Zq''Wk9".into(),
        "user=u",
    ));
    cases.push((
        "host=db1 password=Zq\\ Wk9 user=u".into(),
        "Zq Wk9".into(),
        "Zq\\ Wk9".into(),
        "user=u",
    ));
    let mut failures = Vec::new();
    for (text, pw, spelled, keep) in &cases {
        let out = redact(text);
        if let Some(piece) = leak(&out, pw).or_else(|| leak(&out, spelled)) {
            failures.push(format!("{text:?} -> {out:?}: {piece:?} survives"));
        } else if !out.contains(keep) || !out.contains("***") {
            failures.push(format!("{text:?} -> {out:?}: {keep:?} should remain"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_command_line_is_redacted_argument_by_argument() {
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for (given, want) in [
        (
            args(&["stampede", "run", "--pgsql-password", "Zq?Wk9", "-h", "db1"]),
            args(&["stampede", "run", "--pgsql-password", "***", "-h", "db1"]),
        ),
        (
            args(&["stampede", "run", "--mysql-password=Zq Wk9"]),
            args(&["stampede", "run", "--mysql-password=***"]),
        ),
        // A whole argument is one URL: a raw blank or quote in its password is still found.
        (
            args(&[
                "stampede",
                "run",
                "-d",
                "postgresql://bench:Zq Wk'9@db1/bench",
            ]),
            args(&["stampede", "run", "-d", "postgresql://bench:***@db1/bench"]),
        ),
        (
            args(&["mysql", "-uroot", "-pZq?Wk9"]),
            args(&["mysql", "-uroot", "-p***"]),
        ),
        // stampede's -p is the port.
        (
            args(&["stampede", "run", "-p5432", "-h", "db1"]),
            args(&["stampede", "run", "-p5432", "-h", "db1"]),
        ),
        (
            args(&[
                "stampede",
                "run",
                "--fault-cmd",
                "mysql -uroot -pZqWk9 -e 'SHUTDOWN'",
            ]),
            args(&[
                "stampede",
                "run",
                "--fault-cmd",
                "mysql -uroot -p*** -e 'SHUTDOWN'",
            ]),
        ),
        // The password option last, its value missing: nothing to hide.
        (
            args(&["stampede", "run", "--pgsql-password"]),
            args(&["stampede", "run", "--pgsql-password"]),
        ),
    ] {
        assert_eq!(redact_args(&given), want);
    }
}

#[test]
fn what_is_not_a_password_stays() {
    for text in [
        "password authentication failed for user \"u\"",
        "passfile=/x dbname=d",
        "postgresql://u@h/db",
        "postgres://[::1]:5433,h2:7/db?application_name=x",
        "psql -h db1 -p5432 -U u",
        "cannot connect to host=127.0.0.1 port=5432: timeout",
    ] {
        assert_eq!(redact(text), text);
    }
}

#[test]
fn the_user_info_ends_at_the_parsers_at() {
    for (rest, want) in [
        ("u:pw@h/db", Some(4)),
        ("u:p@w@h/db", Some(5)),
        ("u:p?w@h?x=1", Some(5)),
        ("u:p#w@h", Some(5)),
        ("u@h?application_name=a@b", Some(1)),
        ("h/db?application_name=a@b", None),
        ("u:p/w@h/db", None),
        ("h:5432/db", None),
    ] {
        assert_eq!(userinfo_end(rest), want, "{rest}");
    }
    assert!(may_spill_password("u:p/w@h/db"));
    assert!(!may_spill_password("u:pw@h/db"));
}
