//! The HTML report's Replication section (`--read-from`): each standby's lag behind the
//! primary, max and p95 over the run.

use std::fmt::Write as _;

use measure::replication::ReplicaLag;

use crate::svg::esc;

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

pub(super) fn section(o: &mut String, standbys: &[ReplicaLag]) {
    if standbys.is_empty() {
        return;
    }
    o.push_str(
        "<section id=\"replication\"><h2>Replication</h2><table><thead><tr><th>standby</th>\
         <th>samples</th><th>max lag bytes</th><th>p95 lag bytes</th><th>max write lag ms</th>\
         <th>max flush lag ms</th><th>max replay lag ms</th><th>p95 replay lag ms</th></tr>\
         </thead><tbody>",
    );
    for s in standbys {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td></tr>",
            esc(&s.standby),
            s.samples,
            s.max_lag_bytes,
            s.p95_lag_bytes,
            ms(s.max_write_lag_ms),
            ms(s.max_flush_lag_ms),
            ms(s.max_replay_lag_ms),
            ms(s.p95_replay_lag_ms)
        );
    }
    o.push_str("</tbody></table></section>");
}
