//! The statement ledger: what stampede's clients sent, by kind, set beside what the server
//! counted in the same window, with a verdict per line (`measure::ledger` has the client's side;
//! the binary reads the server's counters and fills this section).
//!
//! Each line compares up to three counts of one thing: what the workload says it did (its own
//! counters: a probe's acknowledged writes, tpcb-like's transactions times its one history
//! insert), what its sessions saw the server acknowledge on the wire, and the server's own
//! counter. A line passes when all it has agree (or differ by no more than failed attempts and
//! stampede's own sessions could explain: "within"), is inconclusive when something else may
//! have moved the server's counter (other sessions, a restart) and says which, and fails when
//! the counts disagree with nothing to explain it.

use serde::{Deserialize, Serialize};

use measure::ledger::{Bounds, Kind};

use crate::CheckStatus;

/// What a line counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Statements,
    Rows,
    /// Server transactions (PostgreSQL's `xact_rollback`).
    Transactions,
}

/// A line's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every count on the line is equal.
    Exact,
    /// The counts differ by no more than what failed or abandoned statements, or stampede's own
    /// other sessions (named in the detail), can explain.
    Within,
    /// The server's count cannot be compared (not kept, other sessions, a restart): why, in the
    /// detail.
    Inconclusive,
    /// The counts disagree and nothing explains it.
    Failed,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Exact => "exact",
            Verdict::Within => "within",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Failed => "FAILED",
        }
    }
}

/// One line of the ledger.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LedgerLine {
    pub kind: Kind,
    /// The table, when the line is about one (a workload's claim, a table's row counter);
    /// `None` for the whole database. A name ending in `*` stands for every table it starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// The host, when the target has several and the line is about one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub unit: Unit,
    /// What the workload's own counters say, and which counters (`from`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Bounds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_from: Option<String>,
    /// What stampede's client sessions saw the server acknowledge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<u64>,
    /// The server's counter over the run, less what stampede's own other sessions (observer,
    /// checks) sent; `None` when the server keeps no such counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<i64>,
    /// The server's counter (`pg_stat_statements.calls`, `Com_insert`, ...).
    pub source: String,
    pub verdict: Verdict,
    /// The numbers behind the verdict, in words.
    pub detail: String,
}

impl LedgerLine {
    /// The line's subject in a person's words: `insert statements`, `rows updated in
    /// pgbench_accounts`.
    pub fn subject(&self) -> String {
        let what = match (self.unit, self.kind) {
            (Unit::Statements, k) => format!("{} statements", k.as_str()),
            (Unit::Transactions, Kind::Rollback) => "rolled-back transactions".to_string(),
            (Unit::Transactions, k) => format!("{} transactions", k.as_str()),
            (Unit::Rows, Kind::Insert) => "rows inserted".to_string(),
            (Unit::Rows, Kind::Update) => "rows updated".to_string(),
            (Unit::Rows, Kind::Delete) => "rows deleted".to_string(),
            (Unit::Rows, Kind::Select) => "rows returned".to_string(),
            (Unit::Rows, k) => format!("rows ({})", k.as_str()),
        };
        let mut s = match (&self.table, self.unit, self.kind) {
            (Some(t), Unit::Rows, Kind::Insert) => format!("{what} into {t}"),
            (Some(t), Unit::Rows, Kind::Delete | Kind::Select) => format!("{what} from {t}"),
            (Some(t), _, _) => format!("{what} on {t}"),
            (None, _, _) => what,
        };
        if let Some(h) = &self.host {
            s.push_str(&format!(" at {h}"));
        }
        s
    }
}

/// The ledger of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LedgerSection {
    /// The server's counters read, in words (`pg_stat_statements`, `pg_stat_user_tables`, ...),
    /// and those it could not read and why.
    pub sources: Vec<String>,
    pub lines: Vec<LedgerLine>,
}

impl LedgerSection {
    /// The ledger as one check: failed when a line failed; skipped when nothing could be
    /// compared; passed otherwise, with the counts of each verdict.
    pub fn status(&self) -> (CheckStatus, String) {
        let n = |v: Verdict| self.lines.iter().filter(|l| l.verdict == v).count();
        let (exact, within, inconclusive, failed) = (
            n(Verdict::Exact),
            n(Verdict::Within),
            n(Verdict::Inconclusive),
            n(Verdict::Failed),
        );
        if failed > 0 {
            let first: Vec<String> = (self.lines.iter())
                .filter(|l| l.verdict == Verdict::Failed)
                .take(3)
                .map(|l| format!("{}: {}", l.subject(), l.detail))
                .collect();
            return (
                CheckStatus::Failed,
                format!(
                    "{failed} of {} lines disagree: {}",
                    self.lines.len(),
                    first.join("; ")
                ),
            );
        }
        if exact + within == 0 {
            let why = (self.lines.iter())
                .find(|l| l.verdict == Verdict::Inconclusive)
                .map_or_else(|| self.sources.join("; "), |l| l.detail.clone());
            return (
                CheckStatus::Skipped,
                format!("inconclusive: nothing could be compared ({why})"),
            );
        }
        let mut parts = vec![format!("{exact} exact")];
        if within > 0 {
            parts.push(format!("{within} within what failed statements explain"));
        }
        if inconclusive > 0 {
            parts.push(format!("{inconclusive} inconclusive"));
        }
        (
            CheckStatus::Passed,
            format!(
                "{} lines against the server's counters: {}",
                self.lines.len(),
                parts.join(", ")
            ),
        )
    }
}

/// The ledger as a table for the text summary: one line per row, aligned.
pub fn render_ledger(l: &LedgerSection) -> String {
    let mut out = String::new();
    if l.lines.is_empty() {
        return out;
    }
    let num = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let rows: Vec<[String; 5]> = (l.lines.iter())
        .map(|line| {
            [
                line.subject(),
                num(line.workload.map(|b| b.to_string())),
                num(line.sent.map(|v| v.to_string())),
                num(line.server.map(|v| v.to_string())),
                format!("{} ({})", line.verdict.label(), line.source),
            ]
        })
        .collect();
    let head = [
        "",
        "workload",
        "sent",
        "server",
        "verdict (server's counter)",
    ];
    let mut width = [0usize; 5];
    for r in rows
        .iter()
        .map(|r| r.each_ref().map(|s| s.as_str()))
        .chain([head])
    {
        for (w, s) in width.iter_mut().zip(r) {
            *w = (*w).max(s.chars().count());
        }
    }
    out.push_str("statement ledger (stampede's count beside the server's):\n");
    let line = |cells: [&str; 5]| {
        format!(
            "  {:<w0$}  {:>w1$}  {:>w2$}  {:>w3$}  {}\n",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            w0 = width[0],
            w1 = width[1],
            w2 = width[2],
            w3 = width[3],
        )
    };
    out.push_str(&line(head));
    for (r, l) in rows.iter().zip(&l.lines) {
        out.push_str(&line(r.each_ref().map(|s| s.as_str())));
        if l.verdict != Verdict::Exact {
            out.push_str(&format!("      {}\n", l.detail));
        }
    }
    if !l.sources.is_empty() {
        out.push_str(&format!("  server's counters: {}\n", l.sources.join("; ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(verdict: Verdict) -> LedgerLine {
        LedgerLine {
            kind: Kind::Insert,
            table: Some("pgbench_history".into()),
            host: None,
            unit: Unit::Rows,
            workload: Some(Bounds::exact(10)),
            workload_from: Some("tpcb-like transactions x 1".into()),
            sent: None,
            server: Some(10),
            source: "pg_stat_user_tables.n_tup_ins".into(),
            verdict,
            detail: "the numbers".into(),
        }
    }

    #[test]
    fn one_failed_line_fails_the_ledger_and_is_named() {
        let mut l = LedgerSection {
            sources: vec![],
            lines: vec![line(Verdict::Exact), line(Verdict::Failed)],
        };
        let (status, detail) = l.status();
        assert_eq!(status, CheckStatus::Failed);
        assert!(
            detail.starts_with("1 of 2 lines disagree: rows inserted into pgbench_history:"),
            "{detail}"
        );
        l.lines.pop();
        l.lines.push(line(Verdict::Within));
        l.lines.push(line(Verdict::Inconclusive));
        let (status, detail) = l.status();
        assert_eq!(status, CheckStatus::Passed);
        assert_eq!(
            detail,
            "3 lines against the server's counters: 1 exact, 1 within what failed statements \
             explain, 1 inconclusive"
        );
        l.lines = vec![line(Verdict::Inconclusive)];
        assert_eq!(l.status().0, CheckStatus::Skipped);
    }

    #[test]
    fn the_table_aligns_and_explains_every_line_not_exact() {
        let mut within = line(Verdict::Within);
        within.kind = Kind::Select;
        within.unit = Unit::Statements;
        within.table = None;
        within.sent = Some(12345);
        within.detail = "2 statements failed".into();
        let text = render_ledger(&LedgerSection {
            sources: vec!["pg_stat_statements".into()],
            lines: vec![line(Verdict::Exact), within],
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "statement ledger (stampede's count beside the server's):"
        );
        assert!(lines[2].starts_with("  rows inserted into pgbench_history  "));
        assert!(lines[2].ends_with("exact (pg_stat_user_tables.n_tup_ins)"));
        assert!(lines[3].starts_with("  select statements"));
        assert!(lines[3].contains("12345"));
        assert_eq!(lines[4], "      2 statements failed");
        assert_eq!(lines[5], "  server's counters: pg_stat_statements");
        // The numbers' columns line up.
        let col = |l: &str| l.find("  10  ").or_else(|| l.find("12345"));
        assert!(col(lines[2]).is_some() && col(lines[3]).is_some());
    }
}
