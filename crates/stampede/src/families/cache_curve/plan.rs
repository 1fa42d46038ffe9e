//! The plan of a cache curve (`stampede run cache-curve`), decided before any I/O: the table
//! sizes (`--sizes`, or chosen from the cache once it is known), the scans per size
//! (`--scans`), and the point reads' clients (`-c`, default 4) and seconds per size (`-T`,
//! default 1).
//!
//! The run is no engine run: it alternates growing a table with measuring it, so stampede's
//! usual defaults (8 clients for 10 s) do not apply; `-c` and `-T` keep their meaning for the
//! point reads of each size. On the embedded server the cache is made small (`shared_buffers`
//! or `innodb_buffer_pool_size` 16 MB, unless `--set` gives it) so that the curve, which must go
//! to several times the cache, takes seconds.

use std::time::Duration;

use anyhow::Result;
use engine::{RunSpec, Stop};

use crate::choices::Outputs;
use crate::console::Failure;
use crate::families::planning;
use crate::families::RunArgs;
use crate::families::{Asked, Job, Planner, Sequence};
use crate::targeting;
use crate::targeting::TargetArgs;
use planning::{parse_seed, positive};

/// The embedded server's cache for a curve (module notes).
pub const EMBEDDED_CACHE: &str = "16MB";

/// Sizes as multiples of the cache when `--sizes` is not given: from an eighth to four times
/// it, in quarters around the cache itself so the knee is placed within a quarter of it.
pub const AUTO_FRACTIONS: &[f64] = &[0.125, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0];

/// The smallest size accepted: a few pages.
const MIN_SIZE: u64 = 64 << 10;

macro_rules! bail {
    ($($t:tt)*) => { return Err(Failure::usage(format!($($t)*), "")) };
}

/// Everything a cache curve decided from its command line.
#[derive(Clone, Debug)]
pub struct CacheCurveJob {
    /// `--sizes`, smallest first; `None`: [`AUTO_FRACTIONS`] of the cache.
    pub sizes: Option<Vec<u64>>,
    /// Measured scans per size (after one warm-up scan).
    pub scans: u32,
    /// Point-read clients and seconds per size.
    pub clients: u32,
    pub point_read: Duration,
    pub seed: u64,
}

/// `8MB`, `512kB`, `1.5GB`, `4096` (bytes): PostgreSQL's units, powers of 1024.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        "t" | "tb" => 1 << 40,
        _ => return None,
    };
    (n.is_finite() && n >= 0.0).then_some((n * mult as f64) as u64)
}

/// `--sizes A,B,C`: each a size, at least 64 kB, strictly increasing (the table only grows).
pub fn parse_sizes(raw: &str) -> Result<Vec<u64>> {
    let mut out: Vec<u64> = Vec::new();
    for part in raw.split(',') {
        let Some(b) = parse_size(part) else {
            bail!("--sizes: {part:?} is not a size (e.g. 8MB, 512kB, 1GB)");
        };
        if b < MIN_SIZE {
            bail!("--sizes: {part:?} is smaller than 64kB");
        }
        if out.last().is_some_and(|l| *l >= b) {
            bail!(
                "--sizes: {part:?} is not larger than the size before it; the table only grows, \
                 so give the sizes smallest first"
            );
        }
        out.push(b);
    }
    Ok(out)
}

/// The sizes to build: the ones given, or [`AUTO_FRACTIONS`] of `cache_bytes`, rounded to
/// whole pages.
pub fn sizes_for(job: &CacheCurveJob, cache_bytes: u64, page_bytes: u64) -> Vec<u64> {
    match &job.sizes {
        Some(s) => s.clone(),
        None => {
            let page = page_bytes.max(1);
            AUTO_FRACTIONS
                .iter()
                .map(|f| ((cache_bytes as f64 * f) as u64 / page).max(8) * page)
                .collect()
        }
    }
}

pub(crate) fn plan(a: &mut RunArgs) -> Result<(CacheCurveJob, RunSpec)> {
    planning::not_a_script(a, "cache-curve", Some("its sizes are --sizes"))?;
    if a.transactions.is_some() || a.rate.is_some() || a.connect || a.log {
        bail!(
            "-t, -R, -C and --log do not apply to cache-curve: its point reads run a closed loop \
             for -T seconds per size"
        );
    }
    if a.fault_at.is_some() || a.read_from.is_some() {
        bail!("--fault-at and --read-from do not apply to cache-curve");
    }
    if !a.sweep.is_empty() {
        // A cache curve is itself a sweep (over table sizes: --sizes).
        bail!("--sweep does not apply to cache-curve: it sweeps table sizes itself (--sizes)");
    }
    let sizes = match a.cache_curve.sizes.as_deref() {
        Some(raw) => Some(parse_sizes(raw)?),
        None => None,
    };
    let scans = a.cache_curve.scans.unwrap_or(3);
    if scans == 0 {
        bail!("--scans must be at least 1");
    }
    let clients = a.clients.unwrap_or(4);
    if clients == 0 {
        bail!("-c/--client must be at least 1");
    }
    let secs = match a.time {
        Some(0) => bail!("-T/--time must be at least 1"),
        Some(t) => t as f64,
        None => 1.0,
    };
    positive(Some(secs), "-T/--time")?;
    let point_read = Duration::from_secs_f64(secs);
    let seed = parse_seed(a.random_seed.as_deref())?;
    // The embedded server's cache, small unless given (module notes).
    let given = |name: &str| {
        a.target.settings.iter().any(|kv| {
            kv.split_once('=')
                .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case(name))
        })
    };
    if targeting::embedded_mysql_database(&a.target).is_some() {
        if !given("innodb_buffer_pool_size") {
            (a.target.settings).push(format!("innodb_buffer_pool_size={EMBEDDED_CACHE}"));
        }
    } else if targeting::wants_embedded(&a.target) && !given("shared_buffers") {
        (a.target.settings).push(format!("shared_buffers={EMBEDDED_CACHE}"));
    }
    let spec = RunSpec {
        seed,
        io: a.io.mode(),
        spread: a.spread.spread(),
        ..RunSpec::new(
            clients,
            1,
            Stop::Duration(point_read),
            sut::QueryMode::Prepared,
        )
    };
    Ok((
        CacheCurveJob {
            sizes,
            scans,
            clients,
            point_read,
            seed,
        },
        spec,
    ))
}

/// This family's entry in the registry (`workloads::Family::planner`).
pub(crate) struct Step;

impl Planner for Step {
    fn takes_run_defaults(&self) -> bool {
        false
    }
    fn plan(self: Box<Self>, a: &mut RunArgs, _: &Asked) -> Result<(Job, RunSpec)> {
        let (job, spec) = plan(a)?;
        Ok((Job::Own(Box::new(job)), spec))
    }
}

impl Sequence for CacheCurveJob {
    fn execute(self: Box<Self>, target: TargetArgs, out: Outputs) -> Result<i32> {
        super::execute(target, *self, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_postgresql_writes_them() {
        assert_eq!(parse_size("8MB"), Some(8 << 20));
        assert_eq!(parse_size(" 512kB"), Some(512 << 10));
        assert_eq!(parse_size("1.5GB"), Some(3 << 29));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("8 mb"), Some(8 << 20));
        assert_eq!(parse_size("8XB"), None);
        assert_eq!(parse_size("MB"), None);
        assert_eq!(
            parse_sizes("2MB,4MB,8MB").unwrap(),
            vec![2 << 20, 4 << 20, 8 << 20]
        );
    }

    #[test]
    fn bad_sizes_are_refused_naming_the_flag() {
        for (raw, why) in [
            ("8MB,4MB", "smallest first"),
            ("8MB,8MB", "smallest first"),
            ("8MB,lots", "not a size"),
            ("1kB", "smaller than 64kB"),
            ("", "not a size"),
        ] {
            let e = format!("{:#}", parse_sizes(raw).unwrap_err());
            assert!(e.contains("--sizes") && e.contains(why), "{raw}: {e}");
        }
    }

    #[test]
    fn automatic_sizes_span_an_eighth_to_four_times_the_cache_in_whole_pages() {
        let job = CacheCurveJob {
            sizes: None,
            scans: 3,
            clients: 4,
            point_read: Duration::from_secs(1),
            seed: 1,
        };
        let s = sizes_for(&job, 16 << 20, 8192);
        assert_eq!(s.first(), Some(&(2 << 20)));
        assert_eq!(s.last(), Some(&(64 << 20)));
        assert!(s.contains(&(16 << 20)));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert!(s.iter().all(|b| b % 8192 == 0));
    }
}
