//! MySQL and MariaDB: the schema's base tables from `information_schema.TABLES`
//! (`DATA_LENGTH`: the clustered index, which is InnoDB's table; `INDEX_LENGTH`: the secondary
//! indexes), and the schema's total from the same view (MySQL 8.0 Reference Manual, 28.3.38
//! "The INFORMATION_SCHEMA TABLES Table"; MariaDB's "Information Schema TABLES Table").
//!
//! InnoDB fills these columns from its persistent statistics, not from the files: MySQL 8.0
//! also caches them for `information_schema_stats_expiry` seconds (a day by default), which the
//! reading's session sets to 0 so that it reads the statistics as they are now; MariaDB reads
//! them from the engine each time. Either way a table grows here when InnoDB recalculates its
//! statistics (`innodb_stats_auto_recalc`: after a tenth of its rows changed), not with each row.

use measure::sizes::Sizes;
use sut::Session;

const TABLES: &str = "SELECT TABLE_NAME, DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES \
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'";

const DATABASE: &str = "SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES \
     WHERE TABLE_SCHEMA = DATABASE()";

pub(super) async fn read(s: &mut Session, sizes: &mut Sizes) {
    sizes.layout = "mysql".to_string();
    // MySQL 8.0's cache of the statistics; MariaDB has no such variable (and no cache).
    let _ = s
        .simple_query("SET SESSION information_schema_stats_expiry = 0")
        .await;
    super::read_local(
        s,
        sizes,
        (DATABASE, TABLES),
        (
            "the schema's size (information_schema.TABLES)",
            "the tables' sizes (information_schema.TABLES)",
        ),
    )
    .await;
    super::largest_first(sizes);
}
