//! Pipelining ("Message Flow", "Pipelining"; extended and prepared modes): `queue` and
//! `queue_sync` append to the output buffer, `flush` sends it in one write, `read_result` and
//! `read_ready` match replies to the queued statements and Syncs, with pgbench's skipping of
//! the statements after an error up to the next Sync.

use postgres_protocol::message::frontend;

use super::decode::{pipeline_aborted, Event};
use super::{protocol, Pipe, Sent, Session, StmtId, StmtResult, Value};
use crate::error::DbError;
use crate::Error;

impl Session {
    /// Pipeline (extended and prepared modes only; a statement registered for simple mode is sent
    /// as in extended mode): append [Parse] Bind Execute for a statement to the output buffer
    /// without sending it. "Pipelining": the server runs queued statements as they arrive and
    /// skips to the next Sync after an error.
    pub fn queue(&mut self, stmt: StmtId, params: &[Value<'_>]) {
        self.cap.on = false;
        if let Err(e) = self.encode_extended(stmt, params) {
            self.deferred.get_or_insert(e);
        }
        self.pipe.push_back(Pipe::Stmt);
    }

    /// Pipeline: append a Sync.
    pub fn queue_sync(&mut self) {
        frontend::sync(&mut self.out);
        self.sent.push_back(Sent::Sync);
        self.pipe.push_back(Pipe::Sync);
    }

    /// Pipeline: send everything queued, in as few writes as possible (one).
    pub async fn flush(&mut self) -> Result<(), Error> {
        if let Some(e) = self.deferred.take() {
            // The queue no longer matches what would be sent: this session cannot continue.
            self.broken = true;
            self.out.clear();
            return Err(e);
        }
        if self.broken {
            return self.check_ready();
        }
        if self.out.is_empty() {
            return Ok(());
        }
        self.write_out().await
    }

    /// Consume through the ReadyForQuery that ends the current pipeline segment, dropping the
    /// segment's bookkeeping. Returns the first error not yet handed to the caller.
    async fn consume_segment(&mut self) -> Result<Option<DbError>, Error> {
        let mut first = None;
        loop {
            match self.next_event().await? {
                Event::Done(_) => {
                    if self.pipe.front() == Some(&Pipe::Stmt) {
                        self.pipe.pop_front();
                    }
                }
                Event::Error(e) => {
                    if self.pipe.front() == Some(&Pipe::Stmt) {
                        self.pipe.pop_front();
                    }
                    if self.broken {
                        return Err(Error::Db(Box::new(e)));
                    }
                    self.aborted = true;
                    first.get_or_insert(e);
                }
                Event::CopyIn => self.refuse_copy().await?,
                Event::Ready => {
                    while let Some(p) = self.pipe.pop_front() {
                        if p == Pipe::Sync {
                            break;
                        }
                    }
                    self.aborted = false;
                    self.trim_buffers();
                    return Ok(first);
                }
            }
        }
    }

    /// Pipeline: the result of the next queued statement. After an error, the statements up to the
    /// next Sync come back as `Err(Error::Db)` with SQLSTATE `"PIPAB"` (pipeline aborted, not a
    /// server code).
    pub async fn read_result(&mut self) -> Result<StmtResult, Error> {
        loop {
            match self.pipe.front() {
                None => return Err(Error::Config("read_result: no statement is queued".into())),
                // The caller skipped read_ready for the previous segment.
                Some(Pipe::Sync) => {
                    self.consume_segment().await?;
                }
                Some(Pipe::Stmt) => break,
            }
        }
        if self.aborted {
            self.pipe.pop_front();
            return Err(Error::Db(Box::new(pipeline_aborted())));
        }
        loop {
            match self.next_event().await? {
                Event::Done(r) => {
                    self.pipe.pop_front();
                    return Ok(r);
                }
                Event::Error(e) => {
                    self.pipe.pop_front();
                    self.aborted = true;
                    return Err(Error::Db(Box::new(e)));
                }
                Event::CopyIn => self.refuse_copy().await?,
                Event::Ready => {
                    self.broken = true;
                    return Err(protocol(
                        "ReadyForQuery before the result of a queued statement",
                    ));
                }
            }
        }
    }

    /// Pipeline: consume through the next ReadyForQuery. Returns `Err(Error::Db)` with the first
    /// error of the segment that `read_result` did not already return; the session stays usable.
    pub async fn read_ready(&mut self) -> Result<(), Error> {
        if !self.pipe.contains(&Pipe::Sync) {
            return Err(Error::Config(
                "read_ready: no Sync queued (call queue_sync)".into(),
            ));
        }
        match self.consume_segment().await? {
            Some(e) => Err(Error::Db(Box::new(e))),
            None => Ok(()),
        }
    }
}
