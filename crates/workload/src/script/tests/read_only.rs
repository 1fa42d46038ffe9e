//! Which scripts `--read-from` may send to a standby (`Workload::read_only`): a table of
//! scripts, builtins first, then custom scripts whose every SQL command must be certainly
//! read-only (`crate::readonly`).

use crate::script::workload::{ScriptConfig, ScriptSet};
use crate::tpcb::Builtin;
use crate::Workload;

#[test]
fn builtins_are_read_only_only_when_select_only() {
    let mut set = ScriptSet::new();
    for b in [
        Builtin::TpcbLike,
        Builtin::SimpleUpdate,
        Builtin::SelectOnly,
        Builtin::TpcbLikePipelined,
    ] {
        set.add_builtin(b, 1);
    }
    let w = set.into_workload(&ScriptConfig::default());
    let got: Vec<bool> = (0..4).map(|i| w.read_only(i)).collect();
    assert_eq!(got, vec![false, false, true, false]);
}

#[test]
fn custom_scripts_are_read_only_when_every_sql_command_is() {
    // (script, read-only?)
    let cases: &[(&str, bool)] = &[
        (
            "\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
            true,
        ),
        (
            "BEGIN;\nSELECT 1 \\gset\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\nEND;\n",
            true,
        ),
        ("\\sleep 1 ms\n\\set x 1\n", true),
        (
            "\\startpipeline\nSELECT 1;\nSELECT count(*) FROM pgbench_branches;\n\\endpipeline\n",
            true,
        ),
        ("SELECT 1 \\; SELECT 2;\n", true),
        ("SELECT 1;\nUPDATE pgbench_branches SET bbalance = 0 WHERE bid = 1;\n", false),
        ("SELECT 1 \\; DELETE FROM pgbench_history;\n", false),
        ("SELECT * FROM pgbench_accounts WHERE aid = :aid FOR UPDATE;\n", false),
        ("SELECT my_counter_bump(:aid);\n", false),
        ("SELECT * FROM :\"t\";\n", false),
        ("BEGIN ISOLATION LEVEL SERIALIZABLE;\nSELECT 1;\nEND;\n", false),
        ("SET application_name = 'x';\nSELECT 1;\n", false),
    ];
    let mut wrong = Vec::new();
    for (text, want) in cases {
        let mut set = ScriptSet::new();
        set.add_file("t.sql", text, 1)
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        let w = set.into_workload(&ScriptConfig::default());
        if w.read_only(0) != *want {
            wrong.push(format!("{text:?}: expected read_only={want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
