//! PostgreSQL: the database (`pg_database_size`), its tables and their indexes
//! (`pg_table_size`: the heap with TOAST, free-space and visibility maps; `pg_indexes_size`),
//! a partitioned table counted as the sum of its leaf partitions (`pg_partition_tree`,
//! PostgreSQL 12+, which has no rows for a table that is not partitioned); PostgreSQL's "Database Object Management Functions" (9.27.7). Then, when the
//! database is sharded, the layout's own reading: the catalog says which (the same detection as
//! the routing check: the citus extension, Limitless' settings, foreign partitions).

use measure::sizes::Sizes;
use sut::{Session, Target};

use super::{citus, fdw, limitless, note, text};

/// The user tables, not partitions of another (counted in their parent), nor temporary,
/// with their data and index bytes summed over their leaves. Names as `regclass` prints them
/// (schema-qualified when not on the search path), the form the sharded layouts' views use too.
const TABLES: &str = "select c.oid::regclass::text, \
       case when c.relkind = 'p' then \
         coalesce((select sum(pg_table_size(p.relid)) from pg_partition_tree(c.oid) p \
                   where p.isleaf), 0) else pg_table_size(c.oid) end::bigint, \
       case when c.relkind = 'p' then \
         coalesce((select sum(pg_indexes_size(p.relid)) from pg_partition_tree(c.oid) p \
                   where p.isleaf), 0) else pg_indexes_size(c.oid) end::bigint \
     from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace \
     where c.relkind in ('r', 'p') and not c.relispartition and c.relpersistence <> 't' \
       and n.nspname not in ('pg_catalog', 'information_schema') \
       and n.nspname !~ '^pg_toast' and n.nspname !~ '^pg_temp' \
       and n.nspname not in ('citus', 'rds_aurora')";

/// How the database's tables are sharded, as its catalog says: the citus extension, Limitless'
/// settings, foreign partitions (the FDW layout). One probe for the sizes and for stampede's
/// routing check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Plain,
    Fdw,
    Citus,
    Limitless,
}

impl Layout {
    /// Its name in the result (`measure::sizes::Sizes::layout`).
    pub fn name(self) -> &'static str {
        match self {
            Layout::Plain => "plain",
            Layout::Fdw => "fdw",
            Layout::Citus => "citus",
            Layout::Limitless => "limitless",
        }
    }
}

/// The catalog's answer to "which layout": the citus extension, Limitless' settings, foreign
/// partitions.
const LAYOUT: &str =
    "select exists (select 1 from pg_catalog.pg_extension where extname = 'citus'), \
     exists (select 1 from pg_catalog.pg_settings \
             where name = 'rds_aurora.limitless_create_table_mode'), \
     exists (select 1 from pg_catalog.pg_foreign_table ft \
             join pg_catalog.pg_inherits i on i.inhrelid = ft.ftrelid)";

/// The database's [`Layout`] (outside a transaction), Citus and Limitless first (either may
/// also have foreign tables).
pub async fn layout(s: &mut Session) -> Result<Layout, sut::Error> {
    Ok(layout_of(&s.simple_query(LAYOUT).await?))
}

fn layout_of(rows: &[Vec<Option<String>>]) -> Layout {
    let yes = |i| rows.first().is_some_and(|r| text(r, i) == "t");
    if yes(0) {
        Layout::Citus
    } else if yes(1) {
        Layout::Limitless
    } else if yes(2) {
        Layout::Fdw
    } else {
        Layout::Plain
    }
}

pub(super) async fn read(s: &mut Session, target: &Target, sizes: &mut Sizes) {
    // Inside the reading's transaction: under its savepoint.
    let layout = match super::query(s, LAYOUT).await {
        Ok(rows) => layout_of(&rows),
        Err(e) => {
            note(sizes, "the layout (catalog)", &e);
            Layout::Plain
        }
    };
    sizes.layout = layout.name().to_string();
    super::read_local(
        s,
        sizes,
        ("select pg_database_size(current_database())", TABLES),
        (
            "the database's size (pg_database_size)",
            "the tables' sizes (pg_table_size)",
        ),
    )
    .await;
    match layout {
        Layout::Fdw => fdw::read(s, target, sizes).await,
        Layout::Citus => citus::read(s, sizes).await,
        Layout::Limitless => limitless::read(s, sizes).await,
        Layout::Plain => {}
    }
    super::largest_first(sizes);
}
