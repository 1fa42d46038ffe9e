//! When each item of each stream ran (the HTML's "streams over time"), from the engine's own
//! figures: a stream is one client sending its items back to back, so its items lie end to
//! end from the client's first start (`ClientStats::first_us`), each as long as its measured
//! time. An item that failed (a timeout, an error) has no time of its own in the section: the
//! stream's span left over (to `ClientStats::last_us`) is shared among its failed items.
//!
//! Why not a clock read per item: the engine owns time (ARCHITECTURE.md's invariant), and
//! these positions are then exactly the times the report prints. What they leave out is the
//! engine's bookkeeping between two items of a stream (microseconds against queries of
//! milliseconds and more), so a stream's last item may end that much before its real end.
//!
//! Must not touch: the metrics (`super::metrics` computes Ts from the clients' spans itself).

use engine::ClientStats;

use super::section::TpchSection;

/// Fill each stream item's `start_s` and `end_s`. Clients are the streams in order: the power
/// test's first when it ran, then the query streams, then the refresh stream.
pub(crate) fn fill(s: &mut TpchSection, clients: &[ClientStats]) {
    if s.test == "query" {
        return;
    }
    let first_stream = u32::from(s.test == "throughput");
    for c in clients {
        let Some(first) = c.first_us else { continue };
        let stream = c.client_id + first_stream;
        // Each item of the stream that ran, with its time when it has one.
        let mine: Vec<(usize, Option<f64>)> = (s.items.iter().enumerate())
            .filter(|(_, i)| i.stream == stream && i.executions > 0)
            .map(|(k, i)| (k, i.seconds.filter(|_| i.failed == 0)))
            .collect();
        let known: f64 = mine.iter().filter_map(|(_, d)| *d).sum();
        let failed = mine.iter().filter(|(_, d)| d.is_none()).count();
        let span = c.last_us.saturating_sub(first) as f64 / 1e6;
        let share = match failed {
            0 => 0.0,
            n => (span - known).max(0.0) / n as f64,
        };
        let mut t = first as f64 / 1e6;
        for (k, d) in mine {
            let d = d.unwrap_or(share);
            s.items[k].start_s = Some(t);
            s.items[k].end_s = Some(t + d);
            t += d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::section::Item;
    use super::*;

    fn item(stream: u32, name: &str, seconds: Option<f64>) -> Item {
        Item {
            stream,
            item: name.into(),
            executions: 1,
            failed: u64::from(seconds.is_none()),
            seconds,
            ..Item::default()
        }
    }

    fn client(id: u32, first: u64, last: u64) -> ClientStats {
        ClientStats {
            client_id: id,
            first_us: Some(first),
            last_us: last,
            ..ClientStats::default()
        }
    }

    #[test]
    fn items_lie_end_to_end_and_a_failed_one_takes_the_time_left() {
        let mut s = TpchSection {
            test: "full".into(),
            streams: 1,
            items: vec![
                item(0, "RF1", Some(1.0)),
                item(0, "Q14", Some(2.0)),
                item(1, "Q21", Some(3.0)),
                item(1, "Q3", None),
                item(1, "Q18", Some(1.0)),
            ],
            ..TpchSection::default()
        };
        // The power stream from 0 s; stream 1 from 3 s to 10 s: 4 s measured, 3 s left.
        fill(
            &mut s,
            &[client(0, 0, 3_000_000), client(1, 3_000_000, 10_000_000)],
        );
        let at: Vec<(Option<f64>, Option<f64>)> =
            s.items.iter().map(|i| (i.start_s, i.end_s)).collect();
        assert_eq!(
            at,
            [
                (Some(0.0), Some(1.0)),
                (Some(1.0), Some(3.0)),
                (Some(3.0), Some(6.0)),
                (Some(6.0), Some(9.0)),
                (Some(9.0), Some(10.0)),
            ]
        );
    }

    #[test]
    fn a_throughput_test_alone_starts_at_stream_1_and_unrun_items_have_no_place() {
        let mut s = TpchSection {
            test: "throughput".into(),
            streams: 1,
            items: vec![item(1, "Q21", Some(3.0)), item(1, "Q3", Some(1.0))],
            ..TpchSection::default()
        };
        s.items[1].executions = 0;
        fill(&mut s, &[client(0, 500_000, 3_500_000)]);
        assert_eq!(
            (s.items[0].start_s, s.items[0].end_s),
            (Some(0.5), Some(3.5))
        );
        assert_eq!(s.items[1].start_s, None);
    }
}
