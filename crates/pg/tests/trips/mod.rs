//! Round trips that both I/O paths of a session must get right, shared by queries.rs (the
//! runtime's epoll) and ring.rs (an io_uring ring): statements and replies larger than every
//! buffer on the way, and a COPY of many small writes.

use pg::Session;

/// Statements of 300 kB and 8 MiB whose text the server rebuilds and compares, each with a reply
/// of the same size: a wrong partial send garbles the statement, a lost read or wake-up leaves a
/// reply short (or hangs: callers bound the time).
pub async fn large_statements_and_replies(s: &mut Session) {
    for size in [300_000usize, 8 << 20] {
        let lit: String = (0..size).map(|i| (b'a' + (i % 26) as u8) as char).collect();
        // The server rebuilds the same text itself and compares.
        let sql = format!(
            "SELECT length('{lit}'), \
             '{lit}' = substr(repeat('abcdefghijklmnopqrstuvwxyz', {}), 1, {size}), \
             repeat('z', {size})",
            size / 26 + 1
        );
        let rows = s.simple_query(&sql).await.unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0][0].as_deref(), Some(size.to_string().as_str()));
        assert_eq!(
            rows[0][1].as_deref(),
            Some("t"),
            "the statement arrived intact"
        );
        let z = rows[0][2].as_deref().unwrap();
        assert_eq!(z.len(), size, "a reply of {size} bytes arrives whole");
        assert!(z.bytes().all(|b| b == b'z'));
    }
}

/// COPY `rows` rows `(i, 'filler i')` into `table (a int, b text)` in ~7 kB writes split
/// mid-row (rows may span writes), then check count, sum and distinct values server-side.
pub async fn copy_rows(s: &mut Session, table: &str, rows: u32) {
    s.copy_in(&format!("COPY {table} FROM STDIN"))
        .await
        .unwrap();
    let mut chunk = Vec::new();
    for i in 0..rows {
        chunk.extend_from_slice(format!("{i}\tfiller {i}\n").as_bytes());
        if chunk.len() > 7000 {
            let cut = chunk.len() - 3;
            s.copy_data(&chunk[..cut]).await.unwrap();
            chunk.drain(..cut);
        }
    }
    s.copy_data(&chunk).await.unwrap();
    assert_eq!(s.copy_finish().await.unwrap(), rows as u64);
    let got = s
        .simple_query(&format!(
            "SELECT count(*), sum(a), count(DISTINCT b) FROM {table}"
        ))
        .await
        .unwrap();
    let n = rows as u64;
    assert_eq!(
        got[0],
        vec![
            Some(n.to_string()),
            Some((n * (n - 1) / 2).to_string()),
            Some(n.to_string())
        ]
    );
}
