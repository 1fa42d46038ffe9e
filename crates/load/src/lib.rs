//! # load: schemas and data
//!
//! Owns creating a workload's tables, generating its rows and loading them through several
//! connections in parallel (COPY), building keys and indexes afterwards, and resetting a database
//! between runs. Generated data is a pure function of (table, row range), so any loader
//! connection can produce any batch.
//!
//! Must not touch: argv, output formatting (progress is reported through a callback).
//!
//! STUB: being written.
