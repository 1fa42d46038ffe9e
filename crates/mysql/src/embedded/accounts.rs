//! Who may log in (the module header's "Who can connect"): the data directory's password, the
//! SQL that sets the accounts at every start (`--init-file`), the settings that keep the server
//! closed, and the directory it may read and write files in.

use super::*;
use std::os::unix::fs::PermissionsExt;

/// The account TCP clients use, at `%`: root exists only at the loopback addresses, and
/// `bind_address` may let in clients from elsewhere.
pub(super) const TCP_USER: &str = "stampede";
/// The `stampede.cnf` group that holds the TCP account and its password (no MariaDB program
/// reads it).
pub(super) const PASSWORD_GROUP: &str = "stampede-tcp";
/// `secure_file_priv`: a directory in the data directory, which a dot keeps from ever naming a
/// database, hidden from `SHOW DATABASES` by `ignore_db_dirs`.
pub(super) const FILES_DIR: &str = ".files";
const INIT_FILE: &str = "stampede-init.sql";
const PASSWORD_LEN: usize = 24;

/// Settings that would open the server to other local users: refused whatever else is given.
pub(super) fn check_closed(settings: &[(String, String)], tcp: bool) -> Result<(), Error> {
    if is_on(find(settings, "skip_grant_tables")) {
        return Err(embedded_err(
            "the MariaDB setting `skip_grant_tables` turns every password check off, which would \
             open the embedded server to every local user; drop it",
        ));
    }
    if tcp && find(settings, "skip_name_resolve").is_some_and(|v| !is_on(Some(v))) {
        return Err(embedded_err(
            "skip_name_resolve=OFF with TCP open: a TCP connection from 127.0.0.1 would then \
             log in as root@localhost, which has no password (only the private socket may reach \
             it); keep skip_name_resolve ON",
        ));
    }
    Ok(())
}

/// Whether the settings ask for TCP: `port` or `bind_address` given, or `skip_networking`
/// given OFF (and not `skip_networking` ON, which wins).
pub(super) fn tcp_asked(settings: &[(String, String)]) -> bool {
    match find(settings, "skip_networking") {
        Some(v) => !is_on(Some(v)),
        None => find(settings, "port").is_some() || find(settings, "bind_address").is_some(),
    }
}

/// A new password: 24 random letters and digits (142 bits), safe unquoted in an SQL string, an
/// option file, a URL and a shell word.
pub(super) fn new_password() -> String {
    use rand_core::RngCore;
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::with_capacity(PASSWORD_LEN);
    let mut buf = [0u8; 64];
    while out.len() < PASSWORD_LEN {
        rand_core::OsRng.fill_bytes(&mut buf);
        // 248 = 4 x 62: bytes above it are dropped, so every character is equally likely.
        for b in buf.iter().filter(|&&b| b < 248) {
            if out.len() < PASSWORD_LEN {
                out.push(ALPHABET[usize::from(*b) % ALPHABET.len()] as char);
            }
        }
    }
    out
}

/// The password `stampede.cnf` records, if any (a data directory from before stampede made
/// one has none).
pub(super) fn recorded_password(record: &Path) -> Option<String> {
    read_group(record, PASSWORD_GROUP)
        .into_iter()
        .find(|(k, _)| k == "password")
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
}

/// The statements the server runs at start, after it has read its grant tables and before it
/// accepts a connection (a client connecting meanwhile waits: tested by hand on 10.11 with a
/// `DO SLEEP(3)` first). mariadb-install-db made root at localhost, 127.0.0.1, ::1 and the
/// host's name, all without a password.
pub(super) fn init_sql(password: &str, host_name: Option<&str>) -> String {
    let mut sql = String::new();
    for host in ["127.0.0.1", "::1"] {
        sql.push_str(&format!(
            "ALTER USER IF EXISTS 'root'@'{host}' IDENTIFIED BY '{password}';\n"
        ));
    }
    // Under skip_name_resolve it matches nobody; without, it would let in a client whose
    // address resolves to the host's name, with no password.
    if let Some(h) = host_name.filter(|h| !matches!(*h, "" | "localhost" | "127.0.0.1" | "::1")) {
        sql.push_str(&format!(
            "DROP USER IF EXISTS 'root'@'{}';\n",
            h.replace('\\', "\\\\").replace('\'', "''")
        ));
    }
    sql.push_str(&format!(
        "CREATE USER IF NOT EXISTS '{TCP_USER}'@'%' IDENTIFIED BY '{password}';\n\
         ALTER USER '{TCP_USER}'@'%' IDENTIFIED BY '{password}';\n\
         GRANT ALL PRIVILEGES ON *.* TO '{TCP_USER}'@'%' WITH GRANT OPTION;\n"
    ));
    sql
}

/// Write the init file into the data directory (0600, the server's account reads it); the
/// caller removes it once the server is ready.
pub(super) fn write_init_file(
    data_dir: &Path,
    password: &str,
    run_as: Option<&RunAs>,
) -> Result<PathBuf, Error> {
    let path = data_dir.join(INIT_FILE);
    write_private(&path, &init_sql(password, host_name().as_deref()))?;
    if let Some(u) = run_as {
        chown(&path, u)?;
    }
    Ok(path)
}

/// `<data_dir>/.files`, made when missing: mode 0700, the server's account.
pub(super) fn files_dir(data_dir: &Path, run_as: Option<&RunAs>) -> Result<PathBuf, Error> {
    let dir = data_dir.join(FILES_DIR);
    fs::create_dir_all(&dir)
        .and_then(|()| fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)))
        .map_err(|e| embedded_err(format!("cannot make {}: {e}", dir.display())))?;
    if let Some(u) = run_as {
        chown(&dir, u)?;
    }
    Ok(dir)
}

/// Write `text` to `path`, readable by its owner only (it may hold the password).
pub(super) fn write_private(path: &Path, text: &str) -> Result<(), Error> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let err = |e: std::io::Error| embedded_err(format!("cannot write {}: {e}", path.display()));
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(err)?;
    // `mode` applies to a new file only.
    f.set_permissions(fs::Permissions::from_mode(0o600))
        .map_err(err)?;
    f.write_all(text.as_bytes()).map_err(err)
}

/// The host's name, as mariadb-install-db read it (`hostname`).
fn host_name() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8(buf[..end].to_vec()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_long_random_and_plain() {
        let a = new_password();
        let b = new_password();
        assert_eq!(a.len(), PASSWORD_LEN);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric()), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn tcp_is_opened_only_when_asked_and_the_server_stays_closed() {
        let s = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(!tcp_asked(&default_settings()));
        assert!(tcp_asked(&s(&[("port", "3307")])));
        assert!(tcp_asked(&s(&[("bind-address", "0.0.0.0")])));
        assert!(tcp_asked(&s(&[("skip_networking", "OFF")])));
        assert!(!tcp_asked(&s(&[("port", "3307"), ("skip-networking", "")])));

        let e = check_closed(&s(&[("skip-grant-tables", "")]), false).unwrap_err();
        assert!(e.to_string().contains("skip_grant_tables"), "{e}");
        let resolve = s(&[("skip_name_resolve", "OFF")]);
        assert!(check_closed(&resolve, false).is_ok());
        let e = check_closed(&resolve, true).unwrap_err();
        assert!(e.to_string().contains("root@localhost"), "{e}");
    }

    #[test]
    fn the_init_sql_sets_every_tcp_account_and_drops_root_at_the_host_name() {
        let sql = init_sql("Pw1", Some("db'1"));
        for line in [
            "ALTER USER IF EXISTS 'root'@'127.0.0.1' IDENTIFIED BY 'Pw1';",
            "ALTER USER IF EXISTS 'root'@'::1' IDENTIFIED BY 'Pw1';",
            "DROP USER IF EXISTS 'root'@'db''1';",
            "CREATE USER IF NOT EXISTS 'stampede'@'%' IDENTIFIED BY 'Pw1';",
            "ALTER USER 'stampede'@'%' IDENTIFIED BY 'Pw1';",
            "GRANT ALL PRIVILEGES ON *.* TO 'stampede'@'%' WITH GRANT OPTION;",
        ] {
            assert!(sql.lines().any(|l| l == line), "{line} not in\n{sql}");
        }
        // root@localhost (the socket's) is never touched, nor dropped for a host named so.
        assert!(!sql.contains("'root'@'localhost'"));
        assert!(!init_sql("Pw1", Some("localhost")).contains("DROP"));
    }
}
