//! The run options of sharded targets: the shard-key workload's cross-shard share and the
//! routing check's verdict (`commands::routing`).

use clap::Args;

const SHARDING: &str = "Sharded targets";

#[derive(Args, Debug, Default, Clone)]
pub struct ShardingArgs {
    /// tpcb-sharded: percent of transactions whose account is in another branch (usually on
    /// another shard; TPC-B's remote accounts are 15). Default 0: every transaction on one shard.
    #[arg(long = "cross-shard", value_name = "PCT", help_heading = SHARDING)]
    pub cross_shard: Option<u32>,
    /// Refuse to run when the routing check finds a statement that is not single-shard (it
    /// EXPLAINs each distinct statement before the run; it always runs on sharded tables).
    #[arg(long = "require-single-shard", help_heading = SHARDING)]
    pub require_single_shard: bool,
}
