//! The packet layer ("MySQL Packets") over the session's `pg::Transport` (shared with the
//! PostgreSQL session): a 3-byte little-endian payload length, a sequence id, the payload.
//! Packets are framed in place in the input buffer; a payload of 2^24-1 bytes or more spans
//! several packets, joined in place (rare: a row or statement over 16 MiB) and split on the way
//! out.
//!
//! Sequence ids are checked as libmysqlclient checks them ("Got packets out of order"): each
//! command starts at 0 and every packet of the exchange, either way, takes the next id.

use std::io;

use bytes::Buf;

use super::{Session, IN_KEEP};
use crate::wire::MAX_PAYLOAD;
use pg::Error;

pub(super) fn protocol(msg: impl Into<String>) -> Error {
    Error::Protocol(msg.into())
}

impl Session {
    /// Read more bytes into the input buffer: one `read`, as large as the buffer allows.
    pub(super) async fn fill(&mut self) -> Result<(), Error> {
        match self
            .io
            .fill(&mut self.inb, &mut self.read_size, IN_KEEP)
            .await
        {
            Ok(0) => {
                self.broken = true;
                Err(Error::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "lost connection to the server ({}) during query (as MySQL client error \
                         2013): it closed the connection; it may have been killed, timed out \
                         (wait_timeout) or shut down",
                        self.target
                    ),
                )))
            }
            Ok(_) => Ok(()),
            Err(e) => {
                self.broken = true;
                Err(Error::Io(io::Error::new(
                    e.kind(),
                    format!(
                        "lost connection to the server ({}) during query (as MySQL client error \
                         2013): {e}",
                        self.target
                    ),
                )))
            }
        }
    }

    /// The payload length of the next packet if it is complete in the input buffer (payload at
    /// `inb[4..4 + len]`); otherwise room is made for it and `None` returned. Checks the
    /// sequence id. No await point: a reply that arrived whole is parsed in one pass.
    #[inline]
    pub(super) fn buffered_packet(&mut self) -> Result<Option<usize>, Error> {
        if self.joined > 0 {
            return Ok(Some(self.joined));
        }
        let b = &self.inb[..];
        if b.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_le_bytes([b[0], b[1], b[2], 0]) as usize;
        if b.len() < 4 + len {
            self.inb.reserve(4 + len - b.len());
            return Ok(None);
        }
        if b[3] != self.seq && !(b[3] == 0 && b.get(4) == Some(&0xff)) {
            // An ERR with sequence 0 out of turn is the server's goodbye (MySQL >= 8.0.24 sends
            // ER_CLIENT_INTERACTION_TIMEOUT before closing an idle connection; a shutdown may
            // send ER_SERVER_SHUTDOWN): taken as the reply, so the client sees why.
            self.broken = true;
            return Err(protocol(format!(
                "packets out of order: sequence id {} where {} was due",
                b[3], self.seq
            )));
        }
        if len == MAX_PAYLOAD {
            return self.join_packets();
        }
        self.seq = b[3].wrapping_add(1);
        Ok(Some(len))
    }

    /// A payload that spans several packets: once all are buffered, move their payloads
    /// together over the inner headers, so the payload lies whole at `inb[4..]`.
    #[cold]
    fn join_packets(&mut self) -> Result<Option<usize>, Error> {
        // First check that every piece is here.
        let mut pos = 0;
        let mut seq = self.seq;
        loop {
            let b = &self.inb[..];
            if b.len() < pos + 4 {
                self.inb.reserve(pos + 4 - b.len());
                return Ok(None);
            }
            let len = u32::from_le_bytes([b[pos], b[pos + 1], b[pos + 2], 0]) as usize;
            if b[pos + 3] != seq {
                self.broken = true;
                return Err(protocol(format!(
                    "packets out of order: sequence id {} where {seq} was due",
                    b[pos + 3]
                )));
            }
            if b.len() < pos + 4 + len {
                self.inb.reserve(pos + 4 + len - b.len());
                return Ok(None);
            }
            seq = seq.wrapping_add(1);
            pos += 4 + len;
            if len < MAX_PAYLOAD {
                break;
            }
        }
        self.seq = seq;
        // Then join: payloads after the first move down over their headers.
        let mut read = 4 + MAX_PAYLOAD;
        let mut write = read;
        while read < pos {
            let b = &self.inb[..];
            let len = u32::from_le_bytes([b[read], b[read + 1], b[read + 2], 0]) as usize;
            self.inb.copy_within(read + 4..read + 4 + len, write);
            write += len;
            read += 4 + len;
        }
        let end = self.inb.len();
        self.inb.copy_within(pos..end, write);
        self.inb.truncate(end - (pos - write));
        self.joined = write - 4;
        Ok(Some(self.joined))
    }

    /// Drop the packet just handled (header and `len` bytes of payload).
    #[inline]
    pub(super) fn consume(&mut self, len: usize) {
        self.joined = 0;
        self.inb.advance(4 + len);
    }

    /// The next packet's payload length, reading as needed (setup path).
    pub(super) async fn next_packet(&mut self) -> Result<usize, Error> {
        loop {
            if let Some(len) = self.buffered_packet()? {
                return Ok(len);
            }
            self.fill().await?;
        }
    }

    /// Start a command packet: sequence 0, then the command byte. The payload follows; close
    /// it with [`Session::end_command`].
    #[inline]
    pub(super) fn begin_command(&mut self, command: u8) {
        self.seq = 0;
        self.begin_packet();
        self.out.extend_from_slice(&[command]);
    }

    /// Start a packet (of the current exchange) at the end of the output buffer.
    #[inline]
    pub(super) fn begin_packet(&mut self) {
        self.packet_start = self.out.len();
        self.out.extend_from_slice(&[0, 0, 0, 0]);
    }

    /// Close the packet begun last: write its header, splitting a payload of 2^24-1 bytes or
    /// more into several packets.
    #[inline]
    pub(super) fn end_command(&mut self) {
        let base = self.packet_start;
        let len = self.out.len() - base - 4;
        if len >= MAX_PAYLOAD {
            self.split_packet(base);
            return;
        }
        self.out[base..base + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        self.out[base + 3] = self.seq;
        self.seq = self.seq.wrapping_add(1);
    }

    #[cold]
    fn split_packet(&mut self, base: usize) {
        let payload = self.out.split_off(base + 4);
        self.out.truncate(base);
        let mut rest = &payload[..];
        loop {
            let n = rest.len().min(MAX_PAYLOAD);
            self.out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
            self.out.extend_from_slice(&[self.seq]);
            self.out.extend_from_slice(&rest[..n]);
            self.seq = self.seq.wrapping_add(1);
            rest = &rest[n..];
            // A payload of exactly a multiple of 2^24-1 ends with an empty packet.
            if n < MAX_PAYLOAD {
                break;
            }
        }
    }

    /// One write of everything buffered.
    pub(super) async fn write_out(&mut self) -> Result<(), Error> {
        let r = self.io.write_all(&self.out).await;
        self.out.clear();
        r.map_err(|e| {
            self.broken = true;
            Error::Io(io::Error::new(
                e.kind(),
                format!(
                    "the server ({}) has gone away (as MySQL client error 2006): {e}",
                    self.target
                ),
            ))
        })
    }
}
