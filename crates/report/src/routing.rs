//! The routing check's verdicts (`stampede run` on sharded tables): for each distinct statement
//! of the workload, how many shards its plan touches. Written by the binary before the run,
//! carried in the result as `routing`.

use serde::{Deserialize, Serialize};

/// One distinct statement of the workload, as EXPLAIN placed it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Routing {
    /// The statement as the workload sends it (`:name` for its variables).
    pub statement: String,
    /// Shards the plan touches (fdw: foreign servers after pruning; Citus: task count).
    pub shards_touched: u32,
    /// Shards the statement's tables have; 0 when the plan does not say.
    pub shards_total: u32,
    pub single_shard: bool,
    /// What the verdict rests on ("fdw: partitions after pruning", "citus: Task Count", ...).
    pub basis: String,
}
