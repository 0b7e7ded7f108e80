//! The team crate's tests: real files in temp dirs, an injected clock, no network.

mod suite;
