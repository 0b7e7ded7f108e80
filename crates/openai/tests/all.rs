//! One integration-test binary for the crate. Real HTTP against a mock server on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
