//! One integration-test binary for the crate: real git in temporary repositories.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
