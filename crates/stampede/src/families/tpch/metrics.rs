//! The metrics of a TPC-H run (clause 5.4) from its section's items and the engine's
//! per-client spans: Power@Size from the power stream's 22 query times and its two refresh
//! functions' (clause 5.4.1), Throughput@Size from the throughput test's streams and Ts, the
//! time from its first stream's start to its last stream's end (clauses 5.3.7, 5.4.2),
//! QphH@Size from both (clause 5.4.3). A metric whose inputs are not all there (a query
//! failed or timed out, the run was cut short) is left out with a note saying why.

use engine::ClientStats;

use super::queries;
use super::section::TpchSection;

/// Fill `s`'s metrics and notes. `clients` are the engine's clients (their spans), `cut`
/// whether the run ended before its streams did.
pub(crate) fn fill(s: &mut TpchSection, clients: &[ClientStats], cut: bool) {
    if s.streams > 0 && (s.streams as usize) < queries::min_streams(s.scale) {
        s.notes.push(format!(
            "{} streams is fewer than clause 5.3.4's minimum for SF {} ({}): the throughput \
             test is not comparable with a reported one",
            s.streams,
            s.scale,
            queries::min_streams(s.scale)
        ));
    }
    if cut {
        s.notes.push(
            "the run ended before its streams did (-T, Ctrl-C or an aborted stream): no metric"
                .into(),
        );
        return;
    }
    if s.test != "throughput" {
        s.power_at_size = power(s);
        if s.power_at_size.is_none() {
            s.notes.push(format!(
                "no Power@Size: the power test's {} (clause 5.4.1 needs every query's and \
                 refresh function's time)",
                failed_in(s, |st| st == 0).join(", ")
            ));
        }
    }
    if s.test != "power" {
        let streams = s.streams;
        let ts = span(clients, s.test == "full");
        let bad = failed_in(s, |st| st >= 1 && st <= streams + 1);
        match (ts, bad.is_empty()) {
            (Some(ts), true) => {
                s.throughput_s = Some(ts);
                s.throughput_at_size =
                    Some(queries::throughput_at_size(s.scale, streams as usize, ts));
            }
            (_, false) => s.notes.push(format!(
                "no Throughput@Size: in the throughput test {}",
                bad.join(", ")
            )),
            (None, true) => s.notes.push("no Throughput@Size: no stream ran".into()),
        }
    }
    if let (Some(p), Some(t)) = (s.power_at_size, s.throughput_at_size) {
        s.qphh_at_size = Some(queries::qphh_at_size(p, t));
    }
}

/// The failed items of the streams `which` chooses, named.
fn failed_in(s: &TpchSection, which: impl Fn(u32) -> bool) -> Vec<String> {
    (s.items.iter())
        .filter(|i| which(i.stream) && i.failed > 0)
        .map(|i| {
            let how = if i.timed_out > 0 {
                "timed out"
            } else {
                "failed"
            };
            match i.stream {
                0 => format!("{} {how}", i.item),
                n => format!("{} of stream {n} {how}", i.item),
            }
        })
        .collect()
}

/// Power@Size from the power stream's items, when every one succeeded.
fn power(s: &TpchSection) -> Option<f64> {
    let mut q = [0.0; 22];
    let mut rf = [0.0; 2];
    let mut seen = 0;
    for i in s.items.iter().filter(|i| i.stream == 0) {
        if i.failed > 0 {
            return None;
        }
        let t = i.seconds?;
        match i.item.as_str() {
            "RF1" => rf[0] = t,
            "RF2" => rf[1] = t,
            n => q[n.strip_prefix('Q')?.parse::<usize>().ok()?.checked_sub(1)?] = t,
        }
        seen += 1;
    }
    (seen == 24).then(|| queries::power_at_size(s.scale, &q, &rf))
}

/// Ts, seconds: the throughput test's clients from the first start to the last end. In a
/// full run client 0 is the power test's and is left out.
fn span(clients: &[ClientStats], full: bool) -> Option<f64> {
    let of = (clients.iter()).filter(|c| !(full && c.client_id == 0));
    let first = of.clone().filter_map(|c| c.first_us).min()?;
    let last = of
        .filter(|c| c.first_us.is_some())
        .map(|c| c.last_us)
        .max()?;
    Some(last.saturating_sub(first) as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::super::section::Item;
    use super::*;

    fn section(test: &str) -> TpchSection {
        let mut items = Vec::new();
        for name in (1..=22)
            .map(|q| format!("Q{q}"))
            .chain(["RF1".into(), "RF2".into()])
        {
            items.push(Item {
                stream: 0,
                item: name,
                executions: 1,
                seconds: Some(10.0),
                ..Item::default()
            });
        }
        items.push(Item {
            stream: 1,
            item: "Q1".into(),
            executions: 1,
            seconds: Some(3.0),
            ..Item::default()
        });
        TpchSection {
            scale: 1.0,
            test: test.into(),
            streams: 2,
            items,
            ..Default::default()
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
    fn the_metrics_come_from_the_power_stream_and_the_throughput_span() {
        let mut s = section("full");
        // Client 0 (the power test) is not part of Ts: 20 s to 140 s over the others.
        let clients = [
            client(0, 0, 250_000_000),
            client(1, 20_000_000, 90_000_000),
            client(2, 25_000_000, 140_000_000),
        ];
        fill(&mut s, &clients, false);
        // All 24 intervals 10 s: 3600 * 1 / 10.
        assert!((s.power_at_size.unwrap() - 360.0).abs() < 1e-9, "{s:?}");
        assert_eq!(s.throughput_s, Some(120.0));
        // (2 * 22 * 3600 / 120) * 1 = 1320; QphH = sqrt(360 * 1320).
        assert!((s.throughput_at_size.unwrap() - 1320.0).abs() < 1e-9);
        assert!((s.qphh_at_size.unwrap() - (360.0f64 * 1320.0).sqrt()).abs() < 1e-9);
        assert!(s.notes.is_empty(), "{:?}", s.notes);
    }

    #[test]
    fn a_timed_out_query_or_a_cut_run_leaves_the_metric_out_and_says_why() {
        let mut s = section("full");
        s.items[4].failed = 1;
        s.items[4].timed_out = 1;
        s.items[4].seconds = None;
        fill(&mut s, &[client(1, 0, 10), client(2, 0, 20)], false);
        assert_eq!(s.power_at_size, None);
        assert_eq!(s.qphh_at_size, None);
        assert!(
            s.notes.iter().any(|n| n.contains("Q5 timed out")),
            "{:?}",
            s.notes
        );
        assert!(s.throughput_at_size.is_some());
        let mut c = section("power");
        fill(&mut c, &[], true);
        assert_eq!(c.power_at_size, None);
        assert!(c.notes.iter().any(|n| n.contains("no metric")));
    }
}
