//! TPC-C (revision 5.11): the five transactions of clause 2 over the nine tables of clause 1.
//!
//! [`spec`] holds the specification's numbers and random functions, shared with the loader.

pub mod spec;
