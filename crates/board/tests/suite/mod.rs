//! The board's tests. `conformance` is one suite written against the `TaskBoard` trait and a
//! small `Harness`; `sqlite` and `postgres` run it on each backend.

mod attacks;
mod conformance;
mod harness;
mod import;
mod postgres;
mod processes;
mod sqlite;
mod tools;
