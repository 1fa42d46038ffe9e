//! The password file (`~/.pgpass`, `PGPASSFILE`, `passfile`; PostgreSQL docs "The Password
//! File"): host mapping for unix sockets, line and field parsing with `\:`/`\\` escapes and `*`
//! wildcards, and the file-permission check before a lookup.

use std::path::Path;

use super::{default_socket_dir, HostSpec};

/// The host name a password-file entry is matched against (libpq `passwordFromFile`): the host,
/// except that a unix-socket connection through the default socket directory (or no host at all)
/// matches `localhost`.
pub fn pgpass_host(host: &str) -> &str {
    if host.is_empty() || host == default_socket_dir() {
        "localhost"
    } else {
        host
    }
}

/// One field of a password-file line: its unescaped text and whether it was a bare `*`.
fn pgpass_fields(line: &str) -> Vec<(String, bool)> {
    let mut fields = Vec::with_capacity(5);
    let mut cur = String::new();
    let mut raw_star = true;
    let mut raw_len = 0;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if fields.len() < 4 && c == ':' {
            fields.push((std::mem::take(&mut cur), raw_star && raw_len == 1));
            raw_star = true;
            raw_len = 0;
            continue;
        }
        raw_len += 1;
        if c == '\\' {
            raw_star = false;
            if let Some(n) = chars.next() {
                cur.push(n);
            }
        } else {
            if c != '*' {
                raw_star = false;
            }
            cur.push(c);
        }
    }
    fields.push((cur, false));
    fields
}

/// Find the password for (host, port, dbname, user) in password-file text: lines
/// `hostname:port:database:username:password`, `*` matching anything in the first four fields,
/// `\:` and `\\` escaping, `#` comments, first match wins (PostgreSQL docs "The Password File").
/// `host` is matched as given; use [`pgpass_host`] to map unix sockets first.
pub fn pgpass_match(
    contents: &str,
    host: &str,
    port: u16,
    dbname: &str,
    user: &str,
) -> Option<String> {
    let port = port.to_string();
    for line in contents.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f = pgpass_fields(line);
        if f.len() < 5 {
            continue;
        }
        let want = [host, port.as_str(), dbname, user];
        if f[..4]
            .iter()
            .zip(want)
            .all(|((v, star), w)| *star || v == w)
        {
            let pw = f[4].0.clone();
            return if pw.is_empty() { None } else { Some(pw) };
        }
    }
    None
}

/// Look up a password in the password file `path` for `host`. Ignores the file (with libpq's
/// warning on stderr, naming the file, never its contents) when it is not a plain file or is
/// readable by group or others.
pub fn pgpass_lookup(path: &Path, host: &HostSpec, dbname: &str, user: &str) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        eprintln!(
            "WARNING: password file \"{}\" is not a plain file",
            path.display()
        );
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            eprintln!(
                "WARNING: password file \"{}\" has group or world access; permissions should be \
                 u=rw (0600) or less",
                path.display()
            );
            return None;
        }
    }
    let contents = std::fs::read_to_string(path).ok()?;
    pgpass_match(&contents, pgpass_host(&host.host), host.port, dbname, user)
}
