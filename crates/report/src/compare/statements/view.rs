//! The per-statement comparison as text (after the metric table of `stampede compare`, or alone
//! for `--against-log`) and as HTML (a section of the comparison page, or a page of its own for
//! `--against-log`). Lists only what changed: the fingerprints slower or faster beyond noise,
//! those on one side only, and the new and stopped failures; the rest is one count. Must not
//! touch: I/O, the verdicts (`super`).

use std::fmt::Write as _;

use super::super::judge::{num, times};
use super::super::Verdict;
use super::{Change, ErrorChange, Line, Side, Statements};
use crate::observed::one_line;
use crate::svg::esc;

fn ms(us: u64) -> String {
    num(us as f64 / 1000.0)
}

fn pct(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

fn change_word(c: Change) -> &'static str {
    match c {
        Change::Slower => "slower",
        Change::Faster => "faster",
        Change::Both => "changed both ways",
        Change::Same => "within noise",
        Change::OnlyA => "only in",
        Change::OnlyB => "only in",
    }
}

/// "0.120 -> 0.360 ms, 3.00x slower" / "..., within noise" / "..., too few to judge".
fn quantile_words(v: Verdict, a: u64, b: u64) -> String {
    let ratio = if a > 0 {
        times(b as f64 / a as f64)
    } else {
        "-".into()
    };
    let verdict = match v {
        Verdict::Higher => format!("{ratio} slower"),
        Verdict::Lower if b > 0 => format!("{} faster", times(a as f64 / b as f64)),
        Verdict::Lower => "faster".into(),
        Verdict::NoDifference => format!("{ratio}, within noise"),
        Verdict::Untested => format!("{ratio}, too few to judge"),
    };
    format!("{} -> {} ms, {verdict}", ms(a), ms(b))
}

fn one_side(s: &Side) -> String {
    format!(
        "{} executions, p50 {} ms, p99 {} ms, {} of the time",
        s.count,
        ms(s.p50_us),
        ms(s.p99_us),
        pct(s.share)
    )
}

fn line_text(s: &Statements, l: &Line, o: &mut String) {
    let (a, b) = (&s.a_label, &s.b_label);
    match (&l.a, &l.b) {
        (Some(x), Some(y)) => {
            let _ = writeln!(
                o,
                "  {:<7} {}\n          count {} -> {}; p50 {}; p99 {}; share of time {} -> {}",
                change_word(l.change),
                one_line(&l.fingerprint, 100),
                x.count,
                y.count,
                quantile_words(l.p50, x.p50_us, y.p50_us),
                quantile_words(l.p99, x.p99_us, y.p99_us),
                pct(x.share),
                pct(y.share)
            );
        }
        (Some(x), None) => {
            let _ = writeln!(
                o,
                "  only in {a}: {}\n          {}",
                one_line(&l.fingerprint, 100),
                one_side(x)
            );
        }
        (None, Some(y)) => {
            let _ = writeln!(
                o,
                "  only in {b}: {}\n          {}",
                one_line(&l.fingerprint, 100),
                one_side(y)
            );
        }
        (None, None) => {}
    }
}

fn errors_text(o: &mut String, title: &str, list: &[ErrorChange], other: &str, new: bool) {
    if list.is_empty() {
        return;
    }
    let _ = writeln!(o, "{title}:");
    for e in list {
        let _ = writeln!(
            o,
            "  {} x{} ({other}: none)  {}",
            e.code,
            if new { e.b } else { e.a },
            one_line(&e.fingerprint, 90)
        );
    }
}

/// The per-statement part, every line ending in `\n`.
pub fn render_text(s: &Statements) -> String {
    let mut o = String::new();
    let count = |c: Change| s.lines.iter().filter(|l| l.change == c).count();
    let _ = writeln!(
        o,
        "per statement, {} against {} (fingerprints matched by name): {} slower, {} faster, {} \
         changed both ways, {} within noise or too few to judge, {} only in {}, {} only in {}",
        s.b_label,
        s.a_label,
        count(Change::Slower),
        count(Change::Faster),
        count(Change::Both),
        count(Change::Same),
        count(Change::OnlyA),
        s.a_label,
        count(Change::OnlyB),
        s.b_label
    );
    for l in s.lines.iter().filter(|l| l.change != Change::Same) {
        line_text(s, l, &mut o);
    }
    errors_text(
        &mut o,
        &format!("newly failing in {} (by code)", s.b_label),
        &s.new_errors,
        &s.a_label,
        true,
    );
    errors_text(
        &mut o,
        &format!("stopped failing in {} (by code)", s.b_label),
        &s.gone_errors,
        &s.b_label,
        false,
    );
    let _ = writeln!(o, "{}", method(s));
    o
}

fn method(s: &Statements) -> String {
    format!(
        "per-statement verdicts from each fingerprint's histogram of every execution: a p50 or \
         p99 counts as changed when the {:.0}% order-statistic intervals of the two sides do not \
         overlap (p99 needs a few hundred executions on each side) and the change is at least \
         {:.0}%.",
        s.confidence * 100.0,
        s.min_effect * 100.0
    )
}

fn badge(c: Change) -> &'static str {
    match c {
        Change::Slower => "worse",
        Change::Faster => "better",
        Change::Both => "changed",
        Change::Same => "same",
        Change::OnlyA | Change::OnlyB => "untested",
    }
}

/// The per-statement section of an HTML page.
pub fn render_html_section(s: &Statements, o: &mut String) {
    let (a, b) = (esc(&s.a_label), esc(&s.b_label));
    let _ = write!(
        o,
        "<section id=\"statements\"><h2>Per statement, {b} against {a}</h2><table>\
         <tr><th class=\"l\">change</th><th class=\"l\">fingerprint</th><th>count {a}</th>\
         <th>count {b}</th><th>p50 {a} ms</th><th>p50 {b} ms</th><th>p99 {a} ms</th>\
         <th>p99 {b} ms</th><th>time {a}</th><th>time {b}</th></tr>"
    );
    let cell =
        |side: &Option<Side>, f: &dyn Fn(&Side) -> String| side.as_ref().map_or("-".to_string(), f);
    let shown: Vec<&Line> = s
        .lines
        .iter()
        .filter(|l| l.change != Change::Same)
        .collect();
    for l in &shown {
        let word = match l.change {
            Change::OnlyA => format!("only in {}", s.a_label),
            Change::OnlyB => format!("only in {}", s.b_label),
            c => change_word(c).to_string(),
        };
        let _ = write!(
            o,
            "<tr><td class=\"l\"><span class=\"badge {}\">{}</span></td><td class=\"v\">\
             <code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>",
            badge(l.change),
            esc(&word),
            esc(&one_line(&l.fingerprint, 160)),
            cell(&l.a, &|x| x.count.to_string()),
            cell(&l.b, &|x| x.count.to_string()),
            cell(&l.a, &|x| ms(x.p50_us)),
            cell(&l.b, &|x| ms(x.p50_us)),
            cell(&l.a, &|x| ms(x.p99_us)),
            cell(&l.b, &|x| ms(x.p99_us)),
            cell(&l.a, &|x| pct(x.share)),
            cell(&l.b, &|x| pct(x.share)),
        );
    }
    let same = s.lines.len() - shown.len();
    let _ = write!(
        o,
        "<tr class=\"grp\"><td colspan=\"10\">{same} more fingerprint{} within noise or too few \
         to judge</td></tr></table>",
        if same == 1 { "" } else { "s" }
    );
    for (title, list, new) in [
        (
            format!("Newly failing in {}", s.b_label),
            &s.new_errors,
            true,
        ),
        (
            format!("Stopped failing in {}", s.b_label),
            &s.gone_errors,
            false,
        ),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = write!(
            o,
            "<h3>{}</h3><table><tr><th class=\"l\">code</th><th>count</th>\
             <th class=\"l\">fingerprint</th></tr>",
            esc(&title)
        );
        for e in list.iter() {
            let _ = write!(
                o,
                "<tr><td class=\"l\">{}</td><td>{}</td><td class=\"v\"><code>{}</code></td></tr>",
                esc(&e.code),
                if new { e.b } else { e.a },
                esc(&one_line(&e.fingerprint, 160))
            );
        }
        o.push_str("</table>");
    }
    let _ = write!(o, "<p class=\"method\">{}</p></section>", esc(&method(s)));
}

/// A page of its own for `--against-log`: the run's name, then the section.
pub fn render_log_html(name: &str, s: &Statements) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>stampede comparison · {} against its log</title><style>{}{}</style></head>\
         <body><header class=\"top\"><h1>stampede comparison <span>· replay against its \
         log</span></h1><div class=\"sub\">{}</div></header><main>",
        esc(name),
        crate::html::CSS,
        super::super::html::EXTRA_CSS,
        esc(name)
    );
    render_html_section(s, &mut o);
    o.push_str(
        "<footer>Generated by stampede compare --against-log. Self-contained: no \
         network.</footer></main></body></html>\n",
    );
    o
}
