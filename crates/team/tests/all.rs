//! The team crate's tests: real files in temp dirs, an injected clock, no network.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
