//! The drop-ins' voices during a run: what pgbench and sysbench print around their progress
//! lines and summaries (`run::output` speaks in the plan's [`Frontend`]). Here, below `run`,
//! so that `run` never reaches up into `dropin`, which builds its plans and calls it.
//!
//! [`Frontend`]: crate::plan::Frontend

pub(crate) mod pgbench {
    use report::RunResult;

    /// The PostgreSQL release whose pgbench `stampede pgbench` follows (REL_18_STABLE).
    pub const PGBENCH_VERSION: &str = "18.3";

    /// pgbench's `printVersion` for a server of another version: `pgbench (18.3, server 15.18)`.
    pub fn version_line(server_version: &str) -> String {
        let server = server_version
            .split_whitespace()
            .next()
            .unwrap_or(server_version);
        format!("pgbench ({PGBENCH_VERSION}, server {server})")
    }

    /// pgbench's `printResults`, and nothing more. pgbench 18 counts only serialization and
    /// deadlock failures (`other_sql_failures` needs 19's `--continue-on-error`): the transaction
    /// an aborted client was running is not counted at all, where stampede counts it as failed
    /// ("other"). Its summary leaves them out, as pgbench's does.
    pub fn summary(r: &RunResult) -> String {
        let mut r = r.clone();
        for t in &mut r.total.txns {
            t.clear_failures_of(measure::FailureKind::Other);
        }
        report::render_pgbench_summary(&r)
    }

    /// A connection failure in libpq's words (`PQerrorMessage` of a failed `PQconnectdb`), which
    /// pgbench prints as they are.
    pub fn libpq_connect_error(e: &sut::Error, conn: &sut::Target) -> String {
        let Some(conn) = conn.pg() else {
            return e.to_string();
        };
        let field = |target: &str, key: &str| -> Option<String> {
            let start = target.find(&format!("{key}="))? + key.len() + 1;
            let rest = &target[start..];
            let end = rest.find(' ').unwrap_or(rest.len());
            Some(rest[..end].trim_matches('\'').to_string())
        };
        let server = |target: &str| -> String {
            let host = field(target, "host").unwrap_or_default();
            let port = field(target, "port").unwrap_or_else(|| "5432".into());
            if host.starts_with('/') {
                format!("on socket \"{host}/.s.PGSQL.{port}\"")
            } else {
                format!("at \"{host}\", port {port}")
            }
        };
        match e {
            sut::Error::Connect { target, cause } => {
                let why = cause.to_string();
                let why = why.split("; ").next().unwrap_or(&why);
                let why = why.split(" (os error").next().unwrap_or(why);
                // libpq's words for connect_timeout.
                let why = match cause.kind() {
                    std::io::ErrorKind::TimedOut => "timeout expired",
                    _ => why,
                };
                let hint = if field(target, "host").is_some_and(|h| h.starts_with('/')) {
                    "Is the server running locally and accepting connections on that socket?"
                } else {
                    "Is the server running on that host and accepting TCP/IP connections?"
                };
                format!(
                    "connection to server {} failed: {why}\n\t{hint}",
                    server(target)
                )
            }
            sut::Error::Auth { target, message } => {
                format!(
                    "connection to server {} failed: FATAL:  {message}",
                    server(target)
                )
            }
            // A server error during start-up (a database that does not exist): the host it came
            // from is the target's first.
            sut::Error::Db(db) => match conn.hosts.first() {
                Some(h) => format!(
                    "connection to server {} failed: {db}",
                    server(&h.describe())
                ),
                None => format!("connection to server failed: {db}"),
            },
            other => other.to_string(),
        }
    }
}

pub(crate) mod sysbench {
    use crate::plan::Outputs;

    /// What sysbench prints between its banner and the first report of a run.
    pub fn run_header(spec: &engine::RunSpec, out: &Outputs) -> String {
        let mut s = format!(
            "Running the test with following options:\nNumber of threads: {}\n",
            spec.clients
        );
        if let Some(r) = spec.rate_tps {
            s.push_str(&format!("Target transaction rate: {}/sec\n", r as u64));
        }
        if let Some(p) = out.progress_s {
            s.push_str(&format!(
                "Report intermediate results every {} second(s)\n",
                p as u64
            ));
        }
        s.push_str(
            "Initializing random number generator from current time\n\n\n\
             Initializing worker threads...\n\nThreads started!\n\n",
        );
        s
    }
}
