//! `stampede failover [TARGET] [options]`: `stampede run failover-probe` with the probe's
//! defaults (4 clients, 60 s, 100 transactions per second, half writes) and the target given as
//! the positional argument. A PostgreSQL target with several hosts and no
//! `target_session_attrs` is given `read-write`, so clients reconnect to whichever host takes
//! writes (libpq's semantics), which is what a failover probe means; say `any` to override.

use anyhow::Result;

use crate::console::Failure;
use crate::families::RunArgs;
use crate::plan::{Frontend, Plan};

/// Clients when `-c` is not given: enough to see each one move, few enough for any server.
pub const DEFAULT_CLIENTS: u32 = 4;
/// Seconds when `-T` is not given.
pub const DEFAULT_TIME_S: u64 = 60;

pub fn run(mut args: RunArgs) -> Result<i32> {
    if args.list.is_some() || args.show_script.is_some() {
        return Err(Failure::usage(
            "--list and --show-script belong to `stampede run`",
            "`stampede run --list`",
        ));
    }
    if args.positional_dbname.is_some() {
        return Err(Failure::usage(
            "`stampede failover` takes one positional argument, the target",
            "give the target as a conninfo or URL, or with -h/-p/-U/-d",
        ));
    }
    if let Some(t) = args.workload.take() {
        if args.target.dbname.is_some() {
            return Err(Failure::usage(
                "the target is given twice (a positional TARGET and -d)",
                "give it once",
            ));
        }
        args.target.dbname = Some(t);
    }
    args.workload = Some("failover-probe".into());
    if args.clients.is_none() {
        args.clients = Some(DEFAULT_CLIENTS);
    }
    if args.time.is_none() {
        args.time = Some(DEFAULT_TIME_S);
    }
    read_write_by_default(&mut args);
    let plan = Plan::from_run(args, Frontend::Native)?;
    crate::run::execute(plan)
}

/// Several hosts without `target_session_attrs`: `read-write` (module notes).
fn read_write_by_default(args: &mut RunArgs) {
    let several = |v: &Option<String>| v.as_deref().is_some_and(|h| h.contains(','));
    let d = args.target.dbname.clone().unwrap_or_default();
    let mentions = d.contains("target_session_attrs");
    let url_hosts = (d.starts_with("postgres://") || d.starts_with("postgresql://"))
        && d.split('/').nth(2).is_some_and(|h| h.contains(','));
    let kv_hosts = d.contains('=')
        && d.split_whitespace()
            .any(|kv| kv.starts_with("host=") && kv.contains(','));
    if mentions || !(several(&args.target.host) || url_hosts || kv_hosts) {
        return;
    }
    args.target.dbname = Some(if d.is_empty() {
        "target_session_attrs=read-write".into()
    } else if d.contains("://") {
        let sep = if d.contains('?') { '&' } else { '?' };
        format!("{d}{sep}target_session_attrs=read-write")
    } else if d.contains('=') {
        format!("{d} target_session_attrs=read-write")
    } else {
        format!("dbname={d} target_session_attrs=read-write")
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(host: Option<&str>, d: Option<&str>) -> Option<String> {
        let mut a = RunArgs::default();
        a.target.host = host.map(str::to_string);
        a.target.dbname = d.map(str::to_string);
        read_write_by_default(&mut a);
        a.target.dbname
    }

    #[test]
    fn several_hosts_reconnect_to_the_writer_unless_said_otherwise() {
        assert_eq!(
            with(Some("a,b"), None).as_deref(),
            Some("target_session_attrs=read-write")
        );
        assert_eq!(
            with(Some("a,b"), Some("bench")).as_deref(),
            Some("dbname=bench target_session_attrs=read-write")
        );
        assert_eq!(
            with(None, Some("postgresql://a:1,b:2/db")).as_deref(),
            Some("postgresql://a:1,b:2/db?target_session_attrs=read-write")
        );
        assert_eq!(
            with(None, Some("host=a,b port=1,2 dbname=x")).as_deref(),
            Some("host=a,b port=1,2 dbname=x target_session_attrs=read-write")
        );
        // Said otherwise, or one host: as given.
        assert_eq!(
            with(Some("a,b"), Some("dbname=x target_session_attrs=any")).as_deref(),
            Some("dbname=x target_session_attrs=any")
        );
        assert_eq!(with(Some("a"), Some("x")).as_deref(), Some("x"));
        assert_eq!(with(None, None), None);
    }
}
