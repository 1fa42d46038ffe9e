//! Unit tests of the session's pure parts: greetings (one captured from MariaDB 10.11, one
//! written from the MySQL 8 documentation, since no MySQL 8 server is available here) and the
//! scrambles computed from them, simple mode's literals, binary rows turned into text. Tests
//! against a live MariaDB are in `crates/mysql/tests/`.

use super::handshake::parse_greeting;
use super::reply::binary_row_as_text;
use super::stmt::put_literal;
use super::*;
use crate::auth;
use crate::wire::*;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|c| format!("{c:02x}")).collect()
}

#[test]
fn sessions_and_their_futures_are_send() {
    fn is_send<T: Send>(_: &T) {}
    fn check(ci: &crate::Conninfo, s: &mut Session) {
        is_send(&Session::connect(ci));
        is_send(&s.execute(StmtId(0), &[]));
        is_send(&s.simple_query(""));
        is_send(&s.prepare_all());
    }
    let _ = check;
}

/// The greeting of Debian's MariaDB 10.11.19 (`mariadbd --no-defaults`), as read from its unix
/// socket (header stripped), and the native scramble of "secret" over its nonce, computed with
/// openssl as in `auth`'s tests (scramble 714f...6a37).
#[test]
fn a_mariadb_greeting_and_its_native_scramble() {
    let p = unhex(
        "0a352e352e352d31302e31312e31392d4d6172696144422d302b646562313275310003000000714f7933\
         2f324b6400fef7080200ff81150000000000001d000000382a66446037302c2c366a37006d7973716c5f\
         6e61746976655f70617373776f726400",
    );
    let g = parse_greeting(&p).unwrap();
    assert_eq!(
        g.version, "10.11.19-MariaDB-0+deb12u1",
        "5.5.5- prefix dropped"
    );
    assert_eq!(g.connection_id, 3);
    assert_eq!(g.plugin, auth::NATIVE);
    assert_eq!(hex(&g.scramble), "714f79332f324b64382a66446037302c2c366a37");
    assert_eq!(g.status, SERVER_STATUS_AUTOCOMMIT);
    for cap in [
        CLIENT_PROTOCOL_41,
        CLIENT_SECURE_CONNECTION,
        CLIENT_PLUGIN_AUTH,
        CLIENT_DEPRECATE_EOF,
        CLIENT_MULTI_RESULTS,
    ] {
        assert_ne!(g.caps & cap, 0, "{cap:#x}");
    }
    assert_eq!(g.caps & CLIENT_SSL, 0, "started without a certificate");
    assert_eq!(
        hex(&auth::native(b"secret", &g.scramble)),
        "7fc354c574cb88500c221a7685cac0a3b9d2b4e3"
    );
}

/// A MySQL 8.0 greeting as "Protocol::HandshakeV10" describes it (caching_sha2_password by
/// default, 21 bytes of auth data), with the nonce "ABCDEFGHIJKLMNOPQRST", and the fast-path
/// scramble of "secret" computed with openssl:
/// `SHA256("secret") XOR SHA256(SHA256(SHA256("secret")) || nonce)`.
#[test]
fn a_mysql_8_greeting_and_its_caching_sha2_scramble() {
    let mut p = vec![10];
    p.extend_from_slice(b"8.0.36\0");
    p.extend_from_slice(&13u32.to_le_bytes());
    p.extend_from_slice(b"ABCDEFGH\0");
    p.extend_from_slice(&[0xff, 0xff, 0xff, 0x02, 0x00, 0xff, 0xdf, 21]);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(b"IJKLMNOPQRST\0caching_sha2_password\0");
    let g = parse_greeting(&p).unwrap();
    assert_eq!(g.version, "8.0.36");
    assert_eq!(g.plugin, auth::CACHING_SHA2);
    assert_eq!(g.scramble, b"ABCDEFGHIJKLMNOPQRST");
    assert_ne!(g.caps & CLIENT_SSL, 0);
    assert_eq!(
        hex(&auth::caching_sha2(b"secret", &g.scramble)),
        "d721e183c1f036a196c1389201b8d53f38064a16f1d0923683ab886763152d75"
    );
    // Not protocol 10: refused with the version said.
    p[0] = 9;
    let e = parse_greeting(&p).unwrap_err().to_string();
    assert!(e.contains("handshake protocol 9"), "{e}");
}

#[test]
fn simple_mode_literals_are_quoted_and_escaped() {
    let lit = |v: Value<'_>, escapes: bool| {
        let mut b = BytesMut::new();
        put_literal(&mut b, &v, escapes);
        String::from_utf8(b.to_vec()).unwrap()
    };
    assert_eq!(lit(Value::Int(-42), true), "-42");
    assert_eq!(lit(Value::Float(0.25), true), "0.25");
    assert_eq!(lit(Value::Bool(true), true), "TRUE");
    assert_eq!(lit(Value::Null, true), "NULL");
    assert_eq!(
        lit(Value::Text("it's a \\ test"), true),
        "'it''s a \\\\ test'"
    );
    // NO_BACKSLASH_ESCAPES: a backslash is an ordinary character.
    assert_eq!(lit(Value::Text("a\\'b"), false), "'a\\''b'");
}

/// The values of a text row (length-encoded strings, 0xFB for NULL).
fn text_values(row: &[u8]) -> Vec<Option<String>> {
    let mut b = row;
    let mut out = Vec::new();
    while !b.is_empty() {
        if b[0] == 0xfb {
            out.push(None);
            b = &b[1..];
        } else {
            let (v, n) = lenenc_str(b).unwrap();
            out.push(Some(String::from_utf8(v.to_vec()).unwrap()));
            b = &b[n..];
        }
    }
    out
}

#[test]
fn binary_rows_read_as_the_text_protocol_shows_them() {
    let col = |ty, unsigned, decimals| Column {
        ty,
        unsigned,
        decimals,
    };
    let columns = [
        col(TYPE_LONGLONG, false, 0),
        col(TYPE_VAR_STRING, false, 0), // NULL
        col(TYPE_VAR_STRING, false, 0),
        col(TYPE_DOUBLE, false, 31),
        col(TYPE_TINY, true, 0),
        col(TYPE_DATETIME, false, 6),
        col(TYPE_TIME, false, 0),
        col(TYPE_DATE, false, 0),
        col(TYPE_LONG, false, 0),
        col(TYPE_FLOAT, false, 31),
        col(TYPE_LONGLONG, true, 0),
        col(TYPE_DATETIME, false, 0),
    ];
    // Header, NULL bitmap (12 columns + 2 bits: 2 bytes; column 1 is bit 3), values.
    let mut p = vec![0x00, 0b0000_1000, 0];
    p.extend_from_slice(&42i64.to_le_bytes());
    p.extend_from_slice(&[2, b'a', b'b']);
    p.extend_from_slice(&1.5f64.to_le_bytes());
    p.push(200);
    p.extend_from_slice(&[11, 0xe8, 0x07, 2, 29, 13, 4, 5]);
    p.extend_from_slice(&123u32.to_le_bytes());
    p.extend_from_slice(&[8, 1, 1, 0, 0, 0, 2, 3, 4]);
    p.extend_from_slice(&[4, 0xe8, 0x07, 1, 2]);
    p.extend_from_slice(&(-7i32).to_le_bytes());
    p.extend_from_slice(&0.1f32.to_le_bytes());
    p.extend_from_slice(&u64::MAX.to_le_bytes());
    p.push(0); // all-zero DATETIME
    let mut out = Vec::new();
    binary_row_as_text(&p, &columns, &mut out).unwrap();
    let want: Vec<Option<&str>> = vec![
        Some("42"),
        None,
        Some("ab"),
        Some("1.5"),
        Some("200"),
        Some("2024-02-29 13:04:05.000123"),
        Some("-26:03:04"),
        Some("2024-01-02"),
        Some("-7"),
        Some("0.1"),
        Some("18446744073709551615"),
        Some("0000-00-00 00:00:00"),
    ];
    let got = text_values(&out);
    let got: Vec<Option<&str>> = got.iter().map(|v| v.as_deref()).collect();
    assert_eq!(got, want);
    // A truncated row is refused, not read past its end.
    assert!(binary_row_as_text(&p[..p.len() - 3], &columns, &mut Vec::new()).is_none());
}
