//! COPY FROM STDIN for loaders ("COPY Operations"): `copy_in`, buffered `copy_data`,
//! `copy_finish`, `copy_fail`, and the refusal of a COPY started any other way.

use bytes::BufMut;
use postgres_protocol::message::frontend;

use super::decode::Event;
use super::{protocol, Sent, Session, MAX_MESSAGE};
use crate::Error;

/// COPY data is written out once the output buffer passes this.
const COPY_FLUSH_AT: usize = 64 * 1024;

impl Session {
    pub(super) async fn refuse_copy(&mut self) -> Result<(), Error> {
        frontend::copy_fail(
            "COPY FROM STDIN is only supported through copy_in",
            &mut self.out,
        )
        .map_err(|e| protocol(e.to_string()))?;
        self.write_out().await
    }

    /// Start `COPY ... FROM STDIN`. Then `copy_data` any number of times and `copy_finish`.
    pub async fn copy_in(&mut self, sql: &str) -> Result<(), Error> {
        self.check_ready()?;
        frontend::query(sql, &mut self.out)
            .map_err(|_| Error::Config("SQL text may not contain a NUL byte".into()))?;
        self.sent.push_back(Sent::Sync);
        self.write_out().await?;
        let mut err = None;
        loop {
            match self.next_event().await? {
                // "COPY Operations": after CopyInResponse the server waits for CopyData.
                Event::CopyIn if err.is_none() => {
                    self.in_copy = true;
                    return Ok(());
                }
                Event::CopyIn => self.refuse_copy().await?,
                Event::Done(_) => {}
                Event::Error(e) => {
                    if self.broken {
                        return Err(Error::Db(Box::new(e)));
                    }
                    err.get_or_insert(e);
                }
                Event::Ready => {
                    return Err(match err {
                        Some(e) => Error::Db(Box::new(e)),
                        None => {
                            Error::Config("copy_in needs a COPY ... FROM STDIN statement".into())
                        }
                    })
                }
            }
        }
    }

    /// Send one chunk of COPY data (any size; rows may span chunks). Buffered: written out in
    /// chunks of at least 64 KiB.
    pub async fn copy_data(&mut self, data: &[u8]) -> Result<(), Error> {
        if !self.in_copy {
            return Err(Error::Config("copy_data without copy_in".into()));
        }
        if data.len() > MAX_MESSAGE {
            for chunk in data.chunks(MAX_MESSAGE / 2) {
                Box::pin(self.copy_data(chunk)).await?;
            }
            return Ok(());
        }
        self.out.reserve(5 + data.len());
        self.out.put_u8(b'd');
        self.out.put_i32(4 + data.len() as i32);
        self.out.extend_from_slice(data);
        if self.out.len() >= COPY_FLUSH_AT {
            self.write_out().await?;
        }
        Ok(())
    }

    /// End the COPY; returns the row count the server reports.
    pub async fn copy_finish(&mut self) -> Result<u64, Error> {
        if !self.in_copy {
            return Err(Error::Config("copy_finish without copy_in".into()));
        }
        self.in_copy = false;
        frontend::copy_done(&mut self.out);
        self.write_out().await?;
        self.run_to_ready().await.map(|r| r.affected)
    }

    /// Abort a COPY in progress (CopyFail) with a reason; the server rolls it back.
    pub async fn copy_fail(&mut self, reason: &str) -> Result<(), Error> {
        if !self.in_copy {
            return Err(Error::Config("copy_fail without copy_in".into()));
        }
        self.in_copy = false;
        let reason = reason.replace('\0', " ");
        frontend::copy_fail(&reason, &mut self.out).map_err(|e| protocol(e.to_string()))?;
        self.write_out().await?;
        match self.run_to_ready().await {
            // The server answers CopyFail with 57014 (query_canceled), as expected.
            Err(Error::Db(e)) if e.code == "57014" => Ok(()),
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
