//! # route: `--read-from`, a workload's reads on readers and its writes on the writer
//!
//! With a read/write split each client holds two sessions on a PostgreSQL target of several
//! hosts:
//! - the **writer**, on a host that accepts writes: libpq's `target_session_attrs=read-write`
//!   over the host list. Every client starts its search at the host where a writer was last
//!   found (the primary, once one client found it), else at the first host: starting each one
//!   where `--spread` puts it would open and close a session on every standby on the way, and
//!   each of those costs the standby a start-up transaction (pg_stat_database counts it) that
//!   belongs to no client.
//! - the **reader**, placed by `--spread` over the hosts that qualify: for `standby` every host
//!   but the writer's (with `target_session_attrs=standby`, so a host that is no standby after
//!   all still passes the client on, libpq's way, to the next); for `any` every host. With
//!   `primary` there is no reader: every transaction runs on the writer, which is then simply
//!   a guarantee that the run is on the primary.
//!
//! Each transaction runs on the reader when the workload says its type only reads
//! ([`workload::Workload::read_only`]), else on the writer. The worker swaps the reader into
//! the client's one session slot for the transaction and back after it, so nothing else of the
//! transaction's path (retries, ROLLBACK, notices, commit counting) knows there are two.
//!
//! Both sessions are opened before the measured run, as the single session is, not at the
//! first read: connection time stays out of every latency, and io_uring can take both
//! sessions before the barrier. A reader is opened only when a read-only type can be chosen
//! (a weight above zero): `-b tpcb-like --read-from standby` opens none.
//!
//! Accounting: a transaction counts for the host whose session ran it ([`ClientStats`]'s
//! `reader_endpoint` / `reader_committed`); a session's wire commits count for its own host.
//!
//! Refused (before connecting, [`Route::new`]): a MySQL target (its nodes report no recovery
//! state to choose by; a Galera cluster takes writes on every node: use `--spread`), one
//! host, `-C` (a reader per transaction would double the connection storm). At connect time:
//! `standby` when no host other than the writer's is a standby ([`no_standby`]).
//!
//! [`ClientStats`]: crate::ClientStats

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use sut::conninfo::SessionAttrs;
use sut::{Error, Session, Target};
use workload::Workload;

use crate::connect::{open, Opened};
use crate::worker::ThreadCtx;
use crate::Spread;

/// stampede's `--read-from`: where read-only transactions run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadFrom {
    /// On hosts in hot standby (libpq's `target_session_attrs=standby`).
    Standby,
    /// On any host, primary included.
    Any,
    /// On the writer, with everything else.
    Primary,
}

impl ReadFrom {
    pub fn as_str(self) -> &'static str {
        match self {
            ReadFrom::Standby => "standby",
            ReadFrom::Any => "any",
            ReadFrom::Primary => "primary",
        }
    }
}

/// A run's routing, shared by every client.
#[derive(Clone, Debug)]
pub(crate) struct Route {
    read_from: ReadFrom,
    /// Per transaction type: runs on the reader.
    on_reader: Vec<bool>,
    /// Whether clients open a reader at all.
    pub needs_reader: bool,
    /// The host where a writer was last found (`usize::MAX`: none yet), shared by all threads.
    writer_hint: Arc<AtomicUsize>,
}

impl Route {
    /// The routing of a run, or why it cannot be done (a message naming the flag).
    pub fn new(
        read_from: Option<ReadFrom>,
        conn: &Target,
        read_only: impl Fn(usize) -> bool,
        weights: &[u32],
        connect_per_txn: bool,
    ) -> Result<Option<Route>, String> {
        let Some(read_from) = read_from else {
            return Ok(None);
        };
        let flag = format!("--read-from {}", read_from.as_str());
        if conn.pg().is_none() {
            return Err(format!(
                "{flag}: only PostgreSQL targets can be split into a writer and readers (a \
                 MySQL node reports no standby state; to spread clients over nodes use --spread)"
            ));
        }
        if conn.endpoints() < 2 {
            return Err(format!(
                "{flag} needs several hosts (-h primary,standby1,... or host=a,b port=1,2): \
                 with one host every transaction already runs on it"
            ));
        }
        if connect_per_txn {
            return Err(format!("{flag} cannot be used with -C/--connect"));
        }
        let on_reader: Vec<bool> = (0..weights.len())
            .map(|i| read_from != ReadFrom::Primary && read_only(i))
            .collect();
        let needs_reader = on_reader.iter().zip(weights).any(|(r, w)| *r && *w > 0);
        Ok(Some(Route {
            read_from,
            on_reader,
            needs_reader,
            writer_hint: Arc::new(AtomicUsize::new(usize::MAX)),
        }))
    }

    /// Whether transaction type `txn` runs on the reader.
    #[inline]
    pub fn on_reader(&self, txn: usize) -> bool {
        self.on_reader.get(txn).copied().unwrap_or(false)
    }

    /// The target a client's writer connects to (see the module header for where it starts).
    pub fn writer(&self, conn: &Target) -> Target {
        let hint = self.writer_hint.load(Ordering::Relaxed);
        let mut t = if hint == usize::MAX {
            conn.clone()
        } else {
            conn.starting_at(hint)
        };
        if let Some(c) = t.pg_mut() {
            c.target_session_attrs = SessionAttrs::ReadWrite;
        }
        t
    }

    /// Remember where a writer landed, for the clients that connect after it.
    pub fn found_writer(&self, endpoint: Option<usize>) {
        if let Some(e) = endpoint {
            self.writer_hint.store(e, Ordering::Relaxed);
        }
    }

    /// The target client `client`'s reader connects to: `--spread` over the hosts that
    /// qualify (all but the writer's host for `standby`, all for `any`).
    pub fn reader(
        &self,
        conn: &Target,
        client: u32,
        writer_at: Option<usize>,
        spread: Spread,
        seed: u64,
    ) -> Target {
        let hosts: Vec<usize> = (0..conn.endpoints())
            .filter(|&h| self.read_from != ReadFrom::Standby || Some(h) != writer_at)
            .collect();
        let first = match hosts.len() {
            0 => 0,
            n => hosts[spread.first_host(client, n, seed)],
        };
        let mut t = conn.starting_at(first);
        if let Some(c) = t.pg_mut() {
            c.target_session_attrs = match self.read_from {
                ReadFrom::Standby => SessionAttrs::Standby,
                ReadFrom::Any | ReadFrom::Primary => SessionAttrs::Any,
            };
        }
        t
    }

    /// The error of a reader that found no host to take it: for `standby`, which hosts were
    /// tried and what to do.
    pub fn reader_error(&self, conn: &Target, e: Error) -> Error {
        if self.read_from != ReadFrom::Standby || !matches!(e, Error::Connect { .. }) {
            return e;
        }
        no_standby(conn, &e)
    }
}

/// Open client `id`'s reader, once its writer is on host `writer_at`, and run the workload's
/// `on_connect` on it (the workload registers its statements on each session in the same order,
/// so the statement ids it keeps are valid on both). Returns the reader (none when the run
/// needs none) and whether the client aborted (the server refused the setup on the reader); an
/// error calls the run off, as a writer that cannot connect does.
pub(crate) async fn open_reader<W: Workload>(
    cx: &ThreadCtx<W>,
    id: u32,
    writer_at: Option<usize>,
    wl: &mut W::Client,
) -> Result<(Option<Session>, bool), Error> {
    let Some(route) = &cx.route else {
        return Ok((None, false));
    };
    route.found_writer(writer_at);
    if !route.needs_reader {
        return Ok((None, false));
    }
    let conn = route.reader(&cx.conn, id, writer_at, cx.spec.spread, cx.spec.seed);
    match open(cx, &conn, wl).await {
        Ok(Opened::Ready(s, setup)) => {
            // On the reader's host: the per-host commit check subtracts it there.
            cx.add_setup_commits(&s, setup);
            cx.totals.borrow_mut().connections += 1;
            Ok((Some(s), false))
        }
        Ok(Opened::Refused(s, e)) => {
            cx.totals.borrow_mut().connections += 1;
            cx.abort(id, &e, None);
            Ok((Some(s), true))
        }
        Err(e) => Err(route.reader_error(&cx.conn, e)),
    }
}

/// `--read-from standby` and no host is a standby: say which hosts were tried.
fn no_standby(conn: &Target, last: &Error) -> Error {
    let tried: Vec<String> = (0..conn.endpoints())
        .filter_map(|i| conn.endpoint_name(i))
        .map(|(h, p)| format!("{h}:{p}"))
        .collect();
    Error::Connect {
        target: tried.join(", "),
        cause: std::io::Error::other(format!(
            "--read-from standby: no host other than the writer's is a standby in hot standby \
             mode (last: {last}); list a standby in the hosts, or use --read-from any"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(conninfo: &str) -> Target {
        let flags = sut::ConnFlags {
            dbname: Some(conninfo.to_string()),
            ..Default::default()
        };
        Target::Pg(sut::ConnConfig::resolve(&flags, &|_| None).expect("conninfo"))
    }

    fn three_hosts() -> Target {
        pg("host=a,b,c port=1,2,3 dbname=x")
    }

    #[test]
    fn readers_avoid_the_writer_host_for_standby_and_spread_round_robin() {
        let conn = three_hosts();
        let r = Route::new(Some(ReadFrom::Standby), &conn, |i| i == 0, &[5, 1], false)
            .unwrap()
            .unwrap();
        assert!(r.needs_reader && r.on_reader(0) && !r.on_reader(1));
        let firsts: Vec<String> = (0..4)
            .map(|c| {
                let t = r.reader(&conn, c, Some(0), Spread::RoundRobin, 1);
                t.endpoint_name(0).unwrap().0
            })
            .collect();
        assert_eq!(firsts, ["b", "c", "b", "c"]);
        let t = r.reader(&conn, 0, Some(0), Spread::RoundRobin, 1);
        assert_eq!(t.pg().unwrap().target_session_attrs, SessionAttrs::Standby);
        let w = r.writer(&conn);
        assert_eq!(
            w.pg().unwrap().target_session_attrs,
            SessionAttrs::ReadWrite
        );
        r.found_writer(Some(2));
        assert_eq!(r.writer(&conn).endpoint_name(0).unwrap().0, "c");
    }

    #[test]
    fn any_spreads_readers_over_every_host_and_primary_opens_none() {
        let conn = three_hosts();
        let any = Route::new(Some(ReadFrom::Any), &conn, |_| true, &[1], false)
            .unwrap()
            .unwrap();
        let firsts: Vec<String> = (0..3)
            .map(|c| {
                any.reader(&conn, c, Some(0), Spread::RoundRobin, 1)
                    .endpoint_name(0)
                    .unwrap()
                    .0
            })
            .collect();
        assert_eq!(firsts, ["a", "b", "c"]);
        let primary = Route::new(Some(ReadFrom::Primary), &conn, |_| true, &[1], false)
            .unwrap()
            .unwrap();
        assert!(!primary.needs_reader && !primary.on_reader(0));
        // A read-only type that is never chosen needs no reader.
        let unused = Route::new(Some(ReadFrom::Standby), &conn, |i| i == 1, &[1, 0], false)
            .unwrap()
            .unwrap();
        assert!(!unused.needs_reader);
    }

    #[test]
    fn refusals_name_the_flag_and_what_to_do() {
        let one = pg("host=a port=1");
        let e = Route::new(Some(ReadFrom::Standby), &one, |_| true, &[1], false).unwrap_err();
        assert!(e.contains("--read-from standby needs several hosts"), "{e}");
        let e = Route::new(Some(ReadFrom::Any), &three_hosts(), |_| true, &[1], true).unwrap_err();
        assert!(e.contains("-C"), "{e}");
        assert!(Route::new(None, &one, |_| true, &[1], false)
            .unwrap()
            .is_none());
    }
}
