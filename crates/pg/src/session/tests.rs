//! Unit tests of the session's pure parts: simple-mode interpolation, command tags, server
//! versions, error fields and DataRows; and a compile-time check that sessions are `Send`.
//! Tests against a live server are in `crates/sut/tests/`.

use bytes::BytesMut;

use super::decode::{parse_error, row_columns, tag_count, version_num};
use super::encode::{put_interpolated_query, split_placeholders};
use super::*;
use crate::ConnConfig;

fn interpolate(sql: &str, params: &[Value<'_>]) -> Result<String, Error> {
    let mut buf = BytesMut::new();
    put_interpolated_query(&mut buf, sql, &split_placeholders(sql), params)?;
    assert_eq!(buf[0], b'Q');
    assert_eq!(be_i32(&buf[1..5]) as usize, buf.len() - 1);
    assert_eq!(*buf.last().unwrap(), 0);
    Ok(String::from_utf8(buf[5..buf.len() - 1].to_vec()).unwrap())
}

#[test]
fn simple_mode_interpolates_verbatim() {
    assert_eq!(
        interpolate(
            "UPDATE t SET a = a + $2 WHERE aid = $1",
            &[Value::Int(42), Value::Int(-5000)]
        )
        .unwrap(),
        "UPDATE t SET a = a + -5000 WHERE aid = 42"
    );
    assert_eq!(
        interpolate(
            "SELECT $1, $2, $3, $4, $1",
            &[
                Value::Null,
                Value::Float(0.25),
                Value::Bool(true),
                Value::Text("'x'")
            ]
        )
        .unwrap(),
        "SELECT NULL, 0.25, true, 'x', NULL"
    );
    assert_eq!(
        interpolate("SELECT $10", &[Value::Int(0); 10]).unwrap(),
        "SELECT 0"
    );
    assert_eq!(
        interpolate(
            "$1 $2 $3 $4",
            &[
                Value::Float(2.0),
                Value::Float(-0.1),
                Value::Float(1e20),
                Value::Float(f64::NAN)
            ]
        )
        .unwrap(),
        "2 -0.1 1e20 NaN"
    );
    // Quoted text and identifiers containing `$` are left alone.
    assert_eq!(
        interpolate("SELECT '$1', \"c$1\", a$1, $1", &[Value::Int(7)]).unwrap(),
        "SELECT '$1', \"c$1\", a$1, 7"
    );
    assert_eq!(interpolate("SELECT 1", &[]).unwrap(), "SELECT 1");
    assert_eq!(
        interpolate("$1", &[Value::Text("SELECT 2")]).unwrap(),
        "SELECT 2"
    );
    assert_eq!(
        interpolate("SELECT $1", &[Value::Float(f64::NEG_INFINITY)]).unwrap(),
        "SELECT -Infinity"
    );
    match interpolate("SELECT $2", &[Value::Int(1)]) {
        Err(Error::Config(m)) => assert!(m.contains("$2"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn sessions_and_their_futures_are_send() {
    fn is_send<T: Send>(_: &T) {}
    fn check(cfg: &ConnConfig, s: &mut Session) {
        is_send(&Session::connect(cfg));
        is_send(&s.execute(StmtId(0), &[]));
        is_send(&s.read_result());
        is_send(&s.simple_query(""));
    }
    let _ = check;
}

#[test]
fn command_tags_are_parsed_in_place() {
    assert_eq!(tag_count(b"INSERT 0 5"), 5);
    assert_eq!(tag_count(b"UPDATE 1"), 1);
    assert_eq!(tag_count(b"SELECT 100000"), 100000);
    assert_eq!(tag_count(b"COPY 7"), 7);
    assert_eq!(tag_count(b"BEGIN"), 0);
    assert_eq!(tag_count(b"CREATE TABLE"), 0);
    assert_eq!(tag_count(b""), 0);
}

#[test]
fn server_versions() {
    assert_eq!(version_num("15.18 (Debian 15.18-1.pgdg120+1)"), 150018);
    assert_eq!(version_num("9.6.24"), 90624);
    assert_eq!(version_num("17beta1"), 170000);
    assert_eq!(version_num("16.2"), 160002);
}

#[test]
fn error_fields_and_rows() {
    let body = b"SERROR\0VERROR\0C42P01\0Mrelation \"x\" does not exist\0Hcheck it\0\0";
    let e = parse_error(body);
    assert_eq!(e.severity, "ERROR");
    assert_eq!(e.code, "42P01");
    assert_eq!(e.message, "relation \"x\" does not exist");
    assert_eq!(e.hint.as_deref(), Some("check it"));
    assert_eq!(e.detail, None);
    let mut row = vec![0, 2];
    row.extend_from_slice(&2i32.to_be_bytes());
    row.extend_from_slice(b"ab");
    row.extend_from_slice(&(-1i32).to_be_bytes());
    assert_eq!(row_columns(&row).unwrap(), vec![Some(&b"ab"[..]), None]);
    assert!(row_columns(&row[..7]).is_none());
}
