//! How the HTML pages look: the inline stylesheet (shared with the comparison page) and the
//! colour of each wait event, so the same event has the same colour in every chart and table.
//!
//! Must not touch: what is drawn (the sections pick it); colours here are conventions, not data.

use measure::server::CPU;

use crate::svg::esc;

pub(crate) const CSS: &str = r#"
:root{--ink:#1d2330;--muted:#5f6b7a;--line:#e3e7ee;--bg:#f6f8fb;--card:#fff;--accent:#3056d3;
--ok:#1e8e3e;--bad:#c5221f;--skip:#8a8f98}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:var(--ink);background:var(--bg)}
header.top{background:#17203a;color:#fff;padding:22px 32px 18px}
header.top h1{margin:0;font-size:22px;font-weight:600;letter-spacing:.2px}
header.top h1 span{color:#9fb3ff;font-weight:500}
header.top .sub{color:#c5cde0;margin-top:4px;font-size:13px}
main{max-width:1320px;margin:0 auto;padding:18px 28px 40px}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px 20px 18px;margin:16px 0;break-inside:avoid}
h2{font-size:16px;margin:0 0 10px;font-weight:600}
h3{font-size:13px;margin:14px 0 6px;color:var(--muted);font-weight:600;text-transform:uppercase;letter-spacing:.4px}
.kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:10px;margin-top:-34px}
.kpi{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px 14px;box-shadow:0 1px 2px rgba(0,0,0,.04)}
.kpi .v{font-size:24px;font-weight:650;font-variant-numeric:tabular-nums}
.kpi .v small{font-size:13px;color:var(--muted);font-weight:500;margin-left:3px}
.kpi .k{color:var(--muted);font-size:12px}
.kpi .v.txt{font-size:15px;padding:6px 0 5px;overflow-wrap:break-word}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:18px}
@media (max-width:900px){.grid2{grid-template-columns:1fr}}
figure.chart{margin:0}
figure.chart svg{width:100%;height:auto;display:block}
.chart .grid{stroke:#eef1f5}
.chart .xtick{stroke:#c9cfd8}
.chart .axis{stroke:#9aa3af}
.chart .tick{font-size:10.5px;fill:#6b7482}
.chart .label{font-size:11px;fill:#4b5563}
.chart .line{fill:none;stroke-width:1.8}
.chart .area{stroke-width:.5;fill-opacity:.88}
.chart .ref{stroke:#c5221f;stroke-dasharray:4 3}
.chart .reflabel{font-size:10.5px;fill:#c5221f}
.chart .marker line{stroke:#7c3aed;stroke-dasharray:2 3}
.chart .marker text{font-size:10px;fill:#7c3aed}
.chart .nodata{color:var(--muted);padding:40px 0;text-align:center;border:1px dashed var(--line);border-radius:8px}
.chart-title{font-weight:600;font-size:13px;margin:4px 0 2px}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;color:#374151;margin:4px 0 0 56px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:right;vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600;background:#fafbfd}
td.l,th.l{text-align:left}
tr.knee td{font-weight:600}tr.unsound td{background:#fff1f0}
td code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f3f5f9;border-radius:6px;padding:8px 10px;white-space:pre-wrap;word-break:break-all;margin:4px 0}
.sql{max-width:520px;white-space:pre-wrap;word-break:break-word}
.sbar{display:inline-block;height:9px;background:var(--accent);border-radius:2px;vertical-align:middle;opacity:.8}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:11px;font-weight:700;color:#fff;letter-spacing:.3px}
.badge.passed{background:var(--ok)}.badge.failed{background:var(--bad)}.badge.skipped{background:var(--skip)}
.checks td{text-align:left}
.kv{display:grid;grid-template-columns:max-content 1fr;gap:3px 14px;font-size:13px}
.kv div:nth-child(odd){color:var(--muted)}
.note{border-left:3px solid #f0a400;background:#fff8e6;padding:6px 10px;margin:6px 0;border-radius:4px}
.banner{border-left:4px solid var(--bad);background:#fdecea;padding:8px 12px;border-radius:6px;margin:12px 0}
.muted{color:var(--muted)}
.tag{display:inline-block;padding:0 6px;border-radius:4px;font-size:11.5px;color:#fff;white-space:nowrap}
footer{color:var(--muted);font-size:12px;text-align:center;margin:24px 0}
@media print{body{background:#fff}section{border:none;padding:6px 0}header.top{background:#fff;color:#000;border-bottom:2px solid #000}header.top .sub{color:#333}.kpis{margin-top:8px}}
"#;

/// A color per wait event, by class (Performance Insights' convention: CPU green, I/O blue,
/// LWLock pink, Lock orange, client gray), shaded within the class. MySQL's classes (see
/// `observe`'s mapping): `Synch` (mutexes, rwlocks, conditions) as LWLock, `IO` and `Lock` as
/// PostgreSQL's, `Stage` (a session's thread state where waits are not sampled) teal.
pub fn wait_color(event: &str, shade: usize) -> String {
    let class = event.split(':').next().unwrap_or(event);
    let palette: &[&str] = match class {
        CPU => &["#2e9e44"],
        "IO" => &["#1f6fd1", "#5b9bf0", "#0b3f8c", "#8fbaf5"],
        "LWLock" | "Synch" => &["#d6336c", "#f06595", "#a61e4d", "#faa2c1"],
        "Stage" => &["#0b7285", "#1098ad", "#3bc9db", "#66d9e8"],
        "Lock" => &["#f08c00", "#ffa94d", "#c25e00"],
        "Client" => &["#868e96", "#adb5bd"],
        "IPC" => &["#7048e8", "#9775fa", "#5f3dc4"],
        "Timeout" => &["#0ca678", "#38d9a9"],
        "BufferPin" => &["#8d5524"],
        "Activity" => &["#495057"],
        "Extension" => &["#e8590c"],
        _ => &["#343a40"],
    };
    palette[shade % palette.len()].to_string()
}

pub(crate) fn event_tag(event: &str) -> String {
    format!(
        "<span class=\"tag\" style=\"background:{}\">{}</span>",
        esc(&wait_color(event, 0)),
        esc(event)
    )
}
