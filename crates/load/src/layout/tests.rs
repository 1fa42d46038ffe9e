use super::*;

fn opts(layout: Layout, shape: Shape) -> ShardedOptions {
    ShardedOptions {
        layout,
        shape,
        shards: Vec::new(),
        reference: Vec::new(),
        jobs: 2,
        no_vacuum: false,
        cancel: Arc::new(AtomicBool::new(false)),
    }
}

fn shard(conninfo: &str) -> ConnConfig {
    ConnConfig::resolve(
        &sut::ConnFlags {
            dbname: Some(conninfo.into()),
            ..Default::default()
        },
        &|_| None,
    )
    .unwrap()
}

#[test]
fn slices_cover_every_key_once() {
    assert_eq!(slices(10, 3), vec![(1, 3), (4, 6), (7, 10)]);
    assert_eq!(slices(2, 8), vec![(1, 1), (2, 2)]);
    assert_eq!(slices(1, 1), vec![(1, 1)]);
}

#[test]
fn citus_distributes_tpcb_on_bid_collocated_with_branches() {
    let text = plan(&opts(Layout::Citus, Shape::Tpcb { scale: 4 })).to_string();
    assert!(text.contains("select create_distributed_table('pgbench_branches', 'bid');"));
    for t in ["pgbench_tellers", "pgbench_accounts", "pgbench_history"] {
        assert!(
            text.contains(&format!(
                "select create_distributed_table('{t}', 'bid', colocate_with => 'pgbench_branches');"
            )),
            "{text}"
        );
    }
    assert!(text.contains("alter table pgbench_accounts add primary key (aid, bid);"));
    assert!(!text.contains("freeze") && !text.contains("fillfactor"));
    // Two loader connections: two slices of branches.
    assert!(text.contains("generate_series(1, 2) b,") && text.contains("generate_series(3, 4) b,"));
}

#[test]
fn a_reference_table_is_made_one_and_the_rest_collocate_with_the_first_distributed() {
    let mut o = opts(Layout::Citus, Shape::Tpcb { scale: 1 });
    o.reference = vec!["pgbench_branches".into()];
    let text = plan(&o).to_string();
    assert!(text.contains("select create_reference_table('pgbench_branches');"));
    assert!(text.contains("select create_distributed_table('pgbench_tellers', 'bid');"));
    assert!(text.contains(
        "create_distributed_table('pgbench_accounts', 'bid', colocate_with => 'pgbench_tellers')"
    ));
    let mut l = o.clone();
    l.layout = Layout::Limitless;
    let text = plan(&l).to_string();
    let r = text
        .find("limitless_create_table_mode = 'reference'")
        .unwrap();
    let b = text.find("create table pgbench_branches(").unwrap();
    let s = text
        .find("limitless_create_table_mode = 'sharded'")
        .unwrap();
    assert!(r < b && b < s, "{text}");
    o.reference = vec!["pgbench_accounts".into()];
    assert!(o
        .validate()
        .unwrap_err()
        .contains("pgbench_branches or pgbench_tellers"));
}

#[test]
fn limitless_follows_seed_000s_create_tables_script() {
    let text = plan(&opts(Layout::Limitless, Shape::Tpcb { scale: 1 })).to_string();
    let order = [
        "set rds_aurora.limitless_create_table_mode = 'sharded';",
        "set rds_aurora.limitless_create_table_shard_key = '{\"bid\"}';",
        "create table pgbench_branches(",
        "set rds_aurora.limitless_create_table_collocate_with = 'pgbench_branches';",
        "create table pgbench_tellers(",
        "create table pgbench_accounts(",
        "create table pgbench_history(",
        "alter table pgbench_tellers add primary key (tid, bid);",
    ];
    let mut at = 0;
    for o in order {
        let i = text[at..]
            .find(o)
            .unwrap_or_else(|| panic!("{o} after {at}:\n{text}"));
        at += i;
    }
    assert!(!text.contains("partition by") && !text.contains("fillfactor"));
    let text = plan(&opts(
        Layout::Limitless,
        Shape::Oltp {
            tables: 2,
            table_size: 100,
        },
    ))
    .to_string();
    assert!(text.contains("limitless_create_table_shard_key = '{\"id\"}'"));
    assert!(text.contains("limitless_create_table_collocate_with = 'sbtest1'"));
}

#[test]
fn fdw_partitions_by_hash_over_the_shards_and_hides_passwords() {
    let mut o = opts(Layout::Fdw, Shape::Tpcb { scale: 3 });
    o.shards = vec![
        shard("host=/tmp/a port=5433 dbname=d1 user=u password=s3cret"),
        shard("host=b port=5434 dbname=d2 user=u"),
    ];
    o.validate().unwrap();
    let text = plan(&o).to_string();
    assert!(text.contains("create table pgbench_accounts(aid int not null, bid int, abalance int, filler char(84)) partition by hash (bid);"));
    assert!(text.contains("create foreign table pgbench_accounts_shard1 partition of pgbench_accounts for values with (modulus 2, remainder 1) server stampede_shard1 options (table_name 'pgbench_accounts_shard1');"));
    assert!(text.contains("create server stampede_shard0 foreign data wrapper postgres_fdw options (host '/tmp/a', port '5433', dbname 'd1');"));
    assert!(!text.contains("s3cret"), "{text}");
    assert!(text.contains("password '********'"));
    assert!(plan_with(&o, true).phases[1].steps[0]
        .sql
        .iter()
        .any(|s| s.contains("s3cret")));
    assert!(text.contains("-- on shard 1 (host=b port=5434 dbname=d2 user=u)"));
    assert!(
        text.contains("satisfies_hash_partition('pg_temp.stampede_hash'::regclass, 2, 1, b::int)")
    );
    o.shards.clear();
    assert!(o.validate().unwrap_err().contains("--shard"));
}
