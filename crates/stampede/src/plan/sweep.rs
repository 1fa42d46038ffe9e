//! `--sweep PARAM=VALUES` and `--warmup`, read into a [`SweepSpec`] before any I/O.
//!
//! Spellings: `clients=8,16,32` or `clients=1..64` (doubling from the first, the last included
//! when doubling misses it: `3..20` is 3, 6, 12, 20); `rate=500,1000` or `rate=250..2000` (-R
//! per step, same doubling); `scale=1,10,100` or `scale=1..100` (the family's tables
//! re-initialised at that scale before each step, as `stampede init` makes them: only a family
//! whose runner can, `Family::rescale_refusal`); `set:NAME=v1,v2` (a server setting, applied on
//! the embedded PostgreSQL server before each step; only there, since stampede does not change
//! the settings of a server it did not start).
//!
//! A matrix: two `--sweep`s of two parameters (pgbench-tools' scale-by-clients matrix:
//! `--sweep scale=1,10,100 --sweep clients=1..64`). The first given is the outer one, except
//! that scale is always outer (its steps reload the tables: once per scale, not once per step);
//! every value of the inner one runs at each outer value. A third `--sweep`, the same parameter
//! twice, or two parameters in one `--sweep` is a usage error.
//!
//! The warm-up left out of each step's figures defaults to a fifth of -T, at most 5 s (the
//! first second holds each new backend's parse and plan and cold caches; longer steps settle
//! within a few seconds), and to 0 for steps of -t transactions (their intervals are per
//! second too, but a step of a fixed count has no known length to take a fraction of).

use anyhow::Result;

pub use crate::choices::sweep::{Axis, Param, SweepSpec};
use crate::console::Failure;

fn bad(why: impl Into<String>) -> anyhow::Error {
    Failure::usage(
        format!("--sweep: {}", why.into()),
        "e.g. --sweep clients=1..64, --sweep clients=8,16,32, --sweep rate=500,1000, \
         --sweep scale=1,10,100, --sweep set:work_mem=4MB,64MB",
    )
}

/// `a..b` doubling from `a` up to `b` (included), or a comma list.
fn numbers(spec: &str, what: &str, integer: bool) -> Result<Vec<f64>> {
    counts(spec, what, integer, false)
}

/// [`numbers`], 0 allowed when `zero` (a range from 0 goes on doubling from 1: `0..4` is 0,
/// 1, 2, 4).
fn counts(spec: &str, what: &str, integer: bool, zero: bool) -> Result<Vec<f64>> {
    let num = |s: &str| -> Result<f64> {
        let v: f64 = s
            .trim()
            .parse()
            .map_err(|_| bad(format!("{what} value {s:?} is not a number")))?;
        let low = match zero {
            true => v >= 0.0,
            false => v > 0.0,
        };
        if !(low && v.is_finite()) || (integer && v.fract() != 0.0) {
            return Err(bad(format!(
                "{what} values must be {}{}, got {s:?}",
                if zero { "0 or more" } else { "positive" },
                if integer { " integers" } else { "" }
            )));
        }
        Ok(v)
    };
    let vals = match spec.split_once("..") {
        Some((a, b)) => {
            let (a, b) = (num(a)?, num(b)?);
            if b < a {
                return Err(bad(format!("{what}={spec}: the range runs downwards")));
            }
            let mut v = vec![a];
            if a == 0.0 && b >= 1.0 {
                v.push(1.0);
            }
            while v[v.len() - 1] > 0.0 && v[v.len() - 1] * 2.0 <= b {
                let next = v[v.len() - 1] * 2.0;
                v.push(next);
            }
            if v[v.len() - 1] < b {
                v.push(b);
            }
            v
        }
        None => spec.split(',').map(num).collect::<Result<Vec<_>>>()?,
    };
    if vals.len() > 64 {
        return Err(bad(format!(
            "{what}={spec} makes {} steps; 64 at most",
            vals.len()
        )));
    }
    Ok(vals)
}

/// Read the `--sweep`s (one, or two for a matrix) and `--warmup`; `step_s` is -T (None for a
/// run of -t transactions).
pub fn parse(sweeps: &[String], warmup: Option<f64>, step_s: Option<u64>) -> Result<SweepSpec> {
    let mut axes = (sweeps.iter())
        .map(|s| axis(s))
        .collect::<Result<Vec<Axis>>>()?;
    if axes.len() > 2 {
        return Err(bad(format!(
            "{} sweeps given; one, or two for a matrix (e.g. --sweep scale=1,10 --sweep \
             clients=1..16)",
            axes.len()
        )));
    }
    if axes.len() == 2 && axes[0].param == axes[1].param {
        return Err(bad(format!(
            "{} is swept twice: a matrix varies two parameters",
            axes[0].param.name()
        )));
    }
    if axes.len() == 2 && axes[1].param == Param::Scale {
        // Scale outside: the tables are loaded once per scale (module notes).
        axes.swap(0, 1);
    }
    if axes.len() == 2 && axes[0].values.len() * axes[1].values.len() > 64 {
        return Err(bad(format!(
            "the matrix makes {} steps; 64 at most",
            axes[0].values.len() * axes[1].values.len()
        )));
    }
    let warmup_s = match (warmup, step_s) {
        (Some(w), t) => check_warmup(w, t, "each step")?,
        (None, Some(t)) => (t as f64 / 5.0).floor().min(5.0),
        (None, None) => 0.0,
    };
    let Some(inner) = axes.pop() else {
        return Err(bad("no parameter given"));
    };
    Ok(SweepSpec {
        param: inner.param,
        values: inner.values,
        outer: axes.pop(),
        warmup_s,
    })
}

/// One `--sweep PARAM=VALUES`.
fn axis(sweep: &str) -> Result<Axis> {
    let Some((name, values)) = sweep.split_once('=') else {
        return Err(bad(format!("{sweep:?} has no '='")));
    };
    let name = name.trim();
    if values.trim().is_empty() {
        return Err(bad(format!("{name} has no values")));
    }
    let fmt = |v: f64| {
        if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            v.to_string()
        }
    };
    let (param, values) = match name {
        "clients" | "c" => (
            Param::Clients,
            numbers(values, "clients", true)?
                .into_iter()
                .map(fmt)
                .collect(),
        ),
        "scale" | "s" => {
            if values.contains('=') {
                return Err(bad(format!(
                    "{sweep:?} names two parameters: give each its own --sweep (a matrix: \
                     --sweep scale=1,10 --sweep clients=1..16)"
                )));
            }
            (
                Param::Scale,
                numbers(values, "scale", true)?
                    .into_iter()
                    .map(fmt)
                    .collect(),
            )
        }
        "analytic-clients" | "analytic" => (
            Param::AnalyticClients,
            counts(values, "analytic-clients", true, true)?
                .into_iter()
                .map(fmt)
                .collect(),
        ),
        "rate" | "R" => (
            Param::Rate,
            numbers(values, "rate", false)?
                .into_iter()
                .map(fmt)
                .collect(),
        ),
        n => match n.strip_prefix("set:") {
            Some(s)
                if !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') =>
            {
                let vals: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
                if vals.iter().any(String::is_empty) {
                    return Err(bad(format!("set:{s} has an empty value")));
                }
                (Param::Setting(s.to_ascii_lowercase()), vals)
            }
            Some(s) => return Err(bad(format!("set:{s:?} is not a setting's name"))),
            None => {
                return Err(bad(format!(
                    "cannot sweep {n:?}: give clients, rate, scale, set:NAME or \
                     analytic-clients (run ch)"
                )))
            }
        },
    };
    Ok(Axis { param, values })
}

/// `--warmup W` checked against -T (`run_s`; None for a run of -t transactions): 0 or more
/// seconds, and less than -T, else nothing of `what` would be measured.
pub fn check_warmup(w: f64, run_s: Option<u64>, what: &str) -> Result<f64> {
    if !(w >= 0.0 && w.is_finite()) {
        return Err(Failure::usage(
            format!("--warmup must be 0 or more seconds, got {w}"),
            "",
        ));
    }
    match run_s {
        Some(t) if w >= t as f64 => Err(Failure::usage(
            format!("--warmup {w} leaves nothing of {what} (-T {t})"),
            "give a -T longer than --warmup",
        )),
        _ => Ok(w),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_double_and_keep_their_end() {
        let s = parse(&["clients=1..64".into()], None, Some(10)).unwrap();
        assert_eq!(s.values, ["1", "2", "4", "8", "16", "32", "64"]);
        assert_eq!(s.warmup_s, 2.0);
        let s = parse(&["clients=3..20".into()], Some(0.0), Some(10)).unwrap();
        assert_eq!(s.values, ["3", "6", "12", "20"]);
        assert_eq!(s.max_clients(8), 20);
        // Analytic clients start at none (TPC-C alone); clients never do.
        let s = parse(&["analytic-clients=0,1,2".into()], None, Some(10)).unwrap();
        assert_eq!(s.param, Param::AnalyticClients);
        assert_eq!(s.values, ["0", "1", "2"]);
        // They come on top of the run's clients.
        assert_eq!(s.max_clients(8), 10);
        let s = parse(&["analytic=0..4".into()], None, Some(10)).unwrap();
        assert_eq!(s.values, ["0", "1", "2", "4"]);
        assert!(parse(&["clients=0,1".into()], None, Some(10)).is_err());
        assert!(parse(&["analytic-clients=-1".into()], None, Some(10)).is_err());
        let s = parse(&["rate=100,250.5".into()], None, None).unwrap();
        assert_eq!(
            (s.param, s.values, s.warmup_s),
            (Param::Rate, vec!["100".into(), "250.5".into()], 0.0)
        );
        let s = parse(&["scale=1..10".into()], None, Some(10)).unwrap();
        assert_eq!(
            (s.param, s.values),
            (
                Param::Scale,
                vec!["1".into(), "2".into(), "4".into(), "8".into(), "10".into()]
            )
        );
        let s = parse(&["set:work_mem=4MB, 64MB".into()], None, Some(30)).unwrap();
        assert_eq!(s.parameter(), "set:work_mem");
        assert_eq!(s.values, ["4MB", "64MB"]);
        assert_eq!(s.warmup_s, 5.0);
    }

    #[test]
    fn a_matrix_puts_scale_outside_whichever_comes_first() {
        let two = |a: &str, b: &str| parse(&[a.into(), b.into()], None, Some(10));
        let s = two("clients=1,4", "scale=1,2").unwrap();
        assert_eq!(
            (s.param.clone(), s.values.clone()),
            (Param::Clients, vec!["1".into(), "4".into()])
        );
        let o = s.outer.clone().unwrap();
        assert_eq!(
            (o.param, o.values),
            (Param::Scale, vec!["1".into(), "2".into()])
        );
        assert_eq!((s.steps(), s.max_clients(8)), (4, 4));
        // Otherwise the first given is outside.
        let s = two("rate=100,200", "clients=2..8").unwrap();
        assert_eq!(s.outer.unwrap().param, Param::Rate);
        assert_eq!(s.values, ["2", "4", "8"]);
        for (a, b, says) in [
            ("clients=1,2", "clients=4", "swept twice"),
            (
                "scale=1..64",
                "clients=1..1024",
                "the matrix makes 77 steps",
            ),
        ] {
            let e = two(a, b).unwrap_err().to_string();
            assert!(e.contains(says), "{a} {b}: {e}");
        }
        let e = parse(&["c=1".into(), "R=1".into(), "s=1".into()], None, None).unwrap_err();
        assert!(e.to_string().contains("3 sweeps given"), "{e}");
    }

    #[test]
    fn bad_sweeps_name_the_flag() {
        for (arg, warmup, says) in [
            ("clients", None, "has no '='"),
            ("clients=", None, "has no values"),
            ("clients=0,2", None, "positive integers"),
            ("clients=1.5", None, "positive integers"),
            ("clients=64..1", None, "downwards"),
            ("threads=1,2", None, "cannot sweep"),
            ("set:work mem=1", None, "not a setting's name"),
            ("set:work_mem=1,,2", None, "empty value"),
            ("rate=1..1e30", None, "64 at most"),
            ("clients=1,2", Some(10.0), "--warmup 10 leaves nothing"),
            ("scale=0,1", None, "positive integers"),
            ("scale=1,2;clients=2,8", None, "names two parameters"),
            ("scale=1,2 clients=2,8", None, "names two parameters"),
            ("scale=1.5", None, "positive integers"),
        ] {
            let e = parse(&[arg.to_string()], warmup, Some(10))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{arg}: {e}");
            assert!(
                e.contains("--sweep") || e.contains("--warmup"),
                "{arg}: {e}"
            );
        }
    }
}
