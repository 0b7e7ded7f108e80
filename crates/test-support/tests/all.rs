//! One integration-test binary for the crate (fewer link steps on a 2-core machine).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
