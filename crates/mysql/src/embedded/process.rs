//! The server process: spawning `mariadbd` with its settings and init file, waiting until it
//! is ready (over the socket, then over TCP when open), and the record `stampede.cnf`
//! (stopping it is `pg::embedded::lifecycle`'s).

use super::*;

impl EmbeddedMariaDb {
    /// Write the record, spawn `mariadbd` (on `port`, or on no TCP port), wait until it is
    /// ready.
    pub(super) fn spawn_and_wait(
        &mut self,
        port: Option<u16>,
        run_as: Option<&RunAs>,
    ) -> Result<(), StartFailure> {
        let failed = StartFailure::Failed;
        self.port = port;
        // The private ones last: (bind_address,) port, socket.
        self.settings
            .retain(|(k, _)| !matches!(norm(k).as_str(), "port" | "socket"));
        if let Some(p) = port {
            self.settings.push(("port".into(), p.to_string()));
        }
        self.settings
            .push(("socket".into(), self.socket.display().to_string()));
        self.write_record(run_as).map_err(failed)?;
        let password = self.password.as_ref().map_or("", |p| p.0.as_str());
        let init_file = write_init_file(&self.data_dir, password, run_as).map_err(failed)?;

        // The log: appended to, so a kept server's history survives restarts; this start's
        // lines begin at `log_start`.
        let (log, log2) = open_log(&self.log_file, run_as).map_err(failed)?;
        let log_start = log.metadata().map(|m| m.len()).unwrap_or(0);

        let d = self.data_dir.display();
        let mut cmd = Command::new(&self.binaries.server);
        // --no-defaults must come first: /etc/mysql's configuration (another socket, another
        // datadir) is not this server's.
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={d}"))
            .arg(format!("--tmpdir={d}"))
            .arg(format!(
                "--pid-file={}",
                self.data_dir.join(PID_FILE).display()
            ))
            .arg(format!("--log-error={}", self.log_file.display()))
            // Not among the settings: printed, they would name a file that is gone.
            .arg(format!("--init-file={}", init_file.display()))
            .args(self.settings.iter().map(|(k, v)| option_arg(k, v)))
            .current_dir(&self.data_dir)
            .stdin(Stdio::null())
            // Errors before the error log is open (an unknown option) go to stderr.
            .stdout(log)
            .stderr(log2)
            .env_remove("MYSQL_UNIX_PORT")
            .env_remove("MYSQL_TCP_PORT")
            .env_remove("MYSQL_HOME")
            // Its own process group: a terminal Ctrl-C must not reach the server (module docs).
            .process_group(0);
        if let Some(u) = run_as {
            cmd.uid(u.uid).gid(u.gid);
        }
        let child = cmd.spawn().map_err(|e| {
            failed(embedded_err(format!(
                "cannot start {}: {e}",
                self.binaries.server.display()
            )))
        })?;
        self.server.spawned(child);

        let ready = self.wait_ready();
        // Read once, at start: the password need not lie on disk twice.
        let _ = fs::remove_file(&init_file);
        match ready {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = self.server.shutdown();
                let lines = log_since(&self.log_file, log_start);
                if lines.contains("Address already in use") {
                    return Err(StartFailure::PortTaken);
                }
                Err(failed(embedded_err(format!(
                    "{e}; last lines of {}:\n{}",
                    self.log_file.display(),
                    last_lines(&lines, 30)
                ))))
            }
        }
    }

    /// Connect over the socket until root logs in (or the server exits, or the deadline
    /// passes); create [`DATABASE`]; connect over TCP to it; read back what the server may
    /// have lowered. The sessions need a runtime: a current-thread one on a thread of its own,
    /// so that `start` works inside an async caller too (a runtime cannot block inside another).
    fn wait_ready(&mut self) -> Result<(), String> {
        let socket_ci = socket_conninfo(&self.socket, None);
        let tcp_ci = self.conninfo();
        let tcp = self.host.is_some();
        let asked = find(&self.settings, "max_connections").and_then(|v| v.parse::<u64>().ok());
        let Some(child) = self.server.child() else {
            return Err("the server is not running".into());
        };
        let result = std::thread::scope(|s| {
            s.spawn(|| -> Result<Vec<String>, String> {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("cannot make a runtime to reach the server: {e}"))?;
                let deadline = Instant::now() + START_TIMEOUT;
                let mut session = loop {
                    if let Ok(Some(status)) = child.try_wait() {
                        return Err(format!("the server exited during startup ({status})"));
                    }
                    match rt.block_on(Session::connect(&socket_ci)) {
                        Ok(s) => break s,
                        // Refused credentials will not change by waiting: a data directory
                        // whose root@localhost has a password now.
                        Err(e @ (Error::Auth { .. } | Error::Db(_))) => {
                            return Err(format!(
                                "the server is up but root cannot log in over {}: {e} (the \
                                 embedded server's root has an empty password; was the data \
                                 directory changed by hand?)",
                                socket_ci.describe()
                            ))
                        }
                        Err(e) if Instant::now() > deadline => {
                            return Err(format!(
                                "the server did not become ready within {} s ({e})",
                                START_TIMEOUT.as_secs()
                            ))
                        }
                        Err(_) => std::thread::sleep(POLL),
                    }
                };
                rt.block_on(async {
                    let mut notes = Vec::new();
                    session
                        .simple_query(&format!("CREATE DATABASE IF NOT EXISTS `{DATABASE}`"))
                        .await
                        .map_err(|e| format!("cannot create database {DATABASE}: {e}"))?;
                    let rows = session
                        .simple_query("SELECT @@max_connections, @@open_files_limit")
                        .await
                        .map_err(|e| format!("cannot read the server's limits: {e}"))?;
                    session.close().await;
                    let got = |i: usize| {
                        rows.first()
                            .and_then(|r| r.get(i).cloned().flatten())
                            .and_then(|v| v.parse::<u64>().ok())
                    };
                    if let (Some(asked), Some(max), Some(files)) = (asked, got(0), got(1)) {
                        if max < asked {
                            notes.push(format!(
                                "the server lowered max_connections from {asked} to {max}: its \
                                 open-files limit is {files} (it can raise its own only up to the \
                                 hard RLIMIT_NOFILE it inherits; raise `ulimit -Hn`)"
                            ));
                        }
                    }
                    if tcp {
                        Session::connect(&tcp_ci)
                            .await
                            .map_err(|e| format!("the server is up, but over TCP: {e}"))?
                            .close()
                            .await;
                    }
                    Ok(notes)
                })
            })
            .join()
            .unwrap_or_else(|_| Err("the readiness check panicked".into()))
        });
        self.notes = result?;
        Ok(())
    }

    /// Write `stampede.cnf` (see the module header).
    fn write_record(&self, run_as: Option<&RunAs>) -> Result<(), Error> {
        let mut text = String::from(
            "# Written by stampede on every start of the embedded MariaDB; the server does not \
             read it\n# (its options are on its command line). `mariadb --defaults-file=<this \
             file>` connects\n# as root over the private socket.\n[client]\n",
        );
        text.push_str(&format!("user = {USER}\n"));
        text.push_str(&format!(
            "socket = {}\n",
            cnf_value(&self.socket.display().to_string())
        ));
        text.push_str(&format!("\n[mariadb-client]\ndatabase = {DATABASE}\n"));
        if let Some(p) = &self.password {
            text.push_str(&format!(
                "\n# The TCP account (when TCP is open) and the data directory's password.\n\
                 [{PASSWORD_GROUP}]\nuser = {TCP_USER}\npassword = {}\n",
                p.0
            ));
        }
        text.push_str(&format!("\n[{RECORD_GROUP}]\n"));
        for (k, v) in &self.settings {
            if v.is_empty() {
                text.push_str(&format!("{k}\n"));
            } else {
                text.push_str(&format!("{k} = {}\n", cnf_value(v)));
            }
        }
        let path = self.data_dir.join(RECORD_FILE);
        write_private(&path, &text)?;
        if let Some(u) = run_as {
            chown(&path, u)?;
        }
        Ok(())
    }
}
