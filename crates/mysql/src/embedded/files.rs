//! The pieces around the server process: `mariadb-install-db`, the settings (defaults, the
//! user's, the record file `stampede.cnf`), ports, the pid file, versions and log tails.

use super::*;

/// `mariadb-install-db` into `data_dir`, as `run_as` when root.
pub(super) fn install_db(
    bin: &Binaries,
    data_dir: &Path,
    settings: &[(String, String)],
    run_as: Option<&RunAs>,
    guard: &Guard,
) -> Result<(), Error> {
    let d = data_dir.display();
    let mut cmd = Command::new(&bin.install_db);
    cmd.arg("--no-defaults")
        .arg("--auth-root-authentication-method=normal")
        .arg("--skip-test-db")
        .arg(format!("--datadir={d}"))
        // Relative to the working directory, the data directory: the script passes the options
        // it does not know on unquoted, so a path with a blank in it would be split.
        .arg("--tmpdir=.")
        // Options it does not know it passes to `mariadbd --bootstrap`: the InnoDB ones, some
        // of which (innodb_page_size, the redo log's size) are fixed when the files are made.
        .args(
            settings
                .iter()
                .filter(|(k, _)| {
                    norm(k).starts_with("innodb_") && norm(k) != "innodb_fast_shutdown"
                })
                .map(|(k, v)| option_arg(k, v)),
        )
        .current_dir(data_dir)
        .stdin(Stdio::null())
        .env_remove("MYSQL_HOME")
        .process_group(0);
    if let Some(u) = run_as {
        cmd.uid(u.uid).gid(u.gid);
    }
    let out = last_resort::output(&mut cmd, guard)
        .map_err(|e| embedded_err(format!("cannot run {}: {e}", bin.install_db.display())))?;
    if out.status.success() {
        return Ok(());
    }
    // The server's errors are on stderr; stdout has the script's general advice.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = if stderr.trim().is_empty() {
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        stderr.into_owned()
    };
    let mut msg = format!(
        "{} --datadir={d} failed ({}):\n{}",
        bin.install_db.display(),
        out.status,
        last_lines(&said, 30)
    );
    if let Some(u) = run_as {
        msg.push_str(&format!(
            "\n(stampede runs as root, so the server runs as `{}`; every parent directory of {d} \
             must be traversable by that account)",
            u.name
        ));
    }
    Err(embedded_err(msg))
}

/// stampede's default server settings for this machine (reasoned in the module header), before
/// the user's.
pub fn default_settings() -> Vec<(String, String)> {
    let pool = (total_ram() / 4).clamp(128 << 20, 4 << 30);
    [
        ("innodb_buffer_pool_size", format!("{}M", pool >> 20)),
        ("innodb_log_file_size", "1G".to_string()),
        ("innodb_flush_log_at_trx_commit", "1".into()),
        ("innodb_doublewrite", "ON".into()),
        ("max_connections", DEFAULT_MAX_CONNECTIONS.to_string()),
        ("skip_name_resolve", "ON".into()),
        ("performance_schema", "ON".into()),
        // What the observer reads (`observe::mysql_sampler::probe`): each session's current
        // wait, and statement events, without which MariaDB counts no prepared statement's
        // executions; every wait instrument, timed.
        (
            "performance_schema_consumer_events_waits_current",
            "ON".into(),
        ),
        (
            "performance_schema_consumer_events_statements_current",
            "ON".into(),
        ),
        ("performance_schema_instrument", "wait/%=ON".into()),
        ("character_set_server", "utf8mb4".into()),
        ("collation_server", "utf8mb4_general_ci".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The user's settings, trimmed, with stampede's own refused.
pub(super) fn check_settings(
    settings: &[(String, String)],
) -> Result<Vec<(String, String)>, Error> {
    let mut out = Vec::with_capacity(settings.len());
    for (k, v) in settings {
        let k = k.trim().trim_start_matches("--");
        if k.is_empty() {
            return Err(embedded_err(format!(
                "a MariaDB setting needs a name (given: `={v}`)"
            )));
        }
        if OWN_SETTINGS.contains(&norm(k).as_str()) {
            return Err(embedded_err(format!(
                "the MariaDB setting `{k}` is stampede's own: the embedded server keeps its data \
                 directory, socket, pid file, error log and the only directory it may read or \
                 write files in (secure_file_priv) in one private directory, and sets its \
                 accounts itself (give --data-dir to choose the directory)"
            )));
        }
        out.push((k.to_string(), v.trim().to_string()));
    }
    Ok(out)
}

/// A setting's name as MariaDB compares them: `-` and `_` alike, case-insensitive.
pub(super) fn norm(name: &str) -> String {
    name.trim().replace('-', "_").to_ascii_lowercase()
}

pub(super) fn find<'a>(settings: &'a [(String, String)], name: &str) -> Option<&'a str> {
    settings
        .iter()
        .rev()
        .find(|(k, _)| norm(k) == name)
        .map(|(_, v)| v.as_str())
}

/// Merge overrides into defaults: a name given again replaces the default in place; new names
/// are appended.
pub(super) fn merge_settings(
    defaults: Vec<(String, String)>,
    overrides: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out = defaults;
    for (k, v) in overrides {
        match out.iter_mut().find(|(n, _)| norm(n) == norm(k)) {
            Some(slot) => *slot = (k.clone(), v.clone()),
            None => out.push((k.clone(), v.clone())),
        }
    }
    out
}

/// `--name=value`, or `--name` for an empty value.
pub(super) fn option_arg(name: &str, value: &str) -> String {
    if value.is_empty() {
        format!("--{name}")
    } else {
        format!("--{name}={value}")
    }
}

/// Whether a boolean option given as `value` is on (a flag without a value is).
pub(super) fn is_on(value: Option<&str>) -> bool {
    match value {
        None => false,
        Some(v) => !matches!(v.to_ascii_lowercase().as_str(), "0" | "off" | "false"),
    }
}

/// The address a TCP client uses for `bind_address`: its first address, or 127.0.0.1 for
/// none or a wildcard.
pub(super) fn client_host(bind_address: Option<&str>) -> String {
    let first = bind_address
        .and_then(|b| b.split(',').next())
        .map(str::trim)
        .unwrap_or("");
    match first {
        "" | "*" | "0.0.0.0" | "::" => "127.0.0.1".into(),
        a => a.into(),
    }
}

pub(super) fn socket_conninfo(socket: &Path, database: Option<&str>) -> Conninfo {
    Conninfo {
        host: "localhost".into(),
        port: 3306,
        socket: Some(socket.to_path_buf()),
        user: USER.into(),
        password: None,
        database: database.map(str::to_string),
        ssl_mode: SslMode::Disabled,
        ssl_ca: None,
        ssl_cert: None,
        ssl_key: None,
        connect_timeout: Some(Duration::from_secs(10)),
    }
}

/// A free TCP port on 127.0.0.1, by binding port 0 (the kernel's pick) and letting it go.
pub(super) fn free_port() -> Result<u16, Error> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| embedded_err(format!("cannot find a free TCP port on 127.0.0.1: {e}")))?;
    let addr = l
        .local_addr()
        .map_err(|e| embedded_err(format!("cannot find a free TCP port on 127.0.0.1: {e}")))?;
    Ok(addr.port())
}

/// `<data_dir>/mariadbd.pid`'s pid; None when absent or unreadable.
pub fn read_pid_file(data_dir: &Path) -> Option<i32> {
    fs::read_to_string(data_dir.join(PID_FILE))
        .ok()?
        .trim()
        .parse::<i32>()
        .ok()
        .filter(|&p| p > 0)
}

/// "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian
/// 12)" -> "10.11.19-MariaDB"; "mysqld  Ver 8.0.36 for Linux on x86_64 (...)" -> "8.0.36".
pub(super) fn parse_version(out: &str) -> Option<String> {
    let mut words = out.split_whitespace();
    words.find(|w| *w == "Ver")?;
    let v = words.next()?;
    Some(match v.find("-MariaDB") {
        Some(i) => v[..i + "-MariaDB".len()].to_string(),
        None => v.to_string(),
    })
}

/// The first of `names` found in `dirs`, in the order of `names`, then of `dirs`.
pub(super) fn first_in(names: &[&str], dirs: &[PathBuf]) -> Option<PathBuf> {
    names
        .iter()
        .flat_map(|n| dirs.iter().map(move |d| d.join(n)))
        .find(|p| p.is_file())
}

/// An option file's value: as it is when plain, else double-quoted with `\` and `"` escaped
/// (`#` would start a comment, and leading or trailing blanks would be trimmed).
pub(super) fn cnf_value(v: &str) -> String {
    let plain = !v.is_empty()
        && !v.starts_with(char::is_whitespace)
        && !v.ends_with(char::is_whitespace)
        && !v.contains(['#', ';', '"', '\'', '\\', '\n']);
    if plain {
        v.to_string()
    } else {
        format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// The inverse of [`cnf_value`].
pub(super) fn cnf_unquote(v: &str) -> String {
    let v = v.trim();
    match v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(inner) => {
            let mut out = String::with_capacity(inner.len());
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                } else {
                    out.push(c);
                }
            }
            out
        }
        None => v.to_string(),
    }
}

/// The settings listed in `stampede.cnf`'s `[stampede-mariadbd]` group.
pub(super) fn read_record(path: &Path) -> Vec<(String, String)> {
    read_group(path, RECORD_GROUP)
}

/// The `name = value` lines of one group of an option file (a bare `name` has an empty value).
pub(super) fn read_group(path: &Path, group: &str) -> Vec<(String, String)> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let mut in_group = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(g) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_group = g == group;
            continue;
        }
        if in_group {
            match line.split_once('=') {
                Some((k, v)) => out.push((k.trim().to_string(), cnf_unquote(v))),
                None => out.push((line.to_string(), String::new())),
            }
        }
    }
    out
}

/// The log's text from byte `start` (this start's lines).
pub(super) fn log_since(path: &Path, start: u64) -> String {
    let mut text = String::new();
    if let Ok(mut f) = fs::File::open(path) {
        if f.seek(SeekFrom::Start(start)).is_ok() {
            let mut bytes = Vec::new();
            let _ = f.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
    }
    text
}

pub(super) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
