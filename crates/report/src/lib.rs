//! # report: results for people and machines
//!
//! STUB: being written.
