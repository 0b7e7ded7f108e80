//! One integration-test binary for the crate: the policy's arithmetic, and the recovering
//! model against a mock HTTP server on 127.0.0.1 answering scripted sequences.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
