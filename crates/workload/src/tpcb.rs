//! TPC-B as pgbench defines it: the builtins `tpcb-like`, `simple-update`, `select-only`, with
//! pgbench's exact statements and random ranges (pgbench.c, `builtin_script[]`), and the TPC-B
//! consistency check sum(abalance) = sum(tbalance) = sum(bbalance) = sum(history.delta).
//!
//! STUB: being written.
