//! Parsing libpq connection strings into (keyword, value) pairs: `key=value` strings with
//! quoting and escapes (libpq `conninfo_parse`), `postgresql://` URLs with percent-decoding
//! (libpq `conninfo_uri_parse_options`), and comma-separated host and port lists.

use super::redact::userinfo_end;
use super::{default_socket_dir, redact, HostSpec, DEFAULT_PORT};
use crate::Error;

/// libpq's test for "this dbname is really a connection string": a URI prefix or an `=`.
pub(super) fn is_conn_string(s: &str) -> bool {
    s.starts_with("postgresql://") || s.starts_with("postgres://") || s.contains('=')
}

/// The URL part of a connection string (after `postgresql://`), if it is one.
pub(super) fn url_rest(s: &str) -> Option<&str> {
    s.strip_prefix("postgresql://")
        .or_else(|| s.strip_prefix("postgres://"))
}

/// What a URL whose password may have spilled into its other parts gets instead of an error
/// that quotes one of them ([`super::redact::may_spill_password`]).
pub(super) const SPILLED: &str = "cannot read the URL: it has an '@' after a '/', so where its \
    user name and password end is unclear (write a '/' in a password as %2F; any character may \
    be percent-encoded)";

/// Parse a `key=value ...` string or a URL into (keyword, value) pairs, in order.
pub fn parse_conn_string(s: &str) -> Result<Vec<(String, String)>, Error> {
    if let Some(rest) = url_rest(s) {
        parse_url(rest)
    } else {
        parse_kv(s)
    }
}

/// `key = value` pairs separated by whitespace; values may be single-quoted; a backslash escapes
/// the next character (libpq `conninfo_parse`).
fn parse_kv(s: &str) -> Result<Vec<(String, String)>, Error> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            return Ok(out);
        }
        let start = i;
        while i < b.len() && b[i] != b'=' && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        let key = &s[start..i];
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() || b[i] != b'=' {
            return Err(Error::Config(format!(
                "missing \"=\" after \"{key}\" in connection info string"
            )));
        }
        i += 1;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut val = Vec::new();
        if i < b.len() && b[i] == b'\'' {
            i += 1;
            loop {
                if i == b.len() {
                    return Err(Error::Config(
                        "unterminated quoted string in connection info string".into(),
                    ));
                }
                match b[i] {
                    b'\\' if i + 1 < b.len() => {
                        val.push(b[i + 1]);
                        i += 2;
                    }
                    b'\'' => {
                        i += 1;
                        break;
                    }
                    c => {
                        val.push(c);
                        i += 1;
                    }
                }
            }
        } else {
            while i < b.len() && !b[i].is_ascii_whitespace() {
                if b[i] == b'\\' && i + 1 < b.len() {
                    i += 1;
                }
                val.push(b[i]);
                i += 1;
            }
        }
        // Only ASCII backslashes were removed, so the bytes are still UTF-8.
        let val = String::from_utf8(val)
            .map_err(|_| Error::Config("connection info string is not valid UTF-8".into()))?;
        out.push((key.to_string(), val));
    }
}

/// Decode `%XX` escapes. `what` names the part for the error message; the value itself is never
/// echoed (it may be a password).
fn percent_decode(s: &str, what: &str) -> Result<String, Error> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            ) else {
                return Err(Error::Config(format!(
                    "invalid percent-encoded token in the URI's {what}"
                )));
            };
            let byte = (h * 16 + l) as u8;
            if byte == 0 {
                return Err(Error::Config(format!(
                    "forbidden value %00 in percent-encoded value (the URI's {what})"
                )));
            }
            out.push(byte);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| Error::Config(format!("the URI's {what} is not valid UTF-8 once decoded")))
}

/// `[user[:password]@][host[:port][,...]][/dbname][?param=value&...]` (libpq
/// `conninfo_uri_parse_options`), after the scheme. The user info ends where [`userinfo_end`]
/// says, so a password may hold a raw `@`, `?` or `#` as libpq allows (percent-encoded, any
/// character).
fn parse_url(rest: &str) -> Result<Vec<(String, String)>, Error> {
    let mut out = Vec::new();
    let after = match userinfo_end(rest) {
        Some(at) => {
            let userinfo = &rest[..at];
            let (user, pw) = match userinfo.find(':') {
                Some(c) => (&userinfo[..c], Some(&userinfo[c + 1..])),
                None => (userinfo, None),
            };
            out.push(("user".to_string(), percent_decode(user, "user name")?));
            if let Some(pw) = pw {
                out.push(("password".to_string(), percent_decode(pw, "password")?));
            }
            &rest[at + 1..]
        }
        None => rest,
    };
    let (main, query) = match after.find('?') {
        Some(q) => (&after[..q], Some(&after[q + 1..])),
        None => (after, None),
    };
    let path_at = main.find('/').unwrap_or(main.len());
    let (hostlist, path) = main.split_at(path_at);
    let mut hosts = Vec::new();
    let mut ports = Vec::new();
    if !hostlist.is_empty() {
        for entry in hostlist.split(',') {
            let (h, p) = if let Some(inner) = entry.strip_prefix('[') {
                let close = inner.find(']').ok_or_else(|| {
                    Error::Config(format!(
                        "end of string reached when looking for matching \"]\" in IPv6 host \
                         address in URI: \"{entry}\""
                    ))
                })?;
                let after = &inner[close + 1..];
                let port = match after.strip_prefix(':') {
                    Some(p) => p,
                    None if after.is_empty() => "",
                    None => {
                        return Err(Error::Config(format!(
                            "unexpected character \"{}\" after IPv6 host address in URI: \
                             \"{entry}\"",
                            &after[..1]
                        )))
                    }
                };
                if close == 0 {
                    return Err(Error::Config(format!(
                        "IPv6 host address may not be empty in URI: \"{entry}\""
                    )));
                }
                (&inner[..close], port)
            } else {
                match entry.find(':') {
                    Some(c) => (&entry[..c], &entry[c + 1..]),
                    None => (entry, ""),
                }
            };
            hosts.push(percent_decode(h, "host")?);
            ports.push(percent_decode(p, "port")?);
        }
    }
    if hosts.iter().any(|h| !h.is_empty()) {
        out.push(("host".to_string(), hosts.join(",")));
    }
    if ports.iter().any(|p| !p.is_empty()) {
        out.push(("port".to_string(), ports.join(",")));
    }
    if let Some(db) = path.strip_prefix('/') {
        if !db.is_empty() {
            out.push(("dbname".to_string(), percent_decode(db, "database name")?));
        }
    }
    if let Some(q) = query {
        for pair in q.split('&').filter(|p| !p.is_empty()) {
            let Some(eq) = pair.find('=') else {
                return Err(Error::Config(format!(
                    "missing key/value separator \"=\" in URI query parameter: \"{}\"",
                    redact(pair)
                )));
            };
            let k = percent_decode(&pair[..eq], "query parameter name")?;
            let v = percent_decode(&pair[eq + 1..], &format!("query parameter \"{k}\""))?;
            // libpq accepts the JDBC spelling `ssl=true` as sslmode=require.
            if k == "ssl" {
                if v == "true" {
                    out.push(("sslmode".to_string(), "require".to_string()));
                    continue;
                }
                return Err(Error::Config(format!(
                    "invalid ssl value \"{v}\" in URI (only ssl=true is accepted)"
                )));
            }
            out.push((k, v));
        }
    }
    Ok(out)
}

fn parse_port(p: &str) -> Result<u16, Error> {
    if p.is_empty() {
        return Ok(DEFAULT_PORT);
    }
    match p.trim().parse::<u16>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Error::Config(format!("invalid port number: \"{p}\""))),
    }
}

/// Split comma-separated host and port lists into host specs: one port for all hosts, or one per
/// host; an empty entry means the default (libpq).
pub(super) fn host_specs(host: &str, port: &str) -> Result<Vec<HostSpec>, Error> {
    let hosts: Vec<&str> = host.split(',').map(str::trim).collect();
    let ports: Vec<&str> = port.split(',').map(str::trim).collect();
    if ports.len() != 1 && ports.len() != hosts.len() {
        return Err(Error::Config(format!(
            "could not match {} port numbers to {} hosts",
            ports.len(),
            hosts.len()
        )));
    }
    hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let p = if ports.len() == 1 { ports[0] } else { ports[i] };
            Ok(HostSpec {
                host: if h.is_empty() {
                    default_socket_dir().to_string()
                } else {
                    h.to_string()
                },
                port: parse_port(p)?,
            })
        })
        .collect()
}
