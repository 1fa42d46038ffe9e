//! The replay file: a capture parsed once (`stampede replay parse LOG -o FILE`) so that every
//! replay of it starts at once, and a fleet's process reads only its own sessions.
//!
//! Layout (version 1, all integers little-endian or LEB128 varints):
//! - 16 bytes of magic, `STAMPEDE-REPLAY` and a NUL, then the version as a u32;
//! - the index: a u32 length, then JSON (`Index`): the family, the parse statistics, the
//!   capture's wall-clock start, and per session its names, its statement count and where
//!   its block starts (a byte offset from the end of the index) — so a reader seeks to the
//!   sessions it wants;
//! - one block per session, its statements in order: the offset from the previous statement
//!   (varint µs), the duration + 1 (0: not logged), the protocol (a byte), the SQL (varint
//!   length, bytes), the parameters (a varint count, each a varint length + 1, 0 for NULL,
//!   then bytes), the recorded error (varint length + 1, 0 for none).
//!
//! Hand-written rather than bincode or similar: the format is tiny, its versioning is
//! explicit, and it needs no dependency; the JSON index keeps it inspectable (`head -c`).
//! Must not touch: a database, argv, the console.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};

use super::capture::{Capture, Family, Protocol, Session, Statement, Stats};

const MAGIC: &[u8; 16] = b"STAMPEDE-REPLAY\0";
pub const VERSION: u32 = 1;

/// Whether `head` (a file's first bytes) is a replay file.
pub fn is_replay_file(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Index {
    family: Family,
    stats: Stats,
    #[serde(default)]
    started_unix_us: i64,
    sessions: Vec<SessionEntry>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SessionEntry {
    id: String,
    user: String,
    database: String,
    application: String,
    statements: u64,
    /// Byte offset of the block, from the end of the index.
    at: u64,
    len: u64,
}

/// Write `c` as a replay file to `w` (`files::Output::write` makes it whole or nothing).
pub fn write_to(w: &mut dyn Write, c: &Capture) -> io::Result<()> {
    let mut blocks = Vec::new();
    let mut entries = Vec::with_capacity(c.sessions.len());
    for s in &c.sessions {
        let at = blocks.len() as u64;
        let mut prev = 0u64;
        for st in &s.statements {
            varint(&mut blocks, st.offset_us.saturating_sub(prev));
            prev = st.offset_us;
            varint(&mut blocks, st.duration_us.map_or(0, |d| d + 1));
            blocks.push(match st.protocol {
                Protocol::Simple => 0,
                Protocol::Extended => 1,
            });
            bytes(&mut blocks, st.sql.as_bytes());
            varint(&mut blocks, st.params.len() as u64);
            for p in &st.params {
                opt_bytes(&mut blocks, p.as_deref());
            }
            opt_bytes(&mut blocks, st.error.as_deref());
        }
        entries.push(SessionEntry {
            id: s.id.clone(),
            user: s.user.clone(),
            database: s.database.clone(),
            application: s.application.clone(),
            statements: s.statements.len() as u64,
            at,
            len: blocks.len() as u64 - at,
        });
    }
    let index = serde_json::to_vec(&Index {
        family: c.family,
        stats: c.stats.clone(),
        started_unix_us: c.started_unix_us,
        sessions: entries,
    })?;
    let len = u32::try_from(index.len())
        .map_err(|_| io::Error::other("the replay file's index is over 4 GiB"))?;
    w.write_all(MAGIC)?;
    w.write_all(&VERSION.to_le_bytes())?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&index)?;
    w.write_all(&blocks)
}

/// Read the sessions of `path` that `keep` accepts (by their index in the file), in the
/// file's order. The skipped sessions' blocks are not read.
pub fn read(path: &Path, mut keep: impl FnMut(usize) -> bool) -> Result<Capture> {
    let what = || format!("reading the replay file {}", path.display());
    let mut f = std::fs::File::open(path).with_context(what)?;
    let mut head = [0u8; 24];
    f.read_exact(&mut head)
        .with_context(|| format!("{}: too short for a replay file", path.display()))?;
    if !is_replay_file(&head) {
        bail!("{}: not a stampede replay file", path.display());
    }
    let version = u32::from_le_bytes([head[16], head[17], head[18], head[19]]);
    if version != VERSION {
        bail!(
            "{}: replay file version {version}; this stampede reads version {VERSION} \
             (parse the log again with `stampede replay parse`)",
            path.display()
        );
    }
    let len = u32::from_le_bytes([head[20], head[21], head[22], head[23]]) as usize;
    let mut index = vec![0u8; len];
    f.read_exact(&mut index).with_context(what)?;
    let index: Index = serde_json::from_slice(&index)
        .with_context(|| format!("{}: the replay file's index is damaged", path.display()))?;
    let base = 24 + len as u64;
    let mut sessions = Vec::new();
    for (k, e) in index.sessions.into_iter().enumerate() {
        if !keep(k) {
            continue;
        }
        f.seek(SeekFrom::Start(base + e.at)).with_context(what)?;
        let damaged = || {
            format!(
                "{}: session {} is damaged (parse the log again)",
                path.display(),
                e.id
            )
        };
        let mut block = vec![0u8; e.len as usize];
        f.read_exact(&mut block).with_context(damaged)?;
        let statements = decode_block(&block, e.statements).with_context(damaged)?;
        sessions.push(Session {
            id: e.id,
            user: e.user,
            database: e.database,
            application: e.application,
            statements,
        });
    }
    Ok(Capture {
        family: index.family,
        sessions,
        stats: index.stats,
        started_unix_us: index.started_unix_us,
    })
}

fn decode_block(mut b: &[u8], n: u64) -> Option<Vec<Statement>> {
    let mut out = Vec::with_capacity(n as usize);
    let mut at = 0u64;
    for _ in 0..n {
        at += read_varint(&mut b)?;
        let duration_us = read_varint(&mut b)?.checked_sub(1);
        let (&p, rest) = b.split_first()?;
        b = rest;
        let protocol = match p {
            0 => Protocol::Simple,
            1 => Protocol::Extended,
            _ => return None,
        };
        let sql = read_str(&mut b)?;
        let np = read_varint(&mut b)?;
        let mut params = Vec::with_capacity(np.min(65_536) as usize);
        for _ in 0..np {
            params.push(read_opt_str(&mut b)?);
        }
        let error = read_opt_str(&mut b)?;
        out.push(Statement {
            offset_us: at,
            duration_us,
            sql,
            protocol,
            params,
            error,
        });
    }
    b.is_empty().then_some(out)
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn opt_bytes(out: &mut Vec<u8>, b: Option<&str>) {
    match b {
        None => varint(out, 0),
        Some(s) => {
            varint(out, s.len() as u64 + 1);
            out.extend_from_slice(s.as_bytes());
        }
    }
}

fn read_varint(b: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&c, rest) = b.split_first()?;
        *b = rest;
        v |= u64::from(c & 0x7f) << shift;
        if c < 0x80 {
            return Some(v);
        }
    }
    None
}

fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if b.len() < n {
        return None;
    }
    let (h, t) = b.split_at(n);
    *b = t;
    Some(h)
}

fn read_str(b: &mut &[u8]) -> Option<String> {
    let n = read_varint(b)? as usize;
    String::from_utf8(take(b, n)?.to_vec()).ok()
}

fn read_opt_str(b: &mut &[u8]) -> Option<Option<String>> {
    match read_varint(b)? {
        0 => Some(None),
        n => String::from_utf8(take(b, n as usize - 1)?.to_vec())
            .ok()
            .map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Capture {
        let st =
            |at, sql: &str, protocol, params: Vec<Option<&str>>, error: Option<&str>| Statement {
                offset_us: at,
                duration_us: (at % 2 == 0).then_some(at / 10),
                sql: sql.into(),
                protocol,
                params: params.into_iter().map(|p| p.map(String::from)).collect(),
                error: error.map(String::from),
            };
        Capture {
            family: Family::Postgres,
            sessions: vec![
                Session {
                    id: "65a1.2f".into(),
                    user: "app".into(),
                    database: "shop".into(),
                    application: "pgbench".into(),
                    statements: vec![
                        st(0, "BEGIN;", Protocol::Simple, vec![], None),
                        st(
                            1_000_001,
                            "UPDATE t SET a = $1 WHERE b = $2",
                            Protocol::Extended,
                            vec![Some("-5"), None],
                            None,
                        ),
                        st(
                            1_000_002,
                            "SELECT 1/0",
                            Protocol::Simple,
                            vec![],
                            Some("22012"),
                        ),
                    ],
                },
                Session {
                    id: "65a1.30".into(),
                    statements: vec![st(7, "SELECT 'é'", Protocol::Simple, vec![], None)],
                    ..Default::default()
                },
            ],
            stats: Stats {
                lines: 9,
                sessions: 2,
                ..Default::default()
            },
            started_unix_us: 1_764_400_000_000_000,
        }
    }

    fn write(p: &Path, c: &Capture) {
        let mut f = std::fs::File::create(p).unwrap();
        write_to(&mut f, c).unwrap();
    }

    #[test]
    fn a_capture_reads_back_whole_and_by_session() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.replay");
        let c = sample();
        write(&p, &c);
        let back = read(&p, |_| true).unwrap();
        assert_eq!(back, c);
        let second = read(&p, |k| k == 1).unwrap();
        assert_eq!(second.sessions, vec![c.sessions[1].clone()]);
    }

    #[test]
    fn a_damaged_or_foreign_file_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.replay");
        write(&p, &sample());
        let mut b = std::fs::read(&p).unwrap();
        b.truncate(b.len() - 3);
        std::fs::write(&p, &b).unwrap();
        let e = format!("{:#}", read(&p, |_| true).unwrap_err());
        assert!(e.contains("is damaged"), "{e}");
        std::fs::write(&p, b"2026-11-29 09:00:00 UTC [1] LOG: hi").unwrap();
        let e = format!("{:#}", read(&p, |_| true).unwrap_err());
        assert!(e.contains("not a stampede replay file"), "{e}");
    }
}
