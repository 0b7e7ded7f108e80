//! One integration-test binary for the crate.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
