//! The MySQL client/server protocol's vocabulary, as pure functions over byte slices: packet
//! headers, length-encoded integers and strings, capability and status flags, column types, and
//! the generic response packets (OK, ERR, EOF).
//!
//! References are to the MySQL Source Code Documentation, "Client/Server Protocol"
//! (dev.mysql.com/doc/dev/mysql-server/latest/PAGE_PROTOCOL.html): "MySQL Packets", "Basic Data
//! Types" (Integer Types: length-encoded integers; String Types), "Capabilities Flags", "Generic
//! Response Packets" (OK_Packet, ERR_Packet, EOF_Packet), and to MariaDB's "Client/Server
//! Protocol" pages where MariaDB differs. Nothing here does I/O or allocates, except the error
//! message of an ERR packet.

/// "MySQL Packets": a payload of this many bytes is continued in the next packet.
pub(crate) const MAX_PAYLOAD: usize = 0xff_ffff;

// "Capabilities Flags" (include/mysql_com.h). Only those this client looks at or sets.
pub(crate) const CLIENT_LONG_PASSWORD: u32 = 1;
pub(crate) const CLIENT_FOUND_ROWS: u32 = 1 << 1;
pub(crate) const CLIENT_LONG_FLAG: u32 = 1 << 2;
pub(crate) const CLIENT_CONNECT_WITH_DB: u32 = 1 << 3;
pub(crate) const CLIENT_PROTOCOL_41: u32 = 1 << 9;
pub(crate) const CLIENT_SSL: u32 = 1 << 11;
pub(crate) const CLIENT_TRANSACTIONS: u32 = 1 << 13;
pub(crate) const CLIENT_SECURE_CONNECTION: u32 = 1 << 15;
pub(crate) const CLIENT_MULTI_STATEMENTS: u32 = 1 << 16;
pub(crate) const CLIENT_MULTI_RESULTS: u32 = 1 << 17;
pub(crate) const CLIENT_PS_MULTI_RESULTS: u32 = 1 << 18;
pub(crate) const CLIENT_PLUGIN_AUTH: u32 = 1 << 19;
pub(crate) const CLIENT_CONNECT_ATTRS: u32 = 1 << 20;
pub(crate) const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
pub(crate) const CLIENT_DEPRECATE_EOF: u32 = 1 << 24;

// "SERVER_STATUS_flags_enum" (include/mysql_com.h).
pub(crate) const SERVER_STATUS_IN_TRANS: u16 = 1;
pub(crate) const SERVER_STATUS_AUTOCOMMIT: u16 = 2;
pub(crate) const SERVER_MORE_RESULTS_EXISTS: u16 = 8;
pub(crate) const SERVER_STATUS_NO_BACKSLASH_ESCAPES: u16 = 512;

// Commands ("Text Protocol", "Prepared Statements", "Utility Commands").
pub(crate) const COM_QUIT: u8 = 0x01;
pub(crate) const COM_QUERY: u8 = 0x03;
pub(crate) const COM_STMT_PREPARE: u8 = 0x16;
pub(crate) const COM_STMT_EXECUTE: u8 = 0x17;
pub(crate) const COM_STMT_CLOSE: u8 = 0x19;

// Column and parameter types ("enum_field_types", include/field_types.h).
pub(crate) const TYPE_TINY: u8 = 1;
pub(crate) const TYPE_SHORT: u8 = 2;
pub(crate) const TYPE_LONG: u8 = 3;
pub(crate) const TYPE_FLOAT: u8 = 4;
pub(crate) const TYPE_DOUBLE: u8 = 5;
pub(crate) const TYPE_NULL: u8 = 6;
pub(crate) const TYPE_TIMESTAMP: u8 = 7;
pub(crate) const TYPE_LONGLONG: u8 = 8;
pub(crate) const TYPE_INT24: u8 = 9;
pub(crate) const TYPE_DATE: u8 = 10;
pub(crate) const TYPE_TIME: u8 = 11;
pub(crate) const TYPE_DATETIME: u8 = 12;
pub(crate) const TYPE_YEAR: u8 = 13;
pub(crate) const TYPE_NEWDATE: u8 = 14;
pub(crate) const TYPE_VAR_STRING: u8 = 253;
/// Column definition flag ("Column Definition Flags"): an unsigned integer column.
pub(crate) const UNSIGNED_FLAG: u16 = 32;

/// utf8mb4_general_ci: the character set asked for in the handshake (MySQL >= 5.5.3 and every
/// MariaDB know it; the server then sends text in UTF-8, as the PostgreSQL session asks for).
pub(crate) const UTF8MB4_GENERAL_CI: u8 = 45;

#[inline]
pub(crate) fn u16_le(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}

#[inline]
pub(crate) fn u32_le(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// "Protocol::LengthEncodedInteger": the value and the bytes it took, or `None` when `b` is too
/// short or starts with 0xFB (NULL in a text row) or 0xFF (an ERR packet's header).
#[inline]
pub(crate) fn lenenc_int(b: &[u8]) -> Option<(u64, usize)> {
    match *b.first()? {
        n @ 0..=0xfa => Some((n as u64, 1)),
        0xfc => Some((u16_le(b.get(1..3)?) as u64, 3)),
        0xfd => {
            let v = b.get(1..4)?;
            Some((u32::from_le_bytes([v[0], v[1], v[2], 0]) as u64, 4))
        }
        0xfe => {
            let v = b.get(1..9)?;
            Some((u64::from_le_bytes(v.try_into().ok()?), 9))
        }
        _ => None,
    }
}

/// "Protocol::LengthEncodedString" at the start of `b`: the string and the bytes it took.
#[inline]
pub(crate) fn lenenc_str(b: &[u8]) -> Option<(&[u8], usize)> {
    let (n, k) = lenenc_int(b)?;
    let end = k.checked_add(usize::try_from(n).ok()?)?;
    Some((b.get(k..end)?, end))
}

/// Append a length-encoded integer.
#[inline]
pub(crate) fn put_lenenc_int(out: &mut bytes::BytesMut, n: u64) {
    if n < 0xfb {
        out.extend_from_slice(&[n as u8]);
    } else if n <= 0xffff {
        out.extend_from_slice(&[0xfc, n as u8, (n >> 8) as u8]);
    } else if n <= 0xff_ffff {
        out.extend_from_slice(&[0xfd, n as u8, (n >> 8) as u8, (n >> 16) as u8]);
    } else {
        out.extend_from_slice(&[0xfe]);
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// Append a length-encoded string.
#[inline]
pub(crate) fn put_lenenc_str(out: &mut bytes::BytesMut, s: &[u8]) {
    put_lenenc_int(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// A NUL-terminated string at the start of `b` and the bytes it took (with the NUL); the whole
/// slice when there is no NUL (MariaDB ends some handshake strings with the packet instead).
pub(crate) fn nul_str(b: &[u8]) -> (&[u8], usize) {
    match b.iter().position(|&c| c == 0) {
        Some(p) => (&b[..p], p + 1),
        None => (b, b.len()),
    }
}

/// The fields of an OK packet this client uses ("OK_Packet"; also the 0xFE-headed OK that ends
/// a result set under CLIENT_DEPRECATE_EOF).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ok {
    pub affected: u64,
    pub last_insert_id: u64,
    pub status: u16,
    pub warnings: u16,
}

/// Parse an OK packet (header byte 0x00 or 0xFE included). `None` when malformed.
pub(crate) fn parse_ok(p: &[u8]) -> Option<Ok> {
    let mut i = 1;
    let (affected, k) = lenenc_int(p.get(i..)?)?;
    i += k;
    let (last_insert_id, k) = lenenc_int(p.get(i..)?)?;
    i += k;
    let status = u16_le(p.get(i..i + 2)?);
    let warnings = p.get(i + 2..i + 4).map_or(0, u16_le);
    Some(Ok {
        affected,
        last_insert_id,
        status,
        warnings,
    })
}

/// Parse an EOF packet ("EOF_Packet", header 0xFE, protocol 4.1): (warnings, status).
pub(crate) fn parse_eof(p: &[u8]) -> Option<(u16, u16)> {
    Some((u16_le(p.get(1..3)?), u16_le(p.get(3..5)?)))
}

/// An ERR packet ("ERR_Packet"): the error number, the SQLSTATE (`HY000` when the packet has no
/// `#` marker: errors sent before the capabilities are agreed, such as 1040 too many
/// connections) and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Err {
    pub number: u16,
    pub sqlstate: [u8; 5],
    pub message: String,
}

pub(crate) fn parse_err(p: &[u8]) -> Err {
    let number = p.get(1..3).map_or(0, u16_le);
    let rest = p.get(3..).unwrap_or_default();
    let (sqlstate, msg) = match rest {
        [b'#', s @ ..] if s.len() >= 5 => ([s[0], s[1], s[2], s[3], s[4]], &s[5..]),
        _ => (*b"HY000", rest),
    };
    Err {
        number,
        sqlstate,
        message: String::from_utf8_lossy(msg).into_owned(),
    }
}

/// The bytes a binary-row value of `ty` takes at the start of `b` ("Binary Protocol Value"), or
/// `None` when `b` is too short.
#[inline]
pub(crate) fn binary_value_len(ty: u8, b: &[u8]) -> Option<usize> {
    let n = match ty {
        TYPE_NULL => 0,
        TYPE_TINY => 1,
        TYPE_SHORT | TYPE_YEAR => 2,
        TYPE_LONG | TYPE_INT24 | TYPE_FLOAT => 4,
        TYPE_LONGLONG | TYPE_DOUBLE => 8,
        TYPE_DATE | TYPE_DATETIME | TYPE_TIMESTAMP | TYPE_TIME | TYPE_NEWDATE => {
            1 + *b.first()? as usize
        }
        // Everything else (DECIMAL, strings, blobs, JSON, BIT, ENUM, SET, GEOMETRY) is a
        // length-encoded string.
        _ => return lenenc_str(b).map(|(_, k)| k),
    };
    (b.len() >= n).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_encoded_integers_round_trip_at_each_width() {
        for n in [
            0u64,
            250,
            251,
            0xffff,
            0x1_0000,
            0xff_ffff,
            0x100_0000,
            u64::MAX,
        ] {
            let mut b = bytes::BytesMut::new();
            put_lenenc_int(&mut b, n);
            let want = match n {
                0..=250 => 1,
                251..=0xffff => 3,
                0x1_0000..=0xff_ffff => 4,
                _ => 9,
            };
            assert_eq!(lenenc_int(&b), Some((n, want)), "{n}");
        }
        // 0xFB is NULL in a text row, 0xFF an ERR header: neither is an integer.
        assert_eq!(lenenc_int(&[0xfb]), None);
        assert_eq!(lenenc_int(&[0xff]), None);
        assert_eq!(lenenc_int(&[0xfc, 1]), None);
        let mut b = bytes::BytesMut::new();
        put_lenenc_str(&mut b, b"abc");
        assert_eq!(lenenc_str(&b), Some((&b"abc"[..], 4)));
        assert_eq!(lenenc_str(&b[..3]), None);
    }

    #[test]
    fn ok_err_and_eof_packets() {
        // OK: affected 3, last insert id 0x0102 (lenenc 0xfc), status IN_TRANS|AUTOCOMMIT, 1 warning.
        let ok = [0x00, 3, 0xfc, 2, 1, 3, 0, 1, 0];
        assert_eq!(
            parse_ok(&ok),
            Some(Ok {
                affected: 3,
                last_insert_id: 0x0102,
                status: 3,
                warnings: 1
            })
        );
        assert_eq!(parse_ok(&ok[..4]), None);
        let mut err = vec![0xff, 0xbd, 0x04]; // 1213
        err.extend_from_slice(b"#40001Deadlock found");
        let e = parse_err(&err);
        assert_eq!(
            (e.number, &e.sqlstate, e.message.as_str()),
            (1213, b"40001", "Deadlock found")
        );
        // Before the capabilities are agreed there is no SQLSTATE marker.
        let mut err = vec![0xff, 0x10, 0x04]; // 1040
        err.extend_from_slice(b"Too many connections");
        let e = parse_err(&err);
        assert_eq!(
            (e.number, &e.sqlstate, e.message.as_str()),
            (1040, b"HY000", "Too many connections")
        );
        assert_eq!(parse_eof(&[0xfe, 0, 0, 2, 0]), Some((0, 2)));
    }

    #[test]
    fn binary_values_have_their_type_s_width() {
        assert_eq!(binary_value_len(TYPE_LONGLONG, &[0; 8]), Some(8));
        assert_eq!(binary_value_len(TYPE_LONGLONG, &[0; 7]), None);
        assert_eq!(
            binary_value_len(TYPE_DATETIME, &[7, 0, 0, 0, 0, 0, 0, 0]),
            Some(8)
        );
        assert_eq!(binary_value_len(TYPE_DATE, &[0]), Some(1));
        assert_eq!(binary_value_len(TYPE_VAR_STRING, &[2, b'a', b'b']), Some(3));
        assert_eq!(binary_value_len(0 /* DECIMAL */, &[1, b'5']), Some(2));
    }
}
