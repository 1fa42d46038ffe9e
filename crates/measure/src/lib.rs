//! # measure: what a run observed, as numbers
//!
//! Owns latency histograms ([`Histogram`]), the per-interval record of a run ([`Interval`], one
//! [`TxnStats`] per transaction type, one [`StmtStats`] per statement for `-r`), the [`Recorder`]
//! that the engine writes into on the hot path, and the [`Summary`] statistics every output reads;
//! and, in [`server`], what was observed on the server during a run ([`ServerMetrics`], filled by
//! `observe`, rendered by `report`); and, in [`ledger`], the statements a run's sessions sent by
//! kind, counted on the wire, and what a workload claims its transactions did; and, in [`sizes`],
//! the database's, tables' and shards' sizes read before and after a run.
//!
//! Must not touch: async runtimes, database drivers, files, the terminal. A saved `run.json` holds
//! everything here losslessly (histograms are HDR V2 + DEFLATE + base64), so any report can be
//! re-rendered from it.
//!
//! Why one recorder per engine *thread* rather than per client: an HDR histogram with 3 significant
//! digits over 1 us .. 1 h costs 184 KiB while recording, and stampede must hold 10,000 clients per
//! process. Clients on one thread share that thread's recorder without locks (the thread runs a
//! current-thread runtime); on every interval tick the engine takes a packed copy of it (a few KiB:
//! see [`Histogram`]) and merges the copies in one place.

pub mod attempts;
mod histogram;
pub mod ledger;
mod recorder;
pub mod replication;
pub mod server;
pub mod sizes;
mod summary;

pub use histogram::{DecodeError, Histogram};
pub use recorder::{FailureKind, Interval, Recorder, StmtStats, TxnStats};
pub use server::ServerMetrics;
pub use summary::Summary;
