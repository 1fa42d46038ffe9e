//! Finding the server's binaries, and the server of a data directory stampede left running
//! (`stampede server status|stop --mysql`).

use super::*;

impl EmbeddedMariaDb {
    /// Find `mariadbd` and `mariadb-install-db` (or their MySQL names) in `explicit`, else in
    /// /usr/sbin, /usr/bin, then PATH; and run `mariadbd --version`.
    pub fn find_binaries(explicit: Option<&Path>) -> Result<Binaries, Error> {
        let (server, install_db, found_by) = match explicit {
            Some(dir) => {
                let server = first_in(&SERVER_NAMES, std::slice::from_ref(&dir.to_path_buf()));
                let install = first_in(&INSTALL_NAMES, std::slice::from_ref(&dir.to_path_buf()));
                match (server, install) {
                    (Some(s), Some(i)) => (s, i, "bindir".to_string()),
                    _ => {
                        return Err(embedded_err(format!(
                            "MariaDB bindir {}: no `mariadbd` (or `mysqld`) and \
                             `mariadb-install-db` (or `mysql_install_db`) there; {INSTALL_HINT}",
                            dir.display()
                        )))
                    }
                }
            }
            None => {
                let mut dirs = vec![PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")];
                if let Some(path) = std::env::var_os("PATH") {
                    dirs.extend(std::env::split_paths(&path));
                }
                let server = first_in(&SERVER_NAMES, &dirs);
                let install = first_in(&INSTALL_NAMES, &dirs);
                match (server, install) {
                    (Some(s), Some(i)) => {
                        let by = |p: &Path| match p.parent() {
                            Some(d)
                                if d == Path::new("/usr/sbin") || d == Path::new("/usr/bin") =>
                            {
                                d.display().to_string()
                            }
                            _ => "PATH".to_string(),
                        };
                        let (a, b) = (by(&s), by(&i));
                        let found_by = if a == b { a } else { format!("{a}, {b}") };
                        (s, i, found_by)
                    }
                    (s, i) => {
                        let missing: Vec<&str> = [
                            s.is_none().then_some("`mariadbd` (or `mysqld`)"),
                            i.is_none()
                                .then_some("`mariadb-install-db` (or `mysql_install_db`)"),
                        ]
                        .into_iter()
                        .flatten()
                        .collect();
                        return Err(embedded_err(format!(
                            "no MariaDB server found: {} not in /usr/sbin, /usr/bin or PATH; \
                             {INSTALL_HINT}",
                            missing.join(" and ")
                        )));
                    }
                }
            }
        };
        let out = Command::new(&server)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                embedded_err(format!(
                    "cannot run {} --version: {e}; {INSTALL_HINT}",
                    server.display()
                ))
            })?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = parse_version(&text)
            .filter(|_| out.status.success())
            .ok_or_else(|| {
                embedded_err(format!("{} --version printed {text:?}", server.display()))
            })?;
        Ok(Binaries {
            server,
            install_db,
            version,
            found_by,
        })
    }

    /// A server kept in `data_dir` (`stampede server start`): Some when its pid file names a
    /// live process. The handle is `keep` (dropping it leaves the server running); call
    /// [`EmbeddedMariaDb::stop`] to stop it. Port, socket and settings are read back from
    /// `stampede.cnf`.
    pub fn attach(
        data_dir: &Path,
        bindir: Option<&Path>,
    ) -> Result<Option<EmbeddedMariaDb>, Error> {
        let Some(pid) = read_pid_file(data_dir) else {
            return Ok(None);
        };
        if !pid_alive(pid) {
            return Ok(None);
        }
        let binaries = match Self::find_binaries(bindir) {
            Ok(b) => b,
            // Attaching needs no binaries; report what the data directory says.
            Err(_) => Binaries {
                server: PathBuf::new(),
                install_db: PathBuf::new(),
                version: fs::read_to_string(data_dir.join("mysql_upgrade_info"))
                    .unwrap_or_default()
                    .trim_matches(|c: char| c.is_whitespace() || c == '\0')
                    .to_string(),
                found_by: "mysql_upgrade_info".into(),
            },
        };
        let settings = read_record(&data_dir.join(RECORD_FILE));
        let port = find(&settings, "port").and_then(|p| p.parse().ok());
        // A record without `skip_networking` is TCP (an older stampede opened it always).
        let host = if is_on(find(&settings, "skip_networking")) {
            None
        } else {
            Some(client_host(find(&settings, "bind_address")))
        };
        let tcp_port = host.as_ref().map(|_| port.unwrap_or(3306));
        let socket = find(&settings, "socket")
            .map(PathBuf::from)
            .unwrap_or_else(|| data_dir.join(SOCKET_FILE));
        Ok(Some(EmbeddedMariaDb {
            binaries,
            data_dir: data_dir.to_path_buf(),
            socket,
            host,
            port: tcp_port,
            password: recorded_password(&data_dir.join(RECORD_FILE)).map(Password),
            settings,
            notes: Vec::new(),
            log_file: data_dir.join(LOG_FILE),
            server: Server::attached(pid, SHUTDOWN),
        }))
    }

    /// Stop the server kept in `data_dir` (`stampede server stop --data-dir`): true when one was
    /// running and has stopped, false when none was running. The directory is left.
    pub fn stop_data_dir(data_dir: &Path) -> Result<bool, Error> {
        match Self::attach(data_dir, None)? {
            Some(server) => server.stop().map(|()| true),
            None => Ok(false),
        }
    }
}
